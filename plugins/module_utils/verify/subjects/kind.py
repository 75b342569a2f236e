# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a status subject kind is (the records of the table in __init__.py): everything status,
writers, timeline, report, report_html and compare need to know about a kind, so that none of
them asks which kind it has. Pure."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import gateway_api

Obj = dict[str, Any]

# Who writes a kind's status (writers.py): an Ingress controller, or a Gateway API implementation.
INGRESS_SURFACE = "ingress"
GATEWAY_SURFACE = "gateway"


@dataclass(frozen=True)
class Surface:
    """One subject's status at one moment."""

    subject: str  # unique among every kind's subjects (Tracker.tracks' key)
    obj: str  # namespace/name of the object it is read from
    addresses: list[str]
    conditions: list[str]
    parent: str = ""  # a route's parent entry: `<parentRef> by <controllerName>`
    controller: str = ""  # a route's parent entry: its controllerName


@dataclass(frozen=True)
class SubjectKind:
    """A kind whose status the window watches."""

    kind: str
    api_version: str
    result_key: str  # the verdict's mapping of its objects, and the report's check (lab_expect.<key>.failing)
    reader: Callable[[SubjectKind, Obj], list[Surface]]
    addressed: bool  # its status carries addresses, which must be there and in the pools
    surface: str  # who writes its status: INGRESS_SURFACE or GATEWAY_SURFACE
    # The lab's first kind (Ingress): its ids, axes and timeline entries are the bare namespace/name
    # (an entry names it under `ingress`), as they were before other kinds were watched; it must be
    # served, and the window runs without the Gateway API option.
    bare: bool = False
    # Per parent (routes): the parents an object's spec names, each of which must give it the `needs`
    # conditions; its subjects are status.parents entries and it is judged as one object over them.
    parents: Callable[[Obj], list[str]] | None = None
    needs: tuple[str, ...] = ()
    empty_reason: str = "no address in status.addresses"

    def read(self, obj: Obj) -> list[Surface]:
        return self.reader(self, obj)

    def subject_of(self, key: str, parent: str = "") -> str:
        """The subject id: a bare kind's is its namespace/name, the others' name their kind (and parent)."""
        if self.bare:
            return key
        return "%s %s%s" % (self.kind, key, " parent " + parent if parent else "")

    def axis(self, key: str) -> str:
        """The timeline axis of an object (timeline.py, report.html): `ns/name`, or `Kind ns/name`."""
        return key if self.bare else "%s %s" % (self.kind, key)

    def entry_of(self, surface: Surface) -> Obj:
        """What names the subject in a timeline entry of its change."""
        if self.bare:
            return {"ingress": surface.obj}
        return {"kind": self.kind, "subject": surface.subject, "object": surface.obj}


def route_surfaces(kind: SubjectKind, route: Obj) -> list[Surface]:
    """A route kind's subjects: one per status.parents entry, keyed by parentRef and controllerName
    (the spec's key: two controllers writing for one parent are two entries), with no address."""
    key = key_of(route)
    return [Surface(kind.subject_of(key, parent), key, [], conditions, parent, parent.rpartition(" by ")[2])
            for parent, conditions in gateway_api.route_parents(route).items()]


# What every route kind needs from each parent it names (the Gateway API spec's route conditions).
ROUTE_NEEDS = ("Accepted=True", "ResolvedRefs=True")


def route_kind(kind: str, result_key: str, needs: tuple[str, ...] = ROUTE_NEEDS) -> SubjectKind:
    """A Gateway API route kind (HTTPRoute, GRPCRoute, ...): judged per parent entry, written by Gateway API implementations."""
    return SubjectKind(kind, gateway_api.API_VERSION, result_key, route_surfaces, addressed=False, surface=GATEWAY_SURFACE,
                       parents=gateway_api.named_parents, needs=needs)
