# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes objects as dicts: Obj, an object's short name, and label selectors (the one
matcher, and a LabelSelector as a query string)."""
from __future__ import annotations

from typing import Any, Literal, Mapping

Obj = dict[str, Any]
# Which of Kubernetes' two selector forms a selector is (see selects()).
SelectorForm = Literal["LabelSelector", "Service"]


def key_of(obj: Obj) -> str:
    """namespace/name of an object: the one key every analysis and report uses."""
    meta = obj.get("metadata") or {}
    return "%s/%s" % (meta.get("namespace"), meta.get("name"))


def ref_of(obj: Obj) -> str:
    """A short human name for an object: Kind namespace/name."""
    meta = obj.get("metadata", {})
    ns = meta.get("namespace")
    return "%s %s%s" % (obj.get("kind"), ns + "/" if ns else "", meta.get("name"))


def selector_string(selector: Obj | None) -> str:
    """A LabelSelector (matchLabels + matchExpressions) as the label_selector query string."""
    selector = selector or {}
    parts = ["%s=%s" % (k, v) for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In":
            parts.append("%s in (%s)" % (key, ",".join(values)))
        elif op == "NotIn":
            parts.append("%s notin (%s)" % (key, ",".join(values)))
        elif op == "Exists":
            parts.append(str(key))
        elif op == "DoesNotExist":
            parts.append("!%s" % key)
    return ",".join(parts)


def selects(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None, *, form: SelectorForm) -> bool:
    """Whether `selector` selects an object carrying `labels` (None: no labels). The caller says
    which form the selector is, since the two disagree on an empty one:

    - "LabelSelector": a metav1.LabelSelector, {matchLabels, matchExpressions} (a Deployment's or
      DaemonSet's spec.selector, MetalLB's ipAddressPoolSelectors and nodeSelectors, a selector
      string such as --watch-namespace-selector once read as one). Every requirement must hold:
      each matchLabels pair is equal; In: the label's value is one of `values`; NotIn: it is
      none of them, or the label is absent; Exists: the key is there; DoesNotExist: it is not.
      An empty selector `{}` matches everything; a null or absent one (None) matches nothing
      (metav1.LabelSelectorAsSelector). An unknown operator matches nothing (the API server
      refuses it).
    - "Service": a Service's spec.selector, a map of label: value, each equal. An empty or
      absent one selects no pods: the endpoints controller skips a Service without a selector
      (its endpoints are managed by hand)."""
    have: Mapping[str, str] = labels or {}
    if form == "Service":
        return bool(selector) and all(have.get(k) == v for k, v in (selector or {}).items())
    if selector is None:
        return False
    if any(have.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In":
            ok = key in have and have[key] in values
        elif op == "NotIn":
            ok = key not in have or have[key] not in values
        elif op == "Exists":
            ok = key in have
        elif op == "DoesNotExist":
            ok = key not in have
        else:
            ok = False
        if not ok:
            return False
    return True
