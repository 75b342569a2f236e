"""Who wrote each status change (verify/writers.py): the field manager, the addresses each
controller publishes (as diagnose reads them) and the controllers' log lines, never the
nearest line alone."""
from __future__ import annotations

import copy
import datetime as dt
from typing import Any, Iterator

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import base
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import chart as traefik_chart
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.attribution import LogEntry, change_writer, parse_log_line, status_managers
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.options import parse_options
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.run import run
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.tracker import Tracker
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import writers as w
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_diagnose import (
    cluster_rbac,
    lb_service,
    nginx_workload,
    pod,
    puzzle,
)
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_status import ing, line

Obj = dict[str, Any]
T0 = dt.datetime(2026, 11, 21, 23, 40, 0, tzinfo=dt.timezone.utc)
NODE_IP = "172.18.0.2"


def at(seconds: float) -> str:
    return (T0 + dt.timedelta(seconds=seconds)).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def change(seconds: float, new: list[str], manager: str = "nginx-ingress-controller", ingress: str = "apps/web") -> Obj:
    return {"time": at(seconds), "t": seconds, "ingress": ingress, "event": "MODIFIED", "old": [], "new": new,
            "manager": manager, "operation": "Update", "pod": None, "attributed_by": None, "candidates": []}


def traefik_line(pod_ref: str, seconds: float, ingress: str = "web", namespace: str = "apps") -> LogEntry:
    """Traefik's "Updated ingress status" line: it names the Ingress, never the address."""
    when = (T0 + dt.timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")
    entry = parse_log_line(pod_ref, "%s INF Updated ingress status ingress=%s namespace=%s" % (when, ingress, namespace), 2026)
    assert entry is not None and entry.new is None and entry.manager == "traefik"
    return entry


def nginx_line(pod_ref: str, seconds: float, new: str, namespace: str = "apps") -> LogEntry:
    clock = (T0 + dt.timedelta(seconds=seconds)).strftime("%H:%M:%S.%f")
    entry = parse_log_line(pod_ref, line(clock, namespace, new).replace('ingress="test"', 'ingress="web"'), 2026)
    assert entry is not None and entry.new == (new,)
    return entry


# ---------------------------------------------------------------- two Traefik installs, one field manager


def traefik_install(ns: str, ip: str | None) -> tuple[Obj, Obj, Obj]:
    """The chart's default install in NS: its ingress provider publishes its own LoadBalancer Service."""
    labels = {"app.kubernetes.io/name": "traefik", "app.kubernetes.io/instance": "traefik-" + ns}
    cfg = traefik_chart.effective_config({}, "traefik", ns)
    workload = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "traefik", "namespace": ns},
                "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                    "serviceAccountName": "traefik",
                    "containers": [{"name": "traefik", "image": "docker.io/traefik:v3.7.13", "args": cfg.args}]}}}}
    p = pod(ns, "traefik-5f6d7-" + ns[-1] * 5)
    p["metadata"]["labels"] = dict(labels)
    p["spec"]["containers"] = copy.deepcopy(workload["spec"]["template"]["spec"]["containers"])
    svc = {"metadata": {"namespace": ns, "name": "traefik"},
           "spec": {"type": "LoadBalancer", "clusterIP": "10.96.1.1", "selector": dict(labels)},
           "status": {"loadBalancer": {"ingress": [{"ip": ip}]} if ip else {}}}
    return workload, p, svc


def two_traefiks(ip_a: str | None = "100.64.0.10", ip_b: str | None = "100.64.0.20") -> base.ClusterState:
    a, b = traefik_install("edge-a", ip_a), traefik_install("edge-b", ip_b)
    return base.ClusterState(workloads=[a[0], b[0]], pods=[a[1], b[1]], services=[a[2], b[2]],
                             namespaces=[{"metadata": {"name": n}} for n in ("edge-a", "edge-b", "apps")])


POD_A, POD_B = "edge-a/traefik-5f6d7-aaaaa", "edge-b/traefik-5f6d7-bbbbb"


