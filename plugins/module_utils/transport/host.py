# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Requests from this host, each dialled at its peer (its URL's host and port, or where a connect-to entry
maps them: on the twin, a loopback port that stands for a lab address).

A client's request goes through Ansible's open_url, as any module's would (its headers, .netrc, gzip,
certificate checks as `validate_certs` says, no proxy, no redirect followed): a mapped request's URL names
the peer, its Host header stays. A raw request goes through http.client as written (Request.raw), copies
back to back on one connection, over TLS with its URL's host as the server name. With `connect_to_only`
a request no entry maps is refused, never dialled: on the twin nothing but the mapped ports exists, and
lab addresses must never be dialled from this host."""
from __future__ import annotations

import http.client
import socket
import ssl
import time
from typing import Any, Callable
from urllib.error import HTTPError
from urllib.parse import urlsplit

from ansible.module_utils.urls import open_url

from ansible_collections.kindlab.ingress.plugins.module_utils.transport.connect_to import Peer, bracket
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer, Request


class HostTransport:
    """A Transport from this host. `max_body`: at most this many bytes of a client's answer are read (None:
    all); a raw answer is read whole, its connection kept for the next copy."""

    def __init__(self, connect_to_only: bool = False, validate_certs: bool = True, max_body: int | None = None,
                 open_url: Callable[..., Any] = open_url, http_error: type[Exception] = HTTPError) -> None:
        self.connect_to_only, self.validate_certs, self.max_body = connect_to_only, validate_certs, max_body
        self.open_url, self.http_error = open_url, http_error

    def _refused(self, request: Request, peer: Peer) -> Answer | None:
        if self.connect_to_only and not peer.mapped:
            return Answer(None, "", "%s to %s:%d refused: no connect_to entry maps it (connect_to_only: nothing listens there)"
                          % (request.method, request.address, peer.port))
        return None

    def send(self, request: Request) -> Answer:
        if request.raw:
            return self.repeat(request, 1)[0]
        peer = request.peer
        refused = self._refused(request, peer)
        if refused is not None:
            return refused
        parts = urlsplit(request.url)
        url = request.url
        if (peer.host, peer.port) != (parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)):
            url = parts._replace(netloc="%s:%d" % (bracket(peer.host), peer.port)).geturl()
        more: dict[str, Any] = {} if request.body is None else {"data": request.body}
        try:
            resp = self.open_url(url, method=request.method, headers=dict((("Host", request.host),) + request.headers),
                                 timeout=request.timeout, follow_redirects="none", use_proxy=False, validate_certs=self.validate_certs,
                                 **more)
            return Answer(resp.getcode(), _text(resp.read(self.max_body)))
        except self.http_error as exc:  # a non-2xx answer is still an answer
            try:
                body = exc.read(self.max_body)  # type: ignore[attr-defined]
            except Exception:  # no body (HEAD, or already closed)
                body = b""
            return Answer(int(getattr(exc, "code", 0)), _text(body))
        except Exception as exc:  # connection refused, timeout, TLS: the request's error
            return Answer(None, "", "%s to %s:%d failed: %s" % (request.method, peer.host, peer.port,
                                                                getattr(exc, "reason", None) or exc))

    def repeat(self, request: Request, copies: int) -> list[Answer]:
        if not request.raw:
            return [self.send(request) for _copy in range(max(1, copies))]
        refused = self._refused(request, request.peer)
        if refused is not None:
            return [refused for _copy in range(max(1, copies))]
        conn = self._connection(request)
        try:
            answers = []
            for _copy in range(max(1, copies)):
                answers.append(_once(conn, request))
                if conn.sock is None:  # closed by the server or by an error: a new one for the next copy
                    conn = self._connection(request)
        finally:
            conn.close()
        return answers

    def _connection(self, request: Request) -> http.client.HTTPConnection:
        peer = request.peer
        if not request.tls:
            return http.client.HTTPConnection(peer.host, peer.port, timeout=request.timeout)
        context = ssl.create_default_context()
        if not self.validate_certs:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE  # the lab's certificates are self-signed: routing is under test

        class _ServerName(http.client.HTTPSConnection):
            def connect(self) -> None:  # the URL's host as the server name, whatever address is dialled
                sock = socket.create_connection((peer.host, peer.port), request.timeout)
                self.sock = context.wrap_socket(sock, server_hostname=request.address)

        return _ServerName(peer.host, peer.port, timeout=request.timeout, context=context)


def _once(conn: http.client.HTTPConnection, request: Request) -> Answer:
    """One raw request on an open connection: the answer, or the error that stopped it."""
    started = time.monotonic()
    try:
        conn.putrequest(request.method, request.target, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", request.host)
        for name, value in request.headers:
            conn.putheader(name, value)
        if request.body is not None:
            conn.putheader("Content-Length", str(len(request.body)))
        try:
            conn.endheaders(request.body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a proxy that refuses the body (413) may close before reading it: its answer may still be there
        resp = conn.getresponse()
        data = resp.read()
    except (OSError, http.client.HTTPException) as exc:
        conn.close()
        error = "timed out" if isinstance(exc, (socket.timeout, TimeoutError)) else "%s: %s" % (type(exc).__name__, exc)
        return Answer(None, "", error, seconds=round(time.monotonic() - started, 3))
    answer = Answer(resp.status, _text(data), headers=tuple(resp.getheaders()), seconds=round(time.monotonic() - started, 3))
    if resp.will_close:
        conn.close()
    return answer


def _text(data: bytes | str) -> str:
    return data if isinstance(data, str) else data.decode("utf-8", "replace")
