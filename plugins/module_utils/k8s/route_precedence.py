# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Gateway API's precedence among HTTPRoute matches, the same for every implementation (HTTPRouteRule.matches in
the CRDs the lab pins): across routes, the match with an Exact path, then the longest Prefix, then a method, then
the most header and query matches takes precedence; ties go to the oldest route by creationTimestamp, then to the
first by "namespace/name". A route's matches as `Match` records (RegularExpression paths, whose precedence is
implementation-specific, left out), what two of them tie on, the host they share on a listener, and the winner of
a tie. verify/route_conflicts.py finds the ties on a cluster's listeners; migration/routes.py picks the rule that
takes a request.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import hostnames_meet
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of

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
            out.append(Match(route=key, created=str((route.get("metadata") or {}).get("creationTimestamp") or ""), rule=i, hostnames=hostnames,
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
            if x == y or x == "*" or y == "*" or hostnames_meet(x, [y]):
                return y if x == "*" or (x.startswith("*.") and not y.startswith("*.")) else x
    return None


def winner(a: Match, b: Match) -> tuple[Match, Match, str]:
    """(winner, loser, why) of two tying matches of different routes."""
    if a.created and b.created and a.created != b.created:
        first, second = (a, b) if a.created < b.created else (b, a)
        return first, second, "the older route wins (created %s, the other %s)" % (first.created, second.created)
    first, second = (a, b) if a.route < b.route else (b, a)
    return first, second, "created in the same second: the first by namespace/name wins"
