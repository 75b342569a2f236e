"""The verify_compare module: both reports read, rows returned, a difference fails only when asked, and a
file that is not a report is named; the logic is tested in module_utils/verify/test_compare.py."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.kindlab.ingress.plugins.modules import verify_compare
from ansible_collections.kindlab.ingress.tests.unit.fakes import run_module, use_fake_exits
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_compare import LIVE, report


@pytest.fixture(autouse=True)
def exits(monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_exits(monkeypatch)


def write(path: Path, doc: object) -> str:
    path.write_text(json.dumps(doc))
    return str(path)


def test_equal_reports_pass_and_a_difference_fails_when_asked(tmp_path: Path) -> None:
    live, same = write(tmp_path / "live.json", LIVE), write(tmp_path / "lab.json", LIVE)
    out = run_module(verify_compare.main, {"left": live, "right": same})
    assert not out.failed and out.result["equal"] and out.result["differences"] == [] and not out.result["changed"]
    calm = write(tmp_path / "calm.json", report([("multiple_writers", "error", "one/test")], {"one/test": 0}))
    failed = run_module(verify_compare.main, {"left": live, "right": calm})
    assert failed.failed and failed.result["differences"] == ["changed status"]
    assert failed.result["msg"] == "verify_compare: the reports differ in changed status"
    told = run_module(verify_compare.main, {"left": live, "right": calm, "fail_on_difference": False})
    assert not told.failed and not told.result["equal"]


def test_a_file_that_is_no_report_is_named(tmp_path: Path) -> None:
    out = run_module(verify_compare.main, {"left": write(tmp_path / "a.json", LIVE), "right": str(tmp_path / "missing.json")})
    assert out.failed and out.result["msg"].startswith("right: cannot read a verify report from %s" % (tmp_path / "missing.json"))
    out = run_module(verify_compare.main, {"left": write(tmp_path / "a.json", LIVE), "right": write(tmp_path / "b.json", [1])})
    assert out.failed and out.result["msg"].startswith("right: expected a verify report")
