"""The real Kubernetes control plane of a twin cluster, with kwok as every kubelet.

etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok run as local
processes on 127.0.0.1, built from their Go modules at the pinned versions (binaries.py),
configured the way kubeadm configures a kind node (static-pod flags of kubeadm v1.35:
RBAC + Node authorization, NodeRestriction, ServiceAccount token signing, X.509 client
certificates for every component, the controller-manager allocating node pod CIDRs from the
kind config's pod subnet). Why our own orchestration and not kwokctl's binary runtime:
kwokctl downloads its binaries, gives every component one admin certificate, and names its
nodes its own way; the lab needs kind's node names and addresses, per-component identities,
and a supervisor that notices a component that died.

Network safety: every component listens on 127.0.0.1 only. Nodes carry kind's addresses
(InternalIP 172.18.0.x) as data; the API server reaches a "kubelet" (kwok's server, for
logs) through its egress selector - an HTTP CONNECT proxy on a Unix socket in the cluster's
state directory that maps <node address>:10250 to kwok on loopback and refuses anything
else. Nothing dials a lab address.
"""
from __future__ import annotations

import contextlib
import ctypes
import json
import logging
import os
import random
import signal
import socket
import ssl
import subprocess
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Sequence

import yaml

from . import binaries
from .pki import ADMIN, APISERVER_ETCD, APISERVER_KUBELET, CONTROLLER_MANAGER, KWOK, SCHEDULER, Client, Pki

log = logging.getLogger("kindlab_twin.controlplane")

COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok")
# The Ports fields each component binds. kwok has none to pick: it binds port 0 (no component
# reads its address from a flag but the egress proxy, which learns it once kwok listens).
COMPONENT_PORTS = {"etcd": ("etcd_client", "etcd_peer"), "kube-apiserver": ("apiserver",),
                   "kube-controller-manager": ("controller_manager",), "kube-scheduler": ("scheduler",),
                   "kwok": ()}
# A component whose port another process took in between exits with this in its log (Go's
# EADDRINUSE text, matched in lower case); it runs again on new ports, this many times in all.
ADDRESS_IN_USE = "address already in use"
BIND_ATTEMPTS = 5
# kwok v0.8.0 (v0.7.0 alike) builds each lifecycle stage's CEL environment on the stage's first
# event (pkg/utils/lifecycle, Stage.init) through easycel v0.6.0, whose type caches are package
# maps without a lock (getTypeValue, getStructFieldMap): two goroutines meeting a type for the first
# time at once end kwok with Go's "concurrent map" fatal error (exit 2). Once in CI (the unit run of
# 0790534) kwok crashed in Stage.init as the cluster started; a stage's first event, or a first
# compile, can also come later. kwok keeps no state of its own, so a run that crashed through one of
# these frames is started again, this many times at most in the control plane's life; any other
# exit is reported as before.
KNOWN_CRASHES = {"kwok": ("lifecycle.(*Stage).init", "github.com/wzshiming/easycel.")}
CRASH_RESTARTS = 2
KUBELET_PORT = 10250  # what nodes advertise (daemonEndpoints), as a kubelet does
KWOK_API = "kwok.x-k8s.io/v1alpha1"
KWOK_CRD_PREFIX = "kwok.x-k8s.io_"
READY_TIMEOUT = 60.0
# kwok keeps the nodes Ready and finishes pod deletion as a kubelet would; starting containers
# stays with the twin's kubelet emulation (emulations/kubelet.py), because whether a lab's
# container comes up depends on the cluster (ingress-nginx exits when its publish Service is
# missing) and kwok's stages cannot ask it. So kwok's pod-ready and pod-complete stages are left out.
KWOK_STAGES = ("node-initialize", "node-heartbeat-with-lease", "pod-delete")


class ControlPlaneError(Exception):
    """A component could not start, or died; the message names it and shows its last log lines."""


@dataclass(frozen=True)
class NodeSpec:
    name: str
    internal_ip: str
    object: dict[str, Any]  # the Node as kind's kubelet registers it (kindnodes.desired_nodes)


