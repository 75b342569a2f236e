"""tests/kind/gateway_rows.py: diagnose's Gateway prediction against what the real controllers
wrote, read from Gateways and HTTPRoutes as kubectl returns them (here, canned reads)."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "kind" / "gateway_rows.py"
spec = importlib.util.spec_from_file_location("gateway_rows", SCRIPT)
assert spec and spec.loader
gateway_rows = importlib.util.module_from_spec(spec)
sys.modules["gateway_rows"] = gateway_rows  # its dataclasses look their module up
spec.loader.exec_module(gateway_rows)

A, B = "traefik-a/traefik-a@kubernetesgateway", "traefik-b/traefik-b@kubernetesgateway"
CONTROLLERS = [{"controller": A, "settings": {"field_manager": "traefik"}}, {"controller": B, "settings": {"field_manager": "traefik"}}]


def prediction(writers: list[tuple[str, str]], listeners: dict[str, str | None], route_status: list[tuple[bool, str]]) -> dict[str, Any]:
    return {"served": True, "controllers": CONTROLLERS,
            "gateways": {"traefik-a/edge": {"flapping": len({a for _w, a in writers}) > 1,
                                            "writers": [{"controller": w, "address": [a], "listeners": listeners} for w, a in writers]}},
            "routes": {"shop/shop": {"parents": [{"gateway": "traefik-a/edge", "status_by": {
                w: {"accepted": acc, "reason": reason} for (w, _a), (acc, reason) in zip(writers, route_status)}}]}}}


def read(address: str, listeners: list[tuple[str, str, str]], route: tuple[str, str], manager: str = "traefik") -> str:
    """One `kubectl get gateways,httproutes -A -o json` answer."""
    gw = {"kind": "Gateway", "metadata": {"namespace": "traefik-a", "name": "edge",
                                          "managedFields": [{"manager": "kindlab.ingress"}, {"manager": manager, "subresource": "status"}]},
          "status": {"addresses": [{"type": "IPAddress", "value": address}],
                     "listeners": [{"name": n, "conditions": [{"type": "Accepted", "status": st, "reason": r}]} for n, st, r in listeners]}}
    route_obj = {"kind": "HTTPRoute", "metadata": {"namespace": "shop", "name": "shop"},
                 "status": {"parents": [{"parentRef": {"namespace": "traefik-a", "name": "edge"}, "controllerName": "traefik.io/gateway-controller",
                                         "conditions": [{"type": "Accepted", "status": route[0], "reason": route[1]}]}]}}
    return json.dumps({"items": [gw, route_obj]})


def run_with(reads: list[str], pred: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str]]:
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"results": {"diagnose": {"gateway_api": pred}}}))
    answers = iter(reads)
    rc = gateway_rows.main(["kubeconfig", str(report), "3"], run=lambda argv: next(answers))
    return rc, capsys.readouterr().out.splitlines()


@pytest.fixture(autouse=True)
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    ticks = iter(range(1000))
    monkeypatch.setattr(gateway_rows.time, "monotonic", lambda: float(next(ticks)))
    monkeypatch.setattr(gateway_rows.time, "sleep", lambda _s: None)


def test_two_installs_alternating_agree_with_the_flapping_prediction(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred = prediction([(A, "100.64.0.1"), (B, "100.64.0.2")], {"web": "web"}, [(True, "Accepted"), (True, "Accepted")])
    web = [("web", "True", "Accepted")]
    reads = [read("100.64.0.1", web, ("True", "Accepted")), read("100.64.0.2", web, ("True", "Accepted")),
             read("100.64.0.1", web, ("True", "Accepted")), read("100.64.0.1", web, ("True", "Accepted"))]
    rc, out = run_with(reads, pred, tmp_path, capsys)
    assert rc == 0, out
    assert out[0].startswith("agree  | Gateway traefik-a/edge | predicted: %s → [100.64.0.1]; %s → [100.64.0.2] (flapping)" % (A, B))
    assert "real: [100.64.0.1], [100.64.0.2] by traefik; listeners web accepted (Accepted)" in out[0]
    assert out[1] == "agree  | HTTPRoute shop/shop → traefik-a/edge | predicted: Accepted Accepted | real: Accepted Accepted"
    assert out[-1] == "gateway rows: 2, 2 agree"
    # one install seen only: the other predicted writer never wrote - they differ
    rc, out = run_with([read("100.64.0.1", web, ("True", "Accepted"))] * 4, pred, tmp_path, capsys)
    assert rc == 1 and out[0].startswith("DIFFER | Gateway traefik-a/edge")


def test_a_dead_listener_and_its_dark_route(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred = prediction([(A, "100.64.0.1")], {"web": "web", "plain": None}, [(False, "NotAllowedByListeners")])
    listeners = [("web", "True", "Accepted"), ("plain", "False", "PortUnavailable")]
    reads = [read("100.64.0.1", listeners, ("False", "NotAllowedByListeners"))] * 4
    rc, out = run_with(reads, pred, tmp_path, capsys)
    assert rc == 0, out
    assert "listeners plain not accepted, web accepted" in out[0]
    assert "plain not accepted (PortUnavailable)" in out[0]
    # the route accepted where diagnose said dark, a listener accepted where it said dead, a foreign manager: each differs
    for bad in (read("100.64.0.1", listeners, ("True", "Accepted")),
                read("100.64.0.1", [("web", "True", "Accepted"), ("plain", "True", "Accepted")], ("False", "NotAllowedByListeners")),
                read("100.64.0.1", listeners, ("False", "NotAllowedByListeners"), manager="someone-else")):
        rc, out = run_with([bad] * 4, pred, tmp_path, capsys)
        assert rc == 1, out


def test_a_report_without_gateway_api_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _out = run_with([], {"served": False}, tmp_path, capsys)
    assert rc == 2
