# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The addresses a cluster announces, or may hand out next: what a lab beside it on one network must keep clear of.

Read-only. A LoadBalancer Service's status, its requested loadBalancerIP and externalIPs, every Ingress's status
address, and MetalLB's IPAddressPools (the addresses it will give the next Services) when the cluster serves them.
"""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.metallb import API_VERSION as METALLB_API_VERSION
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import PoolError, entry_network
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of

Obj = dict[str, Any]


def _status_ips(obj: Obj) -> list[str]:
    return [str(i["ip"]) for i in ((obj.get("status") or {}).get("loadBalancer") or {}).get("ingress") or [] if i.get("ip")]


def _held(found: dict[str, list[str]], entry: Any, who: str) -> None:
    try:
        entry_network(entry)
    except PoolError:
        return  # a hostname or something MetalLB would refuse: no address to keep clear of
    found.setdefault(str(entry).strip(), []).append(who)


def announced(client: Any) -> dict[str, list[str]]:
    """Address, CIDR or a-b range, as the object writes it -> what holds it, in words ("Service shop/web",
    "MetalLB pool metallb-system/lab-pool"), over every namespace."""
    found: dict[str, list[str]] = {}
    for svc in client.list("v1", "Service"):
        spec = svc.get("spec") or {}
        who = "Service %s" % key_of(svc)
        for ip in _status_ips(svc) + [spec.get("loadBalancerIP") or ""] + list(spec.get("externalIPs") or []):
            if ip:
                _held(found, ip, who)
    for ing in client.list("networking.k8s.io/v1", "Ingress"):
        for ip in _status_ips(ing):
            _held(found, ip, "Ingress %s" % key_of(ing))
    if client.serves(METALLB_API_VERSION, "IPAddressPool"):
        for pool in client.list(METALLB_API_VERSION, "IPAddressPool"):
            for entry in (pool.get("spec") or {}).get("addresses") or []:
                _held(found, entry, "MetalLB pool %s" % key_of(pool))
    return found
