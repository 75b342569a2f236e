from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.cluster import hostnet as hn
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import parse_pools

# Samples in the shapes iproute2 6.1 prints (`ip -j ...` writes one JSON array on one line).
BRIDGE = "br-5e3b1c9f0a7d"
_LO = {"ifindex": 1, "ifname": "lo", "flags": ["LOOPBACK", "UP", "LOWER_UP"], "mtu": 65536, "qdisc": "noqueue",
       "operstate": "UNKNOWN", "linkmode": "DEFAULT", "group": "default", "txqlen": 1000, "link_type": "loopback",
       "address": "00:00:00:00:00:00", "broadcast": "00:00:00:00:00:00"}
_ETH = {"ifindex": 2, "ifname": "eth0", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 1500,
        "qdisc": "fq_codel", "operstate": "UP", "linkmode": "DEFAULT", "group": "default", "txqlen": 1000,
        "link_type": "ether", "address": "52:54:00:12:34:56", "broadcast": "ff:ff:ff:ff:ff:ff"}
_BR = {"ifindex": 5, "ifname": BRIDGE, "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"], "mtu": 1500,
       "qdisc": "noqueue", "operstate": "UP", "linkmode": "DEFAULT", "group": "default", "link_type": "ether",
       "address": "02:42:9c:1a:2b:3c", "broadcast": "ff:ff:ff:ff:ff:ff"}
_VETH = {"ifindex": 7, "link_index": 6, "ifname": "veth3f1c2a9", "flags": ["BROADCAST", "MULTICAST", "UP", "LOWER_UP"],
         "mtu": 1500, "qdisc": "noqueue", "master": BRIDGE, "operstate": "UP", "linkmode": "DEFAULT",
         "group": "default", "link_type": "ether", "address": "a6:0e:51:3b:7c:d2", "broadcast": "ff:ff:ff:ff:ff:ff",
         "link_netnsid": 0}
_TS = {"ifindex": 4, "ifname": "tailscale0", "flags": ["POINTOPOINT", "MULTICAST", "NOARP", "UP", "LOWER_UP"],
       "mtu": 1280, "qdisc": "fq_codel", "operstate": "UNKNOWN", "linkmode": "DEFAULT", "group": "default",
       "txqlen": 500, "link_type": "none"}
IP_LINK = json.dumps([_LO, _ETH, _BR, _VETH], separators=(",", ":")) + "\n"
IP_LINK_TAILSCALE = json.dumps([_LO, _ETH, _TS, _BR, _VETH], separators=(",", ":")) + "\n"
IP_LINK_NO_BRIDGE = json.dumps([_LO, _ETH], separators=(",", ":")) + "\n"


def _addr(local: str, prefix: int, family: str = "inet", scope: str = "global") -> dict:
    info = {"family": family, "local": local, "prefixlen": prefix, "scope": scope, "label": BRIDGE,
            "valid_life_time": 4294967295, "preferred_life_time": 4294967295}
    if family == "inet6":
        del info["label"]
    return info


def ip_addr(*extra: dict) -> str:
    item = {k: v for k, v in _BR.items() if k != "linkmode"}
    item["addr_info"] = [_addr("172.18.0.1", 16), *extra, _addr("fc00:f853:ccd:e793::1", 64, "inet6"),
                         _addr("fe80::42:9cff:fe1a:2b3c", 64, "inet6", "link")]
    return json.dumps([item], separators=(",", ":")) + "\n"


IP_ADDR_BARE = ip_addr()
IP_ADDR_WITH_HOST = ip_addr(_addr("100.64.255.254", 16))
NO_DEVICE = 'Device "%s" does not exist.\n' % BRIDGE

