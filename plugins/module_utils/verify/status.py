# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ingress status stability over a window: one watch stream, every change recorded with
its writer, and a verdict per Ingress.

The writer of a change comes from three places (writers.py weighs them): the object's
managedFields at that event (the entry on the `status` subresource with the newest time names
the manager, e.g. `nginx-ingress-controller`), the addresses each controller publishes (read as
the diagnosis reads them, at the window's start and again at its end), and the controller pods'
logs, read while the window runs, whose `"updating Ingress status" namespace=.. ingress=..
newValue=[..]` line (status.go) names the pod. Everything but `run` (and its `Window`,
`PodLogs`, `Publishing`) is pure.
"""
from __future__ import annotations

import datetime as dt
import math
import threading
import time
from dataclasses import InitVar, dataclass, field
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso, parse_time
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import INGRESS, KINDS, WATCHED
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects.kind import SubjectKind, Surface
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import ApiUnreachable, K8sError, unreachable_message
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.background import BackgroundReader
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.listwatch import BlindInterval, ListWatch
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.watch import LIST_READ_TIMEOUT, WATCH_READ_SLACK
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import Pool, PoolError, address_in_pools, parse_entry
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import writers
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.writers import LOG_MATCH_SECONDS

Obj = dict[str, Any]


class StatusError(OptionError):
    """An option is invalid; the message names it."""


@dataclass(frozen=True)
class Options:
    window: float = 60.0
    max_changes: int = 0
    allow_empty: bool = False
    pools: Pool | None = None
    stop_on_violation: bool = False
    attribute: bool = True
    gateway_api: bool = True  # also watch the Gateway API kinds (subjects.WATCHED) where the cluster serves them


def parse_options(window: Any, max_changes: Any, allow_empty: bool, expected_pools: Any,
                  stop_on_violation: bool, attribute: bool, gateway_api: bool = True) -> Options:
    """Validate every option before any request."""
    if isinstance(window, bool) or not isinstance(window, (int, float)) or not math.isfinite(window) or window <= 0:
        raise StatusError("window: expected a number of seconds > 0, got %r" % (window,))
    if isinstance(max_changes, bool) or not isinstance(max_changes, int) or max_changes < 0:
        raise StatusError("max_changes: expected an integer >= 0, got %r" % (max_changes,))
    pools = None
    if expected_pools:
        if not isinstance(expected_pools, list):
            raise StatusError("expected_pools: expected a list of CIDRs (100.64.0.0/16) or ranges (a-b), got %r" % (expected_pools,))
        ranges = []
        for i, entry in enumerate(expected_pools):
            try:
                ranges.append(parse_entry("expected_pools", entry))
            except PoolError as exc:
                raise StatusError("expected_pools[%d]: %s" % (i, str(exc).split(": ", 1)[-1])) from None
        pools = Pool("expected_pools", tuple(ranges))
    return Options(float(window), max_changes, bool(allow_empty), pools, bool(stop_on_violation), bool(attribute), bool(gateway_api))


# ---------------------------------------------------------------- writers from managedFields


def change_writer(event: Obj) -> str:
    """Who made a recorded status change, for reports: the controller pod (and the evidence that
    named it), else its candidates, and the field manager of the status write (with its operation)."""
    manager = str(event.get("manager") or "")
    if manager and event.get("operation"):
        manager += " " + str(event["operation"])
    pod = str(event.get("pod") or "")
    by = event.get("attributed_by")
    if pod and by:
        pod += " [by %s]" % by
    candidates = [str(c) for c in event.get("candidates") or []]
    if not pod and candidates:
        pod = "one of %s [undecided]" % ", ".join(candidates)
    if pod and manager:
        return "%s (%s)" % (pod, manager)
    return pod or (manager + " (pod unknown)" if manager else "unknown")


def status_writer(obj: Obj) -> dict[str, str] | None:
    """The manager (and operation, time) of the newest managedFields entry on the status
    subresource: who last wrote the status."""
    entries = [m for m in (obj.get("metadata") or {}).get("managedFields") or [] if m.get("subresource") == "status"]
    if not entries:
        return None
    newest = max(entries, key=lambda m: parse_time(m.get("time")) or dt.datetime.min.replace(tzinfo=dt.timezone.utc))
    return {"manager": str(newest.get("manager", "")), "operation": str(newest.get("operation", "")),
            "time": str(newest.get("time", ""))}


def status_managers(obj: Obj) -> list[str]:
    """Every manager whose status entry has the newest time (managedFields keep whole seconds: two
    writers in one second tie, and either may have made the change), status_writer's first."""
    writer = status_writer(obj)
    if writer is None:
        return []
    newest = parse_time(writer["time"])
    tied = [str(m.get("manager", "")) for m in (obj.get("metadata") or {}).get("managedFields") or []
            if m.get("subresource") == "status" and parse_time(m.get("time")) == newest]
    return list(dict.fromkeys([writer["manager"]] + tied))


# ---------------------------------------------------------------- the log line

@dataclass(frozen=True)
class LogEntry:
    pod: str
    when: dt.datetime | None
    namespace: str
    ingress: str
    new: tuple[str, ...] | None  # None: the line does not say (Traefik's)
    manager: str = ""  # the field manager of the type that logs such lines


def parse_log_line(pod: str, line: str, year: int) -> LogEntry | None:
    """One status-update line of any registered controller type (its own format), or None.
    `new` is None when the line does not carry the addresses (Traefik's)."""
    for kind in registry.REGISTRY.values():
        found = kind.ingress.status_log(line, year) if kind.ingress is not None else None
        if found is not None:
            when, namespace, ingress, new = found
            return LogEntry(pod, when, namespace, ingress, new, kind.field_manager)
    return None


def attribute_from_logs(timeline: list[dict[str, Any]], entries: list[LogEntry], evidence: writers.Evidence | None = None) -> None:
    """Give each change its writer from the evidence (writers.attribute): the pod and how it was
    named (`attributed_by`), or the `candidates` when nothing decides."""
    writers.attribute(timeline, list(entries), evidence or writers.Evidence())


# ---------------------------------------------------------------- tracking


@dataclass
class Track:
    """One status subject (subjects.py) over the window: an Ingress, a Gateway, one parent entry of a route."""

    current: list[str]  # its addresses
    seen: list[list[str]] = field(default_factory=list)
    changes: int = 0
    empty_seen: bool = False
    deleted: bool = False
    managers: list[str] = field(default_factory=list)
    kind: SubjectKind = INGRESS
    obj: str = ""  # namespace/name of its object
    parent: str = ""  # a route's parent entry (Surface.parent), and the controllerName that wrote it
    controller: str = ""
    conditions: list[str] = field(default_factory=list)

    def see(self, addresses: list[str]) -> None:
        if addresses not in self.seen:
            self.seen.append(list(addresses))
        self.empty_seen = self.empty_seen or not addresses


@dataclass
class Tracker:
    """Replays watch events of every watched kind; pure."""

    options: Options
    start: dt.datetime
    tracks: dict[str, Track] = field(default_factory=dict)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    events: int = 0
    # a route's namespace/name → the parents its spec names (each must accept it)
    named: dict[str, list[str]] = field(default_factory=dict)
    objects: dict[str, set[str]] = field(default_factory=dict)  # kind → namespace/name of each object seen, not deleted
    subjects: dict[tuple[str, str], list[str]] = field(default_factory=dict)  # (kind, namespace/name) → its subjects' ids

    def initial(self, objects: list[Obj], of: SubjectKind = INGRESS) -> None:
        self.objects.setdefault(of.kind, set())
        for obj in objects:
            self._seen(of, obj, deleted=False)
            writer = status_writer(obj)
            for surface in of.read(obj):
                track = self.tracks[surface.subject] = Track(surface.addresses, kind=of, obj=surface.obj,
                                                             parent=surface.parent, controller=surface.controller,
                                                             conditions=surface.conditions)
                self.subjects.setdefault((of.kind, surface.obj), []).append(surface.subject)
                track.see(surface.addresses)
                if writer and (surface.addresses or surface.conditions):  # who wrote the status the window starts with
                    track.managers.append(writer["manager"])

    def event(self, kind: str, obj: Obj, now: dt.datetime, of: SubjectKind = INGRESS) -> list[dict[str, Any]]:
        """Apply one watch event; returns the timeline entries of the subjects whose status changed."""
        self.events += 1
        return self._change(kind, obj, now, of)

    def resync(self, objects: list[Obj], now: dt.datetime, of: SubjectKind = INGRESS) -> list[dict[str, Any]]:
        """After a re-list (the watch's resourceVersion expired): each difference between the
        listed objects and the tracked state as one change, marked `seen_after_blind`; changes
        made in between that cancelled out are not seen, none is counted twice."""
        listed = {key_of(i): i for i in objects}
        known = self.objects.get(of.kind, set())
        out = []
        for key in sorted(listed):
            out += self._change("MODIFIED" if key in known else "ADDED", listed[key], now, of)
        for key in sorted(known - set(listed)):
            ns, _sep, name = key.partition("/")
            out += self._change("DELETED", {"metadata": {"namespace": ns, "name": name}}, now, of)
        for entry in out:
            entry["seen_after_blind"] = True
        return out

    def _seen(self, of: SubjectKind, obj: Obj, deleted: bool) -> None:
        known = self.objects.setdefault(of.kind, set())
        if deleted:
            known.discard(key_of(obj))
        else:
            known.add(key_of(obj))
            if of.parents is not None:
                self.named[key_of(obj)] = of.parents(obj)

    def _change(self, kind: str, obj: Obj, now: dt.datetime, of: SubjectKind) -> list[dict[str, Any]]:
        key = key_of(obj)
        self._seen(of, obj, kind == "DELETED")
        surfaces = {} if kind == "DELETED" else {s.subject: s for s in of.read(obj)}
        # subjects of this object that it no longer has (a parent entry removed, the object deleted)
        gone = [t for t in sorted(self.subjects.get((of.kind, key), [])) if not self.tracks[t].deleted and t not in surfaces]
        out = []
        for subject in sorted(surfaces):
            entry = self._record(kind, obj, now, surfaces[subject], of)
            if entry is not None:
                out.append(entry)
        for subject in gone:
            track = self.tracks[subject]
            entry = self._record(kind, obj, now, Surface(subject, key, [], [], track.parent, track.controller), of,
                                 gone=True)
            if entry is not None:
                out.append(entry)
        return out

    def _record(self, kind: str, obj: Obj, now: dt.datetime, surface: Surface, of: SubjectKind,
                gone: bool = False) -> dict[str, Any] | None:
        """One subject's change; GONE: the object is deleted, or no longer has the subject (a route's parent entry)."""
        track = self.tracks.get(surface.subject)
        if track is None:
            if kind == "DELETED":
                return None
            track = self.tracks[surface.subject] = Track([], kind=of, obj=surface.obj, parent=surface.parent,
                                                         controller=surface.controller)
            self.subjects.setdefault((of.kind, surface.obj), []).append(surface.subject)
            track.see([])
        was_deleted = track.deleted
        track.deleted = gone or kind == "DELETED"
        if was_deleted and track.deleted:
            return None
        if (surface.addresses, surface.conditions) == (track.current, track.conditions) and kind != "DELETED":
            return None
        writer = status_writer(obj) or {}
        entry: dict[str, Any] = {
            "time": iso(now),
            "t": round((now - self.start).total_seconds(), 3),
        }
        entry.update(of.entry_of(surface))
        entry.update({
            "event": kind, "old": track.current, "new": surface.addresses,
            "manager": writer.get("manager"), "operation": writer.get("operation"), "pod": None,
            "attributed_by": None, "candidates": [], "seen_after_blind": False,
        })
        if not of.bare:
            entry.update(conditions_old=track.conditions, conditions_new=surface.conditions)
        if surface.parent:
            entry.update(parent=surface.parent, controller=surface.controller)
        tied = status_managers(obj)
        if len(tied) > 1:
            entry["managers"] = tied
        track.current = surface.addresses
        track.conditions = surface.conditions
        track.changes += 1
        track.see(surface.addresses)
        if writer.get("manager") and writer["manager"] not in track.managers:
            track.managers.append(writer["manager"])
        self.timeline.append(entry)
        return entry

    def violation(self, key: str) -> str | None:
        """Why this subject fails, or None."""
        track = self.tracks[key]
        opts = self.options
        reasons = []
        if track.changes > opts.max_changes:
            seen = [_fmt(a) for a in track.seen] if track.kind.addressed else []
            reasons.append("%d changes in %gs (max %d)%s" % (
                track.changes, opts.window, opts.max_changes, ": " + " ↔ ".join(seen) if seen else ""))
        if track.kind.addressed and track.empty_seen and not opts.allow_empty:
            reasons.append(track.kind.empty_reason)
        if track.kind.addressed and opts.pools is not None:
            outside = sorted({a for addrs in track.seen for a in addrs if address_in_pools(a, [opts.pools]) is None})
            if outside:
                reasons.append("%s outside expected_pools %s" % (", ".join(outside), ", ".join(str(r) for r in opts.pools.ranges)))
        if track.kind.needs and not track.deleted:  # a removed entry: its route's named parents say whether one is missing
            missing = [need for need in track.kind.needs if need not in track.conditions]
            if missing:
                got = [c for c in track.conditions if c.split("=")[0] in {n.split("=")[0] for n in missing}]
                reasons.append("not %s: %s" % (" and ".join(n.split("=")[0] for n in missing), ", ".join(got) or "no such condition"))
        return "; ".join(reasons) or None


def _fmt(addrs: list[str]) -> str:
    return ",".join(addrs) if addrs else "(empty)"


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


def subject_of(entry: dict[str, Any]) -> str:
    """The subject id of a timeline entry: an Ingress's namespace/name, else its `subject`."""
    return str(entry.get("subject") or entry.get("ingress") or "")


# ---------------------------------------------------------------- the cluster side


def watch_scope(selection: Selection) -> dict[str, Any]:
    """One stream: namespaced when one namespace is selected, with a field selector when one
    name is; the rest of the selection is applied to each event."""
    namespace = selection.namespaces[0] if len(selection.namespaces) == 1 else None
    field_selector = None
    if len(selection.names) == 1:
        ns, _sep, name = selection.names[0].rpartition("/")
        if ns and not selection.namespaces:
            namespace = ns
        if not ns or ns == namespace:
            field_selector = "metadata.name=%s" % name
    return {"namespace": namespace, "label_selector": selection.label_selector, "field_selector": field_selector}


def controller_containers(pods: list[Obj]) -> list[tuple[str, str, str, str]]:
    """(namespace, pod, container, its type's field manager) of every ingress controller container
    (detected as diagnose does)."""
    out = []
    for pod in pods:
        for c in (pod.get("spec") or {}).get("containers") or []:
            kind = registry.detect(c)
            if kind is not None:
                meta = pod.get("metadata") or {}
                out.append((str(meta.get("namespace")), str(meta.get("name")), str(c.get("name")), kind.field_manager))
                break
    return out


def controller_pods(client: Any) -> list[tuple[str, str, str]]:
    """(namespace, pod, container) of every ingress controller container (detected as diagnose does)."""
    return [(ns, pod, c) for ns, pod, c, _manager in controller_containers(client.list("v1", "Pod"))]


# ---------------------------------------------------------------- a window the API server cannot stretch

# A window blind for more than this share of it cannot be judged.
MOSTLY_BLIND = 0.5


@dataclass
class Halt:
    """What the windows of one run share: the subject whose violation stopped them (stop_on_violation)
    and the lock around their tracker."""

    subject: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


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


@dataclass
class Window:
    """One kind's watch over the window, judged: a resilient list+watch (k8s/listwatch.py) whose
    starting list, re-lists and events feed the tracker, and which ends early when a violation stops
    every window of the run (stop_on_violation)."""

    client: InitVar[Any]  # the client, the window's length, its clocks: the list+watch's alone
    selection: Selection
    tracker: Tracker
    length: InitVar[float]
    clock: InitVar[Callable[[], float]]
    sleep: InitVar[Callable[[float], None]]
    wall: Callable[[], dt.datetime]
    stop_on_violation: bool = False
    kind: SubjectKind = INGRESS
    # Shared by the windows of one run (one per kind, each in a thread of its own): the subject whose
    # violation ended them all, and the lock around the tracker they share.
    halt: Halt = field(default_factory=Halt)
    listwatch: ListWatch = field(init=False)

    def __post_init__(self, client: Any, length: float, clock: Callable[[], float], sleep: Callable[[float], None]) -> None:
        # only the bare kind (Ingress) must be served; a Gateway API kind without its CRDs ends quietly
        self.listwatch = ListWatch(client, self.kind.api_version, self.kind.kind, length, clock, sleep,
                                   on_list=self._listed, on_event=self._event, stopped=lambda: self.stopped is not None,
                                   may_be_unserved=not self.kind.bare)

    @property
    def stopped(self) -> str | None:
        return self.halt.subject

    def t(self) -> float:
        return self.listwatch.t()

    def run(self, t0: float | None = None) -> None:
        self.listwatch.scope = watch_scope(self.selection)
        self.listwatch.run(t0)

    def _listed(self, items: list[Obj], first: bool) -> None:
        """The starting state (FIRST), or a re-list after 410 Gone diffed against what the watch knew."""
        selected = [i for i in items if self.selection.matches(i)]
        with self.halt.lock:
            if first:
                self.tracker.initial(selected, self.kind)
                if self.stop_on_violation and self.halt.subject is None:
                    self.halt.subject = next((k for k, t in self.tracker.tracks.items()
                                              if t.kind is self.kind and self.tracker.violation(k)), None)
                changes = []
            else:
                changes = self.tracker.resync(selected, self.wall(), self.kind)
        self.check(changes)

    def _event(self, kind: str, obj: Obj) -> bool:
        """An ADDED, MODIFIED or DELETED event: whether it ends the window."""
        if not self.selection.matches(obj):
            return False
        with self.halt.lock:
            changes = self.tracker.event(kind, obj, self.wall(), self.kind)
        return self.check(changes)

    def check(self, changes: list[dict[str, Any]]) -> bool:
        """Whether a change ends the window (stop_on_violation), or another kind's window ended it."""
        with self.halt.lock:
            for entry in changes:
                if self.stop_on_violation and self.halt.subject is None and self.tracker.violation(subject_of(entry)):
                    self.halt.subject = subject_of(entry)
        return self.stopped is not None


# While the window runs, the controller pods' logs are read every this many seconds: a pod that
# is deleted or restarted inside the window is gone by its end, and its last line (the status
# clear on shutdown) is written a moment before it goes. The controller pods themselves are
# listed every LOG_LIST_EVERY polls (a list of every pod of the cluster is the costly request).
LOG_POLL_SECONDS = 1.0
LOG_LIST_EVERY = 5


class PodLogs(BackgroundReader):
    """The status lines of every controller pod, read while the window runs and once at its end,
    so the writes of a pod that went away (its --update-status-on-shutdown clear) and of the pod
    that replaced it are both there to attribute. Reads are best effort: a server that does not
    answer is the watch's to report."""

    period = LOG_POLL_SECONDS
    thread_name = "kindlab-pod-logs"

    def __init__(self, client: Any, start: dt.datetime, wall: Callable[[], dt.datetime]) -> None:
        super().__init__()
        self.client, self.start, self.wall = client, start, wall
        self.entries: dict[tuple[str, str], LogEntry] = {}  # (pod, line) -> its entry: each line once
        self.pods: list[tuple[str, str, str]] = []  # (namespace, pod, container) as last listed
        self.managers: dict[str, str] = {}  # ns/pod -> its type's field manager, of every pod listed
        self.read_at: dict[str, dt.datetime] = {}  # ns/pod -> when its log was last read whole

    def collect(self, previous: bool = False, list_pods: bool = True) -> None:
        """Read the controller pods' lines of the window: each pod's since its last whole read (the
        first time, since the window began), listing the pods first unless LIST_PODS is false.
        PREVIOUS also reads a restarted container's last run (once, at the end)."""
        now = self.wall()
        if list_pods or not self.pods:
            try:
                listed = controller_containers(self.client.list("v1", "Pod"))
            except K8sError:
                return
            self.pods = [(ns, pod, c) for ns, pod, c, _manager in listed]
            self.managers.update(("%s/%s" % (ns, pod), manager) for ns, pod, _c, manager in listed)
        window = int((now - self.start).total_seconds() + LOG_MATCH_SECONDS) + 5  # the API takes whole seconds
        for ns, pod, container in self.pods:
            ref = "%s/%s" % (ns, pod)
            last = self.read_at.get(ref)
            # A second or two of overlap with the last read: lines read twice are kept once.
            since = window if last is None or previous else min(window, int((now - last).total_seconds()) + 2)
            complete = True
            for last_run in (False, True) if previous else (False,):
                try:
                    text = self.client.pod_log(ns, pod, container, since_seconds=since, previous=last_run)
                except K8sError:
                    complete = False
                    continue
                for line in text.splitlines():
                    if (ref, line) not in self.entries:
                        entry = parse_log_line(ref, line, self.start.year)
                        if entry is not None:
                            self.entries[(ref, line)] = entry
            if complete:
                self.read_at[ref] = now

    def poll(self, rounds: int) -> None:
        self.collect(list_pods=rounds % LOG_LIST_EVERY == 1)

    def since(self, start: dt.datetime) -> list[LogEntry]:
        return [e for e in self.entries.values() if e.when is None or e.when >= start - dt.timedelta(seconds=LOG_MATCH_SECONDS)]


class Publishing(BackgroundReader):
    """What each controller publishes (writers.Publisher), read as the diagnosis reads it: once as
    the window starts, in the background (a server that does not answer must not hold the window),
    and again at its end (a Service gets its LoadBalancer address late, a pod is replaced). Reads
    are best effort: without them, attribution has the field managers and the logs only."""

    thread_name = "kindlab-publishers"

    def __init__(self, client: Any) -> None:
        super().__init__()
        self.client = client
        self.snapshots: list[list[writers.Publisher]] = []
        self.errors: list[str] = []

    def read(self) -> None:
        try:
            self.snapshots.append(writers.read_publishers(self.client))
        except K8sError as exc:
            self.errors.append(str(exc))

    def poll(self, rounds: int) -> None:
        self.read()

    def publishers(self, gateway_api: bool = False) -> list[writers.Publisher]:
        """The merged snapshots; the Gateway API writers only where Gateway API is watched."""
        return [p for p in writers.merge(list(self.snapshots)) if gateway_api or p.surface == INGRESS.surface]


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


def _gateway_selection(selection: Selection) -> Selection:
    """The Gateway API kinds are selected by namespace and labels; `names` names Ingresses."""
    return Selection(list(selection.namespaces), [], selection.label_selector)


def _served(client: Any, kind: SubjectKind) -> bool:
    """Whether the cluster serves a kind (discovery, before the window). A server that does not answer
    yet leaves it to the kind's window: a kind it turns out not to serve ends that window quietly."""
    try:
        return bool(client.serves(kind.api_version, kind.kind))
    except K8sError:
        return True


def _in_thread(window: Window, t0: float) -> tuple[threading.Thread, list[BaseException]]:
    """Run a window in a thread of its own; what it raised is kept for the caller to raise."""
    raised: list[BaseException] = []

    def target() -> None:
        try:
            window.run(t0)
        except BaseException as exc:  # re-raised by run() once the Ingress window is done
            raised.append(exc)

    thread = threading.Thread(target=target, name="kindlab-status-%s" % window.kind.kind, daemon=True)
    thread.start()
    return thread, raised


def run(client: Any, selection: Selection, options: Options, clock: Callable[[], float] = time.monotonic,
        now: Callable[[], dt.datetime] | None = None, sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """Watch the selected Ingresses, and where the cluster serves Gateway API (and options.gateway_api)
    its Gateway API kinds (subjects.WATCHED), for the window and judge them: one list and watch per kind, each in a
    window of its own, side by side. Each watch survives the API server: it resumes from its
    resourceVersion after a lost stream, re-lists after 410 Gone, and reports each blind interval; a
    server that never answers fails with ApiUnreachable."""
    wall = now or (lambda: dt.datetime.now(dt.timezone.utc))
    start = wall()
    tracker = Tracker(options, start)
    halt = Halt()
    window = Window(client, selection, tracker, options.window, clock, sleep, wall, options.stop_on_violation, halt=halt)
    gateway_kinds = list(WATCHED) if options.gateway_api else []
    served = [kind for kind in gateway_kinds if _served(client, kind)]
    others = [Window(client, _gateway_selection(selection), tracker, options.window, clock, sleep, wall, options.stop_on_violation,
                     kind=kind, halt=halt) for kind in served]
    logs = PodLogs(client, start, wall) if options.attribute else None
    publishing = Publishing(client) if options.attribute else None
    if logs is not None and publishing is not None:
        publishing.start_reading()
        logs.start_reading()
    t0 = clock()
    threads = [_in_thread(other, t0) for other in others]
    try:
        window.run(t0)
    except BaseException:
        with halt.lock:  # the other kinds' windows end at their next turn, not at the window's end
            halt.subject = halt.subject or "(the Ingress watch failed)"
        raise
    finally:
        for thread, _raised in threads:
            # Each ends within the window plus one request's timeout, as this one did.
            thread.join(timeout=max(options.window - window.t(), 0.0) + LIST_READ_TIMEOUT + WATCH_READ_SLACK)
        if logs is not None and publishing is not None:
            logs.stop_reading()
            publishing.stop_reading()
    for _thread, raised in threads:
        if raised and window.listwatch.answered:
            raise raised[0]
    span = min(max(window.t(), 0.0), options.window)
    if not window.listwatch.answered:
        last = window.listwatch.last_error
        raise ApiUnreachable(unreachable_message(last.where if last else "the API server", last.cause if last else "no answer",
                                                 options.window))
    watched = [w for w in others if w.listwatch.answered and not w.listwatch.unserved]
    elapsed = (wall() - start).total_seconds()
    restarted: list[dict[str, Any]] = []
    if logs is not None and publishing is not None and tracker.timeline and not any(w.listwatch.ended_blind for w in [window] + watched):
        logs.collect(previous=True)  # the last lines, of the pods there now
        publishing.read()  # what they publish now
        evidence = writers.Evidence(publishing.publishers(bool(watched)), dict(logs.managers), dict(logs.read_at))
        attribute_from_logs(tracker.timeline, logs.since(start), evidence)
        restarted = restarts(tracker.timeline)
    result = verdict(tracker)
    result["pod_restarts"] = restarted
    if publishing is not None:
        result["publishers"] = [p.as_dict() for p in publishing.publishers(bool(watched))]
        if publishing.errors and not publishing.snapshots:
            result["publishers_error"] = publishing.errors[-1]
    judge_blind(result, window.listwatch.blind, span, start)
    for other in watched:
        judge_blind(result, other.listwatch.blind, span, start, other.kind)
    result.update(watch_streams=window.listwatch.streams + sum(w.listwatch.streams for w in watched), events=tracker.events,
                  bookmarks=window.listwatch.bookmarks + sum(w.listwatch.bookmarks for w in watched), elapsed=round(elapsed, 3),
                  stopped_early=window.stopped, window_started=iso(start))
    if watched:
        result["watches"] = {w.kind.kind: {"streams": w.listwatch.streams, "bookmarks": w.listwatch.bookmarks} for w in [window] + watched}
    # The kinds the cluster does not serve (no Gateway API CRDs): a report expecting them says why there are none.
    result["unserved"] = sorted(k.kind for k in gateway_kinds if k not in served) + sorted(w.kind.kind for w in others if w.listwatch.unserved)
    return result
