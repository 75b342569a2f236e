from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.migration.compare import Plane, compare, curl
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Request, generate, regex_hosts
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import rules_of as corpus_rules_of
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.judge import judge, parse_expected
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.replay import Address, Observation, replay
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.summary import verdicts

from migration_fixtures import ingress

BASE = Address("192.0.2.1")
TARGET = Address("192.0.2.2")
INGS = [ingress("api", "q.test", [("/api/v[0-9]+", "ImplementationSpecific")], {"use-regex": "true"}),
        ingress("docs", "d.test", [("/docs/", "Prefix")])]


def nginx_like(address: Address, req: Request) -> Observation:
    """A fake baseline: regex case-insensitive prefix for api, 301 for /docs, X-Scheme on every answer, a random id."""
    import random
    import re
    path = req.target.split("?")[0]
    received = {"Host": req.host, "X-Scheme": "http", "X-Request-Id": str(random.random())}
    if req.host == "q.test" and re.match(r"/api/v[0-9]+", path, re.I):
        return Observation(status=200, backend="shop/api", pod="api-1", path=req.target, received=received)
    if req.host == "d.test" and path == "/docs":
        return Observation(status=301, location="http://d.test/docs/")
    if req.host == "d.test" and path.startswith("/docs/"):
        return Observation(status=200, backend="shop/docs", pod="docs-1", path=req.target, received=received)
    return Observation(status=404)


def traefik_like(address: Address, req: Request) -> Observation:
    import re
    path = req.target.split("?")[0]
    received = {"Host": req.host}
    if req.host == "q.test" and re.fullmatch(r"/api/v[0-9]+", path):
        return Observation(status=200, backend="shop/api", pod="api-2", path=req.target, received=received)
    if req.host == "d.test" and (path == "/docs" or path.startswith("/docs/")):
        return Observation(status=200, backend="shop/docs", pod="docs-1", path=req.target, received=received)
    return Observation(status=404)


def run(expected: list | None = None) -> tuple[dict, dict]:
    corpus = generate(INGS)
    rules_of = corpus_rules_of(corpus, INGS)
    assert [r.ingress if r else None for r in rules_of] == [q.ingress for q in corpus]

    def sender(address: Address, req: Request) -> Observation:
        return (nginx_like if address == BASE else traefik_like)(address, req)

    answers = replay([("nginx", BASE, 2), ("traefik", TARGET, 1)], corpus, sender=sender)
    comparison = compare(corpus, rules_of, answers, Plane("nginx", BASE), [Plane("traefik", TARGET)], regex_hosts(INGS), {})
    return comparison, judge(comparison, parse_expected(expected or []))


def rows_by(comparison: dict) -> dict[tuple[str, str], dict]:
    return {(r["ingress"], r["kind"]): r for r in comparison["targets"]["traefik"]["rows"]}


def test_each_quirk_is_a_difference_with_its_cause() -> None:
    comparison, _verdict = run()
    rows = rows_by(comparison)
    case = rows[("shop/api", "case")]
    assert case["outcome"] == "differ"
    assert {d["field"]: d["cause"] for d in case["differences"]}["status"].startswith(
        "ingress-nginx matches regex paths case-insensitively")
    prefix = rows[("shop/api", "regex-prefix")]
    assert "anchors a regex path only at its start" in prefix["differences"][0]["cause"]
    slash = rows[("shop/docs", "slash")]
    assert slash["outcome"] == "differ"
    assert {d["field"] for d in slash["differences"]} == {"status", "location", "backend", "path"}
    assert all("301" in d["cause"] for d in slash["differences"])
    assert rows[("shop/api", "path")]["outcome"] == "same"  # pods differ, and are not compared


def test_noise_neither_and_everywhere() -> None:
    comparison, _verdict = run()
    body = comparison["targets"]["traefik"]
    rows = rows_by(comparison)
    # X-Request-Id differs between the baseline's own two answers: noise, never a difference
    assert all(d["field"] != "received.X-Request-Id" for r in body["rows"] for d in r["differences"])
    assert "received.X-Request-Id" in rows[("shop/api", "path")]["noise"]
    # X-Scheme: in every request both served, reported once
    assert [e["field"] for e in body["everywhere"]] == ["received.X-Scheme"]
    assert "ingress-nginx sets X-Scheme" in body["everywhere"][0]["cause"]
    # 404 on both for a request no rule serves: served by neither, not "same"
    assert rows[("shop/docs", "neighbour")]["outcome"] == "neither"
    assert sum(body["counts"].values()) == comparison["requests"]