# `docker network inspect kind` (trimmed) and `docker info --format '{{json .}}'` (trimmed).
NETWORK = json.dumps([{"Name": "kind", "Id": "5e3b1c9f0a7d4e2b8c6f1a3d5e7b9c0d2f4a6b8c0e1d3f5a7b9c1d3e5f7a9b0c",
                       "Driver": "bridge", "IPAM": {"Driver": "default", "Options": {}, "Config": [
                           {"Subnet": "fc00:f853:ccd:e793::/64", "Gateway": "fc00:f853:ccd:e793::1"},
                           {"Subnet": "172.18.0.0/16", "Gateway": "172.18.0.1"}]},
                       "Options": {"com.docker.network.bridge.enable_ip_masquerade": "true",
                                   "com.docker.network.driver.mtu": "1500"}}], indent=4)
NETWORK_MISSING = "Error response from daemon: network kind not found\n"


def docker_info(**over: object) -> str:
    info = {"ID": "0f1e2d3c", "ServerVersion": "29.0.2", "OperatingSystem": "Ubuntu 24.04.3 LTS", "OSType": "linux",
            "SecurityOptions": ["name=apparmor", "name=seccomp,profile=builtin", "name=cgroupns"], "ServerErrors": None}
    info.update(over)
    return json.dumps(info)


DOCKER_UP = docker_info()
DOCKER_ROOTLESS = docker_info(SecurityOptions=["name=seccomp,profile=builtin", "name=rootless", "name=cgroupns"])
DOCKER_DESKTOP = docker_info(OperatingSystem="Docker Desktop", Name="docker-desktop")
DAEMON_DOWN = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
DOCKER_DOWN = json.dumps({"ServerVersion": "", "ServerErrors": [DAEMON_DOWN]})

# Full listings of the firewall (`iptables -S`, `nft list chains`), with and without ts-input.
IPTABLES_TS = ("-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n-N ts-forward\n-N ts-input\n"
               "-A INPUT -j ts-input\n-A ts-input -s 100.101.102.103/32 -i lo -j ACCEPT\n"
               "-A ts-input -s 100.115.92.0/23 ! -i tailscale0 -j RETURN\n"
               "-A ts-input -s 100.64.0.0/10 ! -i tailscale0 -j DROP\n")
# Debian 12 (iptables v1.8.9, nf_tables), root, no Tailscale: `iptables -S` as this machine prints it.
IPTABLES_BARE = "-P INPUT ACCEPT\n-P FORWARD ACCEPT\n-P OUTPUT ACCEPT\n"
# The same iptables asked `-S ts-input` (or any other name) on that machine: the words it also
# uses for a chain holding nft rules it cannot show - which is why only full listings are read.
IPTABLES_NFT_INCOMPATIBLE = "iptables v1.8.9 (nf_tables): chain `ts-input' in table `filter' is incompatible, use 'nft' tool.\n"
IPTABLES_OTHER_INCOMPATIBLE = ("iptables v1.8.9 (nf_tables): chain `DOCKER-USER' in table `filter' is incompatible, "
                               "use 'nft' tool.\n")
IPTABLES_NOT_ROOT = "iptables v1.8.9 (nf_tables): Could not fetch rule set generation id: Permission denied (you must be root)\n"
NFT_CHAINS_TS = ("table ip filter {\n\tchain INPUT {\n\t\ttype filter hook input priority filter; policy accept;\n\t}\n"
                 "\tchain ts-input {\n\t}\n}\n")
NFT_CHAINS_BARE = "table ip filter {\n\tchain INPUT {\n\t\ttype filter hook input priority filter; policy accept;\n\t}\n}\n"
NFT_NOT_ROOT = "Error: Operation not permitted (you must be root)\n"

POOLS = [{"name": "lab-pool", "addresses": ["100.64.0.0/16"]}]


@pytest.fixture(autouse=True)
def no_tailscaled_socket(monkeypatch, tmp_path):
    """The tests decide whether tailscaled's socket exists, not the machine running them."""
    monkeypatch.setattr(hn, "TAILSCALED_SOCKETS", (str(tmp_path / "run" / "tailscaled.sock"),))


def test_argv() -> None:
    assert hn.ip_link_argv("/sbin/ip") == ["/sbin/ip", "-j", "link", "show"]
    assert hn.ip_addr_argv("ip", BRIDGE) == ["ip", "-j", "addr", "show", "dev", BRIDGE]
    assert hn.iptables_chain_argv("iptables") == ["iptables", "-S"]
    assert hn.nft_chain_argv("nft") == ["nft", "list", "chains"]


