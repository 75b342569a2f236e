# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A canary on a Gateway API target. ingress2gateway folds a canary Ingress into the main route's rules (its weight
as backendRef weights, its header as rules with an Exact header match for `always` and `never`) but leaves out its
canary-by-cookie, and reads no canary-by-header-pattern (its `always` and `never` rules stand in for the pattern).
ingress-nginx's balancer reads the header first, then the cookie, then the weight (rootfs/etc/nginx/lua/balancer.lua):
`always` and `never` route, or with a pattern only a value the PCRE matches sends to the canary, and any other value
falls through. The fixes add the route's rules that say it, each on the main path with the main rule's filters.
Traefik ranks a route's rules by their matches (each header match adds 100) and then by their place (provider/
kubernetes/gateway, loadHTTPRoute: priority + len(rules) - index), so the header's rules go before the cookie's, and
both rank above the weight's rule, which has no header match."""
from __future__ import annotations

import copy
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Behaviour, Fix, Objects
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.common import as_go_regexp, cookie_regexp, ingress_paths

Obj = dict[str, Any]
_NGINX = "nginx.ingress.kubernetes.io/"
_MAX_RULES = 16  # HTTPRoute spec.rules: maxItems
_PATH_TYPES = {"Exact": "Exact", "Prefix": "PathPrefix", "ImplementationSpecific": "PathPrefix"}


def _service_of(ingress: Obj, host: str, path: str) -> str:
    """The Service INGRESS's rule for HOST sends PATH to ("" when it has none)."""
    return next((str(((p.get("backend") or {}).get("service") or {}).get("name") or "")
                 for h, p in ingress_paths(ingress) if h == host and p.get("path") == path), "")


def _main_rule(route: Obj, path_type: str, path: str, canary: str) -> tuple[Obj, Obj] | None:
    """The route's rule the translation made of the main path (that path, no header match, a Service other than the
    canary among its backendRefs: the main one, the canary beside it when it has a weight), and the canary's backendRef
    as the route names it anywhere (its header's rules name it when its weight is 0)."""
    rules: list[Obj] = (route.get("spec") or {}).get("rules") or []
    refs = [ref for rule in rules for ref in rule.get("backendRefs") or [] if str(ref.get("name")) == canary]
    for rule in rules:
        names = [str(ref.get("name")) for ref in rule.get("backendRefs") or []]
        if refs and any(n != canary for n in names) and any(
                not m.get("headers") and (m.get("path") or {}) == {"type": path_type, "value": path} for m in rule.get("matches") or []):
            return rule, {k: v for k, v in refs[0].items() if k != "weight"}
    return None


def _rule(main: Obj, path_type: str, path: str, header: Obj, ref: Obj) -> Obj:
    """A rule on the main path with one header match, to REF, with the main rule's filters."""
    rule: Obj = {"matches": [{"path": {"type": path_type, "value": path}, "headers": [header]}], "backendRefs": [copy.deepcopy(ref)]}
    if main.get("filters"):
        rule["filters"] = copy.deepcopy(main["filters"])
    return rule


def _own_ref(main: Obj, canary: str) -> Obj:
    return next({k: v for k, v in ref.items() if k != "weight"} for ref in main.get("backendRefs") or []
                if str(ref.get("name")) != canary)


def _cookie_rules(main: Obj, canary_ref: Obj, path_type: str, path: str, cookie: str) -> list[Obj]:
    return [_rule(main, path_type, path, {"type": "RegularExpression", "name": "Cookie", "value": cookie_regexp(cookie, word)}, ref)
            for word, ref in (("always", canary_ref), ("never", _own_ref(main, str(canary_ref.get("name")))))]


def _canary_rules(b: Behaviour, objects: Objects) -> list[tuple[Rule, str, str]]:
    """Each canary rule of B's rows once: (the rule, its Service, its pathType as Gateway API's) for a canary Ingress
    path that is no regex."""
    out = []
    for rule in {(r.ingress, r.host, r.path): r for r in b.rules if r is not None}.values():
        canary = _service_of(objects.ingresses.get(rule.ingress) or {}, rule.host, rule.path)
        path_type = _PATH_TYPES.get(rule.path_type)
        if canary and path_type is not None and not rule.regex:
            out.append((rule, canary, path_type))
    return out


