# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Selecting Ingresses: the namespaces/names/label_selector options every verification
module shares, validated before any request, and one list call that applies them."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of, selects

Obj = dict[str, Any]

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
# A label key: optional DNS subdomain prefix, then a name of alphanumerics, '-', '_', '.'.
_LABEL_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
_LABEL_VALUE = re.compile(r"^([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?$")
_SET_REQUIREMENT = re.compile(r"^\s*(!?)([^\s!=()]+)\s+(in|notin)\s+\(([^()]*)\)\s*$")
_EQUALITY_REQUIREMENT = re.compile(r"^\s*([^\s!=]+)\s*(==|=|!=)\s*([^\s!=]*)\s*$")
_EXISTS_REQUIREMENT = re.compile(r"^\s*(!?)([^\s!=()]+)\s*$")


class SelectionError(OptionError):
    """A selection option is invalid; the message names the option."""


@dataclass
class Selection:
    namespaces: list[str] = field(default_factory=list)  # empty = all namespaces
    names: list[str] = field(default_factory=list)  # empty = every name
    label_selector: str | None = None

    def matches(self, ingress: Obj) -> bool:
        meta = ingress.get("metadata", {})
        if self.namespaces and meta.get("namespace") not in self.namespaces:
            return False
        return not self.names or meta.get("name") in self.names or key_of(ingress) in self.names


def _check_label_key(key: str, where: str) -> None:
    prefix, _sep, name = key.rpartition("/")
    if (prefix and not _DNS1123_SUBDOMAIN.match(prefix)) or not _LABEL_NAME.match(name):
        raise SelectionError("%s: %r is not a valid label key" % (where, key))


def _check_label_value(value: str, where: str) -> None:
    if not _LABEL_VALUE.match(value):
        raise SelectionError("%s: %r is not a valid label value" % (where, value))


def _split_requirements(selector: str) -> list[str]:
    """Split on commas outside parentheses (`a in (x,y),b` is two requirements)."""
    parts, depth, current = [], 0, ""
    for char in selector:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def validate_label_selector(selector: str | None, where: str = "label_selector") -> str | None:
    """Check a label selector's syntax (=, ==, !=, in, notin, exists, !exists) as the API server would."""
    if selector is None or selector.strip() == "":
        return None
    for part in _split_requirements(selector):
        set_match = _SET_REQUIREMENT.match(part)
        eq_match = _EQUALITY_REQUIREMENT.match(part)
        exists_match = _EXISTS_REQUIREMENT.match(part)
        if set_match:
            if set_match.group(1):
                raise SelectionError("%s: %r: '!' applies only to an existence test" % (where, part.strip()))
            _check_label_key(set_match.group(2), where)
            for value in set_match.group(4).split(","):
                _check_label_value(value.strip(), where)
        elif eq_match:
            _check_label_key(eq_match.group(1), where)
            _check_label_value(eq_match.group(3), where)
        elif exists_match:
            _check_label_key(exists_match.group(2), where)
        else:
            raise SelectionError("%s: %r is not a label selector requirement (key=value, key!=value, "
                                 "key in (a,b), key notin (a,b), key or !key)" % (where, part.strip()))
    return selector.strip()


def label_selector_matches(selector: str, labels: dict[str, str]) -> bool:
    """Evaluate a label selector string (=, ==, !=, in, notin, exists, !exists) against labels,
    e.g. a controller's --watch-namespace-selector against a namespace's labels: read as the
    LabelSelector it stands for (an empty string as `{}`, matching everything) and matched by
    k8s.objects.selects."""
    return selects(_as_label_selector(selector), labels, form="LabelSelector")


def _as_label_selector(selector: str) -> Obj | None:
    """A label selector string as a LabelSelector's matchExpressions, as Kubernetes reads it:
    `k=v` and `k==v` are In (v), `k!=v` NotIn (v), `k` Exists, `!k` DoesNotExist. None (which
    matches nothing) when a requirement cannot be read."""
    exprs: list[Obj] = []
    for part in (p.strip() for p in _split_requirements(selector) if p.strip()):
        m = re.match(r"^([^\s!=]+)\s+(in|notin)\s*\((.*)\)$", part)
        if m:
            exprs.append({"key": m.group(1), "operator": "In" if m.group(2) == "in" else "NotIn",
                          "values": [v.strip() for v in m.group(3).split(",")]})
        elif part.startswith("!"):
            exprs.append({"key": part[1:].strip(), "operator": "DoesNotExist"})
        elif "=" not in part:
            exprs.append({"key": part, "operator": "Exists"})
        else:
            eq = re.match(r"^([^!=]+?)\s*(==|!=|=)\s*(.*)$", part)
            if eq is None:
                return None
            k, op, v = eq.groups()
            exprs.append({"key": k, "operator": "NotIn" if op == "!=" else "In", "values": [v]})
    return {"matchExpressions": exprs}


def parse_selection(namespaces: Any, names: Any, label_selector: Any) -> Selection:
    """Validate the shared selection options."""
    ns_list = namespaces or []
    if not isinstance(ns_list, list) or not all(isinstance(n, str) and _DNS1123_LABEL.match(n) for n in ns_list):
        raise SelectionError("namespaces: expected a list of namespace names, got %r" % (namespaces,))
    name_list = names or []
    if not isinstance(name_list, list) or not all(isinstance(n, str) and n for n in name_list):
        raise SelectionError("names: expected a list of Ingress names (or namespace/name), got %r" % (names,))
    for name in name_list:
        bare = name.split("/", 1)[-1]
        if name.count("/") > 1 or not _DNS1123_SUBDOMAIN.match(bare):
            raise SelectionError("names: %r is not an Ingress name or namespace/name" % name)
    if label_selector is not None and not isinstance(label_selector, str):
        raise SelectionError("label_selector: expected a string such as 'app=web,tier in (a,b)', got %r" % (label_selector,))
    return Selection(ns_list, name_list, validate_label_selector(label_selector))


def list_ingresses(client: Any, selection: Selection) -> list[Obj]:
    """The selected Ingresses, sorted by namespace/name (one list call per namespace, or one for all)."""
    found: list[Obj] = []
    scopes: list[str | None] = list(selection.namespaces) or [None]
    for ns in scopes:
        found.extend(client.list("networking.k8s.io/v1", "Ingress", namespace=ns, label_selector=selection.label_selector))
    return sorted((i for i in found if selection.matches(i)), key=key_of)
