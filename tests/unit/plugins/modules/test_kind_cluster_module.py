from __future__ import annotations

import json
import stat
from typing import Any

import pytest
import yaml
from ansible.module_utils import basic

from ansible_collections.kindlab.ingress.plugins.module_utils import _module
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import KIND_NODE_IMAGE
from ansible_collections.kindlab.ingress.plugins.modules import kind_cluster
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, exit_json, fail_json, run_module

DOCKER_UP = json.dumps({"ServerVersion": "29.0.2", "OperatingSystem": "Ubuntu 24.04.3 LTS", "ServerErrors": None,
                        "CgroupDriver": "systemd", "CgroupVersion": "2"})
# The engine of a cgroup v1 host (cgroupfs driver, CgroupVersion "1"), trimmed.
DOCKER_UP_V1 = json.dumps({"ServerVersion": "20.10.24+dfsg1", "OperatingSystem": "Debian GNU/Linux 12 (bookworm)",
                           "ServerErrors": None, "CgroupDriver": "cgroupfs", "CgroupVersion": "1"})
IMAGE_ID = "sha256:" + "5e" * 32
DOCKER_DOWN = json.dumps({"ServerVersion": "", "ServerErrors": [
    "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"]})
NETWORK = json.dumps([{"Name": "kind", "Id": "5e3b1c9f0a7d4e2b8c6f1a3d", "IPAM": {"Driver": "default", "Config": [
    {"Subnet": "fc00:f853:ccd:e793::/64", "Gateway": "fc00:f853:ccd:e793::1"},
    {"Subnet": "172.18.0.0/16", "Gateway": "172.18.0.1"}]}}])


class FakeEngine:
    """Answers kind/docker/kindlab-twin argv like the real tools; records every call."""

    def __init__(self, clusters=(), docker_up=True):
        self.clusters = list(clusters)
        self.docker_up = docker_up
        self.calls: list[list[str]] = []
        self.configs: list[dict] = []
        self.cgroup_v1 = False
        self.node_images: set[str] = set()

    def __call__(self, module, argv, **kw):
        self.calls.append(list(argv))
        verb = argv[1:3]
        if verb == ["info", "--format"]:
            if not self.docker_up:
                return 0, DOCKER_DOWN, DOCKER_DOWN
            return 0, DOCKER_UP_V1 if self.cgroup_v1 else DOCKER_UP, ""
        if verb == ["network", "inspect"]:
            return (0, NETWORK, "") if self.clusters else (1, "[]", "Error: No such network: kind")
        if verb == ["get", "clusters"]:
            if not self.clusters:
                return 0, "", "No kind clusters found.\n"
            return 0, "".join(c + "\n" for c in self.clusters), ""
        if verb == ["create", "cluster"]:
            with open(argv[argv.index("--config") + 1]) as fh:
                self.configs.append(yaml.safe_load(fh))
            self.clusters.append(argv[argv.index("--name") + 1])
            kubeconfig = argv[argv.index("--kubeconfig") + 1]
            with open(kubeconfig, "w") as fh:
                yaml.safe_dump({"contexts": [{"name": "kind-" + self.clusters[-1]}]}, fh)
            return 0, "", ""
        if verb == ["delete", "cluster"]:
            self.clusters.remove(argv[argv.index("--name") + 1])
            return 0, "", ""
        if verb == ["load", "docker-image"]:
            # kind's logger writes to stderr, one line per image (per node when it loads).
            name = argv[argv.index("--name") + 1]
            lines = []
            for image in argv[3:argv.index("--name")]:
                if image in self.node_images:
                    lines.append('Image: "%s" with ID "%s" found to be already present on all nodes.' % (image, IMAGE_ID))
                else:
                    lines.append('Image: "%s" with ID "%s" not yet present on node "%s-control-plane", loading...'
                                 % (image, IMAGE_ID, name))
                    self.node_images.add(image)
            return 0, "", "".join(line + "\n" for line in lines)
        if verb == ["get", "connect-to"]:
            return 0, "100.64.0.1:80:127.0.0.1:41234\n", ""
        raise AssertionError("unexpected argv %r" % argv)

    def changing_calls(self):
        return [c for c in self.calls if c[1] in ("create", "delete", "export")]


def node(name, ip, cp=False):
    return {"metadata": {"name": name, "labels": {"node-role.kubernetes.io/control-plane": ""} if cp else {}},
            "status": {"addresses": [{"type": "InternalIP", "address": ip}]}}


class FakeClient:
    instances: list[tuple] = []

    def __init__(self, kubeconfig=None, context=None):
        FakeClient.instances.append((kubeconfig, context))

    def list(self, api_version, kind, **kw):
        return [node("lab-control-plane", "172.18.0.3", True), node("lab-worker", "172.18.0.2"), node("lab-worker2", "172.18.0.4")]

    def get(self, *a, **k):
        return None


