"""The HTTP side: a Kubernetes-compatible REST API over the ObjectStore.

Plain HTTP on 127.0.0.1 with bearer-token auth. Legacy discovery (kubectl falls back to
it when the answer to its aggregated-discovery Accept header is plain JSON), OpenAPI v3,
CRUD + patch + watch + Table printing, status and log subresources.
"""
from __future__ import annotations

import hmac
import json
import logging
import select
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable
from urllib.parse import parse_qs, urlsplit

import yaml

from .. import patching
from ..contract import Conflict, Invalid, NotFound, Obj, PodLogs
from ..schema import K8S_VERSION, VERBS, ResourceType, unknown_fields
from ..store import (AlreadyExists, Forbidden, Gone, InvalidObject, ObjectStore, UnknownKind, parse_field_selector,
                     parse_label_selector, qualified)
from . import openapi, protobuf, tables

log = logging.getLogger(__name__)
_MAX_BODY = 16 * 1024 * 1024
_TABLE_ACCEPT = "as=Table"


class ApiError(Exception):
    """An error answered as a Status object."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details


def status_obj(code: int, reason: str, message: str, details: dict[str, Any] | None = None) -> Obj:
    s: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
              "message": message, "reason": reason, "code": code}
    if details:
        s["details"] = details
    return s


class ApiServer:
    """Serves `store` on 127.0.0.1:`port` (0 = a free port) until stop()."""

    def __init__(self, store: ObjectStore, token: str, port: int = 0, pod_logs: PodLogs | None = None,
                 host: str = "127.0.0.1", tls: tuple[str, str] | None = None) -> None:
        self.store = store
        self.token = token
        self.pod_logs = pod_logs or PodLogs()
        self.stopping = threading.Event()
        handler = type("Handler", (_Handler,), {"api": self})
        self.httpd = _Server((host, port), handler)
        self.port = self.httpd.server_address[1]
        self.scheme = "http"
        if tls:
            # Handshakes happen in the request threads (see _Handler.setup), not in accept().
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(*tls)
            ctx.set_alpn_protocols(["http/1.1"])
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True, do_handshake_on_connect=False)
            self.scheme = "https"
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}"

    def start(self) -> "ApiServer":
        self._thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="apiserver", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.stopping.set()
        self.store.wake_watchers()
        self.httpd.shutdown()
        self.httpd.server_close()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        log.debug("connection error from %s", client_address, exc_info=True)


class _Request:
    """A parsed resource request."""

    def __init__(self, rt: ResourceType, namespace: str | None, name: str | None, sub: str | None) -> None:
        self.rt, self.namespace, self.name, self.sub = rt, namespace, name, sub


class _Handler(BaseHTTPRequestHandler):
    api: ApiServer
    protocol_version = "HTTP/1.1"
    server_version = "kindlab-twin"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        log.debug("%s " + format, self.address_string(), *args)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        """Protocol-level errors (bad request line, unknown method) as Status objects;
        an unknown HTTP method is the client's fault (405), not the server's (501)."""
        if code == 501:
            code = 405
        reason = {400: "BadRequest", 405: "MethodNotAllowed", 408: "Timeout", 413: "RequestEntityTooLarge",
                  414: "RequestURITooLong", 431: "RequestHeaderFieldsTooLarge"}.get(code, "BadRequest")
        self.close_connection = True
        if getattr(self, "request_version", "HTTP/0.9") == "HTTP/0.9":
            self.request_version = "HTTP/1.1"  # an unparsable request line still gets a status line
        try:
            body = json.dumps(status_obj(code, reason, message or reason)).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD" and code >= 200:
                self.wfile.write(body)
        except OSError:
            pass

    def setup(self) -> None:
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if isinstance(self.request, ssl.SSLSocket):
            self.request.settimeout(10)
            self.request.do_handshake()
            self.request.settimeout(None)
        super().setup()

    def handle(self) -> None:
        try:
            super().handle()
        except (ssl.SSLError, ConnectionError, TimeoutError, OSError):
            self.close_connection = True

    # -- plumbing
    def do_GET(self) -> None:  # noqa: N802
        self._dispatch("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._dispatch("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._dispatch("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._dispatch("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._dispatch("DELETE")

    def do_HEAD(self) -> None:  # noqa: N802
        self._dispatch("HEAD")

    def do_OPTIONS(self) -> None:  # noqa: N802
        self._dispatch("OPTIONS")

    def _dispatch(self, method: str) -> None:
        self._body_read = False
        self._body_name: str | None = None
        try:
            if not self._authorized():
                raise ApiError(401, "Unauthorized", "Unauthorized")
            url = urlsplit(self.path)
            self.query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
            self._route(method, url.path)
        except ApiError as e:
            self._send_json(e.code, status_obj(e.code, e.reason, e.message, e.details))
        except OSError:  # the client went away (broken pipe, reset, TLS EOF)
            self.close_connection = True
        except Exception as e:  # never let a request kill the server
            log.exception("internal error on %s %s", method, self.path)
            self._send_json(500, status_obj(500, "InternalError", f"Internal error occurred: {e}"))
        finally:
            if not self._body_read:
                self._drain()

    def _authorized(self) -> bool:
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("Bearer "):
            return False
        return hmac.compare_digest(auth[7:].strip().encode(), self.api.token.encode())

    def _content_length(self) -> int:
        try:
            n = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            n = -1
        if n < 0:
            self.close_connection = True
            raise ApiError(400, "BadRequest", "invalid Content-Length")
        return n

    def _drain(self) -> None:
        try:
            length = self._content_length()
        except ApiError:
            return
        if 0 < length <= _MAX_BODY:
            self.rfile.read(length)
        elif length > _MAX_BODY:
            self.close_connection = True

    def _read_body(self) -> bytes:
        self._body_read = True
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
                if len(data) > _MAX_BODY:
                    self.close_connection = True
                    raise ApiError(413, "RequestEntityTooLarge", "request body too large")
        length = self._content_length()
        if length > _MAX_BODY:
            self.close_connection = True
            raise ApiError(413, "RequestEntityTooLarge", "request body too large")
        return self.rfile.read(length) if length else b""

    def _json_body(self, yaml_ok: bool = False) -> Any:
        ctype = self.headers.get("Content-Type", "")
        if ctype.startswith("application/vnd.kubernetes.protobuf"):
            try:
                return protobuf.decode(self._read_body())
            except (protobuf.ProtobufUnsupported, UnicodeDecodeError, IndexError) as e:
                raise ApiError(415, "UnsupportedMediaType", str(e)) from None
        raw = self._read_body()
        if not raw.strip():
            raise ApiError(400, "BadRequest", "the request body is empty")
        try:
            return json.loads(raw)
        except ValueError:
            if not yaml_ok:
                raise ApiError(400, "BadRequest", "the body of the request was in an unknown format - "
                                                  "accepted media types include: application/json, application/yaml") from None
        try:
            return yaml.safe_load(raw)
        except yaml.YAMLError as e:
            raise ApiError(400, "BadRequest", f"error decoding YAML: {e}") from None

    def _send_bytes(self, code: int, body: bytes, ctype: str = "application/json",
                    headers: dict[str, str] | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _send_json(self, code: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send_bytes(code, json.dumps(obj, separators=(",", ":")).encode(), headers=headers)

    # -- routing
    def _route(self, method: str, path: str) -> None:
        parts = [p for p in path.split("/") if p]
        if method == "OPTIONS":
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        if not parts:
            return self._send_json(200, {"paths": ["/api", "/api/v1", "/apis", "/openapi/v3", "/version", "/healthz", "/readyz", "/livez"]})
        if parts[0] in ("healthz", "readyz", "livez") and method in ("GET", "HEAD"):
            return self._send_bytes(200, b"ok", "text/plain; charset=utf-8")
        if parts == ["version"] and method in ("GET", "HEAD"):
            return self._send_json(200, _version())
        if parts[0] == "openapi" and method in ("GET", "HEAD"):
            return self._openapi(parts[1:])
        if parts[0] == "api" and len(parts) <= 2 and method in ("GET", "HEAD"):
            if len(parts) == 1:
                return self._send_json(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                    {"clientCIDR": "0.0.0.0/0", "serverAddress": f"127.0.0.1:{self.api.port}"}]})
            return self._resource_list("", parts[1])
        if parts[0] == "apis" and len(parts) <= 3 and method in ("GET", "HEAD"):
            if len(parts) == 1:
                return self._send_json(200, self._group_list())
            if len(parts) == 2:
                return self._send_json(200, self._group(parts[1]))
            return self._resource_list(parts[1], parts[2])
        if parts[0] == "api" and len(parts) > 2:
            return self._resource(method, "", parts[1], parts[2:])
        if parts[0] == "apis" and len(parts) > 3:
            return self._resource(method, parts[1], parts[2], parts[3:])
        raise ApiError(404, "NotFound", "the server could not find the requested resource")

    # -- discovery
    def _group_list(self) -> Obj:
        groups = []
        for g, versions in self.api.store.registry.groups().items():
            if g:
                groups.append(self._group(g))
        return {"kind": "APIGroupList", "apiVersion": "v1", "groups": sorted(groups, key=_group_order)}

    def _group(self, group: str) -> Obj:
        versions = self.api.store.registry.groups().get(group)
        if not versions or not group:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        vs = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": vs, "preferredVersion": vs[0]}

    def _resource_list(self, group: str, version: str) -> None:
        rts = [rt for rt in self.api.store.registry.all() if rt.group == group and rt.version == version]
        if not rts:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        resources = []
        for rt in sorted(rts, key=lambda r: r.plural):
            entry: Obj = {"name": rt.plural, "singularName": rt.singular, "namespaced": rt.namespaced,
                          "kind": rt.kind, "verbs": VERBS}
            if rt.short_names:
                entry["shortNames"] = rt.short_names
            if rt.categories:
                entry["categories"] = rt.categories
            resources.append(entry)
            sub_verbs = ["get", "patch", "update"]
            if rt.has_status:
                resources.append({"name": f"{rt.plural}/status", "singularName": "", "namespaced": rt.namespaced,
                                  "kind": rt.kind, "verbs": sub_verbs})
            if rt.has_scale:
                resources.append({"name": f"{rt.plural}/scale", "singularName": "", "namespaced": rt.namespaced,
                                  "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": sub_verbs})
            if rt.kind == "Pod" and rt.group == "":
                resources.append({"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod",
                                  "verbs": ["get"]})
        gv = f"{group}/{version}" if group else version
        self._send_json(200, {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv,
                              "resources": resources})

    def _openapi(self, rest: list[str]) -> None:
        reg = self.api.store.registry
        if rest == ["v3"]:
            return self._send_json(200, openapi.root_doc(reg))
        if rest == ["v2"]:
            # An empty v2 document: kubectl only needs it to exist (it skips client-side
            # validation of kinds it does not describe; the server validates, see v3).
            if "protobuf" in self.headers.get("Accept", ""):
                return self._send_bytes(200, openapi.EMPTY_V2_PROTOBUF,
                                        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
            return self._send_json(200, openapi.EMPTY_V2)
        if len(rest) >= 3 and rest[0] == "v3":
            if rest[1] == "api" and len(rest) == 3:
                doc = openapi.group_version_doc(reg, "", rest[2])
            elif rest[1] == "apis" and len(rest) == 4:
                doc = openapi.group_version_doc(reg, rest[2], rest[3])
            else:
                doc = None
            if doc is not None:
                return self._send_bytes(200, _cached_json(rest, doc))
        raise ApiError(404, "NotFound", "the server could not find the requested resource")

    # -- resources
    def _parse(self, group: str, version: str, rest: list[str]) -> _Request:
        reg = self.api.store.registry
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3 and rest[2] not in ("status", "finalize"):
            namespace, rest = rest[1], rest[2:]
        rt = reg.by_resource(group, version, rest[0])
        if rt is None or len(rest) > 3:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if namespace is not None and not rt.namespaced:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        if rt.namespaced and namespace is None and name is not None:  # no such route without a namespace
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if sub and not (sub == "status" and rt.has_status) and not (sub == "log" and rt.kind == "Pod" and not rt.group) \
                and not (sub == "finalize" and rt.kind == "Namespace") and not (sub == "scale" and rt.has_scale):
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return _Request(rt, namespace, name, sub)

    def _resource(self, method: str, group: str, version: str, rest: list[str]) -> None:
        req = self._parse(group, version, rest)
        try:
            self._verb(method, req)
        except UnknownKind as e:
            raise ApiError(404, "NotFound", str(e)) from None
        except (NotFound, Conflict, Invalid, Forbidden, patching.PatchError, patching.ApplyConflict) as e:
            # errors name the object, also on a create where the URL has no name
            raise self._status_error(e, req, req.name or self._body_name or "") from None

    @staticmethod
    def _status_error(e: Exception, req: _Request, name: str) -> ApiError:
        """Map a store error to the Status the real API server answers with."""
        ref = {"name": name, "group": req.rt.group, "kind": req.rt.plural}
        if isinstance(e, NotFound):
            if str(e).startswith("namespaces "):
                return ApiError(404, "NotFound", str(e), {"name": str(e).split('"')[1], "kind": "namespaces"})
            return ApiError(404, "NotFound", str(e), ref)
        if isinstance(e, AlreadyExists):
            return ApiError(409, "AlreadyExists", str(e), ref)
        if isinstance(e, patching.ApplyConflict):
            causes = [{"reason": "FieldManagerConflict", "message": f'conflict with "{m}" using {v}', "field": p}
                      for m, v, p in e.conflicts]
            return ApiError(409, "Conflict", str(e), dict(ref, causes=causes))
        if isinstance(e, Conflict):
            return ApiError(409, "Conflict", str(e), ref)
        if isinstance(e, Invalid):
            causes = [{"reason": "FieldValueInvalid", "message": c, "field": c.split(":", 1)[0]}
                      for c in getattr(e, "causes", [])]
            return ApiError(422, "Invalid", str(e), dict(ref, kind=req.rt.kind, causes=causes))
        if isinstance(e, Forbidden):
            return ApiError(403, "Forbidden", str(e), ref)
        return ApiError(422, "Invalid", str(e))

    def _verb(self, method: str, req: _Request) -> None:
        if req.sub == "log":
            if method != "GET":
                raise _not_allowed()
            return self._logs(req)
        if req.sub == "scale":
            return self._scale(method, req)
        if req.name is None:
            if method in ("GET", "HEAD"):
                if self.query.get("watch") in ("1", "true", "True"):
                    return self._watch(req)
                return self._list(req)
            if method == "POST":
                return self._create(req)
            if method == "DELETE":
                return self._delete_collection(req)
            raise _not_allowed()
        if method in ("GET", "HEAD"):
            obj = self.api.store.get_rt(req.rt, req.namespace, req.name)
            if obj is None:
                raise NotFound(f'{qualified(req.rt)} "{req.name}" not found')
            return self._send_obj(200, req.rt, obj)
        if method == "PUT":
            return self._update(req)
        if method == "PATCH":
            return self._patch(req)
        if method == "DELETE":
            return self._delete(req)
        if method == "POST":
            raise _not_allowed()
        raise _not_allowed()

    # -- reads
    def _wants_table(self) -> bool:
        return _TABLE_ACCEPT in self.headers.get("Accept", "")

    def _send_obj(self, code: int, rt: ResourceType, obj: Obj, headers: dict[str, str] | None = None) -> None:
        if self._wants_table():
            t = tables.table(rt, [obj], obj.get("metadata", {}).get("resourceVersion", ""),
                             self.query.get("includeObject", "Metadata"))
            return self._send_json(code, t, headers)
        self._send_json(code, obj, headers)

    def _selectors(self, req: _Request) -> tuple[Callable[[dict[str, str]], bool], Callable[[Obj], bool]]:
        try:
            labels = parse_label_selector(self.query.get("labelSelector"))
            fields = parse_field_selector(self.query.get("fieldSelector"))
        except ValueError as e:
            raise ApiError(400, "BadRequest", str(e)) from None
        return labels, fields

    def _list(self, req: _Request) -> None:
        labels, fields = self._selectors(req)
        items, rv = self.api.store.list_rt(req.rt, req.namespace, labels, fields)
        if self._wants_table():
            return self._send_json(200, tables.table(req.rt, items, rv, self.query.get("includeObject", "Metadata")))
        for o in items:
            o.pop("apiVersion", None)
            o.pop("kind", None)
        self._send_json(200, {"kind": req.rt.kind + "List", "apiVersion": req.rt.api_version,
                              "metadata": {"resourceVersion": rv}, "items": items})

    def _watch(self, req: _Request) -> None:
        store = self.api.store
        labels, fields = self._selectors(req)
        timeout = _float(self.query.get("timeoutSeconds"), 1800.0)
        deadline = time.monotonic() + timeout
        rv_param = self.query.get("resourceVersion", "")
        bookmarks = self.query.get("allowWatchBookmarks") in ("1", "true", "True")
        as_table = self._wants_table()
        include = self.query.get("includeObject", "Metadata")
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        self.close_connection = True
        first = [True]

        def emit(etype: str, obj: Obj) -> None:
            if as_table and etype != "ERROR" and etype != "BOOKMARK":
                obj = tables.table(req.rt, [obj], obj["metadata"].get("resourceVersion", ""), include,
                                   with_columns=first[0])
                first[0] = False
            self._chunk(json.dumps({"type": etype, "object": obj}, separators=(",", ":")).encode() + b"\n")

        def matches(obj: Obj) -> bool:
            meta = obj.get("metadata") or {}
            if req.namespace and req.rt.namespaced and meta.get("namespace") != req.namespace:
                return False
            return labels(meta.get("labels") or {}) and fields(obj)

        initial = self.query.get("sendInitialEvents") in ("true", "1", "True")
        try:
            if rv_param in ("", "0") or initial:
                items, rv = store.list_rt(req.rt, req.namespace, labels, fields)
                cursor = int(rv)
                for o in items:
                    emit("ADDED", o)
                if initial:
                    # watch-list (client-go's streaming list) waits for this marker
                    emit("BOOKMARK", {"kind": req.rt.kind, "apiVersion": req.rt.api_version, "metadata": {
                        "resourceVersion": rv, "annotations": {"k8s.io/initial-events-end": "true"}}})
            else:
                try:
                    cursor = int(rv_param)
                except ValueError:
                    raise ApiError(400, "BadRequest", f"invalid resourceVersion {rv_param!r}") from None
            last_bookmark = time.monotonic()
            while not self.api.stopping.is_set():
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    events = store.events_after(cursor, min(left, 1.0))
                except Gone as e:
                    emit("ERROR", status_obj(410, "Expired", str(e)))
                    break
                for ev in events:
                    cursor = ev.rv
                    if ev.key != req.rt.key:
                        continue
                    etype = _filtered_type(ev.type, matches(ev.obj), ev.prev is not None and matches(ev.prev))
                    if etype:
                        emit(etype, dict(ev.obj, apiVersion=req.rt.api_version))
                if bookmarks and time.monotonic() - last_bookmark > 10:
                    last_bookmark = time.monotonic()
                    emit("BOOKMARK", {"kind": req.rt.kind, "apiVersion": req.rt.api_version,
                                      "metadata": {"resourceVersion": str(cursor)}})
                elif not events and _peer_closed(self.connection):
                    return
            self._chunk(b"")
        except ApiError as e:
            emit("ERROR", status_obj(e.code, e.reason, e.message))
            self._chunk(b"")

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _logs(self, req: _Request) -> None:
        pod = self.api.store.get_rt(req.rt, req.namespace, req.name or "")
        if pod is None:
            raise NotFound(f'pods "{req.name}" not found')
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        container = self.query.get("container", "")
        if container and container not in containers:
            raise ApiError(400, "BadRequest", f"container {container} is not valid for pod {name}")
        if not container and len(containers) > 1:
            raise ApiError(400, "BadRequest", f"a container name must be specified for pod {name}, "
                                              f"choose one of: [{' '.join(map(str, containers))}]")
        logs = self.api.pod_logs

        first = str(containers[0]) if containers else ""
        want = container or first

        def read() -> list[str]:
            # lines appended without a container name belong to the first container
            unnamed = logs.lines(ns, name, "") if want == first else []
            return unnamed + (logs.lines(ns, name, want) if want else [])

        if self.query.get("previous") in ("true", "1", "True"):
            lines = self._previous_run(pod, want)
        else:
            lines = read()
        tail = self.query.get("tailLines")
        if tail is not None:
            n = int(_float(tail, 0))
            lines = lines[-n:] if n > 0 else []
        if self.query.get("follow") not in ("true", "1", "True") or self.query.get("previous") in ("true", "1", "True"):
            return self._send_bytes(200, "".join(ln + "\n" for ln in lines).encode(), "text/plain")
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.close_connection = True
        sent = len(read())
        if lines:
            self._chunk("".join(ln + "\n" for ln in lines).encode())
        seq = logs.sequence()
        while not self.api.stopping.is_set():
            seq = logs.wait(seq, 1.0)
            if self.api.store.get_rt(req.rt, ns, name) is None or _peer_closed(self.connection):
                break
            now_lines = read()
            if len(now_lines) > sent:
                self._chunk("".join(ln + "\n" for ln in now_lines[sent:]).encode())
            sent = len(now_lines)
        self._chunk(b"")

    def _previous_run(self, pod: Obj, container: str) -> list[str]:
        """previous=true: the kubelet serves the container of lastState.terminated. A container
        waiting to restart has no newer run, so that is the run its current log shows; a running
        one's is the run before it."""
        ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
        statuses = (pod.get("status") or {}).get("containerStatuses") or []
        cs: Obj = next((c for c in statuses if c.get("name") == container), {})
        if not ((cs.get("lastState") or {}).get("terminated")):
            raise ApiError(400, "BadRequest", f'previous terminated container "{container}" in pod "{name}" not found')
        if "running" in (cs.get("state") or {}):
            return self.api.pod_logs.previous(ns, name, container) or []
        return self.api.pod_logs.lines(ns, name, container)

    def _scale(self, method: str, req: _Request) -> None:
        """The scale subresource: an autoscaling/v1 Scale view of .spec.replicas."""
        store = self.api.store
        obj = store.get_rt(req.rt, req.namespace, req.name or "")
        if obj is None:
            raise NotFound(f'{qualified(req.rt)} "{req.name}" not found')
        if method in ("PUT", "PATCH"):
            cur = _scale_of(obj)
            body = self._json_body()
            ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
            if method == "PUT":
                new = body
            elif ctype == "application/json-patch+json":
                new = patching.json_patch(cur, body)
            else:
                new = patching.merge_patch(cur, body)
            replicas = (new.get("spec") or {}).get("replicas") if isinstance(new, dict) else None
            if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
                raise InvalidObject("Scale is invalid: spec.replicas: must be a non-negative integer",
                                    ["spec.replicas: Invalid value"])
            obj.setdefault("spec", {})["replicas"] = replicas
            obj = store.update_rt(req.rt, req.namespace, req.name or "", obj, self._manager(), None, self._dry_run())
        elif method not in ("GET", "HEAD"):
            raise _not_allowed()
        self._send_json(200, _scale_of(obj))

    # -- writes
    def _manager(self, default_from_agent: bool = True) -> str:
        m = self.query.get("fieldManager")
        if m:
            return m
        agent = self.headers.get("User-Agent", "unknown")
        return agent.split("/", 1)[0] or "unknown"

    def _dry_run(self) -> bool:
        dr = self.query.get("dryRun")
        if dr is None:
            return False
        if dr != "All":
            raise ApiError(400, "BadRequest", f"Invalid dry run value: {dr!r}")
        return True

    def _check_fields(self, req: _Request, obj: Any) -> dict[str, str]:
        """fieldValidation=Strict|Warn|Ignore on unknown fields; returns extra headers."""
        mode = self.query.get("fieldValidation", "Warn")
        if mode == "Ignore" or not isinstance(obj, dict):
            return {}
        # apiVersion/kind/metadata are always known (CRD schemas need not declare them)
        skip = ("apiVersion", "kind", "metadata") if req.rt.crd_schema is not None else ("apiVersion", "kind")
        unknown = unknown_fields(req.rt.schema(), {k: v for k, v in obj.items() if k not in skip}, "")
        if not unknown:
            return {}
        if mode == "Strict":
            msg = ", ".join(f'unknown field "{u.lstrip(".")}"' for u in unknown)
            raise ApiError(400, "BadRequest", f"strict decoding error: {msg}")
        return {"Warning": ", ".join(f'299 - "unknown field \\"{u.lstrip(".")}\\""' for u in unknown)}

    def _body_object(self, req: _Request) -> Obj:
        obj = self._json_body(yaml_ok=True)
        if not isinstance(obj, dict):
            raise ApiError(400, "BadRequest", "the request body must be an object")
        meta = obj.get("metadata")
        if isinstance(meta, dict) and isinstance(meta.get("name"), str):
            self._body_name = meta["name"]
        return obj

    def _check_identity(self, req: _Request, obj: Obj) -> None:
        av, kind = obj.get("apiVersion"), obj.get("kind")
        if (av and av != req.rt.api_version) or (kind and kind != req.rt.kind):
            raise ApiError(400, "BadRequest",
                           f"the API version in the data ({av}) does not match the expected API version ({req.rt.api_version})"
                           if av != req.rt.api_version else f"the kind in the data ({kind}) does not match {req.rt.kind}")
        meta = obj.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise ApiError(400, "BadRequest", "metadata must be an object")
        ns = (meta or {}).get("namespace")
        if req.rt.namespaced and req.namespace and ns and ns != req.namespace:
            raise ApiError(400, "BadRequest", "the namespace of the provided object does not match the namespace sent on the request")
        if req.name and (meta or {}).get("name") and meta["name"] != req.name:  # type: ignore[index]
            raise ApiError(400, "BadRequest", "the name of the object does not match the name on the URL")

    def _create(self, req: _Request) -> None:
        obj = self._body_object(req)
        self._check_identity(req, obj)
        headers = self._check_fields(req, obj)
        if req.rt.namespaced and not req.namespace:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        out = self.api.store.create_rt(req.rt, obj, self._manager(), self._dry_run(), namespace=req.namespace)
        self._send_obj(201, req.rt, out, headers)

    def _update(self, req: _Request) -> None:
        obj = self._body_object(req)
        self._check_identity(req, obj)
        headers = self._check_fields(req, obj)
        sub = "status" if req.sub == "status" else None
        out = self.api.store.update_rt(req.rt, req.namespace, req.name or "", obj, self._manager(), sub, self._dry_run())
        self._send_obj(200, req.rt, out, headers)

    def _patch(self, req: _Request) -> None:
        ctype = self.headers.get("Content-Type", "").split(";")[0].strip()
        store = self.api.store
        sub = "status" if req.sub == "status" else None
        dry = self._dry_run()
        if ctype == "application/apply-patch+yaml":
            cfg = self._body_object(req)
            if not self.query.get("fieldManager"):
                raise ApiError(400, "BadRequest", "PATCH request to an apply endpoint requires a fieldManager query parameter")
            self._check_identity(req, cfg)
            if not cfg.get("apiVersion") or not cfg.get("kind"):
                raise ApiError(400, "BadRequest", "apiVersion and kind must be set in an apply request")
            headers = self._check_fields(req, cfg)
            force = self.query.get("force") in ("true", "1", "True")
            out = store.apply_rt(req.rt, req.namespace, req.name or "", cfg, self.query["fieldManager"], sub, force, dry)
            return self._send_obj(200, req.rt, out, headers)
        if ctype not in ("application/json-patch+json", "application/merge-patch+json",
                         "application/strategic-merge-patch+json"):
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: "
                                                        "application/json-patch+json, application/merge-patch+json, "
                                                        "application/apply-patch+yaml, application/strategic-merge-patch+json")
        body = self._json_body()
        for _attempt in range(5):  # retry if another writer got in between read and write
            cur = store.get_rt(req.rt, req.namespace, req.name or "")
            if cur is None:
                raise NotFound(f'{qualified(req.rt)} "{req.name}" not found')
            if ctype == "application/json-patch+json":
                new = patching.json_patch(cur, body)
            elif ctype == "application/merge-patch+json":
                if not isinstance(body, dict):
                    raise ApiError(400, "BadRequest", "a merge patch must be a JSON object")
                new = patching.merge_patch(cur, body)
            else:
                if not isinstance(body, dict):
                    raise ApiError(400, "BadRequest", "a strategic merge patch must be a JSON object")
                new = patching.strategic_merge(cur, body, req.rt.schema())
            if not isinstance(new, dict):
                raise ApiError(422, "Invalid", "the patch result is not an object")
            headers = self._check_fields(req, new)
            patched_rv = (new.get("metadata") or {}).get("resourceVersion")
            want_rv = patched_rv if patched_rv != cur["metadata"]["resourceVersion"] else None
            meta = new.setdefault("metadata", {}) if isinstance(new.get("metadata"), dict) else None
            if meta is None:
                raise ApiError(422, "Invalid", "metadata must be an object")
            meta["resourceVersion"] = want_rv or cur["metadata"]["resourceVersion"]
            try:
                out = store.update_rt(req.rt, req.namespace, req.name or "", new, self._manager(), sub, dry)
            except Conflict:
                if want_rv:
                    raise
                continue
            return self._send_obj(200, req.rt, out, headers)
        raise Conflict(f'Operation cannot be fulfilled on {qualified(req.rt)} "{req.name}": too many concurrent writers')

    def _delete_options(self) -> Obj:
        opts: Obj = {}
        if self.headers.get("Content-Type", "").startswith("application/vnd.kubernetes.protobuf"):
            try:
                opts = protobuf.decode_delete_options(self._read_body())
            except (protobuf.ProtobufUnsupported, UnicodeDecodeError, IndexError) as e:
                raise ApiError(415, "UnsupportedMediaType", str(e)) from None
            for k in ("propagationPolicy", "dryRun"):
                if k in self.query:
                    opts[k] = self.query[k]
            return opts
        if self._content_length() > 0 or self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            body = self._json_body()
            if isinstance(body, dict):
                opts = body
        for k in ("propagationPolicy", "dryRun"):
            if k in self.query:
                opts[k] = self.query[k]
        return opts

    def _delete(self, req: _Request) -> None:
        opts = self._delete_options()
        dry = opts.get("dryRun") in ("All", ["All"])
        pre = opts.get("preconditions") or {}
        if "orphanDependents" in opts and opts["orphanDependents"]:
            opts["propagationPolicy"] = "Orphan"
        out = self.api.store.delete_rt(req.rt, req.namespace, req.name or "", dry,
                                       str(opts.get("propagationPolicy") or "Background"),
                                       pre.get("resourceVersion"), pre.get("uid"))
        self._send_obj(200, req.rt, out)

    def _delete_collection(self, req: _Request) -> None:
        opts = self._delete_options()
        dry = opts.get("dryRun") in ("All", ["All"])
        labels, fields = self._selectors(req)
        items, _list_rv = self.api.store.list_rt(req.rt, req.namespace, labels, fields)
        deleted = []
        for o in items:
            try:
                deleted.append(self.api.store.delete_rt(req.rt, o["metadata"].get("namespace"), o["metadata"]["name"], dry,
                                                        str(opts.get("propagationPolicy") or "Background")))
            except NotFound:
                continue
        for o in deleted:
            o.pop("apiVersion", None)
            o.pop("kind", None)
        self._send_json(200, {"kind": req.rt.kind + "List", "apiVersion": req.rt.api_version,
                              "metadata": {"resourceVersion": self.api.store.resource_version}, "items": deleted})


