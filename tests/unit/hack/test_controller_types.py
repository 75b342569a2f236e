"""kindlab_twin.controller_types: what the hack/ scripts ask about the controller types, answered
from the registry, and in agreement with lab_definition."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import REGISTRY
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.definition import LabError, validate
from kindlab_twin import binaries, controller_types

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_LAB = yaml.safe_load((ROOT / "inventories/local/group_vars/all/lab.yml").read_text())
SCENARIOS = sorted((ROOT / "scenarios").glob("*.yml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_kind_only_is_what_lab_definition_refuses_on_the_twin(path: Path) -> None:
    lab = dict(DEFAULT_LAB, **(yaml.safe_load(path.read_text()) or {}))
    args = (lab["lab_cluster"], lab["lab_metallb_pools"], lab["lab_namespaces"], lab["lab_controllers"], lab["lab_workloads"])
    extra = {"actions": lab.get("lab_actions"), "gateway_api": lab.get("lab_gateway_api"), "gateways": lab.get("lab_gateways")}
    refused = controller_types.kind_only(path)
    if refused:
        # A type the twin does not emulate is refused first; timed actions after it.
        with pytest.raises(LabError, match="%s.* runs on lab_backend kind only" % refused[0]):
            validate("twin", *args, **extra)
    else:
        validate("twin", *args, **extra)


def test_kind_only_reads_the_default_lab_when_the_scenario_has_no_controllers(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yml"
    scenario.write_text("lab_expect: {}\n")
    assert controller_types.lab_controllers(scenario) == DEFAULT_LAB["lab_controllers"]
    off = [name for name, t in REGISTRY.items() if not t.on_twin]
    if off:
        scenario.write_text(yaml.safe_dump({"lab_controllers": [{"namespace": "x", "type": off[0]}]}))
        assert controller_types.kind_only(scenario) == [off[0]]


def test_kind_only_names_timed_actions_after_the_types(tmp_path: Path) -> None:
    scenario = tmp_path / "s.yml"
    scenario.write_text(yaml.safe_dump({"lab_actions": [{"at": 5, "rollout": "one/test"}]}))
    assert controller_types.kind_only(scenario) == ["lab_actions"]
    run = subprocess.run([sys.executable, "-m", "kindlab_twin.controller_types", "kind-only", str(scenario)], capture_output=True,
                         text=True, check=False)
    assert (run.returncode, run.stdout.strip()) == (0, "lab_actions"), run.stderr
    scenario.write_text(yaml.safe_dump({"lab_actions": []}))
    assert controller_types.kind_only(scenario) == []
    scenario.write_text("")  # an empty scenario: the default lab
    assert controller_types.kind_only(scenario) == []
    off = [name for name, t in REGISTRY.items() if not t.on_twin]
    if off:
        scenario.write_text(yaml.safe_dump({"lab_controllers": [{"namespace": "x", "type": off[0]}],
                                            "lab_actions": [{"at": 0, "restart_controller": "x"}]}))
        assert controller_types.kind_only(scenario) == [off[0], "lab_actions"]


def test_offline_vars_cover_every_type() -> None:
    out = controller_types.offline_vars()
    assert out["lab_images"] == {k: v for t in REGISTRY.values() if t.offline for k, v in t.offline.images.items()}
    assert out["lab_charts"] == {name: str(binaries.cache_root() / t.offline.chart) for name, t in REGISTRY.items() if t.offline}


def test_offline_charts_built_with_a_binary_are_where_its_assets_go() -> None:
    """A chart copied beside a pinned binary (build binaries' asset_dirs) is found where that copy lands."""
    pins = {pin.file_name: pin for pin in binaries.pinned().values()}
    for t in REGISTRY.values():
        assert t.offline is not None, t.name
        parts = Path(t.offline.chart).parts
        if parts[1] in pins:
            assert parts[2] in {Path(d).name for d in pins[parts[1]].asset_dirs}, t.name


def test_the_command_line_answers_with_its_exit_status() -> None:
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "kindlab_twin.controller_types", *args], capture_output=True,
                              text=True, check=False)

    for path in SCENARIOS:
        run = cli("kind-only", str(path))
        assert run.returncode == (0 if controller_types.kind_only(path) else 1), run.stderr
    assert json.loads(cli("offline-vars").stdout) == controller_types.offline_vars()
    name = next(iter(REGISTRY))
    assert cli("offline-chart", name).stdout.strip() == str(controller_types.offline_chart(name))
