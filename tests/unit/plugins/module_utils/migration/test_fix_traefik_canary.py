# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The canary fix of Traefik's own Ingress provider (migration/fixes/traefik_ingress_canary.py), on a main Ingress
and its canary as a team writes them."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import rules
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Router
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes import traefik_ingress_provider
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Behaviour, Objects
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.traefik_ingress_canary import router_rule

NGINX = "nginx.ingress.kubernetes.io/"
HOST = "pay.example.test"


def _ingress(name, service, annotations=None, paths=(("/checkout", "Prefix"),), port=None):
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": name, "namespace": "shop", "annotations": dict(annotations or {})},
            "spec": {"rules": [{"host": HOST, "http": {"paths": [
                {"path": p, "pathType": t, "backend": {"service": {"name": service, "port": port or {"number": 80}}}}
                for p, t in paths]}}]}}


CANARY = {NGINX + "canary": "true", NGINX + "canary-by-header": "X-Canary", NGINX + "canary-by-cookie": "canary",
          NGINX + "canary-weight": "100"}


def _objects(canary=None, main_annotations=None, paths=(("/checkout", "Prefix"),), others=()):
    main = _ingress("checkout", "checkout", main_annotations, paths)
    found = {"shop/checkout": main,
             "shop/checkout-canary": _ingress("checkout-canary", "checkout-canary", CANARY if canary is None else canary, paths,
                                              {"name": "http"})}
    found.update({"shop/" + o["metadata"]["name"]: o for o in others})
    return Objects(ingresses=found)


def _canary_behaviour(kind="canary-header", responsible=NGINX + "canary-by-header"):
    row = {"index": 0, "id": "x", "ingress": "shop/checkout-canary", "host": HOST, "kind": kind,
           "differences": [{"field": "backend", "baseline": "shop/checkout-canary", "target": "shop/checkout"}]}
    return Behaviour("traefik-ingress-provider", responsible, "...", (row,),
                     (Rule("shop/checkout-canary", HOST, "/checkout", "Prefix", False),))


def _routers(fix, objects):
    """What Traefik would build of the main Ingress and the fix's IngressRoute, for rules.take."""
    main = objects.ingresses["shop/checkout"]
    out = [Router(name="main-%d" % i, rule=router_rule(main, HOST, p), service="checkout")
           for i, p in enumerate(main["spec"]["rules"][0]["http"]["paths"])]
    for route in fix.objects:
        for i, r in enumerate(route["spec"]["routes"]):
            out.append(Router(name="canary-%d" % i, rule=r["match"], priority=r["priority"],
                              service=",".join("%s:%s" % (s["name"], s.get("weight", "")) for s in r["services"])))
    return out


def _to(routers, path="/checkout", headers=()):
    taken = rules.take(routers, "http", HOST, path, headers=headers)
    return taken.service if taken else None


def test_a_canary_by_header_cookie_and_weight_becomes_an_ingressroute_above_the_main_router():
    objects = _objects()
    fix = traefik_ingress_provider.propose(_canary_behaviour(), objects)
    [route] = fix.objects
    assert route["kind"] == "IngressRoute" and route["metadata"] == {
        "name": "checkout-canary", "namespace": "shop", "annotations": {"kindlab.ingress/beside": "shop/checkout"}}
    assert fix.removed() == ["Ingress shop/checkout-canary"] and "shop/checkout-canary (beside shop/checkout)" in fix.says
    main_priority = len('Host("pay.example.test") && PathPrefix("/checkout")')
    assert sorted({r["priority"] for r in route["spec"]["routes"]}) == [main_priority + 2, main_priority + 3, main_priority + 4]
    routers = _routers(fix, objects)
    # ingress-nginx's order: the header, then the cookie, then the weight (100 of 100: the canary alone)
    assert _to(routers, headers=[("X-Canary", "always")]) == "checkout-canary:"
    assert _to(routers, headers=[("X-Canary", "never"), ("Cookie", "canary=always")]) == "checkout:"
    assert _to(routers, headers=[("Cookie", "a=1; canary=never")]) == "checkout:"
    assert _to(routers, "/checkout/pay") == "checkout-canary:"
    # by path element, as ingress-nginx matches the Prefix path: /checkoutx stays the main Ingress's router's
    assert _to(routers, "/checkoutx") == "checkout"
    # the canary's named port is kept as named; the original objects are left as they were
    assert {"name": "checkout-canary", "port": "http"} in route["spec"]["routes"][0]["services"]
    assert "shop/checkout-canary" in objects.ingresses


