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
    path.parent.mkdir(parents=True)
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
