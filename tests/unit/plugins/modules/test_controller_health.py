from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.modules import controller_health
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, run_module, use_fake_exits
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.k8s.test_wait import FATAL, crashing_pod

# Namespace-scoped, as the lab's: two cluster-wide releases named "ingress" would both create the
# ClusterRole ingress-ingress-nginx, which lab validation refuses (helm would).
CONTROLLERS = [
    {"namespace": ns, "values": {"controller": {"admissionWebhooks": {"enabled": False}, "ingressClassResource": {"name": "nginx-" + ns},
                                                "scope": {"enabled": True}}, "rbac": {"scope": True}}}
    for ns in ("one", "two")
]


class FakeClient:
    """Controller one is ready; two's pod crash-loops."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        self.calls.append("get %s %s/%s" % (kind, namespace, name))
        n = 1 if namespace == "one" else 0
        return {"metadata": {"name": name, "namespace": namespace}, "spec": {"replicas": 1, "selector": {"matchLabels": {"x": "y"}}},
                "status": {"readyReplicas": n, "updatedReplicas": n, "availableReplicas": n}}

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict[str, Any]]:
        return [crashing_pod()] if namespace == "two" else []

    def pod_log(self, namespace: str, name: str, container: str | None = None, since_seconds: int | None = None,
                tail_lines: int | None = None, previous: bool = False) -> str:
        return FATAL + "\n"


def run(args: dict[str, Any], client: FakeClient, monkeypatch: pytest.MonkeyPatch) -> Exit:
    use_fake_exits(monkeypatch, client)
    return run_module(controller_health.main, args)


def test_a_crash_loop_fails_with_its_cause_or_is_collected(monkeypatch: pytest.MonkeyPatch) -> None:
    r = run({"controllers": CONTROLLERS}, FakeClient(), monkeypatch)
    assert r.failed and r.result["msg"].startswith("controllers not started: two/ingress: cannot start: pod two/")
    assert r.result["msg"].endswith(FATAL) and r.result["controllers"]["one/ingress"]["passed"] is True
    r = run({"controllers": CONTROLLERS, "fail_on_violation": False}, FakeClient(), monkeypatch)
    assert not r.failed and r.result["passed"] is False and r.result["changed"] is False
    assert r.result["controllers"]["two/ingress"]["failure"]["exit_code"] == 255


def test_bad_options_fail_before_a_request(monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient()
    r = run({"controllers": [{"namespace": "one", "valuez": {}}]}, client, monkeypatch)
    assert r.failed and r.result["msg"].startswith("controllers[0]: unknown keys ['valuez']") and client.calls == []
    r = run({"controllers": CONTROLLERS, "log_lines": -1}, client, monkeypatch)
    assert r.failed and r.result["msg"] == "log_lines: expected a number of lines >= 0, got -1" and client.calls == []
