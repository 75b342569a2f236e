# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The migration rehearsal (ingress_migration) as a check: lab_expect.migration names the baseline and targets,
the Ingresses, the scenario's own requests and the differences it expects (migration/summary.py validates them).
Its verdicts, its answer at the top of summary.md and report.html, its section of each and its junit.xml are
migration/summary.py's; this file is the one place the report reaches them. With report_only (a rehearsal of a
captured cluster), another check's unmet verdict about a Gateway target's own objects is that target's finding."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.migration import summary as migration_summary
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import Check, Obj, Said, Verdict


def _verdicts(results: Obj, body: Any, context: str) -> list[Verdict]:
    if not results.get("migration") and body is None:
        return []
    rehearsal = results.get("migration") or {"failed": True, "msg": "the rehearsal did not run"}
    return [Verdict("migration", subject, expected, ("pass: " if met else "fail: ") + observed, met)
            for subject, expected, observed, met in migration_summary.verdicts(rehearsal, bool((body or {}).get("report_only")))]


def _restate(verdicts: list[Verdict], body: Any) -> list[Verdict]:
    if (body or {}).get("report_only"):  # a rehearsal: its targets' own findings never fail it
        return migration_summary.target_findings(verdicts, (body or {}).get("targets") or [])
    return verdicts


def _files(results: Obj, body: Any) -> dict[str, str]:
    rehearsal = results.get("migration") or {}
    if "comparison" not in rehearsal:
        return {}
    # one JUnit case per behaviour that changes (a CI gate reads it)
    return {"junit.xml": migration_summary.junit_xml(rehearsal, not (body or {}).get("report_only"))}


def _answer(results: Obj, said: Said) -> list[str]:
    return migration_summary.answer_lines(results.get("migration") or {}, migration_summary.findings_by_target(said))


def _answer_html(results: Obj, said: Said) -> str:
    return migration_summary.answer_html(results.get("migration") or {}, migration_summary.findings_by_target(said))


CHECK = Check("migration", _verdicts, subject=None, body=migration_summary.validate, restate=_restate, files=_files,
              answer=_answer, answer_html=_answer_html,
              summary=lambda results: migration_summary.markdown_lines(results.get("migration") or {}),
              html=lambda results: migration_summary.html_section(results.get("migration") or {}))
