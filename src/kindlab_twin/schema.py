"""What the twin knows about Kubernetes types, read from kubernetes-validate's OpenAPI data.

Every built-in resource, its list semantics (patch merge keys, list types) and its field
types come from ``_definitions.json``. The OpenAPI data does not say how a kind is named
in URLs, whether it is namespaced or which short names/categories kubectl knows it by, so
those few facts live in the tables below (the only hand-written type knowledge).
"""
from __future__ import annotations

import functools
import json
import threading
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Iterator

K8S_VERSION = "v1.35.0"
_DEFS_DIR = "kubernetes-json-schema/v1.35.0-local"

# --- the facts the OpenAPI definitions do not carry -------------------------------------
CLUSTER_SCOPED = {
    "Namespace", "Node", "PersistentVolume", "ComponentStatus", "ClusterRole",
    "ClusterRoleBinding", "StorageClass", "CSIDriver", "CSINode", "VolumeAttachment",
    "VolumeAttributesClass", "PriorityClass", "RuntimeClass", "IngressClass", "IPAddress",
    "ServiceCIDR", "CustomResourceDefinition", "APIService", "MutatingWebhookConfiguration",
    "ValidatingWebhookConfiguration", "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding", "CertificateSigningRequest", "FlowSchema",
    "PriorityLevelConfiguration", "DeviceClass", "ResourceSlice",
}
SHORT_NAMES = {
    "pods": ["po"], "services": ["svc"], "deployments": ["deploy"], "replicasets": ["rs"],
    "daemonsets": ["ds"], "statefulsets": ["sts"], "namespaces": ["ns"], "nodes": ["no"],
    "configmaps": ["cm"], "endpoints": ["ep"], "ingresses": ["ing"],
    "persistentvolumes": ["pv"], "persistentvolumeclaims": ["pvc"],
    "serviceaccounts": ["sa"], "cronjobs": ["cj"], "horizontalpodautoscalers": ["hpa"],
    "poddisruptionbudgets": ["pdb"], "networkpolicies": ["netpol"],
    "customresourcedefinitions": ["crd", "crds"], "storageclasses": ["sc"], "events": ["ev"],
    "limitranges": ["limits"], "resourcequotas": ["quota"],
    "replicationcontrollers": ["rc"], "certificatesigningrequests": ["csr"],
    "priorityclasses": ["pc"], "componentstatuses": ["cs"],
}
ALL_CATEGORY = {
    ("", "pods"), ("", "services"), ("", "replicationcontrollers"), ("apps", "deployments"),
    ("apps", "replicasets"), ("apps", "statefulsets"), ("apps", "daemonsets"),
    ("batch", "jobs"), ("batch", "cronjobs"), ("autoscaling", "horizontalpodautoscalers"),
}
IRREGULAR_PLURALS = {"Endpoints": "endpoints"}
# Where two GA versions of one kind exist, the one clients should prefer.
PREFERRED_VERSIONS = {"autoscaling": "v2"}
# Kinds whose "status" field is ordinary data, not a subresource.
NO_STATUS_SUBRESOURCE = {"ComponentStatus"}

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]


def plural_of(kind: str) -> str:
    """The resource name the API uses for a kind (lowercase English plural)."""
    if kind in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[kind]
    low = kind.lower()
    if low.endswith("y") and low[-2:-1] not in "aeiou":
        return low[:-1] + "ies"
    if low.endswith(("s", "x", "ch", "sh")):
        return low + "es"
    return low + "s"


@dataclass
class ResourceType:
    """One served resource (one group/version/kind)."""

    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool
    singular: str = ""
    short_names: list[str] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    has_status: bool = False
    has_scale: bool = False
    definition: str | None = None  # name in the built-in definitions
    crd_schema: dict[str, Any] | None = None  # openAPIV3Schema of a CRD version
    storage_version: str = ""  # which version of the kind is stored
    printer_columns: list[dict[str, Any]] = field(default_factory=list)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def key(self) -> tuple[str, str]:
        """Storage key: every version of a kind shares one store."""
        return (self.group, self.plural)

    def schema(self) -> "Node":
        if self.crd_schema is not None:
            return Node(self.crd_schema)
        if self.definition:
            return Node(definitions()[self.definition])
        return Node({})


@functools.cache
def definitions() -> dict[str, Any]:
    base = resources.files("kubernetes_validate") / _DEFS_DIR / "_definitions.json"
    data: dict[str, Any] = json.loads(base.read_text())
    defs: dict[str, Any] = data["$defs"]
    return defs


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if not ref:
        return schema
    target = definitions()[ref.rsplit("/", 1)[-1]]
    merged = dict(target)
    # Keep the list/patch annotations that sit beside a $ref.
    merged.update({k: v for k, v in schema.items() if k.startswith("x-")})
    return merged


