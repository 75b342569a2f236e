# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verify_report module: a scenario's lab_expect validated (expect.py), the verification modules' results
judged against it (verdicts.py), and the report written: report.json (`report`), summary.md (report_md.py),
report.html (report_html.py) and any file a check adds (a rehearsal's junit.xml), all or none."""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict
from typing import TYPE_CHECKING

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import Obj, Verdict
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.expect import validate_expect
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_html import render as render_html
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_md import markdown
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.verdicts import evaluate

if TYPE_CHECKING:  # what a module hands its logic besides its options (see _module.Module)
    from ansible_collections.kindlab.ingress.plugins.module_utils._module import Module, Params


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


def run_verify_report(params: Params, module: Module) -> Obj:
    """The verify_report module: judge the results, write report.json, summary.md and report.html
    (not in check mode). Every text is rendered before the first file is written, and the files
    are written all or none (write_files), so a failure leaves no report half-written."""
    expect = validate_expect(params["expect"])
    verdicts = evaluate(params["results"], expect)
    doc = report(params["scenario"], params["backend"], verdicts, params["results"], expect)
    if params["not_reproduced"]:
        doc["not_reproduced"] = list(params["not_reproduced"])
    files = [os.path.join(params["output_dir"], name) for name in ("report.json", "summary.md", "report.html")]
    changed = False
    if not module.check_mode:
        report_json = json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n"
        texts = {
            files[0]: report_json,
            files[1]: markdown(params["scenario"], params["backend"], verdicts, params["results"], expect.get("reachability"),
                               params["not_reproduced"]),
            # report.html: the same report drawn for people (_report_html), from the JSON as written.
            files[2]: render_html(json.loads(json.dumps(doc, default=str))),
        }
        for check in registry.CHECKS:  # the files a check adds (a rehearsal's junit.xml, one case per behaviour that changes)
            if check.files is not None:
                for name, text in check.files(params["results"], expect.get(check.key)).items():
                    texts[os.path.join(params["output_dir"], name)] = text
                    files.append(os.path.join(params["output_dir"], name))
        os.makedirs(params["output_dir"], exist_ok=True)
        changed = write_files(texts)
    return {"changed": changed, "verdicts": doc["verdicts"], "unmet": doc["unmet"], "passed": doc["passed"], "files": files}
