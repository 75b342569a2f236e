"""A small Kubernetes API client for the twin's emulations, and the informer-style
cache (`CachedStore`) through which they read the real kube-apiserver.

Why not the `kubernetes` Python package: the emulations need a handful of verbs on plain
dicts, a watch that feeds a cache, and `fieldManager` on every write (the verification
modules name a status's writer from managedFields); a few hundred lines over http.client do
that without pulling the generated client into the twin process.

Every connection goes to the cluster's API server on 127.0.0.1 and never through an
HTTP(S)_PROXY of the environment.
"""
from __future__ import annotations

import copy
import http.client
import json
import logging
import ssl
import threading
import time
import urllib.parse
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Literal

from .collection import objects
from .contract import Conflict, EventType, Forbidden, Invalid, Listener, NotFound, Obj, ResourceRef

log = logging.getLogger("kindlab_twin.kubeapi")

WATCH_TIMEOUT_SECONDS = 300  # the server ends a watch after this; the informer re-watches
RETRY_WAIT = 0.5


class ApiError(Exception):
    """An answer of the API server that is none of NotFound/Conflict/Invalid/Forbidden."""


@dataclass(frozen=True)
class Credentials:
    """Where the API server is, and the client certificate (kind's kubeconfig user has one);
    a client without one authenticates with a bearer token (KubeClient's token_source)."""

    server: str  # https://127.0.0.1:PORT
    ca_file: str
    cert_file: str = ""
    key_file: str = ""

    def without_certificate(self) -> "Credentials":
        return Credentials(self.server, self.ca_file)


@dataclass(frozen=True)
class Resource:
    """Where a kind lives in the API: /api/v1 or /apis/GROUP/VERSION, its plural, its scope."""

    api_version: str
    kind: str
    plural: str
    namespaced: bool
    subresources: frozenset[str]

    def path(self, namespace: str | None = None, name: str = "", subresource: str = "") -> str:
        base = "/api/v1" if self.api_version == "v1" else f"/apis/{self.api_version}"
        if self.namespaced and namespace:
            base += f"/namespaces/{urllib.parse.quote(namespace)}"
        base += f"/{self.plural}"
        if name:
            base += f"/{urllib.parse.quote(name)}"
        if subresource:
            base += f"/{subresource}"
        return base


def _error_for(status: int, body: bytes, what: str) -> Exception:
    try:
        message = str(json.loads(body).get("message") or "")
    except ValueError:
        message = body.decode(errors="replace")[:300]
    # The server's own message, as client-go's error string is (logged verbatim by controllers).
    text = message or f"{what}: HTTP {status}"
    if status == 404:
        return NotFound(text)
    if status == 409:
        return Conflict(text)
    if status == 422:
        return Invalid(text)
    if status == 403:
        return Forbidden(text)
    return ApiError(f"{what}: {text} (HTTP {status})")


