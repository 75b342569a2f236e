# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Fixes for Traefik's own Ingress provider (what changing only the class gives): edits of the Ingresses it reads, or
what none of its settings keeps (common.traefik_limits).

What it reads (Traefik's kubernetes Ingress provider): a Prefix path becomes PathPrefix, an Exact one Path, and an
ImplementationSpecific one the matcher its Ingress's `traefik.ingress.kubernetes.io/router.pathmatcher` names
(PathPrefix by default; Path or PathRegexp, unanchored). ingress-nginx's use-regex makes every path of the Ingress a
case-insensitive regex anchored at its start only (`location ~* ^<path>`), whatever its pathType."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Behaviour, Fix, Objects
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.common import traefik_limits

NAME = "traefik-ingress-provider"
Obj = dict[str, Any]
PATH_MATCHER = "traefik.ingress.kubernetes.io/router.pathmatcher"
_USE_REGEX = "nginx.ingress.kubernetes.io/use-regex"


def _as_nginx_regex(path: str) -> str:
    """PATH as ingress-nginx matches it in regex mode (case-insensitive), for Go's regexp; an Ingress path must start
    with '/', so the flag follows it. Traefik's PathRegexp is not anchored where ingress-nginx's ^ is: the replay
    shows what that changes."""
    return path if path.startswith("/(?i)") else "/(?i)" + path[1:]


def _regex_paths(b: Behaviour, objects: Objects) -> Fix | None:
    """use-regex: every path of the Ingress as the regex ingress-nginx reads it, by PathRegexp."""
    if b.responsible != _USE_REGEX:
        return None
    edited = []
    for name in sorted({str(r["ingress"]) for r in b.rows}):
        if name not in objects.ingresses:
            continue
        ingress = objects.edited("Ingress", name)
        meta = ingress.setdefault("metadata", {})
        if str((meta.get("annotations") or {}).get(_USE_REGEX, "")).lower() != "true":
            continue  # regex mode from another Ingress of the host: its own paths are its own (not proposed here)
        meta.setdefault("annotations", {})[PATH_MATCHER] = "PathRegexp"
        for rule in (ingress.get("spec") or {}).get("rules") or []:
            for path in ((rule.get("http") or {}).get("paths") or []):
                path["path"] = _as_nginx_regex(str(path.get("path") or "/"))
                path["pathType"] = "ImplementationSpecific"
        edited.append(ingress)
    if not edited:
        return None
    names = ", ".join(sorted("%s/%s" % (i["metadata"].get("namespace"), i["metadata"]["name"]) for i in edited))
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


def propose(b: Behaviour, objects: Objects) -> Fix | None:
    return traefik_limits(b) or _https_redirect_of_get(b) or _regex_paths(b, objects)
