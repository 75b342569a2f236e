"""A verify report rendered again from a recorded one, by this checkout's code.

    rerender-report.py REPORT_JSON OUTDIR

Reads REPORT_JSON (a report.json the verify role wrote), judges its `results` against its `expect` again
and writes report.json, summary.md, report.html (and junit.xml for a rehearsal) to OUTDIR, as the
verify_report module writes them (run_verify_report, with the report's scenario, backend and
not_reproduced). Run at two commits on the same recorded reports and diff the two OUTDIRs: a change to
the report code that must not change a verdict or a section shows no difference.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


class _Module:
    """What run_verify_report reads of the module: check mode only."""

    check_mode = False


def rerender(report_json: Path, outdir: Path) -> dict[str, Any]:
    """Write the report again to OUTDIR; the module's result (verdicts, passed, files)."""
    link = ROOT / ".collections" / "ansible_collections" / "kindlab" / "ingress"
    if not link.exists():  # as hack/lib.sh's ensure_collection_link makes it
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to("../../..")
    sys.path.insert(0, str(ROOT / ".collections"))
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_verify_report

    doc = json.loads(report_json.read_text(encoding="utf-8"))
    params = {
        "scenario": doc.get("scenario", "default"),
        "backend": doc.get("backend", "unknown"),
        "results": doc.get("results") or {},
        "expect": doc.get("expect") or {},
        "output_dir": str(outdir),
        "not_reproduced": list(doc.get("not_reproduced") or []),
    }
    return run_verify_report(params, _Module())  # type: ignore[arg-type]


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    result = rerender(Path(argv[1]), Path(argv[2]))
    print("%s: %d verdicts, %d unmet; %s" % (argv[1], len(result["verdicts"]), len(result["unmet"]), ", ".join(result["files"])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
