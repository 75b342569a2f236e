# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The Kubernetes client layer every module goes through.

One dynamic client, server-side apply with the collection's field manager, change
detection by a dry-run apply (so check mode and idempotency fall out of the same
code), and a waiter whose timeout error says what it was waiting for and what it
last saw.
"""
from __future__ import annotations

import builtins
import contextlib
import copy
import http.client
import json
import math
import os
import socket
import ssl
import time
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator, Mapping

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import FIELD_MANAGER
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import YAMLError, yaml

# The collection's one guarded import of the kubernetes client: modules never import it
# themselves; _module.KindlabModule turns a failed import (K8S_IMPORT_ERROR) into missing_required_lib.
K8S_IMPORT_ERROR: str | None
try:
    from kubernetes import config as k8s_config
    from kubernetes.client import ApiClient
    from kubernetes.dynamic import DynamicClient
    from kubernetes.client.exceptions import ApiException
    from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError
except ImportError:
    K8S_IMPORT_ERROR = traceback.format_exc()
else:
    K8S_IMPORT_ERROR = None

# What a request raises when the API server does not answer (refused, reset, silent): the
# socket's own errors, http.client's, and urllib3's (which the kubernetes client lets through).
_TRANSPORT_ERRORS: tuple[type[BaseException], ...] = (OSError, http.client.HTTPException)
try:
    import urllib3.exceptions as _urllib3_errors
except ImportError:
    _urllib3_errors = None  # type: ignore[assignment]
else:
    _TRANSPORT_ERRORS += (_urllib3_errors.HTTPError,)

Obj = dict[str, Any]

# Apply order: what others depend on goes first (namespaces before their objects,
# CRDs before their custom resources, RBAC before the workloads that use it).
_KIND_ORDER = [
    "Namespace",
    "CustomResourceDefinition",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "ConfigMap",
    "Secret",
    "IngressClass",
    "Service",
    "Deployment",
    "DaemonSet",
    "ValidatingWebhookConfiguration",
    "Ingress",
]

# Metadata the server owns; ignored when deciding whether an apply changes anything.
_VOLATILE_METADATA = ("resourceVersion", "managedFields", "generation", "uid", "creationTimestamp")


class K8sError(KindlabError):
    """A Kubernetes API call failed; the message is meant for the user."""


class WaitTimeout(K8sError):
    """A wait ran out of time."""


# ---------------------------------------------------------------- watch requests that end

# A watch (or the list it starts from) connects within WATCH_CONNECT_TIMEOUT and waits for
# each next byte at most its server-side timeout plus WATCH_READ_SLACK: a server that answers
# sends at least the end of the stream by then, so a read timeout means the server stopped
# answering (a frozen kube-apiserver), not that nothing changed. Requests go through a
# connection pool without urllib3's retries (which would repeat each timeout three more times):
# the caller retries, within its own time.
WATCH_CONNECT_TIMEOUT = 5.0
WATCH_READ_SLACK = 5.0
# Server-side timeout of a watch opened without one, and the longest a list may take.
WATCH_DEFAULT_SECONDS = 300
LIST_READ_TIMEOUT = 30.0
UNREACHABLE_HINT = "is the cluster running? (kindlab-twin get clusters / kind get clusters)"
# Each watch and list on a connection of its own: without retries, a kept-alive connection the
# server has just dropped would fail the next request and read as an outage.
_OWN_CONNECTION = {"Connection": "close"}


class WatchInterrupted(K8sError):
    """A watch or its list got no (whole) answer: the connection was refused, reset or broke,
    or the server stayed silent past the read timeout. `cause` says which in a few words (never
    urllib3's text), `timed_out` whether it was silence, `where` names the API server, its
    kubeconfig context and file."""

    def __init__(self, message: str, cause: str, timed_out: bool = False, where: str = "the API server") -> None:
        super().__init__(message)
        self.cause = cause
        self.timed_out = timed_out
        self.where = where


class WatchForbidden(K8sError):
    """403 Forbidden for a watch or its list. Permanent when the credentials never had the right;
    an API server that has just restarted also answers so until its authorizer has loaded RBAC."""


class WatchExpired(K8sError):
    """410 Gone: the resourceVersion a watch resumes from is older than the server keeps;
    list again and watch from the list's version."""


class ApiUnreachable(K8sError):
    """The API server did not answer at all; the message is one line naming the server, the
    kubeconfig context and file, the cause and what to check."""


class ApiRejected(K8sError):
    """The API server answered but the connection or our credentials were refused: the TLS
    handshake failed (its certificate is not one the kubeconfig trusts) or 401 Unauthorized (the
    client certificate or token is invalid or expired). One line naming the server, the
    kubeconfig context and file, and what to do."""


class KubeconfigError(K8sError):
    """The kubeconfig names no cluster to talk to: the file does not exist, is not a kubeconfig,
    names no current context, or lacks the context asked for (a deleted cluster's context is
    removed). One line naming the file, the context and what to do."""


# What to do when the kubeconfig names no cluster, or names one that is not there.
CREATE_HINT = ("create the cluster first (ansible-playbook playbooks/lab.yml), or set kubeconfig and context "
               "to those of a running cluster")


def api_server_description(host: str, context: str | None, kubeconfig: str | None) -> str:
    """`the API server at URL (context C, kubeconfig PATH)`: which cluster a failure is about."""
    return "the API server at %s (context %s, kubeconfig %s)" % (host, context or "(current)", kubeconfig or "(default)")


def unreachable_message(where: str, cause: str, seconds: float | None = None) -> str:
    """The one line for an API server that never answered."""
    during = " in %gs" % seconds if seconds is not None else ""
    return "%s did not answer%s: %s; %s" % (where, during, cause, UNREACHABLE_HINT)


def one_line(text: Any) -> str:
    """Text (an exception's, a tool's) as one line: whitespace runs, newlines included, become one space."""
    return " ".join(str(text).split())


def _kind_cluster_name(context: str | None) -> str | None:
    """The kind (or twin) cluster a `kind-NAME` context belongs to."""
    return context[len("kind-"):] if context and context.startswith("kind-") and len(context) > 5 else None


def export_hint(context: str | None, kubeconfig: str | None) -> str:
    """How to write a cluster's current credentials into the kubeconfig again."""
    name = _kind_cluster_name(context)
    if name is None:
        return "write the cluster's current credentials into that kubeconfig again"
    args = "--name %s" % name + (" --kubeconfig %s" % kubeconfig if kubeconfig else "")
    return "write its kubeconfig again: kind export kubeconfig %s (the twin: kindlab-twin export kubeconfig %s)" % (args, args)


def rejected_message(where: str, cause: str, context: str | None, kubeconfig: str | None) -> str:
    """The one line for an API server that answered but refused the connection or the credentials.
    `cause` is transport_cause()'s TLS text or `401 Unauthorized`."""
    if cause.startswith("401"):
        return ("%s refused the credentials of the context (%s: its client certificate or token is invalid or has "
                "expired, or the cluster was recreated since the kubeconfig was written); %s"
                % (where, cause, export_hint(context, kubeconfig)))
    if "certificate verify failed" in cause:
        return ("%s presented a certificate the kubeconfig does not trust (%s): the cluster was probably recreated "
                "since the kubeconfig was written; %s" % (where, cause, export_hint(context, kubeconfig)))
    return "%s: %s; check the server URL (https) and the certificates in the kubeconfig" % (where, cause)


def _exception_chain(exc: BaseException) -> list[BaseException]:
    """exc and what it wraps: __cause__, __context__, urllib3's `reason`, exceptions in args."""
    out: list[BaseException] = []
    todo = [exc]
    while todo:
        e = todo.pop(0)
        if any(e is seen for seen in out):
            continue
        out.append(e)
        todo += [x for x in (e.__cause__, e.__context__, getattr(e, "reason", None), *e.args) if isinstance(x, BaseException)]
    return out


def transport_cause(exc: BaseException, read_timeout: float | None = None) -> tuple[str, bool]:
    """(a few words on why a request got no answer, whether it was a timeout), from a socket,
    http.client or urllib3 exception and what it wraps."""
    chain = _exception_chain(exc)

    def has(*types: type[BaseException]) -> bool:
        return any(isinstance(e, types) for e in chain)

    u3 = _urllib3_errors
    read = " within %gs" % read_timeout if read_timeout else ""
    if has(ConnectionRefusedError):
        return "connection refused", False
    if has(ConnectionResetError, ConnectionAbortedError, BrokenPipeError):
        return "connection reset", False
    if has(socket.gaierror):
        return "cannot resolve the server's host name", False
    if u3 is not None and has(u3.ReadTimeoutError):
        return "no answer%s (read timeout)" % read, True
    if u3 is not None and any(isinstance(e, u3.ConnectTimeoutError) and not isinstance(e, u3.NewConnectionError) for e in chain):
        return "no answer to connect within %gs" % WATCH_CONNECT_TIMEOUT, True
    if has(TimeoutError):
        return "no answer%s (timeout)" % read, True
    if has(ssl.SSLError) or (u3 is not None and has(u3.SSLError)):
        return _tls_cause(chain), False
    if has(http.client.HTTPException) or (u3 is not None and has(u3.ProtocolError)):
        return "the connection broke mid-stream", False
    for e in chain:
        if isinstance(e, OSError) and e.strerror:
            return "cannot connect: " + e.strerror[:1].lower() + e.strerror[1:], False
    return "cannot connect (%s)" % type(exc).__name__, False


def _tls_cause(chain: list[BaseException]) -> str:
    """`TLS handshake failed`, with OpenSSL's reason when the chain has it (`certificate verify
    failed: unable to get local issuer certificate`, `wrong version number`)."""
    for e in chain:
        if isinstance(e, ssl.SSLCertVerificationError) and e.verify_message:
            return "TLS handshake failed: certificate verify failed: %s" % e.verify_message
        if isinstance(e, ssl.SSLError) and e.reason:
            return "TLS handshake failed: %s" % str(e.reason).lower().replace("_", " ")
    return "TLS handshake failed"


def kubeconfig_problem(paths: list[str], context: str | None) -> str | None:
    """Why the kubeconfig file(s) at `paths` (merged as kubectl merges them) name no cluster for
    `context` (None: the current context), as one line with what to do; None when they do.
    Only what the file says is checked here, not whether its cluster answers."""
    if yaml is None:  # the kubernetes client needs PyYAML: it would not have imported
        return None
    shown = os.pathsep.join(paths)
    head = "cannot use kubeconfig %s (context %s): " % (shown, context or "(current)")
    existing = [p for p in paths if os.path.isfile(p)]
    if not existing:
        what = "the file does not exist" if len(paths) == 1 else "none of these files exists"
        return head + "%s; %s" % (what, CREATE_HINT)
    contexts: list[str] = []
    current = ""
    for path in existing:
        try:
            with open(path, encoding="utf-8") as handle:
                doc = yaml.safe_load(handle)
        except (OSError, UnicodeDecodeError, YAMLError) as exc:
            return head + "%s cannot be read as YAML (%s); fix or remove it" % (path, one_line(exc))
        if doc is None:
            continue  # an empty file: kubectl skips it too
        if not isinstance(doc, dict):
            return head + "%s is not a kubeconfig (expected a mapping with clusters, contexts and users)" % path
        contexts += [str(c.get("name")) for c in doc.get("contexts") or [] if isinstance(c, dict) and c.get("name")]
        current = current or str(doc.get("current-context") or "")
    if not contexts:
        return head + "it has no contexts (a deleted cluster's context is removed from it); %s" % CREATE_HINT
    wanted = context or current
    if not wanted:
        return head + ("it names no current context and none was given; set context to one of %s "
                       "(or run kubectl --kubeconfig %s config use-context NAME)" % (", ".join(contexts), shown))
    if wanted not in contexts:
        return head + ("it has no context %s (it has %s): the cluster was deleted, or the context is misspelt; %s"
                       % (wanted, ", ".join(contexts), CREATE_HINT))
    return None


def watch_lines(chunks: Iterable[bytes | str]) -> Iterator[str]:
    """The lines of a watch response (one JSON event each) from its chunks, which need not
    end at a line."""
    buffer = b""
    for chunk in chunks:
        buffer += chunk.encode() if isinstance(chunk, str) else chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if line.strip():
                yield line.decode("utf-8", errors="replace")
    if buffer.strip():
        yield buffer.decode("utf-8", errors="replace")


def parse_watch_line(line: str) -> tuple[str, Obj] | None:
    """One watch event line `{"type": .., "object": {..}}` as (type, object); None if it is not one."""
    try:
        event = json.loads(line)
    except ValueError:
        return None
    if not isinstance(event, dict) or not event.get("type"):
        return None
    obj = event.get("object")
    return str(event["type"]), dict(obj) if isinstance(obj, dict) else {}


@dataclass
class ApplyResult:
    changed: bool
    before: Obj | None
    after: Obj

    @property
    def diff(self) -> dict[str, Any]:
        """The Ansible diff of a changed object, headed with its name ({} when unchanged); a
        module returns a list of these, one per object, which is what the callback takes."""
        if not self.changed:
            return {}
        name = ref_of(self.after)
        return {"before_header": name, "after_header": name,
                "before": comparable(self.before) or {}, "after": comparable(self.after) or {}}


def apply_order(obj: Obj) -> int:
    """Sort key placing dependencies before dependents; unknown kinds go last."""
    kind = obj.get("kind", "")
    return _KIND_ORDER.index(kind) if kind in _KIND_ORDER else len(_KIND_ORDER)


def ref_of(obj: Obj) -> str:
    """A short human name for an object: Kind namespace/name."""
    meta = obj.get("metadata", {})
    ns = meta.get("namespace")
    return "%s %s%s" % (obj.get("kind"), ns + "/" if ns else "", meta.get("name"))


def comparable(obj: Obj | None) -> Obj | None:
    """The part of an object an apply can change: no status, no server-owned metadata."""
    if obj is None:
        return None
    out = copy.deepcopy(obj)
    out.pop("status", None)
    meta = out.get("metadata", {})
    for key in _VOLATILE_METADATA:
        meta.pop(key, None)
    return out


def _api_message(exc: Exception) -> str:
    body = getattr(exc, "body", None)
    if body:
        try:
            import json

            return str(json.loads(body).get("message", body))
        except (ValueError, AttributeError):
            return str(body)
    return str(exc)


def kubeconfig_paths(explicit: str | None = None, environ: Mapping[str, str] | None = None) -> list[str]:
    """The kubeconfig files kubectl (and kind) consider: the explicit path alone; else the
    $KUBECONFIG entries, empty ones and repeats dropped; else ~/.kube/config."""
    if explicit:
        return [explicit]
    env = os.environ if environ is None else environ
    entries: list[str] = []
    for entry in (env.get("KUBECONFIG") or "").split(os.pathsep):
        if entry and entry not in entries:
            entries.append(entry)
    if entries:
        return entries
    home = env.get("HOME") or os.path.expanduser("~")
    return [os.path.join(home, ".kube", "config")]


def kubeconfig_path_for_merge(
    explicit: str | None = None,
    environ: Mapping[str, str] | None = None,
    is_file: Callable[[str], bool] = os.path.isfile,
) -> str:
    """The file kind writes a new cluster's credentials into, as kind's pathForMerge picks it:
    with one candidate that one; else the first candidate that is an existing file; else the
    last candidate. So KUBECONFIG=a:b with only b present gives b."""
    candidates = kubeconfig_paths(explicit, environ)
    if len(candidates) == 1:
        return candidates[0]
    for path in candidates:
        if is_file(path):
            return path
    return candidates[-1]


class Client:
    """Thin wrapper over kubernetes.dynamic with the collection's conventions.

    Every module reaches the API server through this class, so this is where a server that
    does not answer or refuses us becomes one line for the user: KubeconfigError when the
    kubeconfig names no cluster, ApiUnreachable when the server does not answer, ApiRejected
    when it refuses the TLS handshake or the credentials; each names the server URL, the
    kubeconfig context and file, and what to do (never urllib3's text)."""

    def __init__(self, kubeconfig: str | None = None, context: str | None = None) -> None:
        if K8S_IMPORT_ERROR is not None:
            raise K8sError("the kubernetes Python package is required")
        self._kubeconfig, self._context = kubeconfig, context  # named when the server does not answer
        problem = kubeconfig_problem(kubeconfig_paths(kubeconfig), context)
        if problem is not None:
            raise KubeconfigError(problem)
        try:
            api_client = k8s_config.new_client_from_config(config_file=kubeconfig, context=context)
        except Exception as exc:  # the config loader raises several unrelated types
            raise KubeconfigError("cannot use kubeconfig %s (context %s): %s; fix the file or set kubeconfig and context "
                                  "to those of a running cluster" % (kubeconfig or os.pathsep.join(kubeconfig_paths()),
                                                                     context or "(current)", one_line(exc))) from exc
        self._api_client: ApiClient = api_client
        self._watch_dyn: Any = None
        with self._answered("discovery"):
            self._dyn = DynamicClient(api_client)

    @contextlib.contextmanager
    def _answered(self, what: str | None = None) -> Iterator[None]:
        """Requests made inside: a server that does not answer raises ApiUnreachable, one that
        refuses the TLS handshake or the credentials ApiRejected. With `what`, any other API
        error becomes a K8sError naming the server (discovery); else it is left to the caller."""
        try:
            yield
        except ApiException as exc:
            failure = self.rejected(exc)
            if failure is not None:
                raise failure from exc
            if what is None:
                raise
            raise K8sError("%s: %s answered HTTP %s: %s" % (what, self.where(), exc.status, one_line(_api_message(exc)))) from exc
        except _TRANSPORT_ERRORS as exc:
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
        failure when urllib3 does not retry); None for any other API error."""
        status = getattr(exc, "status", None)
        if status == 401:
            return ApiRejected(rejected_message(self.where(), "401 Unauthorized", self._context_name(), self._kubeconfig))
        if status == 0 and any(isinstance(e, ssl.SSLError) for e in _exception_chain(exc)):
            return self.unreachable(exc)
        return None

    def resource(self, api_version: str, kind: str) -> Any:
        """The API resource of a kind, from discovery (its first use may ask the server: callers
        run it inside _answered(), or the watch's _resource_answering())."""
        try:
            return self._dyn.resources.get(api_version=api_version, kind=kind)
        except ResourceNotFoundError:
            # A CRD applied moments ago is not in the discovery cache yet.
            self._dyn.resources.invalidate_cache()
            try:
                return self._dyn.resources.get(api_version=api_version, kind=kind)
            except ResourceNotFoundError as exc:
                raise K8sError("the cluster does not serve %s %s" % (api_version, kind)) from exc

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        try:
            with self._answered():
                res = self.resource(api_version, kind)
                return dict(res.get(name=name, namespace=namespace).to_dict())
        except NotFoundError:
            return None
        except ApiException as exc:
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
                out = res.get(namespace=namespace, label_selector=label_selector, field_selector=field_selector)
        except ApiException as exc:
            raise K8sError("list %s failed: %s" % (kind, _api_message(exc))) from exc
        return [dict(item) for item in out.to_dict().get("items", [])]

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
            resp = self._watch_client().request(
                "get", res.path(namespace=namespace), serialize=False, watch=True, allow_watch_bookmarks=True,
                resource_version=resource_version or None, timeout_seconds=seconds,
                label_selector=label_selector, field_selector=field_selector, header_params=dict(_OWN_CONNECTION),
                _request_timeout=(WATCH_CONNECT_TIMEOUT, read))
        except ApiException as exc:
            raise self._watch_api_error("watch", kind, exc) from exc
        except _TRANSPORT_ERRORS as exc:
            raise self.interrupted("watch %s" % kind, exc, read) from exc
        return self._events(resp, kind, read)

    def _events(self, resp: Any, kind: str, read: float) -> Iterator[tuple[str, Obj]]:
        try:
            for line in watch_lines(resp.stream(amt=None, decode_content=False)):
                event = parse_watch_line(line)
                if event is not None:
                    yield event
        except _TRANSPORT_ERRORS as exc:
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
            out = self._watch_client().get(res, namespace=namespace, label_selector=label_selector, field_selector=field_selector,
                                           header_params=dict(_OWN_CONNECTION), _request_timeout=(WATCH_CONNECT_TIMEOUT, read)).to_dict()
        except ApiException as exc:
            raise self._watch_api_error("list", kind, exc) from exc
        except _TRANSPORT_ERRORS as exc:
            raise self.interrupted("list %s" % kind, exc, read) from exc
        return [dict(i) for i in out.get("items", [])], str((out.get("metadata") or {}).get("resourceVersion") or "")

    def _watch_client(self) -> Any:
        """The dynamic client on a connection pool of its own without urllib3's retries, for
        watches and their lists: their loop retries itself, within its window."""
        if self._watch_dyn is None:
            configuration = copy.copy(self._api_client.configuration)
            configuration.retries = False
            dyn = copy.copy(self._dyn)
            dyn.client, dyn.configuration = ApiClient(configuration), configuration
            self._watch_dyn = dyn
        return self._watch_dyn

    def _resource_answering(self, api_version: str, kind: str, verb: str, read: float) -> Any:
        """resource(), whose discovery may be the first request to a server that does not answer."""
        try:
            return self.resource(api_version, kind)
        except _TRANSPORT_ERRORS as exc:
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
        return api_server_description(str(self._api_client.configuration.host), self._context_name(),
                                      self._kubeconfig or os.pathsep.join(kubeconfig_paths()))

    def _context_name(self) -> str | None:
        """The context asked for, else the kubeconfig's current one (None when it cannot be read)."""
        context = self._context
        if not context and K8S_IMPORT_ERROR is None:
            try:
                context = k8s_config.list_kube_config_contexts(config_file=self._kubeconfig)[1].get("name")
            except Exception:  # the config loader raises several unrelated types; the name is only for the message
                context = None
        return context

    def pod_log(self, namespace: str, name: str, container: str | None = None, since_seconds: int | None = None,
                tail_lines: int | None = None, previous: bool = False) -> str:
        """A pod's log (the current container, or with `previous` the one before it; for a
        container waiting to restart, the kubelet serves its last terminated run); empty when
        the pod or its log is gone or the container never ran."""
        from kubernetes.client import CoreV1Api

        kwargs: dict[str, Any] = {"timestamps": False, "_request_timeout": (WATCH_CONNECT_TIMEOUT, LIST_READ_TIMEOUT)}
        if container:
            kwargs["container"] = container
        if since_seconds:
            kwargs["since_seconds"] = since_seconds
        if tail_lines:
            kwargs["tail_lines"] = tail_lines
        if previous:
            kwargs["previous"] = True
        try:
            with self._answered():
                return str(CoreV1Api(self._api_client).read_namespaced_pod_log(name, namespace, **kwargs))
        except ApiException as exc:
            if exc.status in (400, 404):
                return ""
            raise K8sError("log of pod %s/%s failed: %s" % (namespace, name, _api_message(exc))) from exc

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
        except ApiException as exc:
            raise K8sError("apply %s failed: %s" % (ref_of(obj), _api_message(exc))) from exc
        return ApplyResult(changed=changed, before=before, after=after)

    def _ssa(self, res: Any, obj: Obj, namespace: str | None, force: bool, dry_run: bool) -> Obj:
        kwargs: dict[str, Any] = {"field_manager": FIELD_MANAGER, "force_conflicts": force}
        if dry_run:
            kwargs["dry_run"] = "All"
        return dict(self._dyn.server_side_apply(res, body=obj, namespace=namespace, **kwargs).to_dict())

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

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None, check_mode: bool = False) -> bool:
        """Delete if present; returns whether something was (or would be) deleted."""
        if self.get(api_version, kind, name, namespace) is None:
            return False
        if check_mode:
            return True
        try:
            with self._answered():
                res = self.resource(api_version, kind)
                res.delete(name=name, namespace=namespace, propagation_policy="Background")
        except NotFoundError:
            return False
        except ApiException as exc:
            raise K8sError("delete %s %s failed: %s" % (kind, name, _api_message(exc))) from exc
        return True


