from __future__ import annotations

import json

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.cluster import kind as kd
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import (
    BinaryNotFound,
    ClusterError,
    EngineUnavailable,
    get_provider,
)

# Samples written for these tests in the shapes the real tools print.

# `docker network inspect kind` on a Linux host: a JSON list, IPv4 and IPv6 IPAM entries
# (kind creates the network with a ULA IPv6 subnet derived from its name).
NETWORK_INSPECT = json.dumps([{
    "Name": "kind",
    "Id": "5e3b1c9f0a7d4e2b8c6f1a3d5e7b9c0d2f4a6b8c0e1d3f5a7b9c1d3e5f7a9b0c",
    "Created": "2026-11-21T20:14:03.118273645Z",
    "Scope": "local",
    "Driver": "bridge",
    "EnableIPv4": True,
    "EnableIPv6": True,
    "IPAM": {
        "Driver": "default",
        "Options": {},
        "Config": [
            {"Subnet": "fc00:f853:ccd:e793::/64", "Gateway": "fc00:f853:ccd:e793::1"},
            {"Subnet": "172.18.0.0/16", "Gateway": "172.18.0.1"},
        ],
    },
    "Internal": False,
    "Attachable": False,
    "Ingress": False,
    "ConfigFrom": {"Network": ""},
    "ConfigOnly": False,
    "Containers": {},
    "Options": {"com.docker.network.bridge.enable_ip_masquerade": "true", "com.docker.network.driver.mtu": "1500"},
    "Labels": {},
}], indent=4)

# Both wordings docker has used for a missing network (stdout is "[]").
NETWORK_MISSING_OLD = "Error response from daemon: network kind not found\n"
NETWORK_MISSING_NEW = "Error: No such network: kind\n"

# `docker info --format '{{json .}}'` with the engine up (trimmed to the fields read).
DOCKER_INFO_UP = json.dumps({
    "ID": "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b", "Containers": 3, "ServerVersion": "29.0.2",
    "OperatingSystem": "Ubuntu 24.04.3 LTS", "OSType": "linux", "ServerErrors": None,
    "ClientInfo": {"Version": "29.0.2", "Context": "default"},
})
# ... and with the engine down: the client still prints JSON, the error is in ServerErrors,
# the same text goes to stderr, and some CLI versions exit 0.
DAEMON_DOWN = "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"
DOCKER_INFO_DOWN = json.dumps({"ID": "", "Containers": 0, "ServerVersion": "", "ServerErrors": [DAEMON_DOWN],
                               "ClientInfo": {"Version": "29.0.2", "Context": "default"}})

# `kind get kubeconfig --name lab` (shortened certificate data).
KUBECONFIG = """apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: LS0tLS1CRUdJTi...
    server: https://127.0.0.1:39461
  name: kind-lab
contexts:
- context:
    cluster: kind-lab
    user: kind-lab
  name: kind-lab
current-context: kind-lab
kind: Config
preferences: {}
users:
- name: kind-lab
  user:
    client-certificate-data: LS0tLS1CRUdJTi...
    client-key-data: LS0tLS1CRUdJTi...
"""


# --- argv ----------------------------------------------------------------------------------


def test_create_argv() -> None:
    assert kd.create_argv("/usr/local/bin/kind", "lab", "/tmp/c.yaml", "/home/u/.kube/config", 300, "kindest/node:v1.35.5@sha256:ab") == [
        "/usr/local/bin/kind", "create", "cluster", "--name", "lab", "--config", "/tmp/c.yaml",
        "--kubeconfig", "/home/u/.kube/config", "--image", "kindest/node:v1.35.5@sha256:ab", "--wait", "300s",
    ]


def test_create_argv_without_wait_or_image() -> None:
    assert kd.create_argv("kind", "lab", "c.yaml", "k", 0, None) == [
        "kind", "create", "cluster", "--name", "lab", "--config", "c.yaml", "--kubeconfig", "k"]


@pytest.fixture(autouse=True)
def _no_network_override(monkeypatch) -> None:
    """The tests choose KIND_EXPERIMENTAL_DOCKER_NETWORK themselves, whatever the caller's shell has."""
    monkeypatch.delenv(kd.KIND_NETWORK_ENV, raising=False)


