from __future__ import annotations

import copy
import datetime as dt
import math
from typing import Any, Iterator, Sequence

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import ApiUnreachable, WatchExpired, WatchForbidden, WatchInterrupted
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.watch import LIST_READ_TIMEOUT, WATCH_READ_SLACK
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.attribution import LogEntry, attribute_from_logs, parse_log_line, status_writer
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.evidence import PodLogs
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.options import Options, StatusError, parse_options
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.run import run
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.tracker import Tracker
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.verdict import restarts, verdict
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.window import watch_scope
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import listwatch as lw
from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.ingresses import status_addresses
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of

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
    with pytest.raises(StatusError) as exc:
        parse_options(**args)
    assert message in str(exc.value)


def test_options_ok() -> None:
    o = parse_options(10, 2, True, ["100.64.0.0/16", "10.0.0.1-10.0.0.9"], True, False)
    assert o.window == 10.0 and o.max_changes == 2 and o.pools is not None and len(o.pools.ranges) == 2


# ---------------------------------------------------------------- attribution


def test_status_writer_is_the_newest_status_entry() -> None:
    obj = ing("one", "1.1.1.1", writes=[("nginx-ingress-controller", "2026-11-21T23:40:05Z"), ("other", "2026-11-21T23:40:01Z")])
    assert status_writer(obj) == {"manager": "nginx-ingress-controller", "operation": "Update", "time": "2026-11-21T23:40:05Z"}
    assert status_writer(ing("one", None)) is None


def test_parse_log_line() -> None:
    e = parse_log_line("two/p", line("23:40:01.500000", "one", "172.18.0.2"), 2026)
    assert e == LogEntry("two/p", dt.datetime(2026, 11, 21, 23, 40, 1, 500000, tzinfo=dt.timezone.utc), "one", "test",
                         ("172.18.0.2",), "nginx-ingress-controller")
    assert parse_log_line("two/p", 'I1121 23:40:01.5 7 x] "Starting NGINX Ingress controller"', 2026) is None
    cleared = ('I1121 23:40:01.000000 7 status.go:311] "updating Ingress status" namespace="one" ingress="test" '
               'currentValue=null newValue=[]')
    empty = parse_log_line("two/p", cleared, 2026)
    assert empty is not None and empty.new == ()
    # v1.11.0's line as the real controller logged it on kind (make test-kind)
    real = ('I1124 19:28:04.461601      11 status.go:304] "updating Ingress status" namespace="one" ingress="test" '
            'currentValue=null newValue=[{"ip":"100.64.0.1"}]')
    assert parse_log_line("one/p", real, 2026) == LogEntry(
        "one/p", dt.datetime(2026, 11, 24, 19, 28, 4, 461601, tzinfo=dt.timezone.utc), "one", "test", ("100.64.0.1",),
        "nginx-ingress-controller")


def test_traefik_lines_name_the_ingress_but_not_the_address_and_match_only_traefik_writes() -> None:
    # Traefik v3.7.13's line as it logged it on kind (its ingress-nginx provider, make test-kind).
    text = ("2026-11-24T22:50:57Z INF github.com/traefik/traefik/v3/pkg/provider/kubernetes/ingress-nginx/client.go:307 > "
            "Updated ingress status ingress=test namespace=one")
    e = parse_log_line("traefik/t-1", text, 2026)
    assert e == LogEntry("traefik/t-1", dt.datetime(2026, 11, 24, 22, 50, 57, tzinfo=dt.timezone.utc), "one", "test",
                         None, "traefik")
    # At the chart's default level (info) the line has colours and no source file (as logged on kind).
    coloured = ("\x1b[90m2026-11-24T23:45:54Z\x1b[0m \x1b[32mINF\x1b[0m \x1b[1mUpdated ingress status\x1b[0m "
                "\x1b[36mingress=\x1b[0mnone \x1b[36mnamespace=\x1b[0mdta")
    assert parse_log_line("traefik/t-1", coloured, 2026) == LogEntry(
        "traefik/t-1", dt.datetime(2026, 11, 24, 23, 45, 54, tzinfo=dt.timezone.utc), "dta", "none", None, "traefik")
    nginx = parse_log_line("one/c", line("22:50:57.100000", "one", "100.64.0.1").replace("I1121", "I1124"), 2026)
    timeline = [
        {"ingress": "one/test", "event": "MODIFIED", "new": ["100.64.0.1"], "time": "2026-11-24T22:50:57.101Z",
         "manager": "nginx-ingress-controller"},
        {"ingress": "one/test", "event": "MODIFIED", "new": ["100.64.0.4"], "time": "2026-11-24T22:50:57.105Z",
         "manager": "traefik"},
    ]
    attribute_from_logs(timeline, [e, nginx])
    assert [c.get("pod") for c in timeline] == ["one/c", "traefik/t-1"]


@pytest.mark.parametrize("text, ns, name, new", [
    # the seed's v0.x controllers (seeds/01, seeds/05): Go's %v of []LoadBalancerIngress
    ("I0326 08:01:49.534479       5 status.go:275] updating Ingress one/test status from [{172.18.0.2 }] to [{100.64.0.0 }]",
     "one", "test", ("100.64.0.0",)),
    ("I0326 08:01:49.534479       5 status.go:352] updating Ingress default/hello-ingress status to [{ }]",
     "default", "hello-ingress", ()),
    ("I0326 08:01:49.534479       5 status.go:275] updating Ingress a/b status from [] to [{ lb.example.test} {10.0.0.1 }]",
     "a", "b", ("10.0.0.1", "lb.example.test")),
])
def test_parse_log_line_reads_the_v0_text_too(text, ns, name, new) -> None:
    e = parse_log_line("two/p", text, 2026)
    assert e is not None and (e.namespace, e.ingress, e.new) == (ns, name, new)
    assert e.when == dt.datetime(2026, 3, 26, 8, 1, 49, 534479, tzinfo=dt.timezone.utc)


