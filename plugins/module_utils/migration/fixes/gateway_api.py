# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixes for a Gateway API target: edits of its HTTPRoutes and Gateways (those ingress2gateway wrote, or a team's
own), or why no Gateway API setting keeps a behaviour."""
from __future__ import annotations

import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.migration import causes
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Behaviour, Fix, Objects
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.common import (
    default_backend_beyond_its_hosts,
    fields,
    host_slug,
    traefik_limits,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.gateway_api_canary import cookie, header_pattern
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.gateway_api_host_route import host_route
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.gateway_objects import (
    http_listeners,
    plain_http_listeners,
    redirects,
    routes_of_host,
    spec,
)

NAME = "gateway-api"
Obj = dict[str, Any]
DEFAULT_LISTENER = "kindlab-default-http"  # the listener without hostname a default backend's route moves to
# A rewrite-target whose regex only strips a prefix: path /P(/|$)(.*) (or /P/(.*)) with target /$2 (or /$1).
_PREFIX_REWRITE = (re.compile(r"^\^?(?P<prefix>/[A-Za-z0-9._~/-]*?)\(/\|\$\)\(\.\*\)\$?$"), "/$2")
_PREFIX_REWRITE_1 = (re.compile(r"^\^?(?P<prefix>/[A-Za-z0-9._~/-]*?)/\(\.\*\)\$?$"), "/$1")


def _auth(b: Behaviour, _objects: Objects) -> Fix | None:
    if "auth-type" not in b.responsible:
        return None
    return Fix("none", impossible="Gateway API's standard filters have no authentication: an HTTPRoute cannot ask for "
                                  "credentials or drop the Authorization header (Traefik can, through a Middleware of its "
                                  "own as an ExtensionRef filter, outside the standard)")


def _app_root_query(b: Behaviour, _objects: Objects) -> Fix | None:
    if causes.APP_ROOT_QUERY not in b.kinds:
        return None
    return Fix("none", impossible="Gateway API's RequestRedirect sets the scheme, host, port, path and status of the "
                                  "Location, none of its fields the query, and Traefik's keeps the request's (seen on "
                                  "kind), where ingress-nginx's app-root redirect drops it")


def _body_size(b: Behaviour, _objects: Objects) -> Fix | None:
    if b.responsible != "nginx.ingress.kubernetes.io/proxy-body-size":
        return None
    return Fix("none", impossible="Gateway API's standard filters have no request body limit: an HTTPRoute cannot refuse "
                                  "a larger body with 413 (Traefik can, through its Buffering Middleware as an "
                                  "ExtensionRef filter, outside the standard)")


def _plain_http_kept(b: Behaviour, objects: Objects) -> Fix | None:
    """ingress-nginx serves a host over plain HTTP (no Ingress gives its server a certificate); the translation redirects
    it: the host's plain-HTTP route routes as its HTTPS route does instead of redirecting."""
    if not b.responsible.startswith("spec.tls of") or causes.TLS_LISTED_ONLY not in b.kinds:
        return None
    edited = {}
    for host in sorted({str(r["host"]) for r in b.rows}):
        routes = routes_of_host(objects, host)
        redirecting = [r for r in routes if spec(r).get("rules") and all(redirects(x) for x in spec(r)["rules"])]
        serving = [r for r in routes if r not in redirecting and any(x.get("backendRefs") for x in spec(r).get("rules") or [])]
        for route in redirecting:
            twin = next((s for s in serving if key_of(s).startswith(key_of(route).rsplit("-http", 1)[0])), None)
            if twin is None:
                continue
            fixed = objects.edited("HTTPRoute", key_of(route))
            spec(fixed)["rules"] = [dict(x) for x in spec(twin).get("rules") or []]
            edited[key_of(fixed)] = fixed
    if not edited:
        return None
    return Fix("route plain HTTP as HTTPS is routed in %s instead of redirecting (ingress-nginx gives the host's server no "
               "certificate, so it never redirects it)" % ", ".join(sorted(edited)), tuple(edited.values()))


_TO_HTTPS = {"type": "RequestRedirect", "requestRedirect": {"scheme": "https", "statusCode": 308}}


def _serves_plain_http(route: Obj, plain: set[str]) -> bool:
    """Whether ROUTE routes (not only redirects) requests on a plain-HTTP listener (PLAIN: their names)."""
    return any(not redirects(x) for x in spec(route).get("rules") or []) and (
        not spec(route).get("parentRefs")
        or any(not p.get("sectionName") or str(p["sectionName"]) in plain for p in spec(route)["parentRefs"]))


