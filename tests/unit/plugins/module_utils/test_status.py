from __future__ import annotations

import copy
import datetime as dt
from typing import Any, Iterator

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils import _status as s
from ansible_collections.kindlab.ingress.plugins.module_utils._select import Selection

Obj = dict[str, Any]
T0 = dt.datetime(2026, 11, 21, 23, 40, 0, tzinfo=dt.timezone.utc)


def ing(ns: str, ip: str | None, rv: int = 1, writes: list[tuple[str, str]] | None = None, name: str = "test") -> Obj:
    managed = [{"manager": "kindlab.ingress", "operation": "Apply", "time": "2026-11-21T23:39:00Z"}]
    for manager, when in writes or []:
        managed.append({"manager": manager, "operation": "Update", "subresource": "status", "time": when})
    return {"metadata": {"namespace": ns, "name": name, "resourceVersion": str(rv), "managedFields": managed},
            "status": {"loadBalancer": {"ingress": [{"ip": ip}]} if ip else {}}}


def line(pod_time: str, ns: str, new: str) -> str:
    return ('I1121 %s       7 status.go:311] "updating Ingress status" namespace="%s" ingress="test" '
            'currentValue=[{"ip":"x"}] newValue=[{"ip":"%s"}]' % (pod_time, ns, new))


# ---------------------------------------------------------------- options


@pytest.mark.parametrize("kwargs, message", [
    ({"window": 0}, "window: expected a number of seconds > 0"),
    ({"window": -3}, "window: expected"),
    ({"window": True}, "window: expected"),
    ({"max_changes": -1}, "max_changes: expected an integer >= 0"),
    ({"expected_pools": ["100.64.0.1/16"]}, "expected_pools[0]: host bits are set; did you mean 100.64.0.0/16?"),
    ({"expected_pools": ["100.64.0.0/16", "10.0.0.9-10.0.0.1"]}, "expected_pools[1]: the range starts after it ends"),
    ({"expected_pools": "100.64.0.0/16"}, "expected_pools: expected a list"),
])
def test_bad_options_name_the_option(kwargs: dict[str, Any], message: str) -> None:
    args: dict[str, Any] = dict(window=10, max_changes=0, allow_empty=False, expected_pools=[], stop_on_violation=False, attribute=True)
    args.update(kwargs)
    with pytest.raises(s.StatusError) as exc:
        s.parse_options(**args)
    assert message in str(exc.value)


def test_options_ok() -> None:
    o = s.parse_options(10, 2, True, ["100.64.0.0/16", "10.0.0.1-10.0.0.9"], True, False)
    assert o.window == 10.0 and o.max_changes == 2 and o.pools is not None and len(o.pools.ranges) == 2


# ---------------------------------------------------------------- attribution


def test_status_writer_is_the_newest_status_entry() -> None:
    obj = ing("one", "1.1.1.1", writes=[("nginx-ingress-controller", "2026-11-21T23:40:05Z"), ("other", "2026-11-21T23:40:01Z")])
    assert s.status_writer(obj) == {"manager": "nginx-ingress-controller", "operation": "Update", "time": "2026-11-21T23:40:05Z"}
    assert s.status_writer(ing("one", None)) is None


def test_parse_log_line() -> None:
    e = s.parse_log_line("two/p", line("23:40:01.500000", "one", "172.18.0.2"), 2026)
    assert e == s.LogEntry("two/p", dt.datetime(2026, 11, 21, 23, 40, 1, 500000, tzinfo=dt.timezone.utc), "one", "test", ("172.18.0.2",))
    assert s.parse_log_line("two/p", 'I1121 23:40:01.5 7 x] "Starting NGINX Ingress controller"', 2026) is None
    cleared = ('I1121 23:40:01.000000 7 status.go:311] "updating Ingress status" namespace="one" ingress="test" '
               'currentValue=null newValue=[]')
    empty = s.parse_log_line("two/p", cleared, 2026)
    assert empty is not None and empty.new == ()


