# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The `ingress_controller` module's method=helm path for real: the module's main() with the
real AnsibleModule.run_command and the real k8s.client.Client, a real helm binary ($HELM_BIN or
PATH), a twin cluster (the real control plane + emulations; the module and helm use
its admin kubeconfig, a client certificate) and a chart repository this test serves on
127.0.0.1. Nothing leaves the loopback interface."""
from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import chart as nginx
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import manifests as nginx_manifests
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import values as nginx_values
from ansible_collections.kindlab.ingress.plugins.module_utils import _versions
from ansible_collections.kindlab.ingress.plugins.modules import ingress_controller as mod
from kindlab_twin.cluster import TwinClusterHandle

HELM = os.environ.get("HELM_BIN") or shutil.which("helm")
pytestmark = pytest.mark.skipif(not HELM, reason="no helm binary ($HELM_BIN or PATH)")

ROOT = Path(__file__).resolve().parents[2]
NAMESPACE = "one"
RELEASE = "ingress"
CHART_VERSION = _versions.INGRESS_NGINX_CHART_VERSION
DEPLOYMENT = ("apps/v1", "Deployment")


def lab_values(namespace: str) -> dict[str, Any]:
    """The default lab's values for the controller of `namespace` (namespace-scoped)."""
    lab = yaml.safe_load((ROOT / "inventories/local/group_vars/all/lab.yml").read_text())
    return next(c["values"] for c in lab["lab_controllers"] if c["namespace"] == namespace)


def helm_env(home: Path) -> dict[str, str]:
    """Private helm state: nothing read from or written to the user's helm config/cache."""
    return {"HOME": str(home), "HELM_CACHE_HOME": str(home / "cache"), "HELM_CONFIG_HOME": str(home / "config"),
            "HELM_DATA_HOME": str(home / "data")}


def helm_cli(*args: str, env: dict[str, str]) -> str:
    res = subprocess.run([str(HELM), *args], env=dict(os.environ, **env), text=True, capture_output=True, timeout=60, check=False)
    assert res.returncode == 0, "helm %s failed:\n%s%s" % (" ".join(args), res.stdout, res.stderr)
    return res.stdout


@pytest.fixture
def helm_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The module's run_command inherits os.environ: point helm's homes into tmp_path."""
    env = helm_env(tmp_path / "helm-home")
    for key, val in env.items():
        monkeypatch.setenv(key, val)
    return env


def build_chart(tmp_path: Path, values: dict[str, Any], env: dict[str, str]) -> Path:
    """A stand-in for the ingress-nginx chart: its templates/objects.yaml holds exactly the
    objects the collection's manifest renderer produces for these values (no .Values
    templating), so what is under test is the helm flow - argv, the values file, no-change
    detection through `helm list`/`helm get values`, uninstall - not the chart's templates.
    Returns the directory to serve (the packaged chart + index.yaml)."""
    config = nginx.effective_config(values, RELEASE, NAMESPACE)
    chart = tmp_path / "chart-src" / "ingress-nginx"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v2", "name": nginx_values.CHART_NAME, "version": CHART_VERSION,
        "appVersion": _versions.INGRESS_NGINX_CONTROLLER_VERSION.lstrip("v"),
    }))
    (chart / "values.yaml").write_text("{}\n")
    (chart / "templates" / "objects.yaml").write_text(yaml.safe_dump_all(nginx_manifests.render_manifests(config), sort_keys=False))
    served = tmp_path / "repo"
    served.mkdir()
    helm_cli("package", str(chart), "--destination", str(served), env=env)
    helm_cli("repo", "index", str(served), env=env)
    return served


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # pylint: disable=redefined-builtin
        pass


@pytest.fixture
def chart_repo(tmp_path: Path, helm_home: dict[str, str]) -> Iterator[str]:
    served = build_chart(tmp_path, lab_values(NAMESPACE), helm_home)
    handler = functools.partial(_QuietHandler, directory=str(served))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, name="chart-repo", daemon=True)
    thread.start()
    try:
        yield "http://127.0.0.1:%d" % server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def helm_calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every argv the module runs, recorded on the way to the REAL AnsibleModule.run_command."""
    calls: list[list[str]] = []
    real = basic.AnsibleModule.run_command

    def spy(self: basic.AnsibleModule, args: Any, *rest: Any, **kwargs: Any) -> Any:
        calls.append(list(args))
        return real(self, args, *rest, **kwargs)

    monkeypatch.setattr(basic.AnsibleModule, "run_command", spy)
    return calls


def run_module(capsys: pytest.CaptureFixture[str], args: dict[str, Any], check: bool = False) -> dict[str, Any]:
    if check:
        args = dict(args, _ansible_check_mode=True)
    with patch_module_args(args), pytest.raises(SystemExit) as exc:
        mod.main()
    out: dict[str, Any] = json.loads(capsys.readouterr().out)
    out["rc"] = exc.value.code
    return out


