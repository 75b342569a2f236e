from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.expect import VerifyError, validate_expect
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report import report
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_md import markdown
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.verdicts import evaluate

# Shaped like ingress_status's result (_status.verdict): per-Ingress outcomes with the addresses
# seen, and timeline entries with the field manager and the pod whose log line announced the change.
PUZZLE_STATUS = {
    "ingresses": {
        "one/test": {"passed": False, "reason": "4 changes in 10s (max 0): 100.64.0.0 <-> 172.18.0.2",
                     "addresses_seen": [["100.64.0.0"], ["172.18.0.2"]]},
        "two/test": {"passed": False, "reason": "172.18.0.2 is outside the expected pools", "addresses_seen": [["172.18.0.2"]]},
        "three/test": {"passed": False, "reason": "4 changes in 10s (max 0)", "addresses_seen": [["100.64.0.2"], ["172.18.0.2"]]},
    },
    "timeline": [{"time": "2026-11-26T10:00:01.000Z", "t": 1.0, "ingress": "one/test", "event": "MODIFIED", "old": ["100.64.0.0"], "new": ["172.18.0.2"],
                  "manager": "nginx-ingress-controller", "operation": "Update",
                  "pod": "two/ingress-ingress-nginx-controller-6d9f8b7c4-x2k8q"},
                 {"time": "2026-11-26T10:00:02.500Z", "t": 2.5, "ingress": "one/test", "event": "MODIFIED", "old": ["172.18.0.2"], "new": ["100.64.0.0"],
                  "manager": "nginx-ingress-controller", "operation": "Update", "pod": None}],
}
PUZZLE_EXPECT = {"status": {"failing": {"one/test": "changes", "three/test": "changes", "two/test": "outside"}}}


def met(verdicts: list[Any]) -> dict[str, bool]:
    return {"%s %s" % (v.check, v.subject): v.met for v in verdicts}


def test_expected_failures_are_met_only_with_the_expected_reason() -> None:
    assert all(met(evaluate({"status": PUZZLE_STATUS}, PUZZLE_EXPECT)).values())
    wrong_reason = {"status": {"failing": {"one/test": "outside", "three/test": "changes", "two/test": "outside"}}}
    assert met(evaluate({"status": PUZZLE_STATUS}, wrong_reason))["status one/test"] is False


def test_an_unexpected_pass_is_unmet_and_an_unexpected_failure_too() -> None:
    healthy = {"ingresses": {"one/test": {"passed": True, "reason": "", "addresses_seen": [["100.64.0.0"]]},
                             "two/test": {"passed": False, "reason": "2 changes", "addresses_seen": [["100.64.0.1"]]}}}
    verdicts = met(evaluate({"status": healthy}, {"status": {"failing": {"one/test": "changes"}}}))
    assert verdicts == {"addresses one/test": True, "addresses two/test": True, "status one/test": False, "status two/test": False}


def test_an_expected_subject_that_was_not_observed_is_unmet() -> None:
    verdicts = evaluate({"backends": {"ingresses": {}}}, {"backends": {"failing": {"two/test": "endpoints"}}})
    assert [(v.subject, v.met, v.observed) for v in verdicts] == [("two/test", False, "fail: not observed (no such Ingress selected)")]


