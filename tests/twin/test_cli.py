"""kindlab-twin's kind-like lifecycle with the real background process (the control plane
and the emulations), run as the installed `kindlab-twin` command."""
from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable, Iterator

import pytest
import yaml

from kindlab_twin import binaries, cli, state
from kindlab_twin.controlplane import COMPONENTS

from realcp import require

KINDLAB_TWIN = Path(sys.executable).parent / "kindlab-twin"
needs_binaries = require(COMPONENTS)


def run(env: dict[str, str], *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(KINDLAB_TWIN), *args], env=env, text=True, capture_output=True, timeout=timeout,
                          check=False)


def processes_of(state_dir: Path) -> dict[int, list[str]]:
    """pid -> argv of every live process whose command line names STATE_DIR (the twin process and
    its control-plane components; a zombie has an empty cmdline)."""
    needle = str(state_dir).encode()
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if any(needle in arg for arg in argv):
            found[int(entry.name)] = [a.decode(errors="replace") for a in argv if a]
    return found


def component_of(argv: list[str]) -> str:
    """The control-plane component an argv runs (binaries are named <component>-<version>), or ""."""
    exe = Path(argv[0]).name if argv else ""
    return next((c for c in COMPONENTS if exe.startswith(f"{c}-v")), "")


def wait(pred: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.05)
    return pred()


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict[str, str]]:
    """The CLI's environment: its state in a short /tmp directory (the egress proxy's Unix
    socket path must stay under 108 bytes), HOME and KUBECONFIG in tmp_path, the pinned
    binaries from the real cache. Whatever a failed test left running there is stopped."""
    home = tempfile.mkdtemp(prefix="kt-")
    env = dict(os.environ, KINDLAB_TWIN_HOME=home, KUBECONFIG=str(tmp_path / "kube" / "config"),
               HOME=str(tmp_path), KINDLAB_CACHE=str(binaries.cache_root()))
    try:
        yield env
    finally:
        run(env, "delete", "clusters", "--all")
        for pid in processes_of(Path(home)):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(home, ignore_errors=True)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def b64(text: bytes) -> str:
    return base64.b64encode(text).decode()


@needs_binaries
def test_lifecycle(env: dict[str, str], tmp_path: Path) -> None:
    cfg = tmp_path / "kind.yaml"
    cfg.write_text("kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nnodes:\n- role: control-plane\n- role: worker\n")
    res = run(env, "create", "cluster", "--name", "lab", "--config", str(cfg), "--time-scale", "10", "--wait", "60s")
    assert res.returncode == 0, res.stderr
    assert 'Set kubectl context to "kind-lab"' in res.stderr and " • Ready after " in res.stderr
    home = Path(env["KINDLAB_TWIN_HOME"]) / "lab"
    pid = int((home / "pid").read_text())
    assert state.pid_alive(pid)
    assert not (home / "token").exists()

    # kind's kubeconfig entry: the CA and the admin's client certificate, embedded; private files
    kubeconfig = Path(env["KUBECONFIG"])
    for private in (kubeconfig, home / "kubeconfig"):
        assert _mode(private) == 0o600, private
    kc = yaml.safe_load(kubeconfig.read_text())
    assert kc["current-context"] == "kind-lab"
    assert [c["name"] for c in kc["clusters"]] == ["kind-lab"]
    port = (home / "port").read_text().strip()
    assert kc["clusters"][0]["cluster"]["server"] == f"https://127.0.0.1:{port}"
    pki = home / "control-plane" / "pki"

    def decoded(entry: dict[str, str], key: str) -> str:
        return base64.b64decode(entry[key]).decode().strip()
    assert decoded(kc["clusters"][0]["cluster"], "certificate-authority-data") == (pki / "ca.crt").read_text().strip()
    user = kc["users"][0]["user"]
    assert set(user) == {"client-certificate-data", "client-key-data"}
    assert decoded(user, "client-certificate-data") == (pki / "admin.crt").read_text().strip()
    assert decoded(user, "client-key-data") == (pki / "admin.key").read_text().strip()
    for key in home.rglob("*.key"):
        assert _mode(key) == 0o600, key

    assert run(env, "get", "clusters").stdout == "lab\n"
    got = yaml.safe_load(run(env, "get", "kubeconfig", "--name", "lab").stdout)
    assert got == yaml.safe_load((home / "kubeconfig").read_text())
    assert got["users"] == kc["users"] and got["clusters"] == kc["clusters"]
    assert run(env, "get", "nodes", "--name", "lab").stdout == "lab-control-plane\nlab-worker\n"
    out = subprocess.run(["kubectl", "get", "ns", "-o", "name"], env=env, text=True, capture_output=True, timeout=30,
                         check=False)
    assert "namespace/default" in out.stdout, out.stderr

    again = run(env, "create", "cluster", "--name", "lab")
    assert again.returncode == 1
    assert 'node(s) already exist for a cluster with the name "lab"' in again.stderr

    (home / "connect_to.json").write_text(json.dumps([{"host": "100.64.0.0", "port": 80, "target_host": "127.0.0.1",
                                                       "target_port": 41234, "what": "one/ingress"}]))
    assert run(env, "get", "connect-to", "--name", "lab").stdout == "100.64.0.0:80:127.0.0.1:41234\n"

    res = run(env, "delete", "cluster", "--name", "lab")
    assert res.returncode == 0 and 'Deleting cluster "lab"' in res.stderr
    assert wait(lambda: not state.pid_alive(pid)) and not home.exists()
    assert wait(lambda: not processes_of(home)), processes_of(home)
    kc = yaml.safe_load(kubeconfig.read_text())
    assert kc["clusters"] == [] and kc["users"] == [] and kc["current-context"] == ""
    res = run(env, "get", "clusters")
    assert res.stdout == "" and "No kind clusters found." in res.stderr
    assert run(env, "delete", "cluster", "--name", "lab").returncode == 0  # like kind: no error


