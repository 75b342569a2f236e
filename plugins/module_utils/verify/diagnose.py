# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Predict, from the cluster's objects alone, which ingress controllers will write each
Ingress's status and with what address, and flag more than one writer before it flaps.

Everything is read the way the controller binary would see it: the workload's container
args (pflag semantics, `$(VAR)` expanded like the kubelet), its ServiceAccount's RBAC,
the IngressClasses, the publish Service and the nodes under its pods. The analysis is
pure (`analyse`) over a `ClusterState` snapshot; `run` only lists the objects once.

Each controller type's rules (how to recognise its container, what it claims and publishes)
live in its own module under controllers/; the registry finds the type of each workload.

Where the cluster serves Gateway API, the same questions are asked of GatewayClasses, Gateways
and HTTPRoutes (diagnose_gateways.py), of the controllers whose type implements it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify import diagnose_gateways, gateway_api
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.findings import ERROR, WARNING, Finding
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.select import Selection, key_of, list_ingresses
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import (
    AnalysedController, ClusterState, ControllerType, GatewayController, meta, pod_template,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import KindNotServed
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import selects

Obj = dict[str, Any]


# ---------------------------------------------------------------- controller types


def workload_pods(state: ClusterState, workload: Obj) -> list[Obj]:
    """The pods in the workload's namespace its spec.selector selects (a LabelSelector, never
    empty: the API server refuses an empty one for a Deployment or DaemonSet)."""
    ns = meta(workload).get("namespace")
    selector = (workload.get("spec") or {}).get("selector")
    return sorted((p for p in state.pods if meta(p).get("namespace") == ns
                   and selects(selector, meta(p).get("labels"), form="LabelSelector")), key=key_of)


@dataclass
class FoundWorkload:
    """A workload whose container a registered type recognises: that container, its pods, and
    its AnalysedControllers (one per status writer)."""

    type: ControllerType
    workload: Obj
    container: Obj
    pods: list[Obj]
    controllers: list[AnalysedController]


def find_workloads(state: ClusterState) -> list[FoundWorkload]:
    """Every controller workload, by namespace/name, with the first container a type recognises."""
    found = []
    for workload in sorted(state.workloads, key=key_of):
        for container in pod_template(workload).get("containers") or []:
            kind = registry.detect(container)
            if kind is not None:
                pods = workload_pods(state, workload)
                found.append(FoundWorkload(kind, workload, container, pods, kind.analyse(state, workload, container, pods)))
                break
    return found


def find_controllers(state: ClusterState) -> list[AnalysedController]:
    """One AnalysedController per status writer (per provider where a type has several) of each workload
    whose container a registered type recognises; never one per pod."""
    return [c for found in find_workloads(state) for c in found.controllers]


def gateway_sides(state: ClusterState, found: list[FoundWorkload]) -> list[tuple[FoundWorkload, GatewayController]]:
    """Each workload whose type implements Gateway API and runs it, with its Gateway API side."""
    out = []
    for f in found:
        side = f.type.gateway(state, f.workload, f.container, f.pods) if f.type.gateway is not None else None
        if side is not None:
            out.append((f, side))
    return out


def gateway_controllers(state: ClusterState, found: list[FoundWorkload]) -> list[GatewayController]:
    """The Gateway API side of each workload whose type implements it and runs it."""
    return [side for _f, side in gateway_sides(state, found)]


# ---------------------------------------------------------------- prediction


def claimers_of(ingress: Obj, controllers: list[AnalysedController]) -> list[tuple[AnalysedController, str, str]]:
    """(controller, claim, why) for every controller that claims this Ingress, now or at its next update."""
    ns = str(meta(ingress).get("namespace"))
    out = []
    for c in controllers:
        if c.address is None or c.claim is None or c.watches_namespace is None or not c.watches_namespace(ns):
            continue
        claim, why = c.claim(ingress)
        if claim != "no":
            out.append((c, claim, why))
    return out


def writers_of(ingress: Obj, controllers: list[AnalysedController]) -> list[tuple[AnalysedController, str, str]]:
    """(controller, claim, why) for every controller that will write this Ingress's status."""
    out = claimers_of(ingress, controllers)
    # A controller that only takes the Ingress up at its next update writes once another one
    # has written it (that write is the update); with nobody else it waits for an edit.
    if not any(claim == "yes" for _c, claim, _why in out):
        return []
    return out


def servers_of(ingress: Obj, controllers: list[AnalysedController]) -> list[str]:
    """Refs of the controllers that route this Ingress: it is in their scope and they claim it
    outright (whether or not they may write its status)."""
    ns = str(meta(ingress).get("namespace"))
    return [c.ref for c in controllers
            if c.claim is not None and c.watches_namespace is not None and c.watches_namespace(ns)
            and c.claim(ingress)[0] == "yes"]


def culprits_of(ingress_ns: str, writers: list[AnalysedController],
                by_class: list[AnalysedController] | None = None) -> list[AnalysedController]:
    """Rule: a writer that claims the Ingress only because it skips the class check (BY_CLASS
    are those its class names) is the culprit, when its class names another. Else the
    Ingress's own namespace's controller is presumed its intended owner, so the culprits are
    the writers from other namespaces. Without a writer in its namespace, the culprits are
    those that do not publish a LoadBalancer address (node or fixed addresses are the usual
    accident); if that singles nobody out, all of them."""
    if by_class and len(by_class) < len(writers):
        return [w for w in writers if w not in by_class]
    own = [w for w in writers if w.namespace == ingress_ns]
    if own:
        return [w for w in writers if w.namespace != ingress_ns]
    non_lb = [w for w in writers if not w.address_from_lb]
    return non_lb if 0 < len(non_lb) < len(writers) else list(writers)


def fmt(addresses: list[str] | None) -> str:
    return "[%s]" % ", ".join(addresses or [])


def _why_culprit(c: AnalysedController, ingress: str, others: list[AnalysedController]) -> str:
    scope = ("watches every namespace (no --watch-namespace)" if c.cluster_scoped
             else "watches %s" % c.watch)
    if c.publish_source == "node-addresses":
        pub = "has no --publish-service, so it writes the node addresses %s of its pods" % fmt(c.address)
    elif c.publish_source == "service":
        pub = "publishes %s, so it writes %s" % (c.publish_detail, fmt(c.address))
    else:
        pub = "has %s, so it writes %s" % (c.publish_detail, fmt(c.address))
    rivals = " and ".join("%s sets to %s" % (o.ref, fmt(o.address)) for o in others)
    return "controller %s %s and %s into %s, which %s" % (c.ref, scope, pub, ingress, rivals)


def _fix_for(culprits: list[AnalysedController]) -> dict[str, Any]:
    values: list[str] = []
    args: list[str] = []
    for c in culprits:
        if c.stop_fix[0]:
            values.append("%s: %s" % (c.ref, c.stop_fix[0]))
            args.append("%s: %s" % (c.ref, c.stop_fix[1]))
            continue
        if c.cluster_scoped and c.scope_fix[0]:
            values.append("%s: %s" % (c.ref, c.scope_fix[0]))
            args.append("%s: %s" % (c.ref, c.scope_fix[1]))
        if c.publish_source == "node-addresses" and c.publish_fix[0]:
            values.append("%s: %s" % (c.ref, c.publish_fix[0]))
            args.append("%s: %s" % (c.ref, c.publish_fix[1]))
    if not values:
        values = ["%s: give it its own class (controller.ingressClass / ingressClassResource) so it stops claiming the Ingress" % c.ref
                  for c in culprits]
        args = ["%s: --ingress-class / --controller-class of its own" % c.ref for c in culprits]
    return {"chart_values": values, "args": args}


def predict(state: ClusterState, controllers: list[AnalysedController]) -> tuple[dict[str, Any], list[Finding]]:
    ingresses: dict[str, Any] = {}
    findings: list[Finding] = []
    for ing in state.ingresses:
        key = key_of(ing)
        ns = str(meta(ing).get("namespace"))
        writers = writers_of(ing, controllers)
        distinct = {tuple(c.address or []) for c, _claim, _why in writers}
        # Controllers sharing a leader Lease (same namespace and --election-id) never write
        # at the same time: the status follows whoever holds the Lease, it does not alternate.
        lease_groups = {str(c.settings.get("leader_lease", c.ref)) for c, _claim, _why in writers}
        shared_only = len(lease_groups) == 1 and len(writers) > 1
        flapping = len(distinct) > 1 and not shared_only
        # Nobody writes it now, but these take it up at its next update (an edit of the Ingress).
        waiting = [] if writers else claimers_of(ing, controllers)
        ingresses[key] = {
            "writers": [{"controller": c.ref, "address": c.address, "claim": claim, "why": why} for c, claim, why in writers],
            "flapping": flapping,
            "writers_after_update": [{"controller": c.ref, "address": c.address, "claim": claim, "why": why}
                                     for c, claim, why in waiting],
        }
        if not writers:
            findings.append(Finding("unclaimed", WARNING, "%s: no controller found in the cluster claims it, so nothing "
                                    "will publish its status (%s)" % (key, _unclaimed_why(ing, controllers)), ingress=key))
        if shared_only and len(distinct) > 1:
            findings.append(Finding(
                "shared_leader", WARNING,
                "%s: %s share the leader Lease %s and would write different addresses (%s): only the Lease holder "
                "writes, so the status changes whenever the leadership moves" % (
                    key, " and ".join(c.ref for c, _cl, _w in writers), lease_groups.pop(),
                    ", ".join("%s → %s" % (c.ref, fmt(c.address)) for c, _cl, _w in writers)),
                ingress=key, controllers=[c.ref for c, _cl, _w in writers]))
        if writers and not flapping and not writers[0][0].address:
            w = writers[0][0]
            findings.append(Finding("empty_address", WARNING, "%s: its writer%s %s publish%s an empty address (%s)" % (
                key, "s" if len(writers) > 1 else "", ", ".join(c.ref for c, _cl, _w in writers),
                "" if len(writers) > 1 else "es", w.publish_detail), ingress=key, controllers=[c.ref for c, _cl, _w in writers],
                fix={"chart_values": ["%s: %s" % (w.ref, w.publish_fix[0])], "args": ["%s: %s" % (w.ref, w.publish_fix[1])]}))
        if not flapping:
            continue
        ws = [c for c, _claim, _why in writers]
        culprits = culprits_of(ns, ws, [c for c, claim, _why in writers if claim == "yes"])
        others = [w for w in ws if w not in culprits]
        period = max(w.sync_period for w in ws)
        reasons = [_why_culprit(c, key, others or [w for w in ws if w is not c]) for c in culprits]
        leases: dict[str, list[str]] = {}
        for w in ws:
            leases.setdefault(str(w.settings.get("leader_lease", w.ref)), []).append(w.ref)
        for lease, refs in leases.items():
            if len(refs) > 1:
                reasons.append("%s share the leader Lease %s, so only the one holding it writes at a time"
                               % (" and ".join(refs), lease))
        late = [c.ref for c, claim, _why in writers if claim == "on_update"]
        if late:
            reasons.append("%s ignored it when it was added but takes it up at its next update (IgnoreIngressClass: "
                           "the update handler skips the class check)" % ", ".join(late))
        findings.append(Finding(
            "multiple_writers", ERROR,
            "%s: %d controllers write its status with different addresses: %s. Culprit: %s. %s"
            % (key, len(ws), ", ".join("%s → %s" % (w.ref, fmt(w.address)) for w in ws),
               ", ".join(c.ref for c in culprits), "; ".join(reasons)),
            ingress=key, controllers=[w.ref for w in ws], culprits=[c.ref for c in culprits], fix=_fix_for(culprits),
            period="each writer re-syncs every %s s (only its leader), so the status flips at each sync" % period,
        ))
    return ingresses, findings


def _unclaimed_why(ing: Obj, controllers: list[AnalysedController]) -> str:
    ns = str(meta(ing).get("namespace"))
    parts = []
    for c in controllers:
        if c.watches_namespace is not None and not c.watches_namespace(ns):
            parts.append("%s watches %s" % (c.ref, c.watch))
        elif c.claim is not None:
            parts.append("%s: %s" % (c.ref, c.claim(ing)[1]))
    return "; ".join(parts) or "no ingress controller found"


def controller_findings(controllers: list[AnalysedController]) -> list[Finding]:
    out: list[Finding] = []
    for c in controllers:
        for p in c.problems:
            if "publish Service" in p:
                out.append(Finding("publish_service_missing", ERROR, "controller %s %s" % (c.ref, p), controllers=[c.ref],
                                   fix={"chart_values": ["%s: controller.service.enabled: true (or fix controller.publishService.pathOverride)" % c.ref],
                                        "args": ["%s: --publish-service=<namespace>/<an existing Service>" % c.ref]}))
            elif p.startswith("cannot start"):
                out.append(Finding("cannot_start", ERROR, "controller %s %s" % (c.ref, p), controllers=[c.ref]))
    for i, a in enumerate(controllers):
        for b in controllers[i + 1:]:
            shared = [k for k in a.class_keys if k in b.class_keys]
            if not shared or a.type != b.type or not _scopes_overlap(a, b):
                continue
            out.append(Finding(
                "class_collision", WARNING,
                "controllers %s and %s both claim %s in overlapping namespaces (%s; %s): Ingresses there are served "
                "and written by both" % (a.ref, b.ref, " and ".join(shared), a.watch, b.watch),
                controllers=[a.ref, b.ref],
            ))
    return out


def _scopes_overlap(a: AnalysedController, b: AnalysedController) -> bool:
    if a.cluster_scoped or b.cluster_scoped or a.watch == b.watch:
        return True
    # Selector scopes: overlap when either admits the other's single namespace.
    for x, y in ((a, b), (b, a)):
        if x.watch.startswith("namespace ") and y.watches_namespace is not None and y.watches_namespace(x.watch[len("namespace "):]):
            return True
    return not (a.watch.startswith("namespace ") or b.watch.startswith("namespace "))


def analyse(state: ClusterState) -> dict[str, Any]:
    """The whole diagnosis over a snapshot (pure)."""
    found = find_workloads(state)
    controllers = [c for f in found for c in f.controllers]
    ingresses, findings = predict(state, controllers)
    gateways, gateway_findings = diagnose_gateways.predict(state, gateway_controllers(state, found))
    findings = (controller_findings(controllers) + findings + gateway_findings
                + diagnose_gateways.two_api_findings(state, ingresses, gateways))
    return {
        "controllers": [c.as_dict() for c in controllers],
        "ingresses": ingresses,
        "gateway_api": gateways,
        "findings": [f.as_dict() for f in findings],
        "passed": not any(f.severity == ERROR for f in findings),
    }


# ---------------------------------------------------------------- reading the cluster


def read_state(client: Any, selection: Selection | None) -> ClusterState:
    """List everything the analysis needs, cluster-wide (controllers may live anywhere); with no
    selection, no Ingress (what the controllers publish does not depend on them)."""
    rbac = "rbac.authorization.k8s.io/v1"
    return ClusterState(
        workloads=client.list("apps/v1", "Deployment") + client.list("apps/v1", "DaemonSet"),
        pods=client.list("v1", "Pod"),
        services=client.list("v1", "Service"),
        nodes=client.list("v1", "Node"),
        namespaces=client.list("v1", "Namespace"),
        ingress_classes=client.list("networking.k8s.io/v1", "IngressClass"),
        cluster_roles=client.list(rbac, "ClusterRole"),
        cluster_role_bindings=client.list(rbac, "ClusterRoleBinding"),
        ingresses=list_ingresses(client, selection) if selection is not None else [],
    )


def read_gateway_api(client: Any, state: ClusterState) -> ClusterState:
    """Add every GatewayClass, Gateway and HTTPRoute, cluster-wide (a route's parent may sit in
    another namespace), where the cluster serves Gateway API; where its CRDs are not installed
    the state says so and holds none."""
    try:
        state.gateway_classes = client.list(gateway_api.API_VERSION, "GatewayClass")
    except KindNotServed:
        return state
    state.gateway_api = True
    state.gateways = client.list(gateway_api.API_VERSION, "Gateway")
    try:
        state.http_routes = client.list(gateway_api.API_VERSION, "HTTPRoute")
    except KindNotServed:
        state.http_routes = []  # Gateways without routes: a partial install is still diagnosed
    return state


def run(client: Any, selection: Selection) -> dict[str, Any]:
    return analyse(read_gateway_api(client, read_state(client, selection)))