def test_other_argv() -> None:
    assert kd.get_clusters_argv("kind") == ["kind", "get", "clusters"]
    assert kd.delete_argv("kind", "lab", "/k") == ["kind", "delete", "cluster", "--name", "lab", "--kubeconfig", "/k"]
    assert kd.get_kubeconfig_argv("kind", "lab") == ["kind", "get", "kubeconfig", "--name", "lab"]
    assert kd.export_kubeconfig_argv("kind", "lab", "/k") == ["kind", "export", "kubeconfig", "--name", "lab", "--kubeconfig", "/k"]
    assert kd.docker_info_argv("docker") == ["docker", "info", "--format", "{{json .}}"]
    assert kd.network_inspect_argv("docker") == ["docker", "network", "inspect", "kind"]
    assert kd.network_inspect_argv("docker", "lab-net") == ["docker", "network", "inspect", "lab-net"]


def test_network_name_follows_kind_experimental_docker_network() -> None:
    # kind: an unset or empty variable means the fixed network "kind".
    assert kd.network_name({}) == "kind"
    assert kd.network_name({"KIND_EXPERIMENTAL_DOCKER_NETWORK": ""}) == "kind"
    assert kd.network_name({"KIND_EXPERIMENTAL_DOCKER_NETWORK": "lab-net"}) == "lab-net"


def test_provider_reads_the_network_kind_was_told_to_use(monkeypatch) -> None:
    monkeypatch.setenv("KIND_EXPERIMENTAL_DOCKER_NETWORK", "lab-net")
    missing = "Error response from daemon: network lab-net not found\n"
    run = FakeRun({("network", "inspect"): (1, "[]\n", missing)})
    with pytest.raises(ClusterError, match="the docker network 'lab-net' does not exist"):
        get_provider("kind", run, which).network_subnets()
    assert run.calls == [["/usr/bin/docker", "network", "inspect", "lab-net"]]


# --- parsers --------------------------------------------------------------------------------


def test_parse_clusters() -> None:
    assert kd.parse_clusters("kind\nlab\n") == ["kind", "lab"]
    # none: stdout is empty, the notice is on stderr
    assert kd.parse_clusters("") == []
    # also when a caller merged the streams
    assert kd.parse_clusters("No kind clusters found.\n") == []


def test_parse_network_inspect_reads_both_families_and_the_bridge() -> None:
    net = kd.parse_network_inspect(NETWORK_INSPECT)
    assert net["subnets"] == ["fc00:f853:ccd:e793::/64", "172.18.0.0/16"]
    assert net["bridge"] == "br-5e3b1c9f0a7d"
    assert net["name"] == "kind"


def test_parse_network_inspect_prefers_an_explicit_bridge_name() -> None:
    data = json.loads(NETWORK_INSPECT)
    data[0]["Options"]["com.docker.network.bridge.name"] = "kindbr0"
    assert kd.parse_network_inspect(json.dumps(data))["bridge"] == "kindbr0"


def test_parse_network_inspect_rejects_empty_and_garbage() -> None:
    with pytest.raises(ClusterError, match="was not found"):
        kd.parse_network_inspect("[]")
    with pytest.raises(ClusterError, match="not JSON"):
        kd.parse_network_inspect("Error: No such network: kind")


@pytest.mark.parametrize("stderr", [NETWORK_MISSING_OLD, NETWORK_MISSING_NEW])
def test_network_missing_both_wordings(stderr) -> None:
    assert kd.network_missing(stderr)
    assert not kd.network_missing(DAEMON_DOWN)


def test_docker_info_up() -> None:
    assert kd.parse_docker_info(0, DOCKER_INFO_UP, "") == "Docker 29.0.2 (Ubuntu 24.04.3 LTS)"


@pytest.mark.parametrize("rc", [0, 1])
def test_docker_info_down_even_with_rc_0(rc) -> None:
    with pytest.raises(EngineUnavailable) as exc:
        kd.parse_docker_info(rc, DOCKER_INFO_DOWN, DAEMON_DOWN + "\n")
    assert "the Docker engine does not answer: " + DAEMON_DOWN in str(exc.value)


def test_docker_info_down_old_cli_prints_only_stderr() -> None:
    with pytest.raises(EngineUnavailable, match="Is the docker daemon running"):
        kd.parse_docker_info(1, "", DAEMON_DOWN + "\n")


def test_docker_info_permission_denied() -> None:
    err = ("permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: "
           "Get \"http://%2Fvar%2Frun%2Fdocker.sock/v1.51/info\": dial unix /var/run/docker.sock: connect: permission denied")
    with pytest.raises(EngineUnavailable, match="permission denied"):
        kd.parse_docker_info(1, "", err)


