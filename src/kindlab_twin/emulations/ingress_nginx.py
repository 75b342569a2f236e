"""Emulated ingress-nginx controller processes: one per Running pod whose container image is
registry.k8s.io/ingress-nginx/controller, configured only from that container's args (after
$(VAR) expansion), its ServiceAccount's rights and the IngressClasses. Rules: nginx_logic.py.

Each process acts with its pod's ServiceAccount token (cluster.pod_store): what it may list
and get at start-up, and every write it makes (Lease, Ingress status, Events), is decided by
the real API server's authorizer. It reads Ingresses, Pods and Services from the twin's
shared cache, as the real controller reads its informers, filtered to what it watches.

Each process: start-up checks (kubelet crash-loops the pod when they are fatal) → informer
(IngressTracker) → leader election on its Lease → while leader, status sync at once and then
every --status-update-interval (60 s) seconds, divided by time_scale → on stop, Shutdown()
(--update-status-on-shutdown).
"""
from __future__ import annotations

import copy
import datetime as _dt
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from kindlab_twin.collection import nginx_binary
from kindlab_twin.contract import Conflict, Forbidden, NotFound, Obj, Store

from . import images
from . import nginx_logic as nl
from .base import (INGRESS, INGRESSCLASS, LEASE, NAMESPACE, NODE, POD, SERVICE, LoopEmulation,
                   is_terminating, pod_ready, pod_running)

CONTAINER_KIND = images.INGRESS_NGINX
HASH_LABELS = ("pod-template-hash", "controller-revision-hash", "pod-template-generation")


def controller_container(pod: Obj) -> dict[str, Any] | None:
    for c in pod.get("spec", {}).get("containers") or []:
        if images.kind_of(str(c.get("image", ""))) == CONTAINER_KIND:
            return dict(c)
    return None


def container_running(pod: Obj, name: str) -> bool:
    for cs in pod.get("status", {}).get("containerStatuses") or []:
        if cs.get("name") == name:
            return "running" in (cs.get("state") or {})
    return False


def startup_check(store: Store, pod: Obj, container: dict[str, Any]) -> images.StartResult:
    """cmd/nginx/main.go start-up, in its order; fatal steps exit 255 (klog.Fatal), flag
    parse errors exit 2 (pflag ExitOnError)."""
    logs = nl.banner()
    try:
        cfg = nl.config_from_args(images.container_argv(pod, container))
    except nl.FlagError as exc:
        return images.StartResult(False, logs + [str(exc)], 2)
    err = nl.validate_config(cfg)
    if err:
        return images.StartResult(False, logs + [nl.klog_line("F", "main.go:64", err)], 255)
    logs.append(nl.klog_infos("main.go:205", "Creating API client", host="https://10.96.0.1:443"))
    if cfg.publish_service:
        try:
            ns, name = nl.split_ns_name(cfg.publish_service)
        except nl.PublishServiceError as exc:
            return images.StartResult(False, logs + [nl.klog_line("F", "main.go:89", str(exc))], 255)
        if store.get(SERVICE, ns, name) is None:
            msg = f'no service with name {name} found in namespace {ns}: services "{name}" not found'
            return images.StartResult(False, logs + [nl.klog_line("F", "main.go:89", msg)], 255)
    if cfg.watch_namespace and store.get(NAMESPACE, None, cfg.watch_namespace) is None:
        msg = f'No namespace with name {cfg.watch_namespace} found: namespaces "{cfg.watch_namespace}" not found'
        return images.StartResult(False, logs + [nl.klog_line("F", "main.go:96", msg)], 255)
    return images.StartResult(True, logs)


images.register_startup(CONTAINER_KIND, startup_check)


def micro_time(t: float | None = None) -> str:
    d = _dt.datetime.fromtimestamp(t if t is not None else time.time(), _dt.timezone.utc)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{d.microsecond:06d}Z"


@dataclass
class Instance:
    """One running controller process (keyed by pod uid)."""

    namespace: str
    pod_name: str
    uid: str
    container: str
    labels: dict[str, str]
    service_account: str
    cfg: nl.NginxConfig
    tracker: nl.IngressTracker
    api: Store  # as the pod's ServiceAccount
    leader: bool = False
    next_sync: float = 0.0
    observed: tuple[str, str] | None = None  # (holder, renewTime) last seen on the Lease
    observed_at: float = 0.0
    next_renew: float = 0.0
    known_leader: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.pod_name)


