"""What the twin's emulations (``kindlab_twin.emulations``: the kubelets' containers, MetalLB,
ingress-nginx, the data plane) may use of the cluster: a Store (the real kube-apiserver behind
an informer cache, ``kindlab_twin.kubeapi.CachedStore``), the ClusterHandle they are started
with, and the pod logs they write.

Every write is a real API request with the emulation's own field manager, so
resourceVersions, watch events and managedFields are the API server's own.

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


class Forbidden(Exception):
    """The API server's authorizer or admission refused the request (HTTP 403)."""


class Store(Protocol):
    """What an emulation may do with the cluster state."""

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


class PodLogSink(Protocol):
    """Where emulated containers write their output (served by `kubectl logs`)."""

    def append(self, namespace: str, pod: str, line: str, container: str = "") -> None: ...

    def restart(self, namespace: str, pod: str, container: str) -> None: ...

    def clear(self, namespace: str, pod: str) -> None: ...


class ClusterHandle(Protocol):
    """The twin cluster as an emulation sees it: what the twin process hands every emulation
    at start (``kindlab_twin.cluster.TwinClusterHandle``)."""

    @property
    def store(self) -> Store:
        """The admin's view, for emulations that play cluster components."""

    cluster_name: str
    time_scale: float  # divide every emulation's period by this
    state_dir: str  # per-cluster state directory (pid, port, connect_to.json live here)
    kind_config: Obj  # the parsed kind Cluster config (nodes with roles); {} = one control-plane

    @property
    def pod_logs(self) -> PodLogSink:
        """Where emulated containers write their output."""

    def pod_store(self, pod: Obj) -> Store:
        """A store that acts as POD: its ServiceAccount's token (TokenRequest bound to the
        pod), uncached, so the real authorizer decides what the pod's process may do."""


class Emulation(Protocol):
    """One emulation of what cannot run here (a kubelet's containers, MetalLB, ingress-nginx, the
    data plane), a client of the real API server. The twin cluster calls start() once, then stop()
    at shutdown. Emulations run their own threads and never block start()."""

    name: str

    def start(self, cluster: ClusterHandle) -> None: ...

    def stop(self) -> None: ...


# The data plane publishes how to reach what the cluster exposes: a JSON list written to
# <state_dir>/connect_to.json, each entry {"host": "100.64.0.0", "port": 80,
# "target_host": "127.0.0.1", "target_port": 41234, "what": "one/ingress-nginx-controller"}.
# `kindlab-twin get connect-to --name N` prints them curl-style (HOST:PORT:127.0.0.1:PORT).
CONNECT_TO_FILE = "connect_to.json"
