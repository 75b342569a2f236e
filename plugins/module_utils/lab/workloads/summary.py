# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the lab says back of parsed workloads (model.py): each one in the spec's own words (what
lab_workload and lab_definition return), and the reachability probe each Ingress gets when the lab names none."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.model import (
    DEFAULT_PORTS, HTTPRouteSpec, IngressPath, IngressSpec, Obj, RouteRule, Workload,
)


def _ingress_summary(ing: IngressSpec) -> Obj:
    def backend(p: IngressPath) -> Obj:
        return {k: v for k, v in (("service", p.service), ("port", p.port)) if v is not None}

    out: Obj = {"name": ing.name, "class": ing.ingress_class, "annotations": ing.annotations, "tls": [{"hosts": h} for h in ing.tls]}
    if len(ing.rules) == 1 and ing.default_backend is None:
        out["host"] = ing.host
    out["rules"] = [{"host": r.host, "paths": [dict({"path": p.path, "path_type": p.path_type}, **backend(p)) for p in r.paths]}
                    for r in ing.rules]
    if ing.default_backend is not None:
        out["default_backend"] = backend(ing.default_backend)
    return out


def _backend_summary(rule: RouteRule) -> list[Obj]:
    return [{"name": b.name, "port": b.port, "weight": b.weight} for b in rule.backend_refs]


def route_summary(route: HTTPRouteSpec) -> Obj:
    """An HTTPRoute as the lab writes it: the short form when it was written so, else its rules whole."""
    out: Obj = {"name": route.name,
                "parent_refs": [{"gateway": p.gateway, "section_name": p.section_name} for p in route.parent_refs],
                "hostnames": list(route.hostnames)}
    if route.short_form:
        out["paths"] = [{"path": p.path, "path_type": p.path_type} for p in route.paths]
        out["backend_refs"] = _backend_summary(route.rules[0])
        return out
    out["rules"] = [{"matches": [{"path": m.path.path, "path_type": m.path.path_type, "headers": dict(m.headers),
                                  "query_params": dict(m.query_params), "method": m.method} for m in rule.matches],
                     "filters": [dict(f) for f in rule.filters], "backend_refs": _backend_summary(rule)} for rule in route.rules]
    return out


def summary(wl: Workload) -> Obj:
    """What the module returns per workload."""
    out: Obj = {"name": wl.name, "namespace": wl.namespace, "app": wl.app, "image": wl.image, "replicas": wl.replicas,
                "rollout": {"readiness_probe": wl.rollout.readiness_probe, "pre_stop_sleep": wl.rollout.pre_stop_sleep,
                            "grace_period": wl.rollout.grace_period}}
    if wl.ports != list(DEFAULT_PORTS):
        out["ports"] = [{"name": p.name, "port": p.port} for p in wl.ports]
    ingresses = [_ingress_summary(ing) for ing in wl.ingresses]
    if ingresses:
        out["ingress"] = ingresses[0] if len(ingresses) == 1 else ingresses
    routes = [route_summary(route) for route in wl.httproutes]
    if routes:
        out["httproute"] = routes[0] if len(routes) == 1 else routes
    return out


# What a lab's own test apps answer, for the default reachability probes (lab_expect.reachability:
# each_ingress): the test app's nginx page, and the echo app's JSON (it names the path it received).
_DEFAULT_BODIES = {"web": "Welcome to nginx!", "echo": '"path":'}


def default_probes(workloads: list[Workload], test_app_image: str) -> list[dict[str, Any]]:
    """The probe of each Ingress when the lab names none: it must answer, and with the page its backends
    serve where the lab knows it (all the lab's test app, or all the echo app; other images: any answer)."""
    by_name = {(wl.namespace, wl.name): wl for wl in workloads}
    probes = []
    for wl in workloads:
        for ing in wl.ingresses:
            probe: dict[str, Any] = {"ingress": "%s/%s" % (wl.namespace, ing.name)}
            backends = [by_name.get((wl.namespace, p.service or wl.name), wl) for _at, p in ing.backends()]
            kinds = {b.app if b.app == "echo" or b.image == test_app_image else None for b in backends}
            if len(kinds) == 1 and None not in kinds:
                probe["body_regex"] = _DEFAULT_BODIES[kinds.pop() or "web"]
            probes.append(probe)
    return probes
