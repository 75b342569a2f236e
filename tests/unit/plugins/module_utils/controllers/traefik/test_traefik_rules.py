"""The router Traefik gives a request, read from the routers its API lists."""
from __future__ import annotations

from dataclasses import replace

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Router
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import rules

# As Traefik's ingress-nginx provider names and writes them (seen on kind through /api/http/routers).
ROUTERS = [
    Router("shop-api-rule-0-path-0@kubernetesingressnginx", "Host(`shop.example.test`) && PathRegexp(`(?i)^/api(/|$)(.*)`)"),
    Router("shop-web-rule-0-path-0@kubernetesingressnginx", "Host(`shop.example.test`) && PathPrefix(`/docs`)"),
    Router("shop-web-rule-0-path-1@kubernetesingressnginx", "Host(`shop.example.test`) && Path(`/cart`)", priority=500),
    Router("shop-tenants@kubernetesingressnginx", "HostRegexp(`^[a-z0-9-]+\\.tenants\\.example\\.test$`) || Host(`tenants.example.org`)"),
    Router("shop-canary@kubernetesingressnginx", "Host(`pay.example.test`) && PathPrefix(`/checkout`) && Header(`X-Canary`, `always`)",
           priority=1000),
    Router("shop-checkout@kubernetesingressnginx", "Host(`pay.example.test`) && PathPrefix(`/checkout`)"),
    Router("shop-legacy@kubernetesingressnginx", "Host(`legacy.example.test`) && PathRegexp(`^/(?!internal/).*`)",
           status="disabled", errors=("invalid or unsupported Perl syntax: `(?!`",)),
    Router("shop-web-tls@kubernetesingressnginx", "Host(`shop.example.test`) && PathPrefix(`/docs`)", tls=True),
    Router("default-backend@kubernetesingressnginx", "PathPrefix(`/`)", priority=1),
]


@pytest.mark.parametrize("scheme, host, target, headers, taken", [
    ("http", "shop.example.test", "/api/v1", (), "shop-api-rule-0-path-0"),
    ("http", "SHOP.example.test:80", "/docs/x", (), "shop-web-rule-0-path-0"),
    ("http", "shop.example.test", "/docsx", (), "shop-web-rule-0-path-0"),  # PathPrefix is a plain string prefix
    ("http", "shop.example.test", "/cart", (), "shop-web-rule-0-path-1"),
    ("http", "shop.example.test", "/cart/x", (), "default-backend"),  # Path is exact
    ("http", "shop.example.test", "/x/../docs", (), "shop-web-rule-0-path-0"),  # the sanitised path
    ("http", "a.tenants.example.test", "/", (), "shop-tenants"),
    ("http", "tenants.example.org", "/", (), "shop-tenants"),
    ("http", "pay.example.test", "/checkout", (("X-Canary", "always"),), "shop-canary"),
    ("http", "pay.example.test", "/checkout", (("x-canary", "never"),), "shop-checkout"),
    ("http", "legacy.example.test", "/seg", (), "default-backend"),  # the refused router serves nothing
    ("https", "shop.example.test", "/docs", (), "shop-web-tls"),  # TLS routers serve the HTTPS entry point only
    ("https", "shop.example.test", "/api", (), None),
])
def test_the_highest_priority_router_whose_rule_matches_takes_the_request(scheme: str, host: str, target: str,
                                                                          headers: tuple, taken: str | None) -> None:
    got = rules.take(ROUTERS, scheme, host, target, "GET", headers)
    assert (got.name.split("@")[0] if got else None) == taken


def test_without_a_priority_the_longer_rule_wins_and_describe_says_it() -> None:
    assert rules.priority(ROUTERS[1]) == len(ROUTERS[1].rule)
    assert rules.describe(Router("r@p", "PathPrefix(`/`)", priority=1, service="shop-web-80",
                                 settings=(("middleware", "shop-auth@kubernetesingressnginx"),))) == (
        "router r@p: PathPrefix(`/`) (priority 1) to shop-web-80; middlewares shop-auth@kubernetesingressnginx")