def test_the_publishers_are_what_diagnose_reads() -> None:
    pubs = w.publishers_of(two_traefiks())
    assert [(p.controller, p.workload, p.field_manager, p.pods, p.addresses, p.source) for p in pubs] == [
        ("edge-a/traefik@kubernetes", "edge-a/traefik", "traefik", (POD_A,), ("100.64.0.10",), "service"),
        ("edge-b/traefik@kubernetes", "edge-b/traefik", "traefik", (POD_B,), ("100.64.0.20",), "service"),
    ]


def test_two_installs_sharing_a_manager_with_interleaved_lines_are_told_apart_by_address() -> None:
    """The issue's fight: both write as `traefik`, each logs "Updated ingress status" without the
    address, and the nearest line is often the other install's. The address decides every row."""
    timeline, entries = [], []
    for i in range(8):
        pod_ref, ip = (POD_A, "100.64.0.10") if i % 2 == 0 else (POD_B, "100.64.0.20")
        other = POD_B if pod_ref == POD_A else POD_A
        timeline.append(change(10.0 * i + 0.9, [ip], manager="traefik"))
        entries.append(traefik_line(pod_ref, 10.0 * i))  # its own line, 0.9 s before the change
        entries.append(traefik_line(other, 10.0 * i + 1))  # the other's re-sync, nearer in time
    evidence = w.Evidence(w.publishers_of(two_traefiks()))
    w.attribute(timeline, entries, evidence)
    assert [(c["pod"], c["attributed_by"], c["candidates"]) for c in timeline] == [
        (POD_A if i % 2 == 0 else POD_B, "address", []) for i in range(8)]
    # What the nearest line alone would have said: the other install, every time.
    nearest = [min((e for e in entries if e.when), key=lambda e: abs((e.when - T0).total_seconds() - c["t"])).pod
               for c in timeline]
    assert nearest == [POD_B if i % 2 == 0 else POD_A for i in range(8)]


def test_an_address_only_one_install_publishes_never_goes_to_the_other_even_when_only_the_other_logged() -> None:
    timeline = [change(5.0, ["100.64.0.20"], manager="traefik")]
    w.attribute(timeline, [traefik_line(POD_A, 5)], w.Evidence(w.publishers_of(two_traefiks())))
    assert (timeline[0]["pod"], timeline[0]["attributed_by"]) == (POD_B, "address")


def test_a_service_address_seen_only_at_the_end_counts() -> None:
    """A LoadBalancer Service gets its address late: the snapshots are merged."""
    start, end = w.publishers_of(two_traefiks(ip_b=None)), w.publishers_of(two_traefiks())
    assert start[1].addresses is None  # pending: Traefik leaves the status alone
    merged = w.merge([start, end])
    assert [p.addresses for p in merged] == [("100.64.0.10",), ("100.64.0.20",)]
    timeline = [change(5.0, ["100.64.0.20"], manager="traefik")]
    w.attribute(timeline, [], w.Evidence(merged))
    assert (timeline[0]["pod"], timeline[0]["attributed_by"]) == (POD_B, "address")
    only_start = [change(5.0, ["100.64.0.20"], manager="traefik")]
    w.attribute(only_start, [], w.Evidence(start))  # nobody known publishes it yet: no guess
    assert (only_start[0]["pod"], only_start[0]["attributed_by"], only_start[0]["candidates"]) == (
        None, "candidates", [POD_A, POD_B])


