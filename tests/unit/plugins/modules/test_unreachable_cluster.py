# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Every module that talks to the Kubernetes API fails in the client layer's one line when the
cluster is not there: its server refuses the connection (the client's urllib3 connection against a
closed port on 127.0.0.1), or its kubeconfig does not exist."""
from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.tests.unit.fakes import run_module, use_fake_exits
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.k8s.test_k8s_errors import CONTEXT, HINT, write_kubeconfig
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.k8s.test_watch import assert_no_urllib3_text, closed_port_url

pytest.importorskip("kubernetes")

# Each module with the fewest options that make it ask the API server.
MODULES: dict[str, dict[str, Any]] = {
    "controller_health": {"controllers": [{"namespace": "one"}]},
    "http_probe": {"ingress": "one/test"},
    "ingress_address": {"ingresses": ["one/test"], "timeout": 1},
    "ingress_backends": {},
    "ingress_conflicts": {},
    "ingress_dataplane": {},
    "ingress_controller": {"namespace": "one", "method": "manifest", "wait": False,
                           "values": {"controller": {"admissionWebhooks": {"enabled": False}}}},
    "ingress_diagnose": {},
    "ingress_status": {"window": 1},
    "lab_namespaces": {"names": ["one"]},
    "lab_workload": {"workloads": [{"name": "test", "namespace": "one"}], "wait": False},
    "metallb": {"source": "rendered", "pools": [{"name": "lab-pool", "addresses": ["100.64.0.0/16"]}], "wait": False},
}


@pytest.fixture(autouse=True)
def fake_exits(monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_exits(monkeypatch)


def run(name: str, args: dict[str, Any]) -> dict[str, Any]:
    module = importlib.import_module("ansible_collections.kindlab.ingress.plugins.modules." + name)
    exit_ = run_module(module.main, args)
    assert exit_.failed, exit_.result
    return exit_.result


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_cluster_that_refuses_the_connection(name: str, tmp_path: Path) -> None:
    url = closed_port_url()
    path = write_kubeconfig(tmp_path / "kubeconfig", url)
    msg = run(name, dict(MODULES[name], kubeconfig=path))["msg"]
    assert msg == "the API server at %s (context %s, kubeconfig %s) did not answer: connection refused; %s" % (
        url, CONTEXT, path, HINT)
    assert_no_urllib3_text(msg)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_a_kubeconfig_that_does_not_exist(name: str, tmp_path: Path) -> None:
    path = str(tmp_path / "lab" / "kubeconfig")
    msg = run(name, dict(MODULES[name], kubeconfig=path, context=CONTEXT))["msg"]
    assert msg == ("cannot use kubeconfig %s (context %s): the file does not exist; create the cluster first "
                   "(ansible-playbook playbooks/lab.yml), or set kubeconfig and context to those of a running cluster"
                   % (path, CONTEXT))