def wait_until(
    check: Callable[[], tuple[bool, str]],
    timeout: float,
    what: str,
    interval: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
) -> str:
    """Poll check() until it returns (True, detail); raise WaitTimeout naming `what` and
    the last detail seen. Returns the final detail."""
    deadline = clock() + timeout
    while True:
        done, detail = check()
        if done:
            return detail
        if clock() >= deadline:
            raise WaitTimeout("timed out after %ss waiting for %s; last seen: %s" % (timeout, what, detail))
        sleep(interval)


def deployment_ready(deployment: Obj | None) -> tuple[bool, str]:
    """(ready, detail) for a Deployment: all desired replicas updated and available."""
    if deployment is None:
        return False, "deployment not found"
    want = deployment.get("spec", {}).get("replicas", 1)
    status = deployment.get("status", {}) or {}
    gen_ok = status.get("observedGeneration", 0) >= deployment.get("metadata", {}).get("generation", 0)
    ready = status.get("readyReplicas", 0) or 0
    updated = status.get("updatedReplicas", 0) or 0
    available = status.get("availableReplicas", 0) or 0
    detail = "%s/%s ready, %s updated, %s available" % (ready, want, updated, available)
    return gen_ok and ready >= want and updated >= want and available >= want, detail


def daemonset_ready(daemonset: Obj | None) -> tuple[bool, str]:
    """(ready, detail) for a DaemonSet: every scheduled pod updated and available."""
    if daemonset is None:
        return False, "daemonset not found"
    status = daemonset.get("status", {}) or {}
    gen_ok = status.get("observedGeneration", 0) >= daemonset.get("metadata", {}).get("generation", 0)
    want = status.get("desiredNumberScheduled", 0) or 0
    ready = status.get("numberReady", 0) or 0
    updated = status.get("updatedNumberScheduled", 0) or 0
    available = status.get("numberAvailable", 0) or 0
    detail = "%s/%s ready, %s updated, %s available" % (ready, want, updated, available)
    return gen_ok and want > 0 and ready >= want and updated >= want and available >= want, detail


