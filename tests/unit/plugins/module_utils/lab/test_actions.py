# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""lab_actions: every action validated before anything runs (the message names the field), the
references checked against the lab, and the actions carried out at their offsets on a fake clock
against an in-memory cluster that changes while the clock runs (rollouts that leave old pods
terminating for a while, replacement pods that become ready late)."""
from __future__ import annotations

import copy
import datetime as dt
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import ApplyResult
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.podaccess import ExecResult
from ansible_collections.kindlab.ingress.plugins.module_utils.lab import actions as act
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.actions import (
    ActionError,
    check_references,
    parse_actions,
    run_actions,
)
from ansible_collections.kindlab.ingress.tests.unit.fakes import FakeClient

Obj = dict[str, Any]
START = dt.datetime(2026, 11, 26, 12, 0, tzinfo=dt.timezone.utc)
NGINX_IMAGE = "registry.k8s.io/ingress-nginx/controller:v1.15.1"
CONTROLLER = "ingress-ingress-nginx-controller"
LOOSE = {"failureThreshold": 1000, "periodSeconds": 10}


# ---------------------------------------------------------------- parsing


def one(raw: Obj) -> act.Action:
    (action,) = parse_actions([raw])
    return action


@pytest.mark.parametrize("raw, message", [
    ("rollout one/shop", r"^lab_actions\[0\]: expected a mapping with `at` and one of rollout, scale, .*, got 'rollout one/shop'$"),
    ({"at": 0, "rollout": "one/shop", "scale": "one/shop"},
     r"^lab_actions\[0\]: expected exactly one of rollout, scale, restart_controller, delete_pods, apply, delete, freeze_sync, "
     r"resume_sync, got \['rollout', 'scale'\]$"),
    ({"at": 0}, r"^lab_actions\[0\]: expected exactly one of .*, got \['at'\]$"),
    ({"at": 0, "rollout": "one/shop", "replicas": 2},
     r"^lab_actions\[0\]: expected only the keys at, name, rollout, timeout, wait for a rollout, got \['replicas'\]$"),
    ({"at": 0, "rollout": "one/shop", "selector": "a=b"}, r"^lab_actions\[0\]: expected only the keys .* for a rollout, got \['selector'\]$"),
    ({"rollout": "one/shop"}, r"^lab_actions\[0\]\.at: expected the seconds after the window opens when it starts, got None$"),
    ({"at": -1, "rollout": "one/shop"}, r"^lab_actions\[0\]\.at: expected a number of seconds from 0 to 3600, got -1$"),
    ({"at": 3601, "rollout": "one/shop"}, r"^lab_actions\[0\]\.at: expected a number of seconds from 0 to 3600, got 3601$"),
    ({"at": True, "rollout": "one/shop"}, r"^lab_actions\[0\]\.at: expected a number of seconds .*, got True$"),
    ({"at": "5", "rollout": "one/shop"}, r"^lab_actions\[0\]\.at: expected a number of seconds .*, got '5'$"),
    ({"at": 0, "rollout": "one/shop", "wait": "yes"}, r"^lab_actions\[0\]\.wait: expected true or false, got 'yes'$"),
    ({"at": 0, "rollout": "one/shop", "timeout": 0}, r"^lab_actions\[0\]\.timeout: expected a number of seconds from 1 to 3600, got 0$"),
    ({"at": 0, "rollout": "one/shop", "name": 5}, r"^lab_actions\[0\]\.name: expected a string, got 5$"),
    ({"at": 0, "rollout": "shop"}, r"^lab_actions\[0\]\.rollout: expected namespace/name, got 'shop'$"),
    ({"at": 0, "rollout": "One/shop"}, r"^lab_actions\[0\]\.rollout: expected namespace/name, got 'One/shop'$"),
    ({"at": 0, "scale": "one/Shop_", "replicas": 1}, r"^lab_actions\[0\]\.scale: expected namespace/name, got 'one/Shop_'$"),
    ({"at": 0, "restart_controller": "ONE"}, r"^lab_actions\[0\]\.restart_controller: expected namespace/name or namespace, got 'ONE'$"),
    ({"at": 0, "freeze_sync": 5}, r"^lab_actions\[0\]\.freeze_sync: expected namespace/name or namespace, got 5$"),
    ({"at": 0, "resume_sync": ["one"]}, r"^lab_actions\[0\]\.resume_sync: expected namespace/name or namespace, got \['one'\]$"),
    ({"at": 0, "delete_pods": "one/x", "selector": "a=b"}, r"^lab_actions\[0\]\.delete_pods: expected a namespace, got 'one/x'$"),
    ({"at": 0, "delete_pods": "one"}, r"^lab_actions\[0\]\.selector: expected a label selector \(e\.g\. app\.kubernetes\.io/name=shop\), got None$"),
    ({"at": 0, "delete_pods": "one", "selector": "  "}, r"^lab_actions\[0\]\.selector: expected a label selector .*, got '  '$"),
    ({"at": 0, "scale": "one/shop"}, r"^lab_actions\[0\]\.replicas: expected a number of pods from 0 to 100, got None$"),
    ({"at": 0, "scale": "one/shop", "replicas": 101}, r"^lab_actions\[0\]\.replicas: expected a number of pods from 0 to 100, got 101$"),
    ({"at": 0, "scale": "one/shop", "replicas": True}, r"^lab_actions\[0\]\.replicas: expected .*, got True$"),
    ({"at": 0, "scale": "one/shop", "replicas": "2"}, r"^lab_actions\[0\]\.replicas: expected .*, got '2'$"),
    ({"at": 0, "apply": "kind: ConfigMap"},
     r"^lab_actions\[0\]\.apply: expected a Kubernetes object \(apiVersion, kind, metadata\.name\), got 'kind: ConfigMap'$"),
    ({"at": 0, "apply": {"kind": "ConfigMap", "metadata": {"name": "cm"}}}, r"^lab_actions\[0\]\.apply\.apiVersion: expected a string, got None$"),
    ({"at": 0, "apply": {"apiVersion": "v1", "kind": 5, "metadata": {"name": "cm"}}}, r"^lab_actions\[0\]\.apply\.kind: expected a string, got 5$"),
    ({"at": 0, "apply": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "Bad_Name"}}},
     r"^lab_actions\[0\]\.apply\.metadata\.name: expected a DNS-1123 name, got 'Bad_Name'$"),
    ({"at": 0, "delete": {"apiVersion": "v1", "kind": "ConfigMap"}}, r"^lab_actions\[0\]\.delete\.metadata\.name: expected a DNS-1123 name, got None$"),
    # metadata that is not a mapping is named like a missing name (it raised AttributeError before)
    ({"at": 0, "delete": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": "cm"}},
     r"^lab_actions\[0\]\.delete\.metadata\.name: expected a DNS-1123 name, got None$"),
    ({"at": 0, "delete": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "Bad"}}},
     r"^lab_actions\[0\]\.delete\.metadata\.namespace: expected a namespace name, got 'Bad'$"),
])
def test_every_invalid_action_names_its_field(raw: Any, message: str) -> None:
    with pytest.raises(ActionError, match=message):
        parse_actions([raw])


def test_the_index_is_that_of_the_bad_action_and_the_list_is_checked() -> None:
    with pytest.raises(ActionError, match=r"^lab_actions\[1\]\.at: "):
        parse_actions([{"at": 0, "rollout": "one/shop"}, {"at": "soon", "rollout": "one/shop"}])
    with pytest.raises(ActionError, match=r"^lab_actions: expected a list of actions, got 'one/shop'$"):
        parse_actions("one/shop")
    assert parse_actions(None) == []
    assert issubclass(ActionError, ValueError)  # an OptionError: the module fails naming it


def test_valid_actions_get_defaults_and_a_name_from_their_target() -> None:
    actions = parse_actions([
        {"at": 0, "rollout": "one/shop"},
        {"at": 1.5, "scale": "one/shop", "replicas": 0, "wait": False, "timeout": 30, "name": "scale to zero"},
        {"at": 2, "restart_controller": "one"},
        {"at": 3, "freeze_sync": "one/" + CONTROLLER},
        {"at": 4, "delete_pods": "one", "selector": " app=shop "},
        {"at": 5, "apply": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "one"}, "data": {"a": "b"}}},
        {"at": 6, "delete": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "two"}, "spec": {"finalizers": []}}},
    ])
    assert [(a.kind, a.name, a.namespace, a.target, a.wait, a.timeout) for a in actions] == [
        ("rollout", "rollout one/shop", "one", "shop", True, 120.0),
        ("scale", "scale to zero", "one", "shop", False, 30.0),
        ("restart_controller", "restart_controller one", "one", "", True, 120.0),
        ("freeze_sync", "freeze_sync one/" + CONTROLLER, "one", CONTROLLER, True, 120.0),
        ("delete_pods", "delete_pods pods app=shop in one", "one", "app=shop", True, 120.0),
        ("apply", "apply ConfigMap one/cm", "one", "", True, 120.0),
        ("delete", "delete Namespace two", "", "", True, 120.0),
    ]
    assert actions[1].replicas == 0 and actions[1].at == 1.5
    assert actions[5].manifest["data"] == {"a": "b"}  # apply: the whole object
    assert actions[6].manifest == {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "two"}}  # delete: what names it
    assert [a.machinery for a in actions] == [False, False, False, True, False, False, False]
    assert [a.where for a in actions[:2]] == ["lab_actions[0].rollout", "lab_actions[1].scale"]


def test_none_values_from_the_argument_spec_count_as_unset() -> None:
    action = one({"at": 0, "rollout": "one/shop", "scale": None, "replicas": None, "name": None, "wait": None, "timeout": None})
    assert (action.kind, action.name, action.wait, action.timeout) == ("rollout", "rollout one/shop", True, 120.0)


def test_actions_run_in_order_of_at_then_as_written() -> None:
    actions = parse_actions([
        {"at": 10, "rollout": "one/a"}, {"at": 0, "rollout": "one/b"}, {"at": 10, "rollout": "one/c"}, {"at": 5, "rollout": "one/d"},
    ])
    assert [(a.index, a.target) for a in actions] == [(1, "b"), (3, "d"), (0, "a"), (2, "c")]
    assert act.plan(actions) == [
        {"name": "rollout one/b", "kind": "rollout", "target": "one/b", "at": 0.0, "machinery": False},
        {"name": "rollout one/d", "kind": "rollout", "target": "one/d", "at": 5.0, "machinery": False},
        {"name": "rollout one/a", "kind": "rollout", "target": "one/a", "at": 10.0, "machinery": False},
        {"name": "rollout one/c", "kind": "rollout", "target": "one/c", "at": 10.0, "machinery": False},
    ]


# ---------------------------------------------------------------- references to the lab

CONTROLLERS = {"one": ["ingress_nginx"], "traefik": ["traefik"], "mixed": ["ingress_nginx", "traefik"]}


@pytest.mark.parametrize("raw, message", [
    ({"at": 0, "rollout": "two/shop"},
     r"^lab_actions\[0\]\.rollout: expected a workload of lab_workloads \(namespace/name\), one of \['one/shop'\], got 'two/shop'$"),
    ({"at": 0, "scale": "one/cart", "replicas": 1}, r"^lab_actions\[0\]\.scale: expected a workload of lab_workloads .*, got 'one/cart'$"),
    ({"at": 0, "restart_controller": "two"},
     r"^lab_actions\[0\]\.restart_controller: expected a namespace with lab controllers, one of \['mixed', 'one', 'traefik'\], got 'two'$"),
    ({"at": 0, "freeze_sync": "two/x"}, r"^lab_actions\[0\]\.freeze_sync: expected a namespace with lab controllers, .*, got 'two'$"),
    ({"at": 0, "resume_sync": "two"}, r"^lab_actions\[0\]\.resume_sync: expected a namespace with lab controllers, .*, got 'two'$"),
    ({"at": 0, "freeze_sync": "traefik"},
     r"^lab_actions\[0\]\.freeze_sync: a traefik controller cannot be frozen: Traefik's providers and its router are one process: "
     r"stopping its syncing stops its proxy too$"),
    ({"at": 0, "freeze_sync": "mixed"}, r"^lab_actions\[0\]\.freeze_sync: a traefik controller cannot be frozen: "),
])
def test_references_must_be_lab_objects(raw: Obj, message: str) -> None:
    with pytest.raises(ActionError, match=message):
        check_references(parse_actions([raw]), ["one/shop"], CONTROLLERS)


def test_references_to_the_lab_pass() -> None:
    actions = parse_actions([
        {"at": 0, "rollout": "one/shop"}, {"at": 0, "scale": "one/shop", "replicas": 3}, {"at": 0, "freeze_sync": "one"},
        {"at": 0, "resume_sync": "traefik"}, {"at": 0, "restart_controller": "traefik"}, {"at": 0, "delete_pods": "two", "selector": "a=b"},
        {"at": 0, "delete": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "elsewhere"}}},
    ])
    check_references(actions, ["one/shop"], CONTROLLERS)


# ---------------------------------------------------------------- a cluster and a clock


class Clock:
    """Monotonic seconds and a wall clock that move only when something sleeps (or a slow fake
    API call advances them); each tick lets the cluster change."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.sleeps: list[float] = []
        self.ticks: list[Callable[[float], None]] = []

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds
        for tick in list(self.ticks):
            tick(self.now)

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.advance(seconds)

    def wall(self) -> dt.datetime:
        return START + dt.timedelta(seconds=self.now - 1000.0)


