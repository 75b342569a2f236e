# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Which rule of a Gateway's HTTPRoutes takes a request, as Gateway API says a conforming
implementation must choose: what the rehearsal names as the cause when a Gateway target answers
otherwise than ingress-nginx (a team's own routes, or a translation's).

Gateway API v1 (HTTPRouteRule, "Precedence"): among the rules whose hostnames and matches accept the
request, the most specific hostname (an exact name over a wildcard, a longer wildcard over a shorter;
a route without hostnames accepts every host), then an Exact path over any prefix, the longest
PathPrefix, a method match, the most header matches, the most query matches; ties go to the oldest
route (creationTimestamp), then its namespace/name, then the rule and match order. A PathPrefix
matches whole path elements (/api matches /api and /api/x, not /apix), its trailing slash ignored.
The listener's own hostname is not applied here: the rehearsal's requests name the route's hosts.
The path is matched as the rehearsal's Gateway implementation sees it: Traefik's entry points clean it
first (dot segments resolved, repeated slashes merged).
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of

Obj = dict[str, Any]


@dataclass(frozen=True)
class RouteRule:
    route: str  # namespace/name of its HTTPRoute
    index: int  # the rule's position in the route
    hostnames: tuple[str, ...]
    matches: tuple[Obj, ...]  # Gateway API's own match objects
    filters: tuple[Obj, ...]
    backends: tuple[str, ...]  # "Service name:port"
    created: str  # the route's creationTimestamp (RFC 3339 sorts as text)

    def describe(self) -> str:
        """`HTTPRoute shop/api rule 1 (PathPrefix /api; URLRewrite prefix → /; to api:8080)`."""
        parts = [", ".join(_match_text(m) for m in self.matches) or "PathPrefix /"]
        parts += [_filter_text(f) for f in self.filters]
        parts.append("to " + ", ".join(self.backends) if self.backends else "to no backend")
        return "HTTPRoute %s rule %d (%s)" % (self.route, self.index, "; ".join(parts))


def _match_text(match: Obj) -> str:
    path = match.get("path") or {}
    out = "%s %s" % (path.get("type", "PathPrefix"), path.get("value", "/"))
    out += "".join(" %s %s=%s" % (what, h.get("name"), h.get("value"))
                   for what, key in (("header", "headers"), ("query", "queryParams")) for h in match.get(key) or [])
    return out + (" %s" % match["method"] if match.get("method") else "")


def _filter_text(item: Obj) -> str:
    kind = str(item.get("type"))
    if kind == "URLRewrite":
        rewrite = item.get("urlRewrite") or {}
        path = rewrite.get("path") or {}
        how = "prefix" if path.get("type") == "ReplacePrefixMatch" else "whole"
        said = ["path %s → %s" % (how, path.get("replacePrefixMatch", path.get("replaceFullPath")))] if path else []
        said += ["host → %s" % rewrite["hostname"]] if rewrite.get("hostname") else []
        return "URLRewrite " + ", ".join(said)
    if kind == "RequestRedirect":
        redirect = item.get("requestRedirect") or {}
        said = ["%s %s" % (k, redirect[k]) for k in ("scheme", "hostname", "port", "statusCode") if redirect.get(k) is not None]
        path = redirect.get("path") or {}
        said += ["path → %s" % path.get("replacePrefixMatch", path.get("replaceFullPath"))] if path else []
        return "RequestRedirect " + ", ".join(said)
    return kind


def route_rules(routes: Sequence[Obj]) -> list[RouteRule]:
    """Every rule of ROUTES (HTTPRoute objects, as the API server gives them)."""
    out = []
    for route in routes:
        meta = route.get("metadata") or {}
        spec = route.get("spec") or {}
        for i, rule in enumerate(spec.get("rules") or [{}]):
            backends = tuple("%s:%s" % (b.get("name"), b.get("port")) for b in rule.get("backendRefs") or [])
            out.append(RouteRule(route=key_of(route), index=i,
                                 hostnames=tuple(str(h) for h in spec.get("hostnames") or []),
                                 matches=tuple(rule.get("matches") or [{}]), filters=tuple(rule.get("filters") or []),
                                 backends=backends, created=str(meta.get("creationTimestamp") or "")))
    return out


def _host_rank(patterns: Sequence[str], host: str) -> int | None:
    """How specifically PATTERNS accept HOST (larger is more specific), or None when they do not."""
    if not patterns:
        return 0
    ranks = []
    for pattern in patterns:
        if pattern == host:
            ranks.append(10000)
        elif pattern.startswith("*.") and host.endswith(pattern[1:]) and len(host) > len(pattern) - 1:
            ranks.append(len(pattern))
    return max(ranks) if ranks else None


def _path_rank(path: Obj, request_path: str) -> tuple[int, int] | None:
    """(1 for Exact, its length) when PATH accepts REQUEST_PATH, else None."""
    kind, value = path.get("type", "PathPrefix"), str(path.get("value", "/"))
    if kind == "Exact":
        return (1, len(value)) if request_path == value else None
    if kind != "PathPrefix":
        return None  # RegularExpression: implementation-specific, not judged here
    prefix = value.rstrip("/")
    if request_path == prefix or request_path.startswith(prefix + "/") or not prefix:
        return (0, len(prefix))
    return None


def _cleaned(path: str) -> str:
    """PATH with dot segments resolved and repeated slashes merged, its trailing slash kept."""
    cleaned = posixpath.normpath("/" + path.lstrip("/"))
    cleaned = "/" + cleaned.lstrip("/")  # normpath keeps a leading '//'
    return cleaned + ("/" if path.endswith("/") and cleaned != "/" else "")


def choose(rules: Sequence[RouteRule], host: str, target: str, method: str = "GET",
           headers: Sequence[tuple[str, str]] = ()) -> RouteRule | None:
    """The rule that takes a request for HOST and TARGET (path and query, as sent), or None."""
    raw_path, _q, query = target.partition("?")
    path = _cleaned(raw_path)
    params = dict(p.partition("=")[::2] for p in query.split("&") if p)
    sent = {name.lower(): value for name, value in headers}
    best: tuple[Any, ...] | None = None
    chosen = None
    for order, rule in enumerate(rules):
        host_rank = _host_rank(rule.hostnames, host)
        if host_rank is None:
            continue
        for m_index, match in enumerate(rule.matches):
            path_rank = _path_rank(match.get("path") or {"type": "PathPrefix", "value": "/"}, path)
            if path_rank is None or (match.get("method") and match["method"] != method):
                continue
            wanted = match.get("headers") or []
            if any(h.get("type", "Exact") != "Exact" or sent.get(str(h.get("name")).lower()) != h.get("value") for h in wanted):
                continue
            queries = match.get("queryParams") or []
            if any(q.get("type", "Exact") != "Exact" or params.get(str(q.get("name"))) != q.get("value") for q in queries):
                continue
            # larger is better for the ranks; smaller for the tie-breaks (oldest, name, order)
            key = (host_rank, path_rank, bool(match.get("method")), len(wanted), len(queries),
                   _negated(rule.created), _negated(rule.route), -order, -m_index)
            if best is None or key > best:
                best, chosen = key, rule
    return chosen


def _negated(text: str) -> tuple[int, ...]:
    """A key that sorts TEXT in reverse (for 'the oldest wins' inside a 'larger wins' comparison)."""
    return tuple(-ord(c) for c in text) + (0,)
