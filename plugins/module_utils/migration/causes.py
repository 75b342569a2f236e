# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why a request's answer differs: the rule or annotation responsible, in words.

Each entry knows one ingress-nginx behaviour that other data planes do not share (the
Kubernetes blog's migration notes of February 2026, Traefik's ingress-nginx provider
documentation, nginx's own rules) and says when it applies: the kind of request, the field that
differs, the rule's annotations, whether the host is in regex mode. The first entry that applies
names the cause; a difference no entry explains is said to be unexplained, with its rule, never
guessed at.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import Router
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.dataplane import upstream_name
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import (
    DEFAULT_BACKEND, KINDS, NGINX, HostTLS, Request, Rule, is_regex)
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.routes import describe
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.route_precedence import Match


# What a table of fixes (migration/fixes) knows a cause by, where its words alone would have to be matched: the
# words may change, these do not. A cause no table needs to tell apart has none ("").
NO_ROUTER_FOR_HOST = "no-router-for-host"  # the target built no router that names the request's host
REFUSED_ROUTER = "refused-router"  # the target refused the router it made of the request's rule
TLS_REDIRECT_UNMATCHED = "tls-redirect-unmatched"  # ingress-nginx redirects a host in spec.tls, the target 404s
TLS_REDIRECT_DIFFERS = "tls-redirect-differs"  # ingress-nginx redirects a host in spec.tls, the target answers otherwise
TLS_OF_ANOTHER = "tls-of-another"  # another Ingress's spec.tls makes ingress-nginx redirect this Ingress's paths
TLS_LISTED_ONLY = "tls-listed-only"  # listed in spec.tls with no rule beside it: ingress-nginx does not redirect it
WILDCARD_ANY_DEPTH = "wildcard-any-depth"  # the target's wildcard matches a name two labels below it
ELEMENT_PREFIX = "element-prefix"  # the target matched a Prefix path as a string prefix
DEFAULT_BACKEND_NO_RULE = "default-backend-no-rule"  # the target answers from a defaultBackend where ingress-nginx 404s
DEFAULT_BACKEND_OTHER = "default-backend-other"  # the target answers from a defaultBackend, ingress-nginx from a rule's
DEFAULT_BACKEND_UNUSED = "default-backend-unused"  # ingress-nginx answers from a defaultBackend, the target not
APP_ROOT_QUERY = "app-root-query"  # ingress-nginx's app-root redirect drops the query, the target's keeps it


@dataclass(frozen=True)
class Cause:
    responsible: str  # the annotation (nginx.ingress.kubernetes.io/...), "host <h> regex mode", or the rule
    text: str
    kind: str = ""  # one of the kinds above, for a table of fixes to know it by


@dataclass(frozen=True)
class Context:
    request: Request
    rule: Rule | None  # None for a request the scenario added that no generated rule matches
    field: str  # status, location, backend, path, statuses, backends, received.<Header>, header.<name>
    target: str  # the target data plane's name
    regex_ingresses: tuple[str, ...]  # the Ingresses that put the request's host in regex mode
    baseline_served: bool = True  # a backend answered, or a status other than 404 (replay.Observation.served)
    target_served: bool = True
    target_serves_rule: bool = True  # the target served the rule's own path (its `path` request)
    tls: HostTLS = HostTLS()  # what spec.tls says of the request's host
    status_differs: bool = True  # the two answers' statuses differ (a redirect one side makes shows there)
    target_redirected: bool = False  # the target answered with a redirect (3xx)
    gateway_target: bool = False  # the target serves a Gateway's HTTPRoutes
    target_route: Match | None = None  # the rule of them that takes the request, as Gateway API chooses (routes.choose)
    # Which Service answered on each side (namespace/name, "" for none), and the Services the Ingresses' spec.defaultBackend
    # name, with their Ingress: an answer from one of those is the default backend's, whatever rule the request was for.
    baseline_backend: str = ""
    target_backend: str = ""
    default_backends: tuple[tuple[str, str], ...] = ()
    refused_routers: tuple[Router, ...] = ()  # the routers the target says it refused (its own account)
    routers: tuple[Router, ...] = ()  # every router the target says it built (its own account; empty: not read)
    # What took the request on each side in its own account (the baseline's location, the target's router; None: not
    # read or none took it), and both said in words ((data plane, what took it) each), for what no entry explains.
    baseline_record: Router | None = None
    target_record: Router | None = None
    records: tuple[tuple[str, str], ...] = ()


def _ann(ctx: Context, name: str) -> str:
    return (ctx.rule.annotations.get(name, "") if ctx.rule else "")


def _regex_rule(ctx: Context) -> bool:
    return bool(ctx.rule) and ctx.rule is not None and ctx.rule.path_type == "ImplementationSpecific" and (
        ctx.rule.regex or is_regex(ctx.rule.path))


def _routing(ctx: Context) -> bool:
    return ctx.field in ("status", "backend", "location", "path")


def _host_regex(ctx: Context) -> Cause | None:
    own = ctx.request.ingress in ctx.regex_ingresses
    if not ctx.regex_ingresses:
        return None
    if own:
        return None  # the rule's own annotation: the entries below name it
    return Cause("host %s regex mode" % ctx.request.host,
                 "use-regex (or rewrite-target) on %s turns every path of host %s into a case-insensitive regex "
                 "anchored only at its start on ingress-nginx, this Ingress's too; %s keeps this Ingress's own path "
                 "matching" % (", ".join(ctx.regex_ingresses), ctx.request.host, ctx.target))


def _case(ctx: Context) -> Cause | None:
    if ctx.request.kind != "case" or not _routing(ctx):
        return None
    if ctx.regex_ingresses:
        return _host_regex(ctx) or Cause("nginx.ingress.kubernetes.io/use-regex",
                                         "ingress-nginx matches regex paths case-insensitively (location ~*); %s "
                                         "matches them case-sensitively" % ctx.target)
    return None


def _prefix(ctx: Context) -> Cause | None:
    # a trailing slash added to a path without one is a longer path too (in regex mode an Exact path is ~* ^/path)
    longer = ("regex-prefix", "neighbour", "sub-path") + (("slash",) if ctx.rule and not ctx.rule.path.endswith("/") else ())
    if ctx.request.kind not in longer or not _routing(ctx):
        return None
    if ctx.regex_ingresses:
        host = _host_regex(ctx)
        if host:
            return host
        return Cause("nginx.ingress.kubernetes.io/use-regex",
                     "ingress-nginx anchors a regex path only at its start (location ~* ^%s), so it also serves "
                     "longer paths; %s matches the regex against the whole path"
                     % (ctx.rule.path if ctx.rule else "", ctx.target))
    return None


def _slash(ctx: Context) -> Cause | None:
    if ctx.request.kind != "slash" or not _routing(ctx) or not ctx.rule or not ctx.rule.path.endswith("/"):
        return None
    return Cause("rule %s" % ctx.request.rule,
                 "nginx answers %s without its trailing slash with a 301 to %s (a location that ends in '/'); "
                 "%s does not redirect" % (ctx.rule.path, ctx.rule.path, ctx.target))


def _normalise(ctx: Context) -> Cause | None:
    if ctx.request.kind not in ("dot-segment", "double-slash") or not _routing(ctx):
        return None
    what = "'..' and '.' segments" if ctx.request.kind == "dot-segment" else "repeated slashes"
    return Cause("rule %s" % ctx.request.rule,
                 "ingress-nginx matches the path with %s resolved but passes it on as the client sent it (the "
                 "backend sees %s and answers for itself); %s answered otherwise (Traefik's entry points sanitise "
                 "the path, sanitizePath, and pass the clean one)" % (what, ctx.request.target, ctx.target))


def _own_regex_mode(ctx: Context) -> str:
    """The annotation that makes the request's own rule a regex on ingress-nginx (rewrite-target or use-regex), where
    a routing field differs; "" otherwise."""
    if not _routing(ctx) or not ctx.rule or not _regex_rule(ctx) or ctx.request.ingress not in ctx.regex_ingresses:
        return ""
    return "rewrite-target" if _ann(ctx, "rewrite-target") else "use-regex"


def _regex_literal(ctx: Context) -> Cause | None:
    """A regex rule the target does not serve at all: it reads the path as a literal."""
    annotation = _own_regex_mode(ctx)
    if not annotation or not ctx.rule or not ctx.baseline_served or ctx.target_served or ctx.target_serves_rule:
        return None
    if ctx.gateway_target and ctx.target_route is None:
        return None  # no HTTPRoute of the target takes the request at all: _route_taken says so
    return Cause("nginx.ingress.kubernetes.io/" + annotation,
                 "ingress-nginx reads %s as a regex (%s); %s does not serve it: it reads the path literally "
                 "(no nginx annotation applies there)" % (ctx.rule.path, annotation, ctx.target))


def _regex_fell_to_default(ctx: Context) -> Cause | None:
    """A regex rule an Ingress provider reads as a literal path, so that the request falls to a default backend there
    (Traefik's own provider: PathPrefix unless told otherwise) while ingress-nginx answers from the rule's Service."""
    annotation = _own_regex_mode(ctx)
    defaults = dict(ctx.default_backends)
    if not annotation or not ctx.rule or ctx.gateway_target or not ctx.baseline_backend \
            or ctx.baseline_backend in defaults or ctx.target_backend not in defaults:
        return None
    return Cause("nginx.ingress.kubernetes.io/" + annotation,
                 "ingress-nginx reads %s as a regex (%s) and answers from Service %s; %s reads the path literally (no "
                 "nginx annotation applies there), so the request falls to the defaultBackend of %s (Service %s)"
                 % (ctx.rule.path, annotation, ctx.baseline_backend, ctx.target, defaults[ctx.target_backend],
                    ctx.target_backend))


def _element_prefix(ctx: Context) -> Cause | None:
    if ctx.request.kind != "neighbour" or not _routing(ctx) or not ctx.rule or ctx.rule.path_type != "Prefix":
        return None
    if ctx.baseline_served or not ctx.target_served:
        return None
    return Cause("rule %s" % ctx.request.rule,
                 "ingress-nginx matches the Prefix path %s by path element, as the Ingress spec says (%s is not "
                 "under it); %s matched it as a string prefix (Traefik's Ingress provider: PathPrefix, unless its "
                 "strictPrefixMatching option is on)" % (ctx.rule.path, ctx.request.target, ctx.target), ELEMENT_PREFIX)


def _annotation(name: str, text: str, kinds: tuple[str, ...] = (), fields: tuple[str, ...] = ()) -> Callable[[Context], Cause | None]:
    """An annotation's effect: applies when the rule carries it (and, if given, to these kinds of
    request and these fields; a field ending in '.' or '-' matches every field it begins)."""
    def rule(ctx: Context) -> Cause | None:
        value = _ann(ctx, name)
        if not value:
            return None
        if kinds and ctx.request.kind not in kinds:
            return None
        if fields and not any(ctx.field == f or (f[-1] in ".-" and ctx.field.startswith(f)) for f in fields):
            return None
        return Cause("nginx.ingress.kubernetes.io/" + name, text.format(value=value, target=ctx.target))
    return rule


def _on_plain_http(entry: Callable[[Context], Cause | None], with_tls: bool = False) -> Callable[[Context], Cause | None]:
    """ENTRY for a plain-HTTP request only: a redirect to HTTPS is all the ssl-redirect annotations do. WITH_TLS: and
    for a host spec.tls names (seen: ssl-redirect false on a host without TLS was named the cause of a body refused
    with 413)."""
    def rule(ctx: Context) -> Cause | None:
        if ctx.request.scheme != "http":
            return None
        if with_tls and not ((ctx.rule.tls if ctx.rule else False) or ctx.tls.certified or ctx.tls.listed):
            return None
        return entry(ctx)
    return rule


def _tls_redirect(ctx: Context) -> Cause | None:
    """A host with TLS: ingress-nginx redirects plain HTTP to HTTPS unless ssl-redirect says false."""
    if ctx.request.scheme != "http" or not _routing(ctx):
        return None
    # the request's own Ingress lists the host (its rule found, or a request the corpus varied off the rule)
    own = (ctx.rule.tls if ctx.rule else False) or ctx.request.ingress in ctx.tls.certified
    if not own and not ctx.tls.certified:
        return None
    if _ann(ctx, "ssl-redirect").lower() == "false":
        return None
    if not own:
        if not ctx.status_differs and ctx.field != "location":
            return None
        others = ", ".join(ctx.tls.certified)
        if not ctx.status_differs:
            return Cause("spec.tls of %s" % others,
                         "both redirect plain HTTP for %s to HTTPS, each to its own location: ingress-nginx because %s "
                         "gives the host's server its certificate (ssl-redirect), %s by its own rule"
                         % (ctx.request.host, others, ctx.target))
        return Cause("spec.tls of %s" % others,
                     "ingress-nginx redirects every plain HTTP request for %s to HTTPS (308, ssl-redirect being true by "
                     "default), this Ingress's paths too: %s gives the host's server its certificate (a rule and spec.tls "
                     "for it); %s redirects only the paths of an Ingress whose own spec.tls lists the host"
                     % (ctx.request.host, others, ctx.target), TLS_OF_ANOTHER)
    if not ctx.target_served:
        return Cause("spec.tls of %s" % ctx.request.ingress,
                     "ingress-nginx redirects every plain HTTP request for a host in spec.tls to HTTPS (308, ssl-redirect "
                     "being true by default), whether or not a rule matches its path; %s answers 404 where no route "
                     "matches" % ctx.target, TLS_REDIRECT_UNMATCHED)
    return Cause("spec.tls of %s" % ctx.request.ingress,
                 "ingress-nginx redirects plain HTTP for a host in spec.tls to HTTPS (308, ssl-redirect being true by "
                 "default); %s's answer differs in %s" % (ctx.target, ctx.field), TLS_REDIRECT_DIFFERS)


def _tls_listed_only(ctx: Context) -> Cause | None:
    """A host that a spec.tls lists, but that no Ingress with TLS has a rule for: ingress-nginx gives its
    server no certificate and serves it over plain HTTP; a translation may redirect it anyway."""
    if ctx.request.scheme != "http" or not _routing(ctx) or ctx.tls.certified or not ctx.tls.listed:
        return None
    if not ctx.status_differs or not ctx.target_redirected:
        return None
    listing = ", ".join(ctx.tls.listed)
    return Cause("spec.tls of %s" % listing,
                 "ingress-nginx serves %s over plain HTTP without a redirect: spec.tls of %s lists it, but no Ingress has "
                 "both a rule and spec.tls for it, so its server gets no certificate; %s redirects it (ingress2gateway "
                 "redirects every host a spec.tls lists to HTTPS)" % (ctx.request.host, listing, ctx.target), TLS_LISTED_ONLY)


def _refused_router(ctx: Context) -> Cause | None:
    """The target says it refused the router it made of this rule (its own account: status and error): its host and
    the rule's path are in the router's rule, or, for a default backend's request, the router has no rule at all."""
    if not _routing(ctx):
        return None
    host, path = ctx.request.served_as or ctx.request.host, ctx.rule.path if ctx.rule else ""
    mine = [r for r in ctx.refused_routers if (host in r.rule and path in r.rule)
            or (not r.rule.strip() and ctx.request.rule == DEFAULT_BACKEND)]
    if not mine:
        return None
    plural = "s" if len(mine) > 1 else ""
    rule = " rule %s" % mine[0].rule if mine[0].rule else ""
    errors = "; ".join(mine[0].errors) or "no error given"
    return Cause("%s router%s %s" % (ctx.target, plural, " and ".join(r.name for r in mine)),
                 "%s refused the router%s it made of this rule (its own account, /api/http/routers: %s%s): %s; the request "
                 "falls to its other routers" % (ctx.target, plural, mine[0].status, rule, errors), REFUSED_ROUTER)


def _names_host(rule: str, host: str) -> bool | None:
    """Whether a router's RULE routes HOST: True when it names it (Host: the name, or a wildcard one label above it;
    HostRegexp: a regex that matches it) or names no host at all, False when it names only other hosts; None when a
    HostRegexp is not a regex Python reads as Go's regexp does."""
    named = re.findall(r"""(?<!\w)Host\(\s*["`]([^"`]+)["`]""", rule)
    patterns = re.findall(r"""HostRegexp\(\s*["`]([^"`]+)["`]""", rule)
    if not named and not patterns:
        return True
    parent = host.split(".", 1)[1] if "." in host else ""
    if host in named or ("*." + parent) in named:
        return True
    try:
        return any(re.search(p.replace("\\\\", "\\"), host) for p in patterns)
    except re.error:
        return None


def _host_not_routed(ctx: Context) -> Cause | None:
    """The target answered 404 and none of the routers it says it built routes the request's host: the host was lost
    on the way (a translation that dropped a wildcard or an alias), read from the target's own account."""
    if not _routing(ctx) or ctx.target_served or not ctx.baseline_served:
        return None
    built = [r for r in ctx.routers if not r.refused and not r.name.endswith("@internal")]
    if not built:
        return None
    # (only the routers that take the request's scheme: a plain-HTTP router that redirects the host does not serve it
    # over HTTPS)
    routed = [_names_host(r.rule, ctx.request.host) for r in built if r.takes(ctx.request.scheme)]
    if any(x is None or x for x in routed):
        return None
    by_rule = " by rule %s of %s" % (ctx.request.rule, ctx.request.ingress) if ctx.rule else ""
    return Cause("%s's routers" % ctx.target,
                 # (no count of its routers: a fix that adds routes for another host must not make this another cause;
                 # no scheme: a host neither scheme routes is one behaviour)
                 "%s built no router for host %s (its own account, /api/http/routers: none of its routers that could take "
                 "the request names it), where ingress-nginx serves it%s" % (ctx.target, ctx.request.host, by_rule),
                 NO_ROUTER_FOR_HOST)


def _wildcard_depth(ctx: Context) -> Cause | None:
    """A name two labels below a wildcard host: ingress-nginx writes `*.example.test` as a server_name regex of one
    label (seen on kind: a [\\w-]+ label before the rest), as the Ingress spec says; Gateway API's wildcard hostnames
    match any number of labels (Traefik's HostRegexp: a [a-z0-9-.]+ run before the rest)."""
    if ctx.request.kind != "wildcard-depth" or not _routing(ctx):
        return None
    return Cause("host %s" % ctx.request.served_as,
                 "ingress-nginx's wildcard host %s matches one label only (its server_name is a regex of one label), so "
                 "%s is not that host there; %s %s" % (
                     ctx.request.served_as, ctx.request.host, ctx.target,
                     "matches it (a wildcard of any depth)" if ctx.target_served else "does not serve it either way"),
                 WILDCARD_ANY_DEPTH if ctx.target_served else "")


def _location_of_another_ingress(ctx: Context) -> Cause | None:
    """The baseline's own account says the location that took the request was rendered from another Ingress (a
    canary's, the first of two with one host and path): that Ingress's annotations shaped the answer, not those of the
    request's own."""
    record = ctx.baseline_record
    if record is None or not record.ingress or record.ingress == ctx.request.ingress or ctx.request.rule == DEFAULT_BACKEND:
        return None
    if _ann(ctx, "canary").lower() == "true":
        return None  # a canary never has a location of its own: it is an alternative backend of its main Ingress's
    if not record.service and not ctx.baseline_served:
        # the host's root location ingress-nginx adds, named after whichever of the host's Ingresses it took the server
        # from (between two created in one second, either): its default backend's 404 says no rule matched, not that
        # Ingress's annotations
        return None
    said = dict(ctx.records)
    return Cause("location of Ingress %s" % record.ingress,
                 "ingress-nginx took it by the location it rendered from Ingress %s, not from %s, so the annotations of %s "
                 "shaped its answer (%s); %s took it by %s"
                 % (record.ingress, ctx.request.ingress, record.ingress, next(iter(said.values()), "its location"),
                    ctx.target, said.get(ctx.target, "its own route")))


def _credentials_passed(ctx: Context) -> Cause | None:
    """ingress-nginx empties the Authorization header where its basic auth checked it; a target may pass it on."""
    if ctx.field != "received.Authorization":
        return None
    record = ctx.baseline_record
    emptied = record is not None and ("proxy_set_header Authorization", "") in record.settings
    if not emptied and _ann(ctx, "auth-type").lower() != "basic":
        return None
    said = 'proxy_set_header Authorization "" in the location that took it' if emptied else "auth-type basic"
    return Cause("nginx.ingress.kubernetes.io/auth-type",
                 "ingress-nginx checks the credentials and does not pass them on (%s); %s passes the Authorization "
                 "header to the backend" % (said, ctx.target))


def _default_backend(ctx: Context) -> Cause | None:
    """One side answered from a Service an Ingress's spec.defaultBackend names, the other not: the default backend is
    used for other requests on one side (read from which Service answered, not from the rule)."""
    if not _routing(ctx):
        return None
    defaults = dict(ctx.default_backends)
    base, target = defaults.get(ctx.baseline_backend), defaults.get(ctx.target_backend)
    if ctx.baseline_backend == ctx.target_backend or not (base or target):
        return None
    if target:
        return Cause("spec.defaultBackend of %s" % target,
                     "%s answers from the defaultBackend of %s (Service %s), %s; ingress-nginx uses an Ingress's "
                     "defaultBackend for the hosts and paths no rule serves on its own servers only (a rule-less "
                     "Ingress's for hosts no rule names)" % (ctx.target, target, ctx.target_backend,
                                                             "where ingress-nginx answers from Service %s"
                                                             % ctx.baseline_backend if ctx.baseline_backend
                                                             else "where ingress-nginx serves no rule"),
                     DEFAULT_BACKEND_OTHER if ctx.baseline_backend else DEFAULT_BACKEND_NO_RULE)
    return Cause("spec.defaultBackend of %s" % base,
                 "ingress-nginx answers from the defaultBackend of %s (Service %s); %s %s" % (
                     base, ctx.baseline_backend, ctx.target, "answers from Service %s" % ctx.target_backend
                     if ctx.target_backend else "does not use it here"), DEFAULT_BACKEND_UNUSED)


def _snippet(ctx: Context) -> Cause | None:
    value = _ann(ctx, "configuration-snippet")
    if not value:
        return None
    what = ("does not serve this Ingress at all" if ctx.baseline_served and not ctx.target_served
            else "serves it without the snippet's effect")
    return Cause("nginx.ingress.kubernetes.io/configuration-snippet",
                 "configuration-snippet is nginx configuration (%s), which %s cannot run: it %s"
                 % (" ".join(value.split())[:80], ctx.target, what))


def _precedence(ctx: Context) -> Cause | None:
    """Both answered, from different Services: the two data planes rank overlapping rules otherwise."""
    if ctx.field != "backend" or not ctx.baseline_served or not ctx.target_served or not ctx.rule:
        return None
    if ctx.rule.path_type == "Exact":
        return Cause("rule %s" % ctx.request.rule,
                     "ingress-nginx serves an Exact path before any Prefix path of the host (location = %s); %s gave "
                     "the request to another Ingress's rule (Traefik ranks routers by the length of their rule, its "
                     "default priority, so a longer Prefix rule outranks a shorter Exact one)" % (ctx.rule.path, ctx.target))
    return Cause("rule %s" % ctx.request.rule,
                 "ingress-nginx and %s rank the host's overlapping rules differently (ingress-nginx: Exact, then the "
                 "longest path; Traefik: the longest router rule)" % ctx.target)


def _upstream_of(upstream: str, port: str, service: str) -> bool:
    """Whether UPSTREAM (`<ns>-<svc>-<port>`, ingress-nginx's upstreamName) of PORT (the Ingress's number or name) is
    SERVICE's (namespace/name)."""
    ns, _slash, name = service.partition("/")
    return upstream == upstream_name(ns, name, port)


def _canary_chosen(ctx: Context) -> Cause | None:
    """ingress-nginx's own account says the location that took the request has a canary (an alternative backend of its
    Service), and ingress-nginx answered from the canary's Service: its balancer chose the canary by the request's
    header, else its cookie, else the weight. Named after the annotation that decided."""
    if ctx.field not in ("backend", "backends") or ctx.baseline_record is None or not ctx.baseline_backend:
        return None
    for canary in ctx.baseline_record.canaries:
        if not _upstream_of(canary.backend, canary.port, ctx.baseline_backend):
            continue
        headers = {k.lower(): v for k, v in ctx.request.headers}
        cookies = {c.split("=", 1)[0].strip() for c in headers.get("cookie", "").split(";") if "=" in c}
        step = ("canary-by-header" if canary.header and canary.header.lower() in headers
                else "canary-by-cookie" if canary.cookie and canary.cookie in cookies else "canary-weight")
        return Cause(NGINX + step, "ingress-nginx answers from the canary %s of the location that takes it (its own account: "
                                   "%s), chosen by %s; %s answers from %s" % (
                                       ctx.baseline_backend, canary.said, step, ctx.target, ctx.target_backend or "no Service"))
    return None


def _app_root_query(ctx: Context) -> Cause | None:
    """ingress-nginx's app-root is `if ($uri = /) { return 302 $scheme://$http_host<app-root>; }` (nginx.tmpl): the
    Location has no query, whatever the request's; a redirect elsewhere keeps it."""
    root = _ann(ctx, "app-root")
    if not root or ctx.field != "location" or ctx.request.kind != "query" or not ctx.request.target.startswith("/?"):
        return None
    return Cause("nginx.ingress.kubernetes.io/app-root",
                 "app-root %s: ingress-nginx redirects / to %s without the request's query (return 302 "
                 "$scheme://$http_host%s); %s's redirect keeps it" % (root, root, root, ctx.target), APP_ROOT_QUERY)


def _route_taken(ctx: Context) -> Cause | None:
    """A Gateway target answers otherwise: name the rule of its HTTPRoutes that takes the request (or that none does)."""
    if not ctx.gateway_target or not _routing(ctx):
        return None
    nginx = ("ingress-nginx serves it by rule %s of %s" % (ctx.request.rule, ctx.request.ingress) if ctx.baseline_served
             else "ingress-nginx serves it by no rule")
    if ctx.target_route is None:
        return Cause("%s's HTTPRoutes" % ctx.target,
                     "no rule of %s's HTTPRoutes accepts %s %s%s (Gateway API answers 404); %s"
                     % (ctx.target, ctx.request.method, ctx.request.host, ctx.request.target, nginx))
    return Cause("HTTPRoute %s rule %d" % (ctx.target_route.route, ctx.target_route.rule),
                 "%s takes it by %s; %s" % (ctx.target, describe(ctx.target_route), nginx))


def _rule_not_served(ctx: Context) -> Cause | None:
    """Nothing else explains it, and the target does not serve the rule's own path: it has no route for it."""
    if not _routing(ctx) or ctx.target_serves_rule or not ctx.baseline_served or ctx.target_served:
        return None
    return Cause("rule %s of %s" % (ctx.request.rule, ctx.request.ingress),
                 "%s has no route for this rule (its own path %s gets no backend there either, where ingress-nginx serves "
                 "it): it does not take the Ingress (its class, or its IngressClass's controller, is not one it reads) or "
                 "could not translate the rule" % (ctx.target, ctx.rule.path if ctx.rule else ctx.request.rule))


def _received_header(ctx: Context) -> Cause | None:
    if not ctx.field.startswith("received."):
        return None
    header = ctx.field.split(".", 1)[1].lower()
    own = {"x-scheme": "ingress-nginx", "x-forwarded-scheme": "ingress-nginx", "x-request-id": "ingress-nginx",
           "x-original-forwarded-for": "ingress-nginx", "x-forwarded-server": "Traefik"}
    if header == "accept-encoding":
        return Cause("data plane", "Traefik's proxy (Go's HTTP client) asks the backend for gzip when the client "
                                   "sent no Accept-Encoding; ingress-nginx passes the client's headers as they are")
    if header in own:
        return Cause("data plane", "%s sets %s on every proxied request (its own configuration, no rule's); "
                                   "the other data plane does not" % (own[header], ctx.field.split(".", 1)[1]))
    return None


# In order: the first that applies names the cause.
CAUSES: tuple[Callable[[Context], Cause | None], ...] = (
    _refused_router,
    _tls_redirect,
    _tls_listed_only,
    _wildcard_depth,
    _regex_fell_to_default,
    _default_backend,
    _host_not_routed,
    _location_of_another_ingress,
    _credentials_passed,
    _regex_literal,
    _normalise,
    _annotation("auth-type", "auth-type {value}: ingress-nginx asks for credentials (401 without them or with a wrong "
                             "password, from the Secret of auth-secret); {target} answers otherwise",
                kinds=("auth-missing", "auth-wrong")),
    _annotation("rewrite-target", "rewrite-target {value} rewrites the path ingress-nginx passes on (with the regex's "
                                  "capture groups); {target} passes another path", fields=("path", "status", "backend")),
    _annotation("app-root", "app-root {value} redirects / to {value} on ingress-nginx; {target} answers otherwise",
                kinds=("app-root",)),
    _annotation("permanent-redirect", "permanent-redirect {value}: ingress-nginx answers with a redirect there; "
                                      "{target} answers otherwise", fields=("status", "location", "backend", "path")),
    _annotation("temporal-redirect", "temporal-redirect {value}: ingress-nginx answers with a redirect there; "
                                     "{target} answers otherwise", fields=("status", "location", "backend", "path")),
    _on_plain_http(_annotation("force-ssl-redirect", "force-ssl-redirect: ingress-nginx redirects HTTP to HTTPS (308); "
                                                     "{target}'s answer differs", fields=("status", "location", "backend", "path"))),
    _on_plain_http(_annotation("ssl-redirect", "ssl-redirect {value}: ingress-nginx's HTTP to HTTPS redirect for a host with "
                                               "TLS; {target} answers otherwise", fields=("status", "location", "backend", "path")),
                   with_tls=True),
    _annotation("enable-cors", "enable-cors: ingress-nginx answers the preflight itself (204) and adds its CORS "
                               "headers to every answer, Origin or not; {target} answers otherwise",
                kinds=("preflight", "cors")),
    _annotation("enable-cors", "enable-cors: the CORS response headers differ: ingress-nginx sends those its cors-allow-* "
                               "annotations set, and only where the request's Origin is allowed; {target} sends its own",
                fields=("header.access-control-",)),
    _annotation("proxy-body-size", "proxy-body-size {value}: ingress-nginx refuses a larger body with 413; {target} "
                                   "answers otherwise", kinds=("body-size",)),
    _annotation("limit-rps", "limit-rps {value}: over the rate ingress-nginx answers 503 (limit-req-status-code); "
                             "{target} answers otherwise (Traefik's rate limit answers 429)", kinds=("burst",)),
    _annotation("canary-by-header", "canary-by-header {value}: ingress-nginx routes on the header (always/never or "
                                    "its value); {target} routes otherwise", kinds=("canary-header",)),
    _annotation("canary-by-cookie", "canary-by-cookie {value}: ingress-nginx routes on the cookie (always: the "
                                    "canary, never: the main backend); {target} routes otherwise", kinds=("canary-cookie",)),
    _annotation("canary-weight", "canary-weight {value}: the split between the canary and the main backend differs",
                kinds=("canary-weight",)),
    _annotation("proxy-read-timeout", "proxy-read-timeout {value} s: ingress-nginx gives up on a slower backend "
                                      "(504); {target} waits otherwise", kinds=("slow",)),
    _annotation("default-backend", "default-backend {value}: when the rule's Service has no ready endpoint "
                                   "ingress-nginx answers from that Service; {target} answers otherwise",
                fields=("status", "backend", "path")),
    _snippet,
    _annotation("server-snippet", "server-snippet is nginx configuration; {target} runs none of it"),
    _annotation("whitelist-source-range", "whitelist-source-range {value}: ingress-nginx refuses other clients "
                                          "(403); {target} answers otherwise", fields=("status", "backend")),
    _annotation("denylist-source-range", "denylist-source-range {value}: ingress-nginx refuses these clients (403); "
                                         "{target} answers otherwise", fields=("status", "backend")),
    _annotation("custom-headers", "custom-headers {value}: the response headers ingress-nginx adds; {target} "
                                  "adds others", fields=("header.",)),
    _annotation("x-forwarded-prefix", "x-forwarded-prefix {value}: the header ingress-nginx sends; {target} "
                                      "sends another", fields=("received.",)),
    _annotation("upstream-vhost", "upstream-vhost {value}: the Host ingress-nginx sends; {target} sends another",
                fields=("received.Host",)),
    _case,
    _element_prefix,
    _prefix,
    _slash,
    _canary_chosen,
    _app_root_query,
    _route_taken,
    _precedence,
    _rule_not_served,
    _received_header,
)


def unexplained(cause: Cause) -> bool:
    return cause.text.startswith("unexplained:")


def explain(ctx: Context) -> Cause:
    """The first cause that applies, or an honest 'unexplained' naming the rule and the request."""
    for cause in CAUSES:
        found = cause(ctx)
        if found:
            return found
    where = "rule %s of %s" % (ctx.request.rule, ctx.request.ingress)
    annotations = sorted(ctx.rule.annotations) if ctx.rule else []
    took = "; ".join("%s took it by %s" % (plane, said) for plane, said in ctx.records)
    return Cause(where, "unexplained: %s (%s)%s differs in %s; no entry of the rehearsal's table of causes applies%s"
                 % (KINDS.get(ctx.request.kind, ctx.request.kind), ctx.request.target,
                    (" under " + ", ".join(annotations)) if annotations else "", ctx.field, ("; " + took) if took else ""))
