# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Watch requests that end whatever the API server does: the client's watch and list against a
loopback HTTP server that answers like kube-apiserver (chunked watch events), resets, stays
silent or is not there, with the collection's urllib3 connection underneath."""
from __future__ import annotations

import http.client
import json
import socket
import struct
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import client as k8s_client
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.client import Client
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.rest import ApiResource, Connection
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import (
    ApiUnreachable, K8sError, KindNotServed, WatchExpired, WatchInterrupted, api_server_description, transport_cause, unreachable_message,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.watch import parse_watch_line, watch_lines
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.options import parse_options
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.run import run
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection

pytest.importorskip("kubernetes")
urllib3_errors = pytest.importorskip("urllib3.exceptions")

Obj = dict[str, Any]
Behaviour = Callable[[socket.socket, threading.Event], None]


def ingress(ns: str, ip: str, rv: int) -> Obj:
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"namespace": ns, "name": "test", "resourceVersion": str(rv)},
            "status": {"loadBalancer": {"ingress": [{"ip": ip}]}}}


def event(kind: str, obj: Obj) -> Obj:
    return {"type": kind, "object": obj}


GONE = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "too old resource version: 5 (9)",
        "reason": "Expired", "code": 410}


# ---------------------------------------------------------------- the loopback server


# The client asks for a connection per request (Connection: close); Go's net/http answers so.
CLOSE = b"Connection: close\r\n"


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def watch_stream(events: list[Obj], then: str = "end", split: bool = False) -> Behaviour:
    """200 with the events as kube-apiserver sends them (one JSON line each, chunked); then the
    end of the stream, a reset (RST), or silence."""
    def play(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n%s\r\n" % CLOSE)
        for e in events:
            line = json.dumps(e).encode() + b"\n"
            if split:  # one event across two chunks
                conn.sendall(_chunk(line[:7]) + _chunk(line[7:]))
            else:
                conn.sendall(_chunk(line))
        if then == "end":
            conn.sendall(b"0\r\n\r\n")
        elif then == "reset":
            time.sleep(0.05)
            conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        else:
            stop.wait(10)
        conn.close()
    return play


def respond(status: int, body: Obj) -> Behaviour:
    def play(conn: socket.socket, stop: threading.Event) -> None:
        data = json.dumps(body).encode()
        reason = http.client.responses.get(status, "")
        conn.sendall(b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s\r\n%s"
                     % (status, reason.encode(), len(data), CLOSE, data))
        conn.close()
    return play


def silent(conn: socket.socket, stop: threading.Event) -> None:
    """Connected, never answered: a frozen kube-apiserver (the kernel accepts, nobody reads)."""
    stop.wait(10)
    conn.close()


class Server:
    """One scripted behaviour per connection, in order; silence once the script is done."""

    def __init__(self, behaviours: list[Behaviour]) -> None:
        self.behaviours = behaviours
        self.requests: list[str] = []
        self.headers: list[str] = []
        self.stop = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                return
            request = b""
            while b"\r\n\r\n" not in request:
                data = conn.recv(4096)
                if not data:
                    break
                request += data
            line, _sep, headers = request.decode().partition("\r\n")
            self.requests.append(line)
            self.headers.append(headers.lower())
            behaviour = self.behaviours.pop(0) if self.behaviours else silent
            threading.Thread(target=behaviour, args=(conn, self.stop), daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.sock.close()


@pytest.fixture
def serve() -> Iterator[Callable[..., Server]]:
    servers: list[Server] = []

    def start(*behaviours: Behaviour) -> Server:
        servers.append(Server(list(behaviours)))
        return servers[-1]
    yield start
    for server in servers:
        server.close()


def closed_port_url() -> str:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return "http://127.0.0.1:%d" % port


def kubeconfig(tmp_path: Path, url: str) -> str:
    path = tmp_path / "config"
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "kind-ingress-lab",
        "clusters": [{"name": "kind-ingress-lab", "cluster": {"server": url}}],
        "contexts": [{"name": "kind-ingress-lab", "context": {"cluster": "kind-ingress-lab", "user": "u"}}],
        "users": [{"name": "u", "user": {"token": "t"}}],
    }))
    return str(path)


def client_for(url: str, config: str | None = None) -> Client:
    """A Client on the collection's urllib3 connection to URL, without the discovery requests (the
    loopback server serves Ingresses only); with CONFIG, named as kubeconfig's current context."""
    client = Client.on(Connection.to(url), config, "kind-ingress-lab" if config else None)
    ingresses = ApiResource("networking.k8s.io/v1", "Ingress", "ingresses", namespaced=True)

    def resource(api_version: str, kind: str) -> ApiResource:
        if kind != "Ingress":
            raise KindNotServed("the cluster does not serve %s %s" % (api_version, kind))
        return ingresses

    client.resource = resource  # type: ignore[method-assign]
    return client


def assert_no_urllib3_text(text: str) -> None:
    for raw in ("urllib3", "Max retries", "HTTPConnectionPool", "NewConnectionError", "object at 0x"):
        assert raw not in text