def test_bridge_name() -> None:
    assert kd.bridge_name("5e3b1c9f0a7d4e2b8c6f") == "br-5e3b1c9f0a7d"


# --- the provider with a fake run_command --------------------------------------------------------


class FakeRun:
    def __init__(self, answers: dict[tuple[str, ...], tuple[int, str, str]]) -> None:
        self.answers = answers
        self.calls: list[list[str]] = []

    def __call__(self, argv, data=None):
        self.calls.append(list(argv))
        key = tuple(argv[1:3])
        return self.answers.get(key, (0, "", ""))


def which(name):
    return {"kind": "/usr/local/bin/kind", "docker": "/usr/bin/docker"}.get(name)


def test_provider_checks_docker_and_reads_the_network() -> None:
    run = FakeRun({("info", "--format"): (0, DOCKER_INFO_UP, ""), ("network", "inspect"): (0, NETWORK_INSPECT, "")})
    p = get_provider("kind", run, which)
    assert p.check_available() == "/usr/local/bin/kind with Docker 29.0.2 (Ubuntu 24.04.3 LTS)"
    assert p.network_subnets() == ["fc00:f853:ccd:e793::/64", "172.18.0.0/16"]
    assert run.calls == [["/usr/bin/docker", "info", "--format", "{{json .}}"], ["/usr/bin/docker", "network", "inspect", "kind"]]
    assert p.connect_to("lab") == []


def test_provider_engine_down() -> None:
    run = FakeRun({("info", "--format"): (0, DOCKER_INFO_DOWN, DAEMON_DOWN)})
    with pytest.raises(EngineUnavailable, match="Is the docker daemon running"):
        get_provider("kind", run, which).check_available()


def test_provider_missing_binaries_are_named() -> None:
    with pytest.raises(BinaryNotFound, match="kind_binary: 'kind' was not found on PATH"):
        get_provider("kind", FakeRun({}), lambda n: None).check_available()
    with pytest.raises(BinaryNotFound, match="docker_binary: /opt/nope/docker is not an executable file"):
        get_provider("kind", FakeRun({}), which, {"docker": "/opt/nope/docker"}).check_available()


def test_provider_network_missing() -> None:
    run = FakeRun({("network", "inspect"): (1, "[]\n", NETWORK_MISSING_NEW)})
    with pytest.raises(ClusterError, match="the docker network 'kind' does not exist"):
        get_provider("kind", run, which).network_subnets()


def test_provider_lists_and_deletes() -> None:
    run = FakeRun({("get", "clusters"): (0, "lab\nother\n", "")})
    p = get_provider("kind", run, which)
    assert p.exists("lab") and not p.exists("nope")
    p.delete("lab", "/k")
    assert run.calls[-1] == ["/usr/local/bin/kind", "delete", "cluster", "--name", "lab", "--kubeconfig", "/k"]


def test_provider_get_clusters_failure_says_why() -> None:
    err = ("ERROR: failed to list clusters: command \"docker ps -a --filter label=io.x-k8s.kind.cluster --format "
           "'{{.Label \"io.x-k8s.kind.cluster\"}}'\" failed with error: exit status 1\n")
    run = FakeRun({("get", "clusters"): (1, "", err)})
    with pytest.raises(ClusterError, match="kind get clusters failed \\(rc=1\\): ERROR: failed to list clusters"):
        get_provider("kind", run, which).list_clusters()


def test_provider_create_writes_the_config_for_the_call_only() -> None:
    seen = {}

    def run(argv, data=None):
        path = argv[argv.index("--config") + 1]
        with open(path) as fh:
            seen["config"] = fh.read()
        seen["path"], seen["argv"] = path, argv
        return 0, "", "Creating cluster \"lab\" ...\n"

    get_provider("kind", run, which).create("lab", "kind: Cluster\n", "/k", 60, "img")
    assert seen["config"] == "kind: Cluster\n"
    assert seen["argv"][-4:] == ["--image", "img", "--wait", "60s"]
    import os

    assert not os.path.exists(seen["path"])


def test_provider_kubeconfig() -> None:
    run = FakeRun({("get", "kubeconfig"): (0, KUBECONFIG, "")})
    assert "name: kind-lab" in get_provider("kind", run, which).kubeconfig("lab")


