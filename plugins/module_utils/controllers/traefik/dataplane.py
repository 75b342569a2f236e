# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traefik's data plane: the servers of each HTTP service, and the routers it built, read from one pod's API.

Read from traefik v3.7 (pkg/api, pkg/provider/kubernetes/ingress and ingress-nginx):
- pkg/api/handler.go, handler_http.go, criterion.go: GET /api/http/services lists every
  service with `name` (`<name>@<provider>`) and `loadBalancer.servers[].url`, `fenced` on a
  terminating endpoint it keeps for open connections; pages of `per_page` (100 by default),
  the next page in the header X-Next-Page (1 on the last). The API is served on the
  `traefik` entrypoint (:8080) only with api.insecure; the chart's dashboard alone routes it
  through an IngressRoute, so the entrypoint answers 404. The lab turns it on for every
  Traefik (values.LAB_VALUES); a user's install needs it in its own values.
- the Ingress provider (`@kubernetes`): a path's service is Normalize(`<ns>-<svc>-<port>`),
  the port's name when the Ingress names it, else its number; an Ingress without rules gives
  its spec.defaultBackend as `default-backend` (the first such Ingress only); with rules its
  defaultBackend is not routed.
- the ingress-nginx provider (`@kubernetesingressnginx`): a path's service is
  Normalize(`<ns>-<ingress>-<svc>-<port>`), spec.defaultBackend `<ns>-<ingress>-default-backend`,
  or `default-backend` for an Ingress without rules.
- both list servers from the EndpointSlices' serving endpoints (not only ready ones); nativeLB
  or service-upstream routes to the Service's ClusterIP instead.
"""
from __future__ import annotations

import json
import re
from typing import Any, Mapping
from urllib.parse import urlsplit

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import container_argv, meta
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import (
    BackendKey,
    DataPlaneError,
    DataPlaneReader,
    PodAccess,
    Reading,
    Router,
    Upstream,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import rules
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.chart import parse_args

Obj = dict[str, Any]

SERVICES_PATH = "/api/http/services"
ROUTERS_PATH = "/api/http/routers"
DEFAULT_API_PORT = 8080
PER_PAGE = 1000
MAX_PAGES = 100  # a bound on a server that keeps naming a next page
INGRESS_PROVIDER = "kubernetes"
NGINX_PROVIDER = "kubernetesingressnginx"
DEFAULT_BACKEND = "default-backend"
API_FIX = ("turn the API on: chart values api.insecure: true (arg --api.insecure=true); it is served on the traefik "
           "entrypoint, ports.traefik.port (8080), which needs no expose to be read through the pod proxy")


def normalize(name: str) -> str:
    """provider.Normalize: every run of characters that are not letters or digits becomes one
    `-`, none at either end."""
    return "-".join(part for part in re.split(r"[^\w]|_", name) if part)


def api_port(container: Obj, namespace: str) -> int:
    """The `traefik` entrypoint's port, from --entryPoints.traefik.address=[host]:port[/tcp]."""
    address = parse_args(container_argv(container, namespace)).get("entrypoints.%s.address" % rules.API_ENTRY_POINT, "")
    m = re.search(r":(\d+)(?:/\w+)?$", address)
    return int(m.group(1)) if m else DEFAULT_API_PORT


def _json_array(text: str, what: str, path: str) -> list[Any]:
    """One page of an API list (PATH), decoded; a DataPlaneError naming WHAT when it is not a JSON array."""
    try:
        data = json.loads(text)
    except ValueError:
        raise DataPlaneError("%s: expected the JSON array of %s, got %r"
                             % (what, path, (text.strip().splitlines() or [""])[0][:200])) from None
    if not isinstance(data, list):
        raise DataPlaneError("%s: expected a JSON array, got %s" % (what, type(data).__name__))
    return data


def parse_services(text: str) -> dict[str, tuple[Upstream, ...]]:
    """One page of /api/http/services → service name → its servers. Services without a
    loadBalancer (weighted, mirroring, failover) route through others and are left out."""
    data = _json_array(text, "services", SERVICES_PATH)
    out: dict[str, tuple[Upstream, ...]] = {}
    for i, service in enumerate(data):
        if not isinstance(service, dict) or not isinstance(service.get("name"), str):
            raise DataPlaneError("services[%d].name: expected a string" % i)
        lb = service.get("loadBalancer")
        if lb is None:
            continue
        upstreams = []
        for j, server in enumerate((lb or {}).get("servers") or []):
            url = str((server or {}).get("url") or "")
            parts = urlsplit(url)
            if not parts.hostname or parts.port is None:
                raise DataPlaneError("services[%d].loadBalancer.servers[%d].url: expected scheme://address:port, got %r"
                                     % (i, j, url))
            upstreams.append(Upstream(parts.hostname, str(parts.port), bool(server.get("fenced"))))
        out[service["name"]] = tuple(upstreams)
    return out


