from __future__ import annotations

import json

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils.cluster import providers as cl
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster import kind as _kind
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster import twin as _twin
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import ClusterError

# Importing the providers registers them.
PROVIDERS = (_kind.KindProvider, _twin.TwinProvider)
IMAGE = "kindest/node:v1.35.5@sha256:ce977ae6d65918d0b58a5f8b5e940429c2ce42fa3a5619ec2bbc60b949c0ac95"


# --- kind config -------------------------------------------------------------------------------


def test_default_config_has_a_control_plane_and_two_workers() -> None:
    config = cl.render_kind_config(None, IMAGE)
    assert config == {
        "kind": "Cluster",
        "apiVersion": "kind.x-k8s.io/v1alpha4",
        "nodes": [{"role": "control-plane", "image": IMAGE}, {"role": "worker", "image": IMAGE}, {"role": "worker", "image": IMAGE}],
    }


def test_workers_count() -> None:
    assert [n["role"] for n in cl.render_kind_config(0, IMAGE)["nodes"]] == ["control-plane"]
    assert len(cl.render_kind_config(4, IMAGE)["nodes"]) == 5


def test_user_config_is_deep_merged() -> None:
    user = {"name": "ignored-by-kind-cli", "networking": {"podSubnet": "10.100.0.0/16", "kubeProxyMode": "nftables"},
            "featureGates": {"X": True}, "kubeadmConfigPatches": ["kind: ClusterConfiguration\n"]}
    config = cl.render_kind_config(1, IMAGE, user)
    assert config["networking"] == {"podSubnet": "10.100.0.0/16", "kubeProxyMode": "nftables"}
    assert config["featureGates"] == {"X": True} and config["kubeadmConfigPatches"] == ["kind: ClusterConfiguration\n"]
    assert len(config["nodes"]) == 2
    assert user["networking"] == {"podSubnet": "10.100.0.0/16", "kubeProxyMode": "nftables"}  # not mutated


def test_user_nodes_replace_the_generated_ones_and_get_the_image() -> None:
    nodes = [{"role": "control-plane", "extraPortMappings": [{"containerPort": 30080, "hostPort": 8080}]},
             {"role": "worker", "image": "kindest/node:custom"}]
    config = cl.render_kind_config(None, IMAGE, {"nodes": nodes})
    assert config["nodes"] == [
        {"role": "control-plane", "extraPortMappings": [{"containerPort": 30080, "hostPort": 8080}], "image": IMAGE},
        {"role": "worker", "image": "kindest/node:custom"},
    ]


def test_deep_merge() -> None:
    assert cl.deep_merge({"a": {"b": 1, "c": [1]}}, {"a": {"c": [2], "d": 3}}) == {"a": {"b": 1, "c": [2], "d": 3}}


@pytest.mark.parametrize(
    "workers, user, message",
    [
        (-1, None, "workers: expected an integer from 0 to 20"),
        (True, None, "workers: expected an integer from 0 to 20"),
        (1, {"nodes": [{"role": "control-plane"}]}, "workers: cannot be combined with kind_config.nodes"),
        (None, {"nodes": []}, "kind_config.nodes: expected a non-empty list"),
        (None, {"nodes": [{"role": "master"}]}, "kind_config.nodes[0].role: expected one of control-plane, worker"),
        (None, {"nodes": [{"role": "worker"}]}, "at least one node must have role control-plane"),
        (None, {"kind": "Config"}, "kind_config.kind: expected 'Cluster'"),
        (None, {"apiVersion": "kind.x-k8s.io/v1alpha3"}, "kind_config.apiVersion: expected 'kind.x-k8s.io/v1alpha4'"),
        (None, {"networking": {"podSubnet": "10.244.0.0"}}, "kind_config.networking.podSubnet: '10.244.0.0' is not a valid CIDR"),
        (None, {"networking": {"serviceSubnet": "10.96.0.1/16"}}, "kind_config.networking.serviceSubnet: '10.96.0.1/16' is not a valid CIDR"),
        (None, {"networking": {"ipFamily": "ipv5"}}, "kind_config.networking.ipFamily: expected one of ipv4, ipv6, dual"),
        (None, {"networking": []}, "kind_config.networking: expected a mapping"),
        (None, ["nodes"], "kind_config: expected a mapping"),
    ],
)
def test_rejected_configs(workers, user, message) -> None:
    with pytest.raises(ClusterError) as exc:
        cl.render_kind_config(workers, IMAGE, user)
    assert message in str(exc.value)


