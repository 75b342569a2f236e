# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One kind's watch over the window: a resilient list+watch (k8s/listwatch.py) scoped to the selection,
whose starting list, re-lists and events feed the tracker, and the halt the windows of one run share."""
from __future__ import annotations

import datetime as dt
import threading
from dataclasses import InitVar, dataclass, field
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.listwatch import ListWatch
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.tracker import Tracker, subject_of
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import INGRESS
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects.kind import SubjectKind

Obj = dict[str, Any]


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


@dataclass
class Halt:
    """What the windows of one run share: the subject whose violation stopped them (stop_on_violation)
    and the lock around their tracker."""

    subject: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


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
