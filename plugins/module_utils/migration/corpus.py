# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The request corpus, generated from the Ingresses themselves: a new Ingress gets its requests
without anyone writing them.

For every rule (host x path x pathType) the requests that tell data planes apart: the path, a
sub-path, the trailing slash toggled, a case variant, a segment-prefix neighbour (/api against
/apix), dot segments and a double slash (ingress-nginx normalises both before matching), a query
string, and for regex paths a string that matches only as a prefix. For the annotations users rely
on, the requests that show their effect (a preflight, a body over the limit, a burst over the rate,
a slow answer, the canary header, the path no rule serves). Pure functions over Ingress objects as
the API returns them.
"""
from __future__ import annotations

import base64
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of

import re._parser as _sre  # the regex parser (Python 3.11+, which the collection requires)

Obj = dict[str, Any]

NGINX = "nginx.ingress.kubernetes.io/"
# Where a host-less rule is sent: any Host matches such a rule.
ANY_HOST = "any-host.kindlab.test"
# A host no rule names, and a path no rule serves: where a default backend answers.
UNKNOWN_HOST = "unknown-host.kindlab.test"
UNMATCHED = "/kindlab-unmatched"
# Marks of the requests the generator makes up, so that an answer can be traced to them.
SUB = "kindlab-sub"
ORIGIN = "https://origin.kindlab.test"
MAX_BODY = 4 * 1024 * 1024  # a body-size request is skipped above this (it would only be slow)
MAX_BURST = 200

# What each request kind exercises (the report's words).
KINDS = {
    "path": "the path itself",
    "sub-path": "a sub-path",
    "slash": "the trailing slash toggled",
    "case": "a case variant",
    "neighbour": "a segment-prefix neighbour",
    "dot-segment": "dot segments before the path",
    "double-slash": "a double slash",
    "query": "a query string",
    "regex-prefix": "a string the regex matches only as a prefix",
    "regex-excluded": "a path the regex's negative lookahead refuses",
    "rewrite": "a path through the rewrite's capture groups",
    "app-root": "the root of an app-root host",
    "preflight": "a CORS preflight",
    "cors": "a request with an Origin",
    "body-size": "a body over proxy-body-size",
    "canary-header": "the canary header",
    "canary-weight": "repeated requests under canary-weight",
    "slow": "an answer slower than proxy-read-timeout",
    "burst": "a burst over limit-rps",
    "tls": "the path over HTTPS (SNI: the host)",
    "wildcard-depth": "a name two labels below a wildcard host",
    "wildcard-parent": "the parent name of a wildcard host (which it must not match)",
    "alias": "a server-alias host",
    "canary-cookie": "the canary cookie",
    "default-host": "a host no rule names (the default backend's)",
    "default-path": "a path no rule of the host serves (the default backend's)",
    "auth-missing": "the path without credentials (auth-type: basic)",
    "auth-wrong": "the path with a wrong password (auth-type: basic)",
    "scenario": "a request the scenario adds",
}
# The rule label of a default backend's requests (Request.rule).
DEFAULT_BACKEND = "(default backend)"


class CorpusError(OptionError):
    """A request the scenario adds is malformed or names no rule; the message names the field."""


@dataclass(frozen=True)
class Request:
    id: str  # unique, stable: "<ns>/<ingress> <host><rule path> [<kind>]" (+ the target when needed)
    ingress: str  # namespace/name of the Ingress whose rule it exercises
    host: str
    target: str  # the request target exactly as sent: path and query, never normalised
    kind: str  # one of KINDS
    rule: str  # "<path> (<pathType>)" of the rule it exercises
    method: str = "GET"
    headers: tuple[tuple[str, str], ...] = ()
    body_size: int = 0
    annotation: str = ""  # the annotation whose effect it shows (without the nginx prefix)
    repeat: int = 1  # >1: sent that many times back to back, answered by the distinct statuses
    scheme: str = "http"  # https: TLS with the host as SNI, to the data plane's HTTPS port
    served_as: str = ""  # the host as the rule names it, where Host differs (a wildcard's subdomain, a server-alias)

    def as_dict(self) -> Obj:
        out = asdict(self)
        out["headers"] = dict(self.headers)
        return out


@dataclass
class Rule:
    """One path of one Ingress rule, with what the corpus needs to know about it."""
    ingress: str
    host: str
    path: str
    path_type: str
    regex: bool  # matched as a regex on ingress-nginx (use-regex or rewrite-target on the host)
    annotations: dict[str, str] = field(default_factory=dict)
    tls: bool = False  # its host is in the Ingress's spec.tls

    @property
    def label(self) -> str:
        """How a request names the rule it exercises (Request.rule)."""
        return "%s (%s)" % (self.path, self.path_type)


def nginx_annotations(ingress: Obj) -> dict[str, str]:
    """The ingress-nginx annotations of an Ingress, without their prefix."""
    raw = (ingress.get("metadata") or {}).get("annotations") or {}
    return {k[len(NGINX):]: str(v) for k, v in raw.items() if k.startswith(NGINX)}


def _turns_regex_on(annotations: dict[str, str]) -> bool:
    return annotations.get("use-regex", "").lower() == "true" or bool(annotations.get("rewrite-target"))


def regex_hosts(ingresses: Iterable[Obj]) -> dict[str, list[str]]:
    """Host -> the Ingresses that turn regex matching on for every path of that host on ingress-nginx
    (use-regex, or rewrite-target, which implies it): the host-wide effect the translations lose."""
    out: dict[str, list[str]] = {}
    for ing in ingresses:
        if _turns_regex_on(nginx_annotations(ing)):
            for rule in (ing.get("spec") or {}).get("rules") or []:
                out.setdefault(rule.get("host") or ANY_HOST, []).append(key_of(ing))
    return out


@dataclass(frozen=True)
class HostTLS:
    """What spec.tls says of one host, as ingress-nginx reads it. Its server gets a certificate only from an
    Ingress with a rule for the host that lists it in its own spec.tls (controller.go, createServers:
    extractTLSSecretName per rule host), and then redirects every plain HTTP request for the host to HTTPS
    (ssl-redirect), whichever Ingress's path it matches. A host only listed gets no certificate, no redirect."""
    certified: tuple[str, ...] = ()  # the Ingresses that give the host's server its certificate
    listed: tuple[str, ...] = ()  # the Ingresses whose spec.tls lists the host


