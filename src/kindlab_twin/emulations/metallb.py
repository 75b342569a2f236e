"""MetalLB v0.16.1 (native manifest: Deployment `controller` and DaemonSet `speaker` in
namespace metallb-system, images quay.io/metallb/controller|speaker:v0.16.1).

Allocation follows controller/service.go + internal/allocator/allocator.go:
- only Services of type LoadBalancer without a spec.loadBalancerClass; any other type has
  its assignment cleared (clearServiceState);
- no pools configured → the assignment is cleared and the Service stays <pending>;
- an existing assignment is kept while it is still allowed (IP inside a pool, same pool as a
  `metallb.io/address-pool` annotation, same IP as a requested one);
- requested IPs: annotation `metallb.io/loadBalancerIPs` (comma list) or spec.loadBalancerIP;
- `metallb.io/address-pool` pins the pool (AllocateFromPool ignores autoAssign);
- otherwise the first auto-assign pool with a free IP; inside a pool CIDRs are walked from
  the first address, .0 included unless avoidBuggyIPs (hence 100.64.0.0 in seeds/01);
- status.loadBalancer.ingress = [{ip}] (no ipMode: MetalLB does not set it; the API server
  adds ipMode VIP) and the annotation `metallb.io/ip-allocated-from-pool` = pool name, both in
  one update of the status subresource (a Service's status update keeps metadata changes, and
  the controller's ClusterRole grants services/status update, not services update).
Writes are made as the controller pod's ServiceAccount (cluster.pod_store), so the real
authorizer applies the installed RBAC.
Upstream iterates pools from a Go map (random order); the twin uses pool name order.
Field manager: client-go's default is the binary name from the user agent: `controller`.
Announcement (the data plane): an L2Advertisement selecting the pool (ipAddressPools by
name, ipAddressPoolSelectors by label, none of both = every pool) and a Ready `speaker` pod
(labels app=metallb, component=speaker) on a node the advertisement's nodeSelectors accept
and that is not labelled node.kubernetes.io/exclude-from-external-load-balancers
(speaker/layer2_controller.go skips such nodes; kind keeps that label on control planes of
multi-node clusters).
"""
from __future__ import annotations

import copy
from typing import Any

from kindlab_twin import ipam
from kindlab_twin.collection import objects
from kindlab_twin.contract import EventType, Forbidden, Obj, Store

from .base import (DEPLOYMENT, IPADDRESSPOOL, L2ADVERTISEMENT, NODE, POD, SERVICE, LoopEmulation, is_terminating,
                   log, pod_ready, pod_running, safe_list)

NAMESPACE = "metallb-system"
ANN_POOL = "metallb.io/address-pool"
ANN_IPS = "metallb.io/loadBalancerIPs"
ANN_FROM_POOL = "metallb.io/ip-allocated-from-pool"
DEPRECATED = {ANN_POOL: "metallb.universe.tf/address-pool", ANN_IPS: "metallb.universe.tf/loadBalancerIPs"}


def metallb_active(store: Store) -> bool:
    dep = store.get(DEPLOYMENT, NAMESPACE, "controller")
    return bool(dep and int((dep.get("status") or {}).get("readyReplicas", 0)) > 0)


def annotation(svc: Obj, key: str) -> str:
    ann = svc.get("metadata", {}).get("annotations") or {}
    return str(ann.get(key) or ann.get(DEPRECATED.get(key, ""), "") or "")


def requested_ips(svc: Obj) -> list[str]:
    raw = annotation(svc, ANN_IPS)
    if raw:
        return [ip.strip() for ip in raw.split(",") if ip.strip()]
    lb_ip = svc.get("spec", {}).get("loadBalancerIP")
    return [str(lb_ip)] if lb_ip else []


def pool_of(ip: str, pools: list[Obj]) -> Obj | None:
    for pool in pools:
        if ipam.pool_contains(pool.get("spec", {}).get("addresses") or [], ip):
            return pool
    return None


def allowed(ip: str, svc: Obj, pools: list[Obj]) -> bool:
    pool = pool_of(ip, pools)
    if pool is None:
        return False
    want_pool = annotation(svc, ANN_POOL)
    if want_pool and pool["metadata"]["name"] != want_pool:
        return False
    req = requested_ips(svc)
    return not req or ip in req


