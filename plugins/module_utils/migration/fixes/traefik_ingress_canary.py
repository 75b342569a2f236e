# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The canary fix of Traefik's own Ingress provider: an IngressRoute that routes as ingress-nginx's canary does, in
place of the canary Ingress.

ingress-nginx attaches a canary Ingress's backend to the main Ingress's location of the same host and path, and
its balancer picks it per request (v1.11 rootfs/etc/nginx/lua/balancer.lua, route_to_alternative_balancer): the
canary header first (with canary-by-header-value: that value sends to the canary, any other value falls through;
with canary-by-header-pattern: a value the PCRE matches sends to the canary, any other falls through; with neither:
`always` to the canary, `never` to the main backend), then the canary cookie (`always`, `never`), then
canary-weight out of canary-weight-total (100). Traefik's Ingress provider reads none of it: the canary Ingress
becomes a router with the main one's rule, tied with it. Its kubernetesCRD provider can say it: one route per
step above the main Ingress's router (Header, a HeaderRegexp on Cookie, then the weighted services), each with the
main Ingress's middlewares, entry points and TLS; the canary Ingress goes (the fix removes it)."""
from __future__ import annotations

import json
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import (
    INGRESS_ROUTE_API, MIDDLEWARES, PATH_MATCHER, ROUTER_ANNOTATION, Behaviour, Fix, Objects)
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.common import as_go_regexp, cookie_regexp, ingress_paths

Obj = dict[str, Any]
_NGINX = "nginx.ingress.kubernetes.io/"
# On an IngressRoute this fix made: the main Ingresses it routes beside (comma-separated), so that a Middleware a later
# fix puts on a main Ingress's routers is put on its canary's routes too (through_beside).
BESIDE_ANNOTATION = "kindlab.ingress/beside"
# Above the main Ingress's router (priority P, its rule's length unless set): weight P+2, cookie P+3, header P+4.
# P+1 is left to the router a Prefix path's element split gives (PathPrefix(`/p/`), one character longer).
_STEPS = {"weight": 2, "cookie": 3, "header": 4}


def _annotation(ingress: Obj, name: str) -> str:
    return str(((ingress.get("metadata") or {}).get("annotations") or {}).get(name, "")).strip()


def is_canary(ingress: Obj) -> bool:
    return _annotation(ingress, _NGINX + "canary").lower() == "true"


def _quoted(text: str) -> str:
    return json.dumps(text)  # Go's %q for the ASCII of hosts and paths: what sets the rule's length


def router_rule(ingress: Obj, host: str, path: Obj) -> str:
    """The rule Traefik's Ingress provider writes for one path (v3 syntax; provider/kubernetes/ingress, loadRouter)."""
    parts = ["Host(%s)" % _quoted(host)] if host else []
    value = str(path.get("path") or "")
    if value:
        kind = str(path.get("pathType") or "ImplementationSpecific")
        matcher = {"Exact": "Path", "Prefix": "PathPrefix"}.get(kind) or _annotation(ingress, PATH_MATCHER) or "PathPrefix"
        parts.append("%s(%s)" % (matcher, _quoted(value)))
    return " && ".join(parts)


def _priority(ingress: Obj, host: str, path: Obj) -> int:
    set_to = _annotation(ingress, ROUTER_ANNOTATION + "priority")
    return int(set_to) if set_to.lstrip("-").isdigit() and int(set_to) else len(router_rule(ingress, host, path))


def _service(path: Obj) -> Obj | None:
    svc = (path.get("backend") or {}).get("service") or {}
    port = svc.get("port") or {}
    number, named = port.get("number"), port.get("name")
    if not svc.get("name") or (number is None and not named):
        return None
    return {"name": str(svc["name"]), "port": int(number) if number is not None else str(named)}


def _main_of(objects: Objects, canary: str, host: str, path: Obj) -> tuple[str, Obj] | None:
    """The main Ingress's path the canary's PATH joins on ingress-nginx: the same host, path and pathType."""
    for name in sorted(objects.ingresses):
        ingress = objects.ingresses[name]
        if name == canary or is_canary(ingress):
            continue
        for h, p in ingress_paths(ingress):
            if h == host and p.get("path") == path.get("path") and (p.get("pathType") or "") == (path.get("pathType") or ""):
                return name, p
    return None


def _match(host: str, path: Obj) -> str | None:
    """The canary routes' own match for the main path: by path element for a Prefix path, as ingress-nginx matches it
    (a string prefix is what Traefik's Ingress provider gives, and another fix's business); None for a regex."""
    value, kind = str(path.get("path") or "/"), str(path.get("pathType") or "ImplementationSpecific")
    host_part = "Host(`%s`) && " % host if host else ""
    if kind == "Exact":
        return host_part + "Path(`%s`)" % value
    if kind == "Prefix" and value != "/" and not value.endswith("/"):
        return host_part + "(Path(`%s`) || PathPrefix(`%s/`))" % (value, value)
    if kind == "Prefix" or not any(c in value for c in "^$()[]*+?{}|\\"):
        return host_part + "PathPrefix(`%s`)" % value
    return None


