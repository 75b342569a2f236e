"""The kubelets' container side: start the containers of pods bound to the twin's nodes
(kwok plays the rest of each kubelet: node status, leases, the log endpoint, pod deletion).

A container comes up unless its image's start-up check fails (images.startup); a failing
container is shown as kubelet shows it: phase Running, Ready False (ContainersNotReady),
state.waiting reason CrashLoopBackOff, lastState.terminated with the exit code, and a
restartCount that grows on kubelet's back-off (10 s doubling to 5 min, divided by
time_scale). Each restart re-runs the check, so fixing the cause (e.g. creating the missing
publish Service) lets the next restart succeed. Each run has its own log: the container's log
is that of its last run (what the kubelet serves for a container waiting to restart), and
``previous=true`` serves the run before it (podlogs.py; kwok serves the files).
"""
from __future__ import annotations

import time
from typing import Any

from kindlab_twin import ipam
from kindlab_twin.contract import Conflict, Obj
from kindlab_twin.podlogs import PodLogFiles

from . import images
from .base import NODE, POD, LoopEmulation, is_terminating, now_rfc3339

BACKOFF_START = 10.0
BACKOFF_MAX = 300.0


def image_id(image: str) -> str:
    ref = image if "/" in image.split(":", 1)[0] else f"docker.io/library/{image}"
    return ref if "@" in ref else f"{ref}@sha256:{'0' * 64}"


