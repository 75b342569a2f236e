# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The status subjects the status watch follows, by kind: what one object's status says, as
subjects whose changes are counted, attributed and judged alike (status.py).

- an Ingress is one subject: its status.loadBalancer addresses;
- a Gateway is one subject: its status.addresses, its conditions and each listener's (with
  attachedRoutes);
- an HTTPRoute is one subject per status.parents entry, keyed by its parentRef and controllerName
  (the spec's key: two controllers writing for one parent are two entries), with no address.

Each kind has a watch of its own (one list, then one watch stream at a time). The Gateway API
kinds are watched only where the cluster serves them. Pure.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils.verify import gateway_api
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.ingresses import status_addresses
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of

Obj = dict[str, Any]


@dataclass(frozen=True)
class Surface:
    """One subject's status at one moment."""

    subject: str  # unique among every kind's subjects (Tracker.tracks' key)
    obj: str  # namespace/name of the object it is read from
    addresses: list[str]
    conditions: list[str]
    parent: str = ""  # HTTPRoute: `<parentRef> by <controllerName>`
    controller: str = ""  # HTTPRoute: the entry's controllerName


@dataclass(frozen=True)
class SubjectKind:
    """A kind whose status the window watches."""

    kind: str
    api_version: str
    result_key: str  # the verdict's mapping of its objects: ingresses, gateways, routes
    addressed: bool  # its status carries addresses, which must be there and in the pools
    read: Callable[[Obj], list[Surface]]
    # the parents an object names, each of which must accept it (HTTPRoute); None: nothing of the kind
    names_parents: Callable[[Obj], list[str]] | None = None

    def subject_of(self, key: str, parent: str = "") -> str:
        """The subject id: an Ingress's is its namespace/name (as it always was), the others' name their kind."""
        if self.kind == "Ingress":
            return key
        return "%s %s%s" % (self.kind, key, " parent " + parent if parent else "")


def _ingress(obj: Obj) -> list[Surface]:
    return [Surface(key_of(obj), key_of(obj), status_addresses(obj), [])]


def _gateway(obj: Obj) -> list[Surface]:
    addresses, conditions = gateway_api.gateway_status(obj)
    return [Surface(GATEWAY.subject_of(key_of(obj)), key_of(obj), addresses, conditions)]


def _route(obj: Obj) -> list[Surface]:
    key = key_of(obj)
    return [Surface(HTTPROUTE.subject_of(key, parent), key, [], conditions, parent, parent.rpartition(" by ")[2])
            for parent, conditions in gateway_api.route_parents(obj).items()]


INGRESS = SubjectKind("Ingress", "networking.k8s.io/v1", "ingresses", True, _ingress)
GATEWAY = SubjectKind("Gateway", gateway_api.API_VERSION, "gateways", True, _gateway)
HTTPROUTE = SubjectKind("HTTPRoute", gateway_api.API_VERSION, "routes", False, _route, gateway_api.named_parents)
KINDS = (INGRESS, GATEWAY, HTTPROUTE)
# The conditions a route needs from each parent it names.
ROUTE_NEEDS = ("Accepted=True", "ResolvedRefs=True")


def kind_named(name: str) -> SubjectKind:
    return next(k for k in KINDS if k.kind == name)