def _https_only(objects: Objects, route: Obj, host: str, plain: set[str]) -> Obj | None:
    """A copy of ROUTE attached to the HTTPS listeners naming HOST instead of its plain-HTTP ones (PLAIN: their names;
    a team's route on both listeners of its Gateway); None when it names other hosts too or no HTTPS listener names
    HOST."""
    if spec(route).get("hostnames") != [host]:
        return None
    fixed = objects.edited("HTTPRoute", key_of(route))
    refs: list[Obj] = []
    for ref in spec(fixed).get("parentRefs") or []:
        # (a parentRef without namespace names a Gateway in the route's own)
        gateway = objects.gateways.get("%s/%s" % (ref.get("namespace") or route["metadata"].get("namespace"), ref.get("name")))
        if gateway is None or (ref.get("sectionName") and str(ref["sectionName"]) not in plain):
            refs.append(ref)
            continue
        secure = [li for li in spec(gateway).get("listeners") or [] if li.get("protocol") == "HTTPS" and li.get("hostname") == host]
        refs += [dict({k: v for k, v in ref.items() if k not in ("sectionName", "port")}, sectionName=li["name"]) for li in secure]
    if not refs or refs == spec(route).get("parentRefs"):
        return None
    spec(fixed)["parentRefs"] = refs
    return fixed


