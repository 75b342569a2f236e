# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One status watch (ingress_status's check): the Ingress window and, where the cluster serves Gateway API,
one window per Gateway API kind, side by side over one tracker; the evidence read beside them, the changes
attributed, and the whole judged. Only this and what it reads with (window.py, evidence.py) touch the cluster."""
from __future__ import annotations

import datetime as dt
import threading
import time
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import ApiUnreachable, K8sError, unreachable_message
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.watch import LIST_READ_TIMEOUT, WATCH_READ_SLACK
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import writers
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.attribution import attribute_from_logs
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.evidence import PodLogs, Publishing
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.options import Options
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.tracker import Tracker
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.verdict import judge_blind, restarts, verdict
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.window import Halt, Window
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import WATCHED
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects.kind import SubjectKind


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
