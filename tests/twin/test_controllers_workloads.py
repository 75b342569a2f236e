"""Nodes, Deployments → ReplicaSets → Pods, scheduler, kubelet, Services and EndpointSlices
against the real ObjectStore (in-process, time_scale 60)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "controllers"))

from twinlib import (update_retry, Runtime, deployment, ready_deployment, service, wait_for)  # noqa: E402,F401

from kindlab_twin.controllers import all_controllers  # noqa: E402
from kindlab_twin.store import ObjectStore  # noqa: E402

DEP = ("apps/v1", "Deployment")
RS = ("apps/v1", "ReplicaSet")
POD = ("v1", "Pod")
SVC = ("v1", "Service")
EPS = ("discovery.k8s.io/v1", "EndpointSlice")


def test_nodes_and_kubernetes_service(twin: Runtime) -> None:
    node = wait_for(lambda: twin.store.get(("v1", "Node"), None, "kind-control-plane"), what="node")
    assert node["status"]["addresses"][0] == {"type": "InternalIP", "address": "172.18.0.2"}
    assert any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"]["conditions"])
    assert [m["manager"] for m in node["metadata"]["managedFields"]][0] == "kubelet"
    svc = wait_for(lambda: twin.store.get(SVC, "default", "kubernetes"), what="kubernetes svc")
    assert svc["spec"]["clusterIP"] == "10.96.0.1"


def test_deployment_rollout_scale_and_status(twin: Runtime) -> None:
    s = twin.store
    s.create(deployment("web", "default", "nginx:1.27", replicas=2), "test")
    d = ready_deployment(s, "default", "web")
    st = d["status"]
    assert st["observedGeneration"] == d["metadata"]["generation"]
    assert st["availableReplicas"] == 2
    assert {c["type"]: c["reason"] for c in st["conditions"]} == {"Available": "MinimumReplicasAvailable", "Progressing": "NewReplicaSetAvailable"}
    pods = s.list(POD, "default", {"app": "web"})
    assert len(pods) == 2 and all(p["status"]["podIP"].startswith("10.244.0.") for p in pods)
    assert all(p["spec"]["nodeName"] == "kind-control-plane" for p in pods)
    assert all("pod-template-hash" in p["metadata"]["labels"] for p in pods)
    assert pods[0]["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
    # scale up and down
    d["spec"]["replicas"] = 3
    update_retry(s, d)
    wait_for(lambda: len(s.list(POD, "default", {"app": "web"})) == 3, what="3 pods")
    d = ready_deployment(s, "default", "web")
    d["spec"]["replicas"] = 1
    update_retry(s, d)
    wait_for(lambda: len(s.list(POD, "default", {"app": "web"})) == 1, what="1 pod")
    # template change → new ReplicaSet, old one scaled to 0, rollout completes
    d = s.get(DEP, "default", "web")
    old_hash = s.list(POD, "default", {"app": "web"})[0]["metadata"]["labels"]["pod-template-hash"]
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    update_retry(s, d)

    def rolled() -> bool:
        pods = s.list(POD, "default", {"app": "web"})
        return len(pods) == 1 and pods[0]["metadata"]["labels"]["pod-template-hash"] != old_hash
    wait_for(rolled, what="rollout")
    d = ready_deployment(s, "default", "web")
    assert d["status"]["updatedReplicas"] == 1 and d["status"]["observedGeneration"] == d["metadata"]["generation"]
    rss = {rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]: rs["spec"]["replicas"] for rs in s.list(RS, "default")}
    assert rss == {"1": 0, "2": 1}


def test_control_plane_taint_respected(tmp_path: Path) -> None:
    rt = Runtime(store=ObjectStore(), state_dir=str(tmp_path), cluster_name="lab", time_scale=60,
                 kind_config={"nodes": [{"role": "control-plane"}, {"role": "worker"}]})
    ctrls = all_controllers()
    for c in ctrls:
        c.start(rt)
    try:
        rt.store.create(deployment("web", "default", "nginx:1.27", replicas=3), "test")
        ready_deployment(rt.store, "default", "web")
        pods = rt.store.list(POD, "default", {"app": "web"})
        assert {p["spec"]["nodeName"] for p in pods} == {"lab-worker"}
        assert all(p["status"]["podIP"].startswith("10.244.1.") and p["status"]["hostIP"] == "172.18.0.3" for p in pods)
        # a hostPort can be used once per node: the second pod stays Pending
        dep = deployment("hp", "default", "nginx:1.27", replicas=2, ports=[{"containerPort": 80, "hostPort": 80}])
        rt.store.create(dep, "test")

        def one_pending() -> dict | None:
            pods = rt.store.list(POD, "default", {"app": "hp"})
            pending = [p for p in pods if not p["spec"].get("nodeName")]
            if len(pods) == 2 and len(pending) == 1 and pending[0].get("status", {}).get("conditions"):
                return pending[0]
            return None
        pending = wait_for(one_pending, what="one pending hostPort pod")
        cond = [c for c in pending["status"]["conditions"] if c["type"] == "PodScheduled"][0]
        assert cond["reason"] == "Unschedulable" and "free ports" in cond["message"]
    finally:
        for c in reversed(ctrls):
            c.stop()


def test_services_cluster_ip_node_port_and_endpointslices(twin: Runtime) -> None:
    s = twin.store
    s.create(deployment("api", "default", "registry.k8s.io/e2e-test-images/agnhost:2.53", replicas=2,
                        ports=[{"name": "web", "containerPort": 8080}]), "test")
    s.create(service("api", "default", {"app": "api"}, [{"name": "http", "port": 80, "targetPort": "web"}], "NodePort"), "test")
    ready_deployment(s, "default", "api")
    svc = wait_for(lambda: (x := s.get(SVC, "default", "api")) and x["spec"].get("clusterIP") and x, what="clusterIP")
    assert svc["spec"]["clusterIP"].startswith("10.96.") and svc["spec"]["clusterIP"] != "10.96.0.1"
    assert 30000 <= svc["spec"]["ports"][0]["nodePort"] <= 32767

    def slice_ready(n: int) -> dict | None:
        sl = s.list(EPS, "default", {"kubernetes.io/service-name": "api"})
        if len(sl) == 1 and sum(1 for e in sl[0].get("endpoints") or [] if e["conditions"]["ready"]) == n:
            return sl[0]
        return None
    sl = wait_for(lambda: slice_ready(2), what="2 ready endpoints")
    assert sl["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]  # named targetPort resolved
    ep = sl["endpoints"][0]
    assert ep["targetRef"]["kind"] == "Pod" and ep["nodeName"] == "kind-control-plane"
    assert sl["metadata"]["labels"]["endpointslice.kubernetes.io/managed-by"] == "endpointslice-controller.k8s.io"
    d = s.get(DEP, "default", "api")
    d["spec"]["replicas"] = 0
    update_retry(s, d)
    wait_for(lambda: slice_ready(0), what="no endpoints after scale to 0")


def test_daemonset_one_pod_per_node(tmp_path: Path) -> None:
    rt = Runtime(store=ObjectStore(), state_dir=str(tmp_path), cluster_name="lab", time_scale=60,
                 kind_config={"nodes": [{"role": "control-plane"}, {"role": "worker"}, {"role": "worker"}]})
    ctrls = all_controllers()
    for c in ctrls:
        c.start(rt)
    try:
        ds = deployment("speaker", "default", "quay.io/metallb/speaker:v0.16.1")
        ds["kind"] = "DaemonSet"
        ds["spec"].pop("replicas")
        rt.store.create(ds, "test")

        def ready() -> dict | None:
            d = rt.store.get(("apps/v1", "DaemonSet"), "default", "speaker")
            st = (d or {}).get("status") or {}
            return d if st.get("numberReady") == 2 and st.get("desiredNumberScheduled") == 2 else None
        wait_for(ready, what="speaker on both workers")
        assert {p["spec"]["nodeName"] for p in rt.store.list(POD, "default", {"app": "speaker"})} == {"lab-worker", "lab-worker2"}
        ds = rt.store.get(("apps/v1", "DaemonSet"), "default", "speaker")
        ds["spec"]["template"]["spec"]["tolerations"] = [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}]
        update_retry(rt.store, ds)
        wait_for(lambda: len([p for p in rt.store.list(POD, "default", {"app": "speaker"})
                              if (p.get("status") or {}).get("phase") == "Running"]) == 3, what="3 speakers")
    finally:
        for c in reversed(ctrls):
            c.stop()


def test_rolling_update_keeps_availability_and_stalls_on_crash(twin: Runtime) -> None:
    s = twin.store
    dep = deployment("web", "default", "nginx:1.27", replicas=4)
    dep["spec"]["progressDeadlineSeconds"] = 60  # 1 s at time_scale 60
    s.create(dep, "test")
    ready_deployment(s, "default", "web")
    d = s.get(DEP, "default", "web")
    c = d["spec"]["template"]["spec"]["containers"][0]
    c["image"] = "registry.k8s.io/ingress-nginx/controller:v1.15.1"
    c["args"] = ["/nginx-ingress-controller", "--no-such-flag"]  # pflag: unknown flag → exit 2
    update_retry(s, d)

    def stalled() -> dict | None:
        d = s.get(DEP, "default", "web")
        prog = [c for c in (d.get("status") or {}).get("conditions") or [] if c["type"] == "Progressing"]
        return d if prog and prog[0]["reason"] == "ProgressDeadlineExceeded" else None
    d = wait_for(stalled, what="ProgressDeadlineExceeded")
    assert d["status"]["availableReplicas"] >= 3  # maxUnavailable 25% of 4 = 1
    assert d["status"]["updatedReplicas"] <= 2  # maxSurge 25% of 4 = 1 (+1 for the unavailable one)
    crashing = [p for p in s.list(POD, "default", {"app": "web"}) if p["spec"]["containers"][0]["image"].startswith("registry.k8s.io")]
    assert crashing and all(p["status"]["containerStatuses"][0]["state"].get("waiting", {}).get("reason") == "CrashLoopBackOff"
                            for p in crashing if p.get("status", {}).get("containerStatuses"))
    assert twin.pod_logs.lines("default", crashing[0]["metadata"]["name"])[-1] == "unknown flag: --no-such-flag"


def test_rolling_update_completes_stepwise(twin: Runtime) -> None:
    s = twin.store
    s.create(deployment("web", "default", "nginx:1.27", replicas=4), "test")
    ready_deployment(s, "default", "web")
    lowest: list[int] = []
    s.subscribe(lambda _t, o: lowest.append(int((o.get("status") or {}).get("availableReplicas", 0)))
                if o.get("kind") == "Deployment" and o["metadata"]["name"] == "web" else None)
    d = s.get(DEP, "default", "web")
    d["spec"]["template"]["spec"]["containers"][0]["image"] = "nginx:1.28"
    update_retry(s, d)

    def complete() -> bool:
        pods = s.list(POD, "default", {"app": "web"})
        return len(pods) == 4 and all(p["spec"]["containers"][0]["image"] == "nginx:1.28" for p in pods)
    wait_for(complete, what="all pods replaced")
    d = ready_deployment(s, "default", "web")
    assert min(lowest) >= 3
    assert {c["type"]: c["reason"] for c in d["status"]["conditions"]}["Progressing"] == "NewReplicaSetAvailable"
