# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The data planes of a rehearsal: the baseline and each target, and where each listens.

A data plane is named by one of the kinds in RESOLVERS: `namespace` (+ optional `service`), the
LoadBalancer Service of a controller installed there (Traefik's providers, ingress-nginx);
`gateway`, a Gateway (namespace/name) whose status address is its implementation's Service (a
Gateway API target, translated by gateway_translation or written by a team); or `address`, an
IP[:port] the caller knows. The replay and the comparison never see which kind a data plane was;
a Gateway's data plane also carries the translator's notes of it and of its HTTPRoutes.
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError, OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._names import is_dns1123_label, is_dns1123_subdomain
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.offline import (
    UNFAITHFUL_ANNOTATIONS,
    is_offline_image,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.replay import Address
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.routes import route_matches
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.route_precedence import Match
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.translate import notes_of
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import meta
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import DataPlaneReader, Router
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import detect
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.podaccess import ClientPodAccess
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import API_VERSION as GATEWAY_API_VERSION
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import parent_gateway
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of

Obj = dict[str, Any]
_HTTP_PORT_NAMES = ("http", "web")
ROUTERS_TIMEOUT = 10.0  # seconds for one page of a data plane's routers through the pod proxy
_TLS_PORT_NAMES = ("https", "websecure")


class DataPlaneError(OptionError):
    """A data plane is named wrongly, or the cluster has no such data plane; the message names the field."""


@dataclass(frozen=True)
class DataPlaneSpec:
    name: str
    where: str  # the option's path, for errors (baseline, targets[1])
    namespace: str = ""
    service: str = ""
    address: str = ""
    gateway: str = ""


@dataclass(frozen=True)
class DataPlane:
    name: str
    address: Address
    described: str  # "Service traefik/traefik at 100.64.0.2:80"
    unfaithful: tuple[tuple[str, str], ...] = ()  # (annotation, why) the data plane does not do as upstream
    # What a translator said of this data plane's configuration: (the hosts the note's object routes, () for all; the note)
    notes: tuple[tuple[tuple[str, ...], Obj], ...] = ()
    routes: tuple[Match, ...] | None = None  # a Gateway's: the matches of the HTTPRoutes attached to it
    # Who may answer for it (the proof of origin): the pods behind its Service, and the header their proxy names its
    # pod by ("" when its type adds none). No pods: not known (a data plane given by address).
    pods: frozenset[str] = frozenset()
    marker: str = ""
    # What the data plane says it built (its type's DataPlaneReader.routers, read once from one pod), or why not.
    routers: tuple[Router, ...] = ()
    routers_unread: str = ""
    reader: DataPlaneReader | None = None  # its type's reader: which router takes a request, in its words
    gateways: tuple[str, ...] = ()  # a Gateway's: it and the Gateways at its address (namespace/name), whose routes it serves


def parse(raw: Any, where: str) -> DataPlaneSpec:
    if not isinstance(raw, dict):
        raise DataPlaneError("%s: expected a mapping with name and namespace (or address), got %r" % (where, raw))
    unknown = sorted(set(raw) - {"name", "namespace", "service", "address", "gateway"})
    if unknown:
        raise DataPlaneError("%s: expected only the keys name, namespace, service, address, gateway, got %s" % (where, unknown))
    name = raw.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][-A-Za-z0-9_.]*", name):
        raise DataPlaneError("%s.name: expected a name (letters, digits, - _ .), got %r" % (where, name))
    kinds = [k for k in RESOLVERS if raw.get(k)]
    if len(kinds) != 1:
        raise DataPlaneError("%s: expected exactly one of %s, got %s" % (where, ", ".join(RESOLVERS), kinds or "none"))
    namespace, service, address = str(raw.get("namespace") or ""), str(raw.get("service") or ""), str(raw.get("address") or "")
    if namespace and not is_dns1123_label(namespace):
        raise DataPlaneError("%s.namespace: expected a namespace name, got %r" % (where, namespace))
    if service and not namespace:
        raise DataPlaneError("%s.service: expected beside namespace, got it alone" % where)
    if address:
        _address(address, where + ".address")
    gateway = str(raw.get("gateway") or "")
    if gateway:
        ns, _slash, gw_name = gateway.partition("/")
        if not (is_dns1123_label(ns) and is_dns1123_subdomain(gw_name)):
            raise DataPlaneError("%s.gateway: expected a Gateway as namespace/name, got %r" % (where, gateway))
    return DataPlaneSpec(name=name, where=where, namespace=namespace, service=service, address=address, gateway=gateway)


