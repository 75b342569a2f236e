"""kube-controller-manager's deployment and replicaset controllers (simplified rollout).

A Deployment owns one ReplicaSet per distinct pod template (label pod-template-hash, name
`<deploy>-<hash>`); a template change creates a new ReplicaSet at full size and scales the
old ones to 0 once the new one is available (a surge rollout: old pods keep serving until
then, so a crash-looping new template leaves the old pods in place like a stuck rollout).
Status fields are the ones `kubectl rollout status` reads: observedGeneration,
replicas/updatedReplicas/readyReplicas/availableReplicas, conditions Available/Progressing.
"""
from __future__ import annotations

import copy
import time
from typing import Any

from kindlab_twin.contract import Conflict, NotFound, Obj

from .base import (DEPLOYMENT, POD, REPLICASET, LoopController, create_with_status, is_terminating,
                   owned_by, owner_ref, pod_ready, random_suffix,
                   set_condition, stable_hash, update_status)

REVISION = "deployment.kubernetes.io/revision"


def template_hash(template: dict[str, Any]) -> str:
    return stable_hash(template, 10)


def pod_from_template(template: dict[str, Any], owner: Obj, name: str) -> Obj:
    tmeta = template.get("metadata") or {}
    spec = copy.deepcopy(template.get("spec") or {})
    # apiserver defaults a real pod would show
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    spec.setdefault("securityContext", {})
    for c in spec.get("containers") or []:
        image = str(c.get("image", ""))
        c.setdefault("imagePullPolicy", "Always" if image.endswith(":latest") or ":" not in image.rsplit("/", 1)[-1] else "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("resources", {})
        for p in c.get("ports") or []:
            p.setdefault("protocol", "TCP")
    spec.setdefault("tolerations", [])
    spec["tolerations"] = spec["tolerations"] + [
        t for t in (
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ) if t["key"] not in {x.get("key") for x in spec["tolerations"]}
    ]
    ns = owner["metadata"].get("namespace") or "default"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "generateName": name.rsplit("-", 1)[0] + "-",
            "namespace": ns,
            "labels": dict(tmeta.get("labels") or {}),
            "annotations": dict(tmeta.get("annotations") or {}),
            "ownerReferences": [owner_ref(owner)],
        },
        "spec": spec,
        "status": {"phase": "Pending", "qosClass": "BestEffort"},
    }