def tls_hosts(ingresses: Iterable[Obj]) -> dict[str, HostTLS]:
    """Host -> what the Ingresses' spec.tls say of it (see HostTLS)."""
    certified: dict[str, list[str]] = {}
    listed: dict[str, list[str]] = {}
    for ing in ingresses:
        hosts = {h for t in (ing.get("spec") or {}).get("tls") or [] for h in t.get("hosts") or []}
        for host in sorted(hosts):
            listed.setdefault(host, []).append(key_of(ing))
        for host in sorted({r.get("host") for r in (ing.get("spec") or {}).get("rules") or []} & hosts):
            certified.setdefault(str(host), []).append(key_of(ing))
    return {h: HostTLS(tuple(certified.get(h, ())), tuple(listed[h])) for h in listed}


def rules(ingresses: list[Obj]) -> list[Rule]:
    """Every (host, path) of every Ingress, in order."""
    regex_on = regex_hosts(ingresses)
    out = []
    for ing in ingresses:
        annotations = nginx_annotations(ing)
        tls_hosts = {h for t in (ing.get("spec") or {}).get("tls") or [] for h in t.get("hosts") or []}
        for rule in (ing.get("spec") or {}).get("rules") or []:
            host = rule.get("host") or ANY_HOST
            for p in (rule.get("http") or {}).get("paths") or []:
                out.append(Rule(ingress=key_of(ing), host=host, path=p.get("path") or "/",
                                path_type=p.get("pathType") or "ImplementationSpecific",
                                regex=host in regex_on, annotations=annotations, tls=host in tls_hosts))
    return out


# --- a string a regex matches --------------------------------------------------------------------