def parse_all(baseline: Any, targets: Any) -> tuple[DataPlaneSpec, list[DataPlaneSpec]]:
    base = parse(baseline, "baseline")
    if not isinstance(targets, list) or not targets:
        raise DataPlaneError("targets: expected a non-empty list of data planes (name and namespace, or address), got %r"
                             % (targets,))
    parsed = [parse(t, "targets[%d]" % i) for i, t in enumerate(targets)]
    names = [base.name] + [t.name for t in parsed]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        raise DataPlaneError("targets: expected names unique among the baseline and the targets, got %s twice" % dupes[0])
    return base, parsed


def _address(text: str, where: str) -> Address:
    host, _colon, port = text.partition(":") if text.count(":") == 1 else (text, "", "")
    try:
        ipaddress.ip_address(host)
    except ValueError:
        raise DataPlaneError("%s: expected an IP address with an optional :port, got %r" % (where, text)) from None
    if port and not (port.isdigit() and 0 < int(port) < 65536):
        raise DataPlaneError("%s: expected a port from 1 to 65535, got %r" % (where, port))
    return Address(ip=host, port=int(port) if port else 80)


def _port(service: Obj, names: tuple[str, ...], default: int) -> int:
    ports = (service.get("spec") or {}).get("ports") or []
    for p in ports:
        if p.get("name") in names:
            return int(p["port"])
    return default


def _by_address(_client: Any, spec: DataPlaneSpec) -> DataPlane:
    address = _address(spec.address, spec.where + ".address")
    return DataPlane(name=spec.name, address=address, described="%s:%d" % (address.ip, address.port))


def _lb_ips(service: Obj) -> list[str]:
    """The IPs MetalLB (or a cloud) gave a LoadBalancer Service, in its status."""
    return [str(i["ip"]) for i in ((service.get("status") or {}).get("loadBalancer") or {}).get("ingress") or [] if i.get("ip")]


def _by_service(client: Any, spec: DataPlaneSpec) -> DataPlane:
    services = client.list("v1", "Service", namespace=spec.namespace)
    if spec.service:
        chosen = [s for s in services if s["metadata"]["name"] == spec.service]
        if not chosen:
            raise KindlabError("%s.service: Service %s/%s does not exist" % (spec.where, spec.namespace, spec.service))
    else:
        chosen = [s for s in services if (s.get("spec") or {}).get("type") == "LoadBalancer"]
        if len(chosen) != 1:
            raise KindlabError("%s.namespace: expected exactly one LoadBalancer Service in namespace %s (the data "
                               "plane's), found %s: name it with %s.service"
                               % (spec.where, spec.namespace, [s["metadata"]["name"] for s in chosen] or "none",
                                  spec.where))
    svc = chosen[0]
    ips = _lb_ips(svc)
    if not ips:
        raise KindlabError("%s: Service %s/%s has no LoadBalancer address yet (MetalLB assigns one; is the pool "
                           "full?)" % (spec.where, spec.namespace, svc["metadata"]["name"]))
    address = Address(ip=ips[0], port=_port(svc, _HTTP_PORT_NAMES, 80), tls_port=_port(svc, _TLS_PORT_NAMES, 443))
    pods = _behind(client, svc)
    return DataPlane(name=spec.name, address=address, unfaithful=_unfaithful(pods), **_proxy(client, pods),
                     described="Service %s/%s at %s:%d" % (spec.namespace, svc["metadata"]["name"], address.ip, address.port))


def _behind(client: Any, service: Obj) -> list[Obj]:
    """The pods the Service selects (none for a Service without a selector)."""
    selector = (service.get("spec") or {}).get("selector") or {}
    if not selector:
        return []
    return list(client.list("v1", "Pod", namespace=service["metadata"]["namespace"],
                            label_selector=",".join("%s=%s" % kv for kv in sorted(selector.items()))))


def _unfaithful(pods: list[Obj]) -> tuple[tuple[str, str], ...]:
    """What the PODS (behind a data plane's Service) cannot do as upstream's do: the offline ingress-nginx image's gaps."""
    images = [c.get("image", "") for p in pods for c in (p.get("spec") or {}).get("containers") or []]
    if any(is_offline_image(i) for i in images):
        return tuple(sorted(UNFAITHFUL_ANNOTATIONS.items()))
    return ()


