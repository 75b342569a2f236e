"""Address bookkeeping shared by the emulated controllers: pure functions, no store access.

- MetalLB pools: ``spec.addresses`` entries are CIDRs or ``a-b`` ranges; MetalLB walks each
  CIDR from its first address (metallb v0.16.1 internal/allocator/allocator.go getIPFromCIDR:
  a cursor from the prefix's First(); only ``avoidBuggyIPs`` skips .0/.255), so 100.64.0.0/16
  hands out 100.64.0.0 first, exactly as seeds/01 shows.
- Service ClusterIPs from 10.96.0.0/16 (kind's default service subnet; .1 is `kubernetes`).
- NodePorts from 30000-32767.
- Pod CIDRs 10.244.N.0/24 per node (kind's podSubnet 10.244.0.0/16, /24 per node).
"""
from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator
from typing import Any

SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/16")
KUBERNETES_SERVICE_IP = "10.96.0.1"
NODE_PORT_RANGE = (30000, 32767)
POD_SUBNET = ipaddress.ip_network("10.244.0.0/16")
NODE_SUBNET_BASE = ipaddress.ip_address("172.18.0.2")  # docker's "kind" network: .1 is the gateway


def parse_pool_entry(entry: str) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """One ``spec.addresses`` item → CIDRs. A range ``a-b`` becomes its covering CIDRs
    (MetalLB's config parser does the same), so walking order is address order."""
    entry = entry.strip()
    if "-" in entry:
        lo_s, hi_s = (p.strip() for p in entry.split("-", 1))
        lo, hi = ipaddress.ip_address(lo_s), ipaddress.ip_address(hi_s)
        if lo.version != hi.version or int(lo) > int(hi):
            raise ValueError(f"invalid IP range {entry!r}")
        return list(ipaddress.summarize_address_range(lo, hi))  # type: ignore[arg-type,unused-ignore]
    return [ipaddress.ip_network(entry, strict=False)]


def pool_networks(addresses: Iterable[str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    nets: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for entry in addresses:
        nets.extend(parse_pool_entry(entry))
    return nets


def pool_contains(addresses: Iterable[str], ip: str) -> bool:
    try:
        addr = ipaddress.ip_address(ip)
    except ValueError:
        return False
    return any(addr in net for net in pool_networks(addresses))


def _buggy(addr: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    # allocator.go ipConfusesBuggyFirmwares: IPv4 ending in .0 or .255
    return addr.version == 4 and addr.packed[-1] in (0, 255)


def iter_pool(addresses: Iterable[str], avoid_buggy_ips: bool = False) -> Iterator[str]:
    for net in pool_networks(addresses):
        for addr in net:  # includes the network and broadcast addresses, like MetalLB's cursor
            if avoid_buggy_ips and _buggy(addr):
                continue
            yield str(addr)


def first_free(addresses: Iterable[str], used: set[str], avoid_buggy_ips: bool = False,
               family: int = 4) -> str | None:
    for ip in iter_pool(addresses, avoid_buggy_ips):
        if ipaddress.ip_address(ip).version == family and ip not in used:
            return ip
    return None


def next_cluster_ip(used: set[str]) -> str:
    """Lowest free ClusterIP above 10.96.0.1 (the real allocator picks at random; the twin is
    deterministic so tests and scenarios are reproducible)."""
    for i, addr in enumerate(SERVICE_CIDR.hosts()):
        if i < 10:  # .1 (kubernetes) .. .10 (kube-dns) stay free for the cluster's own services
            continue
        if str(addr) not in used:
            return str(addr)
    raise RuntimeError("service CIDR exhausted")


def next_node_port(used: set[int]) -> int:
    for port in range(NODE_PORT_RANGE[0], NODE_PORT_RANGE[1] + 1):
        if port not in used:
            return port
    raise RuntimeError("node port range exhausted")


def pod_cidr(index: int) -> str:
    return f"10.244.{index}.0/24"


def node_ip(index: int) -> str:
    return str(NODE_SUBNET_BASE + index)


def next_pod_ip(cidr: str, used: set[str]) -> str:
    net = ipaddress.ip_network(cidr)
    for i, addr in enumerate(net.hosts()):
        if i == 0:  # .1 is the node's bridge side in kind's ptp CNI (kindnet)
            continue
        if str(addr) not in used:
            return str(addr)
    raise RuntimeError(f"pod CIDR {cidr} exhausted")


def allocate_service_addresses(svc: dict[str, Any], others: Iterable[dict[str, Any]]) -> bool:
    """Fill spec.clusterIP(s) and missing nodePorts the way kube-apiserver's allocators do on
    create (ExternalName and headless "None" get no ClusterIP; NodePort/LoadBalancer get a
    nodePort per port unless allocateLoadBalancerNodePorts is false). `others` are the existing
    Services. Returns True if it changed `svc`. The API server may call this inside create so
    clients see the addresses in the create response; the controllers call it otherwise."""
    used_ips = {str(s.get("spec", {}).get("clusterIP")) for s in others} - {"None", ""}
    used_ports = {int(p["nodePort"]) for s in others for p in s.get("spec", {}).get("ports") or [] if p.get("nodePort")}
    spec = svc.setdefault("spec", {})
    stype = spec.setdefault("type", "ClusterIP")
    changed = False
    if stype != "ExternalName" and not spec.get("clusterIP"):
        ip = next_cluster_ip(used_ips)
        spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        changed = True
    if stype in ("NodePort", "LoadBalancer") and not (stype == "LoadBalancer" and spec.get("allocateLoadBalancerNodePorts") is False):
        for p in spec.get("ports") or []:
            if not p.get("nodePort"):
                p["nodePort"] = next_node_port(used_ports)
                used_ports.add(p["nodePort"])
                changed = True
    return changed
