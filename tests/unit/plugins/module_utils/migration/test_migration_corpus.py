from __future__ import annotations

import re

import pytest

from migration_fixtures import ingress

from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import (
    ANY_HOST, CorpusError, generate, regex_hosts, regex_sample, rules, scenario_requests,
)


@pytest.mark.parametrize("pattern", ["/api/v[0-9]+", "/app(/|$)(.*)", "/users/(\\d+)/profile", "/[a-z]+/edit",
                                     "/files/[^/]+\\.txt", "/(foo|bar)/x", "/v\\d{2,3}/a"])
def test_regex_sample_matches_in_full(pattern: str) -> None:
    sample = regex_sample(pattern)
    assert sample.startswith("/")
    assert re.fullmatch(pattern, sample, re.IGNORECASE), (pattern, sample)


def test_a_rule_gets_every_path_variant() -> None:
    reqs = generate([ingress("docs", "d.test", [("/docs/", "Prefix")])])
    by_kind = {r.kind: r.target for r in reqs}
    assert by_kind == {"path": "/docs/", "sub-path": "/docs/kindlab-sub", "slash": "/docs", "case": "/DOCS/",
                       "neighbour": "/docsx", "dot-segment": "/kindlab-sub/../docs/", "double-slash": "//docs/",
                       "query": "/docs/?kindlab=1"}
    assert all(r.host == "d.test" and r.ingress == "shop/docs" and r.rule == "/docs/ (Prefix)" for r in reqs)
    assert len({r.id for r in reqs}) == len(reqs)


def test_regex_paths_get_a_prefix_only_string_and_host_wide_regex() -> None:
    ings = [ingress("api", "q.test", [("/api/v[0-9]+", "ImplementationSpecific")], {"use-regex": "true"}),
            ingress("static", "q.test", [("/static", "Prefix")]),
            ingress("other", "o.test", [("/x", "Prefix")])]
    assert regex_hosts(ings) == {"q.test": ["shop/api"]}
    assert [r.regex for r in rules(ings)] == [True, True, False]
    api = [r for r in generate(ings) if r.ingress == "shop/api"]
    prefix_only = [r for r in api if r.kind == "regex-prefix"][0].target
    assert re.match("/api/v[0-9]+", prefix_only) and not re.fullmatch("/api/v[0-9]+", prefix_only)


def test_annotations_bring_their_requests() -> None:
    ing = ingress("a", None, [("/", "Prefix")], {
        "enable-cors": "true", "proxy-body-size": "8k", "limit-rps": "5", "proxy-read-timeout": "2",
        "app-root": "/home", "default-backend": "fallback", "rewrite-target": "/$1"})
    reqs = generate([ing])
    kinds = {r.kind for r in reqs}
    assert {"preflight", "cors", "body-size", "burst", "slow", "app-root", "rewrite"} <= kinds
    body = [r for r in reqs if r.kind == "body-size"][0]
    assert body.method == "POST" and body.body_size == 8 * 1024 + 1024
    burst = [r for r in reqs if r.kind == "burst"][0]
    assert burst.repeat == 5 * 5 + 5 + 10
    assert [r for r in reqs if r.kind == "slow"][0].target.endswith("delay=4s")
    assert all(r.host == ANY_HOST for r in reqs)


def test_canary_by_header_and_weight() -> None:
    ing = ingress("c", "c.test", [("/", "Prefix")], {"canary": "true", "canary-by-header": "X-Canary", "canary-weight": "50"})
    reqs = generate([ing])
    assert sorted(dict(r.headers)["X-Canary"] for r in reqs if r.kind == "canary-header") == ["always", "never"]
    assert [r.repeat for r in reqs if r.kind == "canary-weight"] == [20]


