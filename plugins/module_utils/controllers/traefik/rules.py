# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The router Traefik gives a request, from the routers its API lists (rule, priority, TLS, status).

Read from Traefik v3's pkg/muxer/http (matcher.go, mux.go) and pkg/server/router:
- a rule is matchers joined by `&&`, `||`, `!` and parentheses; the matchers a rehearsal meets: Host and HostRegexp
  (the request's host without its port, Host case-insensitively), Path (equal), PathPrefix (a plain string prefix),
  PathRegexp (Go's regexp on the path, found anywhere unless anchored), Header and HeaderRegexp, Method, Query and
  QueryRegexp; ClientIP matches (the rehearsal's one client);
- routers are tried by priority, highest first; a router without one has its rule's length; the first that
  matches takes the request (between equal priorities Traefik's order is not defined: the router taken says which
  it is tied with, unless they send to the same service through the same middlewares); a router with TLS serves
  only the HTTPS entry point, one without only HTTP; a router served on the `traefik` entry point alone (the API
  and dashboard's, dashboard@internal's PathPrefix(`/`) at the highest priority) never sees a request through the controller's Service;
- the path matched is the one the entry point sanitised (dot segments resolved, slashes merged).
A rule this reader cannot read matches nothing, and says so (`unread`)."""
from __future__ import annotations

import functools
import re
from dataclasses import replace
from typing import Callable, Mapping, Sequence
from urllib.parse import parse_qs, urlsplit

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import DataPlaneError, Router, clean_path, compile_regex

_TOKEN = re.compile(r"\s*(?:(&&|\|\||!|\(|\))|([A-Za-z]+)\(|(`[^`]*`|\"(?:[^\"\\]|\\.)*\")|(,))")

Matcher = Callable[["RequestView"], bool]
# The entry point Traefik serves its API and dashboard on (ports.traefik, not exposed by the chart's Service).
API_ENTRY_POINT = "traefik"


class RequestView:
    """What the matchers look at: scheme, host (no port, lowercase), sanitised path, query, method, headers."""

    def __init__(self, scheme: str, host: str, target: str, method: str, headers: Sequence[tuple[str, str]]) -> None:
        parts = urlsplit(target)
        self.path = clean_path(parts.path)
        self.query = parse_qs(parts.query, keep_blank_values=True)
        self.scheme, self.method = scheme, method.upper()
        self.host = host.split(":", 1)[0].lower().rstrip(".")
        self.headers: Mapping[str, str] = {k.lower(): v for k, v in headers}


class RuleError(DataPlaneError):
    """A rule this reader cannot read."""


def _unquote(text: str) -> str:
    return text[1:-1] if text.startswith("`") else re.sub(r"\\(.)", r"\1", text[1:-1])


def _matcher(name: str, args: list[str]) -> Matcher:
    def regex(pattern: str) -> re.Pattern[str]:
        try:
            return compile_regex(pattern)
        except re.error as exc:
            raise RuleError("%s(`%s`): %s" % (name, pattern, exc)) from None
    if name == "Host":
        hosts = [a.lower() for a in args]
        return lambda r: r.host in hosts
    if name == "HostRegexp":
        res = [regex(a) for a in args]
        return lambda r: any(x.search(r.host) for x in res)
    if name == "Path":
        return lambda r: r.path in args
    if name == "PathPrefix":
        return lambda r: any(r.path.startswith(a) for a in args)
    if name == "PathRegexp":
        res = [regex(a) for a in args]
        return lambda r: any(x.search(r.path) for x in res)
    if name == "Method":
        methods = [a.upper() for a in args]
        return lambda r: r.method in methods
    if name in ("Header", "HeaderRegexp") and len(args) == 2:
        key = args[0].lower()
        if name == "Header":
            return lambda r: r.headers.get(key) == args[1]
        value = regex(args[1])
        return lambda r: key in r.headers and bool(value.search(r.headers[key]))
    if name in ("Query", "QueryRegexp") and len(args) in (1, 2):
        key = args[0]
        if len(args) == 1:
            return lambda r: key in r.query
        if name == "Query":
            return lambda r: args[1] in r.query.get(key, [])
        value = regex(args[1])
        return lambda r: any(value.search(v) for v in r.query.get(key, []))
    if name == "ClientIP":
        return lambda r: True
    raise RuleError("matcher %s with %d argument(s)" % (name, len(args)))


def _all_of(a: Matcher, b: Matcher) -> Matcher:
    return lambda r: a(r) and b(r)


def _any_of(a: Matcher, b: Matcher) -> Matcher:
    return lambda r: a(r) or b(r)


@functools.lru_cache(maxsize=4096)  # a rehearsal asks for every router's rule once per differing request
def compile_rule(rule: str) -> Matcher:
    """RULE as a predicate over a RequestView; RuleError when it is not a rule this reader reads."""
    tokens: list[tuple[str, str]] = []
    i = 0
    while i < len(rule):
        if rule[i].isspace():
            i += 1
            continue
        m = _TOKEN.match(rule, i)
        if m is None:
            raise RuleError("unreadable at %d: %r" % (i, rule[i:i + 30]))
        op, func, text, comma = m.groups()
        tokens.append(("op", op) if op else ("func", func) if func else ("str", _unquote(text)) if text else ("comma", comma))
        i = m.end()
    pos = 0

    def peek() -> tuple[str, str]:
        return tokens[pos] if pos < len(tokens) else ("end", "")

    def take() -> tuple[str, str]:
        nonlocal pos
        token = peek()
        pos += 1
        return token

    def primary() -> Matcher:
        kind, value = take()
        if (kind, value) == ("op", "!"):
            inner = primary()
            return lambda r: not inner(r)
        if (kind, value) == ("op", "("):
            inner = either()
            if take() != ("op", ")"):
                raise RuleError("a `(` is never closed")
            return inner
        if kind == "func":
            args: list[str] = []
            while True:
                k, v = take()
                if k == "str":
                    args.append(v)
                elif k == "comma":
                    continue
                elif (k, v) == ("op", ")"):
                    return _matcher(value, args)
                else:
                    raise RuleError("%s( is never closed" % value)
        raise RuleError("expected a matcher, got %r" % (value or "the end"))

    def both() -> Matcher:
        left = primary()
        while peek() == ("op", "&&"):
            take()
            left = _all_of(left, primary())
        return left

    def either() -> Matcher:
        left = both()
        while peek() == ("op", "||"):
            take()
            left = _any_of(left, both())
        return left

    matcher = either()
    if pos != len(tokens):
        raise RuleError("unexpected %r" % tokens[pos][1])
    return matcher


def priority(router: Router) -> int:
    """Its priority, or its rule's length when it sets none (Traefik's default)."""
    return router.priority or len(router.rule)


def _alike(one: Router, other: Router) -> bool:
    """Whether two routers shape an answer alike: the same service, the same settings (middlewares among them)."""
    return bool(one.service) and (one.service, one.settings) == (other.service, other.settings)


def take(routers: Sequence[Router], scheme: str, host: str, target: str, method: str = "GET",
         headers: Sequence[tuple[str, str]] = ()) -> Router | None:
    """The router that takes the request: the enabled router of its entry point with the highest priority whose
    rule matches it; None when none does (or none could be read)."""
    view = RequestView(scheme, host, target, method, headers)
    candidates = [r for r in routers if not r.refused and r.tls == (scheme == "https")
                  and set(r.entry_points or ("",)) != {API_ENTRY_POINT}]
    matching = []
    for router in sorted(candidates, key=priority, reverse=True):
        try:
            if compile_rule(router.rule)(view):
                matching.append(router)
        except RuleError:
            continue
    if not matching:
        return None
    # Traefik sorts its routes with sort.Sort (mux.go, routes.Less): between equal priorities the order is not defined.
    # A router tied with one that sends to the same service through the same middlewares answers alike: no risk.
    tied = [r.name for r in matching[1:] if priority(r) == priority(matching[0]) and not _alike(r, matching[0])]
    return replace(matching[0], settings=matching[0].settings + tuple(("tied with", name) for name in tied))


def describe(router: Router) -> str:
    """One line: the router, its rule and priority, where it sends, what it was made from."""
    said = "router %s: %s (priority %d) to %s" % (router.name, router.rule, priority(router), router.service or "-")
    middlewares = [v for k, v in router.settings if k == "middleware"]
    tied = [v for k, v in router.settings if k == "tied with"]
    return (said + ("; middlewares %s" % ", ".join(middlewares) if middlewares else "")
            + ("; tied at that priority with %s: which one Traefik tries first is not defined" % ", ".join(tied)
               if tied else ""))
