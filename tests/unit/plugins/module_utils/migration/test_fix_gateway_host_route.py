# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A route of its own for a host a team's HTTPRoutes leave out (fixes/gateway_api_host_route), on the team's manifests
of the kind rehearsal (tests/kind/team): its Gateway shop/edge and two routes for shop and www, where its Ingresses also
serve pay, tenants, legacy, ops and status."""
from __future__ import annotations

from pathlib import Path

import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import NO_ROUTER_FOR_HOST
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes import gateway_api
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Behaviour, Objects

TEAM = Path(__file__).resolve().parents[5] / "tests" / "kind" / "team"


def _team() -> Objects:
    items = [i for f in ("shop.yaml", "tenants.yaml") for doc in yaml.safe_load_all((TEAM / f).read_text()) if doc
             for i in doc["items"]]
    of = {kind: {key_of(i): i for i in items if i["kind"] == kind} for kind in ("Ingress", "Service", "Gateway", "HTTPRoute")}
    return Objects(ingresses=of["Ingress"], services=of["Service"], gateways=of["Gateway"], routes=of["HTTPRoute"])


def _unrouted(host: str, ingress: str, rule_host: str = "", path: str = "/", tls: bool = False) -> Behaviour:
    rule = Rule(ingress, rule_host or host, path, "Prefix", False, tls=tls)
    row = {"index": 0, "id": "x", "ingress": ingress, "host": host, "kind": "path",
           "differences": [{"field": "status", "baseline": "200", "target": "404", "cause_kind": NO_ROUTER_FOR_HOST}]}
    return Behaviour("own-routes", "own-routes's routers", "own-routes built no router for host %s (its own account, "
                     "/api/http/routers: none of its routers that could take the request names it), where ingress-nginx serves it" % host, (row,), (rule,))


def test_a_host_the_teams_routes_leave_out_gets_a_route_of_its_own_with_the_canarys_weight_beside_the_main_service():
    objects = _team()
    fix = gateway_api.propose(_unrouted("pay.example.test", "shop/checkout", path="/checkout"), objects)
    [route] = fix.objects
    assert route["metadata"] == {"name": "checkout-pay-example-test", "namespace": "shop"}
    assert route["spec"]["parentRefs"] == [{"name": "edge", "sectionName": "http"}]
    assert route["spec"]["hostnames"] == ["pay.example.test"]
    # the canary's port named http, resolved from its Service; canary-weight 100 of 100
    assert route["spec"]["rules"] == [{"matches": [{"path": {"type": "PathPrefix", "value": "/checkout"}}],
                                       "backendRefs": [{"name": "checkout", "port": 80, "weight": 0},
                                                       {"name": "checkout-canary", "port": 80, "weight": 100}]}]
    assert "pay.example.test" in fix.says and "shop/checkout-pay-example-test" not in objects.routes
    # a weight that is no number: the main Service alone
    objects.ingresses["shop/checkout-canary"]["metadata"]["annotations"]["nginx.ingress.kubernetes.io/canary-weight"] = "half"
    [route] = gateway_api.propose(_unrouted("pay.example.test", "shop/checkout", path="/checkout"), objects).objects
    assert route["spec"]["rules"][0]["backendRefs"] == [{"name": "checkout", "port": 80}]


def test_a_server_alias_goes_with_its_wildcard_host_and_a_named_port_is_resolved():
    fix = gateway_api.propose(_unrouted("tenants.example.org", "shop/tenants", "*.tenants.example.test"), _team())
    [route] = fix.objects
    assert route["spec"]["hostnames"] == ["*.tenants.example.test", "tenants.example.org"]
    # a name the wildcard stands for is not added beside it
    b = _unrouted("tenants.example.org", "shop/tenants", "*.tenants.example.test")
    named = dict(b.rows[0], host="acme.tenants.example.test")
    [route] = gateway_api.propose(Behaviour(b.target, b.responsible, b.cause, b.rows + (named,), b.rules * 2), _team()).objects
    assert route["spec"]["hostnames"] == ["*.tenants.example.test", "tenants.example.org"]
    assert route["spec"]["rules"][0]["backendRefs"] == [{"name": "web", "port": 80}]


def test_a_regex_go_cannot_read_as_pcre_gives_no_route_and_one_it_can_is_anchored_and_case_insensitive():
    objects = _team()
    # (seen on kind: "no fix known" before; no route can match it as ingress-nginx does, which is said)
    unread = gateway_api.propose(_unrouted("legacy.example.test", "shop/legacy", path="/(?!internal/).*"), objects)
    assert unread.objects == () and "RE2" in unread.impossible and "/(?!internal/).*" in unread.impossible
    legacy = objects.ingresses["shop/legacy"]
    legacy["spec"]["rules"][0]["http"]["paths"][0]["path"] = "/app/[0-9]+"
    [route] = gateway_api.propose(_unrouted("legacy.example.test", "shop/legacy", path="/app/[0-9]+"), objects).objects
    assert route["spec"]["rules"][0]["matches"] == [{"path": {"type": "RegularExpression", "value": "(?i)^/app/[0-9]+"}}]


def test_an_ingress_behind_basic_auth_gets_no_route_that_would_answer_anyone():
    fix = gateway_api.propose(_unrouted("ops.example.test", "shop/ops", tls=True), _team())
    assert not fix.objects and "would answer anyone" in fix.impossible and "shop/ops (auth-type, auth-secret)" in fix.impossible
    # the same with a route that only redirects its plain HTTP to HTTPS (the redirect fix's, made first; seen on kind:
    # its HTTPS requests still have no router, and were 'no fix known')
    objects = _team()
    objects.routes["shop/kindlab-https-redirect-ops-example-test"] = {
        "kind": "HTTPRoute", "metadata": {"name": "kindlab-https-redirect-ops-example-test", "namespace": "shop"},
        "spec": {"hostnames": ["ops.example.test"], "parentRefs": [{"name": "edge", "sectionName": "http"}],
                 "rules": [{"filters": [{"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 308}}]}]}}
    fix = gateway_api.propose(_unrouted("ops.example.test", "shop/ops", tls=True), objects)
    assert not fix.objects and "would answer anyone" in fix.impossible


def test_a_host_in_spec_tls_gets_an_https_listener_with_the_ingresses_certificate_and_the_route_on_it_alone():
    objects = _team()
    ops = objects.ingresses["shop/ops"]
    for a in [a for a in ops["metadata"]["annotations"] if "/auth-" in a]:
        del ops["metadata"]["annotations"][a]
    fix = gateway_api.propose(_unrouted("status.example.test", "shop/ops", path="/oncall", tls=True), objects)
    gateway, route = fix.objects
    added = gateway["spec"]["listeners"][-1]
    assert added == {"name": "status-example-test-https", "port": 443, "protocol": "HTTPS", "hostname": "status.example.test",
                     "tls": {"mode": "Terminate", "certificateRefs": [{"name": "status-tls"}]}}
    assert route["spec"]["parentRefs"] == [{"name": "edge", "sectionName": "status-example-test-https"}]
    assert route["spec"]["rules"][0]["backendRefs"] == [{"name": "api", "port": 8080}]  # port web of Service api
    assert len(objects.gateways["shop/edge"]["spec"]["listeners"]) == 2  # a copy was edited
    # a path Go's regexp cannot read leaves no route, and no listener added for it either
    ops["spec"]["rules"][1]["http"]["paths"][0]["path"] = "/(?!internal/).*"
    ops["metadata"]["annotations"]["nginx.ingress.kubernetes.io/use-regex"] = "true"
    fix = gateway_api.propose(_unrouted("status.example.test", "shop/ops", path="/(?!internal/).*", tls=True), objects)
    assert fix.objects == () and "RE2" in fix.impossible


def test_a_host_some_route_names_is_left_to_the_dropped_host_fix_and_a_listener_of_another_namespace_is_not_taken():
    objects = _team()
    # www.example.test has the team's route: an alias of it is added there, no route of its own is made
    fix = gateway_api.propose(_unrouted("www2.example.test", "shop/web", "www.example.test", "/admin"), objects)
    assert fix is None or all(o["metadata"]["name"] != "web-www-example-test" for o in fix.objects)
    # the Gateway in another namespace, its listener admitting routes of its own namespace only
    gateway = objects.gateways.pop("shop/edge")
    gateway["metadata"]["namespace"] = "edge"
    objects.gateways["edge/edge"] = gateway
    assert gateway_api.propose(_unrouted("pay.example.test", "shop/checkout", path="/checkout"), objects) is None
    gateway["spec"]["listeners"][0]["allowedRoutes"] = {"namespaces": {"from": "All"}}
    [route] = gateway_api.propose(_unrouted("pay.example.test", "shop/checkout", path="/checkout"), objects).objects
    assert route["spec"]["parentRefs"] == [{"name": "edge", "sectionName": "http", "namespace": "edge"}]