class Hub:
    """What the data plane needs from the running controllers (same process)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.instances: dict[tuple[str, str], Instance] = {}

    def ingresses_for(self, namespace: str, pod: str) -> list[Obj] | None:
        with self.lock:
            inst = self.instances.get((namespace, pod))
            return copy.deepcopy(inst.tracker.list_ingresses()) if inst else None


_HUBS: dict[int, Hub] = {}


def hub_for(store: Store) -> Hub:
    return _HUBS.setdefault(id(store), Hub())


class IngressNginxEmulation(LoopEmulation):
    name = "ingress-nginx"
    manager = nl.FIELD_MANAGER
    watches = ("Pod", "Ingress", "IngressClass", "Service", "Node", "ClusterRoleBinding", "Namespace")  # Leases: timer-driven
    period = 5.0

    def setup(self) -> None:
        assert self.cluster is not None
        self.logs = self.cluster.pod_logs
        self.hub = hub_for(self.store)
        self.instances: dict[str, Instance] = {}
        self._events: dict[tuple[str, str, str, str], tuple[str, int]] = {}  # → (Event name, count)

    def teardown(self) -> None:
        with self.hub.lock:
            self.hub.instances.clear()
        _HUBS.pop(id(self.store), None)

    def log(self, inst: Instance, line: str) -> None:
        self.logs.append(inst.namespace, inst.pod_name, line, container=inst.container)

    # --- lifecycle --------------------------------------------------------------------------
    def reconcile(self) -> None:
        pods = {p["metadata"].get("uid") or p["metadata"]["name"]: p for p in self.store.list(POD)}
        live: dict[str, Obj] = {}
        for uid, pod in pods.items():
            c = controller_container(pod)
            if c and pod_running(pod) and not is_terminating(pod) and container_running(pod, c["name"]):
                live[uid] = pod
        for uid in [u for u in self.instances if u not in live]:
            self.shutdown(self.instances.pop(uid))
        for uid, pod in live.items():
            if uid not in self.instances:
                inst = self.boot(pod)
                if inst is None:
                    continue
                self.instances[uid] = inst
        with self.hub.lock:
            self.hub.instances = {i.key: i for i in self.instances.values()}
        ingresses = self.store.list(INGRESS)
        classes = self.store.list(INGRESSCLASS)
        ns_labels = {n["metadata"]["name"]: dict(n["metadata"].get("labels") or {}) for n in self.store.list(NAMESPACE)}
        for inst in list(self.instances.values()):
            our = set() if inst.tracker.ignore_ingress_class else nl.our_class_names(classes, inst.cfg)
            with self.hub.lock:
                synced = inst.tracker.observe(ingresses, our, ns_labels)
            for k in synced:
                self.log_sync_event(inst, inst.tracker.accepted[k])
            self.elect(inst)
            if inst.leader and inst.cfg.update_status and time.monotonic() >= inst.next_sync:
                inst.next_sync = time.monotonic() + self.scaled(inst.cfg.sync_period)
                self.sync_status(inst)

    def boot(self, pod: Obj) -> Instance | None:
        c = controller_container(pod)
        assert c is not None
        try:
            cfg = nl.config_from_args(images.container_argv(pod, c))
        except nl.FlagError:
            return None  # the kubelet already crash-loops it
        ns, name = pod["metadata"].get("namespace", "default"), pod["metadata"]["name"]
        sa = pod.get("spec", {}).get("serviceAccountName") or "default"
        assert self.cluster is not None
        api = self.cluster.pod_store(pod)
        # main.go lists IngressClasses once at start: forbidden → the IngressClass feature is off.
        try:
            api.list(INGRESSCLASS)
            forbidden_classes = ""
        except Forbidden as exc:
            forbidden_classes = str(exc)
        can_get_nodes = True
        node_name = pod.get("spec", {}).get("nodeName", "")
        try:
            api.get(NODE, None, node_name)
        except Forbidden:
            can_get_nodes = False
        inst = Instance(ns, name, pod["metadata"].get("uid", name), c["name"],
                        dict(pod["metadata"].get("labels") or {}), sa, cfg,
                        nl.IngressTracker(cfg, bool(forbidden_classes)), api)
        if forbidden_classes:
            self.log(inst, nl.klog_line("W", "main.go:111", "No permissions to list and get Ingress Classes: "
                                        f"{forbidden_classes}, IngressClass feature will be disabled"))
        self.log(inst, nl.klog_infos("nginx.go:273", "Starting NGINX Ingress controller"))
        inst.extra["can_get_nodes"] = can_get_nodes
        inst.extra["node"] = pod.get("spec", {}).get("nodeName", "")
        if cfg.disable_leader_election:
            inst.leader = True
        return inst

    def addresses(self, inst: Instance) -> list[dict[str, str]]:
        failed: list[str] = []
        addrs = nl.running_addresses(inst.cfg, self.store, inst.namespace, inst.labels,
                                     bool(inst.extra.get("can_get_nodes", True)), failed)
        for node in failed:
            msg = (f'nodes "{node}" is forbidden: User "system:serviceaccount:{inst.namespace}:{inst.service_account}" '
                   f'cannot get resource "nodes" in API group "" at the cluster scope')
            self.log(inst, nl.klog_infos("main.go:49", "Error getting node", severity="E", err=msg, name=node))
        return addrs

    def shutdown(self, inst: Instance) -> None:
        """status.go Shutdown, run by the stopping process (leader or not)."""
        self.release_lease(inst)
        if not inst.cfg.update_status or not inst.cfg.update_status_on_shutdown:
            if not inst.cfg.update_status_on_shutdown:
                self.log(inst, nl.klog_line("W", "status.go:119", "skipping update of status of Ingress rules"))
            return
        try:
            addrs = self.addresses(inst)
        except nl.PublishServiceError as exc:
            self.log(inst, nl.klog_infos("status.go:125", "error obtaining running IP address", severity="E", err=str(exc)))
            return
        if len(addrs) > 1:
            self.log(inst, nl.klog_infos("status.go:131", "leaving status update for next leader"))
            return
        sel = {k: v for k, v in inst.labels.items() if k not in HASH_LABELS}
        others = [p for p in self.store.list(POD, inst.namespace, sel) if p["metadata"]["name"] != inst.pod_name]
        if others:  # isRunningMultiplePods (the stopping pod itself still counts upstream)
            return
        self.log(inst, nl.klog_infos("status.go:140", "removing value from ingress status", address=addrs))
        self.update_status(inst, [])

    # --- leader election (client-go leaderelection with a LeaseLock) --------------------------
    def elect(self, inst: Instance) -> None:
        if inst.cfg.disable_leader_election:
            return
        now = time.monotonic()
        if now < inst.next_renew:
            return
        retry = self.scaled(inst.cfg.election_ttl / 4)
        inst.next_renew = now + retry
        try:
            lease = inst.api.get(LEASE, inst.namespace, inst.cfg.election_id)
        except Forbidden:
            return
        ttl = int(inst.cfg.election_ttl)
        if lease is None:
            body = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": inst.cfg.election_id, "namespace": inst.namespace},
                    "spec": {"holderIdentity": inst.pod_name, "leaseDurationSeconds": ttl,
                             "acquireTime": micro_time(), "renewTime": micro_time(), "leaseTransitions": 0}}
            try:
                inst.api.create(body, self.manager)
            except (Conflict, Forbidden):
                return
            self.became_leader(inst)
            return
        spec = lease.setdefault("spec", {})
        holder = spec.get("holderIdentity") or ""
        obs = (holder, str(spec.get("renewTime", "")))
        if obs != inst.observed:
            inst.observed, inst.observed_at = obs, now
        if holder and holder != inst.known_leader:
            inst.known_leader = holder
            self.log(inst, nl.klog_infos("status.go:85", "New leader elected", identity=holder))
        expired = now - inst.observed_at > self.scaled(float(spec.get("leaseDurationSeconds") or ttl))
        if holder == inst.pod_name or not holder or expired:
            taking_over = holder != inst.pod_name
            spec["holderIdentity"] = inst.pod_name
            spec["leaseDurationSeconds"] = ttl
            spec["renewTime"] = micro_time()
            if taking_over:
                spec["acquireTime"] = micro_time()
                spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + (1 if holder else 0)
            try:
                updated = inst.api.update(lease, self.manager)
            except (Conflict, NotFound, Forbidden):
                inst.leader = False
                return
            inst.observed = (inst.pod_name, str(updated.get("spec", {}).get("renewTime", "")))
            inst.observed_at = now
            if not inst.leader:
                self.became_leader(inst)
        elif inst.leader:
            inst.leader = False  # lost the lease: OnStoppedLeading stops the status sync

    def log_sync_event(self, inst: Instance, ing: Obj) -> None:
        """The recorder's line when an Ingress enters the controller's store (store.go
        recorder.Eventf(ing, Normal, "Sync", "Scheduled for sync"))."""
        m = ing["metadata"]
        ref = (f'v1.ObjectReference{{Kind:"Ingress", Namespace:"{m.get("namespace", "")}", Name:"{m["name"]}", '
               f'UID:"{m.get("uid", "")}", APIVersion:"networking.k8s.io/v1", ResourceVersion:"{m.get("resourceVersion", "")}", '
               'FieldPath:""}')
        self.log(inst, nl.klog_line("I", "event.go:377", f"Event({ref}): type: 'Normal' reason: 'Sync' Scheduled for sync"))
        self.record_event(inst, ing, "Sync", "Scheduled for sync")

    def record_event(self, inst: Instance, obj: Obj, reason: str, message: str) -> None:
        """A core/v1 Event as client-go's legacy recorder writes it (source component
        nginx-ingress-controller, host = the pod's node); repeats bump count/lastTimestamp."""
        m = obj["metadata"]
        ns = m.get("namespace", "default")
        key = (inst.uid, m.get("uid", ""), reason, message)
        now = _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        seen = self._events.get(key)
        try:
            if seen is not None:
                # client-go's correlator raises count with a PATCH (the chart grants events create and
                # patch, not get or update); server-side apply is a PATCH.
                name, count = seen[0], seen[1] + 1
                inst.api.apply({"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": ns},
                                "count": count, "lastTimestamp": now}, self.manager)
                self._events[key] = (name, count)
                return
            name = f"{m['name']}.{time.time_ns():x}"
            inst.api.create({
                "apiVersion": "v1", "kind": "Event",
                "metadata": {"name": name, "namespace": ns},
                "involvedObject": {"kind": obj.get("kind", "Ingress"), "apiVersion": obj.get("apiVersion", "networking.k8s.io/v1"),
                                   "name": m["name"], "namespace": ns, "uid": m.get("uid", ""),
                                   "resourceVersion": m.get("resourceVersion", "")},
                "reason": reason, "message": message, "type": "Normal", "count": 1,
                "firstTimestamp": now, "lastTimestamp": now,
                "source": {"component": nl.FIELD_MANAGER, "host": inst.extra.get("node", "")},
                "reportingComponent": "", "reportingInstance": "",
            }, self.manager)
            self._events[key] = (name, 1)
        except Exception:  # events are best effort, as in client-go
            pass

    def became_leader(self, inst: Instance) -> None:
        inst.leader = True
        inst.next_sync = 0.0  # syncStatus.Run enqueues an initial sync
        if inst.known_leader != inst.pod_name:
            inst.known_leader = inst.pod_name
            self.log(inst, nl.klog_infos("status.go:85", "New leader elected", identity=inst.pod_name))

    def release_lease(self, inst: Instance) -> None:
        # ingress-nginx does not set ReleaseOnCancel: the lease simply expires
        inst.leader = False

    # --- status ------------------------------------------------------------------------------
    def sync_status(self, inst: Instance) -> None:
        try:
            addrs = self.addresses(inst)
        except nl.PublishServiceError as exc:
            # task queue: sync returned an error → logged and requeued; status untouched
            self.log(inst, nl.klog_infos("queue.go:136", "requeuing", severity="E", err=str(exc), key="sync status"))
            return
        if not inst.cfg.publish_status_address and not inst.cfg.publish_service:
            # runningAddresses (node-IP mode) skips and logs Running pods that are not Ready
            for p in self.store.list(POD, inst.namespace, inst.labels):
                if pod_running(p) and not pod_ready(p):
                    self.log(inst, nl.klog_infos("status.go:224", "POD is not ready",
                                                 pod=f"{p['metadata']['namespace']}/{p['metadata']['name']}",
                                                 node=p.get("spec", {}).get("nodeName", "")))
        self.update_status(inst, nl.standardize(addrs))

    def update_status(self, inst: Instance, new: list[dict[str, str]]) -> None:
        with self.hub.lock:
            ings = inst.tracker.list_ingresses()
        for ing in ings:
            cur_list = ((ing.get("status") or {}).get("loadBalancer") or {}).get("ingress")
            if nl.status_equal(cur_list, new):
                continue
            ns, name = ing["metadata"].get("namespace", ""), ing["metadata"]["name"]
            try:
                fresh = inst.api.get(INGRESS, ns, name)
            except Forbidden as exc:
                self.log(inst, nl.klog_line("W", "status.go:315", f"error updating ingress rule: {exc}"))
                continue
            if fresh is None:
                continue
            current = ((fresh.get("status") or {}).get("loadBalancer") or {}).get("ingress")
            self.log(inst, nl.klog_infos("status.go:311", nginx_binary.STATUS_LOG_MESSAGE, namespace=ns, ingress=name,
                                         currentValue=nl.lb_status_value(current), newValue=nl.lb_status_value(new)))
            status = copy.deepcopy(fresh.get("status") or {})
            status["loadBalancer"] = {"ingress": copy.deepcopy(new)} if new else {}
            fresh["status"] = status
            try:
                inst.api.update(fresh, self.manager, subresource="status")
            except (Conflict, NotFound, Forbidden) as exc:
                self.log(inst, nl.klog_line("W", "status.go:315", f"error updating ingress rule: {exc}"))

    def next_wait(self) -> float:
        deadlines = [i.next_renew for i in self.instances.values() if not i.cfg.disable_leader_election]
        deadlines += [i.next_sync for i in self.instances.values() if i.leader]
        if not deadlines:
            return self.idle_wait()
        return max(0.005, min(self.idle_wait(), min(deadlines) - time.monotonic()))
