# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The diagnose check: the findings ingress_diagnose makes before the window, against those
lab_expect.diagnose.findings expects (each a kind, and regexes over its Ingress, culprit and reason). An
expected finding may be of any severity (a warning a scenario sets out to show); an unexpected one fails the
check only when it is an error. Its sections: the findings with their fixes (summary.md), and in report.html
each finding in the section of the Ingress it explains, the others last."""
from __future__ import annotations

import json
import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import (
    Check, Obj, Reference, Verdict, html_text as _e, regex, require,
)


def _entries(body: Obj, where: str) -> None:
    for i, finding in enumerate(body.get("findings", [])):
        here = "%s.findings[%d]" % (where, i)
        require(isinstance(finding, dict) and isinstance(finding.get("kind"), str), here, "a mapping with kind", finding)
        for key in ("ingress", "culprit", "reason"):
            if key in finding:
                regex(finding[key], "%s.%s" % (here, key))


def _references(body: Any) -> list[Reference]:
    """The regex of every finding that names its Ingress."""
    return [("lab_expect.diagnose.findings[%d].ingress" % i, "Ingress pattern", finding["ingress"])
            for i, finding in enumerate((body or {}).get("findings") or []) if "ingress" in finding]


def finding_text(finding: Obj) -> str:
    """ingress_diagnose calls the explanation `message`."""
    return str(finding.get("message") or finding.get("reason") or "")


def _verdicts(results: Obj, body: Any, context: str) -> list[Verdict]:
    if "diagnose" not in results:
        return []
    findings = list(results["diagnose"].get("findings", []))
    wanted = (body or {}).get("findings", [])
    out = []
    matched: set[int] = set()
    for want in wanted:
        hit = None
        for i, finding in enumerate(findings):
            if i in matched or finding.get("kind") != want["kind"]:
                continue
            text = {"ingress": str(finding.get("ingress", "")), "culprit": " ".join(map(str, finding.get("culprits", []))),
                    "reason": finding_text(finding)}
            if all(re.search(want[k], text[k]) for k in ("ingress", "culprit", "reason") if k in want):
                hit = i
                break
        label = "%s %s" % (want["kind"], want.get("ingress", ""))
        if hit is None:
            out.append(Verdict("diagnose", label.strip(), "finding " + json.dumps(want, sort_keys=True), "no such finding", False))
        else:
            matched.add(hit)
            f = findings[hit]
            out.append(Verdict("diagnose", label.strip(), "finding", "found: %s" % finding_text(f), True))
    for i, finding in enumerate(findings):
        if i not in matched and finding.get("severity", "error") == "error":
            out.append(Verdict("diagnose", "%s %s" % (finding.get("kind"), finding.get("ingress", "")), "no finding",
                               "unexpected finding: %s" % finding_text(finding), False))
    if not out:
        out.append(Verdict("diagnose", "cluster", "no finding", "no finding", True))
    return out


def _summary(results: Obj) -> list[str]:
    """The '## Diagnosis' section: each finding, with its fix."""
    findings = (results.get("diagnose") or {}).get("findings") or []
    if not findings:
        return []
    lines = ["", "## Diagnosis", ""]
    for f in findings:
        lines.append("- **%s** %s: %s" % (f.get("kind"), f.get("ingress", ""), finding_text(f)))
        fix = f.get("fix") or {}
        if fix:
            lines.append("  - fix: %s" % json.dumps(fix, sort_keys=True))
    return lines


def _findings(results: Obj) -> tuple[Obj, list[Obj]]:
    """(ingress_diagnose's result, its findings) as report.json holds them."""
    diagnose = results.get("diagnose") or {}
    return diagnose, [f for f in diagnose.get("findings") or [] if isinstance(f, dict)]


def _explains(finding: Obj, key: str, diagnose: Obj) -> bool:
    """A finding explains an Ingress when it names it, or (a controller finding) when the
    controllers it names are among the Ingress's predicted writers."""
    if finding.get("ingress"):
        return str(finding["ingress"]) == key
    named = {str(c) for c in finding.get("controllers") or []}
    writers = {str(w.get("controller")) for w in ((diagnose.get("ingresses") or {}).get(key) or {}).get("writers") or []}
    return bool(named) and named <= writers


def _finding_html(f: Obj) -> str:
    severity = str(f.get("severity", "error"))
    kind = _e(f.get("kind", ""))
    parts = ['<div class="finding %s" data-kind="%s"><strong>%s</strong> (%s)' % (_e(severity), kind, kind, _e(severity))]
    if f.get("culprits"):
        parts.append(" — culprit: <strong>%s</strong>" % _e(", ".join(map(str, f["culprits"]))))
    parts.append("<div>%s</div>" % _e(f.get("message") or f.get("reason") or ""))
    if f.get("period"):
        parts.append('<div class="meta">%s</div>' % _e(f["period"]))
    fix = f.get("fix") or {}
    if fix:
        parts.append('<div class="fix"><strong>Fix</strong><ul>')
        for label, key in (("chart values", "chart_values"), ("controller args", "args")):
            for item in fix.get(key) or []:
                parts.append("<li>%s: <code>%s</code></li>" % (label, _e(item)))
        for key in sorted(k for k in fix if k not in ("chart_values", "args")):
            parts.append("<li>%s: <code>%s</code></li>" % (_e(key), _e(fix[key])))
        parts.append("</ul></div>")
    parts.append("</div>")
    return "".join(parts)


def _objects(results: Obj) -> set[str]:
    """The Ingresses diagnose read, and those its findings name."""
    diagnose, findings = _findings(results)
    return set((diagnose.get("ingresses") or {}).keys()) | {str(f["ingress"]) for f in findings if f.get("ingress")}


def _of_object(results: Obj, key: str) -> str:
    """The findings that explain the Ingress KEY."""
    diagnose, findings = _findings(results)
    return "".join(_finding_html(f) for f in findings if _explains(f, key, diagnose))


def _rest_html(results: Obj, keys: set[str]) -> str:
    """'Other findings': those that explain none of the objects."""
    diagnose, findings = _findings(results)
    general = [f for f in findings if not any(_explains(f, k, diagnose) for k in keys)]
    if not general:
        return ""
    return "<h2>Other findings</h2>" + "".join(_finding_html(f) for f in general)


CHECK = Check("diagnose", _verdicts, keys=frozenset({"findings"}), subject=None, entries=_entries, references=_references,
              fed_by="diagnose", summary=_summary, objects=_objects, of_object=_of_object, rest_html=_rest_html,
              object_verdicts=False)
