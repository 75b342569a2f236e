from __future__ import annotations

import json
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import BackendKey, DataPlaneError, Upstream
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import controller_type
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import dataplane as tr
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.podaccess import ExecResult
from ansible_collections.kindlab.ingress.plugins.module_utils.transport.request import Answer

# The shape of GET /api/http/services (serviceRepresentation: runtime.ServiceInfo's dynamic.Service,
# status, usedBy, serverStatus, name, provider, type), written from pkg/api and pkg/config.
PAGE = json.dumps([
    {"loadBalancer": {"servers": [{"url": "http://10.244.0.7:8080"}, {"url": "http://10.244.0.5:8080", "fenced": True}],
                      "passHostHeader": True, "strategy": "wrr"},
     "status": "enabled", "usedBy": ["two-test-web-example-com@kubernetes"],
     "serverStatus": {"http://10.244.0.7:8080": "UP"}, "name": "two-web-80@kubernetes", "provider": "kubernetes",
     "type": "loadbalancer"},
    {"loadBalancer": {"servers": [{"url": "http://[fd00:10:244::7]:8080"}]}, "name": "two-test-web-http@kubernetesingressnginx",
     "provider": "kubernetesingressnginx", "type": "loadbalancer"},
    {"weighted": {"services": [{"name": "a", "weight": 1}]}, "name": "canary@kubernetesingressnginx", "type": "weighted"},
    {"name": "api@internal", "provider": "internal", "status": "enabled"},
])

CONTAINER = {"name": "traefik", "args": ["--entryPoints.traefik.address=:9000/tcp", "--api.insecure=true",
                                         "--providers.kubernetesingress"]}
POD = {"metadata": {"namespace": "edge", "name": "t1"}, "status": {"phase": "Running"}}


class Access:
    def __init__(self, answers: list[Answer]) -> None:
        self.answers = answers
        self.calls: list[tuple[int, str, Any]] = []

    def exec(self, container: str, command: list[str]) -> ExecResult:
        raise AssertionError("Traefik is read through the pod proxy")

    def get(self, port: int, path: str, query: Any = ()) -> Answer:
        self.calls.append((port, path, dict(query)))
        return self.answers.pop(0)


def test_parse_services() -> None:
    services = tr.parse_services(PAGE)
    assert services["two-web-80@kubernetes"] == (Upstream("10.244.0.7", "8080"), Upstream("10.244.0.5", "8080", fenced=True))
    assert services["two-test-web-http@kubernetesingressnginx"] == (Upstream("fd00:10:244::7", "8080"),)
    assert services["two-test-web-http@kubernetesingressnginx"][0].target == "[fd00:10:244::7]:8080"
    assert "canary@kubernetesingressnginx" not in services and "api@internal" not in services


def test_parse_errors_name_the_field() -> None:
    with pytest.raises(DataPlaneError, match=r"services\[0\].loadBalancer.servers\[0\].url"):
        tr.parse_services('[{"name": "a@kubernetes", "loadBalancer": {"servers": [{"url": "10.0.0.1"}]}}]')
    with pytest.raises(DataPlaneError, match="expected the JSON array"):
        tr.parse_services("404 page not found")


def test_read_follows_the_pages_on_the_traefik_entrypoint() -> None:
    second = json.dumps([{"name": "one-x-80@kubernetes", "loadBalancer": {"servers": []}}])
    access = Access([Answer(200, PAGE, headers=(("x-next-page", "2"),)), Answer(200, second, headers=(("x-next-page", "1"),))])
    reading = tr.read(access, POD, CONTAINER)
    assert not reading.unread and set(reading.backends) >= {"two-web-80@kubernetes", "one-x-80@kubernetes"}
    assert [(c[0], c[1], c[2]["page"]) for c in access.calls] == [(9000, "/api/http/services", "1"), (9000, "/api/http/services", "2")]


