# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The canary cookie on a Gateway API target (migration/fixes/gateway_api_canary.py), on the route ingress2gateway
wrote for the team's checkout and its canary (weight and header translated, the cookie left out)."""
from __future__ import annotations

import copy

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Router
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import rules
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes import gateway_api
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Behaviour, Objects

NGINX = "nginx.ingress.kubernetes.io/"
HOST = "pay.example.test"


def _ref(name, weight):
    return {"group": "", "kind": "Service", "name": name, "port": 80, "weight": weight}


def _header(value, service):
    return {"backendRefs": [_ref(service, 1)], "matches": [{"headers": [{"name": "X-Canary", "type": "Exact", "value": value}],
                                                            "path": {"type": "PathPrefix", "value": "/checkout"}}]}


ROUTE = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
         "metadata": {"name": "checkout-pay-example-test", "namespace": "shop"},
         "spec": {"hostnames": [HOST], "parentRefs": [{"name": "nginx"}], "rules": [
             {"backendRefs": [_ref("checkout", 90), _ref("checkout-canary", 10)],
              "matches": [{"path": {"type": "PathPrefix", "value": "/checkout"}}],
              "filters": [{"type": "RequestHeaderModifier", "requestHeaderModifier": {"set": [{"name": "X-Shop", "value": "1"}]}}]},
             _header("always", "checkout-canary"), _header("never", "checkout")]}}
CANARY = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "checkout-canary", "namespace": "shop"},
          "spec": {"rules": [{"host": HOST, "http": {"paths": [{"path": "/checkout", "pathType": "Prefix", "backend": {
              "service": {"name": "checkout-canary", "port": {"name": "http"}}}}]}}]}}


def _objects(route=None):
    return Objects(ingresses={"shop/checkout-canary": CANARY},
                   routes={"shop/checkout-pay-example-test": copy.deepcopy(route or ROUTE)},
                   gateways={"shop/nginx": {"kind": "Gateway", "metadata": {"name": "nginx", "namespace": "shop"}}})


def _behaviour(responsible=NGINX + "canary-by-cookie"):
    row = {"index": 0, "id": "x", "ingress": "shop/checkout-canary", "host": HOST, "kind": "canary-cookie", "differences": []}
    rule = Rule("shop/checkout-canary", HOST, "/checkout", "Prefix", False, {"canary": "true", "canary-by-cookie": "canary"})
    return Behaviour("gateway-api", responsible, "canary-by-cookie canary: ...", (row,), (rule,))


def _routers(route):
    """The routers Traefik makes of the route's rules: each header match adds 100 to a rule's rank, and between rules
    of the same matches the earlier one ranks higher (loadHTTPRoute: priority + len(rules) - index)."""
    out = []
    all_rules = route["spec"]["rules"]
    for i, rule in enumerate(all_rules):
        for match in rule["matches"]:
            headers = match.get("headers") or []
            said = ["Host(`%s`)" % HOST, "PathPrefix(`%s`)" % match["path"]["value"]] + [
                ("HeaderRegexp(`%s`, `%s`)" if h["type"] == "RegularExpression" else "Header(`%s`, `%s`)") % (h["name"], h["value"])
                for h in headers]
            out.append(Router("rule-%d" % i, " && ".join(said), priority=100 * len(headers) + len(all_rules) - i,
                              service=",".join(r["name"] for r in rule["backendRefs"])))
    return out


def _to(route, headers):
    taken = rules.take(_routers(route), "http", HOST, "/checkout/pay", headers=headers)
    return taken.service if taken else None


def test_the_cookie_gets_two_rules_after_the_header_s_and_above_the_weight_s_with_the_rule_s_filters():
    fix = gateway_api.propose(_behaviour(), _objects())
    [route] = fix.objects
    assert fix.names() == ["HTTPRoute shop/checkout-pay-example-test"] and "Cookie header match" in fix.says
    always, never = route["spec"]["rules"][3:]
    assert always["backendRefs"] == [{"group": "", "kind": "Service", "name": "checkout-canary", "port": 80}]
    assert never["backendRefs"] == [{"group": "", "kind": "Service", "name": "checkout", "port": 80}]
    assert always["matches"][0]["headers"] == [{"type": "RegularExpression", "name": "Cookie", "value": "(^|;\\s*)canary=always(;|$)"}]
    assert always["filters"] == ROUTE["spec"]["rules"][0]["filters"]
    # ingress-nginx's order: the header, then the cookie, then the weight
    assert _to(route, [("Cookie", "a=1; canary=always")]) == "checkout-canary"
    assert _to(route, [("Cookie", "canary=never")]) == "checkout"
    assert _to(route, [("X-Canary", "never"), ("Cookie", "canary=always")]) == "checkout"
    assert _to(route, [("Cookie", "notcanary=always")]) == "checkout,checkout-canary"
    # proposed again on the fixed route: nothing more to add
    assert gateway_api.propose(_behaviour(), _objects(route)) is None