def _taken(objects: Objects, host: str, skip: tuple[str, str]) -> set[int]:
    """The priorities of the host's other routers: its Ingresses' paths and the IngressRoutes' routes."""
    out = set()
    for name, ingress in objects.ingresses.items():
        if is_canary(ingress):
            continue
        for h, p in ingress_paths(ingress):
            if h == host and (name, str(p.get("path"))) != skip:
                out.add(_priority(ingress, h, p))
    for route in objects.ingress_routes.values():
        out |= {int(r["priority"]) for r in (route.get("spec") or {}).get("routes") or [] if r.get("priority")}
    return out


def _steps(ingress: Obj) -> list[tuple[str, str, bool]] | None:
    """The canary's decisions in ingress-nginx's order: (step, extra matcher, to the canary?); None for one this
    fix does not write (a header pattern Go's regexp reads otherwise than PCRE)."""
    header = _annotation(ingress, _NGINX + "canary-by-header")
    value, pattern = (_annotation(ingress, _NGINX + "canary-by-header-" + k) for k in ("value", "pattern"))
    out: list[tuple[str, str, bool]] = []
    if header and value:
        out.append(("header", "Header(`%s`, `%s`)" % (header, value), True))
    elif header and pattern:
        # Lua's ngx.re.match, unanchored, as HeaderRegexp; a value it does not match falls through, always and never too
        go = as_go_regexp(pattern)
        if go is None:
            return None
        out.append(("header", "HeaderRegexp(`%s`, `%s`)" % (header, go), True))
    elif header:
        out += [("header", "Header(`%s`, `always`)" % header, True), ("header", "Header(`%s`, `never`)" % header, False)]
    cookie = _annotation(ingress, _NGINX + "canary-by-cookie")
    if cookie:
        out += [("cookie", "HeaderRegexp(`Cookie`, `%s`)" % cookie_regexp(cookie, word), word == "always") for word in ("always", "never")]
    return out


def _weights(ingress: Obj) -> tuple[int, int] | None:
    weight, total = _annotation(ingress, _NGINX + "canary-weight") or "0", _annotation(ingress, _NGINX + "canary-weight-total") or "100"
    if not (weight.isdigit() and total.isdigit()) or int(total) < 1:
        return None
    return min(int(weight), int(total)), int(total)


def _middleware_ref(namespace: str, said: str) -> Obj:
    """An IngressRoute's reference to a Middleware the main Ingress's annotation names: `<ns>-<name>@kubernetescrd`
    there, `{name, namespace}` here, since Traefik refuses an @kubernetescrd reference in an IngressRoute unless
    allowCrossNamespace is set (provider/kubernetes/crd, resolveReference; seen on kind: the canary's routes were
    refused beside a body-size Middleware). One of another namespace or provider is kept as said."""
    name, _at, provider = said.partition("@")
    if provider == "kubernetescrd" and name.startswith(namespace + "-"):
        return {"name": name[len(namespace) + 1:], "namespace": namespace}
    return {"name": said}


def _routes(main: Obj, host: str, main_path: Obj, canary_path: Obj, steps: list[tuple[str, str, bool]], weights: tuple[int, int]) -> list[Obj] | None:
    match, own, to_canary = _match(host, main_path), _service(main_path), _service(canary_path)
    if match is None or own is None or to_canary is None:
        return None
    base = _priority(main, host, main_path)
    middlewares = [_middleware_ref(str(main["metadata"].get("namespace") or ""), m.strip())
                   for m in _annotation(main, MIDDLEWARES).split(",") if m.strip()]
    routes = []
    for step, extra, canary in steps:
        routes.append({"kind": "Rule", "match": "%s && %s" % (match, extra), "priority": base + _STEPS[step],
                       "services": [dict(to_canary if canary else own)]})
    weight, total = weights
    if weight:  # weight 0: the main Ingress's router answers the rest, as before
        services = [dict(to_canary)] if weight == total else [dict(own, weight=total - weight), dict(to_canary, weight=weight)]
        routes.append({"kind": "Rule", "match": match, "priority": base + _STEPS["weight"], "services": services})
    for route in routes:
        if middlewares:
            route["middlewares"] = [dict(m) for m in middlewares]
    return routes