def test_attribute_from_logs_nearest_in_time() -> None:
    timeline = [
        {"ingress": "one/test", "event": "MODIFIED", "new": ["172.18.0.2"], "time": "2026-11-21T23:40:01.600Z"},
        {"ingress": "one/test", "event": "MODIFIED", "new": ["100.64.0.0"], "time": "2026-11-21T23:40:02.100Z"},
        {"ingress": "one/test", "event": "MODIFIED", "new": ["172.18.0.2"], "time": "2026-11-21T23:41:01.600Z"},
    ]
    entries = [e for e in (
        parse_log_line("two/p2", line("23:40:01.550000", "one", "172.18.0.2"), 2026),
        parse_log_line("one/p1", line("23:40:02.050000", "one", "100.64.0.0"), 2026),
        parse_log_line("three/p3", line("23:40:01.550000", "three", "172.18.0.2"), 2026),
        parse_log_line("two/p2", line("23:41:01.550000", "one", "172.18.0.2"), 2026),
    ) if e]
    attribute_from_logs(timeline, entries)
    assert [t["pod"] for t in timeline] == ["two/p2", "one/p1", "two/p2"]


# ---------------------------------------------------------------- tracking and verdict


def flapping_tracker(options: Options) -> Tracker:
    t = Tracker(options, T0)
    t.initial([ing("one", "100.64.0.0"), ing("two", "172.18.0.2", writes=[("nginx-ingress-controller", "2026-11-21T23:39:30Z")])])
    for i in range(5):
        ip = "172.18.0.2" if i % 2 == 0 else "100.64.0.0"
        t.event("MODIFIED", ing("one", ip, rv=10 + i, writes=[("nginx-ingress-controller", "2026-11-21T23:40:0%dZ" % i)]),
                T0 + dt.timedelta(seconds=2 * i + 1))
    t.event("MODIFIED", ing("two", "172.18.0.2", rv=30), T0 + dt.timedelta(seconds=3))  # not a status change
    return t


def test_flap_counting_and_failure_line() -> None:
    t = flapping_tracker(parse_options(10, 0, False, [], False, True))
    t.timeline[0]["pod"] = "two/p2"
    t.timeline[1]["pod"] = "one/p1"
    r = verdict(t)
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
    assert verdict(flapping_tracker(parse_options(10, 5, False, [], False, True)))["passed"] is True


def test_pool_membership() -> None:
    r = verdict(flapping_tracker(parse_options(10, 5, False, ["100.64.0.0/16"], False, True)))
    assert r["failures"] == ["one/test: 172.18.0.2 outside expected_pools 100.64.0.0/16, written by nginx-ingress-controller",
                             "two/test: 172.18.0.2 outside expected_pools 100.64.0.0/16, written by nginx-ingress-controller"]
    r = verdict(flapping_tracker(parse_options(10, 5, False, ["100.64.0.0/16", "172.18.0.1-172.18.0.9"], False, True)))
    assert r["passed"] is True


def test_empty_status_fails_unless_allowed() -> None:
    for allow, passed in ((False, False), (True, True)):
        t = Tracker(parse_options(10, 0, allow, [], False, True), T0)
        t.initial([ing("one", None)])
        r = verdict(t)
        assert r["passed"] is passed
    assert r["ingresses"]["one/test"]["addresses_seen"] == [[]]


def test_added_and_deleted_during_the_window() -> None:
    t = Tracker(parse_options(10, 1, True, [], False, True), T0)
    t.initial([])
    t.event("ADDED", ing("one", None, name="new"), T0)
    t.event("MODIFIED", ing("one", "100.64.0.5", rv=2, name="new"), T0 + dt.timedelta(seconds=1))
    t.event("DELETED", ing("one", "100.64.0.5", rv=3, name="new"), T0 + dt.timedelta(seconds=2))
    r = verdict(t)
    assert r["ingresses"]["one/new"]["changes"] == 2 and r["ingresses"]["one/new"]["deleted"] is True
    assert [e["event"] for e in r["timeline"]] == ["MODIFIED", "DELETED"]


def test_watch_scope() -> None:
    assert watch_scope(Selection()) == {"namespace": None, "label_selector": None, "field_selector": None}
    assert watch_scope(Selection(["one"], ["test"], "app=web")) == {
        "namespace": "one", "label_selector": "app=web", "field_selector": "metadata.name=test"}
    assert watch_scope(Selection([], ["two/test"])) == {"namespace": "two", "label_selector": None, "field_selector": "metadata.name=test"}
    assert watch_scope(Selection(["one", "two"], ["a", "b"]))["namespace"] is None


# ---------------------------------------------------------------- run with a fake client