class KubeClient:
    """Verbs on one API server with one identity; thread-safe (a connection per thread)."""

    def __init__(self, creds: Credentials, user_agent: str = "kindlab-twin",
                 token_source: Callable[[], str] | None = None) -> None:
        self.creds = creds
        self.user_agent = user_agent
        self.token_source = token_source
        url = urllib.parse.urlsplit(creds.server)
        self._host, self._port = url.hostname or "127.0.0.1", url.port or 443
        self._ctx = ssl.create_default_context(cafile=creds.ca_file)
        if creds.cert_file:
            self._ctx.load_cert_chain(creds.cert_file, creds.key_file)
        self._local = threading.local()
        self._resources: dict[ResourceRef, Resource] = {}
        self._lock = threading.Lock()

    # -- transport ------------------------------------------------------------------------------
    def connect(self, timeout: float | None = 30.0) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self._host, self._port, context=self._ctx, timeout=timeout)

    def headers(self, content_type: str = "application/json") -> dict[str, str]:
        h = {"Accept": "application/json", "User-Agent": self.user_agent, "Content-Type": content_type}
        if self.token_source is not None:
            h["Authorization"] = f"Bearer {self.token_source()}"
        return h

    def request(self, method: str, path: str, body: Any = None, content_type: str = "application/json",
                what: str = "") -> Any:
        data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
        for attempt in (1, 2):
            conn: http.client.HTTPSConnection | None = getattr(self._local, "conn", None)
            if conn is None:
                conn = self._local.conn = self.connect()
            try:
                conn.request(method, path, body=data, headers=self.headers(content_type))
                resp = conn.getresponse()
                raw = resp.read()
            except (OSError, http.client.HTTPException):
                conn.close()
                self._local.conn = None
                if attempt == 2:
                    raise
                continue
            if resp.status >= 400:
                raise _error_for(resp.status, raw, what or f"{method} {path}")
            return json.loads(raw) if raw[:1] in (b"{", b"[") else raw.decode()
        raise AssertionError("unreachable")

    # -- discovery ------------------------------------------------------------------------------
    def resource(self, ref: ResourceRef) -> Resource:
        """The kind's place in the API (discovery, cached; re-read once for a kind not yet
        known, e.g. a CRD installed after the first lookup). NotFound if not served."""
        with self._lock:
            found = self._resources.get(ref)
        if found:
            return found
        api_version, kind = ref
        path = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
        try:
            doc = self.request("GET", path)
        except NotFound:
            raise NotFound(f"the server does not serve {api_version}") from None
        subs: dict[str, set[str]] = {}
        for r in doc.get("resources") or []:
            name = str(r.get("name", ""))
            if "/" in name:
                base, sub = name.split("/", 1)
                subs.setdefault(base, set()).add(sub)
        with self._lock:
            for r in doc.get("resources") or []:
                if "/" not in str(r.get("name", "")):
                    res = Resource(api_version, r["kind"], r["name"], bool(r.get("namespaced")),
                                   frozenset(subs.get(r["name"], ())))
                    self._resources[(api_version, r["kind"])] = res
            found = self._resources.get(ref)
        if not found:
            raise NotFound(f"the server does not serve kind {kind} in {api_version}")
        return found

    # -- verbs ----------------------------------------------------------------------------------
    def get(self, ref: ResourceRef, namespace: str | None, name: str) -> Obj | None:
        res = self.resource(ref)
        try:
            obj = self.request("GET", res.path(namespace, name))
        except NotFound:
            return None
        return _with_kind(obj, res)

    def list(self, ref: ResourceRef, namespace: str | None = None,
             label_selector: dict[str, str] | None = None) -> tuple[list[Obj], str]:
        """Items and the list's resourceVersion."""
        res = self.resource(ref)
        path = res.path(namespace)
        if label_selector:
            path += "?" + urllib.parse.urlencode({"labelSelector": _selector(label_selector)})
        doc = self.request("GET", path)
        items = [_with_kind(i, res) for i in doc.get("items") or []]
        return items, str((doc.get("metadata") or {}).get("resourceVersion") or "")

    def create(self, obj: Obj, manager: str, subresource: str = "") -> Obj:
        res = self.resource(_ref(obj))
        ns = obj.get("metadata", {}).get("namespace")
        name = obj.get("metadata", {}).get("name", "") if subresource else ""
        path = res.path(ns, name, subresource) + "?" + urllib.parse.urlencode({"fieldManager": manager})
        return _with_kind(self.request("POST", path, obj, what=f"create {obj.get('kind')} {_key(obj)}"), res)

    def update(self, obj: Obj, manager: str, subresource: Literal["status"] | None = None) -> Obj:
        res = self.resource(_ref(obj))
        m = obj.get("metadata", {})
        path = res.path(m.get("namespace"), m["name"], subresource or "")
        path += "?" + urllib.parse.urlencode({"fieldManager": manager})
        return _with_kind(self.request("PUT", path, obj, what=f"update {obj.get('kind')} {_key(obj)}"), res)

    def apply(self, obj: Obj, manager: str, subresource: Literal["status"] | None = None,
              force: bool = True) -> Obj:
        res = self.resource(_ref(obj))
        m = obj.get("metadata", {})
        path = res.path(m.get("namespace"), m["name"], subresource or "")
        path += "?" + urllib.parse.urlencode({"fieldManager": manager, "force": "true" if force else "false"})
        return _with_kind(self.request("PATCH", path, obj, "application/apply-patch+yaml",
                                       what=f"apply {obj.get('kind')} {_key(obj)}"), res)

    def delete(self, ref: ResourceRef, namespace: str | None, name: str, grace_seconds: int | None = None) -> None:
        res = self.resource(ref)
        body: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"}
        if grace_seconds is not None:
            body["gracePeriodSeconds"] = grace_seconds
        self.request("DELETE", res.path(namespace, name), body, what=f"delete {ref[1]} {namespace or ''}/{name}")

    def watch(self, ref: ResourceRef, resource_version: str,
              stop: threading.Event) -> Iterator[tuple[str, Obj]]:
        """(type, object) events from RESOURCE_VERSION on, until the server ends the watch or
        `stop` is set; BOOKMARKs included (their object carries the resourceVersion)."""
        res = self.resource(ref)
        query = urllib.parse.urlencode({"watch": "1", "resourceVersion": resource_version,
                                        "allowWatchBookmarks": "true",
                                        "timeoutSeconds": str(WATCH_TIMEOUT_SECONDS)})
        conn = self.connect(timeout=WATCH_TIMEOUT_SECONDS + 30)
        try:
            conn.request("GET", f"{res.path()}?{query}", headers=self.headers())
            resp = conn.getresponse()
            if resp.status >= 400:
                raise _error_for(resp.status, resp.read(), f"watch {ref[1]}")
            self._watches_add(conn, stop)
            while not stop.is_set():
                line = resp.readline()
                if not line:
                    return
                if not line.strip():
                    continue
                ev = json.loads(line)
                obj = ev.get("object") or {}
                if ev.get("type") == "ERROR":
                    raise _error_for(int(obj.get("code") or 500), json.dumps(obj).encode(), f"watch {ref[1]}")
                yield str(ev.get("type")), _with_kind(obj, res)
        finally:
            conn.close()

    def _watches_add(self, conn: http.client.HTTPSConnection, stop: threading.Event) -> None:
        """Close the watch's socket when `stop` is set, so a blocked read returns at once."""
        def closer() -> None:
            stop.wait()
            sock = conn.sock
            if sock is not None:
                try:
                    sock.shutdown(2)
                except OSError:
                    pass
        threading.Thread(target=closer, name="watch-closer", daemon=True).start()

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


