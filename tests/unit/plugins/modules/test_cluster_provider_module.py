"""The cluster_provider module: the provider a lab uses and its capabilities, no cluster touched."""
from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from ansible.module_utils import basic

from ansible_collections.kindlab.ingress.plugins.modules import cluster_provider
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, run_module, use_fake_exits

DOCKER_UP = json.dumps({"ServerVersion": "29.0.2", "OperatingSystem": "Ubuntu 24.04.3 LTS", "ServerErrors": None})
DOCKER_DOWN = json.dumps({"ServerVersion": "", "ServerErrors": [
    "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"]})


@dataclass
class Engine:
    """Answers `docker info` (up or down); records every command the module runs."""

    info: str = DOCKER_UP
    calls: list[list[str]] = field(default_factory=list)


@pytest.fixture
def engine(monkeypatch) -> Engine:
    eng = Engine()

    def run_command(self, argv, **kwargs):
        eng.calls.append(list(argv))
        if argv[1:2] == ["info"]:
            return 0, eng.info, ""
        raise AssertionError("unexpected command %r" % argv)

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    use_fake_exits(monkeypatch)
    return eng


def run(args: dict) -> Exit:
    return run_module(cluster_provider.main, args)


@pytest.mark.parametrize("provider", ["kind", "twin"])
def test_a_provider_asked_by_name_runs_nothing(engine, provider) -> None:
    r = run({"provider": provider}).result
    assert r["provider"] == provider and r["provider_reason"] == "provider %s was asked for" % provider
    assert r["changed"] is False and engine.calls == []
    assert r["capabilities"]["runs_real_controllers"] is (provider == "kind")
    assert r["capabilities"]["reached_through_connect_to"] is (provider == "twin")


def test_auto_picks_kind_when_the_engine_answers(engine) -> None:
    r = run({}).result
    assert r["provider"] == "kind" and r["capabilities"]["nodes_on_host_bridge"] is True
    assert engine.calls == [["/usr/bin/docker", "info", "--format", "{{json .}}"]]


def test_auto_picks_the_twin_when_the_engine_does_not_answer(engine) -> None:
    engine.info = DOCKER_DOWN
    r = run({"_ansible_check_mode": True}).result
    assert r["provider"] == "twin" and "the Docker engine does not answer" in r["provider_reason"]
    assert r["capabilities"] == {"runs_real_controllers": False, "scales_time": True, "nodes_on_host_bridge": False,
                                 "reached_through_connect_to": True}
