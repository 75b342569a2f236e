# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The waiter's failure detection, with pod statuses shaped like the kubelet's (kubectl get pod -o yaml)."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError, WaitTimeout, WorkloadFailed
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.wait import (
    LOG_TAIL_LINES, container_failures, current_pods, daemonset_ready, describe_failure, wait_for_workload, workload_failure,
)

LABELS = {"app.kubernetes.io/instance": "ingress", "app.kubernetes.io/component": "controller"}
FATAL = ('F1123 14:02:11.123456       1 main.go:89] no service with name missing found in namespace two: '
         'services "missing" not found')


def crashing_pod(restarts: int = 3) -> dict[str, Any]:
    """A controller pod after its process exited 255 (klog.Fatal) a few times: phase Running,
    the container waiting in CrashLoopBackOff, its last run terminated."""
    cid = "containerd://5f1c0e9b7a"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "ingress-ingress-nginx-controller-6d9f8b7c4-x2k8q", "namespace": "two",
                     "labels": dict(LABELS, **{"pod-template-hash": "6d9f8b7c4"})},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                            "message": "containers with unready status: [controller]"}],
            "containerStatuses": [{
                "name": "controller", "ready": False, "started": False, "restartCount": restarts,
                "image": "registry.k8s.io/ingress-nginx/controller:v1.15.1", "imageID": "registry.k8s.io/ingress-nginx/controller@sha256:ab",
                "containerID": cid,
                "state": {"waiting": {"reason": "CrashLoopBackOff",
                                      "message": "back-off 40s restarting failed container=controller "
                                                 "pod=ingress-ingress-nginx-controller-6d9f8b7c4-x2k8q_two(0b6d)"}},
                "lastState": {"terminated": {"exitCode": 255, "reason": "Error", "containerID": cid,
                                             "startedAt": "2026-11-23T14:02:11Z", "finishedAt": "2026-11-23T14:02:11Z"}},
            }],
        },
    }


def pulling_pod(reason: str = "ImagePullBackOff") -> dict[str, Any]:
    return {
        "metadata": {"name": "test-7c9d-abcde", "namespace": "one", "labels": {"app": "test"}},
        "status": {"phase": "Pending", "containerStatuses": [{
            "name": "nginx", "ready": False, "started": False, "restartCount": 0, "image": "nginx:nope", "imageID": "",
            "state": {"waiting": {"reason": reason, "message": 'Back-off pulling image "nginx:nope"'}}, "lastState": {},
        }]},
    }


def running_pod() -> dict[str, Any]:
    return {
        "metadata": {"name": "ok", "namespace": "two", "labels": dict(LABELS)},
        "status": {"phase": "Running", "containerStatuses": [{
            "name": "controller", "ready": True, "started": True, "restartCount": 0,
            "state": {"running": {"startedAt": "2026-11-23T14:02:11Z"}}, "lastState": {}}]},
    }


def test_a_crash_loop_is_a_failure_with_exit_code_and_restarts() -> None:
    (f,) = container_failures(crashing_pod())
    assert (f["pod"], f["container"], f["reason"], f["exit_code"], f["terminated_reason"], f["restarts"]) == (
        "two/ingress-ingress-nginx-controller-6d9f8b7c4-x2k8q", "controller", "CrashLoopBackOff", 255, "Error", 3)


@pytest.mark.parametrize("reason", ["ImagePullBackOff", "ErrImagePull", "InvalidImageName", "CreateContainerConfigError",
                                    "CreateContainerError"])
def test_image_and_config_errors_are_failures_without_exit_code(reason: str) -> None:
    (f,) = container_failures(pulling_pod(reason))
    assert f["reason"] == reason and f["exit_code"] is None and f["message"] == 'Back-off pulling image "nginx:nope"'


def test_a_runtime_refusal_fails_from_the_second_on() -> None:
    # seen on kind: runc's "unable to freeze" once under load; the kubelet started the container again and it ran
    pod = pulling_pod("RunContainerError")
    assert container_failures(pod) == []
    pod["status"]["containerStatuses"][0]["restartCount"] = 1
    (f,) = container_failures(pod)
    assert f["reason"] == "RunContainerError" and f["restarts"] == 1


def test_starting_running_and_pending_containers_are_not_failures() -> None:
    creating = pulling_pod("ContainerCreating")
    assert container_failures(running_pod()) == []
    assert container_failures(creating) == []
    assert container_failures({"metadata": {"name": "p"}, "status": {"phase": "Pending"}}) == []


def test_a_failing_init_container_counts() -> None:
    pod = pulling_pod()
    pod["status"]["initContainerStatuses"] = pod["status"].pop("containerStatuses")
    assert [f["container"] for f in container_failures(pod)] == ["nginx"]


