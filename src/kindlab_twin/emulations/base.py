"""Shared machinery for the emulations: a level-triggered reconcile loop plus the
small object helpers they need (readiness, timestamps)."""
from __future__ import annotations

import datetime as _dt
import logging
import threading
import time
from typing import Callable

from kindlab_twin.contract import ClusterHandle, Conflict, EventType, Forbidden, Invalid, NotFound, Obj, ResourceRef, Store

log = logging.getLogger("kindlab_twin.emulations")

NODE: ResourceRef = ("v1", "Node")
POD: ResourceRef = ("v1", "Pod")
SERVICE: ResourceRef = ("v1", "Service")
NAMESPACE: ResourceRef = ("v1", "Namespace")
DEPLOYMENT: ResourceRef = ("apps/v1", "Deployment")
ENDPOINTSLICE: ResourceRef = ("discovery.k8s.io/v1", "EndpointSlice")
INGRESS: ResourceRef = ("networking.k8s.io/v1", "Ingress")
INGRESSCLASS: ResourceRef = ("networking.k8s.io/v1", "IngressClass")
LEASE: ResourceRef = ("coordination.k8s.io/v1", "Lease")
EVENT: ResourceRef = ("v1", "Event")
IPADDRESSPOOL: ResourceRef = ("metallb.io/v1beta1", "IPAddressPool")
L2ADVERTISEMENT: ResourceRef = ("metallb.io/v1beta1", "L2Advertisement")

WriteErrors = (Conflict, NotFound, Invalid)


def now_rfc3339() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def is_terminating(obj: Obj) -> bool:
    return bool(obj.get("metadata", {}).get("deletionTimestamp"))


def pod_ready(pod: Obj) -> bool:
    for cond in pod.get("status", {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


def pod_running(pod: Obj) -> bool:
    return bool(pod.get("status", {}).get("phase") == "Running")


class LoopEmulation:
    """Level-triggered: any store event of interest (or the period) wakes the loop, which
    recomputes the desired state from the whole store and writes only the differences.
    Subclasses set `name`, `manager`, `watches` and implement reconcile()."""

    name = "emulation"
    manager = "controller"
    watches: tuple[str, ...] = ()  # kinds that wake the loop; () = every event
    period = 5.0  # seconds of cluster time between unconditional passes
    min_idle = 0.5  # real seconds: the unconditional pass is a safety net, events drive the work

    def __init__(self) -> None:
        self.cluster: ClusterHandle | None = None
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._unsubscribe: Callable[[], None] | None = None

    @property
    def store(self) -> Store:
        assert self.cluster is not None
        return self.cluster.store

    @property
    def time_scale(self) -> float:
        scale = float(getattr(self.cluster, "time_scale", 1.0) or 1.0)
        return scale if scale > 0 else 1.0

    def scaled(self, seconds: float) -> float:
        return seconds / self.time_scale

    def start(self, cluster: ClusterHandle) -> None:
        self.cluster = cluster
        self._stop.clear()
        self.setup()
        self._unsubscribe = cluster.store.subscribe(self._on_event)
        self._thread = threading.Thread(target=self._run, name=f"twin-{self.name}", daemon=True)
        self._thread.start()

    def setup(self) -> None:
        """Hook run once in start(), before the loop."""

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        if self._unsubscribe:
            self._unsubscribe()
            self._unsubscribe = None
        if self._thread and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)
        self.teardown()

    def teardown(self) -> None:
        """Hook run once in stop(), after the loop ended."""

    def _on_event(self, event: EventType, obj: Obj) -> None:
        if not self.watches or obj.get("kind") in self.watches:
            self._wake.set()

    def wake(self) -> None:
        self._wake.set()

    def idle_wait(self) -> float:
        return max(self.min_idle, self.scaled(self.period))

    def next_wait(self) -> float:
        return self.idle_wait()

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.clear()
            try:
                self.reconcile()
            except WriteErrors as exc:  # raced with another writer: the next pass converges
                log.debug("%s: retry after %s", self.name, exc)
                self._wake.wait(timeout=0.02)  # brief back-off, then converge
            except Forbidden as exc:  # e.g. creating in a Terminating namespace
                log.debug("%s: %s", self.name, exc)
            except Exception:  # keep the emulation alive
                log.exception("%s: reconcile failed", self.name)
            self._wake.wait(timeout=max(0.005, self.next_wait()))
            # debounce bursts of events (one write often triggers several)
            time.sleep(0.002)

    def reconcile(self) -> None:
        raise NotImplementedError


def safe_list(store: Store, ref: ResourceRef, namespace: str | None = None) -> list[Obj]:
    """List a kind that may not be served yet (a CRD not installed): none exist then."""
    try:
        return store.list(ref, namespace)
    except NotFound:
        return []
