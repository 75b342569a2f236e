# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The target types' tables of fixes (migration/fixes), on objects shaped as ingress2gateway and teams write them."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.migration import causes
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes import TABLES, table_for
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes import gateway_api, traefik_ingress_provider, traefik_nginx_provider
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Behaviour, Objects

GW = "gateway.networking.k8s.io/v1"


def _row(host, kind="path", ingress="shop/web", **diff):
    return {"index": 0, "id": "x", "ingress": ingress, "host": host, "kind": kind,
            "differences": [dict({"field": "status", "baseline": "404", "target": "200"}, **diff)]}


def _b(responsible, cause, rows, rules=None, kind=""):
    """A behaviour whose rows' differences carry the cause's KIND (causes.py), as compare.py writes them."""
    rows = [dict(r, differences=[dict(d, cause_kind=kind) for d in r.get("differences") or []]) for r in rows]
    return Behaviour("t", responsible, cause, tuple(rows), tuple(rules or [None] * len(rows)))


def _gateway():
    return {"apiVersion": GW, "kind": "Gateway", "metadata": {"name": "nginx", "namespace": "shop"},
            "spec": {"listeners": [
                {"name": "tenants-example-test-http", "hostname": "*.tenants.example.test", "port": 8000, "protocol": "HTTP",
                 "allowedRoutes": {"namespaces": {"from": "Same"}}},
                {"name": "shop-example-test-https", "hostname": "shop.example.test", "port": 8443, "protocol": "HTTPS"}]}}


def _route(name, hostnames, rules, parent=None):
    return {"apiVersion": GW, "kind": "HTTPRoute", "metadata": {"name": name, "namespace": "shop"},
            "spec": {"hostnames": hostnames, "parentRefs": [parent or {"name": "nginx"}], "rules": rules}}


def _backend(service, path_type="PathPrefix", value="/"):
    return {"backendRefs": [{"name": service, "port": 80}], "matches": [{"path": {"type": path_type, "value": value}}]}


REDIRECT = {"filters": [{"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 308}}],
            "matches": [{"path": {"type": "PathPrefix", "value": "/admin"}}]}


def _objects():
    catch_all = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "catch-all", "namespace": "shop"},
                 "spec": {"defaultBackend": {"service": {"name": "fallback", "port": {"number": 80}}}}}
    routes = [_route("catch-all-default-backend", [], [_backend("fallback")]),
              _route("account-www-example-test", ["www.example.test"], [_backend("web", value="/admin")]),
              _route("account-www-example-test-http", ["www.example.test"], [REDIRECT]),
              _route("tenants-tenants-example-test", ["*.tenants.example.test"], [_backend("web")]),
              _route("api-shop-example-test", ["shop.example.test"],
                     [_backend("api", "RegularExpression", "(?i)/api(/|$)(.*).*"), _backend("web", "RegularExpression", "(?i)/docs/.*")])]
    return Objects(ingresses={"shop/catch-all": catch_all}, routes={"shop/" + r["metadata"]["name"]: r for r in routes},
                   gateways={"shop/nginx": _gateway()})


def test_each_target_type_has_its_table_and_gateway_targets_fall_back_to_gateway_apis():
    assert table_for("traefik-nginx-provider", False) is TABLES["traefik-nginx-provider"]
    assert table_for("own-routes", True) is TABLES["gateway-api"]
    assert table_for("traefik-ingress-provider", False) is TABLES["traefik-ingress-provider"]
    assert table_for("someone-elses", False) is None


def test_default_backend_moves_to_a_listener_of_its_own_without_hostname():
    objects = _objects()
    fix = gateway_api.propose(_b("spec.defaultBackend of shop/catch-all", "ingress-nginx answers from the defaultBackend of "
                                 "shop/catch-all (Service shop/fallback); t does not use it here", [_row("tenants.example.test")]),
                              objects)
    gateway = next(o for o in fix.objects if o["kind"] == "Gateway")
    added = [li for li in gateway["spec"]["listeners"] if li["name"] == gateway_api.DEFAULT_LISTENER]
    assert added == [{"name": gateway_api.DEFAULT_LISTENER, "port": 8000, "protocol": "HTTP",
                      "allowedRoutes": {"namespaces": {"from": "Same"}}}]
    route = next(o for o in fix.objects if o["kind"] == "HTTPRoute")
    assert route["metadata"]["name"] == "catch-all-default-backend"
    assert route["spec"]["parentRefs"] == [{"name": "nginx", "sectionName": gateway_api.DEFAULT_LISTENER}]
    assert objects.routes["shop/catch-all-default-backend"]["spec"]["parentRefs"] == [{"name": "nginx"}]  # a copy was edited
    # a team's own routes with none for the default backend (seen on kind: own-routes, "no fix known"): a route of its own
    # would answer every host's unmatched paths on Traefik, which is said
    del objects.routes["shop/catch-all-default-backend"]
    unrouted = _b("spec.defaultBackend of shop/catch-all", "ingress-nginx answers from the defaultBackend of shop/catch-all "
                  "(Service shop/fallback); t does not use it here", [_row("tenants.example.test")],
                  kind=causes.DEFAULT_BACKEND_UNUSED)
    fix = gateway_api.propose(unrouted, objects)
    assert fix.objects == () and "Service fallback" in fix.impossible and "every host's unmatched paths" in fix.impossible


