"""verify/report_compare.py: a live cluster's report against its reproduction's (symptoms), and a scenario's
run against its capture's rebuild (verdicts)."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.verify import report_compare as c


def report(findings: list[tuple[str, str, str]], changed: dict[str, int], verdicts: list[tuple[str, str, str, bool]] | None = None) -> dict[str, Any]:
    return {"verdicts": [{"check": ch, "subject": s, "observed": o, "met": m} for ch, s, o, m in verdicts or []],
            "results": {"diagnose": {"findings": [{"kind": k, "severity": sev, "ingress": i} for k, sev, i in findings]},
                        "status": {"ingresses": {k: {"changes": n} for k, n in changed.items()}}}}


LIVE = report([("multiple_writers", "error", "one/test"), ("gateway_address", "info", "")], {"one/test": 40, "two/test": 0})


def rows(left: dict[str, Any], right: dict[str, Any], **kw: Any) -> dict[str, bool]:
    return {r["check"]: r["same"] for r in c.compare(left, right, **kw)}


def test_the_same_incident_in_the_lab_is_equal_whatever_its_verdicts() -> None:
    # the lab's run judged against expectations; the live one against none: only the symptoms count
    lab = report([("multiple_writers", "error", "one/test")], {"one/test": 3, "two/test": 0},
                 [("status", "one/test", "fail: 3 changes", True)])
    assert rows(LIVE, lab, mode="symptoms") == {"findings": True, "changed status": True, "changed Gateway status": True}


def test_a_lab_that_does_not_flap_or_names_another_finding_differs() -> None:
    calm = report([("multiple_writers", "error", "one/test")], {"one/test": 0})
    assert rows(LIVE, calm, mode="symptoms")["changed status"] is False
    other = report([("unclaimed", "error", "one/test")], {"one/test": 2})
    assert rows(LIVE, other, mode="symptoms")["findings"] is False


def test_anonymized_compares_kinds_and_counts() -> None:
    renamed = report([("multiple_writers", "error", "ns-1/ingress-1")], {"ns-1/ingress-1": 7})
    assert all(rows(LIVE, renamed, mode="symptoms", anonymized=True).values())
    assert not all(rows(LIVE, renamed, mode="symptoms").values())


def test_verdicts_mode_compares_subject_outcome_and_expectation() -> None:
    a = report([], {}, [("status", "one/test", "fail: 3 changes", True), ("diagnose", "multiple_writers ^one/test$", "found: x", True),
                        ("reachability", "one/test", "pass", True)])
    b = report([], {}, [("status", "one/test", "fail: 9 changes", True), ("diagnose", "multiple_writers ^ns-1/x$", "found: y", True)])
    assert all(rows(a, b, mode="verdicts").values())  # reachability is not captured; diagnose subjects are regexes
    b2 = report([], {}, [("status", "one/test", "pass", False), ("diagnose", "multiple_writers ^one/test$", "found: x", True)])
    assert rows(a, b2, mode="verdicts")["status"] is False


def test_bad_input_is_named() -> None:
    with pytest.raises(c.CompareError, match="right: expected a verify report"):
        c.compare(LIVE, {"results": {}}, "symptoms")
    with pytest.raises(c.CompareError, match="mode: expected one of verdicts, symptoms, got 'both'"):
        c.compare(LIVE, LIVE, "both")
