"""The plan lab_definition returns: what playbooks/lab.yml builds, one line per step, which
check mode prints on a machine where the cluster does not exist yet."""
from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.lab.definition import plan, validate

ROOT = Path(__file__).resolve().parents[5]
DEFAULT_LAB = yaml.safe_load((ROOT / "inventories/local/group_vars/all/lab.yml").read_text())


def validated(backend: str = "twin", **overrides: Any) -> dict[str, Any]:
    v = copy.deepcopy(DEFAULT_LAB)
    v.update(overrides)
    return validate(backend, v["lab_cluster"], v["lab_metallb_pools"], v["lab_namespaces"], v["lab_controllers"],
                    v["lab_workloads"], v.get("lab_expect"), v.get("lab_images"), v.get("lab_images_load"))


def test_the_default_lab_step_by_step() -> None:
    lines = plan(validated())
    assert lines[0] == "cluster ingress-lab (backend twin): 1 control-plane node"
    assert lines[1].startswith("MetalLB (controller quay.io/metallb/controller:") and lines[1].endswith(
        "with address pools: lab-pool 100.64.0.0/16 (65536 addresses)")
    assert lines[2] == "namespaces: one, two, three"
    assert lines[3].startswith("controller one/ingress (ingress_nginx, namespace-scoped): /nginx-ingress-controller ")
    assert "--controller-class=k8s.io/ingress-nginx-one" in lines[3] and "--watch-namespace=$(POD_NAMESPACE)" in lines[3]
    assert lines[6] == "workload one/test: nginx:1.29.3 x1, Ingress one/test (annotation ingress.class=nginx, paths /)"
    assert lines[-1] == "then wait for a status address on: one/test, two/test, three/test"
    assert len(lines) == 10


def test_workers_images_classes_hosts_and_pools_that_are_not_auto_assigned() -> None:
    lab = validated(
        "kind",
        lab_cluster={"name": "edge", "workers": 2, "node_image": "kindest/node:v1.35.0", "kind_config": {}},
        lab_metallb_pools=[{"name": "one-ip", "addresses": ["100.64.0.7/32"], "auto_assign": False}],
        lab_namespaces=["one"],
        lab_controllers=[DEFAULT_LAB["lab_controllers"][0]],
        lab_workloads=[{"name": "app", "namespace": "one", "replicas": 2,
                        "ingress": {"class": "nginx-one", "host": "app.example", "paths": [{"path": "/"}, {"path": "/api"}]}}],
        lab_images_load=["nginx:1.29.3"],
        lab_expect={},  # the default lab's probes name one/test, which this lab does not define
    )
    lines = plan(lab)
    assert lines[0] == "cluster edge (backend kind): 1 control-plane node, 2 worker(s), node image kindest/node:v1.35.0"
    assert lines[1] == "images to load into the nodes (kind): nginx:1.29.3"
    assert lines[2].endswith("with address pools: one-ip 100.64.0.7/32 (1 address, not auto-assigned)")
    assert lines[5] == "workload one/app: nginx:1.29.3 x2, Ingress one/app (class nginx-one, host app.example, paths /, /api)"


def test_timed_actions_come_last_marked_when_they_are_test_machinery() -> None:
    v = copy.deepcopy(DEFAULT_LAB)
    lab = validate("kind", v["lab_cluster"], v["lab_metallb_pools"], v["lab_namespaces"], v["lab_controllers"], v["lab_workloads"],
                   actions=[{"at": 10, "rollout": "one/test", "name": "the shop ships"}, {"at": 2.5, "freeze_sync": "one"}])
    lines = plan(lab)
    assert lines[-3] == "then wait for a status address on: one/test, two/test, three/test"
    assert lines[-2:] == ["during verify, at 2.5s: freeze_sync one (test machinery)", "during verify, at 10s: the shop ships"]
    assert not any(line.startswith("during verify") for line in plan(validated("kind")))
