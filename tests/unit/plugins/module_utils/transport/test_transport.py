"""transport/: where a request is dialled (connect-to), the answer's headers, a raw request's bytes and its
copies on one connection from this host (a server on 127.0.0.1 that records what arrives), what is refused
before anything is dialled."""
from __future__ import annotations

import socket
import threading
from typing import Any, Iterator

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.transport.connect_to import ConnectTo, Peer, parse_entry, peer
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.curl import MARKED, curl_options
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.host import HostTransport
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.node import NodeTransport
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer, Request


def test_the_peer_is_the_first_entry_that_applies_as_curl_takes_them() -> None:
    entries = (ConnectTo("shop.example", "443", "127.0.0.1", "8443"), ConnectTo("", "80", "", "8080"))
    assert peer(entries, "SHOP.example", 443) == Peer("127.0.0.1", 8443, True)  # a host matches in any case
    assert peer(entries, "other.example", 80) == Peer("other.example", 8080, True)  # empty: any host, keep the host
    assert peer(entries, "other.example", 443) == Peer("other.example", 443, False)
    assert parse_entry("[fc00::1]:80:[::1]:8080") == ConnectTo("fc00::1", "80", "::1", "8080")
    assert parse_entry("[fc00::1]:80:[::1]:8080").entry() == "[fc00::1]:80:[::1]:8080"  # type: ignore[union-attr]
    assert parse_entry("100.64.0.0:80:127.0.0.1") is None


def test_a_header_that_came_twice_is_read_as_one_value() -> None:
    answer = Answer(200, headers=(("Set-Cookie", "a=1"), ("set-cookie", "b=2"), ("Location", "")))
    assert answer.header("SET-COOKIE") == "a=1, b=2"
    assert answer.header("location", "none") == ""  # came, empty
    assert answer.header("x-next-page", "1") == "1"


class Recorder:
    """A server on 127.0.0.1 that records each request's bytes and the connection it came on; it answers 200 with
    the request count as body, and closes the connection after a request that asks it to (X-Close)."""

    def __init__(self) -> None:
        self.requests: list[tuple[int, bytes]] = []
        self.connections = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _addr = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn, self.connections), daemon=True).start()

    def _serve(self, conn: socket.socket, number: int) -> None:
        buf = b""
        with conn:
            while True:
                while b"\r\n\r\n" not in buf:
                    data = conn.recv(65536)
                    if not data:
                        return
                    buf += data
                head, _sep, buf = buf.partition(b"\r\n\r\n")
                size = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")), 0)
                while len(buf) < size:
                    buf += conn.recv(65536)
                self.requests.append((number, head + b"\r\n\r\n" + buf[:size]))
                buf = buf[size:]
                close = b"\r\nX-Close: 1" in head
                body = str(len(self.requests)).encode()
                conn.sendall(b"HTTP/1.1 200 OK\r\nX-Seen: %d\r\nContent-Length: %d\r\n%s\r\n%s"
                             % (len(self.requests), len(body), b"Connection: close\r\n" if close else b"", body))
                if close:
                    return


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    server = Recorder()
    yield server
    server.sock.close()


def raw(port: int, **kw: Any) -> Request:
    base: dict[str, Any] = {"method": "GET", "url": "http://127.0.0.1:%d/a/../b//c?x=1" % port, "address": "127.0.0.1",
                            "port": port, "host": "shop.example", "target": "/a/../b//c?x=1", "raw": True, "timeout": 5}
    base.update(kw)
    return Request(**base)


def test_a_raw_request_goes_as_written_and_its_copies_share_one_connection(recorder: Recorder) -> None:
    request = raw(recorder.port, method="POST", headers=(("User-Agent", "kindlab-test/1"), ("X-A", "1")), body=b"xyz")
    answers = HostTransport().repeat(request, 3)
    assert [a.status for a in answers] == [200, 200, 200] and [a.body for a in answers] == ["1", "2", "3"]
    assert answers[0].headers == (("X-Seen", "1"), ("Content-Length", "1"))
    assert recorder.connections == 1 and [n for n, _bytes in recorder.requests] == [1, 1, 1]
    assert recorder.requests[0][1] == (b"POST /a/../b//c?x=1 HTTP/1.1\r\nHost: shop.example\r\nUser-Agent: kindlab-test/1\r\n"
                                       b"X-A: 1\r\nContent-Length: 3\r\n\r\nxyz")


def test_a_copy_after_a_closed_connection_opens_a_new_one(recorder: Recorder) -> None:
    answers = HostTransport().repeat(raw(recorder.port, headers=(("X-Close", "1"),)), 2)
    assert [a.status for a in answers] == [200, 200] and recorder.connections == 2


def test_a_raw_request_is_mapped_as_curl_maps_it_and_a_refused_one_says_why() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    mapped = raw(80, url="http://lab.invalid:80/", address="lab.invalid", target="/",
                 connect_to=(ConnectTo("lab.invalid", "80", "127.0.0.1", str(port)),))
    answer = HostTransport().send(mapped)
    assert answer.status is None and answer.error == "ConnectionRefusedError: [Errno 111] Connection refused"


def test_connect_to_only_dials_nothing_no_entry_maps() -> None:
    def never(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("nothing may be dialled")

    host = HostTransport(connect_to_only=True, open_url=never)
    for request in (raw(80, address="100.64.0.1", url="http://100.64.0.1/"), raw(80, address="100.64.0.1", raw=False)):
        answers = host.repeat(request, 2)
        assert [a.status for a in answers] == [None, None]
        assert answers[0].error == "GET to 100.64.0.1:80 refused: no connect_to entry maps it (connect_to_only: nothing listens there)"


def test_a_body_is_never_dropped_silently_from_a_node() -> None:
    def never(argv: list[str]) -> tuple[int, str, str]:
        raise AssertionError("nothing runs: %s" % argv)

    request = raw(80, method="POST", body=b"x" * 10)
    with pytest.raises(ValueError, match="body"):
        curl_options(request, MARKED)
    answer = NodeTransport(never, "docker", "n").send(request)
    assert answer.status is None and answer.fatal and "body" in (answer.error or "")
    with pytest.raises(ValueError, match="form"):
        curl_options(raw(80), "pretty")
