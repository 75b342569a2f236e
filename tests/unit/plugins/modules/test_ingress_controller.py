# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module's main() end to end with a fake cluster and a fake helm (no cluster needed)."""
from __future__ import annotations

import json

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.kindlab.ingress.plugins.module_utils import _module
from ansible_collections.kindlab.ingress.plugins.modules import ingress_controller as mod
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.controllers.test_install import (
    SEED_ONE,
    SEED_TWO,
    FakeClient,
    FakeHelm,
)


@pytest.fixture
def cluster(monkeypatch):
    client = FakeClient()
    monkeypatch.setattr(_module, "Client", lambda kubeconfig=None, context=None: client)
    return client


@pytest.fixture
def helm(monkeypatch):
    fake = FakeHelm()
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, **kw: fake(argv))
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, arg, *a, **kw: "/usr/local/bin/" + arg)
    return fake


def run_module(capsys, args, check=False, diff=False):
    if check:
        args = dict(args, _ansible_check_mode=True)
    if diff:
        args = dict(args, _ansible_diff=True)
    with patch_module_args(args), pytest.raises(SystemExit) as exc:
        mod.main()
    out = json.loads(capsys.readouterr().out)
    out["rc"] = exc.value.code
    return out


def test_manifest_check_mode_idempotency_and_diff(capsys, cluster):
    args = {"namespace": "one", "method": "manifest", "values": SEED_ONE, "wait": False}
    check = run_module(capsys, args, check=True, diff=True)
    assert check["rc"] == 0 and check["changed"] is True and cluster.store == {}
    assert check["rbac_scope"] == "namespace" and check["watch_namespace"] == "one"
    assert check["diff"][0]["after_header"] == "Namespace one"
    applied = run_module(capsys, args)
    assert applied["changed"] is True and "diff" not in applied
    assert applied["objects"][-1] == "Deployment one/ingress-ingress-nginx-controller"
    again = run_module(capsys, args)
    assert again["changed"] is False


def test_manifest_with_convenience_options(capsys, cluster):
    res = run_module(capsys, {"namespace": "one", "method": "manifest", "scope": True, "publish_service": True, "ingress_class": "nginx-one",
                              "values": {"controller": {"admissionWebhooks": {"enabled": False}}}, "wait": True})
    assert res["changed"] is True and res["ready"].startswith("1/1")
    assert res["ingress_class"]["resource"] == {"name": "nginx-one", "controller_value": "k8s.io/ingress-nginx-nginx-one", "default": False}
    assert "--watch-namespace=$(POD_NAMESPACE)" in res["args"]


def test_helm_seed_two(capsys, helm):
    args = {"namespace": "two", "values": SEED_TWO, "wait": False}
    check = run_module(capsys, args, check=True)
    assert check["changed"] is True and [c[1] for c in helm.calls] == ["list"]
    first = run_module(capsys, args)
    assert first["changed"] is True and first["release"]["status"] == "deployed"
    assert first["commands"][1][0] == "/usr/local/bin/helm"
    assert first["publish"]["source"] == "node-addresses"
    assert any("pathOverride 'two/svc' is ignored" in n for n in first["notes"])
    second = run_module(capsys, args)
    assert second["changed"] is False


def test_errors_name_the_field(capsys, helm):
    bad = run_module(capsys, {"namespace": "two", "values": {"controller": {"scope": {"enabled": "yes"}}}})
    assert bad["failed"] is True
    assert bad["msg"] == "values: controller.scope.enabled: expected a boolean, got 'yes'"
    assert helm.calls == []  # validated before any change


def test_missing_helm(capsys, monkeypatch):
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, arg, *a, **kw: None)
    res = run_module(capsys, {"namespace": "two", "values": SEED_TWO})
    assert res["failed"] is True and "helm_binary: 'helm' was not found" in res["msg"]
    res = run_module(capsys, {"namespace": "two", "values": SEED_TWO, "helm_binary": "/nonexistent/helm"})
    assert "helm_binary: '/nonexistent/helm' was not found" in res["msg"]


def test_missing_kubernetes_library(capsys, monkeypatch):
    monkeypatch.setitem(_module.LIBRARIES, "kubernetes", "Traceback: No module named kubernetes")
    res = run_module(capsys, {"namespace": "one", "method": "manifest", "values": SEED_ONE})
    assert res["failed"] is True and "kubernetes" in res["msg"]
