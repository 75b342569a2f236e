"""Shared fixtures for the twin's tests: a twin cluster (the real control plane from the pinned
binaries, with every emulated controller) per test, and kubectl for it."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Callable, Iterator

import pytest

from kindlab_twin import binaries
from kindlab_twin.controlplane import COMPONENTS
from kindlab_twin.pki import ADMIN
from kindlab_twin.runtime import TwinCluster, TwinRuntime

sys.path.insert(0, str(Path(__file__).parent / "controllers"))

TIME_SCALE = 60.0  # a 60 s status sync of ingress-nginx takes 1 s


@pytest.fixture
def twin_cluster() -> Iterator[TwinCluster]:
    """A started twin cluster named "kind" (time_scale 60), stopped and removed after the test.
    Its state lives in a short /tmp path: the egress proxy's Unix socket path must stay under
    108 bytes, which pytest's tmp_path does not promise."""
    missing = binaries.missing(COMPONENTS)
    if missing:
        message = f"pinned binaries not built ({', '.join(missing)}): run `kindlab-twin build binaries`"
        if os.environ.get("KINDLAB_REQUIRE_BINARIES") == "1":  # `make unit` built them: missing is a failure
            pytest.fail(message)
        pytest.skip(message)
    root = tempfile.mkdtemp(prefix="twin-")
    cluster = TwinCluster("kind", root, time_scale=TIME_SCALE)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def twin(twin_cluster: TwinCluster) -> TwinRuntime:
    """The running twin's runtime: `.store` (admin, cached), `.pod_logs`, `.state_dir`."""
    assert twin_cluster.runtime is not None
    return twin_cluster.runtime


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
