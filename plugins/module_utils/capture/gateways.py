# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A cluster's Gateway API setup as the lab's: its GatewayClasses and Gateways (the listeners the lab can
build) as lab_gateways, and each HTTPRoute (the matches, filters and Service backends the lab can build) on
the stand-in workload of its first backend Service (stand_ins.py). What the lab cannot build is said."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.capture.stand_ins import stand_in
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ClusterState, meta
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import GROUP as GATEWAY_GROUP
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import PROTOCOLS as GATEWAY_PROTOCOLS
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.model import ROUTE_FILTERS, ROUTE_PATH_TYPES
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import ingress_mappings

Obj = dict[str, Any]


def _listener(ln: Obj, where: str, notes: list[str]) -> Obj | None:
    protocol = str(ln.get("protocol") or "HTTP")
    if protocol not in GATEWAY_PROTOCOLS:
        notes.append("%s listener %s: protocol %s is not built by the lab; not reproduced" % (where, ln.get("name"), protocol))
        return None
    out: Obj = {"name": ln.get("name"), "port": ln.get("port"), "protocol": protocol}
    if ln.get("hostname"):
        out["hostname"] = ln["hostname"]
    if protocol == "HTTPS":
        notes.append("%s listener %s: its certificate stays in the cluster; the lab generates one of its own" % (where, ln.get("name")))
    namespaces = ((ln.get("allowedRoutes") or {}).get("namespaces") or {})
    source = namespaces.get("from", "Same")
    if source == "Selector":
        selector = namespaces.get("selector") or {}
        if selector.get("matchExpressions"):
            notes.append("%s listener %s: its namespace selector's matchExpressions are not reproduced (matchLabels are)"
                         % (where, ln.get("name")))
        out["allowed_routes"] = {"namespaces": "Selector", "selector": dict(selector.get("matchLabels") or {})}
    else:
        out["allowed_routes"] = source
    return out


def _route_match(match: Obj, where: str, notes: list[str]) -> Obj | None:
    """A route match as the lab writes it, or None (said) when it has a part the lab cannot build."""
    path = match.get("path") or {"type": "PathPrefix", "value": "/"}
    if path.get("type", "PathPrefix") not in ROUTE_PATH_TYPES:
        notes.append("%s: a %s path match (%s) is not reproduced" % (where, path.get("type"), path.get("value")))
        return None
    out: Obj = {"path": path.get("value", "/"), "path_type": path.get("type", "PathPrefix")}
    for field_name, key in (("headers", "headers"), ("queryParams", "query_params")):
        items = match.get(field_name) or []
        inexact = [str(h.get("name")) for h in items if h.get("type", "Exact") != "Exact"]
        if inexact:
            notes.append("%s: a match on %s %s by regular expression is not reproduced" % (where, field_name, ", ".join(inexact)))
            return None
        if items:
            out[key] = {str(h.get("name")): str(h.get("value")) for h in items}
    if match.get("method"):
        out["method"] = match["method"]
    return out


def _route_rule(rule: Obj, ns: str, where: str, notes: list[str]) -> Obj | None:
    """A route rule as the lab writes it (matches, the filters the lab builds, Service backends of the
    route's namespace), or None (said) when none of its matches can be built."""
    matches = [m for m in (_route_match(item, where, notes) for item in rule.get("matches") or [{}]) if m]
    if not matches:
        notes.append("%s: no match the lab can build; the rule is not reproduced" % where)
        return None
    filters = []
    for item in rule.get("filters") or []:
        own = ROUTE_FILTERS.get(str(item.get("type")))
        if own is None or not isinstance(item.get(own), dict):
            notes.append("%s: its %s filter is not reproduced" % (where, item.get("type")))
            continue
        filters.append({"type": item["type"], own: item[own]})
    backends = []
    for ref in rule.get("backendRefs") or []:
        if ref.get("kind", "Service") != "Service" or ref.get("group", "") != "" or ref.get("namespace", ns) != ns:
            notes.append("%s: a backend that is not a Service of its namespace (%s) is not reproduced" % (where, ref.get("name")))
            continue
        if ref.get("filters"):
            notes.append("%s: the filters of backend %s are not reproduced" % (where, ref.get("name")))
        backend: Obj = {"name": ref.get("name")}
        if isinstance(ref.get("port"), int) and ref["port"] != 80:  # the lab's default port
            backend["port"] = ref["port"]
        if ref.get("weight") is not None:
            backend["weight"] = ref["weight"]
        backends.append(backend)
    return {"matches": matches, "filters": filters, "backend_refs": backends}