def test_parse_ip_link_and_addr() -> None:
    assert hn.parse_ip_link(IP_LINK_TAILSCALE) == ["lo", "eth0", "tailscale0", BRIDGE, "veth3f1c2a9"]
    assert hn.parse_ip_addr(IP_ADDR_WITH_HOST) == ["172.18.0.1/16", "100.64.255.254/16", "fc00:f853:ccd:e793::1/64",
                                                   "fe80::42:9cff:fe1a:2b3c/64"]
    with pytest.raises(hn.HostToolError, match="ip -j link show printed something that is not JSON"):
        hn.parse_ip_link("Object \"link\" is unknown")


@pytest.mark.parametrize("rc, out, err, want", [
    (0, IPTABLES_TS, "", True),
    (0, IPTABLES_BARE, "", False),
    (0, "-P INPUT ACCEPT\n-N ts-input-extra\n-A INPUT -j ts-input-extra\n", "", False),  # a name, not a prefix
    (1, "", IPTABLES_NFT_INCOMPATIBLE, True),
    (1, "", IPTABLES_OTHER_INCOMPATIBLE, None),
    (4, "", IPTABLES_NOT_ROOT, None),
    (0, NFT_CHAINS_TS, "", True),
    (0, NFT_CHAINS_BARE, "", False),
    (1, "", NFT_NOT_ROOT, None),
])
def test_chain_state(rc, out, err, want) -> None:
    assert hn.chain_state(rc, out, err) is want


def test_parse_engine() -> None:
    assert hn.parse_engine(0, DOCKER_UP, "").local_networks
    rootless = hn.parse_engine(0, DOCKER_ROOTLESS, "")
    assert rootless.rootless and not rootless.local_networks
    desktop = hn.parse_engine(0, DOCKER_DESKTOP, "")
    assert desktop.desktop and not desktop.local_networks
    down = hn.parse_engine(0, DOCKER_DOWN, DAEMON_DOWN)
    assert not down.answered and "Is the docker daemon running" in down.error


def test_cgnat_pools() -> None:
    pools = parse_pools([{"name": "a", "addresses": ["100.64.0.0/16"]}, {"name": "b", "addresses": ["192.0.2.0/24"]},
                         {"name": "c", "addresses": ["100.127.255.250-100.128.0.5"]},
                         {"name": "d", "addresses": ["100.128.0.10/32"]}])
    assert hn.cgnat_pools(pools) == ["a", "c"]


def test_tailscale_needs_a_cgnat_pool_and_evidence() -> None:
    pools = parse_pools(POOLS)
    assert hn.tailscale(pools, ["lo", "tailscale0"], []).blocks
    assert hn.tailscale(pools, ["lo"], [None, True]).blocks  # a renamed TUN, the chain found
    assert not hn.tailscale(pools, ["lo"], [None, None]).blocks
    assert not hn.tailscale(pools, ["lo"], [False, False]).blocks
    assert not hn.tailscale(parse_pools([{"name": "x", "addresses": ["192.0.2.0/24"]}]), ["tailscale0"], []).blocks
    message = hn.tailscale(pools, ["tailscale0"], []).message()
    assert "lab-pool lie inside 100.64.0.0/10" in message and hn.POOL_CANDIDATES[0] in message
    assert "lab_metallb_pools" in message


# --- inspect_host with fake tools -------------------------------------------------------------