class ReplicaSetController(LoopController):
    name = "replicaset-controller"
    manager = "kube-controller-manager"
    watches = ("ReplicaSet", "Pod")
    period = 5.0

    def reconcile(self) -> None:
        pods = self.store.list(POD)
        for rs in self.store.list(REPLICASET):
            if is_terminating(rs):
                continue
            self.sync_one(rs, [p for p in pods if owned_by(p, rs)])

    def sync_one(self, rs: Obj, owned: list[Obj]) -> None:
        spec = rs.get("spec") or {}
        want = int(spec.get("replicas", 1))
        live = [p for p in owned if not is_terminating(p)]
        if len(live) < want:
            template = spec.get("template") or {}
            for _missing in range(want - len(live)):
                name = f"{rs['metadata']['name']}-{random_suffix(rs['metadata']['name'])}"
                create_with_status(self.store, pod_from_template(template, rs, name), self.manager)
        elif len(live) > want:
            # delete not-ready pods first, then the newest (controller.go ActivePods ordering)
            victims = sorted(live, key=lambda p: (pod_ready(p), p["metadata"].get("creationTimestamp", "")), reverse=False)
            victims = sorted(victims, key=pod_ready)
            for p in victims[: len(live) - want]:
                try:
                    self.store.delete(POD, p["metadata"]["namespace"], p["metadata"]["name"])
                except NotFound:
                    pass
            live = [p for p in live if p not in victims[: len(live) - want]]
        ready = sum(1 for p in live if pod_ready(p))
        status: dict[str, Any] = {
            "replicas": len(live),
            "fullyLabeledReplicas": len(live),
            "readyReplicas": ready,
            "availableReplicas": ready,
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        if not ready:
            status.pop("readyReplicas")
            status.pop("availableReplicas")
        update_status(self.store, rs, status, self.manager)


class DeploymentController(LoopController):
    name = "deployment-controller"
    manager = "kube-controller-manager"
    watches = ("Deployment", "ReplicaSet")
    period = 5.0

    def reconcile(self) -> None:
        all_rs = self.store.list(REPLICASET)
        deps = self.store.list(DEPLOYMENT)
        live = {d["metadata"].get("uid", d["metadata"]["name"]) for d in deps}
        for uid in [u for u in self._progress if u not in live]:
            del self._progress[uid]
        for dep in deps:
            if is_terminating(dep):
                continue
            self.sync_one(dep, [rs for rs in all_rs if owned_by(rs, dep)])

    def setup(self) -> None:
        self._progress: dict[str, tuple[Any, float]] = {}  # uid -> (status signature, when it last moved)

    def sync_one(self, dep: Obj, owned: list[Obj]) -> None:
        spec = dep.get("spec") or {}
        want = int(spec.get("replicas", 1))
        template = copy.deepcopy(spec.get("template") or {})
        h = template_hash(template)
        new_rs = next((rs for rs in owned if (rs["metadata"].get("labels") or {}).get("pod-template-hash") == h), None)
        old = [rs for rs in owned if rs is not new_rs]
        revisions = [int((rs["metadata"].get("annotations") or {}).get(REVISION, "0") or 0) for rs in owned]
        recreate = (spec.get("strategy") or {}).get("type") == "Recreate"
        if new_rs is None:
            first = 0 if (old and recreate) else (want if not old else 0)
            new_rs = self.create_rs(dep, template, h, max(revisions, default=0) + 1, first)
        if any(int((rs.get("status") or {}).get("observedGeneration", 0)) < int(rs["metadata"].get("generation", 1))
               for rs in [new_rs] + old):
            # the ReplicaSet controller has not caught up with the last scale: decide on fresh counts only
            self.write_status(dep, new_rs, old, want)
            return
        targets = plan_rollout(spec, want, new_rs, old, recreate)
        for rs in [new_rs] + old:
            name = rs["metadata"]["name"]
            if name in targets and int((rs.get("spec") or {}).get("replicas", 0)) != targets[name]:
                rs["spec"]["replicas"] = targets[name]
                try:
                    updated = self.store.update(rs, self.manager)
                except (Conflict, NotFound):
                    continue
                if rs is new_rs:
                    new_rs = updated
        self.write_status(dep, new_rs, old, want)

    def create_rs(self, dep: Obj, template: dict[str, Any], h: str, revision: int, replicas: int) -> Obj:
        tmeta = template.setdefault("metadata", {})
        tmeta.setdefault("labels", {})["pod-template-hash"] = h
        selector = copy.deepcopy((dep.get("spec") or {}).get("selector") or {})
        selector.setdefault("matchLabels", {})["pod-template-hash"] = h
        rs: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{dep['metadata']['name']}-{h}",
                "namespace": dep["metadata"].get("namespace") or "default",
                "labels": dict(tmeta["labels"]),
                "annotations": {REVISION: str(revision),
                                "deployment.kubernetes.io/desired-replicas": str(replicas),
                                "deployment.kubernetes.io/max-replicas": str(replicas + max(1, replicas // 4))},
                "ownerReferences": [owner_ref(dep)],
            },
            "spec": {"replicas": replicas, "selector": selector, "template": template},
        }
        try:
            return self.store.create(rs, self.manager)
        except Conflict:
            got = self.store.get(REPLICASET, rs["metadata"]["namespace"], rs["metadata"]["name"])
            assert got is not None
            return got

    def stalled(self, dep: Obj, signature: Any, done: bool) -> bool:
        """progressDeadlineSeconds (default 600, divided by time_scale) without any change
        in the rollout's replica counts → Progressing False ProgressDeadlineExceeded."""
        uid = dep["metadata"].get("uid", dep["metadata"]["name"])
        now = time.monotonic()
        prev = self._progress.get(uid)
        if done:
            self._progress.pop(uid, None)
            return False
        if prev is None or prev[0] != signature:
            self._progress[uid] = (signature, now)
            return False
        deadline = float((dep.get("spec") or {}).get("progressDeadlineSeconds", 600))
        return now - prev[1] > self.scaled(deadline)

    def next_wait(self) -> float:
        waits = [self.idle_wait()]
        for _sig, since in self._progress.values():
            waits.append(max(0.05, since + self.scaled(600) - time.monotonic()))
        return min(waits)

    def write_status(self, dep: Obj, new_rs: Obj, old: list[Obj], want: int) -> None:
        rss = [new_rs] + old

        def st(rs: Obj, f: str) -> int:
            return int((rs.get("status") or {}).get(f, 0))

        replicas = sum(st(rs, "replicas") for rs in rss)
        ready = sum(st(rs, "readyReplicas") for rs in rss)
        available = sum(st(rs, "availableReplicas") for rs in rss)
        updated = st(new_rs, "replicas")
        status: dict[str, Any] = {
            "observedGeneration": dep["metadata"].get("generation", 1),
            "replicas": replicas,
            "updatedReplicas": updated,
            "readyReplicas": ready,
            "availableReplicas": available,
        }
        if want - available > 0:
            status["unavailableReplicas"] = want - available
        for f in ("replicas", "updatedReplicas", "readyReplicas", "availableReplicas"):
            if not status[f]:
                status.pop(f)
        conds = copy.deepcopy((dep.get("status") or {}).get("conditions") or [])
        if available >= want:
            set_condition(conds, "Available", "True", "MinimumReplicasAvailable",
                          "Deployment has minimum availability.", probe_time=True)
        else:
            set_condition(conds, "Available", "False", "MinimumReplicasUnavailable",
                          "Deployment does not have minimum availability.", probe_time=True)
        rs_name = new_rs["metadata"]["name"]
        done = updated == want and replicas == want and st(new_rs, "availableReplicas") >= want
        stalled = self.stalled(dep, (rs_name, replicas, updated, ready, available), done)
        if stalled:
            set_condition(conds, "Progressing", "False", "ProgressDeadlineExceeded",
                          f'ReplicaSet "{rs_name}" has timed out progressing.', probe_time=True)
        elif done:
            set_condition(conds, "Progressing", "True", "NewReplicaSetAvailable",
                          f'ReplicaSet "{rs_name}" has successfully progressed.', probe_time=True)
        else:
            set_condition(conds, "Progressing", "True", "ReplicaSetUpdated",
                          f'ReplicaSet "{rs_name}" is progressing.', probe_time=True)
        # kube orders Available before Progressing once both exist
        conds.sort(key=lambda c: {"Available": 0, "Progressing": 1}.get(c.get("type", ""), 2))
        status["conditions"] = conds
        update_status(self.store, dep, status, self.manager)


def resolve_int_or_percent(value: Any, total: int, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        exact = total * int(value[:-1]) / 100
        return int(-(-exact // 1)) if round_up else int(exact // 1)
    return int(value)


def plan_rollout(spec: dict[str, Any], want: int, new_rs: Obj, old: list[Obj], recreate: bool) -> dict[str, int]:
    """Target spec.replicas per ReplicaSet for this pass (deployment/rolling.go, recreate.go):
    RollingUpdate keeps total ≤ want + maxSurge (rounded up) and available ≥ want -
    maxUnavailable (rounded down; both 0 → 1 unavailable allowed); Recreate scales the old
    ReplicaSets to 0 and waits for their pods to go before scaling the new one up."""
    def n(rs: Obj, field: str, where: str = "status") -> int:
        return int((rs.get(where) or {}).get(field, 0))

    out: dict[str, int] = {}
    live_old = [rs for rs in old if n(rs, "replicas", "spec") or n(rs, "replicas")]
    if not live_old:
        return {new_rs["metadata"]["name"]: want}
    if recreate:
        for rs in live_old:
            out[rs["metadata"]["name"]] = 0
        if not any(n(rs, "replicas") for rs in live_old):
            out[new_rs["metadata"]["name"]] = want
        return out
    ru = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    surge = resolve_int_or_percent(ru.get("maxSurge", "25%"), want, True)
    unavailable = resolve_int_or_percent(ru.get("maxUnavailable", "25%"), want, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    total = n(new_rs, "replicas", "spec") + sum(n(rs, "replicas", "spec") for rs in live_old)
    new_target = min(want, n(new_rs, "replicas", "spec") + max(0, want + surge - total))
    out[new_rs["metadata"]["name"]] = new_target
    available = sum(min(n(rs, "replicas", "spec"), n(rs, "availableReplicas")) for rs in [new_rs] + live_old)
    removable = max(0, available - (want - unavailable))
    # old pods that are not available can always go (cleanupUnhealthyReplicas)
    for rs in sorted(live_old, key=lambda r: r["metadata"].get("creationTimestamp", "")):
        cur = n(rs, "replicas", "spec")
        unhealthy = max(0, cur - n(rs, "availableReplicas"))
        cut = min(cur, unhealthy + removable)
        removable -= max(0, cut - unhealthy)
        out[rs["metadata"]["name"]] = cur - cut
    return out


class DaemonSetController(LoopController):
    """One pod per node that the pod template fits (taints/tolerations, nodeSelector), as
    MetalLB's `speaker` and ingress-nginx's DaemonSet mode need. Pods are pinned with
    spec.nodeName (the real controller uses a node-affinity term and lets the scheduler bind;
    the outcome is the same placement). A template change replaces the pods (OnDelete aside)."""

    name = "daemonset-controller"
    manager = "kube-controller-manager"
    watches = ("DaemonSet", "Pod", "Node")
    period = 5.0

    def reconcile(self) -> None:
        from .base import DAEMONSET, NODE
        from .scheduler import fit_reason

        nodes = self.store.list(NODE)
        pods = self.store.list(POD)
        for ds in self.store.list(DAEMONSET):
            if is_terminating(ds):
                continue
            template = copy.deepcopy((ds.get("spec") or {}).get("template") or {})
            h = template_hash(template)
            owned = [p for p in pods if owned_by(p, ds)]
            probe = pod_from_template(template, ds, "probe")
            eligible = [n for n in nodes if fit_reason(probe, n, []) is None]
            names = {n["metadata"]["name"] for n in eligible}
            for p in owned:  # wrong node, outdated template → delete
                stale = (p["metadata"].get("labels") or {}).get("controller-revision-hash") != h
                if p["spec"].get("nodeName") not in names or stale:
                    try:
                        self.store.delete(POD, p["metadata"]["namespace"], p["metadata"]["name"])
                    except NotFound:
                        pass
            owned = [p for p in owned if p["spec"].get("nodeName") in names
                     and (p["metadata"].get("labels") or {}).get("controller-revision-hash") == h]
            have = {p["spec"].get("nodeName") for p in owned}
            for n in eligible:
                if n["metadata"]["name"] in have:
                    continue
                name = f"{ds['metadata']['name']}-{random_suffix(ds['metadata']['name'])}"
                pod = pod_from_template(template, ds, name)
                pod["metadata"]["labels"].update({"controller-revision-hash": h, "pod-template-generation": str(ds["metadata"].get("generation", 1))})
                pod["spec"]["nodeName"] = n["metadata"]["name"]
                create_with_status(self.store, pod, self.manager)
            ready = sum(1 for p in owned if pod_ready(p))
            status = {"currentNumberScheduled": len(owned), "desiredNumberScheduled": len(eligible),
                      "numberMisscheduled": 0, "numberReady": ready, "numberAvailable": ready,
                      "updatedNumberScheduled": len(owned), "observedGeneration": ds["metadata"].get("generation", 1)}
            if len(eligible) - ready:
                status["numberUnavailable"] = len(eligible) - ready
            update_status(self.store, ds, status, self.manager)
