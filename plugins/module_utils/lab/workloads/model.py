# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A lab's test workloads as data: the types a workload spec is parsed into (Workload, its Service
ports, Ingresses, HTTPRoutes and rollout), the values their fields may take, and WorkloadError."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError

Obj = dict[str, Any]

PATH_TYPES = ("Prefix", "Exact", "ImplementationSpecific")
# What a workload's pods run: `web`, its image's own server (the nginx welcome page by default), or
# `echo`, the Gateway API conformance echo server, which answers every request with JSON naming the
# path, host, method and headers that arrived and its namespace, Service and pod (the migration
# rehearsal reads them).
APPS = ("web", "echo")


# The keys of a workload spec (the lab_workload module's suboptions of workloads).
WORKLOAD_KEYS = frozenset({"name", "namespace", "app", "image", "replicas", "port", "ports", "labels", "ingress", "rollout",
                           "httproute"})


class WorkloadError(OptionError):
    """A workload spec is invalid; the message names the field."""


@dataclass
class IngressPath:
    path: str
    path_type: str
    # An Ingress path's backend (HTTPRoute paths have none): a workload's Service in the same
    # namespace (None: the workload's own) and its port by number or name (None: that Service's first).
    service: str | None = None
    port: int | str | None = None


@dataclass
class IngressRule:
    host: str | None
    paths: list[IngressPath]


@dataclass
class ServicePort:
    name: str | None  # None only for a Service's single port
    port: int


# A workload's Service without `ports`: port 80, named http.
DEFAULT_PORTS = (ServicePort("http", 80),)


@dataclass
class IngressSpec:
    name: str
    ingress_class: str | None
    rules: list[IngressRule]
    annotations: dict[str, str] = field(default_factory=dict)
    # spec.tls: the hosts of each entry, with a self-signed certificate the lab generates once per entry
    tls: list[list[str]] = field(default_factory=list)
    default_backend: IngressPath | None = None  # spec.defaultBackend (its path and path_type unused)
    short_form: bool = False  # written as host and paths (error messages name the fields as written)

    @property
    def host(self) -> str | None:
        """The first rule's host (the short form's only one)."""
        return self.rules[0].host if self.rules else None

    @property
    def paths(self) -> list[IngressPath]:
        """Every rule's paths."""
        return [p for rule in self.rules for p in rule.paths]

    def tls_secret(self, index: int = 0) -> str:
        return self.name + "-tls" + ("-%d" % index if index else "")

    def backends(self) -> list[tuple[str, IngressPath]]:
        """(where it is written, relative to the Ingress, e.g. `.rules[1].paths[0]`; the path) of each backend."""
        out = [((".paths[%d]" % j) if self.short_form else (".rules[%d].paths[%d]" % (i, j)), p)
               for i, rule in enumerate(self.rules) for j, p in enumerate(rule.paths)]
        return out + ([(".default_backend", self.default_backend)] if self.default_backend else [])


ROUTE_PATH_TYPES = ("PathPrefix", "Exact")


@dataclass
class ParentRef:
    namespace: str
    name: str  # the Gateway's
    section_name: str | None = None  # a listener's name; None: every listener

    @property
    def gateway(self) -> str:
        return "%s/%s" % (self.namespace, self.name)


@dataclass
class BackendRef:
    name: str  # a Service in the route's namespace
    port: int
    weight: int | None = None  # None: Gateway API's default (1)


# The HTTPRoute filters a lab route may carry, as Gateway API writes them: each type's own field.
ROUTE_FILTERS = {"RequestHeaderModifier": "requestHeaderModifier", "ResponseHeaderModifier": "responseHeaderModifier",
                 "RequestRedirect": "requestRedirect", "URLRewrite": "urlRewrite"}
ROUTE_METHODS = ("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH")


@dataclass
class RouteMatch:
    path: IngressPath  # path_type PathPrefix or Exact
    headers: dict[str, str] = field(default_factory=dict)  # Exact matches, name → value
    query_params: dict[str, str] = field(default_factory=dict)  # Exact matches
    method: str | None = None


@dataclass
class RouteRule:
    matches: list[RouteMatch]
    backend_refs: list[BackendRef]  # [] only in a rule written whole (a redirect, or Gateway API's 500)
    filters: list[Obj] = field(default_factory=list)  # Gateway API's own filter objects (ROUTE_FILTERS)


@dataclass
class HTTPRouteSpec:
    name: str
    parent_refs: list[ParentRef]
    hostnames: list[str]
    rules: list[RouteRule]
    short_form: bool = True  # written as paths and backend_refs (one rule of path matches)

    @property
    def paths(self) -> list[IngressPath]:
        return [m.path for m in self.rules[0].matches]

    @property
    def backend_refs(self) -> list[BackendRef]:
        return self.rules[0].backend_refs


@dataclass
class Rollout:
    """What a graceful rolling update needs from the pod: a readiness probe (without one a new pod
    is an endpoint before it listens), a preStop delay (the old pod keeps serving while every
    controller drops it from its endpoints) and a grace period longer than that delay."""
    readiness_probe: bool = True
    pre_stop_sleep: int = 0
    grace_period: int | None = None  # None: Kubernetes' default (30 s)


@dataclass
class Workload:
    name: str
    namespace: str
    image: str
    replicas: int
    port: int
    labels: dict[str, str]
    ingresses: list[IngressSpec]
    rollout: Rollout = field(default_factory=Rollout)
    httproutes: list[HTTPRouteSpec] = field(default_factory=list)
    app: str = "web"  # one of APPS
    ports: list[ServicePort] = field(default_factory=lambda: list(DEFAULT_PORTS))

    @property
    def ingress(self) -> IngressSpec | None:
        """The first Ingress (the short form's only one)."""
        return self.ingresses[0] if self.ingresses else None

    def port_ref(self, port: int | str | None) -> int | str:
        """How an Ingress names this workload's Service port PORT (None: the first): by name where it has one."""
        if port is not None:
            return port
        first = self.ports[0]
        return first.name if first.name else first.port
