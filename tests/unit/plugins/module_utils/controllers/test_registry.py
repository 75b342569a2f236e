"""Every registered controller type declares what the seam needs, so that the lab, the modules'
documentation and the test machinery can take it from the registry instead of naming the type: a
type that forgets one fails here."""
from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils._images import valid_image
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ControllerType
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import (
    DEFAULT_TYPE,
    REGISTRY,
    controller_type,
    installable_names,
    off_twin,
    type_names,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.images import LAB_IMAGES, default_images, parse_images
from ansible_collections.kindlab.ingress.plugins.modules import ingress_controller, lab_definition

MIRROR = "registry.example.com/mirror/%s:v9"


def documented_option(module: Any, name: str) -> dict[str, Any]:
    option: dict[str, Any] = yaml.safe_load(module.DOCUMENTATION)["options"][name]
    return option


@pytest.fixture(params=type_names())
def ctype(request: pytest.FixtureRequest) -> ControllerType:
    return controller_type(request.param)


def test_the_registry_holds_each_type_under_its_own_name() -> None:
    assert all(name == t.name and name.isidentifier() for name, t in REGISTRY.items())


def test_the_default_type_is_registered_and_runs_on_the_twin() -> None:
    # The default lab (every controller of this type) falls back to the twin where kind is unavailable.
    assert DEFAULT_TYPE in REGISTRY and controller_type(DEFAULT_TYPE).on_twin


def test_ingress_controllers_documentation_lists_the_registry() -> None:
    option = documented_option(ingress_controller, "type")
    assert option["choices"] == installable_names() == type_names() and option["default"] == DEFAULT_TYPE


def test_it_declares_its_chart(ctype: ControllerType) -> None:
    assert ctype.install.chart_name and ctype.install.chart_version and ctype.install.chart_repo.startswith("https://")


def test_its_images_have_lab_image_keys_of_its_own(ctype: ControllerType) -> None:
    others = {key for t in REGISTRY.values() if t is not ctype for key in t.install.default_images}
    assert ctype.install.default_images and ctype.install.image_keys == tuple(ctype.install.default_images)
    assert not set(ctype.install.image_keys) & (set(LAB_IMAGES) | others)
    assert all(valid_image(image) for image in ctype.install.default_images.values())
    assert {k: default_images()[k] for k in ctype.install.image_keys} == dict(ctype.install.default_images)
    documented = documented_option(lab_definition, "images")["description"]
    assert all("C(%s)" % key in " ".join(documented) for key in ctype.install.image_keys)


def test_the_lab_image_map_reaches_its_pods(ctype: ControllerType) -> None:
    """Its pin is what its chart renders with its own values; a mirrored key is what it then runs."""
    pinned = ctype.install.with_images({}, parse_images({}))
    assert pinned == {}
    assert ctype.install.effective_config(pinned, "ingress", "one", None).image in ctype.install.default_images.values()
    mirrors = {key: MIRROR % key for key in ctype.install.image_keys}
    values = ctype.install.with_images({}, parse_images(mirrors))
    assert ctype.install.effective_config(values, "ingress", "one", None).image in mirrors.values()


def test_it_declares_what_the_offline_kind_lab_runs(ctype: ControllerType) -> None:
    assert ctype.offline is not None  # every type the project has runs in the offline kind lab
    assert set(ctype.offline.images) == set(ctype.install.image_keys)
    assert all(valid_image(image) for image in ctype.offline.images.values())
    chart = PurePosixPath(ctype.offline.chart)
    assert not chart.is_absolute() and ".." not in chart.parts and chart.parts[0] == "assets"


def test_the_twin_installs_what_it_emulates_from_manifests(ctype: ControllerType) -> None:
    assert isinstance(ctype.on_twin, bool)
    assert not ctype.on_twin or ctype.install.render_manifests is not None
    assert off_twin([{"type": ctype.name}]) == ([] if ctype.on_twin else [ctype.name])


def test_it_declares_how_it_is_recognised_and_what_it_writes(ctype: ControllerType) -> None:
    assert ctype.ingress is None or ctype.ingress.class_markers
    assert ctype.field_manager and ctype.install.rendered_kinds
    assert ctype.install.release_selector("ingress")


def test_a_controller_without_a_type_is_of_the_default_type() -> None:
    assert off_twin([{"namespace": "one"}]) == off_twin([{"type": DEFAULT_TYPE}]) == []


def test_what_generic_code_asks_of_the_types_comes_from_their_entries() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry
    from ansible_collections.kindlab.ingress.plugins.module_utils.lab import gateways

    # a capture keeps the annotations each type routes by; a lab's GatewayClass names the Gateway implementation's
    assert registry.annotation_prefixes() == ("nginx.ingress.kubernetes.io/", "traefik.ingress.kubernetes.io/")
    assert registry.default_gateway_controller_name() == "traefik.io/gateway-controller" == gateways.DEFAULT_CONTROLLER_NAME
    assert registry.controller_type("ingress_nginx").gateway is None  # it implements no Gateway API


def test_a_type_that_serves_only_gateway_api_declares_only_that_part(monkeypatch: pytest.MonkeyPatch) -> None:
    """ControllerType's parts are optional: a type with no `ingress` part (Traefik's entry less it, here) is
    found in a cluster, writes no Ingress status and is no IngressClass's type, while its Gateway side is
    read and diagnosed; the code that asks the Ingress part skips it instead of calling a stub."""
    import dataclasses

    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry
    from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.controllers import find_workloads, gateway_sides
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify import diagnose
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.attribution import parse_log_line
    from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_diagnose_gateways import two_installs

    gateway_only = dataclasses.replace(controller_type("traefik"), name="gateway_only", ingress=None, capture=None)
    monkeypatch.setattr(registry, "REGISTRY", {"gateway_only": gateway_only})
    state = two_installs(selectors=False)
    found = find_workloads(state)
    assert [f.type.name for f in found] == ["gateway_only", "gateway_only"] and all(f.controllers == [] for f in found)
    assert [side.ref for _f, side in gateway_sides(state, found)] == [
        "traefik-a/traefik@kubernetesgateway", "traefik-b/traefik@kubernetesgateway"]
    result = diagnose.analyse(state)
    assert result["controllers"] == [] and [f["kind"] for f in result["findings"]].count("gateway_multiple_writers") == 2
    assert registry.type_of_class("traefik.io/ingress-controller") == "unknown" and registry.annotation_prefixes() == ()
    assert registry.default_gateway_controller_name() == "traefik.io/gateway-controller"
    assert parse_log_line("a/b", 'time="2026" level=debug msg="Updated ingress status" ingress=x namespace=y', 2026) is None


def test_a_type_the_lab_cannot_install_is_found_and_diagnosed_and_refused_where_the_lab_installs(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """`install` is a part too: a type without it (ingress-nginx's entry less it, here) is still recognised
    in a cluster and diagnosed, while every place the lab installs (ingress_controller, lab_controllers,
    lab_charts, a capture) refuses it naming the field, before anything changes."""
    import dataclasses

    from ansible_collections.kindlab.ingress.plugins.module_utils.capture.controllers import capture_controllers
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import install, registry
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.errors import ControllerError
    from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.controllers import find_workloads
    from ansible_collections.kindlab.ingress.plugins.module_utils.lab import definition
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify import diagnose
    from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_diagnose import puzzle

    seen_only = dataclasses.replace(controller_type("ingress_nginx"), name="seen_only", install=None)
    monkeypatch.setattr(registry, "REGISTRY", {"seen_only": seen_only, "traefik": controller_type("traefik")})
    assert registry.installable_names() == ["traefik"] and registry.type_names() == ["seen_only", "traefik"]
    assert set(default_images()) == set(LAB_IMAGES) | set(controller_type("traefik").installer().image_keys)
    # found and diagnosed: the puzzle's three controllers, its flapping Ingresses and their culprit
    state = puzzle()
    assert [f.type.name for f in find_workloads(state)] == ["seen_only"] * 3
    assert "multiple_writers" in {f["kind"] for f in diagnose.analyse(state)["findings"]}
    # refused where the lab installs, naming the field
    with pytest.raises(ControllerError, match=r"^type: seen_only is known to discovery and diagnosis, but the lab cannot install it"):
        install.plan(install.Request(type="seen_only", namespace="one"))
    with pytest.raises(ControllerError, match=r"^\[0\]\.type: seen_only is known .* cannot install it"):
        install.parse_controllers([{"type": "seen_only", "namespace": "one"}])
    with pytest.raises(ControllerError, match=r"^charts\.seen_only: expected a controller type the lab installs, one of traefik$"):
        install.plan(install.Request(type="traefik", namespace="one", charts={"seen_only": "/tmp/chart"}))
    with pytest.raises(definition.LabError, match=r"^lab_charts\.seen_only: expected a controller type the lab installs, one of traefik$"):
        definition._charts({"seen_only": "/tmp/chart"})
    # a capture keeps none of them, saying why
    entries, _records, notes = capture_controllers(state, find_workloads(state))
    assert entries == [] and sum("type seen_only cannot be captured (the lab cannot install it)" in n for n in notes) == 3
