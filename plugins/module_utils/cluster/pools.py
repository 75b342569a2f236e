# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""LoadBalancer address pools: parsing, validation, membership and host access.

A pool entry is written the way MetalLB's IPAddressPool takes it: a CIDR (`100.64.0.0/16`)
or an inclusive range (`100.64.0.10-100.64.0.20`); a single address is accepted too and
means a /32 (or /128). Everything here is pure: the modules and the verification code
call it before they touch a cluster.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping, Union

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._names import is_dns1123_subdomain

IPAddress = Union[ipaddress.IPv4Address, ipaddress.IPv6Address]
IPNetwork = Union[ipaddress.IPv4Network, ipaddress.IPv6Network]

_POOL_KEYS = {"name", "addresses", "auto_assign"}


class PoolError(OptionError):
    """A pool definition is invalid; the message names the pool, the entry and what was expected."""


@dataclass(frozen=True)
class AddressRange:
    """An inclusive range of addresses of one IP family, with the entry it came from."""

    first: IPAddress
    last: IPAddress
    entry: str = ""

    @property
    def version(self) -> int:
        return self.first.version

    @property
    def size(self) -> int:
        return int(self.last) - int(self.first) + 1

    def __contains__(self, ip: object) -> bool:
        return (
            isinstance(ip, (ipaddress.IPv4Address, ipaddress.IPv6Address))
            and ip.version == self.version
            and int(self.first) <= int(ip) <= int(self.last)
        )

    def overlaps(self, other: "AddressRange") -> bool:
        return (self.version == other.version and int(self.first) <= int(other.last)
                and int(other.first) <= int(self.last))

    def metallb(self) -> str:
        """The entry as MetalLB takes it: a CIDR when the range is exactly one, else a-b."""
        nets = list(ipaddress.summarize_address_range(self.first, self.last))
        if len(nets) == 1:
            return str(nets[0])
        return "%s-%s" % (self.first, self.last)

    def __str__(self) -> str:
        return self.entry or self.metallb()


@dataclass(frozen=True)
class Pool:
    name: str
    ranges: tuple[AddressRange, ...]
    auto_assign: bool = True

    @property
    def size(self) -> int:
        return sum(r.size for r in self.ranges)

    def addresses(self) -> list[str]:
        """The IPAddressPool spec.addresses for this pool."""
        return [r.metallb() for r in self.ranges]

    def summary(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "addresses": self.addresses(),
            "auto_assign": self.auto_assign,
            "size": self.size,
            "ranges": [{"first": str(r.first), "last": str(r.last), "size": r.size} for r in self.ranges],
        }


def parse_entry(pool: str, entry: Any) -> AddressRange:
    """One pool entry: CIDR, a-b range, or a single address."""
    where = "pool %r entry %r" % (pool, entry)
    if not isinstance(entry, str) or not entry.strip():
        raise PoolError("%s: expected a CIDR (100.64.0.0/16), a range (100.64.0.10-100.64.0.20) or an address" % where)
    text = entry.strip()
    if "-" in text:
        start, _sep, end = text.partition("-")
        try:
            first = ipaddress.ip_address(start.strip())
            last = ipaddress.ip_address(end.strip())
        except ValueError:
            raise PoolError("%s: a range must be two IP addresses joined by '-' (100.64.0.10-100.64.0.20)" % where) from None
        if first.version != last.version:
            raise PoolError("%s: the range mixes IPv%d and IPv%d; both ends must be of one family" % (where, first.version, last.version))
        if int(first) > int(last):
            raise PoolError("%s: the range starts after it ends (%s > %s); write it as %s-%s" % (where, first, last, last, first))
        return AddressRange(first, last, text)
    if "/" in text:
        try:
            net = ipaddress.ip_network(text, strict=True)
        except ValueError as exc:
            try:
                loose = ipaddress.ip_network(text, strict=False)
            except ValueError:
                raise PoolError("%s: not a valid CIDR (%s)" % (where, exc)) from None
            # MetalLB would silently take the whole network; say so instead of guessing.
            raise PoolError("%s: host bits are set; did you mean %s?" % (where, loose)) from None
        return AddressRange(net[0], net[-1], text)
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        raise PoolError("%s: expected a CIDR (100.64.0.0/16), a range (100.64.0.10-100.64.0.20) or an address" % where) from None
    return AddressRange(ip, ip, text)