class FakeRun:
    def __init__(self, answers: dict[tuple[str, ...], tuple[int, str, str]]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def __call__(self, argv):
        self.calls.append(list(argv))
        for n in (6, 4, 3, 2):
            if tuple(argv[1:n]) in self.answers:
                return self.answers[tuple(argv[1:n])]
        raise AssertionError("unexpected command %r" % argv)


def which(name):
    return {"docker": "/usr/bin/docker", "ip": "/usr/sbin/ip", "iptables": "/usr/sbin/iptables", "nft": "/usr/sbin/nft"}.get(name)


def answers(docker=DOCKER_UP, network=(0, NETWORK, ""), link=IP_LINK, addr=(0, IP_ADDR_BARE, ""),
            iptables=(0, IPTABLES_BARE, ""), nft=(0, NFT_CHAINS_BARE, "")):
    return {("info", "--format"): (0, docker, ""), ("network", "inspect"): network, ("-j", "link"): (0, link, ""),
            ("-j", "addr"): addr, ("-S",): iptables, ("list", "chains"): nft}


def test_linux_bridge_without_the_host_address_needs_host_access(monkeypatch) -> None:
    monkeypatch.delenv("KIND_EXPERIMENTAL_DOCKER_NETWORK", raising=False)
    run = FakeRun(answers())
    r = hn.inspect_host({"pools": POOLS}, run, which, "Linux")
    assert r["network"]["bridge"] == BRIDGE and r["bridge_on_host"]
    assert r["host_cidrs"] == ["100.64.255.254/16"] and r["missing_cidrs"] == ["100.64.255.254/16"]
    assert (r["host_reaches_pool"], r["via"], r["host_access_needed"]) == (False, "node", True)
    assert "lacks the host address(es) 100.64.255.254/16" in r["reason"]
    assert ["/usr/bin/docker", "network", "inspect", "kind"] in run.calls
    assert ["/usr/sbin/ip", "-j", "addr", "show", "dev", BRIDGE] in run.calls


def test_linux_bridge_with_the_host_address_reaches_the_pool() -> None:
    r = hn.inspect_host({"pools": POOLS, "network": "kind"}, FakeRun(answers(addr=(0, IP_ADDR_WITH_HOST, ""))), which, "Linux")
    assert (r["host_reaches_pool"], r["via"]) == (True, "host")
    assert r["present_cidrs"] == ["100.64.255.254/16"] and r["missing_cidrs"] == []


def test_tailscale0_blocks_a_cgnat_pool() -> None:
    run = FakeRun(answers(link=IP_LINK_TAILSCALE, addr=(0, IP_ADDR_WITH_HOST, "")))
    r = hn.inspect_host({"pools": POOLS}, run, which, "Linux")
    assert r["tailscale"]["blocks"] and r["tailscale"]["interface"] and r["via"] == "node" and r["host_access_needed"]
    assert "Tailscale runs on this host (a tailscale0 interface)" in r["reason"]
    assert not [c for c in run.calls if c[1:2] in (["-S"], ["list"])]  # the interface is enough: no firewall probe


def test_the_ts_input_chain_blocks_too_when_readable() -> None:
    r = hn.inspect_host({"pools": POOLS}, FakeRun(answers(iptables=(0, IPTABLES_TS, ""))), which, "Linux")
    assert r["tailscale"]["chain"] is True and r["tailscale"]["blocks"]
    not_root = FakeRun(answers(iptables=(4, "", IPTABLES_NOT_ROOT), nft=(1, "", NFT_NOT_ROOT)))
    unreadable = hn.inspect_host({"pools": POOLS}, not_root, which, "Linux")
    assert unreadable["tailscale"]["chain"] is None and not unreadable["tailscale"]["blocks"]


def test_the_iptables_words_for_a_missing_chain_do_not_make_tailscale_run() -> None:
    # Debian 12: `iptables -S ts-input` says "incompatible" with no Tailscale at all; the full
    # listing is what is read, and it shows no ts-input.
    r = hn.inspect_host({"pools": POOLS}, FakeRun(answers(nft=(127, "", "nft: not found"))), which, "Linux")
    assert r["tailscale"]["chain"] is False and not r["tailscale"]["running"] and not r["tailscale"]["blocks"]
    other = FakeRun(answers(iptables=(1, "", IPTABLES_OTHER_INCOMPATIBLE), nft=(0, NFT_CHAINS_BARE, "")))
    assert hn.inspect_host({"pools": POOLS}, other, which, "Linux")["tailscale"]["chain"] is False  # nft tells


def test_tailscaleds_socket_is_evidence_too() -> None:
    sock = hn.TAILSCALED_SOCKETS[0]
    r = hn.inspect_host({"pools": POOLS}, FakeRun(answers()), which, "Linux", exists=lambda p: p == sock)
    assert r["tailscale"]["socket"] == sock and r["tailscale"]["blocks"]
    assert "tailscaled's socket %s" % sock in r["tailscale"]["message"]


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("iptables") or not shutil.which("ip"),
                    reason="needs root, iptables and ip (a network namespace of its own)")
