from __future__ import annotations

import json
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.callback.lab_stages import CallbackModule, Stages, stage_of


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_each_task_counts_until_the_next_starts_and_stages_keep_their_first_order() -> None:
    clock = Clock()
    stages = Stages(clock)
    for stage, seconds in [("kind_cluster", 18.0), ("metallb", 15.0), ("kind_cluster", 2.5), ("verify", 40.0)]:
        stages.start(stage)
        clock.now += seconds
    assert stages.table() == {"stages": [{"stage": "kind_cluster", "seconds": 20.5}, {"stage": "metallb", "seconds": 15.0},
                                         {"stage": "verify", "seconds": 40.0}], "total": 75.5}


class _Role:
    def get_name(self, include_role_fqcn: bool = True) -> str:
        return "kindlab.ingress.metallb" if include_role_fqcn else "metallb"


class _Task:
    def __init__(self, role: Any = None) -> None:
        self._role = role


def test_a_task_s_stage_is_its_role_or_its_play_s_own_tasks() -> None:
    assert stage_of(_Task(_Role()), "Build the ingress lab") == "metallb"
    assert stage_of(_Task(), "Build the ingress lab") == "Build the ingress lab (its own tasks)"


def test_the_table_is_printed_at_the_end_and_written_as_json(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    shown: list[str] = []
    callback = CallbackModule()
    # Display is one object for the whole process: patched for this test only, or later tests print nothing.
    monkeypatch.setattr(callback._display, "display", shown.append)
    callback._plugin_options = {"json_path": str(tmp_path / "stages.json")}  # (ansible-playbook sets it from KINDLAB_STAGES_JSON)
    clock = Clock()
    callback.stages = Stages(clock)
    callback.v2_playbook_on_task_start(_Task(_Role()), False)
    clock.now += 12.0
    callback.v2_playbook_on_stats(None)
    assert shown[0].splitlines()[-2:] == ["metallb    12.0", "total      12.0"]
    assert json.loads((tmp_path / "stages.json").read_text()) == {"stages": [{"stage": "metallb", "seconds": 12.0}], "total": 12.0}
