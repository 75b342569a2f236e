"""The twin's object store: the cluster state behind the API and the controllers.

One lock guards everything; reads and writes deep-copy so no caller shares a dict with
the store. Every committed change gets the next global resourceVersion, an entry in a
bounded event history (for watches from a resourceVersion) and a listener call.
"""
from __future__ import annotations

import builtins
import copy
import functools
import itertools
import datetime as _dt
import json
import random
import re
import string
import threading
import uuid
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Literal, TypeVar, cast

from . import patching
from .contract import Conflict, EventType, Invalid, Listener, NotFound, Obj, ResourceRef
from .schema import Node, Registry, ResourceType, type_errors

DEFAULT_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL_NAME_KINDS = {"Namespace", "Service"}
_PATH_SEGMENT_KINDS = {"Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding"}
_META_KEEP = ("name", "namespace", "generateName", "labels", "annotations", "ownerReferences", "finalizers")


class UnknownKind(NotFound):
    """No resource is served for this apiVersion/kind (kubectl: "no matches for kind")."""


class AlreadyExists(Conflict):
    """Create of an object that exists (HTTP 409 AlreadyExists)."""


class Gone(Exception):
    """A watch asked for a resourceVersion older than the kept history (HTTP 410)."""


class Forbidden(Exception):
    """The write is not allowed in the current state (e.g. namespace terminating)."""


class InvalidObject(Invalid):
    """Invalid with the list of field causes (message stays the summary)."""

    def __init__(self, message: str, causes: list[str]) -> None:
        super().__init__(message)
        self.causes = causes


@dataclass
class Event:
    rv: int
    type: EventType
    key: tuple[str, str]
    namespace: str
    obj: Obj
    prev: Obj | None = None  # the object before this change (watch selectors need it)


def now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def qualified(rt: ResourceType) -> str:
    """'deployments.apps' style name used in error messages."""
    return f"{rt.plural}.{rt.group}" if rt.group else rt.plural


# --- label selectors --------------------------------------------------------------------

Selector = Callable[[dict[str, str]], bool]


def parse_label_selector(text: str | None) -> Selector:
    """Parse 'a=b,c!=d,e in (x,y),f notin (z),g,!h' into a predicate on a label dict."""
    if not text or not text.strip():
        return lambda labels: True
    reqs: list[Selector] = []
    for part in _split_selector(text):
        reqs.append(_requirement(part.strip()))
    return lambda labels: all(r(labels) for r in reqs)


