# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Waiting for the cluster: a poll with a timeout that says what it last saw (wait_until),
Deployment and DaemonSet readiness, and pods that will not start by waiting (crash loops, image
and config errors), which end a workload's wait at once with their reason and last log lines."""
from __future__ import annotations

import time
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError, WaitTimeout, WorkloadFailed
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import Obj, selector_string


def wait_until(
    check: Callable[[], tuple[bool, str]],
    timeout: float,
    what: str,
    interval: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> str:
    """Poll check() until it returns (True, detail); raise WaitTimeout naming `what` and
    the last detail seen. Returns the final detail."""
    deadline = clock() + timeout
    while True:
        done, detail = check()
        if done:
            return detail
        if clock() >= deadline:
            raise WaitTimeout("timed out after %ss waiting for %s; last seen: %s" % (timeout, what, detail))
        sleep(interval)


def deployment_ready(deployment: Obj | None) -> tuple[bool, str]:
    """(ready, detail) for a Deployment: all desired replicas updated and available."""
    if deployment is None:
        return False, "deployment not found"
    want = deployment.get("spec", {}).get("replicas", 1)
    status = deployment.get("status", {}) or {}
    gen_ok = status.get("observedGeneration", 0) >= deployment.get("metadata", {}).get("generation", 0)
    ready = status.get("readyReplicas", 0) or 0
    updated = status.get("updatedReplicas", 0) or 0
    available = status.get("availableReplicas", 0) or 0
    total = status.get("replicas", 0) or 0
    detail = "%s/%s ready, %s updated, %s available" % (ready, want, updated, available)
    if total > updated:
        # A rollout is done once the old ReplicaSets are gone (`kubectl rollout status`): until
        # then ready counts old pods too.
        detail += ", %d old pending termination" % (total - updated)
    return gen_ok and ready >= want and updated >= want and available >= want and total <= updated, detail


def daemonset_ready(daemonset: Obj | None) -> tuple[bool, str]:
    """(ready, detail) for a DaemonSet: every scheduled pod updated and available."""
    if daemonset is None:
        return False, "daemonset not found"
    status = daemonset.get("status", {}) or {}
    gen_ok = status.get("observedGeneration", 0) >= daemonset.get("metadata", {}).get("generation", 0)
    want = status.get("desiredNumberScheduled", 0) or 0
    ready = status.get("numberReady", 0) or 0
    updated = status.get("updatedNumberScheduled", 0) or 0
    available = status.get("numberAvailable", 0) or 0
    detail = "%s/%s ready, %s updated, %s available" % (ready, want, updated, available)
    return gen_ok and want > 0 and ready >= want and updated >= want and available >= want, detail


# ---------------------------------------------------------------- pods that will not start

# The kubelet's waiting reasons for a container that waiting longer will not bring up: it
# crashed and is backing off, its image cannot be pulled or named, or the runtime refused it.
FAILING_WAIT_REASONS = (
    "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError",
    "CreateContainerError", "InvalidImageName", "RunContainerError",
)
# A runtime that refused to start a container once may have hiccupped (runc's "unable to freeze" on a
# loaded cgroup v1 host, seen on kind in CI): the kubelet starts it again. A second refusal is not one.
RETRIED_WAIT_REASONS = ("RunContainerError",)
LOG_TAIL_LINES = 10


def container_failures(pod: Obj) -> list[Obj]:
    """The containers of a pod (init containers first) that will not come up by waiting, as
    the kubelet reports them: the waiting reason and message, the restart count, and the exit
    code and reason of the last terminated run. Pure: no logs."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    out: list[Obj] = []
    for field_name in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(field_name) or []:
            waiting = (cs.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") not in FAILING_WAIT_REASONS:
                continue
            if waiting["reason"] in RETRIED_WAIT_REASONS and not cs.get("restartCount"):
                continue  # the first refusal: the kubelet tries again
            last = (cs.get("lastState") or {}).get("terminated") or {}
            out.append({
                "pod": "%s/%s" % (meta.get("namespace", ""), meta.get("name", "")),
                "container": str(cs.get("name", "")),
                "reason": str(waiting["reason"]),
                "message": str(waiting.get("message") or ""),
                "restarts": int(cs.get("restartCount") or 0),
                "exit_code": last.get("exitCode"),
                "terminated_reason": last.get("reason"),
                "log": [],
            })
    return out


def describe_failure(failure: Obj) -> str:
    """One line for the user: which container, the kubelet's reason, exit code, last log lines."""
    text = "pod %s container %s: %s" % (failure["pod"], failure["container"], failure["reason"])
    if failure.get("message"):
        text += " (%s)" % failure["message"]
    if failure.get("exit_code") is not None:
        text += ", last exit code %s" % failure["exit_code"]
        if failure.get("terminated_reason"):
            text += " (%s)" % failure["terminated_reason"]
    if failure.get("restarts"):
        text += ", %d restart%s" % (failure["restarts"], "" if failure["restarts"] == 1 else "s")
    if failure.get("log"):
        text += "; last log lines: " + " | ".join(failure["log"])
    return text


REVISION = "deployment.kubernetes.io/revision"


def current_pods(client: Any, workload: Obj) -> list[Obj]:
    """The workload's pods; for a Deployment only those of its current ReplicaSet (the one whose
    revision annotation is the Deployment's, by its pod-template-hash label), so that a pod of
    the revision being replaced - the crash-looping one a fix rolls out over - is not blamed.
    All pods matching the selector while no ReplicaSet carries the revision yet."""
    meta = workload.get("metadata") or {}
    selector = selector_string((workload.get("spec") or {}).get("selector"))
    if not selector:
        return []
    namespace = meta.get("namespace")
    pods: list[Obj] = client.list("v1", "Pod", namespace=namespace, label_selector=selector)
    revision = (meta.get("annotations") or {}).get(REVISION)
    if workload.get("kind") != "Deployment" or not revision:
        return pods
    hashes = {
        (rs.get("metadata", {}).get("labels") or {}).get("pod-template-hash")
        for rs in client.list("apps/v1", "ReplicaSet", namespace=namespace, label_selector=selector)
        if (rs.get("metadata", {}).get("annotations") or {}).get(REVISION) == revision
        and any(o.get("uid") == meta.get("uid") for o in rs.get("metadata", {}).get("ownerReferences") or [])
    } - {None}
    if not hashes:
        return pods
    return [p for p in pods if (p.get("metadata", {}).get("labels") or {}).get("pod-template-hash") in hashes]


def workload_failure(client: Any, workload: Obj, log_lines: int = LOG_TAIL_LINES) -> Obj | None:
    """The first container of the workload's pods that will not start (container_failures),
    with the last lines of its log; None while nothing has failed. The log is that of the
    last run (the kubelet serves it for a container waiting to restart), else the previous one."""
    for pod in current_pods(client, workload):
        for failure in container_failures(pod):
            ns, _sep, name = failure["pod"].partition("/")
            if log_lines > 0:
                text = client.pod_log(ns, name, failure["container"], tail_lines=log_lines)
                if not text.strip() and failure.get("exit_code") is not None:
                    text = client.pod_log(ns, name, failure["container"], tail_lines=log_lines, previous=True)
                failure["log"] = [line for line in text.splitlines() if line.strip()][-log_lines:]
            return failure
    return None


_READY = {"Deployment": deployment_ready, "DaemonSet": daemonset_ready}


def wait_for_workload(
    client: Any,
    kind: str,
    namespace: str,
    name: str,
    timeout: float,
    log_lines: int = LOG_TAIL_LINES,
    interval: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    what: str | None = None,
) -> str:
    """Wait until a Deployment or DaemonSet is ready. A pod that will not start by waiting
    (crash loop, image or config error) ends the wait at once with WorkloadFailed, naming
    the container, the kubelet's reason, the exit code and the last log lines. `what` names
    the workload in messages (default "Kind namespace/name")."""
    if kind not in _READY:
        raise K8sError("cannot wait for a %s: expected a Deployment or a DaemonSet" % kind)
    what = what or "%s %s/%s" % (kind, namespace, name)

    def check() -> tuple[bool, str]:
        obj = client.get("apps/v1", kind, name, namespace)
        ready, detail = _READY[kind](obj)
        if ready or obj is None:
            return ready, detail
        failure = workload_failure(client, obj, log_lines)
        if failure is not None:
            raise WorkloadFailed("%s cannot start: %s" % (what, describe_failure(failure)), failure=failure)
        return False, detail

    return wait_until(check, timeout, what + " to be ready", interval=interval, sleep=sleep, clock=clock)
