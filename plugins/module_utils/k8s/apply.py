# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Server-side apply around the client: the order objects go in, what counts as a change
(ApplyResult, with its Ansible diff), and what a module returns about the objects it applied
or deleted."""
from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Protocol

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import Obj, ref_of


class Deleter(Protocol):
    """What delete_all needs of a client (k8s.client.Client has it; client.py imports this module, so not the
    other way round)."""

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None, check_mode: bool = False) -> bool: ...


# Apply order: what others depend on goes first (namespaces before their objects,
# CRDs before their custom resources, RBAC before the workloads that use it).
_KIND_ORDER = [
    "Namespace",
    "CustomResourceDefinition",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ServiceAccount",
    "ClusterRole",
    "ClusterRoleBinding",
    "Role",
    "RoleBinding",
    "ConfigMap",
    "Secret",
    "IngressClass",
    "Service",
    "Deployment",
    "DaemonSet",
    "ValidatingWebhookConfiguration",
    "Ingress",
    "GatewayClass",
    "Gateway",
    "HTTPRoute",
]

# Metadata the server owns; ignored when deciding whether an apply changes anything.
_VOLATILE_METADATA = ("resourceVersion", "managedFields", "generation", "uid", "creationTimestamp")


@dataclass
class ApplyResult:
    changed: bool
    before: Obj | None
    after: Obj

    @property
    def diff(self) -> dict[str, Any]:
        """The Ansible diff of a changed object, headed with its name ({} when unchanged); a
        module returns a list of these, one per object, which is what the callback takes."""
        if not self.changed:
            return {}
        name = ref_of(self.after)
        return {"before_header": name, "after_header": name,
                "before": comparable(self.before) or {}, "after": comparable(self.after) or {}}


def apply_order(obj: Obj) -> int:
    """Sort key placing dependencies before dependents; unknown kinds go last."""
    kind = obj.get("kind", "")
    return _KIND_ORDER.index(kind) if kind in _KIND_ORDER else len(_KIND_ORDER)


def comparable(obj: Obj | None) -> Obj | None:
    """The part of an object an apply can change: no status, no server-owned metadata."""
    if obj is None:
        return None
    out = copy.deepcopy(obj)
    out.pop("status", None)
    meta = out.get("metadata", {})
    for key in _VOLATILE_METADATA:
        meta.pop(key, None)
    return out


def summarize(results: list[ApplyResult]) -> dict[str, Any]:
    """What a module returns about applied objects: changed, one action per object, diffs."""
    objects = [
        {"object": ref_of(r.after), "action": ("created" if r.before is None else "updated") if r.changed else "unchanged"}
        for r in results
    ]
    return {
        "changed": any(r.changed for r in results),
        "objects": objects,
        "diff": [r.diff for r in results if r.diff],
    }


def delete_all(client: Deleter, objs: list[Obj], check_mode: bool) -> dict[str, Any]:
    """Delete objects in reverse dependency order (dependents first); same shape as summarize()."""
    objects = []
    for obj in sorted(objs, key=apply_order, reverse=True):
        meta = obj["metadata"]
        deleted = client.delete(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace"), check_mode)
        objects.append({"object": ref_of(obj), "action": "deleted" if deleted else "absent"})
    return {"changed": any(o["action"] == "deleted" for o in objects), "objects": objects, "diff": []}