def test_judge_expected_and_unexpected() -> None:
    _comparison, verdict = run()
    assert not verdict["passed"] and verdict["unexpected"] and not verdict["unseen"]
    comparison, verdict = run([{"ingress": "^shop/api$"}, {"ingress": "^shop/docs$", "kind": "^slash$"},
                               {"kind": "^everywhere$", "field": "X-Scheme"}])
    assert verdict["unexpected"] == [] or all(d["ingress"] == "shop/docs" for d in verdict["unexpected"])
    _comparison, verdict = run([{"ingress": "shop/nothing"}])
    assert verdict["unseen"] == [{"ingress": "shop/nothing"}] and not verdict["passed"]


def test_a_baseline_that_serves_nothing_fails() -> None:
    corpus = generate(INGS)
    answers = replay([("nginx", BASE, 2), ("traefik", TARGET, 1)], corpus, sender=lambda a, r: Observation(status=404))
    comparison = compare(corpus, [None] * len(corpus), answers, Plane("nginx", BASE), [Plane("traefik", TARGET)], {}, {})
    verdict = judge(comparison, [])
    assert verdict["baseline_idle"] and not verdict["passed"]
    assert comparison["targets"]["traefik"]["counts"]["neither"] == len(corpus)
    result = {"verdict": verdict, "comparison": comparison}
    base = [v for v in verdicts(result) if v[0].startswith("baseline")][0]
    assert base[2] == "served 0 of %d requests" % len(corpus) and base[3] is False


def test_not_faithful_requests_are_not_compared() -> None:
    corpus = generate(INGS)
    answers = replay([("nginx", BASE, 2), ("traefik", TARGET, 1)], corpus,
                     sender=lambda a, r: (nginx_like if a == BASE else traefik_like)(a, r))
    unfaithful = {0: "load-balance: EWMA's locking is a no-op stand-in here"}
    comparison = compare(corpus, [None] * len(corpus), answers, Plane("nginx", BASE), [Plane("traefik", TARGET)], {}, unfaithful)
    row = comparison["targets"]["traefik"]["rows"][0]
    assert row["outcome"] == "not_faithful" and row["differences"] == [] and row["reason"] == unfaithful[0]


def test_curl_reproduces_the_request_raw() -> None:
    req = Request(id="x", ingress="shop/a", host="a.test", target="/kindlab-sub/../a?x=1", kind="dot-segment", rule="/a",
                  method="POST", headers=(("Origin", "https://o"),), body_size=10)
    line = curl(req, BASE)
    assert line.startswith("curl -sS -i --path-as-is -X POST -H 'Host: a.test' -H 'Origin: https://o'")
    assert "http://192.0.2.1:80/kindlab-sub/../a?x=1" in line and "head -c 10 /dev/zero" in line


def test_same_expectations_need_a_request_both_served_with_that_answer() -> None:
    comparison, _verdict = run()
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.judge import SAME_KEYS
    same = parse_expected([{"ingress": "^shop/docs$", "kind": "^path$", "answer": "^200 shop/docs$"},
                           {"ingress": "^shop/docs$", "kind": "^neighbour$"}], "same", SAME_KEYS)
    verdict = judge(comparison, [{"ingress": "."}, {"kind": "everywhere"}], same)
    # /docsx is 404 on both: served by neither, so it cannot count as "the same"
    assert verdict["unseen_same"] == [{"ingress": "^shop/docs$", "kind": "^neighbour$"}] and not verdict["passed"]