def ready_status(replicas: int, old: int = 0) -> Obj:
    return {"observedGeneration": 1, "replicas": replicas + old, "readyReplicas": replicas + old,
            "updatedReplicas": replicas, "availableReplicas": replicas + old}


def deployment(ns: str, name: str, replicas: int = 2, containers: list[Obj] | None = None, labels: Obj | None = None) -> Obj:
    labels = labels or {"app": name}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"namespace": ns, "name": name, "generation": 1},
            "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                     "template": {"metadata": {"labels": dict(labels)},
                                  "spec": {"containers": containers or [{"name": "app", "image": "traefik/whoami:v1.11.0"}]}}},
            "status": ready_status(replicas)}


def pod(ns: str, name: str, labels: Obj, ip: str, ready: bool = True, phase: str = "Running") -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": ns, "name": name, "labels": dict(labels)},
            "status": {"phase": phase, "podIP": ip,
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False"}]}}


def nginx_container(liveness: Obj | None = None, readiness: Obj | None = None) -> Obj:
    container: Obj = {"name": "controller", "image": NGINX_IMAGE, "args": ["/nginx-ingress-controller", "--watch-namespace=one"]}
    if liveness is not None:
        container["livenessProbe"] = dict({"httpGet": {"path": "/healthz", "port": 10254}}, **liveness)
    if readiness is not None:
        container["readinessProbe"] = dict({"httpGet": {"path": "/healthz", "port": 10254}}, **readiness)
    return container


CONTROLLER_LABELS = {"app.kubernetes.io/instance": "ingress", "app.kubernetes.io/component": "controller"}


class Cluster(FakeClient):
    """FakeClient with what lab_actions uses besides: patch (a JSON merge patch), pod_exec, apply."""

    def __init__(self, clock: Clock) -> None:
        super().__init__(["one"])
        self.clock = clock
        self.patches: list[tuple[str, str | None, str, Obj]] = []
        self.execs: list[tuple[str, str, str, list[str], float]] = []
        self.exec_answers: dict[str, ExecResult] = {}
        self.deleted: list[str] = []
        self.on_patch: list[Callable[[Obj, Obj], None]] = []
        self.on_delete: dict[str, Callable[[str], None]] = {}
        self.delete_seconds = 0.0

    def add(self, *objs: Obj) -> None:
        for obj in objs:
            self.objects[(obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])] = copy.deepcopy(obj)

    def obj(self, kind: str, ns: str | None, name: str) -> Obj:
        return self.objects[(kind, ns, name)]

    def patch(self, api_version: str, kind: str, name: str, namespace: str | None, body: Obj) -> Obj:
        self.patches.append((kind, namespace, name, copy.deepcopy(body)))
        target = self.objects[(kind, namespace, name)]

        def merge(into: Obj, change: Obj) -> None:
            for key, value in change.items():
                if isinstance(value, dict) and isinstance(into.get(key), dict):
                    merge(into[key], value)
                else:
                    into[key] = copy.deepcopy(value)
        merge(target, body)
        for hook in self.on_patch:
            hook(target, body)
        return copy.deepcopy(target)

    def pod_exec(self, namespace: str, name: str, container: str, command: list[str], timeout: float) -> ExecResult:
        self.execs.append((namespace, name, container, list(command), timeout))
        return self.exec_answers.get(name, ExecResult(0, " 7\n"))

    def apply(self, obj: Obj, check_mode: bool = False, force: bool = True) -> ApplyResult:
        (result,) = self.apply_all([obj], check_mode)
        return result

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None, check_mode: bool = False) -> bool:
        self.deleted.append("%s %s" % (kind, name))
        self.clock.advance(self.delete_seconds)  # a slow API server
        if kind == "Pod" and namespace in self.on_delete:
            self.on_delete[namespace](name)
            return True
        return super().delete(api_version, kind, name, namespace, check_mode)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cluster(clock: Clock) -> Cluster:
    c = Cluster(clock)
    c.add(deployment("one", "shop"), pod("one", "shop-a", {"app": "shop"}, "10.244.1.6"),
          pod("one", "shop-b", {"app": "shop"}, "10.244.1.5"), pod("one", "cart-a", {"app": "cart"}, "10.244.1.9"))
    return c


