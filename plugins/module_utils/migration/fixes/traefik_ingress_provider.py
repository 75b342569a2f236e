# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixes for Traefik's own Ingress provider (what changing only the class gives): edits of the Ingresses it reads and
Traefik Middlewares their routers go through (the rehearsal's Traefik runs its kubernetesCRD provider for them), an
IngressRoute in place of a canary Ingress (traefik_ingress_canary.py), or what none of its settings keeps
(common.traefik_limits).

What it reads (Traefik's kubernetes Ingress provider): a Prefix path becomes PathPrefix, an Exact one Path, and an
ImplementationSpecific one the matcher its Ingress's `traefik.ingress.kubernetes.io/router.pathmatcher` names
(PathPrefix by default; Path or PathRegexp, unanchored). ingress-nginx's use-regex makes every path of the Ingress a
case-insensitive regex anchored at its start only (`location ~* ^<path>`), whatever its pathType."""
from __future__ import annotations

import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.migration import causes
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import nginx_size
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import (
    MIDDLEWARE_API, MIDDLEWARES, PATH_MATCHER, Behaviour, Fix, Objects)
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.common import default_backend_beyond_its_hosts, traefik_limits
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.traefik_ingress_canary import canary, through_beside

NAME = "traefik-ingress-provider"
Obj = dict[str, Any]
_USE_REGEX = "nginx.ingress.kubernetes.io/use-regex"
_REWRITE = "nginx.ingress.kubernetes.io/rewrite-target"
_BODY_SIZE = "nginx.ingress.kubernetes.io/proxy-body-size"
_AUTH_TYPE = "nginx.ingress.kubernetes.io/auth-type"
_AUTH_REALM = "nginx.ingress.kubernetes.io/auth-realm"
_ALIAS = "server-alias"  # as corpus.Rule.annotations names it (no prefix)


def _as_nginx_regex(path: str) -> str:
    """PATH as ingress-nginx matches it in regex mode (case-insensitive), for Go's regexp; an Ingress path must start
    with '/', so the flag follows it. Traefik's PathRegexp is not anchored where ingress-nginx's ^ is: the replay
    shows what that changes."""
    return path if path.startswith("/(?i)") else "/(?i)" + path[1:]


def _annotations(ingress: Obj) -> dict[str, Any]:
    """INGRESS's own annotations mapping, made when it has none, to edit in place."""
    meta = ingress.setdefault("metadata", {})
    if not isinstance(meta.get("annotations"), dict):
        meta["annotations"] = {}
    annotations: dict[str, Any] = meta["annotations"]
    return annotations


def _as_regex_paths(ingress: Obj) -> list[str]:
    """INGRESS's paths made the regexes ingress-nginx reads in regex mode, matched by PathRegexp; their paths before."""
    _annotations(ingress)[PATH_MATCHER] = "PathRegexp"
    before = []
    for rule in (ingress.get("spec") or {}).get("rules") or []:
        for path in ((rule.get("http") or {}).get("paths") or []):
            before.append(str(path.get("path") or "/"))
            path["path"] = _as_nginx_regex(before[-1])
            path["pathType"] = "ImplementationSpecific"
    return before


def _through(objects: Objects, ingress: Obj, middleware: Obj, made: list[Obj]) -> None:
    """INGRESS's routers go through MIDDLEWARE too, after those its annotation names already; so do the routes a canary
    fix made beside it. MADE (the fix's objects) gets the Middleware, the Ingress and those IngressRoutes."""
    meta = middleware["metadata"]
    ref = "%s-%s@kubernetescrd" % (meta["namespace"], meta["name"])
    names = [n.strip() for n in str(_annotations(ingress).get(MIDDLEWARES, "")).split(",") if n.strip()]
    _annotations(ingress)[MIDDLEWARES] = ",".join(names + ([ref] if ref not in names else []))
    beside = through_beside(objects, key_of(ingress), ref, made)
    made += [middleware, ingress, *beside]


def _beside_said(made: list[Obj]) -> str:
    routes = sorted(key_of(o) for o in made if o["kind"] == "IngressRoute")
    return ", and on the canary routes beside them (IngressRoute %s)" % ", ".join(routes) if routes else ""


def _middleware(ingress: Obj, suffix: str, spec: Obj) -> Obj:
    meta = ingress["metadata"]
    return {"apiVersion": MIDDLEWARE_API, "kind": "Middleware",
            "metadata": {"name": "%s-%s" % (meta["name"], suffix), "namespace": meta.get("namespace")}, "spec": spec}


def _own(b: Behaviour, objects: Objects, annotation: str) -> list[Obj]:
    """Copies to edit of the Ingresses of B's rows that carry ANNOTATION themselves."""
    def carries(name: str) -> bool:
        annotations = (objects.ingresses[name].get("metadata") or {}).get("annotations") or {}
        return bool(str(annotations.get(annotation, "")).strip())
    return [objects.edited("Ingress", name) for name in sorted({str(r["ingress"]) for r in b.rows})
            if name in objects.ingresses and carries(name)]


def _regex_paths(b: Behaviour, objects: Objects) -> Fix | None:
    """use-regex: every path of the Ingress as the regex ingress-nginx reads it, by PathRegexp."""
    if b.responsible != _USE_REGEX:
        return None
    edited = []
    for ingress in _own(b, objects, _USE_REGEX):
        if str(_annotations(ingress).get(_USE_REGEX, "")).lower() != "true":
            continue  # regex mode from another Ingress of the host: its own paths are its own (not proposed here)
        _as_regex_paths(ingress)
        edited.append(ingress)
    if not edited:
        return None
    names = ", ".join(sorted(key_of(i) for i in edited))
    return Fix("match every path of %s as ingress-nginx's use-regex does: ImplementationSpecific, %s: PathRegexp, "
               "each path case-insensitive (/(?i)...)" % (names, PATH_MATCHER), tuple(edited))


def _https_redirect_of_get(b: Behaviour) -> Fix | None:
    """ingress-nginx answers plain HTTP for a host in spec.tls with 308 whatever the method. Traefik's redirect
    middlewares (redirectScheme, redirectRegex, and an entry point's redirection, made of them) answer a permanent
    redirect with 301 to a GET and 308 to any other method (v3.7.13 pkg/middlewares/redirect/redirect.go), so no
    Middleware or annotation answers a GET as ingress-nginx does."""
    if not b.responsible.startswith("spec.tls of"):
        return None
    if not any(r.get("method") == "GET" and any(d["field"] == "status" and str(d["baseline"]) == "308"
                                                for d in r.get("differences") or []) for r in b.rows):
        return None
    return Fix("none", impossible="ingress-nginx redirects plain HTTP to HTTPS with 308 whatever the method; Traefik's "
                                  "redirect middlewares (redirectScheme, redirectRegex, an entry point's redirection) "
                                  "answer a permanent redirect to a GET with 301, to other methods with 308, so no "
                                  "Middleware or annotation of %s answers a GET as ingress-nginx does" % b.target)


def _rewrite(b: Behaviour, objects: Objects) -> Fix | None:
    """rewrite-target: ingress-nginx reads the Ingress's paths as regexes (rewrite-target implies use-regex) and
    rewrites each with `rewrite (?i)<path> <target> break`; here its paths become PathRegexp and a replacePathRegex
    Middleware rewrites with the same regex, anchored where the location was (nginx's $1 as Go's ${1}). One Middleware
    serves every router of the Ingress, so an Ingress of several paths is left alone (split it first)."""
    if b.responsible != _REWRITE:
        return None
    made: list[Obj] = []
    says = []
    for ingress in _own(b, objects, _REWRITE):
        target = str(_annotations(ingress)[_REWRITE])
        paths = _as_regex_paths(ingress)
        if len(paths) != 1:
            continue
        middleware = _middleware(ingress, "rewrite", {"replacePathRegex": {
            "regex": "(?i)^" + paths[0], "replacement": re.sub(r"\$(\d)", r"${\1}", target)}})
        _through(objects, ingress, middleware, made)
        says.append(key_of(ingress))
    if not made:
        return None
    return Fix("rewrite the path of %s as ingress-nginx's rewrite-target does: its path a case-insensitive PathRegexp, "
               "and a replacePathRegex Middleware with the same regex%s" % (", ".join(says), _beside_said(made)), tuple(made))


def _body_size(b: Behaviour, objects: Objects) -> Fix | None:
    """proxy-body-size: ingress-nginx refuses a larger request body with 413; a buffering Middleware with
    maxRequestBodyBytes does too."""
    if b.responsible != _BODY_SIZE:
        return None
    made: list[Obj] = []
    for ingress in _own(b, objects, _BODY_SIZE):
        size = nginx_size(str(_annotations(ingress)[_BODY_SIZE]))
        if size is None:
            continue
        middleware = _middleware(ingress, "body-size", {"buffering": {"maxRequestBodyBytes": size}})
        _through(objects, ingress, middleware, made)
    if not made:
        return None
    return Fix("refuse a request body over proxy-body-size with 413, as ingress-nginx does: a buffering Middleware "
               "(maxRequestBodyBytes) on the routers of %s%s"
               % (", ".join(sorted({key_of(o) for o in made if o["kind"] == "Ingress"})), _beside_said(made)), tuple(made))


def _basic_auth(b: Behaviour, objects: Objects) -> Fix | None:
    """auth-type basic: ingress-nginx asks for the users of auth-secret and empties the Authorization header it checked
    before proxying; a basicAuth Middleware naming the same Secret, with removeHeader, does both. Traefik reads a
    Secret of one key of htpasswd lines (v3.7.13 provider/kubernetes/crd, loadAuthCredentials), which is
    ingress-nginx's auth-file; an auth-map Secret (a key per user) it cannot read, and it reads a Middleware's Secret
    in the Middleware's own namespace only, so those Ingresses are left alone."""
    if b.responsible != _AUTH_TYPE:
        return None
    made: list[Obj] = []
    for ingress in _own(b, objects, _AUTH_TYPE):
        annotations = _annotations(ingress)
        namespace = ingress["metadata"].get("namespace")
        secrets = registry.credential_secrets(str(namespace), {str(k): str(v) for k, v in annotations.items()})
        if len(secrets) != 1 or secrets[0].format != "auth-file" or secrets[0].namespace != namespace:
            continue
        spec: Obj = {"secret": secrets[0].name, "removeHeader": True}
        if str(annotations.get(_AUTH_REALM, "")).strip():
            spec["realm"] = str(annotations[_AUTH_REALM])
        middleware = _middleware(ingress, "basic-auth", {"basicAuth": spec})
        _through(objects, ingress, middleware, made)
    if not made:
        return None
    return Fix("ask for the users of auth-secret and keep the Authorization header from the backend, as ingress-nginx's "
               "basic auth does: a basicAuth Middleware (the same Secret, removeHeader) on the routers of %s%s"
               % (", ".join(sorted(key_of(o) for o in made if o["kind"] == "Ingress")), _beside_said(made)), tuple(made))


def _element_prefix(b: Behaviour, objects: Objects) -> Fix | None:
    """A Prefix path matched as a string prefix (PathPrefix, /checkoutx under /checkout): the same path as an Exact
    path and a Prefix path ending in '/', which is how the Ingress spec defines Prefix (by path element) and what
    Traefik matches as Path and PathPrefix; in the Ingress itself, no provider option (strictPrefixMatching) needed.
    Every Ingress with that host and path is edited (a canary's too: its router would still match as a string)."""
    if causes.ELEMENT_PREFIX not in b.kinds:
        return None
    wanted = {(r.host, r.path) for r in b.rules
              if r is not None and r.path_type == "Prefix" and not r.regex and r.path != "/" and not r.path.endswith("/")}
    edited: dict[str, Obj] = {}
    for name in sorted(objects.ingresses):
        ingress = objects.edited("Ingress", name)
        for rule in (ingress.get("spec") or {}).get("rules") or []:
            http = rule.get("http") or {}
            paths = []
            for path in http.get("paths") or []:
                value = str(path.get("path") or "")
                if (str(rule.get("host") or ""), value) in wanted and (path.get("pathType") or "Prefix") == "Prefix":
                    paths += [dict(path, pathType="Exact"), dict(path, path=value + "/", pathType="Prefix")]
                    edited[name] = ingress
                else:
                    paths.append(path)
            if paths:
                http["paths"] = paths
    if not edited:
        return None
    return Fix("match %s by path element as ingress-nginx does: each Prefix path P of %s as an Exact path P and a Prefix "
               "path P/ (Traefik: Path and PathPrefix), the same backend"
               % (", ".join(sorted({v for _h, v in wanted})), ", ".join(sorted(key_of(i) for i in edited.values()))),
               tuple(edited.values()))


def _alias(b: Behaviour, objects: Objects) -> Fix | None:
    """server-alias: ingress-nginx serves the alias hosts as the rule's own host (server_name lists them); Traefik's
    Ingress provider reads no such annotation, so the request falls elsewhere. The Ingress gets a rule per alias
    with the paths of the rule it aliases."""
    wanted: dict[str, list[tuple[str, str]]] = {}  # Ingress -> (alias host, the rule host it copies)
    for row, rule in zip(b.rows, b.rules):
        host = str(row.get("host") or "")
        aliases = {a.strip() for a in (rule.annotations.get(_ALIAS, "") if rule else "").split(",") if a.strip()}
        if rule is not None and host != rule.host and host in aliases and rule.ingress in objects.ingresses:
            wanted.setdefault(rule.ingress, []).append((host, rule.host))
    edited = []
    for name, pairs in sorted(wanted.items()):
        ingress = objects.edited("Ingress", name)
        rules = (ingress.get("spec") or {}).get("rules") or []
        added = [dict(r, host=alias) for alias, of in sorted(set(pairs)) if not any(r.get("host") == alias for r in rules)
                 for r in rules if r.get("host") == of]
        if added:
            ingress.setdefault("spec", {})["rules"] = rules + added
            edited.append(ingress)
    if not edited:
        return None
    return Fix("serve %s as ingress-nginx's server-alias does: a rule of its own in %s with the paths of the rule it "
               "aliases" % (", ".join(sorted({h for pairs in wanted.values() for h, _of in pairs})),
                            ", ".join(sorted(key_of(i) for i in edited))), tuple(edited))


def _default_backend(b: Behaviour) -> Fix | None:
    """A rule-less Ingress's spec.defaultBackend answers where ingress-nginx serves no rule (an unmatched path of a
    host it serves, where ingress-nginx's own default backend answers 404). The provider makes it one router,
    `PathPrefix("/")` at the lowest priority (v3.7.13 provider/kubernetes/ingress, default-router); its annotations
    set that router's entry points, middlewares and TLS, never its rule."""
    if not default_backend_beyond_its_hosts(b):
        return None
    return Fix("none", impossible="Traefik's own Ingress provider serves a rule-less Ingress's spec.defaultBackend from "
                                  "one router, PathPrefix(/) at the lowest priority, for every host's unmatched paths, "
                                  "where ingress-nginx answers them with its own 404; the Ingress's annotations set that "
                                  "router's entry points, middlewares and TLS, never its rule, so none narrows it to the "
                                  "hosts no rule names")


def propose(b: Behaviour, objects: Objects) -> Fix | None:
    return (traefik_limits(b) or _https_redirect_of_get(b) or _regex_paths(b, objects) or _rewrite(b, objects)
            or _body_size(b, objects) or _basic_auth(b, objects) or canary(b, objects) or _element_prefix(b, objects)
            or _alias(b, objects) or _default_backend(b))
