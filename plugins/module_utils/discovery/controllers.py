# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Controller discovery over a snapshot: which workloads are ingress controllers (a registered type
recognises their container), their status writers, their Gateway API sides, and who claims, writes and
serves each Ingress. Every analysis that needs the controllers asks here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import (
    AnalysedController, ClusterState, ControllerType, GatewayController, meta, pod_template,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of, selects

Obj = dict[str, Any]


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
                # a type that serves only Gateway API writes no Ingress status: no AnalysedController
                writers = kind.ingress.analyse(state, workload, container, pods) if kind.ingress is not None else []
                found.append(FoundWorkload(kind, workload, container, pods, writers))
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
        side = f.type.gateway.analyse(state, f.workload, f.container, f.pods) if f.type.gateway is not None else None
        if side is not None:
            out.append((f, side))
    return out


def gateway_controllers(state: ClusterState, found: list[FoundWorkload]) -> list[GatewayController]:
    """The Gateway API side of each workload whose type implements it and runs it."""
    return [side for _f, side in gateway_sides(state, found)]


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
