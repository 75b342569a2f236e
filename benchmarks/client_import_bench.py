"""The CPU of importing a module as AnsiballZ does, with the collection's plugins at a base commit (A) and as
they are (B), side by side. Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/client_import_bench.py --base REV [--rounds N] [MODULE...]

Written for the client on urllib3 (k8s/rest.py) that replaced the kubernetes package's config loader and
dynamic client: REV is a commit before it. Each module of a playbook run is sent to the interpreter in a zip,
so its module_utils are compiled from source and its libraries imported again in every run, about 1,600 runs
in `make test`. Each round imports every MODULE (default: those a lab.yml run calls most) from a zip of
REV's plugins (`git archive`) and from a zip of the working tree's, A then B, each in a fresh interpreter of
this venv, and prints the CPU seconds of the import; then the median of each and B's as a fraction of A's.
"""
from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from python_cpu_bench import REPO, collection_zip, import_cpu  # noqa: E402

MODULES = ("lab_namespaces", "lab_workload", "ingress_controller", "ingress_status", "http_probe", "ingress_dataplane")


def plugins_at(rev: str, directory: Path) -> Path:
    """A directory holding the plugins/ of commit REV."""
    archive = directory / "plugins.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), rev, "plugins"], check=True)
    root = directory / "base"
    with tarfile.open(archive) as tar:
        tar.extractall(root, filter="data")
    return root


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit whose plugins are A")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("modules", nargs="*", default=list(MODULES))
    args = parser.parse_args()
    venv = REPO / ".venv"
    with tempfile.TemporaryDirectory() as directory:
        where = Path(directory)
        (where / "a").mkdir()
        (where / "b").mkdir()
        zips = {"A": collection_zip(where / "a", plugins_at(args.base, where)), "B": collection_zip(where / "b")}
        print(f"A: plugins/ of {args.base}; B: plugins/ of the working tree; {args.rounds} rounds")
        results: dict[tuple[str, str], list[float]] = {}
        for round_ in range(1, args.rounds + 1):
            for module in args.modules:
                cpu = {label: import_cpu(venv, archive, module) for label, archive in zips.items()}
                for label, value in cpu.items():
                    results.setdefault((module, label), []).append(value)
                print(f"round {round_} {module:20} A {cpu['A']:5.2f} CPU-s  B {cpu['B']:5.2f} CPU-s", flush=True)
    print()
    for module in args.modules:
        a, b = (statistics.median(results[(module, label)]) for label in ("A", "B"))
        print(f"{module:20} median CPU-s  A {a:5.2f}  B {b:5.2f}  B/A {b / a:.2f}  A-B {a - b:5.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
