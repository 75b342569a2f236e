"""The emulations inside a full twin (cluster.TwinCluster: the real control plane and
every emulation), driven with the real kubectl: rollout status, a crash-looping ingress-nginx
controller's log and status, and its recovery once what it missed exists."""
from __future__ import annotations

import json
import shutil
import subprocess
from typing import Callable

import pytest

from kindlab_twin.cluster import TwinClusterHandle

from realcp import NGINX_LABELS, deployment, ingress_nginx_release, namespace, service, wait_for

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
Kubectl = Callable[..., subprocess.CompletedProcess[str]]
CONTROLLER = "ingress-ingress-nginx-controller"


def test_rollout_status_logs_and_crash_loop_through_kubectl(twin: TwinClusterHandle, kubectl: Kubectl) -> None:
    s = twin.store
    s.create(deployment("web", "default", "nginx:1.27", replicas=2), "test")
    out = kubectl("rollout", "status", "deployment/web", "--timeout=60s")
    assert "successfully rolled out" in out.stdout
    nodes = json.loads(kubectl("get", "nodes", "-o", "json").stdout)["items"]
    assert [n["metadata"]["name"] for n in nodes] == ["kind-control-plane"]

    # a cluster-wide controller whose --publish-service names a Service that does not exist:
    # main.go exits (klog.Fatal, status 255) and the kubelet crash-loops it
    s.create(namespace("two"), "test")
    for obj in ingress_nginx_release("two", scope=False, publish_service=False,
                                     extra_args=["--publish-service=two/svc"]):
        s.create(obj, "test")
    selector = ",".join(f"{k}={v}" for k, v in NGINX_LABELS.items())

    def crash_logs() -> str | None:
        pods = json.loads(kubectl("-n", "two", "get", "pods", "-l", selector, "-o", "json").stdout)["items"]
        if not pods:
            return None
        out = kubectl("-n", "two", "logs", pods[0]["metadata"]["name"], check=False)
        return out.stdout if "main.go:89]" in out.stdout else None
    logs = wait_for(crash_logs, what="kubectl logs of the crashing controller")
    fatal = [line for line in logs.splitlines() if "main.go:89]" in line]
    assert len(fatal) == 1 and fatal[0].startswith("F"), logs
    assert fatal[0].endswith('no service with name svc found in namespace two: services "svc" not found')

    def crash_looping() -> str | None:
        table = kubectl("-n", "two", "get", "pods").stdout
        return table if "CrashLoopBackOff" in table else None
    wait_for(crash_looping, what="the pod shown in CrashLoopBackOff")
    pod = json.loads(kubectl("-n", "two", "get", "pods", "-l", selector, "--show-managed-fields", "-o", "json")
                     .stdout)["items"][0]
    status = pod["status"]["containerStatuses"][0]
    assert status["lastState"]["terminated"]["exitCode"] == 255 and status["ready"] is False
    managers = {m["manager"] for m in pod["metadata"]["managedFields"] if m.get("subresource") == "status"}
    assert "kubelet" in managers, managers

    # the Service appears: the next restart comes up and the rollout completes
    s.create(service("svc", "two", {"x": "y"}, [{"port": 80}]), "test")
    out = kubectl("-n", "two", "rollout", "status", f"deployment/{CONTROLLER}", "--timeout=60s", timeout=90)
    assert "successfully rolled out" in out.stdout

    # the controller process logs its start a moment after the kubelet reported the pod Ready
    def started() -> str | None:
        out = kubectl("-n", "two", "logs", f"deployment/{CONTROLLER}").stdout
        return out if '"Starting NGINX Ingress controller"' in out else None
    logs = wait_for(started, what="the new run's start-up line")
    assert "main.go:89]" not in logs
    previous = kubectl("-n", "two", "logs", f"deployment/{CONTROLLER}", "--previous").stdout
    assert 'services "svc" not found' in previous
