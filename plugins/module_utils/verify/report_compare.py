# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Two verify reports side by side (report.json): a live cluster's and the lab that reproduces it,
or a scenario's run and the rebuild of its capture.

Two comparisons, each per check:
- `verdicts` (a capture rebuilt in the lab): the verdicts of the checks a capture reproduces must be
  equal - the same subjects with the same outcome and the same expectation met;
- `symptoms` (a live cluster against its reproduction): what the incident is made of must be equal -
  the diagnosis's error findings by kind, and which objects of the kinds with addresses changed status
  during the watch. A live cluster has no lab pool and no lab expectation, so outcomes and
  expectations are not compared there.
With `anonymized`, one side's names were rewritten: subjects are compared by count, not by name.
Reachability is not captured, so it is not compared. Pure: the module reads the files.
"""
from __future__ import annotations

from collections import Counter
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import KINDS, WATCHED_KEYS

Obj = dict[str, Any]
# The checks a capture reproduces (lab_capture's lab_expect), compared between two runs.
CAPTURED_CHECKS = ("diagnose", "addresses", "status", "backends", "conflicts") + WATCHED_KEYS
MODES = ("verdicts", "symptoms")
_PASSED = ("pass", "no finding", "no conflict", "found")


class CompareError(OptionError):
    """A report cannot be compared; the message names it."""


def _require_report(report: Any, where: str) -> Obj:
    if not isinstance(report, dict) or not isinstance(report.get("verdicts"), list):
        raise CompareError("%s: expected a verify report (report.json, with verdicts), got %s" % (
            where, type(report).__name__ if not isinstance(report, dict) else "keys %s" % sorted(report)[:8]))
    return report


def verdicts(report: Obj) -> dict[str, list[tuple[str, str, bool]]]:
    """check → [(subject, outcome, met)] for the checks a capture reproduces."""
    out: dict[str, list[tuple[str, str, bool]]] = {c: [] for c in CAPTURED_CHECKS}
    for v in report.get("verdicts") or []:
        if v.get("check") in out:
            outcome = "pass" if str(v.get("observed") or "").startswith(_PASSED) else "fail"
            out[v["check"]].append((str(v.get("subject")), outcome, bool(v.get("met"))))
    return out


def symptoms(report: Obj) -> dict[str, list[str]]:
    """What an incident is made of, from a report's results: the error findings' kinds with their
    subject, and the subjects whose status changed during the watch."""
    results = report.get("results") or {}
    findings = [f for f in (results.get("diagnose") or {}).get("findings") or [] if f.get("severity", "error") == "error"]
    status = results.get("status") or {}
    out = {"findings": ["%s %s" % (f.get("kind"), f.get("ingress") or f.get("gateway") or f.get("route") or "") for f in findings]}
    for kind in KINDS:  # the kinds with addresses: a change of one is a symptom (a route's conditions are its verdict's)
        if kind.addressed:
            label = "changed status" if kind.bare else "changed %s status" % kind.kind
            out[label] = sorted(k for k, v in (status.get(kind.result_key) or {}).items() if (v or {}).get("changes"))
    return out


def _show(counter: Counter[Any]) -> str:
    return ", ".join("%s×%d" % ("/".join(map(str, k)) if isinstance(k, tuple) else k, n)
                     for k, n in sorted(counter.items(), key=str)) or "-"


def compare(left: Any, right: Any, mode: str = "verdicts", anonymized: bool = False) -> list[Obj]:
    """One row per check: `check`, `left`, `right` (as text) and `same`."""
    if mode not in MODES:
        raise CompareError("mode: expected one of %s, got %r" % (", ".join(MODES), mode))
    a, b = _require_report(left, "left"), _require_report(right, "right")
    rows = []
    if mode == "verdicts":
        va, vb = verdicts(a), verdicts(b)
        for check in CAPTURED_CHECKS:
            # diagnose's subjects are the expectations' own regexes, written by hand in a scenario and by
            # the capture in its file: compared by count, like every check of an anonymized capture.
            if anonymized or check == "diagnose":
                ca: Counter[Any] = Counter((o, m) for _s, o, m in va[check])
                cb: Counter[Any] = Counter((o, m) for _s, o, m in vb[check])
            else:
                ca, cb = Counter(va[check]), Counter(vb[check])
            rows.append({"check": check, "left": _show(ca), "right": _show(cb), "same": ca == cb})
        return rows
    sa, sb = symptoms(a), symptoms(b)
    for label in sa:
        if not anonymized:
            ka: Counter[Any] = Counter(sa[label])
            kb: Counter[Any] = Counter(sb[label])
        elif label == "findings":  # renamed subjects: the kinds must match
            ka, kb = Counter(x.split(" ")[0] for x in sa[label]), Counter(x.split(" ")[0] for x in sb[label])
        else:
            ka, kb = Counter({"count": len(sa[label])}), Counter({"count": len(sb[label])})
        rows.append({"check": label, "left": _show(ka), "right": _show(kb), "same": ka == kb})
    return rows
