# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixes for Traefik's ingress-nginx provider: edits of the Ingresses it reads (it reads them as ingress-nginx does,
so an edit is one the team makes to its own Ingresses), or why no edit keeps a behaviour."""
from __future__ import annotations

import copy
import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.migration import causes
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Behaviour, Fix, Objects
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.common import (
    class_of,
    fields,
    host_slug,
    tls_entry,
    tls_listing,
    traefik_limits,
)

NAME = "traefik-nginx-provider"
Obj = dict[str, Any]
_TLS_OF = re.compile(r"^spec\.tls of (?P<ingresses>.+)$")


def _certified(m: re.Match[str], objects: Objects) -> list[Obj]:
    """The Ingresses of a "spec.tls of <ns/name, ...>" behaviour (M: _TLS_OF's match of its responsible) the target has."""
    return [objects.ingresses[n] for n in m.group("ingresses").split(", ") if n in objects.ingresses]


def _split_off(ingress: Obj, host: str, secret: str) -> tuple[Obj, Obj]:
    """INGRESS without the rules of HOST, and a new Ingress of its own for them with HOST in its spec.tls."""
    meta = ingress.get("metadata") or {}
    spec = ingress.get("spec") or {}
    rest = copy.deepcopy(ingress)
    rest["spec"]["rules"] = [r for r in spec.get("rules") or [] if r.get("host") != host]
    own_meta = {k: copy.deepcopy(v) for k, v in meta.items() if k in ("namespace", "labels", "annotations")}
    own_meta["name"] = "%s-%s" % (meta.get("name"), host_slug(host))
    own_spec = class_of(ingress)[0]  # (its annotations, the class annotation among them, are copied above)
    own_spec["rules"] = [copy.deepcopy(r) for r in spec.get("rules") or [] if r.get("host") == host]
    own_spec["tls"] = [tls_entry(host, secret)]
    return rest, {"apiVersion": ingress.get("apiVersion", "networking.k8s.io/v1"), "kind": "Ingress",
                  "metadata": own_meta, "spec": own_spec}


def _tls_of_another(b: Behaviour, objects: Objects) -> Fix | None:
    """ingress-nginx redirects every plain HTTP request for a host another Ingress gives a certificate; Traefik redirects
    only the paths of an Ingress whose own spec.tls lists the host. Listing the host there makes Traefik redirect every
    host of that Ingress (seen on kind), so the host's rules move to an Ingress of their own that lists it."""
    m = _TLS_OF.match(b.responsible)
    if not m or causes.TLS_OF_ANOTHER not in b.kinds:
        return None
    certified = _certified(m, objects)
    edited: dict[str, Obj] = {}
    said: list[str] = []
    done: set[tuple[str, str]] = set()
    for row in b.rows:
        name, host = str(row["ingress"]), str(row["host"])
        if name not in objects.ingresses or name in (key_of(c) for c in certified) or (name, host) in done:
            continue
        done.add((name, host))
        listing = tls_listing(certified, host)
        if listing is None:
            continue
        secret = listing[1]
        ingress = edited.get(name) or objects.edited("Ingress", name)
        hosts = {str(r.get("host")) for r in (ingress.get("spec") or {}).get("rules") or []}
        if hosts == {host}:
            ingress.setdefault("spec", {}).setdefault("tls", []).append(tls_entry(host, secret))
            edited[name] = ingress
            said.append("list %s in spec.tls of %s" % (host, name))
            continue
        rest, own = _split_off(ingress, host, secret)
        edited[name] = rest
        edited["%s/%s" % (own["metadata"]["namespace"], own["metadata"]["name"])] = own
        said.append("move the rules of %s out of %s into an Ingress of their own, %s, that lists it in spec.tls"
                    % (host, name, own["metadata"]["name"]))
    if not edited:
        return None
    # the paths no rule of the host matches answer from the rule-less Ingress's default backend, whose router never
    # redirects (seen on kind: 6 of 16 requests still differed with the rules moved): a `/` rule of the host to it
    catch_all = _catch_all(objects)
    if catch_all is not None:
        for host in sorted(_catch_all_answered(b, catch_all)):
            made = _unmatched_ingress(objects, catch_all, certified, host)
            if made is not None:
                edited[made[0]] = made[1]
                said.append("route the paths no rule of %s matches to the default backend of %s in %s, which lists it "
                            "in spec.tls" % (host, key_of(catch_all), made[0]))
    return Fix("%s (the certificate of %s), so that Traefik redirects their paths to HTTPS as ingress-nginx does"
               % ("; ".join(said), m.group("ingresses")), tuple(edited.values()))


def _default_backend(b: Behaviour, _objects: Objects) -> Fix | None:
    if b.kinds & {causes.DEFAULT_BACKEND_NO_RULE, causes.DEFAULT_BACKEND_OTHER}:
        return Fix("none", impossible="Traefik's ingress-nginx provider serves an Ingress's spec.defaultBackend from one "
                                      "router, PathPrefix(/) at the lowest priority, for every host's unmatched paths; "
                                      "ingress-nginx serves it only where no server of another Ingress answers. No "
                                      "annotation of that provider narrows it")
    return None


def _catch_all(objects: Objects) -> Obj | None:
    """The rule-less Ingress whose spec.defaultBackend the provider serves every host's unmatched paths from (its
    default-backend routers, the first it reads), if any."""
    return next((i for _n, i in sorted(objects.ingresses.items()) if not (i.get("spec") or {}).get("rules")
                 and ((i.get("spec") or {}).get("defaultBackend") or {}).get("service")), None)


def _unmatched_ingress(objects: Objects, catch_all: Obj, certified: list[Obj], host: str) -> tuple[str, Obj] | None:
    """(namespace/name, Ingress): a `/` rule of HOST to CATCH_ALL's default backend, in an Ingress of its own that
    lists HOST in spec.tls with the certificate one of CERTIFIED (in CATCH_ALL's namespace) gives it; None when none
    does there, or when that Ingress is there already."""
    namespace = str(catch_all["metadata"].get("namespace") or "")
    found = tls_listing([c for c in certified if c["metadata"].get("namespace") == namespace], host)
    if found is None:
        return None
    ingress, secret = found
    name = "%s-%s-unmatched" % (ingress["metadata"]["name"], host_slug(host))
    if "%s/%s" % (namespace, name) in objects.ingresses:
        return None
    spec, annotations = class_of(ingress)
    spec["tls"] = [tls_entry(host, secret)]
    spec["rules"] = [{"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix",
                                                       "backend": copy.deepcopy(catch_all["spec"]["defaultBackend"])}]}}]
    meta: Obj = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    return "%s/%s" % (namespace, name), {"apiVersion": ingress.get("apiVersion", "networking.k8s.io/v1"), "kind": "Ingress",
                                         "metadata": meta, "spec": spec}


