# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a rollout cost, per controller, beside its fixed variant: reads the verify reports of the
scenarios named (their report.json under WORK/kind/SCENARIO/verify/) and prints, for every
continuous probe, the requests sent and lost, and for every controller replica the longest time
its data plane lagged behind the EndpointSlices.

    python3 tests/kind/rollout_table.py WORK SCENARIO [SCENARIO ...]

Exits 1 when a scenario's report is missing or holds no continuous probe (so the table cannot
silently be empty), 0 otherwise: the verdicts themselves are judged by each scenario's lab_expect.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def rows(report: dict[str, Any]) -> tuple[list[tuple[str, int, int, float]], list[tuple[str, str, float]]]:
    """(probe, sent, lost, achieved rate) per continuous probe; (controller, backend, longest lag) per replica."""
    results = report.get("results") or {}
    probes = []
    for result in results.get("reachability_continuous") or []:
        run = result.get("continuous")
        if not run:
            continue
        name = str((result.get("item") or {}).get("name") or ", ".join(result.get("ingresses") or []) or "probe")
        probes.append((name, int(run.get("sent", 0)), int(run.get("failed_count", 0)), float(run.get("rate_achieved", 0.0))))
    lags = []
    for row in (results.get("dataplane") or {}).get("lag") or []:
        lags.append((str(row.get("pod")), str(row.get("ingress")), float(row.get("lag") or 0.0)))
    return probes, lags


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    work, scenarios = Path(argv[0]), argv[1:]
    missing = []
    print("%-22s %-48s %7s %6s %8s" % ("scenario", "continuous probe", "sent", "lost", "rate/s"))
    lag_lines = []
    for scenario in scenarios:
        path = work / "kind" / scenario / "verify" / "report.json"
        try:
            report = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            missing.append("%s: %s" % (scenario, exc))
            continue
        probes, lags = rows(report)
        if not probes:
            missing.append("%s: no continuous probe in %s" % (scenario, path))
        for name, sent, lost, rate in probes:
            print("%-22s %-48s %7d %6d %8.2f" % (scenario, name[:48], sent, lost, rate))
        lag_lines += ["%-22s %-58s %-10s %6.1f s" % (scenario, pod[:58], ingress, lag) for pod, ingress, lag in lags]
    print()
    print("%-22s %-58s %-10s %8s" % ("scenario", "data plane of pod", "ingress", "max lag"))
    for line in lag_lines:
        print(line)
    for line in missing:
        print("rollout_table: %s" % line, file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