# ---------------------------------------------------------------- the client's watch


def test_watch_asks_for_bookmarks_and_a_timeout_and_yields_what_the_server_sends(serve: Callable[..., Server]) -> None:
    events = [event("ADDED", ingress("one", "100.64.0.0", 6)), event("BOOKMARK", {"metadata": {"resourceVersion": "8"}}),
              event("ERROR", GONE)]
    server = serve(watch_stream(events, split=True))
    got = list(client_for(server.url).watch("networking.k8s.io/v1", "Ingress", "one", resource_version="5", timeout=7))
    assert got == [(e["type"], e["object"]) for e in events]
    assert "connection: close" in server.headers[0]
    path = server.requests[0].lower()
    assert path.startswith("get /apis/networking.k8s.io/v1/namespaces/one/ingresses?")
    for query in ("watch=true", "allowwatchbookmarks=true", "resourceversion=5", "timeoutseconds=7"):
        assert query in path


def test_a_reset_mid_stream_raises_watch_interrupted_after_the_events(serve: Callable[..., Server], tmp_path: Path) -> None:
    server = serve(watch_stream([event("MODIFIED", ingress("one", "172.18.0.2", 6))], then="reset"))
    client = client_for(server.url, kubeconfig(tmp_path, server.url))
    got = []
    with pytest.raises(WatchInterrupted) as exc:
        for kind, obj in client.watch("networking.k8s.io/v1", "Ingress", timeout=5):
            got.append((kind, obj["metadata"]["resourceVersion"]))
    assert got == [("MODIFIED", "6")]
    assert exc.value.cause in ("connection reset", "the connection broke mid-stream") and not exc.value.timed_out
    assert exc.value.where == "the API server at %s (context kind-ingress-lab, kubeconfig %s)" % (server.url, tmp_path / "config")
    assert_no_urllib3_text(str(exc.value))


def test_a_silent_stream_ends_at_its_read_timeout(serve: Callable[..., Server]) -> None:
    server = serve(watch_stream([event("MODIFIED", ingress("one", "172.18.0.2", 6))], then="silent"))
    began = time.monotonic()
    stream = client_for(server.url).watch("networking.k8s.io/v1", "Ingress", timeout=1, read_timeout=0.3)
    assert next(stream)[0] == "MODIFIED"
    with pytest.raises(WatchInterrupted) as exc:
        next(stream)
    assert exc.value.timed_out and exc.value.cause == "no answer within 0.3s (read timeout)"
    assert time.monotonic() - began < 3


def test_a_server_that_never_answers_times_out_once_without_urllib3_retries(serve: Callable[..., Server]) -> None:
    server = serve(silent)
    began = time.monotonic()
    with pytest.raises(WatchInterrupted) as exc:
        client_for(server.url).watch("networking.k8s.io/v1", "Ingress", timeout=1, read_timeout=0.3)
    assert exc.value.timed_out and "read timeout" in exc.value.cause
    assert time.monotonic() - began < 1.2  # urllib3's default retries would wait 4 x 0.3 s
    assert len(server.requests) == 1


def test_a_refused_connection_is_one_clear_cause(tmp_path: Path) -> None:
    url = closed_port_url()
    client = client_for(url, kubeconfig(tmp_path, url))
    for call in (lambda: client.watch("networking.k8s.io/v1", "Ingress", timeout=1),
                 lambda: client.list_with_version("networking.k8s.io/v1", "Ingress")):
        with pytest.raises(WatchInterrupted) as exc:
            call()
        assert exc.value.cause == "connection refused" and not exc.value.timed_out
        assert str(exc.value).endswith("the API server at %s (context kind-ingress-lab, kubeconfig %s) did not answer: "
                                       "connection refused" % (url, tmp_path / "config"))
        assert_no_urllib3_text(str(exc.value))


def test_410_gone_on_the_request_is_watch_expired(serve: Callable[..., Server]) -> None:
    server = serve(respond(410, GONE))
    with pytest.raises(WatchExpired, match=r"resourceVersion expired \(410 Gone\): too old resource version: 5 \(9\)"):
        client_for(server.url).watch("networking.k8s.io/v1", "Ingress", resource_version="5", timeout=1)


def test_other_api_errors(serve: Callable[..., Server]) -> None:
    unavailable = {"kind": "Status", "code": 503, "message": "the server is currently unable to handle the request"}
    forbidden = {"kind": "Status", "code": 403, "message": 'ingresses.networking.k8s.io is forbidden: User "u" cannot watch'}
    server = serve(respond(503, unavailable), respond(403, forbidden))
    client = client_for(server.url)
    with pytest.raises(WatchInterrupted) as exc:  # worth another try
        client.watch("networking.k8s.io/v1", "Ingress", timeout=1)
    assert exc.value.cause == "HTTP 503: the server is currently unable to handle the request"
    with pytest.raises(K8sError) as denied:  # not: it fails now
        client.watch("networking.k8s.io/v1", "Ingress", timeout=1)
    assert not isinstance(denied.value, WatchInterrupted) and "forbidden" in str(denied.value)