def run(cluster: Cluster, clock: Clock, *raw: Obj) -> list[Obj]:
    return run_actions(cluster, parse_actions(list(raw)), sleep=clock.sleep, clock=clock, wall=clock.wall)


# ---------------------------------------------------------------- timing


def test_actions_start_at_their_offsets_late_when_the_one_before_overran(cluster: Cluster, clock: Clock) -> None:
    cluster.add({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "one", "name": "cm"}})
    cluster.delete_seconds = 3.5  # each delete takes 3.5 s: deleting two pods overruns the next action's time
    results = run(cluster, clock,
                  {"at": 20, "apply": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "one", "name": "new"}}},
                  {"at": 0, "delete_pods": "one", "selector": "app=shop", "name": "the pods go"},
                  {"at": 5, "rollout": "one/gone", "name": "a rollout of nothing"},
                  {"at": 6, "delete": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "one", "name": "cm"}}})
    assert [(r["name"], r["at"], r["offset"], r["late"], r["started"], r["ended"], r["ok"]) for r in results] == [
        ("the pods go", 0.0, 0.0, 0.0, "2026-11-26T12:00:00.000Z", "2026-11-26T12:00:07.000Z", True),
        ("a rollout of nothing", 5.0, 7.0, 2.0, "2026-11-26T12:00:07.000Z", "2026-11-26T12:00:07.000Z", False),
        ("delete ConfigMap one/cm", 6.0, 7.0, 1.0, "2026-11-26T12:00:07.000Z", "2026-11-26T12:00:10.500Z", True),
        ("apply ConfigMap one/new", 20.0, 20.0, 0.0, "2026-11-26T12:00:20.000Z", "2026-11-26T12:00:20.000Z", True),
    ]
    # it slept only for the last one, exactly until its time (no sleep for the late ones)
    assert clock.sleeps == [9.5]
    # the failing rollout did not stop the delete and the apply after it
    assert results[1]["error"] == "Deployment one/gone not found" and results[1]["detail"] == ""
    assert [r["detail"] for r in results] == ["deleted shop-a, shop-b", "", "deleted", "applied (changed)"]
    assert ("ConfigMap", "one", "cm") not in cluster.objects and ("ConfigMap", "one", "new") in cluster.objects
    assert ("Pod", "one", "cart-a") in cluster.objects and ("Pod", "one", "shop-a") not in cluster.objects
    assert [(r["kind"], r["target"], r["machinery"]) for r in results] == [
        ("delete_pods", "pods app=shop in one", False), ("rollout", "one/gone", False),
        ("delete", "ConfigMap one/cm", False), ("apply", "ConfigMap one/new", False)]