def test_scenario_requests_must_name_a_rule() -> None:
    ings = [ingress("api", "q.test", [("/api", "Prefix")])]
    added = scenario_requests([{"ingress": "shop/api", "path": "/api/x?y=1", "headers": {"X-A": "1"}}], ings)
    assert added[0].host == "q.test" and added[0].kind == "scenario" and added[0].headers == (("X-A", "1"),)
    with pytest.raises(CorpusError, match=r"requests\[0\]\.ingress: expected an Ingress of the rehearsal \(shop/api\)"):
        scenario_requests([{"ingress": "shop/nope", "path": "/"}], ings)
    with pytest.raises(CorpusError, match=r"requests\[0\]\.path"):
        scenario_requests([{"ingress": "shop/api", "path": "api"}], ings)
    with pytest.raises(CorpusError, match=r"requests\[0\]: expected only the keys"):
        scenario_requests([{"ingress": "shop/api", "path": "/", "verb": "GET"}], ings)


def test_two_hundred_ingresses_generate_fast_enough_to_not_matter() -> None:
    ings = [ingress("i%d" % i, "h%d.test" % (i % 20), [("/p%d" % i, "Prefix"), ("/r%d/[a-z]+" % i, "ImplementationSpecific")],
                    {"use-regex": "true"} if i % 3 == 0 else {}) for i in range(200)]
    reqs = generate(ings)
    assert len(reqs) > 200 * 10
    assert len({r.id for r in reqs}) == len(reqs)


def test_a_tls_host_gets_its_path_over_https_with_sni() -> None:
    ing = ingress("secure", "s.test", [("/pay", "Prefix")])
    ing["spec"]["tls"] = [{"hosts": ["s.test"], "secretName": "secure-tls"}]
    [tls] = [r for r in generate([ing]) if r.kind == "tls"]
    assert (tls.scheme, tls.target, tls.host) == ("https", "/pay", "s.test")
    assert all(r.scheme == "http" for r in generate([ing]) if r.kind != "tls")
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.compare import curl
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.replay import Address
    assert curl(tls, Address("192.0.2.1", 80, 8443)) == (
        "curl -sS -i --path-as-is -X GET -H 'Host: s.test' -k --connect-to s.test:8443:192.0.2.1:8443 https://s.test:8443/pay")


def test_each_request_finds_its_own_rule_by_host_and_path() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import rules_of
    ing = ingress("two-hosts", "a.test", [("/x", "Prefix")])
    ing["spec"]["rules"].append({"host": "b.test", "http": {"paths": [{"path": "/x", "pathType": "Exact"}]}})
    reqs = generate([ing]) + scenario_requests([{"ingress": "shop/two-hosts", "host": "b.test", "path": "/y"}], [ing])
    found = rules_of(reqs, [ing])
    assert all(rule is not None and rule.host == req.host for req, rule in zip(reqs, found))
    assert {rule.path_type for req, rule in zip(reqs, found) if req.host == "b.test"} == {"Exact"}


def test_a_wildcard_host_is_sent_as_names_below_it_and_its_parent_never_literally() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import rules_of

    ings = [ingress("tenants", "*.tenants.example.test", [("/", "Prefix")])]
    reqs = generate(ings)
    assert not any("*" in r.host for r in reqs)
    by_kind = {r.kind: (r.host, r.target) for r in reqs}
    assert by_kind["path"] == ("kindlab-sub.tenants.example.test", "/")
    assert by_kind["wildcard-depth"] == ("a.kindlab-sub.tenants.example.test", "/")
    assert by_kind["wildcard-parent"] == ("tenants.example.test", "/")
    assert {r.served_as for r in reqs} == {"*.tenants.example.test"}
    # each request still names the rule it exercises
    assert all(rule is not None and rule.host == "*.tenants.example.test" for rule in rules_of(reqs, ings))


def test_every_server_alias_is_requested_on_the_rules_paths() -> None:
    ings = [ingress("www", "www.example.test", [("/", "Prefix"), ("/docs", "Prefix")],
                    {"server-alias": "example.test, legacy.example.test"})]
    aliases = sorted((r.host, r.target) for r in generate(ings) if r.kind == "alias")
    assert aliases == [("example.test", "/"), ("example.test", "/docs"), ("legacy.example.test", "/"),
                       ("legacy.example.test", "/docs")]


