"""The molecule scenarios under extensions/molecule: twin/create.yml makes only the lab's cluster
(lab.yml -e lab_cluster_only=true), so a scenario that creates with it must converge before it can
judge anything; without converge it would pass having built nothing."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

MOLECULE = Path(__file__).resolve().parents[3] / "extensions" / "molecule"
SCENARIOS = sorted(p.parent.name for p in MOLECULE.glob("*/molecule.yml"))


def config(name: str) -> dict:
    return yaml.safe_load((MOLECULE / name / "molecule.yml").read_text())


def test_the_twin_create_builds_only_the_cluster() -> None:
    plays = yaml.safe_load((MOLECULE / "twin" / "create.yml").read_text())
    assert plays[0]["ansible.builtin.import_playbook"] == "kindlab.ingress.lab"
    assert plays[0]["vars"] == {"lab_cluster_only": True}


@pytest.mark.parametrize("name", SCENARIOS)
def test_a_scenario_that_creates_only_the_cluster_converges_before_it_verifies(name: str) -> None:
    scenario = config(name)
    create = (MOLECULE / name / scenario["ansible"]["playbooks"]["create"]).resolve()
    sequence = scenario["scenario"]["test_sequence"]
    if create != (MOLECULE / "twin" / "create.yml").resolve():
        pytest.skip(f"{name} creates with its own {create.name}")
    assert "converge" in sequence, f"{name}: {sequence} never builds the lab"
    assert sequence.index("converge") > sequence.index("create")
    if "verify" in sequence:
        assert sequence.index("verify") > sequence.index("converge")