def test_an_api_error_is_recorded_in_the_result_not_raised(cluster: Cluster, clock: Clock) -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import ApiUnreachable

    def unreachable(*args: Any, **kwargs: Any) -> Any:
        raise ApiUnreachable("the API server at https://127.0.0.1:6443 did not answer")
    cluster.list = unreachable  # type: ignore[method-assign]
    (result,) = run(cluster, clock, {"at": 0, "delete_pods": "one", "selector": "app=shop"})
    assert (result["ok"], result["error"]) == (False, "the API server at https://127.0.0.1:6443 did not answer")


def test_apply_delete_and_delete_pods_say_what_they_did(cluster: Cluster, clock: Clock) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "one", "name": "cm"}, "data": {"a": "1"}}
    results = run(cluster, clock, {"at": 0, "apply": cm}, {"at": 1, "apply": cm},
                  {"at": 2, "delete": cm}, {"at": 3, "delete": cm}, {"at": 4, "delete_pods": "one", "selector": "app=nothing"})
    assert [r["detail"] for r in results] == ["applied (changed)", "applied (unchanged)", "deleted", "was absent",
                                              "deleted no pod (none matched)"]
    assert all(r["ok"] and r["error"] is None for r in results)


# ---------------------------------------------------------------- rollout and scale


def roll_out_slowly(cluster: Cluster, clock: Clock, new_ips: list[str], old_for: float) -> None:
    """On a new pod template: new pods at once, the old ones terminating for OLD_FOR seconds, and
    the Deployment's status counting them meanwhile (as the ReplicaSet controller does)."""
    def on_patch(target: Obj, body: Obj) -> None:
        if "template" not in body.get("spec", {}):
            return
        started = clock()
        old = [key for key in cluster.objects if key[0] == "Pod" and cluster.objects[key]["metadata"]["labels"].get("app") == "shop"]
        for key in old:
            cluster.objects[key]["metadata"]["deletionTimestamp"] = "2026-11-26T12:00:00Z"
        for i, ip in enumerate(new_ips):
            cluster.add(pod("one", "shop-new-%d" % i, {"app": "shop"}, ip))
        target["status"] = ready_status(len(new_ips), old=len(old))

        def tick(now: float) -> None:
            if now - started >= old_for:
                for key in old:
                    cluster.objects.pop(key, None)
                target["status"] = ready_status(len(new_ips))
                clock.ticks.remove(tick)
        clock.ticks.append(tick)
    cluster.on_patch.append(on_patch)


