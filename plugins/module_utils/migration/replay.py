# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Sending the corpus to a data plane, byte for byte, and reading what arrived.

Each request is a raw one (transport/request.py) to the data plane's address with its Host header, its
target exactly as generated (no client-side normalisation of `..` or `//`: that is what is being tested)
and no redirect followed; an HTTPS one names its host in the URL (the TLS server name) and is mapped to the
data plane's HTTPS port, as curl's --connect-to does, so its curl line (`request_of`, transport/curl.py)
is the same request. The echo backend's JSON says which namespace, Service and pod answered and the path,
query and headers it received. Requests run side by side (a thread pool); a request with `repeat` (a
burst, a canary weight) runs its copies back to back on one connection.
"""
from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Request
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.connect_to import ConnectTo, bracket
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.host import HostTransport
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer, Transport
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Request as HttpRequest

Obj = dict[str, Any]

# Response headers that say nothing about routing or a rule (every server differs in them).
_UNCOMPARED_RESPONSE = {"date", "content-length", "content-type", "server", "connection", "keep-alive",
                        "transfer-encoding", "x-content-type-options", "etag", "last-modified", "accept-ranges",
                        "strict-transport-security", "location"}
USER_AGENT = "kindlab-migration/1"
# What the echo stand-in (echo-basic) answers itself on its health path (conformance/echo-basic: /health).
STAND_IN_OWN_ANSWER = "OK"
_ASCII_SPACE = " \t\n\r\x0b\x0c"  # what bytes.strip() strips: the stand-in's answer is read as its bytes were
TIMEOUT = 20.0  # seconds for one request


@dataclass
class Observation:
    """What one data plane answered to one request (its answer's compared parts) and what the echo backend
    behind it says arrived."""
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


def request_of(req: Request, address: Address, timeout: float = TIMEOUT, as_sent: bool = True) -> HttpRequest:
    """REQ to the data plane at ADDRESS: as the replay sends it (with its User-Agent, which a header of the
    request's own of that name replaces), or (AS_SENT false) as its curl line shows it, curl saying its own."""
    connect: tuple[ConnectTo, ...] = ()
    if req.scheme == "https":
        port, url_host = address.tls_port, req.host
        url = "https://%s:%d%s" % (req.host, port, req.target)
        connect = (ConnectTo(req.host, str(port), address.ip, str(port)),)
    else:
        port, url_host = address.port, address.ip
        url = "http://%s:%d%s" % (bracket(address.ip), port, req.target)
    host, headers = req.host, req.headers
    if as_sent:
        merged = {"Host": req.host, "User-Agent": USER_AGENT, **dict(req.headers)}
        host = merged.pop("Host")
        headers = tuple(merged.items())
    return HttpRequest(method=req.method, url=url, address=url_host, port=port, host=host, target=req.target,
                       headers=headers, body=b"x" * req.body_size if req.body_size else None, timeout=timeout,
                       connect_to=connect, raw=True)


def _echo(body: str) -> Obj | None:
    try:
        doc = json.loads(body)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) and "path" in doc and "headers" in doc else None


def observe(answer: Answer) -> Observation:
    """An answer's compared parts, and what the echo backend that gave it says arrived."""
    out = Observation(seconds=answer.seconds)
    if answer.status is None:
        out.error = answer.error or ""
        return out
    out.status = answer.status
    out.location = answer.header("Location")
    out.headers = {k.lower(): v for k, v in answer.headers if k.lower() not in _UNCOMPARED_RESPONSE}
    echo = _echo(answer.body)
    out.stand_in = echo is None and answer.status == 200 and answer.body.strip(_ASCII_SPACE) == STAND_IN_OWN_ANSWER
    if echo is not None:
        out.backend = "%s/%s" % (echo.get("namespace") or "", echo.get("service") or "")
        out.pod = str(echo.get("pod") or "")
        out.path = str(echo.get("path") or "")
        out.received = {str(k): ", ".join(v) if isinstance(v, list) else str(v)
                        for k, v in (echo.get("headers") or {}).items()}
        out.received["Host"] = str(echo.get("host") or "")
    return out


# Raw requests from this host; TLS unverified (the lab's certificates are self-signed: routing is under test).
HOST = HostTransport(validate_certs=False)


def send(address: Address, req: Request, timeout: float = TIMEOUT, transport: Transport = HOST) -> Observation:
    """The request (repeat times back to back on one connection; over TLS with the host as the server name when
    its scheme is https); with repeat > 1 the answer is the last one with the counts of every status and
    backend seen."""
    answers = [observe(a) for a in transport.repeat(request_of(req, address, timeout), max(1, req.repeat))]
    last = answers[-1]
    if req.repeat > 1:
        for a in answers:
            status = str(a.status) if a.status is not None else a.error
            last.statuses[status] = last.statuses.get(status, 0) + 1
            if a.backend:
                last.backends[a.backend] = last.backends.get(a.backend, 0) + 1
        last.seconds = round(sum(a.seconds for a in answers), 3)
    return last


Sender = Callable[[Address, Request], Observation]


def replay(planes: Sequence[tuple[str, Address, int]], corpus: Sequence[Request], workers: int = 16,
           sender: Sender = send) -> dict[str, list[list[Observation]]]:
    """Every request through every data plane: PLANES are (name, address, samples). Returns
    name -> one list of answers per request (one answer per sample). Bursts run last, one data
    plane at a time, so that their rate limits do not refuse the other requests."""
    results: dict[str, list[list[Observation]]] = {name: [[] for _request in corpus] for name, _a, _s in planes}
    bursts = [i for i, r in enumerate(corpus) if r.kind == "burst"]
    others = [i for i, r in enumerate(corpus) if r.kind != "burst"]

    def run(job: tuple[str, Address, int]) -> tuple[str, int, Observation]:
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
