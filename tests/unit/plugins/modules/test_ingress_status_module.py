from __future__ import annotations

from typing import Any

import pytest
from ansible.module_utils import basic

from ansible_collections.kindlab.ingress.plugins.module_utils import _module
from ansible_collections.kindlab.ingress.plugins.modules import ingress_status
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_status import FakeClient, ing, line
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, exit_json, fail_json, run_module


@pytest.fixture
def made(monkeypatch) -> list[tuple]:
    calls: list[tuple] = []

    def make_client(kubeconfig=None, context=None):
        calls.append((kubeconfig, context))
        events = [("MODIFIED", ing("one", "172.18.0.2", rv=6, writes=[("nginx-ingress-controller", "2026-11-21T23:40:02Z")]))]
        return FakeClient(events, {"two/p2": line("23:40:02.000000", "one", "172.18.0.2")})

    monkeypatch.setattr(_module, "Client", make_client)
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    return calls


def run(args: dict[str, Any]) -> Exit:
    return run_module(ingress_status.main, args)


# The windows are wall-clock time: long enough that the fake watch's event is read on a loaded
# machine too (0.2 s once missed it while kind ran beside the unit tests).
def test_flap_fails_by_default_and_reports(made) -> None:
    r = run({"window": 1.5})
    assert r.failed and r.result["msg"].startswith("unstable status: one/test: 1 changes in 1.5s (max 0)")
    assert r.result["timeline"][0]["new"] == ["172.18.0.2"] and r.result["passed"] is False


def test_fail_on_violation_false_collects(made) -> None:
    r = run({"window": 1.5, "fail_on_violation": False, "max_changes": 1, "expected_pools": ["100.64.0.0/16"]})
    assert not r.failed and r.result["passed"] is False
    # two/p2 is the only controller pod, so the only one writing as nginx-ingress-controller (its line is
    # days away from the wall-clock window: no log evidence).
    assert r.result["failures"] == ["one/test: 172.18.0.2 outside expected_pools 100.64.0.0/16, written by nginx-ingress-controller "
                                    "(pods two/p2)", "two/test: 172.18.0.2 outside expected_pools 100.64.0.0/16"]
    assert (r.result["timeline"][0]["pod"], r.result["timeline"][0]["attributed_by"]) == ("two/p2", "manager")
    assert r.result["publishers"] == []  # no workload in the fake cluster


@pytest.mark.parametrize("args, message", [
    ({"window": 0}, "window: expected a number of seconds > 0, got 0.0"),
    ({"max_changes": -2}, "max_changes: expected an integer >= 0, got -2"),
    ({"expected_pools": ["100.64.0.0/33"]}, "expected_pools[0]: not a valid CIDR"),
    ({"names": ["a/b/c"]}, "names: 'a/b/c' is not an Ingress name or namespace/name"),
])
def test_bad_input_fails_before_any_request(made, args: dict[str, Any], message: str) -> None:
    r = run(args)
    assert r.failed and message in r.result["msg"]
    assert made == []