def _split_selector(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if depth != 0:
        raise ValueError(f"unbalanced parentheses in selector {text!r}")
    parts.append(cur)
    return [p for p in parts if p.strip()]


def _requirement(part: str) -> Selector:
    m = re.fullmatch(r"([^\s!=()]+)\s+(in|notin)\s+\(([^)]*)\)", part)
    if m:
        key, op = m.group(1), m.group(2)
        values = {v.strip() for v in m.group(3).split(",") if v.strip()}
        if op == "in":
            return lambda l: l.get(key) in values
        return lambda l: l.get(key) not in values
    m = re.fullmatch(r"([^\s!=]+)\s*(==|=|!=)\s*([^\s!=]*)", part)
    if m:
        key, op, val = m.groups()
        if op == "!=":
            return lambda l: l.get(key) != val
        return lambda l: l.get(key) == val
    if re.fullmatch(r"![^\s!=()]+", part):
        return lambda l: part[1:] not in l
    if re.fullmatch(r"[^\s!=()]+", part):
        return lambda l: part in l
    raise ValueError(f"unable to parse requirement: {part!r}")


def parse_field_selector(text: str | None) -> Callable[[Obj], bool]:
    """metadata.name / metadata.namespace / any dotted path, with = == !=."""
    if not text or not text.strip():
        return lambda obj: True
    reqs = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*([A-Za-z0-9_.]+)\s*(==|=|!=)\s*(.*?)\s*", part)
        if not m:
            raise ValueError(f"invalid field selector: {part!r}")
        path, op, val = m.groups()
        reqs.append((path.split("."), op == "!=", val))

    def pred(obj: Obj) -> bool:
        for path, neg, val in reqs:
            cur: Any = obj
            for p in path:
                cur = cur.get(p) if isinstance(cur, dict) else None
            got = "" if cur is None else str(cur)
            if (got == val) == neg:
                return False
        return True

    return pred


# --- defaults (what a real API server fills in, the parts clients look at) -----------------

def _default_containers(spec: dict[str, Any]) -> None:
    for c in (spec.get("containers") or []) + (spec.get("initContainers") or []):
        if not isinstance(c, dict):
            continue
        image = str(c.get("image", ""))
        latest = ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest")
        c.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("resources", {})
        for p in c.get("ports") or []:
            if isinstance(p, dict):
                p.setdefault("protocol", "TCP")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("securityContext", {})


def apply_defaults(obj: Obj) -> None:
    kind, spec = obj.get("kind"), obj.get("spec")
    if not isinstance(spec, dict):
        return
    if kind == "Pod":
        _default_containers(spec)
    elif kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job"):
        if kind in ("Deployment", "ReplicaSet", "StatefulSet"):
            spec.setdefault("replicas", 1)
        if kind == "Deployment":
            spec.setdefault("revisionHistoryLimit", 10)
            spec.setdefault("progressDeadlineSeconds", 600)
            spec.setdefault("strategy", {"type": "RollingUpdate",
                                         "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
        tpl = spec.get("template")
        if isinstance(tpl, dict) and isinstance(tpl.get("spec"), dict):
            _default_containers(tpl["spec"])
    elif kind == "Service":
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        for p in spec.get("ports") or []:
            if isinstance(p, dict):
                p.setdefault("protocol", "TCP")
                if "port" in p:
                    p.setdefault("targetPort", p["port"])


# --- the store ------------------------------------------------------------------------

_F = TypeVar("_F", bound=Callable[..., Any])


def _notifies(fn: _F) -> _F:
    """Run queued listener calls once the outermost write has released the lock."""

    @functools.wraps(fn)
    def wrapper(self: "ObjectStore", *a: Any, **kw: Any) -> Any:
        try:
            return fn(self, *a, **kw)
        finally:
            self._flush()

    return cast(_F, wrapper)


class ObjectStore:
    """Implements contract.Store, plus the extras the API server needs."""

    def __init__(self, registry: Registry | None = None, history: int = 20000,
                 namespace_grace: float = 0.0) -> None:
        self.registry = registry or Registry()
        # How long a deleted namespace stays Terminating before its contents go (the
        # namespace controller's delay); 0 = at once, in the deleting call.
        self.namespace_grace = namespace_grace
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._data: dict[tuple[str, str], dict[tuple[str, str], Obj]] = {}
        self._rv = 0
        self._history: deque[Event] = deque(maxlen=history)
        self._listeners: builtins.list[Listener] = []
        self._pending = threading.local()
        for ns in DEFAULT_NAMESPACES:
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, "kube-apiserver")

    # -- type lookup
    def resolve(self, ref: ResourceRef) -> ResourceType:
        rt = self.registry.by_ref(*ref)
        if rt is None:
            raise UnknownKind(f'no matches for kind "{ref[1]}" in version "{ref[0]}"')
        return rt

    @property
    def resource_version(self) -> str:
        with self._lock:
            return str(self._rv)

    # -- contract.Store
    def get(self, ref: ResourceRef, namespace: str | None, name: str) -> Obj | None:
        rt = self.resolve(ref)
        return self.get_rt(rt, namespace, name)

    def list(self, ref: ResourceRef, namespace: str | None = None,
             label_selector: dict[str, str] | None = None) -> builtins.list[Obj]:
        rt = self.resolve(ref)
        want = label_selector or {}

        def sel(labels: dict[str, str]) -> bool:
            return all(labels.get(k) == v for k, v in want.items())

        return self.list_rt(rt, namespace, sel)[0]

    def list_selector(self, ref: ResourceRef, namespace: str | None = None, selector: str | None = None) -> builtins.list[Obj]:
        return self.list_rt(self.resolve(ref), namespace, parse_label_selector(selector))[0]

    def create(self, obj: Obj, manager: str) -> Obj:
        rt = self.resolve((obj.get("apiVersion", ""), obj.get("kind", "")))
        return self.create_rt(rt, obj, manager)

    def update(self, obj: Obj, manager: str, subresource: Literal["status"] | None = None) -> Obj:
        rt = self.resolve((obj.get("apiVersion", ""), obj.get("kind", "")))
        meta = obj.get("metadata") or {}
        return self.update_rt(rt, meta.get("namespace"), meta.get("name", ""), obj, manager, subresource)

    def apply(self, obj: Obj, manager: str, subresource: Literal["status"] | None = None,
              force: bool = True) -> Obj:
        rt = self.resolve((obj.get("apiVersion", ""), obj.get("kind", "")))
        meta = obj.get("metadata") or {}
        return self.apply_rt(rt, meta.get("namespace"), meta.get("name", ""), obj, manager, subresource, force)

    def delete(self, ref: ResourceRef, namespace: str | None, name: str) -> None:
        self.delete_rt(self.resolve(ref), namespace, name)

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    register_listener = subscribe  # what the runtime uses for controllers' listeners

    # -- reads
    def _ns(self, rt: ResourceType, namespace: str | None) -> str:
        return (namespace or "default") if rt.namespaced else ""

    def _out(self, rt: ResourceType, obj: Obj) -> Obj:
        out = copy.deepcopy(obj)
        out["apiVersion"] = rt.api_version
        return out

    def get_rt(self, rt: ResourceType, namespace: str | None, name: str) -> Obj | None:
        with self._lock:
            obj = self._data.get(rt.key, {}).get((self._ns(rt, namespace), name))
            return self._out(rt, obj) if obj is not None else None

    def list_rt(self, rt: ResourceType, namespace: str | None, selector: Selector | None = None,
                field_pred: Callable[[Obj], bool] | None = None) -> tuple[builtins.list[Obj], str]:
        """Matching objects sorted by namespace/name, and the list resourceVersion."""
        with self._lock:
            bucket = self._data.get(rt.key, {})
            keys = sorted(k for k in bucket if not namespace or not rt.namespaced or k[0] == namespace)
            out = []
            for k in keys:
                obj = bucket[k]
                if selector and not selector((obj.get("metadata") or {}).get("labels") or {}):
                    continue
                if field_pred and not field_pred(obj):
                    continue
                out.append(self._out(rt, obj))
            return out, str(self._rv)

    # -- writes
    @_notifies
    def create_rt(self, rt: ResourceType, obj: Obj, manager: str, dry_run: bool = False,
                  namespace: str | None = None) -> Obj:
        obj = copy.deepcopy(obj)
        if not isinstance(obj.get("metadata"), dict):
            obj["metadata"] = {}
        meta = obj["metadata"]
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = meta["generateName"] + "".join(random.choices(string.ascii_lowercase + string.digits, k=5))
        if rt.namespaced:
            meta["namespace"] = meta.get("namespace") or namespace or "default"
        else:
            meta.pop("namespace", None)
        obj["apiVersion"], obj["kind"] = rt.api_version, rt.kind
        for k in ("uid", "resourceVersion", "creationTimestamp", "deletionTimestamp", "generation", "managedFields", "selfLink"):
            meta.pop(k, None)
        if rt.has_status and rt.kind != "CustomResourceDefinition":
            obj.pop("status", None)
        self._prepare_create(rt, obj)
        with self._lock:
            self._validate(rt, obj)
            ns = self._data.get(("", "namespaces"), {}).get(("", meta.get("namespace", ""))) if rt.namespaced else None
            if ns is not None and ns["metadata"].get("deletionTimestamp"):
                raise Forbidden(f'{rt.plural} "{meta["name"]}" is forbidden: unable to create new content in namespace '
                                f'{meta["namespace"]} because it is being terminated')
            key = (meta.get("namespace", ""), meta["name"])
            if key in self._data.get(rt.key, {}):
                raise AlreadyExists(f'{qualified(rt)} "{meta["name"]}" already exists')
            meta["uid"] = str(uuid.uuid4())
            meta["creationTimestamp"] = now()
            meta["generation"] = 1
            fields = patching.object_fields(obj, rt.schema(), False if rt.has_status else None)
            meta["managedFields"] = [self._mf_entry(manager, "Update", rt, set(fields), None)]
            if dry_run:
                return self._out(rt, obj)
            return self._commit(rt, "ADDED", obj)

    def _prepare_create(self, rt: ResourceType, obj: Obj) -> None:
        apply_defaults(obj)
        if rt.kind == "Namespace" and rt.group == "":
            obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
            obj["status"] = {"phase": "Active"}
            obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"].get("name", "")

    @_notifies
    def update_rt(self, rt: ResourceType, namespace: str | None, name: str, obj: Obj, manager: str,
                  subresource: str | None = None, dry_run: bool = False) -> Obj:
        obj = copy.deepcopy(obj)
        with self._lock:
            old = self._current(rt, namespace, name)
            want_rv = (obj.get("metadata") or {}).get("resourceVersion")
            if want_rv and want_rv != old["metadata"]["resourceVersion"]:
                raise Conflict(self._stale_msg(rt, name))
            new = self._merge_update(rt, old, obj, subresource)
            apply_defaults(new)
            return self._write_update(rt, old, new, manager, "Update", subresource, dry_run)

    def _merge_update(self, rt: ResourceType, old: Obj, obj: Obj, subresource: str | None) -> Obj:
        if subresource == "status":
            new = copy.deepcopy(old)
            if "status" in obj:
                new["status"] = obj["status"]
            else:
                new.pop("status", None)
            return new
        new = obj
        new["apiVersion"], new["kind"] = old["apiVersion"], old["kind"]
        if not isinstance(new.get("metadata"), dict):
            new["metadata"] = {}
        meta = new["metadata"]
        incoming_mf = meta.get("managedFields")
        for k in ("uid", "creationTimestamp", "generation", "managedFields", "deletionTimestamp", "name", "namespace"):
            if k in old["metadata"]:
                meta[k] = old["metadata"][k]
            else:
                meta.pop(k, None)
        if isinstance(incoming_mf, list) and all(isinstance(e, dict) for e in incoming_mf) \
                and incoming_mf != old["metadata"].get("managedFields"):
            meta["managedFields"] = incoming_mf  # a client rewriting ownership (kubectl's CSA→SSA upgrade)
        if rt.has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        return new

    def _write_update(self, rt: ResourceType, old: Obj, new: Obj, manager: str, operation: str,
                      subresource: str | None, dry_run: bool, apply_fields: set[patching.Path] | None = None) -> Obj:
        """Validate, bump generation, record managedFields, commit (lock held)."""
        self._validate(rt, new)
        meta = new["metadata"]
        if _spec_of(old) != _spec_of(new):
            meta["generation"] = int(old["metadata"].get("generation", 1)) + 1
        status_scope = (subresource == "status") if rt.has_status else None
        meta["managedFields"] = self._managed_fields(rt, old, new, manager, operation, subresource,
                                                     status_scope, apply_fields)
        meta["resourceVersion"] = old["metadata"]["resourceVersion"]
        if _same(old, new):
            return self._out(rt, old)  # a no-op write changes nothing (not even the rv)
        if dry_run:
            return self._out(rt, new)
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._commit(rt, "MODIFIED", new)
            return self._remove(rt, new)
        return self._commit(rt, "MODIFIED", new)

    @_notifies
    def apply_rt(self, rt: ResourceType, namespace: str | None, name: str, cfg: Obj, manager: str,
                 subresource: str | None = None, force: bool = False, dry_run: bool = False) -> Obj:
        """Server-side apply of `cfg` as `manager` (creates when absent)."""
        cfg = copy.deepcopy(cfg)
        meta_in: dict[str, Any] = cfg["metadata"] if isinstance(cfg.get("metadata"), dict) else {}
        cfg["metadata"] = {k: v for k, v in meta_in.items() if k in _META_KEEP}
        if rt.namespaced:
            cfg["metadata"]["namespace"] = namespace or cfg["metadata"].get("namespace") or "default"
        else:
            cfg["metadata"].pop("namespace", None)
        cfg["metadata"]["name"] = name or cfg["metadata"].get("name", "")
        if not cfg["metadata"]["name"]:
            raise InvalidObject("metadata.name: Required value: name is required", ["metadata.name: Required value"])
        status_scope = (subresource == "status") if rt.has_status else None
        if rt.has_status and subresource != "status":
            cfg.pop("status", None)
        node = rt.schema()
        with self._lock:
            existing = self._data.get(rt.key, {}).get((self._ns(rt, namespace or cfg["metadata"].get("namespace")), cfg["metadata"]["name"]))
            if existing is None:
                if subresource == "status":
                    raise NotFound(f'{qualified(rt)} "{name}" not found')
                base = {k: v for k, v in cfg.items() if k != "status" or not rt.has_status}
                created = self.create_rt(rt, base, manager, dry_run=True)
                created["metadata"]["managedFields"] = []
                old = created
                old["metadata"]["resourceVersion"] = "0"
                is_new = True
            else:
                old = copy.deepcopy(existing)
                is_new = False
            applied = patching.object_fields(cfg, node, status_scope)
            live = patching.object_fields(old, node, status_scope)
            entries = old["metadata"].get("managedFields") or []
            mine, others = _split_entries(entries, manager, "Apply", subresource)
            conflicts = []
            conflict_paths = set()
            for p, v in applied.items():
                if v is patching._LEAF or p not in live or live[p] == v:
                    continue
                for e in others:
                    if p in e[1]:
                        conflicts.append((e[0]["manager"], e[0].get("apiVersion", ""), patching.path_str(p)))
                        conflict_paths.add(p)
            if conflicts and not force and not _upgrades_client_side_apply(manager, old, conflict_paths, node):
                raise patching.ApplyConflict(conflicts)
            if subresource == "status":
                new = copy.deepcopy(old)
                new["status"] = patching.apply_merge(old.get("status"), cfg.get("status", {}), node.child("status"))
            else:
                new = patching.apply_merge(old, cfg, node)
                apply_defaults(new)
            owned_by_others: set[patching.Path] = set()
            for e in others:
                owned_by_others |= e[1]
            removed = [p for p in mine - set(applied) if not any(q[: len(p)] == p for q in owned_by_others)]
            for p in sorted(removed, key=len, reverse=True):
                patching.remove_path(new, p)
            patching.prune_empty(new, removed)
            if is_new:
                new["metadata"]["resourceVersion"] = "0"
                new["metadata"]["managedFields"] = []
                new["metadata"]["managedFields"] = self._managed_fields(rt, old, new, manager, "Apply", subresource,
                                                                        status_scope, set(applied))
                new["metadata"].pop("resourceVersion", None)
                self._validate(rt, new)
                if dry_run:
                    return self._out(rt, new)
                return self._commit(rt, "ADDED", new)
            return self._write_update(rt, old, new, manager, "Apply", subresource, dry_run, set(applied))

    @_notifies
    def delete_rt(self, rt: ResourceType, namespace: str | None, name: str, dry_run: bool = False,
                  propagation: str = "Background", precondition_rv: str | None = None,
                  precondition_uid: str | None = None) -> Obj:
        with self._lock:
            obj = self._current(rt, namespace, name)
            if precondition_rv and precondition_rv != obj["metadata"]["resourceVersion"]:
                raise Conflict(self._stale_msg(rt, name))
            if precondition_uid and precondition_uid != obj["metadata"]["uid"]:
                raise Conflict(f"Precondition failed: UID in precondition: {precondition_uid}, UID in object meta: {obj['metadata']['uid']}")
            if dry_run:
                return self._out(rt, obj)
            if rt.kind == "Namespace" and not rt.group and self.namespace_grace > 0:
                return self._terminate_namespace(rt, obj)
            if obj["metadata"].get("finalizers"):
                if obj["metadata"].get("deletionTimestamp"):
                    return self._out(rt, obj)
                new = copy.deepcopy(obj)
                new["metadata"]["deletionTimestamp"] = now()
                new["metadata"]["deletionGracePeriodSeconds"] = 0
                return self._commit(rt, "MODIFIED", new)
            return self._remove(rt, obj, propagation)

    def _terminate_namespace(self, rt: ResourceType, obj: Obj) -> Obj:
        """Mark Terminating now; remove contents and the namespace a little later."""
        if obj["metadata"].get("deletionTimestamp"):
            return self._out(rt, obj)
        new = copy.deepcopy(obj)
        new["metadata"]["deletionTimestamp"] = now()
        new["status"] = {"phase": "Terminating"}
        out = self._commit(rt, "MODIFIED", new)
        name, uid = obj["metadata"]["name"], obj["metadata"]["uid"]
        timer = threading.Timer(self.namespace_grace, self._finish_namespace, (rt, name, uid))
        timer.daemon = True
        timer.start()
        return out

    @_notifies
    def _finish_namespace(self, rt: ResourceType, name: str, uid: str) -> None:
        with self._lock:
            cur = self._data.get(rt.key, {}).get(("", name))
            if cur is not None and cur["metadata"]["uid"] == uid:
                self._remove(rt, cur)

    def _remove(self, rt: ResourceType, obj: Obj, propagation: str = "Background") -> Obj:
        """Drop an object, then its dependents / contents (lock held)."""
        meta = obj["metadata"]
        if rt.kind == "Namespace" and rt.group == "":
            self._delete_namespace_contents(meta["name"])
        out = self._commit(rt, "DELETED", obj, remove=True)
        if rt.kind == "CustomResourceDefinition":
            self._drop_crd(obj)
        self._collect_garbage(meta["uid"], orphan=propagation == "Orphan")
        return out

    def _delete_namespace_contents(self, namespace: str) -> None:
        for key, bucket in list(self._data.items()):
            for k in [k for k in bucket if k[0] == namespace]:
                rt = self._rt_for_key(key, bucket[k])
                if rt is not None and k in bucket:
                    self._remove(rt, bucket[k])

    def _collect_garbage(self, uid: str, orphan: bool) -> None:
        for key, bucket in list(self._data.items()):
            for k, dep in list(bucket.items()):
                refs = (dep.get("metadata") or {}).get("ownerReferences") or []
                if not any(r.get("uid") == uid for r in refs):
                    continue
                rest = [r for r in refs if r.get("uid") != uid]
                rt = self._rt_for_key(key, dep)
                if rt is None or k not in bucket:
                    continue
                if orphan or any(self._uid_exists(r.get("uid")) for r in rest):
                    new = copy.deepcopy(dep)
                    new["metadata"]["ownerReferences"] = rest
                    if not rest:
                        del new["metadata"]["ownerReferences"]
                    self._commit(rt, "MODIFIED", new)
                else:
                    self._remove(rt, dep)

    def _uid_exists(self, uid: str | None) -> bool:
        return any(o["metadata"].get("uid") == uid for b in self._data.values() for o in b.values())

    def _rt_for_key(self, key: tuple[str, str], obj: Obj) -> ResourceType | None:
        group, _sep, version = obj.get("apiVersion", "").rpartition("/")
        return self.registry.by_resource(group, version, key[1])

    # -- CRDs
    def _crd_written(self, obj: Obj) -> None:
        self.registry.register_crd(obj)

    def _drop_crd(self, crd: Obj) -> None:
        types = self.registry.unregister_crd(crd["metadata"]["name"])
        for rt in types[:1]:
            for k, o in list(self._data.get(rt.key, {}).items()):
                self._commit(rt, "DELETED", o, remove=True)
            self._data.pop(rt.key, None)

    def _crd_status(self, obj: Obj) -> None:
        names = (obj.get("spec") or {}).get("names") or {}
        t = now()
        obj["status"] = {
            "acceptedNames": copy.deepcopy(names),
            "conditions": [
                {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts",
                 "message": "no conflicts found", "lastTransitionTime": t},
                {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
                 "message": "the initial names have been accepted", "lastTransitionTime": t},
            ],
            "storedVersions": [v["name"] for v in (obj.get("spec") or {}).get("versions") or [] if v.get("storage")],
        }

    # -- internals
    def _current(self, rt: ResourceType, namespace: str | None, name: str) -> Obj:
        obj = self._data.get(rt.key, {}).get((self._ns(rt, namespace), name))
        if obj is None:
            raise NotFound(f'{qualified(rt)} "{name}" not found')
        return copy.deepcopy(obj)

    def _stale_msg(self, rt: ResourceType, name: str) -> str:
        return (f'Operation cannot be fulfilled on {qualified(rt)} "{name}": the object has been modified; '
                "please apply your changes to the latest version and try again")

    def _validate(self, rt: ResourceType, obj: Obj) -> None:
        meta = obj.get("metadata") or {}
        name = meta.get("name")
        if not name:
            raise InvalidObject(f"{rt.kind} \"\" is invalid: metadata.name: Required value: name or generateName is required",
                                ["metadata.name: Required value: name or generateName is required"])
        err = _name_error(rt.kind, str(name))
        if err:
            raise InvalidObject(f'{rt.kind} "{name}" is invalid: metadata.name: Invalid value: "{name}": {err}',
                                [f'metadata.name: Invalid value: "{name}": {err}'])
        if rt.namespaced:
            ns = meta.get("namespace", "")
            nsobj = self._data.get(("", "namespaces"), {}).get(("", ns))
            if nsobj is None:
                raise NotFound(f'namespaces "{ns}" not found')
        errs = type_errors(rt.schema(), {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}, "")
        if errs:
            errs = [e.lstrip(".") .replace(" .", " ") for e in errs]
            raise InvalidObject(f'{rt.kind} "{name}" is invalid: ' + ", ".join(errs), errs)

    def _mf_entry(self, manager: str, operation: str, rt: ResourceType, fields: set[patching.Path],
                  subresource: str | None) -> dict[str, Any]:
        e: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": rt.api_version,
                             "time": now(), "fieldsType": "FieldsV1", "fieldsV1": patching.to_fields_v1(fields)}
        if subresource:
            e["subresource"] = subresource
        return e

    def _managed_fields(self, rt: ResourceType, old: Obj, new: Obj, manager: str, operation: str,
                        subresource: str | None, status_scope: bool | None,
                        apply_fields: set[patching.Path] | None) -> builtins.list[dict[str, Any]]:
        """Ownership after a write: the writer takes what it changed (Update) or what it
        applied (Apply); others keep the rest of what still exists."""
        node = rt.schema()
        old_flat = patching.object_fields(old, node, None)
        new_flat = patching.object_fields(new, node, None)
        changed = {p for p, v in new_flat.items() if p not in old_flat or old_flat[p] != v}
        existing = set(new_flat)
        entries = new["metadata"].get("managedFields") or []
        mine, others = _split_entries(entries, manager, operation, subresource)
        if apply_fields is not None:
            my_fields = apply_fields & existing
            taken = apply_fields & changed  # same-valued fields become shared, not taken
        else:
            my_fields = (mine | changed) & existing
            taken = changed
        out = []
        for e, fields in others:
            keep = (fields - taken) & existing
            if keep:
                e = dict(e, fieldsV1=patching.to_fields_v1(keep))
                out.append(e)
        if my_fields or operation == "Apply":
            out.append(self._mf_entry(manager, operation, rt, my_fields, subresource))
        return out

    def _commit(self, rt: ResourceType, etype: EventType, obj: Obj, remove: bool = False) -> Obj:
        """Store (or drop) an object under a new resourceVersion, record the event and
        notify listeners. Lock held by caller; listeners run after the outermost write."""
        self._rv += 1
        stored = copy.deepcopy(obj)  # history keeps references: never mutate a stored dict
        meta = stored["metadata"]
        meta["resourceVersion"] = str(self._rv)
        if rt.kind == "CustomResourceDefinition" and not remove:
            self._crd_status(stored)
        stored["apiVersion"] = rt.api_version
        bucket = self._data.setdefault(rt.key, {})
        k = (meta.get("namespace", "") if rt.namespaced else "", meta["name"])
        prev = bucket.get(k)
        if remove:
            bucket.pop(k, None)
        else:
            bucket[k] = stored
        if rt.kind == "CustomResourceDefinition" and not remove:
            self._crd_written(stored)
        self._history.append(Event(self._rv, etype, rt.key, k[0], stored, prev))
        self._cond.notify_all()
        self._queue_notify(etype, stored)
        return self._out(rt, stored)

    def _queue_notify(self, etype: EventType, obj: Obj) -> None:
        # Listeners must run outside the lock: queue per thread, flush when it is free.
        q = getattr(self._pending, "q", None)
        if q is None:
            q = self._pending.q = []
        q.append((etype, obj))

    def _flush(self) -> None:
        q = getattr(self._pending, "q", None)
        if not q or _lock_owned(self._lock):
            return
        self._pending.q = []
        listeners = list(self._listeners)
        for etype, obj in q:
            for fn in listeners:
                try:
                    fn(etype, copy.deepcopy(obj))
                except Exception:  # a broken listener must not break writers
                    import logging

                    logging.getLogger(__name__).exception("store listener failed")

    # -- watch support
    def events_after(self, rv: int, timeout: float) -> builtins.list[Event]:
        """Events newer than `rv`, waiting up to `timeout` for one. Gone if the history no
        longer reaches back to rv."""
        with self._cond:
            if self._history and rv < self._history[0].rv - 1:
                raise Gone(f"too old resource version: {rv} ({self._history[0].rv - 1})")
            if rv >= self._rv:
                self._cond.wait(timeout)
            if self._history and rv < self._history[0].rv - 1:
                raise Gone(f"too old resource version: {rv} ({self._history[0].rv - 1})")
            if rv >= self._rv or not self._history:
                return []
            start = max(0, rv - self._history[0].rv + 1)  # rvs in the history are contiguous
            return list(itertools.islice(self._history, start, None))

    def wake_watchers(self) -> None:
        with self._cond:
            self._cond.notify_all()


_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def _upgrades_client_side_apply(manager: str, live: Obj, conflicts: set[patching.Path], node: Node) -> bool:
    """The API server lets `kubectl` take over, without conflicts, the fields its
    client-side apply set before (those in the last-applied annotation)."""
    if manager != "kubectl":
        return False
    raw = ((live.get("metadata") or {}).get("annotations") or {}).get(_LAST_APPLIED)
    try:
        last = json.loads(raw) if raw else None
    except ValueError:
        return False
    if not isinstance(last, dict):
        return False
    return conflicts <= set(patching.object_fields(last, node, None))


def _lock_owned(lock: Any) -> bool:
    return bool(lock._is_owned())


def _spec_of(obj: Obj) -> Any:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status", "apiVersion", "kind")}


def _without_bookkeeping(o: Obj) -> Obj:
    return {**o, "metadata": {k: v for k, v in o["metadata"].items() if k not in ("managedFields", "resourceVersion")}}


def _same(a: Obj, b: Obj) -> bool:
    if _without_bookkeeping(a) != _without_bookkeeping(b):
        return False
    fa = [{k: v for k, v in e.items() if k != "time"} for e in a["metadata"].get("managedFields") or []]
    fb = [{k: v for k, v in e.items() if k != "time"} for e in b["metadata"].get("managedFields") or []]
    return sorted(map(json.dumps, fa)) == sorted(map(json.dumps, fb))


def _split_entries(entries: Iterable[dict[str, Any]], manager: str, operation: str,
                   subresource: str | None) -> tuple[set[patching.Path], list[tuple[dict[str, Any], set[patching.Path]]]]:
    mine: set[patching.Path] = set()
    others = []
    for e in entries:
        fields = patching.from_fields_v1(e.get("fieldsV1") or {})
        if e.get("manager") == manager and e.get("operation") == operation and e.get("subresource") == subresource:
            mine |= fields
        else:
            others.append((e, fields))
    return mine, others


def _name_error(kind: str, name: str) -> str | None:
    if kind in _PATH_SEGMENT_KINDS:
        if name in (".", "..") or "/" in name or "%" in name:
            return "may not contain '/' or '%'"
        return None
    if kind in _LABEL_NAME_KINDS:
        if len(name) > 63 or not _DNS_LABEL.match(name):
            return ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
                    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
        return None
    if len(name) > 253 or not _DNS_SUBDOMAIN.match(name):
        return ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
    return None
