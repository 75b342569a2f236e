from __future__ import annotations

import io
from typing import Any

import pytest
from ansible.module_utils import basic

from ansible_collections.kindlab.ingress.plugins.module_utils import _module
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import METALLB_MANIFEST_URL
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster import metallb as _metallb
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster import runner as _runner
from ansible_collections.kindlab.ingress.plugins.modules import metallb
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.cluster.test_metallb import FakeClient
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, exit_json, fail_json, run_module

KIND_RESULT = {"node_subnets": ["fc00:f853:ccd:e793::/64", "172.18.0.0/16"], "pod_subnets": ["10.244.0.0/16"],
               "service_subnets": ["10.96.0.0/16"], "kubeconfig": "/tmp/kubeconfig", "context": "kind-lab"}

UPSTREAM = b"""---
apiVersion: v1
kind: Namespace
metadata:
  name: metallb-system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: controller
  namespace: metallb-system
spec:
  selector:
    matchLabels: {app: metallb, component: controller}
  template:
    metadata:
      labels: {app: metallb, component: controller}
    spec:
      containers:
      - name: controller
        image: quay.io/metallb/controller:v0.16.1
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ipaddresspools.metallb.io
"""


@pytest.fixture
def cluster(monkeypatch):
    client = FakeClient(webhook_failures=1)
    made: list[tuple] = []
    downloads: list[str] = []

    def make_client(kubeconfig=None, context=None):
        made.append((kubeconfig, context))
        return client

    def open_url(url, timeout=30):
        downloads.append(url)
        return io.BytesIO(UPSTREAM)

    monkeypatch.setattr(_module, "Client", make_client)
    monkeypatch.setattr(_runner, "open_url", open_url)
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    monkeypatch.setattr(_runner, "ensure_metallb", _fast(_metallb.ensure_metallb))
    client.made, client.downloads = made, downloads
    return client


def _fast(fn):
    """No real sleeping in the webhook retry."""
    def wrapper(*args, **kwargs):
        now = [0.0]

        def sleep(s):
            now[0] += s
        return fn(*args, sleep=sleep, clock=lambda: now[0], **kwargs)
    return wrapper


def run(args: dict[str, Any]) -> Exit:
    return run_module(metallb.main, args)


POOLS = [{"name": "lab", "addresses": ["100.64.0.0/16"]}]


def test_rendered_install_then_idempotent(cluster) -> None:
    args = {"source": "rendered", "cluster": KIND_RESULT, "pools": POOLS, "host_access": True}
    first = run(args)
    assert not first.failed, first.result
    r = first.result
    assert r["changed"] is True and r["source"] == "rendered"
    assert r["host_access"][0]["cidr"] == "100.64.255.254/16"
    assert r["pools"][0]["addresses"] == ["100.64.0.1-100.64.255.253"] and r["pools"][0]["size"] == 65533
    assert r["declared_pools"][0]["addresses"] == ["100.64.0.0/16"]
    assert cluster.made == [("/tmp/kubeconfig", "kind-lab")] and cluster.downloads == []
    assert run(args).result["changed"] is False


def test_upstream_downloads_the_pinned_manifest(cluster) -> None:
    r = run({"cluster": KIND_RESULT, "pools": POOLS}).result
    assert cluster.downloads == [METALLB_MANIFEST_URL]
    assert "Deployment metallb-system/controller" in [o["ref"] for o in r["objects"]]


def test_check_mode_writes_nothing(cluster) -> None:
    r = run({"source": "rendered", "cluster": KIND_RESULT, "pools": POOLS, "_ansible_check_mode": True}).result
    assert r["changed"] is True and cluster.store == {}


@pytest.mark.parametrize(
    "pools, message",
    [
        ([{"name": "lab", "addresses": ["10.96.0.0/24"]}], "overlaps the service CIDR 10.96.0.0/16"),
        ([{"name": "lab", "addresses": ["100.64.0.9-100.64.0.1"]}], "the range starts after it ends"),
        ([{"name": "a", "addresses": ["100.64.0.0/16"]}, {"name": "b", "addresses": ["100.64.1.0/24"]}], "pools 'a' and 'b' overlap"),
    ],
)
def test_bad_pools_fail_before_the_cluster_is_touched(cluster, pools, message) -> None:
    r = run({"source": "rendered", "cluster": KIND_RESULT, "pools": pools})
    assert r.failed and message in r.result["msg"]
    assert cluster.made == [] and cluster.downloads == []


def test_network_option_aliases(cluster) -> None:
    r = run({"source": "rendered", "pools": [{"name": "lab", "addresses": ["172.18.255.200-172.18.255.250"]}],
             "node_networks": ["172.18.0.0/16"], "pod_subnet": "10.244.0.0/16", "service_subnet": "10.96.0.0/16"})
    assert r.failed and "overlaps the node network 172.18.0.0/16" in r.result["msg"]


def _image(store, kind, name):
    return store[(kind, "metallb-system", name)]["spec"]["template"]["spec"]["containers"][0]["image"]


def test_upstream_manifest_runs_the_given_images(cluster, monkeypatch) -> None:
    warnings: list[str] = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, msg: warnings.append(msg))
    mirror = "registry.example.com/mirror/metallb/controller:v0.16.1"
    r = run({"cluster": KIND_RESULT, "pools": POOLS, "controller_image": mirror,
             "speaker_image": "registry.example.com/mirror/metallb/speaker:v0.16.1"})
    assert not r.failed, r.result
    assert _image(cluster.store, "Deployment", "controller") == mirror
    # The trimmed manifest has no speaker: the speaker image replaced nothing, and the module says so.
    assert any("quay.io/metallb/speaker:v0.16.1" in w and "replaced nothing" in w for w in warnings)


def test_rendered_objects_run_the_given_images(cluster) -> None:
    r = run({"source": "rendered", "cluster": KIND_RESULT, "pools": POOLS,
             "controller_image": "controller-local:dev", "speaker_image": "speaker-local:dev"})
    assert not r.failed, r.result
    assert _image(cluster.store, "Deployment", "controller") == "controller-local:dev"
    assert _image(cluster.store, "DaemonSet", "speaker") == "speaker-local:dev"


def test_a_bad_image_fails_before_the_cluster_is_touched(cluster) -> None:
    r = run({"source": "rendered", "cluster": KIND_RESULT, "pools": POOLS, "speaker_image": "Speaker:1"})
    assert r.failed and r.result["msg"].startswith("speaker_image: expected an image reference")
    assert cluster.store == {}
