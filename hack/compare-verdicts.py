"""Each scenario's verdicts on real kind beside the twin's (hack/test-kind.sh).

    compare-verdicts.py WORK SCENARIO...

Reads WORK/{kind,twin}/SCENARIO/verify/report.json (written by the verify role) and prints,
per scenario, one row per (check, subject): what each backend observed (pass, or fail and the
first words of the reason) and whether it met the scenario's expectation. Exits 1 when a report
is missing or a row differs in outcome or in meeting the expectation, unless BY_DESIGN names
the row with its reason.
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


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    work, scenarios = Path(argv[1]), argv[2:]
    differ = 0
    for scenario in scenarios:
        reports = {b: load(work / b / scenario / "verify" / "report.json") for b in ("kind", "twin")}
        print("\n  %s" % scenario)
        missing = [b for b, r in reports.items() if r is None]
        if missing:
            print("    no verdicts from %s" % " and ".join(missing))
            differ += 1
            continue
        kind, twin = rows(reports["kind"]), rows(reports["twin"])
        print("    %-14s %-16s %-46s %-46s" % ("check", "subject", "kind", "twin"))
        for key in sorted(set(kind) | set(twin)):
            k, t = kind.get(key), twin.get(key)
            same = k is not None and t is not None and k[:2] == t[:2]
            reason = BY_DESIGN.get((scenario,) + key)
            mark = "" if same else ("   (by design: %s)" % reason if reason else "   <- differs")
            if not same and not reason:
                differ += 1
            print("    %-14s %-16s %-46s %-46s%s" % (key[0], key[1], cell(k), cell(t), mark))
        verdict = {b: "PASS" if r.get("passed") else "FAIL" for b, r in reports.items() if r is not None}
        print("    kind: %s   twin: %s" % (verdict["kind"], verdict["twin"]))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
