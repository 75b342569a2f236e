"""Diagnose for Gateway API (verify/diagnose_gateways.py through diagnose.analyse): who claims each
GatewayClass, who writes each Gateway and with what address, two writers on one Gateway
(traefik#13743) and its labelSelector fix, listeners no entry point serves, routes their parent
does not accept or their controller does not watch, and route status entries from a controller
that does not own the parent."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import base
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import diagnose as d
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.controllers.traefik.test_traefik_gateway import (
    gateway_args,
    gateway_class,
    labels,
    state,
)
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_diagnose import puzzle

Obj = dict[str, Any]
A, B = "traefik-a/traefik@kubernetesgateway", "traefik-b/traefik@kubernetesgateway"


def gateway(ns: str = "traefik-a", name: str = "traefik-gateway", class_name: str = "traefik", *listeners: Obj) -> Obj:
    """The chart's Gateway: listener web on the web entry point's port, routes from its own namespace."""
    return {"metadata": {"namespace": ns, "name": name},
            "spec": {"gatewayClassName": class_name,
                     "listeners": list(listeners) or [{"name": "web", "port": 8000, "protocol": "HTTP"}]}}


def http_route(ns: str = "traefik-a", name: str = "app", parent: str = "traefik-a/traefik-gateway", **ref: Any) -> Obj:
    gw_ns, gw_name = parent.split("/")
    return {"metadata": {"namespace": ns, "name": name},
            "spec": {"parentRefs": [dict({"name": gw_name, "namespace": gw_ns}, **ref)], "hostnames": ["app.example"],
                     "rules": [{"backendRefs": [{"name": "app", "port": 80}]}]}}


def findings(result: dict[str, Any], kind: str | None = None) -> list[Obj]:
    return [f for f in result["findings"] if kind is None or f["kind"] == kind]


def healthy(**objects: Any) -> base.ClusterState:
    return state({"traefik-a": gateway_args("traefik-a")}, gateway_classes=[gateway_class()],
                 gateways=[gateway()], http_routes=[http_route()], **objects)


def test_healthy_one_writer_its_address_and_who_claims_the_class() -> None:
    r = d.analyse(healthy())
    assert r["passed"] and r["gateway_api"]["served"]
    assert [(f["kind"], f["severity"]) for f in findings(r)] == [("gateway_class_claimed", "info"), ("gateway_address", "info")]
    assert findings(r)[0]["controllers"] == [A]
    assert findings(r)[1]["message"].startswith("traefik-a/traefik-gateway: %s writes its status with the address [100.64.0.1]" % A)
    gw = r["gateway_api"]["gateways"]["traefik-a/traefik-gateway"]
    assert gw["writers"] == [{"controller": A, "address": ["100.64.0.1"], "address_source": "service", "listeners": {"web": "web"}}]
    assert gw["flapping"] is False
    assert r["gateway_api"]["routes"]["traefik-a/app"]["parents"][0]["served_by"] == {A: ["web"]}
    assert r["gateway_api"]["gateway_classes"]["traefik"]["claimed_by"][0]["controller"] == A


def two_installs(selectors: bool) -> base.ClusterState:
    """traefik#13743: two releases with the Gateway provider; each chart made its own GatewayClass (named apart)."""
    def args(ns: str) -> list[str]:
        extra = ["--providers.kubernetesgateway.labelSelector=app.kubernetes.io/instance=traefik-" + ns] if selectors else []
        return gateway_args(ns, *extra)
    return state({"traefik-a": args("traefik-a"), "traefik-b": args("traefik-b")},
                 gateway_classes=[gateway_class("traefik-a", labels("traefik-a")), gateway_class("traefik-b", labels("traefik-b"))],
                 gateways=[gateway("traefik-a", "traefik-gateway", "traefik-a"), gateway("traefik-b", "traefik-gateway", "traefik-b")],
                 http_routes=[http_route()])


