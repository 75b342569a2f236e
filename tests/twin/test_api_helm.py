"""A real helm (v3/v4) against the twin's API: discovery, SSA/patch, release Secrets sent as
protobuf, watch-list waits, uninstall. Skipped unless a helm binary is found ($HELM_BIN or PATH);
see DESIGN.md "Real clients for tests" for where one comes from on these machines."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

HELM = os.environ.get("HELM_BIN") or shutil.which("helm")
pytestmark = pytest.mark.skipif(not HELM, reason="no helm binary ($HELM_BIN or PATH)")

CHART = {
    "Chart.yaml": "apiVersion: v2\nname: demo\nversion: 0.1.0\n",
    "values.yaml": "replicas: 2\n",
    "templates/all.yaml": """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}-web
spec:
  replicas: {{ .Values.replicas }}
  selector:
    matchLabels: {app: {{ .Release.Name }}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.27", ports: [{containerPort: 80}]}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: {{ .Release.Name }}-cfg
data:
  a: "1"
""",
}


def test_helm_install_upgrade_uninstall(api: Any, tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    for name, text in CHART.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)
    env = dict(os.environ, KUBECONFIG=api.kubeconfig, HOME=str(tmp_path), HELM_CACHE_HOME=str(tmp_path / "c"),
               HELM_CONFIG_HOME=str(tmp_path / "cfg"), HELM_DATA_HOME=str(tmp_path / "d"))

    def helm(*args: str) -> str:
        res = subprocess.run([str(HELM), *args], env=env, text=True, capture_output=True, timeout=60, check=False)
        assert res.returncode == 0, res.stdout + res.stderr
        return res.stdout

    helm("upgrade", "--install", "demo", str(chart), "-n", "one", "--create-namespace")
    assert api.store.get(("apps/v1", "Deployment"), "one", "demo-web")["spec"]["replicas"] == 2
    helm("upgrade", "--install", "demo", str(chart), "-n", "one", "--set", "replicas=3")
    assert api.store.get(("apps/v1", "Deployment"), "one", "demo-web")["spec"]["replicas"] == 3
    secrets = [s["metadata"]["name"] for s in api.store.list(("v1", "Secret"), "one")]
    assert secrets == ["sh.helm.release.v1.demo.v1", "sh.helm.release.v1.demo.v2"]
    assert "demo" in helm("list", "-n", "one")
    helm("uninstall", "demo", "-n", "one")
    assert api.store.list(("v1", "ConfigMap"), "one") == [] and api.store.list(("v1", "Secret"), "one") == []