def _redirect_route(host: str, listeners: list[tuple[Obj, Obj]]) -> Obj | None:
    """A route of its own that redirects every plain-HTTP request for HOST to HTTPS, on the plain-HTTP LISTENERS that
    take it (in their Gateway's namespace, which a listener allowing routes from its own namespace accepts); None when
    no listener takes it."""
    if not listeners:
        return None
    namespace = str(listeners[0][0]["metadata"].get("namespace") or "")
    return {"apiVersion": listeners[0][0].get("apiVersion"), "kind": "HTTPRoute",
            "metadata": {"name": "kindlab-https-redirect-" + host_slug(host), "namespace": namespace},
            "spec": {"hostnames": [host],
                     "parentRefs": [{"name": g["metadata"]["name"], "sectionName": li["name"]} for g, li in listeners
                                    if str(g["metadata"].get("namespace") or "") == namespace],
                     "rules": [{"filters": [dict(_TO_HTTPS)], "matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}]}}


def _redirect_every_path(b: Behaviour, objects: Objects) -> Fix | None:
    """ingress-nginx redirects every plain HTTP request for a host its server has a certificate for, whatever the
    path and whichever Ingress's rule matches it; the translation redirects only the rules' paths of the Ingress with
    spec.tls: the host's plain-HTTP route gets a rule that redirects every other path too (PathPrefix /, the
    longest-match order leaving the others first). A host without one (a team's own routes) gets a route of its own that
    redirects it, its routes that serve it over plain HTTP moved to the HTTPS listeners naming it."""
    if not b.responsible.startswith("spec.tls of") or not (
            b.kinds & {causes.TLS_REDIRECT_UNMATCHED, causes.TLS_OF_ANOTHER}
            or causes.TLS_REDIRECT_DIFFERS in b.kinds and "status" in fields(b)):
        return None
    edited = {}
    for host in sorted({str(r["host"]) for r in b.rows}):
        redirecting = [r for r in routes_of_host(objects, host)
                       if spec(r).get("rules") and all(redirects(x) for x in spec(r)["rules"])]
        for route in redirecting:  # the host's plain-HTTP route
            rules = spec(route)["rules"]
            if any(m.get("path") == {"type": "PathPrefix", "value": "/"} for x in rules for m in x.get("matches") or []):
                continue
            fixed = objects.edited("HTTPRoute", key_of(route))
            spec(fixed)["rules"].append({"filters": [dict(_TO_HTTPS)], "matches": [{"path": {"type": "PathPrefix", "value": "/"}}]})
            edited[key_of(fixed)] = fixed
        if redirecting:
            continue
        # a team's own routes: those serving the host over plain HTTP move to its HTTPS listeners, and a route of its own
        # redirects the host (a PathPrefix / redirect would rank below their longer paths)
        listeners = plain_http_listeners(objects, host)
        plain = {str(li["name"]) for _g, li in listeners}
        moved = [_https_only(objects, r, host, plain) for r in routes_of_host(objects, host) if _serves_plain_http(r, plain)]
        made = _redirect_route(host, listeners)
        if made is None or key_of(made) in objects.routes or None in moved:
            continue
        edited.update({key_of(m): m for m in moved if m is not None})
        edited[key_of(made)] = made
    if not edited:
        return None
    return Fix("redirect every plain-HTTP path to HTTPS in %s, not only the rules' paths, as ingress-nginx does for a host "
               "whose server has a certificate" % ", ".join(sorted(edited)), tuple(edited.values()))


def _default_backend_everywhere(b: Behaviour, _objects: Objects) -> Fix | None:
    """The translated default backend answers a host's unmatched paths where ingress-nginx answers its own 404. Moving
    its route to a listener without hostname does not narrow it on Traefik (seen on kind: those requests still
    differed): it gives such a route a router without a Host matcher (provider/kubernetes/gateway, buildHostRule of no
    hostnames) in the one router table of the listeners' entry point, which keeps no listener apart."""
    if not default_backend_beyond_its_hosts(b):
        return None
    return Fix("none", impossible="Traefik makes the translated default backend's route, which names no hostname, a "
                                  "router without a Host matcher in the one router table of its entry point, on whichever "
                                  "listener it is attached to, so it answers every host's unmatched paths, where "
                                  "ingress-nginx answers them with its own 404; Gateway API's standard filters have no 404 "
                                  "to give in its place")


def _wildcard_depth(b: Behaviour, _objects: Objects) -> Fix | None:
    """ingress-nginx's wildcard host matches one label (the Ingress spec's), a Gateway API wildcard hostname any
    number of them (the spec's Hostname: `*.example.com` matches foo.bar.example.com too)."""
    if not b.responsible.startswith("host *.") or causes.WILDCARD_ANY_DEPTH not in b.kinds:
        return None
    return Fix("none", impossible="a Gateway API wildcard hostname (%s) matches names of any number of labels below it, "
                                  "as the spec defines Hostname, where ingress-nginx's matches one label only, as the "
                                  "Ingress spec says; no listener or route hostname says one label"
               % b.responsible.split(" ", 1)[1])


def _default_backend(b: Behaviour, objects: Objects) -> Fix | None:
    """The translated default backend is a route without hostnames on every listener, so it answers every host's
    unmatched paths (and Traefik may rank it above a host's own PathPrefix /); ingress-nginx answers from it only for
    hosts no rule names. Its route moves to a listener of its own without hostname: by Gateway API's listener
    precedence, a host with a listener of its own never reaches it."""
    m = re.match(r"^spec\.defaultBackend of (?P<ingress>[^;\s]+)", b.responsible)
    if not m or not objects.gateways:
        return None
    ingress = objects.ingresses.get(m.group("ingress"))
    service = str((((ingress or {}).get("spec") or {}).get("defaultBackend") or {}).get("service", {}).get("name") or "")
    routes = [r for _n, r in sorted(objects.routes.items()) if not spec(r).get("hostnames")
              and any(ref.get("name") == service for x in spec(r).get("rules") or [] for ref in x.get("backendRefs") or [])]
    if service and not routes and causes.DEFAULT_BACKEND_UNUSED in b.kinds:
        # (a team's own routes, none for it)
        return Fix("none", impossible="no route of %s serves the defaultBackend of %s (Service %s); a route of its own "
                                      "for it would name no hostname, which Traefik makes a router without a Host matcher "
                                      "in the one router table of its entry point, so it would answer every host's "
                                      "unmatched paths too, where ingress-nginx answers them with its own 404"
                                      % (b.target, m.group("ingress"), service))
    if not service or not routes:
        return None
    edited: list[Obj] = []
    for gw_name in sorted(objects.gateways):
        gateway = objects.edited("Gateway", gw_name)
        listeners = spec(gateway).setdefault("listeners", [])
        http = http_listeners(gateway)
        if http and not any(li.get("name") == DEFAULT_LISTENER for li in listeners):
            listeners.append({"name": DEFAULT_LISTENER, "port": http[0].get("port"), "protocol": "HTTP",
                              "allowedRoutes": http[0].get("allowedRoutes") or {"namespaces": {"from": "Same"}}})
            edited.append(gateway)
    for route in routes:
        fixed = objects.edited("HTTPRoute", key_of(route))
        for ref in spec(fixed).get("parentRefs") or []:
            ref["sectionName"] = DEFAULT_LISTENER
            ref.pop("port", None)
        edited.append(fixed)
    return Fix("serve the default backend of %s (route %s) on a listener of its own without hostname (%s), so that it "
               "answers only hosts no other listener names, as ingress-nginx's default server does"
               % (m.group("ingress"), ", ".join(key_of(r) for r in routes), DEFAULT_LISTENER), tuple(edited))


def _host_dropped(b: Behaviour, objects: Objects) -> Fix | None:
    """A host ingress-nginx serves (a server-alias, a name the translation left out) has no route: it is added to the
    hostnames of the route of the rule it is served by, with a listener for it beside the rule host's."""
    if causes.NO_ROUTER_FOR_HOST not in b.kinds or not objects.gateways:
        return None
    edited: dict[str, Obj] = {}
    for row, rule in zip(b.rows, b.rules):
        host = str(row["host"])
        # a host whose rule no route serves (the team's own routes leave it out): a listener alone would serve nothing
        if rule is None or rule.host == host or not routes_of_host(objects, rule.host):
            continue
        for route in routes_of_host(objects, rule.host):
            fixed = edited.setdefault("HTTPRoute " + key_of(route), objects.edited("HTTPRoute", key_of(route)))
            if host not in spec(fixed)["hostnames"]:
                spec(fixed)["hostnames"].append(host)
        for gw_name in sorted(objects.gateways):
            gateway = edited.setdefault("Gateway " + gw_name, objects.edited("Gateway", gw_name))
            listeners = spec(gateway).setdefault("listeners", [])
            if any(li.get("hostname") == host for li in listeners):
                continue
            for li in [x for x in listeners if x.get("hostname") == rule.host]:
                listeners.append(dict(li, hostname=host, name="%s-%s" % (host_slug(host), str(li.get("protocol")).lower())))
    if not edited:
        return None
    return Fix("add the host(s) %s to the routes and listeners of the rule that serves them on ingress-nginx"
               % ", ".join(sorted({str(r["host"]) for r in b.rows})), tuple(edited.values()))


def _rewrite(b: Behaviour, objects: Objects) -> Fix | None:
    """rewrite-target that only strips a prefix (/P(/|$)(.*) to /$2): a PathPrefix match with URLRewrite
    ReplacePrefixMatch /, which Gateway API has, instead of the regex the translation kept without its rewrite."""
    if b.responsible != "nginx.ingress.kubernetes.io/rewrite-target":
        return None
    edited: dict[str, Obj] = {}
    for rule in {(r.ingress, r.host, r.label): r for r in b.rules if r is not None}.values():
        target = rule.annotations.get("rewrite-target", "")
        prefix = next((m.group("prefix") for pattern, wanted in (_PREFIX_REWRITE, _PREFIX_REWRITE_1)
                       for m in [pattern.match(rule.path)] if m and target == wanted), None)
        if not prefix:
            continue
        for route in routes_of_host(objects, rule.host):
            fixed = edited.get(key_of(route)) or objects.edited("HTTPRoute", key_of(route))
            for x in spec(fixed).get("rules") or []:
                if redirects(x):
                    continue
                for match in x.get("matches") or []:
                    path = match.get("path") or {}
                    if path.get("type") == "RegularExpression" and prefix + "(/|$)" in str(path.get("value")) \
                            or path.get("type") == "RegularExpression" and prefix + "/(" in str(path.get("value")):
                        match["path"] = {"type": "PathPrefix", "value": prefix}
                        x["filters"] = [f for f in x.get("filters") or [] if f.get("type") != "URLRewrite"] + [
                            {"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}]
                        edited[key_of(fixed)] = fixed
    if not edited:
        return None
    return Fix("match the prefix with PathPrefix and strip it with URLRewrite ReplacePrefixMatch / in %s (the rewrite "
               "ingress2gateway could not convert)" % ", ".join(sorted(edited)), tuple(edited.values()))


def propose(b: Behaviour, objects: Objects) -> Fix | None:
    for entry in (_default_backend_everywhere, _default_backend, _wildcard_depth, _auth, _body_size, _app_root_query, _plain_http_kept,
                  _redirect_every_path, _host_dropped, host_route, _rewrite, cookie, header_pattern):
        fix = entry(b, objects)
        if fix is not None:
            return fix
    return traefik_limits(b)