class FakeClient:
    def __init__(self, events: list[tuple[str, Obj]], logs: dict[str, str]) -> None:
        self.events = events
        self.logs = logs
        self.watches: list[dict[str, Any]] = []
        self.items = [ing("one", "100.64.0.0"), ing("two", "172.18.0.2")]

    def serves(self, api_version: str, kind: str) -> bool:
        return kind == "Ingress"  # no Gateway API

    def list_with_version(self, api_version: str, kind: str, **kw: Any) -> tuple[list[Obj], str]:
        return copy.deepcopy(self.items), "5"

    def watch(self, api_version: str, kind: str, **kw: Any) -> Iterator[tuple[str, Obj]]:
        self.watches.append(kw)
        events, self.events = self.events, []  # a re-opened stream continues after the last version
        yield from events

    def list(self, api_version: str, kind: str, **kw: Any) -> list[Obj]:
        if kind != "Pod":  # what the controllers publish: no workload here, so nothing is known
            return []
        controller = {"name": "controller", "image": "registry.k8s.io/ingress-nginx/controller:v1.15.1"}
        pods = [{"metadata": {"namespace": ns, "name": name}, "spec": {"containers": [controller]}}
                for ns, name in (p.split("/") for p in self.logs)]
        web = {"metadata": {"namespace": "one", "name": "web"}, "spec": {"containers": [{"name": "web", "image": "nginx:1.29.3"}]}}
        return pods + [web]

    def pod_log(self, namespace: str, name: str, container: str | None = None, since_seconds: int | None = None,
                previous: bool = False) -> str:
        return "" if previous else self.logs["%s/%s" % (namespace, name)]


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
    r = run(client, Selection(), parse_options(30, 0, False, [], False, True), clock=clock, now=now)
    assert r["watch_streams"] > 1 and client.watches[0]["resource_version"] == "5"
    assert client.watches[1]["resource_version"] == "7"  # the stream ended early: re-opened where it stopped
    assert [t["pod"] for t in r["timeline"]] == ["two/p2", "one/p1"]
    assert r["failures"][0].startswith("one/test: 2 changes in 30s (max 0): 100.64.0.0 ↔ 172.18.0.2, written by "
                                       "nginx-ingress-controller (pods two/p2, one/p1)")
    client = FakeClient(events, logs)
    clock, now = fake_time()
    r = run(client, Selection(), parse_options(30, 0, False, [], True, False), clock=clock, now=now)
    assert r["stopped_early"] == "one/test" and len(r["timeline"]) == 1 and r["watch_streams"] == 1
    assert r["timeline"][0]["pod"] is None  # attribute: false reads no logs


# ---------------------------------------------------------------- run when the API server misbehaves

WHERE = "the API server at https://127.0.0.1:6443 (context kind-ingress-lab, kubeconfig /k/config)"


class FakeTime:
    """A clock that moves only when the fake server waits or run() sleeps."""

    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds

    def wall(self) -> dt.datetime:
        return T0 + dt.timedelta(seconds=self.now)


