# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTTPRoutes of different namespaces or names that claim the same requests on one Gateway listener,
and which one wins. Unlike Ingress, Gateway API defines the answer (HTTPRouteRule.matches in the
CRDs the lab pins): across routes, the match with an Exact path, then the longest Prefix, then a
method, then the most header and query matches takes precedence; ties go to the oldest route by
creationTimestamp, then to the first by "namespace/name". Two matches that tie on every match
criterion are a conflict: the spec names the winner, but the loser's rule serves nothing for those
requests, and its owner is rarely told. Partial overlaps (one prefix longer) are precedence
working as meant, not conflicts. Which routes a listener takes is gateway_api.attach's answer.
RegularExpression paths (implementation-specific precedence) are left out. An implementation that
does not honour the tie-break says so (GatewayController.on_route_tie), beside the spec's winner.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ClusterState, GatewayController, meta
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import gateway_api as spec
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.diagnose_gateways import sides_of

Obj = dict[str, Any]
DEFAULT_MATCH: Obj = {"path": {"type": "PathPrefix", "value": "/"}}


@dataclass(frozen=True)
class Match:
    route: str  # namespace/name
    created: str  # creationTimestamp (RFC 3339, whole seconds: it sorts as text)
    rule: int
    hostnames: tuple[str, ...]  # the route's; () takes the listener's
    path_type: str
    path: str
    method: str
    headers: int
    queries: int
    backends: str
    # The match and its rule's filters as the route writes them: what decides whether a request meets it
    # (migration/routes.py), not what two matches tie on.
    match: Obj = field(default_factory=dict, compare=False, hash=False)
    filters: tuple[Obj, ...] = field(default=(), compare=False, hash=False)

    def criteria(self) -> tuple[str, str, str, int, int]:
        """What the spec's precedence compares; equal criteria tie."""
        return (self.path_type, self.path.rstrip("/") or "/" if self.path_type == "PathPrefix" else self.path,
                self.method, self.headers, self.queries)

    def describe(self) -> str:
        return "%s %s%s" % (self.path_type, self.path, " (%s)" % self.method if self.method else "")


def matches_of(route: Obj) -> list[Match]:
    key = key_of(route)
    hostnames = tuple(str(h) for h in (route.get("spec") or {}).get("hostnames") or [])
    out = []
    for i, rule in enumerate((route.get("spec") or {}).get("rules") or [{}]):
        backends = ", ".join("%s:%s" % (b.get("name"), b.get("port")) for b in rule.get("backendRefs") or [])
        for match in rule.get("matches") or [DEFAULT_MATCH]:
            path = match.get("path") or DEFAULT_MATCH["path"]
            if path.get("type") == "RegularExpression":
                continue
            out.append(Match(route=key, created=str(meta(route).get("creationTimestamp") or ""), rule=i, hostnames=hostnames,
                             path_type=str(path.get("type", "PathPrefix")), path=str(path.get("value", "/")),
                             method=str(match.get("method") or ""), headers=len(match.get("headers") or []),
                             queries=len(match.get("queryParams") or []), backends=backends, match=match,
                             filters=tuple(rule.get("filters") or [])))
    return out


def shared_host(a: Match, b: Match, listener_hostname: str | None) -> str | None:
    """A hostname both matches take on this listener: equal names, or one's wildcard covering the
    other's; a route without hostnames takes the listener's (any host without one)."""
    ha = a.hostnames or ((listener_hostname,) if listener_hostname else ("*",))
    hb = b.hostnames or ((listener_hostname,) if listener_hostname else ("*",))
    for x in ha:
        for y in hb:
            if x == y or x == "*" or y == "*" or spec.hostnames_meet(x, [y]):
                return y if x == "*" or (x.startswith("*.") and not y.startswith("*.")) else x
    return None


def winner(a: Match, b: Match) -> tuple[Match, Match, str]:
    """(winner, loser, why) of two tying matches of different routes."""
    if a.created and b.created and a.created != b.created:
        first, second = (a, b) if a.created < b.created else (b, a)
        return first, second, "the older route wins (created %s, the other %s)" % (first.created, second.created)
    first, second = (a, b) if a.route < b.route else (b, a)
    return first, second, "created in the same second: the first by namespace/name wins"


def find(state: ClusterState, controllers: Sequence[GatewayController] = ()) -> list[Obj]:
    """Every tie between matches of two routes attached to one listener, with the spec's winner and
    what each implementation serving the Gateway (of `controllers`) does instead, where it differs."""
    if not state.gateway_api:
        return []
    out: list[Obj] = []
    seen: set[tuple[str, str, str, str]] = set()
    sides = sides_of(state, list(controllers))  # who serves each Gateway: claims its class, watches its namespace
    for gateway in sorted(state.gateways, key=key_of):
        differ = {c.ref: c.on_route_tie for c in sides[key_of(gateway)].claimers if c.on_route_tie}
        for listener in spec.listeners(gateway):
            name = str(listener.get("name"))
            attached: list[Match] = []
            for route in sorted(state.http_routes, key=key_of):
                ns = str(meta(route).get("namespace"))
                for ref in (route.get("spec") or {}).get("parentRefs") or []:
                    if spec.parent_gateway(ns, ref) != key_of(gateway):
                        continue
                    att = spec.attach("HTTPRoute", route, ref, gateway, state.namespace_labels)
                    if att.accepted and name in att.listeners:
                        attached += matches_of(route)
                        break
            for i, a in enumerate(attached):
                for b in attached[i + 1:]:
                    if a.route == b.route or a.criteria() != b.criteria():
                        continue  # within one route its first rule wins, as its author ordered them
                    host = shared_host(a, b, listener.get("hostname"))
                    if host is None:
                        continue
                    win, lose, why = winner(a, b)
                    dedupe = (win.route, lose.route, host, a.describe())
                    if dedupe in seen:
                        continue
                    seen.add(dedupe)
                    out.append({
                        "routes": [win.route, lose.route], "winner": win.route, "gateway": key_of(gateway), "listener": name,
                        "host": host, "path": win.describe(), "why": why,
                        "message": "HTTPRoutes %s and %s both route %s %s on Gateway %s listener %s; by Gateway API's "
                                   "precedence %s serves it (%s), and %s's rule %d (to %s) serves nothing there"
                                   % (win.route, lose.route, host, win.describe(), key_of(gateway), name, win.route, why,
                                      lose.route, lose.rule, lose.backends or "no backend")
                                   + "".join("; but %s serves this Gateway: %s" % (ref, text) for ref, text in sorted(differ.items())),
                        "served_otherwise": dict(sorted(differ.items())),
                    })
    return out