def test_subnets_read_back() -> None:
    assert cl.cluster_subnets(cl.render_kind_config(None, IMAGE)) == {"pod": ["10.244.0.0/16"], "service": ["10.96.0.0/16"]}
    dual = cl.render_kind_config(None, IMAGE, {"networking": {"ipFamily": "dual"}})
    assert cl.cluster_subnets(dual) == {"pod": ["10.244.0.0/16", "fd00:10:244::/56"], "service": ["10.96.0.0/16", "fd00:10:96::/112"]}
    custom = cl.render_kind_config(None, IMAGE, {"networking": {"podSubnet": "10.100.0.0/16,fd00:100::/56", "serviceSubnet": "10.200.0.0/16"}})
    assert cl.cluster_subnets(custom) == {"pod": ["10.100.0.0/16", "fd00:100::/56"], "service": ["10.200.0.0/16"]}
    v6 = cl.render_kind_config(None, IMAGE, {"networking": {"ipFamily": "ipv6"}})
    assert cl.cluster_subnets(v6) == {"pod": ["fd00:10:244::/56"], "service": ["fd00:10:96::/112"]}


def test_planned_nodes_follow_kind_naming() -> None:
    config = cl.render_kind_config(None, IMAGE, {"nodes": [{"role": "control-plane"}, {"role": "control-plane"}, {"role": "worker"}, {"role": "worker"}]})
    assert [n["name"] for n in cl.planned_nodes("lab", config)] == [
        "lab-control-plane", "lab-control-plane2", "lab-worker", "lab-worker2"]


@pytest.mark.parametrize("name", ["Lab", "lab_1", "", "lab cluster", None])
def test_invalid_cluster_names(name) -> None:
    with pytest.raises(ClusterError, match="is not a valid kind cluster name"):
        cl.validate_cluster_name(name)


def test_node_summary() -> None:
    node = {"metadata": {"name": "lab-control-plane", "labels": {"node-role.kubernetes.io/control-plane": ""}},
            "status": {"addresses": [{"type": "InternalIP", "address": "172.18.0.3"},
                                     {"type": "InternalIP", "address": "fc00:f853:ccd:e793::3"},
                                     {"type": "Hostname", "address": "lab-control-plane"}]}}
    assert cl.node_summary(node) == {"name": "lab-control-plane", "role": "control-plane", "internal_ip": "172.18.0.3",
                                     "internal_ips": ["172.18.0.3", "fc00:f853:ccd:e793::3"]}
    assert cl.node_summary({"metadata": {"name": "w"}})["role"] == "worker"


def test_default_kubeconfig_path(tmp_path) -> None:
    present = tmp_path / "two"
    present.write_text("")
    missing = str(tmp_path / "one")
    # kind's pathForMerge: the first entry that exists, not merely the first entry.
    assert cl.default_kubeconfig_path({"KUBECONFIG": "%s:%s" % (missing, present), "HOME": "/h"}) == str(present)
    assert cl.default_kubeconfig_path({"HOME": "/h"}) == "/h/.kube/config"


# --- detect_backend -----------------------------------------------------------------------------

DOCKER_UP = json.dumps({"ServerVersion": "29.0.2", "OperatingSystem": "Ubuntu 24.04.3 LTS", "ServerErrors": None})
DOCKER_DOWN = json.dumps({"ServerVersion": "", "ServerErrors": [
    "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?"]})


def which_all(name):
    return "/usr/bin/" + name


def test_detect_kind_when_docker_answers() -> None:
    backend = cl.detect_backend(lambda argv, data=None: (0, DOCKER_UP, ""), which_all)
    assert backend.name == "kind"
    assert backend.reason == "using kind: /usr/bin/kind with Docker 29.0.2 (Ubuntu 24.04.3 LTS); helm /usr/bin/helm"


def test_detect_twin_when_helm_is_missing() -> None:
    # The kind path installs the controllers with helm: without it, auto must not pick kind
    # (it would fail only after the cluster exists).
    backend = cl.detect_backend(lambda argv, data=None: (0, DOCKER_UP, ""), lambda n: None if n == "helm" else "/usr/bin/" + n)
    assert backend.name == "twin"
    assert "helm_binary: 'helm' was not found on PATH" in backend.reason


def test_detect_uses_the_given_helm_binary(tmp_path) -> None:
    helm = tmp_path / "helm"
    helm.write_text("#!/bin/sh\n")
    helm.chmod(0o755)
    backend = cl.detect_backend(lambda argv, data=None: (0, DOCKER_UP, ""), lambda n: None if n == "helm" else "/usr/bin/" + n,
                                {"helm": str(helm)})
    assert backend.name == "kind" and backend.reason.endswith("helm %s" % helm)


