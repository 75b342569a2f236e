# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The controllers check: every lab controller started (controller_health), but those lab_expect.controllers.failing
names (namespace/release: reason regex), which the build goes on past and verify asserts like any expected failure."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import (
    Check, Obj, Verdict, failing, failure_of, per_subject,
)


def _outcomes(result: Obj) -> dict[str, tuple[bool, str]]:
    """controller_health's result: namespace/release → (started, reason)."""
    return {key: (bool(item.get("passed")), str(item.get("reason") or ""))
            for key, item in (result.get("controllers") or {}).items()}


def _verdicts(results: Obj, body: Any, context: str) -> list[Verdict]:
    if "controllers" not in results:
        return []
    return per_subject("controllers", _outcomes(results["controllers"]), failing(body), noun="controller")


def _absence(results: Obj) -> str:
    """Controllers that did not start stop lab.yml before the workloads (and Gateways) are created."""
    controllers = results.get("controllers") or {}
    failures = [] if failure_of(controllers) else list(controllers.get("failures") or [])
    if failures:
        return " (the lab's controllers did not all start - %s - so the build stopped before the workloads)" % "; ".join(failures)
    return ""


CHECK = Check("controllers", _verdicts, subject="controller", fed_by="controllers", absence=_absence)
