"""The CPU a cold `go build` of one pinned binary takes with and without the compiler's DWARF, side by side.
Prints numbers; asserts nothing.

    .venv/bin/python benchmarks/go_build_bench.py [--binary NAME] [--rounds N]

NAME (default crictl) is a pin of GO_BINARIES without cgo or trimmed imports, built as `kindlab-twin build
binaries` builds it: in its module's own directory (a main_module pin) or through a throw-away module.
Each round builds it twice, A then B, each with a build cache of its own that starts empty:

A. the flags `kindlab-twin build binaries` used before: -trimpath -ldflags "-s -w";
B. the same plus -gcflags=all=-dwarf=false (what it uses now: the linker's -w drops DWARF anyway).

It prints each build's CPU seconds (user + system of `go` and every compiler and linker it ran), wall
seconds and the binary's size, then the median of each and B's CPU as a fraction of A's. Modules come from
the Go module cache (downloaded once, before the first round); nothing is written to the kindlab cache.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))
from kindlab_twin import binaries  # noqa: E402

VARIANTS = {"A": [], "B": ["-gcflags=all=-dwarf=false"]}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def go(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(["go", *argv], cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"go {' '.join(argv)} failed: {done.stderr.strip()[-400:]}")
    return done.stdout


def prepared_module(binary: binaries.GoBinary, work: Path, env: dict[str, str]) -> tuple[Path, str, dict[str, str]]:
    """Where to build, what, and with which environment, as `kindlab-twin build binaries` does: in the module's own
    directory (main_module), or in WORK, a module requiring the pin with its relative replaces resolved."""
    info = json.loads(go(["mod", "download", "-json", f"{binary.module}@{binary.version}"], work, env))
    if binary.main_module:
        return (Path(info["Dir"]), "./" + binary.package if binary.package else ".",
                dict(env, GOWORK="off", GOFLAGS="-mod=readonly -buildvcs=false"))
    target = json.loads(go(["mod", "edit", "-json", info["GoMod"]], work, env))
    gomod = binaries.generated_gomod(binary, str(target.get("Go") or "1.22"),
                                     binaries.replace_lines(target, binary.local_replace))
    (work / "go.mod").write_text(gomod)
    go(["get", f"{binary.import_path}@{binary.version}"], work, env)
    return work, binary.import_path, env


def build(binary: binaries.GoBinary, variant: str, where: tuple[Path, str, dict[str, str]],
          out_dir: Path) -> tuple[float, float, int]:
    cwd, target, env = where
    out = out_dir / f"out-{variant}"
    with tempfile.TemporaryDirectory(prefix="gocache-") as cache:
        argv = ["build", "-trimpath", *VARIANTS[variant], "-ldflags", " ".join(("-s", "-w") + binary.ldflags),
                "-o", str(out)]
        if binary.tags:
            argv += ["-tags", ",".join(binary.tags)]
        cpu, wall = children_cpu(), time.monotonic()
        go(argv + [target], cwd, dict(env, GOCACHE=cache))
        return children_cpu() - cpu, time.monotonic() - wall, out.stat().st_size


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default="crictl")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    binary = binaries.pin(args.binary)
    if binary.cgo or binary.main_imports:
        sys.exit(f"{args.binary}: a pin built with cgo or with trimmed imports is not benchmarked here")
    env = dict(os.environ, CGO_ENABLED="0", GOFLAGS="-mod=mod -buildvcs=false", GOGC="400")
    results: dict[str, list[tuple[float, float, int]]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="go-build-bench-") as tmp:
        work = Path(tmp)
        where = prepared_module(binary, work, env)
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
