"""tests/kind/failure_digest.py: why a scenario failed on kind, from its report's unmet checks or,
without a report, the failed tasks of lab.log; a failure nothing explains makes it exit 1."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "kind" / "failure_digest.py"
spec = importlib.util.spec_from_file_location("failure_digest", SCRIPT)
assert spec and spec.loader
failure_digest = importlib.util.module_from_spec(spec)
spec.loader.exec_module(failure_digest)


def test_names_each_unmet_check_of_the_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "rollout-drops" / "verify" / "report.json"
    report.parent.mkdir(parents=True)
    report.write_text(json.dumps({"unmet": [
        {"check": "reachability", "subject": "two/shop", "expected": "fail: failed [1-9]",
         "observed": "pass: sent 1200, failed 0 " + "x" * 600},
        {"check": "dataplane", "subject": "one/shop", "expected": "pass", "observed": "stale"},
    ]}))
    assert failure_digest.main([str(report.parents[1])]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "rollout-drops:"
    assert out[1].startswith("  unmet reachability two/shop: expected fail: failed [1-9], observed pass: sent 1200, failed 0")
    assert len(out[1]) < 600 and out[1].endswith("…")
    assert out[2] == "  unmet dataplane one/shop: expected pass, observed stale"


def test_without_a_report_names_the_failed_task_and_its_message(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    lab = tmp_path / "puzzle"
    lab.mkdir()
    (lab / "lab.log").write_text(
        "TASK [kindlab.ingress.cluster : Create the cluster] ****\n"
        'fatal: [localhost]: FAILED! => {"changed": false, "msg": "kind create cluster failed: no space"}\n'
        "TASK [kindlab.ingress.controllers : Install] ****\n"
        "ok: [localhost]\n")
    assert failure_digest.main([str(lab)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "puzzle:", "  task kindlab.ingress.cluster : Create the cluster: kind create cluster failed: no space"]


def test_a_failure_nothing_explains_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lab = tmp_path / "healthy"
    (lab / "verify").mkdir(parents=True)
    (lab / "verify" / "report.json").write_text(json.dumps({"unmet": []}))
    (lab / "lab.log").write_text("TASK [x] ****\nok: [localhost]\n")
    assert failure_digest.main([str(lab)]) == 1
    assert "no unmet check and no failed task recorded" in capsys.readouterr().out


def test_brief_gives_the_first_reason_on_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report = tmp_path / "healthy" / "verify" / "report.json"
    report.parent.mkdir(parents=True)
    report.write_text(json.dumps({"unmet": [
        {"check": "status", "subject": "one/test", "expected": "pass", "observed": "fail: 3 changes " + "y" * 300},
        {"check": "controllers", "subject": "one/ingress", "expected": "pass", "observed": "restarted"}]}))
    assert failure_digest.main(["--brief", str(report.parents[1])]) == 0
    out = capsys.readouterr().out.splitlines()
    assert len(out) == 1 and out[0].startswith("unmet status one/test: expected pass, observed fail: 3 changes")
    assert len(out[0]) == 160
