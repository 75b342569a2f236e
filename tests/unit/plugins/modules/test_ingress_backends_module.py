from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.modules import ingress_backends
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, run_module, use_fake_exits


class FakeClient:
    def __init__(self, ready: bool) -> None:
        self.ready = ready
        self.calls: list[Any] = []

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        return {"metadata": {"name": name}, "spec": {"ports": [{"name": "http", "port": 80}]}}

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict[str, Any]]:
        self.calls.append((kind, namespace, label_selector))
        if kind == "Ingress":
            return [{"metadata": {"namespace": "two", "name": "test"}, "spec": {"defaultBackend": {
                "service": {"name": "test", "port": {"name": "http"}}}}}]
        return [{"ports": [{"name": "http", "port": 80}],
                 "endpoints": [{"addresses": ["10.244.0.7"], "conditions": {"ready": self.ready}}]}]


def run(args: dict[str, Any], client: FakeClient, monkeypatch: pytest.MonkeyPatch) -> Exit:
    use_fake_exits(monkeypatch, client)
    return run_module(ingress_backends.main, args)


def test_ready_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    r = run({"namespaces": ["two"]}, FakeClient(True), monkeypatch)
    assert not r.failed and r.result["passed"] and r.result["changed"] is False


def test_not_ready_fails_or_collects(monkeypatch: pytest.MonkeyPatch) -> None:
    message = "two/test: backend test:http has 0 ready endpoints (Service exists, 0 of 1 pods ready)"
    r = run({}, FakeClient(False), monkeypatch)
    assert r.failed and r.result["msg"] == "ingress_backends: " + message
    r = run({"fail_on_violation": False}, FakeClient(False), monkeypatch)
    assert not r.failed and r.result["failures"] == [message]


def test_bad_selector_fails_before_a_request(monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient(True)
    r = run({"label_selector": "app in a,b"}, client, monkeypatch)
    assert r.failed and r.result["msg"].startswith("label_selector: ") and client.calls == []
