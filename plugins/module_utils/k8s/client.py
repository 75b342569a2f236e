# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes client every module goes through (Client): server-side apply with the
collection's field manager and change detection by a dry-run apply, bounded watches and lists,
pod logs, exec and the pod proxy; a server that does not answer or refuses us is one line
(errors). Requests go through rest.py's urllib3 connection; the kubernetes package is imported
only for an exec (its websocket stream) and a kubeconfig whose credentials come from a plugin."""
from __future__ import annotations

import builtins
import contextlib
import importlib.util
import json
import math
import os
import ssl
from typing import Any, Iterator

from ansible_collections.kindlab.ingress.plugins.module_utils._versions import FIELD_MANAGER
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import YAML_IMPORT_ERROR
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.apply import ApplyResult, apply_order, comparable
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import (
    TRANSPORT_ERRORS, ApiRejected, ApiUnreachable, K8sError, KindNotServed, WatchExpired, WatchForbidden,
    WatchInterrupted, api_server_description, exception_chain, one_line, rejected_message, transport_cause,
    unreachable_message,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.kubeconfig import LOADER_HINT, kubeconfig_paths, read_kubeconfig, unusable
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import Obj, ref_of
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.podaccess import (
    ExecResult, exec_outcome, handshake_status, status_message,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.rest import (
    URLLIB3_IMPORT_ERROR, ApiError, ApiResource, Connection, Discovery, settings_from_kubeconfig,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.watch import (
    LIST_READ_TIMEOUT, WATCH_CONNECT_TIMEOUT, WATCH_DEFAULT_SECONDS, WATCH_READ_SLACK, parse_watch_line, watch_lines,
)

# Whether the client's libraries are there: urllib3 (rest.py's guarded import), PyYAML and the kubernetes
# package (looked up, not imported: an exec imports it). Modules never import them themselves;
# _module.KindlabModule turns K8S_IMPORT_ERROR into missing_required_lib.
K8S_IMPORT_ERROR: str | None = URLLIB3_IMPORT_ERROR or YAML_IMPORT_ERROR
if K8S_IMPORT_ERROR is None and importlib.util.find_spec("kubernetes") is None:
    K8S_IMPORT_ERROR = "ModuleNotFoundError: No module named 'kubernetes'"

# Each watch and list on a connection of its own: without retries, a kept-alive connection the
# server has just dropped would fail the next request and read as an outage.
_OWN_CONNECTION = {"Connection": "close"}
_APPLY_PATCH = "application/apply-patch+yaml"  # JSON is YAML: the object is sent as JSON
_MERGE_PATCH = "application/merge-patch+json"


def _items(listing: Any) -> list[Obj]:
    """A List's items, each with its apiVersion and kind, which the server leaves out of them."""
    listing = listing or {}
    kind = str(listing.get("kind") or "")
    kind = kind[:-4] if kind.endswith("List") else kind
    items = []
    for item in listing.get("items") or []:
        item = dict(item)
        item.setdefault("apiVersion", listing.get("apiVersion"))
        item.setdefault("kind", kind)
        items.append(item)
    return items


def _api_message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if body:
        try:
            return str(json.loads(body).get("message", body))
        except (ValueError, AttributeError):
            return str(body)
    return str(exc)


