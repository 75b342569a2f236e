# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traefik's values → args against the real chart: `helm template` (real helm) of Traefik's chart
41.6.0 (the traefik/ directory of github.com/traefik/traefik-helm-chart at that version, as
hack/kind-images.sh fetches it) for every Traefik of every scenario and a table of values that
decide who writes status. The args of the two Ingress providers must equal
`effective_config(...).args`, and method=manifest's objects must equal the chart's (but for the
managed-by label, which names the collection); any difference fails."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils import _versions
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.images import parse_images
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.install import parse_controllers
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import chart as traefik
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import dataplane as traefik_dataplane
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import manifests as traefik_manifests
from kindlab_twin import binaries

ROOT = Path(__file__).resolve().parents[2]
HELM = os.environ.get("HELM_BIN") or shutil.which("helm")
CHART = binaries.cache_root() / _versions.KIND_OFFLINE_TRAEFIK_CHART
REQUIRED = os.environ.get("KINDLAB_REQUIRE_BINARIES") == "1"

pytestmark = [
    pytest.mark.skipif(not HELM, reason="no helm binary ($HELM_BIN or PATH)"),
    pytest.mark.skipif(not REQUIRED and not (CHART / "Chart.yaml").is_file(),
                       reason="no chart %s (hack/kind-images.sh fetches it)" % CHART),
]

# Values that decide which Ingresses Traefik claims and what it writes into their status.
TABLE: list[dict[str, Any]] = [
    {},
    {"providers": {"kubernetesIngress": {"publishedService": {"enabled": False}}}},
    {"providers": {"kubernetesIngress": {"publishedService": {"pathOverride": "edge/lb"}, "ingressClass": "edge",
                                         "labelSelector": "team=a", "namespaces": ["a", "b"]}}},
    {"providers": {"kubernetesIngress": {"ingressEndpoint": {"ip": "100.64.0.9", "hostname": "lb.example.test"},
                                         "publishedService": {"enabled": False}}}},
    {"rbac": {"namespaced": True}},
    {"rbac": {"namespaced": True}, "providers": {"kubernetesIngressNGINX": {"enabled": True}}},
    {"providers": {"kubernetesIngressNGINX": {"enabled": True, "publishService": {"enabled": True}}}},
    {"providers": {"kubernetesIngressNGINX": {"enabled": True, "ingressClass": "legacy", "controllerClass": "example.com/x",
                                              "watchIngressWithoutClass": True, "publishStatusAddress": "100.64.0.7",
                                              "watchNamespace": "apps"}}},
    {"service": {"enabled": False}, "providers": {"kubernetesIngressNGINX": {"enabled": True, "publishService": {"enabled": True}}}},
    {"fullnameOverride": "edge", "ingressClass": {"name": "edge-class", "isDefaultClass": False}},
    # The Gateway provider: its claims (namespaces, labelSelector) and the address it writes (statusAddress).
    {"providers": {"kubernetesGateway": {"enabled": True}}},
    {"providers": {"kubernetesGateway": {"enabled": True, "namespaces": ["a", "b"], "labelSelector": "team=a",
                                         "statusAddress": {"ip": "203.0.113.7", "hostname": "gw.example.test"}}}},
    {"providers": {"kubernetesGateway": {"enabled": True, "statusAddress": {"service": {"enabled": False}}}}},
    {"service": {"enabled": False}, "providers": {"kubernetesGateway": {"enabled": True}}},
    {"fullnameOverride": "edge", "providers": {"kubernetesIngress": {"namespaces": ["one"]}, "kubernetesGateway": {
        "enabled": True, "statusAddress": {"service": {"name": "lb", "namespace": "net"}}}}},
]


def scenario_traefiks() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted((ROOT / "scenarios").glob("*.yml")):
        data = yaml.safe_load(path.read_text()) or {}
        for ctl in parse_controllers(data.get("lab_controllers") or [], parse_images({})):
            if ctl["type"] == "traefik":
                out.append((path.stem, ctl))
    return out


def helm_template(values: dict[str, Any], release: str, namespace: str, tmp_path: Path) -> list[dict[str, Any]]:
    home = tmp_path / "helm-home"
    env = dict(os.environ, HOME=str(home), HELM_CACHE_HOME=str(home / "cache"),
               HELM_CONFIG_HOME=str(home / "config"), HELM_DATA_HOME=str(home / "data"))
    values_file = tmp_path / "values.json"
    values_file.write_text(json.dumps(values))
    res = subprocess.run([str(HELM), "template", release, str(CHART), "--namespace", namespace, "--values",
                          str(values_file)], env=env, text=True, capture_output=True, timeout=120, check=False)
    assert res.returncode == 0, "helm template failed:\n%s" % res.stderr
    return [d for d in yaml.safe_load_all(res.stdout) if d]