def test_a_default_backend_answering_a_hosts_unmatched_paths_is_said_beyond_traefiks_gateway_provider():
    """Seen on kind: with the route on a listener without hostname, pay.example.test's /CHECKOUT still took it."""
    everywhere = ("t answers from the defaultBackend of shop/catch-all (Service shop/fallback), where ingress-nginx serves "
                  "no rule; ingress-nginx uses ...")
    fix = gateway_api.propose(_b("spec.defaultBackend of shop/catch-all", everywhere, [_row("pay.example.test", "case")],
                                 kind=causes.DEFAULT_BACKEND_NO_RULE), _objects())
    assert fix.objects == () and "router without a Host matcher" in fix.impossible


def test_the_query_app_root_drops_is_said_beyond_gateway_apis_redirect():
    """Seen on kind (the store's manifests): / with a query, 302 to /shop on ingress-nginx, /shop?kindlab=1 on Traefik."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.causes import Context, explain
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Request

    rule = Rule("store/storefront", "www.store.example.test", "/", "Prefix", False, {"app-root": "/shop"})
    request = Request(id="q", ingress="store/storefront", host="www.store.example.test", target="/?kindlab=1", kind="query",
                      rule="/ (Prefix)")
    cause = explain(Context(request, rule, "location", "gateway-api", ()))
    assert cause.kind == causes.APP_ROOT_QUERY and "without the request's query" in cause.text
    assert explain(Context(request, rule, "status", "gateway-api", ())).kind != causes.APP_ROOT_QUERY
    fix = gateway_api.propose(_b(cause.responsible, cause.text, [_row("www.store.example.test", "query", field="location")],
                                 kind=cause.kind), _objects())
    assert fix.objects == () and "app-root redirect drops it" in fix.impossible


def test_a_body_limit_is_said_beyond_gateway_apis_standard_filters():
    fix = gateway_api.propose(_b("nginx.ingress.kubernetes.io/proxy-body-size", "proxy-body-size 2m: ...", [_row("a", "body-size")]),
                              _objects())
    assert fix.objects == () and "no request body limit" in fix.impossible


def test_a_wildcard_of_any_depth_is_said_beyond_gateway_api():
    cause = ("ingress-nginx's wildcard host *.tenants.example.test matches one label only (its server_name is a regex of "
             "one label), so a.kindlab-sub.tenants.example.test is not that host there; t matches it (a wildcard of any depth)")
    fix = gateway_api.propose(_b("host *.tenants.example.test", cause, [_row("a.kindlab-sub.tenants.example.test", "wildcard-depth")],
                                 kind=causes.WILDCARD_ANY_DEPTH), _objects())
    assert fix.objects == () and "(*.tenants.example.test) matches names of any number of labels" in fix.impossible
    # served by neither side: nothing to keep, not this entry's
    neither = cause.replace("matches it (a wildcard of any depth)", "does not serve it either way")
    assert gateway_api.propose(_b("host *.tenants.example.test", neither, [_row("a.b.tenants.example.test")]), _objects()) is None


def test_a_host_ingress_nginx_serves_over_plain_http_routes_there_instead_of_redirecting():
    fix = gateway_api.propose(_b("spec.tls of shop/api", "ingress-nginx serves www.example.test over plain HTTP without a "
                                 "redirect: ...", [_row("www.example.test", status="200")], kind=causes.TLS_LISTED_ONLY), _objects())
    assert [o["metadata"]["name"] for o in fix.objects] == ["account-www-example-test-http"]
    assert fix.objects[0]["spec"]["rules"] == [_backend("web", value="/admin")]


def test_a_dropped_alias_gets_a_hostname_and_a_listener_beside_its_rule_hosts():
    rule = Rule("shop/tenants", "*.tenants.example.test", "/", "Prefix", False)
    fix = gateway_api.propose(_b("gateway-api's routers", "gateway-api built no router for host tenants.example.org ...",
                                 [_row("tenants.example.org", "alias", "shop/tenants")], [rule], causes.NO_ROUTER_FOR_HOST), _objects())
    route = next(o for o in fix.objects if o["kind"] == "HTTPRoute")
    assert route["spec"]["hostnames"] == ["*.tenants.example.test", "tenants.example.org"]
    gateway = next(o for o in fix.objects if o["kind"] == "Gateway")
    assert {"name": "tenants-example-org-http", "hostname": "tenants.example.org", "port": 8000, "protocol": "HTTP",
            "allowedRoutes": {"namespaces": {"from": "Same"}}} in gateway["spec"]["listeners"]
    # a team's own routes that serve no rule of that host: a listener alone would serve nothing (seen on kind: tried and
    # undone, 15 s each)
    objects = _objects()
    del objects.routes["shop/tenants-tenants-example-test"]
    assert gateway_api.propose(_b("own-routes's routers", "own-routes built no router for host tenants.example.org ...",
                                  [_row("tenants.example.org", "alias", "shop/tenants")], [rule], causes.NO_ROUTER_FOR_HOST), objects) is None


def test_a_rewrite_that_strips_a_prefix_becomes_pathprefix_and_replaceprefixmatch():
    rule = Rule("shop/api", "shop.example.test", "/api(/|$)(.*)", "ImplementationSpecific", True,
                {"rewrite-target": "/$2"})
    fix = gateway_api.propose(_b("nginx.ingress.kubernetes.io/rewrite-target", "rewrite-target /$2 ...",
                                 [_row("shop.example.test", "tls", "shop/api")], [rule]), _objects())
    rules = fix.objects[0]["spec"]["rules"]
    assert rules[0]["matches"] == [{"path": {"type": "PathPrefix", "value": "/api"}}]
    assert rules[0]["filters"] == [{"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}]
    assert rules[1]["matches"][0]["path"]["type"] == "RegularExpression"  # /docs/ untouched
    # a rewrite with capture groups used otherwise has no Gateway API form: nothing proposed
    other = Rule("shop/api", "shop.example.test", "/api/(.*)/(.*)", "ImplementationSpecific", True, {"rewrite-target": "/$2/$1"})
    assert gateway_api.propose(_b("nginx.ingress.kubernetes.io/rewrite-target", "...", [_row("shop.example.test")], [other]),
                               _objects()) is None


def test_what_no_setting_reproduces_is_said_with_why():
    lookahead = Rule("shop/legacy", "legacy.example.test", "/(?!internal/).*", "ImplementationSpecific", True)
    for table in (gateway_api.propose, traefik_nginx_provider.propose, traefik_ingress_provider.propose):
        refused = table(_b("x routers r", "x refused the router it made of this rule ...", [_row("legacy.example.test")],
                           [lookahead], causes.REFUSED_ROUTER), _objects())
        assert refused.objects == () and "RE2" in refused.impossible and "/(?!internal/).*" in refused.impossible
        # read literally first (Traefik's own provider), the regex a fix would give it is refused the same
        literal = table(_b("nginx.ingress.kubernetes.io/use-regex", "... reads the path literally ...",
                           [_row("legacy.example.test")], [lookahead]), _objects())
        assert literal.objects == () and "RE2" in literal.impossible
        dots = table(_b("rule /checkout (Prefix)", "...", [_row("pay.example.test", "dot-segment")]), _objects())
        assert "sanitizePath" in dots.impossible
        slash = table(_b("spec.tls of shop/ops", "...",
                         [_row("a", "slash", field="location", baseline="https://a/x", target="https://a/x/")]), _objects())
        assert "trailing slash" in slash.impossible
        mixed = table(_b("spec.tls of shop/ops", "...", [
            _row("a", "slash", field="location", baseline="https://a/x", target="https://a/x/"),
            _row("a", "double-slash", field="location", baseline="https://a//x", target="https://a/x")]), _objects())
        assert "'//'" in mixed.impossible
        # a Location that differs otherwise is not put down to it
        other = table(_b("spec.tls of shop/ops", "...",
                         [_row("a", "path", field="location", baseline="https://a/x", target="https://b/x")]), _objects())
        assert other is None or "trailing slash" not in other.impossible
    # the why names the target as the rehearsal does: own-routes uses gateway-api's table
    own = gateway_api.propose(Behaviour("own-routes", "rule /checkout (Prefix)", "...", (_row("pay.example.test", "dot-segment"),),
                                        (None,)), _objects())
    assert "route of own-routes changes" in own.impossible and "gateway-api" not in own.impossible
    auth = gateway_api.propose(_b("nginx.ingress.kubernetes.io/auth-type", "...", [_row("ops.example.test")]), _objects())
    assert "no authentication" in auth.impossible
    assert gateway_api.propose(_b("nginx.ingress.kubernetes.io/canary-by-cookie", "...", [_row("pay.example.test")]),
                               _objects()) is None


def test_traefik_nginx_provider_lists_the_certified_host_in_the_other_ingress():
    api = {"kind": "Ingress", "metadata": {"name": "api", "namespace": "shop"},
           "spec": {"tls": [{"hosts": ["shop.example.test"], "secretName": "api-tls"}]}}
    shop = {"host": "shop.example.test", "http": {"paths": [{"path": "/docs"}]}}
    www = {"host": "www.example.test", "http": {"paths": [{"path": "/admin"}]}}
    web = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": {"name": "web", "namespace": "shop", "annotations": {"a": "1"}, "uid": "u"},
           "spec": {"ingressClassName": "nginx", "rules": [shop]}}
    behaviour = _b("spec.tls of shop/api", "ingress-nginx redirects every plain HTTP request for shop.example.test to HTTPS "
                   "(...), this Ingress's paths too: ...", [_row("shop.example.test"), _row("shop.example.test", "slash")],
                   kind=causes.TLS_OF_ANOTHER)
    fix = traefik_nginx_provider.propose(behaviour, Objects(ingresses={"shop/api": api, "shop/web": web}))
    assert [o["metadata"]["name"] for o in fix.objects] == ["web"]
    assert fix.objects[0]["spec"]["tls"] == [{"hosts": ["shop.example.test"], "secretName": "api-tls"}]
    assert "tls" not in web["spec"]
    # an Ingress with other hosts too: listing the host would make Traefik redirect them all, so its rules move out
    web["spec"]["rules"] = [shop, www]
    fix = traefik_nginx_provider.propose(behaviour, Objects(ingresses={"shop/api": api, "shop/web": web}))
    rest, own = fix.objects
    assert rest["metadata"]["name"] == "web" and rest["spec"]["rules"] == [www] and "tls" not in rest["spec"]
    assert own == {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                   "metadata": {"namespace": "shop", "annotations": {"a": "1"}, "name": "web-shop-example-test"},
                   "spec": {"ingressClassName": "nginx", "rules": [shop],
                            "tls": [{"hosts": ["shop.example.test"], "secretName": "api-tls"}]}}
    assert "move the rules of shop.example.test out of shop/web" in fix.says
    # a path no rule of the host matches, which the provider answers from the rule-less Ingress's default backend (seen on
    # kind: /docsx, /CART, 6 of 16 still differed with the rules moved): a `/` rule of the host to it, listing the host
    catch_all = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "catch-all", "namespace": "shop"},
                 "spec": {"ingressClassName": "nginx", "defaultBackend": {"service": {"name": "fallback", "port": {"number": 80}}}}}
    unmatched = dict(_row("shop.example.test", "neighbour"), answer={"status": 200, "backend": "shop/fallback"})
    behaviour = _b("spec.tls of shop/api", "...", [_row("shop.example.test"), unmatched], kind=causes.TLS_OF_ANOTHER)
    fix = traefik_nginx_provider.propose(behaviour, Objects(ingresses={"shop/api": api, "shop/web": web,
                                                                       "shop/catch-all": catch_all}))
    rest, own, made = fix.objects
    assert made["metadata"] == {"name": "api-shop-example-test-unmatched", "namespace": "shop"}
    assert made["spec"]["tls"] == [{"hosts": ["shop.example.test"], "secretName": "api-tls"}]
    assert made["spec"]["rules"] == [{"host": "shop.example.test", "http": {"paths": [
        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "fallback", "port": {"number": 80}}}}]}}]
    assert "the default backend of shop/catch-all" in fix.says


def test_a_host_whose_server_has_a_certificate_redirects_every_plain_http_path():
    objects = _objects()
    fix = gateway_api.propose(_b("spec.tls of shop/account", "ingress-nginx redirects every plain HTTP request for a host in "
                                 "spec.tls to HTTPS (...), whether or not a rule matches its path; gateway-api answers 404 "
                                 "where no route matches", [_row("www.example.test", "neighbour")],
                                 kind=causes.TLS_REDIRECT_UNMATCHED), objects)
    [route] = fix.objects
    assert route["metadata"]["name"] == "account-www-example-test-http"
    assert route["spec"]["rules"] == [REDIRECT, {"filters": [{"type": "RequestRedirect", "requestRedirect": {
        "scheme": "https", "statusCode": 308}}], "matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}]
    # proposed once: with the catch-all redirect in place there is nothing left to add
    objects.routes["shop/account-www-example-test-http"] = route
    assert gateway_api.propose(_b("spec.tls of shop/account", "... whether or not a rule matches its path; ...",
                                  [_row("www.example.test", "neighbour")], kind=causes.TLS_REDIRECT_UNMATCHED), objects) is None


def test_traefik_ingress_provider_reads_a_use_regex_ingress_by_pathregexp():
    regex = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
             "metadata": {"name": "app", "namespace": "team", "annotations": {"nginx.ingress.kubernetes.io/use-regex": "true"}},
             "spec": {"rules": [{"host": "a.test", "http": {"paths": [
                 {"path": "/api/v[0-9]+", "pathType": "ImplementationSpecific"}, {"path": "/login", "pathType": "Exact"}]}}]}}
    plain = {"kind": "Ingress", "metadata": {"name": "other", "namespace": "team"}, "spec": {"rules": []}}
    objects = Objects(ingresses={"team/app": regex, "team/other": plain})
    rows = [_row("a.test", ingress="team/app"), _row("b.test", ingress="team/other")]
    fix = traefik_ingress_provider.propose(_b("nginx.ingress.kubernetes.io/use-regex", "ingress-nginx reads /api/v[0-9]+ as "
                                              "a regex (use-regex); ...", rows), objects)
    [app] = fix.objects  # the Ingress in regex mode only by another's annotation is left alone
    assert app["metadata"]["annotations"][traefik_ingress_provider.PATH_MATCHER] == "PathRegexp"
    assert app["spec"]["rules"][0]["http"]["paths"] == [
        {"path": "/(?i)api/v[0-9]+", "pathType": "ImplementationSpecific"}, {"path": "/(?i)login", "pathType": "ImplementationSpecific"}]
    assert regex["spec"]["rules"][0]["http"]["paths"][1] == {"path": "/login", "pathType": "Exact"}  # a copy was edited
    # applied once, the same fix proposed again changes nothing more
    again = traefik_ingress_provider.propose(_b("nginx.ingress.kubernetes.io/use-regex", "...", rows[:1]),
                                             Objects(ingresses={"team/app": app}))
    assert again.objects[0]["spec"] == app["spec"]


def test_traefiks_own_provider_cannot_answer_a_get_with_308_as_ingress_nginx_redirects_it():
    get = dict(_row("ops.example.test", "root", field="status", baseline="308", target="200"), method="GET")
    post = dict(_row("ops.example.test", "root", field="status", baseline="308", target="200"), method="POST")
    said = traefik_ingress_provider.propose(Behaviour("traefik-ingress-provider", "spec.tls of shop/ops", "...", (get, post),
                                                      (None, None)), _objects())
    assert said.objects == () and "301" in said.impossible and "traefik-ingress-provider" in said.impossible
    # only other methods, or another status: not this limit
    assert traefik_ingress_provider.propose(Behaviour("traefik-ingress-provider", "spec.tls of shop/ops", "...", (post,),
                                                      (None,)), _objects()) is None
    other = dict(_row("ops.example.test", "root", field="status", baseline="404", target="200"), method="GET")
    assert traefik_ingress_provider.propose(Behaviour("traefik-ingress-provider", "spec.tls of shop/ops", "...", (other,),
                                                      (None,)), _objects()) is None


def _team_ingress(name, annotations, paths):
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": name, "namespace": "shop", "annotations": dict(annotations)},
            "spec": {"rules": [{"host": "shop.example.test", "http": {"paths": [
                {"path": p, "pathType": "ImplementationSpecific", "backend": {"service": {"name": "api", "port": {"number": 80}}}}
                for p in paths]}}]}}


def test_traefiks_own_provider_rewrites_as_rewrite_target_does_through_a_middleware():
    api = _team_ingress("api", {"nginx.ingress.kubernetes.io/rewrite-target": "/$2",
                                traefik_ingress_provider.MIDDLEWARES: "shop-headers@kubernetescrd"}, ["/api(/|$)(.*)"])
    two = _team_ingress("two", {"nginx.ingress.kubernetes.io/rewrite-target": "/"}, ["/a", "/b"])
    objects = Objects(ingresses={"shop/api": api, "shop/two": two})
    fix = traefik_ingress_provider.propose(_b("nginx.ingress.kubernetes.io/rewrite-target", "rewrite-target /$2 ...",
                                              [_row("shop.example.test", ingress="shop/api"),
                                               _row("shop.example.test", ingress="shop/two")]), objects)
    middleware, ingress = fix.objects  # the Middleware first: the Ingress names it; two paths need two Middlewares: left alone
    assert middleware == {"apiVersion": "traefik.io/v1alpha1", "kind": "Middleware",
                          "metadata": {"name": "api-rewrite", "namespace": "shop"},
                          "spec": {"replacePathRegex": {"regex": "(?i)^/api(/|$)(.*)", "replacement": "/${2}"}}}
    annotations = ingress["metadata"]["annotations"]
    assert annotations[traefik_ingress_provider.MIDDLEWARES] == "shop-headers@kubernetescrd,shop-api-rewrite@kubernetescrd"
    assert annotations[traefik_ingress_provider.PATH_MATCHER] == "PathRegexp"
    assert ingress["spec"]["rules"][0]["http"]["paths"][0]["path"] == "/(?i)api(/|$)(.*)"
    assert fix.names() == ["Middleware shop/api-rewrite", "Ingress shop/api"]
    # proposed again on the fixed Ingress, the Middleware is named once
    again = traefik_ingress_provider.propose(_b("nginx.ingress.kubernetes.io/rewrite-target", "...",
                                                [_row("shop.example.test", ingress="shop/api")]),
                                             Objects(ingresses={"shop/api": ingress}))
    assert again.objects[1]["metadata"]["annotations"][traefik_ingress_provider.MIDDLEWARES].count("shop-api-rewrite") == 1


def test_traefiks_own_provider_refuses_a_body_over_proxy_body_size_through_a_middleware():
    small = _team_ingress("upload", {"nginx.ingress.kubernetes.io/proxy-body-size": "8k"}, ["/upload"])
    unlimited = _team_ingress("free", {"nginx.ingress.kubernetes.io/proxy-body-size": "0"}, ["/free"])
    objects = Objects(ingresses={"shop/upload": small, "shop/free": unlimited})
    rows = [_row("shop.example.test", "body-size", ingress="shop/upload"), _row("shop.example.test", "body-size", ingress="shop/free")]
    fix = traefik_ingress_provider.propose(_b("nginx.ingress.kubernetes.io/proxy-body-size", "...", rows), objects)
    middleware, ingress = fix.objects
    assert middleware["spec"] == {"buffering": {"maxRequestBodyBytes": 8192}} and middleware["metadata"]["name"] == "upload-body-size"
    assert ingress["metadata"]["annotations"][traefik_ingress_provider.MIDDLEWARES] == "shop-upload-body-size@kubernetescrd"
    assert traefik_ingress_provider.propose(_b("nginx.ingress.kubernetes.io/proxy-body-size", "...", rows[1:]), objects) is None


def test_traefiks_own_provider_asks_for_the_users_of_auth_secret_through_a_basic_auth_middleware():
    auth = {"nginx.ingress.kubernetes.io/auth-type": "basic", "nginx.ingress.kubernetes.io/auth-secret": "ops-users",
            "nginx.ingress.kubernetes.io/auth-realm": "Ops only"}
    ops = _team_ingress("ops", auth, ["/ops"])
    mapped = _team_ingress("mapped", dict(auth, **{"nginx.ingress.kubernetes.io/auth-secret-type": "auth-map"}), ["/m"])
    elsewhere = _team_ingress("far", dict(auth, **{"nginx.ingress.kubernetes.io/auth-secret": "security/users"}), ["/f"])
    objects = Objects(ingresses={"shop/ops": ops, "shop/mapped": mapped, "shop/far": elsewhere})
    rows = [_row("shop.example.test", "auth-missing", ingress=i) for i in ("shop/ops", "shop/mapped", "shop/far")]
    fix = traefik_ingress_provider.propose(_b("nginx.ingress.kubernetes.io/auth-type", "...", rows), objects)
    middleware, ingress = fix.objects
    assert middleware["kind"] == "Middleware" and middleware["metadata"] == {"name": "ops-basic-auth", "namespace": "shop"}
    assert middleware["spec"] == {"basicAuth": {"secret": "ops-users", "removeHeader": True, "realm": "Ops only"}}
    assert ingress["metadata"]["annotations"][traefik_ingress_provider.MIDDLEWARES] == "shop-ops-basic-auth@kubernetescrd"
    assert "shop/ops" in fix.says and "mapped" not in fix.says
    # an auth-map Secret (a key per user) Traefik cannot read; a Secret of another namespace a Middleware cannot name
    assert traefik_ingress_provider.propose(_b("nginx.ingress.kubernetes.io/auth-type", "...", rows[1:]), objects) is None
    assert objects.ingresses["shop/ops"]["metadata"]["annotations"] == auth  # proposed on a copy


def test_traefiks_nginx_provider_says_why_it_passes_the_checked_credentials_on():
    rows = [_row("ops.example.test", "path", ingress="shop/ops", field="received.Authorization", baseline="", target="Basic x")]
    fix = traefik_nginx_provider.propose(_b("nginx.ingress.kubernetes.io/auth-type", "...", rows), Objects())
    assert fix.objects == () and "allowSnippetAnnotations" in fix.impossible and "removeHeader" in fix.impossible
    # the 401s are the provider's own basic auth: not this entry's
    status = [_row("ops.example.test", "auth-missing", ingress="shop/ops")]
    assert traefik_nginx_provider.propose(_b("nginx.ingress.kubernetes.io/auth-type", "...", status), Objects()) is None


def test_traefiks_nginx_provider_says_why_a_path_no_rule_matches_is_not_redirected():
    rows = [_row("status.example.test", "case", ingress="shop/ops", baseline="308", target="404")]
    fix = traefik_nginx_provider.propose(_b("spec.tls of shop/ops", "ingress-nginx redirects every plain HTTP request for a "
                                            "host in spec.tls to HTTPS (...), whether or not a rule matches its path; "
                                            "traefik-nginx-provider answers 404 where no route matches", rows,
                                            kind=causes.TLS_REDIRECT_UNMATCHED), Objects())
    assert fix.objects == () and "spec.defaultBackend" in fix.impossible and "its own 404" in fix.impossible
    # with a rule-less Ingress's default backend, which Traefik answers those paths from: a `/` rule of the host to it,
    # in an Ingress of its own listing the host in spec.tls (not in ops, whose basic auth it would get)
    ops = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": {"name": "ops", "namespace": "shop", "annotations": {"nginx.ingress.kubernetes.io/auth-type": "basic"}},
           "spec": {"ingressClassName": "nginx", "tls": [{"hosts": ["ops.example.test"], "secretName": "ops-tls"},
                                                         {"hosts": ["status.example.test"], "secretName": "status-tls"}],
                    "rules": [{"host": "status.example.test", "http": {"paths": []}}]}}
    objects = _objects()
    objects.ingresses["shop/ops"] = ops
    fix = traefik_nginx_provider.propose(_b("spec.tls of shop/ops", "... whether or not a rule matches its path; ...", rows,
                                            kind=causes.TLS_REDIRECT_UNMATCHED), objects)
    [made] = fix.objects
    assert made["metadata"] == {"name": "ops-status-example-test-unmatched", "namespace": "shop"}
    assert made["spec"] == {"ingressClassName": "nginx", "tls": [{"hosts": ["status.example.test"], "secretName": "status-tls"}],
                            "rules": [{"host": "status.example.test", "http": {"paths": [
                                {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "fallback", "port": {"number": 80}}}}]}}]}
    assert "shop/catch-all" in fix.says and "annotations" not in made["metadata"]
    # seen on kind: the provider answers those paths from that default backend over plain HTTP (200 where ingress-nginx
    # redirects); the same fix
    served = [_row("status.example.test", "case", ingress="shop/ops", baseline="308", target="200")]
    again = traefik_nginx_provider.propose(_b("spec.tls of shop/ops", "ingress-nginx redirects plain HTTP for a host in "
                                              "spec.tls to HTTPS (308, ...); t's answer differs in status", served,
                                              kind=causes.TLS_REDIRECT_DIFFERS), objects)
    assert again.objects == fix.objects
    # a redirect that differs in its location is another behaviour
    moved = [_row("status.example.test", "slash", ingress="shop/ops", field="location")]
    assert traefik_nginx_provider.propose(_b("spec.tls of shop/ops", "ingress-nginx redirects plain HTTP for a host in "
                                             "spec.tls to HTTPS (308, ...); t's answer differs in location", moved,
                                             kind=causes.TLS_REDIRECT_DIFFERS), Objects()) is None


def test_traefiks_own_provider_matches_a_prefix_by_path_element_with_an_exact_and_a_slashed_prefix_path():
    checkout = _team_ingress("checkout", {}, ["/checkout", "/cart/"])
    for p in checkout["spec"]["rules"][0]["http"]["paths"]:
        p["pathType"] = "Prefix"
    canary = _team_ingress("checkout-canary", {"nginx.ingress.kubernetes.io/canary": "true"}, ["/checkout"])
    canary["spec"]["rules"][0]["http"]["paths"][0]["pathType"] = "Prefix"
    other = _team_ingress("docs", {}, ["/docs"])
    objects = Objects(ingresses={"shop/checkout": checkout, "shop/checkout-canary": canary, "shop/docs": other})
    rules = [Rule("shop/checkout", "shop.example.test", "/checkout", "Prefix", False)]
    cause = "ingress-nginx matches the Prefix path /checkout by path element ...; t matched it as a string prefix (...)"
    row = _row("shop.example.test", "neighbour", ingress="shop/checkout")
    fix = traefik_ingress_provider.propose(_b("rule /checkout (Prefix)", cause, [row], rules, causes.ELEMENT_PREFIX), objects)
    # the canary's router too, which would still match /checkoutx as a string
    ingress, edited_canary = fix.objects
    paths = [(p["path"], p["pathType"], p["backend"]["service"]["name"]) for p in ingress["spec"]["rules"][0]["http"]["paths"]]
    assert paths == [("/checkout", "Exact", "api"), ("/checkout/", "Prefix", "api"), ("/cart/", "Prefix", "api")]
    assert [(p["path"], p["pathType"]) for p in edited_canary["spec"]["rules"][0]["http"]["paths"]] == [
        ("/checkout", "Exact"), ("/checkout/", "Prefix")]
    assert "shop/checkout" in fix.says and objects.ingresses["shop/checkout"]["spec"]["rules"][0]["http"]["paths"][0]["path"] == "/checkout"
    # a regex path, or one the other table's cause names, is not this entry's
    regex = [Rule("shop/checkout", "shop.example.test", "/checkout", "Prefix", True)]
    assert traefik_ingress_provider.propose(_b("rule /checkout (Prefix)", cause, [_row("h")], regex, causes.ELEMENT_PREFIX),
                                            objects) is None
    assert traefik_ingress_provider.propose(_b("rule /checkout (Prefix)", "other", [_row("h")], rules), objects) is None


def test_traefiks_own_provider_says_why_a_rule_less_default_backend_answers_every_hosts_unmatched_paths():
    rows = [_row("pay.example.test", "case", ingress="shop/checkout", baseline="404", target="200")]
    everywhere = ("t answers from the defaultBackend of shop/catch-all (Service shop/fallback), where ingress-nginx serves "
                  "no rule; ingress-nginx uses ...")
    fix = traefik_ingress_provider.propose(_b("spec.defaultBackend of shop/catch-all", everywhere, rows,
                                              kind=causes.DEFAULT_BACKEND_NO_RULE), Objects())
    assert fix.objects == () and "PathPrefix(/) at the lowest priority" in fix.impossible
    # where ingress-nginx answered from a rule's Service instead, a rule may keep it: not said impossible
    other = everywhere.replace("serves no rule", "answers from Service shop/web")
    assert traefik_ingress_provider.propose(_b("spec.defaultBackend of shop/catch-all", other, rows,
                                               kind=causes.DEFAULT_BACKEND_OTHER), Objects()) is None


def test_traefiks_own_provider_serves_a_server_alias_by_a_rule_of_its_own():
    tenants = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
               "metadata": {"name": "tenants", "namespace": "shop",
                            "annotations": {"nginx.ingress.kubernetes.io/server-alias": "tenants.example.org, *.tenants.example.net"}},
               "spec": {"rules": [{"host": "*.tenants.example.test", "http": {"paths": [
                   {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}},
                   {"host": "other.example.test", "http": {"paths": []}}]}}
    objects = Objects(ingresses={"shop/tenants": tenants})
    rule = Rule("shop/tenants", "*.tenants.example.test", "/", "Prefix", False,
                {"server-alias": "tenants.example.org, *.tenants.example.net"})
    rows = [dict(_row("tenants.example.org", "alias", ingress="shop/tenants", field="backend", baseline="shop/web",
                      target="shop/fallback"))]
    b = _b("spec.defaultBackend of shop/catch-all", "t answers from the defaultBackend of shop/catch-all (Service "
           "shop/fallback), where ingress-nginx answers from Service shop/web; ...", rows, [rule], causes.DEFAULT_BACKEND_OTHER)
    fix = traefik_ingress_provider.propose(b, objects)
    [ingress] = fix.objects
    assert [r["host"] for r in ingress["spec"]["rules"]] == ["*.tenants.example.test", "other.example.test", "tenants.example.org"]
    assert ingress["spec"]["rules"][2]["http"] == tenants["spec"]["rules"][0]["http"]
    assert "tenants.example.org" in fix.says and len(objects.ingresses["shop/tenants"]["spec"]["rules"]) == 2
    # proposed again on the fixed Ingress: nothing left to add
    assert traefik_ingress_provider.propose(b, Objects(ingresses={"shop/tenants": ingress})) is None
    # a request on the rule's own host is not an alias's
    own = [dict(_row("a.tenants.example.test", "alias", ingress="shop/tenants"))]
    assert traefik_ingress_provider.propose(_b("spec.defaultBackend of shop/catch-all", "other", own, [rule]), objects) is None


def test_a_hosts_other_ingress_paths_are_redirected_too_and_a_host_no_route_serves_gets_a_redirect_route_of_its_own():
    objects = _objects()
    objects.gateways["shop/nginx"]["spec"]["listeners"].append(
        {"name": "http", "port": 8000, "protocol": "HTTP", "allowedRoutes": {"namespaces": {"from": "Same"}}})
    objects.routes["shop/account-www-example-test-http"] = _route("account-www-example-test-http", ["www.example.test"], [REDIRECT])
    # the request of shop/web, whose host shop/account's spec.tls certifies: that host's redirect route redirects every path
    fix = gateway_api.propose(_b("spec.tls of shop/account", "ingress-nginx redirects every plain HTTP request for "
                                 "www.example.test to HTTPS (...), this Ingress's paths too: ...", [_row("www.example.test", "slash")],
                                 kind=causes.TLS_OF_ANOTHER), objects)
    assert [o["metadata"]["name"] for o in fix.objects] == ["account-www-example-test-http"]
    # a host with a certificate but no route at all (a team's own routes): a redirect route on the listener without hostname
    fix = gateway_api.propose(_b("spec.tls of shop/ops", "ingress-nginx redirects every plain HTTP request for a host in "
                                 "spec.tls to HTTPS (...), whether or not a rule matches its path; own-routes answers 404 where "
                                 "no route matches", [_row("ops.example.test", ingress="shop/ops")],
                                 kind=causes.TLS_REDIRECT_UNMATCHED), objects)
    [route] = fix.objects
    assert route["metadata"] == {"name": "kindlab-https-redirect-ops-example-test", "namespace": "shop"}
    assert route["spec"] == {"hostnames": ["ops.example.test"], "parentRefs": [{"name": "nginx", "sectionName": "http"}],
                             "rules": [{"filters": [{"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 308}}],
                                        "matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}]}
    # a host a route serves over plain HTTP already is left alone (its rules would rank above the redirect)
    objects.routes["shop/ops"] = _route("ops", ["ops.example.test"], [_backend("web")])
    assert gateway_api.propose(_b("spec.tls of shop/ops", "... whether or not a rule matches its path; ...",
                                  [_row("ops.example.test", ingress="shop/ops")], kind=causes.TLS_REDIRECT_UNMATCHED), objects) is None


def test_a_teams_route_on_both_listeners_moves_to_the_https_one_and_a_route_of_its_own_redirects_plain_http():
    # the team's Gateway: a listener without hostname for plain HTTP, one for shop.example.test's HTTPS; its storefront
    # route names the Gateway alone, so it serves plain HTTP too, where ingress-nginx redirects every request of the host
    objects = Objects(gateways={"shop/nginx": _gateway()}, routes={"shop/storefront": _route(
        "storefront", ["shop.example.test"], [_backend("web", value="/docs")])})
    objects.gateways["shop/nginx"]["spec"]["listeners"].append({"name": "http", "port": 8000, "protocol": "HTTP"})
    fix = gateway_api.propose(_b("spec.tls of shop/api", "ingress-nginx redirects plain HTTP for a host in spec.tls to HTTPS "
                                 "(308, ...); own-routes's answer differs in status", [_row("shop.example.test", ingress="shop/api")],
                                 kind=causes.TLS_REDIRECT_DIFFERS), objects)
    moved, made = fix.objects
    assert moved["metadata"]["name"] == "storefront"
    assert moved["spec"]["parentRefs"] == [{"name": "nginx", "sectionName": "shop-example-test-https"}]
    assert made["metadata"]["name"] == "kindlab-https-redirect-shop-example-test"
    assert made["spec"]["parentRefs"] == [{"name": "nginx", "sectionName": "http"}]
    assert objects.routes["shop/storefront"]["spec"]["parentRefs"] == [{"name": "nginx"}]  # a copy was edited
    # a redirect that differs only in its location (the trailing slash) is not this fix's business
    other = gateway_api.propose(_b("spec.tls of shop/api", "ingress-nginx redirects plain HTTP for a host in spec.tls to "
                                   "HTTPS (308, ...); own-routes's answer differs in location",
                                   [_row("shop.example.test", ingress="shop/api", field="location")],
                                   kind=causes.TLS_REDIRECT_DIFFERS), objects)
    assert other is None or not [o for o in other.objects if o["kind"] == "HTTPRoute"]
    # a route naming a Gateway of that name in another namespace (its parentRef's) is not moved to this one's listener
    objects.routes["shop/storefront"]["spec"]["parentRefs"] = [{"name": "nginx", "namespace": "edge"}]
    elsewhere = gateway_api.propose(_b("spec.tls of shop/api", "ingress-nginx redirects plain HTTP for a host in spec.tls to HTTPS "
                                       "(308, ...); own-routes's answer differs in status", [_row("shop.example.test", ingress="shop/api")],
                                       kind=causes.TLS_REDIRECT_DIFFERS), objects)
    assert elsewhere is None


def test_an_ingress_a_fix_makes_names_its_class_as_the_ingress_it_comes_from():
    """Seen on kind: the rebuilt Ingresses named their class by annotation, and the unmatched-path Ingress, made with
    spec.ingressClassName alone, went unread by the provider (never closed in a full rehearsal)."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.common import class_of

    by_annotation = {"metadata": {"annotations": {"kubernetes.io/ingress.class": "nginx", "a": "1",
                                                  "kindlab.ingress/ingress-class-name": "nginx"}},
                     "spec": {"ingressClassName": "nginx"}}
    assert class_of(by_annotation) == ({}, {"kubernetes.io/ingress.class": "nginx", "kindlab.ingress/ingress-class-name": "nginx"})
    assert class_of({"metadata": {}, "spec": {"ingressClassName": "nginx"}}) == ({"ingressClassName": "nginx"}, {})
    ops = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": {"name": "ops", "namespace": "shop", "annotations": {"kubernetes.io/ingress.class": "nginx"}},
           "spec": {"tls": [{"hosts": ["status.example.test"], "secretName": "status-tls"}],
                    "rules": [{"host": "status.example.test", "http": {"paths": []}}]}}
    objects = _objects()
    objects.ingresses["shop/ops"] = ops
    rows = [_row("status.example.test", "case", ingress="shop/ops", baseline="308", target="200")]
    fix = traefik_nginx_provider.propose(_b("spec.tls of shop/ops", "...", rows, kind=causes.TLS_REDIRECT_UNMATCHED), objects)
    [made] = fix.objects
    assert made["metadata"]["annotations"] == {"kubernetes.io/ingress.class": "nginx"} and "ingressClassName" not in made["spec"]