def subcommands(calls: list[list[str]]) -> list[str]:
    return [argv[1] for argv in calls]


def test_helm_install_noop_check_and_uninstall(capsys: pytest.CaptureFixture[str], twin: TwinClusterHandle,
                                               twin_kubeconfig: str, chart_repo: str, helm_home: dict[str, str],
                                               helm_calls: list[list[str]]) -> None:
    kubeconfig = twin_kubeconfig
    api = twin.store.client  # uncached reads: what the server holds right now
    values = lab_values(NAMESPACE)
    args = {"namespace": NAMESPACE, "release": RELEASE, "method": "helm", "values": values, "helm_binary": str(HELM),
            "chart_repo": chart_repo, "kubeconfig": kubeconfig, "wait": True, "wait_timeout": 20}

    def releases() -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = json.loads(helm_cli("list", "-n", NAMESPACE, "-o", "json", "--kubeconfig", kubeconfig, env=helm_home))
        return listed

    # (1) install, wait for the emulated controller
    first = run_module(capsys, args)
    assert first["rc"] == 0, first
    # After the upgrade the release is read back with `helm list`: helm v4's `status -o json`
    # has no chart in it (this test found that).
    assert subcommands(helm_calls) == ["list", "upgrade", "list"]
    upgrade = helm_calls[1]
    assert upgrade[:upgrade.index("--values")] == [
        str(HELM), "upgrade", "--install", RELEASE, "ingress-nginx", "--repo", chart_repo, "--version", CHART_VERSION,
        "--namespace", NAMESPACE, "--create-namespace"]
    assert "--reset-values" in upgrade and upgrade[upgrade.index("--kubeconfig") + 1] == kubeconfig
    assert not os.path.exists(upgrade[upgrade.index("--values") + 1])  # the temporary values file is removed
    assert first["changed"] is True and first["reason"] == "release not installed"
    assert first["release"]["chart"] == "ingress-nginx-%s" % CHART_VERSION and first["release"]["revision"] == 1
    assert first["release"]["status"] == "deployed"
    assert first["ready"].startswith("1/1"), first["ready"]
    listed = releases()
    assert [(r["name"], r["chart"], r["status"], r["revision"]) for r in listed] == [
        (RELEASE, "ingress-nginx-%s" % CHART_VERSION, "deployed", "1")]
    deployment = api.get(DEPLOYMENT, NAMESPACE, "ingress-ingress-nginx-controller")
    assert deployment is not None
    assert deployment["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
    rendered_args = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
    assert "--watch-namespace=$(POD_NAMESPACE)" in rendered_args
    assert first["args"] == rendered_args
    # the user-supplied values helm stored are the module's values, untouched
    stored = json.loads(helm_cli("get", "values", RELEASE, "-n", NAMESPACE, "-o", "json", "--kubeconfig", kubeconfig, env=helm_home))
    assert stored == values

    # (2) the same again: nothing to do, no upgrade run, same revision
    helm_calls.clear()
    second = run_module(capsys, args)
    assert second["rc"] == 0, second
    assert second["changed"] is False, second["reason"]
    assert subcommands(helm_calls) == ["list", "get"]
    assert second["release"]["revision"] == 1 and releases()[0]["revision"] == "1"
    assert second["ready"].startswith("1/1"), second["ready"]
    assert second["args"] == rendered_args and second["values"] == values

    # (3) check mode with other values: would change, changes nothing
    helm_calls.clear()
    other = dict(args, values=dict(values, controller=dict(values["controller"], replicaCount=2)))
    check = run_module(capsys, other, check=True)
    assert check["rc"] == 0, check
    assert check["changed"] is True and check["reason"] == "user-supplied values differ"
    assert subcommands(helm_calls) == ["list", "get"]
    assert releases()[0]["revision"] == "1"
    unchanged = api.get(DEPLOYMENT, NAMESPACE, "ingress-ingress-nginx-controller")
    assert unchanged is not None and unchanged["spec"]["replicas"] == 1

    # (4) uninstall, then uninstall again
    helm_calls.clear()
    absent = dict(args, state="absent")
    gone = run_module(capsys, absent)
    assert gone["rc"] == 0, gone
    assert gone["changed"] is True and gone["release"]["revision"] == 1
    assert subcommands(helm_calls) == ["list", "uninstall"]
    assert releases() == []
    assert api.get(DEPLOYMENT, NAMESPACE, "ingress-ingress-nginx-controller") is None
    secrets = [obj["metadata"]["name"] for obj in api.list(("v1", "Secret"), NAMESPACE)[0]]
    assert not [name for name in secrets if name.startswith("sh.helm.release.")], secrets
    helm_calls.clear()
    again = run_module(capsys, absent)
    assert again["rc"] == 0, again
    assert again["changed"] is False and again["release"] is None
    assert subcommands(helm_calls) == ["list"]
