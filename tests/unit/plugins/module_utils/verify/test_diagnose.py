from __future__ import annotations

import copy
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.verify import diagnose as d
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.controllers import find_controllers
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import base
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import binary as ng_binary
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import KindNotServed
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.findings import culprits_of

Obj = dict[str, Any]
IMAGE = "registry.k8s.io/ingress-nginx/controller:v1.15.1@sha256:abc"
FULL = "ingress-ingress-nginx-controller"
SA = "ingress-ingress-nginx"


def nginx_workload(ns: str, args: list[str], kind: str = "Deployment", image: str = IMAGE) -> Obj:
    labels = {"app.kubernetes.io/instance": "ingress", "app.kubernetes.io/component": "controller"}
    return {
        "apiVersion": "apps/v1", "kind": kind, "metadata": {"name": FULL, "namespace": ns},
        "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
            "serviceAccountName": SA,
            "containers": [{"name": "controller", "image": image, "args": ["/nginx-ingress-controller"] + args,
                            "env": [{"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}]}],
        }}},
    }


def pod(ns: str, name: str, node: str = "lab-control-plane", ready: bool = True) -> Obj:
    return {"metadata": {"namespace": ns, "name": name, "labels": {"app.kubernetes.io/instance": "ingress",
                                                                   "app.kubernetes.io/component": "controller"}},
            "spec": {"nodeName": node},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def lb_service(ns: str, ip: str | None, stype: str = "LoadBalancer", **spec: Any) -> Obj:
    svc: Obj = {"metadata": {"namespace": ns, "name": FULL},
                "spec": dict({"type": stype, "clusterIP": "10.96.0.%d" % (len(ns)), "selector": {"app.kubernetes.io/instance": "ingress"}}, **spec),
                "status": {"loadBalancer": {"ingress": [{"ip": ip}] if ip else []}}}
    return svc


def cluster_rbac(ns: str) -> tuple[Obj, Obj]:
    role = {"metadata": {"name": "crole-" + ns}, "rules": [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingressclasses"], "verbs": ["get", "list", "watch"]}]}
    binding = {"metadata": {"name": "crole-" + ns}, "roleRef": {"kind": "ClusterRole", "name": "crole-" + ns},
               "subjects": [{"kind": "ServiceAccount", "name": SA, "namespace": ns}]}
    return role, binding


def ingress(ns: str, name: str = "test", annotation: str | None = "nginx", class_name: str | None = None) -> Obj:
    meta: Obj = {"namespace": ns, "name": name}
    if annotation is not None:
        meta["annotations"] = {"kubernetes.io/ingress.class": annotation}
    spec: Obj = {"rules": [{"http": {}}]}
    if class_name:
        spec["ingressClassName"] = class_name
    return {"metadata": meta, "spec": spec}


def scoped_args(ns: str) -> list[str]:
    return ["--publish-service=$(POD_NAMESPACE)/" + FULL, "--election-id=ingress-ingress-nginx-leader",
            "--controller-class=k8s.io/ingress-nginx-" + ns, "--ingress-class=nginx", "--watch-namespace=$(POD_NAMESPACE)"]


def puzzle() -> base.ClusterState:
    """The seed's incident: one and three scoped with LB publish, two cluster-wide with node IPs."""
    crole, crb = cluster_rbac("two")
    return base.ClusterState(
        workloads=[nginx_workload("one", scoped_args("one")),
                   nginx_workload("two", ["--election-id=ingress-ingress-nginx-leader",
                                          "--controller-class=k8s.io/ingress-nginx-two", "--ingress-class=nginx"]),
                   nginx_workload("three", scoped_args("three"))],
        pods=[pod("one", "c1"), pod("two", "c2"), pod("three", "c3")],
        services=[lb_service("one", "100.64.0.0"), lb_service("two", "100.64.0.1"), lb_service("three", "100.64.0.2")],
        nodes=[{"metadata": {"name": "lab-control-plane"}, "status": {"addresses": [{"type": "InternalIP", "address": "172.18.0.2"}]}}],
        namespaces=[{"metadata": {"name": n}} for n in ("one", "two", "three")],
        ingress_classes=[{"metadata": {"name": "nginx-" + n}, "spec": {"controller": "k8s.io/ingress-nginx-" + n}} for n in ("one", "two", "three")],
        cluster_roles=[crole], cluster_role_bindings=[crb],
        ingresses=[ingress("one"), ingress("three"), ingress("two")],
    )


def by_ref(result: dict[str, Any]) -> dict[str, Any]:
    return {c["controller"]: c for c in result["controllers"]}


# ---------------------------------------------------------------- args


@pytest.mark.parametrize("argv, error", [
    (["--publish-servise=a/b"], "unknown flag: --publish-servise"),
    (["-x"], "unknown shorthand flag: 'x' in -x"),
    (["--status-update-interval=soon"], 'invalid argument "soon" for "--status-update-interval" flag'),
    (["--election-ttl", "30"], 'invalid argument "30" for "--election-ttl" flag'),
])
def test_flags_the_binary_refuses(argv: list[str], error: str) -> None:
    """pflag exits 2 on any of these: the pod crash-loops, and the diagnosis says so."""
    assert ng_binary.parse_nginx_flags(argv)[1] == [error]
    state = puzzle()
    state.workloads[1] = nginx_workload("two", argv)
    r = d.analyse(state)
    assert any(f["kind"] == "cannot_start" and error in f["message"] for f in r["findings"])
    assert by_ref(r)["two/" + FULL]["address"] is None


def test_pod_namespace_expansion() -> None:
    c = nginx_workload("one", ["--watch-namespace=$(POD_NAMESPACE)", "--x=$(UNKNOWN)", "--y=$$(POD_NAMESPACE)"])
    argv = base.container_argv(base.pod_template(c)["containers"][0], "one")
    assert argv[1:] == ["--watch-namespace=one", "--x=$(UNKNOWN)", "--y=$(POD_NAMESPACE)"]


# ---------------------------------------------------------------- RBAC, scope, publish


def test_rbac_needs_a_cluster_role_binding() -> None:
    state = puzzle()
    assert base.can_cluster_wide(state, "two", SA, "networking.k8s.io", "ingressclasses", "list")
    assert base.can_cluster_wide(state, "two", SA, "", "nodes", "get")
    assert not base.can_cluster_wide(state, "one", SA, "", "nodes", "get")
    # resourceNames narrow a rule: no blanket list
    state.cluster_roles[0]["rules"][1]["resourceNames"] = ["nginx-two"]
    assert not base.can_cluster_wide(state, "two", SA, "networking.k8s.io", "ingressclasses", "list")
    state.cluster_role_bindings.append({"roleRef": {"kind": "ClusterRole", "name": "cluster-admin"},
                                        "subjects": [{"kind": "Group", "name": "system:serviceaccounts:one"}]})
    assert base.can_cluster_wide(state, "one", SA, "networking.k8s.io", "ingressclasses", "list")


def test_controllers_of_the_puzzle() -> None:
    r = by_ref(d.analyse(puzzle()))
    one, two = r["one/" + FULL], r["two/" + FULL]
    assert one["watch"] == "namespace one" and one["publish_source"] == "service" and one["address"] == ["100.64.0.0"]
    assert one["settings"]["ignore_ingress_class"] is True and one["settings"]["may_get_nodes"] is False
    assert two["watch"] == "all namespaces" and two["publish_source"] == "node-addresses" and two["address"] == ["172.18.0.2"]
    assert two["settings"]["ingress_classes"] == ["nginx-two"]


def test_one_controller_per_workload_not_per_pod() -> None:
    state = puzzle()
    state.pods.append(pod("two", "c2b", node="lab-worker"))
    state.nodes.append({"metadata": {"name": "lab-worker"}, "status": {"addresses": [
        {"type": "InternalIP", "address": "172.18.0.3"}, {"type": "ExternalIP", "address": "203.0.113.7"}]}})
    r = d.analyse(state)
    assert len(r["controllers"]) == 3
    assert by_ref(r)["two/" + FULL]["address"] == ["172.18.0.2", "203.0.113.7"]  # ExternalIP where the node has one


@pytest.mark.parametrize("svc, expected, from_lb", [
    (lb_service("x", "100.64.0.9", externalIPs=["192.0.2.1"]), ["100.64.0.9", "192.0.2.1"], True),
    (lb_service("x", None, "NodePort"), ["10.96.0.1"], False),
    (lb_service("x", None, "NodePort", externalIPs=["192.0.2.5"]), ["192.0.2.5"], False),
    (lb_service("x", None, "ClusterIP"), ["10.96.0.1"], False),
    (lb_service("x", None, "ExternalName", externalName="lb.example.com"), ["lb.example.com"], False),
])
def test_publish_service_by_type(svc: Obj, expected: list[str], from_lb: bool) -> None:
    assert ng_binary.service_addresses(svc) == (expected, from_lb)


def test_publish_order_status_address_wins_and_internal_ip() -> None:
    state = puzzle()
    state.workloads[1] = nginx_workload("two", ["--publish-status-address=lb.example.com, 192.0.2.9"])
    assert by_ref(d.analyse(state))["two/" + FULL]["address"] == ["192.0.2.9", "lb.example.com"]
    state.nodes[0]["status"]["addresses"].append({"type": "ExternalIP", "address": "203.0.113.1"})
    state.workloads[1] = nginx_workload("two", ["--report-node-internal-ip-address"])
    assert by_ref(d.analyse(state))["two/" + FULL]["address"] == ["172.18.0.2"]
    state.workloads[1] = nginx_workload("two", [])
    assert by_ref(d.analyse(state))["two/" + FULL]["address"] == ["203.0.113.1"]


def test_node_addresses_need_ready_pods_and_rbac() -> None:
    state = puzzle()
    state.pods[1] = pod("two", "c2", ready=False)
    assert by_ref(d.analyse(state))["two/" + FULL]["address"] == []
    state = puzzle()
    state.cluster_role_bindings = []
    c = by_ref(d.analyse(state))["two/" + FULL]
    assert c["address"] == [] and "may not get Nodes" in c["publish_detail"]


def test_empty_address_warning() -> None:
    state = puzzle()
    state.workloads[0] = nginx_workload("one", ["--watch-namespace=one"])  # no publish service, no RBAC for Nodes
    r = d.analyse(state)
    f = [f for f in r["findings"] if f["kind"] == "empty_address"]
    assert f == [] or f[0]["ingress"] != "one/test"  # one/test still has two writers: [] vs node IP is a flap
    assert r["ingresses"]["one/test"]["flapping"] is True
    state.workloads = state.workloads[:1]
    r = d.analyse(state)
    f = [f for f in r["findings"] if f["kind"] == "empty_address"]
    assert len(f) == 1 and f[0]["ingress"] == "one/test" and "may not get Nodes" in f[0]["message"]
    assert f[0]["fix"]["args"] == ["one/%s: --publish-service=$(POD_NAMESPACE)/%s" % (FULL, FULL)]


def test_missing_publish_service_is_fatal() -> None:
    state = puzzle()
    state.services = [s for s in state.services if s["metadata"]["namespace"] != "one"]
    r = d.analyse(state)
    f = [f for f in r["findings"] if f["kind"] == "publish_service_missing"]
    assert len(f) == 1 and "CrashLoopBackOff" in f[0]["message"] and f[0]["severity"] == "error"
    assert f[0]["fix"]["args"] == ["one/%s: --publish-service=<namespace>/<an existing Service>" % FULL]  # its type's fix
    assert by_ref(r)["one/" + FULL]["address"] is None  # never falls back to node addresses
    assert r["passed"] is False


# ---------------------------------------------------------------- claims


SETTINGS = ng_binary.nginx_settings({})


@pytest.mark.parametrize("ing, our, ignore, settings, expected", [
    (ingress("a", annotation=None, class_name="mine"), ["mine"], False, SETTINGS, "yes"),
    (ingress("a", annotation="nginx", class_name="other"), ["mine"], False, SETTINGS, "no"),  # no fallback to the annotation
    (ingress("a", annotation="nginx"), [], False, SETTINGS, "yes"),
    (ingress("a", annotation="traefik"), [], False, SETTINGS, "no"),
    (ingress("a", annotation=None), [], False, SETTINGS, "no"),
    (ingress("a", annotation=None), [], False, ng_binary.nginx_settings({"watch-ingress-without-class": "true"}), "yes"),
    (ingress("a", annotation="nginx", class_name="other"), [], True, SETTINGS, "yes"),  # ingressClassName ignored
    (ingress("a", annotation=None, class_name="other"), [], True, SETTINGS, "on_update"),
    (ingress("a", annotation="traefik"), [], True, SETTINGS, "on_update"),  # update handler: no class check at all
    (ingress("a", annotation=None), [], True, SETTINGS, "on_update"),
])
def test_claim_rules(ing: Obj, our: list[str], ignore: bool, settings: ng_binary.NginxSettings, expected: str) -> None:
    assert ng_binary.nginx_claim(ing, settings, our, ignore)[0] == expected


def test_ignore_ingress_class_update_subtlety_is_said() -> None:
    claim, why = ng_binary.nginx_claim(ingress("a", annotation=None, class_name="x"), SETTINGS, [], True)
    assert claim == "on_update" and "next update" in why and "IgnoreIngressClass" in why


def test_on_update_writer_needs_another_writer() -> None:
    state = puzzle()
    state.ingresses = [ingress("one", annotation=None, class_name="nginx-two")]
    r = d.analyse(state)
    # two claims it by its IngressClass; one ignored it when added but takes it up after two's write
    w = r["ingresses"]["one/test"]["writers"]
    assert [(x["controller"].split("/")[0], x["claim"]) for x in w] == [("one", "on_update"), ("two", "yes")]
    assert r["ingresses"]["one/test"]["flapping"] is True
    f = [f for f in r["findings"] if f["kind"] == "multiple_writers"][0]
    # Its class names two: one, which takes it up only by skipping the class check, is the culprit,
    # and the fix is the RBAC that lets it read IngressClasses (then it honours the class).
    assert "IgnoreIngressClass" in f["message"] and f["culprits"] == ["one/" + FULL]
    assert f["fix"]["chart_values"][0].startswith("one/%s: rbac.scope: false" % FULL)
    state.ingresses = [ingress("one", annotation=None, class_name="elsewhere")]
    r = d.analyse(state)
    assert r["ingresses"]["one/test"]["writers"] == []
    assert "next update" in [f for f in r["findings"] if f["kind"] == "unclaimed"][0]["message"]
    # ... and says who takes it up at that update (seen on kind: the real v1.11.0 writes it once it is edited)
    after = r["ingresses"]["one/test"]["writers_after_update"]
    assert [(x["controller"].split("/")[0], x["claim"]) for x in after] == [("one", "on_update")]


def test_class_by_name() -> None:
    s = ng_binary.nginx_settings({"ingress-class-by-name": "true", "ingress-class": "web"})
    assert ng_binary.nginx_our_classes(s, [{"metadata": {"name": "web"}, "spec": {"controller": "x"}}]) == ["web"]


def test_watch_namespace_selector_scope() -> None:
    state = puzzle()
    state.namespaces[0]["metadata"]["labels"] = {"team": "a"}
    state.workloads[1] = nginx_workload("two", ["--watch-namespace-selector=team=a"])
    r = d.analyse(state)
    assert [w["controller"] for w in r["ingresses"]["two/test"]["writers"]] == []
    assert len(r["ingresses"]["one/test"]["writers"]) == 2


# ---------------------------------------------------------------- prediction and findings


def test_puzzle_culprit_fix_and_period() -> None:
    r = d.analyse(puzzle())
    assert r["passed"] is False
    assert r["ingresses"]["one/test"]["flapping"] is True and r["ingresses"]["two/test"]["flapping"] is False
    assert [w["address"] for w in r["ingresses"]["one/test"]["writers"]] == [["100.64.0.0"], ["172.18.0.2"]]
    mw = [f for f in r["findings"] if f["kind"] == "multiple_writers"]
    assert [f["ingress"] for f in mw] == ["one/test", "three/test"]
    f = mw[0]
    assert f["culprits"] == ["two/" + FULL]
    assert ("controller two/%s watches every namespace (no --watch-namespace) and has no --publish-service, so it "
            "writes the node addresses [172.18.0.2] of its pods into one/test, which one/%s sets to [100.64.0.0]" % (FULL, FULL)) in f["message"]
    assert f["fix"]["chart_values"] == ["two/%s: controller.scope.enabled: true" % FULL,
                                        "two/%s: controller.publishService.enabled: true" % FULL]
    assert f["fix"]["args"] == ["two/%s: --watch-namespace=$(POD_NAMESPACE)" % FULL,
                                "two/%s: --publish-service=$(POD_NAMESPACE)/%s" % (FULL, FULL)]
    assert "60 s" in f["period"]
    assert {f["kind"] for f in r["findings"]} == {"multiple_writers", "class_collision"}


def test_fixed_puzzle_passes() -> None:
    state = puzzle()
    state.workloads[1] = nginx_workload("two", scoped_args("two"))
    r = d.analyse(state)
    assert r["passed"] is True and not [f for f in r["findings"] if f["kind"] == "multiple_writers"]
    assert r["ingresses"]["two/test"]["writers"][0]["address"] == ["100.64.0.1"]


def test_same_address_is_not_a_flap() -> None:
    state = puzzle()
    state.workloads[1] = nginx_workload("two", ["--publish-status-address=100.64.0.0"])
    r = d.analyse(state)
    assert r["ingresses"]["one/test"]["flapping"] is False
    assert r["ingresses"]["three/test"]["flapping"] is True


def test_culprit_rule_without_an_own_namespace_writer() -> None:
    state = puzzle()
    a = d.analyse(state)
    ctrls = find_controllers(state)
    lb = [c for c in ctrls if c.namespace == "one"][0]
    node = [c for c in ctrls if c.namespace == "two"][0]
    assert culprits_of("elsewhere", [lb, node]) == [node]
    assert culprits_of("elsewhere", [lb]) == [lb]
    assert a["passed"] is False


def test_unclaimed_and_update_status_off() -> None:
    state = puzzle()
    state.ingresses = [ingress("two", annotation="traefik")]
    r = d.analyse(state)
    f = [f for f in r["findings"] if f["kind"] == "unclaimed"]
    assert len(f) == 1 and "differs from --ingress-class=nginx" in f[0]["message"] and f[0]["severity"] == "warning"
    state = puzzle()
    state.workloads[1] = nginx_workload("two", ["--update-status=false"])
    assert d.analyse(state)["ingresses"]["one/test"]["flapping"] is False


def test_class_collision_same_controller_class() -> None:
    state = puzzle()
    state.workloads = [nginx_workload("one", ["--ingress-class=a"]), nginx_workload("two", ["--ingress-class=b"])]
    f = [f for f in d.analyse(state)["findings"] if f["kind"] == "class_collision"]
    assert len(f) == 1 and "controller-class k8s.io/ingress-nginx" in f[0]["message"]


def test_fatal_flag_combinations() -> None:
    state = puzzle()
    state.workloads[1] = nginx_workload("two", ["--publish-service=two/x", "--publish-status-address=1.2.3.4"])
    r = d.analyse(state)
    assert any(f["kind"] == "cannot_start" and "mutually exclusive" in f["message"] for f in r["findings"])
    assert by_ref(r)["two/" + FULL]["address"] is None


def test_daemonset_and_run_lists_once() -> None:
    state = puzzle()

    class FakeClient:
        def __init__(self) -> None:
            self.calls: list[tuple[str, str | None]] = []

        def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None) -> list[Obj]:
            self.calls.append((kind, namespace))
            table = {"Deployment": state.workloads[:2], "DaemonSet": [nginx_workload("three", scoped_args("three"), kind="DaemonSet")],
                     "Pod": state.pods, "Service": state.services, "Node": state.nodes, "Namespace": state.namespaces,
                     "IngressClass": state.ingress_classes, "ClusterRole": state.cluster_roles,
                     "ClusterRoleBinding": state.cluster_role_bindings, "Ingress": state.ingresses}
            if kind not in table:  # as the real client answers for a kind whose CRD is not installed
                raise KindNotServed("the cluster does not serve %s %s" % (api_version, kind))
            items = copy.deepcopy(table[kind])
            return [i for i in items if namespace is None or i["metadata"].get("namespace") == namespace]

    client = FakeClient()
    r = d.run(client, Selection(namespaces=["one"]))
    assert list(r["ingresses"]) == ["one/test"]
    assert by_ref(r)["three/" + FULL]["kind"] == "DaemonSet"
    assert ("Ingress", "one") in client.calls and ("Deployment", None) in client.calls
    # Without Gateway API's CRDs: one question, no Gateway objects and no Gateway findings, not an error.
    assert [k for k, _ns in client.calls if k.startswith("Gateway") or k.endswith("Route")] == ["GatewayClass"]
    assert r["gateway_api"]["served"] is False and r["gateway_api"]["gateways"] == {}


def test_shared_leader_lease_is_said() -> None:
    state = puzzle()
    twin = nginx_workload("one", ["--election-id=ingress-ingress-nginx-leader", "--watch-namespace=one",
                                  "--publish-status-address=192.0.2.1"])
    twin["metadata"]["name"] = "second"
    twin["spec"]["selector"]["matchLabels"]["x"] = "second"
    state.workloads = [state.workloads[0], twin]
    r = d.analyse(state)
    assert r["ingresses"]["one/test"]["flapping"] is False
    f = [f for f in r["findings"] if f.get("ingress") == "one/test"]
    assert [x["kind"] for x in f] == ["shared_leader"] and "only the Lease holder writes" in f[0]["message"]
    # with a third, unscoped writer the Ingress flaps, and the finding says who shares a Lease
    state.workloads.append(nginx_workload("two", []))
    f = [f for f in d.analyse(state)["findings"] if f["kind"] == "multiple_writers" and f["ingress"] == "one/test"][0]
    assert "share the leader Lease one/ingress-ingress-nginx-leader, so only the one holding it writes at a time" in f["message"]
    assert f["culprits"] == ["two/" + FULL]
