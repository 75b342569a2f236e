# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a status watch concludes, pure: each subject's verdict from its track (a route's across the parents
its spec names), the blind intervals of each kind's watch judged (a watch blind for most of the window
cannot judge), and where the pod writing a subject changed."""
from __future__ import annotations

import datetime as dt
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.listwatch import BlindInterval
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.tracker import Tracker, subject_of
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import INGRESS, KINDS
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects.kind import SubjectKind


def _writers_line(managers: list[str], pods: list[str]) -> str:
    line = ""
    if managers:
        line += ", written by %s" % ", ".join(managers)
        if pods:
            line += " (pods %s)" % ", ".join(pods)
    return line


def verdict(tracker: Tracker) -> dict[str, Any]:
    """Per-subject results, failures and passed, from the tracked changes (after attribution):
    under each kind's result key: `ingresses` as always, and with the Gateway API watched `gateways`,
    `routes`, ... (a route kind's objects with their parents' entries, judged together: every parent
    its spec names must accept it)."""
    pods_of: dict[str, list[str]] = {}
    for entry in tracker.timeline:
        if entry.get("pod"):
            pods = pods_of.setdefault(subject_of(entry), [])
            if entry["pod"] not in pods:
                pods.append(entry["pod"])
    out: dict[str, dict[str, Any]] = {k.result_key: {} for k in KINDS if k.bare or k.kind in tracker.objects}
    failures = []
    for key in sorted(tracker.tracks):
        track = tracker.tracks[key]
        reason = tracker.violation(key)
        pods = pods_of.get(key, [])
        item = {"addresses_seen": track.seen, "writers": {"managers": track.managers, "pods": pods}, "changes": track.changes,
                "passed": reason is None, "reason": reason or "stable", "deleted": track.deleted}
        if track.kind.parents is not None:
            item = {"conditions": track.conditions, "controller": track.controller} | item
            del item["addresses_seen"]
            out[track.kind.result_key].setdefault(track.obj, {"parents": {}})["parents"][track.parent] = item
            continue
        if not track.kind.bare:
            item["conditions"] = track.conditions
        out[track.kind.result_key][track.obj] = item
        if reason:
            failures.append("%s: %s%s" % (key, reason, _writers_line(track.managers, pods)))
    for kind in KINDS:
        if kind.parents is None:
            continue
        for route in sorted(tracker.objects.get(kind.kind, set()) | set(out.get(kind.result_key, {}))):
            failures += _judge_route(kind, route, out[kind.result_key].setdefault(route, {"parents": {}}), tracker.named.get(route, []))
    result: dict[str, Any] = {"timeline": tracker.timeline}
    result.update(out)
    result.update(passed=not failures, failures=failures)
    return result


def _judge_route(kind: SubjectKind, route: str, item: dict[str, Any], named: list[str]) -> list[str]:
    """A route passes when every parent its spec names has an entry that accepts it, and every entry passes."""
    parents = item["parents"]
    reasons = []
    for parent in named:
        if not any(label.startswith(parent + " by ") and not p["deleted"] for label, p in parents.items()):
            reasons.append("parent %s: no status entry (no controller accepted or refused it)" % parent)
    for label, p in sorted(parents.items()):
        if not p["passed"]:
            reasons.append("parent %s: %s%s" % (label, p["reason"], _writers_line(p["writers"]["managers"], p["writers"]["pods"])))
    item.update(named_parents=named, changes=sum(p["changes"] for p in parents.values()), passed=not reasons,
                reason="; ".join(reasons) or "accepted by %s" % (", ".join(sorted(parents)) or "no parent (it names none)"))
    return ["%s %s: %s" % (kind.kind, route, r) for r in reasons]


# A window blind for more than this share of it cannot be judged.
MOSTLY_BLIND = 0.5


def _spans(intervals: list[BlindInterval]) -> str:
    return ", ".join("t=%g-%gs (%s)" % (round(b.start, 1), round(b.end, 1), b.why) for b in intervals)


def blind_note(intervals: list[BlindInterval], seen_after: list[dict[str, Any]]) -> str | None:
    """What the blind intervals mean for one Ingress: whether a change may have been missed,
    and which of its changes was seen only after one (found by a re-list)."""
    if not intervals:
        return None
    if not any(b.missed for b in intervals):
        return ("no change missed: the watch was blind at %s but resumed from the last resourceVersion it saw, so the "
                "server replayed every change made meanwhile (timed when it arrived)" % _spans(intervals))
    note = "a change may have been missed: the watch was blind at %s" % _spans(intervals)
    if seen_after:
        note += "; the change at t=%s was seen after a blind interval (by a re-list)" % ", ".join("%gs" % e["t"] for e in seen_after)
    return note


def judge_blind(result: dict[str, Any], intervals: list[BlindInterval], window: float, start: dt.datetime,
                kind: SubjectKind = INGRESS) -> None:
    """Add the blind intervals of one kind's watch to a verdict: the list (the Gateway API kinds' marked
    with their `kind`), a note on each of its objects, and the failure of a watch that was blind for
    more than half of the window (its changes cannot be judged). Call it for the Ingress watch first."""
    blind = round(sum(b.end - b.start for b in intervals), 3)
    if kind.bare:
        result["blind_intervals"] = [b.as_result(start) for b in intervals]
        result["blind_seconds"] = blind
        result["mostly_blind"] = False
    else:
        result["blind_intervals"] += [b.as_result(start) | {"kind": kind.kind} for b in intervals]
        result["blind_seconds"] = max(result["blind_seconds"], blind)  # the watches ran side by side
    for key, item in result.get(kind.result_key, {}).items():
        seen_after = [e for e in result["timeline"] if e.get("kind", INGRESS.kind) == kind.kind
                      and e.get("object", e.get("ingress")) == key and e.get("seen_after_blind")]
        item["note"] = blind_note(intervals, seen_after)
    if window > 0 and blind > MOSTLY_BLIND * window:
        result["mostly_blind"] = True
        result["failures"].insert(0, "the %swatch was blind for %gs of the %gs window (more than half: %s), so the %s "
                                     "status could not be judged" % ("" if kind.bare else kind.kind + " ", blind,
                                                                     round(window, 3), _spans(intervals), kind.kind))
        result["passed"] = False


def restarts(timeline: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Where the pod writing a subject changes within one controller (the same namespace and pod
    name prefix): `{ingress, time, from, to}` (a Gateway API subject: `subject` and `kind` for
    `ingress`) for the timeline of the report."""
    out: list[dict[str, Any]] = []
    last: dict[str, str] = {}
    for change in timeline:
        pod = change.get("pod")
        if not pod:
            continue
        key = subject_of(change)
        before = last.get(key)
        if before and before != pod and _owner(before) == _owner(pod):
            where = {"ingress": key} if "ingress" in change else {"subject": key, "kind": change.get("kind")}
            out.append(where | {"time": change["time"], "from": before, "to": pod})
        last[key] = pod
    return out


def _owner(pod: str) -> str:
    """ns/<name less its ReplicaSet and pod suffixes>: the controller a pod belongs to."""
    ns, _sep, name = pod.partition("/")
    parts = name.split("-")
    return "%s/%s" % (ns, "-".join(parts[:-2]) if len(parts) > 2 else name)