def _sample(parsed: Any, groups: dict[int, str], excluded: list[bool] | None = None) -> str:
    """A string PARSED matches; with EXCLUDED ([False]), the first negative lookahead's own text is written where it
    stands instead (a string the lookahead exists to refuse), and EXCLUDED becomes [True]."""
    out = []
    for op, arg in parsed:
        name = str(op)
        if name == "ASSERT_NOT" and excluded is not None and not excluded[0]:
            excluded[0] = True
            out.append(_sample(arg[1], groups))
        elif name == "LITERAL":
            out.append(chr(arg))
        elif name == "NOT_LITERAL":
            out.append("a" if chr(arg) != "a" else "b")
        elif name == "ANY":
            out.append("a")
        elif name == "IN":
            out.append(_in_sample(arg))
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            low, high, sub = arg
            body = _sample(sub, groups, excluded)
            # ".*" and friends: one short segment, so that a rewrite's capture shows what it carried
            count = low if low > 0 else (1 if high != 0 else 0)
            if all(str(o) == "ANY" for o, _arg in sub) and low == 0:
                body = "seg"
            out.append(body * count)
        elif name == "SUBPATTERN":
            group, _add, _del, sub = arg
            text = _sample(sub, groups, excluded)
            if group:
                groups[group] = text
            out.append(text)
        elif name == "BRANCH":
            _unused, branches = arg
            out.append(_sample(branches[0], groups))
        elif name == "GROUPREF":
            out.append(groups.get(arg, ""))
        elif name == "CATEGORY":
            out.append(_category_sample(str(arg)))
        # AT (anchors), ASSERT, ASSERT_NOT: nothing to write
    return "".join(out)


def _category_sample(category: str) -> str:
    if "DIGIT" in category and "NOT" not in category:
        return "1"
    if "SPACE" in category and "NOT" not in category:
        return "-"
    return "a"


def _in_sample(items: Any) -> str:
    negate = any(str(op) == "NEGATE" for op, _arg in items)
    if negate:
        banned = {chr(a) for op, a in items if str(op) == "LITERAL"}
        return next(c for c in "az1-" if c not in banned)
    for op, arg in items:
        name = str(op)
        if name == "LITERAL":
            return chr(arg)
        if name == "RANGE":
            return chr(arg[0])
        if name == "CATEGORY":
            return _category_sample(str(arg))
    return "a"


def regex_sample(pattern: str) -> str:
    """A path the regex matches in full (ingress-nginx anchors it at the start, case-insensitively),
    or the pattern with its metacharacters dropped when no sample is found."""
    try:
        sample = _sample(_sre.parse(pattern), {})
        if re.fullmatch(pattern, sample, re.IGNORECASE):
            return sample if sample.startswith("/") else "/" + sample
    except (re.error, StopIteration, TypeError, ValueError, RecursionError):
        pass
    return re.sub(r"[\\^$.|?*+()\[\]{}]", "", pattern) or "/"


def regex_excluded(pattern: str) -> str | None:
    """A path the regex's first negative lookahead refuses (`/(?!internal/).*` → /internal/seg), or None when it has
    none: what ingress-nginx (PCRE) keeps from the rule and an engine that cannot read the lookahead may not."""
    excluded = [False]
    try:
        sample = _sample(_sre.parse(pattern), {}, excluded)
    except (re.error, StopIteration, TypeError, ValueError, RecursionError):
        return None
    if not excluded[0]:
        return None
    return sample if sample.startswith("/") else "/" + sample


def is_regex(path: str) -> bool:
    return bool(re.search(r"[\\^$.|?*+()\[\]{}]", path))


# --- the requests ---------------------------------------------------------------------------------

def nginx_size(value: str) -> int | None:
    """nginx's size syntax (client_max_body_size): bytes, k, m, g; 0 means unlimited (None)."""
    match = re.fullmatch(r"\s*(\d+)\s*([kKmMgG]?)\s*", value or "")
    if not match:
        return None
    number = int(match.group(1)) * {"": 1, "k": 1024, "m": 1024 ** 2, "g": 1024 ** 3}[match.group(2).lower()]
    return number or None


def _int(value: str) -> int | None:
    return int(value) if re.fullmatch(r"\s*\d+\s*", value or "") else None


def _toggle_slash(path: str) -> str | None:
    if path == "/":
        return None
    return path[:-1] if path.endswith("/") else path + "/"


def _path_requests(rule: Rule) -> list[tuple[str, str]]:
    """(kind, target) for one path."""
    regex = rule.path_type == "ImplementationSpecific" and (rule.regex or is_regex(rule.path))
    base = regex_sample(rule.path) if regex else rule.path
    trimmed = base.rstrip("/")
    out = [("path", base)]
    out.append(("sub-path", trimmed + "/" + SUB))
    toggled = _toggle_slash(base)
    if toggled:
        out.append(("slash", toggled))
    if base.upper() != base:
        out.append(("case", base.upper()))
    if trimmed:
        out.append(("neighbour", trimmed + "x"))
    out.append(("dot-segment", "/" + SUB + "/.." + base))
    out.append(("double-slash", "/" + base))
    out.append(("query", base + ("&" if "?" in base else "?") + "kindlab=1"))
    if regex:
        out.append(("regex-prefix", trimmed + "-" + SUB))
        refused = regex_excluded(rule.path)
        if refused:
            out.append(("regex-excluded", refused))
    return out


