from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.modules import ingress_conflicts
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_conflicts import ingress, ingress_class
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, run_module, use_fake_exits

INGRESSES = [
    ingress("team-a", "web", [("app.example.com", "/", "Prefix")], created="2026-01-01T00:00:00Z", class_name="nginx"),
    ingress("team-b", "web", [("app.example.com", "/", "Prefix")], created="2026-01-02T00:00:00Z", class_name="nginx"),
    ingress("team-c", "api", [("other.example.com", "/", "Prefix")], class_name="nginx"),
]


class FakeClient:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict[str, Any]]:
        self.calls.append((kind, namespace))
        if kind == "IngressClass":
            return [ingress_class("nginx", "k8s.io/ingress-nginx")]
        return [i for i in INGRESSES if namespace in (None, i["metadata"]["namespace"])]


def run(args: dict[str, Any], client: FakeClient, monkeypatch: pytest.MonkeyPatch) -> Exit:
    use_fake_exits(monkeypatch, client)
    return run_module(ingress_conflicts.main, args)


def test_conflict_with_an_ingress_outside_the_selection(monkeypatch: pytest.MonkeyPatch) -> None:
    r = run({"namespaces": ["team-b"], "fail_on_violation": False}, FakeClient(), monkeypatch)
    assert not r.failed and r.result["passed"] is False
    [conflict] = r.result["conflicts"]
    assert conflict["ingresses"] == ["team-a/web", "team-b/web"] and "team-a/web" in conflict["behaviour"]


def test_fails_by_default_and_passes_without_overlap(monkeypatch: pytest.MonkeyPatch) -> None:
    r = run({}, FakeClient(), monkeypatch)
    assert r.failed and r.result["msg"].startswith("ingress_conflicts: team-a/web and team-b/web both match app.example.com/")
    r = run({"names": ["team-c/api"]}, FakeClient(), monkeypatch)
    assert not r.failed and r.result["passed"] and r.result["conflicts"] == []


def test_bad_selection_fails_before_a_request(monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient()
    r = run({"namespaces": ["Bad_NS"]}, client, monkeypatch)
    assert r.failed and r.result["msg"].startswith("namespaces: ") and client.calls == []
