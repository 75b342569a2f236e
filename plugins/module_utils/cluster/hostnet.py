# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The host side of a kind lab: can this machine reach the MetalLB pool directly?

On Linux with a local Docker engine, the kind docker network is a Linux bridge of this
host, and the host_access role puts one address of the pool's network on it so MetalLB
addresses answer over L2. That breaks, or does not apply, when:
- the engine is not on this host's network: Docker Desktop (macOS, Windows, Linux VM),
  rootless Docker (the bridge lives in rootlesskit's namespace), a remote DOCKER_HOST;
- Tailscale runs with its netfilter rules: its `ts-input` chain drops packets from
  100.64.0.0/10 that arrive on any interface but tailscale0, so replies from a pool inside
  that range never reach the host;
- the address is simply not on the bridge (host_access not run, or removed).

Everything here is pure: argv builders, parsers of `ip -j link`, `ip -j addr`, `docker
info`, `iptables -S`/`nft list chains`, and the verdicts. The host_network module runs the
commands and calls these.
"""
from __future__ import annotations

import ipaddress
import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import ClusterError
from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError, OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.kind import (
    docker_info_argv,
    network_inspect_argv,
    network_missing,
    network_name,
    parse_network_inspect,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import Pool, parse_pools, plan_host_access

# run(argv) -> (rc, stdout, stderr); which(name) -> path or None (get_bin_path in a module).
Runner = Callable[[list[str]], "tuple[int, str, str]"]
Which = Callable[[str], "str | None"]

CGNAT = ipaddress.ip_network("100.64.0.0/10")  # RFC 6598; Tailscale hands out addresses from it
TAILSCALE_INTERFACE = "tailscale0"
TAILSCALE_CHAIN = "ts-input"
# tailscaled's local API socket: present while tailscaled runs (its default --socket, and the
# path older packages used).
TAILSCALED_SOCKETS = ("/run/tailscale/tailscaled.sock", "/var/run/tailscale/tailscaled.sock")
# Pools to suggest, outside every range that kind, Docker, Kubernetes and Tailscale use by
# default (the RFC 5737 documentation blocks); the first that no network of this host overlaps
# is suggested (a machine may use one of them itself).
POOL_CANDIDATES = ("198.51.100.0/24", "203.0.113.0/24", "192.0.2.0/24")


class HostNetError(OptionError):
    """An option is invalid; the message names it and what was expected."""


class HostToolError(KindlabError):
    """A host tool (ip, docker) printed something unreadable; the message says which and what."""


# --- argv ------------------------------------------------------------------------------------


def ip_link_argv(ip: str) -> list[str]:
    return [ip, "-j", "link", "show"]


def ip_addr_argv(ip: str, device: str | None = None) -> list[str]:
    return [ip, "-j", "addr", "show"] + (["dev", device] if device else [])


def iptables_chain_argv(iptables: str) -> list[str]:
    """The whole filter table, not `-S ts-input`: the nft-backed iptables (Debian 12's 1.8.9)
    answers `-S NAME` for a chain that does not exist with "chain `NAME' ... is incompatible",
    the same words it uses for a chain it cannot show, so only a full listing tells."""
    return [iptables, "-S"]


def nft_chain_argv(nft: str) -> list[str]:
    return [nft, "list", "chains"]


# --- parsers ---------------------------------------------------------------------------------


def _json_list(stdout: str, what: str) -> list[Any]:
    try:
        data = json.loads(stdout or "[]")
    except ValueError as exc:
        raise HostToolError("%s printed something that is not JSON (%s): %.200s" % (what, exc, stdout)) from None
    if not isinstance(data, list):
        raise HostToolError("%s: expected a JSON list, got %s" % (what, type(data).__name__))
    return data


def parse_ip_link(stdout: str) -> list[str]:
    """`ip -j link show`: a JSON list with one object per interface; its `ifname`."""
    return [str(item["ifname"]) for item in _json_list(stdout, "ip -j link show")
            if isinstance(item, dict) and item.get("ifname")]


def parse_ip_addr(stdout: str) -> list[str]:
    """`ip -j addr show dev DEV`: ADDRESS/PREFIX of every address of the device, both families."""
    out: list[str] = []
    for item in _json_list(stdout, "ip -j addr show"):
        if not isinstance(item, dict):
            continue
        for info in item.get("addr_info") or []:
            if isinstance(info, dict) and info.get("local") and info.get("prefixlen") is not None:
                out.append("%s/%s" % (info["local"], info["prefixlen"]))
    return out


def parse_host_networks(stdout: str, exclude: set[str]) -> dict[str, str]:
    """`ip -j addr show`: network (CIDR) -> interface, for every address of this host outside
    loopback and the EXCLUDEd interfaces (the kind bridge, whose network is the lab's own)."""
    out: dict[str, str] = {}
    for item in _json_list(stdout, "ip -j addr show"):
        if not isinstance(item, dict) or item.get("ifname") in exclude or "LOOPBACK" in (item.get("flags") or []):
            continue
        for info in item.get("addr_info") or []:
            if isinstance(info, dict) and info.get("local") and info.get("prefixlen") is not None:
                net = ipaddress.ip_interface("%s/%s" % (info["local"], info["prefixlen"])).network
                if not net.is_link_local:
                    out[str(net)] = str(item.get("ifname"))
    return out


def chain_state(rc: int, stdout: str, stderr: str) -> bool | None:
    """Does the ts-input chain exist, from a full listing: `iptables -S` or `nft list chains`?
    True/False, or None when the tool could not tell (not root, tool broken, rules it cannot show).

    iptables lists each chain of the filter table as "-N NAME"; nft lists every chain of every
    table as "chain NAME {". When nft rules that iptables cannot show are in a chain (Tailscale's
    nftables mode), the nft-backed iptables stops with "chain `NAME' in table `filter' is
    incompatible": in a full listing that names a chain that exists; any other chain named so
    leaves the question open (nft answers it)."""
    if rc == 0:
        lines = [line.strip() for line in stdout.splitlines()]
        return ("-N %s" % TAILSCALE_CHAIN) in lines or any(
            line.startswith("chain %s " % TAILSCALE_CHAIN) or line == "chain %s" % TAILSCALE_CHAIN for line in lines)
    text = stderr + stdout
    if "incompatible" in text:
        return True if ("chain `%s'" % TAILSCALE_CHAIN) in text else None
    return None  # "Permission denied (you must be root)", "Operation not permitted", …


@dataclass(frozen=True)
class Engine:
    """Where the Docker engine's networks live, from `docker info --format '{{json .}}'`."""
    answered: bool
    desktop: bool = False
    rootless: bool = False
    operating_system: str = ""
    error: str = ""

    @property
    def local_networks(self) -> bool:
        return self.answered and not self.desktop and not self.rootless


def parse_engine(rc: int, stdout: str, stderr: str) -> Engine:
    """Docker Desktop reports OperatingSystem "Docker Desktop"; a rootless engine lists
    "name=rootless" among its SecurityOptions."""
    info: dict[str, Any] = {}
    text = stdout.strip()
    if text:
        try:
            loaded = json.loads(text.splitlines()[-1])
            info = loaded if isinstance(loaded, dict) else {}
        except ValueError:
            info = {}
    errors = [str(e) for e in info.get("ServerErrors") or []]
    if rc != 0 or errors or not info.get("ServerVersion"):
        return Engine(False, error="; ".join(errors) or stderr.strip() or "docker info returned no server version")
    system = str(info.get("OperatingSystem") or "")
    options = [str(o) for o in info.get("SecurityOptions") or []]
    return Engine(True, desktop="docker desktop" in system.lower(),
                  rootless=any(o == "name=rootless" or o.startswith("name=rootless,") for o in options),
                  operating_system=system)


# --- verdicts --------------------------------------------------------------------------------


def _overlaps(pool: Pool, network: str) -> bool:
    net = ipaddress.ip_network(network)
    return any(r.version == net.version and int(r.first) <= int(net.broadcast_address)
               and int(net.network_address) <= int(r.last) for r in pool.ranges)


def host_conflicts(pools: list[Pool], host_networks: dict[str, str]) -> list[str]:
    """Pools that overlap a network of this host: host_access would put an address of the
    host's own network on the bridge and take its route."""
    return ["pool %s overlaps %s on this host's %s" % (p.name, net, dev)
            for p in pools for net, dev in sorted(host_networks.items()) if _overlaps(p, net)]


def suggested_pool(host_networks: dict[str, str]) -> str:
    """The first candidate pool that no network of this host overlaps."""
    for candidate in POOL_CANDIDATES:
        cand = ipaddress.ip_network(candidate)
        if not any(cand.overlaps(ipaddress.ip_network(n)) for n in host_networks
                   if ipaddress.ip_network(n).version == cand.version):
            return candidate
    return POOL_CANDIDATES[0]


def cgnat_pools(pools: list[Pool]) -> list[str]:
    """Names of the pools with an address inside 100.64.0.0/10."""
    first, last = int(CGNAT.network_address), int(CGNAT.broadcast_address)
    return [p.name for p in pools
            if any(r.version == 4 and int(r.first) <= last and first <= int(r.last) for r in p.ranges)]


@dataclass(frozen=True)
class Tailscale:
    interface: bool
    chain: bool | None
    pools: list[str]  # the pools inside 100.64.0.0/10
    suggestion: str = POOL_CANDIDATES[0]  # a pool to use instead
    socket: str = ""  # tailscaled's socket, when it exists

    @property
    def running(self) -> bool:
        return self.interface or bool(self.chain) or bool(self.socket)

    @property
    def blocks(self) -> bool:
        return self.running and bool(self.pools)

    def message(self) -> str:
        if not self.blocks:
            return ""
        evidence = " and ".join(
            ([("a %s interface" % TAILSCALE_INTERFACE)] if self.interface else [])
            + ([("the %s netfilter chain" % TAILSCALE_CHAIN)] if self.chain else [])
            + ([("tailscaled's socket %s" % self.socket)] if self.socket else []))
        return (
            "pool(s) %s lie inside %s, Tailscale's CGNAT range, and Tailscale runs on this host (%s): its %s rule "
            "drops every packet from %s that does not arrive on %s, so replies from MetalLB addresses on the kind bridge "
            "never reach this host and every probe times out. Choose a pool outside %s, e.g. "
            "make lab LAB_ARGS=\"-e '{lab_metallb_pools: [{name: lab-pool, addresses: [%s]}]}'\" "
            "(or stop tailscaled while the lab runs)"
            % (", ".join(self.pools), CGNAT, evidence, TAILSCALE_CHAIN, CGNAT, TAILSCALE_INTERFACE, CGNAT, self.suggestion)
        )

    def as_dict(self) -> dict[str, Any]:
        return {"interface": self.interface, "chain": self.chain, "socket": self.socket or None,
                "pools": list(self.pools), "running": self.running, "blocks": self.blocks, "message": self.message()}


def tailscale(pools: list[Pool], interfaces: list[str], chains: list[bool | None],
              suggestion: str = POOL_CANDIDATES[0], socket: str = "") -> Tailscale:
    """Tailscale is taken to run when tailscale0 exists, tailscaled's socket exists, or a full
    listing of the firewall names its ts-input chain."""
    known = [c for c in chains if c is not None]
    return Tailscale(TAILSCALE_INTERFACE in interfaces, any(known) if known else None, cgnat_pools(pools), suggestion,
                     socket)


def host_cidrs(pools: list[Pool], node_subnets: list[str]) -> list[str]:
    """The ADDRESS/PREFIX host_access puts on the bridge for these pools (the metallb
    module's rule, so teardown removes exactly what was added)."""
    hosts, _pools = plan_host_access(pools, node_subnets)
    return [h.cidr for h in hosts]


@dataclass
class Reach:
    """Whether probes from this host reach the pool; else they must run inside a node."""
    reaches: bool
    reason: str
    host_access_needed: bool  # an address must be put on a bridge of this host (needs root)

    @property
    def via(self) -> str:
        return "host" if self.reaches else "node"


def reach(
    system: str,
    engine: Engine,
    network: str,
    network_found: bool,
    bridge: str | None,
    interfaces: list[str],
    wanted: list[str],
    present: list[str],
    ts: Tailscale,
) -> Reach:
    """The verdict for one host. `wanted` are the host addresses for the pools, `present`
    the bridge's addresses, `interfaces` this host's interface names."""
    if system != "Linux":
        return Reach(False, "on %s the Docker engine runs in a VM (Docker Desktop): the docker network %r is not "
                            "routable from this host" % (system or "this OS", network), False)
    if not engine.answered:
        return Reach(False, "the Docker engine does not answer (%s)" % engine.error, False)
    if engine.desktop:
        return Reach(False, "the engine is Docker Desktop (%s): its networks live in its VM, not on this host"
                     % engine.operating_system, False)
    if engine.rootless:
        return Reach(False, "the engine is rootless Docker: its networks live in rootlesskit's network namespace, "
                            "not on this host", False)
    if network_found and (not bridge or bridge not in interfaces):
        return Reach(False, "the bridge %s of the docker network %r is not an interface of this host (the engine runs "
                            "elsewhere: a VM or a remote DOCKER_HOST)" % (bridge, network), False)
    if not wanted:
        if network_found:  # the pools lie inside the kind network, which the bridge's own address reaches
            return Reach(True, "the pools lie inside the docker network %r, which the bridge %s reaches"
                         % (network, bridge), False)
        return Reach(False, "no pool needs a host address, and the docker network %r does not exist yet" % network,
                     False)
    if ts.blocks:
        return Reach(False, ts.message(), True)
    if not network_found:
        return Reach(False, "the docker network %r does not exist yet (kind creates it with the first cluster)" % network,
                     True)
    missing = [c for c in wanted if c not in present]
    if missing:
        return Reach(False, "the bridge %s lacks the host address(es) %s (the host_access role adds them)"
                     % (bridge, ", ".join(missing)), True)
    return Reach(True, "the bridge %s holds %s" % (bridge, ", ".join(wanted)), True)


# --- the host_network module's one call ------------------------------------------------------


def _tool(which: Which, field_name: str, wanted: Any) -> str | None:
    if not isinstance(wanted, str) or not wanted.strip():
        raise HostNetError("%s: expected a binary name or path, got %r" % (field_name, wanted))
    return which(wanted)


def inspect_host(params: Mapping[str, Any], run: Runner, which: Which, system: str,
                 environ: Mapping[str, str] | None = None,
                 exists: Callable[[str], bool] = os.path.exists) -> dict[str, Any]:
    """Read the host (interfaces, the kind network and its bridge, the engine, Tailscale)
    and judge whether probes from here reach the pools. Changes nothing. Options are
    validated before any command runs."""
    raw_pools = [{"name": "pool-%d" % i, "addresses": [entry]} if isinstance(entry, str) else entry
                 for i, entry in enumerate(params.get("pools") or [])]
    try:
        pools = parse_pools(raw_pools) if raw_pools else []
    except ValueError as exc:
        raise HostNetError("pools: %s" % exc) from None
    network = params.get("network") or network_name(environ)
    docker = _tool(which, "docker_binary", params.get("docker_binary") or "docker")
    ip = _tool(which, "ip_binary", params.get("ip_binary") or "ip")
    firewall = [(_tool(which, "iptables_binary", params.get("iptables_binary") or "iptables"), iptables_chain_argv),
                (_tool(which, "nft_binary", params.get("nft_binary") or "nft"), nft_chain_argv)]
    notes: list[str] = []

    engine = Engine(False, error="docker_binary: %r was not found" % (params.get("docker_binary") or "docker"))
    net: dict[str, Any] = {"name": network, "found": False, "id": None, "bridge": None, "subnets": []}
    if docker is not None:
        engine = parse_engine(*run(docker_info_argv(docker)))
        if engine.answered:
            rc, out, err = run(network_inspect_argv(docker, network))
            if rc == 0:
                try:
                    net.update(parse_network_inspect(out, network), found=True, name=network)
                except ClusterError as exc:
                    notes.append(str(exc))
            elif not network_missing(err):
                notes.append("docker network inspect %s failed (rc=%s): %s" % (network, rc, err.strip()))

    interfaces: list[str] = []
    present: list[str] = []
    host_networks: dict[str, str] = {}
    if system == "Linux":
        if ip is None:
            notes.append("ip_binary: %r was not found; install iproute2" % (params.get("ip_binary") or "ip"))
        else:
            rc, out, err = run(ip_link_argv(ip))
            if rc == 0:
                interfaces = parse_ip_link(out)
            else:
                notes.append("ip -j link show failed (rc=%s): %s" % (rc, err.strip()))
            rc, out, err = run(ip_addr_argv(ip))
            if rc == 0:
                host_networks = parse_host_networks(out, {net["bridge"]} if net["bridge"] else set())
            else:
                notes.append("ip -j addr show failed (rc=%s): %s" % (rc, err.strip()))
            if net["bridge"] and net["bridge"] in interfaces:
                rc, out, err = run(ip_addr_argv(ip, net["bridge"]))
                if rc == 0:
                    present = parse_ip_addr(out)
                else:
                    notes.append("ip -j addr show dev %s failed (rc=%s): %s" % (net["bridge"], rc, err.strip()))
    chains: list[bool | None] = []
    socket = ""
    if system == "Linux" and cgnat_pools(pools) and TAILSCALE_INTERFACE not in interfaces:
        # Only needed when tailscale0 is absent (a renamed TUN device, userspace networking);
        # the firewall listings are readable as root only.
        socket = next((path for path in TAILSCALED_SOCKETS if exists(path)), "")
        for binary, argv in firewall:
            if binary is not None:
                chains.append(chain_state(*run(argv(binary))))
    suggestion = suggested_pool(host_networks)
    ts = tailscale(pools, interfaces, chains, suggestion, socket)
    conflicts = host_conflicts(pools, host_networks)
    wanted = host_cidrs(pools, [c for c in net["subnets"] if isinstance(c, str)])
    verdict = reach(system, engine, network, bool(net["found"]), net["bridge"], interfaces, wanted, present, ts)
    return {
        "changed": False,
        "system": system,
        "engine": {"answered": engine.answered, "desktop": engine.desktop, "rootless": engine.rootless,
                   "operating_system": engine.operating_system, "error": engine.error},
        "network": net,
        "interfaces": interfaces,
        "bridge_on_host": bool(net["bridge"]) and net["bridge"] in interfaces,
        "bridge_addresses": present,
        "host_cidrs": wanted,
        "present_cidrs": [c for c in wanted if c in present],
        "missing_cidrs": [c for c in wanted if c not in present],
        "tailscale": ts.as_dict(),
        "host_networks": host_networks,
        "host_conflicts": conflicts,
        "suggested_pool": suggestion,
        "host_reaches_pool": verdict.reaches,
        "host_access_needed": verdict.host_access_needed,
        "via": verdict.via,
        "reason": verdict.reason,
        "notes": notes,
    }
