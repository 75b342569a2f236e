"""The status watch over Gateway API on a real kube-apiserver (verify/status/ with the real client):
the pinned CRDs, a Gateway and an HTTPRoute, and the test as a fake controller writing their status
with a field manager of its own choosing (`traefik`, as real Traefik does) during the window. Each
write is recorded once, with its manager, by one list and one watch stream per kind; a second
control plane without the CRDs watches Ingresses only, with no error."""
from __future__ import annotations

import json
import threading
import time
from typing import Any, Iterator

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils import _versions
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.client import Client
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.options import parse_options
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.run import run
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import Selection
from kindlab_twin import binaries
from kindlab_twin.controlplane import COMPONENTS, ControlPlane
from kindlab_twin.pki import ADMIN

from realcp import control_plane, kubectl, require

pytestmark = require((*COMPONENTS, "gateway-api-crds"))

GATEWAY_API = "gateway.networking.k8s.io/v1"
CONTROLLER = "traefik.io/gateway-controller"
Obj = dict[str, Any]


@pytest.fixture
def plane(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ControlPlane]:
    cp = control_plane("gwstatus", tmp_path_factory.mktemp("gwstatus"), {})
    try:
        cp.start(timeout=90)
        yield cp
    finally:
        cp.stop()


def crds(cp: ControlPlane) -> None:
    path = binaries.cache_root() / _versions.GATEWAY_API_OFFLINE_CRDS
    kubectl(cp, "apply", "--server-side", "-f", str(path))
    kubectl(cp, "wait", "--for=condition=Established", "--timeout=60s", "crd/gateways.gateway.networking.k8s.io",
            "crd/httproutes.gateway.networking.k8s.io", "crd/grpcroutes.gateway.networking.k8s.io")
    # Established is not served yet: a kind's watch cache answers 429 "storage is (re)initializing" for
    # a moment after, which the status watch rightly counts as blind. kubectl retries 429s until it is ready.
    kubectl(cp, "get", "gateways,httproutes,grpcroutes", "-A")


def objects() -> list[Obj]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "apps"}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web", "namespace": "apps"},
         "spec": {"rules": [{"host": "web.example.test", "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {
             "service": {"name": "web", "port": {"number": 80}}}}]}}]}},
        {"apiVersion": GATEWAY_API, "kind": "GatewayClass", "metadata": {"name": "traefik"}, "spec": {"controllerName": CONTROLLER}},
        {"apiVersion": GATEWAY_API, "kind": "Gateway", "metadata": {"name": "gw", "namespace": "apps"},
         "spec": {"gatewayClassName": "traefik", "listeners": [{"name": "web", "port": 8000, "protocol": "HTTP"}]}},
        {"apiVersion": GATEWAY_API, "kind": "HTTPRoute", "metadata": {"name": "app", "namespace": "apps"},
         "spec": {"parentRefs": [{"name": "gw"}], "hostnames": ["app.example.test"],
                  "rules": [{"backendRefs": [{"name": "web", "port": 80}]}]}},
    ]


def condition(kind: str, ok: bool = True, reason: str | None = None) -> Obj:
    return {"type": kind, "status": "True" if ok else "False", "reason": reason or kind, "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z", "observedGeneration": 1}


def write_status(cp: ControlPlane, kind: str, name: str, status: Obj, manager: str = "traefik") -> None:
    """A status write as a controller makes it: the status subresource, with its field manager."""
    kubectl(cp, "patch", kind, name, "-n", "apps", "--subresource=status", "--type=merge", f"--field-manager={manager}",
            "-p", json.dumps({"status": status}))


def gateway_status(address: str) -> Obj:
    return {"addresses": [{"type": "IPAddress", "value": address}], "conditions": [condition("Accepted"), condition("Programmed")]}


def route_status(accepted: bool) -> Obj:
    return {"parents": [{"parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"},
                         "controllerName": CONTROLLER,
                         "conditions": [condition("Accepted", accepted, None if accepted else "NotAllowedByListeners"),
                                        condition("ResolvedRefs")]}]}