def test_list_with_version(serve: Callable[..., Server]) -> None:
    server = serve(respond(200, {"kind": "IngressList", "apiVersion": "networking.k8s.io/v1", "metadata": {"resourceVersion": "42"},
                                 "items": [ingress("one", "100.64.0.0", 40)]}))
    items, version = client_for(server.url).list_with_version("networking.k8s.io/v1", "Ingress", "one", read_timeout=1)
    assert version == "42" and [i["metadata"]["name"] for i in items] == ["test"]


# ---------------------------------------------------------------- run() on the real client


def test_run_against_a_server_that_is_not_there_fails_in_one_line(tmp_path: Path) -> None:
    url = closed_port_url()
    client = client_for(url, kubeconfig(tmp_path, url))
    began = time.monotonic()
    with pytest.raises(ApiUnreachable) as exc:
        run(client, Selection(), parse_options(1, 0, False, [], False, True))
    assert str(exc.value) == ("the API server at %s (context kind-ingress-lab, kubeconfig %s) did not answer in 1s: connection "
                              "refused; is the cluster running? (kindlab-twin get clusters / kind get clusters)"
                              % (url, tmp_path / "config"))
    assert time.monotonic() - began < 3


def test_run_against_a_server_that_freezes_returns_a_mostly_blind_verdict(
        serve: Callable[..., Server], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(k8s_client, "WATCH_READ_SLACK", 0.3)  # what Client.watch reads
    listed = {"kind": "IngressList", "metadata": {"resourceVersion": "42"}, "items": [ingress("one", "100.64.0.0", 40)]}
    server = serve(respond(200, listed), watch_stream([], then="silent"))
    began = time.monotonic()
    r = run(client_for(server.url), Selection(), parse_options(1, 0, False, [], False, True))
    assert time.monotonic() - began < 1 + 1 + 0.3 + 1  # the window, its stream's timeout rounded up, the slack, and some
    assert r["mostly_blind"] and not r["passed"] and r["failures"][0].startswith("the watch was blind for ")
    assert r["blind_intervals"][0]["why"] == "no answer within 1.3s (read timeout)"


# ---------------------------------------------------------------- the pieces


def _raised(make: Callable[[], BaseException]) -> BaseException:
    try:
        raise make()
    except BaseException as exc:
        return exc


def _wrapped(inner: BaseException, outer: Callable[[BaseException], BaseException]) -> BaseException:
    try:
        try:
            raise inner
        except BaseException as exc:
            raise outer(exc) from exc
    except BaseException as exc:
        return exc


def test_transport_cause_never_repeats_urllib3() -> None:
    e = urllib3_errors
    refused = _wrapped(ConnectionRefusedError(111, "Connection refused"),
                       lambda x: e.NewConnectionError(None, "Failed to establish a new connection: %s" % x))
    retried = e.MaxRetryError(None, "/apis", refused)
    assert transport_cause(retried) == ("connection refused", False)
    reset = e.ProtocolError("Connection broken: ConnectionResetError(104, 'Connection reset by peer')",
                            ConnectionResetError(104, "Connection reset by peer"))
    assert transport_cause(reset) == ("connection reset", False)
    assert transport_cause(e.ReadTimeoutError(None, "/apis", "Read timed out."), 35) == ("no answer within 35s (read timeout)", True)
    assert transport_cause(e.ConnectTimeoutError(None, "timed out")) == ("no answer to connect within 5s", True)
    assert transport_cause(e.ProtocolError("Response ended prematurely")) == ("the connection broke mid-stream", False)
    assert transport_cause(_wrapped(socket.gaierror(-2, "Name or service not known"), lambda x: OSError(str(x)))) == (
        "cannot resolve the server's host name", False)
    assert transport_cause(OSError(113, "No route to host")) == ("cannot connect: no route to host", False)


def test_watch_lines_and_events() -> None:
    chunks = [b'{"type":"ADDED","object":{"metadata":{"resourceVersion":"1"}}}\n{"type":"BOO', b'KMARK","object":{}}\n', b"\n", b'{"type"']
    lines = list(watch_lines(chunks))
    assert lines[:2] == ['{"type":"ADDED","object":{"metadata":{"resourceVersion":"1"}}}', '{"type":"BOOKMARK","object":{}}']
    assert [parse_watch_line(line) for line in lines] == [("ADDED", {"metadata": {"resourceVersion": "1"}}), ("BOOKMARK", {}), None]
    assert parse_watch_line("[]") is None


def test_unreachable_message() -> None:
    where = api_server_description("https://127.0.0.1:39321", "kind-ingress-lab", "/home/u/.kube/config")
    assert unreachable_message(where, "connection refused", 20.0) == (
        "the API server at https://127.0.0.1:39321 (context kind-ingress-lab, kubeconfig /home/u/.kube/config) did not answer "
        "in 20s: connection refused; is the cluster running? (kindlab-twin get clusters / kind get clusters)")
    assert api_server_description("https://h", None, None) == "the API server at https://h (context (current), kubeconfig (default))"
