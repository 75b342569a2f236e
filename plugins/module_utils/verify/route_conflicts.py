# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""HTTPRoutes of different namespaces or names that claim the same requests on one Gateway listener,
and which one wins. Unlike Ingress, Gateway API defines the answer: its precedence among matches
(k8s/route_precedence.py). Two matches that tie on every match criterion are a conflict: the spec
names the winner, but the loser's rule serves nothing for those requests, and its owner is rarely
told. Partial overlaps (one prefix longer) are precedence working as meant, not conflicts. Which
routes a listener takes is gateway_api.attach's answer. An implementation that does not honour the
tie-break says so (GatewayController.on_route_tie), beside the spec's winner.
"""
from __future__ import annotations

from typing import Any, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ClusterState, GatewayController, meta
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.route_precedence import Match, matches_of, shared_host, winner
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s import gateway_api as spec
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.diagnose_gateways import sides_of

Obj = dict[str, Any]


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