class FakeApi:
    """An API server on a fake clock: a history of Ingress writes at given times, each with the
    next resourceVersion, served as real watch streams (event dicts {"type", "object"}) from any
    resourceVersion; with faults: down (refused; an open stream is reset), frozen (no byte; a
    read timeout after the stream's timeout plus WATCH_READ_SLACK), a compaction (410 Gone for
    older resourceVersions, raised or as an ERROR event) and bookmarks every few seconds."""

    def __init__(self, time_: FakeTime, initial: list[Obj], writes: Sequence[tuple[float, str, Obj]] = (),
                 down: Sequence[tuple[float, float]] = (), frozen: Sequence[tuple[float, float]] = (),
                 compact: tuple[float, str] | None = None, bookmarks: float = 0.0, bumps: Sequence[float] = ()) -> None:
        self.time = time_
        self.initial = [copy.deepcopy(o) for o in initial]
        rv = 10
        for o in self.initial:
            o["metadata"]["resourceVersion"] = str(rv)
        # (time, resourceVersion, type, object): Ingress writes and other objects' writes (None)
        self.history: list[tuple[float, int, str, Obj | None]] = []
        for t, kind, obj in sorted(list(writes) + [(t, "", None) for t in bumps], key=lambda w: w[0]):
            rv += 1
            if obj is not None:
                obj = copy.deepcopy(obj)
                obj["metadata"]["resourceVersion"] = str(rv)
            self.history.append((t, rv, kind, obj))
        self.down, self.frozen, self.compact, self.bookmark_every = list(down), list(frozen), compact, bookmarks
        self.lists: list[float] = []
        self.watches: list[dict[str, Any]] = []
        self.logs_read = 0

    # ---- the server's state

    def _fault(self, faults: list[tuple[float, float]], t: float) -> tuple[float, float] | None:
        return next((f for f in faults if f[0] <= t < f[1]), None)

    def _rv_at(self, t: float) -> int:
        return max([10] + [rv for wt, rv, _k, _o in self.history if wt <= t])

    def _state(self, t: float) -> list[Obj]:
        state = {key_of(o): o for o in self.initial}
        for wt, _rv, kind, obj in self.history:
            if obj is not None and wt <= t:
                if kind == "DELETED":
                    state.pop(key_of(obj), None)
                else:
                    state[key_of(obj)] = obj
        return [copy.deepcopy(o) for o in state.values()]

    def _no_answer(self, read: float) -> None:
        """A request to a down or frozen server: refused at once, or silent until the freeze ends
        (then answered) or the read timeout."""
        now = self.time.now
        if self._fault(self.down, now):
            raise WatchInterrupted(WHERE + " did not answer: connection refused", "connection refused", False, WHERE)
        freeze = self._fault(self.frozen, now)
        if freeze:
            if freeze[1] <= now + read:
                self.time.now = freeze[1]
                return
            self.time.now += read
            raise WatchInterrupted("no answer", "no answer within %gs (read timeout)" % read, True, WHERE)

    def _expired(self, rv: str | None) -> bool:
        return bool(self.compact and self.time.now >= self.compact[0] and rv and int(rv) < int(self._compacted_rv()))

    def _compacted_rv(self) -> int:
        assert self.compact is not None
        return self._rv_at(self.compact[0])

    # ---- the client's interface

    def serves(self, api_version: str, kind: str) -> bool:
        return kind == "Ingress"  # no Gateway API

    def list_with_version(self, api_version: str, kind: str, read_timeout: float | None = None, **kw: Any) -> tuple[list[Obj], str]:
        assert read_timeout is not None and read_timeout <= LIST_READ_TIMEOUT
        self._no_answer(read_timeout)
        self.lists.append(self.time.now)
        return self._state(self.time.now), str(self._rv_at(self.time.now))

    def watch(self, api_version: str, kind: str, resource_version: str | None = None, timeout: int | None = None,
              **kw: Any) -> Iterator[tuple[str, Obj]]:
        assert timeout is not None and 1 <= timeout <= lw.STREAM_SECONDS
        read = timeout + WATCH_READ_SLACK
        self.watches.append({"resource_version": resource_version, "timeout": timeout, "at": self.time.now})
        self._no_answer(read)
        if self._expired(resource_version):
            if self.compact and self.compact[1] == "exception":
                raise WatchExpired("watch Ingress: resourceVersion expired (410 Gone)")
            gone = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Expired", "code": 410,
                    "message": "too old resource version: %s (%s)" % (resource_version, self._compacted_rv())}
            return ((e["type"], e["object"]) for e in [{"type": "ERROR", "object": gone}])
        return ((e["type"], e["object"]) for e in self._stream(int(resource_version or 0), timeout, read))

    def _stream(self, rv: int, timeout: int, read: float) -> Iterator[Obj]:
        opened = last_byte = self.time.now
        end = opened + timeout
        next_bookmark = opened + self.bookmark_every if self.bookmark_every else math.inf
        while True:
            pending = [(max(t, self.time.now), r, k, o) for t, r, k, o in self.history if r > rv]
            due = pending[0][0] if pending else math.inf
            faults = [f[0] for f in self.down + self.frozen if f[0] >= self.time.now or f[0] <= self.time.now < f[1]]
            fault_at = max(min(faults), self.time.now) if faults else math.inf
            at = min(due, next_bookmark, fault_at, end)
            self.time.now = max(self.time.now, at)
            if at == end:  # the server ends the stream (before a fault at the same moment)
                return
            if at == fault_at:
                if self._fault(self.down, at) or any(f[0] == at for f in self.down):
                    raise WatchInterrupted("reset", "connection reset", False, WHERE)
                freeze = [f for f in self.frozen if f[0] <= at < f[1] or f[0] == at][0]
                if freeze[1] <= last_byte + read:  # the server wakes up before the client gives up
                    self.time.now = freeze[1]
                    continue
                self.time.now = last_byte + read
                raise WatchInterrupted("silent", "no answer within %gs (read timeout)" % read, True, WHERE)
            if at == next_bookmark:
                last_byte, next_bookmark = at, next_bookmark + self.bookmark_every
                yield {"type": "BOOKMARK", "object": {"kind": "Ingress", "apiVersion": "networking.k8s.io/v1",
                                                      "metadata": {"resourceVersion": str(self._rv_at(at))}}}
                continue
            _t, rv, kind, obj = pending[0]
            if obj is not None:  # another kind's write moves the version, sends nothing
                last_byte = at
                yield {"type": kind, "object": copy.deepcopy(obj)}

    def list(self, api_version: str, kind: str, **kw: Any) -> list[Obj]:
        return []

    def pod_log(self, *args: Any, **kw: Any) -> str:
        self.logs_read += 1
        return ""


def write(t: float, ns: str, ip: str | None, kind: str = "MODIFIED", name: str = "test") -> tuple[float, str, Obj]:
    return t, kind, ing(ns, ip, name=name, writes=[("nginx-ingress-controller", "2026-11-21T23:40:00Z")])


def run_fake(api: FakeApi, time_: FakeTime, window: float = 60, max_changes: int = 5, attribute: bool = False) -> dict[str, Any]:
    options = parse_options(window, max_changes, False, [], False, attribute)
    return run(api, Selection(), options, clock=time_.clock, now=time_.wall, sleep=time_.sleep)


def changes(r: dict[str, Any]) -> list[tuple[str, list[str], float]]:
    return [(e["ingress"], e["new"], e["t"]) for e in r["timeline"]]


def outside_blind(r: dict[str, Any], writes: list[tuple[float, str, Obj]]) -> list[tuple[float, str, Obj]]:
    return [w for w in writes if not any(b["t_from"] <= w[0] <= b["t_to"] for b in r["blind_intervals"])]


def assert_each_once(r: dict[str, Any], writes: list[tuple[float, str, Obj]]) -> None:
    """Every status change written outside a blind interval is in the timeline exactly once, at its time."""
    for t, _kind, obj in outside_blind(r, writes):
        found = [e for e in r["timeline"] if e["ingress"] == key_of(obj) and e["new"] == status_addresses(obj) and e["t"] == t]
        assert len(found) == 1, (t, key_of(obj), r["timeline"])


