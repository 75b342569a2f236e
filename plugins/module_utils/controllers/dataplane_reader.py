# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every controller type's data-plane reader shares: how it reaches into one pod
(PodAccess), what it read (Reading: backend name → the upstreams it routes to), and how a
type names an Ingress backend in its data plane (BackendKey → names). Each type fills a
DataPlaneReader in its own package (ingress_nginx/dataplane.py, traefik/dataplane.py);
verify/dataplane.py compares the readings with the EndpointSlices."""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.errors import ControllerError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.podaccess import ExecResult
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer

Obj = dict[str, Any]


class DataPlaneError(ControllerError):
    """A data plane answered with something other than the shape its reader expects; the
    message names the field and what was expected."""


class PodAccess(Protocol):
    """One pod, as a reader may reach into it: an exec in one of its containers, a GET on one
    of its ports through the API server's pod proxy."""

    def exec(self, container: str, command: list[str]) -> ExecResult: ...

    def get(self, port: int, path: str, query: tuple[tuple[str, str], ...] = ()) -> Answer: ...


@dataclass(frozen=True)
class Upstream:
    """One address:port a data plane routes a backend to. `fenced`: kept only for the
    connections it already has (Traefik's terminating-but-serving endpoints)."""

    address: str
    port: str
    fenced: bool = False

    @property
    def target(self) -> str:
        return target(self.address, self.port)


def target(address: str, port: Any) -> str:
    """address:port, an IPv6 address in brackets."""
    return ("[%s]:%s" if ":" in address else "%s:%s") % (address, port)


@dataclass(frozen=True)
class Reading:
    """What one pod's data plane routes to, by the type's own backend names. When it could not
    be read, `unread` says why and `fix` how to make it readable; `backends` is then empty."""

    source: str
    backends: Mapping[str, tuple[Upstream, ...]] = field(default_factory=dict)
    unread: str = ""
    fix: str = ""


@dataclass(frozen=True)
class BackendKey:
    """One Service backend of an Ingress, as a type needs it to find the backend's name."""

    namespace: str
    ingress: str
    service: str
    port: int | str  # the Ingress's port: number or name, as written
    default_backend: bool = False  # spec.defaultBackend rather than a path
    ingress_has_rules: bool = True


@dataclass(frozen=True)
class Canary:
    """A backend a data plane sends some of a route's requests to instead of its own, and what chooses it, in its own
    account (ingress-nginx's trafficShapingPolicy): the header (its value or pattern), else the cookie, else the weight."""

    backend: str  # its name in the data plane (ingress-nginx: the upstream name)
    port: str  # the Ingress's port that ends that name: number or name, as written
    header: str = ""
    header_value: str = ""
    header_pattern: str = ""
    cookie: str = ""
    weight: int = 0
    weight_total: int = 100

    @property
    def said(self) -> str:
        steps = ["header %s%s" % (self.header, " = %s" % self.header_value if self.header_value else
                                  " ~ %s" % self.header_pattern if self.header_pattern else "")] if self.header else []
        steps += ["cookie %s" % self.cookie] if self.cookie else []
        steps.append("weight %s of %s" % (self.weight, self.weight_total))
        return "%s (port %s) by %s" % (self.backend, self.port, ", ".join(steps))


@dataclass(frozen=True)
class Router:
    """One route a data plane says it built, in its own words: its name and rule, its priority, whether it serves
    (`status`: enabled, or disabled with the `errors` that stopped it), and the service it sends to."""

    name: str
    rule: str
    priority: int = 0
    status: str = "enabled"
    errors: tuple[str, ...] = ()
    service: str = ""
    # Where a type's account says more: the host names it serves (a server's names), the Ingress it was made from
    # (namespace/name), and the settings that shape the answer (directive or option, value), in its own words.
    hosts: tuple[str, ...] = ()
    ingress: str = ""
    settings: tuple[tuple[str, str], ...] = ()
    tls: bool = False  # served on the HTTPS entry point only
    canaries: tuple[Canary, ...] = ()  # the backends its requests may go to instead of its service's
    entry_points: tuple[str, ...] = ()  # the entry points it serves, where its type names them (Traefik's)

    @property
    def refused(self) -> bool:
        return self.status != "enabled"

    def takes(self, scheme: str) -> bool:
        """Whether it can take a request of SCHEME (http or https). Where its type names its entry points (Traefik's),
        a router with TLS takes only TLS connections and one without only plain ones (v3.7.13 GetRoutersByEntryPoints,
        the HTTPS entry point's TLS given to its routers by applyModel); elsewhere either."""
        return not self.entry_points or self.tls == (scheme == "https")


@dataclass(frozen=True)
class DataPlaneReader:
    """A type's data-plane reader.

    read: (pod access, the pod, the controller's container in the workload's template) →
    Reading; never raises for what a cluster may refuse (RBAC, API off): it returns an unread
    Reading. names: (the controller's settings, backend) → (the names its data plane may store
    the backend under, why none when it does not route that backend at all). routers (a type
    whose data plane lists what it built): the same access → (its routers, why unread or ""); take and describe
    then read them as the data plane does."""

    read: Callable[[PodAccess, Obj, Obj], Reading]
    names: Callable[[Mapping[str, Any], BackendKey], "tuple[tuple[str, ...], str]"]
    routers: "Callable[[PodAccess, Obj, Obj], tuple[tuple[Router, ...], str]] | None" = None
    # (its routers, scheme, host, request target, method, headers) → the one that takes that request, as the data plane
    # chooses; and one line that says a router in its own words.
    take: Callable[[Sequence[Router], str, str, str, str, Sequence[tuple[str, str]]], Router | None] | None = None
    describe: Callable[[Router], str] | None = None


def clean_path(path: str) -> str:
    """PATH as nginx and Traefik match it (nginx's normalised $uri, Traefik's sanitizePath): slashes merged, dot
    segments resolved, a trailing slash kept; no query."""
    merged = re.sub(r"/{2,}", "/", path or "/")
    clean = posixpath.normpath(merged)
    clean = "/" if clean in (".", "//") else clean
    return clean + "/" if merged.endswith("/") and clean != "/" else clean


def compile_regex(pattern: str, flags: int = 0) -> "re.Pattern[str]":
    """PATTERN as nginx's PCRE or Traefik's Go regexp writes it, compiled by Python's re: a named group `(?<name>`
    is read as Python's `(?P<name>` (Go's `(?P<name>` is Python's already). re.error when Python cannot read it."""
    return re.compile(re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", pattern), flags)