def test_diagnose_findings_must_match_and_extra_findings_are_unmet() -> None:
    result = {"findings": [
        {"kind": "multiple_writers", "severity": "error", "ingress": "one/test", "culprits": ["two/ingress-ingress-nginx-controller"],
         "message": "watches every namespace"},
        {"kind": "unclaimed", "severity": "error", "ingress": "x/y", "culprits": [], "reason": "no controller"},
        {"kind": "note", "severity": "info", "ingress": "z/z", "reason": "ignored: not an error"},
    ]}
    verdicts = evaluate({"diagnose": result}, {"diagnose": {"findings": [{"kind": "multiple_writers", "ingress": "one/", "culprit": "^two/"}]}})
    assert [(v.subject, v.met) for v in verdicts] == [("multiple_writers one/", True), ("unclaimed x/y", False)]
    assert verdicts[0].observed == "found: watches every namespace"
    missing = evaluate({"diagnose": {"findings": []}}, {"diagnose": {"findings": [{"kind": "multiple_writers"}]}})
    assert [v.met for v in missing] == [False]
    assert [v.met for v in evaluate({"diagnose": {"findings": []}}, {})] == [True]
    # a scenario may expect a warning (it sets out to show one); unexpected warnings pass silently
    warned = evaluate({"diagnose": {"findings": [{"kind": "host_on_two_apis", "severity": "warning", "message": "a.example"}]}},
                      {"diagnose": {"findings": [{"kind": "host_on_two_apis", "reason": "^a\\.example"}]}})
    assert [(v.subject, v.met, v.observed) for v in warned] == [("host_on_two_apis", True, "found: a.example")]
    assert [v.met for v in evaluate({"diagnose": {"findings": [{"kind": "w", "severity": "warning"}]}}, {})] == [True]


def test_conflicts_expected_pairs_in_any_order() -> None:
    result = {"conflicts": [{"ingresses": ["two/login", "one/login"], "reason": "same host and /login"}]}
    ok = evaluate({"conflicts": result}, {"conflicts": {"expected": [{"ingresses": ["one/login", "two/login"]}]}})
    assert [(v.subject, v.met) for v in ok] == [("one/login vs two/login", True)]
    assert [v.met for v in evaluate({"conflicts": result}, {})] == [False]


def test_reachability_checks_failure_reason_and_backends() -> None:
    probes = [{"ingress": "two/test", "failing": "503"}, {"name": "login", "backends": ["login-a", "login-b"]}]
    results = [{"passed": False, "reason": "got 503 (expected 200)"}, {"passed": True, "distribution": {"login-a": 5, "login-b": 5}}]
    assert [v.met for v in evaluate({"reachability": results}, {"reachability": probes})] == [True, True]
    one_backend = [results[0], {"passed": True, "distribution": {"login-a": 10}}]
    assert [v.met for v in evaluate({"reachability": one_backend}, {"reachability": probes})] == [True, False]
    at_least_two = [{"name": "login", "min_backends": 2}]
    assert [v.met for v in evaluate({"reachability": [results[1]]}, {"reachability": at_least_two})] == [True]
    assert [v.met for v in evaluate({"reachability": [one_backend[1]]}, {"reachability": at_least_two})] == [False]
    one_team = [{"name": "login", "min_backends": 1, "max_backends": 1}]
    assert [v.met for v in evaluate({"reachability": [one_backend[1]]}, {"reachability": one_team})] == [True]
    split, = evaluate({"reachability": [results[1]]}, {"reachability": one_team})
    assert not split.met and split.expected == "pass from exactly 1 backend"


def test_reachability_says_when_the_probe_ran_inside_a_node() -> None:
    from_node = {"passed": True, "via": "node", "node": "ingress-lab-control-plane"}
    verdict, = evaluate({"reachability": [from_node]}, {"reachability": [{"ingress": "one/test"}]})
    assert verdict.met and verdict.observed == "pass (probed from inside node ingress-lab-control-plane)"
    verdict, = evaluate({"reachability": [{"passed": True, "via": "host"}]}, {"reachability": [{"ingress": "one/test"}]})
    assert verdict.observed == "pass"


def test_a_controller_expected_not_to_start_is_asserted_by_its_cause() -> None:
    health = {"controllers": {
        "one/ingress": {"passed": True, "reason": "started: Deployment one/ingress-ingress-nginx-controller 1/1 ready"},
        "two/ingress": {"passed": False, "reason": "cannot start: pod two/c-x container controller: CrashLoopBackOff, last exit code 255"
                                                   " (Error); last log lines: F1123 main.go:89] no service with name missing found"}}}
    expect = {"controllers": {"failing": {"two/ingress": "CrashLoopBackOff.*no service with name missing"}}}
    assert met(evaluate({"controllers": health}, expect)) == {"controllers one/ingress": True, "controllers two/ingress": True}
    # The cause must be the expected one, and a controller that did start fails the expectation.
    wrong = {"controllers": {"failing": {"two/ingress": "ImagePullBackOff"}}}
    assert met(evaluate({"controllers": health}, wrong))["controllers two/ingress"] is False
    started = {"controllers": {"failing": {"one/ingress": "CrashLoopBackOff"}}}
    verdict = [v for v in evaluate({"controllers": health}, started) if v.subject == "one/ingress"][0]
    assert not verdict.met and verdict.observed.startswith("pass")
    # An unexpected crash is unmet.
    assert met(evaluate({"controllers": health}, {}))["controllers two/ingress"] is False


