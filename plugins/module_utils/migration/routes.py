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
from typing import Any, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import covers
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.route_precedence import Match, matches_of, winner

Obj = dict[str, Any]


def route_matches(routes: Sequence[Obj]) -> list[Match]:
    """Every match of every rule of ROUTES (HTTPRoute objects, as the API server gives them)."""
    return [m for route in routes for m in matches_of(route)]


def describe(taken: Match) -> str:
    """`HTTPRoute shop/api rule 1 (PathPrefix /api; URLRewrite path prefix → /; to api:8080)`."""
    parts = [_match_text(taken.match or {})] + [_filter_text(f) for f in taken.filters]
    parts.append("to " + taken.backends if taken.backends else "to no backend")
    return "HTTPRoute %s rule %d (%s)" % (taken.route, taken.rule, "; ".join(parts))


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


def _host_rank(patterns: Sequence[str], host: str) -> int | None:
    """How specifically PATTERNS accept HOST (larger is more specific), or None when they do not."""
    if not patterns:
        return 0
    ranks = [10000 if pattern == host else len(pattern) for pattern in patterns if pattern == host or covers(pattern, host)]
    return max(ranks) if ranks else None


def _path_rank(path: Obj, request_path: str) -> tuple[int, int] | None:
    """(1 for Exact, its length) when PATH accepts REQUEST_PATH, else None."""
    kind, value = path.get("type", "PathPrefix"), str(path.get("value", "/"))
    if kind == "Exact":
        return (1, len(value)) if request_path == value else None
    prefix = value.rstrip("/")  # matches_of leaves RegularExpression paths out
    if request_path == prefix or request_path.startswith(prefix + "/") or not prefix:
        return (0, len(prefix))
    return None


def _cleaned(path: str) -> str:
    """PATH with dot segments resolved and repeated slashes merged, its trailing slash kept."""
    cleaned = posixpath.normpath("/" + path.lstrip("/"))
    cleaned = "/" + cleaned.lstrip("/")  # normpath keeps a leading '//'
    return cleaned + ("/" if path.endswith("/") and cleaned != "/" else "")


def _rank(match: Match, host: str, path: str, method: str, sent: dict[str, str],
          params: dict[str, str]) -> tuple[Any, ...] | None:
    """How well MATCH takes the request (larger is better, by Gateway API's precedence), or None."""
    host_rank = _host_rank(match.hostnames, host)
    path_rank = _path_rank(match.match.get("path") or {"type": "PathPrefix", "value": "/"}, path)
    if host_rank is None or path_rank is None or (match.method and match.method != method):
        return None
    for key, given in (("headers", sent), ("queryParams", params)):
        for wanted in match.match.get(key) or []:
            name = str(wanted.get("name"))
            if wanted.get("type", "Exact") != "Exact" or given.get(name.lower() if key == "headers" else name) != wanted.get("value"):
                return None
    return (host_rank, path_rank, bool(match.method), match.headers, match.queries)


def choose(matches: Sequence[Match], host: str, target: str, method: str = "GET",
           headers: Sequence[tuple[str, str]] = ()) -> Match | None:
    """The match that takes a request for HOST and TARGET (path and query, as sent), or None."""
    raw_path, _q, query = target.partition("?")
    path = _cleaned(raw_path)
    params = dict(p.partition("=")[::2] for p in query.split("&") if p)
    sent = {name.lower(): value for name, value in headers}
    best: tuple[Any, ...] | None = None
    chosen: Match | None = None
    for match in matches:  # in route, rule and match order: an equal rank within one route keeps the first
        rank = _rank(match, host, path, method, sent, params)
        if rank is None or (best is not None and rank < best):
            continue
        if chosen is None or best is None or rank > best:
            best, chosen = rank, match
        elif match.route != chosen.route:
            chosen = winner(chosen, match)[0]
    return chosen
