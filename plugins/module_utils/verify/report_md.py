# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""summary.md, the verify report for people in Markdown: one table of verdicts, each check's sections
(verify/checks/registry.py, in the table's order), then what moved in the window and the timeline."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils._markdown import cell
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import Obj, Verdict
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.motion import motion, strips
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_html import window_length
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.timeline import markdown_lines as timeline_lines
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.timeline import merge as merge_timeline
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.timeline import status_origin


def markdown(scenario: str, backend: str, verdicts: list[Verdict], results: Obj, probes: list[Obj] | None = None,
             not_reproduced: list[str] | None = None) -> str:
    """The human summary: one table of verdicts, then the details that explain failures, then
    the timeline. probes: the expectation's reachability probes (their names and Ingresses);
    not_reproduced: what a captured scenario does not reproduce of its cluster."""
    unmet = [v for v in verdicts if not v.met]
    lines = [
        "# Ingress lab verification: %s" % scenario,
        "",
        "Backend: **%s**. %d checks, %d as expected, %d unmet: **%s**."
        % (backend, len(verdicts), len(verdicts) - len(unmet), len(unmet), "PASS" if not unmet else "FAIL"),
    ]
    said = [(v.check, v.subject, v.observed) for v in verdicts]
    for check in registry.CHECKS:  # an answer comes first (a rehearsal's: what changes if you switch)
        if check.answer is not None:
            lines += check.answer(results, said)
    lines += [
        "",
        "| check | subject | expected | observed | |",
        "|---|---|---|---|---|",
    ]
    for v in verdicts:
        lines.append("| %s | %s | %s | %s | %s |" % (v.check, cell(v.subject), cell(v.expected), cell(v.observed),
                                                     "ok" if v.met else "**UNMET**"))
    if not_reproduced:
        lines += ["", "## Not reproduced from the captured cluster", ""] + ["- %s" % cell(n) for n in not_reproduced]
    for check in registry.CHECKS:
        if check.summary is not None:
            lines += check.summary(results)
    lines += motion_lines(results, probes)
    # One time axis per Ingress (timeline.py): actions, status changes with their writers,
    # probe failures and data-plane divergences, in time order.
    lines += timeline_lines(merge_timeline(results, probes))
    return "\n".join(lines) + "\n"


def motion_lines(results: Obj, probes: list[Obj] | None) -> list[str]:
    """The '## In motion' section: report.html's figures under the status bars as text strips (motion.strips)."""
    found = results.get("status")
    status: Obj = found if isinstance(found, dict) else {}
    moving = motion(results, probes or [], status_origin(status))
    if not moving:
        return []
    lines = ["", "## In motion", "", "Per Ingress, on the status window's axis (report.html draws the same under each bar):"]
    for key, m in moving.items():
        lines += ["", "### %s" % key, "", "```"] + strips(m, window_length(status)) + ["```"]
    return lines