def test_a_weight_below_the_total_splits_between_both_and_a_header_value_is_the_only_one_that_sends():
    canary = {NGINX + "canary": "true", NGINX + "canary-by-header": "X-Store", NGINX + "canary-by-header-value": "yes",
              NGINX + "canary-weight": "3", NGINX + "canary-weight-total": "10"}
    objects = _objects(canary, {"traefik.ingress.kubernetes.io/router.middlewares": "shop-auth@kubernetescrd"})
    [route] = traefik_ingress_provider.propose(_canary_behaviour(), objects).objects
    header, weighted = route["spec"]["routes"]
    assert header["match"].endswith("Header(`X-Store`, `yes`)") and header["services"] == [{"name": "checkout-canary", "port": "http"}]
    assert weighted["services"] == [{"name": "checkout", "port": 80, "weight": 7}, {"name": "checkout-canary", "port": "http", "weight": 3}]
    # the main Ingress's middlewares on every route: ingress-nginx serves a canary in the main Ingress's location
    # (as an IngressRoute names them: Traefik refuses @kubernetescrd references there without allowCrossNamespace)
    assert all(r["middlewares"] == [{"name": "auth", "namespace": "shop"}] for r in route["spec"]["routes"])


def test_a_weight_of_zero_leaves_the_rest_to_the_main_router():
    canary = {NGINX + "canary": "true", NGINX + "canary-by-cookie": "beta"}
    [route] = traefik_ingress_provider.propose(_canary_behaviour("canary-cookie", NGINX + "canary-by-cookie"), _objects(canary)).objects
    assert [r["match"].rsplit("&& ", 1)[1] for r in route["spec"]["routes"]] == [
        "HeaderRegexp(`Cookie`, `(^|;\\s*)beta=always(;|$)`)", "HeaderRegexp(`Cookie`, `(^|;\\s*)beta=never(;|$)`)"]


def test_the_rule_the_two_rank_differently_gets_the_canary_fix_when_ingress_nginx_answered_from_the_canary():
    row = {"index": 0, "id": "x", "ingress": "shop/checkout", "host": HOST, "kind": "path",
           "differences": [{"field": "backend", "baseline": "shop/checkout-canary", "target": "shop/checkout"}]}
    b = Behaviour("traefik-ingress-provider", "rule /checkout (Prefix)", "ingress-nginx and t rank the host's overlapping rules "
                  "differently", (row,), (Rule("shop/checkout", HOST, "/checkout", "Prefix", False),))
    assert traefik_ingress_provider.propose(b, _objects()).removed() == ["Ingress shop/checkout-canary"]
    # Traefik's tie gave the canary's router a main request ingress-nginx answered from the main Service
    tied = dict(row, differences=[{"field": "backend", "baseline": "shop/checkout", "target": "shop/checkout-canary"}])
    assert traefik_ingress_provider.propose(Behaviour(b.target, b.responsible, b.cause, (tied,), b.rules),
                                            _objects()).removed() == ["Ingress shop/checkout-canary"]
    other = dict(row, differences=[{"field": "backend", "baseline": "shop/web", "target": "shop/checkout"}])
    assert traefik_ingress_provider.propose(Behaviour(b.target, b.responsible, b.cause, (other,), b.rules), _objects()) is None


def test_after_the_element_split_each_path_pairs_with_its_own_and_priorities_stay_clear():
    split = (("/checkout", "Exact"), ("/checkout/", "Prefix"))
    objects = _objects(paths=split)
    fix = traefik_ingress_provider.propose(_canary_behaviour(), objects)
    routers = _routers(fix, objects)
    assert _to(routers, "/checkout") == "checkout-canary:" and _to(routers, "/checkout/x") == "checkout-canary:"
    assert _to(routers, "/checkout/x", [("X-Canary", "never")]) == "checkout:"
    for path in ("/checkout", "/checkout/x"):
        assert not [v for k, v in rules.take(routers, "http", HOST, path).settings if k == "tied with"]


