# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ingress-nginx's data plane: the backends its Lua balancer routes to, read from one pod.

Read from the controller v1.11.0 (the module k8s.io/ingress-nginx):
- internal/ingress/controller/nginx.go configureBackends: the controller POSTs every backend,
  reduced to name, port, endpoints [{address, port}] and its balancing settings, to
  /configuration/backends on the status server (127.0.0.1, --status-port, 10246); the Lua side
  keeps that array and the workers route from it, so a GET there is what nginx routes to.
- cmd/dbg: `/dbg backends all` GETs that path and prints the array indented; a failed request
  or a non-200 answer is printed as one line, and it still exits 0. Only localhost listens,
  hence the exec. `--status-port` tells it another port.
- pkg/apis/ingress/types.go: Backend.name, Backend.endpoints[].address and .port (a string).
- internal/ingress/controller/util.go upstreamName: `<ns>-<svc>-<port number>`, else
  `-<port name>`, for path backends and spec.defaultBackend alike.
- controller.go: with service-upstream the backend has one endpoint, the Service's ClusterIP
  and port (getServiceClusterEndpoint), and no pod list at all.
- a canary Ingress's backend is an alternative of its main backend: the main one lists it in
  alternativeBackends, and it carries its trafficShapingPolicy (weight, weightTotal, header,
  headerValue, headerPattern, cookie); the balancer
  (rootfs/etc/nginx/lua/balancer.lua) picks it per request. nginx.conf never names it, so a
  location's record gets it from here (Router.canaries).
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Mapping

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import container_argv, meta
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import (
    BackendKey,
    Canary,
    DataPlaneError,
    DataPlaneReader,
    PodAccess,
    Reading,
    Router,
    Upstream,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import nginxconf
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.binary import parse_nginx_flags

Obj = dict[str, Any]

DBG = "/dbg"
DEFAULT_STATUS_PORT = "10246"
_NO_DBG_FIX = ("run upstream's controller image (registry.k8s.io/ingress-nginx/controller ships /dbg), or an image "
               "that installs ingress-nginx's cmd/dbg at /dbg")


def dbg_command(container: Obj, namespace: str) -> list[str]:
    """`/dbg backends all`, with the controller's own --status-port when it sets one."""
    flags, _errors = parse_nginx_flags(container_argv(container, namespace))
    port = flags.get("status-port", DEFAULT_STATUS_PORT)
    return [DBG, "backends", "all"] + ([] if port == DEFAULT_STATUS_PORT else ["--status-port=%s" % port])


def parse_backends(text: str) -> dict[str, tuple[Upstream, ...]]:
    """The JSON array /dbg prints → backend name → its endpoints. DataPlaneError naming the
    field when the text is not that array (dbg prints its own failures as plain lines)."""
    try:
        data = json.loads(text)
    except ValueError:
        raise DataPlaneError("backends: expected the JSON array of /configuration/backends, got %r"
                             % (text.strip().splitlines() or [""])[0][:200]) from None
    if data is None:  # the Lua side answers null before the controller's first POST
        return {}
    if not isinstance(data, list):
        raise DataPlaneError("backends: expected a JSON array, got %s" % type(data).__name__)
    out: dict[str, tuple[Upstream, ...]] = {}
    for i, backend in enumerate(data):
        if not isinstance(backend, dict) or not isinstance(backend.get("name"), str):
            raise DataPlaneError("backends[%d].name: expected a string" % i)
        upstreams = []
        for j, endpoint in enumerate(backend.get("endpoints") or []):
            if not isinstance(endpoint, dict) or not endpoint.get("address"):
                raise DataPlaneError("backends[%d].endpoints[%d].address: expected an address" % (i, j))
            upstreams.append(Upstream(str(endpoint["address"]), str(endpoint.get("port") or "")))
        out[backend["name"]] = tuple(upstreams)
    return out


def canaries(text: str) -> dict[str, tuple[Canary, ...]]:
    """The JSON array /dbg prints → a main backend's name → its canaries (the service it posts has no name or namespace,
    seen on kind, so the name and the port, the Ingress's number or name that ends the name, say it); {} when the text
    is not that array."""
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    backends = {b["name"]: b for b in data if isinstance(b, dict) and isinstance(b.get("name"), str)} if isinstance(data, list) else {}

    def canary(backend: Obj) -> Canary:
        policy = backend.get("trafficShapingPolicy") or {}
        return Canary(backend["name"], str(backend.get("port", "")), header=str(policy.get("header") or ""),
                      header_value=str(policy.get("headerValue") or ""), header_pattern=str(policy.get("headerPattern") or ""),
                      cookie=str(policy.get("cookie") or ""), weight=int(policy.get("weight") or 0),
                      weight_total=int(policy.get("weightTotal") or 100))
    return {name: tuple(canary(backends[a]) for a in b.get("alternativeBackends") or [] if a in backends)
            for name, b in backends.items() if b.get("alternativeBackends")}


def read_routers(access: PodAccess, pod: Obj, container: Obj) -> tuple[tuple[Router, ...], str]:
    """The pod's nginx.conf locations (nginxconf.read_routers), each whose backend has canaries with them (from `/dbg
    backends all`: nginx.conf never names a canary)."""
    routers, unread = nginxconf.read_routers(access, pod, container)
    if not routers or not any(r.service for r in routers):
        return routers, unread
    result = access.exec(str(container.get("name")), dbg_command(container, str(meta(pod).get("namespace"))))
    alternatives = canaries(result.stdout) if result.refused is None and result.rc == 0 else {}

    def upstream_of(router: Router) -> str:
        ns, _slash, rest = router.service.partition("/")
        svc, _colon, port = rest.rpartition(":")
        return upstream_name(ns, svc, port)
    return tuple(replace(r, canaries=alternatives.get(upstream_of(r), ())) if r.service else r for r in routers), unread


def read(access: PodAccess, pod: Obj, container: Obj) -> Reading:
    """One pod's backends through `/dbg backends all` in the controller container."""
    command = dbg_command(container, str(meta(pod).get("namespace")))
    source = "exec %s: %s" % (container.get("name"), " ".join(command))
    result = access.exec(str(container.get("name")), command)
    if result.refused is not None:
        return Reading(source, unread="exec refused by the API server (%s): %s" % (result.refused, result.error),
                       fix="grant the reader create (and get) on pods/exec in namespace %s" % meta(pod).get("namespace"))
    if result.rc is None or result.rc != 0:
        why = result.error or result.stderr.strip() or "exit %s" % result.rc
        if "no such file" in why.lower() or "not found" in why.lower():
            return Reading(source, unread="no %s in the controller's image (%s)" % (DBG, why), fix=_NO_DBG_FIX)
        return Reading(source, unread="%s failed: %s" % (DBG, why), fix="")
    try:
        return Reading(source, backends=parse_backends(result.stdout))
    except DataPlaneError as exc:
        # dbg exits 0 when it cannot reach the status port: its one line is the reason.
        return Reading(source, unread="%s did not print the backends: %s" % (DBG, exc),
                       fix="check that nginx runs in the pod and its status server listens on 127.0.0.1:%s"
                       % (command[-1].split("=", 1)[1] if command[-1].startswith("--status-port") else DEFAULT_STATUS_PORT))


def upstream_name(namespace: str, service: str, port: int | str) -> str:
    """upstreamName: `<ns>-<svc>-<port>`, the port's number when the Ingress gives one, else its name."""
    return "%s-%s-%s" % (namespace, service, port)


def names(_settings: Mapping[str, Any], key: BackendKey) -> tuple[tuple[str, ...], str]:
    return (upstream_name(key.namespace, key.service, key.port),), ""


READER = DataPlaneReader(read=read, names=names, routers=read_routers, take=nginxconf.take, describe=nginxconf.describe)
