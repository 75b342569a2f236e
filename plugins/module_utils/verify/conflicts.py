# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Host/path overlaps between Ingresses, with the Ingress spec's matching rules.

- Exact matches the path string only; Prefix matches by path element (`/foo` covers
  `/foo/bar`, not `/foobar`) and ignores a trailing slash (`/foo/` == `/foo`).
  ImplementationSpecific is what the controller serving the Ingress makes of it: a plain
  string prefix for ingress-nginx (`/foo` covers `/foobar`: its controller type's
  string_prefix_path_types), else treated as Prefix.
- A wildcard host `*.example.com` matches exactly one label (`a.example.com`, not
  `example.com` nor `a.b.example.com`); an empty host matches any host.

An overlap is a *conflict* when routing is ambiguous:
- one controller serves both: an identical host and path (same path type). Other overlaps
  are settled by the spec's precedence (precise host before wildcard before any host,
  longer path first, Exact before Prefix);
- different or unknown controllers: any overlap on a named host, since that name's DNS
  (external-dns publishes every Ingress's status) can carry both controllers' addresses.
  Host-less rules are reached by each controller's own address, so they are not.
Every overlap is returned in `overlaps`, the ambiguous ones also in `conflicts`.

Which controller serves an Ingress is a simple claim model: spec.ingressClassName →
IngressClass.spec.controller, else the kubernetes.io/ingress.class annotation. Scope
(--watch-namespace) and --ingress-class flags are not read here (ingress_diagnose does
that), so "same controller" is "unknown" whenever the class alone cannot tell.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify import route_conflicts
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.controllers import find_workloads, gateway_controllers, servers_of
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.snapshot import read_gateway_api, read_state
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection, list_ingresses
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CLASS_ANNOTATION, DEFAULT_CLASS_ANNOTATION

Obj = dict[str, Any]


# ----------------------------------------------------------------- matching rules

def path_elements(path: str) -> list[str]:
    return [part for part in path.split("/") if part]


def effective_type(path_type: str | None) -> str:
    """Exact stays Exact; Prefix and ImplementationSpecific (ingress-nginx: prefix) are Prefix."""
    return "Exact" if path_type == "Exact" else "Prefix"


def normal_path(path: str, path_type: str | None) -> str:
    """The path as the matcher sees it: Prefix ignores trailing and repeated slashes."""
    if effective_type(path_type) == "Exact":
        return path
    return "/" + "/".join(path_elements(path))


def _covers(prefix: str, path: str) -> bool:
    """Does Prefix `prefix` match request path `path` (element-wise)?"""
    want = path_elements(prefix)
    return path_elements(path)[:len(want)] == want


def _string_overlap(prefix: str, path: str, path_type: str, string: bool) -> str | None:
    """A request path matched by the plain string prefix `prefix` and by the other rule."""
    if string or path_type == "Exact":
        if path.startswith(prefix):
            return path
        return prefix if string and prefix.startswith(path) else None
    normal = normal_path(path, path_type)
    if normal.startswith(prefix):
        return normal
    return prefix if _covers(normal, prefix) else None


def path_overlap(path_a: str, type_a: str | None, path_b: str, type_b: str | None,
                 string_a: bool = False, string_b: bool = False) -> str | None:
    """A request path both rules match, or None. string_a/string_b: that rule's (non-Exact)
    path is matched as a plain string prefix by the controller serving it."""
    ta, tb = effective_type(type_a), effective_type(type_b)
    if string_a and ta != "Exact":
        return _string_overlap(path_a, path_b, tb, string_b and tb != "Exact")
    if string_b and tb != "Exact":
        return _string_overlap(path_b, path_a, ta, False)
    if ta == "Exact" and tb == "Exact":
        return path_a if path_a == path_b else None
    if ta == "Exact":
        return path_a if _covers(path_b, path_a) else None
    if tb == "Exact":
        return path_b if _covers(path_a, path_b) else None
    na, nb = normal_path(path_a, ta), normal_path(path_b, tb)
    if _covers(na, nb):
        return nb
    if _covers(nb, na):
        return na
    return None


def _example(host: str) -> str:
    return "x" + host[1:] if host.startswith("*.") else host


def _wild_matches(wildcard: str, host: str) -> bool:
    first, dot, rest = host.partition(".")
    return bool(first) and bool(dot) and rest == wildcard[2:]


def host_overlap(host_a: str | None, host_b: str | None) -> str | None:
    """A Host both rules match ("" = any host, when both are empty), or None."""
    a, b = (host_a or "").lower(), (host_b or "").lower()
    if not a or not b:
        return _example(a or b)
    if a == b:
        return _example(a)
    if a.startswith("*.") and not b.startswith("*.") and _wild_matches(a, b):
        return b
    if b.startswith("*.") and not a.startswith("*.") and _wild_matches(b, a):
        return a
    return None


# ----------------------------------------------------------------- claims

@dataclass(frozen=True)
class Claim:
    key: str | None  # "controller:<spec.controller>" or "annotation:<value>"; None when unknown
    type: str  # a registered controller type (controllers/registry.py) or unknown
    text: str


def claim_of(ingress: Obj, classes: dict[str, Obj]) -> Claim:
    """Which controller (by class) serves the Ingress, as far as the class says."""
    spec, meta = ingress.get("spec") or {}, ingress.get("metadata") or {}
    class_name = spec.get("ingressClassName")
    annotation = (meta.get("annotations") or {}).get(CLASS_ANNOTATION)
    if not class_name and not annotation:
        defaults = [n for n, c in classes.items()
                    if ((c.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) == "true"]
        if len(defaults) != 1:
            return Claim(None, "unknown", "no class (served by controllers that watch class-less Ingresses)")
        class_name = defaults[0]
    if class_name:
        ingress_class = classes.get(class_name)
        if ingress_class is None:
            return Claim(None, "unknown", "IngressClass %s (not found)" % class_name)
        controller = str((ingress_class.get("spec") or {}).get("controller") or "")
        return Claim("controller:" + controller, registry.type_of_class(controller), "IngressClass %s (controller %s)" % (class_name, controller))
    return Claim("annotation:" + str(annotation), registry.type_of_class(str(annotation)), "%s: %s annotation" % (CLASS_ANNOTATION, annotation))


def same_controller(a: Claim, b: Claim, same_namespace: bool) -> str:
    """yes | no | unknown. The same annotation value only tells when both are in one
    namespace: namespace-scoped controllers with the same --ingress-class split the rest."""
    if a.key is None or b.key is None:
        return "unknown"
    if a.key.startswith("controller:") and b.key.startswith("controller:"):
        return "yes" if a.key == b.key else "no"
    if a.key.startswith("annotation:") and b.key.startswith("annotation:"):
        if a.key != b.key:
            return "no"
        return "yes" if same_namespace else "unknown"
    return "unknown"


# ----------------------------------------------------------------- overlaps

@dataclass(frozen=True)
class Route:
    ingress: Obj
    host: str
    path: str
    path_type: str
    backend: str

    @property
    def key(self) -> str:
        return key_of(self.ingress)


def _backend_text(backend: Obj | None) -> str:
    service = (backend or {}).get("service")
    if service:
        port = service.get("port") or {}
        return "%s:%s" % (service.get("name"), port.get("number") if port.get("number") is not None else port.get("name"))
    resource = (backend or {}).get("resource")
    return "%s %s" % (resource.get("kind"), resource.get("name")) if resource else "(none)"


def routes_of(ingress: Obj) -> list[Route]:
    out = []
    for rule in (ingress.get("spec") or {}).get("rules") or []:
        for path in (rule.get("http") or {}).get("paths") or []:
            out.append(Route(ingress, str(rule.get("host") or ""), str(path.get("path") or "/"),
                             str(path.get("pathType") or "ImplementationSpecific"), _backend_text(path.get("backend"))))
    return out


def _winner_by_precedence(a: Route, b: Route) -> Route:
    """The spec's precedence for one controller: precise host, then longer path, then Exact."""
    def rank(r: Route) -> tuple[int, int, int]:
        host_rank = 0 if not r.host else (1 if r.host.startswith("*.") else 2)
        return host_rank, len(path_elements(r.path)), 1 if effective_type(r.path_type) == "Exact" else 0
    return a if rank(a) >= rank(b) else b


def _rule_text(r: Route) -> str:
    return "%s %s %s" % (r.host or "(any host)", r.path, r.path_type)


def _one_controller(a: Route, b: Route, tie: bool, kind: str, example: str) -> str:
    """What one controller serving both does."""
    if not tie:
        win = _winner_by_precedence(a, b)
        lose = b if win is a else a
        return "resolved by precedence (precise host, longer path, Exact before Prefix): for %s, %s's rule (%s) " \
               "is chosen over %s's (%s)" % (example, win.key, _rule_text(win), lose.key, _rule_text(lose))
    part = registry.ingress_part(kind)
    if part is not None:
        return part.on_duplicate(a, b)
    return "undefined (controller type %s)" % kind


def behaviour(a: Route, b: Route, tie: bool, same: str, kind: str, example: str) -> str:
    """What happens to a request for `example` (pairwise: a third Ingress may still win)."""
    one = _one_controller(a, b, tie, kind, example)
    if same == "yes":
        return one
    if a.host and b.host:
        text = ("the name %s can point at both Ingresses' addresses (external-dns publishes each status), so clients "
                "land on either controller" % example.split("/", 1)[0])
        return text if same == "no" else text + "; if one controller serves both: " + one
    text = "a host-less rule: clients reach each Ingress through its own controller's address"
    return text if same == "no" else text + "; a conflict only if one controller serves both: " + one


def is_ambiguous(a: Route, b: Route, tie: bool, same: str) -> bool:
    """One controller: only an identical host+path is ambiguous (precedence settles the rest).
    Different or unknown controllers: any overlap on a named host is, since that name's DNS can
    carry both addresses; host-less rules are reached by address, so they are not."""
    if same == "yes":
        return tie
    return bool(a.host) and bool(b.host)


def _same_server(a: str, b: str, same_namespace: bool, claims: dict[str, Claim],
                 served_by: dict[str, list[str]] | None) -> str:
    """yes | no | unknown: from the controllers found in the cluster when both Ingresses have
    one (scope, class rules and RBAC, as ingress_diagnose derives them), else from the classes."""
    if served_by and served_by.get(a) and served_by.get(b):
        return "yes" if set(served_by[a]) & set(served_by[b]) else "no"
    return same_controller(claims[a], claims[b], same_namespace)


def _string_prefix(r: Route, claims: dict[str, Claim], served_by: dict[str, list[str]] | None,
                   server_types: dict[str, str] | None) -> bool:
    """Is this route's path a plain string prefix for the controllers serving it (those found in
    the cluster when known, else the one its class names)? Only when every one of them says so."""
    found = (served_by or {}).get(r.key) or []
    types = {(server_types or {}).get(ref, "unknown") for ref in found} if found else {claims[r.key].type}
    parts = [registry.ingress_part(t) for t in types]
    return bool(parts) and all(p is not None and str(r.path_type) in p.string_prefix_path_types for p in parts)


def overlap_of(a: Route, b: Route, claims: dict[str, Claim], served_by: dict[str, list[str]] | None = None,
               server_types: dict[str, str] | None = None) -> Obj | None:
    host = host_overlap(a.host, b.host)
    if host is None:
        return None
    path = path_overlap(a.path, a.path_type, b.path, b.path_type,
                        _string_prefix(a, claims, served_by, server_types), _string_prefix(b, claims, served_by, server_types))
    if path is None:
        return None
    tie = a.host.lower() == b.host.lower() and effective_type(a.path_type) == effective_type(b.path_type) \
        and normal_path(a.path, a.path_type) == normal_path(b.path, b.path_type)
    ca, cb = claims[a.key], claims[b.key]
    same = _same_server(a.key, b.key, a.ingress["metadata"].get("namespace") == b.ingress["metadata"].get("namespace"),
                        claims, served_by)
    kind = ca.type if ca.type == cb.type else "unknown"
    # The controllers found serving both decide what happens, whatever the class suggests
    # (Traefik's ingress-nginx provider serves class nginx).
    common = set((served_by or {}).get(a.key, [])) & set((served_by or {}).get(b.key, []))
    common_types = {(server_types or {}).get(ref, "unknown") for ref in common}
    if len(common_types) == 1:
        kind = common_types.pop()
    found: Obj = {
        "ingresses": [a.key, b.key],
        "host": host,
        "path": path,
        "rules": [{"ingress": r.key, "host": r.host, "path": r.path, "path_type": r.path_type, "backend": r.backend,
                   "class": claims[r.key].text, "created": str(r.ingress["metadata"].get("creationTimestamp") or "")} for r in (a, b)],
        "path_types": [a.path_type, b.path_type],
        "identical": tie,
        "same_controller": same,
        "served_by": {r.key: (served_by or {}).get(r.key, []) for r in (a, b)},
        "controller": kind if same != "no" else "%s / %s" % (ca.type, cb.type),
        "behaviour": behaviour(a, b, tie, same, kind, "%s%s" % (host or "any host ", path)),
        "ambiguous": is_ambiguous(a, b, tie, same),
        "message": "%s and %s both match %s%s (%s vs %s; same controller: %s)" % (
            a.key, b.key, host or "any host ", path, a.path_type, b.path_type, same),
    }
    partner = _companion(a, b, tie, same, kind)
    if partner:
        found.update(behaviour=partner, ambiguous=False)
    found["reason"] = "%s: %s" % (found["message"], found["behaviour"])
    return found


def _companion(a: Route, b: Route, tie: bool, same: str, kind: str) -> str:
    """Why the one controller serving both does not make an identical host+path a conflict, or ""."""
    part = registry.ingress_part(kind)
    if not tie or same != "yes" or part is None:
        return ""
    return part.companion(a.ingress, b.ingress) if part.companion else ""


def find_conflicts(ingresses: list[Obj], ingress_classes: list[Obj], selected: set[str] | None = None,
                   served_by: dict[str, list[str]] | None = None, server_types: dict[str, str] | None = None) -> Obj:
    """The module's result: `conflicts` (ambiguous), `overlaps` (all), `passed`. With
    `selected` (namespace/name keys), only overlaps involving one of those are reported.
    `served_by` maps namespace/name to the controllers that route it, when known, and
    `server_types` those controllers to their type."""
    classes = {str(c["metadata"]["name"]): c for c in ingress_classes}
    claims = {key_of(i): claim_of(i, classes) for i in ingresses}
    shown = {k: c for k, c in claims.items() if selected is None or k in selected}
    routes = [r for i in ingresses for r in routes_of(i)]
    overlaps: list[Obj] = []
    seen: set[tuple[str, str, str, str]] = set()
    for n, a in enumerate(routes):
        for b in routes[n + 1:]:
            if a.key == b.key or (selected is not None and a.key not in selected and b.key not in selected):
                continue  # within one Ingress the controller merges its own paths
            found = overlap_of(a, b, claims, served_by, server_types)
            if found is None:
                continue
            dedupe = (a.key, b.key, found["host"], found["path"])
            if dedupe not in seen:
                seen.add(dedupe)
                overlaps.append(found)
    conflicts = [o for o in overlaps if o["ambiguous"]]
    return {"conflicts": conflicts, "overlaps": overlaps, "passed": not conflicts,
            "claims": {k: {"class": c.text, "controller": c.type, "served_by": (served_by or {}).get(k, [])}
                       for k, c in shown.items()}}


def check_cluster(client: Any, selection: Selection) -> Obj:
    """find_conflicts() for the selected Ingresses against every Ingress in the cluster (a
    conflict with an Ingress outside the selection is still a conflict); where the cluster serves
    Gateway API, also `route_conflicts` (route_conflicts.py) of routes in the selected namespaces."""
    state = read_gateway_api(client, read_state(client, Selection()))  # every Ingress, the controllers that serve them
    found = find_workloads(state)
    controllers = [c for f in found for c in f.controllers]
    served_by = {key_of(i): servers_of(i, controllers) for i in state.ingresses}
    selected = {key_of(i) for i in list_ingresses(client, selection)}
    result = find_conflicts(state.ingresses, state.ingress_classes, selected, served_by, {c.ref: c.type for c in controllers})
    routes = [c for c in route_conflicts.find(state, gateway_controllers(state, found))
              if not selection.namespaces or any(r.split("/")[0] in selection.namespaces for r in c["routes"])]
    result["route_conflicts"] = routes
    result["passed"] = result["passed"] and not routes
    return result