def allocate(svc: Obj, pools: list[Obj], used: set[str]) -> tuple[str | None, str | None, str]:
    """(ip, pool name, error) for a Service that has no valid assignment yet."""
    by_name = {p["metadata"]["name"]: p for p in pools}
    want_pool = annotation(svc, ANN_POOL)
    req = requested_ips(svc)
    if req:
        ip = req[0]
        pool = pool_of(ip, pools)
        if pool is None:
            return None, None, f'Failed to allocate IP for "{svc_key(svc)}": ["{ip}"] is not allowed in config'
        if want_pool and pool["metadata"]["name"] != want_pool:
            return None, None, f'Failed to allocate IP for "{svc_key(svc)}": ["{ip}"] is not in pool "{want_pool}"'
        if ip in used:
            return None, None, f'Failed to allocate IP for "{svc_key(svc)}": ["{ip}"] is already in use'
        return ip, pool["metadata"]["name"], ""
    if want_pool:
        pool = by_name.get(want_pool)
        if pool is None:
            return None, None, f'Failed to allocate IP for "{svc_key(svc)}": unknown pool "{want_pool}"'
        candidates = [pool]
    else:
        candidates = [p for p in pools if (p.get("spec") or {}).get("autoAssign", True)
                      and not (p.get("spec") or {}).get("serviceAllocation")]
    for pool in candidates:
        spec = pool.get("spec") or {}
        free = ipam.first_free(spec.get("addresses") or [], used, bool(spec.get("avoidBuggyIPs")))
        if free:
            return free, pool["metadata"]["name"], ""
    return None, None, f'Failed to allocate IP for "{svc_key(svc)}": no available IPs'


def svc_key(svc: Obj) -> str:
    return f"{svc['metadata'].get('namespace', '')}/{svc['metadata']['name']}"


def current_ip(svc: Obj) -> str | None:
    for ing in (svc.get("status") or {}).get("loadBalancer", {}).get("ingress") or []:
        if ing.get("ip"):
            return str(ing["ip"])
    return None


def handled(svc: Obj) -> bool:
    spec = svc.get("spec") or {}
    return spec.get("type") == "LoadBalancer" and not spec.get("loadBalancerClass")


def plan(services: list[Obj], pools: list[Obj],
         order: dict[str, int] | None = None) -> dict[str, tuple[str | None, str | None, str]]:
    """Desired (ip, pool, error) per LoadBalancer service key; existing valid assignments first
    so a restart keeps every address (the allocator is primed from current status). New
    assignments go in the order the services were seen (`order`: uid → sequence), as the
    informer delivers them, then by creationTimestamp and name."""
    pools = sorted(pools, key=lambda p: p["metadata"]["name"])
    out: dict[str, tuple[str | None, str | None, str]] = {}
    used: set[str] = set()
    seq = order or {}
    lbs = sorted((s for s in services if handled(s)),
                 key=lambda s: (seq.get(s["metadata"].get("uid", ""), 1 << 60),
                                s["metadata"].get("creationTimestamp", ""), svc_key(s)))
    if not pools:
        return {svc_key(s): (None, None, "") for s in lbs}
    for svc in lbs:
        ip = current_ip(svc)
        if ip and ip not in used and allowed(ip, svc, pools):
            pool = pool_of(ip, pools)
            out[svc_key(svc)] = (ip, pool["metadata"]["name"] if pool else None, "")
            used.add(ip)
    for svc in lbs:
        if svc_key(svc) in out:
            continue
        ip, pool_name, err = allocate(svc, pools, used)
        if ip:
            used.add(ip)
        out[svc_key(svc)] = (ip, pool_name, err)
    return out


def l2_selects(adv: Obj, pool: Obj) -> bool:
    spec = adv.get("spec") or {}
    names = spec.get("ipAddressPools") or []
    selectors = spec.get("ipAddressPoolSelectors") or []
    if not names and not selectors:
        return True
    if pool["metadata"]["name"] in names:
        return True
    return any(objects.selects(sel, pool["metadata"].get("labels"), form="LabelSelector") for sel in selectors)


EXCLUDE_LB = "node.kubernetes.io/exclude-from-external-load-balancers"


