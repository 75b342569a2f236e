"""kube-scheduler: binds Pending pods to a node that is Ready, whose taints the pod
tolerates (kind taints the control plane only in multi-node clusters), whose labels match
the pod's nodeSelector, and where the pod's hostPorts are still free (the NodePorts plugin).
Among fitting nodes it takes the one with the fewest pods (then name order)."""
from __future__ import annotations

from typing import Any

from kindlab_twin.contract import Obj

from .base import NODE, POD, LoopController, is_terminating, now_rfc3339, set_condition


def tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for t in tolerations:
        if t.get("effect") and t.get("effect") != taint.get("effect"):
            continue
        op = t.get("operator", "Equal")
        if op == "Exists" and (not t.get("key") or t.get("key") == taint.get("key")):
            return True
        if op == "Equal" and t.get("key") == taint.get("key") and (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def host_ports(pod: Obj) -> set[tuple[int, str]]:
    out = set()
    for c in pod.get("spec", {}).get("containers") or []:
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                out.add((int(p["hostPort"]), p.get("protocol", "TCP")))
    return out


def node_ready(node: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in node.get("status", {}).get("conditions") or [])


def fit_reason(pod: Obj, node: Obj, pods_on_node: list[Obj]) -> str | None:
    """None if the pod fits, else the scheduler's reason fragment."""
    if not node_ready(node) or node.get("spec", {}).get("unschedulable"):
        return "node(s) were unschedulable"
    tols = pod.get("spec", {}).get("tolerations") or []
    for taint in node.get("spec", {}).get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(tols, taint):
            return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
    selector = pod.get("spec", {}).get("nodeSelector") or {}
    labels = node.get("metadata", {}).get("labels") or {}
    if any(labels.get(k) != v for k, v in selector.items()):
        return "node(s) didn't match Pod's node affinity/selector"
    wanted = host_ports(pod)
    if wanted:
        taken = set().union(*(host_ports(p) for p in pods_on_node)) if pods_on_node else set()
        if wanted & taken:
            return "node(s) didn't have free ports for the requested pod ports"
    return None


def choose_node(pod: Obj, nodes: list[Obj], pods: list[Obj]) -> tuple[str | None, str]:
    by_node: dict[str, list[Obj]] = {}
    for p in pods:
        n = p.get("spec", {}).get("nodeName")
        if n and not is_terminating(p) and p.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
            by_node.setdefault(n, []).append(p)
    fitting: list[tuple[int, str]] = []
    reasons: dict[str, int] = {}
    for node in nodes:
        name = node["metadata"]["name"]
        reason = fit_reason(pod, node, by_node.get(name, []))
        if reason is None:
            fitting.append((len(by_node.get(name, [])), name))
        else:
            reasons[reason] = reasons.get(reason, 0) + 1
    if fitting:
        return min(fitting)[1], ""
    detail = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
    return None, (f"0/{len(nodes)} nodes are available: {detail}. "
                  f"preemption: 0/{len(nodes)} nodes are available: {len(nodes)} Preemption is not helpful for scheduling.")


class Scheduler(LoopController):
    name = "scheduler"
    manager = "kube-scheduler"
    watches = ("Pod", "Node")
    period = 5.0

    def reconcile(self) -> None:
        nodes = self.store.list(NODE)
        pods = self.store.list(POD)
        for pod in pods:
            spec = pod.get("spec", {})
            if spec.get("nodeName") or is_terminating(pod):
                continue
            if spec.get("schedulerName", "default-scheduler") != "default-scheduler":
                continue
            node, why = choose_node(pod, nodes, pods)
            conds = list(pod.get("status", {}).get("conditions") or [])
            if node is None:
                set_condition(conds, "PodScheduled", "False", "Unschedulable", why)
                status = dict(pod.get("status") or {}, conditions=conds)
                if status != pod.get("status"):
                    pod["status"] = status
                    self.store.update(pod, self.manager, subresource="status")
                continue
            # pods/binding sets spec.nodeName; then the scheduler's PodScheduled condition
            pod["spec"]["nodeName"] = node
            pod = self.store.update(pod, self.manager)
            conds = [c for c in (pod.get("status", {}).get("conditions") or []) if c.get("type") != "PodScheduled"]
            conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                          "lastTransitionTime": now_rfc3339()})
            pod["status"] = dict(pod.get("status") or {}, conditions=conds)
            self.store.update(pod, self.manager, subresource="status")
            pods = [p if p["metadata"]["uid"] != pod["metadata"].get("uid") else pod for p in pods] if pod["metadata"].get("uid") else pods