def test_a_canary_without_weight_takes_its_backend_ref_from_the_header_s_rule():
    """Seen on kind: with no canary-weight the translation leaves the canary out of the main rule; its header's rule
    names it (with the port number the translation resolved from the Service's named port)."""
    alone = copy.deepcopy(ROUTE)
    alone["spec"]["rules"][0]["backendRefs"] = [_ref("checkout", 1)]
    [route] = gateway_api.propose(_behaviour(), _objects(alone)).objects
    assert _to(route, [("Cookie", "canary=always")]) == "checkout-canary" and _to(route, []) == "checkout"
    # the route names the canary nowhere: no fix
    alone["spec"]["rules"] = alone["spec"]["rules"][:1]
    assert gateway_api.propose(_behaviour(), _objects(alone)) is None


def _pattern_objects(route=None, pattern="^(yes|si)[0-9]*$"):
    canary = copy.deepcopy(CANARY)
    canary["metadata"]["annotations"] = {NGINX + "canary-by-header-pattern": pattern}
    return Objects(ingresses={"shop/checkout-canary": canary}, routes={"shop/checkout-pay-example-test": copy.deepcopy(route or ROUTE)})


def _header_behaviour(pattern="^(yes|si)[0-9]*$"):
    row = {"index": 0, "id": "x", "ingress": "shop/checkout-canary", "host": HOST, "kind": "canary-header", "differences": []}
    rule = Rule("shop/checkout-canary", HOST, "/checkout", "Prefix", False,
                {"canary": "true", "canary-by-header": "X-Canary", "canary-by-header-pattern": pattern, "canary-by-cookie": "canary"})
    return Behaviour("gateway-api", NGINX + "canary-by-header", "canary-by-header X-Canary: ...", (row,), (rule,))


def test_a_header_pattern_replaces_the_always_and_never_rules_the_translation_wrote_and_stays_above_the_cookie():
    cookie = gateway_api.propose(_behaviour(), _pattern_objects()).objects[0]  # the cookie's rules first, as may happen
    fix = gateway_api.propose(_header_behaviour(), _pattern_objects(cookie))
    [route] = fix.objects
    headers = [h for r in route["spec"]["rules"] for m in r["matches"] for h in m.get("headers") or []]
    assert [h["value"] for h in headers if h["name"] == "X-Canary"] == ["^(yes|si)[0-9]*$"] and "RegularExpression" in fix.says
    # a value the pattern matches: the canary; always and never mean nothing beside a pattern: the cookie, then the weight
    assert _to(route, [("X-Canary", "si2")]) == "checkout-canary"
    assert _to(route, [("X-Canary", "never"), ("Cookie", "canary=always")]) == "checkout-canary"
    assert _to(route, [("X-Canary", "yes"), ("Cookie", "canary=never")]) == "checkout-canary"
    assert _to(route, [("X-Canary", "always")]) == "checkout,checkout-canary"
    # proposed again: nothing to change; a pattern Go's regexp reads otherwise: none
    assert gateway_api.propose(_header_behaviour(), _pattern_objects(route)) is None
    assert gateway_api.propose(_header_behaviour("^(?!no)"), _pattern_objects(pattern="^(?!no)")) is None


def test_the_cookie_fix_is_not_proposed_for_another_behaviour():
    assert gateway_api.propose(_behaviour(NGINX + "canary-by-header"), _objects()) is None
    full = copy.deepcopy(ROUTE)
    full["spec"]["rules"] += [_header("v%d" % i, "checkout") for i in range(12)]  # 15 rules: no room for two more
    assert gateway_api.propose(_behaviour(), _objects(full)) is None
