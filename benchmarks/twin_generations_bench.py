"""The twin on the real control plane beside the previous twin (our Python API server and
emulated core controllers), side by side in one run. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/twin_generations_bench.py [--runs N] [--previous REV]

For each generation: `kindlab-twin create cluster --wait 60s` to Ready (N runs), and the default
lab up + its basic address check (`playbooks/lab.yml -e lab_verify=false`, time scale 60), then
teardown. The previous twin is taken from git (REV, default PREVIOUS_REV: the last commit that
had it), exported to a temporary directory and run with this checkout's collection through the
role's `kind_cluster_twin_binary`; without git history that column is left out.
Goals of the control-plane issue: create to Ready < 15 s, lab up + basic check < 45 s (2 cores).
Everything listens on 127.0.0.1; state goes to temporary directories removed on exit.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from twin_bench import REPO, VENV_BIN, bench_env, cleanup_twins, run_timed  # noqa: E402

PREVIOUS_REV = "68126bd"  # main before the twin moved onto the real control plane
CREATE_GOAL_S, LAB_GOAL_S = 15.0, 45.0
TIMEOUT_CREATE, TIMEOUT_LAB, TIMEOUT_TEARDOWN = 120.0, 240.0, 90.0


def previous_twin(rev: str, tmp: Path) -> Path | None:
    """A kindlab-twin command running the twin of REV (its src/kindlab_twin, this venv's Python)."""
    dest = tmp / "previous"
    dest.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev, "src/kindlab_twin"], capture_output=True,
                             check=False)
    if archive.returncode != 0:
        print(f"previous twin: git archive {rev} failed ({archive.stderr.decode().strip()}); column left out")
        return None
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    cmd = dest / "kindlab-twin"
    # PYTHONPATH is inherited by the twin process the CLI spawns, so both are REV's.
    cmd.write_text(f"#!/bin/sh\nPYTHONPATH={dest / 'src'} exec {VENV_BIN / 'python'} -c "
                   "'import sys; from kindlab_twin.cli import main; sys.exit(main())' \"$@\"\n")
    cmd.chmod(0o755)
    return cmd


def create_to_ready(twin: Path, env: dict[str, str], tmp: Path, log: Path) -> tuple[float, int]:
    kubeconfig = tmp / "create.kubeconfig"
    took = run_timed([str(twin), "create", "cluster", "--name", "bench-ready", "--kubeconfig", str(kubeconfig),
                      "--wait", "60s"], env, TIMEOUT_CREATE, log)
    run_timed([str(twin), "delete", "cluster", "--name", "bench-ready", "--kubeconfig", str(kubeconfig)], env, 60, log)
    return took


def lab_up(twin: Path, env: dict[str, str], tmp: Path, log: Path) -> tuple[float, int]:
    cluster = json.dumps({"lab_cluster": {"name": "bench-gen", "workers": 0, "kind_config": {}}})
    extra = ["-e", "lab_backend=twin", "-e", cluster, "-e", f"lab_state_dir={tmp / 'lab-state'}",
             "-e", "lab_time_scale=60", "-e", f"kind_cluster_twin_binary={twin}"]
    playbook = str(VENV_BIN / "ansible-playbook")
    try:
        return run_timed([playbook, "playbooks/lab.yml", "-e", "lab_verify=false", *extra], env, TIMEOUT_LAB, log)
    finally:
        run_timed([playbook, "playbooks/teardown.yml", *extra], env, TIMEOUT_TEARDOWN, log)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    ap.add_argument("--runs", type=int, default=2, help="create-to-Ready runs per generation")
    ap.add_argument("--previous", default=PREVIOUS_REV, help="git revision of the previous twin")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="twin-gen-") as t:
        tmp = Path(t)
        env = bench_env(tmp / "home")
        generations = {"real control plane (now)": VENV_BIN / "kindlab-twin"}
        prev = previous_twin(args.previous, tmp)
        if prev is not None:
            generations[f"Python API server ({args.previous})"] = prev
        rows: dict[str, dict[str, str]] = {}
        try:
            for label, twin in generations.items():
                log = tmp / f"{label.split()[0]}.log"
                print(f"[{label}] create to Ready x{args.runs}, then lab up + basic check ...", flush=True)
                creates = [create_to_ready(twin, env, tmp, log) for _run in range(args.runs)]
                ok = [s for s, rc in creates if rc == 0]
                lab_s, lab_rc = lab_up(twin, env, tmp, log)
                rows[label] = {
                    "create": f"{statistics.median(ok):.1f}" if ok else f"failed (rc {creates[-1][1]}, log {log})",
                    "lab": f"{lab_s:.1f}" if lab_rc == 0 else f"failed (rc {lab_rc}, log {log})",
                }
                if lab_rc != 0 or not ok:
                    print("\n".join(log.read_text(errors="replace").splitlines()[-25:]))
        finally:
            cleanup_twins(env)
        print(f"\n{'':38} {'create→Ready s (median)':>24} {'lab up + check s':>17}")
        for label, row in rows.items():
            print(f"{label:38} {row['create']:>24} {row['lab']:>17}")
        print(f"{'goal':38} {'< ' + str(CREATE_GOAL_S):>24} {'< ' + str(LAB_GOAL_S):>17}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
