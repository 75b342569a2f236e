"""A probe of an Ingress fails when a pod outside this cluster answers (another cluster holding the address)."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify import probe_origin
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe import probe_from_module
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_probe import Server


class Cluster:
    """shop/web behind Ingress shop/web (status 100.64.0.7); the EndpointSlice of Service web holds PODS."""

    def __init__(self, pods: list[str], other_pods: tuple[str, ...] = ()) -> None:
        self.pods, self.other_pods, self.slice_reads = pods, other_pods, 0

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        if kind == "Ingress":
            return {"metadata": {"namespace": namespace, "name": name},
                    "spec": {"rules": [{"host": "shop.example", "http": {"paths": [
                        {"path": "/", "pathType": "Prefix", "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]},
                    "status": {"loadBalancer": {"ingress": [{"ip": "100.64.0.7"}]}}}
        if kind == "Pod":
            return {"metadata": {"name": name}} if name in self.other_pods else None
        return None

    def list(self, api_version: str, kind: str) -> list[dict[str, Any]]:
        self.slice_reads += 1
        return [{"metadata": {"namespace": "shop", "name": "web-x", "labels": {"kubernetes.io/service-name": "web"}},
                 "endpoints": [{"targetRef": {"kind": "Pod", "name": p}} for p in self.pods]}]


def probe(cluster: Cluster, server: Server, **extra: Any) -> dict[str, Any]:
    from urllib.error import HTTPError
    from urllib.request import urlopen

    def open_url(url: str, **kw: Any) -> Any:
        from urllib.request import Request
        return urlopen(Request(url, headers=kw.get("headers") or {}, method=kw.get("method", "GET")), timeout=5)

    params = {"ingress": "shop/web", "samples": 2, "attempts": 1, "interval": 0, "timeout": 5,
              "connect_to": ["100.64.0.7:80:127.0.0.1:%d" % server.port], **extra}
    return probe_from_module(params, lambda *_a: cluster, open_url, HTTPError, lambda argv: (1, "", ""), lambda n: None)


def test_answers_from_the_ingress_s_pods_pass_and_the_slices_are_read_before_and_after() -> None:
    srv = Server([200])  # answers pod: web-0, then web-1
    try:
        cluster = Cluster(["web-0", "web-1"])
        result = probe(cluster, srv)
        assert result["passed"], result["reason"]
        assert "foreign" not in result and cluster.slice_reads == 2
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()


def test_a_pod_no_slice_holds_and_no_pod_of_this_cluster_is_named_fails_the_probe_in_one_line() -> None:
    srv = Server([200])
    try:
        result = probe(Cluster(["web-0"]), srv)
        assert not result["passed"] and result["foreign"] == ["web-1"]
        assert result["reason"] == (
            "answered from outside this cluster: pod web-1 answered at 100.64.0.7, which no EndpointSlice of the "
            "Services of Ingress shop/web holds and no Pod of this cluster is named. Another cluster on the same network "
            "may hold that address: give each cluster a pool of its own")
        # a pod that left the slices during the probe (a rollout) but still exists is this cluster's
        assert probe(Cluster(["web-0"], other_pods=("web-1",)), srv)["passed"]
        # a backend_regex of the scenario's own may not name pods: not checked
        assert probe(Cluster(["web-0"]), srv, backend_regex="(web)-")["passed"]
    finally:
        srv.httpd.shutdown()
        srv.httpd.server_close()


def test_services_of_every_backend_and_nameless_answers_are_never_foreign() -> None:
    ing = {"metadata": {"namespace": "shop"}, "spec": {"defaultBackend": {"service": {"name": "fallback", "port": {"number": 80}}},
                                                       "rules": [{"http": {"paths": [{"backend": {"service": {"name": "web"}}}]}}]}}
    assert probe_origin.services_of([ing]) == ["shop/fallback", "shop/web"]
    assert probe_origin.foreign_pods(Cluster([]), ["(error)", "(unmatched)", "nginx"], frozenset(), ["shop"]) == []
