# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kind provider: the `kind` binary for clusters, `docker` for the engine and network.

Argv builders and output parsers are module-level pure functions so the tests can feed
them the real output formats without a Docker engine.
"""
from __future__ import annotations

import json
import os
import re
from typing import Any, Mapping

from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.pools import ClusterNetworks
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import (
    Capabilities,
    ClusterError,
    ClusterProvider,
    EngineUnavailable,
    cluster_subnets,
    patch_cgroup_v1,
    register,
)

KIND_NETWORK = "kind"  # the docker network every kind cluster's nodes join
# The subnet docker gives that network when kind creates it on an engine with no other user
# networks: the first free /16 of docker's default address pools, after docker0's 172.17.0.0/16.
# kind does not choose it (docker does), so it is what the lab expects before the cluster
# exists; the metallb role checks the network the cluster really got.
KIND_NODE_SUBNET = "172.18.0.0/16"
# kind puts the nodes on this network instead when the variable is set (and not empty).
KIND_NETWORK_ENV = "KIND_EXPERIMENTAL_DOCKER_NETWORK"
NO_CLUSTERS = "No kind clusters found."  # printed on stderr by `kind get clusters`


def planned_networks(config: dict[str, Any]) -> ClusterNetworks:
    """The networks a cluster of this kind config will have, known before it exists: the node
    network docker usually gives kind (the twin's too) and the config's pod and service subnets
    (kind's defaults where it sets none)."""
    subnets = cluster_subnets(config)
    return ClusterNetworks(node=(KIND_NODE_SUBNET,), pod=tuple(subnets["pod"]), service=tuple(subnets["service"]))


# --- argv --------------------------------------------------------------------------------


def create_argv(kind: str, name: str, config_path: str, kubeconfig: str, wait: int, image: str | None) -> list[str]:
    argv = [kind, "create", "cluster", "--name", name, "--config", config_path, "--kubeconfig", kubeconfig]
    if image:
        argv += ["--image", image]
    if wait > 0:
        argv += ["--wait", "%ds" % wait]
    return argv


def get_clusters_argv(kind: str) -> list[str]:
    return [kind, "get", "clusters"]


def delete_argv(kind: str, name: str, kubeconfig: str) -> list[str]:
    return [kind, "delete", "cluster", "--name", name, "--kubeconfig", kubeconfig]


def get_kubeconfig_argv(kind: str, name: str) -> list[str]:
    return [kind, "get", "kubeconfig", "--name", name]


def export_kubeconfig_argv(kind: str, name: str, path: str) -> list[str]:
    return [kind, "export", "kubeconfig", "--name", name, "--kubeconfig", path]


def network_name(environ: Mapping[str, str] | None = None) -> str:
    """The docker network kind uses: $KIND_EXPERIMENTAL_DOCKER_NETWORK when set and not
    empty (kind warns "Overriding docker network" then), else "kind"."""
    env = os.environ if environ is None else environ
    return env.get(KIND_NETWORK_ENV) or KIND_NETWORK


def load_argv(kind: str, name: str, images: list[str]) -> list[str]:
    """`kind load docker-image IMAGE... --name NAME`: kind saves the images from the local
    engine and imports them into every node that lacks them."""
    return [kind, "load", "docker-image"] + list(images) + ["--name", name]


def docker_info_argv(docker: str) -> list[str]:
    return [docker, "info", "--format", "{{json .}}"]


def network_inspect_argv(docker: str, network: str | None = None) -> list[str]:
    return [docker, "network", "inspect", network or network_name()]


def bridge_name(network_id: str) -> str:
    """Docker names a user-defined bridge network's Linux interface br-<first 12 of its id>."""
    return "br-" + network_id[:12]


# --- parsers -------------------------------------------------------------------------------


def parse_clusters(stdout: str) -> list[str]:
    """`kind get clusters`: one name per line on stdout; with none, stdout is empty and
    "No kind clusters found." goes to stderr (kind's logger), so stdout alone decides."""
    return [line.strip() for line in stdout.splitlines() if line.strip() and line.strip() != NO_CLUSTERS]


def parse_docker_info(rc: int, stdout: str, stderr: str) -> str:
    """Return "Docker <version> (<os>)" when the engine answered, else raise EngineUnavailable.

    With the engine down, `docker info --format '{{json .}}'` still prints JSON (client
    part only) with the connection error in ServerErrors, and some CLI versions exit 0, so
    the exit code alone does not tell."""
    info: dict[str, Any] = {}
    text = stdout.strip()
    if text:
        try:
            info = json.loads(text.splitlines()[-1] if not text.startswith("{") else text)
        except ValueError:
            info = {}
    errors = [str(e) for e in info.get("ServerErrors") or []]
    if rc != 0 or errors or not info.get("ServerVersion"):
        detail = "; ".join(errors) or stderr.strip() or "docker info returned no server version"
        raise EngineUnavailable("the Docker engine does not answer: %s" % detail)
    return "Docker %s (%s)" % (info.get("ServerVersion"), info.get("OperatingSystem") or info.get("OSType") or "unknown OS")


def parse_cgroup_version(stdout: str) -> str | None:
    """The engine's cgroup version ("1" or "2") from `docker info --format '{{json .}}'`
    (its CgroupVersion field); None when the engine does not say. This is the engine's host
    (Docker Desktop's VM, a remote DOCKER_HOST), which is where kind's nodes run."""
    text = stdout.strip()
    try:
        info = json.loads(text.splitlines()[-1] if text and not text.startswith("{") else text or "{}")
    except ValueError:
        return None
    version = info.get("CgroupVersion") if isinstance(info, dict) else None
    return str(version) if version else None


# kind's logger (stderr) for each image: "Image: "<ref>" with ID "<id>" not yet present on node
# "<node>", loading..." per node that lacks it, or "... found to be already present on all nodes."
_LOADING = re.compile(r'^Image: "(?P<image>[^"]+)" with ID "[^"]*" not yet present on node "(?P<node>[^"]+)"')
_PRESENT = re.compile(r'^Image: "(?P<image>[^"]+)" with ID "[^"]*" found to be already present on all nodes')


def parse_load_output(text: str) -> dict[str, list[str]]:
    """Which images kind loaded (into which nodes) and which every node had already."""
    loaded: dict[str, list[str]] = {}
    present: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        match = _LOADING.match(line)
        if match:
            loaded.setdefault(match.group("image"), []).append(match.group("node"))
            continue
        match = _PRESENT.match(line)
        if match:
            present.append(match.group("image"))
    return {"loaded": sorted(loaded), "present": present,
            "nodes": sorted({node for nodes in loaded.values() for node in nodes})}


def parse_network_inspect(stdout: str, network: str | None = None) -> dict[str, Any]:
    """`docker network inspect kind` prints a JSON list with one network; return its id,
    bridge interface and IPAM subnets (IPv4 and IPv6 as configured)."""
    try:
        data = json.loads(stdout)
    except ValueError as exc:
        raise ClusterError("docker network inspect printed something that is not JSON: %s" % exc) from None
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        raise ClusterError("docker network inspect: the network %r was not found" % (network or network_name()))
    net = data[0]
    configs = ((net.get("IPAM") or {}).get("Config")) or []
    subnets = [c["Subnet"] for c in configs if isinstance(c, dict) and c.get("Subnet")]
    net_id = net.get("Id") or net.get("ID") or ""
    options = net.get("Options") or {}
    bridge = options.get("com.docker.network.bridge.name") or (bridge_name(net_id) if net_id else None)
    return {"name": net.get("Name"), "id": net_id, "bridge": bridge, "subnets": subnets}


def network_missing(stderr: str) -> bool:
    """Both wordings docker uses for an absent network."""
    low = stderr.lower()
    return "no such network" in low or ("network" in low and "not found" in low)


@register
class KindProvider(ClusterProvider):
    name = "kind"
    # Real nodes in Docker containers on the engine's `kind` bridge network, running real images.
    capabilities = Capabilities(runs_real_controllers=True, scales_time=False, nodes_on_host_bridge=True,
                                reached_through_connect_to=False)

    @property
    def kind(self) -> str:
        return self.binary("kind", "kind")

    @property
    def docker(self) -> str:
        return self.binary("docker", "docker")

    cgroup_version: str | None = None

    def check_available(self) -> str:
        kind = self.kind
        docker = self.docker
        rc, out, err = self.call(docker_info_argv(docker), "docker info")
        engine = parse_docker_info(rc, out, err)
        self.cgroup_version = parse_cgroup_version(out)
        return "%s with %s" % (kind, engine)

    def why_unavailable(self) -> list[str]:
        """A missing kind, a missing docker and an engine that does not answer, each that applies."""
        reasons = []
        try:
            self.binary("kind", "kind")
        except ClusterError as exc:
            reasons.append(str(exc))
        try:
            docker = self.binary("docker", "docker")
            rc, out, err = self.call(docker_info_argv(docker), "docker info")
            parse_docker_info(rc, out, err)
        except ClusterError as exc:
            reasons.append(str(exc))
        return reasons

    def adapt_config(self, config: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """On an engine whose host runs cgroup v1, every node's kubelet gets failCgroupV1: false:
        Kubernetes 1.35's kubelet refuses to start on cgroup v1 otherwise (KEP-5573)."""
        if self.cgroup_version != "1":
            return config, []
        return patch_cgroup_v1(config), [
            "the Docker engine's host uses cgroup v1: failCgroupV1: false is patched into every node's "
            "KubeletConfiguration (kubeadmConfigPatches), because Kubernetes 1.35's kubelet refuses to start on "
            "cgroup v1 otherwise; cgroup v1 is deprecated, move the host to cgroup v2 when you can"]

    def load_images(self, name: str, images: list[str], check_mode: bool) -> dict[str, Any]:
        argv = load_argv(self.kind, name, images)
        if check_mode:
            return {"changed": True, "skipped": False, "command": argv, "loaded": [], "present": [], "nodes": [],
                    "msg": "would run: %s" % " ".join(argv)}
        rc, out, err = self.call(argv, "kind load docker-image")
        if rc != 0:
            raise ClusterError("loading images into cluster %r failed (rc=%s): %s: %s"
                               % (name, rc, " ".join(argv), (err or out).strip()))
        parsed = parse_load_output(err + "\n" + out)
        # kind says, per image, whether it loaded it or every node had it; an image it said
        # nothing about counts as loaded.
        changed = bool(parsed["loaded"]) or any(image not in parsed["present"] for image in images)
        msg = ("loaded %s into %s" % (", ".join(parsed["loaded"]), ", ".join(parsed["nodes"])) if parsed["loaded"]
               else "every node already has %s" % ", ".join(images))
        return dict(parsed, changed=changed, skipped=False, command=argv, msg=msg)

    def list_clusters(self) -> list[str]:
        rc, out, err = self.call(get_clusters_argv(self.kind), "kind get clusters")
        if rc != 0:
            # kind talks to the engine for this; its error says whether docker is down.
            raise ClusterError("kind get clusters failed (rc=%s): %s" % (rc, (err or out).strip()))
        return parse_clusters(out)

    def create_argv(self, name: str, config_path: str, kubeconfig: str, wait: int, image: str | None) -> list[str]:
        return create_argv(self.kind, name, config_path, kubeconfig, wait, image)

    def delete(self, name: str, kubeconfig: str) -> None:
        self.must(delete_argv(self.kind, name, kubeconfig), "deleting cluster %r" % name)

    def kubeconfig(self, name: str) -> str:
        return self.must(get_kubeconfig_argv(self.kind, name), "reading the kubeconfig of %r" % name)

    def export_kubeconfig(self, name: str, path: str) -> None:
        self.must(export_kubeconfig_argv(self.kind, name, path), "exporting the kubeconfig of %r" % name)

    def network(self) -> dict[str, Any]:
        name = network_name()
        rc, out, err = self.call(network_inspect_argv(self.docker, name), "docker network inspect")
        if rc != 0:
            if network_missing(err):
                raise ClusterError("the docker network %r does not exist (kind creates it with the first cluster)" % name)
            raise ClusterError("docker network inspect %s failed (rc=%s): %s" % (name, rc, err.strip()))
        return parse_network_inspect(out, name)

    def network_subnets(self) -> list[str]:
        return list(self.network()["subnets"])
