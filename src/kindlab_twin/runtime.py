"""The twin cluster process: object store + API server + emulated controllers.

`kindlab-twin create cluster` starts ``python -m kindlab_twin.runtime`` in its own session;
it runs until SIGTERM/SIGINT. `TwinCluster` is the same thing in-process (tests).
"""
from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from . import state
from .apiserver import ApiServer
from .contract import Controller, Obj, PodLogs, Store
from .store import ObjectStore

log = logging.getLogger("kindlab_twin.runtime")
MANAGER = "kube-apiserver"


@dataclass
class TwinRuntime:
    """What controllers get (contract.Runtime plus pod_logs)."""

    store: Store
    cluster_name: str
    time_scale: float
    state_dir: str
    kind_config: Obj
    pod_logs: PodLogs = field(default_factory=PodLogs)


def load_controllers() -> list[Controller]:
    """The emulated controllers, if that package is installed; none otherwise."""
    try:
        from .controllers import all_controllers
    except ImportError as e:
        if e.name and not e.name.startswith("kindlab_twin.controllers") and e.name != "kindlab_twin":
            raise
        log.warning("kindlab_twin.controllers.all_controllers not available (%s): running without controllers", e)
        return []
    return list(all_controllers())


def bootstrap(store: ObjectStore) -> None:
    """Objects the API server itself maintains on a real cluster."""
    store.create({"apiVersion": "v1", "kind": "Service",
                  "metadata": {"name": "kubernetes", "namespace": "default",
                               "labels": {"component": "apiserver", "provider": "kubernetes"}},
                  "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
                           "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}},
                 MANAGER)


class TwinCluster:
    """Store + API + controllers, started and stopped together."""

    def __init__(self, name: str, state_dir: str | Path, token: str, kind_config: Obj | None = None,
                 time_scale: float = 1.0, tls: tuple[str, str] | None = None, port: int = 0,
                 controllers: list[Controller] | None = None, namespace_grace: float = 1.0) -> None:
        self.store = ObjectStore(namespace_grace=namespace_grace)
        self.runtime = TwinRuntime(self.store, name, time_scale, str(state_dir), kind_config or {})
        self.api = ApiServer(self.store, token, port=port, pod_logs=self.runtime.pod_logs, tls=tls)
        self.controllers = controllers if controllers is not None else load_controllers()
        self._started: list[Controller] = []

    def start(self) -> "TwinCluster":
        bootstrap(self.store)
        self.api.start()
        for c in self.controllers:
            log.info("starting controller %s", getattr(c, "name", c))
            c.start(self.runtime)
            self._started.append(c)
        return self

    def stop(self) -> None:
        for c in reversed(self._started):
            try:
                c.stop()
            except Exception:  # one broken controller must not block shutdown
                log.exception("stopping controller %s failed", getattr(c, "name", c))
        self._started.clear()
        self.api.stop()


def _parse(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m kindlab_twin.runtime")
    p.add_argument("--name", required=True)
    p.add_argument("--state-dir", required=True)
    p.add_argument("--time-scale", type=float, default=1.0)
    p.add_argument("--port", type=int, default=0)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    d = Path(args.state_dir)
    logging.basicConfig(filename=str(d / state.LOG_FILE), level=os.environ.get("KINDLAB_TWIN_LOG", "INFO"),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    token = state.read(d, state.TOKEN_FILE)
    if not token:
        log.error("no token in %s", d)
        return 1
    kind_config: Obj = {}
    cfg_text = state.read(d, "kind-config.yaml")
    if cfg_text:
        loaded: Any = yaml.safe_load(cfg_text)
        kind_config = loaded if isinstance(loaded, dict) else {}
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    cluster = TwinCluster(args.name, d, token, kind_config, args.time_scale,
                          tls=(str(d / state.SERVER_CERT), str(d / state.SERVER_KEY)), port=args.port)
    state.write_private(d / state.PID_FILE, f"{os.getpid()}\n")
    cluster.start()
    state.write_private(d / state.PORT_FILE, f"{cluster.api.port}\n")
    log.info("cluster %s serving on %s (time scale %s, %d controllers)", args.name, cluster.api.url,
             args.time_scale, len(cluster.controllers))
    try:
        while not stop.wait(0.5):
            pass
    finally:
        log.info("shutting down")
        cluster.stop()
    log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