@pytest.fixture
def engine(monkeypatch, tmp_path):
    eng = FakeEngine()

    def run_command(self, argv, **kwargs):
        return eng(self, argv, **kwargs)

    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    monkeypatch.setattr(basic.AnsibleModule, "get_bin_path", lambda self, name, *a, **k: "/usr/bin/" + name)
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail_json)
    monkeypatch.setattr(_module, "Client", FakeClient)
    FakeClient.instances = []
    return eng


def run(args: dict[str, Any]) -> Exit:
    return run_module(kind_cluster.main, args)


def test_create_then_idempotent(engine, tmp_path) -> None:
    args = {"name": "lab", "provider": "kind", "kubeconfig": str(tmp_path / "kubeconfig"), "wait_timeout": 120}
    first = run(args)
    assert not first.failed, first.result
    r = first.result
    assert r["changed"] is True and r["provider"] == "kind" and r["context"] == "kind-lab"
    assert r["capabilities"]["runs_real_controllers"] and r["capabilities"]["nodes_on_host_bridge"]
    create = engine.changing_calls()[0]
    assert create[:5] == ["/usr/bin/kind", "create", "cluster", "--name", "lab"]
    assert create[-4:] == ["--image", KIND_NODE_IMAGE, "--wait", "120s"]
    assert [n["role"] for n in engine.configs[0]["nodes"]] == ["control-plane", "worker", "worker"]
    assert r["node_subnets"] == ["fc00:f853:ccd:e793::/64", "172.18.0.0/16"]
    assert r["nodes"][0] == {"name": "lab-control-plane", "role": "control-plane", "internal_ip": "172.18.0.3", "internal_ips": ["172.18.0.3"]}
    assert r["connect_to"] == [] and r["pod_subnets"] == ["10.244.0.0/16"]
    assert FakeClient.instances == [(str(tmp_path / "kubeconfig"), "kind-lab")]

    second = run(args)
    assert second.result["changed"] is False
    assert len(engine.changing_calls()) == 1  # no second create


def test_check_mode_creates_nothing(engine, tmp_path) -> None:
    r = run({"name": "lab", "provider": "kind", "kubeconfig": str(tmp_path / "k"), "_ansible_check_mode": True}).result
    assert r["changed"] is True and engine.changing_calls() == [] and engine.clusters == []
    assert [n["name"] for n in r["nodes"]] == ["lab-control-plane", "lab-worker", "lab-worker2"]
    assert FakeClient.instances == []


def test_absent(engine, tmp_path) -> None:
    engine.clusters = ["lab"]
    r = run({"name": "lab", "state": "absent", "provider": "kind", "kubeconfig": str(tmp_path / "k"), "_ansible_check_mode": True}).result
    assert r["changed"] is True and engine.clusters == ["lab"]
    r = run({"name": "lab", "state": "absent", "provider": "kind", "kubeconfig": str(tmp_path / "k")}).result
    assert r["changed"] is True and engine.clusters == []
    assert engine.changing_calls()[-1] == ["/usr/bin/kind", "delete", "cluster", "--name", "lab", "--kubeconfig", str(tmp_path / "k")]
    assert run({"name": "lab", "state": "absent", "provider": "kind", "kubeconfig": str(tmp_path / "k")}).result["changed"] is False


def test_auto_falls_back_to_the_twin_and_says_why(engine, tmp_path) -> None:
    engine.docker_up = False
    twin = tmp_path / "kindlab-twin"
    twin.write_text("#!/bin/sh\n")
    twin.chmod(twin.stat().st_mode | stat.S_IXUSR)
    r = run({"name": "lab", "kubeconfig": str(tmp_path / "k"), "twin_binary": str(twin), "time_scale": 60}).result
    assert r["provider"] == "twin"
    assert "Cannot connect to the Docker daemon" in r["provider_reason"]
    assert r["capabilities"]["scales_time"] and r["capabilities"]["reached_through_connect_to"]
    create = engine.changing_calls()[0]
    assert create[0] == str(twin) and create[-2:] == ["--time-scale", "60"]
    assert r["node_subnets"] == ["172.18.0.0/16"] and r["connect_to"] == ["100.64.0.1:80:127.0.0.1:41234"]


def test_engine_down_with_provider_kind_fails_clearly(engine, tmp_path) -> None:
    engine.docker_up = False
    r = run({"name": "lab", "provider": "kind", "kubeconfig": str(tmp_path / "k")})
    assert r.failed and "the Docker engine does not answer: Cannot connect to the Docker daemon" in r.result["msg"]
    assert engine.changing_calls() == []


