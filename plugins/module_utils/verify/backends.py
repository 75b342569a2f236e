# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Do the selected Ingresses' backends have somewhere to send traffic?

For every service backend (rules[].http.paths[].backend.service and spec.defaultBackend):
the Service exists, the port exists (by number or name), and its EndpointSlices hold
ready endpoints for that port. Existence is not enough: a Deployment scaled to 0 leaves
the Service and an empty slice, and ingress-nginx then answers 503.
"""
from __future__ import annotations

from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.backends import BackendRef, backends_of
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.endpoints import SERVICE_NAME_LABEL, ready_endpoints
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of

Obj = dict[str, Any]


def service_port(service: Obj, port: int | str | None) -> Obj | None:
    """The Service port a backend names: by number (spec.ports[].port) or by name."""
    for candidate in (service.get("spec") or {}).get("ports") or []:
        if (isinstance(port, int) and candidate.get("port") == port) or (isinstance(port, str) and candidate.get("name") == port):
            return dict(candidate)
    return None


def _ports_text(service: Obj) -> str:
    ports = (service.get("spec") or {}).get("ports") or []
    return ", ".join("%s/%s" % (p.get("name") or "(unnamed)", p.get("port")) for p in ports) or "none"


def check_backend(ingress_key: str, ref: BackendRef, service: Obj | None, slices: list[Obj]) -> Obj:
    """One backend's report; `problem` is None when it can take traffic (or is not checked)."""
    namespace = ingress_key.split("/", 1)[0]
    out: Obj = {"service": ref.service, "port": ref.port, "used_by": ref.where, "exists": service is not None,
                "port_found": False, "ready_endpoints": 0, "endpoints": [], "problem": None, "checked": True}
    if ref.service is None:
        out.update(checked=False, exists=None, port_found=None,
                   note="%s backend: not checked (only Service backends are)" % ref.resource)
        return out
    if service is None:
        out["problem"] = "Service %s/%s not found" % (namespace, ref.service)
        return out
    port = service_port(service, ref.port)
    if port is None:
        out["problem"] = "Service %s/%s has no port %s (ports: %s)" % (namespace, ref.service, ref.port, _ports_text(service))
        return out
    out["port_found"] = True
    if (service.get("spec") or {}).get("type") == "ExternalName":
        out.update(checked=False, note="ExternalName Service: no endpoints by design, not checked")
        return out
    ready, total = ready_endpoints(slices, port.get("name"))
    out.update(ready_endpoints=len(ready), endpoints=ready)
    if not ready:
        out["problem"] = "has 0 ready endpoints (Service exists, %d of %d pods ready)" % (len(ready), total)
    return out


def problem_text(backend: Obj) -> str:
    """'backend test:http has 0 ready endpoints (…)' / 'backend x:80: Service … not found'."""
    label = "%s:%s" % (backend["service"], backend["port"])
    problem = backend["problem"]
    sep = " " if problem.startswith("has ") else ": "
    return "backend %s%s%s" % (label, sep, problem)


def failure_text(ingress_key: str, backend: Obj) -> str:
    """The problem prefixed with the Ingress: 'two/test: backend test:http has 0 ready endpoints (…)'."""
    return "%s: %s" % (ingress_key, problem_text(backend))


def check_ingresses(
    ingresses: list[Obj],
    get_service: Callable[[str, str], Obj | None],
    list_slices: Callable[[str, str], list[Obj]],
) -> Obj:
    """The module's result: per Ingress its backends and passed, overall passed and failures."""
    report: Obj = {}
    failures: list[str] = []
    cache: dict[tuple[str, str], tuple[Obj | None, list[Obj]]] = {}
    for ingress in ingresses:
        key = key_of(ingress)
        namespace = key.split("/", 1)[0]
        backends = []
        for ref in backends_of(ingress):
            if ref.service is not None and (namespace, ref.service) not in cache:
                service = get_service(namespace, ref.service)
                cache[(namespace, ref.service)] = (service, list_slices(namespace, ref.service) if service else [])
            service, slices = cache.get((namespace, ref.service or ""), (None, []))
            backend = check_backend(key, ref, service, slices)
            backends.append(backend)
            if backend["problem"]:
                failures.append(failure_text(key, backend))
        problems = [problem_text(b) for b in backends if b["problem"]]
        report[key] = {"backends": backends, "passed": not problems, "reason": "; ".join(problems)}
    return {"ingresses": report, "failures": failures, "passed": not failures}


def check_cluster(client: Any, ingresses: list[Obj]) -> Obj:
    """check_ingresses() reading Services and EndpointSlices through the Client."""
    return check_ingresses(
        ingresses,
        lambda ns, name: client.get("v1", "Service", name, ns),
        lambda ns, name: client.list("discovery.k8s.io/v1", "EndpointSlice", namespace=ns,
                                     label_selector="%s=%s" % (SERVICE_NAME_LABEL, name)),
    )