def running_status(pod: Obj, node: Obj, pod_ip: str, failures: dict[str, images.StartResult],
                   restarts: dict[str, int], started_at: str) -> dict[str, Any]:
    host_ip = next((a["address"] for a in node.get("status", {}).get("addresses") or []
                    if a.get("type") == "InternalIP"), "")
    ts = now_rfc3339()
    statuses = []
    for c in pod.get("spec", {}).get("containers") or []:
        name = c["name"]
        cs: dict[str, Any] = {
            "name": name, "image": c.get("image", ""), "imageID": image_id(str(c.get("image", ""))),
            "containerID": f"containerd://{images.stable_id(pod, name, restarts.get(name, 0))}",
            "restartCount": restarts.get(name, 0),
        }
        fail = failures.get(name)
        if fail is None:
            cs.update(ready=True, started=True, state={"running": {"startedAt": started_at}})
        else:
            back = min(BACKOFF_MAX, BACKOFF_START * (2 ** max(0, restarts.get(name, 0) - 1)))
            cs.update(ready=False, started=False,
                      state={"waiting": {"reason": "CrashLoopBackOff",
                                         "message": f"back-off {int(back)}s restarting failed container={name} "
                                                    f"pod={pod['metadata']['name']}_{pod['metadata'].get('namespace', '')}"
                                                    f"({pod['metadata'].get('uid', '')})"}},
                      lastState={"terminated": {"exitCode": fail.exit_code, "reason": "Error",
                                                "startedAt": ts, "finishedAt": ts,
                                                "containerID": cs["containerID"]}})
        statuses.append(cs)
    ready = not failures
    not_ready = ", ".join(sorted(failures))
    conds = [
        {"type": "PodReadyToStartContainers", "status": "True", "lastProbeTime": None, "lastTransitionTime": started_at},
        {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": started_at},
        {"type": "Ready", "status": "True" if ready else "False", "lastProbeTime": None, "lastTransitionTime": ts,
         **({} if ready else {"reason": "ContainersNotReady", "message": f"containers with unready status: [{not_ready}]"})},
        {"type": "ContainersReady", "status": "True" if ready else "False", "lastProbeTime": None, "lastTransitionTime": ts,
         **({} if ready else {"reason": "ContainersNotReady", "message": f"containers with unready status: [{not_ready}]"})},
        {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": started_at},
    ]
    ip = host_ip if pod.get("spec", {}).get("hostNetwork") else pod_ip
    return {
        "phase": "Running", "conditions": conds, "hostIP": host_ip, "hostIPs": [{"ip": host_ip}],
        "podIP": ip, "podIPs": [{"ip": ip}], "startTime": started_at,
        "containerStatuses": statuses, "qosClass": pod.get("status", {}).get("qosClass", "BestEffort"),
    }


class Kubelet(LoopEmulation):
    name = "kubelet"
    manager = "kubelet"
    watches = ("Pod", "Node", "Service", "Namespace", "ClusterRoleBinding", "RoleBinding")
    period = 2.0

    def setup(self) -> None:
        assert self.cluster is not None
        self.logs = self.cluster.pod_logs
        # uid -> {container: next restart due (monotonic)}; restart counts live in the pod status
        self._next_try: dict[str, float] = {}
        self._known: set[tuple[str, str]] = set()

    def reconcile(self) -> None:
        nodes = {n["metadata"]["name"]: n for n in self.store.list(NODE)}
        pods = self.store.list(POD)
        used: dict[str, set[str]] = {}
        for p in pods:
            if p.get("status", {}).get("podIP") and not p.get("spec", {}).get("hostNetwork"):
                used.setdefault(p["spec"].get("nodeName", ""), set()).add(p["status"]["podIP"])
        live = set()
        for pod in pods:
            node_name = pod.get("spec", {}).get("nodeName")
            live.add((pod["metadata"].get("namespace", ""), pod["metadata"]["name"]))
            if not node_name or node_name not in nodes or is_terminating(pod):
                continue
            self.sync_pod(pod, nodes[node_name], used.setdefault(node_name, set()))
        uids = {p["metadata"].get("uid") or p["metadata"]["name"] for p in pods}
        for uid in [u for u in self._next_try if u not in uids]:  # deleted pods: no more restarts
            del self._next_try[uid]
        for ns, name in self._known - live:  # logs go with the pod
            self.logs.clear(ns, name)
        self._known = live

    def sync_pod(self, pod: Obj, node: Obj, used_ips: set[str]) -> None:
        status = pod.get("status") or {}
        uid = pod["metadata"].get("uid") or pod["metadata"]["name"]
        prev = {c["name"]: c for c in status.get("containerStatuses") or []}
        crashing = [n for n, c in prev.items() if "waiting" in (c.get("state") or {})]
        if status.get("phase") == "Running" and not crashing:
            return
        if crashing and time.monotonic() < self._next_try.get(uid, 0.0):
            return
        pod_ip = status.get("podIP") or ipam.next_pod_ip(node.get("spec", {}).get("podCIDR", "10.244.0.0/24"), used_ips)
        used_ips.add(pod_ip)
        pod.setdefault("status", {})["podIP"] = pod_ip
        pod["status"]["hostIP"] = next((a["address"] for a in node.get("status", {}).get("addresses") or []
                                        if a.get("type") == "InternalIP"), "")
        ns, name = pod["metadata"].get("namespace", ""), pod["metadata"]["name"]
        if not status.get("startTime"):
            self.serve_logs(pod)
        failures: dict[str, images.StartResult] = {}
        restarts = {n: int(c.get("restartCount", 0)) for n, c in prev.items()}
        for c in pod.get("spec", {}).get("containers") or []:
            if c["name"] in crashing:  # a new run of the container: a new log, the last one kept as previous
                self.logs.restart(ns, name, c["name"])
            result = images.startup(self.store, pod, c)
            for line in result.logs:
                self.logs.append(ns, name, line, container=c["name"])
            if not result.ok:
                failures[c["name"]] = result
                if c["name"] in prev:  # a previous attempt existed: this is a restart
                    restarts[c["name"]] = restarts.get(c["name"], 0) + 1
        started = status.get("startTime") or now_rfc3339()
        new_status = running_status(pod, node, pod_ip, failures, restarts, started)
        if failures:
            n = max(restarts.values() or [0])
            self._next_try[uid] = time.monotonic() + self.scaled(min(BACKOFF_MAX, BACKOFF_START * 2 ** n))
        else:
            self._next_try.pop(uid, None)
        pod["status"] = new_status
        self.store.update(pod, self.manager, subresource="status")

    def serve_logs(self, pod: Obj) -> None:
        """A new pod's log files, and the kwok Logs object through which `kubectl logs` reads them."""
        if not isinstance(self.logs, PodLogFiles):
            return
        self.logs.open_pod(pod)
        try:
            self.store.create(self.logs.logs_object(pod), self.manager)
        except Conflict:
            pass

    def next_wait(self) -> float:
        if not self._next_try:
            return self.idle_wait()
        soonest = min(self._next_try.values()) - time.monotonic()
        return max(0.005, min(self.idle_wait(), soonest))