def test_causes_from_what_the_target_did() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule

    def req(kind: str, target: str, rule: str) -> Request:
        return Request(id=kind, ingress="shop/a", host="h", target=target, kind=kind, rule=rule)
    plain = Rule("shop/a", "h", "/shop", "Prefix", regex=False)
    cause = explain(Context(req("neighbour", "/shopx", "/shop (Prefix)"), plain, "status", "t", (),
                            baseline_served=False, target_served=True))
    assert "by path element" in cause.text and "string prefix" in cause.text
    regex = Rule("shop/a", "h", "/api/v[0-9]+", "ImplementationSpecific", regex=True, annotations={"use-regex": "true"})
    cause = explain(Context(req("path", "/api/v0", "/api/v[0-9]+ (ImplementationSpecific)"), regex, "status", "t",
                            ("shop/a",), baseline_served=True, target_served=False, target_serves_rule=False))
    assert cause.responsible == "nginx.ingress.kubernetes.io/use-regex" and "reads the path literally" in cause.text
    # read literally, the request falls to a default backend on the target (Traefik's own provider): the regex is the
    # cause, not the default backend; a Gateway target or a baseline answering from a default backend is not this case
    rewrite = Rule("shop/a", "h", "/api(/|$)(.*)", "ImplementationSpecific", regex=True, annotations={"rewrite-target": "/$2"})
    fell = Context(req("tls", "/api/seg", "/api(/|$)(.*) (ImplementationSpecific)"), rewrite, "backend", "t", ("shop/a",),
                   baseline_backend="shop/api", target_backend="shop/fallback",
                   default_backends=(("shop/fallback", "shop/catch-all"),))
    cause = explain(fell)
    assert cause.responsible == "nginx.ingress.kubernetes.io/rewrite-target" and "falls to the defaultBackend of shop/catch-all" \
        in cause.text
    from dataclasses import replace
    assert explain(replace(fell, gateway_target=True)).responsible == "spec.defaultBackend of shop/catch-all"
    assert explain(replace(fell, rule=plain)).responsible == "spec.defaultBackend of shop/catch-all"
    snippet = Rule("shop/a", "h", "/s", "Prefix", regex=False, annotations={"configuration-snippet": 'more_set_headers "X: 1";'})
    cause = explain(Context(req("path", "/s", "/s (Prefix)"), snippet, "backend", "t", (), target_served=False))
    assert "does not serve this Ingress at all" in cause.text
    cause = explain(Context(req("dot-segment", "/x/../shop", "/shop (Prefix)"), plain, "status", "t", ()))
    assert "passes it on as the client sent it" in cause.text
    cause = explain(Context(req("query", "/shop?x", "/shop (Prefix)"), plain, "header.x-odd", "t", ()))
    assert cause.text.startswith("unexplained: a query string (/shop?x) differs in header.x-odd")


def test_an_ingress_a_capture_could_not_rebuild_whole_is_not_compared() -> None:
    import copy
    import json

    from ansible_collections.kindlab.ingress.plugins.module_utils.capture.stand_ins import NOT_REBUILT_ANNOTATION
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.ingress_migration import not_compared

    ings = copy.deepcopy(INGS)
    ings[0]["metadata"].setdefault("annotations", {})[NOT_REBUILT_ANNOTATION] = json.dumps(
        ["annotation nginx.ingress.kubernetes.io/auth-url stays in the cluster (credentials or code)"])
    corpus = generate(ings)
    rules = corpus_rules_of(corpus, ings)
    gaps = {"nginx.ingress.kubernetes.io/use-regex": "a stand-in gap"}
    out = not_compared(corpus, rules, ings, gaps)
    first = "%s/%s" % (ings[0]["metadata"]["namespace"], ings[0]["metadata"]["name"])
    mine = [i for i, r in enumerate(corpus) if r.ingress == first]
    assert mine and all("not rebuilt from the capture, not compared: annotation nginx.ingress.kubernetes.io/auth-url"
                        in out[i] for i in mine)
    # the other Ingresses' requests stay compared unless their own rule hits a gap
    assert all(i in mine or "not rebuilt" not in out.get(i, "") for i in range(len(corpus)))
    assert not_compared(corpus, rules, INGS, {}) == {}


