"""Pure-function tests: address pools, kind nodes, ingress-nginx flags, class claiming,
addresses. (What RBAC allows is the real API server's authorizer: test_emulations_metallb_nginx.)"""
from __future__ import annotations

from typing import Any, cast

import pytest

from kindlab_twin import ipam
from kindlab_twin.contract import Obj, ResourceRef, Store
from kindlab_twin.emulations import images
from kindlab_twin.emulations import metallb as mlb
from kindlab_twin.emulations import nginx_logic as nl
from kindlab_twin.kindnodes import desired_nodes, node_names


# --- ipam / MetalLB -----------------------------------------------------------------------

def test_pool_hands_out_network_address_first() -> None:
    # allocator.go getIPFromCIDR walks from the prefix's first address: seeds/01 shows 100.64.0.0
    assert ipam.first_free(["100.64.0.0/16"], set()) == "100.64.0.0"
    assert ipam.first_free(["100.64.0.0/16"], {"100.64.0.0"}) == "100.64.0.1"


def test_pool_avoid_buggy_ips_and_ranges() -> None:
    assert ipam.first_free(["10.0.0.0/24"], set(), avoid_buggy_ips=True) == "10.0.0.1"
    assert list(ipam.iter_pool(["172.20.255.254-172.20.256.1".replace("256.1", "255.255")])) == ["172.20.255.254", "172.20.255.255"]
    assert ipam.first_free(["192.168.1.10-192.168.1.12"], {"192.168.1.10"}) == "192.168.1.11"
    assert ipam.pool_contains(["192.168.1.10-192.168.1.12"], "192.168.1.12")
    assert not ipam.pool_contains(["192.168.1.10-192.168.1.12"], "192.168.1.13")


def _svc(name: str, ns: str = "default", ann: dict[str, str] | None = None, ip: str | None = None,
         stype: str = "LoadBalancer", lb_ip: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": stype, "clusterIP": "10.96.0.20"}
    if lb_ip:
        spec["loadBalancerIP"] = lb_ip
    svc: dict[str, Any] = {"metadata": {"name": name, "namespace": ns, "annotations": ann or {}, "uid": name}, "spec": spec}
    if ip:
        svc["status"] = {"loadBalancer": {"ingress": [{"ip": ip}]}}
    return svc


def _pool(name: str, addrs: list[str], auto: bool = True) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"addresses": addrs, "autoAssign": auto}}


def test_metallb_plan_order_annotations_and_release() -> None:
    pools = [_pool("a", ["100.64.0.0/30"]), _pool("manual", ["10.9.0.0/30"], auto=False)]
    svcs = [_svc("one"), _svc("two", ann={"metallb.io/address-pool": "manual"}),
            _svc("three", ann={"metallb.io/loadBalancerIPs": "100.64.0.3"}), _svc("four", lb_ip="100.64.0.2"),
            _svc("np", stype="NodePort")]
    out = mlb.plan(svcs, pools, {"one": 0, "two": 1, "three": 2, "four": 3})
    assert out["default/one"][:2] == ("100.64.0.0", "a")
    assert out["default/two"][:2] == ("10.9.0.0", "manual")  # pinned pool ignores autoAssign
    assert out["default/three"][:2] == ("100.64.0.3", "a")
    assert out["default/four"][:2] == ("100.64.0.2", "a")
    assert "default/np" not in out  # not a LoadBalancer: nothing (the controller clears it)
    # an existing valid assignment is kept; a requested IP already taken fails
    again = mlb.plan([_svc("x", ip="100.64.0.1"), _svc("y", ann={"metallb.io/loadBalancerIPs": "100.64.0.1"})], pools)
    assert again["default/x"][0] == "100.64.0.1" and again["default/y"][0] is None
    assert mlb.plan([_svc("p")], [])["default/p"] == (None, None, "")  # no pools → pending


def test_l2advertisement_selection() -> None:
    pool = {"metadata": {"name": "p", "labels": {"zone": "a"}}}
    assert mlb.l2_selects({"spec": {}}, pool)
    assert mlb.l2_selects({"spec": {"ipAddressPools": ["p"]}}, pool)
    assert not mlb.l2_selects({"spec": {"ipAddressPools": ["q"]}}, pool)
    assert mlb.l2_selects({"spec": {"ipAddressPoolSelectors": [{"matchLabels": {"zone": "a"}}]}}, pool)


# --- nodes ----------------------------------------------------------------------------------

