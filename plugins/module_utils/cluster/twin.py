# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The twin provider: `kindlab-twin`, an emulated kind cluster on loopback.

Same verbs as kind (`create cluster`, `get clusters`, `get kubeconfig`, `export kubeconfig`,
`delete cluster`) plus `get connect-to`, which prints the curl-style HOST:PORT:127.0.0.1:PORT mappings of
the twin's data plane. No Docker: the node network is fixed, like kind's usual one.
"""
from __future__ import annotations

import os
import re
import sys
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.providers import (
    BinaryNotFound,
    Capabilities,
    ClusterError,
    ClusterProvider,
    register,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.cluster.kind import KIND_NODE_SUBNET, parse_clusters

TWIN_COMMAND = "kindlab-twin"
# The twin's node network: kind's usual docker network; pod/service CIDRs follow the kind
# config like on kind.
TWIN_NODE_NETWORK = KIND_NODE_SUBNET

_PORT_RE = re.compile(r"^\d{1,5}$")


def twin_candidates(executable: str = sys.executable) -> list[str]:
    """Where kindlab-twin is looked for first: beside the Python running ansible (its venv)."""
    return [os.path.join(os.path.dirname(executable), TWIN_COMMAND)]


def create_argv(twin: str, name: str, config_path: str, kubeconfig: str, time_scale: float | None) -> list[str]:
    argv = [twin, "create", "cluster", "--name", name, "--config", config_path, "--kubeconfig", kubeconfig]
    if time_scale is not None:
        argv += ["--time-scale", format_scale(time_scale)]
    return argv


def format_scale(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def get_clusters_argv(twin: str) -> list[str]:
    return [twin, "get", "clusters"]


def get_kubeconfig_argv(twin: str, name: str) -> list[str]:
    return [twin, "get", "kubeconfig", "--name", name]


def delete_argv(twin: str, name: str, kubeconfig: str) -> list[str]:
    return [twin, "delete", "cluster", "--name", name, "--kubeconfig", kubeconfig]


def export_kubeconfig_argv(twin: str, name: str, path: str) -> list[str]:
    return [twin, "export", "kubeconfig", "--name", name, "--kubeconfig", path]


def connect_to_argv(twin: str, name: str) -> list[str]:
    return [twin, "get", "connect-to", "--name", name]


def parse_connect_to(stdout: str) -> list[str]:
    """One HOST:PORT:TARGET:PORT per line. An IPv6 host is returned in brackets, as curl's
    --connect-to takes it, whether or not the twin printed them."""
    out = []
    for n, line in enumerate(stdout.splitlines(), 1):
        text = line.strip()
        if not text:
            continue
        parts = text.rsplit(":", 3)
        if len(parts) != 4 or not all(parts) or not _PORT_RE.match(parts[1]) or not _PORT_RE.match(parts[3]):
            raise ClusterError("kindlab-twin get connect-to: line %d is not HOST:PORT:127.0.0.1:PORT: %r" % (n, text))
        host = parts[0]
        if ":" in host and not host.startswith("["):
            host = "[%s]" % host
        out.append(":".join([host] + parts[1:]))
    return out


@register
class TwinProvider(ClusterProvider):
    name = "twin"
    # Processes on loopback: emulated controllers on scaled clocks, lab addresses mapped to loopback ports.
    capabilities = Capabilities(runs_real_controllers=False, scales_time=True, nodes_on_host_bridge=False,
                                reached_through_connect_to=True)

    def __init__(self, *args: Any, time_scale: float | None = None, executable: str = sys.executable, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.time_scale = time_scale
        self._executable = executable

    @property
    def twin(self) -> str:
        if "twin" in self._binaries:
            return self.binary("twin", TWIN_COMMAND)
        for candidate in twin_candidates(self._executable):
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
                return candidate
        found = self._which(TWIN_COMMAND)
        if not found:
            raise BinaryNotFound(
                "twin_binary: %s was found neither beside %s nor on PATH; install the project "
                "(pip install -e .) into the Python that runs ansible, or set twin_binary" % (TWIN_COMMAND, self._executable)
            )
        return found

    def check_available(self) -> str:
        return "%s (emulated cluster, no Docker needed)" % self.twin

    def list_clusters(self) -> list[str]:
        return parse_clusters(self.must(get_clusters_argv(self.twin), "kindlab-twin get clusters"))

    def call(self, argv: list[str], what: str, data: str | None = None) -> tuple[int, str, str]:
        """kindlab-twin's WARNING lines (a cluster whose process stopped, and why: a control-plane
        component that died) reach the module's warnings."""
        rc, out, err = super().call(argv, what, data)
        self.warnings.extend(line[len("WARNING: "):] for line in err.splitlines() if line.startswith("WARNING: "))
        return rc, out, err

    def create_argv(self, name: str, config_path: str, kubeconfig: str, wait: int, image: str | None) -> list[str]:
        # The twin is ready when create returns; the image is informative (in the config).
        return create_argv(self.twin, name, config_path, kubeconfig, self.time_scale)

    def delete(self, name: str, kubeconfig: str) -> None:
        self.must(delete_argv(self.twin, name, kubeconfig), "deleting twin cluster %r" % name)

    def kubeconfig(self, name: str) -> str:
        return self.must(get_kubeconfig_argv(self.twin, name), "reading the kubeconfig of twin cluster %r" % name)

    def export_kubeconfig(self, name: str, path: str) -> None:
        self.must(export_kubeconfig_argv(self.twin, name, path), "exporting the kubeconfig of twin cluster %r" % name)

    def network_subnets(self) -> list[str]:
        return [TWIN_NODE_NETWORK]

    def connect_to(self, name: str) -> list[str]:
        return parse_connect_to(self.must(connect_to_argv(self.twin, name), "kindlab-twin get connect-to"))
