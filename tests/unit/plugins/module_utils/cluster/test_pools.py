from __future__ import annotations

import ipaddress

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.cluster import pools as pl
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import ClusterNetworks, PoolError

KIND_NETWORKS = ClusterNetworks(node=("172.18.0.0/16", "fc00:f853:ccd:e793::/64"), pod=("10.244.0.0/16",),
                                service=("10.96.0.0/16",))


def one(addresses, name="lab", **extra):
    return pl.parse_pools([{"name": name, "addresses": addresses, **extra}])[0]


# --- parsing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry, first, last, size, metallb",
    [
        ("100.64.0.0/16", "100.64.0.0", "100.64.255.255", 65536, "100.64.0.0/16"),
        ("100.64.0.10-100.64.0.20", "100.64.0.10", "100.64.0.20", 11, "100.64.0.10-100.64.0.20"),
        (" 100.64.0.10 - 100.64.0.20 ", "100.64.0.10", "100.64.0.20", 11, "100.64.0.10-100.64.0.20"),
        ("100.64.0.0-100.64.0.255", "100.64.0.0", "100.64.0.255", 256, "100.64.0.0/24"),
        ("100.64.0.7", "100.64.0.7", "100.64.0.7", 1, "100.64.0.7/32"),
        ("100.64.0.7/32", "100.64.0.7", "100.64.0.7", 1, "100.64.0.7/32"),
        ("fd00:64::/120", "fd00:64::", "fd00:64::ff", 256, "fd00:64::/120"),
        ("fd00:64::10-fd00:64::20", "fd00:64::10", "fd00:64::20", 17, "fd00:64::10-fd00:64::20"),
        ("fd00:64::1", "fd00:64::1", "fd00:64::1", 1, "fd00:64::1/128"),
    ],
)
def test_entries_parse(entry, first, last, size, metallb) -> None:
    r = pl.parse_entry("lab", entry)
    assert (str(r.first), str(r.last), r.size, r.metallb()) == (first, last, size, metallb)


def test_pool_summary_counts_all_entries() -> None:
    pool = one(["100.64.0.0/30", "100.64.1.1-100.64.1.3", "fd00::1"], auto_assign=False)
    assert pool.size == 4 + 3 + 1
    s = pool.summary()
    assert s["addresses"] == ["100.64.0.0/30", "100.64.1.1-100.64.1.3", "fd00::1/128"]
    assert s["auto_assign"] is False and s["size"] == 8


def test_auto_assign_none_means_default_true() -> None:
    assert one(["100.64.0.0/24"], auto_assign=None).auto_assign is True


def test_a_single_string_is_taken_as_one_entry() -> None:
    assert pl.parse_pools([{"name": "lab", "addresses": "100.64.0.0/24"}])[0].size == 256


# --- every rejected case -----------------------------------------------------------------------


@pytest.mark.parametrize(
    "pools, message",
    [
        (None, "pools: expected a non-empty list"),
        ([], "pools: expected a non-empty list"),
        (["100.64.0.0/16"], "pools[0]: expected a mapping"),
        ([{"name": "lab", "addresses": ["100.64.0.0/16"], "colour": "red"}], "pools[0]: unknown key(s) colour"),
        ([{"addresses": ["100.64.0.0/16"]}], "pools[0].name: None is not a valid object name"),
        ([{"name": "Lab_Pool", "addresses": ["100.64.0.0/16"]}], "pools[0].name: 'Lab_Pool' is not a valid object name"),
        ([{"name": "lab"}], "pool 'lab': addresses must be a non-empty list"),
        ([{"name": "lab", "addresses": []}], "pool 'lab': addresses must be a non-empty list"),
        ([{"name": "lab", "addresses": [""]}], "pool 'lab' entry '': expected a CIDR"),
        ([{"name": "lab", "addresses": [42]}], "pool 'lab' entry 42: expected a CIDR"),
        ([{"name": "lab", "addresses": ["not-an-ip"]}], "pool 'lab' entry 'not-an-ip': a range must be two IP addresses"),
        ([{"name": "lab", "addresses": ["100.64.0.300"]}], "pool 'lab' entry '100.64.0.300': expected a CIDR"),
        ([{"name": "lab", "addresses": ["100.64.0.0/33"]}], "pool 'lab' entry '100.64.0.0/33': not a valid CIDR"),
        ([{"name": "lab", "addresses": ["100.64.1.1/16"]}], "host bits are set; did you mean 100.64.0.0/16?"),
        ([{"name": "lab", "addresses": ["100.64.0.20-100.64.0.10"]}], "the range starts after it ends (100.64.0.20 > 100.64.0.10)"),
        ([{"name": "lab", "addresses": ["100.64.0.1-fd00::1"]}], "the range mixes IPv4 and IPv6"),
        ([{"name": "lab", "addresses": ["100.64.0.1-"]}], "a range must be two IP addresses"),
        ([{"name": "lab", "addresses": ["100.64.0.0/24", "100.64.0.128-100.64.1.5"]}],
         "pool 'lab': entries '100.64.0.0/24' and '100.64.0.128-100.64.1.5' overlap"),
        ([{"name": "lab", "addresses": ["100.64.0.0/24"], "auto_assign": "yes"}], "pool 'lab': auto_assign must be true or false"),
        ([{"name": "lab", "addresses": ["100.64.0.0/24"]}, {"name": "lab", "addresses": ["100.65.0.0/24"]}],
         "the name 'lab' is used twice"),
        ([{"name": "a", "addresses": ["100.64.0.0/16"]}, {"name": "b", "addresses": ["100.64.10.1"]}],
         "pools 'a' and 'b' overlap: '100.64.0.0/16' and '100.64.10.1' share addresses"),
        ([{"name": "a", "addresses": ["fd00::/64"]}, {"name": "b", "addresses": ["fd00::5-fd00::9"]}],
         "pools 'a' and 'b' overlap"),
    ],
)
def test_rejected_pools(pools, message) -> None:
    with pytest.raises(PoolError) as exc:
        pl.parse_pools(pools)
    assert message in str(exc.value)


