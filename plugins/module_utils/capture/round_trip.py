# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A capture's round trip: what a capture of the lab rebuilt from a first capture says differently of its
Services and Ingresses ([] when the rebuild routes by what the cluster routed by)."""
from __future__ import annotations

import json
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CLASS_ANNOTATION, CLASS_NAMED_ANNOTATION

Obj = dict[str, Any]


def _class_named(ingress: Any) -> Any:
    """An Ingress mapping (or a list of them) with the IngressClass a rehearsal moved to the class annotation
    (CLASS_NAMED_ANNOTATION) named again as the capture named it."""
    if isinstance(ingress, list):
        return [_class_named(i) for i in ingress]
    annotations = dict((ingress or {}).get("annotations") or {}) if isinstance(ingress, dict) else {}
    if CLASS_NAMED_ANNOTATION not in annotations:
        return ingress
    out = dict(ingress, **{"class": annotations.pop(CLASS_NAMED_ANNOTATION)})
    annotations.pop(CLASS_ANNOTATION, None)
    if annotations:
        out["annotations"] = annotations
    else:
        out.pop("annotations", None)
    return out


def _services_and_ingresses(lab: Obj, namespaces: set[str]) -> dict[str, Obj]:
    """namespace/name → a stand-in as routing depends on it (its Service's ports, replicas, Ingresses), of NAMESPACES."""
    out = {}
    for wl in lab.get("lab_workloads") or []:
        if wl.get("namespace") in namespaces:
            out["%s/%s" % (wl["namespace"], wl["name"])] = {k: _class_named(v) if k == "ingress" else v for k, v in wl.items()
                                                            if k not in ("httproute", "name", "namespace")}
    return out


def round_trip_differences(first: Obj, second: Obj, namespaces: list[str]) -> list[str]:
    """What a capture of the lab rebuilt from FIRST (SECOND) says differently of the Services and Ingresses of
    NAMESPACES (all of FIRST's when empty): [] when the rebuild routes by what the cluster routed by. HTTPRoutes and
    controllers are left out: a rehearsal adds its own."""
    chosen = set(namespaces) or {str(w.get("namespace")) for w in first.get("lab_workloads") or []}
    before, after = _services_and_ingresses(first, chosen), _services_and_ingresses(second, chosen)
    out = ["%s: captured, not in the rebuild" % ref for ref in sorted(set(before) - set(after))]
    out += ["%s: in the rebuild, not captured" % ref for ref in sorted(set(after) - set(before))]
    for ref in sorted(set(before) & set(after)):
        for key in sorted(set(before[ref]) | set(after[ref])):
            if before[ref].get(key) != after[ref].get(key):
                out.append("%s %s: captured %s, rebuilt %s" % (ref, key, json.dumps(before[ref].get(key), sort_keys=True),
                                                               json.dumps(after[ref].get(key), sort_keys=True)))
    return out
