"""The contract between the twin's object store and its emulated controllers.

The API server (``kindlab_twin.apiserver``) and the controllers
(``kindlab_twin.controllers``) meet only here, so either side can change its
insides freely. Controllers write through the same store path as API clients:
every write gets a resourceVersion, a watch event and a managedFields entry
with the controller's own manager name, exactly as an API write would.

Objects are plain dicts as they appear on the wire (apiVersion, kind, metadata,
spec, status). A resource is named by ``(apiVersion, kind)``, e.g.
``("apps/v1", "Deployment")`` or ``("v1", "Pod")``; custom resources registered
by a CRD are named the same way (``("metallb.io/v1beta1", "IPAddressPool")``).
"""
from __future__ import annotations

from typing import Any, Callable, Literal, Protocol

Obj = dict[str, Any]
ResourceRef = tuple[str, str]  # (apiVersion, kind)
EventType = Literal["ADDED", "MODIFIED", "DELETED"]
Listener = Callable[[EventType, Obj], None]


class NotFound(Exception):
    """The object does not exist."""


class Conflict(Exception):
    """A resourceVersion precondition failed, or the object already exists."""


class Invalid(Exception):
    """The object was rejected by validation."""


class Store(Protocol):
    """What a controller may do with the cluster state."""

    def get(self, ref: ResourceRef, namespace: str | None, name: str) -> Obj | None:
        """A deep copy of the object, or None."""

    def list(
        self,
        ref: ResourceRef,
        namespace: str | None = None,
        label_selector: dict[str, str] | None = None,
    ) -> list[Obj]:
        """Deep copies of matching objects (namespace None = all namespaces)."""

    def create(self, obj: Obj, manager: str) -> Obj:
        """Create; raises Conflict if it exists. Fills uid, resourceVersion, creationTimestamp,
        generation, managedFields (operation Update)."""

    def update(self, obj: Obj, manager: str, subresource: Literal["status"] | None = None) -> Obj:
        """Replace (PUT semantics). With subresource="status" only .status changes and the
        managedFields entry carries subresource "status". A metadata.resourceVersion in obj
        that is stale raises Conflict."""

    def apply(
        self,
        obj: Obj,
        manager: str,
        subresource: Literal["status"] | None = None,
        force: bool = True,
    ) -> Obj:
        """Server-side apply of a (partial) object as `manager`; creates it if absent."""

    def delete(self, ref: ResourceRef, namespace: str | None, name: str) -> None:
        """Delete (with ownerReference garbage collection of dependents). NotFound if absent."""

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call listener(event_type, obj) after every committed change, from the writer's
        thread, outside the store lock. Returns an unsubscribe function."""


class Runtime(Protocol):
    """What the twin process hands every controller at start."""

    store: Store
    cluster_name: str
    time_scale: float  # divide every controller period by this
    state_dir: str  # per-cluster state directory (pid, port, token, connect_to.json live here)
    kind_config: Obj  # the parsed kind Cluster config (nodes with roles); {} = one control-plane


class Controller(Protocol):
    """An emulated controller. The runtime calls start() once, then stop() at shutdown.
    Controllers run their own threads and never block start()."""

    name: str

    def start(self, runtime: Runtime) -> None: ...

    def stop(self) -> None: ...


# The data plane publishes how to reach what the cluster exposes: a JSON list written to
# <state_dir>/connect_to.json, each entry {"host": "100.64.0.0", "port": 80,
# "target_host": "127.0.0.1", "target_port": 41234, "what": "one/ingress-nginx-controller"}.
# `kindlab-twin get connect-to --name N` prints them curl-style (HOST:PORT:127.0.0.1:PORT).
CONNECT_TO_FILE = "connect_to.json"


# --- Added by the controllers helper ----------------------------------------------------
# Controllers log through the API side's PodLogs below (runtime.pod_logs):
# append(namespace, pod, line, container=<container name>), clear(namespace, pod) when the
# pod is gone. Without a runtime.pod_logs (bare tests) they create a private PodLogs.


# --- additions by the API-server side (existing signatures above are unchanged) -----------

import threading as _threading
from collections import deque as _deque


class PodLogs:
    """Log lines of emulated pods, served on GET .../pods/NAME/log.

    Controllers append lines (without trailing newline); the API reads them, and with
    ``follow=true`` waits for more. Keeps the last `max_lines` per container. Thread-safe.
    Also reachable as ``runtime.pod_logs`` (see RuntimeWithLogs)."""

    def __init__(self, max_lines: int = 5000) -> None:
        self._cond = _threading.Condition()
        self._lines: dict[tuple[str, str, str], _deque[str]] = {}
        self._previous: dict[tuple[str, str, str], list[str]] = {}
        self._max = max_lines
        self._seq = 0

    def append(self, namespace: str, pod: str, line: str, container: str = "") -> None:
        """Add one line for a pod's container ("" = the pod's only/first container)."""
        with self._cond:
            q = self._lines.setdefault((namespace, pod, container), _deque(maxlen=self._max))
            q.append(line)
            self._seq += 1
            self._cond.notify_all()

    def containers(self, namespace: str, pod: str) -> list[str]:
        with self._cond:
            return [c for (ns, p, c) in self._lines if ns == namespace and p == pod]

    def lines(self, namespace: str, pod: str, container: str | None = None) -> list[str]:
        """Kept lines of one container ("" = lines appended without a container name);
        with container None all lines of the pod."""
        with self._cond:
            if container is not None:
                return list(self._lines.get((namespace, pod, container), ()))
            out: list[str] = []
            for (ns, p, _c), q in self._lines.items():
                if ns == namespace and p == pod:
                    out.extend(q)
            return out

    def wait(self, seq: int, timeout: float) -> int:
        """Block until any line is appended after sequence `seq` (or timeout); returns
        the current sequence number. Use with `sequence()` to follow."""
        with self._cond:
            if self._seq == seq:
                self._cond.wait(timeout)
            return self._seq

    def sequence(self) -> int:
        with self._cond:
            return self._seq

    def restart(self, namespace: str, pod: str, container: str) -> None:
        """The container runs again (the kubelet restarted it): the lines so far become the
        previous run's, served with ``previous=true``; the current log starts empty, as a new
        container's does."""
        with self._cond:
            key = (namespace, pod, container)
            self._previous[key] = list(self._lines.pop(key, ()))
            self._seq += 1
            self._cond.notify_all()

    def previous(self, namespace: str, pod: str, container: str) -> list[str] | None:
        """The previous run's lines of a restarted container, or None if it never restarted."""
        with self._cond:
            lines = self._previous.get((namespace, pod, container))
            return None if lines is None else list(lines)

    def clear(self, namespace: str, pod: str) -> None:
        with self._cond:
            for k in [k for k in self._lines if k[0] == namespace and k[1] == pod]:
                del self._lines[k]
            for k in [k for k in self._previous if k[0] == namespace and k[1] == pod]:
                del self._previous[k]


