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


# --- Added by the controllers helper: pod logs -------------------------------------------
# Emulated containers write log lines here; the API server serves them on
# GET /api/v1/namespaces/{ns}/pods/{name}/log?container=C (lines joined with "\n", each
# ending in "\n"; `container` may be omitted when the pod has one container). Lines are
# kept per (namespace, pod, container) and dropped with the pod.
class PodLogs(Protocol):
    def append(self, namespace: str, pod: str, container: str, line: str) -> None:
        """Append one log line (no trailing newline needed)."""

    def read(self, namespace: str, pod: str, container: str | None = None) -> list[str]:
        """All lines so far; container None = the pod's only/first container."""

    def drop(self, namespace: str, pod: str) -> None:
        """Forget a deleted pod's logs."""


class MemoryPodLogs:
    """The reference PodLogs: a thread-safe in-memory registry. The runtime creates ONE
    and exposes it as ``runtime.pod_logs`` (controllers fall back to a private one when the
    runtime has none, so they also run in tests without an API server)."""

    def __init__(self, max_lines: int = 5000) -> None:
        import threading

        self._lock = threading.Lock()
        self._lines: dict[tuple[str, str, str], list[str]] = {}
        self._max = max_lines

    def append(self, namespace: str, pod: str, container: str, line: str) -> None:
        with self._lock:
            buf = self._lines.setdefault((namespace, pod, container), [])
            buf.append(line.rstrip("\n"))
            del buf[: max(0, len(buf) - self._max)]

    def read(self, namespace: str, pod: str, container: str | None = None) -> list[str]:
        with self._lock:
            if container is not None:
                return list(self._lines.get((namespace, pod, container), []))
            for (ns, name, _c), buf in self._lines.items():
                if ns == namespace and name == pod:
                    return list(buf)
            return []

    def drop(self, namespace: str, pod: str) -> None:
        with self._lock:
            for key in [k for k in self._lines if k[0] == namespace and k[1] == pod]:
                del self._lines[key]


# Optional Runtime attribute (not in the Protocol above, to keep its signature unchanged):
#   runtime.pod_logs: PodLogs  -- shared by the API server (pods/log) and the controllers.
# Controllers read it with getattr(runtime, "pod_logs", None).
