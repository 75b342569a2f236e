"""The twin's data plane: real HTTP on loopback for what the cluster exposes.

Listeners (127.0.0.1, ephemeral port), one per exposed address:
- every LoadBalancer IP:port that MetalLB announces (an L2Advertisement selects its pool);
- every node InternalIP:nodePort of NodePort/LoadBalancer Services;
- every node InternalIP:hostPort of a Running pod (hostPort, as kind's ingress set-up uses);
- kind `extraPortMappings` (host side) onto the node port they forward to.
The mapping is published to <state_dir>/connect_to.json (contract.CONNECT_TO_FILE), written
atomically when it changes. Addresses with nothing behind them get no entry (connection
refused), like a node port nobody listens on.

Traffic to a Service goes to one of its ready endpoints (EndpointSlices, round-robin); no
ready endpoint → the connection is reset (kube-proxy rejects). A pod answers like its image:
ingress-nginx routes by Host and path over the Ingresses its controller process accepted
(upstream semantics below), nginx serves its welcome page, echo images echo.

ingress-nginx routing is the collection's (controllers/ingress_nginx/binary.py select_route:
server and location selection as the generated nginx.conf behaves); a backend with no ready
endpoints → 503; nothing matched → 404 from the default backend.
"""
from __future__ import annotations

import itertools
import json
import os
import socket
import struct
import tempfile
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from kindlab_twin.collection import nginx_binary
from kindlab_twin.contract import CONNECT_TO_FILE, Obj, Store

from .emulations import images
from .emulations import nginx_logic as nl
from .emulations.base import ENDPOINTSLICE, NODE, POD, SERVICE, LoopEmulation, pod_running
from .emulations.ingress_nginx import controller_container, hub_for
from .emulations.metallb import announced_ips

NGINX_WELCOME = """<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>This page is served by an emulated nginx pod in a kindlab twin cluster.</p>
</body>
</html>
"""


def nginx_error_page(code: int, reason: str) -> str:
    return (f"<html>\r\n<head><title>{code} {reason}</title></head>\r\n<body>\r\n"
            f"<center><h1>{code} {reason}</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n")


def ready_endpoints(store: Store, namespace: str, service: str, port_name: str | None) -> list[tuple[str, int, dict[str, Any]]]:
    """(podIP, port, targetRef) of ready endpoints; port_name None = the slice's first port."""
    out = []
    for sl in store.list(ENDPOINTSLICE, namespace, {"kubernetes.io/service-name": service}):
        ports = sl.get("ports") or []
        port = next((p for p in ports if port_name is None or (p.get("name") or "") == port_name), None)
        if port is None:
            continue
        for ep in sl.get("endpoints") or []:
            if (ep.get("conditions") or {}).get("ready") is False:
                continue
            for addr in ep.get("addresses") or []:
                out.append((addr, int(port["port"]), ep.get("targetRef") or {}))
    return sorted(out, key=lambda e: (e[2].get("name", ""), e[0]))


def service_port(svc: Obj, port: Any) -> dict[str, Any] | None:
    for p in (svc.get("spec") or {}).get("ports") or []:
        if (isinstance(port, int) and p.get("port") == port) or (isinstance(port, str) and p.get("name") == port):
            return p  # type: ignore[no-any-return]
    return None