def parse_pool(spec: Mapping[str, Any], index: int = 0) -> Pool:
    if not isinstance(spec, Mapping):
        raise PoolError("pools[%d]: expected a mapping with name and addresses, got %r" % (index, spec))
    unknown = sorted(set(spec) - _POOL_KEYS)
    if unknown:
        raise PoolError("pools[%d]: unknown key(s) %s; only the keys %s are allowed" % (index, ", ".join(unknown), ", ".join(sorted(_POOL_KEYS))))
    name = spec.get("name")
    if not isinstance(name, str) or not is_dns1123_subdomain(name):
        raise PoolError("pools[%d].name: %r is not a valid object name (lowercase DNS-1123 subdomain, e.g. lab-pool)" % (index, name))
    addresses = spec.get("addresses")
    if isinstance(addresses, str):
        addresses = [addresses]
    if not isinstance(addresses, list) or not addresses:
        raise PoolError("pool %r: addresses must be a non-empty list of CIDRs, ranges or addresses" % name)
    ranges = tuple(parse_entry(name, entry) for entry in addresses)
    for i, a in enumerate(ranges):
        for b in ranges[i + 1:]:
            if a.overlaps(b):
                raise PoolError("pool %r: entries %r and %r overlap" % (name, str(a), str(b)))
    auto_assign = spec.get("auto_assign")
    if auto_assign is None:
        auto_assign = True
    if not isinstance(auto_assign, bool):
        raise PoolError("pool %r: auto_assign must be true or false, got %r" % (name, auto_assign))
    return Pool(name=name, ranges=ranges, auto_assign=auto_assign)


def parse_pools(specs: Any) -> list[Pool]:
    """Parse every pool and reject duplicate names and overlaps between pools."""
    if not isinstance(specs, list) or not specs:
        raise PoolError("pools: expected a non-empty list of {name, addresses, auto_assign}")
    pools = [parse_pool(spec, i) for i, spec in enumerate(specs)]
    seen: set[str] = set()
    for pool in pools:
        if pool.name in seen:
            raise PoolError("pools: the name %r is used twice; pool names must be unique" % pool.name)
        seen.add(pool.name)
    for i, a in enumerate(pools):
        for b in pools[i + 1:]:
            for ra in a.ranges:
                for rb in b.ranges:
                    if ra.overlaps(rb):
                        raise PoolError(
                            "pools %r and %r overlap: %r and %r share addresses; MetalLB rejects overlapping pools"
                            % (a.name, b.name, str(ra), str(rb))
                        )
    return pools


@dataclass(frozen=True)
class ClusterNetworks:
    """The networks a LoadBalancer pool must stay out of (each a list of CIDRs)."""

    node: tuple[str, ...] = ()
    pod: tuple[str, ...] = ()
    service: tuple[str, ...] = ()

    def named(self) -> list[tuple[str, IPNetwork]]:
        out: list[tuple[str, IPNetwork]] = []
        for label, cidrs in (("node network", self.node), ("pod CIDR", self.pod), ("service CIDR", self.service)):
            for cidr in cidrs:
                try:
                    out.append((label, ipaddress.ip_network(cidr.strip(), strict=False)))
                except ValueError:
                    raise PoolError("%s %r is not a CIDR" % (label, cidr)) from None
        return out


def split_cidrs(value: Any) -> tuple[str, ...]:
    """kind writes dual-stack subnets comma-separated; accept a list or such a string."""
    if value is None:
        return ()
    items: Iterable[Any] = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return tuple(str(v).strip() for v in items if str(v).strip())


def network_range(net: IPNetwork) -> AddressRange:
    return AddressRange(net[0], net[-1], str(net))


def cluster_overlaps(pools: list[Pool], networks: ClusterNetworks) -> Iterator[tuple[int, int, str, IPNetwork]]:
    """(pool index, entry index, network label, network) of every pool entry that overlaps a
    cluster network, network by network."""
    for label, net in networks.named():
        span = network_range(net)
        for i, pool in enumerate(pools):
            for j, r in enumerate(pool.ranges):
                if r.overlaps(span):
                    yield i, j, label, net


def check_cluster_overlap(pools: list[Pool], networks: ClusterNetworks, allow: bool = False) -> list[str]:
    """Fail on the first pool entry that overlaps a cluster network, unless `allow`;
    with `allow`, return the overlaps as warnings instead."""
    warnings = []
    for i, j, label, net in cluster_overlaps(pools, networks):
        what = "pool %r entry %r overlaps the %s %s" % (pools[i].name, str(pools[i].ranges[j]), label, net)
        if allow:
            warnings.append(what)
            continue
        hint = (
            "; addresses there are node, pod or service IPs already, so traffic to them would not reach "
            "the LoadBalancer. Use a range outside the cluster (the lab uses 100.64.0.0/16), or set "
            "allow_overlap_with_cluster_networks: true if you mean it (e.g. kind's docs carve the pool "
            "out of the docker network's unused top)"
        )
        raise PoolError(what + hint)
    return warnings


# Where a pool is chosen for a lab beside other clusters (the rehearsal's): /16s of the shared address space
# (RFC 6598), whose first one is the lab's default pool.
FREE_POOL_SPACE = "100.64.0.0/10"
FREE_POOL_PREFIX = 16


def entry_network(entry: Any) -> list[IPNetwork]:
    """The networks an address, a CIDR or an a-b range covers (pool entries, Service addresses);
    a PoolError for anything else."""
    r = parse_entry("", entry)
    return list(ipaddress.summarize_address_range(r.first, r.last))


def free_network(taken: Iterable[IPNetwork], space: str = FREE_POOL_SPACE, prefix: int = FREE_POOL_PREFIX) -> IPNetwork | None:
    """The first /PREFIX of SPACE that overlaps none of TAKEN, or None when every one does."""
    held = list(taken)
    for candidate in ipaddress.ip_network(space).subnets(new_prefix=prefix):
        if not any(candidate.version == t.version and candidate.overlaps(t) for t in held):
            return candidate
    return None