def test_an_ingress_expected_to_get_no_address_is_judged_from_the_watch() -> None:
    status = {"ingresses": {"one/test": {"passed": True, "reason": "stable", "addresses_seen": [["100.64.0.0"]]},
                            "two/test": {"passed": False, "reason": "status was empty", "addresses_seen": [[]]}}}
    expect = {"addresses": {"failing": {"two/test": "no address"}}, "status": {"failing": {"two/test": "empty"}}}
    verdicts = evaluate({"status": status}, expect)
    assert all(v.met for v in verdicts)
    assert [(v.check, v.subject, v.observed) for v in verdicts if v.check == "addresses"] == [
        ("addresses", "one/test", "pass"), ("addresses", "two/test", "fail: no address during the watch window")]
    # An Ingress that did get an address fails the expectation.
    got = {"addresses": {"failing": {"one/test": "no address"}}}
    assert met(evaluate({"status": status}, got))["addresses one/test"] is False


@pytest.mark.parametrize("expect, message", [
    ([], "lab_expect: expected a mapping"),
    ({"latency": {}}, "lab_expect: expected only the keys"),
    ({"status": {"failing": {"one/test": "("}}}, r"lab_expect.status.failing\[one/test\]: .* not a valid regular expression"),
    ({"status": {"window": 5, "colour": 1}}, "lab_expect.status: expected only the keys"),
    ({"diagnose": {"findings": [{"ingress": "x"}]}}, r"lab_expect.diagnose.findings\[0\]: expected a mapping with kind"),
    ({"conflicts": {"expected": [{"ingresses": ["a/b"]}]}}, r"lab_expect.conflicts.expected\[0\]"),
    ({"reachability": {"ingress": "a/b"}}, "lab_expect.reachability: expected a list"),
    ({"reachability": ["a/b"]}, r"lab_expect.reachability\[0\]: expected a probe mapping"),
    ({"reachability": [{"url": "http://a.test/"}, {"ingress": "a-b"}]},
     r"lab_expect.reachability\[1\].ingress: expected 'namespace/name' or a mapping with namespace and name, got 'a-b'"),
    ({"reachability": [{"ingress": ["a/b", "c"]}]}, r"lab_expect.reachability\[0\].ingress\[1\]: expected 'namespace/name'"),
    ({"controllers": {"failing": {"two/ingress": "("}}}, r"lab_expect.controllers.failing\[two/ingress\]: .* not a valid"),
    ({"addresses": {"expected": {}}}, "lab_expect.addresses: expected only the keys failing"),
])
def test_malformed_expectations_name_the_field(expect: Any, message: str) -> None:
    with pytest.raises(VerifyError, match=message):
        validate_expect(expect)