def cookie(b: Behaviour, objects: Objects) -> Fix | None:
    """canary-by-cookie: the cookie's two rules, last in each route of the canary's host that has its main path's rule."""
    if b.responsible != _NGINX + "canary-by-cookie":
        return None
    edited: dict[str, Obj] = {}
    for rule, canary, path_type in _canary_rules(b, objects):
        name = rule.annotations.get("canary-by-cookie", "")
        for key, route in _routes_of(objects, rule.host):
            fixed = edited.get(key) or objects.edited("HTTPRoute", key)
            found = _main_rule(fixed, path_type, rule.path, canary) if name else None
            added = _cookie_rules(found[0], found[1], path_type, rule.path, name) if found else []
            rules = fixed["spec"]["rules"]
            if not added or any(r in rules for r in added) or len(rules) + len(added) > _MAX_RULES:
                continue
            rules += added
            edited[key] = fixed
    if not edited:
        return None
    return Fix("route the canary cookie as ingress-nginx does (always: the canary, never: the main Service; after the "
               "header, before the weight) by two rules with a Cookie header match by regular expression in %s "
               "(ingress2gateway translated the canary's weight and header, not its cookie)" % _names(edited), tuple(edited.values()))


def header_pattern(b: Behaviour, objects: Objects) -> Fix | None:
    """canary-by-header with canary-by-header-pattern: the translation's `always` and `never` rules of the header
    replaced by one rule with a RegularExpression match of the pattern (unanchored, as Lua's ngx.re.match), where the
    pattern reads the same in Go's regexp; before any Cookie rule, so the header stays first."""
    if b.responsible != _NGINX + "canary-by-header":
        return None
    edited: dict[str, Obj] = {}
    for rule, canary, path_type in _canary_rules(b, objects):
        header, pattern = rule.annotations.get("canary-by-header", ""), rule.annotations.get("canary-by-header-pattern", "")
        go = as_go_regexp(pattern) if header and pattern and not rule.annotations.get("canary-by-header-value") else None
        if go is None:
            continue
        match = {"type": "RegularExpression", "name": header, "value": go}
        for key, route in _routes_of(objects, rule.host):
            fixed = edited.get(key) or objects.edited("HTTPRoute", key)
            found = _main_rule(fixed, path_type, rule.path, canary)
            rules = fixed["spec"]["rules"]
            if found is None or any(match in (m.get("headers") or []) for r in rules for m in r.get("matches") or []):
                continue
            stand_ins = [i for i, r in enumerate(rules) if any(
                (m.get("path") or {}) == {"type": path_type, "value": rule.path}
                and any(h.get("name", "").lower() == header.lower() for h in m.get("headers") or []) for m in r.get("matches") or [])]
            cookies = [i for i, r in enumerate(rules) if any(h.get("name") == "Cookie" for m in r.get("matches") or []
                                                             for h in m.get("headers") or [])]
            at = min(stand_ins + cookies + [len(rules)])
            kept = [r for i, r in enumerate(rules) if i not in stand_ins]
            fixed["spec"]["rules"] = kept[:at] + [_rule(found[0], path_type, rule.path, match, found[1])] + kept[at:]
            edited[key] = fixed
    if not edited:
        return None
    return Fix("route the canary header by its pattern as ingress-nginx does (a value the pattern matches: the canary; "
               "any other, always and never too, falls through to the cookie and the weight) by one rule with a "
               "RegularExpression header match in %s, in place of the always and never rules ingress2gateway wrote for it"
               % _names(edited), tuple(edited.values()))


def _routes_of(objects: Objects, host: str) -> list[tuple[str, Obj]]:
    return [(key, route) for key, route in sorted(objects.routes.items())
            if host in ((route.get("spec") or {}).get("hostnames") or [])]


def _names(edited: dict[str, Obj]) -> str:
    return ", ".join("HTTPRoute " + key_of(r) for r in edited.values())
