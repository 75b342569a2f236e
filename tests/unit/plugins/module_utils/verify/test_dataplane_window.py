from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.podaccess import ExecResult
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import dataplane_window as dw
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from ansible_collections.kindlab.ingress.tests.unit.plugins.modules.test_ingress_dataplane_module import backends, lab
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_diagnose import pod

Obj = dict[str, Any]
Objs = list[Obj]  # `list` names the clients' method in their class bodies
Argv = list[str]
START = 1720467000.0  # 2024-07-08T19:30:00Z


class FakeClock:
    """Time moves only when the window sleeps (and by `cost` per exec: a slow read)."""

    def __init__(self, cost: float = 0.0) -> None:
        self.now, self.cost = 0.0, cost
        self.sleeps: list[float] = []

    def clock(self) -> dw.Clock:
        return dw.Clock(monotonic=lambda: self.now, wall=lambda: START + self.now, sleep=self.sleep)

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 3))
        self.now += seconds


def slices(*ips: str) -> list[Obj]:
    return [{"metadata": {"namespace": "one", "name": "web-abc", "labels": {"kubernetes.io/service-name": "web"}},
             "ports": [{"name": "http", "port": 8080}],
             "endpoints": [{"addresses": [ip], "conditions": {"ready": True}} for ip in ips]}]


class ScriptedClient:
    """The lab of test_ingress_dataplane_module (one ingress-nginx, one/test → web:80), whose
    controller pods, EndpointSlices and data planes follow SCRIPT: from second t on (the fake
    clock), {"pods": names, "ready": addresses, "routes": {pod: addresses or an ExecResult}}."""

    def __init__(self, clock: FakeClock, script: list[tuple[float, Obj]]) -> None:
        self.clock, self.script = clock, script
        self.state = lab()
        self.execs: list[tuple[float, str]] = []
        self.slice_lists = 0

    def now(self) -> Obj:
        return [step for at, step in self.script if at <= self.clock.now][-1]

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> Objs:
        s = self.state
        if kind == "EndpointSlice":
            self.slice_lists += 1
            return slices(*self.now()["ready"])
        if kind == "Pod":
            return [pod("one", name) for name in self.now()["pods"]]
        table = {"Deployment": s.workloads, "DaemonSet": [], "Service": s.services, "Node": s.nodes,
                 "Namespace": s.namespaces, "IngressClass": s.ingress_classes, "ClusterRole": s.cluster_roles,
                 "ClusterRoleBinding": s.cluster_role_bindings, "Ingress": s.ingresses}
        return list(table[kind])

    def pod_exec(self, namespace: str, name: str, container: str, command: Argv, timeout: float) -> ExecResult:
        self.execs.append((self.clock.now, name))
        self.clock.now += self.clock.cost
        routes = self.now()["routes"][name]
        return routes if isinstance(routes, ExecResult) else ExecResult(0, backends(*routes))


OLD, NEW = ("10.244.0.7", "10.244.0.8"), ("10.244.0.9", "10.244.0.10")


def targets(*ips: str) -> list[str]:
    return sorted("%s:8080" % ip for ip in ips)


def events(result: Obj) -> list[tuple[float, str, str, list[str]]]:
    return [(e["offset"], e["pod"], e["finding"], e["addresses"]) for e in result["timeline"]]