def test_report_and_markdown_carry_verdicts_and_timeline() -> None:
    verdicts = evaluate({"status": PUZZLE_STATUS}, PUZZLE_EXPECT)
    doc = report("puzzle", "twin", verdicts, {"status": PUZZLE_STATUS})
    assert doc["passed"] and doc["unmet"] == [] and len(doc["verdicts"]) == 6  # 3 addresses, 3 status
    text = markdown("puzzle", "twin", verdicts, {"status": PUZZLE_STATUS})
    assert "Backend: **twin**. 6 checks, 6 as expected, 0 unmet: **PASS**." in text
    # The writer column names the pod and the field manager of each change.
    # The timeline of one/test (the status watch began at 10:00:00).
    assert "## Timeline" in text and "`at` is seconds from 2026-11-26T10:00:00.000Z (the status watch's start)" in text
    story = text[text.index("### one/test"):].splitlines()
    assert story[4:6] == [
        "| +1.000 s | 2026-11-26T10:00:01.000Z | status | status 100.64.0.0 -> 172.18.0.2 | written by "
        "two/ingress-ingress-nginx-controller-6d9f8b7c4-x2k8q (nginx-ingress-controller Update) |",
        "| +2.500 s | 2026-11-26T10:00:02.500Z | status | status 172.18.0.2 -> 100.64.0.0 | written by "
        "nginx-ingress-controller Update (pod unknown) |"]
    # How each change was attributed, or its candidates when nothing decided.
    status = copy.deepcopy(PUZZLE_STATUS)
    status["timeline"][0]["attributed_by"] = "address"
    status["timeline"][1].update(attributed_by="candidates", candidates=["one/a", "three/b"])
    text = markdown("puzzle", "twin", verdicts, {"status": status})
    story = text[text.index("### one/test"):].splitlines()
    assert story[4].endswith("| written by two/ingress-ingress-nginx-controller-6d9f8b7c4-x2k8q [by address] "
                             "(nginx-ingress-controller Update) |")
    assert story[5].endswith("| written by one of one/a, three/b [undecided] (nginx-ingress-controller Update) |")
    failing = evaluate({"status": PUZZLE_STATUS}, {})
    assert "**FAIL**" in markdown("puzzle", "twin", failing, {}) and not report("p", "t", failing, {})["passed"]


# --- the report files: written only when every one of them could be -------------------------------


class _Module:
    check_mode = False


def _report_params(tmp_path: Any) -> dict[str, Any]:
    return {"scenario": "puzzle", "backend": "twin", "output_dir": str(tmp_path / "verify"), "expect": PUZZLE_EXPECT,
            "results": {"status": PUZZLE_STATUS}, "not_reproduced": []}


def test_a_captured_scenario_s_report_says_what_it_does_not_reproduce(tmp_path: Any) -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_verify_report

    gaps = ["Ingress shop/web: TLS for shop.example is not reproduced (a stand-in serves plain HTTP)"]
    run_verify_report(dict(_report_params(tmp_path), not_reproduced=gaps), _Module())
    assert json.loads((tmp_path / "verify" / "report.json").read_text())["not_reproduced"] == gaps
    summary = (tmp_path / "verify" / "summary.md").read_text()
    assert "## Not reproduced from the captured cluster\n\n- Ingress shop/web: TLS for shop.example is not reproduced" in summary
    # A scenario written by hand says nothing of the kind.
    run_verify_report(_report_params(tmp_path), _Module())
    assert "not_reproduced" not in json.loads((tmp_path / "verify" / "report.json").read_text())


def test_the_report_files_are_written_and_rewritten_only_when_they_change(tmp_path: Any) -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_verify_report

    first = run_verify_report(_report_params(tmp_path), _Module())
    assert first["changed"] and sorted(p.name for p in (tmp_path / "verify").iterdir()) == ["report.html", "report.json", "summary.md"]
    assert oct((tmp_path / "verify" / "report.json").stat().st_mode & 0o777) == "0o644"
    assert not run_verify_report(_report_params(tmp_path), _Module())["changed"]