def test_kind_node_names_ips_and_taints() -> None:
    cfg = {"nodes": [{"role": "control-plane"}, {"role": "worker"}, {"role": "worker"}]}
    assert node_names("lab", cfg) == ["lab-control-plane", "lab-worker", "lab-worker2"]
    nodes = desired_nodes("lab", cfg)
    assert [n["status"]["addresses"][0]["address"] for n in nodes] == ["172.18.0.2", "172.18.0.3", "172.18.0.4"]
    assert all("podCIDR" not in n["spec"] for n in nodes)  # the controller-manager allocates it, as on kind
    assert [n["spec"]["providerID"] for n in nodes] == ["kind://docker/lab/lab-control-plane", "kind://docker/lab/lab-worker",
                                                        "kind://docker/lab/lab-worker2"]
    assert "node.kubernetes.io/exclude-from-external-load-balancers" in nodes[0]["metadata"]["labels"]
    assert nodes[0]["spec"]["taints"][0]["key"] == "node-role.kubernetes.io/control-plane"
    assert "taints" not in nodes[1]["spec"]
    single = desired_nodes("kind", {})
    assert "taints" not in single[0]["spec"]  # kind removes the taint on single-node clusters
    assert single[0]["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] == ""
    assert single[0]["status"]["nodeInfo"]["kubeletVersion"] == "v1.35.0"


# --- flags -------------------------------------------------------------------------------------

def test_flag_parsing_like_pflag() -> None:
    cfg = nl.config_from_args(["/nginx-ingress-controller", "--publish-service", "ns/svc", "--watch-namespace=ns",
                               "--watch-ingress-without-class", "--update-status-on-shutdown=false", "-v=2",
                               "--election-id", "e", "--election-ttl=1m"])
    assert cfg.publish_service == "ns/svc" and cfg.watch_namespace == "ns" and cfg.watch_without_class
    assert not cfg.update_status_on_shutdown and cfg.election_id == "e" and cfg.election_ttl == 60
    # defaults from flags.go
    d = nl.config_from_args(["/nginx-ingress-controller"])
    assert (d.ingress_class, d.controller_class, d.election_id, d.sync_period) == \
        ("nginx", "k8s.io/ingress-nginx", "ingress-controller-leader", 60)
    assert d.update_status_on_shutdown and not d.watch_without_class and not d.internal_ip
    # `--bool value` does not consume the value (NoOptDefVal)
    assert nl.config_from_args(["--watch-ingress-without-class", "false"]).watch_without_class
    for bad, msg in ((["--nope=1"], "unknown flag: --nope"), (["--publish-service"], "flag needs an argument"),
                     (["--update-status=maybe"], "invalid argument")):
        with pytest.raises(nl.FlagError, match=msg):
            nl.config_from_args(bad)
    assert nl.validate_config(nl.config_from_args(["--publish-service=a/b", "--publish-status-address=1.2.3.4"]))


def test_args_expand_pod_env() -> None:
    pod = {"metadata": {"name": "p", "namespace": "two"}, "spec": {}}
    c = {"args": ["--publish-service=$(POD_NAMESPACE)/svc", "--x=$(UNKNOWN)", "$$(POD_NAMESPACE)"],
         "env": [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]}
    assert images.container_argv(pod, c) == ["--publish-service=two/svc", "--x=$(UNKNOWN)", "$(POD_NAMESPACE)"]


def test_image_classification() -> None:
    assert images.kind_of("registry.k8s.io/ingress-nginx/controller:v1.15.1@sha256:abc") == images.INGRESS_NGINX
    assert images.kind_of("nginx:1.27") == images.NGINX
    assert images.kind_of("docker.io/library/nginx") == images.NGINX
    assert images.kind_of("hashicorp/http-echo:1.0") == images.HTTP_ECHO
    assert images.kind_of("quay.io/metallb/controller:v0.16.1") == images.METALLB_CONTROLLER


# --- class claiming (store.go GetIngressClass + handlers) ------------------------------------

def _ing(name: str = "i", ns: str = "one", cls: str | None = None, ann: str | None = None, rv: str = "1") -> dict[str, Any]:
    ing: dict[str, Any] = {"metadata": {"name": name, "namespace": ns, "resourceVersion": rv,
                                        "annotations": {nl.CLASS_ANNOTATION: ann} if ann else {}}, "spec": {}}
    if cls:
        ing["spec"]["ingressClassName"] = cls
    return ing


def test_class_by_ingress_class_name() -> None:
    cfg = nl.config_from_args([])
    classes = [{"metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx"}},
               {"metadata": {"name": "other"}, "spec": {"controller": "example.com/other"}}]
    ours = nl.our_class_names(classes, cfg)
    assert ours == {"nginx"}
    assert nl.claims(_ing(cls="nginx"), cfg, ours, False)
    # a foreign ingressClassName is not rescued by a matching annotation
    assert not nl.claims(_ing(cls="other", ann="nginx"), cfg, ours, False)
    by_name = nl.config_from_args(["--ingress-class-by-name", "--ingress-class=other", "--controller-class=x/y"])
    assert nl.our_class_names(classes, by_name) == {"other"}


