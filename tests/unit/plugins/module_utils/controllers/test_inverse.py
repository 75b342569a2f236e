"""The inverse of each controller type's values → args (ControllerType.capture.args_to_values): for every
scenario's controllers, both types, the container args the lab's manifests carry are captured into
values, and those values render the same effective args; so do args written by hand."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ControllerType
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import binary as nginx_binary
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.install import parse_controller
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import controller_type
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.images import parse_images

SCENARIOS = Path(__file__).resolve().parents[5] / "scenarios"


def scenario_controllers() -> list[Any]:
    rows = []
    for path in sorted(SCENARIOS.glob("*.yml")):
        lab = yaml.safe_load(path.read_text())
        for i, raw in enumerate(lab.get("lab_controllers") or []):
            rows.append(pytest.param(lab, raw, id="%s[%d]" % (path.stem, i)))
    return rows


def container_args(ctype: ControllerType, ctl: dict[str, Any]) -> list[str]:
    """command + args of the controller container the type's manifests render for the lab's values
    (the args of the chart's that the collection models, where only helm installs these values)."""
    assert ctype.install.render_manifests is not None
    config = ctype.install.effective_config(ctl["values"], ctl["release"], ctl["namespace"], None)
    try:
        objects = ctype.install.render_manifests(config)
    except ctype.install.value_errors:
        return list(config.args)
    workload = next(o for o in objects if o["kind"] in ("Deployment", "DaemonSet"))
    container = next(c for c in workload["spec"]["template"]["spec"]["containers"] if ctype.detect(c))
    return list(container.get("command") or []) + list(container.get("args") or [])


def round_trip(ctype: ControllerType, args: list[str], release: str, namespace: str) -> tuple[dict[str, Any], list[str], dict[str, str]]:
    """Capture ARGS into values, render them again; returns (values, unexpressed, the rendered effective args)."""
    assert ctype.capture is not None
    values, unexpressed = ctype.capture.args_to_values(args, release, namespace, None)
    rendered = ctype.install.effective_config(values, release, namespace, None).args
    return values, unexpressed, ctype.capture.effective_args(rendered, namespace, None)


def test_the_table_covers_both_types() -> None:
    types = {str(p.values[1].get("type") or "ingress_nginx") for p in scenario_controllers()}
    assert types == {"ingress_nginx", "traefik"}


@pytest.mark.parametrize("lab, raw", scenario_controllers())
def test_every_scenario_controller_renders_its_captured_values_back(lab: dict[str, Any], raw: dict[str, Any]) -> None:
    ctl = parse_controller(raw, "", parse_images(lab.get("lab_images")), lab.get("lab_gateway_api"))
    ctype = controller_type(ctl["type"])
    assert ctype.capture is not None
    args = container_args(ctype, ctl)
    values, unexpressed, again = round_trip(ctype, args, ctl["release"], ctl["namespace"])
    assert again == ctype.capture.effective_args(args, ctl["namespace"], None)
    # The lab's own values are chart values: nothing of theirs needs the extra-args value.
    assert not [u for u in unexpressed if "extraArgs" in u or "additionalArguments" in u], unexpressed
    assert ctype.install.effective_config(values, ctl["release"], ctl["namespace"], None).summary()["args"]


# ingress-nginx as its plain deploy manifest installs it: no helm, names of its own, args by hand.
NGINX_BY_HAND = [
    "/nginx-ingress-controller", "--election-id=ingress-nginx-leader", "--controller-class=k8s.io/ingress-nginx",
    "--ingress-class=nginx", "--configmap=$(POD_NAMESPACE)/ingress-nginx-controller",
    "--validating-webhook=:8443", "--validating-webhook-certificate=/usr/local/certificates/cert",
    "--validating-webhook-key=/usr/local/certificates/key", "--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller",
    "--watch-ingress-without-class=true", "--v=2", "--enable-metrics=false",
]


def test_a_hand_written_ingress_nginx_is_captured_into_values_that_render_its_args() -> None:
    ctype = controller_type("ingress_nginx")
    values, unexpressed, again = round_trip(ctype, NGINX_BY_HAND, "ingress-nginx", "ingress-nginx")
    assert again == ctype.capture.effective_args(NGINX_BY_HAND, "ingress-nginx", None)
    # The release name makes the chart's names the manifest's: no override is needed for them.
    assert "publishService" not in values["controller"] and "electionID" not in values["controller"]
    assert values["controller"]["watchIngressWithoutClass"] is True
    assert values["controller"]["extraArgs"] == {"v": "2"} and unexpressed == ["--v=2"]


def test_flags_the_chart_cannot_say_go_to_extra_args_and_chart_only_flags_are_switched_off() -> None:
    ctype = controller_type("ingress_nginx")
    args = ["/nginx-ingress-controller", "--publish-status-address=203.0.113.7", "--update-status=false",
            "--watch-namespace=team-a", "--election-id=custom", "--report-node-internal-ip-address"]
    values, unexpressed, again = round_trip(ctype, args, "edge", "team-a")
    assert again == ctype.capture.effective_args(args, "team-a", None)
    c = values["controller"]
    assert c["scope"] == {"enabled": True} and c["electionID"] == "custom" and c["publishService"] == {"enabled": False}
    # No --configmap was given: `--configmap=` (nil in extraArgs) is the binary's default.
    assert c["extraArgs"] == {"configmap": None, "publish-status-address": "203.0.113.7", "update-status": "false",
                              "report-node-internal-ip-address": "true"}
    assert unexpressed == ["--configmap=", "--publish-status-address=203.0.113.7", "--report-node-internal-ip-address=true",
                           "--update-status=false"]
    # The binary reads both the same way (binary.py, the module diagnose uses).

    def settings(argv: list[str]) -> dict[str, Any]:
        flags, errors = nginx_binary.parse_nginx_flags([a.replace("$(POD_NAMESPACE)", "team-a") for a in argv])
        assert errors == []
        return nginx_binary.nginx_settings(flags).as_dict()
    assert settings(ctype.install.effective_config(values, "edge", "team-a", None).args) == settings(args)


def test_a_hand_written_traefik_is_captured_with_its_unmodelled_provider_flags_in_additional_arguments() -> None:
    ctype = controller_type("traefik")
    args = ["--entryPoints.web.address=:80", "--providers.kubernetesIngress",
            "--providers.kubernetesingress.ingressClass=edge", "--providers.kubernetesingress.ingressendpoint.ip=203.0.113.5",
            "--providers.kubernetesingress.throttleDuration=5s"]
    values, unexpressed, again = round_trip(ctype, args, "edge", "edge")
    assert again == ctype.capture.effective_args(args, "edge", None)
    ing = values["providers"]["kubernetesIngress"]
    assert ing["ingressClass"] == "edge" and ing["ingressEndpoint"] == {"ip": "203.0.113.5"}
    assert ing["publishedService"] == {"enabled": False} and ing["allowEmptyServices"] is False
    assert values["additionalArguments"] == ["--providers.kubernetesingress.throttleduration=5s"]
    assert values["providers"]["kubernetesCRD"] == {"enabled": False}
    assert any(u.startswith("--providers.kubernetesingress.throttleduration=5s: in additionalArguments") for u in unexpressed)
    assert any(u.startswith("--entrypoints.web.address=:80: not captured") for u in unexpressed)


def test_a_traefik_provider_switched_off_is_captured_off() -> None:
    ctype = controller_type("traefik")
    args = ["--providers.kubernetesingressnginx", "--providers.kubernetesingressnginx.ingressclass=legacy"]
    values, _unexpressed, again = round_trip(ctype, args, "traefik", "traefik")
    assert again == ctype.capture.effective_args(args, "traefik", None)
    assert values["providers"]["kubernetesIngress"] == {"enabled": False}
    assert values["providers"]["kubernetesIngressNGINX"] == {"enabled": True, "ingressClass": "legacy"}


def test_a_flag_the_ingress_nginx_binary_refuses_is_reported_not_reproduced() -> None:
    ctype = controller_type("ingress_nginx")
    assert ctype.capture is not None
    values, unexpressed = ctype.capture.args_to_values(["/nginx-ingress-controller", "--publish-servise=a/b"], "ingress", "one", None)
    assert unexpressed == ["--configmap=", "unknown flag: --publish-servise: the binary refuses it and exits; not reproduced"]
    assert "publish-servise" not in values["controller"]["extraArgs"]