def test_detect_twin_when_docker_is_down() -> None:
    backend = cl.detect_backend(lambda argv, data=None: (0, DOCKER_DOWN, ""), which_all)
    assert backend.name == "twin"
    assert "the Docker engine does not answer: Cannot connect to the Docker daemon" in backend.reason


def test_detect_twin_when_kind_is_missing() -> None:
    backend = cl.detect_backend(lambda argv, data=None: (0, DOCKER_UP, ""), lambda n: None if n == "kind" else "/usr/bin/" + n)
    assert backend.name == "twin" and "kind_binary: 'kind' was not found on PATH" in backend.reason


def test_detect_twin_when_docker_is_missing() -> None:
    backend = cl.detect_backend(lambda argv, data=None: (0, DOCKER_UP, ""), lambda n: None if n == "docker" else "/usr/bin/" + n)
    assert backend.name == "twin" and "docker_binary" in backend.reason


def test_unknown_provider() -> None:
    with pytest.raises(ClusterError, match="provider: 'podman' is not one of kind, twin"):
        cl.get_provider("podman", lambda argv, data=None: (0, "", ""), which_all)


# --- capabilities and resolve_backend -----------------------------------------------------------


def test_each_provider_states_what_its_clusters_can_do() -> None:
    kind, twin = cl.provider_class("kind").capabilities, cl.provider_class("twin").capabilities
    assert kind == cl.Capabilities(runs_real_controllers=True, scales_time=False, nodes_on_host_bridge=True,
                                   reached_through_connect_to=False)
    assert twin == cl.Capabilities(runs_real_controllers=False, scales_time=True, nodes_on_host_bridge=False,
                                   reached_through_connect_to=True)
    assert twin.as_dict() == {"runs_real_controllers": False, "scales_time": True, "nodes_on_host_bridge": False,
                              "reached_through_connect_to": True}


def test_a_provider_without_capabilities_is_not_registered() -> None:
    class Silent(cl.ClusterProvider):
        name = "silent"

    with pytest.raises(TypeError, match="Silent must state its Capabilities"):
        cl.register(Silent)
    assert "silent" not in cl.provider_names()


def test_resolve_backend_detects_auto_and_takes_a_name_as_asked() -> None:
    def refuse(argv, data=None):
        raise AssertionError("a provider asked by name needs no command: %r" % argv)

    assert cl.resolve_backend("twin", refuse, which_all) == cl.Backend("twin", "provider twin was asked for")
    assert cl.resolve_backend("kind", refuse, which_all).name == "kind"
    assert cl.resolve_backend("auto", lambda argv, data=None: (0, DOCKER_DOWN, ""), which_all).name == "twin"
    with pytest.raises(ClusterError, match="provider: 'podman' is not one of kind, twin"):
        cl.resolve_backend("podman", refuse, which_all)


# --- ensure_cluster with a fake provider and client ----------------------------------------------


class FakeProvider(cl.ClusterProvider):
    name = "fake"
    capabilities = cl.Capabilities(runs_real_controllers=True, scales_time=False, nodes_on_host_bridge=False,
                                   reached_through_connect_to=True)

    def __init__(self, clusters=(), subnets=("172.18.0.0/16",), connect=()):
        super().__init__(lambda *a, **k: (0, "", ""), lambda n: None)
        self.clusters = list(clusters)
        self.subnets = list(subnets)
        self.connect = list(connect)
        self.calls: list[tuple] = []

    def check_available(self):
        return "fake engine"

    def list_clusters(self):
        return list(self.clusters)

    def create_argv(self, name, config_path, kubeconfig, wait, image):
        return ["fake"]

    def create(self, name, config_yaml, kubeconfig, wait, image=None):
        self.calls.append(("create", name, yaml.safe_load(config_yaml), kubeconfig, wait, image))
        self.clusters.append(name)

    def delete(self, name, kubeconfig):
        self.calls.append(("delete", name, kubeconfig))
        self.clusters.remove(name)

    def kubeconfig(self, name):
        return ""

    def export_kubeconfig(self, name, path):
        self.calls.append(("export", name, path))

    def network_subnets(self):
        if not self.subnets:
            raise ClusterError("the docker network 'kind' does not exist")
        return list(self.subnets)

    def connect_to(self, name):
        return list(self.connect)


