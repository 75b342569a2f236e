"""The MetalLB and ingress-nginx emulations as clients of a running twin (the real control
plane; time_scale 60: a 60 s status sync takes 1 s)."""
from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

sys.path.insert(0, str(Path(__file__).parent / "emulations"))

from twinlib import (MANAGER, deployment, ingress, ingress_addr, install_metallb_crds, lb_ip, metallb, metallb_controller, metallb_rbac,  # noqa: E402
                     namespace, nginx_release, ready_deployment, service, update_retry, wait_for)

from kindlab_twin.cluster import TwinClusterHandle  # noqa: E402

DEP = ("apps/v1", "Deployment")
POD = ("v1", "Pod")
SVC = ("v1", "Service")
ING = ("networking.k8s.io/v1", "Ingress")
LEASE = ("coordination.k8s.io/v1", "Lease")
CTRL = {"app.kubernetes.io/component": "controller"}


def controller_pods(rt: TwinClusterHandle, ns: str) -> list[dict]:
    return rt.store.list(POD, ns, CTRL)


def logs(rt: TwinClusterHandle, ns: str) -> list[str]:
    pods = controller_pods(rt, ns)
    return rt.pod_logs.lines(ns, pods[0]["metadata"]["name"]) if pods else []


# --- MetalLB ---------------------------------------------------------------------------------

def test_metallb_pending_until_controller_and_pool(twin: TwinClusterHandle) -> None:
    s = twin.store
    install_metallb_crds(s)
    namespace(s, "metallb-system")
    s.create(service("lb", "default", {"app": "x"}, [{"port": 80}], "LoadBalancer"), MANAGER)
    s.create({"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool",
              "metadata": {"name": "p", "namespace": "metallb-system"}, "spec": {"addresses": ["100.64.0.0/16"]}}, MANAGER)
    time.sleep(1.0)
    assert lb_ip(s, "default", "lb") is None  # no MetalLB controller Deployment yet
    metallb_controller(s)
    assert wait_for(lambda: lb_ip(s, "default", "lb"), what="LB IP") == "100.64.0.0"
    svc = s.get(SVC, "default", "lb")
    assert svc["metadata"]["annotations"]["metallb.io/ip-allocated-from-pool"] == "p"
    # MetalLB writes only the ip; ipMode VIP is the API server's default (as on kind)
    assert svc["status"]["loadBalancer"]["ingress"] == [{"ip": "100.64.0.0", "ipMode": "VIP"}]
    status_mf = [m for m in svc["metadata"]["managedFields"] if m.get("subresource") == "status"]
    assert status_mf and status_mf[0]["manager"] == "controller"
    # a second service gets the next address; type change releases, the address is reused
    s.create(service("lb2", "default", {"app": "y"}, [{"port": 80}], "LoadBalancer"), MANAGER)
    assert wait_for(lambda: lb_ip(s, "default", "lb2"), what="LB2 IP") == "100.64.0.1"
    svc = s.get(SVC, "default", "lb")
    assert svc["spec"]["clusterIP"] and svc["spec"]["ports"][0]["nodePort"]  # the API server's allocations
    svc["spec"]["type"] = "ClusterIP"
    for p in svc["spec"]["ports"]:
        p.pop("nodePort", None)
    update_retry(s, svc)
    wait_for(lambda: lb_ip(s, "default", "lb") is None, what="release")
    s.create(service("lb3", "default", {"app": "z"}, [{"port": 80}], "LoadBalancer"), MANAGER)
    assert wait_for(lambda: lb_ip(s, "default", "lb3"), what="LB3 IP") == "100.64.0.0"


