# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Argument specs shared by modules (their documentation lives in the doc fragment `cluster`)."""
from __future__ import annotations

from typing import Any

CLUSTER_ARGS: dict[str, Any] = {
    "kubeconfig": {"type": "path"},
    "context": {"type": "str"},
}

WAIT_ARGS: dict[str, Any] = {
    "wait": {"type": "bool", "default": True},
    "wait_timeout": {"type": "int", "default": 300},
}


def with_args(*specs: dict[str, Any], **own: Any) -> dict[str, Any]:
    """Merge shared argument specs with a module's own options."""
    merged: dict[str, Any] = {}
    for spec in specs:
        merged.update(spec)
    merged.update(own)
    return merged


# Which Ingresses a verification module looks at (doc fragment `selection`).
SELECTION_ARGS: dict[str, Any] = {
    "namespaces": {"type": "list", "elements": "str", "default": []},
    "names": {"type": "list", "elements": "str", "default": []},
    "label_selector": {"type": "str"},
}
