"""What moved under each status bar (issue 36): actions, each probe second by second, each replica's data plane."""
from __future__ import annotations

import datetime as dt
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.motion import (
    Instant, Second, motion, replicas, strips,
)

ORIGIN = dt.datetime(2026, 11, 26, 10, 0, 0, tzinfo=dt.timezone.utc)


def lag(pod: str, backend: str, seen: float = 0.0, gone: float | None = None) -> dict[str, Any]:
    return {"pod": pod, "controller": "one/c", "ingress": "one/shop", "backend": backend, "seen": seen, "gone": gone}


def event(offset: float, pod: str, backend: str, finding: str, *addresses: str) -> dict[str, Any]:
    return {"offset": offset, "pod": pod, "ingress": "one/shop", "backend": backend, "finding": finding, "addresses": list(addresses)}


def test_a_replica_s_state_is_the_worst_of_its_backends_and_each_pod_has_its_own_band() -> None:
    dataplane = {"window_started": "2026-11-26T10:00:02.000Z", "duration": 30.0, "lag": [
        lag("one/c-a", "web:80"), lag("one/c-a", "api:80"),
        lag("one/c-b", "web:80", seen=12.0),  # a replica that started during the window
        lag("one/c-old", "web:80", gone=8.0),  # one that went
    ], "timeline": [
        event(5.0, "one/c-a", "web:80", "stale", "10.244.0.5:80"),
        event(7.0, "one/c-a", "api:80", "missing", "10.244.0.9:80"),
        event(9.0, "one/c-a", "api:80", "converged", "10.244.0.9:80"),
        event(11.0, "one/c-a", "web:80", "converged", "10.244.0.7:80"),
        event(12.0, "one/c-b", "web:80", "unread"),
        event(14.0, "one/c-b", "web:80", "converged"),
    ]}
    found = replicas(dataplane, ORIGIN)["one/shop"]
    assert [(s.start, s.end, s.state, s.addresses) for s in found["one/c-a"]] == [
        (2.0, 7.0, "in step", ()), (7.0, 9.0, "stale", ("10.244.0.5:80",)), (9.0, 11.0, "missing", ("10.244.0.9:80",)),
        (11.0, 13.0, "stale", ("10.244.0.5:80",)), (13.0, 32.0, "in step", ())]
    assert [(s.start, s.end, s.state) for s in found["one/c-b"]] == [(14.0, 16.0, "unread"), (16.0, 32.0, "in step")]
    assert [(s.start, s.end, s.state) for s in found["one/c-old"]] == [(2.0, 10.0, "in step")]
    assert replicas({"duration": 30.0, "lag": [lag("one/c-a", "web:80")]}, ORIGIN) == {}  # no start: nowhere to draw it


def test_probes_land_on_the_ingresses_they_name_under_their_names_and_actions_on_every_ingress() -> None:
    cont = {"started": "2026-11-26T10:00:03.000Z", "per_second": [
        {"second": 0, "outcomes": {"answered": 5}}, {"second": 1, "outcomes": {"answered": 2, "404": 3}},
        {"second": 2, "outcomes": {"timed out": 2, "502": 2, "answered": 1}}]}
    results = {
        "status": {"ingresses": {"one/shop": {}, "two/shop": {}}},
        "actions": {"actions": [{"name": "ship", "kind": "rollout", "started": "2026-11-26T10:00:04.500Z", "ok": True},
                                {"name": "never", "kind": "rollout", "started": None, "ok": False}]},
        # the verify role's two loops: the continuous probe in the first, skipped in the second
        "reachability_continuous": [{"ingresses": ["one/shop"], "continuous": cont}],
        "reachability": [{"skipped": True}],
    }
    moved = motion(results, [{"name": "steady", "ingress": "one/shop", "rate": 5}], ORIGIN)
    assert sorted(moved) == ["one/shop", "two/shop"]
    assert moved["one/shop"].actions == moved["two/shop"].actions == [Instant(4.5, "ship", True)]
    seconds = moved["one/shop"].probes["steady"]
    assert [(s.start, s.outcome) for s in seconds] == [(3.0, "answered"), (4.0, "404"), (5.0, "502")]  # a tie: by name
    assert moved["two/shop"].probes == {} and motion(results, [], None) == {}
    assert Second(0.0, {"answered": 3}).outcome == "answered"


def test_the_text_strip_puts_every_row_on_one_column_per_second() -> None:
    moved = motion({"status": {"ingresses": {"one/shop": {}}},
                    "actions": {"actions": [{"name": "ship", "started": "2026-11-26T10:00:02.000Z", "ok": True}]},
                    "reachability_continuous": [{"ingresses": ["one/shop"], "continuous": {
                        "started": "2026-11-26T10:00:00.000Z",
                        "per_second": [{"second": i, "outcomes": {"answered": 1} if i != 3 else {"502": 1}} for i in range(6)]}}],
                    "dataplane": {"window_started": "2026-11-26T10:00:01.000Z", "duration": 5.0, "lag": [lag("one/c-a", "web:80")],
                                  "timeline": [event(1.0, "one/c-a", "web:80", "stale", "10.244.0.5:80"),
                                               event(3.0, "one/c-a", "web:80", "converged")]}}, [], ORIGIN)
    assert strips(moved["one/shop"], 8.0) == [
        "actions            |  1     | 1 ship at +2.0s",
        "probe one/shop     |...5..  |",
        "data plane one/c-a | =ss==  |",
        "                    one character per 1 s; probe: . answered, 4/5 a 4xx/5xx status, t timed out, r refused, "
        "b wrong body, e other error; data plane: = in step, s stale, m missing, ? unread"]