@pytest.mark.parametrize("rule", ["Host(`a`", "Host(`a`) &&", "Nope(`a`)", "PathRegexp(`(`)", "Host(`a`) Host(`b`)"])
def test_a_rule_it_cannot_read_is_refused_and_matches_nothing(rule: str) -> None:
    with pytest.raises(rules.RuleError):
        rules.compile_rule(rule)
    assert rules.take([Router("x", rule)], "http", "a", "/") is None


def test_negation_parentheses_method_and_query() -> None:
    match = rules.compile_rule("(Method(`GET`) || Method(`HEAD`)) && !Query(`debug`) && QueryRegexp(`v`, `^[0-9]+$`)")
    assert match(rules.RequestView("http", "h", "/?v=12", "GET", ()))
    assert not match(rules.RequestView("http", "h", "/?v=12&debug=1", "GET", ()))
    assert not match(rules.RequestView("http", "h", "/?v=x", "HEAD", ()))
    assert not match(rules.RequestView("http", "h", "/?v=1", "POST", ()))


def test_routers_tied_at_one_priority_are_named_since_traefik_s_order_between_them_is_not_defined() -> None:
    tied = [Router("catch-all@gw", "Host(`t.test`) && PathPrefix(`/`)", priority=24, service="catch-all"),
            Router("tenants@gw", "Host(`t.test`) && PathPrefix(`/`)", priority=24, service="tenants"),
            Router("low@gw", "PathPrefix(`/`)", priority=1, service="low")]
    got = rules.take(tied, "http", "t.test", "/")
    assert got is not None and got.name == "catch-all@gw"
    assert rules.describe(got).endswith("; tied at that priority with tenants@gw: which one Traefik tries first is not defined")
    alone = rules.take(tied, "http", "other.test", "/")
    assert alone is not None and "tied" not in rules.describe(alone)


def test_routers_tied_but_sending_to_one_service_through_the_same_middlewares_are_no_risk() -> None:
    # two Ingresses of one host and path to one Service: Traefik's Ingress provider names the service after it alone
    same = (("middleware", "shop-auth@kubernetescrd"),)
    routers = [Router("a@kubernetes", "Host(`t.test`) && PathPrefix(`/`)", priority=24, service="shop-web-80@kubernetes",
                      settings=same),
               Router("b@kubernetes", "Host(`t.test`) && PathPrefix(`/`)", priority=24, service="shop-web-80@kubernetes",
                      settings=same)]
    got = rules.take(routers, "http", "t.test", "/")
    assert got is not None and "tied" not in rules.describe(got)
    # another middleware on one of them: the answer may differ with the router Traefik tries first
    other = [routers[0], replace(routers[1], settings=(("middleware", "shop-other@kubernetescrd"),))]
    got = rules.take(other, "http", "t.test", "/")
    assert got is not None and "tied at that priority with b@kubernetes" in rules.describe(got)


def test_the_dashboard_router_of_the_api_entry_point_takes_no_request_sent_through_the_service() -> None:
    # as Traefik's API lists it when the chart's dashboard is on: PathPrefix(`/`) at the highest priority
    dashboard = Router("dashboard@internal", "PathPrefix(`/`)", priority=9223372036854775805, entry_points=("traefik",))
    shop = Router("shop-web@kubernetes", "Host(`shop.example.test`) && PathPrefix(`/`)", entry_points=("web",))
    got = rules.take([dashboard, shop], "http", "shop.example.test", "/")
    assert got is not None and got.name == "shop-web@kubernetes"
    assert rules.take([dashboard, shop], "http", "other.test", "/") is None
    # a router that also serves another entry point, or whose type names none, is a candidate
    both = Router("both@internal", "PathPrefix(`/`)", priority=9, entry_points=("traefik", "web"))
    assert rules.take([both], "http", "other.test", "/").name == "both@internal"
    assert rules.take([Router("unnamed@p", "PathPrefix(`/`)")], "http", "other.test", "/") is not None
