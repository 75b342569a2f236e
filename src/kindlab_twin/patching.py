"""Patch semantics: JSON patch, JSON merge patch, strategic merge patch, server-side apply.

List behaviour (merge keys, list types) comes from the schema ``Node`` of each field, so
what the twin does with a container list is what the OpenAPI data says a server does.
Field sets (managedFields) are sets of path tuples whose elements are the FieldsV1 keys
("f:spec", 'k:{"name":"web"}', 'v:"x"').
"""
from __future__ import annotations

import copy
import json
from typing import Any, Iterable

from .schema import Node

Path = tuple[str, ...]
_LEAF = object()  # marker: a member path that is not a leaf value (list item, map)


class PatchError(Exception):
    """The patch cannot be applied (bad document or failed test op)."""


class ApplyConflict(Exception):
    """Server-side apply would take fields another manager owns."""

    def __init__(self, conflicts: list[tuple[str, str, str]]) -> None:
        self.conflicts = conflicts  # (manager, its apiVersion, field path as ".spec.replicas")
        lines = [f'conflict with "{m}" using {v}: {p}' for m, v, p in conflicts]
        super().__init__(f"Apply failed with {len(conflicts)} conflict{'s' if len(conflicts) != 1 else ''}: "
                         + "; ".join(lines))


# --- JSON patch (RFC 6902) ------------------------------------------------------------

def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _walk(doc: Any, parts: list[str]) -> Any:
    for p in parts:
        if isinstance(doc, dict):
            if p not in doc:
                raise PatchError(f"path element {p!r} not found")
            doc = doc[p]
        elif isinstance(doc, list):
            try:
                doc = doc[int(p)]
            except (ValueError, IndexError) as e:
                raise PatchError(f"bad list index {p!r}") from e
        else:
            raise PatchError(f"cannot descend into {p!r}")
    return doc


def _add(doc: Any, parts: list[str], value: Any, replace: bool = False) -> Any:
    if not parts:
        return value
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise PatchError(f"replace: {last!r} does not exist")
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-" and not replace:
            parent.append(value)
            return doc
        try:
            i = int(last)
        except ValueError as e:
            raise PatchError(f"bad list index {last!r}") from e
        if not 0 <= i <= len(parent) - (1 if replace else 0):
            raise PatchError(f"list index {i} out of range")
        if replace:
            parent[i] = value
        else:
            parent.insert(i, value)
    else:
        raise PatchError("cannot add to a scalar")
    return doc


def _remove(doc: Any, parts: list[str]) -> Any:
    if not parts:
        raise PatchError("cannot remove the whole document")
    parent = _walk(doc, parts[:-1])
    last = parts[-1]
    try:
        if isinstance(parent, dict):
            return parent.pop(last)
        if isinstance(parent, list):
            return parent.pop(int(last))
    except (KeyError, ValueError, IndexError) as e:
        raise PatchError(f"remove: {last!r} not found") from e
    raise PatchError("cannot remove from a scalar")


def json_patch(doc: Any, ops: Any) -> Any:
    if not isinstance(ops, list):
        raise PatchError("a JSON patch must be a list of operations")
    doc = copy.deepcopy(doc)
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"invalid operation {op!r}")
        kind, parts = op["op"], _pointer(op["path"])
        if kind in ("add", "replace"):
            if "value" not in op:
                raise PatchError(f"{kind} needs a value")
            doc = _add(doc, parts, copy.deepcopy(op["value"]), replace=kind == "replace")
        elif kind == "remove":
            _remove(doc, parts)
        elif kind in ("move", "copy"):
            src = _pointer(op.get("from", ""))
            value = _remove(doc, src) if kind == "move" else copy.deepcopy(_walk(doc, src))
            doc = _add(doc, parts, value)
        elif kind == "test":
            if _walk(doc, parts) != op.get("value"):
                raise PatchError(f"test failed at {op['path']}")
        else:
            raise PatchError(f"unknown operation {kind!r}")
    return doc


# --- JSON merge patch (RFC 7386) --------------------------------------------------------