def test_two_installs_both_write_each_gateway_predicted_before_it_flaps() -> None:
    r = d.analyse(two_installs(selectors=False))
    assert not r["passed"]
    claims = r["gateway_api"]["gateway_classes"]
    assert [c["controller"] for c in claims["traefik-a"]["claimed_by"]] == [A, B]
    flaps = findings(r, "gateway_multiple_writers")
    assert [(f["gateway"], f["severity"], f["culprits"]) for f in flaps] == [
        ("traefik-a/traefik-gateway", "error", [B]), ("traefik-b/traefik-gateway", "error", [A])]
    message = flaps[0]["message"]
    assert "%s → [100.64.0.1], %s → [100.64.0.2]" % (A, B) in message and "traefik#13743" in message
    assert message.endswith("%s claims it: the class has controllerName traefik.io/gateway-controller and it sets no "
                            "labelSelector, so it claims every such class" % B)
    assert flaps[0]["fix"]["args"] == [
        "%s: --providers.kubernetesgateway.labelSelector=app.kubernetes.io/instance=traefik-traefik-b, with that label on "
        "its own GatewayClass" % B]
    assert "providers.kubernetesGateway.labelSelector" in flaps[0]["fix"]["chart_values"][0]
    assert "no leader election" in flaps[0]["period"]
    assert r["gateway_api"]["gateways"]["traefik-a/traefik-gateway"]["flapping"] is True


def test_the_label_selector_fix_leaves_one_writer_each() -> None:
    r = d.analyse(two_installs(selectors=True))
    assert r["passed"] and not findings(r, "gateway_multiple_writers")
    writers = {k: [w["controller"] for w in v["writers"]] for k, v in r["gateway_api"]["gateways"].items()}
    assert writers == {"traefik-a/traefik-gateway": [A], "traefik-b/traefik-gateway": [B]}


def test_two_writers_of_one_address_are_said_without_an_error() -> None:
    st = two_installs(selectors=False)
    st.services[1]["status"]["loadBalancer"]["ingress"] = [{"ip": "100.64.0.1"}]
    [flap, _other] = findings(d.analyse(st), "gateway_multiple_writers")
    assert flap["severity"] == "warning" and "the same status" in flap["message"]


def test_a_listener_no_entry_point_serves_and_its_dark_routes() -> None:
    listeners = [{"name": "http", "port": 80, "protocol": "HTTP"}, {"name": "web", "port": 8000, "protocol": "HTTP"}]
    st = healthy()
    st.gateways = [gateway("traefik-a", "traefik-gateway", "traefik", *listeners)]
    st.http_routes = [http_route(name="dark", sectionName="http"), http_route(name="lit")]
    r = d.analyse(st)
    [f] = findings(r, "gateway_listener_port")
    assert f["severity"] == "error" and f["gateway"] == "traefik-a/traefik-gateway" and f["controllers"] == [A]
    assert f["message"].startswith("traefik-a/traefik-gateway listener http (port 80, HTTP): %s: none of its entry points" % A)
    assert "Accepted False, reason PortUnavailable" in f["message"] and f["message"].endswith("routes dark: traefik-a/dark")
    assert r["gateway_api"]["gateways"]["traefik-a/traefik-gateway"]["writers"][0]["listeners"] == {"http": None, "web": "web"}
    assert r["gateway_api"]["routes"]["traefik-a/dark"]["parents"][0]["served_by"] == {A: []}
    # what Traefik writes in each route's status.parents entry (the dark one measured on kind: NotAllowedByListeners)
    assert r["gateway_api"]["routes"]["traefik-a/dark"]["parents"][0]["status_by"] == {
        A: {"accepted": False, "reason": "NotAllowedByListeners"}}
    assert r["gateway_api"]["routes"]["traefik-a/lit"]["parents"][0]["status_by"] == {A: {"accepted": True, "reason": "Accepted"}}