# --- listeners -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    kind: str  # "service" | "pod"
    namespace: str
    name: str
    port: int  # service port, or pod container port
    what: str


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "nginx"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _handle(self) -> None:
        plane: DataPlane = self.server.plane  # type: ignore[attr-defined]
        target: Target = self.server.target  # type: ignore[attr-defined]
        body = b""
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            body = self.rfile.read(length)
        result = plane.answer(target, self.command, self.path, self.headers.get("Host", ""), body)
        if result is None:
            self._reset()
            return
        code, ctype, payload, server = result
        data = payload.encode()
        self.server_version = server
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _reset(self) -> None:
        self.close_connection = True
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _handle


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class Listener:
    def __init__(self, plane: DataPlane, target: Target) -> None:
        self.server = _Server(("127.0.0.1", 0), _Handler)
        self.server.plane = plane  # type: ignore[attr-defined]
        self.server.target = target  # type: ignore[attr-defined]
        self.port = int(self.server.server_address[1])
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.1},
                                       name=f"twin-dp-{self.port}", daemon=True)
        self.thread.start()

    @property
    def target(self) -> Target:
        return self.server.target  # type: ignore[attr-defined,no-any-return]

    @target.setter
    def target(self, t: Target) -> None:
        self.server.target = t  # type: ignore[attr-defined]

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def node_addresses(nodes: list[Obj]) -> dict[str, str]:
    out = {}
    for n in nodes:
        for a in n.get("status", {}).get("addresses") or []:
            if a.get("type") == "InternalIP":
                out[n["metadata"]["name"]] = a["address"]
                break
    return out


def desired_targets(store: Store, kind_config: Obj | None = None, cluster: str = "") -> dict[tuple[str, int], Target]:
    nodes = store.list(NODE)
    node_ip = node_addresses(nodes)
    announced = announced_ips(store)
    out: dict[tuple[str, int], Target] = {}
    for svc in store.list(SERVICE):
        ns, name = svc["metadata"].get("namespace", "default"), svc["metadata"]["name"]
        spec = svc.get("spec") or {}
        stype = spec.get("type", "ClusterIP")
        for p in spec.get("ports") or []:
            if (p.get("protocol") or "TCP") != "TCP":
                continue
            if stype == "LoadBalancer":
                for ing in (svc.get("status") or {}).get("loadBalancer", {}).get("ingress") or []:
                    ip = ing.get("ip")
                    if ip and ip in announced:
                        out[(ip, int(p["port"]))] = Target("service", ns, name, int(p["port"]), f"{ns}/{name}")
            if stype in ("NodePort", "LoadBalancer") and p.get("nodePort"):
                for addr in node_ip.values():
                    out[(addr, int(p["nodePort"]))] = Target("service", ns, name, int(p["port"]), f"{ns}/{name} nodePort")
    for pod in store.list(POD):
        node = pod.get("spec", {}).get("nodeName")
        if not node or node not in node_ip or not pod_running(pod):
            continue
        for c in pod.get("spec", {}).get("containers") or []:
            for p in c.get("ports") or []:
                if p.get("hostPort") and (p.get("protocol") or "TCP") == "TCP":
                    ns, name = pod["metadata"].get("namespace", ""), pod["metadata"]["name"]
                    out[(node_ip[node], int(p["hostPort"]))] = Target(
                        "pod", ns, name, int(p["containerPort"]), f"{ns}/{name} hostPort")
    # kind extraPortMappings: host listenAddress:hostPort → node:containerPort
    if kind_config and cluster:
        from .kindnodes import node_names, node_roles

        for cfg, nname in zip(node_roles(kind_config), node_names(cluster, kind_config)):
            for m in cfg.get("extraPortMappings") or []:
                if (m.get("protocol") or "TCP").upper() != "TCP" or nname not in node_ip:
                    continue
                inner = out.get((node_ip[nname], int(m["containerPort"])))
                if inner is not None:
                    listen = m.get("listenAddress") or "0.0.0.0"
                    host = "127.0.0.1" if listen in ("0.0.0.0", "::") else listen
                    out[(host, int(m.get("hostPort") or m["containerPort"]))] = Target(
                        inner.kind, inner.namespace, inner.name, inner.port, f"{inner.what} via extraPortMappings")
    return out


