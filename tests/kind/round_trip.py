"""A captured scenario rebuilt on kind against the scenario it was captured from (issue 26).

    round_trip.py ORIGINAL_REPORT.json REBUILT_REPORT.json [--anonymized CAPTURED.yml SCENARIO.yml]

Both are verify reports (report.json): the scenario's own run on kind, and the run of what
playbooks/capture.yml wrote from that cluster, rebuilt on the emptied cluster. For the checks a
capture reproduces (diagnose, addresses, status, backends, conflicts, gateways, routes), the two
runs' verdicts must be equal: the same subjects with the same outcome (pass or fail) and the same
expectation met. With --anonymized the subjects are renamed, so the verdicts are compared as a
multiset of (check, outcome, met) per check instead, and no namespace, Ingress name or host of
SCENARIO may appear in CAPTURED. Reachability is not captured (the capture says so), and is left
out. Prints one row per check; exits 1 on a difference.
Standalone on purpose (no import of the collection): it checks what the modules wrote.
"""
from __future__ import annotations

import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
Obj = dict[str, Any]
CAPTURED_CHECKS = ("diagnose", "addresses", "status", "backends", "conflicts", "gateways", "routes")


def verdicts(report: Obj) -> dict[str, list[tuple[str, str, bool]]]:
    """check → [(subject, outcome, met)] for the checks a capture reproduces."""
    out: dict[str, list[tuple[str, str, bool]]] = {c: [] for c in CAPTURED_CHECKS}
    for v in report.get("verdicts") or []:
        if v.get("check") in out:
            outcome = "pass" if str(v.get("observed") or "").startswith(("pass", "no finding", "no conflict", "found")) else "fail"
            out[v["check"]].append((str(v.get("subject")), outcome, bool(v.get("met"))))
    return out


def original_names(scenario: Obj) -> set[str]:
    """The names an anonymized capture must not carry: namespaces, workload and Ingress names, hosts
    (of the scenario over the default lab's variables, as lab.yml reads them)."""
    defaults = yaml.safe_load((ROOT / "inventories/local/group_vars/all/lab.yml").read_text()) or {}
    scenario = dict(defaults, **scenario)
    names = set(scenario.get("lab_namespaces") or [])
    for wl in scenario.get("lab_workloads") or []:
        names.add(str(wl.get("name")))
        ingress = wl.get("ingress") or {}
        if isinstance(ingress, dict):
            names.update(str(ingress[k]) for k in ("name", "host") if ingress.get(k))
    return {n for n in names if n and n != "None"}


def leaked(captured_text: str, names: set[str]) -> list[str]:
    words = set(re.findall(r"[A-Za-z0-9][A-Za-z0-9.-]*", captured_text))
    return sorted(n for n in names if n in words)


def compare(original: Obj, rebuilt: Obj, anonymized: bool) -> list[tuple[str, str, str, bool]]:
    a, b = verdicts(original), verdicts(rebuilt)
    rows = []
    for check in CAPTURED_CHECKS:
        # diagnose's subjects are the expectations' own regexes, written by hand in a scenario and by
        # the capture in its file: compared by count, like every check of an anonymized capture.
        if anonymized or check == "diagnose":
            left = Counter((o, m) for _s, o, m in a[check])
            right = Counter((o, m) for _s, o, m in b[check])
        else:
            left, right = Counter(a[check]), Counter(b[check])

        def show(c: Counter[Any]) -> str:
            return ", ".join("%s×%d" % ("/".join(map(str, k)), n) for k, n in sorted(c.items(), key=str)) or "-"
        rows.append((check, show(left), show(right), left == right))
    return rows


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 5) or (len(argv) == 5 and argv[2] != "--anonymized"):
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8") as f:
        original = json.load(f)
    with open(argv[1], encoding="utf-8") as f:
        rebuilt = json.load(f)
    anonymized = len(argv) == 5
    failed = 0
    for check, left, right, same in compare(original, rebuilt, anonymized):
        print("%-6s | %-10s | original: %s | rebuilt: %s" % ("same" if same else "DIFFER", check, left, right))
        failed += not same
    if anonymized:
        with open(argv[3], encoding="utf-8") as f:
            captured_text = f.read()
        with open(argv[4], encoding="utf-8") as f:
            names = original_names(yaml.safe_load(f) or {})
        found = leaked(captured_text, names)
        print("%-6s | anonymized | original names in the capture: %s" % ("same" if not found else "DIFFER", ", ".join(found) or "none"))
        failed += bool(found)
    print("round trip: %s" % ("verdicts equal" if not failed else "%d difference(s)" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
