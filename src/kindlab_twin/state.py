"""Per-user state of twin clusters: directories, credentials, kubeconfig entries.

Layout: ``$KINDLAB_TWIN_HOME`` (default ``~/.local/state/kindlab-twin``)/<name>/ holds
pid, port (the API server's), failed (why the cluster stopped, if it did), kind-config.yaml,
kubeconfig, twin.log (the twin process's), control-plane/ (PKI, etcd data, component logs: controlplane.py),
pod-logs/ and whatever the emulations publish (connect_to.json).
"""
from __future__ import annotations

import base64
import contextlib
import fcntl
import os
import tempfile
from pathlib import Path
from typing import Any, Iterator

import yaml

PID_FILE, PORT_FILE, FAILED_FILE, LOG_FILE = "pid", "port", "failed", "twin.log"
KIND_CONFIG_FILE = "kind-config.yaml"
CONTROL_PLANE_DIR = "control-plane"  # controlplane.Layout: PKI, etcd data, component logs
KUBECONFIG_FILE = "kubeconfig"
KUBECONFIG_TARGET = "kubeconfig_path"  # which user kubeconfig we merged into


def state_root() -> Path:
    env = os.environ.get("KINDLAB_TWIN_HOME")
    if env:
        return Path(env)
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "kindlab-twin"


def cluster_dir(name: str) -> Path:
    return state_root() / name


def read(d: Path, fname: str) -> str | None:
    try:
        return (d / fname).read_text().strip()
    except OSError:
        return None


def write_private(path: Path, text: str) -> None:
    """Write a file readable by the owner only (tokens, keys, kubeconfigs)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name)
    try:
        os.fchmod(fd, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie child (our own, not yet reaped) is dead for our purposes.
    with contextlib.suppress(OSError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        if stat.rsplit(")", 1)[1].split()[0] == "Z":
            return False
    return True


def cluster_pid(name: str) -> int | None:
    raw = read(cluster_dir(name), PID_FILE)
    try:
        return int(raw) if raw else None
    except ValueError:
        return None


def is_running(name: str) -> bool:
    """The cluster's process is alive (and is ours: pids get reused)."""
    pid = cluster_pid(name)
    if pid is None or not pid_alive(pid):
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return True  # no /proc: trust the pid
    return b"kindlab_twin" in cmdline


def list_clusters() -> list[tuple[str, bool]]:
    """(name, running) for every cluster directory."""
    root = state_root()
    if not root.is_dir():
        return []
    return [(d.name, is_running(d.name)) for d in sorted(root.iterdir()) if d.is_dir() and not d.name.startswith(".")]


@contextlib.contextmanager
def locked(name: str) -> Iterator[None]:
    """Serialize create/delete of one cluster across processes."""
    root = state_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / f".{name}.lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


# --- kubeconfig -----------------------------------------------------------------------

def context_name(name: str) -> str:
    return f"kind-{name}"


def kubeconfig_doc(name: str, port: int, ca_pem: str, cert_pem: str, key_pem: str) -> dict[str, Any]:
    """kind's kubeconfig entry: the CA and the admin's client certificate, embedded."""
    ctx = context_name(name)

    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()
    return {
        "apiVersion": "v1", "kind": "Config", "preferences": {}, "current-context": ctx,
        "clusters": [{"name": ctx, "cluster": {"server": f"https://127.0.0.1:{port}",
                                               "certificate-authority-data": b64(ca_pem)}}],
        "contexts": [{"name": ctx, "context": {"cluster": ctx, "user": ctx}}],
        "users": [{"name": ctx, "user": {"client-certificate-data": b64(cert_pem),
                                         "client-key-data": b64(key_pem)}}],
    }


def default_kubeconfig_path(explicit: str | None = None) -> Path:
    """Where kind (like kubectl config) writes: --kubeconfig, else the first existing file
    in $KUBECONFIG (the last entry if none exists), else ~/.kube/config."""
    if explicit:
        return Path(explicit).expanduser()
    entries = [Path(p).expanduser() for p in os.environ.get("KUBECONFIG", "").split(os.pathsep) if p]
    for p in entries:
        if p.exists():
            return p
    if entries:
        return entries[-1]
    return Path.home() / ".kube" / "config"


def _load(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except FileNotFoundError:
        data = {}
    if not isinstance(data, dict):
        raise RuntimeError(f"{path} is not a kubeconfig (not a YAML mapping)")
    data.setdefault("apiVersion", "v1")
    data.setdefault("kind", "Config")
    for k in ("clusters", "contexts", "users"):
        data[k] = data.get(k) or []
    return data


def merge_kubeconfig(path: Path, entry: dict[str, Any]) -> None:
    """Replace this cluster's cluster/context/user entries and select its context."""
    with _file_lock(path):
        data = _load(path)
        for k in ("clusters", "contexts", "users"):
            names = {e["name"] for e in entry[k]}
            data[k] = [e for e in data[k] if e.get("name") not in names] + entry[k]
        data["current-context"] = entry["current-context"]
        write_private(path, yaml.safe_dump(data, sort_keys=False))


def remove_from_kubeconfig(path: Path, name: str) -> None:
    if not path.exists():
        return
    ctx = context_name(name)
    with _file_lock(path):
        data = _load(path)
        for k in ("clusters", "contexts", "users"):
            data[k] = [e for e in data[k] if e.get("name") != ctx]
        if data.get("current-context") == ctx:
            data["current-context"] = ""
        write_private(path, yaml.safe_dump(data, sort_keys=False))


@contextlib.contextmanager
def _file_lock(path: Path, timeout: float = 10.0) -> Iterator[None]:
    """The <file>.lock convention kubectl and kind use (exclusive create, then unlink)."""
    import time

    path.parent.mkdir(parents=True, exist_ok=True)
    lock = str(path) + ".lock"
    deadline = time.monotonic() + timeout
    while True:
        try:
            os.close(os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            break
        except FileExistsError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"timed out waiting for the kubeconfig lock {lock}") from None
            time.sleep(0.05)
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.unlink(lock)
