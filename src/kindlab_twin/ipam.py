"""Address bookkeeping shared by the emulations: pure functions, no store access.

- MetalLB pools: ``spec.addresses`` entries are CIDRs or ``a-b`` ranges; MetalLB walks each
  CIDR from its first address (metallb v0.16.1 internal/allocator/allocator.go getIPFromCIDR:
  a cursor from the prefix's First(); only ``avoidBuggyIPs`` skips .0/.255), so 100.64.0.0/16
  hands out 100.64.0.0 first, exactly as seeds/01 shows.
- Node addresses 172.18.0.2.. (docker's "kind" network).
- Pod IPs inside the pod CIDR the controller-manager gives each node.
ClusterIPs and nodePorts are the real API server's allocations.
"""
from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Iterator

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