def test_same_addresses_in_other_family_do_not_overlap() -> None:
    a, b = pl.parse_pools([{"name": "a", "addresses": ["0.0.0.0/30"]}, {"name": "b", "addresses": ["::/126"]}])
    assert a.size == b.size == 4


# --- cluster networks --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "entry, label",
    [
        ("172.18.255.200-172.18.255.250", "the node network 172.18.0.0/16"),
        ("fc00:f853:ccd:e793::100-fc00:f853:ccd:e793::1ff", "the node network fc00:f853:ccd:e793::/64"),
        ("10.244.3.0/24", "the pod CIDR 10.244.0.0/16"),
        ("10.96.0.10", "the service CIDR 10.96.0.0/16"),
        ("10.0.0.0/8", "the pod CIDR 10.244.0.0/16"),  # a pool around a cluster network
    ],
)
def test_overlap_with_cluster_networks_fails_naming_both(entry, label) -> None:
    pool = one([entry])
    with pytest.raises(PoolError) as exc:
        pl.check_cluster_overlap([pool], KIND_NETWORKS)
    msg = str(exc.value)
    assert "pool 'lab' entry %r overlaps %s" % (entry, label) in msg
    assert "allow_overlap_with_cluster_networks: true" in msg


def test_overlap_allowed_becomes_a_warning() -> None:
    pool = one(["172.18.255.200-172.18.255.250"])
    warnings = pl.check_cluster_overlap([pool], KIND_NETWORKS, allow=True)
    assert warnings == ["pool 'lab' entry '172.18.255.200-172.18.255.250' overlaps the node network 172.18.0.0/16"]


def test_lab_pool_is_clear_of_kind_networks() -> None:
    assert pl.check_cluster_overlap([one(["100.64.0.0/16"])], KIND_NETWORKS) == []


def test_bad_cluster_network_is_named() -> None:
    with pytest.raises(PoolError, match="pod CIDR 'ten' is not a CIDR"):
        pl.check_cluster_overlap([one(["100.64.0.0/16"])], ClusterNetworks(pod=("ten",)))


def test_split_cidrs_accepts_kind_dual_stack_strings() -> None:
    assert pl.split_cidrs("10.244.0.0/16, fd00:10:244::/56") == ("10.244.0.0/16", "fd00:10:244::/56")
    assert pl.split_cidrs(["10.96.0.0/16"]) == ("10.96.0.0/16",)
    assert pl.split_cidrs(None) == ()


# --- membership -------------------------------------------------------------------------------


def test_address_in_pools() -> None:
    pools = pl.parse_pools([
        {"name": "a", "addresses": ["100.64.0.0/24"]},
        {"name": "b", "addresses": ["100.65.0.10-100.65.0.20", "fd00::7"]},
    ])
    assert pl.address_in_pools("100.64.0.255", pools) == "a"
    assert pl.address_in_pools("100.65.0.10", pools) == "b"
    assert pl.address_in_pools("100.65.0.20", pools) == "b"
    assert pl.address_in_pools("100.65.0.21", pools) is None
    assert pl.address_in_pools("fd00::7", pools) == "b"
    assert pl.address_in_pools("172.18.0.2", pools) is None
    assert pl.address_in_pools("example.com", pools) is None
    assert pl.address_in_pools(ipaddress.ip_address("100.64.0.1"), pools) == "a"


