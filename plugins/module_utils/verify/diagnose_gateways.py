# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Diagnose for Gateway API: from the Gateway controllers found in the cluster (each type's own
reading, ControllerType.gateway) and the GatewayClasses, Gateways and HTTPRoutes, predict who
claims each class and who writes each Gateway's status with what address, and flag what will go
wrong before it shows: two writers on one Gateway (its address alternates, traefik#13743), a
listener no entry point serves (PortUnavailable, its routes dark), a route its parent does not
accept (the spec's rules, k8s/gateway_api.py), a route in a namespace its Gateway's controller
does not watch, and a route status entry written by a controller that does not own the parent
(gateway-api#3846). Pure over a ClusterState snapshot, like the Ingress half in diagnose.py.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ClusterState, GatewayController, meta
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import gateway_api as spec
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.findings import ERROR, INFO, WARNING, Finding, addresses_text, culprits_of, fix_of

Obj = dict[str, Any]

ROUTE_KIND = "HTTPRoute"


@dataclass
class GatewaySide:
    """One Gateway as the controllers will treat it."""

    gateway: Obj
    class_name: str
    gateway_class: Obj | None
    claimers: list[GatewayController]  # claim its class and watch its namespace
    passed_over: list[str] = field(default_factory=list)  # why each other controller leaves it alone

    @property
    def key(self) -> str:
        return key_of(self.gateway)

    @property
    def namespace(self) -> str:
        return str(meta(self.gateway).get("namespace"))

    @property
    def writers(self) -> list[GatewayController]:
        """Those that write its status: a claimer whose sync stops writes nothing."""
        return [c for c in self.claimers if c.address is not None]

    def served(self, writer: GatewayController) -> dict[str, str | None]:
        """Listener name → the writer's entry point serving it, or None."""
        return {str(ln.get("name")): writer.serves_listener(ln)[0] for ln in spec.listeners(self.gateway)}

    def status_by(self, writer: GatewayController) -> tuple[tuple[str, ...], tuple[tuple[str, bool], ...]]:
        """What the writer puts in its status: the addresses, and which listeners it accepts."""
        return tuple(writer.address or []), tuple(sorted((n, ep is not None) for n, ep in self.served(writer).items()))

    @property
    def flapping(self) -> bool:
        return len({self.status_by(w) for w in self.writers}) > 1


def sides_of(state: ClusterState, controllers: list[GatewayController]) -> dict[str, GatewaySide]:
    classes = {str(meta(gc).get("name")): gc for gc in state.gateway_classes}
    out = {}
    for gw in sorted(state.gateways, key=key_of):
        class_name = str((gw.get("spec") or {}).get("gatewayClassName") or "")
        gc = classes.get(class_name)
        side = GatewaySide(gw, class_name, gc, [])
        for c in controllers:
            claims, why = c.claim_class(gc) if gc is not None else (False, "")
            if claims and c.watches_namespace(side.namespace):
                side.claimers.append(c)
            elif claims:
                side.passed_over.append("%s claims its class but watches %s" % (c.ref, c.watch))
            elif gc is not None:
                side.passed_over.append("%s: %s" % (c.ref, why))
        out[side.key] = side
    return out


def _class_findings(state: ClusterState, controllers: list[GatewayController]) -> tuple[dict[str, Any], list[Finding]]:
    out: dict[str, Any] = {}
    findings = []
    for gc in sorted(state.gateway_classes, key=lambda o: str(meta(o).get("name"))):
        name = str(meta(gc).get("name"))
        controller_name = (gc.get("spec") or {}).get("controllerName")
        claimed = [(c, why) for c in controllers for ok, why in [c.claim_class(gc)] if ok]
        out[name] = {"controller_name": controller_name,
                     "claimed_by": [{"controller": c.ref, "why": why} for c, why in claimed]}
        if claimed:
            findings.append(Finding("gateway_class_claimed", INFO, "GatewayClass %s (controllerName %s) is claimed by %s" % (
                name, controller_name, "; ".join("%s (%s)" % (c.ref, why) for c, why in claimed)),
                controllers=[c.ref for c, _why in claimed]))
    return out, findings


def _blocked_findings(sides: dict[str, GatewaySide], controllers: list[GatewayController]) -> list[Finding]:
    out = []
    for c in controllers:
        if c.address is not None:
            continue
        claimed = [s.key for s in sides.values() if c in s.claimers]
        out.append(Finding(
            "gateway_status_blocked", ERROR,
            "controller %s stops its Gateway sync before writing anything (%s): the GatewayClasses and Gateways it claims "
            "(%s) stay Pending with no address, and none of their routes is served" % (
                c.ref, c.address_detail, ", ".join(claimed) or "none now"),
            controllers=[c.ref], fix=fix_of([(c.ref, c.address_fix)])))
    return out


def _gateway_findings(side: GatewaySide) -> list[Finding]:
    key, writers = side.key, side.writers
    if side.gateway_class is None:
        return [Finding("gateway_unclaimed", WARNING, "%s: its GatewayClass %s does not exist, so no controller writes its "
                        "status or serves it" % (key, side.class_name or "(none)"), gateway=key)]
    if not side.claimers:
        return [Finding("gateway_unclaimed", WARNING, "%s: no controller found in the cluster claims it (class %s, "
                        "controllerName %s): %s" % (key, side.class_name, (side.gateway_class.get("spec") or {}).get("controllerName"),
                                                    "; ".join(side.passed_over) or "no Gateway controller found"), gateway=key)]
    if len(writers) == 1:
        w = writers[0]
        if w.address:
            return [Finding("gateway_address", INFO, "%s: %s writes its status with the address %s (%s)" % (
                key, w.ref, addresses_text(w.address), w.address_detail), gateway=key, controllers=[w.ref])]
        return [Finding("gateway_no_address", WARNING, "%s: its writer %s writes no address (%s)" % (key, w.ref, w.address_detail),
                        gateway=key, controllers=[w.ref], fix=fix_of([(w.ref, w.address_fix)]))]
    if not writers:
        return []  # its claimers' syncs stop: _blocked_findings says so
    addresses = {tuple(w.address or []) for w in writers}
    culprits = culprits_of(side.namespace, writers)
    what = ("different addresses" if len(addresses) > 1 else
            "the same address but different listener conditions (their entry points differ)" if side.flapping else
            "the same status (nothing alternates until one of them changes)")
    return [Finding(
        "gateway_multiple_writers", ERROR if side.flapping else WARNING,
        "%s: %d controllers claim its class %s and write its status, with %s: %s. Each overwrites the other's at every "
        "sync, and the same goes for its routes' status.parents entries (as in traefik#13743). Culprit: %s. %s" % (
            key, len(writers), side.class_name, what, ", ".join("%s → %s" % (w.ref, addresses_text(w.address)) for w in writers),
            ", ".join(c.ref for c in culprits),
            "; ".join("%s claims it: %s" % (c.ref, c.claim_class(side.gateway_class or {})[1]) for c in culprits)),
        gateway=key, controllers=[w.ref for w in writers], culprits=[c.ref for c in culprits],
        fix=fix_of([(c.ref, c.class_fix) for c in culprits]),
        period="; ".join("%s writes %s" % (w.ref, w.settings.get("writes", "at each sync")) for w in writers))]


def _listener_findings(side: GatewaySide, attachments: list[tuple[str, spec.Attachment]]) -> list[Finding]:
    out = []
    writers = side.writers
    served_by_some = {name for w in writers for name, entry_point in side.served(w).items() if entry_point}
    for ln in spec.listeners(side.gateway):
        name = str(ln.get("name"))
        unserved = [(w, why) for w in writers for entry_point, why in [w.serves_listener(ln)] if entry_point is None]
        if not unserved:
            continue
        # Routes attached through this listener and through none that some writer serves.
        dark = sorted({route for route, att in attachments if att.gateway == side.key and name in att.listeners
                       and not served_by_some & set(att.listeners)})
        everyone = len(unserved) == len(writers)
        out.append(Finding(
            "gateway_listener_port", ERROR if everyone else WARNING,
            "%s %s: %s. %s reports it Accepted False, reason PortUnavailable, and serves no route through it%s" % (
                side.key, spec.describe_listener(ln), "; ".join("%s: %s" % (w.ref, why) for w, why in unserved),
                " and ".join(w.ref for w, _why in unserved),
                ("; routes dark: %s" % ", ".join(dark)) if dark else ""),
            gateway=side.key, controllers=[w.ref for w, _why in unserved]))
    return out


def _route_findings(route: Obj, sides: dict[str, GatewaySide],
                    state: ClusterState) -> tuple[dict[str, Any], list[tuple[str, spec.Attachment]], list[Finding]]:
    """Its parents as the spec answers them, the attachments (for the listener findings), and its findings."""
    key = key_of(route)
    ns = str(meta(route).get("namespace"))
    parents: list[dict[str, Any]] = []
    attachments = []
    findings = []
    for ref in (route.get("spec") or {}).get("parentRefs") or []:
        parent = spec.parent_gateway(ns, ref)
        if parent is None:
            continue
        side = sides.get(parent)
        if side is None:
            findings.append(Finding("route_parent_missing", WARNING, "%s %s: its parent Gateway %s does not exist" % (
                ROUTE_KIND, key, parent), route=key, gateway=parent))
            parents.append({"gateway": parent, "accepted": False, "reason": "no such Gateway"})
            continue
        att = spec.attach(ROUTE_KIND, route, ref, side.gateway, state.namespace_labels)
        writers = side.writers
        readers = [w for w in writers if w.watches_namespace(ns)]
        served_by = {w.ref: [n for n in att.listeners if side.served(w).get(n)] for w in readers}
        # What each reader writes in its status.parents entry: accepted only on a listener it serves.
        status_by = {w.ref: {"accepted": True, "reason": "Accepted"} if att.accepted and served_by[w.ref]
                     else {"accepted": False, "reason": att.reason if not att.accepted else w.route_reason_no_listener}
                     for w in readers}
        parents.append(dict(att.as_dict(), section_name=ref.get("sectionName"), served_by=served_by, status_by=status_by))
        if not att.accepted:
            findings.append(Finding("route_not_accepted", ERROR, "%s %s: its parent %s does not accept it: Accepted False, "
                                    "reason %s (%s)" % (ROUTE_KIND, key, parent, att.reason, att.why),
                                    route=key, gateway=parent, controllers=[w.ref for w in readers]))
            continue
        attachments.append((key, att))
        if writers and not readers:
            findings.append(Finding("route_unwatched", ERROR, "%s %s: %s, which write%s its parent %s, watch%s %s, not %s: "
                                    "the route is never read, gets no status and is not served" % (
                                        ROUTE_KIND, key, " and ".join(w.ref for w in writers), "" if len(writers) > 1 else "s",
                                        parent, "" if len(writers) > 1 else "es", " / ".join(w.watch for w in writers), ns),
                                    route=key, gateway=parent, controllers=[w.ref for w in writers]))
    return {"parents": parents}, attachments, findings


def _foreign_parent_findings(route: Obj, sides: dict[str, GatewaySide], controllers: list[GatewayController]) -> list[Finding]:
    """status.parents entries whose controllerName is not that of the parent's class: left by a
    controller that no longer (or never did) own the parent, so they say nothing true of it."""
    key = key_of(route)
    ns = str(meta(route).get("namespace"))
    out = []
    for entry in (route.get("status") or {}).get("parents") or []:
        parent = spec.parent_gateway(ns, entry.get("parentRef") or {})
        writer = entry.get("controllerName")
        if parent is None:
            continue
        side = sides.get(parent)
        owner = ((side.gateway_class or {}).get("spec") or {}).get("controllerName") if side else None
        if side is not None and owner == writer:
            continue
        whose = [c.ref for c in controllers if c.controller_name == writer]
        out.append(Finding(
            "route_parent_foreign", WARNING,
            "%s %s: its status.parents entry for %s was written by %s%s, %s (gateway-api#3846)" % (
                ROUTE_KIND, key, parent, writer, " (%s)" % ", ".join(whose) if whose else "",
                "but that Gateway does not exist: a stale entry nobody removes" if side is None else
                "but the Gateway's class %s belongs to %s: an entry for a parent it does not own" % (side.class_name, owner)),
            route=key, gateway=parent, controllers=whose))
    return out


def predict(state: ClusterState, controllers: list[GatewayController]) -> tuple[dict[str, Any], list[Finding]]:
    """The Gateway API part of the diagnosis: (result, findings)."""
    result: dict[str, Any] = {"served": state.gateway_api, "controllers": [c.as_dict() for c in controllers],
                              "gateway_classes": {}, "gateways": {}, "routes": {}}
    if not state.gateway_api:
        return result, []
    sides = sides_of(state, controllers)
    result["gateway_classes"], findings = _class_findings(state, controllers)
    findings += _blocked_findings(sides, controllers)
    route_findings: list[Finding] = []
    attachments: list[tuple[str, spec.Attachment]] = []
    for route in sorted(state.http_routes, key=key_of):
        entry, attached, found = _route_findings(route, sides, state)
        result["routes"][key_of(route)] = entry
        attachments += attached
        route_findings += found + _foreign_parent_findings(route, sides, controllers)
    for side in sides.values():
        writers = side.writers
        result["gateways"][side.key] = {
            "class": side.class_name,
            "writers": [{"controller": w.ref, "address": w.address, "address_source": w.address_source,
                         "listeners": side.served(w)} for w in writers],
            "blocked": [c.ref for c in side.claimers if c.address is None],
            "flapping": side.flapping,
        }
        findings += _gateway_findings(side) + _listener_findings(side, attachments)
    return result, findings + route_findings


def _ingress_hosts(ingress: Obj) -> list[str]:
    return [str(rule["host"]) for rule in (ingress.get("spec") or {}).get("rules") or [] if rule.get("host")]


def _route_hosts(route: Obj) -> list[str]:
    return [str(h) for h in (route.get("spec") or {}).get("hostnames") or []]


def two_api_findings(state: ClusterState, ingresses: dict[str, Any], gateway_result: dict[str, Any]) -> list[Finding]:
    """A host served at once by an Ingress and by an HTTPRoute on other addresses (a migration half
    done): a client reaches whichever object its DNS names, both answer, and nothing flaps. Stated
    per host with the object and controller behind each address, and the cut-over that ends it."""
    if not gateway_result.get("served"):
        return []
    via_ingress: list[tuple[str, str, str, list[str]]] = []  # host, ingress, controller, address
    for ing in state.ingresses:
        for writer in (ingresses.get(key_of(ing)) or {}).get("writers") or []:
            for host in _ingress_hosts(ing):
                via_ingress.append((host, key_of(ing), writer["controller"], list(writer.get("address") or [])))
    via_route: list[tuple[list[str], str, str, str, list[str]]] = []  # hostnames (none: every host), route, gateway, controller, address
    for route in state.http_routes:
        for parent in (gateway_result["routes"].get(key_of(route)) or {}).get("parents") or []:
            if not parent.get("accepted"):
                continue
            for writer in (gateway_result["gateways"].get(parent["gateway"]) or {}).get("writers") or []:
                via_route.append((_route_hosts(route), key_of(route), parent["gateway"], writer["controller"],
                                  list(writer.get("address") or [])))
    out = []
    for host, ing_key, ing_ctl, ing_addr in via_ingress:
        for r_hosts, route_key, gateway, gw_ctl, gw_addr in via_route:
            if not spec.hostnames_meet(host, r_hosts) or not ing_addr or not gw_addr or set(ing_addr) & set(gw_addr):
                continue
            out.append(Finding(
                "host_on_two_apis", WARNING,
                "%s is served on two addresses by two APIs: Ingress %s by %s at %s, and %s %s (hostnames %s) through Gateway %s by "
                "%s at %s. Both answer; a client reaches the one its DNS names, so the two can serve different versions "
                "until the cut-over"
                % (host, ing_key, ing_ctl, addresses_text(ing_addr), ROUTE_KIND, route_key, addresses_text(r_hosts or ["*"]),
                   gateway, gw_ctl, addresses_text(gw_addr)),
                ingress=ing_key, route=route_key, gateway=gateway, controllers=[ing_ctl, gw_ctl],
                fix={"cut_over": ["point %s at %s (the Gateway %s)" % (host, addresses_text(gw_addr), gateway),
                                  "then delete Ingress %s, or remove host %s from it" % (ing_key, host)]}))
    return out
