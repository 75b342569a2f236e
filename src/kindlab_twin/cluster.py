"""The twin cluster process: the real control plane (controlplane.py) and, as its clients,
the emulations of what cannot run here (kubelet containers, MetalLB, ingress-nginx, the
loopback data plane).

`kindlab-twin create cluster` starts ``python -m kindlab_twin.cluster`` in its own session;
that process (the twin process) supervises the control-plane processes and runs until
SIGTERM/SIGINT, or until a component dies: then it writes the reason to the state dir's `failed` file, stops
everything and exits 1, so that the next command reports the cluster as broken instead of
waiting on it. `TwinCluster` is the same thing in-process (tests).
"""
from __future__ import annotations

import argparse
import ipaddress
import logging
import os
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import yaml

from . import state
from .contract import Emulation, Obj, Store
from .controlplane import ControlPlane, ControlPlaneError, NodeSpec
from .kindnodes import desired_nodes
from .kubeapi import CachedStore, Credentials, DirectStore, KubeClient, ServiceAccountToken
from .pki import ADMIN
from .podlogs import PodLogFiles

log = logging.getLogger("kindlab_twin.cluster")

# kind's defaults (pkg/apis/config/v1alpha4/default.go) where the config says nothing.
DEFAULT_POD_SUBNET = "10.244.0.0/16"
DEFAULT_SERVICE_SUBNET = "10.96.0.0/16"
SUPERVISE_EVERY = 0.5


@dataclass
class TwinClusterHandle:
    """What every emulation is started with (contract.ClusterHandle)."""

    store: CachedStore
    cluster_name: str
    time_scale: float
    state_dir: str
    kind_config: Obj
    pod_logs: PodLogFiles
    credentials: Credentials

    def pod_store(self, pod: Obj) -> Store:
        m = pod["metadata"]
        token = ServiceAccountToken(self.store.client, m["namespace"],
                                    pod.get("spec", {}).get("serviceAccountName") or "default")
        token()  # fail here, at the pod's start, if the ServiceAccount is missing
        return DirectStore(KubeClient(self.credentials.without_certificate(), user_agent=m["name"],
                                      token_source=token))


def load_emulations() -> list[Emulation]:
    from .emulations import all_emulations
    return list(all_emulations())


def subnets(kind_config: Obj) -> tuple[str, str, str]:
    """(pod subnet, service subnet, the `kubernetes` Service's address) of a kind config."""
    net = kind_config.get("networking") or {}
    pods = str(net.get("podSubnet") or DEFAULT_POD_SUBNET)
    services = str(net.get("serviceSubnet") or DEFAULT_SERVICE_SUBNET)
    first = next(ipaddress.ip_network(services, strict=False).hosts())
    return pods, services, str(first)


def node_specs(cluster: str, kind_config: Obj) -> list[NodeSpec]:
    return [NodeSpec(n["metadata"]["name"], n["status"]["addresses"][0]["address"], n)
            for n in desired_nodes(cluster, kind_config)]


class TwinCluster:
    """Control plane + emulations, started and stopped together."""

    def __init__(self, name: str, state_dir: str | Path, kind_config: Obj | None = None,
                 time_scale: float = 1.0, emulations: list[Emulation] | None = None) -> None:
        self.name = name
        self.state_dir = Path(state_dir)
        self.kind_config = kind_config or {}
        self.time_scale = time_scale
        pods, services, kube_ip = subnets(self.kind_config)
        self.control_plane = ControlPlane(cluster=name, root=self.state_dir / state.CONTROL_PLANE_DIR,
                                          nodes=node_specs(name, self.kind_config), pod_subnet=pods,
                                          service_subnet=services, kubernetes_service_ip=kube_ip)
        self.emulations = emulations if emulations is not None else load_emulations()
        self.handle: TwinClusterHandle | None = None
        self._started: list[Emulation] = []

    @property
    def credentials(self) -> Credentials:
        cp = self.control_plane
        return Credentials(cp.server, str(cp.pki.ca_cert), str(cp.pki.path(ADMIN.stem, "crt")),
                           str(cp.pki.path(ADMIN.stem, "key")))

    def start(self, say: Callable[[str], None] | None = None) -> "TwinCluster":
        try:
            self.control_plane.start(say=say)
            store = CachedStore(KubeClient(self.credentials, user_agent="kindlab-twin"))
            self.handle = TwinClusterHandle(store, self.name, self.time_scale, str(self.state_dir), self.kind_config,
                                            PodLogFiles(self.state_dir / "pod-logs"), self.credentials)
            for c in self.emulations:
                log.info("starting emulation %s", getattr(c, "name", c))
                c.start(self.handle)
                self._started.append(c)
        except BaseException:
            self.stop()
            raise
        return self

    def check(self) -> None:
        """Raise ControlPlaneError if a control-plane component died."""
        self.control_plane.check()

    def stop(self) -> None:
        for c in reversed(self._started):
            try:
                c.stop()
            except Exception:  # one broken emulation must not block shutdown
                log.exception("stopping emulation %s failed", getattr(c, "name", c))
        self._started.clear()
        if self.handle is not None:
            self.handle.store.close()
        self.control_plane.stop()


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m kindlab_twin.cluster")
    p.add_argument("--name", required=True)
    p.add_argument("--state-dir", required=True)
    p.add_argument("--time-scale", type=float, default=1.0)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    d = Path(args.state_dir)
    logging.basicConfig(filename=str(d / state.LOG_FILE), level=os.environ.get("KINDLAB_TWIN_LOG", "INFO"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    kind_config: Obj = {}
    cfg_text = state.read(d, state.KIND_CONFIG_FILE)
    if cfg_text:
        loaded: Any = yaml.safe_load(cfg_text)
        kind_config = loaded if isinstance(loaded, dict) else {}
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    cluster = TwinCluster(args.name, d, kind_config, args.time_scale)
    state.write_private(d / state.PID_FILE, f"{os.getpid()}\n")
    try:
        cluster.start(say=log.info)
    except ControlPlaneError as exc:
        log.error("%s", exc)
        state.write_private(d / state.FAILED_FILE, f"{exc}\n")
        return 1
    state.write_private(d / state.PORT_FILE, f"{cluster.control_plane.ports.apiserver}\n")
    log.info("cluster %s serving on %s (time scale %s, %d emulations)", args.name, cluster.control_plane.server,
             args.time_scale, len(cluster.emulations))
    code = 0
    try:
        while not stop.wait(SUPERVISE_EVERY):
            try:
                cluster.check()
            except ControlPlaneError as exc:
                log.error("%s", exc)
                state.write_private(d / state.FAILED_FILE, f"{exc}\n")
                code = 1
                break
    finally:
        log.info("shutting down")
        cluster.stop()
    log.info("stopped")
    return code


if __name__ == "__main__":
    sys.exit(main())