def merge_patch(doc: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


# --- strategic merge patch ------------------------------------------------------------

def strategic_merge(doc: Any, patch: Any, node: Node) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    out = copy.deepcopy(doc) if isinstance(doc, dict) else {}
    retain = patch.get("$retainKeys")
    for k, v in patch.items():
        if k.startswith("$setElementOrder/") or k in ("$retainKeys", "$patch"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            if isinstance(out.get(field), list):
                out[field] = [x for x in out[field] if x not in v]
            continue
        child = node.child(k)
        if v is None or (isinstance(v, dict) and v.get("$patch") == "delete"):
            out.pop(k, None)
        elif isinstance(v, list):
            out[k] = _smp_list(out.get(k), v, child)
        else:
            out[k] = strategic_merge(out.get(k), v, child)
    if isinstance(retain, list):
        out = {k: v for k, v in out.items() if k in retain}
    return out


def _smp_list(cur: Any, patch: list[Any], node: Node) -> list[Any]:
    if "merge" not in node.patch_strategy or not isinstance(cur, list):
        return [_strip_directives(x) for x in patch if not _is_delete(x)]
    key = node.patch_merge_key
    if not key:  # merge of a primitive list: union
        out = list(cur)
        for x in patch:
            if x not in out:
                out.append(copy.deepcopy(x))
        return out
    out = copy.deepcopy(cur)
    item_node = node.items()
    for item in patch:
        if not isinstance(item, dict):
            continue
        idx = next((i for i, c in enumerate(out) if isinstance(c, dict) and c.get(key) == item.get(key)), None)
        if _is_delete(item):
            if idx is not None:
                out.pop(idx)
        elif idx is None:
            out.append(_strip_directives(item))
        else:
            out[idx] = strategic_merge(out[idx], item, item_node)
    return out


def _is_delete(x: Any) -> bool:
    return isinstance(x, dict) and x.get("$patch") == "delete"


def _strip_directives(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _strip_directives(v) for k, v in x.items() if not k.startswith("$")}
    if isinstance(x, list):
        return [_strip_directives(v) for v in x]
    return x


# --- field sets (managedFields) -----------------------------------------------------------

# Map-key fields the server defaults; an applied item without them still matches.
KEY_DEFAULTS = {"protocol": "TCP"}


def _item_key(item: Any, keys: list[str]) -> str:
    if isinstance(item, dict) and keys:
        vals = {k: item.get(k, KEY_DEFAULTS.get(k)) for k in keys if k in item or k in KEY_DEFAULTS}
        return "k:" + json.dumps(vals, separators=(",", ":"), sort_keys=True)
    return "v:" + json.dumps(item, separators=(",", ":"), sort_keys=True)


def flatten(value: Any, node: Node, prefix: Path = ()) -> dict[Path, Any]:
    """Every owned path of a value with its leaf value (or _LEAF for list items/maps)."""
    out: dict[Path, Any] = {}
    _flatten(value, node, prefix, out)
    return out


def _flatten(value: Any, node: Node, prefix: Path, out: dict[Path, Any]) -> None:
    if isinstance(value, dict) and value and node.raw.get("x-kubernetes-map-type") != "atomic":
        if node.is_map and prefix:
            out[prefix] = _LEAF
        for k, v in value.items():
            _flatten(v, node.child(k), prefix + ("f:" + k,), out)
    elif isinstance(value, list) and node.list_type != "atomic" and value:
        item = node.items()
        keys = node.map_keys if node.list_type == "map" else []
        for x in value:
            p = prefix + (_item_key(x, keys),)
            if keys and isinstance(x, dict):
                out[p] = _LEAF
                _flatten(x, item, p, out)
            else:
                out[p] = _LEAF
    elif prefix:
        out[prefix] = value


def object_fields(obj: dict[str, Any], node: Node, status: bool | None) -> dict[Path, Any]:
    """Owned paths of an object: metadata labels/annotations/ownerRefs/finalizers, spec
    and the rest; status only when `status` is True (None = everything)."""
    meta = obj.get("metadata") or {}
    tracked = {k: meta[k] for k in ("labels", "annotations", "ownerReferences", "finalizers") if meta.get(k)}
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    if status is True:
        body = {"status": body["status"]} if "status" in body else {}
    elif status is False:
        body.pop("status", None)
    if tracked:
        body["metadata"] = tracked
    return flatten(body, node)


def to_fields_v1(paths: Iterable[Path]) -> dict[str, Any]:
    tree: dict[str, Any] = {}
    for p in sorted(paths):
        cur = tree
        for el in p:
            cur = cur.setdefault(el, {})
        cur.setdefault(".", {})
    return _prune_dots(tree)


def _prune_dots(tree: dict[str, Any]) -> dict[str, Any]:
    # "." marks a member that also has children; a bare leaf needs no ".".
    out: dict[str, Any] = {}
    for k, v in tree.items():
        if k == ".":
            out[k] = {}
            continue
        sub = _prune_dots(v)
        if list(sub) == ["."]:
            sub = {}
        out[k] = sub
    return out


def from_fields_v1(tree: dict[str, Any], prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    for k, v in (tree or {}).items():
        if k == ".":
            out.add(prefix)
            continue
        p = prefix + (k,)
        if not v:
            out.add(p)
        else:
            out |= from_fields_v1(v, p)
    return out


def path_str(p: Path) -> str:
    parts = []
    for el in p:
        if el.startswith("f:"):
            parts.append("." + el[2:])
        elif el.startswith("k:"):
            parts.append("[" + ",".join(f"{k}={json.dumps(v)}" for k, v in json.loads(el[2:]).items()) + "]")
        else:
            parts.append("[" + el[2:] + "]")
    return "".join(parts)


# --- server-side apply ----------------------------------------------------------------

def apply_merge(live: Any, cfg: Any, node: Node) -> Any:
    """Merge an applied configuration into the live object (no removals)."""
    if isinstance(cfg, dict) and isinstance(live, dict) and not node.raw.get("x-kubernetes-map-type") == "atomic":
        out = dict(live)
        for k, v in cfg.items():
            if v is None:
                continue
            out[k] = apply_merge(live.get(k), v, node.child(k))
        return out
    if isinstance(cfg, list) and isinstance(live, list) and node.list_type != "atomic":
        keys = node.map_keys if node.list_type == "map" else []
        index = {_item_key(x, keys): i for i, x in enumerate(live)}
        out_list = list(live)
        for item in cfg:
            k = _item_key(item, keys)
            if k in index:
                if keys:
                    out_list[index[k]] = apply_merge(live[index[k]], item, node.items())
            else:
                out_list.append(copy.deepcopy(item))
                index[k] = len(out_list) - 1
        return out_list
    return copy.deepcopy(cfg)


def remove_path(obj: Any, p: Path) -> None:
    """Delete the value at a field path (if present)."""
    cur = obj
    for i, el in enumerate(p):
        last = i == len(p) - 1
        if el.startswith("f:"):
            if not isinstance(cur, dict) or el[2:] not in cur:
                return
            if last:
                del cur[el[2:]]
                return
            cur = cur[el[2:]]
        else:
            if not isinstance(cur, list):
                return
            idx = _find_item(cur, el)
            if idx is None:
                return
            if last:
                cur.pop(idx)
                return
            cur = cur[idx]


def _find_item(items: list[Any], el: str) -> int | None:
    if el.startswith("k:"):
        want = json.loads(el[2:])
        for i, x in enumerate(items):
            if isinstance(x, dict) and all(x.get(k) == v for k, v in want.items()):
                return i
        return None
    want_v = json.loads(el[2:])
    for i, x in enumerate(items):
        if x == want_v:
            return i
    return None


def prune_empty(obj: dict[str, Any], paths: Iterable[Path]) -> None:
    """After removals, drop maps that the removal left empty (labels: {} → gone)."""
    for p in sorted({q[:-1] for q in paths if len(q) > 1}, key=len, reverse=True):
        cur: Any = obj
        parent: Any = None
        for el in p:
            parent = cur
            if el.startswith("f:") and isinstance(cur, dict):
                cur = cur.get(el[2:])
            else:
                cur = None
                break
        if parent is not None and cur in ({}, []) and p[-1].startswith("f:"):
            parent.pop(p[-1][2:], None)
