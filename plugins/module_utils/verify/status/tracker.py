# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The watch events of every watched kind replayed over the window, pure: each status subject's track
(an Ingress, a Gateway, one parent entry of a route: the addresses and conditions it had, how often they
changed, who wrote them) and the timeline of its changes, each with its status's field manager."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import address_in_pools
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.attribution import status_managers, status_writer
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.options import Options
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import INGRESS
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects.kind import SubjectKind, Surface

Obj = dict[str, Any]


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


def subject_of(entry: dict[str, Any]) -> str:
    """The subject id of a timeline entry: an Ingress's namespace/name, else its `subject`."""
    return str(entry.get("subject") or entry.get("ingress") or "")