@pytest.mark.parametrize(
    "args, message",
    [
        ({"name": "Lab"}, "name: 'Lab' is not a valid kind cluster name"),
        ({"workers": -2}, "workers: expected an integer from 0 to 20"),
        ({"kind_config": {"networking": {"podSubnet": "10.244.0.0/33"}}}, "kind_config.networking.podSubnet"),
        ({"time_scale": 10}, "time_scale: only the twin provider takes it (the provider is kind)"),
        ({"time_scale": 0, "provider": "twin"}, "time_scale: expected a number greater than 0"),
    ],
)
def test_invalid_input_fails_before_any_command(engine, tmp_path, args, message) -> None:
    r = run({"provider": "kind", "kubeconfig": str(tmp_path / "k"), **args})
    assert r.failed and message in r.result["msg"]
    assert engine.changing_calls() == []


def test_auto_picking_kind_ignores_time_scale(engine, tmp_path) -> None:
    r = run({"name": "lab", "kubeconfig": str(tmp_path / "k"), "time_scale": 1})
    assert not r.failed and r.result["provider"] == "kind"
    assert "--time-scale" not in engine.changing_calls()[0]


def test_cgroup_v1_engine_gets_fail_cgroup_v1_false_on_every_node(engine, tmp_path, monkeypatch) -> None:
    warnings: list[str] = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, msg: warnings.append(msg))
    engine.cgroup_v1 = True
    r = run({"name": "lab", "provider": "kind", "workers": 1, "kubeconfig": str(tmp_path / "k")})
    assert not r.failed, r.result
    created = engine.configs[0]
    assert [n["kubeadmConfigPatches"] for n in created["nodes"]] == [
        ["kind: KubeletConfiguration\nfailCgroupV1: false\n"]] * 2
    assert r.result["config"] == created
    assert any("cgroup v1" in w and "failCgroupV1: false" in w for w in warnings)


def test_cgroup_v1_patch_keeps_the_users_patches(engine, tmp_path) -> None:
    engine.cgroup_v1 = True
    user_patch = "kind: InitConfiguration\nnodeRegistration:\n  kubeletExtraArgs:\n    node-labels: ingress-ready=true\n"
    r = run({"name": "lab", "provider": "kind", "kubeconfig": str(tmp_path / "k"),
             "kind_config": {"nodes": [{"role": "control-plane", "kubeadmConfigPatches": [user_patch]}]}})
    assert not r.failed, r.result
    assert engine.configs[0]["nodes"][0]["kubeadmConfigPatches"] == [
        user_patch, "kind: KubeletConfiguration\nfailCgroupV1: false\n"]


def test_cgroup_v2_engine_is_left_alone(engine, tmp_path) -> None:
    run({"name": "lab", "provider": "kind", "kubeconfig": str(tmp_path / "k")})
    assert all("kubeadmConfigPatches" not in n for n in engine.configs[0]["nodes"])


def test_load_images_after_create_then_idempotent(engine, tmp_path) -> None:
    args = {"name": "lab", "provider": "kind", "kubeconfig": str(tmp_path / "k"),
            "load_images": ["registry.example.com/mirror/nginx:1.29.3", "quay.io/metallb/controller:v0.16.1"]}
    check = run(dict(args, _ansible_check_mode=True)).result
    assert check["changed"] is True and engine.changing_calls() == []
    assert check["images_loaded"]["msg"].startswith("would run: /usr/bin/kind load docker-image")
    first = run(args).result
    loads = [c for c in engine.calls if c[1] == "load"]
    assert loads == [["/usr/bin/kind", "load", "docker-image", "registry.example.com/mirror/nginx:1.29.3",
                      "quay.io/metallb/controller:v0.16.1", "--name", "lab"]]
    assert engine.calls.index(loads[0]) > engine.calls.index(engine.changing_calls()[0])  # after the create
    assert first["images_loaded"]["loaded"] == ["quay.io/metallb/controller:v0.16.1", "registry.example.com/mirror/nginx:1.29.3"]
    assert first["images_loaded"]["nodes"] == ["lab-control-plane"]
    second = run(args).result
    assert second["changed"] is False and second["images_loaded"]["present"] == args["load_images"]
    assert second["images_loaded"]["msg"].startswith("every node already has")


def test_bad_load_images_fail_before_any_command(engine, tmp_path) -> None:
    r = run({"name": "lab", "provider": "kind", "kubeconfig": str(tmp_path / "k"), "load_images": ["nginx 1.29"]})
    assert r.failed and r.result["msg"].startswith("load_images[0]: expected an image reference")
    assert engine.calls == []


def test_the_twin_skips_load_images_and_says_so(engine, tmp_path, monkeypatch) -> None:
    warnings: list[str] = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, msg: warnings.append(msg))
    twin = tmp_path / "kindlab-twin"
    twin.write_text("#!/bin/sh\n")
    twin.chmod(twin.stat().st_mode | stat.S_IXUSR)
    r = run({"name": "lab", "provider": "twin", "kubeconfig": str(tmp_path / "k"), "twin_binary": str(twin),
             "load_images": ["nginx:1.29.3"]}).result
    assert r["images_loaded"]["skipped"] is True and not [c for c in engine.calls if c[1] == "load"]
    assert warnings == ["the twin backend does not load images (nginx:1.29.3): its pods run no images"]