START = [ing("one", "100.64.0.0"), ing("two", "172.18.0.2")]


def test_a_healthy_window_has_no_blind_interval() -> None:
    clock = FakeTime()
    writes = [write(3, "one", "172.18.0.2"), write(40, "one", "100.64.0.0")]
    api = FakeApi(clock, START, writes)
    r = run_fake(api, clock)
    assert changes(r) == [("one/test", ["172.18.0.2"], 3.0), ("one/test", ["100.64.0.0"], 40.0)]
    assert r["blind_intervals"] == [] and r["blind_seconds"] == 0 and not r["mostly_blind"] and r["passed"]
    assert r["ingresses"]["one/test"]["note"] is None
    assert r["watch_streams"] == 6 and [w["timeout"] for w in api.watches] == [10] * 6  # each ended by the server's timeout
    assert api.watches[1]["resource_version"] == "11" and clock.sleeps == []


def test_connection_reset_mid_stream_resumes_from_the_last_version() -> None:
    clock = FakeTime()
    writes = [write(2, "one", "172.18.0.2"), write(4.5, "two", "100.64.0.9"), write(6, "one", "100.64.0.0"), write(8, "two", "172.18.0.2")]
    api = FakeApi(clock, START, writes, down=[(4, 5.2)])
    r = run_fake(api, clock, window=20)
    # reset at 4 (waits 0.5); refused at 4.5 (waits 1); open again at 5.5, where the change
    # made at 4.5 is replayed
    assert r["blind_intervals"] == [{"from": "2026-11-21T23:40:04.000Z", "to": "2026-11-21T23:40:05.500Z", "t_from": 4.0, "t_to": 5.5,
                                     "seconds": 1.5, "why": "connection reset; then connection refused", "missed": False}]
    assert [w["resource_version"] for w in api.watches[:3]] == ["10", "11", "11"] and clock.sleeps == [0.5, 1.0]
    assert changes(r) == [("one/test", ["172.18.0.2"], 2.0), ("two/test", ["100.64.0.9"], 5.5),
                          ("one/test", ["100.64.0.0"], 6.0), ("two/test", ["172.18.0.2"], 8.0)]
    assert_each_once(r, writes)
    assert r["passed"] and not any(e["seen_after_blind"] for e in r["timeline"])
    assert r["ingresses"]["one/test"]["note"].startswith("no change missed: the watch was blind at t=4-5.5s (connection reset; "
                                                         "then connection refused) but resumed from the last resourceVersion")


@pytest.mark.parametrize("gone", ["exception", "event"])
def test_410_gone_relists_and_reports_the_difference_once(gone: str) -> None:
    clock = FakeTime()
    writes = [write(2, "one", "172.18.0.2"),
              write(5, "one", "100.64.0.0"), write(6, "one", "172.18.0.2"),  # a flap while blind: only the net state is seen
              write(7, "two", "100.64.0.7"),
              write(7.5, "one", None, kind="ADDED", name="late"), write(7.6, "one", "100.64.0.8", name="late"),
              write(15, "two", "172.18.0.2")]
    api = FakeApi(clock, START, writes, down=[(4, 9)], compact=(8, gone))
    r = run_fake(api, clock, window=20)
    [blind] = r["blind_intervals"]
    assert (blind["t_from"], blind["t_to"], blind["missed"]) == (4.0, 11.5, True)  # waits 0.5, 1, 2, 4 s
    assert blind["why"] == "connection reset; then connection refused; then resourceVersion 11 expired (410 Gone)"
    assert api.lists == [0.0, 11.5] and api.watches[-1]["resource_version"] == "16"  # watched again from the re-list's version
    assert changes(r) == [("one/test", ["172.18.0.2"], 2.0),
                          ("one/late", ["100.64.0.8"], 11.5), ("two/test", ["100.64.0.7"], 11.5),  # the re-list's difference
                          ("two/test", ["172.18.0.2"], 15.0)]
    assert [e["seen_after_blind"] for e in r["timeline"]] == [False, True, True, False]
    assert_each_once(r, writes)
    two = r["ingresses"]["two/test"]
    assert two["changes"] == 2 and two["note"] == (
        "a change may have been missed: the watch was blind at t=4-11.5s (connection reset; then connection refused; then "
        "resourceVersion 11 expired (410 Gone)); the change at t=11.5s was seen after a blind interval (by a re-list)")
    assert r["ingresses"]["one/test"]["note"].startswith("a change may have been missed") and r["ingresses"]["one/test"]["changes"] == 1
    # an Ingress new during the window was empty before, as for a watch event
    assert not r["mostly_blind"] and r["failures"] == ["one/late: status was empty, written by nginx-ingress-controller"]


