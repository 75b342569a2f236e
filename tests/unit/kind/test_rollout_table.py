"""tests/kind/rollout_table.py: requests sent and lost per continuous probe and each replica's
longest data-plane lag, from the verify reports; a scenario without a report or without a
continuous probe makes it fail rather than print an empty table."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "kind" / "rollout_table.py"
spec = importlib.util.spec_from_file_location("rollout_table", SCRIPT)
assert spec and spec.loader
rollout_table = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rollout_table)


def report(lost: int, lag: float) -> dict[str, Any]:
    return {"results": {
        "reachability_continuous": [
            {"skipped": True},  # a one-shot probe: the continuous loop skipped it
            {"item": {"name": "two/shop through Traefik"}, "ingresses": ["two/shop"],
             "continuous": {"sent": 1200, "failed_count": lost, "rate_achieved": 19.99}},
        ],
        "dataplane": {"lag": [{"pod": "traefik/traefik-5c9c", "ingress": "two/shop", "lag": lag}]},
    }}


def write(work: Path, scenario: str, body: dict[str, Any]) -> None:
    path = work / "kind" / scenario / "verify" / "report.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(body))


def test_prints_lost_requests_and_lag_beside_the_fixed_variant(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "rollout-drops", report(15, 2.0))
    write(tmp_path, "rollout-drops-fixed", report(0, 1.0))
    assert rollout_table.main([str(tmp_path), "rollout-drops", "rollout-drops-fixed"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert [line.split()[-3:] for line in out if "through Traefik" in line] == [["1200", "15", "19.99"], ["1200", "0", "19.99"]]
    assert [line.split()[0] + " " + line.split()[-2] for line in out if "traefik/traefik-5c9c" in line] == [
        "rollout-drops 2.0", "rollout-drops-fixed 1.0"]


def test_a_missing_report_or_no_continuous_probe_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "static", {"results": {"reachability_continuous": [{"skipped": True}]}})
    assert rollout_table.main([str(tmp_path), "static", "absent"]) == 1
    err = capsys.readouterr().err
    assert "static: no continuous probe" in err and "absent:" in err
