"""Benchmark of the puzzle on kind, as a user waits for it (issue 35: "the puzzle on kind to its verdicts
in 90 s or less from a running engine, the median of the benchmark").

    .venv/bin/python benchmarks/puzzle_kind_bench.py [--runs 3] [--scenario puzzle]

As root on Linux, with the lab's engine (make kind-engine) or one that answers; it prepares the
images once first (hack/kind-lab.sh prepare, a no-op when current) and prints how long that took.

Each run builds the scenario from a cold cluster (none exists first) with `hack/kind-lab.sh up
SCENARIO` (lab.yml, its verify included), timed from outside, with the per-stage seconds the
collection's lab_stages callback writes (KINDLAB_STAGES_JSON); then tears the cluster down (not
timed). Prints each stage's seconds per run and their median, the wall clock from outside, the
verdicts of each run (they must be the same every run), and PASS/FAIL of the median against 90 s.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
KIND_LAB = str(REPO / "hack" / "kind-lab.sh")
TARGET = 90.0


def run(scenario: str, state: Path) -> tuple[float, dict[str, Any], list[str]]:
    """(seconds from outside, the stage table, the verdicts) of one build from a cold cluster."""
    env = dict(os.environ, KINDLAB_STAGES_JSON=str(state / "stages.json"), KINDLAB_PREPARED="1")
    started = time.monotonic()
    proc = subprocess.run([KIND_LAB, "up", scenario, "-e", "lab_state_dir=%s" % state], env=env, cwd=REPO,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    seconds = time.monotonic() - started
    (state / "lab.log").write_text(proc.stdout)
    if proc.returncode != 0:
        raise SystemExit("%s on kind failed (rc=%d); its log: %s" % (scenario, proc.returncode, state / "lab.log"))
    report = json.loads((state / "verify" / "report.json").read_text())
    verdicts = ["%s %s: %s" % (v["check"], v["subject"], "met" if v["met"] else "UNMET") for v in report["verdicts"]]
    return seconds, json.loads((state / "stages.json").read_text()), verdicts


def down(scenario: str, state: Path) -> None:
    subprocess.run([KIND_LAB, "down", scenario, "-e", "lab_state_dir=%s" % state], cwd=REPO,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scenario", default="puzzle")
    args = parser.parse_args()
    # prepared once: the engine, the images and the clients; `make kind-lab` does it on every run, a
    # no-op when all is current (its seconds are printed: the part of a user's wait not in the table)
    started = time.monotonic()
    subprocess.run([KIND_LAB, "prepare"], cwd=REPO, check=True, stdout=subprocess.DEVNULL)
    prepared = time.monotonic() - started
    walls: list[float] = []
    tables: list[dict[str, float]] = []
    verdicts: list[list[str]] = []
    with tempfile.TemporaryDirectory(prefix="kindlab-puzzle-bench.") as tmp:
        for i in range(args.runs):
            state = Path(tmp) / ("run%d" % i)
            state.mkdir()
            down(args.scenario, state)  # a cold cluster: none before the run
            try:
                wall, stages, seen = run(args.scenario, state)
            finally:
                down(args.scenario, state)
            walls.append(wall)
            tables.append({row["stage"]: row["seconds"] for row in stages["stages"]})
            verdicts.append(seen)
            print("run %d: %.1f s from outside" % (i + 1, wall), flush=True)
    names = list(dict.fromkeys(name for table in tables for name in table))
    width = max(len(n) for n in names + ["wall clock (from outside)"])
    print("\n%s %s %8s" % ("stage (s)".ljust(width), " ".join("%7s" % ("run %d" % (i + 1)) for i in range(len(tables))), "median"))
    for name in names:
        values = [table.get(name, 0.0) for table in tables]
        print("%s %s %8.1f" % (name.ljust(width), " ".join("%7.1f" % v for v in values), statistics.median(values)))
    print("%s %s %8.1f" % ("wall clock (from outside)".ljust(width), " ".join("%7.1f" % v for v in walls), statistics.median(walls)))
    print("(before each: hack/kind-lab.sh prepare, %.1f s here, a no-op when the engine and images are current)" % prepared)
    same = all(v == verdicts[0] for v in verdicts)
    print("\nverdicts: %d per run, %s" % (len(verdicts[0]), "the same every run" if same else "DIFFERENT between runs"))
    median = statistics.median(walls)
    print("%s: median %.1f s to the verdicts (target %.0f s)" % ("PASS" if median <= TARGET and same else "FAIL", median, TARGET))
    return 0 if median <= TARGET and same else 1


if __name__ == "__main__":
    sys.exit(main())
