# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An incident in motion, per Ingress, on the status window's axis (seconds since the watch began):
- the scenario's actions, as instants (lab-wide, so on every Ingress);
- each continuous probe of the Ingress, second by second: what its requests came to (answered,
  a status code, timed out, refused, ...), the second's mark being its most frequent failure;
- each controller replica's data plane for the Ingress, as stretches: in step, stale, missing or
  unread, with the addresses (rebuilt from ingress_dataplane's timeline, lag rows and start).

Pure functions of the verify results: report_html.py draws them under each status bar and
summary.md prints them as text strips (strips()).
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._time import parse_time
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.dataplane import MISSING, STALE, UNREAD
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.dataplane_window import CONVERGED
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_continuous import ANSWERED
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.timeline import _dict, _list, probe_ingresses

Obj = dict[str, Any]

IN_STEP = "in step"  # a replica that matches the EndpointSlices (ingress_dataplane reports no finding)
# A replica's state for an Ingress is the worst of its backends'.
STATES = (IN_STEP, STALE, MISSING, UNREAD)


@dataclass(frozen=True)
class Instant:
    """An action: when it started, its name, whether it worked."""

    at: float
    name: str
    ok: bool


@dataclass(frozen=True)
class Second:
    """One second of a continuous probe: [start, start + 1), its outcome counts and its mark."""

    start: float
    counts: dict[str, int]

    @property
    def outcome(self) -> str:
        """The most frequent failure of the second (the first by name on a tie), else answered."""
        failures = sorted(((-n, kind) for kind, n in self.counts.items() if kind != ANSWERED and n > 0))
        return failures[0][1] if failures else ANSWERED


@dataclass(frozen=True)
class Stretch:
    """A replica's data-plane state for an Ingress over [start, end), with the addresses it concerns."""

    start: float
    end: float
    state: str
    addresses: tuple[str, ...] = ()


@dataclass
class Motion:
    """What moved on one Ingress's axis."""

    actions: list[Instant] = field(default_factory=list)
    probes: dict[str, list[Second]] = field(default_factory=dict)  # probe label -> its seconds
    replicas: dict[str, list[Stretch]] = field(default_factory=dict)  # controller pod -> its stretches

    def empty(self) -> bool:
        return not (self.actions or self.probes or self.replicas)


def _seconds(when: dt.datetime | None, origin: dt.datetime) -> float | None:
    return None if when is None else (when - origin).total_seconds()


def actions(results: Obj, origin: dt.datetime) -> list[Instant]:
    out = []
    for action in _list(_dict(results.get("actions")).get("actions")):
        action = _dict(action)
        at = _seconds(parse_time(action.get("started")), origin)
        if at is not None:
            out.append(Instant(round(at, 3), str(action.get("name") or action.get("kind") or "action"), action.get("ok") is not False))
    return sorted(out, key=lambda i: i.at)


def probes(results: Obj, expected: list[Any], origin: dt.datetime) -> dict[str, dict[str, list[Second]]]:
    """Ingress -> probe label -> its seconds, for every continuous probe that reports them. The verify role
    registers one result per lab_expect.reachability item in each of its two loops (the other kind skipped)."""
    out: dict[str, dict[str, list[Second]]] = {}
    loops = [_list(results.get("reachability_continuous")), _list(results.get("reachability"))]
    for i in range(max(len(loop) for loop in loops)):
        found = [_dict(loop[i]) for loop in loops if i < len(loop) and _dict(_dict(loop[i]).get("continuous"))]
        if not found:
            continue
        result, cont = found[0], _dict(found[0]["continuous"])
        started = _seconds(parse_time(cont.get("started")), origin)
        if started is None:
            continue
        probe = _dict(expected[i]) if i < len(expected) else {}
        targets = probe_ingresses(result, probe)
        label = str(probe.get("name") or ", ".join(targets) or result.get("url") or "probe %d" % i)
        seconds = [Second(round(started + float(s["second"]), 3), {str(k): int(v) for k, v in _dict(s.get("outcomes")).items()})
                   for s in _list(cont.get("per_second")) if isinstance(s, dict) and "second" in s]
        for target in targets:
            out.setdefault(target, {})[label] = seconds
    return out


def _row_changes(events: list[Obj], seen: float, end: float) -> list[tuple[float, dict[str, tuple[str, ...]]]]:
    """One data-plane row (a pod's backend of an Ingress): (offset, its divergences from then on)."""
    state: dict[str, tuple[str, ...]] = {}
    changes = [(seen, dict(state))]
    for event in sorted(events, key=lambda e: float(e.get("offset") or 0.0)):
        kind, addresses = str(event.get("finding")), tuple(str(a) for a in _list(event.get("addresses")))
        if kind == CONVERGED:
            state = {}
        elif kind in (STALE, MISSING):
            if addresses:
                state[kind] = addresses
            else:  # that kind ended while another remains
                state.pop(kind, None)
        elif kind == UNREAD:
            if UNREAD in state:
                state.pop(UNREAD)
            else:
                state = {UNREAD: ()}
        else:
            continue
        changes.append((float(event.get("offset") or 0.0), dict(state)))
    changes.append((end, {}))
    return changes


def _worst(states: list[dict[str, tuple[str, ...]]]) -> tuple[str, tuple[str, ...]]:
    for kind in (UNREAD, MISSING, STALE):
        if any(kind in s for s in states):
            return kind, tuple(sorted({a for s in states for a in s.get(kind, ())}))
    return IN_STEP, ()


def replicas(dataplane: Obj, origin: dt.datetime) -> dict[str, dict[str, list[Stretch]]]:
    """Ingress -> controller pod -> its stretches, from the data-plane window (none without its start)."""
    start = _seconds(parse_time(dataplane.get("window_started")), origin)
    if start is None:
        return {}
    duration = float(dataplane.get("duration") or 0.0)
    events: dict[tuple[str, str, str], list[Obj]] = {}
    for event in _list(dataplane.get("timeline")):
        event = _dict(event)
        events.setdefault((str(event.get("pod")), str(event.get("ingress")), str(event.get("backend"))), []).append(event)
    rows: dict[tuple[str, str], list[list[tuple[float, dict[str, tuple[str, ...]]]]]] = {}
    for lag in _list(dataplane.get("lag")):
        lag = _dict(lag)
        key = (str(lag.get("pod")), str(lag.get("ingress")), str(lag.get("backend")))
        end = float(lag["gone"]) if lag.get("gone") is not None else duration
        rows.setdefault(key[:2], []).append(_row_changes(events.get(key, []), float(lag.get("seen") or 0.0), end))
    out: dict[str, dict[str, list[Stretch]]] = {}
    for (pod, ingress), changes in sorted(rows.items()):
        points = sorted({t for row in changes for t, _s in row})
        stretches: list[Stretch] = []
        for a, b in zip(points, points[1:]):
            if b <= a:
                continue
            live = [next((s for t, s in reversed(row) if t <= a), None) for row in changes if row[0][0] <= a < row[-1][0]]
            if not live:
                continue  # no backend of the Ingress was read by this pod then
            state, addresses = _worst([s for s in live if s is not None])
            if stretches and stretches[-1].state == state and stretches[-1].addresses == addresses and stretches[-1].end == round(start + a, 3):
                stretches[-1] = Stretch(stretches[-1].start, round(start + b, 3), state, addresses)
            else:
                stretches.append(Stretch(round(start + a, 3), round(start + b, 3), state, addresses))
        if stretches:
            out.setdefault(ingress, {})[pod] = stretches
    return out


def motion(results: Obj, expected_probes: list[Any], origin: dt.datetime | None) -> dict[str, Motion]:
    """Ingress -> what moved on its axis (the actions on every Ingress that has anything else, or on
    every one named in `ingresses` of the status watch)."""
    if origin is None:
        return {}
    found_probes = probes(results, expected_probes, origin)
    found_replicas = replicas(_dict(results.get("dataplane")), origin)
    lab_actions = actions(results, origin)
    keys = set(found_probes) | set(found_replicas) | {str(k) for k in _dict(_dict(results.get("status")).get("ingresses"))}
    out = {}
    for key in sorted(keys):
        m = Motion(list(lab_actions), found_probes.get(key, {}), found_replicas.get(key, {}))
        if not m.empty():
            out[key] = m
    return out


# ---------------------------------------------------------------- summary.md: text strips

PROBE_CHARS = {ANSWERED: ".", "timed out": "t", "refused": "r", "reset": "x", "wrong body": "b", "error": "e"}
STATE_CHARS = {IN_STEP: "=", STALE: "s", MISSING: "m", UNREAD: "?"}


def _probe_char(outcome: str) -> str:
    if outcome in PROBE_CHARS:
        return PROBE_CHARS[outcome]
    return outcome[0] if outcome[:1].isdigit() else "e"  # 404 -> 4, 502 -> 5


def strips(m: Motion, length: float) -> list[str]:
    """One character per second of the window (per N seconds past 120): the actions, each probe and each
    replica, aligned, with a key; for summary.md."""
    step = max(1, -(-int(length) // 120))
    cells = max(1, -(-int(length) // step))

    def column(at: float) -> int | None:
        i = int(at // step)
        return i if 0 <= i < cells else None

    width = max([len("actions")] + [len("probe " + p) for p in m.probes] + [len("data plane " + p) for p in m.replicas])
    lines = []
    if m.actions:
        line = [" "] * cells
        for n, action in enumerate(m.actions):
            i = column(action.at)
            if i is not None:
                line[i] = str(n + 1)[-1]
        lines.append("%-*s |%s| %s" % (width, "actions", "".join(line), "; ".join(
            "%d %s at +%.1fs%s" % (n + 1, a.name, a.at, "" if a.ok else " (failed)") for n, a in enumerate(m.actions))))
    for label, seconds in m.probes.items():
        line = [" "] * cells
        for s in seconds:
            i = column(s.start)
            if i is not None and (line[i] in (" ", ".") or s.outcome != ANSWERED):
                line[i] = _probe_char(s.outcome)
        lines.append("%-*s |%s|" % (width, "probe " + label, "".join(line)))
    for pod, stretches in m.replicas.items():
        line = [" "] * cells
        for st in stretches:
            first, last = column(st.start), column(max(st.start, st.end - 1e-6))
            for i in range(first if first is not None else 0, (last if last is not None else cells - 1) + 1):
                if line[i] in (" ", "=") or st.state != IN_STEP:
                    line[i] = STATE_CHARS[st.state]
        lines.append("%-*s |%s|" % (width, "data plane " + pod, "".join(line)))
    key = ["one character per %d s" % step]
    if m.probes:
        key.append("probe: . answered, 4/5 a 4xx/5xx status, t timed out, r refused, b wrong body, e other error")
    if m.replicas:
        key.append("data plane: = in step, s stale, m missing, ? unread")
    return lines + ["%-*s  %s" % (width, "", "; ".join(key))]
