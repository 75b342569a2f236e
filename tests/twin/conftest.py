"""Shared fixtures for the twin's tests: a twin cluster (the real control plane from the pinned
binaries, with every emulation) per test, and kubectl for it."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, Iterator

import pytest

from kindlab_twin.pki import ADMIN
from kindlab_twin.cluster import TwinCluster, TwinClusterHandle

from realcp import started_cluster

sys.path.insert(0, str(Path(__file__).parent / "emulations"))


@pytest.fixture
def twin_cluster() -> Iterator[TwinCluster]:
    """A started twin cluster named "kind" (time_scale 60) per test (realcp.started_cluster)."""
    with started_cluster() as cluster:
        yield cluster


@pytest.fixture
def twin(twin_cluster: TwinCluster) -> TwinClusterHandle:
    """The running twin's handle (what its emulations get): `.store` (admin, cached), `.pod_logs`, `.state_dir`."""
    assert twin_cluster.handle is not None
    return twin_cluster.handle


@pytest.fixture
def twin_kubeconfig(twin_cluster: TwinCluster) -> str:
    return str(twin_cluster.control_plane.layout.kubeconfig(ADMIN))


@pytest.fixture
def kubectl(twin_kubeconfig: str, tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run kubectl as the twin's admin: kubectl("get", "ns", check=False, input=...)."""
    cache = tmp_path / "kubectl-cache"

    def run(*args: str, check: bool = True, input: str | None = None,  # noqa: A002
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, KUBECONFIG=twin_kubeconfig, HOME=str(tmp_path))
        res = subprocess.run(["kubectl", "--cache-dir", str(cache), *args], input=input, text=True,
                             capture_output=True, env=env, timeout=timeout, check=False)
        if check and res.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
        return res

    return run
