"""tests/kind/round_trip.py: a capture rebuilt on kind against its original, by their reports."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "kind" / "round_trip.py"
spec = importlib.util.spec_from_file_location("round_trip", SCRIPT)
assert spec and spec.loader
round_trip = importlib.util.module_from_spec(spec)
sys.modules["round_trip"] = round_trip
spec.loader.exec_module(round_trip)


def report(*verdicts: tuple[str, str, str, bool]) -> dict[str, Any]:
    return {"verdicts": [{"check": c, "subject": s, "observed": o, "met": m} for c, s, o, m in verdicts]}


ORIGINAL = report(("diagnose", "multiple_writers ^one/test$", "found: one/test: 2 controllers", True),
                  ("status", "one/test", "fail: 3 changes in 150s", True), ("status", "two/test", "pass", True),
                  ("reachability", "one/test", "pass", True))


def run(tmp_path: Path, original: dict[str, Any], rebuilt: dict[str, Any], *extra: str) -> tuple[int, str]:
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(original))
    b.write_text(json.dumps(rebuilt))
    return round_trip.main([str(a), str(b), *extra]), ""


def test_equal_verdicts_pass_and_reachability_is_left_out(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rebuilt = report(("diagnose", "multiple_writers ^one/test$", "found: one/test: 2 controllers", True),
                     ("status", "one/test", "fail: 5 changes in 150s", True), ("status", "two/test", "pass", True))
    assert run(tmp_path, ORIGINAL, rebuilt)[0] == 0
    out = capsys.readouterr().out
    assert "same   | status     | original: one/test/fail/True×1, two/test/pass/True×1" in out
    assert out.strip().endswith("round trip: verdicts equal")


def test_a_status_that_no_longer_flaps_differs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rebuilt = report(("diagnose", "multiple_writers ^one/test$", "found: x", True),
                     ("status", "one/test", "pass", False), ("status", "two/test", "pass", True))
    assert run(tmp_path, ORIGINAL, rebuilt)[0] == 1
    assert "DIFFER | status" in capsys.readouterr().out


def test_anonymized_verdicts_compare_by_count_and_no_original_name_may_remain(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    renamed = report(("diagnose", "multiple_writers ^ns-1/ingress-1$", "found: ns-1/ingress-1", True),
                     ("status", "ns-1/ingress-1", "fail: 4 changes", True), ("status", "ns-2/ingress-1", "pass", True))
    scenario = tmp_path / "s.yml"
    scenario.write_text("lab_namespaces: [shop]\nlab_workloads: [{name: cart, namespace: shop, ingress: {host: cart.example.test}}]\n")
    clean = tmp_path / "captured.yml"
    clean.write_text("lab_namespaces: [ns-1, ns-2]\n")
    assert run(tmp_path, ORIGINAL, renamed, "--anonymized", str(clean), str(scenario))[0] == 0
    capsys.readouterr()
    dirty = tmp_path / "dirty.yml"
    dirty.write_text("lab_namespaces: [shop]\n# host cart.example.test\n")
    assert run(tmp_path, ORIGINAL, renamed, "--anonymized", str(dirty), str(scenario))[0] == 1
    out = capsys.readouterr().out
    assert "original names in the capture: cart.example.test, shop" in out