def _annotation_requests(rule: Rule) -> list[Obj]:
    """The requests that show the effect of the rule's annotations (keyword arguments of Request)."""
    a = rule.annotations
    base = regex_sample(rule.path) if rule.regex or is_regex(rule.path) else rule.path
    out: list[Obj] = []
    if rule.tls:
        out.append({"kind": "tls", "target": base, "scheme": "https"})
    if a.get("rewrite-target"):
        out.append({"kind": "rewrite", "target": base.rstrip("/") + "/deep/er?x=1", "annotation": "rewrite-target"})
    if a.get("app-root"):
        out.append({"kind": "app-root", "target": "/", "annotation": "app-root"})
    if a.get("enable-cors", "").lower() == "true":
        out.append({"kind": "preflight", "target": base, "method": "OPTIONS", "annotation": "enable-cors",
                    "headers": (("Origin", ORIGIN), ("Access-Control-Request-Method", "PUT"),
                                ("Access-Control-Request-Headers", "X-Kindlab"))})
        out.append({"kind": "cors", "target": base, "annotation": "enable-cors", "headers": (("Origin", ORIGIN),)})
    size = nginx_size(a.get("proxy-body-size", ""))
    if size is not None and size + 1024 <= MAX_BODY:
        out.append({"kind": "body-size", "target": base, "method": "POST", "body_size": size + 1024,
                    "annotation": "proxy-body-size"})
    if a.get("canary", "").lower() == "true":
        header = a.get("canary-by-header")
        if header:
            value = a.get("canary-by-header-value")
            values = [value] if value else ["always", "never"]
            for v in values:
                out.append({"kind": "canary-header", "target": base, "annotation": "canary-by-header",
                            "headers": ((header, v),)})
        pattern = a.get("canary-by-header-pattern")
        if header and pattern and not a.get("canary-by-header-value"):
            out.append({"kind": "canary-header", "target": base, "annotation": "canary-by-header-pattern",
                        "headers": ((header, regex_sample(pattern).lstrip("/")),)})
        cookie = a.get("canary-by-cookie")
        if cookie:
            for v in ("always", "never"):
                out.append({"kind": "canary-cookie", "target": base, "annotation": "canary-by-cookie",
                            "headers": (("Cookie", "%s=%s" % (cookie, v)),)})
        if a.get("canary-weight"):
            out.append({"kind": "canary-weight", "target": base, "annotation": "canary-weight", "repeat": 20})
    timeout = _int(a.get("proxy-read-timeout", ""))
    if timeout is not None and timeout < 10:
        out.append({"kind": "slow", "target": base + ("&" if "?" in base else "?") + "delay=%ds" % (timeout + 2),
                    "annotation": "proxy-read-timeout"})
    rps = _int(a.get("limit-rps", ""))
    if rps:
        multiplier = _int(a.get("limit-burst-multiplier", "")) or 5
        out.append({"kind": "burst", "target": base, "annotation": "limit-rps",
                    "repeat": min(MAX_BURST, rps * multiplier + rps + 10)})
    return out


def default_backends(ingresses: list[Obj]) -> list[Rule]:
    """A rule for each Ingress's spec.defaultBackend (its host: "" for a host no rule names)."""
    out = []
    for ing in ingresses:
        if (ing.get("spec") or {}).get("defaultBackend"):
            out.append(Rule(ingress=key_of(ing), host="", path="", path_type="DefaultBackend", regex=False,
                            annotations=nginx_annotations(ing)))
    return out


def default_backend_services(ingresses: list[Obj]) -> tuple[tuple[str, str], ...]:
    """(namespace/Service, namespace/Ingress) of each spec.defaultBackend that names a Service."""
    out = []
    for ing in ingresses:
        service = (((ing.get("spec") or {}).get("defaultBackend") or {}).get("service") or {}).get("name")
        if service:
            out.append(("%s/%s" % ((ing.get("metadata") or {}).get("namespace"), service), key_of(ing)))
    return tuple(out)


