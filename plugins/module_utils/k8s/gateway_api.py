# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Gateway API's own rules, the same for every implementation: which listeners of a Gateway a
route's parentRef selects, whether a listener's allowedRoutes admit the route, and whether their
hostnames meet, so whether the parent accepts the route and with which reason.

Read from sigs.k8s.io/gateway-api@v1.5.1 (standard channel; these types are the same in v1.6.1), apis/v1: gateway_types.go
(AllowedRoutes, RouteNamespaces, Listener.Hostname), shared_types.go (ParentReference: sectionName
and port must both match a listener; the Accepted reasons NoMatchingParent, NotAllowedByListeners,
NoMatchingListenerHostname). Objects are read as the API server stores them, with the CRDs'
defaults filled in here for objects that lack them (allowedRoutes {namespaces: {from: Same}}, a
parentRef's group gateway.networking.k8s.io and kind Gateway, a RouteGroupKind's group the same).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of, selector_string, selects

Obj = dict[str, Any]

GROUP = "gateway.networking.k8s.io"
API_VERSION = GROUP + "/v1"

# The route kinds a listener admits when its allowedRoutes.kinds is empty: the spec leaves them to
# the listener's protocol.
KINDS_BY_PROTOCOL: dict[str, tuple[str, ...]] = {
    "HTTP": ("HTTPRoute", "GRPCRoute"), "HTTPS": ("HTTPRoute", "GRPCRoute"), "TLS": ("TLSRoute",),
    "TCP": ("TCPRoute",), "UDP": ("UDPRoute",),
}

# A route parent's Accepted condition reasons (shared_types.go RouteConditionReason).
ACCEPTED = "Accepted"
NO_MATCHING_PARENT = "NoMatchingParent"
NOT_ALLOWED_BY_LISTENERS = "NotAllowedByListeners"
NO_MATCHING_LISTENER_HOSTNAME = "NoMatchingListenerHostname"


def listeners(gateway: Obj) -> list[Obj]:
    return list((gateway.get("spec") or {}).get("listeners") or [])


def describe_listener(listener: Obj) -> str:
    return "listener %s (port %s, %s)" % (listener.get("name"), listener.get("port"), listener.get("protocol"))


def parent_gateway(route_namespace: str, parent_ref: Obj) -> str | None:
    """namespace/name of the Gateway a parentRef names (its namespace defaults to the route's),
    None when it names another kind of parent (a Service, for a mesh)."""
    if (parent_ref.get("group") or GROUP) != GROUP or (parent_ref.get("kind") or "Gateway") != "Gateway":
        return None
    return "%s/%s" % (parent_ref.get("namespace") or route_namespace, parent_ref.get("name"))


def selects_listener(parent_ref: Obj, listener: Obj) -> bool:
    """Whether a parentRef targets this listener: sectionName names it and port is its port, each
    only where set (a parentRef with neither targets every listener)."""
    section, port = parent_ref.get("sectionName"), parent_ref.get("port")
    return (not section or section == listener.get("name")) and (port is None or port == listener.get("port"))


def namespace_allowed(listener: Obj, gateway_namespace: str, route_namespace: str,
                      namespace_labels: Callable[[str], dict[str, str] | None]) -> tuple[bool, str]:
    """allowedRoutes.namespaces: Same (the default) admits the Gateway's namespace, All every one,
    Selector those whose labels its selector matches (a missing selector matches none)."""
    namespaces = ((listener.get("allowedRoutes") or {}).get("namespaces") or {})
    source = namespaces.get("from") or "Same"
    if source == "All":
        return True, "it allows routes from all namespaces"
    if source == "Same":
        if route_namespace == gateway_namespace:
            return True, "it allows routes from its own namespace"
        return False, "it allows routes only from its Gateway's namespace %s (from: Same)" % gateway_namespace
    if source == "Selector":
        selector = namespaces.get("selector")
        labels = namespace_labels(route_namespace)
        if selects(selector, labels, form="LabelSelector"):
            return True, "namespace %s matches its selector %s" % (route_namespace, selector_string(selector))
        return False, "it allows routes from namespaces matching %s, and %s %s" % (
            selector_string(selector) or "nothing (no selector)", route_namespace,
            "does not exist" if labels is None else "does not match")
    return False, "allowedRoutes.namespaces.from %r is not one the spec knows" % source


def kind_allowed(listener: Obj, route_kind: str, route_group: str = GROUP) -> tuple[bool, str]:
    """allowedRoutes.kinds, or with none listed the kinds of the listener's protocol."""
    kinds = (listener.get("allowedRoutes") or {}).get("kinds") or []
    if kinds:
        allowed = [(k.get("group") or GROUP, k.get("kind")) for k in kinds]
        if (route_group, route_kind) in allowed:
            return True, "it allows %s" % route_kind
        return False, "it allows only the kinds %s" % ", ".join(k for _g, k in allowed)
    by_protocol = KINDS_BY_PROTOCOL.get(str(listener.get("protocol")), ())
    if route_group == GROUP and route_kind in by_protocol:
        return True, "its protocol %s takes %s" % (listener.get("protocol"), route_kind)
    return False, "its protocol %s takes %s, not %s" % (listener.get("protocol"), ", ".join(by_protocol) or "no route kind",
                                                        route_kind)


def covers(wildcard: str, hostname: str) -> bool:
    """`*.example.com` covers any name under example.com, however many labels deep, not example.com itself."""
    return wildcard.startswith("*.") and hostname.endswith(wildcard[1:])


