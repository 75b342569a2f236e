# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Why each failed scenario failed, in a few lines, for the end of test-kind's output (CI keeps
only its tail, and each scenario's own log tail scrolls away long before). Per scenario: the
unmet checks of its verify report (check, subject, expected, observed), or, where no report was
written, the last task that failed and its message from lab.log.

    python3 tests/kind/failure_digest.py WORK/kind/SCENARIO [...]
    python3 tests/kind/failure_digest.py --brief WORK/kind/SCENARIO   (the first reason, one line)

Exits 1 when a directory holds neither an unmet check nor a failed task (nothing explains the
failure: the caller's log tail is all there is), 0 otherwise.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

WIDTH = 400
_TASK = re.compile(r"^TASK \[(.*)\]")
_FATAL = re.compile(r"^(fatal|failed): \[[^]]*\]: (?:FAILED! => )?(.*)$")


def clip(value: Any, width: int = WIDTH) -> str:
    text = " ".join(str(value).split())
    return text if len(text) <= width else text[:width - 1] + "…"


def unmet_lines(report: dict[str, Any]) -> list[str]:
    return ["unmet %s %s: expected %s, observed %s" % (
        v.get("check"), v.get("subject"), clip(v.get("expected"), 120), clip(v.get("observed")))
        for v in report.get("unmet") or []]


def failed_tasks(log: str) -> list[str]:
    """'TASK: message' for every task that failed outright (ignored failures included: the verify
    role collects its checks so, and their messages are the unmet checks)."""
    out, task = [], "?"
    for line in log.splitlines():
        match = _TASK.match(line)
        if match:
            task = match.group(1)
            continue
        match = _FATAL.match(line)
        if match:
            body = match.group(2)
            try:
                body = json.loads(body).get("msg", body)
            except (ValueError, AttributeError):
                pass
            out.append("task %s: %s" % (task, clip(body)))
    return out


def digest(directory: Path) -> list[str]:
    report = directory / "verify" / "report.json"
    lines = unmet_lines(json.loads(report.read_text())) if report.is_file() else []
    log = directory / "lab.log"
    if not lines and log.is_file():
        lines = failed_tasks(log.read_text(errors="replace"))[-5:]
    return lines


def main(argv: list[str]) -> int:
    if argv[:1] == ["--brief"]:
        lines = [line for arg in argv[1:] for line in digest(Path(arg))]
        print(clip(lines[0], 160) if lines else "no reason recorded")
        return 0 if lines else 1
    unexplained = 0
    for arg in argv:
        directory = Path(arg)
        lines = digest(directory)
        print("%s:" % directory.name)
        for line in lines or ["no unmet check and no failed task recorded (see %s/lab.log)" % directory]:
            print("  " + line)
        unexplained += not lines
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
