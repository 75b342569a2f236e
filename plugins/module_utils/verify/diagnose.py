# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Predict, from the cluster's objects alone, which ingress controllers will write each
Ingress's status and with what address, and flag more than one writer before it flaps.

Everything is read the way the controller binary would see it: the workload's container
args (pflag semantics, `$(VAR)` expanded like the kubelet), its ServiceAccount's RBAC,
the IngressClasses, the publish Service and the nodes under its pods. The analysis is
pure (`analyse`) over a `ClusterState` snapshot; `run` only lists the objects once
(discovery/snapshot.py), and which workloads are controllers, and who claims and writes each
Ingress, is discovery's (discovery/controllers.py).

Each controller type's rules (how to recognise its container, what it claims and publishes)
live in its own module under controllers/; the registry finds the type of each workload.

Where the cluster serves Gateway API, the same questions are asked of GatewayClasses, Gateways
and HTTPRoutes (diagnose_gateways.py), of the controllers whose type implements it.
"""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify import diagnose_gateways
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.findings import ERROR, WARNING, Finding, addresses_text, culprits_of, fix_of
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import AnalysedController, ClusterState, meta
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.controllers import (
    claimers_of, find_workloads, gateway_controllers, writers_of,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.snapshot import read_gateway_api, read_state

Obj = dict[str, Any]


# ---------------------------------------------------------------- prediction


def _why_culprit(c: AnalysedController, ingress: str, others: list[AnalysedController]) -> str:
    scope = c.scope_words or ("watches every namespace" if c.cluster_scoped else "watches %s" % c.watch)
    if c.publish_words:
        pub = c.publish_words % addresses_text(c.address)
    elif c.publish_source == "service":
        pub = "publishes %s, so it writes %s" % (c.publish_detail, addresses_text(c.address))
    else:
        pub = "has %s, so it writes %s" % (c.publish_detail, addresses_text(c.address))
    rivals = " and ".join("%s sets to %s" % (o.ref, addresses_text(o.address)) for o in others)
    return "controller %s %s and %s into %s, which %s" % (c.ref, scope, pub, ingress, rivals)


def _fix_for(culprits: list[AnalysedController]) -> dict[str, Any]:
    """Each culprit's own fix, from its type: what stops it writing, else its scope and publishing, else a class
    of its own."""
    settings: list[tuple[str, tuple[str, str]]] = []
    for c in culprits:
        if c.stop_fix[0]:
            settings.append((c.ref, c.stop_fix))
            continue
        if c.cluster_scoped and c.scope_fix[0]:
            settings.append((c.ref, c.scope_fix))
        if c.publish_source == "node-addresses" and c.publish_fix[0]:
            settings.append((c.ref, c.publish_fix))
    return fix_of(settings or [(c.ref, c.class_fix) for c in culprits if c.class_fix[0]])


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
                    ", ".join("%s → %s" % (c.ref, addresses_text(c.address)) for c, _cl, _w in writers)),
                ingress=key, controllers=[c.ref for c, _cl, _w in writers]))
        if writers and not flapping and not writers[0][0].address:
            w = writers[0][0]
            findings.append(Finding("empty_address", WARNING, "%s: its writer%s %s publish%s an empty address (%s)" % (
                key, "s" if len(writers) > 1 else "", ", ".join(c.ref for c, _cl, _w in writers),
                "" if len(writers) > 1 else "es", w.publish_detail), ingress=key, controllers=[c.ref for c, _cl, _w in writers],
                fix=fix_of([(w.ref, w.publish_fix)])))
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
            % (key, len(ws), ", ".join("%s → %s" % (w.ref, addresses_text(w.address)) for w in ws),
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
        for p in c.faults:  # each type says which of its problems make a finding, with its own fix
            if p.finding:
                out.append(Finding(p.finding, ERROR, "controller %s %s" % (c.ref, p.text), controllers=[c.ref],
                                   fix=fix_of([(c.ref, p.fix)] if p.fix[0] else [])))
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


def run(client: Any, selection: Selection) -> dict[str, Any]:
    return analyse(read_gateway_api(client, read_state(client, selection)))
