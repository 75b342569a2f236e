"""Every status change names a pod that really wrote it, or its candidates (issue 24, item 5).

    check_writers.py RESULT.json [RESULT.json ...]

RESULT is a verify_report's report.json (the status watch's result is under results.status; the
verify role writes it to verify_output_dir, e.g. artifacts/<lab>/verify/report.json), or the
result of one ingress_status task saved as JSON. For each status change of the timeline it
prints one line, and fails when a row:
- names a pod whose controllers' published addresses (the result's `publishers`, what each
  controller publishes as the diagnosis reads it) do not include every address the row wrote,
  or a pod no recorded publisher runs;
- names neither a pod nor candidates.
A row with candidates passes, marked so; a row that writes an empty status is not checked by
address (every controller may clear it), and a deleted Ingress is no write. A result without
`publishers` (an older collection, or attribute: false) fails: nothing to check against.

Standalone on purpose (no import of the collection): it checks the module's output, not its code.
Exit status: 0 every row passed, 1 a row failed, 2 a file could not be read.
"""
from __future__ import annotations

import json
import sys
from typing import Any

Obj = dict[str, Any]


def status_of(doc: Obj) -> Obj | None:
    """The ingress_status result inside a report.json, or the document itself."""
    if isinstance(doc.get("results"), dict) and isinstance(doc["results"].get("status"), dict):
        return dict(doc["results"]["status"])
    return doc if "timeline" in doc else None


def published_by(pod: str, publishers: list[Obj]) -> set[str] | None:
    """The addresses POD's controllers publish: those listing it, else those of the workload its
    name continues (a pod replaced between the watch's reads); None when no publisher runs it."""
    owners = [p for p in publishers if pod in (p.get("pods") or [])]
    if not owners:
        ns, _sep, name = pod.partition("/")
        owners = [p for p in publishers if str(p.get("workload", "")).partition("/")[0] == ns
                  and name.startswith(str(p.get("workload", "")).partition("/")[2] + "-")]
    if not owners:
        return None
    return {str(a) for p in owners for a in p.get("addresses") or []}


def check_row(row: Obj, publishers: list[Obj]) -> tuple[bool, str]:
    """(passed, the line to print) for one timeline row."""
    new = [str(a) for a in row.get("new") or []]
    head = "%s %s -> %s" % (row.get("time", "?"), row.get("ingress") or row.get("subject", "?"), ",".join(new) or "(empty)")
    # A Gateway API change is checked against what the Gateway API writers publish, an Ingress's against the others.
    surface = "gateway" if row.get("kind") in ("Gateway", "HTTPRoute") else "ingress"
    publishers = [p for p in publishers if p.get("surface", "ingress") == surface]
    by = row.get("attributed_by")
    if row.get("event") == "DELETED" or by == "deleted":
        return True, "ok    %s: the Ingress was deleted (no write)" % head
    pod = row.get("pod")
    candidates = [str(c) for c in row.get("candidates") or []]
    if pod:
        published = published_by(str(pod), publishers)
        if published is None:
            return False, "FAIL  %s: %s (by %s) runs no recorded publisher" % (head, pod, by)
        shown = ",".join(sorted(published)) or "nothing"
        if not new:
            return True, "ok    %s: %s (by %s), an empty status: not checked by address" % (head, pod, by)
        missing = [a for a in new if a not in published]
        if missing:
            return False, "FAIL  %s: %s (by %s) publishes %s, not %s" % (head, pod, by, shown, ",".join(missing))
        return True, "ok    %s: %s (by %s) publishes %s" % (head, pod, by, shown)
    if candidates:
        return True, "ok    %s: candidates %s (undecided, by %s)" % (head, ", ".join(candidates), by)
    return False, "FAIL  %s: neither a pod nor candidates (attributed_by %s, manager %s)" % (head, by, row.get("manager"))


def check(path: str) -> tuple[int, int]:
    """(rows checked, rows failed) of one file; raises ValueError when it has no status result."""
    with open(path, encoding="utf-8") as handle:
        doc = json.load(handle)
    status = status_of(doc) if isinstance(doc, dict) else None
    if status is None:
        raise ValueError("%s: no ingress_status result (neither results.status nor a timeline)" % path)
    rows = [r for r in status.get("timeline") or [] if isinstance(r, dict)]
    print("%s: %d status change(s)" % (path, len(rows)))
    if "publishers" not in status:
        print("FAIL  %s: the result records no publishers (ingress_status with attribute: true records them)" % path)
        return len(rows), max(len(rows), 1)
    publishers = [p for p in status.get("publishers") or [] if isinstance(p, dict)]
    failed = 0
    for row in rows:
        passed, text = check_row(row, publishers)
        print(text)
        failed += not passed
    return len(rows), failed


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    total = failed = 0
    for path in argv:
        try:
            rows, bad = check(path)
        except (OSError, ValueError) as exc:  # json.JSONDecodeError is a ValueError
            print("check_writers: %s" % exc, file=sys.stderr)
            return 2
        total, failed = total + rows, failed + bad
    print("%d row(s) checked, %d failed: %s" % (total, failed, "PASS" if not failed else "FAIL"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