def node(name, role, ip):
    labels = {"node-role.kubernetes.io/control-plane": ""} if role == "control-plane" else {}
    return {"metadata": {"name": name, "labels": labels}, "status": {"addresses": [{"type": "InternalIP", "address": ip}]}}


class FakeClient:
    def __init__(self, nodes, kubeadm=None):
        self.nodes = nodes
        self.kubeadm = kubeadm

    def list(self, api_version, kind, **kw):
        assert (api_version, kind) == ("v1", "Node")
        return self.nodes

    def get(self, api_version, kind, name, namespace=None):
        if self.kubeadm is None:
            return None
        return {"data": {"ClusterConfiguration": yaml.safe_dump({"networking": self.kubeadm})}}


NODES = [node("lab-control-plane", "control-plane", "172.18.0.3"), node("lab-worker", "worker", "172.18.0.2"),
         node("lab-worker2", "worker", "172.18.0.4")]


def ensure(provider, state="present", check_mode=False, kubeconfig="/nonexistent/kubeconfig", client=None, **kw):
    config = cl.render_kind_config(None, IMAGE, kw.pop("user", None))
    factory_calls = []

    def factory(path, context):
        factory_calls.append((path, context))
        return client or FakeClient(NODES)

    result = cl.ensure_cluster(provider, "lab", state, config, kubeconfig, IMAGE, kw.pop("wait", True), 5, check_mode, factory,
                               nodes_ready=kw.pop("nodes_ready", True))
    return result, factory_calls


def test_create_when_absent() -> None:
    p = FakeProvider()
    result, factory_calls = ensure(p)
    assert result["changed"] is True
    assert p.calls[0][0] == "create" and p.calls[0][1] == "lab" and p.calls[0][4] == 5 and p.calls[0][5] == IMAGE
    assert [n["role"] for n in p.calls[0][2]["nodes"]] == ["control-plane", "worker", "worker"]
    assert factory_calls == [("/nonexistent/kubeconfig", "kind-lab")]
    assert [(n["name"], n["internal_ip"]) for n in result["nodes"]] == [
        ("lab-control-plane", "172.18.0.3"), ("lab-worker", "172.18.0.2"), ("lab-worker2", "172.18.0.4")]
    assert result["node_subnets"] == ["172.18.0.0/16"]
    assert (result["pod_subnets"], result["service_subnets"]) == (["10.244.0.0/16"], ["10.96.0.0/16"])
    assert result["context"] == "kind-lab" and result["provider"] == "fake"
    assert result["diff"] == {"before": {"cluster": "lab", "exists": False}, "after": {"cluster": "lab", "exists": True}}


def test_create_without_wait_passes_zero() -> None:
    p = FakeProvider()
    ensure(p, wait=False)
    assert p.calls[0][4] == 0


def test_create_without_ready_nodes_skips_kinds_wait_but_waits_for_internal_ips() -> None:
    p = FakeProvider()
    pending = [node("lab-control-plane", "control-plane", None)]
    client = FakeClient(NODES)
    reads = {"n": 0}
    real_list = client.list

    def list_nodes(api, kind, **kw):  # the nodes register their InternalIPs on the second read
        reads["n"] += 1
        return pending if reads["n"] == 1 else real_list(api, kind, **kw)

    client.list = list_nodes
    result, _calls = ensure(p, nodes_ready=False, client=client)
    assert p.calls[0][4] == 0  # no --wait: kind returns before the nodes are Ready
    assert reads["n"] >= 2 and [n["internal_ip"] for n in result["nodes"]] == ["172.18.0.3", "172.18.0.2", "172.18.0.4"]


def test_existing_cluster_is_not_recreated(tmp_path) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(yaml.safe_dump({"contexts": [{"name": "kind-lab", "context": {}}]}))
    p = FakeProvider(clusters=["lab"], connect=["100.64.0.1:80:127.0.0.1:4000"])
    result, _calls = ensure(p, kubeconfig=str(kubeconfig))
    assert result["changed"] is False and p.calls == []
    assert result["connect_to"] == ["100.64.0.1:80:127.0.0.1:4000"]


def test_existing_cluster_reports_its_live_subnets(tmp_path) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(yaml.safe_dump({"contexts": [{"name": "kind-lab"}]}))
    client = FakeClient(NODES, kubeadm={"podSubnet": "10.100.0.0/16", "serviceSubnet": "10.96.0.0/16"})
    result, _calls = ensure(FakeProvider(clusters=["lab"]), kubeconfig=str(kubeconfig), client=client)
    assert result["pod_subnets"] == ["10.100.0.0/16"]
    assert any("reporting the live ones" in w for w in result["warnings"])