def rules_of(requests: list[Request], ingresses: list[Obj]) -> list[Rule | None]:
    """The rule each request exercises: the one it was generated from, or for a request the scenario
    adds, the first rule of its Ingress on its host (None when there is none)."""
    by_label: dict[tuple[str, str, str], Rule] = {}
    first: dict[tuple[str, str], Rule] = {}
    for rule in rules(ingresses):
        by_label.setdefault((rule.ingress, rule.host, rule.label), rule)
        first.setdefault((rule.ingress, rule.host), rule)
    defaults = {rule.ingress: rule for rule in default_backends(ingresses)}
    return [first.get((r.ingress, r.host)) if r.kind == "scenario"
            else defaults.get(r.ingress) if r.rule == DEFAULT_BACKEND
            else by_label.get((r.ingress, r.served_as or r.host, r.rule)) for r in requests]


def _request_id(rule: Rule, kind: str, target: str) -> str:
    return "%s %s%s [%s] %s" % (rule.ingress, rule.host, rule.path, kind, target)


def concrete_host(host: str) -> str:
    """The Host a request to a rule's host sends: a wildcard's one-label subdomain (never the literal `*.`)."""
    return SUB + host[1:] if host.startswith("*.") else host


def _host_requests(rule: Rule) -> list[Obj]:
    """The requests that show which names reach the rule: below and at the parent of a wildcard host, and each
    server-alias of its Ingress (each on the rule's own path)."""
    base = regex_sample(rule.path) if rule.regex or is_regex(rule.path) else rule.path
    out: list[Obj] = []
    if rule.host.startswith("*."):
        out.append({"kind": "wildcard-depth", "target": base, "host": "a." + concrete_host(rule.host)})
        out.append({"kind": "wildcard-parent", "target": base, "host": rule.host[2:]})
    for alias in (a.strip() for a in rule.annotations.get("server-alias", "").split(",")):
        if alias:
            out.append({"kind": "alias", "target": base, "host": concrete_host(alias), "annotation": "server-alias"})
    return out


def _default_backend_requests(ingresses: list[Obj]) -> list[Request]:
    """For each Ingress with spec.defaultBackend: a host no rule names, and a path no rule serves on each of its hosts."""
    out = []
    for rule in default_backends(ingresses):
        ing = next(i for i in ingresses if key_of(i) == rule.ingress)
        hosts = [UNKNOWN_HOST] + sorted({concrete_host(str(r.get("host"))) for r in (ing.get("spec") or {}).get("rules") or []
                                         if r.get("host")})
        for host in hosts:
            kind = "default-host" if host == UNKNOWN_HOST else "default-path"
            out.append(Request(id="%s %s [%s] %s" % (rule.ingress, host, kind, UNMATCHED), ingress=rule.ingress, host=host,
                               target=UNMATCHED, kind=kind, rule=DEFAULT_BACKEND))
    return out


def basic_auth(user: str, password: str) -> tuple[str, str]:
    """The Authorization header of USER and PASSWORD (RFC 7617)."""
    return ("Authorization", "Basic " + base64.b64encode(("%s:%s" % (user, password)).encode()).decode())


def _auth_requests(rule: Rule, credentials: tuple[str, str] | None) -> list[Obj]:
    """For a rule whose Ingress asks for basic auth: its path without credentials, and with a wrong password when
    the right ones are known (every other request of the rule carries those); over HTTPS on a TLS host."""
    if rule.annotations.get("auth-type", "").strip().lower() != "basic":
        return []
    base = regex_sample(rule.path) if rule.regex or is_regex(rule.path) else rule.path
    scheme = "https" if rule.tls else "http"  # a TLS host's plain HTTP is redirected before any credentials are asked for
    out: list[Obj] = [{"kind": "auth-missing", "target": base, "annotation": "auth-type", "scheme": scheme}]
    if credentials:
        out.append({"kind": "auth-wrong", "target": base, "annotation": "auth-type", "scheme": scheme,
                    "headers": (basic_auth(credentials[0], credentials[1] + "-wrong"),)})
    return out


