"""The CPU the collection's Python work takes under two interpreters, side by side. Prints numbers;
asserts nothing.

    .venv/bin/python benchmarks/python_cpu_bench.py --vs OTHER_VENV [--rounds N]

OTHER_VENV is a second venv with the same requirements (`make setup VENV=/tmp/other PYTHON=...`).
Each round runs, in each venv one after the other (A, B, A, B, ...), two workloads whose CPU is mostly
Python's:

a. `ansible-playbook playbooks/lab.yml --check` with the puzzle on the twin: no cluster exists, so lab.yml
   validates the lab, asks the provider and plans; each task's module is sent to the interpreter as
   AnsiballZ does, its module_utils imported from a zip and so compiled from source on every run;
b. the unit tests of module_utils/capture and module_utils/verify.

It prints each run's CPU seconds (user + system of the whole process tree) and wall seconds, then the
median of each and B's CPU as a fraction of A's. It also prints, for a few modules, the CPU seconds of
importing the module from a zip of the collection's plugins, as AnsiballZ does (no bytecode cache; ansible's
own module_utils here come from the venv, with theirs), in each venv.
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODULES = ("lab_definition", "ingress_controller", "host_network", "ingress_status")
UNIT_TESTS = ("tests/unit/plugins/module_utils/capture", "tests/unit/plugins/module_utils/verify")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float, int]:
    """(CPU seconds, wall seconds, exit status) of ARGV and every process it waited for."""
    cpu, wall = children_cpu(), time.monotonic()
    done = subprocess.run(argv, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                          check=False)
    return children_cpu() - cpu, time.monotonic() - wall, done.returncode


def lab_check(venv: Path) -> tuple[float, float, int]:
    with tempfile.TemporaryDirectory() as state:
        env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(REPO / ".collections"))
        return timed([str(venv / "bin" / "ansible-playbook"), "playbooks/lab.yml", "--check",
                      "-e", "@scenarios/puzzle.yml", "-e", "lab_backend=twin", "-e", f"lab_state_dir={state}"], env)


def unit(venv: Path) -> tuple[float, float, int]:
    return timed([str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider", *UNIT_TESTS],
                 dict(os.environ))


def collection_zip(directory: Path, root: Path = REPO) -> Path:
    """The plugins of the collection at ROOT in a zip, with the package files AnsiballZ adds."""
    path = directory / "collection.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for package in ("ansible_collections", "ansible_collections/kindlab", "ansible_collections/kindlab/ingress"):
            archive.writestr(f"{package}/__init__.py", "")
        for source in [root / "plugins", *sorted((root / "plugins").rglob("*"))]:
            if "__pycache__" in source.parts:
                continue
            name = "ansible_collections/kindlab/ingress/" + str(source.relative_to(root))
            if source.is_dir():
                if not (source / "__init__.py").exists():
                    archive.writestr(name + "/__init__.py", "")
            elif source.suffix == ".py":
                archive.write(source, name)
    return path


def import_cpu(venv: Path, archive: Path, module: str) -> float:
    code = ("import sys, time; sys.path.insert(0, sys.argv[1]); t = time.process_time(); "
            "__import__('ansible_collections.kindlab.ingress.plugins.modules.' + sys.argv[2]); "
            "print(time.process_time() - t)")
    done = subprocess.run([str(venv / "bin" / "python"), "-c", code, str(archive), module],
                          capture_output=True, text=True, check=True)
    return float(done.stdout.strip())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--vs", required=True, type=Path, help="the other venv (B)")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    venvs = {"A": REPO / ".venv", "B": args.vs.resolve()}
    for label, venv in venvs.items():
        version = subprocess.run([str(venv / "bin" / "python"), "-c", "import sys, os; print(sys.version.split()[0], "
                                  "os.path.realpath(sys.executable))"], capture_output=True, text=True, check=True)
        print(f"{label}: {venv} (Python {version.stdout.strip()})")
    results: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for round_ in range(1, args.rounds + 1):
        for workload, run in (("lab.yml --check", lab_check), ("unit tests", unit)):
            for label, venv in venvs.items():
                cpu, wall, status = run(venv)
                results.setdefault((workload, label), []).append((cpu, wall))
                print(f"round {round_} {workload:16} {label}: {cpu:6.2f} CPU-s {wall:6.2f} s wall"
                      + ("" if status == 0 else f" (exit {status})"), flush=True)
    print()
    for workload in ("lab.yml --check", "unit tests"):
        medians = {label: statistics.median(cpu for cpu, _wall in results[(workload, label)]) for label in venvs}
        a, b = medians["A"], medians["B"]
        print(f"{workload:16} median CPU-s  A {a:6.2f}  B {b:6.2f}  B/A {b / a:.2f}")
    print()
    with tempfile.TemporaryDirectory() as directory:
        archive = collection_zip(Path(directory))
        for module in MODULES:
            cpu = {label: import_cpu(venv, archive, module) for label, venv in venvs.items()}
            print(f"import {module:20} from a zip  A {cpu['A']:5.2f} CPU-s  B {cpu['B']:5.2f} CPU-s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