def test_class_by_annotation_and_classless() -> None:
    cfg = nl.config_from_args([])
    assert nl.claims(_ing(ann="nginx"), cfg, set(), False)
    assert not nl.claims(_ing(ann="traefik"), cfg, set(), False)
    assert not nl.claims(_ing(), cfg, set(), False)
    assert nl.claims(_ing(), nl.config_from_args(["--watch-ingress-without-class=true"]), set(), False)


def test_ignore_ingress_class_add_vs_update() -> None:
    """No IngressClass permission: ingressClassName is ignored; on add only annotated (or
    class-less with --watch-ingress-without-class) Ingresses are taken, but the update
    handler skips the class check, so the next update of any Ingress takes it up."""
    cfg = nl.config_from_args([])
    tr = nl.IngressTracker(cfg, ignore_ingress_class=True)
    tr.observe([_ing("a", ann="nginx"), _ing("b", cls="nginx"), _ing("c", ann="traefik")], {"nginx"})
    assert [i["metadata"]["name"] for i in tr.list_ingresses()] == ["a"]
    tr.observe([_ing("a", ann="nginx"), _ing("b", cls="nginx", rv="2"), _ing("c", ann="traefik", rv="2")], {"nginx"})
    assert sorted(i["metadata"]["name"] for i in tr.list_ingresses()) == ["a", "b", "c"]
    # with the permission, updates re-check the class (and drop an Ingress that lost it)
    tr2 = nl.IngressTracker(cfg, ignore_ingress_class=False)
    tr2.observe([_ing("a", ann="nginx"), _ing("c", ann="traefik")], set())
    tr2.observe([_ing("a", ann="traefik", rv="2"), _ing("c", ann="traefik", rv="2")], set())
    assert tr2.list_ingresses() == []


def test_watch_namespace_scope() -> None:
    scoped = nl.IngressTracker(nl.config_from_args(["--watch-namespace=one"]), False)
    scoped.observe([_ing("a", ns="one", ann="nginx"), _ing("a", ns="two", ann="nginx")], set())
    assert [i["metadata"]["namespace"] for i in scoped.list_ingresses()] == ["one"]
    everywhere = nl.IngressTracker(nl.config_from_args([]), False)
    everywhere.observe([_ing("a", ns="one", ann="nginx"), _ing("a", ns="two", ann="nginx")], set())
    assert len(everywhere.list_ingresses()) == 2


def test_oldest_ingress_first() -> None:
    a = {"metadata": {"name": "a", "namespace": "x", "creationTimestamp": "2026-01-02T00:00:00Z"}}
    b = {"metadata": {"name": "b", "namespace": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}}
    c = {"metadata": {"name": "c", "namespace": "x", "creationTimestamp": "2026-01-01T00:00:00Z"}}
    tracker = nl.IngressTracker(nl.config_from_args(["--watch-ingress-without-class"]), False)
    tracker.observe([a, b, c], set())
    assert [i["metadata"]["name"] for i in tracker.list_ingresses()] == ["c", "b", "a"]


# --- addresses (status.go runningAddresses / statusAddressFromService) -----------------------