class Client:
    """The collection's conventions over the API server's REST interface.

    Every module reaches the API server through this class, so this is where a server that
    does not answer or refuses us becomes one line for the user: KubeconfigError when the
    kubeconfig names no cluster, ApiUnreachable when the server does not answer, ApiRejected
    when it refuses the TLS handshake or the credentials; each names the server URL, the
    kubeconfig context and file, and what to do (never urllib3's text)."""

    def __init__(self, kubeconfig: str | None = None, context: str | None = None) -> None:
        if K8S_IMPORT_ERROR is not None:
            raise K8sError("the kubernetes Python package is required")
        self._kubeconfig, self._context = kubeconfig, context  # named when the server does not answer
        settings = settings_from_kubeconfig(read_kubeconfig(kubeconfig_paths(kubeconfig), context))
        self._current_context: str | None = settings.context
        self._connection = Connection(settings)
        self._discovery = Discovery(self._connection)
        self._exec_client: Any = None  # the kubernetes package's ApiClient, made at the first exec
        # The core group's discovery now, which most modules need anyway: a server that is not
        # there fails here, in the client's own line, before a module's own waiting begins.
        with self._answered("discovery"):
            self._discovery.find("v1", "Namespace")

    @classmethod
    def on(cls, connection: "Connection", kubeconfig: str | None = None, context: str | None = None) -> "Client":
        """A client on a connection made elsewhere (a loopback server in tests), discovery included."""
        client = cls.__new__(cls)
        client._kubeconfig, client._context, client._current_context = kubeconfig, context, context
        client._connection, client._discovery, client._exec_client = connection, Discovery(connection), None
        return client

    @contextlib.contextmanager
    def _answered(self, what: str | None = None) -> Iterator[None]:
        """Requests made inside: a server that does not answer raises ApiUnreachable, one that
        refuses the TLS handshake or the credentials ApiRejected. With `what`, any other API
        error becomes a K8sError naming the server (discovery); else it is left to the caller."""
        try:
            yield
        except ApiError as exc:
            failure = self.rejected(exc)
            if failure is not None:
                raise failure from exc
            if what is None:
                raise
            raise K8sError("%s: %s answered HTTP %s: %s" % (what, self.where(), exc.status, one_line(_api_message(exc)))) from exc
        except TRANSPORT_ERRORS as exc:
            raise self.unreachable(exc) from exc

    def unreachable(self, exc: BaseException) -> K8sError:
        """The client layer's error for a request that got no answer: ApiRejected for a TLS
        failure (the server answered, with a certificate we refuse), else ApiUnreachable."""
        cause, _timed_out = transport_cause(exc)
        if cause.startswith("TLS"):
            return ApiRejected(rejected_message(self.where(), cause, self._context_name(), self._kubeconfig))
        return ApiUnreachable(unreachable_message(self.where(), cause))

    def rejected(self, exc: Any) -> K8sError | None:
        """ApiRejected for 401 Unauthorized, and for the kubernetes client's status 0 (its TLS
        failure, in an exec); None for any other API error."""
        status = getattr(exc, "status", None)
        if status == 401:
            return ApiRejected(rejected_message(self.where(), "401 Unauthorized", self._context_name(), self._kubeconfig))
        if status == 0 and any(isinstance(e, ssl.SSLError) for e in exception_chain(exc)):
            return self.unreachable(exc)
        return None

    def resource(self, api_version: str, kind: str) -> ApiResource:
        """The API resource of a kind, from discovery (its first use asks the server: callers
        run it inside _answered(), or the watch's _resource_answering())."""
        found = self._discovery.find(api_version, kind)
        if found is None:
            raise KindNotServed("the cluster does not serve %s %s" % (api_version, kind))
        return found

    def serves(self, api_version: str, kind: str) -> bool:
        """Whether the cluster serves a kind (discovery; a CRD not installed: False)."""
        try:
            with self._answered("discovery"):
                self.resource(api_version, kind)
        except KindNotServed:
            return False
        return True

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        try:
            with self._answered():
                res = self.resource(api_version, kind)
                return dict(self._connection.json("GET", res.path(namespace, name)))
        except ApiError as exc:
            if exc.status == 404:
                return None
            raise K8sError("get %s %s failed: %s" % (kind, name, _api_message(exc))) from exc

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> list[Obj]:
        try:
            with self._answered():
                res = self.resource(api_version, kind)
                out = self._connection.json("GET", res.path(namespace), query=(
                    ("labelSelector", label_selector), ("fieldSelector", field_selector)))
        except ApiError as exc:
            raise K8sError("list %s failed: %s" % (kind, _api_message(exc))) from exc
        return _items(out)

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        resource_version: str | None = None,
        timeout: float | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        read_timeout: float | None = None,
    ) -> Iterator[tuple[str, Obj]]:
        """Open one watch stream from resource_version (bookmarks requested) and return its
        events as the server sends them: (type, object) for ADDED, MODIFIED, DELETED, BOOKMARK
        (an object with only its resourceVersion) and ERROR (a Status), until the server ends the
        stream after `timeout` seconds or the caller stops iterating.

        The stream is open when this returns. A server that does not answer raises
        WatchInterrupted, here or later from the iteration (the stream broke, or no byte came
        within `read_timeout`, by default the timeout plus WATCH_READ_SLACK); 410 Gone raises
        WatchExpired; another API error K8sError."""
        seconds = int(math.ceil(timeout)) if timeout else WATCH_DEFAULT_SECONDS
        read = read_timeout if read_timeout is not None else seconds + WATCH_READ_SLACK
        res = self._resource_answering(api_version, kind, "watch", read)
        try:
            resp = self._connection.request(
                "GET", res.path(namespace), query=(
                    ("watch", True), ("allowWatchBookmarks", True), ("resourceVersion", resource_version or None),
                    ("timeoutSeconds", seconds), ("labelSelector", label_selector), ("fieldSelector", field_selector)),
                headers=_OWN_CONNECTION, timeout=(WATCH_CONNECT_TIMEOUT, read), stream=True, retries=False)
        except ApiError as exc:
            raise self._watch_api_error("watch", kind, exc) from exc
        except TRANSPORT_ERRORS as exc:
            raise self.interrupted("watch %s" % kind, exc, read) from exc
        return self._events(resp, kind, read)

    def _events(self, resp: Any, kind: str, read: float) -> Iterator[tuple[str, Obj]]:
        try:
            for line in watch_lines(resp.stream(amt=None, decode_content=False)):
                event = parse_watch_line(line)
                if event is not None:
                    yield event
        except TRANSPORT_ERRORS as exc:
            raise self.interrupted("watch %s" % kind, exc, read) from exc
        finally:
            resp.close()
            resp.release_conn()

    def list_with_version(
        self, api_version: str, kind: str, namespace: str | None = None,
        label_selector: str | None = None, field_selector: str | None = None, read_timeout: float | None = None,
    ) -> tuple[builtins.list[Obj], str]:
        """list() plus the list's resourceVersion, where a watch continues without a gap. Like
        watch(), bounded (`read_timeout`, by default LIST_READ_TIMEOUT) and WatchInterrupted when
        the server does not answer."""
        read = read_timeout if read_timeout is not None else LIST_READ_TIMEOUT
        res = self._resource_answering(api_version, kind, "list", read)
        try:
            out = self._connection.json(
                "GET", res.path(namespace), query=(("labelSelector", label_selector), ("fieldSelector", field_selector)),
                headers=_OWN_CONNECTION, timeout=(WATCH_CONNECT_TIMEOUT, read), retries=False)
        except ApiError as exc:
            raise self._watch_api_error("list", kind, exc) from exc
        except TRANSPORT_ERRORS as exc:
            raise self.interrupted("list %s" % kind, exc, read) from exc
        return _items(out), str((out.get("metadata") or {}).get("resourceVersion") or "")

    def _resource_answering(self, api_version: str, kind: str, verb: str, read: float) -> ApiResource:
        """resource(), whose discovery may be the first request to a server that does not answer."""
        try:
            return self.resource(api_version, kind)
        except TRANSPORT_ERRORS as exc:
            raise self.interrupted("%s %s" % (verb, kind), exc, read) from exc

    def _watch_api_error(self, verb: str, kind: str, exc: Any) -> K8sError:
        """410 Gone is WatchExpired; the answers of an overloaded or failing server (and a TLS
        failure) WatchInterrupted, worth another try; any other error K8sError."""
        status = getattr(exc, "status", None)
        if status == 401:  # not worth another try: the credentials will not get better
            return self.rejected(exc) or K8sError("%s %s failed: %s" % (verb, kind, _api_message(exc)))
        if status == 403:
            return WatchForbidden("%s %s failed: %s" % (verb, kind, _api_message(exc)))
        if status == 410:
            return WatchExpired("%s %s: resourceVersion expired (410 Gone): %s" % (verb, kind, _api_message(exc)))
        if status in (0, 429, 500, 502, 503, 504):
            first_line = (_api_message(exc).splitlines() or [""])[0][:200]
            cause = "TLS error" if status == 0 else "HTTP %s: %s" % (status, first_line)
            return WatchInterrupted("%s %s failed: %s" % (verb, kind, cause), cause, where=self.where())
        return K8sError("%s %s failed: %s" % (verb, kind, _api_message(exc)))

    def interrupted(self, what: str, exc: BaseException, read: float | None = None) -> WatchInterrupted:
        """WatchInterrupted for a request (`what`: "watch Ingress") that got no answer."""
        cause, timed_out = transport_cause(exc, read)
        where = self.where()
        return WatchInterrupted("%s: %s did not answer: %s" % (what, where, cause), cause, timed_out, where)

    def where(self) -> str:
        """api_server_description() of this client: its server URL, context and kubeconfig file."""
        return api_server_description(self._connection.host, self._context_name(),
                                      self._kubeconfig or os.pathsep.join(kubeconfig_paths()))

    def _context_name(self) -> str | None:
        """The context asked for, else the kubeconfig's current one."""
        return self._context or self._current_context

    def pod_log(self, namespace: str, name: str, container: str | None = None, since_seconds: int | None = None,
                tail_lines: int | None = None, previous: bool = False) -> str:
        """A pod's log (the current container, or with `previous` the one before it; for a
        container waiting to restart, the kubelet serves its last terminated run); empty when
        the pod or its log is gone or the container never ran."""
        query = (("container", container or None), ("sinceSeconds", since_seconds or None),
                 ("tailLines", tail_lines or None), ("previous", True if previous else None))
        try:
            with self._answered():
                resp = self._connection.request("GET", "/api/v1/namespaces/%s/pods/%s/log" % (namespace, name), query=query,
                                                headers={"Accept": "*/*"}, timeout=(WATCH_CONNECT_TIMEOUT, LIST_READ_TIMEOUT))
                return str(resp.data.decode("utf-8", "replace"))
        except ApiError as exc:
            if exc.status in (400, 404):
                return ""
            raise K8sError("log of pod %s/%s failed: %s" % (namespace, name, _api_message(exc))) from exc

    def pod_exec(self, namespace: str, name: str, container: str, command: builtins.list[str], timeout: float) -> ExecResult:
        """Run COMMAND in a container (what `kubectl exec` does), waiting at most TIMEOUT seconds.
        A refused exec (RBAC: 403) or a command that cannot start is an ExecResult saying so, not
        an error: the caller reports it; a server that does not answer raises as everywhere."""
        from kubernetes.client import CoreV1Api
        from kubernetes.client.exceptions import ApiException
        from kubernetes.stream import stream

        try:
            with self._answered():
                resp = stream(CoreV1Api(self._exec_api_client()).connect_get_namespaced_pod_exec, name, namespace,
                              container=container, command=command, stdin=False, stdout=True, stderr=True, tty=False,
                              _preload_content=False, _request_timeout=timeout)
        except ApiException as exc:
            failure = self.rejected(exc)
            if failure is not None:
                raise failure from exc
            # The websocket client reports a refused upgrade as status 0 with the handshake in its reason.
            reason = str(getattr(exc, "reason", "") or "")
            status = exc.status or handshake_status(reason)
            if status == 401:
                raise ApiRejected(rejected_message(self.where(), "401 Unauthorized", self._context_name(), self._kubeconfig)) from exc
            return ExecResult(None, refused=status or None, error=status_message(str(getattr(exc, "body", "") or reason)))
        try:
            resp.run_forever(timeout=timeout)
            if resp.is_open():
                return ExecResult(None, error="no exit status within %s s" % timeout)
            stdout, stderr = resp.read_channel(1, timeout=0), resp.read_channel(2, timeout=0)
            rc, error = exec_outcome(str(resp.read_channel(3, timeout=0) or ""))
        finally:
            resp.close()
        return ExecResult(rc, str(stdout or ""), str(stderr or ""), error=error)

    def _exec_api_client(self) -> Any:
        """The kubernetes package's ApiClient for the same kubeconfig context (its websocket stream),
        made once per client: a module may exec in every replica, every second of a window."""
        if self._exec_client is None:
            from kubernetes import config as k8s_config

            try:
                self._exec_client = k8s_config.new_client_from_config(config_file=self._kubeconfig, context=self._context)
            except Exception as exc:  # the config loader raises several unrelated types
                raise unusable(kubeconfig_paths(self._kubeconfig), self._context, "%s; %s" % (one_line(exc), LOADER_HINT)) from exc
        return self._exec_client

    def pod_proxy_get(self, namespace: str, name: str, port: int, path: str,
                      query: tuple[tuple[str, str], ...] = (), timeout: float = LIST_READ_TIMEOUT) -> Answer:
        """GET PATH on a pod's PORT through the API server's pod proxy (`kubectl get --raw
        /api/v1/namespaces/NS/pods/NAME:PORT/proxy/PATH`). Any HTTP answer, the pod's or the
        API server's refusal (403, 503 when nothing listens), is an Answer (no status when none came)."""
        url = "/api/v1/namespaces/%s/pods/%s:%d/proxy/%s" % (namespace, name, port, path.lstrip("/"))
        try:
            with self._answered():
                resp = self._connection.request("GET", url, query=query, timeout=(WATCH_CONNECT_TIMEOUT, timeout))
        except ApiError as exc:
            body = str(getattr(exc, "body", "") or "")
            return Answer(int(exc.status) if exc.status else None, body, error=status_message(body or str(exc.reason)))
        data = resp.data
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data or "")
        return Answer(int(resp.status), text, headers=tuple((str(k).lower(), str(v)) for k, v in dict(resp.headers).items()))

    def apply(self, obj: Obj, check_mode: bool = False, force: bool = True) -> ApplyResult:
        """Server-side apply; reports a change only when the stored object would differ."""
        meta = obj.get("metadata", {})
        with self._answered():
            res = self.resource(obj["apiVersion"], obj["kind"])
        namespace = meta.get("namespace") if res.namespaced else None
        before = self.get(obj["apiVersion"], obj["kind"], meta["name"], namespace)
        try:
            with self._answered():
                preview = self._ssa(res, obj, namespace, force, dry_run=True)
                changed = comparable(before) != comparable(preview)
                after = preview
                if changed and not check_mode:
                    after = self._ssa(res, obj, namespace, force, dry_run=False)
        except ApiError as exc:
            raise K8sError("apply %s failed: %s" % (ref_of(obj), _api_message(exc))) from exc
        return ApplyResult(changed=changed, before=before, after=after)

    def _ssa(self, res: ApiResource, obj: Obj, namespace: str | None, force: bool, dry_run: bool) -> Obj:
        query = (("fieldManager", FIELD_MANAGER), ("force", force), ("dryRun", "All" if dry_run else None))
        return dict(self._connection.json("PATCH", res.path(namespace, obj["metadata"]["name"]), query=query, body=obj,
                                          content_type=_APPLY_PATCH))

    def apply_all(self, objs: builtins.list[Obj], check_mode: bool = False) -> builtins.list[ApplyResult]:
        """Apply in dependency order. In check mode, objects in a namespace that does not
        exist yet are reported as created without asking the server (it would refuse)."""
        results = []
        planned_namespaces: set[str] = set()
        for obj in sorted(objs, key=apply_order):
            ns = obj.get("metadata", {}).get("namespace")
            if check_mode and ns in planned_namespaces:
                results.append(ApplyResult(changed=True, before=None, after=obj))
                continue
            result = self.apply(obj, check_mode=check_mode)
            if check_mode and obj["kind"] == "Namespace" and result.before is None:
                planned_namespaces.add(obj["metadata"]["name"])
            results.append(result)
        return results

    def patch(self, api_version: str, kind: str, name: str, namespace: str | None, body: Obj) -> Obj:
        """A JSON merge patch (RFC 7386) of the fields in BODY, under the collection's field manager
        (what `kubectl patch --type merge` does): changes those fields only, unlike an apply of a
        partial object, which would drop every field the manager applied before."""
        try:
            with self._answered():
                res = self.resource(api_version, kind)
                out = self._connection.json("PATCH", res.path(namespace, name), query=(("fieldManager", FIELD_MANAGER),),
                                            body=body, content_type=_MERGE_PATCH)
        except ApiError as exc:
            raise K8sError("patch %s %s failed: %s" % (kind, name, _api_message(exc))) from exc
        return dict(out)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None, check_mode: bool = False) -> bool:
        """Delete if present; returns whether something was (or would be) deleted."""
        if self.get(api_version, kind, name, namespace) is None:
            return False
        if check_mode:
            return True
        try:
            with self._answered():
                res = self.resource(api_version, kind)
                self._connection.request("DELETE", res.path(namespace, name), query=(("propagationPolicy", "Background"),))
        except ApiError as exc:
            if exc.status == 404:
                return False
            raise K8sError("delete %s %s failed: %s" % (kind, name, _api_message(exc))) from exc
        return True