def test_a_rollout_records_the_pod_ips_before_and_after_once_the_old_pods_are_gone(cluster: Cluster, clock: Clock) -> None:
    roll_out_slowly(cluster, clock, ["10.244.2.8", "10.244.2.7"], old_for=3)
    (result,) = run(cluster, clock, {"at": 0, "rollout": "one/shop", "name": "the shop ships"})
    assert result["ok"], result["error"]
    assert (result["before"], result["after"]) == (["10.244.1.5", "10.244.1.6"], ["10.244.2.7", "10.244.2.8"])
    assert result["detail"] == "pod IPs 10.244.1.5, 10.244.1.6 -> 10.244.2.7, 10.244.2.8"
    # the rollout is not done while the old pods are still terminating (deployment_ready)
    assert result["ended"] == "2026-11-26T12:00:03.000Z" and clock.sleeps == [1.0, 1.0, 1.0]
    ((kind, ns, name, body),) = cluster.patches
    assert (kind, ns, name) == ("Deployment", "one", "shop")
    annotations = body["spec"]["template"]["metadata"]["annotations"]
    assert list(body) == ["spec"] and list(body["spec"]) == ["template"] and list(annotations) == [act.RESTARTED_AT]
    assert dt.datetime.fromisoformat(annotations[act.RESTARTED_AT].replace("Z", "+00:00")).tzinfo is not None
    assert annotations[act.RESTARTED_AT].endswith("Z")


def test_a_rollout_without_wait_records_only_the_pods_before(cluster: Cluster, clock: Clock) -> None:
    roll_out_slowly(cluster, clock, ["10.244.2.7"], old_for=30)
    (result,) = run(cluster, clock, {"at": 0, "rollout": "one/shop", "wait": False})
    assert result["ok"] and result["before"] == ["10.244.1.5", "10.244.1.6"] and "after" not in result
    assert result["detail"] == "pods before: 10.244.1.5, 10.244.1.6" and clock.sleeps == []


def test_a_rollout_that_does_not_finish_in_time_fails_with_what_it_last_saw(cluster: Cluster, clock: Clock) -> None:
    roll_out_slowly(cluster, clock, ["10.244.2.7", "10.244.2.8"], old_for=60)
    results = run(cluster, clock, {"at": 0, "rollout": "one/shop", "timeout": 5}, {"at": 1, "delete_pods": "one", "selector": "app=cart"})
    assert not results[0]["ok"] and results[0]["before"] == ["10.244.1.5", "10.244.1.6"] and "after" not in results[0]
    assert results[0]["error"].startswith("timed out after 5.0s waiting for Deployment one/shop to be ready; last seen: ")
    assert results[0]["error"].endswith("2 old pending termination")
    assert results[1]["ok"] and results[1]["detail"] == "deleted cart-a" and results[1]["late"] == 4.0


