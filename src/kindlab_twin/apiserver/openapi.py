"""OpenAPI v3 documents built from the same definitions the store validates with.

kubectl reads them to decide that the server does field validation (the `fieldValidation`
query parameter on each PATCH operation), to build client-side apply patches and for
`kubectl explain`.
"""
from __future__ import annotations

import functools
import hashlib
import json
from typing import Any

from ..schema import K8S_VERSION, Registry, ResourceType, definitions

_SCALARS = {"io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
            "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string", "format": "quantity"}}


def _pb_string(field: int, value: bytes) -> bytes:
    """One length-delimited protobuf field (lengths here stay below 128)."""
    return bytes([(field << 3) | 2, len(value)]) + value


# gnostic openapi_v2.Document{swagger: "2.0", info: {title, version}}
EMPTY_V2_PROTOBUF = _pb_string(1, b"2.0") + _pb_string(
    2, _pb_string(1, b"Kubernetes") + _pb_string(2, K8S_VERSION.encode()))
EMPTY_V2: dict[str, Any] = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": K8S_VERSION}, "paths": {}}


def _convert(node: Any) -> Any:
    """JSON-schema-2020 definitions → OpenAPI 3.0 schema (refs, nullable type lists)."""
    if isinstance(node, list):
        return [_convert(x) for x in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for k, v in node.items():
        if k == "$ref" and isinstance(v, str):
            out[k] = "#/components/schemas/" + v.rsplit("/", 1)[-1]
        elif k == "type" and isinstance(v, list):
            types = [t for t in v if t != "null"]
            out[k] = types[0] if len(types) == 1 else types
        elif k in ("properties", "patternProperties") and isinstance(v, dict):
            out[k] = {pk: _convert(pv) for pk, pv in v.items()}
        else:
            out[k] = _convert(v)
    return out


def _refs(node: Any, acc: set[str]) -> None:
    if isinstance(node, dict):
        r = node.get("$ref")
        if isinstance(r, str):
            acc.add(r.rsplit("/", 1)[-1])
        for v in node.values():
            _refs(v, acc)
    elif isinstance(node, list):
        for v in node:
            _refs(v, acc)


def _closure(names: set[str]) -> set[str]:
    defs = definitions()
    seen: set[str] = set()
    todo = list(names)
    while todo:
        n = todo.pop()
        if n in seen or n not in defs:
            continue
        seen.add(n)
        found: set[str] = set()
        _refs(defs[n], found)
        todo.extend(found - seen)
    return seen


@functools.cache
def _converted(name: str) -> Any:
    return _SCALARS.get(name) or _convert(definitions()[name])


def _params(*names: str) -> list[dict[str, Any]]:
    return [{"name": n, "in": "query", "schema": {"type": "string" if n != "force" else "boolean"},
             "description": n, "uniqueItems": True} for n in names]


def _op(rt: ResourceType, action: str, ref: str, params: list[dict[str, Any]]) -> dict[str, Any]:
    op: dict[str, Any] = {
        "operationId": f"{action}{rt.kind}", "parameters": params,
        "responses": {"200": {"description": "OK", "content": {"application/json": {"schema": {"$ref": ref}}}}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
    }
    if action in ("post", "put", "patch"):
        types = ["application/json"] if action != "patch" else [
            "application/json-patch+json", "application/merge-patch+json",
            "application/strategic-merge-patch+json", "application/apply-patch+yaml"]
        op["requestBody"] = {"content": {t: {"schema": {"$ref": ref}} for t in types}}
    return op


def _paths(rt: ResourceType, ref: str) -> dict[str, Any]:
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else "/api/v1"
    coll = f"{base}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{base}/{rt.plural}"
    item = coll + "/{name}"
    write = _params("dryRun", "fieldManager", "fieldValidation")
    paths = {
        coll: {"get": _op(rt, "list", ref, _params("labelSelector", "fieldSelector", "watch")),
               "post": _op(rt, "post", ref, write)},
        item: {"get": _op(rt, "get", ref, []), "put": _op(rt, "put", ref, write),
               "patch": _op(rt, "patch", ref, _params("dryRun", "fieldManager", "fieldValidation", "force")),
               "delete": _op(rt, "delete", ref, _params("dryRun"))},
    }
    if rt.has_status:
        paths[item + "/status"] = {"get": _op(rt, "get", ref, []), "put": _op(rt, "put", ref, write),
                                   "patch": _op(rt, "patch", ref, _params("dryRun", "fieldManager", "fieldValidation", "force"))}
    return paths


def _crd_schema_name(rt: ResourceType) -> str:
    rev = ".".join(reversed(rt.group.split(".")))
    return f"{rev}.{rt.version}.{rt.kind}"


def group_version_doc(registry: Registry, group: str, version: str) -> dict[str, Any] | None:
    rts = [rt for rt in registry.all() if rt.group == group and rt.version == version]
    if not rts:
        return None
    schemas: dict[str, Any] = {}
    paths: dict[str, Any] = {}
    needed: set[str] = set()
    for rt in rts:
        if rt.definition:
            name = rt.definition
            needed.add(name)
        else:
            name = _crd_schema_name(rt)
            body = _convert(rt.crd_schema or {"type": "object"})
            props = dict(body.get("properties") or {})
            props["metadata"] = {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
            body = dict(body, properties=props, type="object")
            body["x-kubernetes-group-version-kind"] = [{"group": rt.group, "version": rt.version, "kind": rt.kind}]
            schemas[name] = body
            needed.add("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        paths.update(_paths(rt, "#/components/schemas/" + name))
    for n in _closure(needed):
        schemas[n] = _converted(n)
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": K8S_VERSION},
            "paths": paths, "components": {"schemas": schemas}}


def root_doc(registry: Registry) -> dict[str, Any]:
    paths = {}
    for group, versions in registry.groups().items():
        for v in versions:
            rel = f"apis/{group}/{v}" if group else f"api/{v}"
            digest = hashlib.sha256(json.dumps([rel, [
                (rt.kind, rt.crd_schema is not None and json.dumps(rt.crd_schema, sort_keys=True))
                for rt in registry.all() if rt.group == group and rt.version == v]]).encode()).hexdigest()[:32].upper()
            paths[rel] = {"serverRelativeURL": f"/openapi/v3/{rel}?hash={digest}"}
    return {"paths": paths}
