"""The controllers inside a full in-process twin (runtime.TwinCluster: store + TLS API),
driven with the real kubectl: rollout status, pod logs, the status writer in managedFields."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).parent / "controllers"))

from twinlib import deployment, nginx_release, service, wait_for  # noqa: E402

from kindlab_twin import state  # noqa: E402
from kindlab_twin.runtime import TwinCluster  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
TOKEN = "controllers-test-token-0123"


@pytest.fixture
def cluster(twin_certs: Path, tmp_path: Path) -> Any:
    tc = TwinCluster("kind", tmp_path, TOKEN, {}, time_scale=60.0,
                     tls=(str(twin_certs / state.SERVER_CERT), str(twin_certs / state.SERVER_KEY)))
    tc.start()
    kc = tmp_path / "kubeconfig"
    kc.write_text(yaml.safe_dump(state.kubeconfig_doc("kind", tc.api.port, TOKEN, (twin_certs / state.CA_CERT).read_text())))
    kc.chmod(0o600)
    try:
        yield tc, str(kc)
    finally:
        tc.stop()


def kubectl(kc: str, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, KUBECONFIG=kc, HOME=str(Path(kc).parent))
    return subprocess.run(["kubectl", *args], env=env, capture_output=True, text=True, timeout=30, check=check)


def test_rollout_status_logs_and_crash_loop_through_kubectl(cluster: Any) -> None:
    tc, kc = cluster
    s = tc.store
    s.create(deployment("web", "default", "nginx:1.27", replicas=2), "test")
    out = kubectl(kc, "rollout", "status", "deployment/web", "--timeout=10s")
    assert "successfully rolled out" in out.stdout
    nodes = json.loads(kubectl(kc, "get", "nodes", "-o", "json").stdout)["items"]
    assert [n["metadata"]["name"] for n in nodes] == ["kind-control-plane"]
    s.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "two"}}, "test")
    nginx_release(s, "two", scope=False, publish_service=False, extra_args=["--publish-service=two/svc"])

    def crash_logs() -> str | None:
        pods = s.list(("v1", "Pod"), "two", {"app.kubernetes.io/component": "controller"})
        if not pods:
            return None
        out = kubectl(kc, "-n", "two", "logs", pods[0]["metadata"]["name"], check=False)
        return out.stdout if "main.go:89]" in out.stdout else None
    logs = wait_for(crash_logs, timeout=8, what="kubectl logs of the crashing controller")
    assert 'no service with name svc found in namespace two: services "svc" not found' in logs
    table = kubectl(kc, "-n", "two", "get", "pods").stdout
    assert "CrashLoopBackOff" in table
    s.create(service("svc", "two", {"x": "y"}, [{"port": 80}]), "test")
    out = kubectl(kc, "-n", "two", "rollout", "status", "deployment/ingress-ingress-nginx-controller", "--timeout=15s")
    assert "successfully rolled out" in out.stdout
