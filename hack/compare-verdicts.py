"""Each scenario's verdicts on real kind beside the twin's (hack/test-kind.sh), or two runs' on kind.

    compare-verdicts.py WORK SCENARIO...
    compare-verdicts.py --between BEFORE AFTER [SCENARIO...]

Reads WORK/{kind,twin}/SCENARIO/verify/report.json (written by the verify role) and prints,
per scenario, one row per (check, subject): what each backend observed (pass, or fail and the
first words of the reason) and whether it met the scenario's expectation. Exits 1 when a report
is missing or a row differs in outcome or in meeting the expectation, unless BY_DESIGN names
the row with its reason.

--between compares two runs' kind reports the same way: BEFORE/kind/SCENARIO against AFTER/kind/SCENARIO,
the reports hack/test-kind.sh keeps with KINDLAB_KEEP_REPORTS=DIR (for a change that must not change a
verdict; BY_DESIGN does not apply). Without SCENARIO: every scenario either run has a report for.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

# (scenario, check, subject) -> why kind and the twin may differ there. Every entry is a fact
# of the two backends, not a tolerance.
BY_DESIGN: dict[tuple[str, str, str], str] = {}


def load(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def rows(report: dict[str, Any]) -> dict[tuple[str, str], tuple[str, bool, str]]:
    out = {}
    for v in report.get("verdicts") or []:
        observed = str(v.get("observed") or "")
        outcome = "pass" if observed.startswith("pass") else "fail"
        out[(str(v["check"]), str(v["subject"]))] = (outcome, bool(v.get("met")), observed)
    return out


def short(observed: str, width: int = 38) -> str:
    return observed if len(observed) <= width else observed[: width - 1] + "…"


def cell(row: tuple[str, bool, str] | None) -> str:
    return "-" if row is None else "%s %s" % ("ok   " if row[1] else "UNMET", short(row[2]))


def compare(columns: dict[str, Path], scenarios: list[str], by_design: dict[tuple[str, str, str], str]) -> int:
    """The rows of two columns (name -> the directory holding SCENARIO/verify/report.json); the differences counted."""
    (left, right) = columns
    differ = 0
    for scenario in scenarios:
        reports = {name: load(where / scenario / "verify" / "report.json") for name, where in columns.items()}
        print("\n  %s" % scenario)
        missing = [name for name, r in reports.items() if r is None]
        if missing:
            print("    no verdicts from %s" % " and ".join(missing))
            differ += 1
            continue
        a, b = rows(reports[left] or {}), rows(reports[right] or {})
        print("    %-14s %-16s %-46s %-46s" % ("check", "subject", left, right))
        for key in sorted(set(a) | set(b)):
            x, y = a.get(key), b.get(key)
            same = x is not None and y is not None and x[:2] == y[:2]
            reason = by_design.get((scenario,) + key)
            mark = "" if same else ("   (by design: %s)" % reason if reason else "   <- differs")
            if not same and not reason:
                differ += 1
            print("    %-14s %-16s %-46s %-46s%s" % (key[0], key[1], cell(x), cell(y), mark))
        verdict = {name: "PASS" if r.get("passed") else "FAIL" for name, r in reports.items() if r is not None}
        print("    %s: %s   %s: %s" % (left, verdict[left], right, verdict[right]))
    return differ


def main(argv: list[str]) -> int:
    if len(argv) >= 4 and argv[1] == "--between":
        before, after = Path(argv[2]) / "kind", Path(argv[3]) / "kind"
        scenarios = argv[4:] or sorted({p.parent.parent.name for run in (before, after)
                                        for p in run.glob("*/verify/report.json")})
        differ = compare({"before": before, "after": after}, scenarios, {})
        print("\n%d scenarios compared, %d rows or reports differ" % (len(scenarios), differ))
        return 1 if differ or not scenarios else 0
    if len(argv) < 3 or argv[1].startswith("--"):
        print(__doc__, file=sys.stderr)
        return 2
    work = Path(argv[1])
    return 1 if compare({"kind": work / "kind", "twin": work / "twin"}, argv[2:], BY_DESIGN) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
