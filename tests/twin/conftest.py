"""Shared fixtures for the twin's tests: an in-process API server over TLS, clients for it."""
from __future__ import annotations

import http.client
import json
import os
import ssl
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import yaml

from kindlab_twin import state
from kindlab_twin.apiserver import ApiServer
from kindlab_twin.store import ObjectStore

sys.path.insert(0, str(Path(__file__).parent / "controllers"))

from twinlib import Runtime  # noqa: E402

TOKEN = "test-token-0123456789"


@pytest.fixture(scope="session")
def twin_certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("twin-certs")
    state.make_certs(d)
    return d


@dataclass
class Api:
    """A running in-process API server and what clients need to reach it."""

    server: ApiServer
    store: ObjectStore
    url: str
    token: str
    ca_file: str
    kubeconfig: str

    @property
    def pod_logs(self) -> Any:
        return self.server.pod_logs


@pytest.fixture
def api(twin_certs: Path, tmp_path: Path) -> Iterator[Api]:
    store = ObjectStore()
    server = ApiServer(store, TOKEN, tls=(str(twin_certs / state.SERVER_CERT), str(twin_certs / state.SERVER_KEY)))
    server.start()
    kc = tmp_path / "kubeconfig"
    doc = state.kubeconfig_doc("test", server.port, TOKEN, (twin_certs / state.CA_CERT).read_text())
    kc.write_text(yaml.safe_dump(doc))
    kc.chmod(0o600)
    try:
        yield Api(server, store, server.url, TOKEN, str(twin_certs / state.CA_CERT), str(kc))
    finally:
        server.stop()


@pytest.fixture
def k8s(api: Api) -> Iterator[Any]:
    """A kubernetes.client.ApiClient for the fixture server."""
    from kubernetes import config

    c = config.new_client_from_config(config_file=api.kubeconfig)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture
def kubectl(api: Api, tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Run kubectl against the fixture server: kubectl("get", "ns", check=False, input=...)."""
    cache = tmp_path / "kubectl-cache"

    def run(*args: str, check: bool = True, input: str | None = None,  # noqa: A002
            timeout: float = 30) -> subprocess.CompletedProcess[str]:
        env = dict(os.environ, KUBECONFIG=api.kubeconfig, HOME=str(tmp_path))
        res = subprocess.run(["kubectl", "--cache-dir", str(cache), *args], input=input, text=True,
                             capture_output=True, env=env, timeout=timeout, check=False)
        if check and res.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({res.returncode}):\n{res.stdout}\n{res.stderr}")
        return res

    return run


@pytest.fixture
def twin(tmp_path: Any) -> Any:
    """An in-process twin: real ObjectStore + all emulated controllers, time_scale 60 (the
    helpers that drive it are in controllers/twinlib.py)."""
    from kindlab_twin.controllers import all_controllers

    rt = Runtime(store=ObjectStore(), state_dir=str(tmp_path), cluster_name="kind", time_scale=60.0)
    ctrls = all_controllers()
    for c in ctrls:
        c.start(rt)
    yield rt
    for c in reversed(ctrls):
        c.stop()


def _raw(api: Any, method: str, path: str, body: Any = None, ctype: str = "application/json",
         token: str | None = "default", headers: dict[str, str] | None = None) -> tuple[int, Any, dict[str, str]]:
    ctx = ssl.create_default_context(cafile=api.ca_file)
    conn = http.client.HTTPSConnection("127.0.0.1", api.server.port, context=ctx, timeout=10)
    h = {"Content-Type": ctype, **(headers or {})}
    if token:
        h["Authorization"] = f"Bearer {api.token if token == 'default' else token}"
    data = body if isinstance(body, (bytes, str)) or body is None else json.dumps(body)
    conn.request(method, path, body=data, headers=h)
    resp = conn.getresponse()
    text = resp.read()
    conn.close()
    try:
        parsed: Any = json.loads(text)
    except ValueError:
        parsed = text.decode(errors="replace")
    return resp.status, parsed, dict(resp.getheaders())


@pytest.fixture
def raw() -> Callable[..., tuple[int, Any, dict[str, str]]]:
    """raw(api, method, path, body=None, ctype=..., token="default"|None|str, headers=None)
    -> (status, parsed body, headers): for requests no client library sends."""
    return _raw
