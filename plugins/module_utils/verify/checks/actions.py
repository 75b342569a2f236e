# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The actions check (lab_actions, timed during the window): every action worked, but those
lab_expect.actions.failing names (its name: error regex)."""
from __future__ import annotations

import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import Check, Obj, Verdict, failing


def _verdicts(results: Obj, body: Any, context: str) -> list[Verdict]:
    """One per action: it must have worked, unless lab_expect.actions.failing names it."""
    if not results.get("actions"):
        return []
    result, expected_failing = results["actions"], failing(body)
    out = []
    for action in result.get("actions") or []:
        name = str(action.get("name"))
        observed = "pass: " + str(action.get("detail") or "done") if action.get("ok") else "fail: " + str(action.get("error"))
        pattern = expected_failing.get(name)
        met = bool(action.get("ok")) if pattern is None else (not action.get("ok") and re.search(pattern, observed) is not None)
        out.append(Verdict("actions", name, "pass" if pattern is None else "fail: " + pattern, observed, met))
    ran = {str(action.get("name")) for action in result.get("actions") or []}
    for name in sorted(set(expected_failing) - ran):  # an expected failure of no action that ran is a miss, not a pass
        out.append(Verdict("actions", name, "fail: " + expected_failing[name], "fail: not observed (no such action ran)", False))
    return out


CHECK = Check("actions", _verdicts, subject="action", fed_by="actions")
