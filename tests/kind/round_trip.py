"""A captured scenario rebuilt on kind against the scenario it was captured from (issue 26).

    round_trip.py ORIGINAL_REPORT.json REBUILT_REPORT.json [--anonymized CAPTURED.yml SCENARIO.yml]

Both are verify reports (report.json): the scenario's own run on kind, and the run of what
playbooks/capture.yml wrote from that cluster, rebuilt on the emptied cluster. Their verdicts are
compared as the verify_compare module does with mode verdicts (verify/report_compare.py: the checks a
capture reproduces, the same subjects with the same outcome and expectation met; by count when
--anonymized). With --anonymized, no namespace, Ingress name or host of SCENARIO may appear in
CAPTURED either. Prints one row per check; exits 1 on a difference.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_compare import compare

ROOT = Path(__file__).resolve().parents[2]
Obj = dict[str, Any]


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
    for row in compare(original, rebuilt, "verdicts", anonymized):
        print("%-6s | %-10s | original: %s | rebuilt: %s" % ("same" if row["same"] else "DIFFER", row["check"], row["left"], row["right"]))
        failed += not row["same"]
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
