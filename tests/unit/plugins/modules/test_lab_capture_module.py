"""The lab_capture module: options, check mode, idempotence, errors naming the option; the logic is
tested in tests/unit/plugins/module_utils/capture/test_capture_cluster.py."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import KindNotServed
from ansible_collections.kindlab.ingress.plugins.modules import lab_capture
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, run_module, use_fake_exits
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.capture.test_capture_cluster import cluster


class FakeClient:
    """Answers list calls from the capture test's cluster; records the kinds asked for."""

    def __init__(self) -> None:
        self.state = cluster()
        self.asked: list[str] = []

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None) -> list[dict]:
        self.asked.append(kind)
        s = self.state
        table = {"Deployment": [w for w in s.workloads if w.get("kind") != "DaemonSet"], "DaemonSet": [], "Pod": s.pods,
                 "Service": s.services, "Node": s.nodes, "Namespace": s.namespaces, "IngressClass": s.ingress_classes,
                 "ClusterRole": s.cluster_roles, "ClusterRoleBinding": s.cluster_role_bindings, "Ingress": s.ingresses}
        if kind not in table:
            raise KindNotServed("the cluster does not serve %s %s" % (api_version, kind))
        return [i for i in table[kind] if namespace is None or i["metadata"].get("namespace") == namespace]


@pytest.fixture
def client(monkeypatch: pytest.MonkeyPatch) -> FakeClient:
    fake = FakeClient()
    use_fake_exits(monkeypatch, fake)
    return fake


def run(args: dict[str, Any], check_mode: bool = False) -> Exit:
    return run_module(lab_capture.main, dict(args, _ansible_check_mode=check_mode))


def test_check_mode_reads_and_writes_nothing(client: FakeClient, tmp_path: Path) -> None:
    dest = tmp_path / "captured.yml"
    r = run({"dest": str(dest)}, check_mode=True)
    assert not r.failed and r.result["changed"] is True and not dest.exists()
    assert {c["release"] for c in r.result["controllers"]} >= {"one/ingress", "two/ingress", "three/ingress"}
    # Read-only, and never a Secret or a ConfigMap.
    assert not {"Secret", "ConfigMap"} & set(client.asked)


def test_writes_the_file_once_and_a_second_run_changes_nothing(client: FakeClient, tmp_path: Path) -> None:
    dest = tmp_path / "captured.yml"
    r = run({"dest": str(dest), "scenario": "incident-42", "namespaces": ["one", "two", "three"]})
    assert not r.failed and r.result["changed"] is True
    lab = yaml.safe_load(dest.read_text())
    assert lab == r.result["lab"] and lab["lab_scenario"] == "incident-42"
    assert {w["namespace"] for w in lab["lab_workloads"]} == {"one", "two", "three"}
    assert lab["lab_capture_report"] == r.result["unexpressed"]
    again = run({"dest": str(dest), "scenario": "incident-42", "namespaces": ["one", "two", "three"]})
    assert not again.failed and again.result["changed"] is False


def test_anonymize_writes_no_original_name(client: FakeClient, tmp_path: Path) -> None:
    dest = tmp_path / "public.yml"
    r = run({"dest": str(dest), "anonymize": True})
    assert not r.failed
    text = dest.read_text()
    assert "shop.corp.internal" not in text and "storefront" not in text and "ns-1" in text


@pytest.mark.parametrize("args, message", [
    ({"scenario": "Not A Name"}, "scenario: expected a lower-case DNS label"),
    ({"namespaces": ["Bad_NS"]}, "namespaces: expected a list of namespace names"),
])
def test_bad_options_fail_naming_them(client: FakeClient, tmp_path: Path, args: dict[str, Any], message: str) -> None:
    r = run(dict(args, dest=str(tmp_path / "x.yml")))
    assert r.failed and r.result["msg"].startswith(message)


def test_an_unwritable_dest_fails_naming_it(client: FakeClient, tmp_path: Path) -> None:
    r = run({"dest": str(tmp_path / "missing-dir" / "x.yml")})
    assert r.failed and r.result["msg"].startswith("dest: cannot write")


def test_manifests_are_captured_without_a_cluster_and_a_watch_of_them_is_refused(client: FakeClient, tmp_path: Path) -> None:
    from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.capture.test_capture_manifests import team

    dest = tmp_path / "out" / "captured.yml"
    dest.parent.mkdir()
    (tmp_path / "in").mkdir()
    manifests = team(tmp_path / "in")
    r = run_module(lab_capture.main, {"manifests": str(manifests), "dest": str(dest)})
    assert not r.failed and r.result["changed"], r.result
    assert client.asked == []  # the cluster is not read
    written = dest.read_text()
    assert written.startswith("---\n# Captured by kindlab.ingress.lab_capture from the manifests %s (read-only)." % manifests)
    assert [c["release"] for c in yaml.safe_load(written)["lab_controllers"]] == ["ingress-nginx"]
    again = run_module(lab_capture.main, {"manifests": str(manifests), "dest": str(dest)})
    assert not again.result["changed"]
    refused = run_module(lab_capture.main, {"manifests": str(manifests), "dest": str(dest), "watch": 5})
    assert refused.failed and refused.result["msg"].startswith("watch: manifests have no status to watch")
