"""hack/compare-verdicts.py: kind's and the twin's verdicts side by side; a difference fails."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[3] / "hack" / "compare-verdicts.py"
spec = importlib.util.spec_from_file_location("compare_verdicts", SCRIPT)
assert spec and spec.loader
compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare)


def write(work: Path, backend: str, scenario: str, verdicts: list[tuple[str, str, str, bool]]) -> None:
    path = work / backend / scenario / "verify" / "report.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"passed": all(v[3] for v in verdicts), "verdicts": [
        {"check": c, "subject": s, "expected": "pass", "observed": o, "met": m} for c, s, o, m in verdicts]}))


def test_equal_outcomes_pass_whatever_the_reasons_say(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "kind", "puzzle", [("status", "one/test", "fail: 3 changes (100.64.0.1 -> 172.18.0.2)", True)])
    write(tmp_path, "twin", "puzzle", [("status", "one/test", "fail: 5 changes (100.64.0.0 -> 172.18.0.2)", True)])
    assert compare.main(["x", str(tmp_path), "puzzle"]) == 0
    assert "status" in capsys.readouterr().out


def test_a_different_outcome_or_a_missing_report_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "kind", "healthy", [("status", "one/test", "pass", True)])
    write(tmp_path, "twin", "healthy", [("status", "one/test", "fail: empty", False)])
    assert compare.main(["x", str(tmp_path), "healthy"]) == 1
    assert "<- differs" in capsys.readouterr().out
    assert compare.main(["x", str(tmp_path), "puzzle"]) == 1  # no reports at all


def test_a_difference_listed_by_design_is_shown_with_its_reason(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "kind", "healthy", [("status", "one/test", "pass", True)])
    write(tmp_path, "twin", "healthy", [("status", "one/test", "fail: empty", False)])
    monkeypatch.setitem(compare.BY_DESIGN, ("healthy", "status", "one/test"), "a reason")
    assert compare.main(["x", str(tmp_path), "healthy"]) == 0
    assert "(by design: a reason)" in capsys.readouterr().out


def test_two_runs_kept_reports_compared_row_by_row(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before, after = tmp_path / "before", tmp_path / "after"
    write(before, "kind", "puzzle", [("status", "one/test", "fail: 3 changes", True), ("diagnose", "one/test", "pass", True)])
    write(after, "kind", "puzzle", [("status", "one/test", "fail: 4 changes", True), ("diagnose", "one/test", "pass", True)])
    write(before, "kind", "healthy", [("status", "one/test", "pass", True)])
    write(after, "kind", "healthy", [("status", "one/test", "pass", True)])
    assert compare.main(["x", "--between", str(before), str(after)]) == 0
    out = capsys.readouterr().out
    assert "before" in out and "after" in out and "2 scenarios compared, 0 rows or reports differ" in out
    # a row the change lost, and a scenario only one run has, are differences
    write(after, "kind", "no-endpoints", [("backends", "one/test", "fail: no endpoints", True)])
    write(after, "kind", "puzzle", [("status", "one/test", "fail: 4 changes", True)])
    assert compare.main(["x", "--between", str(before), str(after)]) == 1
    out = capsys.readouterr().out
    assert "<- differs" in out and "no verdicts from before" in out and "3 scenarios compared, 2 rows or reports differ" in out


def test_between_with_nothing_kept_fails(tmp_path: Path) -> None:
    assert compare.main(["x", "--between", str(tmp_path / "a"), str(tmp_path / "b")]) == 1
    assert compare.main(["x", "--between"]) == 2
