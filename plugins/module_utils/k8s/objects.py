# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Kubernetes objects as dicts: Obj, an object's short name, and a LabelSelector as a query string."""
from __future__ import annotations

from typing import Any

Obj = dict[str, Any]


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
