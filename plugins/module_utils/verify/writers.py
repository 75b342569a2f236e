# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Who wrote each Ingress status change, from evidence only.

Three things identify a writer, and each change row says which one decided (`attributed_by`):

- the field manager of the status write (managedFields): every pod of the controller types
  that write with that manager may have written it;
- the address it wrote: each controller publishes what the diagnosis reads for it (its publish
  Service's LoadBalancer IPs, its pods' node addresses without a publish Service, a fixed status
  address), so only the pods of controllers that publish the new addresses may have written them;
- the controller pods' own status log lines, near the change in time: a line that names the
  Ingress and the new addresses names its writer; a line without the addresses (Traefik's)
  decides only among the pods the other evidence left, when the others' logs were read, have
  no such line then, and show that they log their status writes (some line in the window).

The Gateway API kinds (verify/status/ watches them where the cluster serves Gateway API) are
attributed the same way, against what each Gateway API implementation writes (the kind's surface,
subjects/: the address its type's reading says it puts in a Gateway's status.addresses, and the
controllerName a route's parent entry names); Traefik logs no line for them, so the field manager
and the address decide, or the row keeps its candidates.

A log line never overrides the address evidence: a pod that does not publish the new
addresses is not its writer, whatever it logged. Where the evidence leaves more than one pod,
the row names them as `candidates` and its `pod` stays null: a wrong writer is worse than none.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping, Protocol

from ansible_collections.kindlab.ingress.plugins.module_utils._time import parse_time
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ClusterState
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery import controllers as discovery
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery import snapshot
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import INGRESS, kind_named
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects.kind import GATEWAY_SURFACE, INGRESS_SURFACE

Obj = dict[str, Any]

# attributed_by: the evidence that left one pod (or none, or several).
BY_LOG = "log"  # its log line names the Ingress and the new addresses, or it alone logged a write of it then
BY_ADDRESS = "address"  # only its controller publishes the new addresses (and it is that controller's only pod)
BY_MANAGER = "manager"  # only its pods write with that field manager, and it is the only one
CANDIDATES = "candidates"  # nothing decides between `candidates`; `pod` is null
NO_WRITER = "none"  # no known controller pod could have written it (e.g. a field manager no controller type uses)
DELETED = "deleted"  # the Ingress was deleted: not a status write

# How far a log line's time may be from the watch event it explains (as verify/status/ does).
LOG_MATCH_SECONDS = 15.0


class LogLine(Protocol):
    """A controller's status log line (status.LogEntry)."""

    @property
    def pod(self) -> str: ...
    @property
    def when(self) -> dt.datetime | None: ...
    @property
    def namespace(self) -> str: ...
    @property
    def ingress(self) -> str: ...
    @property
    def new(self) -> tuple[str, ...] | None: ...
    @property
    def manager(self) -> str: ...


# ---------------------------------------------------------------- what each controller publishes


@dataclass(frozen=True)
class Publisher:
    """One status writer as the diagnosis reads it: which pods run it and which addresses it publishes."""

    controller: str  # namespace/name (Traefik's: name@provider)
    workload: str  # namespace/name of its Deployment or DaemonSet
    type: str
    field_manager: str
    pods: tuple[str, ...]
    addresses: tuple[str, ...] | None  # None: it writes no address (cannot start, update-status off, LB pending)
    source: str  # diagnose's publish_source: service / node-addresses / status-address / none
    # What it writes: Ingresses' status, or (a Gateway API implementation) Gateways' and routes';
    # and for the latter the controllerName it claims classes with and writes in routes' status.parents.
    surface: str = "ingress"
    controller_name: str = ""

    def as_dict(self) -> Obj:
        out = {"controller": self.controller, "workload": self.workload, "type": self.type,
               "field_manager": self.field_manager, "pods": list(self.pods),
               "addresses": None if self.addresses is None else list(self.addresses), "source": self.source}
        if self.surface != INGRESS_SURFACE:
            out.update(surface=self.surface, controller_name=self.controller_name)
        return out


def publishers_of(state: ClusterState) -> list[Publisher]:
    """Every controller of the snapshot with its pods and published addresses, as diagnose reads them:
    each Ingress writer, and each Gateway API implementation with the address it writes in Gateways
    (its type's reading, through the controller-type seam)."""
    out = []
    found = discovery.find_workloads(state)
    for f in found:
        for c in f.controllers:
            out.append(Publisher(c.ref, key_of(f.workload), c.type, f.type.field_manager, tuple(c.pods),
                                 None if c.address is None else tuple(c.address), c.publish_source))
    for f, side in discovery.gateway_sides(state, found):
        out.append(Publisher(side.ref, key_of(f.workload), side.type, side.field_manager or f.type.field_manager, tuple(side.pods),
                             None if side.address is None else tuple(side.address), side.address_source, GATEWAY_SURFACE,
                             side.controller_name))
    return out


def merge(snapshots: Iterable[list[Publisher]]) -> list[Publisher]:
    """Publishers read at several times as one: the pods and the addresses of each controller at
    any of them (a Service gets its LoadBalancer address late, a pod is replaced)."""
    merged: dict[str, Publisher] = {}
    for snapshot in snapshots:
        for p in snapshot:
            before = merged.get(p.controller)
            if before is None:
                merged[p.controller] = p
                continue
            if before.addresses is None:
                addresses = p.addresses
            else:
                addresses = tuple(dict.fromkeys(before.addresses + (p.addresses or ())))
            merged[p.controller] = Publisher(p.controller, p.workload, p.type, p.field_manager,
                                             tuple(dict.fromkeys(before.pods + p.pods)), addresses, p.source, p.surface,
                                             p.controller_name)
    return [merged[k] for k in sorted(merged)]


def read_publishers(client: Any) -> list[Publisher]:
    """One snapshot of the cluster's controllers (the objects diagnose reads, but no Ingress)."""
    return publishers_of(snapshot.read_state(client, None))


def _owner_of(pod: str, publishers: list[Publisher]) -> list[Publisher]:
    """The publishers running POD: those listing it, else those of the workload its name
    continues (a pod seen only in the logs: replaced between the snapshots), the longest name."""
    listed = [p for p in publishers if pod in p.pods]
    if listed:
        return listed
    ns, _sep, name = pod.partition("/")
    owners = [p for p in publishers if p.workload.partition("/")[0] == ns and name.startswith(p.workload.partition("/")[2] + "-")]
    if not owners:
        return []
    longest = max(len(p.workload) for p in owners)
    return [p for p in owners if len(p.workload) == longest]


# ---------------------------------------------------------------- the evidence of one window


@dataclass
class Evidence:
    """What the window knows about its writers: the publishers (merged snapshots), the field
    manager of every other controller pod seen (ns/pod -> manager, e.g. from the log reader's
    pod lists), and when each pod's log was last read whole (None: every log is complete)."""

    publishers: list[Publisher] = field(default_factory=list)
    pod_managers: dict[str, str] = field(default_factory=dict)
    logs_read: Mapping[str, dt.datetime] | None = None

    def pods(self, entries: Iterable[LogLine] = ()) -> dict[str, str]:
        """Every known controller pod -> its field manager."""
        out: dict[str, str] = {}
        for p in self.publishers:
            for pod in p.pods:
                out.setdefault(pod, p.field_manager)
        for pod, manager in self.pod_managers.items():
            out.setdefault(pod, manager)
        for e in entries:
            if e.manager:
                out.setdefault(e.pod, e.manager)
        return out

    def published(self, pod: str, surface: str = INGRESS_SURFACE) -> set[str] | None:
        """The addresses POD's controllers publish on SURFACE (empty: none), or None when no publisher
        is known for it. A pod known to run publishers, none of them on SURFACE, publishes nothing there
        (a Traefik whose Gateway provider is off writes no Gateway)."""
        owners = _owner_of(pod, self.publishers)
        if not owners:
            return None
        return {a for p in owners if p.surface == surface for a in p.addresses or ()}

    def may_write_for(self, pod: str, controller_name: str) -> bool:
        """Whether POD may have written a route parent entry of CONTROLLER_NAME: its Gateway API side
        writes with that name, or nothing is known of its publishing (a pod seen only in the logs)."""
        owners = _owner_of(pod, self.publishers)
        if not owners:
            return True
        return any(p.surface == GATEWAY_SURFACE and p.controller_name == controller_name for p in owners)

    def log_complete(self, pod: str, when: dt.datetime | None) -> bool:
        """Whether POD's log was read after WHEN (its status lines of then are all known)."""
        if self.logs_read is None:
            return True
        read = self.logs_read.get(pod)
        return read is not None and (when is None or read >= when)


# ---------------------------------------------------------------- attribution


def _gap(line: LogLine, when: dt.datetime | None) -> float:
    return abs((line.when - when).total_seconds()) if line.when and when else LOG_MATCH_SECONDS - 1


def _may_publish(published: set[str] | None, new: tuple[str, ...]) -> bool:
    """Whether a pod publishing PUBLISHED (None: unknown) may have written NEW."""
    return published is None or set(new) <= published


def _decide(change: Obj, pod: str | None, by: str, candidates: list[str]) -> None:
    change["pod"] = pod
    change["attributed_by"] = by
    change["candidates"] = sorted(candidates) if pod is None else []


def attribute(timeline: list[Obj], entries: list[LogLine], evidence: Evidence) -> None:
    """Give each status change of TIMELINE (in order) its writer: `pod`, `attributed_by`, and
    `candidates` when nothing decides. Each log line explains at most one change."""
    used: set[int] = set()
    known = evidence.pods(entries)
    explains = _nearest_changes(timeline, entries)
    for index, change in enumerate(timeline):
        if change.get("event") == "DELETED":
            _decide(change, None, DELETED, [])
            continue
        _attribute_one(change, entries, evidence, known, used, {i for i, c in explains.items() if c == index})


def _nearest_changes(timeline: list[Obj], entries: list[LogLine]) -> dict[int, int]:
    """Each line that carries addresses -> the change it explains: the nearest in time of those
    that wrote the same addresses into the same Ingress (a line is one write)."""
    out: dict[int, int] = {}
    for i, e in enumerate(entries):
        if e.new is None:
            continue
        best, best_gap = None, LOG_MATCH_SECONDS
        for index, change in enumerate(timeline):
            if (change.get("event") == "DELETED" or change.get("ingress") != "%s/%s" % (e.namespace, e.ingress)
                    or tuple(sorted(change.get("new") or [])) != e.new):
                continue
            gap = _gap(e, parse_time(change.get("time")))
            if gap <= best_gap and (best is None or gap < best_gap):
                best, best_gap = index, gap
        if best is not None:
            out[i] = best
    return out


def _attribute_one(change: Obj, entries: list[LogLine], evidence: Evidence, known: dict[str, str], used: set[int],
                   explained: set[int]) -> None:
    new = tuple(sorted(change.get("new") or []))
    when = parse_time(change.get("time"))
    # what a publisher writes (Publisher.surface), and so which changes its addresses explain: the kind's
    surface = (kind_named(str(change.get("kind"))) or INGRESS).surface
    managers = [str(m) for m in change.get("managers") or ([change["manager"]] if change.get("manager") else [])]
    # 1. the field manager: only the pods of the types that write with it; a route's parent entry
    # names its controller too: only the pods whose Gateway API side writes with that controllerName
    pods = sorted(p for p, m in known.items() if m in managers) if managers else sorted(known)
    if change.get("controller"):
        pods = [p for p in pods if evidence.may_write_for(p, str(change["controller"]))]
    if not pods:
        _decide(change, None, NO_WRITER, [])
        return
    narrowed_by = BY_MANAGER if managers else CANDIDATES
    # 2. the address: only the pods whose controllers publish every new address (unknown publishing stays)
    if new:
        publishing = [p for p in pods if _may_publish(evidence.published(p, surface), new)]
        if not publishing:  # nobody known publishes it: the evidence is incomplete, never a guess
            _decide(change, None, CANDIDATES, pods)
            return
        if len(publishing) < len(pods):
            narrowed_by = BY_ADDRESS
        pods = publishing
    ns, _sep, name = str(change.get("ingress", "")).partition("/")
    lines = [(i, e) for i, e in enumerate(entries)
             if i not in used and e.pod in pods and e.namespace == ns and e.ingress == name
             and (not managers or not e.manager or e.manager in managers) and _gap(e, when) <= LOG_MATCH_SECONDS]
    # 3a. a line naming the Ingress and exactly the new addresses, nearer to this change than to any
    # other of that value, names its writer
    exact = [(i, e) for i, e in lines if i in explained]
    exact_pods = sorted({e.pod for _i, e in exact})
    if len(exact_pods) == 1:
        _use(used, exact, when)
        _decide(change, exact_pods[0], BY_LOG, [])
        return
    if len(exact_pods) > 1:  # each says it wrote that value then: either may be this change
        _decide(change, None, CANDIDATES, exact_pods)
        return
    # 3b. the other evidence left one pod: by its field manager, or by its published addresses
    # (positive evidence only: a pod whose publishing is unknown is not named by elimination)
    if len(pods) == 1:
        if narrowed_by == CANDIDATES or (narrowed_by == BY_ADDRESS and evidence.published(pods[0], surface) is None):
            _decide(change, None, CANDIDATES, pods)
            return
        _use(used, [(i, e) for i, e in lines if e.new is None], when)
        _decide(change, pods[0], narrowed_by, [])
        return
    # 3c. lines without the addresses: one pod alone logged a write of this Ingress then, and the
    # others' silence means something: their logs were read past it, and they do log their status
    # writes (a controller at a level that hides the line, warn or error, would look silent forever)
    vague = [(i, e) for i, e in lines if e.new is None]
    vague_pods = sorted({e.pod for _i, e in vague})
    loggers = {e.pod for e in entries}
    complete = all(evidence.log_complete(p, when) and (p in vague_pods or p in loggers) for p in pods)
    if len(vague_pods) == 1 and complete:
        _use(used, vague, when)
        _decide(change, vague_pods[0], BY_LOG, [])
        return
    _decide(change, None, CANDIDATES, vague_pods if vague_pods and complete else pods)


def _use(used: set[int], lines: list[tuple[int, LogLine]], when: dt.datetime | None) -> None:
    """Mark the line nearest in time as explaining this change."""
    if lines:
        used.add(min(lines, key=lambda item: _gap(item[1], when))[0])
