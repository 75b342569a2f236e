from __future__ import annotations

import json
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import BackendKey, DataPlaneError, Upstream
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import dataplane as ng
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import controller_type
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.podaccess import ExecResult
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer

# The shape /dbg prints: configureBackends' reduced Backend (name, port, endpoints of {address, port})
# plus the balancing fields it keeps; written here from pkg/apis/ingress/types.go.
SAMPLE = json.dumps([
    {"name": "two-web-80", "port": 80, "sslPassthrough": False, "noServer": False,
     "endpoints": [{"address": "10.244.0.7", "port": "8080"}, {"address": "10.244.0.9", "port": "8080"}],
     "sessionAffinityConfig": {"name": "", "mode": "", "cookieSessionAffinity": {"name": ""}},
     "upstreamHashByConfig": {}, "trafficShapingPolicy": {"weight": 0, "weightTotal": 0, "header": ""}},
    {"name": "two-api-http", "port": "http", "endpoints": []},
    {"name": "upstream-default-backend", "port": 0, "endpoints": [{"address": "127.0.0.1", "port": "8181"}]},
], indent=2)

CONTAINER = {"name": "controller", "args": ["/nginx-ingress-controller", "--publish-service=$(POD_NAMESPACE)/x"]}
POD = {"metadata": {"namespace": "ingress", "name": "c1"}, "status": {"phase": "Running"}}


class Access:
    def __init__(self, result: ExecResult) -> None:
        self.result = result
        self.calls: list[tuple[str, list[str]]] = []

    def exec(self, container: str, command: list[str]) -> ExecResult:
        self.calls.append((container, command))
        return self.result

    def get(self, port: int, path: str, query: Any = ()) -> Answer:
        raise AssertionError("ingress-nginx is read by exec")


def test_parse_backends() -> None:
    backends = ng.parse_backends(SAMPLE)
    assert backends["two-web-80"] == (Upstream("10.244.0.7", "8080"), Upstream("10.244.0.9", "8080"))
    assert backends["two-api-http"] == ()
    assert ng.parse_backends("null") == {}


@pytest.mark.parametrize("text, field", [
    ("Nginx returned code 404\n", "backends: expected the JSON array"),
    ('{"name": "x"}', "backends: expected a JSON array, got dict"),
    ('[{"endpoints": []}]', "backends[0].name"),
    ('[{"name": "a", "endpoints": [{"port": "80"}]}]', "backends[0].endpoints[0].address"),
])
def test_parse_errors_name_the_field(text: str, field: str) -> None:
    with pytest.raises(DataPlaneError, match=field.replace("[", r"\[").replace("]", r"\]")):
        ng.parse_backends(text)


def test_read_execs_dbg_in_the_controller_container() -> None:
    access = Access(ExecResult(0, SAMPLE))
    reading = ng.read(access, POD, CONTAINER)
    assert access.calls == [("controller", ["/dbg", "backends", "all"])]
    assert not reading.unread and "two-web-80" in reading.backends


def test_read_passes_a_non_default_status_port() -> None:
    access = Access(ExecResult(0, "[]"))
    ng.read(access, POD, dict(CONTAINER, args=CONTAINER["args"] + ["--status-port=10250"]))
    assert access.calls[0][1] == ["/dbg", "backends", "all", "--status-port=10250"]


@pytest.mark.parametrize("result, why, fix", [
    (ExecResult(None, refused=403, error='pods "c1" is forbidden'), "exec refused by the API server (403)", "pods/exec"),
    (ExecResult(None, error='exec: "/dbg": stat /dbg: no such file or directory: unknown'), "no /dbg in the controller's image",
     "ships /dbg"),
    (ExecResult(0, 'Get "http://127.0.0.1:10246/configuration/backends": dial tcp 127.0.0.1:10246: connect: connection refused\n'),
     "/dbg did not print the backends", "127.0.0.1:10246"),
    (ExecResult(2, "", "boom"), "/dbg failed: boom", ""),
])
def test_unread_says_why_and_how(result: ExecResult, why: str, fix: str) -> None:
    reading = ng.read(Access(result), POD, CONTAINER)
    assert reading.unread.startswith(why) and fix in reading.fix and reading.backends == {}


def test_names_follow_upstream_name() -> None:
    assert ng.names({}, BackendKey("two", "test", "web", 80)) == (("two-web-80",), "")
    assert ng.names({}, BackendKey("two", "test", "api", "http", default_backend=True)) == (("two-api-http",), "")


def test_the_type_declares_its_reader() -> None:
    assert controller_type("ingress_nginx").dataplane is ng.READER


# A main backend with a canary Ingress's backend as its alternative, as configureBackends posts them (types.go:
# Backend.alternativeBackends, trafficShapingPolicy; its service keeps no name or namespace: seen on kind).
CANARY_SAMPLE = json.dumps([
    {"name": "shop-checkout-80", "port": 80, "alternativeBackends": ["shop-checkout-canary-http"], "endpoints": []},
    {"name": "shop-checkout-canary-http", "port": "http", "endpoints": [], "noServer": True,
     "trafficShapingPolicy": {"weight": 100, "weightTotal": 0, "header": "X-Canary", "headerValue": "", "cookie": "canary"}},
])
CONF = """
http {
  server {
    server_name pay.example.test ;
    listen 80 ;
    location = /checkout {
      set $namespace "shop";
      set $ingress_name "checkout";
      set $service_name "checkout";
      set $service_port "80";
      set $proxy_upstream_name "shop-checkout-80";
      proxy_pass http://upstream_balancer;
    }
  }
}
"""


class ConfAndDbg(Access):
    def exec(self, container: str, command: list[str]) -> ExecResult:
        self.calls.append((container, command))
        return ExecResult(0, CONF if command[0] == "cat" else CANARY_SAMPLE)


def test_a_location_whose_backend_has_a_canary_says_it_from_the_backends() -> None:
    [[canary]] = ng.canaries(CANARY_SAMPLE).values()
    assert list(ng.canaries(CANARY_SAMPLE)) == ["shop-checkout-80"]
    assert (canary.backend, canary.port, canary.header, canary.cookie, canary.weight, canary.weight_total) == (
        "shop-checkout-canary-http", "http", "X-Canary", "canary", 100, 100)
    assert canary.said == "shop-checkout-canary-http (port http) by header X-Canary, cookie canary, weight 100 of 100"
    assert ng.canaries("dbg: connection refused") == {}
    routers, unread = ng.read_routers(ConfAndDbg(ExecResult(0)), POD, CONTAINER)
    [location] = routers
    assert unread == "" and location.canaries == (canary,)
    assert "canary shop-checkout-canary-http" in ng.READER.describe(location)