def hostnames_meet(listener_hostname: str | None, route_hostnames: list[str]) -> bool:
    """A listener without a hostname takes every route; a route without hostnames meets every
    listener; otherwise some pair is equal or one's wildcard covers the other."""
    if not listener_hostname or not route_hostnames:
        return True
    return any(h == listener_hostname or covers(listener_hostname, h) or covers(h, listener_hostname)
               for h in route_hostnames)


@dataclass
class Attachment:
    """What a parent Gateway answers a route for one parentRef: Accepted (with the listeners the
    route attaches to) or the reason it is not."""

    gateway: str
    accepted: bool
    reason: str
    listeners: list[str] = field(default_factory=list)
    why: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"gateway": self.gateway, "accepted": self.accepted, "reason": self.reason,
                "listeners": self.listeners, "why": self.why}


def attach(route_kind: str, route: Obj, parent_ref: Obj, gateway: Obj,
           namespace_labels: Callable[[str], dict[str, str] | None]) -> Attachment:
    """The spec's verdict for one parentRef of a route on its Gateway. Reasons, most specific first:
    no listener is targeted (NoMatchingParent), targeted listeners allow the route but none shares
    a hostname with it (NoMatchingListenerHostname), none allows it (NotAllowedByListeners)."""
    route_ns = str((route.get("metadata") or {}).get("namespace"))
    gateway_ns = str((gateway.get("metadata") or {}).get("namespace"))
    hostnames = list((route.get("spec") or {}).get("hostnames") or [])
    targeted = [ln for ln in listeners(gateway) if selects_listener(parent_ref, ln)]
    if not targeted:
        why = "no listener has %s" % _target(parent_ref) if _target(parent_ref) else "it has no listener"
        return Attachment(key_of(gateway), False, NO_MATCHING_PARENT, why=why)
    attached, refused, unmet = [], [], []
    for ln in targeted:
        ns_ok, ns_why = namespace_allowed(ln, gateway_ns, route_ns, namespace_labels)
        kind_ok, kind_why = kind_allowed(ln, route_kind)
        if not (ns_ok and kind_ok):
            refused.append("%s: %s" % (ln.get("name"), ns_why if not ns_ok else kind_why))
        elif not hostnames_meet(ln.get("hostname"), hostnames):
            unmet.append("%s: its hostname %s meets none of %s" % (ln.get("name"), ln.get("hostname"), ", ".join(hostnames)))
        else:
            attached.append(str(ln.get("name")))
    if attached:
        why = "listener%s %s" % ("s" if len(attached) > 1 else "", ", ".join(attached))
        return Attachment(key_of(gateway), True, ACCEPTED, attached, why)
    if unmet:
        return Attachment(key_of(gateway), False, NO_MATCHING_LISTENER_HOSTNAME, why="; ".join(unmet + refused))
    return Attachment(key_of(gateway), False, NOT_ALLOWED_BY_LISTENERS, why="; ".join(refused))


def _target(parent_ref: Obj) -> str:
    parts = []
    if parent_ref.get("sectionName"):
        parts.append("name %s" % parent_ref["sectionName"])
    if parent_ref.get("port") is not None:
        parts.append("port %s" % parent_ref["port"])
    return " and ".join(parts)


# ---------------------------------------------------------------- what a status says (verify/status/ watches it)


def condition_text(condition: Obj) -> str:
    """`Accepted=True`, or with a reason other than its type `Accepted=False (NotAllowedByListeners)`:
    the part of a condition a status change is about (its time, generation and message are not)."""
    kind, status, reason = condition.get("type"), condition.get("status"), condition.get("reason")
    text = "%s=%s" % (kind, status)
    return text if not reason or reason == kind else "%s (%s)" % (text, reason)


def gateway_status(gateway: Obj) -> tuple[list[str], list[str]]:
    """(status.addresses' values, the Gateway's conditions then each listener's, with its attachedRoutes)."""
    status = gateway.get("status") or {}
    addresses = [str(a.get("value")) for a in status.get("addresses") or [] if a.get("value")]
    conditions = [condition_text(c) for c in status.get("conditions") or []]
    for listener in status.get("listeners") or []:
        prefix = "listener %s: " % listener.get("name")
        conditions += [prefix + condition_text(c) for c in listener.get("conditions") or []]
        conditions.append(prefix + "attachedRoutes=%s" % listener.get("attachedRoutes", 0))
    return addresses, conditions


def parent_text(route_namespace: str, parent_ref: Obj) -> str:
    """A parentRef in words: `ns/gateway`, with `/section` and `:port` where it names them (another
    kind of parent: `Kind ns/name`)."""
    target = parent_gateway(route_namespace, parent_ref)
    if target is None:
        target = "%s %s/%s" % (parent_ref.get("kind"), parent_ref.get("namespace") or route_namespace, parent_ref.get("name"))
    if parent_ref.get("sectionName"):
        target += "/%s" % parent_ref["sectionName"]
    if parent_ref.get("port") is not None:
        target += ":%s" % parent_ref["port"]
    return target


def route_parents(route: Obj) -> dict[str, list[str]]:
    """Each status.parents entry of a route, `<parent> by <controllerName>` → its conditions: one
    entry per parent and controller, as the spec keys them."""
    namespace = str((route.get("metadata") or {}).get("namespace"))
    out = {}
    for entry in (route.get("status") or {}).get("parents") or []:
        label = "%s by %s" % (parent_text(namespace, entry.get("parentRef") or {}), entry.get("controllerName"))
        out[label] = [condition_text(c) for c in entry.get("conditions") or []]
    return out


def named_parents(route: Obj) -> list[str]:
    """The parents a route's spec names (parent_text of each parentRef)."""
    namespace = str((route.get("metadata") or {}).get("namespace"))
    return [parent_text(namespace, ref) for ref in (route.get("spec") or {}).get("parentRefs") or []]
