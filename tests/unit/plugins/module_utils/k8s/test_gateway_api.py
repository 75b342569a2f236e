"""Gateway API's own rules (k8s/gateway_api.py): a parentRef's listeners, allowedRoutes by
namespace and kind, hostnames, and the Accepted reason a parent gives a route."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import gateway_api as spec

Obj = dict[str, Any]
LABELS = {"apps": {"team": "a", "kubernetes.io/metadata.name": "apps"}, "infra": {"kubernetes.io/metadata.name": "infra"}}


def labels_of(namespace: str) -> dict[str, str] | None:
    return LABELS.get(namespace)


def listener(name: str = "web", port: int = 8000, protocol: str = "HTTP", **extra: Any) -> Obj:
    return dict({"name": name, "port": port, "protocol": protocol}, **extra)


def gateway(*listeners: Obj, ns: str = "infra", name: str = "gw") -> Obj:
    return {"metadata": {"namespace": ns, "name": name}, "spec": {"gatewayClassName": "traefik", "listeners": list(listeners)}}


def route(ns: str = "apps", hostnames: list[str] | None = None, **ref: Any) -> tuple[Obj, Obj]:
    parent = dict({"name": "gw", "namespace": "infra"}, **ref)
    obj = {"metadata": {"namespace": ns, "name": "r"}, "spec": {"parentRefs": [parent], "hostnames": hostnames or []}}
    return obj, parent


def test_a_parent_ref_names_a_gateway_in_the_routes_namespace_unless_it_says_otherwise() -> None:
    assert spec.parent_gateway("apps", {"name": "gw"}) == "apps/gw"
    assert spec.parent_gateway("apps", {"name": "gw", "namespace": "infra", "group": spec.GROUP, "kind": "Gateway"}) == "infra/gw"
    assert spec.parent_gateway("apps", {"name": "svc", "group": "", "kind": "Service"}) is None


@pytest.mark.parametrize("ref, selected", [
    ({}, True), ({"sectionName": "web"}, True), ({"sectionName": "other"}, False),
    ({"port": 8000}, True), ({"port": 80}, False), ({"sectionName": "web", "port": 80}, False),
])
def test_section_name_and_port_must_both_match_where_set(ref: Obj, selected: bool) -> None:
    assert spec.selects_listener(ref, listener()) is selected


def test_allowed_namespaces_same_all_and_selector() -> None:
    same = listener()  # no allowedRoutes: the CRD's default, from: Same
    assert spec.namespace_allowed(same, "infra", "infra", labels_of)[0]
    ok, why = spec.namespace_allowed(same, "infra", "apps", labels_of)
    assert not ok and why == "it allows routes only from its Gateway's namespace infra (from: Same)"
    assert spec.namespace_allowed(listener(allowedRoutes={"namespaces": {"from": "All"}}), "infra", "apps", labels_of)[0]
    by_team = listener(allowedRoutes={"namespaces": {"from": "Selector", "selector": {"matchLabels": {"team": "a"}}}})
    assert spec.namespace_allowed(by_team, "infra", "apps", labels_of) == (True, "namespace apps matches its selector team=a")
    ok, why = spec.namespace_allowed(by_team, "infra", "infra", labels_of)
    assert not ok and why == "it allows routes from namespaces matching team=a, and infra does not match"
    expr = listener(allowedRoutes={"namespaces": {"from": "Selector", "selector": {
        "matchExpressions": [{"key": "team", "operator": "NotIn", "values": ["a"]}]}}})
    assert not spec.namespace_allowed(expr, "infra", "apps", labels_of)[0]
    assert spec.namespace_allowed(expr, "infra", "infra", labels_of)[0]
    # from: Selector without a selector selects nothing (LabelSelectorAsSelector(nil)); an unknown namespace matches nothing.
    assert not spec.namespace_allowed(listener(allowedRoutes={"namespaces": {"from": "Selector"}}), "infra", "apps", labels_of)[0]
    assert "gone does not exist" in spec.namespace_allowed(by_team, "infra", "gone", labels_of)[1]


def test_allowed_kinds_listed_or_by_protocol() -> None:
    assert spec.kind_allowed(listener(), "HTTPRoute")[0] and spec.kind_allowed(listener(protocol="HTTPS"), "GRPCRoute")[0]
    assert spec.kind_allowed(listener(protocol="TLS"), "HTTPRoute") == (False, "its protocol TLS takes TLSRoute, not HTTPRoute")
    grpc_only = listener(allowedRoutes={"kinds": [{"kind": "GRPCRoute"}]})
    assert spec.kind_allowed(grpc_only, "HTTPRoute") == (False, "it allows only the kinds GRPCRoute")
    assert spec.kind_allowed(listener(allowedRoutes={"kinds": [{"group": spec.GROUP, "kind": "HTTPRoute"}]}), "HTTPRoute")[0]
    assert not spec.kind_allowed(listener(allowedRoutes={"kinds": [{"group": "example.com", "kind": "HTTPRoute"}]}), "HTTPRoute")[0]


@pytest.mark.parametrize("listener_host, route_hosts, meet", [
    (None, ["a.example.com"], True), ("a.example.com", [], True), ("a.example.com", ["a.example.com"], True),
    ("*.example.com", ["a.example.com"], True), ("*.example.com", ["a.b.example.com"], True),
    ("*.example.com", ["example.com"], False), ("a.example.com", ["*.example.com"], True),
    ("a.example.com", ["b.example.com"], False), ("*.example.com", ["*.other.org"], False),
])
def test_hostnames_meet_as_the_spec_says(listener_host: str | None, route_hosts: list[str], meet: bool) -> None:
    assert spec.hostnames_meet(listener_host, route_hosts) is meet


def test_attach_gives_the_reason_the_spec_names() -> None:
    gw = gateway(listener(), listener("open", 8001, allowedRoutes={"namespaces": {"from": "All"}}, hostname="a.example.com"))
    r, ref = route()
    att = spec.attach("HTTPRoute", r, ref, gw, labels_of)
    assert (att.accepted, att.reason, att.listeners, att.gateway) == (True, "Accepted", ["open"], "infra/gw")
    r, ref = route(sectionName="web")
    att = spec.attach("HTTPRoute", r, ref, gw, labels_of)
    assert (att.accepted, att.reason) == (False, "NotAllowedByListeners")
    assert att.why == "web: it allows routes only from its Gateway's namespace infra (from: Same)"
    r, ref = route(hostnames=["b.example.com"])
    att = spec.attach("HTTPRoute", r, ref, gw, labels_of)
    assert (att.accepted, att.reason) == (False, "NoMatchingListenerHostname")
    assert att.why.startswith("open: its hostname a.example.com meets none of b.example.com")
    r, ref = route(sectionName="websecure")
    att = spec.attach("HTTPRoute", r, ref, gw, labels_of)
    assert (att.accepted, att.reason, att.why) == (False, "NoMatchingParent", "no listener has name websecure")
    r, ref = route(port=9999)
    assert spec.attach("HTTPRoute", r, ref, gw, labels_of).why == "no listener has port 9999"
    assert spec.attach("HTTPRoute", r, {"name": "gw"}, gateway(), labels_of).why == "it has no listener"
    # a route in the Gateway's own namespace attaches to both
    r, ref = route(ns="infra", hostnames=["a.example.com"])
    assert spec.attach("HTTPRoute", r, ref, gw, labels_of).listeners == ["web", "open"]
