"""tests/kind/check_writers.py: a status result whose rows name pods that publish what they wrote
passes; a row naming a pod that does not, or naming nobody, fails."""
from __future__ import annotations

import copy
import datetime as dt
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.options import parse_options
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.run import run
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_writers import POD_A, POD_B, T0, Cluster

SCRIPT = Path(__file__).resolve().parents[2] / "kind" / "check_writers.py"
spec = importlib.util.spec_from_file_location("check_writers", SCRIPT)
assert spec and spec.loader
check_writers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_writers)


def watched() -> dict[str, Any]:
    """The result of a real watch (status.run) over two Traefik installs fighting over apps/web."""
    now = [0.0]

    def clock() -> float:
        now[0] += 1.0
        return now[0]

    return run(Cluster(), Selection(), parse_options(20, 10, False, [], False, True), clock=clock,
               now=lambda: T0 + dt.timedelta(seconds=now[0]))


def run_on(tmp_path: Path, doc: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    rc = check_writers.main([str(path)])
    return rc, capsys.readouterr().out.splitlines()


def test_a_watch_whose_rows_are_attributed_by_address_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = watched()
    rc, out = run_on(tmp_path, {"scenario": "x", "results": {"status": status}}, capsys)
    assert rc == 0, out
    rows = [line for line in out if line.startswith(("ok", "FAIL"))]
    assert len(rows) == len(status["timeline"]) == 6
    assert rows[0].startswith("ok ") and "%s (by address) publishes 100.64.0.10" % POD_A in rows[0]
    assert out[-1] == "6 row(s) checked, 0 failed: PASS"


def test_a_wrong_pod_or_no_writer_fails_and_candidates_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = watched()
    bad = copy.deepcopy(status)
    bad["timeline"][0]["pod"] = POD_B  # B publishes 100.64.0.20, the row wrote 100.64.0.10
    bad["timeline"][1].update(pod=None, candidates=[])
    bad["timeline"][2].update(pod=None, attributed_by="candidates", candidates=[POD_A, POD_B])
    rc, out = run_on(tmp_path, bad, capsys)  # a bare ingress_status result works too
    assert rc == 1
    assert "%s (by address) publishes 100.64.0.20, not 100.64.0.10" % POD_B in out[1] and out[1].startswith("FAIL")
    assert out[2].startswith("FAIL") and "neither a pod nor candidates" in out[2]
    assert out[3].startswith("ok") and "candidates %s, %s (undecided" % (POD_A, POD_B) in out[3]
    assert out[-1] == "6 row(s) checked, 2 failed: FAIL"
    unknown = copy.deepcopy(status)
    unknown["timeline"][0]["pod"] = "elsewhere/nginx-0"
    rc, out = run_on(tmp_path, unknown, capsys)
    assert rc == 1 and "elsewhere/nginx-0 (by address) runs no recorded publisher" in out[1]
    del unknown["publishers"]
    rc, out = run_on(tmp_path, unknown, capsys)
    assert rc == 1 and "records no publishers" in out[1]


def test_an_unreadable_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert check_writers.main([str(tmp_path / "missing.json")]) == 2
    (tmp_path / "other.json").write_text("{}", encoding="utf-8")
    assert check_writers.main([str(tmp_path / "other.json")]) == 2
    assert "no ingress_status result" in capsys.readouterr().err


def test_a_gateway_row_is_checked_against_the_gateway_api_writers_only() -> None:
    publishers = [{"controller": "a/traefik", "pods": ["a/traefik-x"], "addresses": ["100.64.0.9"]},
                  {"controller": "a/traefik@kubernetesgateway", "pods": ["a/traefik-x"], "addresses": ["100.64.0.1"],
                   "surface": "gateway", "controller_name": "traefik.io/gateway-controller"}]
    row = {"time": "t", "kind": "Gateway", "subject": "Gateway a/gw", "new": ["100.64.0.1"], "pod": "a/traefik-x",
           "attributed_by": "address"}
    passed, text = check_writers.check_row(row, publishers)
    assert passed and text.startswith("ok    t Gateway a/gw -> 100.64.0.1: a/traefik-x (by address) publishes 100.64.0.1")
    passed, text = check_writers.check_row(dict(row, kind=None, subject=None, ingress="a/web"), publishers)
    assert not passed and "publishes 100.64.0.9, not 100.64.0.1" in text  # an Ingress row: the Ingress publisher's address