def rendered_provider_args(values: dict[str, Any], release: str, namespace: str, tmp_path: Path) -> list[str]:
    [deployment] = [d for d in helm_template(values, release, namespace, tmp_path) if d.get("kind") == "Deployment"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    return [a for a in container["args"] if a.lower().startswith(("--providers.kubernetesingress", "--providers.kubernetesgateway"))]


def test_the_chart_is_the_pinned_one() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert (chart["version"], chart["appVersion"]) == (_versions.TRAEFIK_CHART_VERSION, _versions.TRAEFIK_VERSION)


@pytest.mark.parametrize("values", TABLE, ids=lambda v: json.dumps(v, sort_keys=True)[:60])
def test_traefik_values_render_the_args_the_collection_predicts(values: dict[str, Any], tmp_path: Path) -> None:
    predicted = traefik.effective_config(values, "traefik", "edge").args
    assert rendered_provider_args(values, "traefik", "edge", tmp_path) == predicted


def test_a_gateway_lab_traefik_renders_no_chart_gateway_objects_and_publishes_its_own_service(tmp_path: Path) -> None:
    """What lab_definition gives a Traefik with the Gateway provider in a lab with lab_gateway_api: the
    chart's own GatewayClass `traefik` and Gateway `traefik-gateway` are not rendered (the lab creates
    its own), and the status address is the release's own Service."""
    values = {"providers": {"kubernetesGateway": {"enabled": True}}}
    plain = {d["kind"] for d in helm_template(values, "edge", "one", tmp_path)}
    assert {"GatewayClass", "Gateway"} <= plain  # what the lab turns off
    [ctl] = parse_controllers([{"namespace": "one", "type": "traefik", "release": "edge", "values": values}],
                              parse_images({}), gateway_api=True)
    objs = helm_template(ctl["values"], "edge", "one", tmp_path)
    assert not {"GatewayClass", "Gateway"} & {d["kind"] for d in objs}
    assert rendered_provider_args(ctl["values"], "edge", "one", tmp_path) == ctl["args"]
    assert "--providers.kubernetesgateway.statusaddress.service.name=edge-traefik" in ctl["args"]
    assert any(d["kind"] == "ClusterRole" for d in objs)


def test_every_scenario_traefik_renders_the_predicted_args(tmp_path: Path) -> None:
    found = scenario_traefiks()
    assert found, "no scenario runs Traefik"
    for name, ctl in found:
        predicted = traefik.effective_config(ctl["values"], ctl["release"], ctl["namespace"]).args
        assert rendered_provider_args(ctl["values"], ctl["release"], ctl["namespace"], tmp_path) == predicted, name


def _comparable(obj: dict[str, Any]) -> dict[str, Any]:
    """An object without what only says who applied it (managed-by and the collection's release
    label), and without the nulls and empty annotations YAML templates leave."""
    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if v is not None and not (k == "annotations" and not v)}
        return [clean(v) for v in value] if isinstance(value, list) else value

    out = clean(json.loads(json.dumps(obj)))
    for meta in (out["metadata"], ((out.get("spec") or {}).get("template") or {}).get("metadata") or {}):
        for key in ("app.kubernetes.io/managed-by", "kindlab.ingress/release"):
            (meta.get("labels") or {}).pop(key, None)
    return dict(out)


def _without_crds(values: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(values))
    out.setdefault("providers", {}).setdefault("kubernetesCRD", {})["enabled"] = False
    return dict(out)


# (method=manifest refuses the Gateway provider: helm only)
MANIFEST_TABLE = [_without_crds(v) for v in TABLE if not traefik.gateway_enabled(v)] + [
    _without_crds({"global": {"checkNewVersion": False, "sendAnonymousUsage": True}, "log": {"level": "DEBUG"},
                   "deployment": {"replicas": 2}, "service": {"spec": {"type": "NodePort"}}}),
    _without_crds({"rbac": {"namespaced": True}, "providers": {"kubernetesIngress": {"namespaces": ["a", "b"]},
                                                               "kubernetesIngressNGINX": {"enabled": True, "watchNamespace": "c"}}}),
    _without_crds({"api": {"insecure": True}}),
    _without_crds({"api": {"insecure": False}}),
]


def assert_manifest_equals_chart(values: dict[str, Any], release: str, namespace: str, tmp_path: Path) -> None:
    def key(obj: dict[str, Any]) -> tuple[str, str, str]:
        return obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]

    cfg = traefik.effective_config(values, release, namespace)
    ours = {key(o): _comparable(o) for o in traefik_manifests.render_manifests(cfg)}
    charts = {key(o): _comparable(o) for o in helm_template(values, release, namespace, tmp_path)}
    assert sorted(ours) == sorted(charts)
    for name in charts:
        assert ours[name] == charts[name], name


@pytest.mark.parametrize("values", MANIFEST_TABLE, ids=lambda v: json.dumps(v, sort_keys=True)[:60])
def test_manifest_objects_equal_the_charts(values: dict[str, Any], tmp_path: Path) -> None:
    assert_manifest_equals_chart(values, "traefik", "edge", tmp_path)


def test_every_scenario_traefik_renders_the_charts_objects(tmp_path: Path) -> None:
    for _name, ctl in scenario_traefiks():
        if traefik.gateway_enabled(ctl["values"]):
            continue  # method=manifest refuses the Gateway provider (helm only), as MANIFEST_TABLE says
        assert_manifest_equals_chart(ctl["values"], ctl["release"], ctl["namespace"], tmp_path)


def test_every_scenario_traefik_serves_its_api_where_the_reader_asks(tmp_path: Path) -> None:
    """The lab turns Traefik's API on (LAB_VALUES): the chart's container args carry
    --api.insecure=true, and the data-plane reader asks the container port named traefik."""
    found = scenario_traefiks()
    assert found, "no scenario runs Traefik"
    for name, ctl in found:
        [deployment] = [d for d in helm_template(ctl["values"], ctl["release"], ctl["namespace"], tmp_path)
                        if d.get("kind") == "Deployment"]
        [container] = deployment["spec"]["template"]["spec"]["containers"]
        assert "--api.insecure=true" in container["args"], name
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert traefik_dataplane.api_port(container, ctl["namespace"]) == ports["traefik"] == 8080, name