def test_a_route_its_listeners_do_not_allow() -> None:
    st = healthy()
    st.http_routes = [http_route(ns="apps")]  # the chart's listener takes routes from its own namespace only
    r = d.analyse(st)
    [f] = findings(r, "route_not_accepted")
    assert (f["severity"], f["route"], f["gateway"], f["controllers"]) == ("error", "apps/app", "traefik-a/traefik-gateway", [A])
    assert "Accepted False, reason NotAllowedByListeners (web: it allows routes only from its Gateway's namespace traefik-a" \
        in f["message"]
    # allowed from every namespace, it is accepted
    st.gateways[0]["spec"]["listeners"][0]["allowedRoutes"] = {"namespaces": {"from": "All"}}
    assert not findings(d.analyse(st), "route_not_accepted")


def test_a_route_in_a_namespace_its_controller_does_not_watch() -> None:
    st = state({"traefik-a": gateway_args("traefik-a", "--providers.kubernetesgateway.namespaces=traefik-a")},
               gateway_classes=[gateway_class()], http_routes=[http_route(ns="apps")],
               gateways=[gateway("traefik-a", "traefik-gateway", "traefik",
                                 {"name": "web", "port": 8000, "protocol": "HTTP", "allowedRoutes": {"namespaces": {"from": "All"}}})])
    [f] = findings(d.analyse(st), "route_unwatched")
    assert f["route"] == "apps/app" and "watches namespace traefik-a, not apps" in f["message"]


def test_a_missing_status_service_stops_the_sync() -> None:
    st = healthy()
    st.services = []
    r = d.analyse(st)
    [f] = findings(r, "gateway_status_blocked")
    assert f["severity"] == "error" and "the Service does not exist" in f["message"]
    assert "(traefik-a/traefik-gateway) stay Pending with no address" in f["message"]
    assert r["gateway_api"]["gateways"]["traefik-a/traefik-gateway"] == {
        "class": "traefik", "writers": [], "blocked": [A], "flapping": False}
    assert not r["passed"]


def test_no_address_and_no_claimer_are_warnings() -> None:
    st = state({"traefik-a": ["--providers.kubernetesgateway", "--entryPoints.web.address=:8000/tcp"]},
               gateway_classes=[gateway_class(), gateway_class("other", controller="example.com/gateway")],
               gateways=[gateway(), gateway("apps", "elsewhere", "other"), gateway("apps", "classless", "gone")])
    r = d.analyse(st)
    assert r["passed"]
    assert [(f["kind"], f.get("gateway")) for f in findings(r) if f["severity"] == "warning"] == [
        ("gateway_unclaimed", "apps/classless"), ("gateway_unclaimed", "apps/elsewhere"), ("gateway_no_address", "traefik-a/traefik-gateway")]
    assert "its controllerName example.com/gateway is not traefik.io/gateway-controller" in findings(r, "gateway_unclaimed")[1]["message"]
    assert "statusAddress" in findings(r, "gateway_no_address")[0]["fix"]["chart_values"][0]


def test_status_entries_for_a_parent_the_writer_does_not_own() -> None:
    st = healthy()
    route = st.http_routes[0]
    route["status"] = {"parents": [
        {"parentRef": {"name": "traefik-gateway", "namespace": "traefik-a"}, "controllerName": "traefik.io/gateway-controller"},
        {"parentRef": {"name": "traefik-gateway", "namespace": "traefik-a"}, "controllerName": "example.com/gateway"},
        {"parentRef": {"name": "old", "namespace": "traefik-a"}, "controllerName": "traefik.io/gateway-controller"}]}
    found = findings(d.analyse(st), "route_parent_foreign")
    assert [(f["gateway"], f["controllers"]) for f in found] == [("traefik-a/traefik-gateway", []), ("traefik-a/old", [A])]
    assert "written by example.com/gateway, but the Gateway's class traefik belongs to traefik.io/gateway-controller" in found[0]["message"]
    assert "a stale entry nobody removes" in found[1]["message"]


def test_a_route_to_a_gateway_that_does_not_exist() -> None:
    st = healthy()
    st.http_routes = [http_route(parent="traefik-a/nope")]
    [f] = findings(d.analyse(st), "route_parent_missing")
    assert f["severity"] == "warning" and f["gateway"] == "traefik-a/nope"


