# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The module entries (KindlabModule.run) of the verification modules: each reads its module's options, calls
the checks (backends.py, conflicts.py, dataplane_window.py, diagnose.py, status/, ingresses.py, probe.py) or the
report (report.py, report_compare.py) with plain arguments, and shapes the module's result.

The read-only checks share one flow (check_entry): validate the Ingress selection and the module's own options
before any request, connect, run the check, and fail only when the caller asked for it (the verify role collects
verdicts instead)."""
from __future__ import annotations

import json
import os
from typing import Any, Callable, Mapping
from urllib.error import HTTPError

from ansible.module_utils.urls import open_url

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import CheckFailed, OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._module import Logic, Module, Params, Result
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import Obj
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection, list_ingresses, parse_selection
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.backends import check_cluster as check_backends
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.conflicts import check_cluster as check_conflicts
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.dataplane_window import run as dataplane_run
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.diagnose import run as diagnose
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.expect import validate_expect
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.ingresses import parse_refs, wait_for_addresses
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe import probe_from_module
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report import report, write_files
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_compare import CompareError, compare
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_html import render as render_html
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_md import markdown
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.options import parse_options as parse_status_options
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.run import run as status_run
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.verdicts import evaluate


def check_entry(
    check: Callable[[Any, Selection, Any], Result],
    failure_message: Callable[[Result], str],
    fail_option: str = "fail_on_violation",
    parse_options: Callable[[Params], Any] | None = None,
) -> Logic:
    """The module logic of a verification: `check(client, selection, options)`.

    Option errors from parsing (OptionError) fail before any request, naming the option; a
    result with `passed` false raises CheckFailed (carrying the result) only when the module's
    `fail_option` is set."""

    def logic(params: Params, module: Module) -> Result:
        selection = parse_selection(params["namespaces"], params["names"], params["label_selector"])
        options = parse_options(params) if parse_options else None
        result = check(module.client(), selection, options)
        if params[fail_option] and not result["passed"]:
            raise CheckFailed(failure_message(result), **dict(result, changed=False))
        return dict(result, changed=False)

    return logic


# --- ingress_backends


def _backends_check(client: Any, selection: Any, _options: Any) -> dict[str, Any]:
    return check_backends(client, list_ingresses(client, selection))


def _backends_failure(result: dict[str, Any]) -> str:
    return "ingress_backends: " + "; ".join(result["failures"])


run_ingress_backends = check_entry(_backends_check, _backends_failure)


# --- ingress_conflicts


def _conflicts_check(client: Any, selection: Any, _options: Any) -> dict[str, Any]:
    return check_conflicts(client, selection)


def _conflicts_failure(result: dict[str, Any]) -> str:
    return "ingress_conflicts: " + "; ".join(c["message"] for c in result["conflicts"] + result.get("route_conflicts", []))


run_ingress_conflicts = check_entry(_conflicts_check, _conflicts_failure)


# --- ingress_dataplane


def _dataplane_options(params: Params) -> dict[str, Any]:
    if params["timeout"] <= 0:
        raise OptionError("timeout: expected a positive number of seconds, got %r" % params["timeout"])
    if params["window"] < 0:
        raise OptionError("window: expected seconds >= 0, got %r" % params["window"])
    if params["interval"] <= 0:
        raise OptionError("interval: expected a positive number of seconds, got %r" % params["interval"])
    if params["until_converged"] and params["window"] <= 0:
        raise OptionError("until_converged: needs a window (seconds > 0) to wait in")
    history = params["last_ready"] or {}
    for service, seen in history.items():
        if service.count("/") != 1 or not isinstance(seen, dict) or not all(isinstance(v, str) for v in seen.values()):
            raise OptionError("last_ready: expected namespace/service → {address:port: time}, got %r: %r" % (service, seen))
    return {"fail_on": tuple(params["fail_on"]), "timeout": float(params["timeout"]), "last_ready": history,
            "window": float(params["window"]), "interval": float(params["interval"]), "until_converged": params["until_converged"]}


def _dataplane_check(client: Any, selection: Any, options: dict[str, Any]) -> dict[str, Any]:
    return dataplane_run(client, selection, options["fail_on"], options["timeout"], options["last_ready"],
                         options["window"], options["interval"], options["until_converged"])


def _dataplane_failure(result: dict[str, Any]) -> str:
    return "ingress_dataplane: " + "; ".join(result["failures"])


run_ingress_dataplane = check_entry(_dataplane_check, _dataplane_failure, fail_option="fail_on", parse_options=_dataplane_options)


# --- ingress_diagnose


def _diagnose_check(client: Any, selection: Any, _options: Any) -> dict[str, Any]:
    return diagnose(client, selection)


def _diagnose_failure(result: dict[str, Any]) -> str:
    errors = [f["message"] for f in result["findings"] if f["severity"] == "error"]
    return "ingress_diagnose: %d error finding(s): %s" % (len(errors), " | ".join(errors))


run_ingress_diagnose = check_entry(_diagnose_check, _diagnose_failure, fail_option="fail_on_findings")


# --- ingress_status


def _status_options(p: Mapping[str, Any]) -> Any:
    return parse_status_options(p["window"], p["max_changes"], p["allow_empty"], p["expected_pools"],
                                p["stop_on_violation"], p["attribute"], p["gateway_api"])


def _status_failure(result: dict[str, Any]) -> str:
    return "unstable status: " + "; ".join(result["failures"])


run_ingress_status = check_entry(status_run, _status_failure, parse_options=_status_options)


# --- ingress_address, http_probe, verify_report, verify_compare


def run_ingress_address(params: Params, module: Module) -> dict[str, Any]:
    """The ingress_address module: wait until every Ingress has an address, return them."""
    refs = parse_refs(params["ingresses"])
    if params["timeout"] < 0:
        raise OptionError("timeout: expected a number of seconds >= 0, got %d" % params["timeout"])
    return {"changed": False, "addresses": wait_for_addresses(module.client(), refs, params["timeout"])}


def run_http_probe(params: Params, module: Module) -> Obj:
    """The http_probe module: probe, and fail (with the whole result) when it does not pass
    and fail_on_violation is set. The kubernetes client is needed only with `ingress`."""
    result = probe_from_module(dict(params), make_client=module.client, open_url=open_url, http_error=HTTPError,
                               run_command=module.run_command, get_bin_path=module.which)
    if params["fail_on_violation"] and not result["passed"]:
        raise CheckFailed("http_probe: " + result["reason"], **dict(result, changed=False))
    return dict(result, changed=False)


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


def run_verify_compare(params: Any, module: Any) -> Obj:
    """The verify_compare module: read both reports, compare them."""
    import json

    docs = []
    for side in ("left", "right"):
        try:
            with open(params[side], encoding="utf-8") as f:
                docs.append(json.load(f))
        except (OSError, ValueError) as exc:
            raise CompareError("%s: cannot read a verify report from %s: %s" % (side, params[side], exc)) from None
    rows = compare(docs[0], docs[1], params["mode"], params["anonymized"])
    equal = all(r["same"] for r in rows)
    result: Obj = {"changed": False, "rows": rows, "equal": equal,
                   "differences": [r["check"] for r in rows if not r["same"]]}
    if not equal and params["fail_on_difference"]:
        raise CheckFailed("verify_compare: the reports differ in %s" % ", ".join(result["differences"]), **result)
    return result
