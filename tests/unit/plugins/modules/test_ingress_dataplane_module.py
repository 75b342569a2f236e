from __future__ import annotations

import functools
import json
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import base
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import chart
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import LAB_VALUES
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.podaccess import ExecResult
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import dataplane_window
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import runner as verify_runner
from ansible_collections.kindlab.ingress.plugins.modules import ingress_dataplane
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, run_module, use_fake_exits
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.controllers.traefik.test_traefik import (
    traefik_pod,
    traefik_service,
    traefik_workload,
)
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_diagnose import (
    cluster_rbac,
    lb_service,
    nginx_workload,
    pod,
    scoped_args,
)

Obj = dict[str, Any]


def lab() -> base.ClusterState:
    """One scoped ingress-nginx with two replicas serving one/test → web:80 (target 8080)."""
    web = {"metadata": {"namespace": "one", "name": "web"},
           "spec": {"clusterIP": "10.96.0.30", "ports": [{"name": "http", "port": 80, "targetPort": 8080}]}}
    ing = {"metadata": {"namespace": "one", "name": "test", "annotations": {"kubernetes.io/ingress.class": "nginx"}},
           "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix",
                                                   "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}
    return base.ClusterState(
        workloads=[nginx_workload("one", scoped_args("one"))], pods=[pod("one", "c1"), pod("one", "c2")],
        services=[lb_service("one", "100.64.0.0"), web], nodes=[], namespaces=[{"metadata": {"name": "one"}}],
        ingress_classes=[{"metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx-one"}}],
        ingresses=[ing])


def backends(*ips: str) -> str:
    return json.dumps([{"name": "one-web-80", "port": 80, "endpoints": [{"address": ip, "port": "8080"} for ip in ips]}])


def traefik_lab() -> base.ClusterState:
    """The lab's Traefik (chart values with the lab's api.insecure) serving one/test → web:80 by its class."""
    cfg = chart.effective_config(LAB_VALUES, "traefik", "traefik")
    crole, crb = cluster_rbac("traefik")
    crb["subjects"][0]["name"] = "traefik"
    state = lab()
    ing = state.ingresses[0]
    ing["metadata"]["annotations"] = {}
    ing["spec"]["ingressClassName"] = "traefik"
    return base.ClusterState(
        workloads=[traefik_workload(["--entryPoints.traefik.address=:8080/tcp", "--api.insecure=true"] + cfg.args)],
        pods=[traefik_pod()], services=[traefik_service("100.64.0.9"), state.services[1]], nodes=[],
        namespaces=[{"metadata": {"name": n}} for n in ("one", "traefik")],
        ingress_classes=[{"metadata": {"name": "traefik"}, "spec": {"controller": "traefik.io/ingress-controller"}}],
        cluster_roles=[crole], cluster_role_bindings=[crb], ingresses=[ing])


class FakeClient:
    def __init__(self, execs: dict[str, ExecResult], state: base.ClusterState | None = None,
                 proxied: dict[str, Answer] | None = None) -> None:
        self.state = state or lab()
        self.execs = execs
        self.proxied = proxied or {}
        self.calls: list[Any] = []

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[Obj]:
        self.calls.append(("list", kind))
        s = self.state
        if kind == "EndpointSlice":
            return [{"metadata": {"namespace": "one", "name": "web-abc", "labels": {"kubernetes.io/service-name": "web"}},
                     "ports": [{"name": "http", "port": 8080}],
                     "endpoints": [{"addresses": ["10.244.0.7"], "conditions": {"ready": True}},
                                   {"addresses": ["10.244.0.8"], "conditions": {"ready": True}}]}]
        table = {"Deployment": s.workloads, "DaemonSet": [], "Pod": s.pods, "Service": s.services, "Node": s.nodes,
                 "Namespace": s.namespaces, "IngressClass": s.ingress_classes, "ClusterRole": s.cluster_roles,
                 "ClusterRoleBinding": s.cluster_role_bindings, "Ingress": s.ingresses}
        return [i for i in table[kind] if namespace is None or i["metadata"].get("namespace") == namespace]

    def pod_exec(self, namespace: str, name: str, container: str, command: list[str], timeout: float) -> ExecResult:
        self.calls.append(("exec", namespace, name, container, tuple(command), timeout))
        return self.execs[name]

    def pod_proxy_get(self, namespace: str, name: str, port: int, path: str, query: Any, timeout: float) -> Answer:
        self.calls.append(("proxy", namespace, name, port, path))
        return self.proxied[name]


def run(args: dict[str, Any], client: FakeClient, monkeypatch: pytest.MonkeyPatch) -> Exit:
    use_fake_exits(monkeypatch, client)
    return run_module(ingress_dataplane.main, args)


def test_up_to_date_replicas_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient({"c1": ExecResult(0, backends("10.244.0.7", "10.244.0.8")),
                         "c2": ExecResult(0, backends("10.244.0.8", "10.244.0.7"))})
    r = run({"timeout": 3}, client, monkeypatch)
    assert not r.failed and r.result["passed"] and r.result["changed"] is False
    assert [c for c in client.calls if c[0] == "exec"] == [
        ("exec", "one", n, "controller", ("/dbg", "backends", "all"), 3.0) for n in ("c1", "c2")]
    assert sum(1 for c in client.calls if c == ("list", "EndpointSlice")) == 1