class RuntimeWithLogs(Runtime, Protocol):
    """The runtime the twin actually passes to controllers: a Runtime plus `pod_logs`."""

    pod_logs: PodLogs


# Store behaviour notes (as on a real API server):
# - create() drops .status for kinds that have a status subresource (Pods, Deployments,
#   Services, Ingresses, CRDs with subresources.status, ...); write status afterwards with
#   update(obj, manager, subresource="status") or apply(..., subresource="status").
# - Objects with metadata.finalizers are not removed by delete(): they get
#   metadata.deletionTimestamp and vanish once an update empties the finalizers.
# - A write that changes nothing (same object) is a no-op: no new resourceVersion, no event.
# - delete() cascades to dependents (ownerReferences) at once, in the same call.
# - In the running twin a deleted Namespace is first Terminating (status.phase, about 1 s),
#   then its contents and itself go; creating in it meanwhile raises
#   kindlab_twin.store.Forbidden (a plain Exception, not one of the three above).
# - Unknown apiVersion/kind raises kindlab_twin.store.UnknownKind (a NotFound).
# - ObjectStore (kindlab_twin.store) also offers list_selector(ref, namespace, selector_str)
#   for full label-selector strings ("app in (a,b),!canary"), and register_listener (=
#   subscribe) which the runtime uses.