class ScriptedClient:
    """Watch streams as scripts: real watch events ({"type", "object"}), waits (seconds on the
    fake clock) and exceptions raised there (first in the script: when the stream opens)."""

    def __init__(self, time_: FakeTime, lists: list[list[Obj]], streams: list[list[Any]]) -> None:
        self.time, self.lists, self.streams = time_, lists, streams
        self.watches: list[str | None] = []

    def serves(self, api_version: str, kind: str) -> bool:
        return kind == "Ingress"  # no Gateway API

    def list_with_version(self, api_version: str, kind: str, read_timeout: float | None = None, **kw: Any) -> tuple[list[Obj], str]:
        items = self.lists.pop(0)
        return items, max((o["metadata"]["resourceVersion"] for o in items), key=int)

    def watch(self, api_version: str, kind: str, resource_version: str | None = None, timeout: int | None = None,
              **kw: Any) -> Iterator[tuple[str, Obj]]:
        self.watches.append(resource_version)
        script = self.streams.pop(0) if self.streams else [float(timeout or 1)]
        if script and isinstance(script[0], BaseException):
            raise script[0]
        return self._play(script)

    def _play(self, script: list[Any]) -> Iterator[tuple[str, Obj]]:
        for step in script:
            if isinstance(step, (int, float)):
                self.time.now += step
            elif isinstance(step, BaseException):
                raise step
            else:
                yield step["type"], step["object"]


def test_410_as_an_error_event_on_a_live_stream() -> None:
    clock = FakeTime()
    gone = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "Expired", "code": 410,
            "message": "too old resource version: 11 (14)"}
    client = ScriptedClient(clock, lists=[[ing("one", "100.64.0.0", rv=9), ing("two", "172.18.0.2", rv=10)],
                                          [ing("one", "100.64.0.5", rv=14), ing("two", "172.18.0.2", rv=10)]],
                            streams=[[1.0, {"type": "MODIFIED", "object": ing("one", "172.18.0.2", rv=11)}, 1.0,
                                      {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "12"}}}, 1.0,
                                      {"type": "ERROR", "object": gone}],
                                     [2.0, {"type": "MODIFIED", "object": ing("two", "100.64.0.2", rv=15)}]])
    r = run(client, Selection(), parse_options(30, 5, False, [], False, False), clock=clock.clock, now=clock.wall, sleep=clock.sleep)
    assert client.watches[:3] == ["10", "14", "15"]  # re-listed at once, then watched from the list's version
    assert changes(r) == [("one/test", ["172.18.0.2"], 1.0), ("one/test", ["100.64.0.5"], 3.0), ("two/test", ["100.64.0.2"], 5.0)]
    assert [e["seen_after_blind"] for e in r["timeline"]] == [False, True, False]
    assert r["blind_intervals"] == [{"from": "2026-11-21T23:40:03.000Z", "to": "2026-11-21T23:40:03.000Z", "t_from": 3.0, "t_to": 3.0,
                                     "seconds": 0.0, "why": "resourceVersion 12 expired (410 Gone)", "missed": True}]
    assert r["ingresses"]["one/test"]["note"].endswith("the change at t=3s was seen after a blind interval (by a re-list)")
    assert r["bookmarks"] == 1 and clock.sleeps == []


def test_another_error_event_reconnects_from_the_same_version() -> None:
    clock = FakeTime()
    failed = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "reason": "InternalError", "code": 500,
              "message": "etcdserver: request timed out"}
    client = ScriptedClient(clock, lists=[list(START)],
                            streams=[[1.0, {"type": "MODIFIED", "object": ing("one", "172.18.0.2", rv=11)}, 1.0,
                                      {"type": "ERROR", "object": failed}],
                                     [{"type": "MODIFIED", "object": ing("one", "100.64.0.0", rv=12)}]])
    r = run(client, Selection(), parse_options(10, 5, False, [], False, False), clock=clock.clock, now=clock.wall, sleep=clock.sleep)
    assert client.watches[:2] == ["1", "11"] and clock.sleeps[0] == 0.5
    assert [(b["t_from"], b["t_to"], b["why"], b["missed"]) for b in r["blind_intervals"]] == [
        (2.0, 2.5, "the server ended the stream: 500 InternalError", False)]
    assert changes(r) == [("one/test", ["172.18.0.2"], 1.0), ("one/test", ["100.64.0.0"], 2.5)]


def test_a_reset_scripted_mid_stream_loses_nothing() -> None:
    clock = FakeTime()
    reset = WatchInterrupted("reset", "connection reset", False, WHERE)
    client = ScriptedClient(clock, lists=[list(START)],
                            streams=[[1.0, {"type": "MODIFIED", "object": ing("one", "172.18.0.2", rv=11)}, 1.0, reset],
                                     [reset],  # refused again at once: back off 0.5 s
                                     [{"type": "MODIFIED", "object": ing("one", "100.64.0.0", rv=12)}]])
    r = run(client, Selection(), parse_options(10, 5, False, [], False, False), clock=clock.clock, now=clock.wall, sleep=clock.sleep)
    assert client.watches[:3] == ["1", "11", "11"] and clock.sleeps[:2] == [0.5, 1.0]
    assert changes(r) == [("one/test", ["172.18.0.2"], 1.0), ("one/test", ["100.64.0.0"], 3.5)]
    assert [(b["t_from"], b["t_to"], b["missed"]) for b in r["blind_intervals"]] == [(2.0, 3.5, False)]