def test_chain_state_against_this_machines_iptables() -> None:
    """This machine's real iptables, in a network namespace of the test's own: no ts-input,
    then one; the full listing tells them apart whatever `-S NAME` says of a missing chain."""
    ns = "kindlab-ts-%d" % os.getpid()
    subprocess.run(["ip", "netns", "add", ns], check=True)
    try:
        def iptables(*args: str) -> tuple[int, str, str]:
            p = subprocess.run(["ip", "netns", "exec", ns, "iptables", *args], capture_output=True, text=True, check=False)
            return p.returncode, p.stdout, p.stderr
        assert hn.chain_state(*iptables(*hn.iptables_chain_argv("x")[1:])) is False
        rc, _out, err = iptables("-S", "no-such-chain-xyz")
        assert rc != 0 and ("incompatible" in err or "No chain" in err), err  # the ambiguity, as it is here
        assert iptables("-N", "ts-input")[0] == 0
        assert hn.chain_state(*iptables(*hn.iptables_chain_argv("x")[1:])) is True
    finally:
        subprocess.run(["ip", "netns", "delete", ns], check=False)


def test_a_pool_outside_cgnat_is_not_affected_by_tailscale() -> None:
    run = FakeRun(answers(link=IP_LINK_TAILSCALE))
    r = hn.inspect_host({"pools": [{"name": "p", "addresses": ["192.0.2.0/24"]}]}, run, which, "Linux")
    assert not r["tailscale"]["blocks"] and r["host_cidrs"] == ["192.0.2.254/24"]


def test_rootless_docker_probes_from_a_node_and_needs_no_sudo() -> None:
    # The bridge lives in rootlesskit's namespace: inspect names it, the host has no such interface.
    r = hn.inspect_host({"pools": POOLS}, FakeRun(answers(docker=DOCKER_ROOTLESS, link=IP_LINK_NO_BRIDGE)), which, "Linux")
    assert (r["via"], r["host_access_needed"], r["bridge_on_host"]) == ("node", False, False)
    assert "rootless Docker" in r["reason"]


def test_remote_engine_bridge_not_on_this_host() -> None:
    r = hn.inspect_host({"pools": POOLS}, FakeRun(answers(link=IP_LINK_NO_BRIDGE)), which, "Linux")
    assert (r["via"], r["host_access_needed"]) == ("node", False)
    assert "is not an interface of this host" in r["reason"]


def test_docker_desktop_on_macos_runs_no_host_command() -> None:
    run = FakeRun(answers(docker=DOCKER_DESKTOP))
    r = hn.inspect_host({"pools": POOLS}, run, which, "Darwin")
    assert (r["via"], r["host_access_needed"], r["interfaces"]) == ("node", False, [])
    assert "on Darwin the Docker engine runs in a VM" in r["reason"]
    assert all(c[0] == "/usr/bin/docker" for c in run.calls)


def test_before_the_first_cluster_the_network_is_missing() -> None:
    r = hn.inspect_host({"pools": POOLS}, FakeRun(answers(network=(1, "[]\n", NETWORK_MISSING))), which, "Linux")
    assert not r["network"]["found"] and r["host_access_needed"] and r["missing_cidrs"] == ["100.64.255.254/16"]
    assert r["notes"] == []


def test_network_name_from_kind_experimental_docker_network(monkeypatch) -> None:
    monkeypatch.setenv("KIND_EXPERIMENTAL_DOCKER_NETWORK", "lab-net")
    run = FakeRun(answers())
    r = hn.inspect_host({"pools": POOLS}, run, which, "Linux")
    assert r["network"]["name"] == "lab-net"
    assert ["/usr/bin/docker", "network", "inspect", "lab-net"] in run.calls


