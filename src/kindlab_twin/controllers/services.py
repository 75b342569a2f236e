"""Service address allocation (what kube-apiserver's allocators do on create, when the API
server did not already) and the EndpointSlice controller.

EndpointSlices (discovery.k8s.io/v1) follow kube's endpointslice controller: named
`<svc>-<suffix>`, labels kubernetes.io/service-name and
endpointslice.kubernetes.io/managed-by=endpointslice-controller.k8s.io, one endpoint per
pod matching the selector that has an IP, with conditions ready/serving/terminating,
targetRef and nodeName; ports resolved from named targetPorts per pod.
"""
from __future__ import annotations

import copy
from typing import Any

from kindlab_twin import ipam
from kindlab_twin.contract import Conflict, NotFound, Obj

from .base import (ENDPOINTSLICE, POD, SERVICE, LoopController, is_terminating, labels_match,
                   owner_ref, pod_ready, random_suffix)

MANAGED_BY = "endpointslice-controller.k8s.io"


def resolve_target_port(svc_port: dict[str, Any], pod: Obj) -> int | None:
    target = svc_port.get("targetPort", svc_port.get("port"))
    if isinstance(target, int) or (isinstance(target, str) and target.isdigit()):
        return int(target)
    for c in pod.get("spec", {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("name") == target and p.get("protocol", "TCP") == svc_port.get("protocol", "TCP"):
                return int(p["containerPort"])
    return None


def desired_slice_endpoints(svc: Obj, pods: list[Obj]) -> list[tuple[list[dict[str, Any]], list[dict[str, Any]]]]:
    """Groups of (ports, endpoints): kube makes one slice per distinct resolved port set."""
    selector = svc.get("spec", {}).get("selector")
    ns = svc["metadata"].get("namespace")
    groups: dict[str, tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
    for pod in pods:
        if pod["metadata"].get("namespace") != ns or not labels_match(selector, pod["metadata"].get("labels")):
            continue
        ip = pod.get("status", {}).get("podIP")
        if not ip or pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        ports = []
        for sp in svc.get("spec", {}).get("ports") or []:
            port = resolve_target_port(sp, pod)
            if port is None:
                continue
            entry: dict[str, Any] = {"name": sp.get("name", ""), "port": port, "protocol": sp.get("protocol", "TCP")}
            if sp.get("appProtocol"):
                entry["appProtocol"] = sp["appProtocol"]
            ports.append(entry)
        terminating = is_terminating(pod)
        ready = pod_ready(pod) and not terminating
        ep = {
            "addresses": [ip],
            "conditions": {"ready": ready, "serving": pod_ready(pod), "terminating": terminating},
            "nodeName": pod.get("spec", {}).get("nodeName", ""),
            "targetRef": {"kind": "Pod", "namespace": ns, "name": pod["metadata"]["name"],
                          "uid": pod["metadata"].get("uid", "")},
        }
        k = repr(sorted((p["name"], p["port"]) for p in ports))
        groups.setdefault(k, (ports, []))[1].append(ep)
    for _ports, eps in groups.values():
        eps.sort(key=lambda e: e["targetRef"]["name"])
    return list(groups.values())


class ServiceAllocator(LoopController):
    """Fills spec.clusterIP(s) and nodePorts the API server left empty."""

    name = "service-allocator"
    manager = "kube-apiserver"
    watches = ("Service",)
    period = 10.0

    def reconcile(self) -> None:
        services = self.store.list(SERVICE)
        for svc in services:
            others = [o for o in services if o is not svc]
            if ipam.allocate_service_addresses(svc, others):
                svc = self.store.update(svc, self.manager)
                services = [svc if key_of(o) == key_of(svc) else o for o in services]


def key_of(obj: Obj) -> tuple[str, str]:
    return (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])


class EndpointSliceController(LoopController):
    name = "endpointslice-controller"
    manager = "kube-controller-manager"
    watches = ("Service", "Pod", "EndpointSlice")
    period = 10.0

    def reconcile(self) -> None:
        pods = self.store.list(POD)
        slices = self.store.list(ENDPOINTSLICE)
        for svc in self.store.list(SERVICE):
            if not svc.get("spec", {}).get("selector") or is_terminating(svc):
                continue  # selector-less services are managed by their owners
            ns, name = svc["metadata"].get("namespace", "default"), svc["metadata"]["name"]
            mine = [s for s in slices if s["metadata"].get("namespace") == ns
                    and (s["metadata"].get("labels") or {}).get("kubernetes.io/service-name") == name
                    and (s["metadata"].get("labels") or {}).get("endpointslice.kubernetes.io/managed-by") == MANAGED_BY]
            self.sync_service(svc, mine, pods)

    def sync_service(self, svc: Obj, existing: list[Obj], pods: list[Obj]) -> None:
        groups = desired_slice_endpoints(svc, pods) or [([], [])]
        existing = sorted(existing, key=lambda s: s["metadata"]["name"])
        for i, (ports, eps) in enumerate(groups):
            if i < len(existing):
                cur = existing[i]
                if cur.get("endpoints") != eps or (cur.get("ports") or []) != ports:
                    cur["endpoints"], cur["ports"] = eps, ports
                    self.store.update(cur, self.manager)
            else:
                self.create_slice(svc, ports, eps)
        for extra in existing[len(groups):]:
            try:
                self.store.delete(ENDPOINTSLICE, extra["metadata"]["namespace"], extra["metadata"]["name"])
            except NotFound:
                pass

    def create_slice(self, svc: Obj, ports: list[dict[str, Any]], eps: list[dict[str, Any]]) -> None:
        name = svc["metadata"]["name"]
        labels = dict(svc["metadata"].get("labels") or {})
        labels.update({"kubernetes.io/service-name": name, "endpointslice.kubernetes.io/managed-by": MANAGED_BY})
        obj = {
            "apiVersion": "discovery.k8s.io/v1",
            "kind": "EndpointSlice",
            "metadata": {"name": f"{name}-{random_suffix(name)}", "generateName": f"{name}-",
                         "namespace": svc["metadata"].get("namespace", "default"), "labels": labels,
                         "ownerReferences": [owner_ref(svc)]},
            "addressType": "IPv4",
            "endpoints": copy.deepcopy(eps),
            "ports": copy.deepcopy(ports),
        }
        try:
            self.store.create(obj, self.manager)
        except Conflict:
            pass