def test_describe_names_container_reason_exit_code_and_log() -> None:
    (f,) = container_failures(crashing_pod(restarts=1))
    f["log"] = ["I1123 main.go:205] Creating API client", FATAL]
    text = describe_failure(f)
    assert text.startswith("pod two/ingress-ingress-nginx-controller-6d9f8b7c4-x2k8q container controller: CrashLoopBackOff (back-off 40s")
    assert "last exit code 255 (Error), 1 restart;" in text and text.endswith(FATAL)


def test_daemonset_ready_needs_every_scheduled_pod() -> None:
    ds = {"metadata": {"generation": 2}, "status": {"observedGeneration": 2, "desiredNumberScheduled": 2, "numberReady": 1,
                                                    "updatedNumberScheduled": 2, "numberAvailable": 1}}
    assert daemonset_ready(ds) == (False, "1/2 ready, 2 updated, 1 available")
    ds["status"].update(numberReady=2, numberAvailable=2)
    assert daemonset_ready(ds)[0] is True
    assert daemonset_ready(None) == (False, "daemonset not found")


def rolling(replicas: int, updated: int, ready: int, available: int, generation: int = 2) -> dict[str, Any]:
    """A Deployment mid-rollout as the ReplicaSet controller reports it: status.replicas counts
    the old ReplicaSets' pods too, terminating ones included, until they are gone."""
    return {"metadata": {"generation": generation}, "spec": {"replicas": 2},
            "status": {"observedGeneration": 2, "replicas": replicas, "updatedReplicas": updated, "readyReplicas": ready,
                       "availableReplicas": available}}


def test_deployment_ready_waits_for_the_old_pods_pending_termination() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.wait import deployment_ready

    # every new pod ready and available, two old ones still terminating: not done (kubectl rollout status agrees)
    assert deployment_ready(rolling(4, 2, 4, 4)) == (False, "4/2 ready, 2 updated, 4 available, 2 old pending termination")
    assert deployment_ready(rolling(3, 2, 2, 2)) == (False, "2/2 ready, 2 updated, 2 available, 1 old pending termination")
    assert deployment_ready(rolling(2, 2, 2, 2)) == (True, "2/2 ready, 2 updated, 2 available")
    # a status without replicas (as older fakes write it) counts no old pods
    no_total = rolling(2, 2, 2, 2)
    del no_total["status"]["replicas"]
    assert deployment_ready(no_total) == (True, "2/2 ready, 2 updated, 2 available")
    # the other conditions still hold: a generation not yet observed, too few updated or ready
    assert deployment_ready(rolling(2, 2, 2, 2, generation=3))[0] is False
    assert deployment_ready(rolling(2, 1, 2, 2)) == (False, "2/2 ready, 1 updated, 2 available, 1 old pending termination")
    assert deployment_ready(rolling(2, 2, 1, 2))[0] is False
    assert deployment_ready(None) == (False, "deployment not found")


def test_the_wait_for_a_rollout_ends_once_the_old_pods_are_gone() -> None:
    class Rolling:
        def __init__(self) -> None:
            self.statuses = [rolling(4, 2, 4, 4), rolling(3, 2, 3, 3), rolling(2, 2, 2, 2)]

        def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
            return self.statuses.pop(0) if len(self.statuses) > 1 else self.statuses[0]

        def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
                 field_selector: str | None = None) -> list[dict[str, Any]]:
            return []

    clock = Clock()
    detail = wait_for_workload(Rolling(), "Deployment", "one", "shop", 60, sleep=clock.sleep, clock=clock)
    assert (detail, clock.now) == ("2/2 ready, 2 updated, 2 available", 2.0)


class Cluster:
    """A Deployment that never becomes ready, its pods, and their logs (current and previous run)."""

    def __init__(self, pods: list[dict[str, Any]], logs: dict[bool, str] | None = None) -> None:
        self.pods = pods
        self.logs = logs or {}
        self.log_calls: list[tuple[str, int | None, bool]] = []
        self.gets = 0

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
        self.gets += 1
        return {"metadata": {"name": name, "namespace": namespace, "generation": 1},
                "spec": {"replicas": 1, "selector": {"matchLabels": LABELS}},
                "status": {"observedGeneration": 1, "replicas": 1, "unavailableReplicas": 1}}

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict[str, Any]]:
        assert (kind, namespace, label_selector) == (
            "Pod", "two", "app.kubernetes.io/component=controller,app.kubernetes.io/instance=ingress")
        return copy.deepcopy(self.pods)

    def pod_log(self, namespace: str, name: str, container: str | None = None, since_seconds: int | None = None,
                tail_lines: int | None = None, previous: bool = False) -> str:
        self.log_calls.append((str(container), tail_lines, previous))
        return self.logs.get(previous, "")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def sleep(self, seconds: float) -> None:
        self.now += seconds

    def __call__(self) -> float:
        return self.now