# ---------------------------------------------------------------- pods that will not start

# The kubelet's waiting reasons for a container that waiting longer will not bring up: it
# crashed and is backing off, its image cannot be pulled or named, or the runtime refused it.
FAILING_WAIT_REASONS = (
    "CrashLoopBackOff", "ImagePullBackOff", "ErrImagePull", "CreateContainerConfigError",
    "CreateContainerError", "InvalidImageName", "RunContainerError",
)
LOG_TAIL_LINES = 10


class WorkloadFailed(K8sError):
    """The pods of a Deployment or DaemonSet cannot start; `details["failure"]` says why."""


def container_failures(pod: Obj) -> list[Obj]:
    """The containers of a pod (init containers first) that will not come up by waiting, as
    the kubelet reports them: the waiting reason and message, the restart count, and the exit
    code and reason of the last terminated run. Pure: no logs."""
    meta = pod.get("metadata") or {}
    status = pod.get("status") or {}
    out: list[Obj] = []
    for field_name in ("initContainerStatuses", "containerStatuses"):
        for cs in status.get(field_name) or []:
            waiting = (cs.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") not in FAILING_WAIT_REASONS:
                continue
            last = (cs.get("lastState") or {}).get("terminated") or {}
            out.append({
                "pod": "%s/%s" % (meta.get("namespace", ""), meta.get("name", "")),
                "container": str(cs.get("name", "")),
                "reason": str(waiting["reason"]),
                "message": str(waiting.get("message") or ""),
                "restarts": int(cs.get("restartCount") or 0),
                "exit_code": last.get("exitCode"),
                "terminated_reason": last.get("reason"),
                "log": [],
            })
    return out


def describe_failure(failure: Obj) -> str:
    """One line for the user: which container, the kubelet's reason, exit code, last log lines."""
    text = "pod %s container %s: %s" % (failure["pod"], failure["container"], failure["reason"])
    if failure.get("message"):
        text += " (%s)" % failure["message"]
    if failure.get("exit_code") is not None:
        text += ", last exit code %s" % failure["exit_code"]
        if failure.get("terminated_reason"):
            text += " (%s)" % failure["terminated_reason"]
    if failure.get("restarts"):
        text += ", %d restart%s" % (failure["restarts"], "" if failure["restarts"] == 1 else "s")
    if failure.get("log"):
        text += "; last log lines: " + " | ".join(failure["log"])
    return text


def selector_string(selector: Obj | None) -> str:
    """A LabelSelector (matchLabels + matchExpressions) as the label_selector query string."""
    selector = selector or {}
    parts = ["%s=%s" % (k, v) for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In":
            parts.append("%s in (%s)" % (key, ",".join(values)))
        elif op == "NotIn":
            parts.append("%s notin (%s)" % (key, ",".join(values)))
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append("!%s" % key)
    return ",".join(parts)


REVISION = "deployment.kubernetes.io/revision"


def current_pods(client: Any, workload: Obj) -> list[Obj]:
    """The workload's pods; for a Deployment only those of its current ReplicaSet (the one whose
    revision annotation is the Deployment's, by its pod-template-hash label), so that a pod of
    the revision being replaced - the crash-looping one a fix rolls out over - is not blamed.
    All pods matching the selector while no ReplicaSet carries the revision yet."""
    meta = workload.get("metadata") or {}
    selector = selector_string((workload.get("spec") or {}).get("selector"))
    if not selector:
        return []
    namespace = meta.get("namespace")
    pods: list[Obj] = client.list("v1", "Pod", namespace=namespace, label_selector=selector)
    revision = (meta.get("annotations") or {}).get(REVISION)
    if workload.get("kind") != "Deployment" or not revision:
        return pods
    hashes = {
        (rs.get("metadata", {}).get("labels") or {}).get("pod-template-hash")
        for rs in client.list("apps/v1", "ReplicaSet", namespace=namespace, label_selector=selector)
        if (rs.get("metadata", {}).get("annotations") or {}).get(REVISION) == revision
        and any(o.get("uid") == meta.get("uid") for o in rs.get("metadata", {}).get("ownerReferences") or [])
    } - {None}
    if not hashes:
        return pods
    return [p for p in pods if (p.get("metadata", {}).get("labels") or {}).get("pod-template-hash") in hashes]


def workload_failure(client: Any, workload: Obj, log_lines: int = LOG_TAIL_LINES) -> Obj | None:
    """The first container of the workload's pods that will not start (container_failures),
    with the last lines of its log; None while nothing has failed. The log is that of the
    last run (the kubelet serves it for a container waiting to restart), else the previous one."""
    for pod in current_pods(client, workload):
        for failure in container_failures(pod):
            ns, _sep, name = failure["pod"].partition("/")
            if log_lines > 0:
                text = client.pod_log(ns, name, failure["container"], tail_lines=log_lines)
                if not text.strip() and failure.get("exit_code") is not None:
                    text = client.pod_log(ns, name, failure["container"], tail_lines=log_lines, previous=True)
                failure["log"] = [line for line in text.splitlines() if line.strip()][-log_lines:]
            return failure
    return None


_READY = {"Deployment": deployment_ready, "DaemonSet": daemonset_ready}


def wait_for_workload(
    client: Any,
    kind: str,
    namespace: str,
    name: str,
    timeout: float,
    log_lines: int = LOG_TAIL_LINES,
    interval: float = 1.0,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    what: str | None = None,
) -> str:
    """Wait until a Deployment or DaemonSet is ready. A pod that will not start by waiting
    (crash loop, image or config error) ends the wait at once with WorkloadFailed, naming
    the container, the kubelet's reason, the exit code and the last log lines. `what` names
    the workload in messages (default "Kind namespace/name")."""
    if kind not in _READY:
        raise K8sError("cannot wait for a %s: expected a Deployment or a DaemonSet" % kind)
    what = what or "%s %s/%s" % (kind, namespace, name)

    def check() -> tuple[bool, str]:
        obj = client.get("apps/v1", kind, name, namespace)
        ready, detail = _READY[kind](obj)
        if ready or obj is None:
            return ready, detail
        failure = workload_failure(client, obj, log_lines)
        if failure is not None:
            raise WorkloadFailed("%s cannot start: %s" % (what, describe_failure(failure)), failure=failure)
        return False, detail

    return wait_until(check, timeout, what + " to be ready", interval=interval, sleep=sleep, clock=clock)


def summarize(results: list[ApplyResult]) -> dict[str, Any]:
    """What a module returns about applied objects: changed, one action per object, diffs."""
    objects = [
        {"object": ref_of(r.after), "action": ("created" if r.before is None else "updated") if r.changed else "unchanged"}
        for r in results
    ]
    return {
        "changed": any(r.changed for r in results),
        "objects": objects,
        "diff": [r.diff for r in results if r.diff],
    }


def delete_all(client: Client, objs: list[Obj], check_mode: bool) -> dict[str, Any]:
    """Delete objects in reverse dependency order (dependents first); same shape as summarize()."""
    objects = []
    for obj in sorted(objs, key=apply_order, reverse=True):
        meta = obj["metadata"]
        deleted = client.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"), check_mode)
        objects.append({"object": ref_of(obj), "action": "deleted" if deleted else "absent"})
    return {"changed": any(o["action"] == "deleted" for o in objects), "objects": objects, "diff": []}
