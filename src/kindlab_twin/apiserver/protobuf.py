"""Just enough of the Kubernetes protobuf encoding for kubectl's typed create commands.

kubectl sends `create namespace|configmap|secret|serviceaccount` bodies as protobuf
(a "k8s\\0"-prefixed runtime.Unknown around the object) and does not fall back to JSON.
The OpenAPI data has no protobuf field numbers, so the few needed are listed here; other
kinds are refused with 415 and a hint to use `kubectl apply`/`create -f` (JSON).
"""
from __future__ import annotations

import base64
from typing import Any, Callable

MAGIC = b"k8s\x00"
Fields = list[tuple[int, Any]]


class ProtobufUnsupported(Exception):
    """A protobuf body the twin cannot decode."""


def _varint(b: bytes, i: int) -> tuple[int, int]:
    shift = result = 0
    while True:
        if i >= len(b):
            raise ProtobufUnsupported("truncated protobuf varint")
        c = b[i]
        i += 1
        result |= (c & 0x7F) << shift
        shift += 7
        if c < 0x80:
            return result, i


def fields(b: bytes) -> Fields:
    """Wire-level decoding: (field number, int or bytes) in order."""
    out: Fields = []
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, i = _varint(b, i)
            out.append((num, v))
        elif wire == 2:
            n, i = _varint(b, i)
            out.append((num, b[i:i + n]))
            i += n
        elif wire == 1:
            out.append((num, b[i:i + 8]))
            i += 8
        elif wire == 5:
            out.append((num, b[i:i + 4]))
            i += 4
        else:
            raise ProtobufUnsupported(f"unsupported protobuf wire type {wire}")
    return out


def _s(v: bytes) -> str:
    return v.decode()


def _map(entries: list[bytes], value: Callable[[bytes], Any] = _s) -> dict[str, Any]:
    out = {}
    for e in entries:
        kv = dict(fields(e))
        out[_s(kv.get(1, b""))] = value(kv.get(2, b""))
    return out


def _b64(v: bytes) -> str:
    return base64.b64encode(v).decode()


def _object_meta(b: bytes) -> dict[str, Any]:
    fs = fields(b)
    meta: dict[str, Any] = {}
    for num, key in ((1, "name"), (2, "generateName"), (3, "namespace")):
        v = next((x for n, x in fs if n == num), b"")
        if v:
            meta[key] = _s(v)
    for num, key in ((11, "labels"), (12, "annotations")):
        entries = [x for n, x in fs if n == num]
        if entries:
            meta[key] = _map(entries)
    fin = [_s(x) for n, x in fs if n == 14]
    if fin:
        meta["finalizers"] = fin
    return meta


def _grouped(fs: Fields) -> dict[int, list[Any]]:
    g: dict[int, list[Any]] = {}
    for n, v in fs:
        g.setdefault(n, []).append(v)
    return g


def _namespace(g: dict[int, list[Any]], obj: dict[str, Any]) -> None:
    if g.get(2):
        fin = [_s(x) for n, x in fields(g[2][0]) if n == 1]
        if fin:
            obj["spec"] = {"finalizers": fin}


def _configmap(g: dict[int, list[Any]], obj: dict[str, Any]) -> None:
    if g.get(2):
        obj["data"] = _map(g[2])
    if g.get(3):
        obj["binaryData"] = _map(g[3], _b64)
    if g.get(4):
        obj["immutable"] = bool(g[4][0])


def _secret(g: dict[int, list[Any]], obj: dict[str, Any]) -> None:
    if g.get(2):
        obj["data"] = _map(g[2], _b64)
    if g.get(3) and g[3][0]:
        obj["type"] = _s(g[3][0])
    if g.get(4):
        obj["stringData"] = _map(g[4])
    if g.get(5):
        obj["immutable"] = bool(g[5][0])


def _service_account(g: dict[int, list[Any]], obj: dict[str, Any]) -> None:
    if g.get(4):
        obj["automountServiceAccountToken"] = bool(g[4][0])


_KINDS: dict[tuple[str, str], Callable[[dict[int, list[Any]], dict[str, Any]], None]] = {
    ("v1", "Namespace"): _namespace, ("v1", "ConfigMap"): _configmap,
    ("v1", "Secret"): _secret, ("v1", "ServiceAccount"): _service_account,
}


def decode(body: bytes) -> dict[str, Any]:
    """The JSON-shaped object in a protobuf request body."""
    if not body.startswith(MAGIC):
        raise ProtobufUnsupported("protobuf body without the k8s magic prefix")
    unknown = _grouped(fields(body[len(MAGIC):]))
    type_meta = dict(fields(unknown.get(1, [b""])[0]))
    api_version, kind = _s(type_meta.get(1, b"")), _s(type_meta.get(2, b""))
    handler = _KINDS.get((api_version, kind))
    if handler is None:
        raise ProtobufUnsupported(f"kindlab-twin cannot decode protobuf bodies for {kind or 'this kind'} "
                                  "(use kubectl apply -f / create -f, which send JSON)")
    g = _grouped(fields(unknown.get(2, [b""])[0]))
    obj: dict[str, Any] = {"apiVersion": api_version, "kind": kind,
                           "metadata": _object_meta(g[1][0]) if g.get(1) else {}}
    handler(g, obj)
    return obj


def decode_delete_options(body: bytes) -> dict[str, Any]:
    """meta/v1 DeleteOptions (client-go sends them with DELETE requests)."""
    if not body:
        return {}
    if not body.startswith(MAGIC):
        raise ProtobufUnsupported("protobuf body without the k8s magic prefix")
    unknown = _grouped(fields(body[len(MAGIC):]))
    g = _grouped(fields(unknown.get(2, [b""])[0]))
    opts: dict[str, Any] = {}
    if g.get(1):
        opts["gracePeriodSeconds"] = g[1][0]
    if g.get(2):
        pre = dict(fields(g[2][0]))
        opts["preconditions"] = {k: _s(pre[n]) for n, k in ((1, "uid"), (2, "resourceVersion")) if pre.get(n)}
    if g.get(3):
        opts["orphanDependents"] = bool(g[3][0])
    if g.get(4) and g[4][0]:
        opts["propagationPolicy"] = _s(g[4][0])
    if g.get(5):
        opts["dryRun"] = [_s(x) for x in g[5]]
    return opts