def test_metallb_pending_without_pools_and_without_its_rights(twin: TwinClusterHandle) -> None:
    s = twin.store
    install_metallb_crds(s)
    namespace(s, "metallb-system")
    metallb_controller(s, rbac=False)
    ready_deployment(s, "metallb-system", "controller")
    s.create(service("lb", "default", {"app": "x"}, [{"port": 80}], "LoadBalancer"), MANAGER)
    time.sleep(1.0)  # MetalLB passes every 10 s / 60
    assert (s.get(SVC, "default", "lb").get("status") or {}).get("loadBalancer", {}) == {}
    # a pool, but the controller's ServiceAccount may not update services/status: the real
    # authorizer refuses its write, so the Service stays pending ...
    s.create({"apiVersion": "metallb.io/v1beta1", "kind": "IPAddressPool",
              "metadata": {"name": "p", "namespace": "metallb-system"}, "spec": {"addresses": ["100.64.0.0/16"]}}, MANAGER)
    time.sleep(1.5)
    assert lb_ip(s, "default", "lb") is None
    # ... until its RBAC is installed
    metallb_rbac(s)
    assert wait_for(lambda: lb_ip(s, "default", "lb"), what="LB IP once allowed") == "100.64.0.0"


# --- ingress-nginx ------------------------------------------------------------------------------

def _app(rt: TwinClusterHandle, ns: str, ann: dict[str, str] | None = None, class_name: str | None = None, name: str = "test") -> None:
    rt.store.create(deployment(name, ns, "nginx:1.27"), MANAGER)
    rt.store.create(service(name, ns, {"app": name}, [{"port": 80}]), MANAGER)
    rt.store.create(ingress(name, ns, name, annotations=ann, class_name=class_name), MANAGER)


def test_missing_publish_service_crash_loops_then_recovers(
        twin: TwinClusterHandle, kubectl: Callable[..., subprocess.CompletedProcess[str]]) -> None:
    s = twin.store
    namespace(s, "two")
    nginx_release(s, "two", scope=False, publish_service=False,
                  extra_args=["--publish-service=two/svc"])  # e.g. a pathOverride to a missing Service

    def crashing() -> dict | None:
        pods = controller_pods(twin, "two")
        cs = (pods[0].get("status", {}).get("containerStatuses") or [{}])[0] if pods else {}
        return cs if cs.get("restartCount", 0) >= 1 and "waiting" in cs.get("state", {}) else None
    cs = wait_for(crashing, what="CrashLoopBackOff")
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    assert cs["lastState"]["terminated"]["exitCode"] == 255 and cs["ready"] is False
    assert any('main.go:89] no service with name svc found in namespace two: services "svc" not found' in line
               and line.startswith("F") for line in logs(twin, "two"))
    # The log is the last run's (as the kubelet serves it for a container waiting to restart), not every run's.
    assert sum("Creating API client" in line for line in logs(twin, "two")) == 1 and logs(twin, "two")[-1].startswith("F")
    d = s.get(DEP, "two", "ingress-ingress-nginx-controller")
    assert d["status"].get("readyReplicas", 0) == 0
    s.create(service("svc", "two", {"x": "y"}, [{"port": 80}]), MANAGER)
    ready_deployment(s, "two", "ingress-ingress-nginx-controller")
    # Running again: a new log, the crashed run kept as the previous one (kubectl logs --previous, served by kwok).
    pod = controller_pods(twin, "two")[0]["metadata"]["name"]
    assert not any(line.startswith("F") for line in logs(twin, "two"))
    # the controller process logs this once it runs, a moment after the kubelet reported the pod Ready
    wait_for(lambda: any("Starting NGINX Ingress controller" in line for line in logs(twin, "two")),
             what="the new run's start-up line")
    previous = kubectl("-n", "two", "logs", pod, "-c", "controller", "--previous").stdout.splitlines()
    assert previous and previous[-1].startswith("F") and 'services "svc" not found' in previous[-1]


