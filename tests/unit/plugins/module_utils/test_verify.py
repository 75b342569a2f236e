from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils._verify import (
    VerifyError, evaluate, markdown, report, validate_expect,
)

PUZZLE_STATUS = {
    "ingresses": {
        "one/test": {"passed": False, "reason": "4 changes in 10s (max 0): 100.64.0.0 <-> 172.18.0.2"},
        "two/test": {"passed": False, "reason": "172.18.0.2 is outside the expected pools"},
        "three/test": {"passed": False, "reason": "4 changes in 10s (max 0)"},
    },
    "timeline": [{"time": "1.0", "ingress": "one/test", "old": ["100.64.0.0"], "new": ["172.18.0.2"],
                  "writer": {"manager": "nginx-ingress-controller"}}],
}
PUZZLE_EXPECT = {"status": {"failing": {"one/test": "changes", "three/test": "changes", "two/test": "outside"}}}


def met(verdicts: list[Any]) -> dict[str, bool]:
    return {"%s %s" % (v.check, v.subject): v.met for v in verdicts}


def test_expected_failures_are_met_only_with_the_expected_reason() -> None:
    assert all(met(evaluate({"status": PUZZLE_STATUS}, PUZZLE_EXPECT)).values())
    wrong_reason = {"status": {"failing": {"one/test": "outside", "three/test": "changes", "two/test": "outside"}}}
    assert met(evaluate({"status": PUZZLE_STATUS}, wrong_reason))["status one/test"] is False


def test_an_unexpected_pass_is_unmet_and_an_unexpected_failure_too() -> None:
    healthy = {"ingresses": {"one/test": {"passed": True, "reason": ""}, "two/test": {"passed": False, "reason": "2 changes"}}}
    verdicts = met(evaluate({"status": healthy}, {"status": {"failing": {"one/test": "changes"}}}))
    assert verdicts == {"status one/test": False, "status two/test": False}


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


@pytest.mark.parametrize("expect, message", [
    ([], "lab_expect: expected a mapping"),
    ({"latency": {}}, "lab_expect: expected only the keys"),
    ({"status": {"failing": {"one/test": "("}}}, r"lab_expect.status.failing\[one/test\]: .* not a valid regular expression"),
    ({"status": {"window": 5, "colour": 1}}, "lab_expect.status: expected only the keys"),
    ({"diagnose": {"findings": [{"ingress": "x"}]}}, r"lab_expect.diagnose.findings\[0\]: expected a mapping with kind"),
    ({"conflicts": {"expected": [{"ingresses": ["a/b"]}]}}, r"lab_expect.conflicts.expected\[0\]"),
    ({"reachability": {"ingress": "a/b"}}, "lab_expect.reachability: expected a list"),
])
def test_malformed_expectations_name_the_field(expect: Any, message: str) -> None:
    with pytest.raises(VerifyError, match=message):
        validate_expect(expect)


def test_report_and_markdown_carry_verdicts_and_timeline() -> None:
    verdicts = evaluate({"status": PUZZLE_STATUS}, PUZZLE_EXPECT)
    doc = report("puzzle", "twin", verdicts, {"status": PUZZLE_STATUS})
    assert doc["passed"] and doc["unmet"] == [] and len(doc["verdicts"]) == 3
    text = markdown("puzzle", "twin", verdicts, {"status": PUZZLE_STATUS})
    assert "Backend: **twin**. 3 checks, 3 as expected, 0 unmet: **PASS**." in text
    assert "| 1.0 | one/test | 100.64.0.0 | 172.18.0.2 | {\"manager\": \"nginx-ingress-controller\"} |" in text.replace('\\"', '"')
    failing = evaluate({"status": PUZZLE_STATUS}, {})
    assert "**FAIL**" in markdown("puzzle", "twin", failing, {}) and not report("p", "t", failing, {})["passed"]