def test_attribute_from_logs_nearest_in_time() -> None:
    timeline = [
        {"ingress": "one/test", "event": "MODIFIED", "new": ["172.18.0.2"], "time": "2026-11-21T23:40:01.600Z"},
        {"ingress": "one/test", "event": "MODIFIED", "new": ["100.64.0.0"], "time": "2026-11-21T23:40:02.100Z"},
        {"ingress": "one/test", "event": "MODIFIED", "new": ["172.18.0.2"], "time": "2026-11-21T23:41:01.600Z"},
    ]
    entries = [e for e in (
        s.parse_log_line("two/p2", line("23:40:01.550000", "one", "172.18.0.2"), 2026),
        s.parse_log_line("one/p1", line("23:40:02.050000", "one", "100.64.0.0"), 2026),
        s.parse_log_line("three/p3", line("23:40:01.550000", "three", "172.18.0.2"), 2026),
        s.parse_log_line("two/p2", line("23:41:01.550000", "one", "172.18.0.2"), 2026),
    ) if e]
    s.attribute_from_logs(timeline, entries)
    assert [t["pod"] for t in timeline] == ["two/p2", "one/p1", "two/p2"]


# ---------------------------------------------------------------- tracking and verdict


def flapping_tracker(options: s.Options) -> s.Tracker:
    t = s.Tracker(options, T0)
    t.initial([ing("one", "100.64.0.0"), ing("two", "172.18.0.2", writes=[("nginx-ingress-controller", "2026-11-21T23:39:30Z")])])
    for i in range(5):
        ip = "172.18.0.2" if i % 2 == 0 else "100.64.0.0"
        t.event("MODIFIED", ing("one", ip, rv=10 + i, writes=[("nginx-ingress-controller", "2026-11-21T23:40:0%dZ" % i)]),
                T0 + dt.timedelta(seconds=2 * i + 1))
    t.event("MODIFIED", ing("two", "172.18.0.2", rv=30), T0 + dt.timedelta(seconds=3))  # not a status change
    return t


def test_flap_counting_and_failure_line() -> None:
    t = flapping_tracker(s.parse_options(10, 0, False, [], False, True))
    t.timeline[0]["pod"] = "two/p2"
    t.timeline[1]["pod"] = "one/p1"
    r = s.verdict(t)
    assert t.events == 6 and len(r["timeline"]) == 5
    one = r["ingresses"]["one/test"]
    assert one["changes"] == 5 and one["addresses_seen"] == [["100.64.0.0"], ["172.18.0.2"]] and not one["passed"]
    assert r["failures"] == ["one/test: 5 changes in 10s (max 0): 100.64.0.0 ↔ 172.18.0.2, written by nginx-ingress-controller "
                             "(pods two/p2, one/p1)"]
    assert r["ingresses"]["two/test"] == {"addresses_seen": [["172.18.0.2"]], "writers": {"managers": ["nginx-ingress-controller"], "pods": []},
                                          "changes": 0, "passed": True, "reason": "stable", "deleted": False}
    first = r["timeline"][0]
    assert (first["t"], first["time"], first["old"], first["new"], first["manager"], first["operation"]) == (
        1.0, "2026-11-21T23:40:01.000Z", ["100.64.0.0"], ["172.18.0.2"], "nginx-ingress-controller", "Update")


def test_max_changes_allows_some() -> None:
    assert s.verdict(flapping_tracker(s.parse_options(10, 5, False, [], False, True)))["passed"] is True


def test_pool_membership() -> None:
    r = s.verdict(flapping_tracker(s.parse_options(10, 5, False, ["100.64.0.0/16"], False, True)))
    assert r["failures"] == ["one/test: 172.18.0.2 outside expected_pools 100.64.0.0/16, written by nginx-ingress-controller",
                             "two/test: 172.18.0.2 outside expected_pools 100.64.0.0/16, written by nginx-ingress-controller"]
    r = s.verdict(flapping_tracker(s.parse_options(10, 5, False, ["100.64.0.0/16", "172.18.0.1-172.18.0.9"], False, True)))
    assert r["passed"] is True


def test_empty_status_fails_unless_allowed() -> None:
    for allow, passed in ((False, False), (True, True)):
        t = s.Tracker(s.parse_options(10, 0, allow, [], False, True), T0)
        t.initial([ing("one", None)])
        r = s.verdict(t)
        assert r["passed"] is passed
    assert r["ingresses"]["one/test"]["addresses_seen"] == [[]]