def _catch_all_answered(b: Behaviour, catch_all: Obj) -> set[str]:
    """The hosts of B's requests the target answered from CATCH_ALL's default backend (a path no rule of theirs
    matches: no router of theirs, so no redirect either)."""
    service = "%s/%s" % (catch_all["metadata"].get("namespace"), catch_all["spec"]["defaultBackend"]["service"]["name"])
    return {str(r["host"]) for r in b.rows if (r.get("answer") or {}).get("backend") == service}


def _unmatched_path_redirect(b: Behaviour, objects: Objects) -> Fix | None:
    """ingress-nginx redirects every plain HTTP request for a host in spec.tls, a path no rule matches too (its server's
    root location); the provider builds routers, and their redirect, only from an Ingress's paths and its
    spec.defaultBackend (v3.7.13 build.go), and answers such a path from a rule-less Ingress's default backend, over
    HTTPS as over HTTP. A `/` rule of the host to that same default backend, in an Ingress of its own listing the host
    in spec.tls, gives those paths a router that redirects, and over HTTPS the answer Traefik gave them already. With no
    such default backend there is nothing to route `/` to: an Ingress's own spec.defaultBackend would change what
    ingress-nginx answers over HTTPS too (it is the host's root location there, controller.go createServers)."""
    m = _TLS_OF.match(b.responsible)
    # (the provider answers them 404, or from the rule-less Ingress's default backend, whose router never redirects)
    if not m or not (causes.TLS_REDIRECT_UNMATCHED in b.kinds or causes.TLS_REDIRECT_DIFFERS in b.kinds and "status" in fields(b)):
        return None
    catch_all = _catch_all(objects)
    if catch_all is None:
        return Fix("none", impossible="Traefik's ingress-nginx provider redirects plain HTTP to HTTPS only through the "
                                      "routers it builds from an Ingress's paths and spec.defaultBackend, so a path no rule "
                                      "matches gets its 404 where ingress-nginx redirects it; a spec.defaultBackend would "
                                      "give the host that router, but ingress-nginx would then answer those paths over "
                                      "HTTPS from it too, where it now answers its own 404")
    certified = _certified(m, objects)
    made: dict[str, Obj] = {}
    for host in sorted({str(row["host"]) for row in b.rows}):
        found = _unmatched_ingress(objects, catch_all, certified, host)
        if found is not None:
            made[found[0]] = found[1]
    if not made:
        return None
    return Fix("route the paths no rule of %s matches to the default backend of %s in an Ingress of their own that lists "
               "the host in spec.tls (%s), so that Traefik redirects them to HTTPS as ingress-nginx does; over HTTPS they "
               "answer from that default backend, as Traefik answered them before"
               % (", ".join(sorted({str(o["spec"]["rules"][0]["host"]) for o in made.values()})), key_of(catch_all),
                  ", ".join(sorted(made))), tuple(made.values()))


def _credentials_passed(b: Behaviour) -> Fix | None:
    """ingress-nginx keeps the Authorization its basic auth checked from the backend; the provider builds its basicAuth
    middleware from auth-secret and auth-realm alone, never with removeHeader (v3.7.13 provider/kubernetes/ingress-nginx,
    build.go). Only a configuration-snippet's `proxy_set_header Authorization ""` drops it there, and the provider
    reads snippets only with allowSnippetAnnotations, which lets every Ingress author run directives: not proposed."""
    if b.responsible != "nginx.ingress.kubernetes.io/auth-type" or fields(b) != {"received.Authorization"}:
        return None
    return Fix("none", impossible="Traefik's ingress-nginx provider makes its basic auth from auth-secret and auth-realm "
                                  "alone and passes the checked Authorization header on to the backend, where ingress-nginx "
                                  "clears it. Only a configuration-snippet (proxy_set_header Authorization \"\") would "
                                  "clear it there, read only with the provider's allowSnippetAnnotations, which lets any "
                                  "Ingress author run directives, so it is not proposed; Traefik's own Ingress provider "
                                  "keeps it with a basicAuth Middleware (removeHeader)")


def propose(b: Behaviour, objects: Objects) -> Fix | None:
    return (traefik_limits(b) or _tls_of_another(b, objects) or _default_backend(b, objects)
            or _unmatched_path_redirect(b, objects) or _credentials_passed(b))