@pytest.mark.parametrize("answer, why, fix", [
    (Answer(404, "404 page not found\n"), "the API is off or not on port 8080: HTTP 404: 404 page not found", "api.insecure: true"),
    (Answer(503, error="error trying to reach service: dial tcp 10.244.0.3:8080: connect: connection refused"),
     "the API is off or not on port 8080: HTTP 503", "api.insecure"),
    (Answer(403, error='pods "t1" is forbidden'), "pod proxy refused by the API server (403)", "pods/proxy"),
])
def test_unread_says_why_and_how(answer: Answer, why: str, fix: str) -> None:
    reading = tr.read(Access([answer]), POD, {"name": "traefik", "args": []})
    assert reading.unread.startswith(why) and fix in reading.fix and reading.backends == {}


def test_names_by_provider() -> None:
    ingress = {"provider": "kubernetes"}
    nginx = {"provider": "kubernetesingressnginx"}
    assert tr.names(ingress, BackendKey("two", "test", "web", 80)) == (("two-web-80@kubernetes",), "")
    assert tr.names(ingress, BackendKey("two", "test", "my.web", "http")) == (("two-my-web-http@kubernetes",), "")
    assert tr.names(nginx, BackendKey("two", "test", "web", "http")) == (("two-test-web-http@kubernetesingressnginx",), "")
    assert tr.names(nginx, BackendKey("two", "test", "web", 80, default_backend=True)) == (
        ("two-test-default-backend@kubernetesingressnginx",), "")
    no_rules = BackendKey("two", "test", "web", 80, default_backend=True, ingress_has_rules=False)
    assert tr.names(ingress, no_rules) == (("default-backend@kubernetes",), "")
    names, why = tr.names(ingress, BackendKey("two", "test", "web", 80, default_backend=True))
    assert names == () and "does not route spec.defaultBackend" in why


def test_the_type_declares_its_reader() -> None:
    assert controller_type("traefik").dataplane is tr.READER


# The shape of GET /api/http/routers as Traefik v3.7.13 answered on kind (runtime.RouterInfo: the router, its status
# and, for one it refused, `error`, the messages that disabled it).
ROUTERS = json.dumps([
    {"entryPoints": ["web"], "service": "shop-api-api-web", "rule": 'Host("shop.example.test") && PathRegexp("(?i)^/api(/|$)(.*)")',
     "priority": 61, "status": "enabled", "using": ["web"], "name": "shop-api-rule-0-path-0@kubernetesingressnginx",
     "provider": "kubernetesingressnginx"},
    {"entryPoints": ["web"], "service": "shop-legacy-web-http", "rule": 'Host("legacy.example.test") && PathRegexp("(?i)^/(?!internal/).*")',
     "priority": 70, "status": "disabled", "error": ["error parsing regexp: invalid or unsupported Perl syntax: `(?!`"],
     "name": "shop-legacy-rule-0-path-0@kubernetesingressnginx", "provider": "kubernetesingressnginx"},
])


def test_read_routers_says_what_traefik_built_and_refused() -> None:
    access = Access([Answer(200, ROUTERS, headers=(("x-next-page", "1"),))])
    routers, unread = tr.read_routers(access, POD, CONTAINER)
    assert unread == "" and access.calls == [(9000, "/api/http/routers", {"per_page": "1000", "page": "1"})]
    assert [(r.name, r.refused) for r in routers] == [("shop-api-rule-0-path-0@kubernetesingressnginx", False),
                                                      ("shop-legacy-rule-0-path-0@kubernetesingressnginx", True)]
    assert routers[1].errors == ("error parsing regexp: invalid or unsupported Perl syntax: `(?!`",)
    assert routers[0].priority == 61 and routers[0].service == "shop-api-api-web" and routers[0].entry_points == ("web",)
    routers, unread = tr.read_routers(Access([Answer(404, "404 page not found")]), POD, CONTAINER)
    assert routers == () and unread.startswith("GET :9000/api/http/routers: HTTP 404: 404 page not found (turn the API on")
    with pytest.raises(DataPlaneError, match=r"routers\[0\].name: expected a string"):
        tr.parse_routers(json.dumps([{"rule": "x"}]))
    assert controller_type("traefik").dataplane.routers is tr.read_routers