def test_spec_tls_is_read_per_host_as_ingress_nginx_does() -> None:
    """As seen on kind (tests/kind/team): shop.example.test's server gets api's certificate (a rule and spec.tls
    for it), so ingress-nginx redirects web's paths there too; www.example.test is only listed by api's spec.tls
    (no rule for it there), so ingress-nginx serves it over HTTP while the Gateway translation redirects it."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import HostTLS, tls_hosts

    api = ingress("api", "shop.example.test", [("/api", "Prefix")])
    api["spec"]["tls"] = [{"hosts": ["shop.example.test", "www.example.test"], "secretName": "shop-cert"}]
    web = ingress("web", "shop.example.test", [("/docs/", "Prefix")])
    web["spec"]["rules"].append({"host": "www.example.test", "http": {"paths": [
        {"path": "/admin", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}})
    hosts = tls_hosts([api, web])
    assert hosts == {"shop.example.test": HostTLS(("shop/api",), ("shop/api",)), "www.example.test": HostTLS((), ("shop/api",))}
    corpus = generate([api, web])
    rules = corpus_rules_of(corpus, [api, web])
    docs = next(i for i, r in enumerate(corpus) if r.ingress == "shop/web" and r.target == "/docs/" and r.kind == "path")
    admin = next(i for i, r in enumerate(corpus) if r.ingress == "shop/web" and r.target == "/admin" and r.kind == "path")

    def cause(i: int, field: str = "status") -> str:
        return explain(Context(request=corpus[i], rule=rules[i], field=field, target="gateway-api", regex_ingresses=(),
                               tls=hosts.get(corpus[i].host, HostTLS()), target_redirected=True)).text

    assert cause(docs).startswith("ingress-nginx redirects every plain HTTP request for shop.example.test to HTTPS")
    assert "shop/api gives the host's server its certificate" in cause(docs, "location")
    assert cause(admin).startswith("ingress-nginx serves www.example.test over plain HTTP without a redirect: spec.tls of "
                                   "shop/api lists it, but no Ingress has both a rule and spec.tls for it")
    # without the host facts, neither applies
    assert "spec.tls" not in explain(Context(request=corpus[admin], rule=rules[admin], field="status", target="t",
                                             regex_ingresses=())).text


def test_a_host_only_listed_in_spec_tls_explains_only_a_redirect() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import HostTLS

    web = ingress("web", "www.example.test", [("/admin", "Prefix")])
    corpus = generate([web])
    rules = corpus_rules_of(corpus, [web])
    i = next(i for i, r in enumerate(corpus) if r.kind == "double-slash")
    listed = HostTLS((), ("shop/api",))
    # both answered 200, only the path the backend saw differs (Traefik sanitises //): not the TLS listing's doing
    text = explain(Context(request=corpus[i], rule=rules[i], field="path", target="t", regex_ingresses=(), tls=listed,
                           status_differs=False)).text
    assert "spec.tls" not in text and "repeated slashes" in text
    status = explain(Context(request=corpus[i], rule=rules[i], field="status", target="t", regex_ingresses=(), tls=listed,
                             target_redirected=True))
    assert "spec.tls of shop/api lists it" in status.text
    # a target that answers otherwise without redirecting (a team's own routes, say): not the listing's doing either
    other = explain(Context(request=corpus[i], rule=rules[i], field="status", target="t", regex_ingresses=(), tls=listed))
    assert "spec.tls" not in other.text


def test_a_rule_the_target_has_no_route_for_says_so_when_nothing_else_does() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain

    plain = ingress("plain", "p.test", [("/api", "Prefix")])
    corpus = generate([plain])
    rules = corpus_rules_of(corpus, [plain])
    i = next(i for i, r in enumerate(corpus) if r.kind == "path")
    ctx = dict(request=corpus[i], rule=rules[i], field="backend", target="traefik-ingress-provider", regex_ingresses=())
    assert explain(Context(**ctx, target_served=False, target_serves_rule=False)).text.startswith(
        "traefik-ingress-provider has no route for this rule (its own path /api gets no backend there either")
    assert explain(Context(**ctx, target_served=False, target_serves_rule=True)).text.startswith("unexplained")


def test_a_slash_added_to_an_exact_path_in_regex_mode_is_a_longer_path() -> None:
    # seen on kind (benchmarks/rehearse_bench.py): use-regex turns Exact /login into ~* ^/login, which serves /login/
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain

    ing = ingress("app", "r.test", [("/api/v[0-9]+", "ImplementationSpecific"), ("/login", "Exact")], {"use-regex": "true"})
    corpus = generate([ing])
    rules = corpus_rules_of(corpus, [ing])
    i = next(i for i, r in enumerate(corpus) if r.kind == "slash" and r.target == "/login/")
    text = explain(Context(request=corpus[i], rule=rules[i], field="status", target="t", regex_ingresses=("shop/app",),
                           target_served=False)).text
    assert text.startswith("ingress-nginx anchors a regex path only at its start (location ~* ^/login)")


def test_an_answer_the_stand_in_gives_itself_is_never_the_same() -> None:
    """echo-basic answers its own /health with OK: a team's /health route has no backend known on either side."""
    import http.client
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.replay import send

    class Health(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"OK")

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Health)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        corpus = generate([ingress("ops", "o.test", [("/health", "Exact")])])[:1]
        address = Address("127.0.0.1", server.server_address[1])
        answers = replay([("nginx", address, 2), ("traefik", address, 1)], corpus, sender=send)
    finally:
        server.shutdown()
    assert answers["traefik"][0][0].stand_in and answers["traefik"][0][0].status == http.client.OK
    comparison = compare(corpus, [None], answers, Plane("nginx", address), [Plane("traefik", address)], {}, {})
    row = comparison["targets"]["traefik"]["rows"][0]
    assert row["outcome"] == "not_faithful" and row["reason"].startswith(
        "the backend stand-in answered by itself (echo-basic's own /health), not echoing")