def test_what_the_canary_fix_does_not_write_is_left_alone():
    # a main path another router of the host ranks just above: the canary's routes would outrank it
    crowd = _ingress("crowd", "web", paths=(("/checkout/a", "Prefix"),))  # two characters longer than /checkout
    assert traefik_ingress_provider.propose(_canary_behaviour(), _objects(others=[crowd])) is None
    # no main Ingress of that host and path; a header pattern PCRE reads otherwise than Go's regexp
    lone = Objects(ingresses={"shop/checkout-canary": _objects().ingresses["shop/checkout-canary"]})
    assert traefik_ingress_provider.propose(_canary_behaviour(), lone) is None
    for pcre in ("^(?!no)", "^(a)\\1$", "^a++$", "^(?>ab)", "yes\\Z", "a`b"):
        pattern = dict(CANARY, **{NGINX + "canary-by-header-pattern": pcre})
        assert traefik_ingress_provider.propose(_canary_behaviour(), _objects(pattern)) is None, pcre


def test_a_header_pattern_is_matched_unanchored_as_lua_matches_it_and_a_value_it_misses_falls_through():
    """balancer.lua: ngx.re.match(header, pattern), unanchored; a value it does not match goes on to the cookie and the
    weight, `always` and `never` too (they mean nothing beside a pattern)."""
    canary = {NGINX + "canary": "true", NGINX + "canary-by-header": "X-Beta", NGINX + "canary-by-header-pattern": "(yes|si)[0-9]*",
              NGINX + "canary-by-cookie": "beta"}
    objects = _objects(canary)
    fix = traefik_ingress_provider.propose(_canary_behaviour(), objects)
    [route] = fix.objects
    assert route["spec"]["routes"][0]["match"].endswith("HeaderRegexp(`X-Beta`, `(yes|si)[0-9]*`)")
    routers = _routers(fix, objects)
    assert _to(routers, headers=[("X-Beta", "si2")]) == _to(routers, headers=[("X-Beta", "oh yes")]) == "checkout-canary:"
    assert _to(routers, headers=[("X-Beta", "never"), ("Cookie", "beta=always")]) == "checkout-canary:"
    assert _to(routers, headers=[("X-Beta", "always")]) == "checkout"  # weight 0: the main Ingress's router


def test_a_middleware_a_later_fix_puts_on_the_main_ingress_goes_on_the_canary_routes_beside_it_too():
    objects = _objects(main_annotations={NGINX + "auth-type": "basic", NGINX + "auth-secret": "ops-users"})
    [route] = traefik_ingress_provider.propose(_canary_behaviour(), objects).objects
    objects.ingress_routes["shop/checkout-canary"] = route
    del objects.ingresses["shop/checkout-canary"]
    row = {"index": 1, "id": "y", "ingress": "shop/checkout", "host": HOST, "kind": "path",
           "differences": [{"field": "status", "baseline": "401", "target": "200"}]}
    auth = Behaviour("traefik-ingress-provider", NGINX + "auth-type", "...", (row,),
                     (Rule("shop/checkout", HOST, "/checkout", "Prefix", False),))
    fix = traefik_ingress_provider.propose(auth, objects)
    assert fix.names() == ["Middleware shop/checkout-basic-auth", "Ingress shop/checkout", "IngressRoute shop/checkout-canary"]
    assert "on the canary routes beside them (IngressRoute shop/checkout-canary)" in fix.says
    edited = fix.objects[2]
    assert all(r["middlewares"] == [{"name": "checkout-basic-auth", "namespace": "shop"}] for r in edited["spec"]["routes"])
    # the objects read are left as they were (the fix is applied, or not, by the prover)
    assert all("middlewares" not in r for r in objects.ingress_routes["shop/checkout-canary"]["spec"]["routes"])
    # an IngressRoute beside another Ingress is left alone
    objects.ingress_routes["shop/checkout-canary"]["metadata"]["annotations"]["kindlab.ingress/beside"] = "shop/other"
    assert traefik_ingress_provider.propose(auth, objects).names() == ["Middleware shop/checkout-basic-auth", "Ingress shop/checkout"]