def test_publish_service_later_missing_keeps_status(twin: TwinClusterHandle) -> None:
    s = twin.store
    metallb(s, ["100.64.0.0/16"])
    namespace(s, "one")
    nginx_release(s, "one", scope=True, publish_service=True)
    _app(twin, "one", ann={"kubernetes.io/ingress.class": "nginx"})
    assert wait_for(lambda: ingress_addr(s, "one", "test"), what="status") == ["100.64.0.0"]
    ing = s.get(ING, "one", "test")
    mf = [m for m in ing["metadata"]["managedFields"] if m.get("subresource") == "status"]
    assert mf[0]["manager"] == "nginx-ingress-controller" and mf[0]["operation"] == "Update"
    assert any('status.go:311] "updating Ingress status" namespace="one" ingress="test" currentValue=null '
               'newValue=[{"ip":"100.64.0.0"}]' in line for line in logs(twin, "one"))
    rv = ing["metadata"]["resourceVersion"]
    time.sleep(1.3)  # one more sync period: same addresses → no write
    assert s.get(ING, "one", "test")["metadata"]["resourceVersion"] == rv
    s.delete(SVC, "one", "ingress-ingress-nginx-controller")
    wait_for(lambda: any('"requeuing" err="services \\"ingress-ingress-nginx-controller\\" not found"' in line
                         for line in logs(twin, "one")), what="error logged")
    assert ingress_addr(s, "one", "test") == ["100.64.0.0"]  # unchanged, no node-IP fallback


def test_node_ip_publish_with_ingress_class_name_and_lease(twin: TwinClusterHandle) -> None:
    s = twin.store
    namespace(s, "edge")
    s.create({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "nginx"},
              "spec": {"controller": "k8s.io/ingress-nginx"}}, MANAGER)
    nginx_release(s, "edge", scope=False, publish_service=False)
    _app(twin, "edge", class_name="nginx")
    _app(twin, "edge", class_name="other", name="foreign")
    assert wait_for(lambda: ingress_addr(s, "edge", "test"), what="node IP status") == ["172.18.0.2"]
    events = [e for e in s.list(("v1", "Event"), "edge")
              if e["involvedObject"]["kind"] == "Ingress" and e["involvedObject"]["name"] == "test"]
    assert events and events[0]["reason"] == "Sync" and events[0]["source"]["component"] == "nginx-ingress-controller"
    lease = s.get(LEASE, "edge", "ingress-ingress-nginx-leader")
    assert lease["spec"]["holderIdentity"] == controller_pods(twin, "edge")[0]["metadata"]["name"]
    time.sleep(0.5)
    assert ingress_addr(s, "edge", "foreign") == []


def test_ignore_ingress_class_when_rbac_is_namespaced(twin: TwinClusterHandle) -> None:
    s = twin.store
    namespace(s, "one")
    s.create({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "nginx"},
              "spec": {"controller": "k8s.io/ingress-nginx"}}, MANAGER)
    nginx_release(s, "one", scope=True, publish_service=True, service_type="ClusterIP")
    _app(twin, "one", class_name="nginx")
    # the real authorizer's 403: a Role cannot grant a cluster-scoped kind
    warning = wait_for(lambda: [line for line in logs(twin, "one") if "No permissions to list and get Ingress Classes" in line],
                       what="warning")[0]
    assert warning.startswith("W") and 'cannot list resource "ingressclasses"' in warning
    assert 'User "system:serviceaccount:one:ingress-ingress-nginx"' in warning
    assert "IngressClass feature will be disabled" in warning
    wait_for(lambda: (s.get(LEASE, "one", "ingress-ingress-nginx-leader") or {}).get("spec", {}).get("holderIdentity"),
             what="leader")
    time.sleep(1.2)  # a status sync period as the leader
    assert ingress_addr(s, "one", "test") == []  # ignored on add: ingressClassName is not looked at
    ing = s.get(ING, "one", "test")
    ing["metadata"].setdefault("labels", {})["touched"] = "yes"
    update_retry(s, ing)  # any update: the update handler skips the class check
    cluster_ip = s.get(SVC, "one", "ingress-ingress-nginx-controller")["spec"]["clusterIP"]
    assert wait_for(lambda: ingress_addr(s, "one", "test"), what="taken up on update") == [cluster_ip]


def test_scoped_rbac_cannot_read_nodes(twin: TwinClusterHandle) -> None:
    """Node-IP mode with a namespace Role: Nodes are cluster-scoped, GetNodeIPs fails, so the
    controller has no address to publish (and says so in its log)."""
    s = twin.store
    namespace(s, "one")
    nginx_release(s, "one", scope=True, publish_service=False)
    _app(twin, "one", ann={"kubernetes.io/ingress.class": "nginx"})
    wait_for(lambda: any('"Error getting node"' in line and 'cannot get resource \\"nodes\\"' in line
                         for line in logs(twin, "one")), what="node error")
    assert ingress_addr(s, "one", "test") == []


