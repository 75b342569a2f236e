# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who wrote a status change, from the evidence: the managedFields entry on the `status` subresource
with the newest time (its manager, e.g. `nginx-ingress-controller`), and a controller pod's status log
line (ingress-nginx's `"updating Ingress status" namespace=.. ingress=.. newValue=[..]`, status.go, names
the pod), weighed with what each controller publishes by verify/writers.py; and a change's writer in words,
for the reports. Pure."""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._time import parse_time
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import writers

Obj = dict[str, Any]


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