@dataclass
class Layout:
    """Where a cluster's control-plane files live (under the twin's state dir)."""

    root: Path

    @property
    def pki(self) -> Path:
        return self.root / "pki"

    @property
    def etcd_data(self) -> Path:
        return self.root / "etcd"

    @property
    def logs(self) -> Path:
        return self.root / "logs"

    @property
    def egress_socket(self) -> Path:
        return self.root / "egress.sock"

    def kubeconfig(self, client: Client) -> Path:
        return self.root / f"{client.stem}.kubeconfig"

    def log_file(self, component: str) -> Path:
        return self.logs / f"{component}.log"


def _ephemeral_low() -> int:
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port(avoid: Collection[int] = ()) -> int:
    """A free loopback port below the kernel's ephemeral range, not in AVOID: a port the kernel
    hands out (bind to 0) can be taken, before the component binds it, by one of the many
    outgoing connections the components open (kube-apiserver to etcd), which draw from that
    range. Another process can still bind it first: ControlPlane._settle then picks again."""
    low = _ephemeral_low()
    for _attempt in range(200):
        port = random.randrange(max(1024, low - 12000), low)
        if port in avoid:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise ControlPlaneError(f"no free loopback port below {low}")


def listening_ports(pid: int) -> set[int]:
    """The IPv4 TCP ports process PID listens on (its sockets in LISTEN state); empty once it
    has exited."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        rows = Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]
    except OSError:
        return set()
    ports = set()
    for row in rows:
        cols = row.split()
        if cols[3] == "0A" and cols[9] in inodes:  # 0A: TCP_LISTEN
            ports.add(int(cols[1].rsplit(":", 1)[1], 16))
    return ports


def client_kubeconfig(pki: Pki, client: Client, server: str, cluster: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": cluster, "preferences": {},
        "clusters": [{"name": cluster, "cluster": {"server": server, "certificate-authority": str(pki.ca_cert)}}],
        "users": [{"name": client.user, "user": {"client-certificate": str(pki.path(client.stem, "crt")),
                                                 "client-key": str(pki.path(client.stem, "key"))}}],
        "contexts": [{"name": cluster, "context": {"cluster": cluster, "user": client.user}}],
    }


def egress_selector_config(socket_path: Path) -> dict[str, Any]:
    return {"apiVersion": "apiserver.k8s.io/v1beta1", "kind": "EgressSelectorConfiguration",
            "egressSelections": [{"name": "cluster", "connection": {
                "proxyProtocol": "HTTPConnect", "transport": {"uds": {"udsName": str(socket_path)}}}}]}


@dataclass
class Ports:
    """The control plane's loopback ports. kwok binds a port the kernel picks (0 here until
    ControlPlane reads it back); the others are picked by free_port() and bound later by their
    component, which can find one taken (ControlPlane._settle)."""

    etcd_client: int = 0
    etcd_peer: int = 0
    apiserver: int = 0
    controller_manager: int = 0
    scheduler: int = 0
    kwok: int = 0

    @classmethod
    def pick(cls) -> Ports:
        ports = cls()
        for component in COMPONENTS:
            ports.renew(component)
        return ports

    def of(self, component: str) -> tuple[int, ...]:
        """The ports COMPONENT binds (kube-apiserver: --secure-port, not the etcd port it dials)."""
        return tuple(getattr(self, name) for name in COMPONENT_PORTS[component])

    def renew(self, component: str) -> None:
        """New free ports for COMPONENT, distinct from every other port of the control plane:
        two components given one port would take it from each other."""
        for name in COMPONENT_PORTS[component]:
            setattr(self, name, free_port(avoid=set(vars(self).values())))


def component_argv(component: str, *, bins: dict[str, Path], layout: Layout, pki: Pki, ports: Ports,
                   cluster: str, pod_subnet: str, service_subnet: str, advertise_address: str) -> list[str]:
    """The command line of one component (kubeadm v1.35's static-pod flags where they apply)."""
    p = pki.path
    if component == "etcd":
        client_url = f"https://127.0.0.1:{ports.etcd_client}"
        peer_url = f"http://127.0.0.1:{ports.etcd_peer}"
        return [str(bins["etcd"]), "--name", cluster, "--data-dir", str(layout.etcd_data),
                "--listen-client-urls", client_url, "--advertise-client-urls", client_url,
                "--listen-peer-urls", peer_url, "--initial-advertise-peer-urls", peer_url,
                "--initial-cluster", f"{cluster}={peer_url}", "--listen-metrics-urls", "",
                "--cert-file", str(p("etcd-server", "crt")), "--key-file", str(p("etcd-server", "key")),
                "--client-cert-auth", "--trusted-ca-file", str(pki.ca_cert),
                # A lab's etcd holds nothing worth an fsync per write; the cluster is thrown away.
                "--unsafe-no-fsync", "--snapshot-count", "10000", "--log-level", "warn"]
    if component == "kube-apiserver":
        return [str(bins["kube-apiserver"]),
                "--bind-address=127.0.0.1", f"--secure-port={ports.apiserver}",
                f"--advertise-address={advertise_address}",
                f"--etcd-servers=https://127.0.0.1:{ports.etcd_client}",
                f"--etcd-cafile={pki.ca_cert}", f"--etcd-certfile={p(APISERVER_ETCD.stem, 'crt')}",
                f"--etcd-keyfile={p(APISERVER_ETCD.stem, 'key')}",
                f"--tls-cert-file={p('apiserver', 'crt')}", f"--tls-private-key-file={p('apiserver', 'key')}",
                f"--client-ca-file={pki.ca_cert}",
                "--anonymous-auth=false",
                "--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
                "--allow-privileged=true",
                f"--service-cluster-ip-range={service_subnet}",
                f"--service-account-key-file={p('sa', 'pub')}",
                f"--service-account-signing-key-file={p('sa', 'key')}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--kubelet-client-certificate={p(APISERVER_KUBELET.stem, 'crt')}",
                f"--kubelet-client-key={p(APISERVER_KUBELET.stem, 'key')}",
                "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname",
                f"--egress-selector-config-file={layout.root / 'egress-selector.yaml'}",
                "--profiling=false"]
    if component == "kube-controller-manager":
        kc = layout.kubeconfig(CONTROLLER_MANAGER)
        return [str(bins["kube-controller-manager"]),
                f"--kubeconfig={kc}", f"--authentication-kubeconfig={kc}", f"--authorization-kubeconfig={kc}",
                "--bind-address=127.0.0.1", f"--secure-port={ports.controller_manager}",
                f"--cluster-name={cluster}", "--leader-elect=false",
                f"--cluster-signing-cert-file={pki.ca_cert}", f"--cluster-signing-key-file={p('ca', 'key')}",
                f"--root-ca-file={pki.ca_cert}", f"--service-account-private-key-file={p('sa', 'key')}",
                "--use-service-account-credentials=true",
                "--controllers=*,bootstrapsigner,tokencleaner",
                "--allocate-node-cidrs=true", f"--cluster-cidr={pod_subnet}",
                f"--service-cluster-ip-range={service_subnet}", "--profiling=false"]
    if component == "kube-scheduler":
        kc = layout.kubeconfig(SCHEDULER)
        return [str(bins["kube-scheduler"]),
                f"--kubeconfig={kc}", f"--authentication-kubeconfig={kc}", f"--authorization-kubeconfig={kc}",
                "--bind-address=127.0.0.1", f"--secure-port={ports.scheduler}", "--leader-elect=false",
                "--profiling=false"]
    if component == "kwok":
        return [str(bins["kwok"]), f"--kubeconfig={layout.kubeconfig(KWOK)}", f"--config={layout.root / 'kwok.yaml'}",
                "--node-lease-duration-seconds=40", "--enable-crds=Logs",
                "--manage-all-nodes=true", "--server-address=127.0.0.1:0",
                f"--node-port={KUBELET_PORT}",
                f"--tls-cert-file={p('kubelet-serving', 'crt')}",
                f"--tls-private-key-file={p('kubelet-serving', 'key')}"]
    raise ValueError(f"unknown component {component!r}")


# Loaded once, at import: nothing may be loaded between fork and exec in a threaded process.
_LIBC = ctypes.CDLL("libc.so.6", use_errno=True)
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """Child side of fork: SIGKILL this process when the thread that started it dies
    (PR_SET_PDEATHSIG), so a killed supervisor leaves no component behind. Start components
    from a thread that lives as long as the cluster (the supervisor's main thread)."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def last_lines(path: Path, n: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-n:])
    except OSError:
        return "(no log)"


class EgressProxy:
    """HTTP CONNECT on a Unix socket: <node address>:10250 -> kwok on loopback; nothing else.
    target_port is kwok's, set once kwok listens (0 until then: 502)."""

    def __init__(self, path: Path, node_ips: Sequence[str], kubelet_port: int, target_port: int = 0) -> None:
        self.path = path
        self.allowed = {f"{ip}:{kubelet_port}" for ip in node_ips}
        self.target_port = target_port
        self._sock: socket.socket | None = None

    def start(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(self.path))
        os.chmod(self.path, 0o600)
        sock.listen(16)
        self._sock = sock
        threading.Thread(target=self._accept, name="egress-proxy", daemon=True).start()

    def stop(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def _accept(self) -> None:
        assert self._sock is not None
        while True:
            try:
                conn = self._sock.accept()[0]
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 8192:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            line = head.split(b"\r\n", 1)[0].decode("latin-1").split()
            if len(line) < 2 or line[0] != "CONNECT" or line[1] not in self.allowed:
                log.warning("egress proxy refused %s", " ".join(line[:2]))
                conn.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                return
            try:
                if not self.target_port:
                    raise ConnectionRefusedError("kwok is not listening yet")
                upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            except OSError as e:
                conn.sendall(f"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nX-Error: {e}\r\n\r\n".encode())
                return
            with upstream:
                upstream.settimeout(None)
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                rest = head.split(b"\r\n\r\n", 1)[1]
                if rest:
                    upstream.sendall(rest)
                _pipe(conn, upstream)


def _pipe(a: socket.socket, b: socket.socket) -> None:
    def copy(src: socket.socket, dst: socket.socket) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

    t = threading.Thread(target=copy, args=(b, a), daemon=True)
    t.start()
    copy(a, b)
    t.join(timeout=30)


class ControlPlane:
    """Starts, watches and stops the control-plane processes of one twin cluster."""

    def __init__(self, *, cluster: str, root: Path, nodes: Sequence[NodeSpec], pod_subnet: str,
                 service_subnet: str, kubernetes_service_ip: str) -> None:
        self.cluster = cluster
        self.layout = Layout(root)
        self.pki = Pki(self.layout.pki)
        self.nodes = list(nodes)
        self.pod_subnet = pod_subnet
        self.service_subnet = service_subnet
        self.kubernetes_service_ip = kubernetes_service_ip
        self.ports = Ports.pick()
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.egress: EgressProxy | None = None
        self._bins: dict[str, Path] = {}
        self._log_offsets: dict[str, int] = {}  # where each component's current run starts in its log
        self._restarts: dict[str, int] = {}  # runs again after a KNOWN_CRASHES crash, per component
        self._up = False  # start() has returned: a component started again must be waited for here

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.ports.apiserver}"

    # -- start -------------------------------------------------------------------------------
    def start(self, *, timeout: float = READY_TIMEOUT, say: Callable[[str], None] | None = None) -> None:
        """Everything up, nodes registered and Ready with pod CIDRs; raises ControlPlaneError,
        having stopped whatever it had started."""
        try:
            self._start(timeout, say or _log)
        except BaseException:
            self.stop()
            raise

    def _start(self, timeout: float, say: Callable[[str], None]) -> None:
        missing = binaries.missing(COMPONENTS)
        if missing:
            raise ControlPlaneError(
                f"pinned binaries not built yet: {', '.join(missing)}; run `kindlab-twin build binaries`")
        self._bins = {name: binaries.binary_path(name) for name in COMPONENTS}
        deadline = time.monotonic() + timeout
        control_ip = self.nodes[0].internal_ip
        self.layout.logs.mkdir(parents=True, exist_ok=True)
        self.pki.create(
            server_ips=["127.0.0.1", self.kubernetes_service_ip, control_ip],
            server_names=["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc",
                          "kubernetes.default.svc.cluster.local", self.nodes[0].name],
            kubelet_ips=[n.internal_ip for n in self.nodes])
        _write_yaml(self.layout.root / "egress-selector.yaml", egress_selector_config(self.layout.egress_socket))
        # kwok's stages and CRDs, as shipped in its module (binaries.py copies them beside the binary).
        kwok_assets = sorted(binaries.assets_dir("kwok").glob("*.yaml"))
        crds = [p for p in kwok_assets if p.name.startswith(KWOK_CRD_PREFIX)]
        stages = [p for p in kwok_assets if p.stem in KWOK_STAGES]
        (self.layout.root / "kwok.yaml").write_text("\n---\n".join(p.read_text() for p in stages))
        self.egress = EgressProxy(self.layout.egress_socket, [n.internal_ip for n in self.nodes], KUBELET_PORT)
        self.egress.start()
        # One at a time: the API server's flags name etcd's port, the clients' kubeconfigs its own.
        for component in ("etcd", "kube-apiserver"):
            self._spawn(component)
            self._settle([component], deadline)
        for client in (ADMIN, CONTROLLER_MANAGER, SCHEDULER, KWOK):
            _write_yaml(self.layout.kubeconfig(client), client_kubeconfig(self.pki, client, self.server, self.cluster))
        self._wait("kube-apiserver /readyz", lambda: self._get("/readyz") == "ok", deadline)
        say(f"  kube-apiserver ready ({self.server})")
        for crd in crds:
            self._post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", yaml.safe_load(crd.read_text()))
        self._wait("kwok's CRDs served", lambda: bool(self._get(f"/apis/{KWOK_API}")), deadline)
        clients = ["kube-controller-manager", "kube-scheduler", "kwok"]
        for c in clients:
            self._spawn(c)
        for node in self.nodes:
            self._post("/api/v1/nodes", node.object)
        self._settle(clients, deadline)
        self._wait("nodes Ready with pod CIDRs", self._nodes_ready, deadline)
        self._wait("kwok's server listening", self._kwok_listening, deadline)
        say(f"  {len(self.nodes)} node(s) Ready")
        self._up = True

    def _argv(self, component: str) -> list[str]:
        return component_argv(component, bins=self._bins, layout=self.layout, pki=self.pki, ports=self.ports,
                              cluster=self.cluster, pod_subnet=self.pod_subnet, service_subnet=self.service_subnet,
                              advertise_address=self.nodes[0].internal_ip)

    def _spawn(self, component: str) -> None:
        log_file = self.layout.log_file(component)
        out = open(log_file, "ab")  # noqa: SIM115 - owned by the child from here
        try:
            self._log_offsets[component] = out.tell()
            self.procs[component] = subprocess.Popen(
                self._argv(component), stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                cwd=self.layout.root, preexec_fn=_die_with_parent)  # noqa: PLW1509 - prctl only
        finally:
            out.close()

    def _settle(self, components: Sequence[str], deadline: float) -> None:
        """Wait until each of COMPONENTS listens on its ports. free_port() cannot reserve a port:
        another process may bind it before the component does, which then exits with "address
        already in use"; it is started again on new ports, BIND_ATTEMPTS runs in all."""
        runs = dict.fromkeys(components, 1)
        waiting = list(components)
        while waiting:
            for c in list(waiting):
                proc = self.procs[c]
                if proc.poll() is None:
                    if set(self.ports.of(c)) <= listening_ports(proc.pid):
                        waiting.remove(c)
                elif not self._lost_port(c):
                    self._run_again_or_raise(c)
                elif runs[c] == BIND_ATTEMPTS:
                    raise self._exited(c, f" after another process took its port(s) {BIND_ATTEMPTS} times in a row")
                else:
                    runs[c] += 1
                    taken = self.ports.of(c)
                    self.ports.renew(c)
                    log.warning("%s: port(s) %s taken by another process; starting it again on %s",
                                c, taken, self.ports.of(c))
                    self._spawn(c)
            self.check(skip=waiting)
            if waiting and time.monotonic() > deadline:
                raise ControlPlaneError(f"timed out waiting for {', '.join(waiting)} to listen on "
                                        f"{[self.ports.of(c) for c in waiting]}; last lines of the component logs:\n"
                                        + self._log_tails())
            time.sleep(0.05)

    def _lost_port(self, component: str) -> bool:
        """Whether the component's current run logged that a port of its was taken."""
        return ADDRESS_IN_USE in self._current_log(component).lower()

    def _current_log(self, component: str) -> str:
        """What the component's current run wrote to its log ("" if unreadable)."""
        try:
            with open(self.layout.log_file(component), "rb") as f:
                f.seek(self._log_offsets.get(component, 0))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    def _run_again_or_raise(self, component: str) -> None:
        """Start an exited component again if its run crashed through a frame KNOWN_CRASHES names
        (at most CRASH_RESTARTS times; its log keeps every run), else raise as check() does."""
        log_text = self._current_log(component)
        frame = next((f for f in KNOWN_CRASHES.get(component, ()) if f in log_text), None)
        if frame is None:
            raise self._exited(component)
        runs_again = self._restarts.get(component, 0)
        if runs_again == CRASH_RESTARTS:
            raise self._exited(component, f" (crashed in {frame} {runs_again + 1} times)")
        self._restarts[component] = runs_again + 1
        log.warning("%s exited with status %s, in %s (%s); starting it again", component,
                    self.procs[component].returncode, frame, self._go_crash(component) or "see its log")
        self._spawn(component)
        if self._up and component == "kwok":
            # The new run binds another port; while starting, start() reads it once nodes are Ready.
            self._wait("kwok's server listening again", self._kwok_listening, time.monotonic() + READY_TIMEOUT)

    def _go_crash(self, component: str) -> str:
        """The first line of a Go crash in the component's current run ("fatal error: ...",
        "panic: ..."), which a long trace pushes out of the log's last lines; "" if none."""
        return next((line for line in self._current_log(component).splitlines()
                     if line.startswith(("fatal error:", "panic:"))), "")

    def _kwok_listening(self) -> bool:
        """kwok binds port 0: read the kernel's choice back and point the egress proxy at it."""
        ports = listening_ports(self.procs["kwok"].pid)
        if len(ports) != 1:
            return False
        (self.ports.kwok,) = ports
        assert self.egress is not None
        self.egress.target_port = self.ports.kwok
        return True

    def _wait(self, what: str, ready: Callable[[], bool], deadline: float) -> None:
        while True:
            self.check()
            try:
                if ready():
                    return
            except (OSError, ValueError, KeyError):
                pass
            if time.monotonic() > deadline:
                raise ControlPlaneError(f"timed out waiting for {what}; last lines of the component logs:\n"
                                        + self._log_tails())
            time.sleep(0.2)

    def _nodes_ready(self) -> bool:
        items = json.loads(self._get("/api/v1/nodes"))["items"]
        ready = {n["metadata"]["name"] for n in items
                 if n["spec"].get("podCIDR") and any(c["type"] == "Ready" and c["status"] == "True"
                                                     for c in n.get("status", {}).get("conditions", []))}
        return all(n.name in ready for n in self.nodes)

    # -- watch and stop ----------------------------------------------------------------------
    def check(self, skip: Collection[str] = ()) -> None:
        """Raise ControlPlaneError naming the first component that exited (but those in SKIP),
        with its last log lines, unless _run_again_or_raise starts it again."""
        for component, proc in self.procs.items():
            if component not in skip and proc.poll() is not None:
                self._run_again_or_raise(component)

    def _exited(self, component: str, why: str = "") -> ControlPlaneError:
        log_file = self.layout.log_file(component)
        crash = self._go_crash(component)
        return ControlPlaneError(f"{component} exited with status {self.procs[component].returncode}{why}"
                                 + (f", {crash}" if crash else "")
                                 + f"; last lines of its log ({log_file}):\n" + last_lines(log_file))

    def stop(self, grace: float = 10.0) -> None:
        for component in reversed(list(self.procs)):
            proc = self.procs[component]
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(grace)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        self.procs.clear()
        if self.egress is not None:
            self.egress.stop()

    def _log_tails(self) -> str:
        return "\n".join(f"--- {c}:\n{last_lines(self.layout.log_file(c), 5)}" for c in self.procs)

    # -- admin client --------------------------------------------------------------------------
    def _opener(self) -> urllib.request.OpenerDirector:
        """Admin client for 127.0.0.1 that never goes through an HTTP(S)_PROXY of the environment."""
        ctx = ssl.create_default_context(cafile=str(self.pki.ca_cert))
        ctx.load_cert_chain(str(self.pki.path(ADMIN.stem, "crt")), str(self.pki.path(ADMIN.stem, "key")))
        return urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=ctx))

    def _get(self, path: str) -> str:
        with self._opener().open(self.server + path, timeout=5) as resp:
            return str(resp.read().decode())

    def _post(self, path: str, body: dict[str, Any]) -> None:
        req = urllib.request.Request(self.server + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
        with self._opener().open(req, timeout=10):
            pass


def _log(message: str) -> None:
    log.info("%s", message)


def _write_yaml(path: Path, doc: dict[str, Any]) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False)
