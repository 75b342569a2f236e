# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""curl's --connect-to entries, HOST:PORT:CONNECT_HOST:CONNECT_PORT: a request whose URL names HOST:PORT is
sent to CONNECT_HOST:CONNECT_PORT instead, its URL and Host header unchanged. An empty HOST or PORT matches
any, an empty CONNECT_HOST or CONNECT_PORT keeps the original; an IPv6 host is written in brackets. This is
how the twin's loopback ports stand for lab addresses (`kindlab-twin get connect-to`), and how a request
that names a host in its URL reaches the address of a data plane."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConnectTo:
    """One entry; empty host/port match any, empty targets keep the original."""
    host: str
    port: str
    target_host: str
    target_port: str

    def applies(self, host: str, port: int) -> bool:
        return (not self.host or self.host.lower() == host.lower()) and (not self.port or int(self.port) == port)

    def entry(self) -> str:
        """The entry as curl takes it."""
        return "%s:%s:%s:%s" % (bracket(self.host) if self.host else "", self.port,
                                bracket(self.target_host) if self.target_host else "", self.target_port)


@dataclass(frozen=True)
class Peer:
    """Where a request is dialled: its URL's host and port, or an entry's (`mapped`)."""
    host: str
    port: int
    mapped: bool = False


def bracket(host: str) -> str:
    """An IPv6 address as a URL or an entry writes it."""
    return "[%s]" % host if ":" in host else host


def _take_host(text: str) -> tuple[str, str] | None:
    """Split a leading host (possibly empty, or an [IPv6] literal) off 'HOST:rest'."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0 or text[end + 1:end + 2] != ":":
            return None
        return text[1:end], text[end + 2:]
    host, sep, rest = text.partition(":")
    return (host, rest) if sep else None


def parse_entry(entry: str) -> ConnectTo | None:
    """One HOST:PORT:CONNECT_HOST:CONNECT_PORT entry, or None when it has not that shape (its ports are
    not checked here: the caller says which option was wrong)."""
    first = _take_host(entry)
    if first is None:
        return None
    port, sep, rest = first[1].partition(":")
    second = _take_host(rest) if sep else None
    if second is None or ":" in second[1]:
        return None
    return ConnectTo(first[0], port, second[0], second[1])


def peer(entries: tuple[ConnectTo, ...], host: str, port: int) -> Peer:
    """Where a request for HOST:PORT is dialled: the first entry that applies, as curl takes them."""
    for rule in entries:
        if rule.applies(host, port):
            return Peer(rule.target_host or host, int(rule.target_port) if rule.target_port else port, True)
    return Peer(host, port)