def test_an_answer_from_a_default_backends_service_is_put_down_to_that_default_backend() -> None:
    """Traefik's ingress-nginx provider serves a rule-less Ingress's defaultBackend for every host's unmatched paths
    (its router default-backend@kubernetesingressnginx, PathPrefix("/") at the lowest priority, seen on kind);
    ingress-nginx answers 404 there. The cause comes from which Service answered, not from the rule."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule

    admin = Request(id="x", ingress="shop/web", host="www.example.test", target="/ADMIN", kind="case", rule="/admin (Prefix)")
    rule = Rule("shop/web", "www.example.test", "/admin", "Prefix", regex=False)
    defaults = (("shop/fallback", "shop/catch-all"),)
    cause = explain(Context(admin, rule, "status", "traefik-nginx-provider", (), baseline_served=False, target_served=True,
                            target_backend="shop/fallback", default_backends=defaults))
    assert cause.responsible == "spec.defaultBackend of shop/catch-all"
    assert cause.text.startswith("traefik-nginx-provider answers from the defaultBackend of shop/catch-all (Service "
                                 "shop/fallback), where ingress-nginx serves no rule")
    cause = explain(Context(admin, rule, "backend", "gateway-api", (), baseline_backend="shop/fallback",
                            default_backends=defaults, target_served=False))
    assert cause.text == ("ingress-nginx answers from the defaultBackend of shop/catch-all (Service shop/fallback); "
                          "gateway-api does not use it here")
    # the same Service on both sides, or no default backend's: another entry, or unexplained
    same = explain(Context(admin, rule, "path", "t", (), baseline_backend="shop/fallback", target_backend="shop/fallback",
                           default_backends=defaults))
    assert not same.responsible.startswith("spec.defaultBackend")


def test_a_router_the_target_refused_names_the_targets_own_error() -> None:
    """Go's regexp cannot compile a lookahead: Traefik disables the router and says why; the cause is its words."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Router
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule

    rule = Rule("shop/legacy", "legacy.example.test", "/(?!internal/).*", "ImplementationSpecific", regex=True,
                annotations={"use-regex": "true"})
    req = Request(id="x", ingress="shop/legacy", host="legacy.example.test", target="/seg", kind="path",
                  rule="/(?!internal/).* (ImplementationSpecific)")
    refused = (Router("shop-legacy-rule-0-path-0@kubernetesingressnginx",
                      'Host("legacy.example.test") && PathRegexp("(?i)^/(?!internal/).*")', 70, "disabled",
                      ("error parsing regexp: invalid or unsupported Perl syntax: `(?!`",)),)
    cause = explain(Context(req, rule, "status", "traefik-nginx-provider", ("shop/legacy",), target_served=False,
                            target_serves_rule=False, refused_routers=refused))
    assert cause.responsible == "traefik-nginx-provider router shop-legacy-rule-0-path-0@kubernetesingressnginx"
    assert "(its own account, /api/http/routers: disabled rule" in cause.text
    assert cause.text.endswith("error parsing regexp: invalid or unsupported Perl syntax: `(?!`; the request falls to "
                               "its other routers")
    # a refused router of another host says nothing of this request
    other = Request(id="y", ingress="shop/web", host="www.example.test", target="/seg", kind="path", rule="/ (Prefix)")
    assert not explain(Context(other, Rule("shop/web", "www.example.test", "/", "Prefix", regex=False), "status", "t", (),
                               refused_routers=refused)).responsible.startswith("t router")


