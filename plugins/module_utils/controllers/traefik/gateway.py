# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traefik v3.7's Gateway API provider (`kubernetesgateway`), read from a running workload's args:
whether it is on, which GatewayClasses it claims, which namespaces it watches, what it writes in a
Gateway's status.addresses, and which listener ports its entry points serve.

Read from traefik v3.7.9's source (the newest v3.7 tag the module mirror holds; v3.7.13 measured
the same by a probe of its release binary), pkg/provider/kubernetes/gateway/:
- kubernetes.go:40: the controller name is fixed, traefik.io/gateway-controller; 351-378: every
  GatewayClass with it is claimed and its status written, 379-385 and 411-443: so is every Gateway
  of those classes in a watched namespace.
- client.go:147-157: `labelSelector` is applied to the GatewayClass informer only (Gateways, routes
  and Services are listed unfiltered), so it narrows which classes an install claims: the fix for two
  installs writing one Gateway (traefik#13743), each selecting a label of its own class.
- client.go:132-141, 416-418: `namespaces` limits Gateways, routes and Services (all namespaces when
  empty); getting a Service outside them fails.
- kubernetes.go:754-799 gatewayAddresses: statusAddress.ip, else .hostname, else the
  status.loadBalancer of Service .service.namespace/.service.name (an IP or hostname per entry);
  no statusAddress at all: no address. Any other error (a Service it cannot get, a name without a
  namespace) ends the sync at kubernetes.go:330-334, before any status write or route: Gateways
  stay Pending with no address, and nothing of theirs is served.
- kubernetes.go:468-481, 802-818 entryPointName: a listener lands on the entry point whose address
  ends with :<port> (HTTP listeners skip entry points with http.tls); without one it is Accepted
  False, PortUnavailable, and its routes serve nothing (httproute.go:86 needs listener.Attached).
- httproute.go loadHTTPRoute: a router's priority is its match's (buildMatchRule) plus its rule's
  place in its route, nothing of the route's age or name, so matches of two routes that tie on every
  criterion become routers of one priority, ordered by pkg/muxer/http's unstable sort after a map
  range: not Gateway API's older-route winner (measured on kind, gateway-route-conflict: team-b's
  younger route answered in one install of two).
- pkg/config/static/static_config.go:295-314, 342-353: the entry points it sees are the configured
  ones, else `http` on :80, plus `traefik` on :8080 when the API, ping or Prometheus use it.