def test_a_default_backend_is_asked_for_by_an_unknown_host_and_an_unmatched_path_of_each_host() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import DEFAULT_BACKEND, rules_of

    only = {"metadata": {"namespace": "shop", "name": "catch-all", "annotations": {}},
            "spec": {"defaultBackend": {"service": {"name": "fallback", "port": {"number": 80}}}}}
    with_rules = ingress("web", "*.web.test", [("/app", "Prefix")])
    with_rules["spec"]["defaultBackend"] = {"service": {"name": "web", "port": {"number": 80}}}
    reqs = [r for r in generate([only, with_rules]) if r.rule == DEFAULT_BACKEND]
    assert [(r.ingress, r.kind, r.host, r.target) for r in reqs] == [
        ("shop/catch-all", "default-host", "unknown-host.kindlab.test", "/kindlab-unmatched"),
        ("shop/web", "default-host", "unknown-host.kindlab.test", "/kindlab-unmatched"),
        ("shop/web", "default-path", "kindlab-sub.web.test", "/kindlab-unmatched")]
    assert [r.path_type for r in rules_of(reqs, [only, with_rules])] == ["DefaultBackend"] * 3


def test_every_canary_form_gets_its_header_or_cookie() -> None:
    ings = [ingress("canary", "c.test", [("/", "Prefix")],
                    {"canary": "true", "canary-by-header": "X-Canary", "canary-by-header-pattern": "^(beta|gamma)$",
                     "canary-by-cookie": "canary", "canary-weight": "30"})]
    sent = sorted((r.kind, r.headers) for r in generate(ings) if r.kind.startswith("canary"))
    assert sent == [("canary-cookie", (("Cookie", "canary=always"),)), ("canary-cookie", (("Cookie", "canary=never"),)),
                    ("canary-header", (("X-Canary", "always"),)), ("canary-header", (("X-Canary", "beta"),)),
                    ("canary-header", (("X-Canary", "never"),)), ("canary-weight", ())]


def test_a_negative_lookahead_gets_the_path_it_refuses() -> None:
    """PCRE (ingress-nginx) reads (?!...); Go's regexp (Traefik) cannot: the corpus asks for what the lookahead keeps
    out as well as what it lets in."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import regex_excluded

    assert regex_excluded("/(?!internal/).*") == "/internal/seg"
    assert not re.fullmatch("/(?!internal/).*", "/internal/seg") and re.fullmatch("/(?!internal/).*", regex_sample("/(?!internal/).*"))
    assert regex_excluded("/api/v[0-9]+") is None
    reqs = generate([ingress("legacy", "l.test", [("/(?!internal/).*", "ImplementationSpecific")], {"use-regex": "true"})])
    assert {r.kind: r.target for r in reqs}["regex-excluded"] == "/internal/seg"


def test_a_basic_auth_ingress_is_asked_without_credentials_and_with_wrong_ones_and_the_rest_carry_the_right_ones() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import basic_auth

    ings = [ingress("admin", "a.test", [("/admin", "Prefix")], {"auth-type": "basic", "auth-secret": "admins"}),
            ingress("open", "a.test", [("/open", "Prefix")])]
    right = basic_auth("kindlab", "pw")
    assert right == ("Authorization", "Basic a2luZGxhYjpwdw==")  # base64("kindlab:pw")
    reqs = generate(ings, {"shop/admin": ("kindlab", "pw")})
    admin = [r for r in reqs if r.ingress == "shop/admin"]
    by_kind = {r.kind: r for r in admin}
    assert by_kind["auth-missing"].headers == () and by_kind["auth-missing"].target == "/admin"
    assert by_kind["auth-wrong"].headers == (basic_auth("kindlab", "pw-wrong"),)
    assert all(right in r.headers for r in admin if not r.kind.startswith("auth-")) and len(admin) > 3
    assert all(not r.headers for r in reqs if r.ingress == "shop/open")
    # credentials unknown (another cluster's Secret): only the request without them, the others sent as they are
    unknown = [r for r in generate(ings) if r.ingress == "shop/admin"]
    assert [r.kind for r in unknown if r.kind.startswith("auth-")] == ["auth-missing"]
    assert all(not r.headers for r in unknown)
