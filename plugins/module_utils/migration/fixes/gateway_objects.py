# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What the Gateway API target's fixes read of its objects: a route's hosts and rules, a Gateway's listeners."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Objects

Obj = dict[str, Any]


def spec(obj: Obj) -> Obj:
    out: Obj = obj.setdefault("spec", {})
    return out


def redirects(rule: Obj) -> bool:
    return any(f.get("type") == "RequestRedirect" for f in rule.get("filters") or [])


def routes_of_host(objects: Objects, host: str) -> list[Obj]:
    return [r for _n, r in sorted(objects.routes.items()) if host in (spec(r).get("hostnames") or [])]


def http_listeners(gateway: Obj) -> list[Obj]:
    return [li for li in spec(gateway).get("listeners") or [] if li.get("protocol") == "HTTP"]


def plain_http_listeners(objects: Objects, host: str) -> list[tuple[Obj, Obj]]:
    """(Gateway, listener) of the target's plain-HTTP listeners that take HOST: those naming it, else those naming no
    hostname."""
    out: list[tuple[Obj, Obj]] = []
    for _name, gateway in sorted(objects.gateways.items()):
        listeners = http_listeners(gateway)
        named = [li for li in listeners if li.get("hostname") == host] or [li for li in listeners if not li.get("hostname")]
        out += [(gateway, li) for li in named]
    return out


def admits(listener: Obj, gateway: Obj, namespace: str) -> bool:
    """Whether LISTENER of GATEWAY accepts routes of NAMESPACE (allowedRoutes: Same, the default, or All; a Selector
    is not read here, so it is taken as refusing)."""
    allowed = ((listener.get("allowedRoutes") or {}).get("namespaces") or {}).get("from") or "Same"
    return allowed == "All" or allowed == "Same" and str(gateway["metadata"].get("namespace") or "") == namespace