def test_a_stale_replica_fails_and_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient({"c1": ExecResult(0, backends("10.244.0.7", "10.244.0.8")), "c2": ExecResult(0, backends("10.244.0.4"))})
    r = run({"last_ready": {"one/web": {"10.244.0.4:8080": "2024-07-08T19:00:00Z"}}}, client, monkeypatch)
    assert r.failed and r.result["msg"].startswith("ingress_dataplane: one/c2 routes one/test backend web:80 to 10.244.0.4:8080")
    assert r.result["counts"] == {"stale": 1, "missing": 2, "unread": 0}
    assert {f["pod"] for f in r.result["findings"]} == {"one/c2"}


def test_a_refused_exec_is_unread_and_fails_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    refused = ExecResult(None, refused=403, error='pods "c1" is forbidden: cannot create resource "pods/exec"')
    ok = ExecResult(0, backends("10.244.0.7", "10.244.0.8"))
    r = run({"fail_on": ["stale", "missing"]}, FakeClient({"c1": refused, "c2": ok}), monkeypatch)
    assert not r.failed and r.result["passed"] and r.result["counts"]["unread"] == 1
    assert r.result["pods"]["one/c1"]["unread"].startswith("exec refused by the API server (403)")
    r = run({}, FakeClient({"c1": refused, "c2": ok}), monkeypatch)
    assert r.failed and "could not be read: exec refused" in r.result["msg"]


@pytest.mark.parametrize("answer, why, fix", [
    (Answer(404, "404 page not found\n"), "the API is off or not on port 8080: HTTP 404: 404 page not found",
     "turn the API on: chart values api.insecure: true (arg --api.insecure=true)"),
    (Answer(403, error='pods "traefik-abc" is forbidden: cannot get resource "pods/proxy"'),
     "pod proxy refused by the API server (403)", "grant the reader get on pods/proxy in namespace traefik"),
])
def test_a_traefik_whose_api_is_off_or_refused_is_unread_and_fails_when_asked(
        answer: Answer, why: str, fix: str, monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient({}, traefik_lab(), {"traefik-abc": answer})
    r = run({"fail_on": ["unread"]}, client, monkeypatch)
    assert r.failed and r.result["msg"].startswith("ingress_dataplane: traefik/traefik-abc (traefik) could not be read: " + why)
    assert fix in r.result["msg"] and r.result["counts"] == {"stale": 0, "missing": 0, "unread": 1}
    [finding] = r.result["findings"]
    assert finding["reason"].startswith(why) and finding["fix"].startswith(fix) and finding["ingresses"] == ["one/test"]
    assert [c for c in client.calls if c[0] == "proxy"] == [("proxy", "traefik", "traefik-abc", 8080, "/api/http/services")]
    r = run({"fail_on": ["stale", "missing"]}, FakeClient({}, traefik_lab(), {"traefik-abc": answer}), monkeypatch)
    assert not r.failed and r.result["passed"] and r.result["counts"]["unread"] == 1


def test_a_readable_traefik_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    page = json.dumps([{"name": "one-web-80@kubernetes", "loadBalancer": {"servers": [
        {"url": "http://10.244.0.7:8080"}, {"url": "http://10.244.0.8:8080"}]}}])
    r = run({}, FakeClient({}, traefik_lab(), {"traefik-abc": Answer(200, page, headers=(("x-next-page", "1"),))}), monkeypatch)
    assert not r.failed and r.result["passed"] and r.result["pods"]["traefik/traefik-abc"]["backends"][0]["routed"] == [
        "10.244.0.7:8080", "10.244.0.8:8080"]


def test_a_window_reads_every_pod_each_round(monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient({"c1": ExecResult(0, backends("10.244.0.7", "10.244.0.8")), "c2": ExecResult(0, backends("10.244.0.4"))})
    # A clock that moves only when the window sleeps: on a loaded machine a real round can outlast
    # the interval, and the window then (rightly) reads fewer rounds.
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds

    clock = dataplane_window.Clock(monotonic=lambda: now[0], wall=lambda: 1_800_000_000.0 + now[0], sleep=sleep)
    monkeypatch.setattr(verify_runner, "dataplane_run", functools.partial(dataplane_window.run, clock=clock))
    r = run({"window": 0.4, "interval": 0.4, "fail_on": []}, client, monkeypatch)
    assert not r.failed and r.result["rounds"] == 2 and r.result["converged_after"] is None
    assert [c[2] for c in client.calls if c[0] == "exec"] == ["c1", "c2", "c1", "c2"]
    assert [(e["pod"], e["finding"]) for e in r.result["timeline"]] == [("one/c2", "stale"), ("one/c2", "missing")]
    lag = {row["pod"]: (row["open"], row["from_start"]) for row in r.result["lag"]}
    assert lag == {"one/c1": (False, False), "one/c2": (True, True)}
    assert set(r.result["last_ready"]["one/web"]) == {"10.244.0.7:8080", "10.244.0.8:8080"}


@pytest.mark.parametrize("args, message", [
    ({"timeout": 0}, "timeout: expected a positive number"),
    ({"window": -1}, "window: expected seconds >= 0"),
    ({"window": 5, "interval": 0}, "interval: expected a positive number"),
    ({"until_converged": True}, "until_converged: needs a window"),
    ({"last_ready": {"web": {"10.0.0.1:80": "now"}}}, "last_ready: expected namespace/service"),
])
def test_bad_options_fail_before_a_request(args: dict[str, Any], message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient({})
    r = run(args, client, monkeypatch)
    assert r.failed and r.result["msg"].startswith(message) and client.calls == []
