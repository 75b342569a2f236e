from __future__ import annotations

import copy
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils import _workloads as wl
from ansible_collections.kindlab.ingress.plugins.module_utils._k8s import ApplyResult, WaitTimeout


class FakeClient:
    """Stores applied objects by (kind, namespace, name); Deployments become ready on apply
    unless `never_ready` is set, so the waiter's success and timeout can both be tested."""

    def __init__(self, namespaces: list[str], never_ready: bool = False) -> None:
        self.objects: dict[tuple[str, str | None, str], dict[str, Any]] = {
            ("Namespace", None, ns): {"kind": "Namespace", "metadata": {"name": ns}} for ns in namespaces
        }
        self.never_ready = never_ready
        self.writes = 0

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        return copy.deepcopy(self.objects.get((kind, namespace, name)))

    def apply_all(self, objs: list[dict[str, Any]], check_mode: bool = False) -> list[ApplyResult]:
        results = []
        for obj in objs:
            key = (obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])
            before = self.objects.get(key)
            after = copy.deepcopy(obj)
            if obj["kind"] == "Deployment" and not self.never_ready:
                n = obj["spec"]["replicas"]
                after["status"] = {"readyReplicas": n, "updatedReplicas": n, "availableReplicas": n}
            changed = before is None or {k: v for k, v in before.items() if k != "status"} != obj
            if changed and not check_mode:
                self.objects[key] = after
                self.writes += 1
            results.append(ApplyResult(changed=changed, before=before, after=after,
                                       diff={"before": before or {}, "after": obj} if changed else {}))
        return results

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None, check_mode: bool = False) -> bool:
        key = (kind, namespace, name)
        if key not in self.objects:
            return False
        if not check_mode:
            del self.objects[key]
        return True


SPECS = [{"name": "test", "namespace": "one"}, {"name": "test", "namespace": "two", "ingress": False}]


def run(client: FakeClient, state: str = "present", check_mode: bool = False, **kw: Any) -> dict[str, Any]:
    return wl.ensure(client, wl.parse_workloads(SPECS), state, check_mode, kw.get("wait", True), kw.get("timeout", 1))


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
        wl.ensure(client, wl.parse_workloads(SPECS), "present", False, True, 0)


def test_absent_deletes_then_is_idempotent() -> None:
    client = FakeClient(["one", "two"])
    run(client)
    gone = run(client, state="absent")
    assert gone["changed"] and all(a["action"] == "deleted" for a in gone["objects"])
    assert not run(client, state="absent")["changed"]