def test_replicas_of_one_install_are_told_apart_by_a_line_only_when_every_log_was_read() -> None:
    state = two_traefiks()
    second = copy.deepcopy(state.pods[0])
    second["metadata"]["name"] = "traefik-5f6d7-ccccc"
    state.pods.append(second)
    replica = "edge-a/traefik-5f6d7-ccccc"
    evidence = w.Evidence(w.publishers_of(state))
    timeline = [change(5.0, ["100.64.0.10"], manager="traefik"), change(25.0, ["100.64.0.10"], manager="traefik")]
    # POD_A logs its status writes (one of another Ingress, later): its silence at 5 s means something
    entries = [traefik_line(replica, 5), traefik_line(POD_B, 5), traefik_line(POD_A, 40, ingress="other")]
    w.attribute(timeline, entries, evidence)
    assert (timeline[0]["pod"], timeline[0]["attributed_by"]) == (replica, "log")
    # no line near the second change: both replicas remain
    assert (timeline[1]["pod"], timeline[1]["attributed_by"], timeline[1]["candidates"]) == (None, "candidates", [POD_A, replica])
    # a pod that never logs a status write (its log level hides the line) proves nothing by its silence
    quiet = [change(5.0, ["100.64.0.10"], manager="traefik")]
    w.attribute(quiet, [traefik_line(replica, 5)], evidence)
    assert (quiet[0]["pod"], quiet[0]["candidates"]) == (None, [POD_A, replica])
    # POD_A's log was never read (a pod gone before its first read): its silence proves nothing
    unread = [change(5.0, ["100.64.0.10"], manager="traefik")]
    w.attribute(unread, entries, w.Evidence(evidence.publishers, logs_read={replica: T0 + dt.timedelta(seconds=30)}))
    assert (unread[0]["pod"], unread[0]["candidates"]) == (None, [POD_A, replica])


# ---------------------------------------------------------------- ingress-nginx: lines with the address


def puzzle_with_a_fourth_on_the_node() -> base.ClusterState:
    """The seed's puzzle (one and three publish their LoadBalancers, two its node's address) and a
    fourth install without publish-service on the same node: two and four publish the same address."""
    state = puzzle()
    crole, crb = cluster_rbac("four")
    state.workloads.append(nginx_workload("four", ["--election-id=ingress-ingress-nginx-leader",
                                                   "--controller-class=k8s.io/ingress-nginx-four", "--ingress-class=nginx"]))
    state.pods.append(pod("four", "c4"))
    state.services.append(lb_service("four", "100.64.0.3"))
    state.cluster_roles.append(crole)
    state.cluster_role_bindings.append(crb)
    state.namespaces.append({"metadata": {"name": "four"}})
    return state


def test_the_puzzles_publishers() -> None:
    pubs = {p.controller: (p.pods, p.addresses, p.source) for p in w.publishers_of(puzzle_with_a_fourth_on_the_node())}
    assert pubs == {
        "one/ingress-ingress-nginx-controller": (("one/c1",), ("100.64.0.0",), "service"),
        "two/ingress-ingress-nginx-controller": (("two/c2",), (NODE_IP,), "node-addresses"),
        "three/ingress-ingress-nginx-controller": (("three/c3",), ("100.64.0.2",), "service"),
        "four/ingress-ingress-nginx-controller": (("four/c4",), (NODE_IP,), "node-addresses"),
    }


def test_two_pods_publishing_the_same_address_are_candidates() -> None:
    evidence = w.Evidence(w.publishers_of(puzzle_with_a_fourth_on_the_node()))
    timeline = [change(3.0, [NODE_IP]), change(6.0, ["100.64.0.0"])]
    w.attribute(timeline, [], evidence)
    assert [(c["pod"], c["attributed_by"], c["candidates"]) for c in timeline] == [
        (None, "candidates", ["four/c4", "two/c2"]), ("one/c1", "address", [])]
    assert "one of four/c4, two/c2 [undecided]" in change_writer(timeline[0])
    assert change_writer(timeline[1]) == "one/c1 [by address] (nginx-ingress-controller Update)"


def test_a_line_naming_the_ingress_and_the_address_decides() -> None:
    evidence = w.Evidence(w.publishers_of(puzzle_with_a_fourth_on_the_node()))
    timeline = [change(3.0, [NODE_IP]), change(13.0, [NODE_IP])]
    # four's line of the first change, two's of the second; and three's line about another address
    entries = [nginx_line("four/c4", 2.9, NODE_IP), nginx_line("two/c2", 12.9, NODE_IP), nginx_line("three/c3", 3.0, "100.64.0.2")]
    w.attribute(timeline, entries, evidence)
    assert [(c["pod"], c["attributed_by"]) for c in timeline] == [("four/c4", "log"), ("two/c2", "log")]


