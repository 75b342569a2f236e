# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What every target type's table of fixes speaks in: a behaviour, the target's objects, a fix."""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Rule

Obj = dict[str, Any]
# The annotation a migrated object carries: the behaviours (responsible: cause) its proven fixes keep, as JSON.
KEEPS_ANNOTATION = "kindlab.ingress/keeps"
# Traefik's own Middleware resource (its kubernetesCRD provider), which an Ingress's router names by annotation.
MIDDLEWARE_API = "traefik.io/v1alpha1"
# Its IngressRoute, which a fix makes where an Ingress's annotations cannot say the routing (a canary's).
INGRESS_ROUTE_API = MIDDLEWARE_API
# The annotations Traefik's own Ingress provider reads for an Ingress's routers.
ROUTER_ANNOTATION = "traefik.ingress.kubernetes.io/router."
PATH_MATCHER = ROUTER_ANNOTATION + "pathmatcher"
MIDDLEWARES = ROUTER_ANNOTATION + "middlewares"  # namespace-name@kubernetescrd, comma-separated


@dataclass(frozen=True)
class Behaviour:
    target: str
    responsible: str
    cause: str
    rows: tuple[Obj, ...]  # the comparison's rows that differ by it (index, ingress, host, target, kind, rule, ...)
    rules: tuple[Rule | None, ...]  # the rule each row exercises (corpus.rules_of), in the same order

    @property
    def key(self) -> str:
        return "%s: %s" % (self.responsible, self.cause)

    @property
    def kinds(self) -> set[str]:
        """The kinds of its causes (migration/causes.py), as its rows' differences carry them."""
        return {str(d["cause_kind"]) for r in self.rows for d in r.get("differences") or [] if d.get("cause_kind")}


@dataclass
class Objects:
    """The target's own objects, as the rehearsal cluster holds them (read before each proposal)."""
    ingresses: dict[str, Obj] = field(default_factory=dict)  # namespace/name -> Ingress
    routes: dict[str, Obj] = field(default_factory=dict)  # namespace/name -> HTTPRoute attached to the target
    gateways: dict[str, Obj] = field(default_factory=dict)  # namespace/name -> Gateway of the target
    # namespace/name -> Traefik Middleware in the rehearsed Ingresses' namespaces (a target whose table makes them)
    middlewares: dict[str, Obj] = field(default_factory=dict)
    ingress_routes: dict[str, Obj] = field(default_factory=dict)  # namespace/name -> Traefik IngressRoute, likewise
    # namespace/name -> Service of the rehearsed Ingresses' namespaces (a Gateway target: a route names ports by number)
    services: dict[str, Obj] = field(default_factory=dict)

    def pool(self, kind: str) -> dict[str, Obj]:
        """The objects of one kind (Ingress, HTTPRoute, Gateway, Middleware, IngressRoute); {} for any other."""
        return {"Ingress": self.ingresses, "HTTPRoute": self.routes, "Gateway": self.gateways,
                "Middleware": self.middlewares, "IngressRoute": self.ingress_routes}.get(kind, {})

    def edited(self, kind: str, name: str) -> Obj:
        """A copy of one object to edit."""
        return copy.deepcopy(self.pool(kind)[name])


@dataclass(frozen=True)
class Fix:
    says: str  # what it changes, in words
    objects: tuple[Obj, ...] = ()  # the target's objects as they must be after it (applied whole)
    impossible: str = ""  # set instead of objects: why no setting of this target reproduces the behaviour
    removes: tuple[Obj, ...] = ()  # the target's objects the fix deletes (a canary Ingress an IngressRoute replaces)

    def names(self) -> list[str]:
        return ["%s %s" % (o.get("kind"), key_of(o)) for o in self.objects]

    def removed(self) -> list[str]:
        return ["%s %s" % (o.get("kind"), key_of(o)) for o in self.removes]


Table = Callable[[Behaviour, Objects], "Fix | None"]