def test_a_restarted_controller_is_read_from_then_on_and_the_old_pod_ends_its_rows() -> None:
    """stale-endpoints-fixed: the app rolls out at 1 s, c1 keeps the old pods; c1 is replaced by
    c3 at 3 s, which routes to the new ones: converged after 3 s, c1's lag 2 s."""
    clock = FakeClock()
    client = ScriptedClient(clock, [
        (0, {"pods": ["c1"], "ready": OLD, "routes": {"c1": OLD}}),
        (1, {"pods": ["c1"], "ready": NEW, "routes": {"c1": OLD}}),
        (3, {"pods": ["c3"], "ready": NEW, "routes": {"c3": NEW}}),
    ])
    result = dw.run(client, Selection(), window=10, interval=1, until_converged=True, clock=clock.clock())
    assert result["rounds"] == 4 and result["converged_after"] == 3.0 and result["duration"] == 3.0
    assert [name for _t, name in client.execs] == ["c1", "c1", "c1", "c3"], "each pod read once a round, c3 from when it appears"
    assert client.slice_lists == 4, "the EndpointSlices listed once a round"
    assert events(result) == [(1.0, "one/c1", "stale", targets(*OLD)), (1.0, "one/c1", "missing", targets(*NEW))]
    assert result["timeline"][0]["time"] == "2024-07-08T19:30:01.000Z"
    assert result["timeline"][0]["ingress"] == "one/test" and result["timeline"][0]["backend"] == "web:80"
    lag = {row["pod"]: row for row in result["lag"]}
    assert lag["one/c1"]["lag"] == 2.0 and lag["one/c1"]["gone"] == 3.0 and not lag["one/c1"]["open"]
    assert lag["one/c3"]["lag"] == 0 and lag["one/c3"]["divergences"] == 0 and lag["one/c3"]["gone"] is None
    # The last round's findings: c3 matches, so the check passes.
    assert result["passed"] and result["findings"] == [] and list(result["pods"]) == ["one/c3"]
    # What was seen ready, and when: the history a later check takes as last_ready.
    assert result["last_ready"]["one/web"]["10.244.0.7:8080"] == "2024-07-08T19:30:00.000Z"
    assert result["last_ready"]["one/web"]["10.244.0.9:8080"] == "2024-07-08T19:30:03.000Z"


def test_stale_says_when_its_address_was_last_seen_ready_and_a_lag_still_open_counts_to_the_end() -> None:
    clock = FakeClock()
    client = ScriptedClient(clock, [
        (0, {"pods": ["c1", "c2"], "ready": OLD, "routes": {"c1": OLD, "c2": OLD}}),
        (2, {"pods": ["c1", "c2"], "ready": NEW, "routes": {"c1": OLD, "c2": NEW}}),
    ])
    result = dw.run(client, Selection(), window=4, interval=1, clock=clock.clock())
    assert result["rounds"] == 5 and result["converged_after"] is None and not result["passed"]
    stale = [f for f in result["findings"] if f["kind"] == "stale"]
    assert [(f["pod"], f["address"], f["since"]) for f in stale] == [
        ("one/c1", "10.244.0.7:8080", "2024-07-08T19:30:01.000Z"), ("one/c1", "10.244.0.8:8080", "2024-07-08T19:30:01.000Z")]
    assert "last seen ready at 2024-07-08T19:30:01.000Z" in stale[0]["message"]
    lag = {row["pod"]: row for row in result["lag"]}
    assert (lag["one/c1"]["lag"], lag["one/c1"]["open"], lag["one/c1"]["from_start"]) == (2.0, True, False)
    assert lag["one/c2"]["lag"] == 0 and not lag["one/c2"]["open"]
    assert clock.sleeps == [1.0, 1.0, 1.0, 1.0]


def test_the_same_pod_converges_and_changes_are_events() -> None:
    """Divergent from the first round: a changed address set is an event, a kind that ends while
    another remains is an event with no addresses, then converged with what it routes to."""
    clock = FakeClock()
    client = ScriptedClient(clock, [
        (0, {"pods": ["c1"], "ready": NEW, "routes": {"c1": OLD}}),
        (1, {"pods": ["c1"], "ready": NEW, "routes": {"c1": ("10.244.0.7",)}}),
        (2, {"pods": ["c1"], "ready": NEW, "routes": {"c1": ("10.244.0.9",)}}),
        (3, {"pods": ["c1"], "ready": NEW, "routes": {"c1": NEW}}),
    ])
    result = dw.run(client, Selection(), window=6, interval=1, until_converged=True, clock=clock.clock())
    assert events(result) == [
        (0.0, "one/c1", "stale", targets(*OLD)), (0.0, "one/c1", "missing", targets(*NEW)),
        (1.0, "one/c1", "stale", ["10.244.0.7:8080"]),
        (2.0, "one/c1", "stale", []), (2.0, "one/c1", "missing", ["10.244.0.10:8080"]),
        (3.0, "one/c1", "converged", ["10.244.0.9:8080", "10.244.0.10:8080"]),  # as it routes them
    ]
    [row] = result["lag"]
    assert (row["lag"], row["open"], row["from_start"], row["divergences"]) == (3.0, False, True, 1)
    assert result["converged_after"] == 3.0 and result["rounds"] == 4 and result["passed"]


