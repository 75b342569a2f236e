"""The control plane's ports: free_port() picks a port that a component binds only later, so
another process can bind it first. A component that loses its port that way runs again on new
ports (ControlPlane._settle); kwok binds port 0 and its port is read back.

The first tests run stand-ins (Python processes that bind the ports their flags name) and need
no binaries; the last ones start the real control plane (pinned binaries, realcp.require).
"""
from __future__ import annotations

import contextlib
import os
import shutil
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

import pytest

from kindlab_twin import controlplane
from kindlab_twin.controlplane import (BIND_ATTEMPTS, COMPONENT_PORTS, COMPONENTS, ControlPlane, ControlPlaneError,
                                       Ports, listening_ports)

from realcp import control_plane, require

# Binds each port named on its command line, as a component binds its flags' ports; Python's
# message for EADDRINUSE is "[Errno 98] Address already in use".
STAND_IN = """
import socket, sys, time
held = []
for port in sys.argv[1:]:
    s = socket.socket()
    s.bind(("127.0.0.1", int(port)))
    s.listen()
    held.append(s)
time.sleep(120)
"""


@contextlib.contextmanager
def occupied(n: int) -> Iterator[list[int]]:
    """N loopback ports another process (this one) listens on, for the test's duration."""
    socks: list[socket.socket] = []
    try:
        for _attempt in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", controlplane.free_port()))
            s.listen()
            socks.append(s)
        yield [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def picking_first(taken: list[int]) -> Callable[..., int]:
    """A free_port() that hands out TAKEN first, then free ports (TAKEN are bound: it skips them)."""
    queue = list(taken)
    real = controlplane.free_port

    def pick(avoid: Collection[int] = ()) -> int:
        return queue.pop(0) if queue else real(avoid)
    return pick


@pytest.fixture
def stand_in_plane(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[ControlPlane]:
    """A ControlPlane (not started) whose components are STAND_IN on their ports."""
    monkeypatch.setattr(controlplane, "component_argv", lambda c, *, ports, **_: [
        sys.executable, "-c", STAND_IN, *map(str, ports.of(c))])
    plane = control_plane("ports", tmp_path, {})
    plane.layout.logs.mkdir(parents=True)
    try:
        yield plane
    finally:
        plane.stop()


def test_ports_are_distinct_and_kwok_is_left_to_the_kernel() -> None:
    ports = Ports.pick()
    picked = [p for c in COMPONENTS for p in ports.of(c)]
    assert len(picked) == len(set(picked)) == 5 and all(picked)
    assert ports.kwok == 0 and COMPONENT_PORTS["kwok"] == ()


def test_listening_ports_are_the_process_own() -> None:
    with occupied(1) as (port,):
        assert port in listening_ports(os.getpid())
    assert listening_ports(2**22 + 1) == set()  # no such process


def test_a_component_whose_port_was_taken_runs_again_on_a_new_one(stand_in_plane: ControlPlane) -> None:
    plane = stand_in_plane
    with occupied(2) as taken:
        plane.ports.etcd_client, plane.ports.scheduler = taken
        for c in ("etcd", "kube-scheduler"):
            plane._spawn(c)
        plane._settle(["etcd", "kube-scheduler"], time.monotonic() + 30)
        for c in ("etcd", "kube-scheduler"):
            assert not set(plane.ports.of(c)) & set(taken)
            assert set(plane.ports.of(c)) <= listening_ports(plane.procs[c].pid)
            assert plane.layout.log_file(c).read_text().count("Address already in use") == 1


def test_after_the_last_run_the_error_says_the_port_was_taken(
        stand_in_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch) -> None:
    plane = stand_in_plane
    with occupied(1) as (port,):
        plane.ports.scheduler = port
        monkeypatch.setattr(controlplane, "free_port", lambda avoid=(): port)
        plane._spawn("kube-scheduler")
        with pytest.raises(ControlPlaneError, match=rf"kube-scheduler exited with status 1 after another process "
                                                    rf"took its port\(s\) {BIND_ATTEMPTS} times in a row"):
            plane._settle(["kube-scheduler"], time.monotonic() + 30)
    assert plane.layout.log_file("kube-scheduler").read_text().count("Address already in use") == BIND_ATTEMPTS


def test_a_component_that_fails_otherwise_is_not_run_again(
        stand_in_plane: ControlPlane, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(controlplane, "component_argv", lambda *_a, **_k: [sys.executable, "-c", "exit(3)"])
    stand_in_plane._spawn("kube-scheduler")
    with pytest.raises(ControlPlaneError, match=r"kube-scheduler exited with status 3; last lines"):
        stand_in_plane._settle(["kube-scheduler"], time.monotonic() + 30)


# -- the real control plane ---------------------------------------------------------------------

@contextlib.contextmanager
def short_root() -> Iterator[Path]:
    """A state dir with a short path: the egress proxy's Unix socket path must stay under 108 bytes."""
    root = Path(tempfile.mkdtemp(prefix="twin-"))
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def assert_up(plane: ControlPlane) -> None:
    assert plane._get("/readyz") == "ok"
    for c in COMPONENTS:
        assert set(plane.ports.of(c)) <= listening_ports(plane.procs[c].pid), c
    assert plane.ports.kwok in listening_ports(plane.procs["kwok"].pid)


@require(COMPONENTS)
def test_every_component_starts_although_its_first_port_was_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every port free_port() picks first is bound by another process before its component starts."""
    with occupied(5) as taken, short_root() as root:
        monkeypatch.setattr(controlplane, "free_port", picking_first(taken))
        plane = control_plane("taken", root, {})
        assert sorted(p for c in COMPONENTS for p in plane.ports.of(c)) == sorted(taken)
        try:
            plane.start(timeout=120)
            assert_up(plane)
            for c in COMPONENTS:
                assert not set(plane.ports.of(c)) & set(taken), c
                if c != "kwok":  # its first run lost its port
                    assert "address already in use" in plane.layout.log_file(c).read_text().lower(), c
        finally:
            plane.stop()


TWINS_IN_A_ROW = 4  # three starts while the previous plane's ports are in TIME_WAIT (8 took 95 s of CI)


@require(COMPONENTS)
def test_many_control_planes_start_in_a_row() -> None:
    """Each start picks ports afresh, while the previous plane's ports are still in TIME_WAIT."""
    took = []
    for i in range(TWINS_IN_A_ROW):
        with short_root() as root:
            plane = control_plane(f"row{i}", root, {})
            started = time.monotonic()
            try:
                plane.start(timeout=120)
                took.append(time.monotonic() - started)
                assert_up(plane)
            finally:
                plane.stop()
    print(f"{TWINS_IN_A_ROW} control planes started in {sum(took):.1f} s "
          f"(each {min(took):.1f}-{max(took):.1f} s)")
