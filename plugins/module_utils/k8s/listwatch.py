# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A list+watch of one kind for a fixed window that survives the API server: it resumes from its
resourceVersion after a lost stream (bookmarks included), re-lists after 410 Gone, waits with a
doubling backoff, and records each stretch it was blind. Every request is bounded (the client's read
timeouts, the server-side timeout at most the time left) and every wait ends at the deadline, so the
window ends within its length plus one request's timeout.

What the objects mean is the caller's: it gets the lists (on_list) and the events (on_event), and says
when to stop (stopped). verify/status/ judges Ingress and Gateway API status with it.
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass, field
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import (
    KindNotServed, WatchExpired, WatchForbidden, WatchInterrupted,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import Obj
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.watch import LIST_READ_TIMEOUT, WATCH_READ_SLACK

# After a lost stream the watch reconnects after BACKOFF_FIRST seconds, doubling up to BACKOFF_MAX.
BACKOFF_FIRST = 0.5
BACKOFF_MAX = 5.0
# One watch request asks the server to end it after at most this long: a server that stops
# answering is noticed within that plus the client's read slack (the client's read timeout),
# the watch resumes, and the window never runs over by more than that.
STREAM_SECONDS = 10
_MAX_REASONS = 3


@dataclass
class BlindInterval:
    """A stretch of the window without a watch: from when the stream broke (after silence, its
    last sign of life) until a stream was open again, in seconds into the window. `missed`: a
    change made in it may be missing, because it was bridged by a re-list (410 Gone) or the
    window ended in it; otherwise the watch resumed from its resourceVersion and the server
    replayed every change made meanwhile."""

    start: float
    end: float
    why: str
    missed: bool = False

    def as_result(self, start: dt.datetime) -> dict[str, Any]:
        return {"from": iso(start + dt.timedelta(seconds=self.start)), "to": iso(start + dt.timedelta(seconds=self.end)),
                "t_from": round(self.start, 3), "t_to": round(self.end, 3), "seconds": round(self.end - self.start, 3),
                "why": self.why, "missed": self.missed}


@dataclass
class ListWatch:
    """One kind's list+watch over a window of LENGTH seconds (see the module docstring)."""

    client: Any
    api_version: str
    kind: str
    length: float
    clock: Callable[[], float]
    sleep: Callable[[float], None]
    # (every listed object, whether it is the window's starting state); a later list follows 410 Gone.
    on_list: Callable[[list[Obj], bool], None]
    # (ADDED / MODIFIED / DELETED, the object) → whether it ends the window
    on_event: Callable[[str, Obj], bool]
    stopped: Callable[[], bool] = lambda: False
    may_be_unserved: bool = False  # a kind the cluster may not serve (no CRDs): the window then ends quietly
    scope: dict[str, Any] = field(default_factory=dict)  # the list and watch requests' namespace / selectors
    unserved: bool = False
    t0: float = 0.0
    version: str | None = None
    need_list: bool = True
    answered: bool = False
    streams: int = 0
    bookmarks: int = 0
    blind: list[BlindInterval] = field(default_factory=list)
    gap: BlindInterval | None = None
    ended_blind: bool = False
    last_error: WatchInterrupted | None = None
    backoff: float = BACKOFF_FIRST

    def t(self) -> float:
        """Seconds into the window."""
        return self.clock() - self.t0

    def remaining(self) -> float:
        return self.length - self.t()

    def run(self, t0: float | None = None) -> None:
        self.t0 = self.clock() if t0 is None else t0
        self.list()  # the window's starting state, asked for even when the window is very short
        while not self.stopped() and not self.unserved and self.remaining() > 0:
            if self.need_list:
                self.list()
            else:
                self.stream()
        if self.gap is not None:  # the window ended blind
            self.ended_blind = True
            self.regain(min(self.t(), self.length), missed=True)

    # ---- blindness

    def lose(self, why: str, since: float | None = None, missed: bool = False) -> None:
        """The watch is blind from `since` (default now), or still is, for one more reason."""
        if self.gap is None:
            start = max(self.t() if since is None else since, 0.0)
            if start >= self.length:  # after the window: nothing to miss
                return
            self.gap = BlindInterval(start, start, why)
        else:
            reasons = self.gap.why.split("; then ")
            if why not in reasons and len(reasons) < _MAX_REASONS:
                self.gap.why += "; then " + why
        self.gap.missed = self.gap.missed or missed

    def regain(self, at: float, missed: bool = False) -> None:
        """Watching again since `at`: the open blind interval ends there."""
        if self.gap is not None:
            self.gap.end = min(max(at, self.gap.start), self.length)
            self.gap.missed = self.gap.missed or missed
            self.blind.append(self.gap)
            self.gap = None
        self.backoff = BACKOFF_FIRST

    def interrupted(self, exc: WatchInterrupted, since: float | None = None) -> None:
        """A request got no answer: blind (after silence, `since` the last sign of life or the
        request), and wait before the next attempt, doubling the wait each time, never past the
        deadline."""
        self.last_error = exc
        self.lose(exc.cause, since if exc.timed_out else None)
        pause = min(self.backoff, self.remaining())
        if pause > 0:
            self.sleep(pause)
        self.backoff = min(self.backoff * 2, BACKOFF_MAX)

    def expired(self) -> None:
        """410 Gone: the server no longer has the changes since our resourceVersion; re-list."""
        self.answered = True
        self.lose("resourceVersion %s expired (410 Gone)" % self.version, missed=True)
        self.need_list = True

    # ---- requests

    def list(self) -> None:
        """List the kind: the first list is the window's starting state, a later one (after 410 Gone)
        bridges what the watch missed. A kind the cluster does not serve ends the window quietly where
        that may be (may_be_unserved), before any answer."""
        read = min(LIST_READ_TIMEOUT, max(self.remaining(), 0.0) + WATCH_READ_SLACK)
        asked = self.t()
        try:
            items, version = self.client.list_with_version(self.api_version, self.kind, read_timeout=read, **self.scope)
        except KindNotServed:
            if not self.may_be_unserved or self.answered:
                raise
            self.unserved = True
            return
        except WatchForbidden as exc:
            self.forbidden(exc, since=asked)
            return
        except WatchInterrupted as exc:
            if not self.answered:  # no starting state: blind since the window began
                self.lose(exc.cause, since=0.0, missed=True)
            self.interrupted(exc, since=asked)
            return
        self.on_list(items, not self.answered)
        self.answered = True
        self.version, self.need_list = version, False
        self.regain(self.t(), missed=True)

    def stream(self) -> None:
        """One watch stream from the resourceVersion, until the server ends it, it breaks, or
        the window ends."""
        seconds = min(STREAM_SECONDS, max(1, math.ceil(self.remaining())))
        asked = self.t()
        try:
            events = self.client.watch(self.api_version, self.kind, resource_version=self.version, timeout=seconds,
                                       **self.scope)
        except WatchExpired:
            self.expired()
            return
        except WatchForbidden as exc:
            self.forbidden(exc, since=asked)
            return
        except WatchInterrupted as exc:
            self.interrupted(exc, since=asked)
            return
        self.streams += 1
        opened = alive = self.t()
        seen = False
        try:
            for kind, obj in events:
                alive, seen = self.t(), True
                if kind == "ERROR":
                    self.stream_error(obj)
                    return
                self.answered = True
                self.regain(opened)
                self.version = str((obj.get("metadata") or {}).get("resourceVersion") or self.version)
                if kind == "BOOKMARK":
                    self.bookmarks += 1
                elif kind in ("ADDED", "MODIFIED", "DELETED") and self.on_event(kind, obj):
                    return
                if self.remaining() <= 0:
                    return
            self.answered = True
            self.regain(opened)  # the server ended the stream: it was watching all along
            if not seen and self.t() - opened < 1:  # ended at once (a proxy?): no hot loop of requests
                self.sleep(min(BACKOFF_FIRST, max(self.remaining(), 0.0)))
        except WatchExpired:
            self.expired()
        except WatchInterrupted as exc:
            self.interrupted(exc, since=alive)
        finally:
            close = getattr(events, "close", None)
            if callable(close):
                close()

    def forbidden(self, exc: WatchForbidden, since: float) -> None:
        """403 after the window had its answers: an API server that restarted and has not loaded
        RBAC yet says so for a while; blind until it grants the watch again. Before any answer,
        it is the credentials: the error stands."""
        if not self.answered:
            raise exc
        cause = "403 Forbidden after the watch had been granted (an API server still loading RBAC after a restart?)"
        where = getattr(self.client, "where", lambda: "the API server")()
        self.interrupted(WatchInterrupted(str(exc), cause, where=where), since=since)

    def stream_error(self, status: Obj) -> None:
        """An ERROR event ends the stream: 410 means re-list, anything else reconnect."""
        self.answered = True
        if status.get("code") == 410:
            self.expired()
            return
        why = "the server ended the stream: %s %s" % (status.get("code"), status.get("reason") or status.get("message") or "")
        self.interrupted(WatchInterrupted(why.strip(), why.strip()))