def _route_spec(route: Obj, where: str, notes: list[str]) -> Obj | None:
    """The lab's httproute of ROUTE, every rule kept (the short form where it says the same), or None."""
    ns = str(meta(route).get("namespace"))
    spec = route.get("spec") or {}
    parents = []
    for ref in spec.get("parentRefs") or []:
        if ref.get("kind", "Gateway") != "Gateway" or ref.get("group", GATEWAY_GROUP) != GATEWAY_GROUP:
            notes.append("%s: a parent of kind %s is not reproduced" % (where, ref.get("kind")))
            continue
        parent: Obj = {"gateway": "%s/%s" % (ref.get("namespace") or ns, ref.get("name"))}
        if ref.get("sectionName"):
            parent["section_name"] = ref["sectionName"]
        if ref.get("port") is not None:
            notes.append("%s: its parentRef's port %s is not reproduced" % (where, ref["port"]))
        parents.append(parent)
    rules = [r for r in (_route_rule(rule, ns, "%s rule %d" % (where, i), notes)
                         for i, rule in enumerate(spec.get("rules") or [{}])) if r]
    if not parents or not rules:
        notes.append("%s: no Gateway parent or rule the lab can build; not reproduced" % where)
        return None
    out: Obj = {"name": meta(route).get("name"), "parent_refs": parents}
    if spec.get("hostnames"):
        out["hostnames"] = list(spec["hostnames"])
    (first, *more) = rules
    if not more and not first["filters"] and first["backend_refs"] and all(set(m) <= {"path", "path_type"} for m in first["matches"]):
        out["paths"], out["backend_refs"] = first["matches"], first["backend_refs"]  # the short form: one rule of paths
    else:
        out["rules"] = [{k: v for k, v in r.items() if v or k == "backend_refs"} for r in rules]
    return out


def _route_services(spec: Obj) -> list[Obj]:
    """The backends a captured httproute names, in order (the short form's, or every rule's)."""
    return list(spec.get("backend_refs") or []) + [b for rule in spec.get("rules") or [] for b in rule["backend_refs"]]


def capture_gateway_api(state: ClusterState, workloads: list[Obj]) -> tuple[Obj, list[str]]:
    """lab_gateways (classes and Gateways) from the cluster, and each HTTPRoute set on the stand-in
    workload of its first backend Service (one made when no Ingress's stand-in is that Service, and
    stand-ins for its other backends); the notes say what the lab cannot build."""
    notes: list[str] = []
    classes = [{"name": str(meta(c).get("name")), "controller_name": str((c.get("spec") or {}).get("controllerName") or ""),
                "labels": dict(meta(c).get("labels") or {})} for c in sorted(state.gateway_classes, key=lambda c: str(meta(c).get("name")))]
    gateways = []
    for gw in sorted(state.gateways, key=key_of):
        where = "Gateway %s" % key_of(gw)
        listeners = [ln for ln in (_listener(item, where, notes) for item in (gw.get("spec") or {}).get("listeners") or []) if ln]
        if not listeners:
            notes.append("%s: no listener the lab can build; not reproduced" % where)
            continue
        gateways.append({"namespace": str(meta(gw).get("namespace")), "name": str(meta(gw).get("name")),
                         "class": str((gw.get("spec") or {}).get("gatewayClassName")), "listeners": listeners})
    by_service = {(w["namespace"], w["name"]): w for w in workloads}
    for route in sorted(state.http_routes, key=key_of):
        where = "HTTPRoute %s" % key_of(route)
        spec = _route_spec(route, where, notes)
        if spec is None:
            continue
        ns = str(meta(route).get("namespace"))
        for backend in _route_services(spec):
            if (ns, backend["name"]) not in by_service:
                by_service[(ns, backend["name"])], _why = stand_in(state, ns, backend["name"], [backend.get("port", 80)], where, notes)
                workloads.append(by_service[(ns, backend["name"])])
        named = [b["name"] for b in _route_services(spec)]
        owners = [by_service[(ns, named[0])]] if named else [w for w in workloads if w["namespace"] == ns][:1]
        if not owners:
            notes.append("%s: it names no Service and its namespace has no stand-in to carry it; not reproduced" % where)
            continue
        owner = owners[0]
        if spec.get("backend_refs") == [{"name": owner["name"]}]:
            del spec["backend_refs"]  # the workload's own Service, the lab's default
        for rule in spec.get("rules") or []:
            if rule["backend_refs"] == [{"name": owner["name"]}]:
                del rule["backend_refs"]
        owner["httproute"] = ingress_mappings(owner.get("httproute")) + [spec]
    for wl in workloads:  # one route: the mapping form
        if isinstance(wl.get("httproute"), list) and len(wl["httproute"]) == 1:
            wl["httproute"] = wl["httproute"][0]
    return {"classes": classes, "gateways": gateways}, notes
