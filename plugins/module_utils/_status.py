# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Ingress status stability over a window: one watch stream, every change recorded with
its writer, and a verdict per Ingress.

The writer of a change comes from two places: the object's managedFields at that event
(the entry on the `status` subresource with the newest time names the manager, e.g.
`nginx-ingress-controller`), and, read once at the end, the controller pods' logs, whose
`"updating Ingress status" namespace=.. ingress=.. newValue=[..]` line (status.go) names the
pod. Everything but `run` is pure.
"""
from __future__ import annotations

import datetime as dt
import json
import math
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._ingresses import status_addresses
from ansible_collections.kindlab.ingress.plugins.module_utils._pools import Pool, PoolError, address_in_pools, parse_entry
from ansible_collections.kindlab.ingress.plugins.module_utils._select import Selection, key_of

Obj = dict[str, Any]

# How far a log line's time may be from the watch event it explains.
LOG_MATCH_SECONDS = 15.0


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


def parse_options(window: Any, max_changes: Any, allow_empty: bool, expected_pools: Any,
                  stop_on_violation: bool, attribute: bool) -> Options:
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
    return Options(float(window), max_changes, bool(allow_empty), pools, bool(stop_on_violation), bool(attribute))


# ---------------------------------------------------------------- writers from managedFields


def _parse_time(value: Any) -> dt.datetime | None:
    if not value:
        return None
    try:
        return dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None


def change_writer(event: Obj) -> str:
    """Who made a recorded status change, for reports: the controller pod whose log announced it,
    and the field manager of the status write (with its operation)."""
    manager = str(event.get("manager") or "")
    if manager and event.get("operation"):
        manager += " " + str(event["operation"])
    pod = str(event.get("pod") or "")
    if pod and manager:
        return "%s (%s)" % (pod, manager)
    return pod or (manager + " (pod unknown)" if manager else "unknown")


def status_writer(obj: Obj) -> dict[str, str] | None:
    """The manager (and operation, time) of the newest managedFields entry on the status
    subresource: who last wrote the status."""
    entries = [m for m in (obj.get("metadata") or {}).get("managedFields") or [] if m.get("subresource") == "status"]
    if not entries:
        return None
    newest = max(entries, key=lambda m: _parse_time(m.get("time")) or dt.datetime.min.replace(tzinfo=dt.timezone.utc))
    return {"manager": str(newest.get("manager", "")), "operation": str(newest.get("operation", "")),
            "time": str(newest.get("time", ""))}


# ---------------------------------------------------------------- the log line

# klog header: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg
_KLOG = re.compile(r"^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6})\s+\d+ [^\]]*\] (.*)$")
_UPDATING = '"updating Ingress status"'


@dataclass(frozen=True)
class LogEntry:
    pod: str
    when: dt.datetime | None
    namespace: str
    ingress: str
    new: tuple[str, ...]


def _kv(text: str, key: str) -> Any:
    """A klog structured value `key=<json>` (strings quoted, lists as JSON)."""
    m = re.search(r"(?:^|\s)%s=" % re.escape(key), text)
    if m is None:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[m.end():])[0]
    except ValueError:
        return None


def parse_log_line(pod: str, line: str, year: int) -> LogEntry | None:
    """One "updating Ingress status" line (status.go), or None."""
    if _UPDATING not in line:
        return None
    when = None
    m = _KLOG.match(line.strip())
    if m:
        mo, d, h, mi, s, us = (int(x) for x in m.groups()[:6])
        try:
            when = dt.datetime(year, mo, d, h, mi, s, us, tzinfo=dt.timezone.utc)
        except ValueError:
            when = None
    ns, name, new = _kv(line, "namespace"), _kv(line, "ingress"), _kv(line, "newValue")
    if not isinstance(ns, str) or not isinstance(name, str):
        return None
    addrs = tuple(sorted(str(e.get("ip") or e.get("hostname")) for e in new or [] if isinstance(e, dict) and (e.get("ip") or e.get("hostname"))))
    return LogEntry(pod, when, ns, name, addrs)


def attribute_from_logs(timeline: list[dict[str, Any]], entries: list[LogEntry]) -> None:
    """Give each change the pod whose log line wrote that value into that Ingress, nearest in
    time (each line explains one change)."""
    used: set[int] = set()
    for change in timeline:
        if change.get("event") != "MODIFIED":
            continue
        ns, _sep, name = change["ingress"].partition("/")
        when = _parse_time(change["time"])
        best, best_gap = None, LOG_MATCH_SECONDS
        for i, e in enumerate(entries):
            if i in used or e.namespace != ns or e.ingress != name or e.new != tuple(sorted(change["new"])):
                continue
            gap = abs((e.when - when).total_seconds()) if e.when and when else LOG_MATCH_SECONDS - 1
            if gap <= best_gap:
                best, best_gap = i, gap
        if best is not None:
            used.add(best)
            change["pod"] = entries[best].pod


# ---------------------------------------------------------------- tracking


@dataclass
class Track:
    current: list[str]
    seen: list[list[str]] = field(default_factory=list)
    changes: int = 0
    empty_seen: bool = False
    deleted: bool = False
    managers: list[str] = field(default_factory=list)

    def see(self, addresses: list[str]) -> None:
        if addresses not in self.seen:
            self.seen.append(list(addresses))
        self.empty_seen = self.empty_seen or not addresses


@dataclass
class Tracker:
    """Replays watch events; pure."""

    options: Options
    start: dt.datetime
    tracks: dict[str, Track] = field(default_factory=dict)
    timeline: list[dict[str, Any]] = field(default_factory=list)
    events: int = 0

    def initial(self, ingresses: list[Obj]) -> None:
        for ing in ingresses:
            addrs = status_addresses(ing)
            track = Track(addrs)
            track.see(addrs)
            writer = status_writer(ing)
            if writer and addrs:  # who wrote the status the window starts with
                track.managers.append(writer["manager"])
            self.tracks[key_of(ing)] = track

    def event(self, kind: str, obj: Obj, now: dt.datetime) -> dict[str, Any] | None:
        """Apply one watch event; returns the timeline entry when the status changed."""
        self.events += 1
        key = key_of(obj)
        addrs = [] if kind == "DELETED" else status_addresses(obj)
        track = self.tracks.get(key)
        if track is None:
            if kind == "DELETED":
                return None
            track = self.tracks[key] = Track([])
            track.see([])
        if kind == "DELETED":
            track.deleted = True
        if addrs == track.current and kind != "DELETED":
            return None
        writer = status_writer(obj) or {}
        entry = {
            "time": now.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "t": round((now - self.start).total_seconds(), 3),
            "ingress": key, "event": kind, "old": track.current, "new": addrs,
            "manager": writer.get("manager"), "operation": writer.get("operation"), "pod": None,
        }
        track.current = addrs
        track.changes += 1
        track.see(addrs)
        if writer.get("manager") and writer["manager"] not in track.managers:
            track.managers.append(writer["manager"])
        self.timeline.append(entry)
        return entry

    def violation(self, key: str) -> str | None:
        """Why this Ingress fails, or None."""
        track = self.tracks[key]
        opts = self.options
        reasons = []
        if track.changes > opts.max_changes:
            reasons.append("%d changes in %gs (max %d): %s" % (
                track.changes, opts.window, opts.max_changes, " ↔ ".join(_fmt(a) for a in track.seen)))
        if track.empty_seen and not opts.allow_empty:
            reasons.append("status was empty")
        if opts.pools is not None:
            outside = sorted({a for addrs in track.seen for a in addrs if address_in_pools(a, [opts.pools]) is None})
            if outside:
                reasons.append("%s outside expected_pools %s" % (", ".join(outside), ", ".join(str(r) for r in opts.pools.ranges)))
        return "; ".join(reasons) or None


def _fmt(addrs: list[str]) -> str:
    return ",".join(addrs) if addrs else "(empty)"


def verdict(tracker: Tracker) -> dict[str, Any]:
    """Per-Ingress results, failures and passed, from the tracked changes (after attribution)."""
    pods_of: dict[str, list[str]] = {}
    for entry in tracker.timeline:
        if entry.get("pod"):
            pods = pods_of.setdefault(entry["ingress"], [])
            if entry["pod"] not in pods:
                pods.append(entry["pod"])
    ingresses: dict[str, Any] = {}
    failures = []
    for key in sorted(tracker.tracks):
        track = tracker.tracks[key]
        reason = tracker.violation(key)
        pods = pods_of.get(key, [])
        writers = {"managers": track.managers, "pods": pods}
        ingresses[key] = {"addresses_seen": track.seen, "writers": writers, "changes": track.changes,
                          "passed": reason is None, "reason": reason or "stable", "deleted": track.deleted}
        if reason:
            line = "%s: %s" % (key, reason)
            if track.managers:
                line += ", written by %s" % ", ".join(track.managers)
                if pods:
                    line += " (pods %s)" % ", ".join(pods)
            failures.append(line)
    return {"timeline": tracker.timeline, "ingresses": ingresses, "passed": not failures, "failures": failures}


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


def controller_pods(client: Any) -> list[tuple[str, str, str]]:
    """(namespace, pod, container) of every ingress controller container (detected as diagnose does)."""
    from ansible_collections.kindlab.ingress.plugins.module_utils._diagnose import ANALYSERS

    out = []
    for pod in client.list("v1", "Pod"):
        for c in (pod.get("spec") or {}).get("containers") or []:
            if any(a.detect(c) for a in ANALYSERS):
                meta = pod.get("metadata") or {}
                out.append((str(meta.get("namespace")), str(meta.get("name")), str(c.get("name"))))
                break
    return out


def run(client: Any, selection: Selection, options: Options,
        clock: Callable[[], float] = time.monotonic, now: Callable[[], dt.datetime] | None = None) -> dict[str, Any]:
    wall = now or (lambda: dt.datetime.now(dt.timezone.utc))
    scope = watch_scope(selection)
    items, version = client.list_with_version("networking.k8s.io/v1", "Ingress", **scope)
    start = wall()
    tracker = Tracker(options, start)
    tracker.initial([i for i in items if selection.matches(i)])
    deadline = clock() + options.window
    streams = 0
    stopped = None
    if options.stop_on_violation:
        stopped = next((k for k in tracker.tracks if tracker.violation(k)), None)
    while stopped is None and clock() < deadline:
        streams += 1
        for kind, obj in client.watch("networking.k8s.io/v1", "Ingress", resource_version=version,
                                      timeout=max(1, math.ceil(deadline - clock())), **scope):
            version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
            if kind in ("ADDED", "MODIFIED", "DELETED") and selection.matches(obj):
                entry = tracker.event(kind, obj, wall())
                if entry and options.stop_on_violation and tracker.violation(entry["ingress"]):
                    stopped = entry["ingress"]
                    break
            if clock() >= deadline:
                break
    elapsed = (wall() - start).total_seconds()
    if options.attribute and tracker.timeline:
        entries: list[LogEntry] = []
        for ns, pod, container in controller_pods(client):
            text = client.pod_log(ns, pod, container, since_seconds=int(elapsed) + 30)
            entries += [e for e in (parse_log_line("%s/%s" % (ns, pod), line, start.year) for line in text.splitlines()) if e]
        attribute_from_logs(tracker.timeline, [e for e in entries if e.when is None or e.when >= start - dt.timedelta(seconds=LOG_MATCH_SECONDS)])
    result = verdict(tracker)
    result.update(watch_streams=streams, events=tracker.events, elapsed=round(elapsed, 3), stopped_early=stopped)
    return result
