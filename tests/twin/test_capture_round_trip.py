# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""lab_capture against a running twin: the puzzle scenario built from what the lab installs on the
twin (each controller's method=manifest objects from scenarios/puzzle.yml, its stand-in workloads,
MetalLB), then captured with the real client. The capture must validate as a lab definition, its
controllers must render the effective args the scenario's render, its workloads must be the
scenario's, and it must expect the findings the scenario expects; so must the anonymized capture,
under its own names. (The kind round trip, rebuilding from the capture, is tests/kind's.)"""
from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.capture import scenario as cap
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.cluster import read_cluster
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.install import parse_controller
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import controller_type
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.client import Client
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.images import parse_images
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import parse_workloads
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.render import render

sys.path.insert(0, str(Path(__file__).parent / "emulations"))

from twinlib import lb_ip, metallb, ready_deployment  # noqa: E402

from kindlab_twin.cluster import TwinClusterHandle  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
Obj = dict[str, Any]


def lab_variables(scenario: str) -> Obj:
    """The inventory's defaults with the scenario's variables over them, as ansible-playbook -e @file gives them."""
    lab: Obj = yaml.safe_load((ROOT / "inventories/local/group_vars/all/lab.yml").read_text())
    lab.update(yaml.safe_load((ROOT / "scenarios" / (scenario + ".yml")).read_text()))
    return lab


def build(client: Client, twin: TwinClusterHandle, lab: Obj) -> list[Obj]:
    """What lab.yml installs on the twin, by the same functions; returns the parsed controllers."""
    metallb(twin.store, [str(a) for p in lab["lab_metallb_pools"] for a in p["addresses"]])
    for ns in lab["lab_namespaces"]:
        client.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    images = parse_images(lab.get("lab_images"))
    controllers = [parse_controller(raw, "[%d]" % i, images) for i, raw in enumerate(lab["lab_controllers"])]
    for ctl in controllers:
        ctype = controller_type(ctl["type"])
        assert ctype.install.render_manifests is not None
        client.apply_all(ctype.install.render_manifests(ctype.install.effective_config(ctl["values"], ctl["release"], ctl["namespace"], None)))
    for wl in parse_workloads(lab["lab_workloads"], where="lab_workloads", default_image=images["test_app"]):
        client.apply_all(render(wl))
    for ctl in controllers:
        ns, name = ctl["deployment"].split("/")
        ready_deployment(twin.store, ns, name)
        assert lb_ip(twin.store, ns, name) or not ctl["publish"]["service"]
    return controllers


def effective(ctl: Obj) -> dict[str, str]:
    ctype = controller_type(ctl["type"])
    assert ctype.capture is not None
    rendered = ctype.install.effective_config(ctl["values"], ctl["release"], ctl["namespace"], None).args
    return ctype.capture.effective_args(rendered, ctl["namespace"], None)


def test_the_puzzle_captured_from_the_twin_reproduces_the_scenario(twin: TwinClusterHandle, twin_kubeconfig: str) -> None:
    client = Client(twin_kubeconfig)
    lab = lab_variables("puzzle")
    built = build(client, twin, lab)
    result = cap.capture(read_cluster(client, []), "puzzle-captured")
    cap.check(result.lab)
    captured = {c["namespace"]: c for c in result.lab["lab_controllers"]}
    assert set(captured) == {c["namespace"] for c in built}
    for ctl in built:
        mine = parse_controller(captured[ctl["namespace"]], "")
        assert effective(mine) == effective(ctl), ctl["namespace"]
        assert mine["release"] == ctl["release"] and mine["ingress_class_resource"] == ctl["ingress_class_resource"]
        assert mine["rbac_scope"] == ctl["rbac_scope"]
        ctype = controller_type(mine["type"])
        assert ctype.install.render_manifests is not None  # the twin installs with method=manifest: it renders them
        assert ctype.install.render_manifests(ctype.install.effective_config(mine["values"], mine["release"], mine["namespace"], None))
    workloads = {(w["namespace"], w["name"]): w["ingress"] for w in result.lab["lab_workloads"]}
    assert workloads == {(w["namespace"], w["name"]): {"name": w["name"], "paths": [{"path": "/", "path_type": "Prefix"}],
                                                       "annotations": w["ingress"]["annotations"]}
                         for w in lab["lab_workloads"]}
    expected = {(f["kind"], f["ingress"]) for f in lab["lab_expect"]["diagnose"]["findings"]}
    found = result.lab["lab_expect"]["diagnose"]["findings"]
    assert {(f["kind"], f.get("ingress")) for f in found} == expected
    culprit = "two/" + built[1]["deployment"].split("/")[1]  # the scenario's culprit, in the lab too
    assert all(re.search(f["culprit"], culprit) for f in found)
    assert all(r["differences"] == [] for r in result.controllers), result.controllers
    # The status and conflicts the scenario expects, predicted from the cluster.
    assert result.lab["lab_expect"]["status"]["failing"] == lab["lab_expect"]["status"]["failing"]
    assert sorted(map(sorted, (c["ingresses"] for c in result.lab["lab_expect"]["conflicts"]["expected"]))) \
        == sorted(map(sorted, (c["ingresses"] for c in lab["lab_expect"]["conflicts"]["expected"])))

    anon = cap.capture(read_cluster(client, []), "puzzle-anonymized", anonymize=True)
    cap.check(anon.lab)
    text = cap.render(anon, "an anonymized cluster")
    words = set(re.findall(r"[A-Za-z0-9*][A-Za-z0-9.*-]*", text))
    assert not {"one", "two", "three", "test"} & words
    assert len(anon.lab["lab_expect"]["diagnose"]["findings"]) == len(expected)
