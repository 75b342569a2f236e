"""Shared by the tests that run the real control plane (pinned binaries, kwok nodes)."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Sequence

import pytest

from kindlab_twin import binaries
from kindlab_twin.controlplane import ControlPlane
from kindlab_twin.pki import ADMIN
from kindlab_twin.runtime import node_specs

POD_SUBNET = "10.244.0.0/16"


def require(names: Sequence[str]) -> pytest.MarkDecorator:
    """Skip without the binaries, except under `make unit` (KINDLAB_REQUIRE_BINARIES=1), which
    builds them first: there a missing binary fails the run."""
    missing = binaries.missing(names)
    return pytest.mark.skipif(
        bool(missing) and os.environ.get("KINDLAB_REQUIRE_BINARIES") != "1",
        reason=f"pinned binaries not built ({', '.join(missing)}): run `kindlab-twin build binaries`")


def control_plane(cluster: str, root: Path, kind_config: dict[str, Any]) -> ControlPlane:
    return ControlPlane(cluster=cluster, root=root, nodes=node_specs(cluster, kind_config), pod_subnet=POD_SUBNET,
                        service_subnet="10.96.0.0/16", kubernetes_service_ip="10.96.0.1")


def kubectl(cp: ControlPlane, *args: str, stdin: str | None = None, check: bool = True) -> str:
    proc = subprocess.run(["kubectl", "--kubeconfig", str(cp.layout.kubeconfig(ADMIN)), *args], input=stdin,
                          capture_output=True, text=True, timeout=60, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed: {proc.stderr}")
    return proc.stdout


def kget(cp: ControlPlane, *args: str) -> Any:
    return json.loads(kubectl(cp, "get", *args, "-o", "json"))