def test_a_host_none_of_the_targets_routers_names_is_said_from_its_own_account() -> None:
    """ingress2gateway dropped the server-alias host: the gateway target 404s, and none of the routers Traefik says
    it built names the host (seen on kind); a catch-all router without a host, or a HostRegexp, routes it or may."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Router
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, _names_host, explain
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule

    assert _names_host('Host("shop.example.test") && PathPrefix("/")', "shop.example.test") is True
    assert _names_host('(Host("*.tenants.example.test") || Host(`tenants.example.org`)) && PathPrefix("/")',
                       "kindlab-sub.tenants.example.test") is True
    assert _names_host('Host("shop.example.test")', "tenants.example.org") is False
    assert _names_host('PathPrefix("/")', "tenants.example.org") is True
    # as Traefik's Gateway provider writes a wildcard hostname (seen on kind): a regex, which matches deeper names too
    wildcard = 'HostRegexp("^[a-z0-9-\\\\.]+\\\\.tenants\\\\.example\\\\.test$") && PathPrefix("/")'
    assert _names_host(wildcard, "a.kindlab-sub.tenants.example.test") is True
    assert _names_host(wildcard, "tenants.example.test") is False
    assert _names_host('HostRegexp("^(?P<x[$")', "tenants.example.org") is None
    req = Request(id="x", ingress="shop/tenants", host="tenants.example.org", target="/", kind="alias", rule="/ (Prefix)",
                  served_as="*.tenants.example.test")
    rule = Rule("shop/tenants", "*.tenants.example.test", "/", "Prefix", regex=False, annotations={"server-alias": "tenants.example.org"})
    built = (Router("httproute-shop-tenants-gw@kubernetesgateway", 'Host("kindlab.tenants.example.test") && PathPrefix("/")'),
             Router("ping@internal", 'PathPrefix("/ping")'))
    cause = explain(Context(req, rule, "status", "gateway-api", (), target_served=False, routers=built))
    assert cause.responsible == "gateway-api's routers"
    assert cause.text == ("gateway-api built no router for host tenants.example.org (its own account, /api/http/routers: "
                          "none of its routers that could take the request names it), where ingress-nginx serves it by rule / (Prefix) of shop/tenants")
    catch_all = built + (Router("default-backend@kubernetesingressnginx", 'PathPrefix("/")', -2147483648),)
    assert explain(Context(req, rule, "status", "t", (), target_served=False, routers=catch_all)).responsible != "t's routers"


def test_a_plain_http_router_for_the_host_does_not_route_its_https_requests() -> None:
    """Traefik takes a TLS connection only with a router that has TLS (the HTTPS entry point's, by applyModel) and a
    plain one only with a router without: a redirect route made for the host's plain HTTP, on the web entry point, leaves
    its HTTPS requests with no router (seen on kind: own-routes' hosts behind basic auth, said settled by the redirect
    fix); a router whose type names no entry points (ingress-nginx's servers) takes either."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Router
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import NO_ROUTER_FOR_HOST, Context, explain
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule

    rule = Rule("shop/ops", "ops.example.test", "/", "Prefix", regex=False, annotations={})
    redirect = Router("httproute-shop-kindlab-https-redirect-ops-example-test-gw-ep-web-0@kubernetesgateway",
                      'Host(`ops.example.test`) && PathPrefix(`/`)', entry_points=("web",))
    other = Router("httproute-shop-web-gw-ep-websecure-0@kubernetesgateway", 'Host(`shop.example.test`) && PathPrefix(`/`)',
                   tls=True, entry_points=("websecure",))
    for scheme, lost in (("https", True), ("http", False)):
        req = Request(id=scheme, ingress="shop/ops", host="ops.example.test", target="/", kind="path", rule="/ (Prefix)",
                      scheme=scheme)
        cause = explain(Context(req, rule, "status", "own-routes", (), target_served=False, routers=(redirect, other)))
        assert (cause.responsible == "own-routes's routers") is lost, (scheme, cause)
        assert (cause.kind == NO_ROUTER_FOR_HOST) is lost  # what the tables of fixes know it by
    assert Router("ops", 'Host(`ops.example.test`)').takes("https") and Router("ops", "x", tls=True).takes("http")
    assert not other.takes("http") and not redirect.takes("https") and redirect.takes("http") and other.takes("https")


def test_basic_auth_a_target_does_not_ask_for_is_named_by_its_annotation() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain, unexplained
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule

    rule = Rule("shop/admin", "a.test", "/admin", "Prefix", regex=False, annotations={"auth-type": "basic", "auth-secret": "admins"})
    for kind in ("auth-missing", "auth-wrong"):
        request = Request(id=kind, ingress="shop/admin", host="a.test", target="/admin", kind=kind, rule="/admin (Prefix)")
        cause = explain(Context(request, rule, "status", "gateway-api", ()))
        assert cause.responsible == "nginx.ingress.kubernetes.io/auth-type" and "401" in cause.text, cause
        assert not unexplained(cause)


def test_each_difference_names_what_took_it_on_each_side_from_their_own_accounts() -> None:
    """The baseline's location and the target's router that took a request, read from what each built: a location
    rendered from another Ingress (a canary's) is the cause; what nothing explains shows both records."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Router
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import controller_type

    nginx_reader = controller_type("ingress_nginx").dataplane
    traefik_reader = controller_type("traefik").dataplane
    locations = (Router("server d.test location /docs/", "/docs/", 1, service="shop/docs-canary:80", hosts=("d.test",),
                        ingress="shop/docs-canary",
                        settings=(("proxy_set_header Host", "$best_http_host"), ("proxy_pass", "http://upstream_balancer"))),
                 Router("server q.test location ~* ^/api/v[0-9]+", '~* ^/api/v[0-9]+', 2, service="shop/api:80",
                        hosts=("q.test",), ingress="shop/api"),
                 Router("server _ location /", "/", 3, hosts=("_",)))
    routers = (Router("docs@kubernetesingressnginx", "Host(`d.test`) && PathPrefix(`/docs/`)", service="shop-docs-80"),
               Router("api@kubernetesingressnginx", "Host(`q.test`) && PathRegexp(`^/api/v[0-9]+$`)", service="shop-api-80"))
    corpus = generate(INGS)
    rules_of = corpus_rules_of(corpus, INGS)

    def sender(address: Address, req: Request) -> Observation:
        return (nginx_like if address == BASE else traefik_like)(address, req)

    answers = replay([("nginx", BASE, 2), ("traefik", TARGET, 1)], corpus, sender=sender)
    comparison = compare(corpus, rules_of, answers, Plane("nginx", BASE, None, locations, nginx_reader),
                         [Plane("traefik", TARGET, None, routers, traefik_reader)], regex_hosts(INGS), {})
    rows = rows_by(comparison)
    slash = rows[("shop/docs", "slash")]  # /docs: 301 on nginx, 200 on Traefik
    assert slash["records"] == {
        "nginx": "location /docs/ of server d.test; from Ingress shop/docs-canary to shop/docs-canary:80; "
                 "proxy_set_header Host $best_http_host",
        "traefik": "none of its routes"}
    status = next(d for d in slash["differences"] if d["field"] == "status")
    assert status["responsible"] == "location of Ingress shop/docs-canary"
    assert "rendered from Ingress shop/docs-canary, not from shop/docs" in status["cause"]
    case = rows[("shop/api", "case")]  # /API/V0: served by nginx (~*), 404 on Traefik
    assert case["records"]["traefik"] == "none of its routes"
    assert case["records"]["nginx"].startswith("location ~* ^/api/v[0-9]+ of server q.test; from Ingress shop/api")
    # a difference no entry explains says what took it on both sides
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain
    request = Request(id="x", ingress="shop/api", host="q.test", target="/api/v1", kind="query", rule="/api/v[0-9]+ (x)")
    said = explain(Context(request, None, "header.x-odd", "traefik", (), records=(("nginx", "A"), ("traefik", "B"))))
    assert said.text.endswith("; nginx took it by A; traefik took it by B")


def test_credentials_ingress_nginx_keeps_from_the_backend_and_a_canary_s_own_location_are_read_from_the_records() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Router
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule

    location = Router("server o.test location /", "/", 1, service="shop/web:http", hosts=("o.test",), ingress="shop/ops",
                      settings=(("auth_basic", "Ops only"), ("proxy_set_header Authorization", "")))
    request = Request(id="t", ingress="shop/ops", host="o.test", target="/", kind="tls", rule="/ (Prefix)", scheme="https")
    cause = explain(Context(request, Rule("shop/ops", "o.test", "/", "Prefix", False), "received.Authorization", "t", (),
                            baseline_record=location))
    assert cause.responsible == "nginx.ingress.kubernetes.io/auth-type"
    assert 'proxy_set_header Authorization "" in the location that took it' in cause.text
    # a canary's request is always taken by its main Ingress's location: that says nothing
    canary = Rule("shop/c", "p.test", "/checkout", "Prefix", False, annotations={"canary": "true", "canary-by-cookie": "c"})
    main = Router("server p.test location = /checkout", "= /checkout", 1, hosts=("p.test",), ingress="shop/checkout")
    request = Request(id="c", ingress="shop/c", host="p.test", target="/checkout", kind="canary-cookie", rule="/checkout (Prefix)")
    assert explain(Context(request, canary, "backend", "t", (), baseline_record=main)).responsible == (
        "nginx.ingress.kubernetes.io/canary-by-cookie")


def test_a_ci_gate_accepts_the_allowed_behaviours_fails_on_the_others_and_writes_a_junit_case_per_behaviour() -> None:
    """allowed: differences accepted without having to be seen; junit.xml: one case per behaviour, failing under the
    gate when none of its differences is allowed."""
    import xml.etree.ElementTree as ET

    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.summary import behaviours, junit_xml

    comparison, everything = run()
    allowed = parse_expected([{"ingress": "^shop/api$"}, {"ingress": "^shop/nowhere$"}], "allowed")
    verdict = judge(comparison, [], [], allowed)
    assert verdict["unexpected"] and all(d["ingress"] != "shop/api" for d in verdict["unexpected"])
    assert verdict["unseen"] == []  # an allowance no difference matches is fine
    assert len(everything["unexpected"]) > len(verdict["unexpected"])
    result = {"comparison": comparison, "verdict": verdict}
    found = behaviours(result)["traefik"]
    assert {b["accepted"] for b in found} == {True, False}
    suite = ET.fromstring(junit_xml(result, gate=True))
    cases = suite.findall("testcase")
    assert len(cases) == len(found) and int(suite.get("failures")) == sum(1 for b in found if not b["accepted"])
    failed = [c for c in cases if c.find("failure") is not None]
    assert all("shop/api" not in (c.findtext("system-out") or "").split(";")[0] for c in failed)
    assert all(c.find("failure") is None for c in ET.fromstring(junit_xml(result, gate=False)).findall("testcase"))


def test_an_answer_from_a_canary_ingress_nginxs_account_names_is_put_down_to_what_chose_it() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Canary, Router
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule
    location = Router("server pay location /checkout", "/checkout", service="shop/checkout:80", ingress="shop/checkout",
                      canaries=(Canary("shop-checkout-canary-http", "http", header="X-Canary", cookie="canary", weight=100),))
    rule = Rule("shop/checkout", "pay.example.test", "/checkout", "Prefix", regex=False)

    def cause(headers=(), baseline="shop/checkout-canary"):
        request = Request(id="r", ingress="shop/checkout", host="pay.example.test", target="/checkout", kind="path",
                          rule="/checkout (Prefix)", headers=headers)
        return explain(Context(request, rule, "backend", "t", (), baseline_backend=baseline, target_backend="shop/checkout",
                               baseline_record=location))
    weight = cause()
    assert weight.responsible == "nginx.ingress.kubernetes.io/canary-weight"
    assert "canary shop/checkout-canary" in weight.text and "t answers from shop/checkout" in weight.text
    assert "shop-checkout-canary-http (port http) by header X-Canary, cookie canary, weight 100 of 100" in weight.text
    assert cause((("X-Canary", "always"),)).responsible == "nginx.ingress.kubernetes.io/canary-by-header"
    assert cause((("Cookie", "a=1; canary=always"),)).responsible == "nginx.ingress.kubernetes.io/canary-by-cookie"
    # answered from the main Service (shop/checkout: its upstream name is a prefix of the canary's): not the canary's doing
    assert not cause(baseline="shop/checkout").responsible.startswith("nginx.ingress.kubernetes.io/canary")
    assert not cause(baseline="shop/web").responsible.startswith("nginx.ingress.kubernetes.io/canary")
    # a dashed port name: the port /dbg gives says where the Service's name ends
    location = Router("server pay location /checkout", "/checkout", service="shop/checkout:80", ingress="shop/checkout",
                      canaries=(Canary("shop-checkout-canary-http-alt", "http-alt", weight=10),))
    assert cause(baseline="shop/checkout-canary").responsible == "nginx.ingress.kubernetes.io/canary-weight"
    assert not cause(baseline="shop/checkout-canary-http").responsible.startswith("nginx.ingress.kubernetes.io/canary")


def test_the_hosts_root_location_ingress_nginx_adds_does_not_put_a_404_down_to_the_ingress_it_is_named_after() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Router
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule
    # ingress-nginx names the root location after whichever Ingress of the host it took the server from
    root = Router("server www location /", "/", ingress="shop/account")
    rule = Rule("shop/web", "www.example.test", "/admin", "Prefix", regex=False)
    request = Request(id="r", ingress="shop/web", host="www.example.test", target="/adminx", kind="neighbour", rule="/admin (Prefix)")
    cause = explain(Context(request, rule, "status", "t", (), baseline_served=False, target_served=True, baseline_record=root))
    assert cause.responsible == "rule /admin (Prefix)" and "string prefix" in cause.text
    # a location of another Ingress that served it still says so
    served = Router("server www location /admin", "/admin", service="shop/web:80", ingress="shop/account")
    cause = explain(Context(request, rule, "status", "t", (), baseline_served=True, target_served=True, baseline_record=served))
    assert cause.responsible == "location of Ingress shop/account"


def test_ssl_redirect_is_no_cause_on_a_host_without_tls_nor_over_https() -> None:
    """Seen on kind: a body over proxy-body-size (413 on ingress-nginx) on an Ingress that also says ssl-redirect false,
    for a host no spec.tls names, was put down to ssl-redirect."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import HostTLS, Rule
    annotations = {"ssl-redirect": "false", "proxy-body-size": "2m"}
    rule = Rule("store/storefront", "store.example.test", "/cart", "Prefix", False, annotations)
    body = Request(id="b", ingress="store/storefront", host="store.example.test", target="/cart", kind="body-size",
                   rule="/cart (Prefix)", method="POST")
    cause = explain(Context(body, rule, "status", "t", (), baseline_served=False))
    assert cause.responsible == "nginx.ingress.kubernetes.io/proxy-body-size" and "413" in cause.text
    # a host spec.tls names, over plain HTTP: ssl-redirect false is what ingress-nginx reads there
    plain = Request(id="p", ingress="store/storefront", host="store.example.test", target="/cart", kind="path", rule="/cart (Prefix)")
    tls = HostTLS(certified=("store/storefront",), listed=("store/storefront",))
    assert explain(Context(plain, rule, "status", "t", (), tls=tls)).responsible == "nginx.ingress.kubernetes.io/ssl-redirect"
    assert explain(Context(plain, rule, "status", "t", ())).responsible != "nginx.ingress.kubernetes.io/ssl-redirect"