def _ingress_route(objects: Objects, name: str) -> tuple[Obj, str] | None:
    """The IngressRoute that routes as canary Ingress NAME does, and the main Ingress it joins; None when a path has no
    main path, its priorities are taken on the host, or it says what this fix does not write."""
    canary = objects.ingresses[name]
    steps, weights = _steps(canary), _weights(canary)
    if steps is None or weights is None:
        return None
    routes: list[Obj] = []
    mains = set()
    spec: Obj = {}
    for host, path in ingress_paths(canary):
        found = _main_of(objects, name, host, path)
        if found is None:
            return None
        main_name, main_path = found
        main = objects.ingresses[main_name]
        base = _priority(main, host, main_path)
        if _taken(objects, host, (main_name, str(main_path.get("path")))) & set(range(base + 1, base + max(_STEPS.values()) + 1)):
            return None
        made = _routes(main, host, main_path, path, steps, weights)
        if made is None:
            return None
        routes += made
        mains.add(main_name)
        entry_points = [e.strip() for e in _annotation(main, ROUTER_ANNOTATION + "entrypoints").split(",") if e.strip()]
        if entry_points:
            spec["entryPoints"] = entry_points
        if _annotation(main, ROUTER_ANNOTATION + "tls").lower() == "true":
            spec["tls"] = {}
    if not routes:
        return None
    meta = canary["metadata"]
    route = {"apiVersion": INGRESS_ROUTE_API, "kind": "IngressRoute",
             "metadata": {"name": meta["name"], "namespace": meta.get("namespace"),
                          "annotations": {BESIDE_ANNOTATION: ",".join(sorted(mains))}},
             "spec": dict(spec, routes=routes)}
    return route, ", ".join(sorted(mains))


def through_beside(objects: Objects, main: str, said: str, made: list[Obj]) -> list[Obj]:
    """The IngressRoutes this fix made beside main Ingress MAIN, each route also going through the Middleware SAID (as
    the main Ingress's annotation names it): a request the canary's routes take must meet what the main router's would
    (basic auth, a body limit). One already in MADE (the fix's objects so far) is edited there; the others are returned
    as copies to apply with the fix."""
    out = []
    for name in sorted(objects.ingress_routes):
        annotations = (objects.ingress_routes[name].get("metadata") or {}).get("annotations") or {}
        if main not in str(annotations.get(BESIDE_ANNOTATION, "")).split(","):
            continue
        edited = next((o for o in made if o.get("kind") == "IngressRoute" and key_of(o) == name), None)
        if edited is None:
            edited = objects.edited("IngressRoute", name)
            out.append(edited)
        ref = _middleware_ref(str(edited["metadata"].get("namespace") or ""), said)
        for rule in (edited.get("spec") or {}).get("routes") or []:
            if ref not in rule.setdefault("middlewares", []):
                rule["middlewares"].append(dict(ref))
    return out


def _canaries_of(b: Behaviour, objects: Objects) -> list[str]:
    """The canary Ingresses behind B: those of its rows, for a canary annotation's behaviour; and the canaries on a
    row's rule whose Service either side answered from (a main Ingress's request the canary's weight took on
    ingress-nginx, put down to the canary by its account, or to the two ranking the rule otherwise where it was not
    read; or one Traefik's tie between the canary's router and the main one gave the canary)."""
    found = set()
    if b.responsible.startswith(_NGINX + "canary"):
        found |= {str(r["ingress"]) for r in b.rows if str(r["ingress"]) in objects.ingresses
                  and is_canary(objects.ingresses[str(r["ingress"])])}
    for row, rule in zip(b.rows, b.rules):
        answered = {str(d[side]) for d in row.get("differences") or [] if d["field"] == "backend" for side in ("baseline", "target")}
        for name, ingress in objects.ingresses.items():
            if rule is None or not is_canary(ingress):
                continue
            for host, path in ingress_paths(ingress):
                service = _service(path)
                if (host, path.get("path")) == (rule.host, rule.path) and service \
                        and "%s/%s" % (ingress["metadata"].get("namespace"), service["name"]) in answered:
                    found.add(name)
    return sorted(found)


def canary(b: Behaviour, objects: Objects) -> Fix | None:
    """A canary's header, cookie and weight routed as ingress-nginx routes them: an IngressRoute per canary Ingress
    of B, the canary Ingress removed."""
    made: list[Obj] = []
    removed: list[Obj] = []
    said = []
    for name in _canaries_of(b, objects):
        found = _ingress_route(objects, name)
        if found is None:
            continue
        route, mains = found
        made.append(route)
        removed.append(objects.edited("Ingress", name))
        said.append("%s (beside %s)" % (name, mains))
    if not made:
        return None
    return Fix("route the canary of %s as ingress-nginx does, above the main Ingress's router: its header, then its "
               "cookie (always: the canary, never: the main backend), then canary-weight, in an IngressRoute of the "
               "same name; the canary Ingress removed (Traefik's Ingress provider reads no canary annotation, so its "
               "router ties with the main one)" % ", ".join(said), tuple(made), removes=tuple(removed))