class DataPlane(LoopEmulation):
    name = "dataplane"
    manager = "kindlab-twin-dataplane"
    watches = ("Service", "EndpointSlice", "Pod", "Node", "IPAddressPool", "L2Advertisement", "Deployment", "DaemonSet")
    period = 5.0

    def setup(self) -> None:
        self.listeners: dict[tuple[str, int], Listener] = {}
        self._rr: dict[tuple[str, str], itertools.count[int]] = {}
        self._rr_lock = threading.Lock()
        self._published: list[dict[str, Any]] | None = None

    def teardown(self) -> None:
        for lst in self.listeners.values():
            lst.close()
        self.listeners.clear()

    def reconcile(self) -> None:
        assert self.cluster is not None
        want = desired_targets(self.store, self.cluster.kind_config, self.cluster.cluster_name)
        for k in [k for k in self.listeners if k not in want]:
            self.listeners.pop(k).close()
        for k, target in want.items():
            if k in self.listeners:
                self.listeners[k].target = target
            else:
                self.listeners[k] = Listener(self, target)
        self.publish()

    def entries(self) -> list[dict[str, Any]]:
        return [{"host": h, "port": p, "target_host": "127.0.0.1", "target_port": lst.port, "what": lst.target.what}
                for (h, p), lst in sorted(self.listeners.items())]

    def publish(self) -> None:
        assert self.cluster is not None
        entries = self.entries()
        if entries == self._published:
            return
        state_dir = self.cluster.state_dir
        os.makedirs(state_dir, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=state_dir, prefix=".connect_to.", suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump(entries, fh, indent=2)
        os.replace(tmp, os.path.join(state_dir, CONNECT_TO_FILE))
        self._published = entries

    # --- answering --------------------------------------------------------------------------
    Answer = tuple[int, str, str, str]

    def answer(self, target: Target, method: str, path: str, host: str, body: bytes) -> Answer | None:
        if target.kind == "pod":
            pod = self.store.get(POD, target.namespace, target.name)
            return self.pod_answer(pod, target.port, method, path, host) if pod else None
        svc = self.store.get(SERVICE, target.namespace, target.name)
        if svc is None:
            return None
        sp = service_port(svc, target.port)
        eps = ready_endpoints(self.store, target.namespace, target.name, (sp or {}).get("name") or "")
        if not eps:
            return None  # kube-proxy REJECT
        _ip, port, ref = eps[self.next_index(target.namespace, target.name) % len(eps)]
        pod = self.store.get(POD, ref.get("namespace", target.namespace), ref.get("name", ""))
        return self.pod_answer(pod, port, method, path, host) if pod else None

    def pod_answer(self, pod: Obj, port: int, method: str, path: str, host: str, depth: int = 0) -> Answer | None:
        ctrl = controller_container(pod)
        if ctrl is not None:
            return self.nginx_controller_answer(pod, ctrl, port, path, host, depth)
        container = self.container_for_port(pod, port)
        if container is None or not self.container_up(pod, container["name"]):
            return None
        kind = images.kind_of(str(container.get("image", "")))
        url = urlsplit(path)
        if kind == images.NGINX:
            if url.path in ("/", "/index.html"):
                return (200, "text/html", NGINX_WELCOME, "nginx/1.27.1")
            return (404, "text/html", nginx_error_page(404, "Not Found"), "nginx/1.27.1")
        name, ns = pod["metadata"]["name"], pod["metadata"].get("namespace", "")
        argv = images.container_argv(pod, container)
        if kind == images.HTTP_ECHO:
            return (200, "text/plain; charset=utf-8", echo_text_arg(argv) + "\n", "")
        if kind == images.WHOAMI:
            # traefik/whoami: the hostname (the pod name in Kubernetes), its IPs, then the request.
            text = (f"Hostname: {name}\nIP: 127.0.0.1\nIP: {pod.get('status', {}).get('podIP', '')}\n"
                    f"RemoteAddr: 10.244.0.1:40000\n{method} {path} HTTP/1.1\nHost: {host}\n")
            return (200, "text/plain; charset=utf-8", text, "")
        if kind == images.AGNHOST and url.path == "/hostname":
            return (200, "text/plain; charset=utf-8", name, "")
        if kind == images.AGNHOST and url.path == "/echo":
            return (200, "text/plain; charset=utf-8", (parse_qs(url.query).get("msg") or [""])[0], "")
        text = f"pod: {name}\nnamespace: {ns}\nnode: {pod.get('spec', {}).get('nodeName', '')}\n" \
               f"method: {method}\nhost: {host}\npath: {path}\n"
        return (200, "text/plain; charset=utf-8", text, "")

    def next_index(self, namespace: str, service: str) -> int:
        """Round-robin per backend Service (nginx's default upstream balancing)."""
        with self._rr_lock:
            return next(self._rr.setdefault((namespace, service), itertools.count()))

    def container_for_port(self, pod: Obj, port: int) -> dict[str, Any] | None:
        containers = pod.get("spec", {}).get("containers") or []
        for c in containers:
            if any(int(p.get("containerPort", 0)) == port for p in c.get("ports") or []):
                return c  # type: ignore[no-any-return]
        return containers[0] if containers else None  # undeclared ports still reach the process

    @staticmethod
    def container_up(pod: Obj, name: str) -> bool:
        for cs in pod.get("status", {}).get("containerStatuses") or []:
            if cs.get("name") == name:
                return "running" in (cs.get("state") or {})
        return False

    def nginx_controller_answer(self, pod: Obj, ctrl: dict[str, Any], port: int, path: str, host: str,
                                depth: int) -> Answer | None:
        if not self.container_up(pod, ctrl["name"]) or depth > 2:
            return None
        try:
            cfg = nl.config_from_args(images.container_argv(pod, ctrl))
        except nl.FlagError:
            return None
        if port != cfg.http_port:
            return None
        ings = hub_for(self.store).ingresses_for(pod["metadata"].get("namespace", ""), pod["metadata"]["name"])
        if ings is None:
            return None
        route = nginx_binary.select_route(ings, host, urlsplit(path).path or "/")
        if route is None:
            default = cfg.default_backend_service
            if "/" not in default:
                return (404, "text/html", nginx_error_page(404, "Not Found"), "nginx")
            # --default-backend-service: unmatched requests go to that Service's endpoints
            dns, dname = default.split("/", 1)
            svc = self.store.get(SERVICE, dns, dname)
            first = ((svc or {}).get("spec", {}).get("ports") or [{}])[0]
            route = nginx_binary.Route({"metadata": {"namespace": dns, "name": ""}}, "/", "Prefix",
                                       {"service": {"name": dname, "port": {"number": first.get("port", 80)}}})
        svc_ref = route.backend.get("service") or {}
        ns = route.ingress["metadata"].get("namespace", "")
        svc = self.store.get(SERVICE, ns, svc_ref.get("name", ""))
        want = (svc_ref.get("port") or {}).get("number") or (svc_ref.get("port") or {}).get("name")
        sp = service_port(svc, want) if svc else None
        eps = ready_endpoints(self.store, ns, svc_ref.get("name", ""), (sp.get("name") or "") if sp else "") if sp else []
        if not eps:
            return (503, "text/html", nginx_error_page(503, "Service Temporarily Unavailable"), "nginx")
        _ip, bport, ref = eps[self.next_index(ns, svc_ref.get('name', '')) % len(eps)]
        backend = self.store.get(POD, ref.get("namespace", ns), ref.get("name", ""))
        if backend is None:
            return (502, "text/html", nginx_error_page(502, "Bad Gateway"), "nginx")
        ans = self.pod_answer(backend, bport, "GET", path, host, depth + 1)
        return ans if ans is not None else (502, "text/html", nginx_error_page(502, "Bad Gateway"), "nginx")


def echo_text_arg(argv: list[str]) -> str:
    """hashicorp/http-echo answers with its -text argument."""
    for i, a in enumerate(argv):
        for prefix in ("-text=", "--text="):
            if a.startswith(prefix):
                return a[len(prefix):]
        if a in ("-text", "--text") and i + 1 < len(argv):
            return argv[i + 1]
    return ""


def load_connect_to(state_dir: str) -> list[dict[str, Any]]:
    try:
        with open(os.path.join(state_dir, CONNECT_TO_FILE)) as fh:
            return json.load(fh)  # type: ignore[no-any-return]
    except FileNotFoundError:
        return []
