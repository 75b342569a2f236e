"""The CPU a cold `go build` of one pinned binary takes with and without the compiler's DWARF, side by side.
Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/go_build_bench.py [--binary NAME] [--rounds N]

NAME (default crictl) is a pin of GO_BINARIES, built where, with what environment and with the `go build`
`kindlab-twin build binaries` uses (binaries.build_site, go_env, go_build_argv). Each round builds it twice,
A then B, each with a build cache of its own that starts empty:

A. that `go build` without binaries.NO_DWARF (-gcflags=all=-dwarf=false), as it was before;
B. that `go build` as it is (the linker's -w drops DWARF anyway).

It prints each build's CPU seconds (user + system of `go` and every compiler and linker it ran), wall
seconds and the binary's size, then the median of each and B's CPU as a fraction of A's. Modules come from
the Go module cache (downloaded once, before the first round); nothing is written to the kindlab cache.
"""
from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
from kindlab_twin import binaries  # noqa: E402

VARIANTS = ("A", "B")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    """A binaries.Runner that stops the benchmark, saying why, when a command fails."""
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed: {done.stderr.strip()[-400:]}")
    return done.stdout


def build(binary: binaries.GoBinary, variant: str, where: tuple[Path, str, dict[str, str]],
          out_dir: Path) -> tuple[float, float, int]:
    cwd, target, env = where
    out = out_dir / f"out-{variant}"
    argv = binaries.go_build_argv(binary, out)
    if variant == "A":
        argv.remove(binaries.NO_DWARF)
    with tempfile.TemporaryDirectory(prefix="gocache-") as cache:
        cpu, wall = children_cpu(), time.monotonic()
        run(argv + [target], cwd, dict(env, GOCACHE=cache))
        return children_cpu() - cpu, time.monotonic() - wall, out.stat().st_size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default="crictl")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    binary = binaries.pin(args.binary)
    env = binaries.go_env()
    results: dict[str, list[tuple[float, float, int]]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="go-build-bench-") as tmp:
        work = Path(tmp)
        info = json.loads(run(["go", "mod", "download", "-json", f"{binary.module}@{binary.version}"], work, env))
        where = binaries.build_site(binary, info, work, env, run)
        print(f"{binary.name} {binary.version}: {args.rounds} rounds, each A then B with an empty build cache")
        for round_no in range(1, args.rounds + 1):
            for variant in VARIANTS:
                cpu, wall, size = build(binary, variant, where, work)
                results[variant].append((cpu, wall, size))
                print(f"  round {round_no} {variant}: {cpu:7.1f} CPU-s {wall:7.1f} s wall  {size} bytes", flush=True)
    print("median     CPU-s   wall-s")
    for variant, runs in results.items():
        print(f"  {variant}     {statistics.median(r[0] for r in runs):7.1f}  {statistics.median(r[1] for r in runs):7.1f}")
    a, b = (statistics.median(r[0] for r in results[v]) for v in ("A", "B"))
    print(f"B's CPU as a fraction of A's: {b / a:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
