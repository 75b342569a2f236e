# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The data-plane check over a window: the same reading (dataplane.read_round) every INTERVAL
seconds, so a divergence is seen in motion — when it appeared, how it changed, when the pod
matched again, and how long that took.

Each round lists the controllers, their pods and the EndpointSlices again and reads every
Running controller pod once: a pod that appears mid-window (a restarted controller) is read from
then on; one that disappears ends its rows. The rows are (pod, controller, Ingress, backend).
What a round sees ready in the EndpointSlices is kept, per address, as when it was last seen
ready, so a later `stale` finding says since when. The timeline has an event when a row's
divergence appears or changes (`stale`, `missing`, `unread`; an event with no addresses: that
kind ended while another remains) and `converged` when a row that diverged matches again. `lag`
per row: the longest time one of its divergences lasted, and whether one was still open at the
end. `converged_after`: seconds from the start to the round from which every pod matched to the
end, after a divergence was seen (null otherwise); `until_converged` stops there; `window_started` the
wall time of the first round, and each `lag` row's `seen` the offset it was first read (report.html
draws each replica's state from these and the events). The findings and the verdict are those of
the last round.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.dataplane import (
    KINDS,
    MISSING,
    STALE,
    UNREAD,
    ApiSide,
    LastReady,
    read_round,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection

Obj = dict[str, Any]
CONVERGED = "converged"
# (pod, controller, Ingress, backend): one row of the timeline.
Key = tuple[str, str, str, str]
# Finding kind → the addresses of that kind (none for unread): a row's divergence in one round.
State = dict[str, tuple[str, ...]]


@dataclass(frozen=True)
class Clock:
    """Time as the window needs it: a monotonic clock for offsets and waits, the wall clock
    for the timestamps. Tests pass a fake one."""

    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep


@dataclass(frozen=True)
class Row:
    """One row in one round: its divergence (empty: it matches), what the pod routes the
    backend to, and why the pod was not read."""

    state: State
    routed: tuple[str, ...] = ()
    reason: str = ""


def round_rows(result: Obj) -> dict[Key, Row]:
    """The rows of one round's result (dataplane.check): every backend of every pod read or not."""
    out: dict[Key, Row] = {}
    for pod, report in result["pods"].items():
        for backend in report["backends"]:
            key = (pod, str(backend["controller"]), str(backend["ingress"]), str(backend["backend"]))
            state: State = {}
            if report.get("unread"):
                state[UNREAD] = ()
            else:
                if backend.get("stale"):
                    state[STALE] = tuple(backend["stale"])
                if backend.get("missing"):
                    state[MISSING] = tuple(backend["missing"])
            out[key] = Row(state, tuple(backend.get("routed") or ()), str(report.get("unread") or ""))
    return out


@dataclass
class _Track:
    """One row across the rounds."""

    state: State
    start: float | None  # the offset its current divergence was first seen, None when it matches
    from_start: bool  # its first divergence was there in the window's first round
    longest: float = 0.0
    divergences: int = 0
    open_at_end: bool = False
    gone: float | None = None  # the offset its pod was first missed
    seen: float = 0.0  # the offset of the round that first read it (a pod that came mid-window)


@dataclass
class Timeline:
    """The rows' divergences over the rounds: events, and each row's lag."""

    events: list[Obj] = field(default_factory=list)
    tracks: dict[Key, _Track] = field(default_factory=dict)
    rounds: int = 0

    def _event(self, offset: float, when: str, key: Key, finding: str, addresses: tuple[str, ...], reason: str = "") -> None:
        event: Obj = {"time": when, "offset": round(offset, 3), "pod": key[0], "controller": key[1], "ingress": key[2],
                      "backend": key[3], "finding": finding, "addresses": list(addresses)}
        if reason:
            event["reason"] = reason
        self.events.append(event)

    def observe(self, offset: float, when: str, rows: Mapping[Key, Row]) -> None:
        """One round, at OFFSET seconds from the start (wall time WHEN)."""
        first = self.rounds == 0
        self.rounds += 1
        for key in sorted(rows):
            row = rows[key]
            track = self.tracks.get(key)
            if track is None:
                track = self.tracks[key] = _Track({}, None, False, seen=offset)
            track.gone = None  # back, when it had gone (a new pod of the same name)
            before, now = track.state, row.state
            for kind in KINDS:
                if kind in now and before.get(kind) != now[kind]:
                    self._event(offset, when, key, kind, now[kind], row.reason if kind == UNREAD else "")
                elif kind in before and kind not in now and now:
                    self._event(offset, when, key, kind, ())
            if now and track.start is None:
                track.start, track.from_start = offset, track.from_start or first
                track.divergences += 1
            elif not now and track.start is not None:
                self._event(offset, when, key, CONVERGED, row.routed)
                track.longest = max(track.longest, offset - track.start)
                track.start = None
            track.state = dict(now)
        for key, track in self.tracks.items():
            if key not in rows and track.gone is None:  # its pod is gone (or no longer serves it): the row ends
                if track.start is not None:
                    track.longest = max(track.longest, offset - track.start)
                    track.start = None
                track.gone, track.state = offset, {}

    def diverging(self) -> bool:
        return any(t.state for t in self.tracks.values() if t.gone is None)

    def finish(self, offset: float) -> None:
        """The window ended at OFFSET: divergences still open count to there."""
        for track in self.tracks.values():
            if track.start is not None:
                track.longest = max(track.longest, offset - track.start)
                track.open_at_end = True

    def lag(self) -> list[Obj]:
        return [{"pod": key[0], "controller": key[1], "ingress": key[2], "backend": key[3], "lag": round(t.longest, 3),
                 "open": t.open_at_end, "divergences": t.divergences, "from_start": t.divergences > 0 and t.from_start,
                 "gone": None if t.gone is None else round(t.gone, 3), "seen": round(t.seen, 3)}
                for key, t in sorted(self.tracks.items())]


def remember_ready(history: dict[str, dict[str, str]], apis: Mapping[tuple[str, str], list[ApiSide]], when: str) -> None:
    """Every address ready in this round's EndpointSlices: last seen ready WHEN."""
    for (namespace, service), sides in apis.items():
        seen = history.setdefault("%s/%s" % (namespace, service), {})
        for api in sides:
            for address in api.ready:
                seen[address] = when


def watch(
    read: Callable[[LastReady], tuple[Obj, Mapping[tuple[str, str], list[ApiSide]]]],
    window: float,
    interval: float,
    until_converged: bool = False,
    last_ready: LastReady | None = None,
    clock: Clock = Clock(),
) -> Obj:
    """READ (one round: last ready so far → its result and its API sides) every INTERVAL seconds
    for WINDOW seconds (one round when 0). The last round's result, with `rounds`, `timeline`,
    `lag`, `converged_after` and `last_ready` (the history, to pass to a later check)."""
    history: dict[str, dict[str, str]] = {service: dict(seen) for service, seen in (last_ready or {}).items()}
    timeline = Timeline()
    start = clock.monotonic()
    started = iso(clock.wall())
    seen_divergence = False
    converged_since: float | None = None
    offset = 0.0
    result: Obj = {}
    while True:
        offset = clock.monotonic() - start
        when = iso(clock.wall())
        result, apis = read(history)
        remember_ready(history, apis, when)
        timeline.observe(offset, when, round_rows(result))
        if timeline.diverging():
            seen_divergence, converged_since = True, None
        elif seen_divergence and converged_since is None:
            converged_since = offset
        if until_converged and converged_since is not None:
            break
        following = max(start + timeline.rounds * interval, clock.monotonic())  # a slow round: the next at once
        if window <= 0 or following - start > window:
            break
        clock.sleep(max(0.0, following - clock.monotonic()))  # the clock moved on since `following`
    timeline.finish(offset)
    return dict(result, window_started=started, rounds=timeline.rounds, duration=round(offset, 3), timeline=timeline.events, lag=timeline.lag(),
                converged_after=None if converged_since is None else round(converged_since, 3), last_ready=history)


def run(client: Any, selection: Selection, fail_on: tuple[str, ...] = KINDS, timeout: float = 10.0,
        last_ready: LastReady | None = None, window: float = 0.0, interval: float = 1.0, until_converged: bool = False,
        clock: Clock = Clock()) -> Obj:
    """ingress_dataplane: dataplane.read_round over the cluster, every INTERVAL seconds for WINDOW seconds."""
    return watch(lambda history: read_round(client, selection, fail_on, timeout, history),
                 window, interval, until_converged, last_ready, clock)
