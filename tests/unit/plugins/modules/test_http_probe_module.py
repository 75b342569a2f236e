from __future__ import annotations

from typing import Any

import pytest
from ansible.module_utils import basic

from ansible_collections.kindlab.ingress.plugins.module_utils import _module
from ansible_collections.kindlab.ingress.plugins.modules import http_probe
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_probe import Server
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, exit_json, fail_json, run_module


class FakeClient:
    """An Ingress whose status address appears at the second read."""

    def __init__(self, port: int) -> None:
        self.reads = 0
        self.port = port

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        self.reads += 1
        status = {"loadBalancer": {"ingress": [{"ip": "100.64.0.7"}]}} if self.reads > 2 else {}
        return {"metadata": {"namespace": namespace, "name": name},
                "spec": {"rules": [{"host": "shop.example", "http": {"paths": []}}]}, "status": status}


@pytest.fixture
def module(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)


@pytest.fixture
def server() -> Any:
    srv = Server([200])
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


def run(args: dict[str, Any]) -> Exit:
    return run_module(http_probe.main, args)


def test_ingress_probe_follows_the_status_address(module: None, server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient(server.port)
    monkeypatch.setattr(_module, "Client", lambda kubeconfig=None, context=None: client)
    r = run({"ingress": "one/test", "attempts": 3, "interval": 0, "samples": 2, "_ansible_check_mode": True,
             "connect_to": ["100.64.0.7:80:127.0.0.1:%d" % server.port]})
    assert not r.failed, r.result
    assert r.result["changed"] is False and r.result["passed"] is True
    assert [a["address"] for a in r.result["attempts"]] == [None, "100.64.0.7"]
    assert r.result["host"] == "shop.example" and server.hosts[0] == "shop.example"
    assert sum(r.result["distribution"].values()) == 2


def test_violation_fails_unless_collected(module: None) -> None:
    srv = Server([503])
    try:
        args = {"url": "http://100.64.0.0/", "connect_to": ["100.64.0.0:80:127.0.0.1:%d" % srv.port], "attempts": 2,
                "interval": 0}
        r = run(args)
        assert r.failed and r.result["msg"] == "http_probe: got 503 from 100.64.0.0 (expected 200) after 2 attempts"
        r = run({**args, "fail_on_violation": False})
        assert not r.failed and r.result["passed"] is False
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()


@pytest.mark.parametrize("args, message", [
    ({"url": "http://a/", "ingress": "one/test"}, "mutually exclusive"),
    ({"url": "http://a/", "connect_to": ["nonsense"]}, "connect_to[0]: 'nonsense' is not HOST:PORT:TARGET_HOST:TARGET_PORT"),
    ({"url": "http://a/", "backend_regex": "pod"}, "backend_regex: 'pod' needs a capturing group"),
])
def test_bad_input_fails_before_a_request(module: None, args: dict[str, Any], message: str) -> None:
    r = run(args)
    assert r.failed and message in r.result["msg"]


def test_via_node_on_a_twin_says_use_connect_to(module: None, monkeypatch: pytest.MonkeyPatch) -> None:
    def run_command(self: Any, argv: list[str], **_kw: Any) -> tuple[int, str, str]:
        assert argv[:4] == ["/usr/bin/docker", "exec", "lab-control-plane", "curl"]
        return 1, "", "Error response from daemon: No such container: lab-control-plane"

    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    r = run({"url": "http://100.64.0.0/", "via": "node", "context": "kind-lab", "attempts": 5, "interval": 0})
    assert r.failed and "use via: host with connect_to" in r.result["msg"]
    assert len(r.result["attempts"]) == 1  # retrying cannot create a container


def test_continuous_window_through_the_module(module: None, server: Server, monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient(server.port)
    client.reads = 5  # the address is there from the start
    monkeypatch.setattr(_module, "Client", lambda kubeconfig=None, context=None: client)
    r = run({"ingress": "one/test", "rate": 20, "duration": 0.5, "max_failures": 0, "_ansible_check_mode": True,
             "connect_to": ["100.64.0.7:80:127.0.0.1:%d" % server.port]})
    assert not r.failed, r.result
    cont = r.result["continuous"]
    assert (cont["sent"], cont["failed_count"], cont["rate_requested"]) == (10, 0, 20.0)
    assert r.result["passed"] and r.result["ingresses"] == ["one/test"] and r.result["host"] == "shop.example"
    assert server.hosts == ["shop.example"] * 10


def test_continuous_options_are_checked_before_any_request(module: None) -> None:
    r = run({"url": "http://127.0.0.1:9/", "rate": 500})
    assert r.failed and r.result["msg"].startswith("rate: expected requests per second above 0 and at most 200")
    r = run({"url": "http://127.0.0.1:9/", "max_failures": 3})
    assert r.failed and r.result["msg"].startswith("max_failures: only with rate")