def address_in_pools(ip: Any, pools: Iterable[Pool]) -> str | None:
    """The name of the pool holding `ip`, or None (also None for something that is not an IP)."""
    try:
        addr = ipaddress.ip_address(str(ip).strip())
    except ValueError:
        return None
    for pool in pools:
        if any(addr in r for r in pool.ranges):
            return pool.name
    return None


# --- Host access --------------------------------------------------------------------------
# Rule: the host reaches a pool through an address on the kind bridge inside the pool's
# *link network* = the smallest CIDR holding all of the pool's addresses of one family.
# The host takes the highest usable address of that network (IPv4: the one below the
# broadcast address; IPv6: the last one), with the network's prefix. MetalLB must never
# hand that address out, nor (IPv4) the link network's network and broadcast addresses,
# which the host cannot reach once the prefix is on its bridge; so those are carved out of
# every pool. Pools lying inside the node network need nothing (the bridge already has an
# address there), pools whose link network has no spare address get none, and a link
# network inside another pool's is served by the outer one's address.


@dataclass(frozen=True)
class HostAddress:
    address: IPAddress
    network: IPNetwork
    pools: tuple[str, ...] = field(default=())

    @property
    def cidr(self) -> str:
        return "%s/%d" % (self.address, self.network.prefixlen)

    def summary(self) -> dict[str, Any]:
        return {"address": str(self.address), "prefix": self.network.prefixlen, "cidr": self.cidr,
                "network": str(self.network), "pools": list(self.pools)}


def link_network(ranges: Iterable[AddressRange]) -> IPNetwork:
    """Smallest CIDR holding every range (all of one family)."""
    rs = list(ranges)
    lo = min(rs, key=lambda r: int(r.first)).first
    hi = max(int(r.last) for r in rs)
    for prefix in range(lo.max_prefixlen, -1, -1):
        net = ipaddress.ip_network("%s/%d" % (lo, prefix), strict=False)
        if hi <= int(net[-1]):  # net starts at or below lo by construction
            return net
    raise AssertionError("unreachable: /0 holds every address")


def host_address_for(net: IPNetwork) -> IPAddress | None:
    """The host's address in a link network, or None when the network has no spare address."""
    if net.version == 4:
        if net.prefixlen >= 31:
            return None
        return net.broadcast_address - 1
    if net.prefixlen >= 127:
        return None
    return net[-1]


def subtract(r: AddressRange, holes: Iterable[IPAddress]) -> list[AddressRange]:
    """The range minus the given addresses, as the remaining sub-ranges."""
    out = [r]
    for hole in sorted((h for h in holes if h.version == r.version), key=int):
        nxt = []
        for part in out:
            if hole not in part:
                nxt.append(part)
                continue
            if int(part.first) < int(hole):
                nxt.append(AddressRange(part.first, hole - 1))
            if int(hole) < int(part.last):
                nxt.append(AddressRange(hole + 1, part.last))
        out = nxt
    return out


def plan_host_access(pools: list[Pool], node_networks: Iterable[str] = ()) -> tuple[list[HostAddress], list[Pool]]:
    """Host addresses for the pools, and the pools with every reserved address carved out."""
    nodes = [ipaddress.ip_network(c, strict=False) for c in node_networks]
    hosts: dict[IPNetwork, list[str]] = {}
    for pool in pools:
        for version in (4, 6):
            rs = [r for r in pool.ranges if r.version == version]
            if not rs:
                continue
            net = link_network(rs)
            if any(n.version == net.version and net.subnet_of(n) for n in nodes):  # type: ignore[arg-type]
                continue
            if host_address_for(net) is None:
                continue
            hosts.setdefault(net, []).append(pool.name)
    # CIDRs nest or are disjoint: a link network inside another one is served by the outer
    # one's address (two addresses on one bridge for one network would fight over the route).
    outer: dict[IPNetwork, list[str]] = {}
    for net in sorted(hosts, key=lambda n: (n.version, n.prefixlen)):
        parent = next((o for o in outer if o.version == net.version and net.subnet_of(o)), None)  # type: ignore[arg-type]
        outer.setdefault(parent or net, []).extend(hosts[net])
    planned = [HostAddress(host_address_for(net), net, tuple(names)) for net, names in outer.items()]  # type: ignore[arg-type]
    reserved: list[IPAddress] = []
    for h in planned:
        reserved.append(h.address)
        if h.network.version == 4:
            reserved.extend([h.network.network_address, h.network.broadcast_address])
    carved = []
    for pool in pools:
        ranges = tuple(part for r in pool.ranges for part in subtract(r, reserved))
        if not ranges:
            raise PoolError(
                "pool %r: nothing is left for MetalLB once the host access addresses (%s) are reserved; "
                "widen the pool or disable host access" % (pool.name, ", ".join(str(a) for a in reserved))
            )
        carved.append(Pool(pool.name, ranges, pool.auto_assign))
    return planned, carved