def test_ingress_findings_are_unchanged_beside_gateway_api() -> None:
    plain = d.analyse(puzzle())
    st = puzzle()
    st.gateway_api = True
    st.gateway_classes = [gateway_class()]
    st.gateways = [gateway()]
    both = d.analyse(st)
    assert both["controllers"] == plain["controllers"] and both["ingresses"] == plain["ingresses"]
    # ingress-nginx implements no Gateway API: the Gateway is nobody's, and the Ingress findings stay as they were
    assert both["findings"][:len(plain["findings"])] == plain["findings"]
    assert [f["kind"] for f in both["findings"][len(plain["findings"]):]] == ["gateway_unclaimed"]
    assert plain["gateway_api"] == {"served": False, "controllers": [], "gateway_classes": {}, "gateways": {}, "routes": {}}


def migrating(route_hostnames: list[str]) -> base.ClusterState:
    """The puzzle's ingress-nginx controllers and Ingress one/test (host app.example) beside a Traefik
    Gateway at 100.64.0.9 whose route has ROUTE_HOSTNAMES."""
    st = puzzle()
    st.ingresses[0]["spec"]["rules"][0]["host"] = "app.example"
    route = http_route()
    route["spec"]["hostnames"] = route_hostnames
    gw = state({"traefik-a": gateway_args("traefik-a")}, ips={"traefik-a": "100.64.0.9"})
    for name in ("workloads", "pods", "services", "namespaces"):
        setattr(st, name, getattr(st, name) + getattr(gw, name))
    st.gateway_api = True
    st.gateway_classes, st.gateways, st.http_routes = [gateway_class()], [gateway()], [route]
    return st


def test_a_host_served_by_an_ingress_and_a_route_names_both_addresses_and_the_cut_over() -> None:
    r = d.analyse(migrating(["app.example"]))
    found = findings(r, "host_on_two_apis")
    # one/test has two writers in the puzzle (one and two): each address it may carry is named
    assert [f["controllers"] for f in found] == [["one/ingress-ingress-nginx-controller", A],
                                                 ["two/ingress-ingress-nginx-controller", A]]
    first = found[0]
    assert first["severity"] == "warning" and first["ingress"] == "one/test" and first["route"] == "traefik-a/app"
    assert first["message"].startswith(
        "app.example is served on two addresses by two APIs: Ingress one/test by one/ingress-ingress-nginx-controller at "
        "[100.64.0.0], and HTTPRoute traefik-a/app (hostnames [app.example]) through Gateway traefik-a/traefik-gateway by "
        "%s at [100.64.0.9]" % A)
    assert first["fix"] == {"cut_over": ["point app.example at [100.64.0.9] (the Gateway traefik-a/traefik-gateway)",
                                         "then delete Ingress one/test, or remove host app.example from it"]}
    # a route without hostnames serves every host, a wildcard covers the host; another host is not the same
    assert len(findings(d.analyse(migrating([])), "host_on_two_apis")) == 2
    assert len(findings(d.analyse(migrating(["*.example"])), "host_on_two_apis")) == 2
    assert findings(d.analyse(migrating(["other.example"])), "host_on_two_apis") == []


def test_the_culprit_rule_is_the_ingresses_one_without_a_writer_in_the_gateways_namespace() -> None:
    """One rule for both (findings.culprits_of): with no writer in the Gateway's own namespace, the writer
    that does not publish its Service's LoadBalancer address (a fixed statusAddress.ip) is the culprit."""
    fixed = [a for a in gateway_args("traefik-b") if ".statusaddress.service." not in a]
    fixed.append("--providers.kubernetesgateway.statusaddress.ip=100.64.9.9")
    st = state({"traefik-a": gateway_args("traefik-a"), "traefik-b": fixed},
               gateway_classes=[gateway_class("traefik-a", labels("traefik-a"))], gateways=[gateway("apps", "shared", "traefik-a")])
    [flap] = findings(d.analyse(st), "gateway_multiple_writers")
    assert (flap["gateway"], flap["culprits"]) == ("apps/shared", [B])
    assert "%s → [100.64.0.1], %s → [100.64.9.9]" % (A, B) in flap["message"]