def test_wait_fails_at_once_with_the_cause() -> None:
    cluster = Cluster([running_pod(), crashing_pod()], {False: "I1123 banner\n" + FATAL + "\n"})
    clock = Clock()
    with pytest.raises(WorkloadFailed) as info:
        wait_for_workload(cluster, "Deployment", "two", "ingress-ingress-nginx-controller", 300, sleep=clock.sleep, clock=clock)
    assert clock.now == 0.0 and cluster.gets == 1  # the first look, not the timeout
    msg = str(info.value)
    assert msg.startswith("Deployment two/ingress-ingress-nginx-controller cannot start: pod two/ingress-ingress-nginx-controller-")
    assert "CrashLoopBackOff" in msg and "last exit code 255" in msg and msg.endswith(FATAL)
    assert info.value.details["failure"]["log"] == ["I1123 banner", FATAL]
    assert cluster.log_calls == [("controller", LOG_TAIL_LINES, False)]


def test_the_previous_run_log_is_read_when_the_current_one_is_empty() -> None:
    cluster = Cluster([crashing_pod()], {True: FATAL + "\n"})
    failure = workload_failure(cluster, cluster.get("apps/v1", "Deployment", "d", "two"), log_lines=5)
    assert failure is not None and failure["log"] == [FATAL]
    assert cluster.log_calls == [("controller", 5, False), ("controller", 5, True)]


def test_a_slow_start_still_times_out_with_what_it_last_saw() -> None:
    clock = Clock()
    with pytest.raises(WaitTimeout, match=r"timed out after 10s waiting for Deployment two/c to be ready; last seen: 0/1 ready"):
        wait_for_workload(Cluster([running_pod()]), "Deployment", "two", "c", 10, sleep=clock.sleep, clock=clock)
    assert clock.now >= 10


def test_only_deployments_and_daemonsets_are_waited_for() -> None:
    with pytest.raises(K8sError, match="cannot wait for a StatefulSet: expected a Deployment or a DaemonSet"):
        wait_for_workload(Cluster([]), "StatefulSet", "two", "c", 10)


class Rollout:
    """A Deployment at revision 2 rolling out over a crash-looping revision 1 (how a fixed
    controller is installed over a broken one): ReplicaSets and pods as the API returns them."""

    def __init__(self, new_pod: dict[str, Any]) -> None:
        self.deployment = {"kind": "Deployment", "metadata": {
            "name": "ingress-ingress-nginx-controller", "namespace": "two", "uid": "d-uid",
            "annotations": {"deployment.kubernetes.io/revision": "2"}},
            "spec": {"selector": {"matchLabels": LABELS}}}
        self.replicasets = [
            {"metadata": {"name": "rs-" + h, "namespace": "two", "labels": dict(LABELS, **{"pod-template-hash": h}),
                          "annotations": {"deployment.kubernetes.io/revision": rev},
                          "ownerReferences": [{"kind": "Deployment", "uid": "d-uid", "controller": True}]}}
            for h, rev in (("6d9f8b7c4", "1"), ("7b5c9d8e1", "2"))]
        self.pods = [crashing_pod(), new_pod]

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict[str, Any]]:
        return copy.deepcopy(self.replicasets if kind == "ReplicaSet" else self.pods)

    def pod_log(self, namespace: str, name: str, container: str | None = None, since_seconds: int | None = None,
                tail_lines: int | None = None, previous: bool = False) -> str:
        return FATAL


def test_a_crashing_pod_of_the_replaced_revision_is_not_blamed() -> None:
    starting = running_pod()
    starting["metadata"]["labels"]["pod-template-hash"] = "7b5c9d8e1"
    starting["status"]["containerStatuses"][0].update(ready=False, state={"waiting": {"reason": "ContainerCreating"}})
    rollout = Rollout(starting)
    assert [p["metadata"]["labels"]["pod-template-hash"] for p in current_pods(rollout, rollout.deployment)] \
        == ["7b5c9d8e1"]
    assert workload_failure(rollout, rollout.deployment) is None


def test_a_crashing_pod_of_the_current_revision_is() -> None:
    new = crashing_pod()
    new["metadata"]["labels"]["pod-template-hash"] = "7b5c9d8e1"
    new["metadata"]["name"] = "ingress-ingress-nginx-controller-7b5c9d8e1-abcde"
    rollout = Rollout(new)
    failure = workload_failure(rollout, rollout.deployment)
    assert failure is not None and failure["pod"] == "two/ingress-ingress-nginx-controller-7b5c9d8e1-abcde"