def generate(ingresses: list[Obj], credentials: dict[str, tuple[str, str]] | None = None) -> list[Request]:
    """Every request the Ingresses call for, in rule order, each once (a request that two kinds of
    one host produce is kept under the first, or under the annotation it shows: app-root's / is
    also the root rule's path), then the default backends' requests. CREDENTIALS: Ingress -> (user, password)
    of the basic auth it asks for (the lab's own), sent with each of its requests but those that show the auth."""
    out: list[Request] = []
    seen: dict[tuple[str, str, str, str, tuple[tuple[str, str], ...], int], int] = {}
    for rule in rules(ingresses):
        label = rule.label
        known = (credentials or {}).get(rule.ingress)
        candidates: list[Obj] = ([{"kind": k, "target": t} for k, t in _path_requests(rule)] + _annotation_requests(rule)
                                 + _host_requests(rule))
        if known:
            for c in candidates:
                c["headers"] = tuple(c.get("headers", ())) + (basic_auth(*known),)
        for c in candidates + _auth_requests(rule, known):
            headers = tuple(c.get("headers", ()))
            method = c.get("method", "GET")
            body = int(c.get("body_size", 0))
            scheme = c.get("scheme", "http")
            host = c.get("host") or concrete_host(rule.host)
            dedupe = (host, scheme + c["target"], method, c["kind"] if c["kind"] in ("burst", "canary-weight") else "",
                      headers, body)
            request = Request(id=_request_id(rule, c["kind"], c["target"]) + ("" if host == rule.host else " (Host: %s)" % host),
                              ingress=rule.ingress, host=host,
                              target=c["target"], kind=c["kind"], rule=label, method=method, headers=headers,
                              body_size=body, annotation=c.get("annotation", ""), repeat=int(c.get("repeat", 1)),
                              scheme=scheme, served_as="" if host == rule.host else rule.host)
            if dedupe not in seen:
                seen[dedupe] = len(out)
                out.append(request)
            elif request.annotation and not out[seen[dedupe]].annotation and out[seen[dedupe]].ingress == request.ingress:
                out[seen[dedupe]] = request
    return out + _default_backend_requests(ingresses)


_REQUEST_KEYS = {"ingress", "host", "path", "method", "headers", "body_size", "repeat", "name"}


def scenario_requests(raw: Any, ingresses: list[Obj], where: str = "requests") -> list[Request]:
    """The requests a scenario adds: each names an Ingress of the rehearsal (ns/name) and a path;
    the host defaults to that Ingress's first rule's."""
    if raw in (None, []):
        return []
    if not isinstance(raw, list):
        raise CorpusError("%s: expected a list of requests (ingress, path, ...), got %r" % (where, raw))
    by_key = {key_of(i): i for i in ingresses}
    out = []
    for i, item in enumerate(raw):
        at = "%s[%d]" % (where, i)
        if not isinstance(item, dict):
            raise CorpusError("%s: expected a mapping with ingress and path, got %r" % (at, item))
        unknown = sorted(set(item) - _REQUEST_KEYS)
        if unknown:
            raise CorpusError("%s: expected only the keys %s, got %s" % (at, ", ".join(sorted(_REQUEST_KEYS)), unknown))
        ing = by_key.get(str(item.get("ingress")))
        if ing is None:
            raise CorpusError("%s.ingress: expected an Ingress of the rehearsal (%s), got %r"
                              % (at, ", ".join(sorted(by_key)) or "none", item.get("ingress")))
        path = item.get("path")
        if not isinstance(path, str) or not path.startswith("/") or any(c in path for c in " \r\n"):
            raise CorpusError("%s.path: expected a request target starting with '/' (no spaces), got %r" % (at, path))
        first = ((ing.get("spec") or {}).get("rules") or [{}])[0]
        host = str(item.get("host") or first.get("host") or ANY_HOST)
        method = str(item.get("method", "GET")).upper()
        if not re.fullmatch(r"[A-Z]+", method):
            raise CorpusError("%s.method: expected an HTTP method, got %r" % (at, item.get("method")))
        headers = item.get("headers") or {}
        if not isinstance(headers, dict):
            raise CorpusError("%s.headers: expected a mapping of header names to values, got %r" % (at, headers))
        for n in ("body_size", "repeat"):
            if n in item and (not isinstance(item[n], int) or item[n] < (0 if n == "body_size" else 1)):
                raise CorpusError("%s.%s: expected a whole number, got %r" % (at, n, item[n]))
        name = str(item.get("name") or path)
        out.append(Request(id="%s %s [scenario] %s" % (key_of(ing), host, name), ingress=key_of(ing), host=host, target=path,
                           kind="scenario", rule="(scenario)", method=method,
                           headers=tuple((str(k), str(v)) for k, v in headers.items()),
                           body_size=int(item.get("body_size", 0)), repeat=int(item.get("repeat", 1))))
    return out