def speaker_nodes(store: Store) -> list[Obj]:
    """Nodes with a Ready speaker pod that may announce."""
    out = []
    for pod in store.list(POD, NAMESPACE, {"app": "metallb", "component": "speaker"}):
        if not pod_ready(pod):
            continue
        node = store.get(NODE, None, pod.get("spec", {}).get("nodeName", ""))
        if node and EXCLUDE_LB not in (node["metadata"].get("labels") or {}):
            out.append(node)
    return out


def adv_usable(adv: Obj, nodes: list[Obj]) -> bool:
    selectors = (adv.get("spec") or {}).get("nodeSelectors") or []
    if not selectors:
        return bool(nodes)
    return any(objects.selects(sel, n["metadata"].get("labels"), form="LabelSelector") for sel in selectors for n in nodes)


def announced_ips(store: Store) -> dict[str, str]:
    """LoadBalancer IP → pool name, for IPs MetalLB currently announces over L2."""
    if not metallb_active(store):
        return {}
    pools = safe_list(store, IPADDRESSPOOL, NAMESPACE)
    nodes = speaker_nodes(store)
    advs = [a for a in safe_list(store, L2ADVERTISEMENT, NAMESPACE) if adv_usable(a, nodes)]
    out: dict[str, str] = {}
    for svc in store.list(SERVICE):
        ip = current_ip(svc)
        if not ip or not handled(svc):
            continue
        pool = pool_of(ip, pools)
        if pool is not None and any(l2_selects(a, pool) for a in advs):
            out[ip] = pool["metadata"]["name"]
    return out


class MetalLBEmulation(LoopEmulation):
    name = "metallb-controller"
    manager = "controller"
    watches = ("Service", "IPAddressPool", "Deployment")
    period = 10.0

    def setup(self) -> None:
        self._seen: dict[str, int] = {}
        self._api: tuple[str, Store] | None = None  # (controller pod uid, its identity)

    def controller_api(self) -> Store | None:
        """The running controller pod's identity, or None while no controller pod runs."""
        pods = [p for p in self.store.list(POD, NAMESPACE, {"app": "metallb", "component": "controller"})
                if pod_running(p) and not is_terminating(p)]
        if not pods:
            self._api = None
            return None
        uid = pods[0]["metadata"].get("uid", "")
        if self._api is None or self._api[0] != uid:
            assert self.cluster is not None
            self._api = (uid, self.cluster.pod_store(pods[0]))
        return self._api[1]

    def _on_event(self, event: EventType, obj: Obj) -> None:
        if obj.get("kind") == "Service" and event == "ADDED":
            self._seen.setdefault(obj["metadata"].get("uid", ""), len(self._seen))
        super()._on_event(event, obj)

    def reconcile(self) -> None:
        if not metallb_active(self.store):
            return
        api = self.controller_api()
        if api is None:
            return
        services = self.store.list(SERVICE)
        desired = plan(services, safe_list(self.store, IPADDRESSPOOL, NAMESPACE), dict(self._seen))
        for svc in services:
            k = svc_key(svc)
            if k in desired:
                ip, pool, _err = desired[k]
                self.write(api, svc, ip, pool)
            elif current_ip(svc) is not None or annotation(svc, ANN_FROM_POOL):
                self.write(api, svc, None, None)  # no longer a LoadBalancer: release

    def write(self, api: Store, svc: Obj, ip: str | None, pool: str | None) -> None:
        ann = dict(svc["metadata"].get("annotations") or {})
        if pool:
            ann[ANN_FROM_POOL] = pool
        else:
            ann.pop(ANN_FROM_POOL, None)
        lb_ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        same_ips = [e.get("ip") for e in lb_ingress] == ([ip] if ip else [])  # the server adds ipMode
        if same_ips and ann == (svc["metadata"].get("annotations") or {}):
            return
        svc["metadata"]["annotations"] = ann
        status: dict[str, Any] = copy.deepcopy(svc.get("status") or {})
        status["loadBalancer"] = {"ingress": [{"ip": ip}]} if ip else {}
        svc["status"] = status
        try:
            api.update(svc, self.manager, subresource="status")  # seen again through the shared cache's watch
        except Forbidden as exc:  # the installed RBAC does not allow it: as the real controller, log and go on
            log.warning("%s: %s", self.name, exc)