def _ref(obj: Obj) -> ResourceRef:
    return (str(obj.get("apiVersion", "")), str(obj.get("kind", "")))


def _key(obj: Obj) -> str:
    m = obj.get("metadata", {})
    return f"{m.get('namespace') + '/' if m.get('namespace') else ''}{m.get('name', '')}"


def _with_kind(obj: Obj, res: Resource) -> Obj:
    """List items come without apiVersion/kind; emulations expect every object to carry them."""
    if isinstance(obj, dict):
        obj.setdefault("apiVersion", res.api_version)
        obj.setdefault("kind", res.kind)
    return obj


def _selector(labels: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def _rv(obj: Obj) -> int:
    try:
        return int(obj.get("metadata", {}).get("resourceVersion") or 0)
    except ValueError:
        return 0


class Informer:
    """A list-then-watch cache of one kind across all namespaces (client-go's reflector, small)."""

    def __init__(self, client: KubeClient, ref: ResourceRef, emit: Callable[[EventType, Obj], None]) -> None:
        self.client = client
        self.ref = ref
        self.emit = emit
        self.items: dict[tuple[str, str], Obj] = {}
        self.lock = threading.Lock()
        self.synced = threading.Event()
        self.stopped = threading.Event()
        self._rv = ""
        self._thread = threading.Thread(target=self._run, name=f"informer-{ref[1]}", daemon=True)

    def start(self, timeout: float = 30.0) -> None:
        """Start; returns once the first list is in the cache (raises what the list raised)."""
        items, rv = self.client.list(self.ref)
        self._replace(items, rv)
        self.synced.set()
        self._thread.start()

    def stop(self) -> None:
        self.stopped.set()

    def _replace(self, items: list[Obj], rv: str) -> None:
        new = {(i["metadata"].get("namespace") or "", i["metadata"]["name"]): i for i in items}
        with self.lock:
            old, self.items, self._rv = self.items, new, rv
        for k, obj in new.items():
            before = old.get(k)
            if before is None:
                self.emit("ADDED", obj)
            elif _rv(before) != _rv(obj):
                self.emit("MODIFIED", obj)
        for k, obj in old.items():
            if k not in new:
                self.emit("DELETED", obj)

    def observe(self, event: EventType, obj: Obj) -> None:
        """Put an object into the cache (a watch event, or the answer to our own write)."""
        k = (obj["metadata"].get("namespace") or "", obj["metadata"]["name"])
        with self.lock:
            cur = self.items.get(k)
            if cur is not None and _rv(cur) > _rv(obj):
                return  # older than what we hold
            if event == "DELETED":
                if cur is None:
                    return
                self.items.pop(k, None)
            else:
                if cur is not None and _rv(cur) == _rv(obj):
                    return
                self.items[k] = obj
        self.emit(event, obj)

    def _run(self) -> None:
        while not self.stopped.is_set():
            try:
                for etype, obj in self.client.watch(self.ref, self._rv, self.stopped):
                    rv = str(obj.get("metadata", {}).get("resourceVersion") or "")
                    if etype in ("ADDED", "MODIFIED", "DELETED"):
                        self.observe(etype, obj)  # type: ignore[arg-type]
                    if rv:
                        self._rv = rv
            except Exception as exc:  # noqa: BLE001 - the watch is re-established below
                if self.stopped.is_set():
                    return
                expired = isinstance(exc, ApiError) and "410" in str(exc) or "too old" in str(exc)
                log.debug("watch %s ended: %s", self.ref[1], exc)
                if expired:
                    self._relist()
                    continue
                self.stopped.wait(RETRY_WAIT)
                if not self.stopped.is_set():
                    self._relist()

    def _relist(self) -> None:
        try:
            items, rv = self.client.list(self.ref)
        except Exception as exc:  # noqa: BLE001 - retried by the loop
            log.debug("relist %s failed: %s", self.ref[1], exc)
            self.stopped.wait(RETRY_WAIT)
            return
        self._replace(items, rv)


class CachedStore:
    """contract.Store over the real API server: lists and gets of a watched kind read an
    informer's cache (started on the first list of that kind), other gets go to the server;
    writes go to the server and their answers into the cache, so a controller sees its own
    write at once."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client
        self._informers: dict[ResourceRef, Informer] = {}
        self._listeners: list[Listener] = []
        self._lock = threading.Lock()

    def _emit(self, event: EventType, obj: Obj) -> None:
        for listener in list(self._listeners):
            try:
                listener(event, copy.deepcopy(obj))
            except Exception:  # noqa: BLE001 - one listener must not break the others
                log.exception("listener failed")

    def informer(self, ref: ResourceRef) -> Informer:
        with self._lock:
            inf = self._informers.get(ref)
            if inf is not None:
                return inf
            inf = Informer(self.client, ref, self._emit)
            inf.start()  # raises NotFound for a kind not served: nothing is cached then
            self._informers[ref] = inf
            return inf

    def get(self, ref: ResourceRef, namespace: str | None, name: str) -> Obj | None:
        inf = self._informers.get(ref)
        if inf is None:
            return self.client.get(ref, namespace, name)
        with inf.lock:
            obj = inf.items.get((namespace or "", name))
        return copy.deepcopy(obj) if obj is not None else None

    def list(self, ref: ResourceRef, namespace: str | None = None,
             label_selector: dict[str, str] | None = None) -> list[Obj]:
        inf = self.informer(ref)
        with inf.lock:
            items = list(inf.items.values())
        out = []
        for obj in items:
            m = obj.get("metadata", {})
            if namespace is not None and (m.get("namespace") or "") != namespace:
                continue
            if label_selector and not objects.selects({"matchLabels": label_selector}, m.get("labels"), form="LabelSelector"):
                continue  # {} and None select everything, as a list without a selector
            out.append(copy.deepcopy(obj))
        return out

    def _observed(self, obj: Obj, event: EventType = "MODIFIED") -> Obj:
        inf = self._informers.get(_ref(obj))
        if inf is not None:
            inf.observe(event, copy.deepcopy(obj))
        return obj

    def create(self, obj: Obj, manager: str) -> Obj:
        return self._observed(self.client.create(obj, manager), "ADDED")

    def update(self, obj: Obj, manager: str, subresource: Literal["status"] | None = None) -> Obj:
        return self._observed(self.client.update(obj, manager, subresource))

    def apply(self, obj: Obj, manager: str, subresource: Literal["status"] | None = None,
              force: bool = True) -> Obj:
        return self._observed(self.client.apply(obj, manager, subresource, force))

    def delete(self, ref: ResourceRef, namespace: str | None, name: str) -> None:
        self.client.delete(ref, namespace, name)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)
        return unsubscribe

    def close(self) -> None:
        for inf in list(self._informers.values()):
            inf.stop()
        self.client.close()


def wait_until(pred: Callable[[], bool], timeout: float, interval: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return False


class DirectStore:
    """contract.Store with no cache: every call is a request with this client's identity."""

    def __init__(self, client: KubeClient) -> None:
        self.client = client

    def get(self, ref: ResourceRef, namespace: str | None, name: str) -> Obj | None:
        return self.client.get(ref, namespace, name)

    def list(self, ref: ResourceRef, namespace: str | None = None,
             label_selector: dict[str, str] | None = None) -> list[Obj]:
        return self.client.list(ref, namespace, label_selector)[0]

    def create(self, obj: Obj, manager: str) -> Obj:
        return self.client.create(obj, manager)

    def update(self, obj: Obj, manager: str, subresource: Literal["status"] | None = None) -> Obj:
        return self.client.update(obj, manager, subresource)

    def apply(self, obj: Obj, manager: str, subresource: Literal["status"] | None = None,
              force: bool = True) -> Obj:
        return self.client.apply(obj, manager, subresource, force)

    def delete(self, ref: ResourceRef, namespace: str | None, name: str) -> None:
        self.client.delete(ref, namespace, name)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        raise NotImplementedError("a DirectStore has no watch; subscribe to the twin's CachedStore (ClusterHandle.store)")

    def close(self) -> None:
        self.client.close()


TOKEN_SECONDS = 3600


class ServiceAccountToken:
    """Bearer tokens of one ServiceAccount from the TokenRequest API, renewed when 80 % of
    their life has passed (as the kubelet renews a pod's projected token). Not bound to the
    pod: the twin's kwok removes a deleted pod at once, while the real controller still writes
    during its shutdown, when its pod object still exists."""

    def __init__(self, admin: KubeClient, namespace: str, name: str, seconds: int = TOKEN_SECONDS) -> None:
        self.admin, self.namespace, self.name, self.seconds = admin, namespace, name, seconds
        self._token = ""
        self._renew_at = 0.0
        self._lock = threading.Lock()

    def __call__(self) -> str:
        with self._lock:
            if not self._token or time.monotonic() >= self._renew_at:
                body = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                        "spec": {"audiences": [], "expirationSeconds": self.seconds}}
                path = (f"/api/v1/namespaces/{urllib.parse.quote(self.namespace)}/serviceaccounts/"
                        f"{urllib.parse.quote(self.name)}/token")
                answer = self.admin.request("POST", path, body,
                                            what=f"token for serviceaccount {self.namespace}/{self.name}")
                self._token = str(answer["status"]["token"])
                self._renew_at = time.monotonic() + 0.8 * self.seconds
            return self._token
