from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.verify import ingresses as ing
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import WaitTimeout


def ingress(*entries: dict[str, str]) -> dict[str, Any]:
    return {"status": {"loadBalancer": {"ingress": list(entries)}}}


def test_status_addresses_keeps_order_and_takes_hostnames() -> None:
    assert ing.status_addresses(ingress({"ip": "100.64.0.1"}, {"hostname": "lb.example"})) == ["100.64.0.1", "lb.example"]
    assert ing.status_addresses({"status": {}}) == []
    assert ing.status_addresses({"status": {"loadBalancer": {}}}) == []
    assert ing.status_addresses(None) == []


@pytest.mark.parametrize("bad", ["one", "one/two/three", "/x", {"namespace": "a"}, 5])
def test_bad_refs_name_the_entry(bad: Any) -> None:
    with pytest.raises(ValueError, match=r"^ingresses\[1\]: expected 'namespace/name'"):
        ing.parse_refs(["one/test", bad])


def test_refs_accept_both_forms() -> None:
    assert ing.parse_refs(["one/test", {"namespace": "two", "name": "web"}]) == [("one", "test"), ("two", "web")]


class Cluster:
    def __init__(self, states: dict[str, list[dict[str, Any] | None]]) -> None:
        self.states = states  # each get() pops the next state of that ingress

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        seq = self.states["%s/%s" % (namespace, name)]
        return seq.pop(0) if len(seq) > 1 else seq[0]


def test_wait_returns_once_every_ingress_has_an_address() -> None:
    cluster = Cluster({"one/test": [ingress(), ingress({"ip": "100.64.0.0"})], "two/test": [ingress({"ip": "172.18.0.2"})]})
    found = ing.wait_for_addresses(cluster, [("one", "test"), ("two", "test")], timeout=5, interval=0)
    assert found == {"one/test": ["100.64.0.0"], "two/test": ["172.18.0.2"]}


def test_wait_timeout_names_what_is_missing() -> None:
    cluster = Cluster({"one/test": [ingress()], "two/test": [None]})
    with pytest.raises(WaitTimeout, match=r"one/test \(no address\), two/test \(not found\)"):
        ing.wait_for_addresses(cluster, [("one", "test"), ("two", "test")], timeout=0, interval=0)
