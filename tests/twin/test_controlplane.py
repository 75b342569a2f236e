"""The real control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok) on loopback,
with the one emulation a pod needs to run: the kubelets' container side (kwok plays the rest
of each kubelet, but leaves starting containers to the twin).

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
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.wait import daemonset_ready
from kindlab_twin import binaries
from kindlab_twin.emulations.kubelet import Kubelet
from kindlab_twin.controlplane import COMPONENTS, ControlPlane, ControlPlaneError, listening_ports
from kindlab_twin.cluster import TwinCluster

from realcp import POD_SUBNET, control_plane, kget, kubectl, require, wait_for

pytestmark = require(COMPONENTS)
KIND_CONFIG = {"nodes": [{"role": "control-plane"}, {"role": "worker"}]}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TwinCluster]:
    """The control plane of a two-node cluster, and the kubelet emulation that runs its pods."""
    twin = TwinCluster("cptest", tmp_path_factory.mktemp("cp"), KIND_CONFIG, time_scale=60.0,
                       emulations=[Kubelet()])
    started = time.monotonic()
    try:
        twin.start()
        print(f"control plane Ready in {time.monotonic() - started:.1f} s")
        yield twin
    finally:
        twin.stop()


@pytest.fixture(scope="module")
def cp(cluster: TwinCluster) -> ControlPlane:
    return cluster.control_plane


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


DAEMONSET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: default}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "busybox:1.36"}]
"""
TOLERATE_CONTROL_PLANE = json.dumps([{"op": "add", "path": "/spec/template/spec/tolerations", "value": [
    {"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]}])


def test_a_daemonset_runs_one_pod_per_node_it_tolerates(cp: ControlPlane) -> None:
    """As MetalLB's speaker: on the workers only, until it tolerates the control plane's taint."""
    kubectl(cp, "apply", "-f", "-", stdin=DAEMONSET)
    kubectl(cp, "rollout", "status", "daemonset/agent", "--timeout=60s")
    assert [p["spec"]["nodeName"] for p in kget(cp, "pods", "-l", "app=agent")["items"]] == ["cptest-worker"]
    kubectl(cp, "patch", "daemonset", "agent", "--type=json", "-p", TOLERATE_CONTROL_PLANE)
    kubectl(cp, "rollout", "status", "daemonset/agent", "--timeout=60s")
    assert daemonset_ready(kget(cp, "daemonset", "agent")) == (True, "2/2 ready, 2 updated, 2 available")

    def one_running_pod_per_node() -> bool:
        pods = [p for p in kget(cp, "pods", "-l", "app=agent")["items"] if not p["metadata"].get("deletionTimestamp")]
        return sorted((p["spec"]["nodeName"], p["status"].get("phase")) for p in pods) == [
            ("cptest-control-plane", "Running"), ("cptest-worker", "Running")]
    wait_for(one_running_pod_per_node, what="an agent pod Running on each node")
    kubectl(cp, "delete", "daemonset", "agent", "--wait", "--timeout=60s")


SERVICE_AND_BACKENDS = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: api, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: api
        image: registry.k8s.io/e2e-test-images/agnhost:2.53
        ports: [{name: web, containerPort: 8080}]
---
apiVersion: v1
kind: Service
metadata: {name: api, namespace: default}
spec:
  type: NodePort
  selector: {app: api}
  ports: [{name: http, port: 80, targetPort: web}]
"""


def test_a_service_has_an_address_a_node_port_and_the_ready_pods_as_endpoints(cp: ControlPlane) -> None:
    """The real EndpointSlice controller, from the readiness the kubelet emulation reports."""
    kubectl(cp, "apply", "-f", "-", stdin=SERVICE_AND_BACKENDS)
    kubectl(cp, "rollout", "status", "deployment/api", "--timeout=60s")
    svc = kget(cp, "service", "api")
    assert ip_address(svc["spec"]["clusterIP"]) in ip_network("10.96.0.0/16")
    assert svc["spec"]["clusterIP"] != "10.96.0.1" and 30000 <= svc["spec"]["ports"][0]["nodePort"] <= 32767
    pod_ips = sorted(p["status"]["podIP"] for p in kget(cp, "pods", "-l", "app=api")["items"])

    def ready_endpoints(want: int) -> Any:
        slices = kget(cp, "endpointslices", "-l", "kubernetes.io/service-name=api")["items"]
        ready = [e for s in slices for e in s.get("endpoints") or [] if e["conditions"].get("ready")]
        return slices if len(slices) == 1 and len(ready) == want else None
    (eps,) = wait_for(lambda: ready_endpoints(2), what="2 ready endpoints")
    assert eps["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]  # the named targetPort, resolved
    assert sorted(a for e in eps["endpoints"] for a in e["addresses"]) == pod_ips
    assert {(e["nodeName"], e["targetRef"]["kind"]) for e in eps["endpoints"]} == {("cptest-worker", "Pod")}
    kubectl(cp, "scale", "deployment/api", "--replicas=0")
    wait_for(lambda: ready_endpoints(0), what="no endpoints after the scale to 0")
    kubectl(cp, "delete", "-f", "-", stdin=SERVICE_AND_BACKENDS)


def test_pod_logs_come_from_the_file_its_process_writes(cluster: TwinCluster, cp: ControlPlane) -> None:
    """kubectl logs -> API server -> egress proxy -> kwok's kubelet endpoint -> the file the
    kubelet emulation keeps for the container (its kwok Logs object points there)."""
    kubectl(cp, "run", "writer", "--image", "nginx:1.29.3")
    kubectl(cp, "wait", "--for=condition=Ready", "pod/writer", "--timeout=60s")
    logs = kget(cp, "logs.kwok.x-k8s.io", "writer")["spec"]["logs"]
    assert [entry["containers"] for entry in logs] == [["writer"]]
    assert cluster.handle is not None
    pod_logs = cluster.handle.pod_logs
    pod_logs.append("default", "writer", "I1123 the run before", container="writer")
    pod_logs.restart("default", "writer", "writer")  # a new run: the log so far becomes the previous one
    pod_logs.append("default", "writer", "I1123 started", container="writer")
    pod_logs.append("default", "writer", 'I1123 "updating Ingress status" namespace="one"', container="writer")
    current = Path(logs[0]["logsFile"])
    assert current.read_text().splitlines()[0].endswith(" stdout F I1123 started")  # the CRI log format
    deadline = time.monotonic() + 20
    while "updating Ingress status" not in (out := kubectl(cp, "logs", "writer", check=False)):
        assert time.monotonic() < deadline, out
        time.sleep(0.5)
    assert out.splitlines() == ["I1123 started", 'I1123 "updating Ingress status" namespace="one"']
    assert kubectl(cp, "logs", "writer", "--tail=1").strip() == 'I1123 "updating Ingress status" namespace="one"'
    assert kubectl(cp, "logs", "writer", "--previous").strip() == "I1123 the run before"


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


def _kwok_that_crashes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, times: int, frame: str) -> None:
    """kwok behind a wrapper whose first TIMES runs print a Go crash trace through FRAME and exit 2,
    as kwok v0.8.0 did once in CI; later runs are the real kwok."""
    real = binaries.binary_path
    runs = tmp_path / "kwok-runs"
    wrapper = tmp_path / "kwok"
    wrapper.write_text(f"""#!/bin/sh
echo run >> {runs}
if [ "$(wc -l < {runs})" -le {times} ]; then
  echo 'fatal error: concurrent map writes'
  echo 'sigs.k8s.io/kwok/pkg/{frame}(0x3b1fdc92c900, 0x3b1fdca61020)'
  exit 2
fi
exec {real("kwok")} "$@"
""")
    wrapper.chmod(0o755)
    monkeypatch.setattr(binaries, "binary_path", lambda name: wrapper if name == "kwok" else real(name))


def test_kwok_crashing_in_its_stage_init_while_starting_runs_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    _kwok_that_crashes(tmp_path, monkeypatch, times=2, frame="utils/lifecycle.(*Stage).init")
    plane = control_plane("cpcrash", tmp_path / "cp", {})
    try:
        plane.start(timeout=90)
        assert (tmp_path / "kwok-runs").read_text().count("run") == 3
        warnings = [r.getMessage() for r in caplog.records if "starting it again" in r.getMessage()]
        assert len(warnings) == 2 and "fatal error: concurrent map writes" in warnings[0], warnings
        assert plane.layout.log_file("kwok").read_text().count("fatal error") == 2  # both runs kept
        plane.check()  # up: nodes Ready, kwok serving
    finally:
        plane.stop()


@pytest.mark.parametrize("times, frame, why", [
    (3, "utils/lifecycle.(*Stage).init",
     r"kwok exited with status 2 \(crashed in lifecycle\.\(\*Stage\)\.init 3 times\), fatal error: "),
    (1, "kwok/controllers.(*NodeController).preprocess",
     r"kwok exited with status 2, fatal error: concurrent map writes; last lines of its log"),
], ids=["the-third-stage-init-crash", "another-crash"])
def test_other_kwok_crashes_while_starting_still_fail_the_start(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, times: int, frame: str, why: str) -> None:
    _kwok_that_crashes(tmp_path, monkeypatch, times=times, frame=frame)
    plane = control_plane("cpcrash", tmp_path / "cp", {})
    with pytest.raises(ControlPlaneError, match=why):
        plane.start(timeout=90)
    assert plane.procs == {}


def test_kwok_crashing_through_easycel_once_the_cluster_is_up_runs_again(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    """A stage's first event can come after start(): kwok's run ends with easycel's unlocked map in
    its trace (written here into its log before the run is killed), and check() starts it again,
    pointing the egress proxy at the new run's port."""
    plane = control_plane("cpcrashup", tmp_path, {})
    try:
        plane.start(timeout=90)
        crashed = plane.procs["kwok"]
        crashed.kill()
        crashed.wait()
        with plane.layout.log_file("kwok").open("a") as kwok_log:
            kwok_log.write("fatal error: concurrent map read and map write\n"
                           "github.com/wzshiming/easycel.getStructFieldMap(...)\n")
        plane.check()
        again = plane.procs["kwok"]
        assert again is not crashed and again.poll() is None
        assert plane.egress is not None and plane.egress.target_port == plane.ports.kwok
        assert listening_ports(again.pid) == {plane.ports.kwok}
        warnings = [r.getMessage() for r in caplog.records if "starting it again" in r.getMessage()]
        assert len(warnings) == 1 and "concurrent map read and map write" in warnings[0], warnings
        plane.check()  # the new run keeps running
    finally:
        plane.stop()