def test_existing_cluster_missing_from_kubeconfig_is_exported(tmp_path) -> None:
    p = FakeProvider(clusters=["lab"])
    result, _calls = ensure(p, kubeconfig=str(tmp_path / "config"))
    assert result["changed"] is True and p.calls == [("export", "lab", str(tmp_path / "config"))]


def test_check_mode_create_runs_nothing() -> None:
    p = FakeProvider(subnets=())  # no docker network before the first cluster
    result, factory_calls = ensure(p, check_mode=True)
    assert result["changed"] is True and p.calls == [] and factory_calls == []
    assert [n["name"] for n in result["nodes"]] == ["lab-control-plane", "lab-worker", "lab-worker2"]
    assert result["node_subnets"] == [] and result["warnings"]


def test_absent_deletes_and_check_mode_does_not() -> None:
    p = FakeProvider(clusters=["lab"])
    result, _calls = ensure(p, state="absent", check_mode=True)
    assert result["changed"] is True and p.calls == []
    result, _calls = ensure(p, state="absent")
    assert result["changed"] is True and p.calls == [("delete", "lab", "/nonexistent/kubeconfig")]
    result, _calls = ensure(p, state="absent")
    assert result["changed"] is False


def test_wait_times_out_naming_the_nodes() -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.errors import WaitTimeout

    no_ip = [{"metadata": {"name": "lab-control-plane"}, "status": {}}]
    with pytest.raises(WaitTimeout, match="nodes of cluster 'lab' to report InternalIPs; last seen: 1 node\\(s\\), 0 with an InternalIP"):
        config = cl.render_kind_config(0, IMAGE)
        cl.ensure_cluster(FakeProvider(), "lab", "present", config, "/k", IMAGE, True, 0, False, lambda p, c: FakeClient(no_ip))


def test_kubeconfig_contexts() -> None:
    text = yaml.safe_dump({"contexts": [{"name": "kind-lab", "context": {"cluster": "kind-lab"}}], "current-context": "kind-lab"})
    assert cl.kubeconfig_contexts(text) == ["kind-lab"]
    assert cl.kubeconfig_contexts("not: [valid") == [] and cl.kubeconfig_contexts(None) == []
    assert cl.kubeconfig_contexts("- a list\n") == []


class UnavailableProvider(FakeProvider):
    """A backend this machine cannot use (its binary missing)."""

    def check_available(self):
        raise cl.BinaryNotFound("fake_binary: 'fake' was not found on PATH")

    def list_clusters(self):
        raise AssertionError("an unavailable backend is not asked for its clusters")


def test_check_mode_plans_a_cluster_whose_backend_is_unavailable() -> None:
    p = UnavailableProvider(subnets=())
    result, factory_calls = ensure(p, check_mode=True)
    assert result["changed"] and result["planned"] and result["exists"] is False and p.calls == [] and factory_calls == []
    assert result["unavailable"] == "fake_binary: 'fake' was not found on PATH"
    assert result["warnings"][0] == ("check mode: the fake backend cannot be used on this machine (fake_binary: 'fake' was "
                                     "not found on PATH); a real run would fail here. The result says what it would create.")
    assert [n["name"] for n in result["nodes"]] == ["lab-control-plane", "lab-worker", "lab-worker2"]
    assert (result["pod_subnets"], result["service_subnets"]) == (["10.244.0.0/16"], ["10.96.0.0/16"])


def test_an_unavailable_backend_still_fails_outside_check_mode_and_for_absent() -> None:
    with pytest.raises(cl.BinaryNotFound, match="fake_binary"):
        ensure(UnavailableProvider())
    with pytest.raises(cl.BinaryNotFound, match="fake_binary"):
        ensure(UnavailableProvider(), state="absent", check_mode=True)


def test_planned_says_whether_there_is_a_cluster_to_read(tmp_path) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(yaml.safe_dump({"contexts": [{"name": "kind-lab"}]}))
    existing, _calls = ensure(FakeProvider(clusters=["lab"]), check_mode=True, kubeconfig=str(kubeconfig))
    assert existing["planned"] is False and existing["exists"] is True and "unavailable" not in existing
    not_exported, _calls = ensure(FakeProvider(clusters=["lab"]), check_mode=True, kubeconfig=str(tmp_path / "other"))
    assert not_exported["planned"] is True and not_exported["exists"] is True
    created, _calls = ensure(FakeProvider())
    assert created["planned"] is False
