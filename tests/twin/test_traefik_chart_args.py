# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traefik's values → args against the real chart: `helm template` (real helm) of Traefik's chart
41.6.0 (the traefik/ directory of github.com/traefik/traefik-helm-chart at that version, as
hack/kind-images.sh fetches it) for every Traefik of every scenario and a table of values that
decide who writes status. The args of the two Ingress providers must equal
`effective_config(...).args`; any difference fails."""
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
from ansible_collections.kindlab.ingress.plugins.module_utils._images import parse_images
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.install import parse_controllers
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import chart as traefik
from kindlab_twin import binaries

ROOT = Path(__file__).resolve().parents[2]
HELM = os.environ.get("HELM_BIN") or shutil.which("helm")
CHART = binaries.cache_root() / "assets" / ("traefik-chart-" + _versions.TRAEFIK_CHART_VERSION) / "traefik"
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
]


def scenario_traefiks() -> list[tuple[str, dict[str, Any]]]:
    out = []
    for path in sorted((ROOT / "scenarios").glob("*.yml")):
        data = yaml.safe_load(path.read_text()) or {}
        for ctl in parse_controllers(data.get("lab_controllers") or [], parse_images({})):
            if ctl["type"] == "traefik":
                out.append((path.stem, ctl))
    return out


def rendered_provider_args(values: dict[str, Any], release: str, namespace: str, tmp_path: Path) -> list[str]:
    home = tmp_path / "helm-home"
    env = dict(os.environ, HOME=str(home), HELM_CACHE_HOME=str(home / "cache"),
               HELM_CONFIG_HOME=str(home / "config"), HELM_DATA_HOME=str(home / "data"))
    values_file = tmp_path / "values.json"
    values_file.write_text(json.dumps(values))
    res = subprocess.run([str(HELM), "template", release, str(CHART), "--namespace", namespace, "--values",
                          str(values_file)], env=env, text=True, capture_output=True, timeout=120, check=False)
    assert res.returncode == 0, "helm template failed:\n%s" % res.stderr
    [deployment] = [d for d in yaml.safe_load_all(res.stdout) if d and d.get("kind") == "Deployment"]
    [container] = deployment["spec"]["template"]["spec"]["containers"]
    return [a for a in container["args"] if a.lower().startswith("--providers.kubernetesingress")]


def test_the_chart_is_the_pinned_one() -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert (chart["version"], chart["appVersion"]) == (_versions.TRAEFIK_CHART_VERSION, _versions.TRAEFIK_VERSION)


@pytest.mark.parametrize("values", TABLE, ids=lambda v: json.dumps(v, sort_keys=True)[:60])
def test_traefik_values_render_the_args_the_collection_predicts(values: dict[str, Any], tmp_path: Path) -> None:
    predicted = traefik.effective_config(values, "traefik", "edge").args
    assert rendered_provider_args(values, "traefik", "edge", tmp_path) == predicted


def test_every_scenario_traefik_renders_the_predicted_args(tmp_path: Path) -> None:
    found = scenario_traefiks()
    assert found, "no scenario runs Traefik"
    for name, ctl in found:
        predicted = traefik.effective_config(ctl["values"], ctl["release"], ctl["namespace"]).args
        assert rendered_provider_args(ctl["values"], ctl["release"], ctl["namespace"], tmp_path) == predicted, name