def test_engine_down_and_missing_tools_are_reported_not_raised() -> None:
    r = hn.inspect_host({"pools": POOLS}, FakeRun(answers(docker=DOCKER_DOWN)), which, "Linux")
    assert r["via"] == "node" and "does not answer" in r["reason"]
    r = hn.inspect_host({"pools": POOLS}, FakeRun(answers()), lambda n: None, "Linux")
    assert "docker_binary: 'docker' was not found" in r["reason"]
    assert "ip_binary: 'ip' was not found; install iproute2" in r["notes"]


def test_string_pools_are_pools_of_their_own_and_bad_pools_name_the_field() -> None:
    r = hn.inspect_host({"pools": ["100.64.0.0/16", "192.0.2.0/24"]}, FakeRun(answers()), which, "Linux")
    assert r["host_cidrs"] == ["100.64.255.254/16", "192.0.2.254/24"]
    with pytest.raises(hn.HostNetError, match="pools: pool 'lab-pool'"):
        hn.inspect_host({"pools": [{"name": "lab-pool", "addresses": ["100.64.0.0/33"]}]}, FakeRun({}), which, "Linux")
    with pytest.raises(hn.HostNetError, match="ip_binary: expected a binary name or path"):
        hn.inspect_host({"pools": POOLS, "ip_binary": " "}, FakeRun({}), which, "Linux")


# `ip -j addr show` of a machine whose own network is 192.0.2.0/24 (as on the development machines).
_ETH_ADDR = dict({k: v for k, v in _ETH.items() if k != "linkmode"},
                 addr_info=[dict(_addr("192.0.2.2", 24), label="eth0"), _addr("fd00::2", 64, "inet6")])
_LO_ADDR = dict({k: v for k, v in _LO.items() if k != "linkmode"},
                addr_info=[dict(_addr("127.0.0.1", 8, scope="host"), label="lo")])


def host_answers(eth_addr: dict, **kwargs):
    all_addrs = json.dumps([_LO_ADDR, eth_addr, json.loads(IP_ADDR_BARE)[0]], separators=(",", ":")) + "\n"
    table = answers(**kwargs)
    table[("-j", "addr", "show")] = (0, all_addrs, "")
    table[("-j", "addr", "show", "dev", BRIDGE)] = (0, IP_ADDR_BARE, "")
    return table


def test_a_pool_that_overlaps_a_network_of_this_host_is_flagged_and_not_suggested() -> None:
    r = hn.inspect_host({"pools": [{"name": "doc", "addresses": ["192.0.2.0/24"]}]}, FakeRun(host_answers(_ETH_ADDR)),
                        which, "Linux")
    assert r["host_networks"] == {"192.0.2.0/24": "eth0", "fd00::/64": "eth0"}  # not lo, not the kind bridge
    assert r["host_conflicts"] == ["pool doc overlaps 192.0.2.0/24 on this host's eth0"]
    assert r["suggested_pool"] == "198.51.100.0/24"
    taken = dict(_ETH_ADDR, addr_info=[dict(_addr("198.51.100.7", 24), label="eth0")])
    r = hn.inspect_host({"pools": POOLS}, FakeRun(host_answers(taken)), which, "Linux")
    assert r["host_conflicts"] == [] and r["suggested_pool"] == "203.0.113.0/24"


def test_pools_inside_the_kind_network_are_reached_through_the_bridge() -> None:
    r = hn.inspect_host({"pools": [{"name": "in-kind", "addresses": ["172.18.255.200-172.18.255.250"]}]},
                        FakeRun(answers()), which, "Linux")
    assert r["host_cidrs"] == []
    assert (r["host_reaches_pool"], r["via"], r["host_access_needed"]) == (True, "host", False)


def test_without_pools_a_remote_bridge_is_still_named() -> None:
    r = hn.inspect_host({}, FakeRun(answers(link=IP_LINK_NO_BRIDGE)), which, "Linux")
    assert r["via"] == "node" and "is not an interface of this host" in r["reason"]