def test_a_403_after_the_watch_was_granted_is_a_blind_interval_and_before_it_an_error() -> None:
    # kube-apiserver restarted on kind (tests/kind/fault_test.py) answered 403 to kubernetes-admin
    # for a few seconds, until its authorizer had loaded RBAC.
    clock = FakeTime()
    forbidden = WatchForbidden('watch Ingress failed: ingresses.networking.k8s.io is forbidden: User "kubernetes-admin" '
                               'cannot watch resource "ingresses"')
    client = ScriptedClient(clock, lists=[list(START)],
                            streams=[[1.0, {"type": "MODIFIED", "object": ing("one", "172.18.0.2", rv=11)}, 1.0,
                                      WatchInterrupted("reset", "connection reset", False, WHERE)],
                                     [forbidden], [forbidden],
                                     [{"type": "MODIFIED", "object": ing("one", "100.64.0.0", rv=12)}]])
    r = run(client, Selection(), parse_options(10, 5, False, [], False, False), clock=clock.clock, now=clock.wall, sleep=clock.sleep)
    # reset at 2, then two 403s: backing off 0.5, 1 and 2 s, the watch resumes at 5.5 and loses nothing
    assert changes(r) == [("one/test", ["172.18.0.2"], 1.0), ("one/test", ["100.64.0.0"], 5.5)]
    [blind] = r["blind_intervals"]
    assert (blind["t_from"], blind["t_to"]) == (2.0, 5.5) and "connection reset" in blind["why"] and "403" in blind["why"]
    # Never granted in this window: the credentials, an error that names the refusal.

    class Refusing(ScriptedClient):
        def list_with_version(self, api_version: str, kind: str, read_timeout: float | None = None,
                              **kw: Any) -> tuple[list[Obj], str]:
            raise forbidden

    client = Refusing(FakeTime(), lists=[], streams=[])
    with pytest.raises(WatchForbidden, match="cannot watch"):
        run(client, Selection(), parse_options(10, 5, False, [], False, False), clock=clock.clock, now=clock.wall,
            sleep=clock.sleep)


def test_bookmark_only_streams_move_the_resume_version() -> None:
    clock = FakeTime()
    # other objects' writes move the server's resourceVersion; bookmarks carry it to the watch
    api = FakeApi(clock, START, [], down=[(11, 11.2)], bookmarks=3, bumps=[1, 4, 8, 20])
    r = run_fake(api, clock, window=30)
    assert r["timeline"] == [] and r["events"] == 0 and r["bookmarks"] >= 6 and r["passed"]
    # from the bookmark at 9 (version 13), across the reset at 11, and from the one after 20 (14)
    assert [w["resource_version"] for w in api.watches] == ["10", "13", "13", "14"]
    assert [(b["t_from"], b["t_to"], b["why"], b["missed"]) for b in r["blind_intervals"]] == [(11.0, 11.5, "connection reset", False)]


def test_a_slow_stream_times_out_and_the_watch_resumes() -> None:
    clock = FakeTime()
    writes = [write(5, "one", "172.18.0.2"), write(20, "one", "100.64.0.0"), write(70, "two", "100.64.0.1")]
    api = FakeApi(clock, START, writes, frozen=[(8, 50)])
    r = run_fake(api, clock, window=120)
    # the stream's last byte came at 5, and the server froze at 8 before ending it: the read
    # timeout (10 + 5 s) ends it at 20; the reconnect at 20.5 times out at 35.5, the one at 36.5
    # is answered when the server wakes at 50, and the write made at 20 is replayed then
    [blind] = r["blind_intervals"]
    assert (blind["t_from"], blind["t_to"], blind["missed"]) == (5.0, 50.0, False)
    assert blind["why"] == "no answer within 15s (read timeout)" and lw.STREAM_SECONDS + WATCH_READ_SLACK == 15
    assert [w["at"] for w in api.watches[:4]] == [0.0, 20.5, 36.5, 60.0]
    assert changes(r) == [("one/test", ["172.18.0.2"], 5.0), ("one/test", ["100.64.0.0"], 50.0), ("two/test", ["100.64.0.1"], 70.0)]
    assert_each_once(r, writes)
    assert r["passed"] and clock.now <= 120 + lw.STREAM_SECONDS + WATCH_READ_SLACK


def test_a_server_frozen_at_a_reconnect_is_blind_from_the_request() -> None:
    clock = FakeTime()
    writes = [write(30, "one", "172.18.0.2")]
    api = FakeApi(clock, START, writes, frozen=[(10, 40)])
    r = run_fake(api, clock, window=60)
    # the first stream ends at 10 as asked; the next request gets no answer until its read
    # timeout at 25, the one at 25.5 is answered when the server wakes at 40
    assert [(b["t_from"], b["t_to"], b["why"]) for b in r["blind_intervals"]] == [(10.0, 40.0, "no answer within 15s (read timeout)")]
    assert changes(r) == [("one/test", ["172.18.0.2"], 40.0)]
    assert r["blind_seconds"] == 30 and not r["mostly_blind"] and r["passed"]  # half is not more than half


def test_a_mostly_blind_window_fails_with_its_reason() -> None:
    clock = FakeTime()
    writes = [write(2, "one", "172.18.0.2"), write(8, "one", "100.64.0.0")]
    api = FakeApi(clock, START, writes, down=[(5, 1000)])
    r = run_fake(api, clock, window=20, attribute=True)
    assert r["blind_intervals"][0]["t_from"] == 5.0 and r["blind_intervals"][0]["t_to"] == 20.0 and r["blind_intervals"][0]["missed"]
    assert r["blind_seconds"] == 15.0 and r["mostly_blind"] and not r["passed"]
    assert r["failures"][0] == ("the watch was blind for 15s of the 20s window (more than half: t=5-20s (connection reset; then "
                                "connection refused)), so the Ingress status could not be judged")
    assert changes(r) == [("one/test", ["172.18.0.2"], 2.0)]  # the change at 8 was never seen
    assert r["ingresses"]["one/test"]["note"].startswith("a change may have been missed")
    assert api.logs_read == 0  # the server is gone: no log reading after the window
    assert clock.now <= 20.0 and max(clock.sleeps) == lw.BACKOFF_MAX and len(api.watches) < 12


