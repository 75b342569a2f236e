# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Helm's value semantics, the same for every chart: Go template truth, dotted key paths, and how
helm coalesces user values over a chart's defaults."""
from __future__ import annotations

import copy
from typing import Any

Values = dict[str, Any]


def truthy(value: Any) -> bool:
    """Go template truth: false, 0, nil and empty strings/maps/lists are false."""
    return bool(value) if value is not None else False


def get_path(values: Values, path: str) -> Any:
    """The value at a dotted key path, None when any level is missing."""
    node: Any = values
    for part in path.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def set_path(values: Values, path: str, value: Any, error: type[Exception]) -> None:
    """Set the value at a dotted key path, creating the maps on the way; ERROR (the type's
    ValuesError) names a level that is not a map."""
    node = values
    parts = path.split(".")
    for part in parts[:-1]:
        child = node.get(part)
        if child is None:
            child = node[part] = {}
        if not isinstance(child, dict):
            raise error("values.%s: expected a mapping, got %r" % (part, child))
        node = child
    node[parts[-1]] = value


def merge_values(defaults: Values, user: Values) -> Values:
    """Helm's coalescing of user values over chart defaults: maps merge key by key, other
    values replace, and a user null deletes the chart default (a null with no default to
    delete stays null: helm only walks the chart's keys when it drops nulls)."""
    out = copy.deepcopy(defaults)
    for key, value in (user or {}).items():
        if value is None:
            if key in out:
                del out[key]
            else:
                out[key] = None
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = merge_values(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def trunc63(name: str) -> str:
    """Helm's `trunc 63 | trimSuffix "-"`, how charts bound their names (trimSuffix removes one dash only)."""
    name = name[:63]
    return name[:-1] if name.endswith("-") else name
