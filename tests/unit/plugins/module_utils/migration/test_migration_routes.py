"""Which rule of a Gateway's HTTPRoutes takes a request (Gateway API's precedence), and the cause the
rehearsal names with it when a Gateway target answers otherwise than ingress-nginx."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.migration import routes as rt
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Request, Rule

Obj = dict[str, Any]


def route(name: str, hosts: list[str], rules: list[Obj], created: str = "2026-01-01T00:00:00Z") -> Obj:
    return {"metadata": {"namespace": "shop", "name": name, "creationTimestamp": created},
            "spec": {"hostnames": hosts, "rules": rules}}


def rule(path: str, kind: str = "PathPrefix", to: str = "web", **match: Any) -> Obj:
    return {"matches": [dict({"path": {"type": kind, "value": path}}, **match)], "backendRefs": [{"name": to, "port": 80}]}


RULES = rt.route_matches([
    route("api", ["shop.example.test"], [
        rule("/api", to="api"),
        rule("/api/v1/login", "Exact", to="login"),
        rule("/api", to="beta", headers=[{"name": "X-Beta", "value": "1"}]),
        rule("/api", to="post", method="POST"),
        rule("/api", to="v2", queryParams=[{"name": "v", "value": "2"}])]),
    route("any", ["*.example.test"], [rule("/", to="wild")]),
    route("all", [], [rule("/", to="catch-all")], created="2025-01-01T00:00:00Z"),
    route("older", ["shop.example.test"], [rule("/docs", to="old-docs")], created="2025-06-01T00:00:00Z"),
    route("newer", ["shop.example.test"], [rule("/docs", to="new-docs")]),
])


def taken(host: str, target: str, method: str = "GET", headers: tuple[tuple[str, str], ...] = ()) -> str:
    found = rt.choose(RULES, host, target, method, headers)
    return found.backends.split(":")[0] if found else "none"


def test_precedence_is_gateway_apis() -> None:
    assert taken("shop.example.test", "/api/x") == "api"
    assert taken("shop.example.test", "/api/v1/login") == "login"  # Exact before any prefix
    assert taken("shop.example.test", "/api/x", headers=(("x-beta", "1"),)) == "beta"  # names case-insensitive
    assert taken("shop.example.test", "/api/x", method="POST") == "post"  # a method match before headers
    assert taken("shop.example.test", "/api/x?v=2") == "v2"
    assert taken("shop.example.test", "/docs/a") == "old-docs"  # the oldest route of a tie


def test_prefixes_match_whole_elements_and_hosts_most_specific_first() -> None:
    assert taken("shop.example.test", "/apix") == "wild"  # /api does not take /apix; the wildcard host's / does
    assert taken("shop.example.test", "/api") == "api" and taken("shop.example.test", "/api/") == "api"
    assert taken("www.example.test", "/api/x") == "wild"  # a wildcard before a route without hostnames
    assert taken("example.test", "/x") == "catch-all"  # *.example.test needs a label before it
    assert taken("other.test", "/x") == "catch-all"
    assert rt.choose(RULES[:5], "other.test", "/api") is None


def test_a_rule_is_described_with_its_matches_filters_and_backends() -> None:
    [described] = rt.route_matches([route("api", ["a"], [{
        "matches": [{"path": {"type": "PathPrefix", "value": "/api"}, "headers": [{"name": "X-Beta", "value": "1"}]}],
        "filters": [{"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}],
        "backendRefs": [{"name": "api", "port": 8080}]}])])
    assert rt.describe(described) == ("HTTPRoute shop/api rule 0 (PathPrefix /api header X-Beta=1; URLRewrite path prefix → /; "
                                      "to api:8080)")
    [redirect] = rt.route_matches([route("r", [], [{"matches": [{"path": {"type": "Exact", "value": "/old"}}], "filters": [
        {"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 301}}]}])])
    assert rt.describe(redirect) == "HTTPRoute shop/r rule 0 (Exact /old; RequestRedirect scheme https, statusCode 301; to no backend)"


def test_the_cause_names_the_rule_that_takes_the_request_or_that_none_does() -> None:
    req = Request(id="x", ingress="shop/api", host="shop.example.test", target="/api/x", kind="sub-path", rule="/api (Prefix)")
    base = Rule(ingress="shop/api", host="shop.example.test", path="/api", path_type="Prefix", regex=False)
    chosen = rt.choose(RULES, req.host, req.target)
    cause = explain(Context(request=req, rule=base, field="backend", target="own-routes", regex_ingresses=(),
                            gateway_target=True, target_route=chosen))
    assert cause.responsible == "HTTPRoute shop/api rule 0"
    assert cause.text == ("own-routes takes it by HTTPRoute shop/api rule 0 (PathPrefix /api; to api:80); "
                          "ingress-nginx serves it by rule /api (Prefix) of shop/api")
    none = explain(Context(request=req, rule=base, field="status", target="own-routes", regex_ingresses=(),
                           target_served=False, gateway_target=True, target_route=None))
    assert none.text.startswith("no rule of own-routes's HTTPRoutes accepts GET shop.example.test/api/x (Gateway API answers 404)")
    # not a Gateway target: the cause is not this one
    other = explain(Context(request=req, rule=base, field="backend", target="traefik", regex_ingresses=()))
    assert "HTTPRoute" not in other.responsible


def test_the_path_is_matched_as_traefik_cleans_it() -> None:
    assert taken("shop.example.test", "/kindlab-sub/../api/seg") == "api"
    assert taken("shop.example.test", "//api/seg") == "api"
    assert taken("shop.example.test", "/api/./v1/login") == "login"
    assert rt._cleaned("/docs/") == "/docs/" and rt._cleaned("//") == "/" and rt._cleaned("/a//b/../c") == "/a/c"