def test_scale_patches_the_replicas_and_records_the_pods(cluster: Cluster, clock: Clock) -> None:
    def on_patch(target: Obj, body: Obj) -> None:
        if body["spec"].get("replicas") == 3:
            cluster.add(pod("one", "shop-c", {"app": "shop"}, "10.244.3.2", ready=False))
            target["status"] = dict(ready_status(2), replicas=3, updatedReplicas=3)

            def tick(now: float) -> None:
                cluster.add(pod("one", "shop-c", {"app": "shop"}, "10.244.3.2"))
                target["status"] = ready_status(3)
            clock.ticks.append(tick)
    cluster.on_patch.append(on_patch)
    (result,) = run(cluster, clock, {"at": 0, "scale": "one/shop", "replicas": 3})
    assert cluster.patches == [("Deployment", "one", "shop", {"spec": {"replicas": 3}})]
    assert result["ok"] and result["after"] == ["10.244.1.5", "10.244.1.6", "10.244.3.2"] and clock.sleeps == [1.0]
    assert result["detail"] == "pod IPs 10.244.1.5, 10.244.1.6 -> 10.244.1.5, 10.244.1.6, 10.244.3.2"


# ---------------------------------------------------------------- freeze_sync and resume_sync


def controller_cluster(clock: Clock, container: Obj) -> Cluster:
    c = Cluster(clock)
    c.add(deployment("one", CONTROLLER, replicas=2, containers=[container], labels=CONTROLLER_LABELS),
          deployment("one", "shop"),
          pod("one", CONTROLLER + "-c1", CONTROLLER_LABELS, "10.244.1.2"), pod("one", CONTROLLER + "-c2", CONTROLLER_LABELS, "10.244.2.2"),
          pod("one", CONTROLLER + "-gone", CONTROLLER_LABELS, "10.244.2.3", phase="Succeeded"))
    return c


@pytest.mark.parametrize("liveness, readiness, probe, allowance, kubelet", [
    ({"failureThreshold": 5, "periodSeconds": 10}, LOOSE, "livenessProbe", 50, "restart it"),
    ({}, LOOSE, "livenessProbe", 30, "restart it"),  # Kubernetes' defaults: 3 x 10 s
    ({"failureThreshold": 59, "periodSeconds": 10}, None, "livenessProbe", 590, "restart it"),
    (LOOSE, {"failureThreshold": 3, "periodSeconds": 1}, "readinessProbe", 3, "take its proxy out of the Service's endpoints"),
])
def test_freeze_is_refused_while_a_probe_allows_less_than_600_s(
        clock: Clock, liveness: Obj, readiness: Obj | None, probe: str, allowance: int, kubelet: str) -> None:
    cluster = controller_cluster(clock, nginx_container(liveness, readiness))
    (result,) = run(cluster, clock, {"at": 0, "freeze_sync": "one"})
    assert not result["ok"] and result["machinery"] and cluster.execs == []
    assert result["error"] == (
        "one/%s's %s gives up after %d s (failureThreshold x periodSeconds), and a frozen controller answers no probe: the kubelet "
        "would %s during the window. Loosen it to at least 600 s in the controller's values (controller.livenessProbe, "
        "controller.readinessProbe), as test machinery" % (CONTROLLER, probe, allowance, kubelet))


def test_freeze_signals_the_go_process_in_each_running_pod_and_resume_lets_it_go_on(clock: Clock) -> None:
    # exactly 600 s is enough; no readiness probe at all is fine
    cluster = controller_cluster(clock, nginx_container({"failureThreshold": 60, "periodSeconds": 10}))
    results = run(cluster, clock, {"at": 0, "freeze_sync": "one", "name": "ingress-nginx stops syncing"}, {"at": 30, "resume_sync": "one"})
    assert [(r["ok"], r["machinery"], r["kind"]) for r in results] == [(True, True, "freeze_sync"), (True, True, "resume_sync")]
    assert results[0]["detail"] == ("stopped the controller's syncing in one/%s-c1 (pid 7), one/%s-c2 (pid 7): its proxy keeps serving"
                                    % (CONTROLLER, CONTROLLER))
    assert results[1]["detail"] == "resumed the controller's syncing in one/%s-c1 (pid 7), one/%s-c2 (pid 7)" % (CONTROLLER, CONTROLLER)
    assert [(ns, name, container, timeout) for ns, name, container, _argv, timeout in cluster.execs] == [
        ("one", CONTROLLER + "-c1", "controller", 30), ("one", CONTROLLER + "-c2", "controller", 30)] * 2
    for (_ns, _name, _container, argv, _timeout), signal in zip(cluster.execs, ["STOP", "STOP", "CONT", "CONT"]):
        assert argv[:2] == ["sh", "-c"] and argv[3] == "/nginx-ingress-controller"  # the Go controller, not nginx
        assert 'kill -%s "${p#/proc/}"' % signal in argv[2] and "/proc/[0-9]*" in argv[2]


def test_resume_does_not_check_the_probes(clock: Clock) -> None:
    cluster = controller_cluster(clock, nginx_container({}, {}))
    (result,) = run(cluster, clock, {"at": 0, "resume_sync": "one", "timeout": 10})
    assert result["ok"] and [timeout for *_rest, timeout in cluster.execs] == [10, 10]


