# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Schema check for rendered Kubernetes objects, shared by the unit tests.

Import as ``from ansible_collections.kindlab.ingress.tests.unit.schema import validate_k8s``.
Validation is strict (unknown fields are errors) against the Kubernetes version pinned in
_versions.py, so a typo in a rendered manifest fails a unit test instead of a cluster apply.
"""
from __future__ import annotations

from typing import Any

import kubernetes_validate

from ansible_collections.kindlab.ingress.plugins.module_utils._versions import KUBERNETES_SCHEMA_VERSION


class SchemaError(AssertionError):
    """A rendered object does not match the pinned Kubernetes schema."""


def _ref(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return "%s %s%s" % (obj.get("kind"), ns + "/" if ns else "", meta.get("name"))


def validate_k8s(obj: dict[str, Any], version: str = KUBERNETES_SCHEMA_VERSION) -> None:
    """Raise SchemaError (an AssertionError, so pytest shows it plainly) unless `obj`
    validates strictly. A kind the schema does not know is an error too: the helper
    must never pass an object silently."""
    if not isinstance(obj, dict) or "apiVersion" not in obj or "kind" not in obj:
        raise SchemaError("not a Kubernetes object (apiVersion/kind missing): %r" % (obj,))
    if not (obj.get("metadata") or {}).get("name"):
        # The schema does not require metadata.name; the API server does.
        raise SchemaError("%s: metadata.name is missing" % _ref(obj))
    try:
        kubernetes_validate.validate(obj, version, strict=True)
    except kubernetes_validate.ValidationError as exc:
        path = ".".join(str(p) for p in exc.path) or "(top level)"
        raise SchemaError("%s does not validate against Kubernetes %s: %s: %s" % (_ref(obj), version, path, exc.message)) from None
    except kubernetes_validate.SchemaNotFoundError as exc:
        raise SchemaError("%s: %s" % (_ref(obj), exc.message)) from None


def validate_all(objs: list[dict[str, Any]], version: str = KUBERNETES_SCHEMA_VERSION) -> None:
    """validate_k8s for each object; reports every failure at once."""
    errors = []
    for obj in objs:
        try:
            validate_k8s(obj, version)
        except SchemaError as exc:
            errors.append(str(exc))
    if errors:
        raise SchemaError("\n".join(errors))