@needs_binaries
def test_a_dead_component_stops_the_cluster_and_is_reported(env: dict[str, str], tmp_path: Path) -> None:
    """A component that dies takes the cluster down at once, the reason is kept for the next
    command; a killed twin process takes its components with it; delete leaves nothing behind."""
    kubeconfig = tmp_path / "elsewhere" / "config"
    res = run(env, "create", "cluster", "--name", "crash", "--kubeconfig", str(kubeconfig), "--time-scale", "60")
    assert res.returncode == 0, res.stderr
    home = Path(env["KINDLAB_TWIN_HOME"]) / "crash"
    pid = int((home / "pid").read_text())
    assert run(env, "get", "clusters").stdout == "crash\n"
    assert [c["name"] for c in yaml.safe_load(kubeconfig.read_text())["clusters"]] == ["kind-crash"]
    procs = processes_of(home)
    assert pid in procs and "kindlab_twin.cluster" in procs[pid]
    by_component = {component_of(argv): p for p, argv in procs.items() if component_of(argv)}
    assert set(by_component) == set(COMPONENTS), procs

    # kube-apiserver dies: the twin process notices, stops everything, exits, and says why
    os.kill(by_component["kube-apiserver"], signal.SIGKILL)
    assert wait(lambda: not state.pid_alive(pid), timeout=10), "the twin process outlived its API server"
    assert wait(lambda: not processes_of(home)), processes_of(home)
    assert (home / "failed").read_text().startswith("kube-apiserver exited with status -9")
    res = run(env, "get", "clusters")
    assert res.returncode == 0 and res.stdout == "", res.stdout
    assert res.stderr.startswith('WARNING: cluster "crash" is not running: kube-apiserver exited with status -9'), \
        res.stderr
    res = run(env, "get", "kubeconfig", "--name", "crash")
    assert res.returncode == 1 and "(it stopped: kube-apiserver exited with status -9" in res.stderr

    # create again over the stale state; then kill the twin process itself: its components die with it
    res = run(env, "create", "cluster", "--name", "crash", "--kubeconfig", str(kubeconfig), "--time-scale", "60")
    assert res.returncode == 0, res.stderr
    assert ('WARNING: removing stale state of cluster "crash" (its process is gone: kube-apiserver exited '
            'with status -9') in res.stderr
    new_pid = int((home / "pid").read_text())
    assert new_pid != pid and state.pid_alive(new_pid) and not (home / "failed").exists()
    assert {component_of(argv) for argv in processes_of(home).values()} >= set(COMPONENTS)
    os.kill(new_pid, signal.SIGKILL)
    assert wait(lambda: not processes_of(home)), processes_of(home)
    res = run(env, "get", "clusters")
    assert res.stdout == "" and 'WARNING: cluster "crash" is not running (stale state; ' in res.stderr, res.stderr

    res = run(env, "delete", "cluster", "--name", "crash", "--kubeconfig", str(kubeconfig))
    assert res.returncode == 0, res.stderr
    assert not home.exists() and processes_of(home) == {}
    assert yaml.safe_load(kubeconfig.read_text())["clusters"] == []
    assert "No kind clusters found." in run(env, "get", "clusters").stderr


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
    state.merge_kubeconfig(path, state.kubeconfig_doc("a", 1234, "CA PEM\n", "CERT PEM\n", "KEY PEM\n"))
    assert _mode(path) == 0o600
    data = yaml.safe_load(path.read_text())
    assert [c["name"] for c in data["clusters"]] == ["other", "kind-a"] and data["current-context"] == "kind-a"
    assert data["clusters"][1]["cluster"] == {"server": "https://127.0.0.1:1234",
                                              "certificate-authority-data": b64(b"CA PEM\n")}
    assert data["users"][1] == {"name": "kind-a", "user": {"client-certificate-data": b64(b"CERT PEM\n"),
                                                           "client-key-data": b64(b"KEY PEM\n")}}
    assert data["contexts"][1] == {"name": "kind-a", "context": {"cluster": "kind-a", "user": "kind-a"}}
    state.remove_from_kubeconfig(path, "a")
    data = yaml.safe_load(path.read_text())
    assert [c["name"] for c in data["clusters"]] == ["other"] and data["current-context"] == ""
    assert [u["name"] for u in data["users"]] == ["other"]
    assert not Path(str(path) + ".lock").exists()
