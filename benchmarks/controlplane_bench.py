"""Cluster create-to-Ready: the twin as it runs today (Python API server) beside the real
control plane (etcd, kube-apiserver, controller-manager, scheduler, kwok), in one run.

    .venv/bin/python benchmarks/controlplane_bench.py [--runs N]

Prints numbers; asserts nothing. Needs the pinned binaries (`make binaries`). For each
backend, N times: create a one-node cluster, wait until the API answers and the node is
Ready, then time a `get` and a `list` of the node with the admin credentials, and delete.
Goal of the control-plane issue: create to Ready under 15 s on a 2-core machine.
Everything listens on 127.0.0.1; state goes to temporary directories removed on exit.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "src"))

from kindlab_twin import binaries  # noqa: E402
from kindlab_twin.controllers.nodes import desired_nodes  # noqa: E402
from kindlab_twin.controlplane import COMPONENTS, ControlPlane, NodeSpec  # noqa: E402
from kindlab_twin.pki import ADMIN  # noqa: E402

TWIN = REPO / ".venv" / "bin" / "kindlab-twin"


def kubectl_ms(kubeconfig: Path, *args: str) -> float:
    started = time.monotonic()
    subprocess.run(["kubectl", "--kubeconfig", str(kubeconfig), *args], check=True, capture_output=True, timeout=30)
    return (time.monotonic() - started) * 1000


def python_twin(tmp: Path) -> tuple[float, float]:
    env = dict(os.environ, KINDLAB_TWIN_HOME=str(tmp / "home"))
    kubeconfig = tmp / "kubeconfig"
    started = time.monotonic()
    subprocess.run([str(TWIN), "create", "cluster", "--name", "bench-py", "--kubeconfig", str(kubeconfig),
                    "--wait", "60s"], check=True, capture_output=True, env=env, timeout=90)
    ready = time.monotonic() - started
    try:
        return ready, kubectl_ms(kubeconfig, "get", "nodes", "-o", "json")
    finally:
        subprocess.run([str(TWIN), "delete", "cluster", "--name", "bench-py", "--kubeconfig", str(kubeconfig)],
                       capture_output=True, env=env, timeout=60, check=False)


def real_control_plane(tmp: Path) -> tuple[float, float]:
    nodes = []
    for obj in desired_nodes("bench-real", {}):
        obj["spec"].pop("podCIDR", None)
        obj["spec"].pop("podCIDRs", None)
        nodes.append(NodeSpec(obj["metadata"]["name"], obj["status"]["addresses"][0]["address"], obj))
    plane = ControlPlane(cluster="bench-real", root=tmp / "cp", nodes=nodes, pod_subnet="10.244.0.0/16",
                         service_subnet="10.96.0.0/16", kubernetes_service_ip="10.96.0.1")
    started = time.monotonic()
    try:
        plane.start(timeout=120, say=lambda _m: None)
        ready = time.monotonic() - started
        return ready, kubectl_ms(plane.layout.kubeconfig(ADMIN), "get", "nodes", "-o", "json")
    finally:
        plane.stop()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    missing = binaries.missing(COMPONENTS)
    if missing:
        print(f"pinned binaries missing ({', '.join(missing)}): run `make binaries` first", file=sys.stderr)
        return 2
    results: dict[str, list[tuple[float, float]]] = {"python twin (today)": [], "real control plane + kwok": []}
    for _run in range(args.runs):
        for label, fn in (("python twin (today)", python_twin), ("real control plane + kwok", real_control_plane)):
            with tempfile.TemporaryDirectory(prefix="cpbench-") as tmp:
                results[label].append(fn(Path(tmp)))
    print(f"\ncreate to Ready, {args.runs} runs each ({os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}):")
    print(f"{'backend':30} {'median s':>9} {'max s':>7} {'kubectl get nodes ms':>21}")
    for label, rows in results.items():
        ready = [row[0] for row in rows]
        get = [row[1] for row in rows]
        print(f"{label:30} {statistics.median(ready):9.1f} {max(ready):7.1f} {statistics.median(get):21.0f}")
    print(json.dumps({k: [[round(a, 2), round(b, 1)] for a, b in v] for k, v in results.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
