"""The real MetalLB controller (v0.16.1, built from its Go module) on the real control plane.

It runs as a process with its own ServiceAccount token, so the real authorizer decides what it
may do, and allocates LoadBalancer addresses from the lab's IPAddressPool the way seeds/01 shows
(100.64.0.0 first). The manifest is MetalLB's own native one from the same module; its
ValidatingWebhookConfiguration is left out here (the webhook server needs the pod network the
twin would have to give its process) and the controller runs with --webhook-mode=disabled.
"""
from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator

import pytest
import yaml

from kindlab_twin import binaries
from kindlab_twin.controlplane import COMPONENTS, ControlPlane

from realcp import control_plane, kget, kubectl, require

pytestmark = require((*COMPONENTS, "metallb-controller"))

POOL = """
apiVersion: metallb.io/v1beta1
kind: IPAddressPool
metadata: {name: lab-pool, namespace: metallb-system}
spec: {addresses: [100.64.0.0/16]}
---
apiVersion: metallb.io/v1beta1
kind: L2Advertisement
metadata: {name: lab-l2, namespace: metallb-system}
"""


def wait_for(what: str, fn: Callable[[], str], timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = fn()
        if value:
            return value
        time.sleep(0.5)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def metallb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    root = tmp_path_factory.mktemp("mlb")
    cp = control_plane("mlb", root, {})  # the controller's kubeconfig goes to cp.layout.root
    proc: subprocess.Popen[bytes] | None = None
    try:
        cp.start(timeout=90)
        manifest = binaries.assets_dir("metallb-controller") / "metallb-native.yaml"
        docs = [d for d in yaml.safe_load_all(manifest.read_text())
                if d and d["kind"] != "ValidatingWebhookConfiguration"]
        kubectl(cp, "apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(docs))
        pod = wait_for("the controller pod", lambda: kubectl(
            cp, "-n", "metallb-system", "get", "pods", "-l", "component=controller",
            "-o", "jsonpath={.items[*].metadata.name}").strip())
        token = kubectl(cp, "-n", "metallb-system", "create", "token", "controller").strip()
        kubeconfig = root / "metallb-controller.kubeconfig"
        kubeconfig.write_text(yaml.safe_dump({
            "apiVersion": "v1", "kind": "Config", "current-context": "sa",
            "clusters": [{"name": "mlb", "cluster": {"server": cp.server, "certificate-authority": str(cp.pki.ca_cert)}}],
            "users": [{"name": "controller", "user": {"token": token}}],
            "contexts": [{"name": "sa", "context": {"cluster": "mlb", "user": "controller"}}]}))
        os.chmod(kubeconfig, 0o600)
        env = dict(os.environ, KUBECONFIG=str(kubeconfig), METALLB_NAMESPACE="metallb-system",
                   METALLB_ML_SECRET_NAME="metallb-memberlist", METALLB_DEPLOYMENT="controller", METALLB_POD_NAME=pod)
        with open(root / "metallb-controller.log", "wb") as log:
            proc = subprocess.Popen([str(binaries.binary_path("metallb-controller")), "--webhook-mode=disabled",
                                     "--port=0", "--health-probe-port=0"], env=env, stdout=log,
                                    stderr=subprocess.STDOUT)
        kubectl(cp, "apply", "--server-side", "-f", "-", stdin=POOL)
        yield cp
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(10)
        cp.stop()


def lb_address(cp: ControlPlane, name: str) -> str:
    return kubectl(cp, "get", "service", name, "-o", "jsonpath={.status.loadBalancer.ingress[*].ip}").strip()


def test_the_real_controller_allocates_from_the_pool_in_order(metallb: ControlPlane) -> None:
    kubectl(metallb, "create", "service", "loadbalancer", "first", "--tcp=80:80")
    assert wait_for("first's address", lambda: lb_address(metallb, "first")) == "100.64.0.0"
    kubectl(metallb, "create", "service", "loadbalancer", "second", "--tcp=80:80")
    assert wait_for("second's address", lambda: lb_address(metallb, "second")) == "100.64.0.1"
    events = kget(metallb, "events", "--field-selector", "involvedObject.name=first")["items"]
    assert any(e["reason"] == "IPAllocated" and "100.64.0.0" in e["message"] for e in events)


def test_its_token_carries_only_its_service_account_rights(metallb: ControlPlane) -> None:
    """Asked with the very kubeconfig (the ServiceAccount token) the controller process runs with."""
    def as_controller(*args: str) -> str:
        proc = subprocess.run(["kubectl", "--kubeconfig", str(metallb.layout.root / "metallb-controller.kubeconfig"),
                               *args], capture_output=True, text=True, timeout=30, check=False)
        return proc.stdout.strip()

    whoami = as_controller("auth", "whoami", "-o", "jsonpath={.status.userInfo.username}")
    assert whoami == "system:serviceaccount:metallb-system:controller"
    assert as_controller("auth", "can-i", "update", "services", "--subresource=status") == "yes"
    assert as_controller("auth", "can-i", "list", "secrets", "-A") == "no"
    assert as_controller("auth", "can-i", "list", "ingressclasses") == "no"


def test_the_rendered_controller_rbac_is_upstreams() -> None:
    """The lab's rendered install (source: rendered) grants the controller only rules that
    MetalLB's own manifest, from the same pinned module, grants it."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.cluster import metallb as mlb

    manifest = binaries.assets_dir("metallb-controller") / "metallb-native.yaml"
    upstream = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(manifest.read_text()) if d}

    def rules(doc: dict) -> set[tuple]:
        return {(tuple(r.get("apiGroups", [])), tuple(r.get("resources", [])), tuple(r.get("resourceNames", [])),
                 tuple(r.get("verbs", []))) for r in doc.get("rules") or []}
    rendered = mlb.controller_rbac()
    assert [(d["kind"], d["metadata"]["name"]) for d in rendered if "rules" in d] == [
        ("ClusterRole", "metallb-system:controller"), ("Role", "controller")]
    for doc in rendered:
        up = upstream[(doc["kind"], doc["metadata"]["name"])]
        if "rules" in doc:
            assert rules(doc) <= rules(up), doc["kind"]
        else:
            assert doc["roleRef"] == up["roleRef"] and doc["subjects"] == up["subjects"]
