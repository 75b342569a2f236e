from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.apply import ensure
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import parse_workloads
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import WaitTimeout
from ansible_collections.kindlab.ingress.tests.unit.fakes import FakeClient


SPECS = [{"name": "test", "namespace": "one"}, {"name": "test", "namespace": "two", "ingress": False}]


def run(client: FakeClient, state: str = "present", check_mode: bool = False, **kw: Any) -> dict[str, Any]:
    return ensure(client, parse_workloads(SPECS), state, check_mode, kw.get("wait", True), kw.get("timeout", 1))


def test_first_run_creates_second_run_changes_nothing() -> None:
    client = FakeClient(["one", "two"])
    first = run(client)
    assert first["changed"] and {a["action"] for a in first["objects"]} == {"created"}
    assert len(first["objects"]) == 5
    second = run(client)
    assert not second["changed"] and {a["action"] for a in second["objects"]} == {"unchanged"}


def test_check_mode_writes_nothing_and_reports_creations() -> None:
    client = FakeClient(["one", "two"])
    result = run(client, check_mode=True)
    assert result["changed"] and client.writes == 0
    assert len(result["diff"]) == 5


def test_check_mode_with_a_namespace_not_yet_created_reports_its_objects_as_created() -> None:
    client = FakeClient(["one"])
    result = run(client, check_mode=True)
    assert {a["object"] for a in result["objects"] if a["action"] == "created"} >= {"Deployment two/test", "Service two/test"}
    assert client.writes == 0


def test_missing_namespace_is_an_error_before_any_write() -> None:
    client = FakeClient(["one"])
    with pytest.raises(ValueError, match="namespace.*two.*do not exist"):
        run(client)
    assert client.writes == 0


def test_wait_times_out_naming_the_deployment() -> None:
    client = FakeClient(["one", "two"], never_ready=True)
    with pytest.raises(WaitTimeout, match="Deployment one/test to be ready; last seen: 0/1 ready"):
        ensure(client, parse_workloads(SPECS), "present", False, True, 0)


def test_absent_deletes_then_is_idempotent() -> None:
    client = FakeClient(["one", "two"])
    run(client)
    gone = run(client, state="absent")
    assert gone["changed"] and all(a["action"] == "deleted" for a in gone["objects"])
    assert not run(client, state="absent")["changed"]