def test_address_from_service_types() -> None:
    lb = {"spec": {"type": "LoadBalancer", "externalIPs": ["5.5.5.5", "1.1.1.1"]},
          "status": {"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}, {"hostname": "lb.example"}]}}}
    assert nl.address_from_service(lb, "a/b") == [{"ip": "1.1.1.1"}, {"hostname": "lb.example"}, {"ip": "5.5.5.5"}]
    assert nl.address_from_service({"spec": {"type": "NodePort", "clusterIP": "10.96.0.5"}}, "a/b") == [{"ip": "10.96.0.5"}]
    assert nl.address_from_service({"spec": {"type": "NodePort", "clusterIP": "10.96.0.5", "externalIPs": ["9.9.9.9"]}}, "a/b") == [{"ip": "9.9.9.9"}]
    assert nl.address_from_service({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.6"}}, "a/b") == [{"ip": "10.96.0.6"}]
    assert nl.address_from_service({"spec": {"type": "ExternalName", "externalName": "x.example"}}, "a/b") == [{"hostname": "x.example"}]
    assert nl.address_from_service({"spec": {"type": "LoadBalancer"}}, "a/b") == []  # pending LB: empty, no fallback
    with pytest.raises(nl.PublishServiceError, match='services "b" not found'):
        nl.address_from_service(None, "a/b")


def _node(name: str, internal: str, external: str | None = None) -> dict[str, Any]:
    addrs = [{"type": "InternalIP", "address": internal}]
    if external:
        addrs.append({"type": "ExternalIP", "address": external})
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "status": {"addresses": addrs}}


class _Objects:
    """The reads running_addresses makes (contract.Store get/list), over a fixed set of objects."""

    def __init__(self, objs: list[Obj]) -> None:
        self.objs = objs

    def _match(self, o: Obj, ref: ResourceRef, namespace: str | None) -> bool:
        return (o["apiVersion"], o["kind"]) == ref and (namespace is None or o["metadata"].get("namespace") == namespace)

    def get(self, ref: ResourceRef, namespace: str | None, name: str) -> Obj | None:
        return next((o for o in self.objs if self._match(o, ref, namespace) and o["metadata"]["name"] == name), None)

    def list(self, ref: ResourceRef, namespace: str | None = None, label_selector: dict[str, str] | None = None) -> list[Obj]:
        return [o for o in self.objs if self._match(o, ref, namespace)
                and all((o["metadata"].get("labels") or {}).get(k) == v for k, v in (label_selector or {}).items())]


def test_publish_order_and_node_ips() -> None:
    objs = [_node("n1", "172.18.0.2"), _node("n2", "172.18.0.3", "203.0.113.3")]
    for i, (node, ready) in enumerate((("n1", True), ("n2", True), ("n1", False))):
        objs.append({"apiVersion": "v1", "kind": "Pod",
                     "metadata": {"name": f"p{i}", "namespace": "x", "labels": {"app": "c"}},
                     "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]},
                     "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}})
    objs.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "x"},
                 "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.99", "ports": [{"port": 80}]}})
    store = cast(Store, _Objects(objs))  # running_addresses only reads

    def ra(args: list[str]) -> list[dict[str, str]]:
        return nl.running_addresses(nl.config_from_args(args), store, "x", {"app": "c"})

    assert ra(["--publish-status-address=1.2.3.4, lb.example"]) == [{"ip": "1.2.3.4"}, {"hostname": "lb.example"}]
    assert ra(["--publish-service=x/svc"]) == [{"ip": "10.96.0.99"}]
    # node addresses: ExternalIP when the node has one, InternalIP otherwise (kind nodes)
    assert ra([]) == [{"ip": "172.18.0.2"}, {"ip": "203.0.113.3"}]
    assert ra(["--report-node-internal-ip-address"]) == [{"ip": "172.18.0.2"}, {"ip": "172.18.0.3"}]
    with pytest.raises(nl.PublishServiceError):  # missing service: an error, never a node-IP fallback
        ra(["--publish-service=x/missing"])


def test_status_compare_and_sort() -> None:
    new = nl.standardize([{"ip": "10.0.0.2"}, {"hostname": "b"}, {"ip": "10.0.0.1"}])
    assert new == [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}, {"hostname": "b"}]
    assert nl.status_equal([{"ip": "10.0.0.2"}, {"hostname": "b"}, {"ip": "10.0.0.1", "ports": []}], new)
    assert not nl.status_equal(None, new) and nl.status_equal(None, [])


def test_klog_status_line_format() -> None:
    line = nl.klog_infos("status.go:311", "updating Ingress status", namespace="one", ingress="test",
                         currentValue=nl.lb_status_value([{"ip": "172.18.0.2"}]), newValue=nl.lb_status_value([{"ip": "100.64.0.0"}]))
    assert line.startswith("I")
    assert line.endswith('       7 status.go:311] "updating Ingress status" namespace="one" ingress="test" '
                         'currentValue=[{"ip":"172.18.0.2"}] newValue=[{"ip":"100.64.0.0"}]')
    assert 'currentValue=null' in nl.klog_infos("s:1", "m", currentValue=nl.lb_status_value(None))


def test_watch_namespace_selector() -> None:
    cfg = nl.config_from_args(["--watch-namespace-selector=team in (a,b),!legacy"])
    labels = {"one": {"team": "a"}, "two": {"team": "c"}, "three": {"team": "b", "legacy": "true"}}
    tr = nl.IngressTracker(cfg, False)
    tr.observe([_ing("i", ns=ns, ann="nginx") for ns in ("one", "two", "three")], set(), labels)
    assert [i["metadata"]["namespace"] for i in tr.list_ingresses()] == ["one"]
    assert nl.watched("x", nl.config_from_args(["--watch-namespace-selector=env=prod,tier!=db,app"]),
                      {"x": {"env": "prod", "app": "x"}})
    assert not nl.watched("x", nl.config_from_args(["--watch-namespace-selector=env==prod"]), {"x": {"env": "dev"}})