def test_a_line_that_contradicts_the_address_evidence_is_ignored() -> None:
    """one publishes 100.64.0.0 only: its line claiming the node address names no writer of it."""
    evidence = w.Evidence(w.publishers_of(puzzle()))
    timeline = [change(3.0, [NODE_IP])]
    w.attribute(timeline, [nginx_line("one/c1", 3.0, NODE_IP)], evidence)
    assert (timeline[0]["pod"], timeline[0]["attributed_by"]) == ("two/c2", "address")


def test_a_cleared_status_is_told_by_its_line_else_candidates() -> None:
    evidence = w.Evidence(w.publishers_of(puzzle()))
    cleared = ('I1121 23:40:05.000000 7 status.go:311] "updating Ingress status" namespace="apps" ingress="web" '
               'currentValue=[{"ip":"100.64.0.2"}] newValue=[]')
    entry = parse_log_line("three/c3", cleared, 2026)
    assert entry is not None
    timeline = [change(5.0, []), change(40.0, [])]
    w.attribute(timeline, [entry], evidence)
    assert (timeline[0]["pod"], timeline[0]["attributed_by"]) == ("three/c3", "log")
    assert (timeline[1]["pod"], timeline[1]["candidates"]) == (None, ["one/c1", "three/c3", "two/c2"])


def test_the_field_manager_decides_between_types() -> None:
    state = puzzle()
    a = traefik_install("edge-a", "100.64.0.10")
    state.workloads.append(a[0])
    state.pods.append(a[1])
    state.services.append(a[2])
    state.namespaces.append({"metadata": {"name": "edge-a"}})
    evidence = w.Evidence(w.publishers_of(state))
    timeline = [change(1.0, ["100.64.0.10"], manager="traefik"), change(2.0, ["9.9.9.9"], manager="kubectl-patch"),
                {"time": at(3.0), "ingress": "apps/web", "event": "DELETED", "new": []}]
    w.attribute(timeline, [], evidence)
    assert [(c["pod"], c["attributed_by"], c["candidates"]) for c in timeline] == [
        (POD_A, "manager", []), (None, "none", []), (None, "deleted", [])]


def test_two_managers_in_one_second_are_both_possible_writers() -> None:
    same_second = [("nginx-ingress-controller", "2026-11-21T23:40:05Z"), ("traefik", "2026-11-21T23:40:05Z")]
    obj = ing("apps", "100.64.0.10", name="web", writes=same_second)
    assert status_managers(obj) == ["nginx-ingress-controller", "traefik"]
    assert status_managers(ing("apps", "1.1.1.1", writes=[("traefik", "2026-11-21T23:40:05Z")])) == ["traefik"]
    state = puzzle()
    a = traefik_install("edge-a", "100.64.0.10")
    state.workloads.append(a[0])
    state.pods.append(a[1])
    state.services.append(a[2])
    tracker = Tracker(parse_options(10, 0, False, [], False, True), T0)
    tracker.initial([ing("apps", "100.64.0.0", name="web")])
    [entry] = tracker.event("MODIFIED", obj, T0 + dt.timedelta(seconds=5))
    assert entry["managers"] == ["nginx-ingress-controller", "traefik"]
    w.attribute(tracker.timeline, [], w.Evidence(w.publishers_of(state)))
    assert (entry["pod"], entry["attributed_by"]) == (POD_A, "address")


def test_a_pod_seen_only_in_the_logs_is_placed_by_its_workload_name() -> None:
    """A pod replaced between the snapshots: its name continues its Deployment's."""
    evidence = w.Evidence(w.publishers_of(two_traefiks()))
    assert evidence.published("edge-a/traefik-5f6d7-zzzzz") == {"100.64.0.10"}
    assert evidence.published("edge-a/other-1") is None


# ---------------------------------------------------------------- the whole watch