class Node:
    """A schema position; lets patching and validation walk an object by field name."""

    __slots__ = ("raw",)

    def __init__(self, raw: dict[str, Any] | None) -> None:
        self.raw = _resolve(raw or {})

    def types(self) -> set[str]:
        t = self.raw.get("type")
        if t is None:
            if "oneOf" in self.raw or "anyOf" in self.raw:
                out: set[str] = set()
                for alt in self.raw.get("oneOf", []) + self.raw.get("anyOf", []):
                    out |= Node(alt).types()
                return out
            if self.raw.get("x-kubernetes-int-or-string"):
                return {"integer", "string", "null"}
            return set()
        return {t} if isinstance(t, str) else set(t)

    def child(self, key: str) -> "Node":
        props = self.raw.get("properties")
        if props and key in props:
            return Node(props[key])
        extra = self.raw.get("additionalProperties")
        if isinstance(extra, dict):
            return Node(extra)
        return Node({})

    def known_fields(self) -> set[str] | None:
        props = self.raw.get("properties")
        if props is None or self.raw.get("x-kubernetes-preserve-unknown-fields"):
            return None
        return set(props)

    def items(self) -> "Node":
        return Node(self.raw.get("items") or {})

    @property
    def is_map(self) -> bool:
        """A string-keyed map (labels), as opposed to a struct with named fields."""
        return "additionalProperties" in self.raw and "properties" not in self.raw

    @property
    def list_type(self) -> str:
        lt = self.raw.get("x-kubernetes-list-type")
        if lt:
            return str(lt)
        if self.raw.get("x-kubernetes-patch-strategy", "").find("merge") >= 0:
            return "map" if self.raw.get("x-kubernetes-patch-merge-key") else "set"
        return "atomic"

    @property
    def map_keys(self) -> list[str]:
        keys = self.raw.get("x-kubernetes-list-map-keys")
        if keys:
            return list(keys)
        mk = self.raw.get("x-kubernetes-patch-merge-key")
        return [mk] if mk else []

    @property
    def patch_merge_key(self) -> str | None:
        mk = self.raw.get("x-kubernetes-patch-merge-key")
        return str(mk) if mk else None

    @property
    def patch_strategy(self) -> str:
        return str(self.raw.get("x-kubernetes-patch-strategy", ""))


