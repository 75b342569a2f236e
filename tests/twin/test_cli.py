"""kindlab-twin's kind-like lifecycle with the real background process."""
from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from kindlab_twin import cli, state


def run(env: dict[str, str], *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "kindlab_twin.cli", *args], env=env, text=True,
                          capture_output=True, timeout=timeout, check=False)


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return dict(os.environ, KINDLAB_TWIN_HOME=str(tmp_path / "home"), KUBECONFIG=str(tmp_path / "kube" / "config"),
                HOME=str(tmp_path))


def _wait_dead(pid: int) -> bool:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if not state.pid_alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_lifecycle(env: dict[str, str], tmp_path: Path) -> None:
    cfg = tmp_path / "kind.yaml"
    cfg.write_text("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: control-plane\n- role: worker\n")
    res = run(env, "create", "cluster", "--name", "lab", "--config", str(cfg), "--time-scale", "10")
    assert res.returncode == 0, res.stderr
    assert 'Set kubectl context to "kind-lab"' in res.stderr
    home = Path(env["KINDLAB_TWIN_HOME"]) / "lab"
    pid = int((home / "pid").read_text())
    assert state.pid_alive(pid)
    kubeconfig = Path(env["KUBECONFIG"])
    assert stat.S_IMODE(kubeconfig.stat().st_mode) == 0o600
    kc = yaml.safe_load(kubeconfig.read_text())
    assert kc["current-context"] == "kind-lab"
    assert [c["name"] for c in kc["clusters"]] == ["kind-lab"]
    assert kc["clusters"][0]["cluster"]["server"].startswith("https://127.0.0.1:")

    assert run(env, "get", "clusters").stdout == "lab\n"
    got = yaml.safe_load(run(env, "get", "kubeconfig", "--name", "lab").stdout)
    assert got["users"][0]["user"]["token"] == (home / "token").read_text().strip()
    out = subprocess.run(["kubectl", "get", "ns", "-o", "name"], env=env, text=True, capture_output=True, timeout=30, check=False)
    assert "namespace/default" in out.stdout, out.stderr

    again = run(env, "create", "cluster", "--name", "lab")
    assert again.returncode == 1
    assert 'node(s) already exist for a cluster with the name "lab"' in again.stderr

    (home / "connect_to.json").write_text(json.dumps([{"host": "100.64.0.0", "port": 80, "target_host": "127.0.0.1",
                                                       "target_port": 41234, "what": "one/ingress"}]))
    assert run(env, "get", "connect-to", "--name", "lab").stdout == "100.64.0.0:80:127.0.0.1:41234\n"

    res = run(env, "delete", "cluster", "--name", "lab")
    assert res.returncode == 0 and 'Deleting cluster "lab"' in res.stderr
    assert _wait_dead(pid) and not home.exists()
    kc = yaml.safe_load(kubeconfig.read_text())
    assert kc["clusters"] == [] and kc["current-context"] == ""
    res = run(env, "get", "clusters")
    assert res.stdout == "" and "No kind clusters found." in res.stderr
    assert run(env, "delete", "cluster", "--name", "lab").returncode == 0  # like kind: no error


def test_killed_process_is_detected_and_cleaned(env: dict[str, str]) -> None:
    assert run(env, "create", "cluster", "--name", "gone").returncode == 0
    home = Path(env["KINDLAB_TWIN_HOME"]) / "gone"
    pid = int((home / "pid").read_text())
    os.kill(pid, signal.SIGKILL)
    assert _wait_dead(pid)
    res = run(env, "get", "clusters")
    assert res.stdout == "" and 'cluster "gone" is not running' in res.stderr
    assert run(env, "get", "kubeconfig", "--name", "gone").returncode == 1
    res = run(env, "create", "cluster", "--name", "gone")
    assert res.returncode == 0 and "stale" in res.stderr
    new_pid = int((home / "pid").read_text())
    assert new_pid != pid and state.pid_alive(new_pid)
    assert run(env, "delete", "cluster", "--name", "gone").returncode == 0
    assert _wait_dead(new_pid) and not home.exists()


def test_bad_config_and_names(env: dict[str, str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: Pod\n")
    res = run(env, "create", "cluster", "--name", "x", "--config", str(bad))
    assert res.returncode == 1 and res.stderr.startswith("ERROR: failed to create cluster")
    res = run(env, "create", "cluster", "--name", "Bad_Name")
    assert res.returncode == 1 and "not a valid cluster name" in res.stderr
    assert not (Path(env["KINDLAB_TWIN_HOME"]) / "x").exists()


@pytest.mark.parametrize("text,seconds", [("30s", 30), ("5m", 300), ("1m30s", 90), ("250ms", 0.25), ("2", 2)])
def test_parse_duration(text: str, seconds: float) -> None:
    assert cli.parse_duration(text) == seconds


def test_kubeconfig_merge_keeps_other_entries(tmp_path: Path) -> None:
    path = tmp_path / "config"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "current-context": "other",
                                    "clusters": [{"name": "other", "cluster": {"server": "https://x"}}],
                                    "contexts": [{"name": "other", "context": {"cluster": "other", "user": "other"}}],
                                    "users": [{"name": "other", "user": {}}]}))
    state.merge_kubeconfig(path, state.kubeconfig_doc("a", 1234, "tok", "PEM"))
    data = yaml.safe_load(path.read_text())
    assert [c["name"] for c in data["clusters"]] == ["other", "kind-a"] and data["current-context"] == "kind-a"
    state.remove_from_kubeconfig(path, "a")
    data = yaml.safe_load(path.read_text())
    assert [c["name"] for c in data["clusters"]] == ["other"] and data["current-context"] == ""
    assert not Path(str(path) + ".lock").exists()
