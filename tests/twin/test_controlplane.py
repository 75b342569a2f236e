"""The real control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok) on loopback.

Needs the pinned binaries (`kindlab-twin build binaries`; `make unit` builds them first).
"""
from __future__ import annotations

import json
import os
import ssl
import stat
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from ipaddress import ip_address, ip_network
from pathlib import Path

import pytest

from kindlab_twin import binaries
from kindlab_twin.controlplane import COMPONENTS, ControlPlane, ControlPlaneError

from realcp import POD_SUBNET, control_plane, kget, kubectl, require

pytestmark = require(COMPONENTS)
KIND_CONFIG = {"nodes": [{"role": "control-plane"}, {"role": "worker"}]}


@pytest.fixture(scope="module")
def cp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    plane = control_plane("cptest", tmp_path_factory.mktemp("cp"), KIND_CONFIG)
    started = time.monotonic()
    try:
        plane.start(timeout=90)
        print(f"control plane Ready in {time.monotonic() - started:.1f} s")
        yield plane
    finally:
        plane.stop()


def test_version_is_the_pinned_one(cp: ControlPlane) -> None:
    version = json.loads(kubectl(cp, "get", "--raw", "/version"))
    assert version["gitVersion"] == binaries.pinned()["kube-apiserver"].version


def test_nodes_are_named_and_addressed_as_kind_does(cp: ControlPlane) -> None:
    nodes = {n["metadata"]["name"]: n for n in kget(cp, "nodes")["items"]}
    assert set(nodes) == {"cptest-control-plane", "cptest-worker"}
    for name, ip in (("cptest-control-plane", "172.18.0.2"), ("cptest-worker", "172.18.0.3")):
        node = nodes[name]
        assert {"type": "InternalIP", "address": ip} in node["status"]["addresses"]
        assert ip_network(node["spec"]["podCIDR"]).subnet_of(ip_network(POD_SUBNET))  # type: ignore[arg-type]
        assert any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"])
    assert nodes["cptest-control-plane"]["spec"]["taints"][0]["key"] == "node-role.kubernetes.io/control-plane"


def test_a_deployment_runs_with_pod_ips_from_its_node_cidr(cp: ControlPlane) -> None:
    kubectl(cp, "create", "deployment", "web", "--image", "nginx:1.29.3", "--replicas", "2")
    kubectl(cp, "rollout", "status", "deployment/web", "--timeout=60s")
    cidrs = {n["metadata"]["name"]: n["spec"]["podCIDR"] for n in kget(cp, "nodes")["items"]}
    pods = kget(cp, "pods", "-l", "app=web")["items"]
    assert len(pods) == 2
    for pod in pods:
        assert pod["spec"]["nodeName"] == "cptest-worker"  # the control plane keeps its taint
        assert pod["status"]["phase"] == "Running"
        assert ip_address(pod["status"]["podIP"]) in ip_network(cidrs[pod["spec"]["nodeName"]])
    reasons = {e["reason"] for e in kget(cp, "events")["items"]}
    assert {"ScalingReplicaSet", "Scheduled"} <= reasons
    kubectl(cp, "scale", "deployment/web", "--replicas=0")
    kubectl(cp, "wait", "--for=delete", "pod", "-l", "app=web", "--timeout=60s")


def test_pod_logs_come_from_the_file_its_process_writes(cp: ControlPlane, tmp_path: Path) -> None:
    """kubectl logs -> API server -> egress proxy -> kwok's kubelet endpoint -> the file."""
    kubectl(cp, "run", "writer", "--image", "nginx:1.29.3")
    kubectl(cp, "wait", "--for=condition=Ready", "pod/writer", "--timeout=60s")
    current, previous = tmp_path / "current.log", tmp_path / "previous.log"
    # The CRI log format a kubelet reads from a container's log file: <time> <stream> <F|P> <text>.
    current.write_text("2026-11-23T10:00:00.000000001Z stderr F I1123 started\n"
                       "2026-11-23T10:00:01.000000001Z stderr F I1123 \"updating Ingress status\" namespace=\"one\"\n")
    previous.write_text("2026-11-23T09:59:00.000000001Z stderr F F1123 the run before\n")
    cp.serve_logs("default", "writer", ["writer"], current, previous)
    deadline = time.monotonic() + 20
    while "updating Ingress status" not in (out := kubectl(cp, "logs", "writer", check=False)):
        assert time.monotonic() < deadline, out
        time.sleep(0.5)
    assert out.splitlines()[0] == "I1123 started"
    assert kubectl(cp, "logs", "writer", "--previous").strip() == "F1123 the run before"


def test_namespace_deletion_waits_for_its_contents(cp: ControlPlane) -> None:
    kubectl(cp, "create", "namespace", "gone")
    kubectl(cp, "-n", "gone", "create", "configmap", "c", "--from-literal=a=b")
    kubectl(cp, "delete", "namespace", "gone", "--wait", "--timeout=60s")
    assert "gone" not in kubectl(cp, "get", "namespaces", "-o", "name")


def test_anonymous_requests_are_refused(cp: ControlPlane) -> None:
    ctx = ssl.create_default_context(cafile=str(cp.pki.ca_cert))
    no_proxy = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx))
    with pytest.raises(urllib.error.HTTPError) as err:
        no_proxy.open(cp.server + "/api/v1/namespaces", timeout=5)
    assert err.value.code == 401


def test_every_component_listens_on_loopback_only(cp: ControlPlane) -> None:
    pids = {str(p.pid) for p in cp.procs.values()}
    out = subprocess.run(["ss", "-Hltnp"], capture_output=True, text=True, check=True).stdout
    ours = [line for line in out.splitlines() if any(f"pid={pid}," in line for pid in pids)]
    assert ours, out
    for line in ours:
        local = line.split()[3]
        assert local.startswith("127.0.0.1:"), line


def test_keys_and_kubeconfigs_are_private(cp: ControlPlane) -> None:
    private = list(cp.layout.pki.glob("*.key")) + list(cp.layout.root.glob("*.kubeconfig"))
    assert len(private) >= 8
    for path in private:
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600, path


def test_a_killed_component_is_reported(tmp_path: Path) -> None:
    plane = control_plane("cpkill", tmp_path, {})
    try:
        plane.start(timeout=90)
        plane.procs["kube-scheduler"].kill()
        plane.procs["kube-scheduler"].wait()
        with pytest.raises(ControlPlaneError, match=r"kube-scheduler exited with status -9"):
            plane.check()
    finally:
        plane.stop()
    assert plane.procs == {}


def test_a_start_that_fails_leaves_nothing_running(tmp_path: Path) -> None:
    plane = control_plane("cpfail", tmp_path, {})
    with pytest.raises(ControlPlaneError, match="timed out waiting for"):
        plane.start(timeout=0.5)
    assert plane.procs == {}
    out = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True, check=False).stdout
    assert out == "", out