# --- cgroup version and kind load ------------------------------------------------------------

# `docker info --format '{{json .}}'` of an engine on a cgroup v1 host (trimmed), and of
# Docker Desktop (its VM runs cgroup v2).
DOCKER_INFO_V1 = json.dumps({"ServerVersion": "20.10.24+dfsg1", "OperatingSystem": "Debian GNU/Linux 12 (bookworm)",
                             "OSType": "linux", "Driver": "overlay2", "CgroupDriver": "cgroupfs", "CgroupVersion": "1",
                             "ServerErrors": None})
DOCKER_INFO_DESKTOP = json.dumps({"ServerVersion": "29.0.1", "OperatingSystem": "Docker Desktop", "OSType": "linux",
                                  "CgroupDriver": "cgroupfs", "CgroupVersion": "2", "ServerErrors": None})


def test_parse_cgroup_version() -> None:
    assert kd.parse_cgroup_version(DOCKER_INFO_V1) == "1"
    assert kd.parse_cgroup_version(DOCKER_INFO_DESKTOP) == "2"
    assert kd.parse_cgroup_version(DOCKER_INFO_UP) is None  # an engine that does not say
    assert kd.parse_cgroup_version("WARNING: bridge-nf-call-iptables is disabled\n" + DOCKER_INFO_V1) == "1"
    assert kd.parse_cgroup_version("not json") is None


def test_load_argv() -> None:
    assert kd.load_argv("kind", "lab", ["nginx:1.29.3", "busybox:1.37"]) == [
        "kind", "load", "docker-image", "nginx:1.29.3", "busybox:1.37", "--name", "lab"]


# kind v0.32's stderr for `kind load docker-image` of two images on a two-node cluster.
KIND_LOAD_STDERR = """\
Image: "nginx:1.29.3" with ID "sha256:%s" not yet present on node "lab-control-plane", loading...
Image: "nginx:1.29.3" with ID "sha256:%s" not yet present on node "lab-worker", loading...
Image: "quay.io/metallb/speaker:v0.16.1" with ID "sha256:%s" found to be already present on all nodes.
""" % ("a1" * 32, "a1" * 32, "b2" * 32)


def test_parse_load_output() -> None:
    assert kd.parse_load_output(KIND_LOAD_STDERR) == {
        "loaded": ["nginx:1.29.3"], "present": ["quay.io/metallb/speaker:v0.16.1"],
        "nodes": ["lab-control-plane", "lab-worker"]}
    assert kd.parse_load_output("") == {"loaded": [], "present": [], "nodes": []}


def test_adapt_config_patches_every_node_on_cgroup_v1_only() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import CGROUP_V1_PATCH, render_kind_config

    config = render_kind_config(2, "kindest/node:v1.35.5")
    provider = get_provider("kind", lambda argv, **kw: (0, DOCKER_INFO_V1, ""), lambda name: "/usr/bin/" + name)
    provider.check_available()
    patched, notes = provider.adapt_config(config)
    assert [n["kubeadmConfigPatches"] for n in patched["nodes"]] == [[CGROUP_V1_PATCH]] * 3
    assert "kubeadmConfigPatches" not in config["nodes"][0]  # the input is left as it was
    assert len(notes) == 1 and "cgroup v1" in notes[0]
    assert provider.adapt_config(patched)[0] == patched  # patching twice adds nothing
    provider = get_provider("kind", lambda argv, **kw: (0, DOCKER_INFO_DESKTOP, ""), lambda name: "/usr/bin/" + name)
    provider.check_available()
    assert provider.adapt_config(config) == (config, [])


def test_why_unavailable_names_every_missing_piece() -> None:
    down = FakeRun({("info", "--format"): (0, DOCKER_INFO_DOWN, DAEMON_DOWN)})
    reasons = get_provider("kind", down, lambda n: "/usr/bin/docker" if n == "docker" else None).why_unavailable()
    assert reasons[0].startswith("kind_binary: 'kind' was not found on PATH")
    assert reasons[1].startswith("the Docker engine does not answer: ") and len(reasons) == 2
    both = get_provider("kind", FakeRun({}), lambda n: None).why_unavailable()
    assert [r.split(":")[0] for r in both] == ["kind_binary", "docker_binary"]
    up = FakeRun({("info", "--format"): (0, DOCKER_INFO_UP, "")})
    assert get_provider("kind", up, which).why_unavailable() == []