def test_a_failure_while_rendering_writes_no_file(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """report.html is rendered last; before, report.json and summary.md were already written when it failed."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify import runner as _runner

    def broken(doc: Any) -> str:
        raise RuntimeError("render failed")

    monkeypatch.setattr(_runner, "render_html", broken)
    with pytest.raises(RuntimeError):
        _runner.run_verify_report(_report_params(tmp_path), _Module())
    assert not (tmp_path / "verify").exists() or list((tmp_path / "verify").iterdir()) == []


def test_a_failure_while_writing_replaces_no_file_and_leaves_no_temporary_one(
        tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify import report as _verify

    old = {name: "old %s\n" % name for name in ("a.json", "b.md", "c.html")}
    for name, text in old.items():
        (tmp_path / name).write_text(text)
    real_fdopen = _verify.os.fdopen
    opened: list[int] = []

    def fdopen(fd: int, *args: Any, **kwargs: Any) -> Any:
        opened.append(fd)
        if len(opened) == 3:
            raise OSError(28, "No space left on device")
        return real_fdopen(fd, *args, **kwargs)

    monkeypatch.setattr(_verify.os, "fdopen", fdopen)
    with pytest.raises(OSError, match="No space left"):
        _verify.write_files({str(tmp_path / name): "new\n" for name in old})
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == old


def _window(sent: int, failures: list[dict[str, Any]], passed: bool, rate: float = 20.0) -> dict[str, Any]:
    return {"passed": passed, "reason": "%d sent" % sent, "distribution": {"web-1": sent - len(failures)},
            "continuous": {"rate_requested": rate, "rate_achieved": 19.98, "sent": sent, "failed_count": len(failures),
                           "failures": failures}}


def test_a_continuous_probe_is_judged_by_failures_against_those_allowed() -> None:
    failures = [{"offset": 12.05, "status": 502, "problem": "got 502 (expected 200)"},
                {"offset": 12.1, "error": "connection refused"},
                {"offset": 14.2, "status": 502, "problem": "got 502 (expected 200)"}]
    allowed = {"ingress": "one/test", "rate": 20, "duration": 60, "max_failures": 3}
    verdict, = evaluate({"reachability": [_window(1200, failures, True)]}, {"reachability": [allowed]})
    assert verdict.met and verdict.expected == "pass with at most 3 failed at 20/s"
    assert verdict.observed.startswith("pass: sent 1200, failed 3 (allowed 3), rate 19.98/s of 20.0/s; first at +12.05s, "
                                       "last at +14.2s: got 502 (expected 200) x2, connection refused x1")
    # The allowed count is the expectation's, whatever the module was told.
    strict = dict(allowed, max_failures=2)
    verdict, = evaluate({"reachability": [_window(1200, failures, True)]}, {"reachability": [strict]})
    assert not verdict.met and verdict.observed.startswith("fail: sent 1200, failed 3 (allowed 2)")
    # An expected failure is asserted by its reasons; a window that sent nothing never passes.
    expected_drop = dict(allowed, max_failures=0, failing="502")
    assert [v.met for v in evaluate({"reachability": [_window(1200, failures, False)]}, {"reachability": [expected_drop]})] == [True]
    nothing = {"passed": False, "reason": "the probe loop in node n cannot run", "continuous": {"sent": 0, "failures": []}}
    verdict, = evaluate({"reachability": [nothing]}, {"reachability": [dict(allowed, max_failures=5)]})
    assert not verdict.met and verdict.observed == "fail: the probe loop in node n cannot run"


@pytest.mark.parametrize("probe, field", [
    ({"ingress": "one/test", "rate": 0}, r"lab_expect.reachability\[0\].rate: "),
    ({"ingress": "one/test", "duration": 60}, r"lab_expect.reachability\[0\].duration: only with rate"),
    ({"ingress": "one/test", "rate": 20, "max_failures": -2}, r"lab_expect.reachability\[0\].max_failures: "),
    ({"ingress": "one/test", "rate": 20, "samples": 10}, r"lab_expect.reachability\[0\].samples: not used with rate"),
])
def test_continuous_probe_keys_are_validated_naming_the_field(probe: dict[str, Any], field: str) -> None:
    with pytest.raises(VerifyError, match="^" + field):
        validate_expect({"reachability": [probe]})


def _failed(msg: str) -> dict[str, Any]:
    """A module result the verify role kept going past (ignore_errors keeps failed: true)."""
    return {"failed": True, "msg": msg, "changed": False}


def test_a_lab_whose_modules_all_failed_still_gets_every_report_file_and_a_verdict_per_check(tmp_path: Any) -> None:
    """Issue 34: on a broken lab every check turns its module's failure into an unmet verdict naming
    why, and report.json, summary.md and report.html are written all the same."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_verify_report

    expect = {"status": {"failing": {"two/test": "outside"}}, "backends": {"failing": {}},
              "gateways": {"failing": {}}, "dataplane": {"failing": {}},
              "reachability": [{"name": "one", "ingress": "one/test"}, {"name": "steady", "ingress": "one/test", "rate": 5}]}
    results = {
        "controllers": {"passed": False, "failures": ["two/ingress: cannot start: CrashLoopBackOff (service two/svc not found)"],
                        "controllers": {"two/ingress": {"passed": False, "reason": "cannot start: CrashLoopBackOff"}}},
        "diagnose": _failed("the server could not find the requested resource"),
        "status": _failed("gateways: the Gateway API CRDs are not installed"),
        "backends": _failed("Service one/test not found"),
        "conflicts": _failed("timed out reading Ingresses"),
        "actions": _failed("rollout: Deployment one/test not found"),
        "dataplane": _failed("Service two/ingress-ingress-nginx-controller not found"),
        "reachability": [_failed("ingress: Ingress one/test not found"), {"skipped": True}],
        "reachability_continuous": [{"skipped": True}, _failed("ingress: Ingress one/test not found")],
    }
    out = run_verify_report({"scenario": "broken", "backend": "kind", "output_dir": str(tmp_path / "verify"), "expect": expect,
                             "results": results, "not_reproduced": []}, _Module())
    assert sorted(p.name for p in (tmp_path / "verify").iterdir()) == ["report.html", "report.json", "summary.md"]
    unmet = {(v["check"], v["subject"]): v["observed"] for v in out["unmet"]}
    for check in ("diagnose", "addresses", "status", "gateways", "backends", "conflicts", "actions", "dataplane"):
        assert (check, "(could not run)") in unmet, check
    assert ("routes", "(could not run)") not in unmet  # lab_expect names no route: the watch judges none
    assert unmet[("controllers", "two/ingress")].startswith("fail: cannot start: CrashLoopBackOff")
    # An absent object is said with what the other checks know: the build stopped at the controllers.
    assert unmet[("backends", "(could not run)")] == (
        "fail: Service one/test not found (the lab's controllers did not all start - two/ingress: cannot start: "
        "CrashLoopBackOff (service two/svc not found) - so the build stopped before the workloads)")
    assert unmet[("conflicts", "(could not run)")] == "fail: timed out reading Ingresses"  # nothing absent: no guess
    for probe in ("one", "steady"):
        assert unmet[("reachability", probe)].startswith("fail: could not probe: ingress: Ingress one/test not found (the lab's")
    summary = (tmp_path / "verify" / "summary.md").read_text()
    assert "| backends | (could not run) | the check runs | fail: Service one/test not found" in summary
    assert "**FAIL**" in summary
    html = (tmp_path / "verify" / "report.html").read_text()
    assert "Service one/test not found" in html and "could not probe" in html
    assert json.loads((tmp_path / "verify" / "report.json").read_text())["passed"] is False


def test_a_module_that_ran_is_never_read_as_failed() -> None:
    """failed: false (what Ansible adds to every result) is a result that ran."""
    verdicts = evaluate({"status": dict(PUZZLE_STATUS, failed=False)}, PUZZLE_EXPECT)
    assert all(v.subject != "(could not run)" for v in verdicts) and all(v.met for v in verdicts)


def test_an_absent_ingress_on_a_lab_without_any_says_the_workloads_are_missing() -> None:
    results = {"controllers": {"passed": True, "failures": [], "controllers": {}}, "status": {"ingresses": {}, "timeline": []},
               "reachability": [_failed("ingress: Ingress one/test not found")]}
    verdicts = evaluate(results, {"reachability": [{"ingress": "one/test"}]})
    assert [v.observed for v in verdicts if v.check == "reachability"] == [
        "fail: could not probe: ingress: Ingress one/test not found (the lab's namespaces hold no Ingress: "
        "the build stopped before the workloads, or they were deleted since)"]
