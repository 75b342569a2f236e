"""ansible-playbook's CPU and wall clock at two `internal_poll_interval` values, side by side. Prints
numbers; asserts nothing.

    .venv/bin/python benchmarks/poll_interval_bench.py [--a 0.001] [--b 0.01] [--rounds N] [--wait S]

Written to weigh `internal_poll_interval = 0.01` in ansible.cfg (not taken: docs/benchmarks.md). While a task
runs, ansible-playbook's strategy loop looks for its result every `internal_poll_interval` seconds (default
0.001); a lab run spends much of its time in long tasks (the verify window, helm, the controllers' rollout).
Each round runs two playbooks on localhost, A then B, each with an ansible.cfg holding only that interval:
  wait   one task that sleeps S seconds: the CPU of waiting;
  quick  100 short tasks (set_fact, every fifth a command): whether a longer interval slows a run of
         short tasks down.
It prints each run's wall clock and CPU (user + system of ansible-playbook and its workers), then the
medians of A and B.
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from python_cpu_bench import REPO, timed  # noqa: E402

VENV = REPO / ".venv"


def playbooks(directory: Path, wait: float) -> dict[str, Path]:
    tasks = []
    for i in range(100):
        if i % 5 == 0:
            tasks.append("    - ansible.builtin.command: /bin/true\n      changed_when: false\n")
        else:
            tasks.append("    - ansible.builtin.set_fact:\n        x%d: %d\n" % (i, i))
    head = "- hosts: localhost\n  gather_facts: false\n  tasks:\n"
    books = {"wait": head + "    - ansible.builtin.command: sleep %s\n      changed_when: false\n" % wait,
             "quick": head + "".join(tasks)}
    out = {}
    for name, text in books.items():
        out[name] = directory / (name + ".yml")
        out[name].write_text(text)
    return out


def run(playbook: Path, config: Path) -> tuple[float, float]:
    """Wall clock and CPU seconds of one ansible-playbook run (it and its workers)."""
    argv = [str(VENV / "bin" / "ansible-playbook"), "-i", "localhost,", "-c", "local",
            "-e", "ansible_python_interpreter=" + str(VENV / "bin" / "python"), str(playbook)]
    cpu, wall, status = timed(argv, dict(os.environ, ANSIBLE_CONFIG=str(config)))
    if status != 0:
        sys.exit("%s failed (exit status %d)" % (" ".join(argv), status))
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", type=float, default=0.001, help="A's internal_poll_interval (ansible's default)")
    parser.add_argument("--b", type=float, default=0.01, help="B's internal_poll_interval")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--wait", type=float, default=20.0, help="seconds the waiting task sleeps")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        where = Path(directory)
        books = playbooks(where, args.wait)
        configs = {}
        for label, interval in (("A", args.a), ("B", args.b)):
            configs[label] = where / ("%s.cfg" % label)
            configs[label].write_text("[defaults]\ninternal_poll_interval = %s\nretry_files_enabled = false\n" % interval)
        print("A: internal_poll_interval %s; B: %s; %d rounds; the waiting task sleeps %s s" % (
            args.a, args.b, args.rounds, args.wait))
        results: dict[tuple[str, str], list[tuple[float, float]]] = {}
        for round_ in range(1, args.rounds + 1):
            for name, book in books.items():
                line = []
                for label, config in configs.items():
                    wall, cpu = run(book, config)
                    results.setdefault((name, label), []).append((wall, cpu))
                    line.append("%s %6.2f s wall %5.2f CPU-s" % (label, wall, cpu))
                print("round %d %-6s %s" % (round_, name, "   ".join(line)), flush=True)
    print()
    for name in books:
        medians = {}
        for label in ("A", "B"):
            runs = results[(name, label)]
            medians[label] = (statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs))
        print("median %-6s A %6.2f s wall %5.2f CPU-s   B %6.2f s wall %5.2f CPU-s   B-A %+5.2f CPU-s" % (
            name, *medians["A"], *medians["B"], medians["B"][1] - medians["A"][1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