class Registry:
    """All served resources, built-in and CRD-defined. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._by_gvk: dict[tuple[str, str, str], ResourceType] = {}
        self._by_gvr: dict[tuple[str, str, str], ResourceType] = {}
        self._crd_owned: dict[str, list[ResourceType]] = {}
        for rt in _builtin_types():
            self._add(rt)

    def _add(self, rt: ResourceType) -> None:
        self._by_gvk[(rt.group, rt.version, rt.kind)] = rt
        self._by_gvr[(rt.group, rt.version, rt.plural)] = rt

    def by_ref(self, api_version: str, kind: str) -> ResourceType | None:
        group, _sep, version = api_version.rpartition("/")
        with self._lock:
            return self._by_gvk.get((group, version, kind))

    def by_resource(self, group: str, version: str, plural: str) -> ResourceType | None:
        with self._lock:
            return self._by_gvr.get((group, version, plural))

    def all(self) -> list[ResourceType]:
        with self._lock:
            return list(self._by_gvk.values())

    def groups(self) -> dict[str, list[str]]:
        """group -> versions, preferred first."""
        out: dict[str, list[str]] = {}
        for rt in self.all():
            vs = out.setdefault(rt.group, [])
            if rt.version not in vs:
                vs.append(rt.version)
        for g, vs in out.items():
            pref = PREFERRED_VERSIONS.get(g)
            vs.sort(key=lambda v: (v != pref, _version_rank(v)))
        return out

    def versions_of(self, group: str, kind: str) -> list[ResourceType]:
        return [rt for rt in self.all() if rt.group == group and rt.kind == kind]

    def register_crd(self, crd: dict[str, Any]) -> list[ResourceType]:
        """Serve the resources a CRD defines (replacing an earlier registration)."""
        spec = crd.get("spec") or {}
        names = spec.get("names") or {}
        group = spec.get("group", "")
        versions = [v for v in spec.get("versions") or [] if v.get("served", True)]
        storage = next((v["name"] for v in versions if v.get("storage")), None)
        types = []
        for v in versions:
            sub = v.get("subresources") or {}
            types.append(ResourceType(
                group=group, version=v["name"], kind=names.get("kind", ""),
                plural=names.get("plural", ""), namespaced=spec.get("scope") != "Cluster",
                singular=names.get("singular") or names.get("kind", "").lower(),
                short_names=list(names.get("shortNames") or []),
                categories=list(names.get("categories") or []),
                has_status="status" in sub, has_scale="scale" in sub,
                crd_schema=(v.get("schema") or {}).get("openAPIV3Schema") or {},
                storage_version=storage or v["name"],
                printer_columns=list(v.get("additionalPrinterColumns") or []),
            ))
        name = crd.get("metadata", {}).get("name", "")
        with self._lock:
            self.unregister_crd(name)
            for rt in types:
                self._add(rt)
            self._crd_owned[name] = types
        return types

    def unregister_crd(self, name: str) -> list[ResourceType]:
        with self._lock:
            gone = self._crd_owned.pop(name, [])
            for rt in gone:
                self._by_gvk.pop((rt.group, rt.version, rt.kind), None)
                self._by_gvr.pop((rt.group, rt.version, rt.plural), None)
            return gone


def _version_rank(v: str) -> tuple[int, int, int]:
    """Kubernetes version priority: GA > beta > alpha, higher numbers first."""
    import re

    m = re.fullmatch(r"v(\d+)(?:(alpha|beta)(\d+))?", v)
    if not m:
        return (3, 0, 0)
    stage = {"": 0, "beta": 1, "alpha": 2}[m.group(2) or ""]
    return (stage, -int(m.group(1)), -int(m.group(3) or 0))


def _builtin_types() -> Iterator[ResourceType]:
    """GA kinds that have metadata and a matching <Kind>List: the served resources."""
    defs = definitions()
    gvks: dict[tuple[str, str, str], str] = {}
    for name, d in defs.items():
        for g in d.get("x-kubernetes-group-version-kind", []):
            gvks.setdefault((g["group"], g["version"], g["kind"]), name)
    for (group, version, kind), name in sorted(gvks.items()):
        if "alpha" in version or "beta" in version or kind.endswith("List"):
            continue
        if (group, version, kind + "List") not in gvks:
            continue
        props = defs[name].get("properties", {})
        if "metadata" not in props:
            continue
        plural = plural_of(kind)
        preferred = PREFERRED_VERSIONS.get(group, version)
        yield ResourceType(
            group=group, version=version, kind=kind, plural=plural,
            namespaced=kind not in CLUSTER_SCOPED, singular=kind.lower(),
            short_names=SHORT_NAMES.get(plural, []),
            categories=["all"] if (group, plural) in ALL_CATEGORY else [],
            has_status="status" in props and kind not in NO_STATUS_SUBRESOURCE,
            has_scale=kind in {"Deployment", "ReplicaSet", "StatefulSet", "ReplicationController"},
            definition=name, storage_version=preferred,
        )


# --- validation ---------------------------------------------------------------------

_TYPE_CHECK = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "null": lambda v: v is None,
}
_GO_TYPE = {"string": "string", "integer": "integer", "number": "number", "boolean": "boolean",
            "object": "object", "array": "array"}


def type_errors(node: Node, value: Any, path: str, depth: int = 0) -> list[str]:
    """Field type mismatches against the schema (recursively, bounded depth)."""
    types = node.types()
    if types and not any(_TYPE_CHECK[t](value) for t in types if t in _TYPE_CHECK):
        want = "/".join(sorted(_GO_TYPE[t] for t in types if t in _GO_TYPE))
        return [f'{path}: Invalid value: "{_kind_of(value)}": {path} in body must be of type {want}']
    if depth > 12:
        return []
    errs: list[str] = []
    if isinstance(value, dict) and (node.raw.get("properties") or node.is_map):
        for k, v in value.items():
            if v is None:
                continue
            errs += type_errors(node.child(k), v, f"{path}.{k}", depth + 1)
    elif isinstance(value, list) and node.raw.get("items"):
        item = node.items()
        for i, v in enumerate(value):
            errs += type_errors(item, v, f"{path}[{i}]", depth + 1)
    return errs


def unknown_fields(node: Node, value: Any, path: str, depth: int = 0) -> list[str]:
    """Fields that the schema does not define (for fieldValidation=Strict/Warn)."""
    if depth > 12:
        return []
    out: list[str] = []
    if isinstance(value, dict):
        known = node.known_fields()
        for k, v in value.items():
            if known is not None and k not in known:
                out.append(f".{path}.{k}" if path else k)
                continue
            out += unknown_fields(node.child(k), v, f"{path}.{k}" if path else k, depth + 1)
    elif isinstance(value, list) and node.raw.get("items"):
        for i, v in enumerate(value):
            out += unknown_fields(node.items(), v, f"{path}[{i}]", depth + 1)
    return out


def _kind_of(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    return "string"