def _proxy(client: Any, pods: list[Obj]) -> Obj:
    """Who answers for a data plane whose Service selects PODS (DataPlane's pods, marker, routers, routers_unread): the
    controller type their container runs gives the header its proxy names its pod by, and, where its data plane
    lists what it built, the routers read from the first pod."""
    out: Obj = {"pods": frozenset(str(meta(p).get("name")) for p in pods)}
    for pod in pods:
        for container in (pod.get("spec") or {}).get("containers") or []:
            ctype = detect(container)
            if ctype is None:
                continue
            out["marker"] = ctype.proxy_marker
            out["reader"] = ctype.dataplane
            if ctype.dataplane.routers is not None:
                access = ClientPodAccess(client, str(meta(pod).get("namespace")), str(meta(pod).get("name")), ROUTERS_TIMEOUT)
                out["routers"], out["routers_unread"] = ctype.dataplane.routers(access, pod, container)
            return out
    return out


def _by_gateway(client: Any, spec: DataPlaneSpec) -> DataPlane:
    """A Gateway's data plane: the LoadBalancer Service whose address the Gateway's status gives (the
    implementation's own, as Traefik's statusAddress.service writes it), on that Service's HTTP port."""
    ns, _slash, name = spec.gateway.partition("/")
    gateway = client.get(GATEWAY_API_VERSION, "Gateway", name, ns)
    if gateway is None:
        raise KindlabError("%s.gateway: Gateway %s does not exist" % (spec.where, spec.gateway))
    addresses = [str(a.get("value")) for a in (gateway.get("status") or {}).get("addresses") or []
                 if a.get("value") and a.get("type", "IPAddress") == "IPAddress"]
    if not addresses:
        raise KindlabError("%s.gateway: Gateway %s has no IP address in its status yet (does a controller claim its "
                           "class %s?)" % (spec.where, spec.gateway, (gateway.get("spec") or {}).get("gatewayClassName")))
    services = [s for s in client.list("v1", "Service") if addresses[0] in _lb_ips(s)]
    port = _port(services[0], _HTTP_PORT_NAMES, 80) if services else 80
    # What answers at that address serves every Gateway there (a translation makes one per class): their routes all
    # take requests sent to it.
    beside = [g for g in client.list(GATEWAY_API_VERSION, "Gateway") if key_of(g) != spec.gateway
              and addresses[0] in [str(a.get("value")) for a in (g.get("status") or {}).get("addresses") or []]]
    served = {spec.gateway} | {key_of(g) for g in beside}
    routes = [r for r in client.list(GATEWAY_API_VERSION, "HTTPRoute")
              if any(parent_gateway(str(meta(r).get("namespace")), p) in served
                     for p in (r.get("spec") or {}).get("parentRefs") or [])]
    notes: list[tuple[tuple[str, ...], Obj]] = [((), n) for g in [gateway] + beside for n in notes_of(g)]
    notes += [(tuple(str(h) for h in (r.get("spec") or {}).get("hostnames") or []), n) for r in routes for n in notes_of(r)]
    behind = "Service %s" % key_of(services[0]) if services else "no Service found"
    also = " with %s at the same address" % ", ".join(sorted(key_of(g) for g in beside)) if beside else ""
    pods = _behind(client, services[0]) if services else []
    return DataPlane(name=spec.name, address=Address(ip=addresses[0], port=port), notes=tuple(notes), **_proxy(client, pods),
                     routes=tuple(route_matches(routes)), gateways=tuple(sorted(served)),
                     described="Gateway %s%s at %s:%d (%s)" % (spec.gateway, also, addresses[0], port, behind))


# How each kind of data plane is found: its spec key -> resolver.
RESOLVERS: dict[str, Callable[[Any, DataPlaneSpec], DataPlane]] = {
    "namespace": _by_service,
    "gateway": _by_gateway,
    "address": _by_address,
}


def resolve(client: Any, spec: DataPlaneSpec) -> DataPlane:
    for key, resolver in RESOLVERS.items():
        if getattr(spec, key):
            return resolver(client, spec)
    raise DataPlaneError("%s: expected one of %s" % (spec.where, ", ".join(RESOLVERS)))  # parse() prevents this