def test_half_blind_is_not_mostly_blind() -> None:
    clock = FakeTime()
    api = FakeApi(clock, START, [], down=[(10, 19.5)])
    r = run_fake(api, clock, window=20)
    assert 0 < r["blind_seconds"] <= 10 and not r["mostly_blind"] and r["passed"]


def test_a_server_down_for_the_whole_window_fails_with_one_line() -> None:
    clock = FakeTime()
    api = FakeApi(clock, START, [], down=[(0, 1000)])
    with pytest.raises(ApiUnreachable) as exc:
        run_fake(api, clock, window=20)
    assert str(exc.value) == (WHERE + " did not answer in 20s: connection refused; is the cluster running? "
                              "(kindlab-twin get clusters / kind get clusters)")
    assert isinstance(exc.value, KindlabError) and "\n" not in str(exc.value)
    assert clock.now <= 20.0 and api.watches == [] and api.lists == []


def test_a_server_frozen_for_the_whole_window_fails_within_the_window_and_a_timeout() -> None:
    clock = FakeTime()
    api = FakeApi(clock, START, [], frozen=[(0, 1000)])
    with pytest.raises(ApiUnreachable, match=r"did not answer in 20s: no answer within \d+s \(read timeout\); is the cluster"):
        run_fake(api, clock, window=20)
    assert clock.now <= 20 + WATCH_READ_SLACK


def test_a_server_that_comes_up_late_starts_the_window_there() -> None:
    clock = FakeTime()
    writes = [write(2, "one", "172.18.0.2"), write(9, "one", "100.64.0.0")]
    api = FakeApi(clock, START, writes, down=[(0, 4)])
    r = run_fake(api, clock, window=20)
    [blind] = r["blind_intervals"]
    assert (blind["t_from"], blind["t_to"], blind["missed"], blind["why"]) == (0.0, 7.5, True, "connection refused")
    assert changes(r) == [("one/test", ["100.64.0.0"], 9.0)]  # the starting state was listed at 7.5, with the write of 2 in it
    assert r["ingresses"]["one/test"]["addresses_seen"] == [["172.18.0.2"], ["100.64.0.0"]] and r["passed"]


class FakeLogClient:
    """Controller pods come and go between reads; each read returns that pod's lines."""

    def __init__(self) -> None:
        self.pods: list[tuple[str, str, str]] = []
        self.logs: dict[str, str] = {}
        self.asked: list[tuple[str, int]] = []  # (pod, since_seconds) of each read

    def list(self, api_version: str, kind: str, **_kw: Any) -> list[dict[str, Any]]:
        return [{"metadata": {"namespace": ns, "name": pod},
                 "spec": {"containers": [{"name": c, "image": "registry.k8s.io/ingress-nginx/controller:v1.15.1"}]}}
                for ns, pod, c in self.pods]

    def pod_log(self, ns: str, pod: str, container: str, since_seconds: int | None = None, previous: bool = False) -> str:
        # The real client's read_namespaced_pod_log refuses anything but an integer here.
        assert isinstance(since_seconds, int) and not isinstance(since_seconds, bool), since_seconds
        self.asked.append((pod, since_seconds))
        return "" if previous else self.logs.get(pod, "")


def test_pod_logs_keep_the_lines_of_a_pod_that_went_away_and_name_the_restart() -> None:
    start = dt.datetime(2026, 11, 21, 23, 40, 0, tzinfo=dt.timezone.utc)
    client = FakeLogClient()
    old, new = "ingress-ingress-nginx-controller-5d9c-abcde", "ingress-ingress-nginx-controller-5d9c-fghij"
    client.pods = [("one", old, "controller")]
    client.logs[old] = line("23:40:01.500000", "one", "100.64.0.1") + "\n" + line("23:40:20.000000", "one", "").replace(
        'newValue=[{"ip":""}]', "newValue=[]")
    logs = PodLogs(client, start, lambda: start + dt.timedelta(seconds=25))
    logs.collect()
    client.pods = [("one", new, "controller")]  # the old pod is gone: its lines were read before
    client.logs = {new: line("23:40:30.000000", "one", "100.64.0.1")}
    logs.collect()
    logs.collect()  # read twice: each line counted once
    assert len(logs.entries) == 3
    # A pod's first read covers the window (25 s, plus the matching slack); a later one only the
    # time since its last read, with two seconds of overlap.
    assert client.asked == [(old, 45), (new, 45), (new, 2)]
    timeline = [
        {"ingress": "one/test", "event": "MODIFIED", "new": ["100.64.0.1"], "time": "2026-11-21T23:40:01.600Z"},
        {"ingress": "one/test", "event": "MODIFIED", "new": [], "time": "2026-11-21T23:40:20.100Z"},
        {"ingress": "one/test", "event": "MODIFIED", "new": ["100.64.0.1"], "time": "2026-11-21T23:40:30.100Z"},
    ]
    attribute_from_logs(timeline, logs.since(start))
    assert [c["pod"] for c in timeline] == ["one/" + old, "one/" + old, "one/" + new]
    assert restarts(timeline) == [{"ingress": "one/test", "time": "2026-11-21T23:40:30.100Z",
                                   "from": "one/" + old, "to": "one/" + new}]