class Cluster:
    """A fake API with two Traefik installs fighting over apps/web, each logging without the address."""

    def __init__(self) -> None:
        self.state = two_traefiks()
        writes = []
        for i in range(6):
            ip = "100.64.0.10" if i % 2 == 0 else "100.64.0.20"
            by = [("traefik", at(2.0 * i + 1).replace(".000", ""))]
            writes.append(("MODIFIED", ing("apps", ip, rv=10 + i, name="web", writes=by)))
        self.events = writes
        self.logs = {
            POD_A: "\n".join("%s INF Updated ingress status ingress=web namespace=apps" % at(2.0 * i + 2).replace(".000", "")
                             for i in range(0, 6, 2)),
            POD_B: "\n".join("%s INF Updated ingress status ingress=web namespace=apps" % (at(2.0 * i - 0.2)[:19] + "Z")
                             for i in range(1, 6, 2)),
        }

    def serves(self, api_version: str, kind: str) -> bool:
        return kind == "Ingress"  # no Gateway API

    def list_with_version(self, api_version: str, kind: str, **kw: Any) -> tuple[list[Obj], str]:
        return [ing("apps", "100.64.0.20", name="web")], "5"

    def watch(self, api_version: str, kind: str, **kw: Any) -> Iterator[tuple[str, Obj]]:
        events, self.events = self.events, []
        yield from events

    def list(self, api_version: str, kind: str, **kw: Any) -> list[Obj]:
        st = self.state
        by_kind = {"Deployment": st.workloads, "DaemonSet": [], "Pod": st.pods, "Service": st.services, "Node": st.nodes,
                   "Namespace": st.namespaces, "IngressClass": [], "ClusterRole": [], "ClusterRoleBinding": []}
        return copy.deepcopy(by_kind[kind])

    def pod_log(self, namespace: str, name: str, container: str | None = None, since_seconds: int | None = None,
                previous: bool = False) -> str:
        return "" if previous else self.logs.get("%s/%s" % (namespace, name), "")


def test_the_watch_attributes_every_change_by_address_and_records_the_publishers() -> None:
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0
        return now[0]

    result = run(Cluster(), Selection(), parse_options(20, 10, False, [], False, True), clock=clock,
                 now=lambda: T0 + dt.timedelta(seconds=now[0]))
    rows = [(c["new"], c["pod"], c["attributed_by"]) for c in result["timeline"]]
    assert len(rows) == 6
    assert rows == [(["100.64.0.10"] if i % 2 == 0 else ["100.64.0.20"], POD_A if i % 2 == 0 else POD_B, "address")
                    for i in range(6)]
    assert [(p["controller"], p["pods"], p["addresses"]) for p in result["publishers"]] == [
        ("edge-a/traefik@kubernetes", [POD_A], ["100.64.0.10"]), ("edge-b/traefik@kubernetes", [POD_B], ["100.64.0.20"])]
    assert result["ingresses"]["apps/web"]["writers"]["pods"] == [POD_A, POD_B]


class ForbiddenWorkloads(Cluster):
    """A user who may not list Deployments: the publishers cannot be read, the logs still can."""

    def list(self, api_version: str, kind: str, **kw: Any) -> list[Obj]:
        if kind == "Deployment":
            raise K8sError("list Deployment failed: deployments.apps is forbidden")
        return super().list(api_version, kind, **kw)


def test_without_the_publishers_nothing_is_named_by_address_and_the_reason_is_returned() -> None:
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0
        return now[0]

    result = run(ForbiddenWorkloads(), Selection(), parse_options(20, 10, False, [], False, True), clock=clock,
                 now=lambda: T0 + dt.timedelta(seconds=now[0]))
    assert result["publishers"] == [] and "deployments.apps is forbidden" in result["publishers_error"]
    assert len(result["timeline"]) == 6
    # Two pods write as traefik, and both logged address-less lines within 15 s of every change: no guess.
    assert [(r["pod"], r["attributed_by"], r["candidates"]) for r in result["timeline"]] == [
        (None, "candidates", [POD_A, POD_B])] * 6