def test_single_leader_and_update_status_on_shutdown(twin: TwinClusterHandle) -> None:
    s = twin.store
    namespace(s, "x")
    nginx_release(s, "x", scope=False, publish_service=False)
    d = s.get(DEP, "x", "ingress-ingress-nginx-controller")
    d["spec"]["replicas"] = 2
    update_retry(s, d)
    _app(twin, "x", ann={"kubernetes.io/ingress.class": "nginx"})
    ready_deployment(s, "x", "ingress-ingress-nginx-controller")
    assert wait_for(lambda: ingress_addr(s, "x", "test"), what="status") == ["172.18.0.2"]
    time.sleep(1.2)
    pods = [p["metadata"]["name"] for p in controller_pods(twin, "x")]
    writers = [line for p in pods for line in twin.pod_logs.lines("x", p) if "updating Ingress status" in line]
    assert len(pods) == 2 and len(writers) == 1  # only the leader syncs
    # down to one pod, then none: the last pod to stop clears the status (--update-status-on-shutdown);
    # while another controller pod exists a stopping one leaves it to the next leader (isRunningMultiplePods)
    for replicas in (1, 0):
        d = s.get(DEP, "x", "ingress-ingress-nginx-controller")
        d["spec"]["replicas"] = replicas
        update_retry(s, d)
        wait_for(lambda: len(controller_pods(twin, "x")) == replicas, what=f"{replicas} controller pod(s)")
        if replicas:
            assert ingress_addr(s, "x", "test") == ["172.18.0.2"]
    wait_for(lambda: ingress_addr(s, "x", "test") == [], what="status cleared on shutdown")


def test_puzzle_flapping_emerges(twin: TwinClusterHandle) -> None:
    """seeds/01: one/three scoped with --publish-service, two unscoped without; all Ingresses
    annotated kubernetes.io/ingress.class: nginx → one/three alternate between their MetalLB IP
    and the node IP, two stays on the node IP."""
    s = twin.store
    metallb(s, ["100.64.0.0/16"])
    for ns in ("one", "two", "three"):
        namespace(s, ns)
        nginx_release(s, ns, scope=ns != "two", publish_service=ns != "two")
        _app(twin, ns, ann={"kubernetes.io/ingress.class": "nginx"})
    seen: dict[str, list[tuple[str, ...]]] = {ns: [] for ns in ("one", "two", "three")}

    def observe() -> None:
        for ns in seen:
            a = tuple(ingress_addr(s, ns, "test"))
            if a and (not seen[ns] or seen[ns][-1] != a):
                seen[ns].append(a)
    for ns in seen:  # the three controllers up (pods scheduled and started by the real control plane)
        ready_deployment(s, ns, "ingress-ingress-nginx-controller")
        observe()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        observe()
        time.sleep(0.01)
    one_ip, three_ip = lb_ip(s, "one", "ingress-ingress-nginx-controller"), lb_ip(s, "three", "ingress-ingress-nginx-controller")
    assert (one_ip, three_ip) == ("100.64.0.0", "100.64.0.2")
    assert seen["two"] == [("172.18.0.2",)]
    for ns, ip in (("one", one_ip), ("three", three_ip)):
        assert set(seen[ns]) == {(ip,), ("172.18.0.2",)}, seen[ns]
        assert len(seen[ns]) >= 5, seen[ns]  # keeps alternating, once per sync period
    two_lines = [line for line in logs(twin, "two") if "updating Ingress status" in line]
    assert any('namespace="one"' in line and 'newValue=[{"ip":"172.18.0.2"}]' in line for line in two_lines)
    assert any('namespace="three"' in line and 'newValue=[{"ip":"172.18.0.2"}]' in line for line in two_lines)
    leases = {ns: s.get(LEASE, ns, "ingress-ingress-nginx-leader")["spec"]["holderIdentity"] for ns in ("one", "two", "three")}
    assert all(leases.values())  # one leader per namespace
