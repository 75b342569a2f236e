# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""http_probe's options, every one validated before a request is sent: url XOR ingress, counts, regexes,
connect_to (curl's entries), and the continuous window (rate, duration, max_failures)."""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.connect_to import ConnectTo, parse_entry

Obj = dict[str, Any]

# The echo images answer "pod: NAME\n…"; the nginx image answers its welcome page.
DEFAULT_BACKEND_REGEX = r"pod: (\S+)"
_METHOD = re.compile(r"^[A-Z]+$")
_PORT = re.compile(r"^[0-9]{1,5}$")
# Continuous probing: the highest rate accepted.
MAX_RATE = 200.0


class ProbeError(OptionError):
    """A probe option is invalid; the message names the option."""


@dataclass
class ProbeSpec:
    url: str | None
    ingresses: list[tuple[str, str]]  # empty with url
    scheme: str
    port: int | None
    host: str | None
    path: str
    method: str
    status: list[int]
    body_regex: re.Pattern[str] | None
    attempts: int
    interval: float
    timeout: float
    samples: int
    backend_regex: re.Pattern[str]
    connect_to: list[ConnectTo] = field(default_factory=list)
    # Dial only through connect_to: an address without an entry counts as refused. On the twin
    # nothing but the mapped loopback ports exists, and lab addresses must never be dialled.
    connect_to_only: bool = False
    # Continuous mode (rate set): requests per second for `duration` seconds; the probe passes
    # when at most `max_failures` of them fail.
    rate: float | None = None
    duration: float = 60.0
    max_failures: int = 0


def parse_connect_to(entries: Any) -> list[ConnectTo]:
    """curl's HOST:PORT:CONNECT_HOST:CONNECT_PORT (IPv6 hosts in brackets; empty parts allowed
    as curl allows them, but a port must be a number in 1-65535)."""
    if entries is None:
        return []
    if not isinstance(entries, list):
        raise ProbeError("connect_to: expected a list of HOST:PORT:TARGET_HOST:TARGET_PORT strings, got %r" % (entries,))
    out = []
    for i, entry in enumerate(entries):
        where = "connect_to[%d]" % i
        parsed = parse_entry(entry) if isinstance(entry, str) else None
        if parsed is None:
            raise ProbeError("%s: %r is not HOST:PORT:TARGET_HOST:TARGET_PORT (e.g. 100.64.0.0:80:127.0.0.1:40123)"
                             % (where, entry))
        for port in (parsed.port, parsed.target_port):
            if port and (not _PORT.match(port) or not 0 < int(port) < 65536):
                raise ProbeError("%s: %r: port %r is not a number in 1-65535" % (where, entry, port))
        out.append(parsed)
    return out


def _regex(value: Any, option: str, groups: bool = False) -> re.Pattern[str] | None:
    if value is None:
        return None
    try:
        pattern = re.compile(value)
    except (re.error, TypeError) as exc:
        raise ProbeError("%s: %r is not a valid Python regular expression: %s" % (option, value, exc)) from exc
    if groups and pattern.groups < 1:
        raise ProbeError("%s: %r needs a capturing group that names the answering backend, e.g. 'pod: (\\S+)'"
                         % (option, value))
    return pattern


def _ingress_ref(value: Any, where: str) -> tuple[str, str]:
    if isinstance(value, str) and value.count("/") == 1 and all(value.split("/")):
        ns, name = value.split("/")
        return ns, name
    if isinstance(value, dict) and isinstance(value.get("namespace"), str) and isinstance(value.get("name"), str):
        return value["namespace"], value["name"]
    raise ProbeError("%s: expected 'namespace/name' or a mapping with namespace and name, got %r" % (where, value))


def parse_ingresses(value: Any) -> list[tuple[str, str]]:
    """One Ingress, or a list of them whose addresses are used in turn (DNS round-robin)."""
    if value is None:
        return []
    if isinstance(value, list):
        if not value:
            raise ProbeError("ingress: expected at least one Ingress, got an empty list")
        return [_ingress_ref(item, "ingress[%d]" % i) for i, item in enumerate(value)]
    return [_ingress_ref(value, "ingress")]


def parse_spec(params: Obj) -> ProbeSpec:
    """Validate the module options (url XOR ingress, counts, regexes, connect_to)."""
    url, ingress = params.get("url"), params.get("ingress")
    if (url is None) == (ingress is None):
        raise ProbeError("url, ingress: give exactly one (a URL, or the Ingress whose status address to probe)")
    if url is not None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ProbeError("url: expected an http:// or https:// URL with a host, got %r" % url)
        try:
            _port = parts.port  # raises ValueError on a bad port
        except ValueError as exc:
            raise ProbeError("url: %r has an invalid port" % url) from exc
    path = params.get("path") or "/"
    if not path.startswith("/"):
        raise ProbeError("path: expected an absolute path starting with '/', got %r" % path)
    method = (params.get("method") or "GET").upper()
    if not _METHOD.match(method):
        raise ProbeError("method: expected an HTTP method such as GET, HEAD or POST, got %r" % params.get("method"))
    status = params.get("status") or [200]
    if not all(isinstance(s, int) and 100 <= s <= 599 for s in status):
        raise ProbeError("status: expected a list of HTTP status codes (100-599), got %r" % (status,))
    for option, minimum in (("attempts", 1), ("samples", 0)):
        if int(params.get(option, minimum)) < minimum:
            raise ProbeError("%s: expected a whole number >= %d, got %r" % (option, minimum, params.get(option)))
    for option in ("interval", "timeout"):
        if float(params.get(option, 1)) < 0 or (option == "timeout" and float(params.get(option, 1)) == 0):
            raise ProbeError("%s: expected a positive number of seconds, got %r" % (option, params.get(option)))
    port = params.get("port")
    if port is not None and not 0 < int(port) < 65536:
        raise ProbeError("port: expected a port number in 1-65535, got %r" % port)
    scheme = params.get("scheme") or "http"
    if scheme not in ("http", "https"):
        raise ProbeError("scheme: expected http or https, got %r" % scheme)
    host = params.get("host")
    if host is not None and (not host or any(c in host for c in " /\r\n")):
        raise ProbeError("host: expected a host name for the Host header (optionally host:port), got %r" % host)
    rate, duration, max_failures = parse_continuous(params)
    return ProbeSpec(
        url=url, ingresses=parse_ingresses(ingress), scheme=scheme, port=port,
        host=host, path=path, method=method, status=list(status),
        body_regex=_regex(params.get("body_regex"), "body_regex"),
        attempts=int(params.get("attempts", 1)), interval=float(params.get("interval", 1)),
        timeout=float(params.get("timeout", 10)), samples=int(params.get("samples", 1)),
        backend_regex=_regex(params.get("backend_regex") or DEFAULT_BACKEND_REGEX, "backend_regex", groups=True)
        or re.compile(DEFAULT_BACKEND_REGEX),
        connect_to=parse_connect_to(params.get("connect_to")),
        connect_to_only=bool(params.get("connect_to_only", False)),
        rate=rate, duration=duration, max_failures=max_failures,
    )


def _number(params: Obj, option: str, default: float) -> float:
    value = params.get(option)
    if value is None:
        return default
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ProbeError("%s: expected a number, got %r" % (option, value)) from None
    if not math.isfinite(number):
        raise ProbeError("%s: expected a finite number, got %r" % (option, value))
    return number


def parse_continuous(params: Obj) -> tuple[float | None, float, int]:
    """rate (requests/s, 0 < rate <= MAX_RATE), duration (s) and max_failures; duration and
    max_failures only with rate, and attempts/samples above 1 not with it (the window starts
    at once and every request in it is a sample)."""
    given = {k for k in ("duration", "max_failures") if params.get(k) is not None}
    if params.get("rate") is None:
        if given:
            raise ProbeError("%s: only with rate (continuous probing); without rate the probe makes attempts, "
                             "then samples" % ", ".join(sorted(given)))
        return None, 60.0, 0
    rate = _number(params, "rate", 0)
    if not 0 < rate <= MAX_RATE:
        raise ProbeError("rate: expected requests per second above 0 and at most %g, got %r" % (MAX_RATE, params.get("rate")))
    duration = _number(params, "duration", 60.0)
    if not 0 < duration <= 24 * 3600:
        raise ProbeError("duration: expected seconds above 0 (at most a day), got %r" % params.get("duration"))
    if duration * rate < 1:
        raise ProbeError("duration: %g s at rate %g/s sends no request; expected at least 1 / rate = %g s"
                         % (duration, rate, 1 / rate))
    failures = _number(params, "max_failures", 0)
    if failures < 0 or failures != int(failures):
        raise ProbeError("max_failures: expected a whole number >= 0, got %r" % params.get("max_failures"))
    for option in ("attempts", "samples"):
        if int(params.get(option) or 1) > 1:
            raise ProbeError("%s: not used with rate: the continuous window starts at once and every request in it is a "
                             "sample (set duration and max_failures instead), got %r" % (option, params.get(option)))
    return rate, duration, int(failures)
