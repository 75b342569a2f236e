from __future__ import annotations

import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest
from ansible.module_utils.six.moves.urllib.error import HTTPError
from ansible.module_utils.urls import open_url

from ansible_collections.kindlab.ingress.plugins.module_utils.transport.connect_to import ConnectTo, Peer
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.host import HostTransport
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.node import NodeTransport
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer, Request
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe import NODE_HINT, probe_from_module
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_once import run_probe
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_options import (
    ProbeError, ProbeSpec, parse_connect_to, parse_spec,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_request import (
    backend_of, build_target, distribution, first_rule_host,
)

NGINX_WELCOME = "<!DOCTYPE html>\n<html>\n<head>\n<title>Welcome to nginx!</title>\n</head>"


def params(**kw: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"url": None, "ingress": None, "scheme": "http", "port": None, "host": None, "path": "/",
                            "method": "GET", "status": [200], "body_regex": None, "attempts": 1, "interval": 0,
                            "timeout": 5, "samples": 1, "backend_regex": r"pod: (\S+)", "connect_to": [],
                            "via": "host", "node": None, "docker_binary": "docker", "validate_certs": True,
                            "kubeconfig": None, "context": None}
    base.update(kw)
    return base


# ---------------------------------------------------------------- validation

@pytest.mark.parametrize("kw, option", [
    ({}, "url, ingress"),
    ({"url": "http://a/", "ingress": "one/test"}, "url, ingress"),
    ({"url": "ftp://a/"}, "url"),
    ({"url": "http:///nohost"}, "url"),
    ({"url": "http://a:99999/"}, "url"),
    ({"ingress": "one"}, "ingress"),
    ({"ingress": {"namespace": "one"}}, "ingress"),
    ({"url": "http://a/", "path": "relative"}, "path"),
    ({"url": "http://a/", "method": "GE T"}, "method"),
    ({"url": "http://a/", "status": [200, 700]}, "status"),
    ({"url": "http://a/", "attempts": 0}, "attempts"),
    ({"url": "http://a/", "samples": -1}, "samples"),
    ({"url": "http://a/", "timeout": 0}, "timeout"),
    ({"url": "http://a/", "interval": -1}, "interval"),
    ({"ingress": "one/test", "port": 0}, "port"),
    ({"url": "http://a/", "host": "a b"}, "host"),
    ({"url": "http://a/", "body_regex": "("}, "body_regex"),
    ({"url": "http://a/", "backend_regex": "pod: \\S+"}, "backend_regex"),
    ({"url": "http://a/", "connect_to": ["100.64.0.0:80:127.0.0.1"]}, r"connect_to\[0\]"),
    ({"url": "http://a/", "connect_to": ["ok:80:127.0.0.1:1", "a:http:127.0.0.1:1"]}, r"connect_to\[1\]"),
    ({"url": "http://a/", "connect_to": ["a:80:127.0.0.1:70000"]}, r"connect_to\[0\]"),
])
def test_bad_options_name_the_option(kw: dict[str, Any], option: str) -> None:
    with pytest.raises(ProbeError, match="^%s: " % option):
        parse_spec(params(**kw))


def test_node_without_a_name_or_kind_context_fails_before_any_request() -> None:
    def never(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("no request may be sent")

    with pytest.raises(ProbeError, match="^node: "):
        probe_from_module(params(url="http://a/", via="node"), never, never, HTTPError, never, lambda _b: "/usr/bin/docker")
    with pytest.raises(ProbeError, match="^docker_binary: .*use via: host with connect_to"):
        probe_from_module(params(url="http://a/", via="node", context="kind-lab"), never, never, HTTPError, never,
                          lambda _b: None)


def test_the_result_says_where_the_probe_ran_from() -> None:
    def never(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("no request may be sent from the host")

    argvs: list[list[str]] = []

    def docker_exec(argv: list[str]) -> tuple[int, str, str]:
        argvs.append(argv)
        return 0, "pod: test-1\n__kindlab_probe_status__:200", ""

    result = probe_from_module(params(url="http://100.64.0.1/", via="node", context="kind-ingress-lab"), never, never,
                               HTTPError, docker_exec, lambda _b: "/usr/bin/docker")
    assert result["passed"] and (result["via"], result["node"]) == ("node", "ingress-lab-control-plane")
    assert argvs[0][:3] == ["/usr/bin/docker", "exec", "ingress-lab-control-plane"]

    class Answer:
        status = 200

        def read(self, _n: int) -> bytes:
            return b"pod: test-1\n"

    host = probe_from_module(params(url="http://127.0.0.1:9/"), never, lambda *_a, **_k: Answer(), HTTPError, never,
                             lambda _b: None)
    assert host["via"] == "host" and "node" not in host


@pytest.mark.parametrize("entry, parsed", [
    ("100.64.0.0:80:127.0.0.1:40123", ConnectTo("100.64.0.0", "80", "127.0.0.1", "40123")),
    ("shop.example:443:127.0.0.1:8443", ConnectTo("shop.example", "443", "127.0.0.1", "8443")),
    ("[fc00::1]:80:[::1]:8080", ConnectTo("fc00::1", "80", "::1", "8080")),
    ("::127.0.0.1:9000", ConnectTo("", "", "127.0.0.1", "9000")),  # curl: empty = any / keep
])
def test_connect_to_parsing(entry: str, parsed: ConnectTo) -> None:
    assert parse_connect_to([entry]) == [parsed]


def test_connect_to_maps_only_matching_host_and_port() -> None:
    spec = parse_spec(params(url="http://100.64.0.0/x?y=1", connect_to=["100.64.0.1:80:127.0.0.1:1", "100.64.0.0:80:127.0.0.1:2"]))
    target = build_target(spec, None, None)
    assert (target.url, target.host_header, target.address) == ("http://100.64.0.0/x?y=1", "100.64.0.0", "100.64.0.0")
    assert (target.request.peer.host, target.request.peer.port) == ("127.0.0.1", 2)
    unmapped = build_target(parse_spec(params(url="http://100.64.0.0:8080/", connect_to=["100.64.0.0:80:127.0.0.1:2"])), None, None)
    assert (unmapped.request.peer.host, unmapped.request.peer.port, unmapped.host_header) == ("100.64.0.0", 8080, "100.64.0.0:8080")


def test_ingress_target_uses_status_address_rule_host_and_port() -> None:
    spec = parse_spec(params(ingress={"namespace": "one", "name": "test"}, port=8080, path="/api"))
    target = build_target(spec, "100.64.0.3", "shop.example.com")
    assert (target.url, target.host_header) == ("http://100.64.0.3:8080/api", "shop.example.com")
    assert first_rule_host({"spec": {"rules": [{"http": {}}, {"host": "*.example.com"}]}}) == "probe.example.com"


# ---------------------------------------------------------------- distribution

def test_backend_of_and_distribution() -> None:
    pattern = re.compile(r"pod: (\S+)")
    bodies = ["pod: web-1\nnamespace: one\n", "pod: web-2\n", "pod: web-1\n", NGINX_WELCOME, "hello"]
    assert distribution([backend_of(b, pattern) for b in bodies]) == {"web-1": 2, "web-2": 1, "nginx": 1, "(unmatched)": 1}
    assert backend_of("hello from blue", re.compile(r"hello from (\w+)")) == "blue"


def fake_spec(**kw: Any) -> ProbeSpec:
    return parse_spec(params(url="http://100.64.0.0/", **kw))


def test_samples_after_success_and_failed_samples_fail_the_probe() -> None:
    answers = iter([Answer(503, ""), Answer(200, "pod: a\n"), Answer(200, "pod: a\n"), Answer(503, "x"), Answer(200, "pod: b\n")])
    result = run_probe(fake_spec(attempts=3, samples=3), lambda _r: next(answers), sleep=lambda _x: None)
    assert [a["status"] for a in result["attempts"]] == [503, 200]
    assert result["distribution"] == {"a": 1, "(unmatched)": 1, "b": 1}
    assert not result["passed"]
    assert result["reason"] == "1 of 3 samples from 100.64.0.0 failed: got 503 (expected 200)"


def test_ingress_without_address_is_retried_and_reported() -> None:
    addresses = iter([([], None), (["100.64.0.1"], "h.example")])
    seen: list[Request] = []

    def send(request: Request) -> Answer:
        seen.append(request)
        return Answer(200, "pod: p\n")

    result = run_probe(parse_spec(params(ingress="one/test", attempts=2, samples=0)), send, lambda: next(addresses),
                       sleep=lambda _x: None)
    assert result["passed"] and result["attempts"][0]["error"] == "no status address on Ingress one/test"
    assert seen[0].host == "h.example" and result["address"] == "100.64.0.1"


def test_several_ingresses_are_used_in_turn_like_dns_round_robin() -> None:
    spec = parse_spec(params(ingress=["one/login", {"namespace": "two", "name": "login"}], samples=4))
    assert spec.ingresses == [("one", "login"), ("two", "login")]
    bodies = {"100.64.0.0": "pod: one-login\n", "100.64.0.1": "pod: two-login\n"}
    result = run_probe(spec, lambda r: Answer(200, bodies[r.address]),
                       lambda: (["100.64.0.0", "100.64.0.1"], "app.example.test"), sleep=lambda _x: None)
    assert result["passed"] and result["distribution"] == {"one-login": 2, "two-login": 2}
    assert result["addresses"] == ["100.64.0.0", "100.64.0.1"]
    assert [s["address"] for s in result["samples"]] == ["100.64.0.1", "100.64.0.0", "100.64.0.1", "100.64.0.0"]
    with pytest.raises(ProbeError, match=r"^ingress\[1\]: "):
        parse_spec(params(ingress=["one/login", "two"]))
    with pytest.raises(ProbeError, match="^ingress: expected at least one"):
        parse_spec(params(ingress=[]))


def test_curl_argv_and_output() -> None:
    spec = fake_spec(method="HEAD", connect_to=["100.64.0.0:80:127.0.0.1:9"], timeout=2)
    argv = NodeTransport(docker_never, "/usr/bin/docker", "lab-control-plane").argv(build_target(spec, None, "h.example").request)
    assert argv[:5] == ["/usr/bin/docker", "exec", "lab-control-plane", "curl", "-sS"]
    assert argv[-1] == "http://100.64.0.0/" and "--head" in argv and "Host: h.example" in argv
    assert argv[argv.index("--connect-to") + 1] == "100.64.0.0:80:127.0.0.1:9"
    node = NodeTransport(docker_never, "/usr/bin/docker", "n", NODE_HINT)
    assert node.read(0, "pod: x\n\n__kindlab_probe_status__:200", "") == Answer(200, "pod: x\n")
    assert "use via: host with connect_to" in (node.read(1, "", "Error response from daemon: No such container: n").error or "")
    assert "curl in node n failed (rc=7)" in (node.read(7, "\n__kindlab_probe_status__:000", "Connection refused").error or "")


def docker_never(argv: list[str]) -> tuple[int, str, str]:
    raise AssertionError("nothing runs: %s" % argv)


# ---------------------------------------------------------------- real HTTP on 127.0.0.1

class Server:
    """A tiny HTTP server on 127.0.0.1 that answers a scripted list of statuses (last one repeats)."""

    def __init__(self, statuses: list[int], body: str = "pod: web-{n}\n") -> None:
        self.statuses, self.body, self.hosts, self.paths = statuses, body, [], []  # type: ignore[var-annotated]
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                n = len(outer.hosts)
                outer.hosts.append(self.headers.get("Host"))
                outer.paths.append(self.path)
                status = outer.statuses[min(n, len(outer.statuses) - 1)]
                data = outer.body.format(n=n % 2).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()


@pytest.fixture
def server_factory() -> Iterator[Any]:
    servers: list[Server] = []

    def make(statuses: list[int], body: str = "pod: web-{n}\n") -> Server:
        servers.append(Server(statuses, body))
        return servers[-1]

    yield make
    for s in servers:
        s.httpd.shutdown()
        s.httpd.server_close()


def probe(p: dict[str, Any]) -> dict[str, Any]:
    spec = parse_spec(p)
    host = HostTransport(connect_to_only=spec.connect_to_only, open_url=open_url, http_error=HTTPError)
    return run_probe(spec, host.send, sleep=lambda _x: None)


def test_real_http_pass_with_distribution(server_factory: Any) -> None:
    srv = server_factory([200])
    result = probe(params(url="http://127.0.0.1:%d/" % srv.port, samples=4))
    assert result["passed"] and result["distribution"] == {"web-0": 2, "web-1": 2}


def test_real_http_status_mismatch(server_factory: Any) -> None:
    srv = server_factory([404])
    result = probe(params(url="http://127.0.0.1:%d/" % srv.port, attempts=2))
    assert not result["passed"]
    assert result["reason"] == "got 404 from 127.0.0.1 (expected 200) after 2 attempts"


def test_real_http_body_regex(server_factory: Any) -> None:
    srv = server_factory([200], body="hello from blue\n")
    assert probe(params(url="http://127.0.0.1:%d/" % srv.port, body_regex="blue"))["passed"]
    result = probe(params(url="http://127.0.0.1:%d/" % srv.port, body_regex="green"))
    assert result["reason"] == "got 200 from 127.0.0.1 but the body does not match 'green' after 1 attempt"


def test_real_http_503_then_200(server_factory: Any) -> None:
    srv = server_factory([503, 503, 200])
    result = probe(params(url="http://127.0.0.1:%d/" % srv.port, attempts=5, samples=2))
    assert [a["status"] for a in result["attempts"]] == [503, 503, 200]
    assert result["attempts"][0]["error"] == "got 503 (expected 200)"
    assert result["passed"] and len(result["samples"]) == 2


def test_real_http_connect_to_maps_a_fake_host_to_loopback(server_factory: Any) -> None:
    srv = server_factory([200])
    result = probe(params(url="http://shop.lab.invalid/cart?x=1", connect_to=["shop.lab.invalid:80:127.0.0.1:%d" % srv.port]))
    assert result["passed"] and result["address"] == "shop.lab.invalid"
    assert srv.hosts == ["shop.lab.invalid", "shop.lab.invalid"] and srv.paths[0] == "/cart?x=1"


def test_real_http_host_header_override_and_refused_connection(server_factory: Any) -> None:
    srv = server_factory([200])
    assert probe(params(url="http://100.64.0.9/", host="a.example", connect_to=["100.64.0.9:80:127.0.0.1:%d" % srv.port]))["passed"]
    assert srv.hosts[0] == "a.example"
    srv.httpd.shutdown()
    srv.httpd.server_close()
    result = probe(params(url="http://127.0.0.1:%d/" % srv.port, timeout=2))
    assert not result["passed"] and result["attempts"][0]["status"] is None
    assert result["reason"].startswith("GET to 127.0.0.1:%d failed:" % srv.port)


def test_connect_to_only_never_dials_an_unmapped_address() -> None:
    dialled: list[str] = []

    def fake_open_url(url: str, **_kwargs: object) -> object:
        dialled.append(url)
        raise AssertionError("must not be dialled")

    spec = parse_spec({"url": "http://172.18.0.2/", "connect_to": ["100.64.0.0:80:127.0.0.1:1"], "connect_to_only": True})
    target = build_target(spec, None, None)
    answer = HostTransport(connect_to_only=spec.connect_to_only, open_url=fake_open_url, http_error=Exception).send(target.request)
    assert dialled == [] and answer.status is None and "no connect_to entry maps it" in (answer.error or "")
    mapped = build_target(parse_spec({"url": "http://100.64.0.0/", "connect_to": ["100.64.0.0:80:127.0.0.1:1"],
                                      "connect_to_only": True}), None, None)
    assert mapped.request.peer == Peer("127.0.0.1", 1, mapped=True)
