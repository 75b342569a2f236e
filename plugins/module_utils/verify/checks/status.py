# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The status check: each Ingress's status through the watch window (ingress_status: settled, in the pools, at
most max_changes changes), but those lab_expect.status.failing names (namespace/name: reason regex); the window's
own options (settle, window, max_changes, pools, allow_empty) are read by the verify role. Its summary.md section
lists the Gateway API objects the same watch saw, where it covered them."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._markdown import cell
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import (
    Check, Obj, Verdict, failing, failure_of, outcomes, per_subject,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.timeline import gateway_rows


def _verdicts(results: Obj, body: Any, context: str) -> list[Verdict]:
    if "status" not in results:
        return []
    return per_subject("status", outcomes(results["status"]), failing(body), context=context)


def _absence(results: Obj) -> str:
    """A watch that saw no Ingress at all."""
    status = results.get("status")
    if isinstance(status, dict) and not failure_of(status) and "ingresses" in status and not status["ingresses"]:
        return " (the lab's namespaces hold no Ingress: the build stopped before the workloads, or they were deleted since)"
    return ""


def gateway_lines(status: Obj) -> list[str]:
    """The '## Gateway API' section: each Gateway and each HTTPRoute parent entry (timeline.gateway_rows),
    where the status watch covered them. Their changes, one by one, are in the timeline."""
    rows = gateway_rows(status)
    if rows is None:
        return []
    lines = ["", "## Gateway API", "", "| object | addresses | conditions | changes | written by | verdict |", "|---|---|---|---|---|---|"]
    lines += ["| %s |" % " | ".join(cell(c) for c in row) for row in rows]
    return lines


CHECK = Check("status", _verdicts, keys=frozenset({"settle", "window", "max_changes", "pools", "allow_empty", "failing"}),
              fed_by="status", absence=_absence, summary=lambda results: gateway_lines(results.get("status") or {}))