def read(access: PodAccess, pod: Obj, container: Obj) -> Reading:
    """Every page of the pod's /api/http/services through the pod proxy."""
    port = api_port(container, str(meta(pod).get("namespace")))
    source = "GET :%d%s (pod proxy)" % (port, SERVICES_PATH)
    backends: dict[str, tuple[Upstream, ...]] = {}
    page = 1
    for _page in range(MAX_PAGES):
        answer = access.get(port, SERVICES_PATH, (("per_page", str(PER_PAGE)), ("page", str(page))))
        if answer.status == 403:
            return Reading(source, unread="pod proxy refused by the API server (403): %s" % answer.error,
                           fix="grant the reader get on pods/proxy in namespace %s" % meta(pod).get("namespace"))
        if answer.status != 200:
            why = answer.error or answer.body.strip()[:200] or "no answer"
            return Reading(source, unread="the API is off or not on port %d: HTTP %s: %s" % (port, answer.status or "-", why),
                           fix=API_FIX)
        try:
            backends.update(parse_services(answer.body))
        except DataPlaneError as exc:
            return Reading(source, unread="unexpected answer: %s" % exc, fix=API_FIX)
        following = answer.header("x-next-page", "1")
        if not following.isdigit() or int(following) <= page:
            return Reading(source, backends=backends)
        page = int(following)
    return Reading(source, unread="more than %d pages of services" % MAX_PAGES)


def parse_routers(text: str) -> list[Router]:
    """One page of /api/http/routers → its routers (runtime.RouterInfo: name, rule, priority, service, status
    enabled/disabled/warning, `error`, the messages that disabled it, and entryPoints)."""
    data = _json_array(text, "routers", ROUTERS_PATH)
    out = []
    for i, router in enumerate(data):
        if not isinstance(router, dict) or not isinstance(router.get("name"), str):
            raise DataPlaneError("routers[%d].name: expected a string" % i)
        errors = router.get("error") or []
        out.append(Router(name=router["name"], rule=str(router.get("rule") or ""), priority=int(router.get("priority") or 0),
                          status=str(router.get("status") or "enabled"), service=str(router.get("service") or ""),
                          errors=tuple(str(e) for e in (errors if isinstance(errors, list) else [errors])),
                          tls=router.get("tls") is not None,  # (the API says {"options": "default"} at least)
                          entry_points=tuple(str(e) for e in router.get("entryPoints") or []),
                          settings=tuple(("middleware", str(m)) for m in router.get("middlewares") or [])))
    return out


def read_routers(access: PodAccess, pod: Obj, container: Obj) -> tuple[tuple[Router, ...], str]:
    """Every page of the pod's /api/http/routers through the pod proxy: what this Traefik says it built, with each
    router's status and error; "" or why they could not be read."""
    port = api_port(container, str(meta(pod).get("namespace")))
    routers: list[Router] = []
    page = 1
    for _page in range(MAX_PAGES):
        answer = access.get(port, ROUTERS_PATH, (("per_page", str(PER_PAGE)), ("page", str(page))))
        if answer.status != 200:
            why = answer.error or answer.body.strip()[:200] or "no answer"
            return (), "GET :%d%s: HTTP %s: %s (%s)" % (port, ROUTERS_PATH, answer.status or "-", why, API_FIX)
        try:
            routers += parse_routers(answer.body)
        except DataPlaneError as exc:
            return (), "GET :%d%s: unexpected answer: %s" % (port, ROUTERS_PATH, exc)
        following = answer.header("x-next-page", "1")
        if not following.isdigit() or int(following) <= page:
            return tuple(routers), ""
        page = int(following)
    return tuple(routers), "more than %d pages of routers" % MAX_PAGES


def names(settings: Mapping[str, Any], key: BackendKey) -> tuple[tuple[str, ...], str]:
    """The service names of one Ingress backend, by the provider the controller stands for."""
    provider = str(settings.get("provider") or INGRESS_PROVIDER)
    suffix = "@" + provider
    if key.default_backend and not key.ingress_has_rules:
        # Shared by every rule-less Ingress: only the first one's backend is routed.
        return (DEFAULT_BACKEND + suffix,), ""
    if provider == NGINX_PROVIDER:
        if key.default_backend:
            return (normalize("%s-%s-default-backend" % (key.namespace, key.ingress)) + suffix,), ""
        return (normalize("%s-%s-%s-%s" % (key.namespace, key.ingress, key.service, key.port)) + suffix,), ""
    if key.default_backend:
        return (), "the Ingress provider does not route spec.defaultBackend of an Ingress with rules"
    return (normalize("%s-%s-%s" % (key.namespace, key.service, key.port)) + suffix,), ""


READER = DataPlaneReader(read=read, names=names, routers=read_routers, take=rules.take, describe=rules.describe)
