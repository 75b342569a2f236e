# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One HTTP request and its answer, whichever transport carries it (host.py from this host, node.py from
inside a kind node container) and whoever sends it (http_probe, once or on a schedule, the rehearsal's
replay, the data-plane readers' GETs through the API server's pod proxy). Nothing here knows about
Ingresses, probes or data planes."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from ansible_collections.kindlab.ingress.plugins.module_utils.transport.connect_to import ConnectTo, Peer, peer


@dataclass(frozen=True)
class Request:
    """METHOD URL with a Host header. The URL is kept as the caller wrote it (a client is given it, a curl
    line shows it); `address` and `port` are its host and port as the caller reads them, dialled unless one
    of `connect_to` maps them (curl's --connect-to); `target` is what the request line carries.

    `raw`: sent as written, as a test of a data plane needs it: the target byte for byte (no normalising of
    `..` or `//`), no header but the Host and `headers`, no redirect followed; over TLS the URL's host is the
    server name, whatever address is dialled. Otherwise a client sends it as it sends any request (on this
    host, Ansible's open_url: its own headers, .netrc, gzip, certificate checks as the transport is told)."""
    method: str
    url: str
    address: str
    port: int
    host: str
    target: str = "/"
    headers: tuple[tuple[str, str], ...] = ()  # more request headers, in order
    body: bytes | None = None
    timeout: float = 10.0  # seconds
    connect_to: tuple[ConnectTo, ...] = ()
    raw: bool = False

    @property
    def tls(self) -> bool:
        return self.url.startswith("https:")

    @property
    def peer(self) -> Peer:
        """Where this request is dialled."""
        return peer(self.connect_to, self.address, self.port)


@dataclass
class Answer:
    """What came back: the status and body (text, UTF-8 with replacement), the response headers in the order
    they came; or no status and the error that stopped the request. `fatal`: retrying cannot help (no node
    container to exec into). `seconds`: how long the exchange took, where the transport measures it."""
    status: int | None = None
    body: str = ""
    error: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    fatal: bool = False
    seconds: float = field(default=0.0, compare=False)

    def header(self, name: str, default: str = "") -> str:
        """Every value of the header NAME (any case) joined by ", ", as http.client's getheader joins them;
        DEFAULT when it did not come."""
        values = [v for k, v in self.headers if k.lower() == name.lower()]
        return ", ".join(values) if values else default


class Transport(Protocol):
    """How requests leave: `send` one; `repeat` the same request COPIES times back to back (on one
    connection where the transport keeps one), every answer in order."""

    def send(self, request: Request) -> Answer: ...

    def repeat(self, request: Request, copies: int) -> list[Answer]: ...
