"""Real kind beside the twin on this machine, in one run. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/kind_vs_twin_bench.py [--runs N]

Linux as root, with the lab's own engine up and the offline images built (make kind-engine
kind-images); the twin's binaries built (make binaries). For each backend, N times:
- create to Ready: the collection's kind_cluster module (kind from the offline node image, inside
  the engine's network namespace; or the twin); then delete;
- the smoke (tests/kind/smoke.yml: cluster, MetalLB, host access, a workload reached over HTTP
  through its MetalLB address), then its teardown.
The lab with ingress controllers and the puzzle run on the twin only (see hack/test-kind.sh).
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
    manifest = binaries.assets_dir("metallb-controller") / "metallb-native.yaml"
    rows: dict[str, dict[str, list[float]]] = {"kind": {}, "twin": {}}
    with tempfile.TemporaryDirectory(prefix="kindlab-bench-") as tmp_name:
        tmp = Path(tmp_name)
        env = bench_env(tmp / "twin-home")
        log = tmp / "bench.log"
        bin_dir = tmp / "bin"  # kind and kubectl at their pins, for the modules and the playbook
        bin_dir.mkdir()
        for name in ("kind", "kubectl"):
            (bin_dir / name).symlink_to(binaries.binary_path(name))
        env["PATH"] = f"{bin_dir}:{env['PATH']}"
        smoke = [str(VENV_BIN / "ansible-playbook"), str(REPO / "tests" / "kind" / "smoke.yml"),
                 "-e", f"smoke_dir={tmp}", "-e", f"smoke_kubectl={binaries.binary_path('kubectl')}",
                 "-e", f"smoke_web_image={pins.KIND_OFFLINE_WEB_IMAGE}"]
        kind_smoke = ["-e", f"smoke_node_image={pins.KIND_OFFLINE_NODE_IMAGE}",
                      "-e", f"smoke_manifest_url=file://{manifest}",
                      "-e", '{"smoke_load_images": ["%s", "%s", "%s"]}' % (
                          pins.METALLB_CONTROLLER_IMAGE, pins.METALLB_SPEAKER_IMAGE, pins.KIND_OFFLINE_WEB_IMAGE)]
        in_netns = [ENGINE, "exec", "env", f"PATH={env['PATH']}"]

        def cluster(backend: str, state: str) -> list[str]:
            """The collection's kind_cluster module (it waits for Ready, and on kind patches the
            kubelet for a cgroup v1 host), run ad hoc."""
            module_args = f"name={CLUSTER} provider={backend} state={state} kubeconfig={tmp / 'kc'}"
            if backend == "kind" and state == "present":
                module_args += f" node_image={pins.KIND_OFFLINE_NODE_IMAGE}"
            return [str(VENV_BIN / "ansible"), "localhost", "-m", "kindlab.ingress.kind_cluster", "-a", module_args]

        steps = {
            "kind": [
                ("create to Ready", in_netns + cluster("kind", "present")),
                ("delete", in_netns + cluster("kind", "absent")),
                ("smoke", in_netns + smoke + ["-e", "smoke_backend=kind"] + kind_smoke),
                ("smoke teardown", in_netns + smoke + ["-e", "smoke_backend=kind", "-e", "smoke_state=absent"]),
            ],
            "twin": [
                ("create to Ready", cluster("twin", "present")),
                ("delete", cluster("twin", "absent")),
                ("smoke", smoke + ["-e", "smoke_backend=twin"]),
                ("smoke teardown", smoke + ["-e", "smoke_backend=twin", "-e", "smoke_state=absent"]),
            ],
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
    print(f"  {'step':<16} {'kind':>6} {'twin':>6}")
    for name in rows["kind"]:
        print(f"  {name:<16} {median(rows['kind'][name])} {median(rows['twin'].get(name, []))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
