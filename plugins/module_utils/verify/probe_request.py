# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One request of a probe: where it goes (a URL, or an Ingress's status address read again before each
request, the addresses used in turn as DNS round-robin would), and what its answer says (the expected
status and body, the backend that answered)."""
from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Tuple
from urllib.parse import urlsplit

from ansible_collections.kindlab.ingress.plugins.module_utils.transport.connect_to import bracket
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer, Request
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_options import ProbeError, ProbeSpec

Obj = dict[str, Any]

_NGINX_WELCOME = "<title>Welcome to nginx!</title>"


@dataclass(frozen=True)
class Target:
    """One request of the probe, and the address it names (the URL's host: the lab address, before
    connect_to), which the result records."""
    request: Request
    address: str

    @property
    def url(self) -> str:
        return self.request.url

    @property
    def host_header(self) -> str:
        return self.request.host


def first_rule_host(ingress: Obj) -> str | None:
    """The Ingress's first rule host: the name DNS would give clients of this Ingress. A
    wildcard host (*.example.com) becomes one name it matches, probe.example.com."""
    for rule in (ingress.get("spec") or {}).get("rules") or []:
        host = rule.get("host")
        if host:
            return "probe" + str(host)[1:] if str(host).startswith("*.") else str(host)
    return None


def build_target(spec: ProbeSpec, address: str | None, default_host: str | None) -> Target:
    """The request to send (its URL, Host header and the spec's connect_to entries) and the address it names."""
    if spec.url is not None:
        parts = urlsplit(spec.url)
        address = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
        url = spec.url
        netloc = parts.netloc.rpartition("@")[2]
        path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
    else:
        if address is None:
            raise ProbeError("ingress: no status address to probe")  # run_probe skips such attempts
        port = spec.port or (443 if spec.scheme == "https" else 80)
        default_port = port == (443 if spec.scheme == "https" else 80)
        netloc = bracket(address) + ("" if default_port else ":%d" % port)
        url = "%s://%s%s" % (spec.scheme, netloc, spec.path)
        path = spec.path
    request = Request(method=spec.method, url=url, address=address, port=port, host=spec.host or default_host or netloc,
                      target=path, timeout=spec.timeout, connect_to=tuple(spec.connect_to))
    return Target(request, address)


def backend_of(body: str, pattern: re.Pattern[str]) -> str:
    """Which backend answered: the regex's first group, 'nginx' for the welcome page."""
    match = pattern.search(body)
    if match and match.group(1):
        return match.group(1)
    if _NGINX_WELCOME in body:
        return "nginx"
    return "(unmatched)"


def distribution(backends: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for name in backends:
        out[name] = out.get(name, 0) + 1
    return out


def judge(spec: ProbeSpec, answer: Answer) -> str | None:
    """None when the answer is what was expected, else why not."""
    if answer.error is not None:
        return answer.error
    if answer.status not in spec.status:
        return "got %s (expected %s)" % (answer.status, " or ".join(str(s) for s in spec.status))
    if spec.body_regex is not None and not spec.body_regex.search(answer.body):
        return "got %s but the body does not match %r" % (answer.status, spec.body_regex.pattern)
    return None


# Evaluated at run time, so spelled with typing's names (the modules may run on older Pythons).
Lookup = Callable[[], Tuple[List[str], Optional[str]]]


def names_of(spec: ProbeSpec) -> str:
    return ", ".join("%s/%s" % ref for ref in spec.ingresses)


class Resolver:
    """The target of each request. With Ingresses, their status is read again every time and
    the addresses are used in turn, as a client resolving DNS built from that status would."""

    def __init__(self, spec: ProbeSpec, lookup: Lookup | None, clock: Callable[[], float] = time.monotonic,
                 max_age: float = 0.0) -> None:
        self.spec, self.lookup, self.count = spec, lookup, 0
        # Continuous mode reads the status at most every max_age seconds, and from several threads.
        self.clock, self.max_age = clock, max_age
        self.lock = threading.Lock()
        self.cached: tuple[list[str], str | None] | None = None
        self.read_at = 0.0

    def _read(self, lookup: Lookup) -> tuple[list[str], str | None]:
        if self.cached is None or self.max_age <= 0 or self.clock() - self.read_at >= self.max_age:
            self.cached, self.read_at = lookup(), self.clock()
        return self.cached

    def next(self) -> tuple[Target | None, str | None]:
        if not self.spec.ingresses or self.lookup is None:
            return build_target(self.spec, None, None), None
        with self.lock:
            addresses, default_host = self._read(self.lookup)
            if not addresses:
                return None, "no status address on Ingress %s" % names_of(self.spec)
            address = addresses[self.count % len(addresses)]
            self.count += 1
        return build_target(self.spec, address, default_host), None


def ingress_lookup(client: Any, refs: list[tuple[str, str]]) -> Lookup:
    """Read the Ingresses again at every request: their status addresses (in order, without
    repeats) and the first rule host among them."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.ingresses import status_addresses

    def lookup() -> tuple[list[str], str | None]:
        addresses: list[str] = []
        host: str | None = None
        for ns, name in refs:
            obj = client.get("networking.k8s.io/v1", "Ingress", name, ns)
            if obj is None:
                continue
            addresses += [a for a in status_addresses(obj) if a not in addresses]
            host = host or first_rule_host(obj)
        return addresses, host

    return lookup
