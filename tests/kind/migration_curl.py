"""Every difference a migration rehearsal reports, reproduced by the curl lines it prints.

    python tests/kind/migration_curl.py REPORT_JSON

Runs where the lab's addresses are reachable (hack/kind-lab.sh exec). For each request the
report says differs, runs its two curl lines (the baseline's and the target's) with bash, reads the
status of each answer and checks it is the status the rehearsal recorded for that side (for a
burst, the set of statuses). Prints one line per request and a closing count; exits 1 when a curl
line answers otherwise, or when the report has no rehearsal.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys


def statuses(output: str) -> list[str]:
    """HTTP statuses in curl -i output (one per answer), or the codes a burst loop printed."""
    found = re.findall(r"^HTTP/[0-9.]+ (\d{3})", output, flags=re.M)
    if found:
        return [found[-1]]
    return sorted(set(re.findall(r"^\s*\d+\s+(\d{3})\s*$", output, flags=re.M)))


def run(line: str) -> str:
    proc = subprocess.run(["bash", "-c", line.replace("curl -sS", "curl -sS --max-time 30", 1)],
                          capture_output=True, text=True, timeout=120, check=False)
    return proc.stdout


def expected(answer: dict) -> list[str]:
    if answer.get("statuses"):
        return sorted(s for s in answer["statuses"] if s.isdigit())
    return [str(answer["status"])] if answer.get("status") is not None else []


def main(path: str) -> int:
    with open(path, encoding="utf-8") as handle:
        report = json.load(handle)
    rehearsal = (report.get("results") or {}).get("migration") or {}
    comparison = rehearsal.get("comparison")
    if not comparison:
        print("migration_curl: %s holds no rehearsal" % path)
        return 1
    base = comparison["baseline"]
    checked = failed = 0
    for target, body in sorted(comparison["targets"].items()):
        for row in body["rows"]:
            if not row.get("differences"):
                continue
            for side, name, answer in (("baseline", base, row["baseline"]), ("target", target, row["answer"])):
                want = expected(answer)
                if not want:
                    continue  # no HTTP answer recorded (an error): nothing for curl to match
                got = statuses(run(row["curl"][name]))
                ok = got == want if len(want) == 1 else set(got) <= set(want) and bool(got)
                checked += 1
                failed += 0 if ok else 1
                mark = "ok  " if ok else "FAIL"
                print("%s %s %s %s %s: rehearsal %s, curl %s" % (mark, target, row["ingress"], row["target"], side,
                                                                 ",".join(want), ",".join(got) or "-"))
    print("migration_curl: %d passed, %d failed" % (checked - failed, failed))
    return 1 if failed or not checked else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