def test_added_and_deleted_during_the_window() -> None:
    t = s.Tracker(s.parse_options(10, 1, True, [], False, True), T0)
    t.initial([])
    t.event("ADDED", ing("one", None, name="new"), T0)
    t.event("MODIFIED", ing("one", "100.64.0.5", rv=2, name="new"), T0 + dt.timedelta(seconds=1))
    t.event("DELETED", ing("one", "100.64.0.5", rv=3, name="new"), T0 + dt.timedelta(seconds=2))
    r = s.verdict(t)
    assert r["ingresses"]["one/new"]["changes"] == 2 and r["ingresses"]["one/new"]["deleted"] is True
    assert [e["event"] for e in r["timeline"]] == ["MODIFIED", "DELETED"]


def test_watch_scope() -> None:
    assert s.watch_scope(Selection()) == {"namespace": None, "label_selector": None, "field_selector": None}
    assert s.watch_scope(Selection(["one"], ["test"], "app=web")) == {
        "namespace": "one", "label_selector": "app=web", "field_selector": "metadata.name=test"}
    assert s.watch_scope(Selection([], ["two/test"])) == {"namespace": "two", "label_selector": None, "field_selector": "metadata.name=test"}
    assert s.watch_scope(Selection(["one", "two"], ["a", "b"]))["namespace"] is None


# ---------------------------------------------------------------- run with a fake client


class FakeClient:
    def __init__(self, events: list[tuple[str, Obj]], logs: dict[str, str]) -> None:
        self.events = events
        self.logs = logs
        self.watches: list[dict[str, Any]] = []
        self.items = [ing("one", "100.64.0.0"), ing("two", "172.18.0.2")]

    def list_with_version(self, api_version: str, kind: str, **kw: Any) -> tuple[list[Obj], str]:
        return copy.deepcopy(self.items), "5"

    def watch(self, api_version: str, kind: str, **kw: Any) -> Iterator[tuple[str, Obj]]:
        self.watches.append(kw)
        events, self.events = self.events, []  # a re-opened stream continues after the last version
        yield from events

    def list(self, api_version: str, kind: str, **kw: Any) -> list[Obj]:
        assert kind == "Pod"
        controller = {"name": "controller", "image": "registry.k8s.io/ingress-nginx/controller:v1.15.1"}
        pods = [{"metadata": {"namespace": ns, "name": name}, "spec": {"containers": [controller]}}
                for ns, name in (p.split("/") for p in self.logs)]
        web = {"metadata": {"namespace": "one", "name": "web"}, "spec": {"containers": [{"name": "web", "image": "nginx:1.29.3"}]}}
        return pods + [web]

    def pod_log(self, namespace: str, name: str, container: str | None = None, since_seconds: int | None = None) -> str:
        return self.logs["%s/%s" % (namespace, name)]


def fake_time(step: float = 1.0) -> tuple[Any, Any]:
    now = [0.0]

    def clock() -> float:
        now[0] += step
        return now[0]

    return clock, lambda: T0 + dt.timedelta(seconds=now[0])


def test_run_one_stream_attribution_and_stop_on_violation() -> None:
    events = [("MODIFIED", ing("one", "172.18.0.2", rv=6, writes=[("nginx-ingress-controller", "2026-11-21T23:40:02Z")])),
              ("MODIFIED", ing("one", "100.64.0.0", rv=7, writes=[("nginx-ingress-controller", "2026-11-21T23:40:04Z")]))]
    logs = {"two/p2": line("23:40:02.000000", "one", "172.18.0.2"), "one/p1": line("23:40:04.000000", "one", "100.64.0.0")}
    client = FakeClient(events, logs)
    clock, now = fake_time()
    r = s.run(client, Selection(), s.parse_options(30, 0, False, [], False, True), clock=clock, now=now)
    assert r["watch_streams"] > 1 and client.watches[0]["resource_version"] == "5"
    assert client.watches[1]["resource_version"] == "7"  # the stream ended early: re-opened where it stopped
    assert [t["pod"] for t in r["timeline"]] == ["two/p2", "one/p1"]
    assert r["failures"][0].startswith("one/test: 2 changes in 30s (max 0): 100.64.0.0 ↔ 172.18.0.2, written by "
                                       "nginx-ingress-controller (pods two/p2, one/p1)")
    client = FakeClient(events, logs)
    clock, now = fake_time()
    r = s.run(client, Selection(), s.parse_options(30, 0, False, [], True, False), clock=clock, now=now)
    assert r["stopped_early"] == "one/test" and len(r["timeline"]) == 1 and r["watch_streams"] == 1
    assert r["timeline"][0]["pod"] is None  # attribute: false reads no logs