def test_an_unread_pod_is_a_divergence_with_its_reason_until_it_is_read() -> None:
    refused = ExecResult(None, refused=403, error='pods "c1" is forbidden')
    clock = FakeClock()
    client = ScriptedClient(clock, [
        (0, {"pods": ["c1"], "ready": NEW, "routes": {"c1": refused}}),
        (2, {"pods": ["c1"], "ready": NEW, "routes": {"c1": NEW}}),
    ])
    result = dw.run(client, Selection(), window=5, interval=1, until_converged=True, clock=clock.clock())
    assert [(e["offset"], e["finding"]) for e in result["timeline"]] == [(0.0, "unread"), (2.0, "converged")]
    assert result["timeline"][0]["reason"].startswith("exec refused by the API server (403)")
    assert result["converged_after"] == 2.0


def test_no_divergence_keeps_reading_to_the_end_and_slow_rounds_do_not_wait() -> None:
    clock = FakeClock(cost=1.5)  # each exec takes 1.5 s: longer than the interval
    client = ScriptedClient(clock, [(0, {"pods": ["c1"], "ready": NEW, "routes": {"c1": NEW}})])
    result = dw.run(client, Selection(), window=4, interval=1, until_converged=True, clock=clock.clock())
    assert result["converged_after"] is None and result["timeline"] == [] and result["passed"]
    assert [t for t, _name in client.execs] == [0.0, 1.5, 3.0] and clock.sleeps == [0.0, 0.0]
    assert result["rounds"] == 3 and result["duration"] == 3.0


def test_without_a_window_it_reads_once() -> None:
    clock = FakeClock()
    client = ScriptedClient(clock, [(0, {"pods": ["c1"], "ready": NEW, "routes": {"c1": OLD}})])
    result = dw.run(client, Selection(), clock=clock.clock())
    assert result["rounds"] == 1 and clock.sleeps == [] and len(client.execs) == 1
    assert result["counts"] == {"stale": 2, "missing": 2, "unread": 0} and result["converged_after"] is None
    assert [(row["lag"], row["open"]) for row in result["lag"]] == [(0.0, True)]


def test_timeline_lag_is_the_longest_divergence_of_a_row() -> None:
    """Pure: diverged from the first round for 1 s, then again for 3 s; a second row that
    disappears while diverging ends there."""
    timeline = dw.Timeline()
    a, b = ("p/a", "c", "n/i", "web:80"), ("p/b", "c", "n/i", "web:80")
    stale = dw.Row({"stale": ("10.0.0.1:80",)})
    fine = dw.Row({}, ("10.0.0.2:80",))
    for offset, rows in [(0, {a: stale, b: fine}), (1, {a: fine, b: stale}), (2, {a: stale, b: stale}),
                         (3, {a: stale}), (5, {a: fine}), (6, {a: fine})]:
        timeline.observe(float(offset), "t%d" % offset, rows)
    timeline.finish(6.0)
    lag = {row["pod"]: row for row in timeline.lag()}
    assert (lag["p/a"]["lag"], lag["p/a"]["divergences"], lag["p/a"]["from_start"], lag["p/a"]["open"]) == (3.0, 2, True, False)
    assert (lag["p/b"]["lag"], lag["p/b"]["gone"], lag["p/b"]["from_start"], lag["p/b"]["open"]) == (2.0, 3.0, False, False)
    assert [(e["time"], e["pod"], e["finding"]) for e in timeline.events] == [
        ("t0", "p/a", "stale"), ("t1", "p/a", "converged"), ("t1", "p/b", "stale"), ("t2", "p/a", "stale"),
        ("t5", "p/a", "converged")]
    assert not timeline.diverging()


def test_the_result_has_no_top_level_started_key_which_async_status_reads_as_a_job_still_running() -> None:
    """The verify role reads ingress_dataplane through async_status, which takes a result with `started` for the
    async wrapper's "started, not finished" marker: the wait would never end (seen on kind)."""
    result = dw.watch(lambda _last: ({"pods": {}, "findings": [], "passed": True}, {}), window=0, interval=1)
    assert "started" not in result and result["window_started"].endswith("Z")
