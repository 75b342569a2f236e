from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.backends import backends_of
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.backends import check_cluster, check_ingresses
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.endpoints import ready_endpoints


def service(name: str, ports: list[tuple[str | None, int]], kind: str = "ClusterIP") -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"type": kind, "ports": [
        {**({"name": n} if n else {}), "port": p, "targetPort": p} for n, p in ports]}}


def endpoint(ip: str, ready: bool | None = True) -> dict[str, Any]:
    conditions = {} if ready is None else {"ready": ready}
    return {"addresses": [ip], "conditions": conditions}


def eps(endpoints: list[dict[str, Any]], port_name: str | None = "http") -> dict[str, Any]:
    port: dict[str, Any] = {"port": 80, "protocol": "TCP"}
    if port_name is not None:
        port["name"] = port_name
    return {"metadata": {"labels": {"kubernetes.io/service-name": "x"}}, "endpoints": endpoints, "ports": [port]}


def ing(ns: str, name: str, backends: list[dict[str, Any]], default: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"rules": [{"host": "h.example", "http": {"paths": [
        {"path": "/%d" % i, "pathType": "Prefix", "backend": b} for i, b in enumerate(backends)]}}]}
    if default:
        spec["defaultBackend"] = default
    return {"metadata": {"namespace": ns, "name": name}, "spec": spec}


def svc_backend(name: str, port: int | str) -> dict[str, Any]:
    return {"service": {"name": name, "port": {"number": port} if isinstance(port, int) else {"name": port}}}


def run(ingresses: list[dict[str, Any]], services: dict[tuple[str, str], dict[str, Any]],
        slices: dict[tuple[str, str], list[dict[str, Any]]]) -> dict[str, Any]:
    return check_ingresses(ingresses, lambda ns, n: services.get((ns, n)), lambda ns, n: slices.get((ns, n), []))


def test_backends_in_spec_order_deduplicated_with_default_backend() -> None:
    obj = ing("one", "a", [svc_backend("web", "http"), svc_backend("web", "http"), svc_backend("api", 8080)],
              default=svc_backend("fallback", 80))
    assert [(b.service, b.port, b.where) for b in backends_of(obj)] == [
        ("fallback", 80, "defaultBackend"), ("web", "http", "h.example/0"), ("api", 8080, "h.example/2")]


def test_ready_endpoints_by_port_name() -> None:
    result = run([ing("one", "test", [svc_backend("test", "http")])],
                 {("one", "test"): service("test", [("http", 80)])},
                 {("one", "test"): [eps([endpoint("10.244.0.5"), endpoint("10.244.0.6", ready=False), endpoint("10.244.0.7", None)])]})
    assert result["passed"] and result["failures"] == []
    [backend] = result["ingresses"]["one/test"]["backends"]
    assert backend["ready_endpoints"] == 2  # nil ready counts as ready
    assert backend["endpoints"] == ["10.244.0.5", "10.244.0.7"]


def test_port_by_number_maps_to_the_slice_port_of_the_same_name() -> None:
    services = {("one", "test"): service("test", [("http", 80), ("metrics", 9090)])}
    slices = {("one", "test"): [eps([endpoint("10.0.0.1")], port_name="metrics"), eps([endpoint("10.0.0.2")], port_name="http")]}
    result = run([ing("one", "test", [svc_backend("test", 80)])], services, slices)
    assert result["ingresses"]["one/test"]["backends"][0]["endpoints"] == ["10.0.0.2"]


def test_unnamed_service_port_matches_unnamed_slice_port() -> None:
    result = run([ing("one", "test", [svc_backend("test", 80)])], {("one", "test"): service("test", [(None, 80)])},
                 {("one", "test"): [eps([endpoint("10.0.0.1")], port_name=None)]})
    assert result["passed"]


def test_scaled_to_zero_fails_with_the_reason() -> None:
    result = run([ing("two", "test", [svc_backend("test", "http")])], {("two", "test"): service("test", [("http", 80)])},
                 {("two", "test"): [eps([])]})
    assert not result["passed"]
    assert result["failures"] == ["two/test: backend test:http has 0 ready endpoints (Service exists, 0 of 0 pods ready)"]
    assert result["ingresses"]["two/test"]["reason"] == "backend test:http has 0 ready endpoints (Service exists, 0 of 0 pods ready)"


def test_none_ready_counts_the_unready() -> None:
    result = run([ing("two", "test", [svc_backend("test", "http")])], {("two", "test"): service("test", [("http", 80)])},
                 {("two", "test"): [eps([endpoint("10.0.0.1", False), endpoint("10.0.0.2", False)])]})
    assert result["failures"] == ["two/test: backend test:http has 0 ready endpoints (Service exists, 0 of 2 pods ready)"]


def test_missing_service_and_missing_port() -> None:
    result = run([ing("one", "a", [svc_backend("gone", 80), svc_backend("web", 8080), svc_backend("web", "grpc")])],
                 {("one", "web"): service("web", [("http", 80)])}, {})
    assert result["failures"] == [
        "one/a: backend gone:80: Service one/gone not found",
        "one/a: backend web:8080: Service one/web has no port 8080 (ports: http/80)",
        "one/a: backend web:grpc: Service one/web has no port grpc (ports: http/80)",
    ]
    backends = result["ingresses"]["one/a"]["backends"]
    assert [(b["exists"], b["port_found"]) for b in backends] == [(False, False), (True, False), (True, False)]


def test_resource_backend_and_external_name_are_not_checked() -> None:
    resource = {"resource": {"apiGroup": "k8s.example.com", "kind": "StorageBucket", "name": "static"}}
    result = run([ing("one", "a", [resource, svc_backend("ext", 80)])],
                 {("one", "ext"): service("ext", [(None, 80)], kind="ExternalName")}, {})
    assert result["passed"]
    assert [b["checked"] for b in result["ingresses"]["one/a"]["backends"]] == [False, False]


def test_slice_without_the_port_does_not_count() -> None:
    assert ready_endpoints([eps([endpoint("10.0.0.1")], port_name="other")], "http") == ([], 0)


def test_dual_stack_slices_count_each_endpoint_once_per_address() -> None:
    ready, total = ready_endpoints([eps([endpoint("10.0.0.1")]), eps([endpoint("10.0.0.1")])], "http")
    assert (ready, total) == (["10.0.0.1"], 1)


def test_an_address_ready_in_either_slice_is_ready_as_the_data_plane_check_counts_it() -> None:
    moving = [eps([endpoint("10.0.0.1", ready=False)]), eps([endpoint("10.0.0.1")])]
    assert ready_endpoints(moving, "http") == (["10.0.0.1"], 1)
    assert ready_endpoints(list(reversed(moving)), "http") == (["10.0.0.1"], 1)


class FakeClient:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        self.calls.append(("get", kind, namespace, name))
        return service(name, [("http", 80)])

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict[str, Any]]:
        self.calls.append(("list", api_version, kind, namespace, label_selector))
        return [eps([endpoint("10.0.0.9")])]


def test_check_cluster_reads_each_service_once_and_slices_by_label() -> None:
    client = FakeClient()
    result = check_cluster(client, [ing("one", "a", [svc_backend("web", "http")]), ing("one", "b", [svc_backend("web", 80)])])
    assert result["passed"]
    assert client.calls == [("get", "Service", "one", "web"),
                            ("list", "discovery.k8s.io/v1", "EndpointSlice", "one", "kubernetes.io/service-name=web")]