def test_freeze_of_a_named_workload_leaves_the_others(clock: Clock) -> None:
    cluster = controller_cluster(clock, nginx_container(LOOSE, LOOSE))
    other_labels = {"app.kubernetes.io/instance": "edge"}
    cluster.add(deployment("one", "edge-controller", replicas=1, containers=[nginx_container(LOOSE)], labels=other_labels),
                pod("one", "edge-c1", other_labels, "10.244.3.3"))
    (result,) = run(cluster, clock, {"at": 0, "freeze_sync": "one/edge-controller"})
    assert result["ok"] and [name for _ns, name, *_rest in cluster.execs] == ["edge-c1"]
    (missing,) = run(cluster, clock, {"at": 0, "freeze_sync": "one/nope"})
    assert missing["error"] == "no ingress controller workload named nope in namespace one"
    (none,) = run(cluster, clock, {"at": 0, "freeze_sync": "two"})
    assert none["error"] == "no ingress controller workload in namespace two"


@pytest.mark.parametrize("answer, why", [
    (ExecResult(1, "", ""), "no process /nginx-ingress-controller"),
    (ExecResult(126, "", "sh: kill: Operation not permitted\n"), "sh: kill: Operation not permitted"),
    (ExecResult(None, error="the API server refused the exec (403): pods/exec is forbidden"),
     "the API server refused the exec (403): pods/exec is forbidden"),
])
def test_a_failing_exec_is_reported_with_why(clock: Clock, answer: ExecResult, why: str) -> None:
    cluster = controller_cluster(clock, nginx_container(LOOSE, LOOSE))
    cluster.exec_answers[CONTROLLER + "-c1"] = answer
    results = run(cluster, clock, {"at": 0, "freeze_sync": "one"}, {"at": 1, "resume_sync": "one"})
    assert results[0]["error"] == "stopping /nginx-ingress-controller in one/%s-c1 failed: %s" % (CONTROLLER, why)
    assert results[1]["error"] == "resuming /nginx-ingress-controller in one/%s-c1 failed: %s" % (CONTROLLER, why)
    assert not results[0]["ok"] and not results[1]["ok"]


def test_a_controller_without_running_pods_or_a_traefik_one_cannot_be_frozen(clock: Clock) -> None:
    cluster = Cluster(clock)
    cluster.add(deployment("one", CONTROLLER, replicas=1, containers=[nginx_container(LOOSE, LOOSE)], labels=CONTROLLER_LABELS),
                deployment("traefik", "traefik", replicas=1, containers=[{"name": "traefik", "image": "docker.io/traefik:v3.3.2"}]),
                pod("traefik", "traefik-t1", {"app": "traefik"}, "10.244.1.3"))
    results = run(cluster, clock, {"at": 0, "freeze_sync": "one"}, {"at": 0, "freeze_sync": "traefik"})
    assert results[0]["error"] == "one/%s has no Running pod" % CONTROLLER
    assert results[1]["error"] == ("a traefik controller cannot be frozen: Traefik's providers and its router are one process: "
                                   "stopping its syncing stops its proxy too")
    assert cluster.execs == []


def wait_for_state(state: Callable[[], str], wanted: tuple[str, ...], seconds: float = 5) -> str:
    """The process's state once it is one of wanted, or the last seen after seconds."""
    deadline = time.monotonic() + seconds
    seen = state()
    while seen not in wanted and time.monotonic() < deadline:
        time.sleep(0.05)
        seen = state()
    return seen


