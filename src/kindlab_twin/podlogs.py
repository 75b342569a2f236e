"""The output of the twin's emulated containers, kept as a kubelet keeps container logs and
served by `kubectl logs` through the real path: API server → node (kwok) → file.

Each container's current run is ``<root>/<namespace>_<pod>_<uid>/<container>.log`` and the run
before it ``<container>.previous.log``, in the CRI log format kwok (like the kubelet) reads:
``<RFC 3339 nano time> stdout F <line>``. kwok finds the files through a Logs object (its CRD)
named after the pod; the kubelet emulation creates it when it starts the pod, owned by the pod
so that the garbage collector removes it with the pod.
"""
from __future__ import annotations

import datetime as _dt
import shutil
import threading
from pathlib import Path
from typing import Any

from .controlplane import KWOK_API


def cri_line(line: str, stream: str = "stdout", when: _dt.datetime | None = None) -> str:
    t = when or _dt.datetime.now(_dt.timezone.utc)
    return f"{t:%Y-%m-%dT%H:%M:%S}.{t.microsecond:06d}000Z {stream} F {line}\n"


class PodLogFiles:
    """contract.PodLogSink on files. Thread-safe."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._dirs: dict[tuple[str, str], Path] = {}
        self._lock = threading.Lock()

    def pod_dir(self, pod: dict[str, Any]) -> Path:
        m = pod["metadata"]
        return self.root / f"{m['namespace']}_{m['name']}_{m.get('uid', '')}"

    def logs_object(self, pod: dict[str, Any]) -> dict[str, Any]:
        """The kwok Logs object that makes `kubectl logs` read this pod's files."""
        m = pod["metadata"]
        d = self.pod_dir(pod)
        containers = [c["name"] for c in pod.get("spec", {}).get("containers") or []]
        return {"apiVersion": KWOK_API, "kind": "Logs",
                "metadata": {"name": m["name"], "namespace": m["namespace"],
                             "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": m["name"],
                                                  "uid": m.get("uid", "")}]},
                "spec": {"logs": [{"containers": [c], "logsFile": str(d / f"{c}.log"),
                                   "previousLogsFile": str(d / f"{c}.previous.log"), "follow": True}
                                  for c in containers]}}

    def open_pod(self, pod: dict[str, Any]) -> None:
        """Create the pod's (empty) log files; lines appended later land there."""
        m = pod["metadata"]
        d = self.pod_dir(pod)
        d.mkdir(parents=True, exist_ok=True)
        for c in pod.get("spec", {}).get("containers") or []:
            (d / f"{c['name']}.log").touch()
        with self._lock:
            self._dirs[(m["namespace"], m["name"])] = d

    def _file(self, namespace: str, pod: str, container: str) -> Path | None:
        with self._lock:
            d = self._dirs.get((namespace, pod))
        if d is None:
            return None
        if not container:
            first = sorted(d.glob("*.log"))
            first = [p for p in first if not p.name.endswith(".previous.log")]
            return first[0] if first else None
        return d / f"{container}.log"

    def append(self, namespace: str, pod: str, line: str, container: str = "") -> None:
        path = self._file(namespace, pod, container)
        if path is None:
            return  # the pod was never started here (or is gone): nothing serves its log
        with self._lock, open(path, "a") as f:
            f.write(cri_line(line))

    def restart(self, namespace: str, pod: str, container: str) -> None:
        """A new run of the container: its log so far becomes the previous run's."""
        path = self._file(namespace, pod, container)
        if path is None:
            return
        with self._lock:
            if path.exists():
                path.replace(path.with_name(f"{container}.previous.log"))
            path.touch()

    def lines(self, namespace: str, pod: str, container: str = "") -> list[str]:
        """The current run's lines (without the CRI prefix); "" = the pod's first container."""
        path = self._file(namespace, pod, container)
        if path is None or not path.exists():
            return []
        return [ln.split(" ", 3)[3] for ln in path.read_text().splitlines() if ln.count(" ") >= 3]

    def clear(self, namespace: str, pod: str) -> None:
        with self._lock:
            d = self._dirs.pop((namespace, pod), None)
        if d is not None:
            shutil.rmtree(d, ignore_errors=True)
