# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A captured lab's lab_expect: what the diagnosis of the cluster finds now (its error findings, the
controllers that cannot start, the Ingresses nobody gives an address, the status it predicts), what a short
watch of the cluster saw, and the Ingress conflicts the cluster has."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ClusterState
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery import controllers as discovery
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.conflicts import find_conflicts

Obj = dict[str, Any]


def _ref_pattern(refs: list[str]) -> str:
    """A regex matching these controllers by namespace (the lab names their workloads after its releases)."""
    return "^%s$" % " ".join("%s/\\S+" % ref.split("/", 1)[0] for ref in refs)


def expectations(diagnosis: Obj, ingress_names: dict[str, str], releases: dict[str, str],
                 observed: dict[str, int] | None = None) -> tuple[Obj, list[str]]:
    """lab_expect from the live diagnosis: each error finding, the controllers that cannot start, the
    Ingresses nobody gives an address, the status it predicts; with OBSERVED (Ingress → status changes
    a short watch saw), what the watch saw too. (expect, notes)."""
    notes: list[str] = []
    findings: list[Obj] = []
    for f in diagnosis.get("findings") or []:
        if f.get("severity") != "error":
            continue
        want: Obj = {"kind": f["kind"]}
        if f.get("ingress"):
            if f["ingress"] not in ingress_names:
                notes.append("finding %s on %s: its Ingress is not reproduced, so it is not expected" % (f["kind"], f["ingress"]))
                continue
            want["ingress"] = "^%s$" % ingress_names[f["ingress"]]
        if f.get("culprits"):
            want["culprit"] = _ref_pattern(list(f["culprits"]))
        findings.append(want)
    expect: Obj = {}
    if findings:
        expect["diagnose"] = {"findings": findings}
    failing = {releases[c["controller"]]: "CrashLoopBackOff" for c in diagnosis.get("controllers") or []
               if c["controller"] in releases and any(p.startswith("cannot start") for p in c.get("problems") or [])}
    if failing:
        expect["controllers"] = {"failing": failing}
    predicted = {ref: ing for ref, ing in (diagnosis.get("ingresses") or {}).items() if ref in ingress_names}
    dark = {ingress_names[ref]: "no address" for ref, ing in predicted.items()
            if not any(w.get("address") for w in ing.get("writers") or [])}
    if dark:
        expect["addresses"] = {"failing": dark}
    # The status the diagnosis predicts: flapping between its writers, or only ever node addresses,
    # which no lab pool holds (lab_definition keeps the pools outside the node network).
    sources = {c["controller"]: c.get("publish_source") for c in diagnosis.get("controllers") or []}
    status: dict[str, str] = {}
    for ref, ing in predicted.items():
        writers = [w for w in ing.get("writers") or [] if w.get("address")]
        if ing.get("flapping"):
            status[ingress_names[ref]] = "change"
        elif writers and all(sources.get(w["controller"]) == "node-addresses" for w in writers):
            status[ingress_names[ref]] = "outside"
        elif ingress_names[ref] in dark:
            status[ingress_names[ref]] = "empty"
    if observed is not None:
        # What a short watch of the live cluster saw: a change it saw is expected whatever the
        # prediction; a predicted flap it did not see stays expected (the watch may be shorter than
        # the writers' sync period), and is said.
        for ref, changes in sorted(observed.items()):
            if ref not in ingress_names:
                continue
            name = ingress_names[ref]
            if changes and status.get(name) != "change":
                status[name] = "change"
                notes.append("Ingress %s changed status %d time(s) during the capture's watch, which the diagnosis did not "
                             "predict: expected to change in the lab too" % (ref, changes))
            elif not changes and status.get(name) == "change":
                notes.append("Ingress %s: the diagnosis predicts a flap the capture's watch did not see (its writers may sync "
                             "less often than the watch lasted); still expected" % ref)
    if status:
        expect["status"] = {"failing": status}
    notes.append("lab_expect holds the diagnosis's findings and the status it %s; reachability is not captured: "
                 "add lab_expect.reachability by hand" % ("predicts and the capture's watch saw" if observed is not None else "predicts"))
    return expect, notes


def expected_conflicts(state: ClusterState, ingress_names: dict[str, str]) -> list[Obj]:
    """The ambiguous host/path pairs (ingress_conflicts) among the reproduced Ingresses, by their lab names."""
    controllers = discovery.find_controllers(state)
    served_by = {key_of(i): discovery.servers_of(i, controllers) for i in state.ingresses}
    found = find_conflicts(state.ingresses, state.ingress_classes, None, served_by, {c.ref: c.type for c in controllers})
    pairs = {tuple(sorted(ingress_names[i] for i in c["ingresses"])) for c in found["conflicts"]
             if len(c["ingresses"]) == 2 and all(i in ingress_names for i in c["ingresses"])}
    return [{"ingresses": list(pair)} for pair in sorted(pairs)]