@pytest.mark.skipif(not sys.platform.startswith("linux") or not Path("/proc/self/cmdline").exists(), reason="needs Linux /proc")
def test_the_signal_script_stops_and_resumes_only_the_named_process() -> None:
    """The script lab_actions execs in the controller container, run here by sh against a
    process of this test's own (argv[0] a name nothing else has)."""
    name = "/kindlab-acttest-%d-controller" % os.getpid()
    with subprocess.Popen([name, "60"], executable="/bin/sleep") as proc:

        def state() -> str:
            return Path("/proc/%d/stat" % proc.pid).read_text().rsplit(")", 1)[1].split()[0]

        def signal(process: str, sig: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(act._signal_script(process, sig), capture_output=True, text=True, check=False, timeout=30)

        try:
            time.sleep(0.1)
            stop = signal(name, "STOP")
            assert (stop.returncode, stop.stdout.split()) == (0, [str(proc.pid)]), stop.stderr
            # kill returns once the signal is queued; the target stops when the kernel next
            # schedules it, which on a loaded machine is a moment later (seen 'R' in CI).
            assert wait_for_state(state, ("T", "t")) in ("T", "t")
            cont = signal(name, "CONT")
            assert (cont.returncode, cont.stdout.split()) == (0, [str(proc.pid)]), cont.stderr
            assert wait_for_state(state, ("S", "R")) in ("S", "R")
            absent = signal(name + "-absent", "STOP")
            assert absent.returncode != 0 and absent.stdout.strip() == ""
        finally:
            proc.kill()


# ---------------------------------------------------------------- restart_controller


def restartable(clock: Clock, kind: str = "Deployment") -> Cluster:
    """One controller pod; deleting it leaves it listed (not yet marked) for 2 s, a replacement
    appears at once, unready, and becomes ready 3 s later."""
    cluster = Cluster(clock)
    workload = deployment("one", CONTROLLER, replicas=1, containers=[nginx_container()], labels=CONTROLLER_LABELS)
    if kind == "DaemonSet":
        workload = dict(workload, kind="DaemonSet", status={"desiredNumberScheduled": 1, "numberReady": 1})
        del workload["spec"]["replicas"]
    cluster.add(workload, pod("one", CONTROLLER + "-c1", CONTROLLER_LABELS, "10.244.1.2"))

    def on_delete(name: str) -> None:
        deleted_at = clock()
        cluster.add(pod("one", CONTROLLER + "-r1", CONTROLLER_LABELS, "10.244.1.4", ready=False))

        def tick(now: float) -> None:
            if now - deleted_at >= 2:
                cluster.objects.pop(("Pod", "one", name), None)
            if now - deleted_at >= 3:
                cluster.add(pod("one", CONTROLLER + "-r1", CONTROLLER_LABELS, "10.244.1.4"))
        clock.ticks.append(tick)
    cluster.on_delete["one"] = on_delete
    return cluster


@pytest.mark.parametrize("kind", ["Deployment", "DaemonSet"])
def test_restart_controller_waits_for_a_ready_replacement_not_the_deleted_pod(clock: Clock, kind: str) -> None:
    cluster = restartable(clock, kind)
    (result,) = run(cluster, clock, {"at": 0, "restart_controller": "one", "name": "the on-call restarts the controller"})
    assert result["ok"], result["error"]
    assert result["detail"] == "deleted %s-c1; the controller is ready again" % CONTROLLER
    assert cluster.deleted == ["Pod %s-c1" % CONTROLLER]
    # the deleted pod was still listed Running and Ready for 2 s, the replacement ready after 3 s
    assert clock.sleeps == [1.0, 1.0, 1.0] and result["ended"] == "2026-11-26T12:00:03.000Z"


def test_restart_controller_times_out_when_no_replacement_gets_ready(clock: Clock) -> None:
    cluster = restartable(clock)
    (result,) = run(cluster, clock, {"at": 0, "restart_controller": "one/" + CONTROLLER, "timeout": 2})
    assert not result["ok"]
    assert result["error"] == ("timed out after 2.0s waiting for Deployment one/%s to replace its deleted pods; last seen: "
                               "0/1 replacement pod(s) ready: none" % CONTROLLER)


def test_restart_controller_without_wait_returns_after_the_delete(clock: Clock) -> None:
    cluster = restartable(clock)
    (result,) = run(cluster, clock, {"at": 0, "restart_controller": "one", "wait": False})
    assert result["ok"] and result["detail"] == "deleted %s-c1" % CONTROLLER and clock.sleeps == []


# ---------------------------------------------------------------- the module


class NoCluster:
    """A client that must not be used (check mode, invalid actions)."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError("the cluster was used: " + name)


def test_the_module_in_check_mode_returns_the_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible_collections.kindlab.ingress.plugins.modules import lab_actions
    from ansible_collections.kindlab.ingress.tests.unit.fakes import run_module, use_fake_exits

    use_fake_exits(monkeypatch, NoCluster())
    out = run_module(lab_actions.main, {"actions": [{"at": 10, "freeze_sync": "one"}, {"at": 5, "rollout": "one/shop"}],
                                        "_ansible_check_mode": True})
    assert not out.failed
    assert (out.result["changed"], out.result["failed_actions"]) == (True, 0)
    assert out.result["actions"] == [
        {"name": "rollout one/shop", "kind": "rollout", "target": "one/shop", "at": 5.0, "machinery": False},
        {"name": "freeze_sync one", "kind": "freeze_sync", "target": "one", "at": 10.0, "machinery": True}]
    bad = run_module(lab_actions.main, {"actions": [{"at": 0, "scale": "one/shop"}]})
    assert bad.failed and bad.result["msg"] == "lab_actions[0].replicas: expected a number of pods from 0 to 100, got None"


def test_the_module_fails_after_all_ran_unless_told_not_to(monkeypatch: pytest.MonkeyPatch, cluster: Cluster) -> None:
    from ansible_collections.kindlab.ingress.plugins.modules import lab_actions
    from ansible_collections.kindlab.ingress.tests.unit.fakes import run_module, use_fake_exits

    use_fake_exits(monkeypatch, cluster)
    actions = [{"at": 0, "rollout": "one/gone", "name": "ship"}, {"at": 0, "delete_pods": "one", "selector": "app=cart"}]
    out = run_module(lab_actions.main, {"actions": actions})
    assert out.failed and out.result["msg"] == "1 of 2 action(s) failed: ship: Deployment one/gone not found"
    assert out.result["failed_actions"] == 1 and [a["ok"] for a in out.result["actions"]] == [False, True]
    assert ("Pod", "one", "cart-a") not in cluster.objects  # the second ran though the first failed
    out = run_module(lab_actions.main, {"actions": actions[:1], "fail_on_error": False})
    assert not out.failed and out.result["failed_actions"] == 1 and out.result["changed"]