Status writes carry the field manager `traefik` (client.go sets no user agent, so client-go's default
names the binary; the probe saw the same), come from every replica (no leader election), on every
change it sees, and log no line each.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import (
    ClusterState,
    GatewayController,
    container_argv,
    meta,
    watch_scope,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.chart import parse_args
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import GATEWAY, GATEWAY_CONTROLLER_NAME
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import label_selector_matches
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of

Obj = dict[str, Any]

CONTROLLER_NAME = GATEWAY_CONTROLLER_NAME
ON_ROUTE_TIE = ("Traefik does not apply that tie-break: both become routers of the same priority (the match's), and "
                "which one answers follows an unstable sort, so it can be either route and change at any reload")
FIELD_MANAGER = "traefik"
INSTANCE_LABEL = "app.kubernetes.io/instance"  # the chart puts it on its pods and on its GatewayClass
_STATUS = GATEWAY + ".statusaddress."


def switched_on(flags: dict[str, str], name: str) -> bool:
    """paerser's rule for a section that may stand alone (label allowEmpty), such as a provider:
    on when named alone or with `=true`, or when any option under it is set; `=false` (any value
    but true) turns it off whatever is set under it."""
    if name in flags:
        return flags[name].lower() == "true"
    return any(k.startswith(name + ".") for k in flags)


@dataclass(frozen=True)
class EntryPoint:
    name: str
    address: str  # as configured, e.g. ":8000/tcp"
    http_tls: bool  # http.tls set: HTTP listeners do not land here

    @property
    def host_port(self) -> str:
        return self.address.split("/", 1)[0]  # static EntryPoint.GetAddress

    def listens_on(self, port: Any) -> bool:
        return self.host_port.endswith(":%s" % port)

    def as_dict(self) -> dict[str, Any]:
        port = self.host_port.rpartition(":")[2]
        return {"name": self.name, "address": self.address, "port": int(port) if port.isdigit() else None,
                "http_tls": self.http_tls}

    def __str__(self) -> str:
        return "%s %s%s" % (self.name, self.host_port or "(no address)", " with http.tls" if self.http_tls else "")


def _internal_entry_point_used(flags: dict[str, str]) -> bool:
    """static_config.go:305-309: the API (insecure), ping or Prometheus on the `traefik` entry point."""
    def on_traefik(section: str) -> bool:
        return (switched_on(flags, section) and flags.get(section + ".manualrouting", "false") != "true"
                and flags.get(section + ".entrypoint", "traefik") == "traefik")

    return (flags.get("api.insecure") == "true" or flags.get("providers.rest.insecure") == "true"
            or on_traefik("ping") or on_traefik("metrics.prometheus"))


def entry_points(flags: dict[str, str]) -> list[EntryPoint]:
    names = sorted({k.split(".")[1] for k in flags if k.startswith("entrypoints.") and k.count(".") >= 2})
    eps = [EntryPoint(n, flags.get("entrypoints.%s.address" % n, ""), switched_on(flags, "entrypoints.%s.http.tls" % n))
           for n in names]
    if not eps:
        eps = [EntryPoint("http", ":80", False)]
    if "traefik" not in names and _internal_entry_point_used(flags):
        eps.append(EntryPoint("traefik", ":8080", False))
    return eps


def _serves(eps: list[EntryPoint], listener: Obj) -> tuple[str | None, str]:
    port, protocol = listener.get("port"), listener.get("protocol")
    on_port = [ep for ep in eps if ep.listens_on(port)]
    usable = [ep for ep in on_port if not (protocol == "HTTP" and ep.http_tls)]
    if usable:
        return usable[0].name, "entry point %s listens on port %s" % (usable[0], port)
    skipped = " (%s has http.tls, which an HTTP listener skips)" % ", ".join(ep.name for ep in on_port) if on_port else ""
    return None, "none of its entry points (%s) listens on port %s%s" % (", ".join(str(ep) for ep in eps), port, skipped)


def status_address(state: ClusterState, flags: dict[str, str], namespaces: list[str]) -> tuple[str, str, list[str] | None]:
    """(source, detail, what it writes in status.addresses); None: the sync stops before writing."""
    if not any(k.startswith(_STATUS) for k in flags):
        return "none", "no --%s*: it writes Gateways' status with no address" % _STATUS, []
    ip, hostname = flags.get(_STATUS + "ip", ""), flags.get(_STATUS + "hostname", "")
    if ip:
        return "ip", "--%sip=%s" % (_STATUS, ip), [ip]
    if hostname:
        return "hostname", "--%shostname=%s" % (_STATUS, hostname), [hostname]
    name, ns = flags.get(_STATUS + "service.name", ""), flags.get(_STATUS + "service.namespace", "")
    detail = "--%sservice.name=%s --%sservice.namespace=%s" % (_STATUS, name, _STATUS, ns)
    if not (name and ns):
        return "blocked", detail + ": a Service needs both (\"empty Gateway status address configuration\")", None
    if namespaces and ns not in namespaces:
        return "blocked", detail + ": the Service's namespace is outside its namespaces, so it cannot get it", None
    svc = state.service(ns, name)
    if svc is None:
        return "blocked", detail + ": the Service does not exist", None
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
    address = [str(i.get("ip") or i.get("hostname")) for i in ingress if i.get("ip") or i.get("hostname")]
    if not address:
        detail += " (type %s): its LoadBalancer has no address, so it writes none" % ((svc.get("spec") or {}).get("type") or "ClusterIP")
    return "service", detail, address


def analyse(state: ClusterState, workload: Obj, container: Obj, pods: list[Obj]) -> GatewayController | None:
    """Its Gateway provider as diagnose needs it, or None when the provider is off."""
    ns = str(meta(workload).get("namespace"))
    flags = parse_args(container_argv(container, ns))
    if not switched_on(flags, GATEWAY):
        return None
    selector = flags.get(GATEWAY + ".labelselector", "")
    namespaces = [n.strip() for n in flags.get(GATEWAY + ".namespaces", "").split(",") if n.strip()]
    watch, watches = watch_scope(state, namespaces, "")
    source, detail, address = status_address(state, flags, namespaces)
    eps = entry_points(flags)

    def claim_class(gateway_class: Obj) -> tuple[bool, str]:
        controller = (gateway_class.get("spec") or {}).get("controllerName")
        if controller != CONTROLLER_NAME:
            return False, "its controllerName %s is not %s" % (controller, CONTROLLER_NAME)
        if selector and not label_selector_matches(selector, dict(meta(gateway_class).get("labels") or {})):
            return False, "its labels do not match --%s.labelSelector=%s" % (GATEWAY, selector)
        if selector:
            return True, "the class has controllerName %s and labels matching its labelSelector %s" % (CONTROLLER_NAME, selector)
        return True, "the class has controllerName %s and it sets no labelSelector, so it claims every such class" % CONTROLLER_NAME

    # The chart labels its own GatewayClass as its pods: selecting that label leaves other installs' classes alone.
    template = (workload.get("spec") or {}).get("template") or {}
    instance = str(((template.get("metadata") or {}).get("labels") or {}).get(INSTANCE_LABEL) or "")
    own_key, own_value = (INSTANCE_LABEL, instance) if instance else ("traefik-install", ns)
    return GatewayController(
        type="traefik", namespace=ns, name=str(meta(workload).get("name")) + "@kubernetesgateway",
        pods=[key_of(p) for p in pods], controller_name=CONTROLLER_NAME, watch=watch,
        address_source=source, address_detail=detail, address=address, entry_points=[ep.as_dict() for ep in eps],
        settings={"provider": "kubernetesgateway", "label_selector": selector or None, "namespaces": namespaces,
                  "writes": "on every change it sees, every replica (no leader election)", "field_manager": FIELD_MANAGER},
        claim_class=claim_class, watches_namespace=watches, serves_listener=lambda listener: _serves(eps, listener),
        class_fix=("providers.kubernetesGateway.labelSelector: %s=%s, gatewayClass.name: <a class of its own>%s"
                   % (own_key, own_value, "" if instance else ", gatewayClass.labels: {%s: %s}" % (own_key, own_value)),
                   "--%s.labelSelector=%s=%s, with that label on its own GatewayClass" % (GATEWAY, own_key, own_value)),
        # Measured on kind (gateway-listener-port): a route whose only listener is PortUnavailable.
        route_reason_no_listener="NotAllowedByListeners",
        field_manager=FIELD_MANAGER,
        on_route_tie=ON_ROUTE_TIE,
        address_fix=("providers.kubernetesGateway.statusAddress.service: a LoadBalancer Service that exists in the namespaces "
                     "it watches (unset: its own, with service.enabled), or statusAddress.ip / statusAddress.hostname",
                     "--%sservice.name=<that Service> --%sservice.namespace=<its namespace>" % (_STATUS, _STATUS)),
    )