def _scale_of(obj: Obj) -> Obj:
    meta = obj["metadata"]
    sel = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta},
            "spec": {"replicas": (obj.get("spec") or {}).get("replicas", 0)},
            "status": {"replicas": (obj.get("status") or {}).get("replicas", 0),
                       "selector": ",".join(f"{k}={v}" for k, v in sorted(sel.items()))}}


def _filtered_type(etype: str, now_matches: bool, before_matched: bool) -> str | None:
    """A selector watch sees an object enter (ADDED) or leave (DELETED) its selection."""
    if etype == "MODIFIED":
        if now_matches and not before_matched:
            return "ADDED"
        if before_matched and not now_matches:
            return "DELETED"
    return etype if now_matches else None


def _peer_closed(conn: socket.socket) -> bool:
    """A watch client sends nothing; readability means it hung up."""
    try:
        readable = select.select([conn], [], [], 0)[0]
    except (OSError, ValueError):
        return True
    return bool(readable)


def _not_allowed() -> ApiError:
    return ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")


def _float(v: str | None, default: float) -> float:
    try:
        return float(v) if v not in (None, "") else default
    except ValueError:
        raise ApiError(400, "BadRequest", f"invalid number {v!r}") from None


def _version() -> Obj:
    major, minor, _patch = K8S_VERSION.lstrip("v").split(".")
    return {"major": major, "minor": minor, "gitVersion": K8S_VERSION + "-kindlab-twin",
            "gitCommit": "0000000000000000000000000000000000000000", "gitTreeState": "clean",
            "buildDate": "2026-01-01T00:00:00Z", "goVersion": "go1.24", "compiler": "gc",
            "platform": "linux/amd64"}


def _group_order(g: Obj) -> tuple[int, str]:
    # Built-in groups first (as the real server lists them), CRD groups after.
    name = g["name"]
    builtin = name.endswith(".k8s.io") or "." not in name
    return (0 if builtin else 1, name)


_JSON_CACHE: dict[str, bytes] = {}


def _cached_json(rest: list[str], doc: Obj) -> bytes:
    # Built-in documents never change; CRD ones change with their schemas (in the key).
    key = json.dumps([rest, sorted(doc["paths"]), [s for n, s in doc["components"]["schemas"].items()
                                                   if not n.startswith("io.k8s.")]], sort_keys=True)
    hit = _JSON_CACHE.get(key)
    if hit is None:
        hit = _JSON_CACHE[key] = json.dumps(doc, separators=(",", ":")).encode()
    return hit


__all__ = ["ApiServer", "ApiError", "status_obj"]
