# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Does every controller replica route each selected Ingress backend to its ready endpoints?

The API side (ingress_backends) can be healthy while a replica's data plane routes to pods that
are gone: a controller whose sync stopped keeps its own endpoint list. So each Running pod of
each controller that serves an Ingress is read the way its type reads it (the type's
DataPlaneReader: ingress-nginx's Lua backends by exec, Traefik's API through the pod proxy),
and what it routes a backend to is compared with the ready endpoints of the backend's
EndpointSlices. Findings, per pod, since replicas diverge:
- stale: it routes to an address:port that is not a ready endpoint (since when it was last
  seen ready, when a history says);
- missing: a ready endpoint it does not route to;
- unread: the pod could not be read (why, and how to make it readable); never a silent pass.
A backend routed to the Service's ClusterIP (ingress-nginx's service-upstream, Traefik's
nativeLB) leaves the choice of endpoint to kube-proxy: it is reported as such, neither stale
nor missing. The comparison is pure (`check`); `run` lists the objects and reads the pods.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import meta
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import (
    BackendKey,
    Reading,
    Upstream,
    target,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.podaccess import ClientPodAccess
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.backends import BackendRef, backends_of
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.backends import service_port
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.controllers import FoundWorkload, find_workloads, servers_of
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.endpoints import (
    SERVICE_NAME_LABEL, SliceEndpoint, slice_endpoints)
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.snapshot import read_state
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of

Obj = dict[str, Any]

STALE = "stale"
MISSING = "missing"
UNREAD = "unread"
KINDS = (STALE, MISSING, UNREAD)

# namespace/service → address:port → when it was last seen ready (the caller's history).
LastReady = Mapping[str, Mapping[str, str]]


# ---------------------------------------------------------------- the API side


@dataclass(frozen=True)
class ApiSide:
    """What the API says a backend should route to."""

    label: str  # service:port, as the Ingress names it
    endpoints: tuple[SliceEndpoint, ...] = ()
    cluster_targets: tuple[str, ...] = ()  # ClusterIP:port for each of the Service's ClusterIPs
    note: str = ""  # why there is nothing to compare (no Service, no port, ExternalName)
    external: bool = False  # an ExternalName Service: routed to a name, not to endpoints

    @property
    def ready(self) -> dict[str, SliceEndpoint]:
        return {e.target: e for e in self.endpoints if e.ready}


def api_side(namespace: str, ref: BackendRef, service: Obj | None, slices: list[Obj]) -> ApiSide:
    label = ref.label
    if service is None:
        return ApiSide(label, note="Service %s/%s not found" % (namespace, ref.service))
    port = service_port(service, ref.port)
    if port is None:
        return ApiSide(label, note="Service %s/%s has no port %s" % (namespace, ref.service, ref.port))
    spec = service.get("spec") or {}
    if spec.get("type") == "ExternalName":
        return ApiSide(label, note="ExternalName Service: no endpoints to compare", external=True)
    ips = [ip for ip in (spec.get("clusterIPs") or [spec.get("clusterIP")]) if ip and ip != "None"]
    return ApiSide(label, tuple(slice_endpoints(slices, port.get("name"))), tuple(target(ip, port.get("port")) for ip in ips))


# ---------------------------------------------------------------- one backend, one pod


@dataclass
class Comparison:
    """One backend as one pod's data plane routes it."""

    routed: list[Upstream] | None  # None: the type does not route it, or no name matched
    stale: list[tuple[Upstream, str]] = field(default_factory=list)  # with what the API says of it
    missing: list[SliceEndpoint] = field(default_factory=list)
    via_cluster_ip: bool = False
    draining: list[str] = field(default_factory=list)
    note: str = ""


def compare(reading: Reading, names: tuple[str, ...], api: ApiSide) -> Comparison:
    """What the data plane routes the backend to (under the first of NAMES it holds) against the
    ready endpoints. A fenced upstream that is still a serving endpoint only drains its open
    connections: not stale."""
    name = next((n for n in names if n in reading.backends), None)
    ready = api.ready
    if name is None:
        out = Comparison(routed=None, note="no backend %s in its data plane" % " or ".join(names))
        out.missing = list(ready.values())
        return out
    routed = list(reading.backends[name])
    out = Comparison(routed=routed)
    if api.external:
        out.note = api.note
        return out
    by_target = {e.target: e for e in api.endpoints}
    for upstream in routed:
        t = upstream.target
        if t in ready:
            continue
        if t in api.cluster_targets:
            out.via_cluster_ip = True
            continue
        known = by_target.get(t)
        if upstream.fenced and known is not None and known.serving:
            out.draining.append(t)
            continue
        if known is None:
            out.stale.append((upstream, "not in any EndpointSlice of the Service"))
        else:
            out.stale.append((upstream, "terminating" if known.terminating else "not ready"))
    if not out.via_cluster_ip:
        routed_targets = {u.target for u in routed}
        out.missing = [e for t, e in sorted(ready.items()) if t not in routed_targets]
    if api.note:
        out.note = api.note
    return out


# ---------------------------------------------------------------- every pod


@dataclass(frozen=True)
class Served:
    """One Ingress backend one controller of a workload serves."""

    controller: str
    settings: Mapping[str, Any]
    ingress: str
    key: BackendKey
    api: ApiSide


def _finding(kind: str, pod: str, found: FoundWorkload, controller: str, message: str, **extra: Any) -> Obj:
    return dict({"kind": kind, "pod": pod, "controller": controller, "type": found.type.name, "message": message}, **extra)


def _served(found: FoundWorkload, ingresses: list[Obj], api_of: Callable[[str, BackendRef], ApiSide]) -> list[Served]:
    out = []
    for ingress in ingresses:
        servers = servers_of(ingress, found.controllers)
        ns, name = str(meta(ingress).get("namespace")), str(meta(ingress).get("name"))
        has_rules = bool((ingress.get("spec") or {}).get("rules"))
        for controller in found.controllers:
            if controller.ref not in servers:
                continue
            for ref in backends_of(ingress):
                if ref.service is None or ref.port is None:
                    continue  # a resource backend has no endpoints
                key = BackendKey(ns, name, ref.service, ref.port, ref.where == "defaultBackend", has_rules)
                out.append(Served(controller.ref, controller.settings, key_of(ingress), key, api_of(ns, ref)))
    return out


def _pod_report(found: FoundWorkload, pod: Obj, served: list[Served], reading: Reading | None,
                last_ready: LastReady) -> tuple[Obj, list[Obj]]:
    pod_key = key_of(pod)
    phase = str((pod.get("status") or {}).get("phase") or "Unknown")
    report: Obj = {"workload": key_of(found.workload), "type": found.type.name, "phase": phase,
                   "source": reading.source if reading else None, "unread": None, "backends": []}
    controllers = sorted({s.controller for s in served})
    if reading is None or reading.unread:
        why = "pod not Running (phase %s)" % phase if reading is None else reading.unread
        fix = "" if reading is None else reading.fix
        report.update(unread=why, fix=fix)
        # What it serves, not compared: the rows a window's timeline follows for this pod.
        report["backends"] = [{"ingress": s.ingress, "controller": s.controller, "backend": s.api.label,
                               "names": list(found.type.dataplane.names(s.settings, s.key)[0]), "ready": sorted(s.api.ready),
                               "routed": None, "stale": [], "missing": [], "via_cluster_ip": False, "draining": [],
                               "note": "not read"} for s in served]
        ingresses = sorted({s.ingress for s in served})
        return report, [_finding(UNREAD, pod_key, found, c, "%s (%s) could not be read: %s%s" % (
            pod_key, found.type.name, why, "; %s" % fix if fix else ""), reason=why, fix=fix, ingresses=ingresses)
            for c in controllers]
    findings: list[Obj] = []
    for s in served:
        names, why_none = found.type.dataplane.names(s.settings, s.key)
        entry: Obj = {"ingress": s.ingress, "controller": s.controller, "backend": s.api.label, "names": list(names),
                      "ready": sorted(s.api.ready)}
        if not names:
            entry.update(routed=None, note=why_none)
            report["backends"].append(entry)
            continue
        result = compare(reading, names, s.api)
        entry.update(routed=None if result.routed is None else [u.target for u in result.routed],
                     stale=[u.target for u, _why in result.stale], missing=[e.target for e in result.missing],
                     via_cluster_ip=result.via_cluster_ip, draining=result.draining, note=result.note)
        report["backends"].append(entry)
        history = last_ready.get("%s/%s" % (s.key.namespace, s.key.service)) or {}
        for upstream, what in result.stale:
            since = history.get(upstream.target)
            findings.append(_finding(
                STALE, pod_key, found, s.controller,
                "%s routes %s backend %s to %s, which is not a ready endpoint (%s%s)" % (
                    pod_key, s.ingress, s.api.label, upstream.target, what,
                    "; last seen ready at %s" % since if since else ""),
                ingress=s.ingress, backend=s.api.label, name=names[0], address=upstream.target, endpoint=what, since=since))
        for endpoint in result.missing:
            findings.append(_finding(
                MISSING, pod_key, found, s.controller,
                "%s does not route %s backend %s to the ready endpoint %s%s%s" % (
                    pod_key, s.ingress, s.api.label, endpoint.target, " (pod %s)" % endpoint.pod if endpoint.pod else "",
                    "; %s" % result.note if result.note else ""),
                ingress=s.ingress, backend=s.api.label, name=names[0], address=endpoint.target, endpoint_pod=endpoint.pod))
    return report, findings


def check(
    workloads: list[FoundWorkload],
    ingresses: list[Obj],
    api_of: Callable[[str, BackendRef], ApiSide],
    read_pod: Callable[[FoundWorkload, Obj], Reading],
    fail_on: tuple[str, ...] = KINDS,
    last_ready: LastReady | None = None,
) -> Obj:
    """The module's result. READ_POD is called once per Running pod of each workload that serves
    a selected Ingress; API_OF once per (namespace, backend) would do, the caller caches."""
    pods: dict[str, Obj] = {}
    findings: list[Obj] = []
    served_anywhere: set[str] = set()
    for found in workloads:
        served = _served(found, ingresses, api_of)
        if not served:
            continue
        served_anywhere.update(s.ingress for s in served)
        for pod in found.pods:
            running = (pod.get("status") or {}).get("phase") == "Running"
            report, pod_findings = _pod_report(found, pod, served, read_pod(found, pod) if running else None, last_ready or {})
            pods[key_of(pod)] = report
            findings += pod_findings
        if not found.pods:
            findings += [_finding(UNREAD, "", found, c, "%s has no pods to read" % c, reason="no pods", fix="",
                                  ingresses=sorted({s.ingress for s in served if s.controller == c}))
                         for c in sorted({s.controller for s in served})]
    for ingress in ingresses:
        key = key_of(ingress)
        if key not in served_anywhere and any(r.service for r in backends_of(ingress)):
            findings.append({"kind": UNREAD, "pod": "", "controller": "", "type": "", "ingresses": [key], "fix": "",
                             "reason": "no controller found in the cluster serves it",
                             "message": "%s: no controller found in the cluster serves it, so no data plane was read" % key})
    counts = {kind: sum(1 for f in findings if f["kind"] == kind) for kind in KINDS}
    failures = [f["message"] for f in findings if f["kind"] in fail_on]
    return {"passed": not failures, "failures": failures, "findings": findings, "pods": pods, "counts": counts}


# ---------------------------------------------------------------- reading the cluster


def run(client: Any, selection: Selection, fail_on: tuple[str, ...] = KINDS, timeout: float = 10.0,
        last_ready: LastReady | None = None) -> Obj:
    """check() over the cluster: the controllers as ingress_diagnose finds them, each backend's
    Service and EndpointSlices listed once, each pod read once."""
    return read_round(client, selection, fail_on, timeout, last_ready)[0]


def read_round(client: Any, selection: Selection, fail_on: tuple[str, ...] = KINDS, timeout: float = 10.0,
               last_ready: LastReady | None = None) -> tuple[Obj, dict[tuple[str, str], list[ApiSide]]]:
    """run(), and the API side of every backend it compared, by (namespace, service): what a
    window records as last seen ready."""
    state = read_state(client, selection)
    cache: dict[tuple[str, str, Any], ApiSide] = {}
    by_service: dict[tuple[str, str], list[Obj]] = {}
    # Indexed once: a scan of every Service per backend is quadratic (600 backends x 600 Services
    # took a third of the benchmark's 3 x 200 Ingresses, benchmarks/dataplane_bench.py).
    services: dict[tuple[str, str], Obj] = {}
    for item in state.services:
        services.setdefault((str(meta(item).get("namespace")), str(meta(item).get("name"))), item)

    def api_of(namespace: str, ref: BackendRef) -> ApiSide:
        key = (namespace, str(ref.service), ref.port)
        if key not in cache:
            if not by_service:  # one list for every backend: hundreds of Ingresses cost one request
                for item in client.list("discovery.k8s.io/v1", "EndpointSlice"):
                    owner = (meta(item).get("labels") or {}).get(SERVICE_NAME_LABEL)
                    by_service.setdefault((str(meta(item).get("namespace")), str(owner)), []).append(item)
                by_service.setdefault(("", ""), [])  # listed, even when empty
            service = services.get((namespace, str(ref.service)))
            cache[key] = api_side(namespace, ref, service, by_service.get((namespace, str(ref.service)), []))
        return cache[key]

    def read_pod(found: FoundWorkload, pod: Obj) -> Reading:
        access = ClientPodAccess(client, str(meta(pod).get("namespace")), str(meta(pod).get("name")), timeout)
        return found.type.dataplane.read(access, pod, found.container)

    result = check(find_workloads(state), state.ingresses, api_of, read_pod, fail_on, last_ready)
    apis: dict[tuple[str, str], list[ApiSide]] = {}
    for (namespace, service, _port), api in cache.items():
        apis.setdefault((namespace, service), []).append(api)
    return result, apis
