"""Real kind beside the twin on this machine, in one run. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/kind_vs_twin_bench.py [--runs N]

Linux as root, with the lab's own engine up and the offline images and clients ready (make
kind-engine kind-images; kindlab-twin build binaries --set kind-clients --link-into
~/.cache/kindlab/kind-tools, as make test-kind does); the twin's binaries built (make binaries). For each backend, N times:
- create to Ready: the collection's kind_cluster module (kind from the offline node image, inside
  the engine's network namespace; or the twin); then delete;
- the healthy lab and the puzzle, each `playbooks/lab.yml` to its verdicts (cluster, MetalLB, the
  three ingress-nginx controllers - on kind the real v1.11.0 installed by real helm, through
  hack/kind-lab.sh - the apps, verify), then `playbooks/teardown.yml`.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path
from types import ModuleType

sys.path.insert(0, str(Path(__file__).resolve().parent))

from twin_bench import REPO, VENV_BIN, bench_env, cleanup_twins, run_timed  # noqa: E402

sys.path.insert(0, str(REPO / "src"))
from kindlab_twin import binaries  # noqa: E402

ENGINE = str(REPO / "hack" / "kind-engine.sh")
KIND_LAB = str(REPO / "hack" / "kind-lab.sh")
CLUSTER = "kindlab-bench"


def versions() -> ModuleType:
    """The pinned versions (plugins/module_utils/_versions.py)."""
    return binaries._load_versions()  # pylint: disable=protected-access


def median(values: list[float]) -> str:
    return f"{statistics.median(values):6.1f}" if values else "     -"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    pins = versions()
    rows: dict[str, dict[str, list[float]]] = {"kind": {}, "twin": {}}
    with tempfile.TemporaryDirectory(prefix="kindlab-bench-") as tmp_name:
        tmp = Path(tmp_name)
        env = bench_env(tmp / "twin-home")
        log = tmp / "bench.log"
        bin_dir = tmp / "bin"  # kind, kubectl and helm at their pins, for the modules and the playbooks
        bin_dir.mkdir()
        for name in ("kind", "kubectl", "helm"):
            (bin_dir / name).symlink_to(binaries.binary_path(name))
        env["PATH"] = f"{bin_dir}:{env['PATH']}"
        env["KINDLAB_PREPARED"] = "1"  # images and clients are ready (see the docstring): time the lab alone
        in_netns = [ENGINE, "exec", "env", f"PATH={env['PATH']}"]

        def cluster(backend: str, state: str) -> list[str]:
            """The collection's kind_cluster module (it waits for Ready, and on kind patches the
            kubelet for a cgroup v1 host), run ad hoc."""
            module_args = f"name={CLUSTER} provider={backend} state={state} kubeconfig={tmp / 'kc'}"
            if backend == "kind" and state == "present":
                module_args += f" node_image={pins.KIND_OFFLINE_NODE_IMAGE}"
            return [str(VENV_BIN / "ansible"), "localhost", "-m", "kindlab.ingress.kind_cluster", "-a", module_args]

        def lab(backend: str, book: str, scenario: str) -> list[str]:
            """playbooks/BOOK.yml for SCENARIO: on kind with the offline inputs (hack/kind-lab.sh)."""
            state = ["-e", f"lab_state_dir={tmp / backend / scenario}"]
            if backend == "kind":
                return [KIND_LAB, {"lab": "up", "teardown": "down"}[book], scenario] + state
            return [str(VENV_BIN / "ansible-playbook"), str(REPO / "playbooks" / f"{book}.yml"),
                    "-e", f"@{REPO / 'scenarios' / scenario}.yml", "-e", "lab_backend=twin"] + state

        steps = {
            backend: [
                ("create to Ready", (in_netns if backend == "kind" else []) + cluster(backend, "present")),
                ("delete", (in_netns if backend == "kind" else []) + cluster(backend, "absent")),
                ("healthy lab", lab(backend, "lab", "healthy")),
                ("healthy teardown", lab(backend, "teardown", "healthy")),
                ("puzzle lab", lab(backend, "lab", "puzzle")),
                ("puzzle teardown", lab(backend, "teardown", "puzzle")),
            ]
            for backend in ("kind", "twin")
        }
        try:
            for _run in range(args.runs):
                for backend, backend_steps in steps.items():
                    for name, argv in backend_steps:
                        seconds, rc = run_timed(argv, env, 600.0, log)
                        if rc != 0:
                            print(f"{backend} {name}: exit {rc}; log: see below", file=sys.stderr)
                            print(log.read_text()[-3000:], file=sys.stderr)
                            return 1
                        rows[backend].setdefault(name, []).append(seconds)
        finally:
            cleanup_twins(env)
    print(f"kind vs twin on this machine, {args.runs} run(s), median seconds")
    print(f"  {'step':<18} {'kind':>6} {'twin':>6}")
    for name in rows["kind"]:
        print(f"  {name:<18} {median(rows['kind'][name])} {median(rows['twin'].get(name, []))}")
    print("  (a lab is lab.yml from nothing to its verdicts: cluster, MetalLB, controllers, apps, verify)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
