# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What several targets' tables recognise the same way: behaviours no Traefik setting can keep, whatever its
provider, because they happen before any router or annotation is read (its entry points, its regex engine)."""
from __future__ import annotations

import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.migration import causes
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CLASS_ANNOTATION, CLASS_NAMED_ANNOTATION
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Behaviour, Fix

Obj = dict[str, Any]
_LOOKAROUND = re.compile(r"\(\?<?[!=]")
# What PCRE (ingress-nginx's nginx and Lua) reads and Go's regexp (Traefik) refuses or reads otherwise: lookaround,
# atomic and conditional groups, recursion, backreferences, \K \R \X \h \v \Z \G, possessive quantifiers; and a
# backquote, which would end Traefik's rule string.
_PCRE_ONLY = re.compile(r"\(\?(?:<?[!=]|[>|(R&]|[+-]?[0-9])|\\(?:[1-9gkKRXhHvVZG])|[*+?}]\+|`")


def default_backend_beyond_its_hosts(b: Behaviour) -> bool:
    """Whether B is the target answering from a rule-less Ingress's spec.defaultBackend where ingress-nginx serves no
    rule (an unmatched path of a host it serves, which its own default backend answers with 404)."""
    return causes.DEFAULT_BACKEND_NO_RULE in b.kinds


def ingress_paths(ingress: Obj) -> list[tuple[str, Obj]]:
    """(host, path entry) of each of INGRESS's rules' paths."""
    return [(str(rule.get("host") or ""), path) for rule in (ingress.get("spec") or {}).get("rules") or []
            for path in ((rule.get("http") or {}).get("paths") or [])]


def host_slug(host: str) -> str:
    """HOST as it goes into the name of an object a fix makes for it: dots as dashes, a wildcard's '*' as 'wildcard'."""
    return host.replace("*", "wildcard").replace(".", "-")


def tls_listing(ingresses: list[Obj], host: str) -> tuple[Obj, str] | None:
    """The first of INGRESSES whose spec.tls lists HOST, with that entry's secretName ('' when it names none); None when
    none of them lists it."""
    return next(((i, str(t.get("secretName") or "")) for i in ingresses for t in (i.get("spec") or {}).get("tls") or []
                 if host in (t.get("hosts") or [])), None)


def class_of(ingress: Obj) -> tuple[Obj, Obj]:
    """(spec fields, annotations) that name INGRESS's IngressClass as it names it, for an Ingress a fix makes beside it:
    spec.ingressClassName, or the class annotation a rehearsal's rebuild names it by (seen on kind: an Ingress made
    with spec.ingressClassName alone went unread there while the rebuilt ones named their class by annotation)."""
    annotations = {k: v for k, v in ((ingress.get("metadata") or {}).get("annotations") or {}).items()
                   if k in (CLASS_ANNOTATION, CLASS_NAMED_ANNOTATION)}
    if CLASS_ANNOTATION in annotations:  # (the API server refuses to create an Ingress that names its class both ways)
        return {}, annotations
    return {k: v for k, v in (ingress.get("spec") or {}).items() if k == "ingressClassName"}, annotations


def tls_entry(host: str, secret: str) -> Obj:
    """A spec.tls entry listing HOST, with SECRET when there is one."""
    return {"hosts": [host], "secretName": secret} if secret else {"hosts": [host]}


def cookie_regexp(name: str, value: str) -> str:
    """A regex (Go's regexp) that matches a Cookie header carrying cookie NAME with VALUE, as ingress-nginx's
    $cookie_NAME reads it: anywhere among the request's cookies."""
    return "(^|;\\s*)%s=%s(;|$)" % (re.escape(name), re.escape(value))


def as_go_regexp(pattern: str) -> str | None:
    """PATTERN as Traefik's matchers (Go's regexp) read it the way PCRE does: the same text, where it uses nothing the
    two read differently; None where it does (_PCRE_ONLY)."""
    return None if _PCRE_ONLY.search(pattern) else pattern


def kinds(b: Behaviour) -> set[str]:
    return {str(r["kind"]) for r in b.rows}


def fields(b: Behaviour) -> set[str]:
    return {str(d["field"]) for r in b.rows for d in r.get("differences") or []}


_UNCLEAN = ("dot-segment", "double-slash")


def _slash_dropped(row: dict[str, Any]) -> bool:
    return all(d["field"] != "location" or d["target"] == d["baseline"] + "/" for d in row.get("differences") or [])


def traefik_limits(b: Behaviour) -> Fix | None:
    """The behaviours Traefik cannot keep by any setting of the behaviour's target (named as the rehearsal names it:
    own-routes uses gateway-api's table), said plainly; None for the others."""
    target = b.target
    if kinds(b) <= {"dot-segment", "double-slash"}:
        return Fix("none", impossible="Traefik's entry points clean the path ('..', '.' and repeated slashes) before any "
                                      "router sees it and pass the clean path on (sanitizePath); ingress-nginx passes it "
                                      "on as the client sent it. No router, annotation or route of %s changes that" % target)
    # refused by the target already, or read literally until a fix makes it a regex the target would refuse
    regex_mode = b.responsible in ("nginx.ingress.kubernetes.io/use-regex", "nginx.ingress.kubernetes.io/rewrite-target")
    if (causes.REFUSED_ROUTER in b.kinds or regex_mode) and any(r is not None and _LOOKAROUND.search(r.path) for r in b.rules):
        paths = sorted({r.path for r in b.rules if r is not None and _LOOKAROUND.search(r.path)})
        return Fix("none", impossible="Traefik compiles path regexes with Go's regexp (RE2), which has no lookahead or "
                                      "lookbehind, so it refuses %s whatever %s is told; write the paths that regex allows "
                                      "as rules of their own" % (", ".join(paths), target))
    if fields(b) == {"location"} and all(_slash_dropped(r) or r["kind"] in _UNCLEAN for r in b.rows):
        return Fix("none", impossible="ingress-nginx's redirect to HTTPS drops the path's trailing slash (its Lua, unless "
                                      "preserve-trailing-slash is true) and keeps '..' and '//' as sent; %s's redirect keeps "
                                      "the trailing slash and redirects to the path its entry point cleaned" % target)
    return None
