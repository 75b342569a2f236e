"""Benchmark of a rehearsal from manifests with every fix proven (issue 54 item 5: "50 Ingresses in 10 namespaces
from manifests, three targets, every fix applied and proven: under 5 minutes on kind").

    .venv/bin/python benchmarks/rehearse_fix_bench.py [--ingresses 50] [--namespaces 10]

As root on Linux, with the lab's engine (make kind-engine) or one that answers. Not timed: writing the team's
manifests (benchmarks/rehearse_bench.py's shape: per namespace one echo Service, INGRESSES/NAMESPACES Ingresses on
hosts of their own, every third with use-regex and a regex path, every fifth with TLS) to a directory. Timed:
`hack/kind-lab.sh rehearse -e rehearse_manifests=DIR -e rehearse_fix=true` against traefik-nginx-provider,
traefik-ingress-provider and gateway-api: no cluster is captured, the rehearsal cluster is built from the files.
Prints each stage's seconds as the playbook gives them, the replay's and each target's fixes' seconds from the
report, the attempts per outcome, and PASS/FAIL of the total against 300 s. The rehearsal cluster is deleted.
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from rehearse_bench import KIND_LAB, REPO, manifest  # noqa: E402  (the same team, written as files)

TARGET = 300.0
TARGETS = ["traefik-nginx-provider", "traefik-ingress-provider", "gateway-api"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ingresses", type=int, default=50)
    parser.add_argument("--namespaces", type=int, default=10)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="kindlab-rehearse-fix-bench."))
    subprocess.run([KIND_LAB, "prepare"], cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, check=True)
    files = work / "manifests"
    files.mkdir()
    for obj in manifest(args.ingresses, args.namespaces, "unused"):
        if obj["kind"] in ("Service", "Ingress"):  # what a team's repository holds for routing; the lab runs the echoes
            name = "%s-%s-%s.yaml" % (obj["kind"].lower(), obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
            (files / name).write_text(yaml.safe_dump(obj))
    started = time.monotonic()
    proc = subprocess.run([KIND_LAB, "rehearse", "-e", "rehearse_manifests=%s" % files, "-e", "rehearse_fix=true",
                           "-e", json.dumps({"rehearse_targets": TARGETS}), "-e", "rehearse_dir=%s" % (work / "rehearsal")],
                          cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, check=False)
    total = time.monotonic() - started
    (work / "rehearse.log").write_text(proc.stdout)
    print("%d Ingresses in %d namespaces, from %d files; targets %s" % (
        args.ingresses, args.namespaces, len(list(files.iterdir())), ", ".join(TARGETS)))
    print("\nrehearse.yml (rc %d), seconds:" % proc.returncode)
    for name, seconds in re.findall(r"- '([a-z ,()_]+): (\d+) s'", proc.stdout):
        print("  %-36s %6s" % (name, seconds))
    print("  %-36s %6.0f" % ("from outside", total))
    report = work / "rehearsal" / "verify" / "report.json"
    if report.exists():
        migration = json.loads(report.read_text())["results"]["migration"]
        print("  %-36s %6.1f" % ("of which the replay", migration["seconds"]["replay"]))
        print("  %-36s %6.1f" % ("of which the fixes, all targets", migration["seconds"].get("fixes", 0)))
        print("requests sent: %d; Ingresses rehearsed: %d" % (migration["requests_sent"], len(migration["ingresses"])))
        for target, proven in sorted(migration.get("fixes", {}).items()):
            outcomes: dict[str, int] = {}
            for a in proven["attempts"]:
                outcomes[a["outcome"]] = outcomes.get(a["outcome"], 0) + 1
            print("  %s: %d differ; fixes %.1f s: %d kept, %d remain (%s)" % (
                target, migration["comparison"]["targets"][target]["counts"]["differ"], proven.get("seconds", 0),
                proven["kept"], proven["remain"], ", ".join("%d %s" % (n, o) for o, n in sorted(outcomes.items()))))
    ok = proc.returncode == 0 and total <= TARGET
    print("\n%s: %.0f s against %.0f s (logs in %s)" % ("PASS" if ok else "FAIL", total, TARGET, work))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
