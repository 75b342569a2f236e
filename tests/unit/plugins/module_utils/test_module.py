from __future__ import annotations

from typing import Any

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.kindlab.ingress.plugins.module_utils import _module
from ansible_collections.kindlab.ingress.plugins.module_utils._errors import CheckFailed, OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kindlab.ingress.plugins.module_utils._module import KindlabModule, Module, Params
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, exit_json, fail_json

SPEC: dict[str, Any] = {
    "name": {"type": "str", "default": "lab"},
    "kubeconfig": {"type": "path"},
    "context": {"type": "str"},
}


@pytest.fixture(autouse=True)
def exits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)


def run(args: dict[str, Any], logic: Any, requires: tuple[str, ...] = ()) -> Exit:
    with patch_module_args(args):
        with pytest.raises(Exit) as exc:
            KindlabModule(argument_spec=SPEC, requires=requires).run(logic)
    return exc.value


def changed_with_diff(params: Params, module: Module) -> dict[str, Any]:
    return {"changed": True, "name": params["name"], "diff": [{"before": {}, "after": {"name": params["name"]}}]}


def test_the_logic_gets_the_validated_options() -> None:
    r = run({"name": "one"}, changed_with_diff)
    assert not r.failed and r.result["name"] == "one" and r.result["changed"] is True


def test_diff_only_with_diff_mode() -> None:
    assert "diff" not in run({}, changed_with_diff).result
    r = run({"_ansible_diff": True}, changed_with_diff)
    assert r.result["diff"] == [{"before": {}, "after": {"name": "lab"}}]


def test_check_mode_reaches_the_logic() -> None:
    seen: list[bool] = []

    def logic(params: Params, module: Module) -> dict[str, Any]:
        seen.append(module.check_mode)
        return {}

    r = run({}, logic)
    assert r.result["changed"] is False  # a result without `changed` reports no change
    run({"_ansible_check_mode": True}, logic)
    assert seen == [False, True]


def test_the_root_error_becomes_fail_json_with_its_details() -> None:
    def logic(params: Params, module: Module) -> dict[str, Any]:
        raise K8sError("timed out waiting for Deployment one/app", last_seen={"ready": 0}, diff=[{"x": 1}])

    r = run({}, logic)
    assert r.failed and r.result["msg"] == "timed out waiting for Deployment one/app"
    assert r.result["last_seen"] == {"ready": 0} and "diff" not in r.result
    assert run({"_ansible_diff": True}, logic).result["diff"] == [{"x": 1}]


def test_option_errors_and_check_failures_fail_the_same_way() -> None:
    def bad_option(params: Params, module: Module) -> dict[str, Any]:
        raise OptionError("name: expected a DNS label, got %r" % params["name"])

    def violation(params: Params, module: Module) -> dict[str, Any]:
        raise CheckFailed("2 changes", changed=False, passed=False)

    r = run({"name": "Bad_Name"}, bad_option)
    assert r.failed and r.result["msg"] == "name: expected a DNS label, got 'Bad_Name'"
    r = run({}, violation)
    assert r.failed and r.result["msg"] == "2 changes" and r.result["passed"] is False


def test_other_exceptions_are_not_swallowed() -> None:
    def broken(params: Params, module: Module) -> dict[str, Any]:
        raise KeyError("bug")

    with patch_module_args({}):
        with pytest.raises(KeyError):
            KindlabModule(argument_spec=SPEC).run(broken)


def test_a_missing_declared_library_fails_before_the_logic(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_module.LIBRARIES, "PyYAML", "Traceback: No module named 'yaml'")
    called: list[bool] = []
    with patch_module_args({}):
        with pytest.raises(Exit) as exc:
            KindlabModule(argument_spec=SPEC, requires=("PyYAML",)).run(lambda p, rt: called.append(True) or {})
    assert exc.value.failed and "PyYAML" in exc.value.result["msg"] and called == []
    assert exc.value.result["exception"] == "Traceback: No module named 'yaml'"


def test_an_unknown_library_is_a_programming_error() -> None:
    with patch_module_args({}):
        with pytest.raises(ValueError, match="unknown libraries"):
            KindlabModule(argument_spec=SPEC, requires=("nosuchlib",))


def test_the_client_comes_from_the_cluster_options(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[tuple[str | None, str | None]] = []
    monkeypatch.setattr(_module, "Client", lambda kubeconfig=None, context=None: made.append((kubeconfig, context)) or "client")

    def logic(params: Params, module: Module) -> dict[str, Any]:
        return {"clients": [module.client(), module.client("/other", "kind-other")]}

    r = run({"kubeconfig": "/k", "context": "kind-lab"}, logic)
    assert r.result["clients"] == ["client", "client"]
    assert made == [("/k", "kind-lab"), ("/other", "kind-other")]


def test_the_client_needs_the_kubernetes_library(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(_module.LIBRARIES, "kubernetes", "Traceback: No module named 'kubernetes'")
    monkeypatch.setattr(_module, "Client", lambda *a, **k: pytest.fail("no client without the library"))

    def logic(params: Params, module: Module) -> dict[str, Any]:
        module.client()
        return {}

    r = run({}, logic)
    assert r.failed and "kubernetes" in r.result["msg"]


def test_warnings_in_a_result_become_module_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    warned: list[str] = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, msg: warned.append(msg))
    r = run({}, lambda p, rt: {"warnings": ["pools were not checked"]})
    assert warned == ["pools were not checked"] and "warnings" not in r.result


def test_run_command_never_returns_none_output(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(basic.AnsibleModule, "run_command", lambda self, argv, data=None: (0, None, None))
    r = run({}, lambda p, rt: {"out": rt.run_command(["true"])})
    assert r.result["out"] == (0, "", "")