class Counting:
    def __init__(self, client: Client) -> None:
        self.client, self.requests, self.lock = client, [], threading.Lock()

    def list_with_version(self, api_version: str, kind: str, **kw: Any) -> Any:
        with self.lock:
            self.requests.append(("list", kind))
        return self.client.list_with_version(api_version, kind, **kw)

    def watch(self, api_version: str, kind: str, **kw: Any) -> Any:
        with self.lock:
            self.requests.append(("watch", kind))
        return self.client.watch(api_version, kind, **kw)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.client, name)


def test_gateway_and_route_status_writes_are_recorded_once_each_with_their_manager(plane: ControlPlane) -> None:
    crds(plane)
    kubectl(plane, "apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(objects()))
    write_status(plane, "gateway", "gw", gateway_status("100.64.0.1"))
    write_status(plane, "httproute", "app", route_status(True))
    client = Counting(Client(str(plane.layout.kubeconfig(ADMIN))))
    box: dict[str, Any] = {}
    watch = threading.Thread(target=lambda: box.update(r=run(client, Selection(namespaces=["apps"]),
                                                             parse_options(6, 0, True, ["100.64.0.0/16"], False, True))))
    watch.start()
    time.sleep(2)
    write_status(plane, "gateway", "gw", gateway_status("100.64.0.2"))  # another install's address: a flap
    write_status(plane, "gateway", "gw", gateway_status("100.64.0.1"))
    write_status(plane, "httproute", "app", route_status(False), manager="other-controller")
    watch.join(40)
    r = box["r"]
    gateway = [(e["old"], e["new"], e["manager"]) for e in r["timeline"] if e.get("kind") == "Gateway"]
    assert gateway == [(["100.64.0.1"], ["100.64.0.2"], "traefik"), (["100.64.0.2"], ["100.64.0.1"], "traefik")]
    [route] = [e for e in r["timeline"] if e.get("kind") == "HTTPRoute"]
    assert (route["parent"], route["manager"], route["conditions_new"][0]) == (
        "apps/gw by " + CONTROLLER, "other-controller", "Accepted=False (NotAllowedByListeners)")
    # No controller pod runs here: nothing names a pod, and the row says so rather than guess.
    assert all(e["pod"] is None for e in r["timeline"])
    assert r["gateways"]["apps/gw"]["reason"] == "2 changes in 6s (max 0): 100.64.0.1 ↔ 100.64.0.2"
    assert r["gateways"]["apps/gw"]["writers"]["managers"] == ["traefik"]
    assert not r["routes"]["apps/app"]["passed"] and "NotAllowedByListeners" in r["routes"]["apps/app"]["reason"]
    assert r["ingresses"]["apps/web"]["passed"] and r["blind_intervals"] == []
    kinds = ("Ingress", "Gateway", "HTTPRoute", "GRPCRoute")  # the pinned CRDs serve GRPCRoute too: watched, none there
    assert sorted(set(client.requests)) == sorted({(v, k) for v in ("list", "watch") for k in kinds})
    assert all(client.requests.count(("list", k)) == 1 for k in kinds) and r["grpcroutes"] == {}


def test_without_the_crds_only_ingresses_are_watched_and_nothing_fails(plane: ControlPlane) -> None:
    kubectl(plane, "apply", "--server-side", "-f", "-", stdin=yaml.safe_dump_all(objects()[:2]))
    client = Counting(Client(str(plane.layout.kubeconfig(ADMIN))))
    r = run(client, Selection(namespaces=["apps"]), parse_options(1, 0, True, [], False, True))
    assert {k for _v, k in client.requests} == {"Ingress"}
    assert "gateways" not in r and "routes" not in r and r["passed"]
    assert r["unserved"] == ["GRPCRoute", "Gateway", "HTTPRoute"]  # said, so a report expecting them can say why there are none


def grpc_route(name: str, parents: tuple[str, ...]) -> Obj:
    return {"apiVersion": GATEWAY_API, "kind": "GRPCRoute", "metadata": {"name": name, "namespace": "apps"},
            "spec": {"parentRefs": [{"name": p} for p in parents], "hostnames": ["rpc.example.test"],
                     "rules": [{"matches": [{"method": {"service": "echo.Echo", "method": "Say"}}],
                                "backendRefs": [{"name": "web", "port": 80}]}]}}


def grpc_status(resolved: bool) -> Obj:
    return {"parents": [{"parentRef": {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "gw"},
                         "controllerName": CONTROLLER,
                         "conditions": [condition("Accepted"), condition("ResolvedRefs", resolved, None if resolved else "BackendNotFound")]}]}


def test_a_grpcroute_is_a_subject_as_the_table_says_from_the_watch_to_the_report(plane: ControlPlane) -> None:
    """GRPCRoute, added to the status subjects as one table entry and its own rules file (verify/subjects/),
    on the real API server with the pinned CRDs: its parent entries are watched, judged by the route rules
    (every parent it names must accept it and resolve its backends), and reach the timeline, the Gateway
    API table and the report's verdicts without any of them naming the kind."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.expect import validate_expect
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify import timeline as tl
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.verdicts import evaluate

    crds(plane)
    kubectl(plane, "apply", "--server-side", "-f", "-",
            stdin=yaml.safe_dump_all(objects()[:4] + [grpc_route("rpc", ("gw",)), grpc_route("lonely", ("gw", "elsewhere"))]))
    write_status(plane, "gateway", "gw", gateway_status("100.64.0.1"))
    write_status(plane, "grpcroute", "rpc", grpc_status(True))
    write_status(plane, "grpcroute", "lonely", grpc_status(True))
    client = Client(str(plane.layout.kubeconfig(ADMIN)))
    box: dict[str, Any] = {}
    watch = threading.Thread(target=lambda: box.update(r=run(client, Selection(namespaces=["apps"]),
                                                             parse_options(5, 5, True, ["100.64.0.0/16"], False, True))))
    watch.start()
    time.sleep(2)
    write_status(plane, "grpcroute", "rpc", grpc_status(False))  # its backend went away
    watch.join(40)
    r = box["r"]
    [change] = [e for e in r["timeline"] if e.get("kind") == "GRPCRoute"]
    assert (change["object"], change["parent"], change["manager"]) == ("apps/rpc", "apps/gw by " + CONTROLLER, "traefik")
    assert change["conditions_new"] == ["Accepted=True", "ResolvedRefs=False (BackendNotFound)"]
    rpc, lonely = r["grpcroutes"]["apps/rpc"], r["grpcroutes"]["apps/lonely"]
    assert not rpc["passed"] and rpc["reason"] == ("parent apps/gw by %s: not ResolvedRefs: ResolvedRefs=False (BackendNotFound), "
                                                   "written by traefik" % CONTROLLER)
    # it names a second Gateway that no controller wrote an entry for: the route rule says so
    assert not lonely["passed"] and lonely["reason"] == "parent apps/elsewhere: no status entry (no controller accepted or refused it)"
    assert lonely["named_parents"] == ["apps/gw", "apps/elsewhere"] and lonely["changes"] == 0
    assert sorted(f for f in r["failures"] if f.startswith("GRPCRoute ")) == [
        "GRPCRoute apps/lonely: " + lonely["reason"], "GRPCRoute apps/rpc: " + rpc["reason"]]
    # the timeline: its own axis, the change in words, bad
    assert tl.axis_of(change) == "GRPCRoute apps/rpc"
    assert tl.change_text(change) == ("parent apps/gw by %s: ResolvedRefs=True -> ResolvedRefs=False (BackendNotFound)" % CONTROLLER, True)
    assert [row[0] for row in tl.gateway_rows(r) or [] if row[0].startswith("GRPCRoute")] == [
        "GRPCRoute apps/lonely, parent apps/gw by " + CONTROLLER, "GRPCRoute apps/rpc, parent apps/gw by " + CONTROLLER]
    # the report: lab_expect.grpcroutes is a check like routes, and a failing route met only by its expectation
    expect = validate_expect({"grpcroutes": {"failing": {"apps/rpc": "BackendNotFound"}}})
    verdicts = {(v.check, v.subject): v for v in evaluate({"status": r}, expect)}
    assert verdicts[("grpcroutes", "apps/rpc")].met and not verdicts[("grpcroutes", "apps/lonely")].met
    assert verdicts[("grpcroutes", "apps/lonely")].observed == "fail: " + lonely["reason"]
