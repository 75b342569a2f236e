# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The canary cookie on a Gateway API target. ingress2gateway folds a canary Ingress into the main route's rules (its
weight as backendRef weights, its header as rules with a header match) but leaves its canary-by-cookie out, so a
request with the cookie takes the weight's rule. ingress-nginx's balancer reads the cookie after the header and
before the weight (`always`: the canary, `never`: the main Service). Two rules keep it, added to the route after its
own rules: a Cookie header match by regular expression each, on the main path, with the rule's filters. Traefik ranks
a route's rules by their matches and then by their place (provider/kubernetes/gateway, loadHTTPRoute: priority +
len(rules) - index; each header match adds 100), so they rank above the weight's rule and below the header's."""
from __future__ import annotations

import copy
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Behaviour, Fix, Objects
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.common import cookie_regexp

Obj = dict[str, Any]
_RESPONSIBLE = "nginx.ingress.kubernetes.io/canary-by-cookie"
_MAX_RULES = 16  # HTTPRoute spec.rules: maxItems
_PATH_TYPES = {"Exact": "Exact", "Prefix": "PathPrefix", "ImplementationSpecific": "PathPrefix"}


def _service_of(ingress: Obj, host: str, path: str) -> str:
    """The Service INGRESS's rule for HOST sends PATH to ("" when it has none)."""
    for rule in (ingress.get("spec") or {}).get("rules") or []:
        if str(rule.get("host") or "") != host:
            continue
        for p in (rule.get("http") or {}).get("paths") or []:
            if p.get("path") == path:
                return str(((p.get("backend") or {}).get("service") or {}).get("name") or "")
    return ""


def _main_rule(route: Obj, path_type: str, path: str, canary: str) -> Obj | None:
    """The route's rule the translation made of the main path: that path, no header match, the canary among its
    backendRefs beside another Service (the weight's)."""
    found: list[Obj] = (route.get("spec") or {}).get("rules") or []
    for rule in found:
        names = [str(ref.get("name")) for ref in rule.get("backendRefs") or []]
        if canary in names and any(n != canary for n in names) and any(
                not m.get("headers") and (m.get("path") or {}) == {"type": path_type, "value": path} for m in rule.get("matches") or []):
            return rule
    return None


def _cookie_rules(main: Obj, path_type: str, path: str, cookie: str, canary: str) -> list[Obj]:
    refs = {str(ref.get("name")): {k: v for k, v in ref.items() if k != "weight"} for ref in main.get("backendRefs") or []}
    own = next(ref for name, ref in refs.items() if name != canary)
    out = []
    for word, ref in (("always", refs[canary]), ("never", own)):
        rule: Obj = {"matches": [{"path": {"type": path_type, "value": path},
                                  "headers": [{"type": "RegularExpression", "name": "Cookie", "value": cookie_regexp(cookie, word)}]}],
                     "backendRefs": [copy.deepcopy(ref)]}
        if main.get("filters"):
            rule["filters"] = copy.deepcopy(main["filters"])
        out.append(rule)
    return out


def cookie(b: Behaviour, objects: Objects) -> Fix | None:
    """canary-by-cookie: the cookie's two rules in each route of the canary's host that has its main path's rule."""
    if b.responsible != _RESPONSIBLE:
        return None
    edited: dict[str, Obj] = {}
    for rule in {(r.ingress, r.host, r.path): r for r in b.rules if r is not None}.values():
        name, ingress = rule.annotations.get("canary-by-cookie", ""), objects.ingresses.get(rule.ingress)
        canary = _service_of(ingress or {}, rule.host, rule.path)
        path_type = _PATH_TYPES.get(rule.path_type)
        if not name or not canary or path_type is None or rule.regex:
            continue
        for key, route in sorted(objects.routes.items()):
            if rule.host not in ((route.get("spec") or {}).get("hostnames") or []):
                continue
            fixed = edited.get(key) or objects.edited("HTTPRoute", key)
            main = _main_rule(fixed, path_type, rule.path, canary)
            added = _cookie_rules(main, path_type, rule.path, name, canary) if main is not None else []
            rules = fixed["spec"]["rules"]
            if not added or any(r in rules for r in added) or len(rules) + len(added) > _MAX_RULES:
                continue
            rules += added
            edited[key] = fixed
    if not edited:
        return None
    return Fix("route the canary cookie as ingress-nginx does (always: the canary, never: the main Service; after the "
               "header, before the weight) by two rules with a Cookie header match by regular expression in %s "
               "(ingress2gateway translated the canary's weight and header, not its cookie)" % ", ".join(
                   "HTTPRoute " + key_of(r) for r in edited.values()), tuple(edited.values()))
