# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What is read beside the watch, in the background, for attribution: the status lines of every
ingress controller pod (detected as diagnose does) and what each controller publishes, both read while the
window runs and once at its end. Reads are best effort."""
from __future__ import annotations

import datetime as dt
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.background import BackgroundReader
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import K8sError
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import writers
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.attribution import LogEntry, parse_log_line
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import INGRESS
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.writers import LOG_MATCH_SECONDS

Obj = dict[str, Any]


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
