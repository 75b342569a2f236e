# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The collection's values→args mapping against the real chart: `helm template` (real helm) of
ingress-nginx chart 4.11.0 from the k8s.io/ingress-nginx module (`kindlab-twin build binaries
ingress-nginx-controller` copies it into the cache) for every controller of the default lab and
of every scenario, on both backends' values (kind adds the time scale's --status-update-interval).
The controller container's args must equal `effective_config(..., chart_version="4.11.0").args`;
any difference fails. The chart the lab renders itself (the twin's manifest method) and what helm
installs on kind thus cannot drift apart unnoticed."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import chart as nginx
from ansible_collections.kindlab.ingress.plugins.module_utils import _versions
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.install import parse_controllers
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.images import parse_images
from kindlab_twin import binaries

ROOT = Path(__file__).resolve().parents[2]
HELM = os.environ.get("HELM_BIN") or shutil.which("helm")
CHART = binaries.assets_dir("ingress-nginx-controller") / "ingress-nginx"
CHART_VERSION = _versions.INGRESS_NGINX_OFFLINE_CHART_VERSION
REQUIRED = os.environ.get("KINDLAB_REQUIRE_BINARIES") == "1"

pytestmark = [
    pytest.mark.skipif(not HELM, reason="no helm binary ($HELM_BIN or PATH)"),
    pytest.mark.skipif(not REQUIRED and not (CHART / "Chart.yaml").is_file(),
                       reason="no chart %s (kindlab-twin build binaries ingress-nginx-controller)" % CHART),
]


def lab_files() -> list[Path]:
    return [ROOT / "inventories/local/group_vars/all/lab.yml"] + sorted((ROOT / "scenarios").glob("*.yml"))


def controllers_of(path: Path) -> list[dict[str, Any]]:
    """The lab's controllers as lab_definition parses them (the default lab's unless the file has its own)."""
    default = yaml.safe_load((ROOT / "inventories/local/group_vars/all/lab.yml").read_text())
    data = yaml.safe_load(path.read_text()) or {}
    return [c for c in parse_controllers(data.get("lab_controllers", default["lab_controllers"]), parse_images({}))
            if c["type"] == "ingress_nginx"]


def rendered_args(values: dict[str, Any], release: str, namespace: str, tmp_path: Path) -> list[str]:
    home = tmp_path / "helm-home"
    env = dict(os.environ, HOME=str(home), HELM_CACHE_HOME=str(home / "cache"),
               HELM_CONFIG_HOME=str(home / "config"), HELM_DATA_HOME=str(home / "data"))
    values_file = tmp_path / ("values-%s-%s.json" % (namespace, release))
    values_file.write_text(json.dumps(values))
    res = subprocess.run([str(HELM), "template", release, str(CHART), "--namespace", namespace, "--values",
                          str(values_file)], env=env, text=True, capture_output=True, timeout=120, check=False)
    assert res.returncode == 0, "helm template failed:\n%s" % res.stderr
    deployments = [d for d in yaml.safe_load_all(res.stdout)
                   if d and d.get("kind") == "Deployment" and "controller" in d["metadata"]["name"]]
    assert len(deployments) == 1, [d["metadata"]["name"] for d in deployments]
    containers = deployments[0]["spec"]["template"]["spec"]["containers"]
    return next(c["args"] for c in containers if c["name"] == "controller")


@pytest.mark.parametrize("lab_file", lab_files(), ids=lambda p: p.stem)
@pytest.mark.parametrize("time_scale", [None, 10.0], ids=["twin", "kind"])
def test_chart_4_11_renders_the_args_the_collection_predicts(
        lab_file: Path, time_scale: float | None, tmp_path: Path) -> None:
    chart = yaml.safe_load((CHART / "Chart.yaml").read_text())
    assert chart["version"] == CHART_VERSION
    for ctl in controllers_of(lab_file):
        values = ctl["values"] if time_scale is None else nginx.with_time_scale(ctl["values"], time_scale)
        predicted = nginx.effective_config(values, ctl["release"], ctl["namespace"], CHART_VERSION).args
        assert rendered_args(values, ctl["release"], ctl["namespace"], tmp_path) == predicted, (
            "%s: %s/%s" % (lab_file.name, ctl["namespace"], ctl["release"]))


def test_the_two_chart_versions_differ_only_where_the_profiles_say(tmp_path: Path) -> None:
    """For the lab's values the two charts differ in one arg: 4.11.0 says metrics are off
    (--enable-metrics=false; its binary defaults to on), 4.15.1 says nothing (its binary defaults
    to off). Annotation validation renders nothing in either (off by 4.11.0's default and opt-in
    flag, on by 4.15.1's)."""
    ctl = controllers_of(ROOT / "scenarios/puzzle.yml")[1]
    old = nginx.effective_config(ctl["values"], ctl["release"], ctl["namespace"], CHART_VERSION).args
    new = nginx.effective_config(ctl["values"], ctl["release"], ctl["namespace"]).args
    assert set(old) ^ set(new) == {"--enable-metrics=false"}
    assert "--enable-metrics=false" in rendered_args(ctl["values"], ctl["release"], ctl["namespace"], tmp_path)
