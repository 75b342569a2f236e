# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sending the corpus to a data plane, byte for byte, and reading what arrived.

Each request goes to the data plane's address with its Host header, its target exactly as
generated (no client-side normalisation of `..` or `//`: that is what is being tested) and no
redirect followed. The echo backend's JSON says which namespace, Service and pod answered and
the path, query and headers it received. Requests run side by side (a thread pool); a request
with `repeat` (a burst, a canary weight) runs its copies back to back on one connection.
"""
from __future__ import annotations

import http.client
import json
import socket
import ssl
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Request

Obj = dict[str, Any]

# Response headers that say nothing about routing or a rule (every server differs in them).
_UNCOMPARED_RESPONSE = {"date", "content-length", "content-type", "server", "connection", "keep-alive",
                        "transfer-encoding", "x-content-type-options", "etag", "last-modified", "accept-ranges",
                        "strict-transport-security", "location"}
USER_AGENT = "kindlab-migration/1"
# What the echo stand-in (echo-basic) answers itself on its health path (conformance/echo-basic: /health).
STAND_IN_OWN_ANSWER = b"OK"


@dataclass
class Answer:
    status: int | None = None  # None: no HTTP answer (error says why)
    error: str = ""
    location: str = ""
    headers: dict[str, str] = field(default_factory=dict)  # response headers a rule may set (lower-case names)
    backend: str = ""  # namespace/service of the echo backend that answered; "" when none did
    pod: str = ""
    path: str = ""  # the request target the backend received (path and query)
    received: dict[str, str] = field(default_factory=dict)  # request headers the backend received
    # The echo stand-in answered by itself instead of echoing (echo-basic answers its own /health with "OK"): no
    # backend says what arrived, so the answer is never counted the same as another.
    stand_in: bool = False
    statuses: dict[str, int] = field(default_factory=dict)  # repeat > 1: status -> count
    backends: dict[str, int] = field(default_factory=dict)  # repeat > 1: backend -> count
    seconds: float = 0.0

    @property
    def served(self) -> bool:
        """Something answered for a rule: a backend, or a status other than 404 (a redirect, a refusal)."""
        return bool(self.backend) or (self.status is not None and self.status != 404)

    def as_dict(self) -> Obj:
        return asdict(self)


@dataclass(frozen=True)
class Address:
    """Where a data plane listens (an IP and its HTTP and HTTPS ports)."""
    ip: str
    port: int = 80
    tls_port: int = 443


def _echo(body: bytes) -> Obj | None:
    try:
        doc = json.loads(body.decode("utf-8", "replace"))
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and "path" in doc and "headers" in doc else None


def _connection(address: Address, host: str, scheme: str, timeout: float) -> http.client.HTTPConnection:
    if scheme == "https":
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE  # the lab's certificates are self-signed: routing is under test

        class _SNI(http.client.HTTPSConnection):
            def connect(self) -> None:  # the Host's name as SNI, whatever address is dialled
                sock = socket.create_connection((address.ip, address.tls_port), timeout)
                self.sock = context.wrap_socket(sock, server_hostname=host)

        return _SNI(address.ip, address.tls_port, timeout=timeout, context=context)
    return http.client.HTTPConnection(address.ip, address.port, timeout=timeout)


def send_once(conn: http.client.HTTPConnection, req: Request) -> Answer:
    """One request on an open connection; the answer, or the error that stopped it."""
    started = time.monotonic()
    body = b"x" * req.body_size if req.body_size else None
    headers = {"Host": req.host, "User-Agent": USER_AGENT, **dict(req.headers)}
    answer = Answer()
    try:
        conn.putrequest(req.method, req.target, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        try:
            conn.endheaders(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a proxy that refuses the body (413) may close before reading it: its answer may still be there
        resp = conn.getresponse()
        data = resp.read()
    except (OSError, http.client.HTTPException) as exc:
        answer.error = "timed out" if isinstance(exc, (socket.timeout, TimeoutError)) else "%s: %s" % (type(exc).__name__, exc)
        answer.seconds = round(time.monotonic() - started, 3)
        conn.close()
        return answer
    answer.status = resp.status
    answer.location = resp.getheader("Location") or ""
    answer.headers = {k.lower(): v for k, v in resp.getheaders() if k.lower() not in _UNCOMPARED_RESPONSE}
    echo = _echo(data)
    answer.stand_in = echo is None and resp.status == 200 and data.strip() == STAND_IN_OWN_ANSWER
    if echo is not None:
        answer.backend = "%s/%s" % (echo.get("namespace") or "", echo.get("service") or "")
        answer.pod = str(echo.get("pod") or "")
        answer.path = str(echo.get("path") or "")
        answer.received = {str(k): ", ".join(v) if isinstance(v, list) else str(v)
                           for k, v in (echo.get("headers") or {}).items()}
        answer.received["Host"] = str(echo.get("host") or "")
    answer.seconds = round(time.monotonic() - started, 3)
    if resp.will_close:
        conn.close()
    return answer


def send(address: Address, req: Request, timeout: float = 20.0) -> Answer:
    """The request (repeat times back to back on one connection; over TLS with the host as SNI when
    its scheme is https); with repeat > 1 the answer is the last one with the counts of every status
    and backend seen."""
    scheme = req.scheme
    conn = _connection(address, req.host, scheme, timeout)
    try:
        answers = []
        for _copy in range(max(1, req.repeat)):
            answers.append(send_once(conn, req))
            if conn.sock is None:  # closed by the server or by an error: a new one for the next copy
                conn = _connection(address, req.host, scheme, timeout)
    finally:
        conn.close()
    last = answers[-1]
    if req.repeat > 1:
        for a in answers:
            status = str(a.status) if a.status is not None else a.error
            last.statuses[status] = last.statuses.get(status, 0) + 1
            if a.backend:
                last.backends[a.backend] = last.backends.get(a.backend, 0) + 1
        last.seconds = round(sum(a.seconds for a in answers), 3)
    return last


Sender = Callable[[Address, Request], Answer]


def replay(planes: Sequence[tuple[str, Address, int]], corpus: Sequence[Request], workers: int = 16,
           sender: Sender = send) -> dict[str, list[list[Answer]]]:
    """Every request through every data plane: PLANES are (name, address, samples). Returns
    name -> one list of answers per request (one answer per sample). Bursts run last, one data
    plane at a time, so that their rate limits do not refuse the other requests."""
    results: dict[str, list[list[Answer]]] = {name: [[] for _request in corpus] for name, _a, _s in planes}
    bursts = [i for i, r in enumerate(corpus) if r.kind == "burst"]
    others = [i for i, r in enumerate(corpus) if r.kind != "burst"]

    def run(job: tuple[str, Address, int]) -> tuple[str, int, Answer]:
        name, address, index = job
        return name, index, sender(address, corpus[index])

    jobs = [(name, address, i) for i in others for name, address, samples in planes for _sample in range(samples)]
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for name, index, answer in pool.map(run, jobs):
            results[name][index].append(answer)
        for name, address, samples in planes:
            burst_jobs = [(name, address, i) for i in bursts for _sample in range(samples)]
            for name_, index, answer in pool.map(run, burst_jobs):
                results[name_][index].append(answer)
    return results
