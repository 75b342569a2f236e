# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The kind provider: the `kind` binary for clusters, `docker` for the engine and network.

Argv builders and output parsers are module-level pure functions so the tests can feed
them the real output formats without a Docker engine.
"""
from __future__ import annotations

import json
import os
from typing import Any, Mapping

from ansible_collections.kindlab.ingress.plugins.module_utils._cluster import (
    ClusterError,
    ClusterProvider,
    EngineUnavailable,
    register,
)

KIND_NETWORK = "kind"  # the docker network every kind cluster's nodes join
# kind puts the nodes on this network instead when the variable is set (and not empty).
KIND_NETWORK_ENV = "KIND_EXPERIMENTAL_DOCKER_NETWORK"
NO_CLUSTERS = "No kind clusters found."  # printed on stderr by `kind get clusters`


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

    @property
    def kind(self) -> str:
        return self.binary("kind", "kind")

    @property
    def docker(self) -> str:
        return self.binary("docker", "docker")

    def check_available(self) -> str:
        kind = self.kind
        docker = self.docker
        rc, out, err = self.call(docker_info_argv(docker), "docker info")
        engine = parse_docker_info(rc, out, err)
        return "%s with %s" % (kind, engine)

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
