"""A real helm (v3/v4) against the twin's API server, as the admin of its kubeconfig (client
certificate): install, upgrade, release Secrets, list, uninstall. Skipped unless a helm
binary is found ($HELM_BIN or PATH; `make unit` passes .tools/bin/helm)."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from kindlab_twin.cluster import TwinClusterHandle

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


def test_helm_install_upgrade_uninstall(twin: TwinClusterHandle, twin_kubeconfig: str, tmp_path: Path) -> None:
    chart = tmp_path / "chart"
    for name, text in CHART.items():
        (chart / name).parent.mkdir(parents=True, exist_ok=True)
        (chart / name).write_text(text)
    env = dict(os.environ, KUBECONFIG=twin_kubeconfig, HOME=str(tmp_path), HELM_CACHE_HOME=str(tmp_path / "c"),
               HELM_CONFIG_HOME=str(tmp_path / "cfg"), HELM_DATA_HOME=str(tmp_path / "d"))
    api = twin.store.client  # uncached reads: what the server holds right now

    def helm(*args: str) -> str:
        res = subprocess.run([str(HELM), *args], env=env, text=True, capture_output=True, timeout=60, check=False)
        assert res.returncode == 0, res.stdout + res.stderr
        return res.stdout

    def names(ref: tuple[str, str]) -> list[str]:
        return sorted(o["metadata"]["name"] for o in api.list(ref, "one")[0])

    helm("upgrade", "--install", "demo", str(chart), "-n", "one", "--create-namespace", "--wait", "--timeout", "60s")
    deployment = api.get(("apps/v1", "Deployment"), "one", "demo-web")
    assert deployment is not None and deployment["spec"]["replicas"] == 2
    assert deployment["status"]["readyReplicas"] == 2  # --wait: helm watched the rollout finish
    assert deployment["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
    helm("upgrade", "--install", "demo", str(chart), "-n", "one", "--set", "replicas=3")
    deployment = api.get(("apps/v1", "Deployment"), "one", "demo-web")
    assert deployment is not None and deployment["spec"]["replicas"] == 3
    assert names(("v1", "Secret")) == ["sh.helm.release.v1.demo.v1", "sh.helm.release.v1.demo.v2"]
    assert "demo-cfg" in names(("v1", "ConfigMap"))
    assert "demo" in helm("list", "-n", "one")
    helm("uninstall", "demo", "-n", "one", "--wait")
    assert api.get(("apps/v1", "Deployment"), "one", "demo-web") is None
    assert names(("v1", "ConfigMap")) == ["kube-root-ca.crt"]  # the root CA publisher's, in every namespace
    assert names(("v1", "Secret")) == []
    assert helm("list", "-n", "one", "-q") == ""