# --- host access ------------------------------------------------------------------------------


def test_host_access_for_the_lab_pool() -> None:
    hosts, pools = pl.plan_host_access([one(["100.64.0.0/16"])], ["172.18.0.0/16"])
    assert [h.summary() for h in hosts] == [{
        "address": "100.64.255.254", "prefix": 16, "cidr": "100.64.255.254/16", "network": "100.64.0.0/16", "pools": ["lab"],
    }]
    # network, host and broadcast addresses are carved out of what MetalLB gets
    assert pools[0].addresses() == ["100.64.0.1-100.64.255.253"]
    assert pools[0].size == 65536 - 3
    assert pl.address_in_pools("100.64.255.254", pools) is None


def test_host_access_for_a_range_uses_its_smallest_covering_network() -> None:
    hosts, pools = pl.plan_host_access([one(["100.64.0.10-100.64.0.100"])])
    assert hosts[0].cidr == "100.64.0.126/25"
    assert pools[0].addresses() == ["100.64.0.10-100.64.0.100"]  # the reserved ones were never in it


def test_host_address_is_carved_from_whichever_pool_holds_it() -> None:
    hosts, pools = pl.plan_host_access(pl.parse_pools([
        {"name": "low", "addresses": ["100.64.0.0-100.64.0.20"]},   # link 100.64.0.0/27
        {"name": "mid", "addresses": ["100.64.0.29-100.64.0.30"]},  # link 100.64.0.28/30, inside low's
        {"name": "high", "addresses": ["100.64.0.250-100.64.0.255"]},  # link 100.64.0.248/29
    ]))
    assert {h.cidr: h.pools for h in hosts} == {"100.64.0.30/27": ("low", "mid"), "100.64.0.254/29": ("high",)}
    by_name = {p.name: p.addresses() for p in pools}
    assert by_name == {
        "low": ["100.64.0.1-100.64.0.20"],
        "mid": ["100.64.0.29/32"],
        "high": ["100.64.0.250-100.64.0.253"],
    }


def test_pool_left_empty_by_reservations_is_an_error() -> None:
    with pytest.raises(PoolError, match="pool 'mid': nothing is left for MetalLB"):
        pl.plan_host_access(pl.parse_pools([
            {"name": "low", "addresses": ["100.64.0.0-100.64.0.20"]},
            {"name": "mid", "addresses": ["100.64.0.30"]},
        ]))


def test_pools_inside_the_node_network_need_no_host_address() -> None:
    hosts, pools = pl.plan_host_access([one(["172.18.255.200-172.18.255.250"])], ["172.18.0.0/16"])
    assert hosts == [] and pools[0].addresses() == ["172.18.255.200-172.18.255.250"]


def test_ipv6_host_access_takes_the_last_address() -> None:
    hosts, pools = pl.plan_host_access([one(["fd00:64::/120"])])
    assert hosts[0].cidr == "fd00:64::ff/120"
    assert pools[0].addresses() == ["fd00:64::-fd00:64::fe"]


def test_dual_stack_pool_gets_one_address_per_family() -> None:
    hosts, _pools = pl.plan_host_access([one(["100.64.0.0/24", "fd00:64::/120"])])
    assert sorted(h.cidr for h in hosts) == ["100.64.0.254/24", "fd00:64::ff/120"]


def test_tiny_networks_have_no_host_address() -> None:
    assert pl.host_address_for(ipaddress.ip_network("100.64.0.0/31")) is None
    assert pl.host_address_for(ipaddress.ip_network("fd00::/127")) is None
    hosts, pools = pl.plan_host_access([one(["100.64.0.5"])])
    assert hosts == [] and pools[0].addresses() == ["100.64.0.5/32"]


def test_subtract_splits_ranges() -> None:
    r = pl.parse_entry("x", "100.64.0.0/29")
    parts = pl.subtract(r, [ipaddress.ip_address("100.64.0.3"), ipaddress.ip_address("100.64.0.0")])
    assert [p.metallb() for p in parts] == ["100.64.0.1-100.64.0.2", "100.64.0.4/30"]


def test_free_network_is_the_first_16_of_the_shared_space_nothing_announced_overlaps() -> None:
    from ipaddress import ip_network

    from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import entry_network, free_network

    assert free_network([]) == ip_network("100.64.0.0/16")
    taken = entry_network("100.64.0.2") + entry_network("100.65.0.0-100.65.0.255") + [ip_network("fd00::/8")]
    assert free_network(taken) == ip_network("100.66.0.0/16")
    assert free_network(entry_network("100.64.0.0/10")) is None
    assert entry_network("100.64.0.0-100.64.0.9") == [ip_network("100.64.0.0/29"), ip_network("100.64.0.8/31")]
