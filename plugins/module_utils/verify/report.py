# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verify report: report.json's document (`report`) and the files written all or none (`write_files`). The
verify_report module's entry (runner.py) validates a scenario's lab_expect (expect.py), judges the verification
modules' results against it (verdicts.py) and renders summary.md (report_md.py), report.html (report_html.py) and
any file a check adds (a rehearsal's junit.xml) before it writes them here."""
from __future__ import annotations

import os
import tempfile
from dataclasses import asdict

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import Obj, Verdict


def report(scenario: str, backend: str, verdicts: list[Verdict], results: Obj, expect: Obj | None = None) -> Obj:
    """The JSON report: verdicts first, then every module's raw result (and the expectations
    judged, when given: report.html names probes and places their failures from them)."""
    unmet = [v for v in verdicts if not v.met]
    extra = {} if expect is None else {"expect": expect}
    return extra | {
        "scenario": scenario,
        "backend": backend,
        "passed": not unmet,
        "unmet": [asdict(v) for v in unmet],
        "verdicts": [asdict(v) for v in verdicts],
        "results": results,
    }


def _unchanged(path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read() == text
    except (OSError, UnicodeDecodeError):
        return False


def write_files(texts: dict[str, str]) -> bool:
    """Write every file whose content differs: each goes to a temporary file beside it first,
    and only when every one is written are they renamed into place (a rename within a directory
    is atomic), so a failure while writing (a full disk) leaves every file as it was and none
    half-written. Returns whether any file changed."""
    staged: list[tuple[str, str]] = []
    try:
        for path, text in texts.items():
            if _unchanged(path, text):
                continue
            fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp", dir=os.path.dirname(path) or ".")
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(tmp, 0o644)  # as open() gave under the usual umask; mkstemp's 0600 would hide the report
        for tmp, path in staged:
            os.replace(tmp, path)
    finally:
        for tmp, _path in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return bool(staged)
