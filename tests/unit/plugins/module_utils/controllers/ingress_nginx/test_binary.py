"""ingress-nginx: what the binary does with its args, and how its data plane routes."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx import binary as ng_binary

IMAGE = "registry.k8s.io/ingress-nginx/controller:v1.15.1@sha256:abc"


def test_flags_pflag_semantics_and_defaults() -> None:
    flags, errors = ng_binary.parse_nginx_flags(["/nginx-ingress-controller", "--publish-service", "a/b", "--update-status=false",
                                                 "--watch-ingress-without-class", "--ingress-class=x", "--ingress-class=y", "pos"])
    assert errors == []
    assert flags == {"publish-service": "a/b", "update-status": "false", "watch-ingress-without-class": "true", "ingress-class": "y"}
    s = ng_binary.nginx_settings({})
    assert (s.ingress_class, s.controller_class, s.watch_without_class, s.update_status, s.election_id, s.sync_period) == (
        "nginx", "k8s.io/ingress-nginx", False, True, "ingress-controller-leader", 60)
    assert ng_binary.parse_nginx_flags(["--update-status=maybe"])[1] == ['invalid argument "maybe" for "--update-status" flag']
    assert ng_binary.parse_nginx_flags(["--election-id"])[1] == ["flag needs an argument: --election-id"]


def test_klog_verbosity_durations_and_floors() -> None:
    flags, errors = ng_binary.parse_nginx_flags(["-v=2", "--election-ttl=1m30s", "--status-update-interval=1"])
    assert errors == [] and flags["v"] == "2"
    s = ng_binary.nginx_settings(flags)
    assert (s.election_ttl, s.sync_period) == (90.0, 5)
    assert ng_binary.nginx_settings({"election-ttl": "0s"}).election_ttl == 30.0


def test_detection_by_image_or_binary() -> None:
    assert ng_binary.is_nginx({"image": IMAGE})
    assert ng_binary.is_nginx({"image": "registry.k8s.io/ingress-nginx/controller:v1.15.1"})
    assert ng_binary.is_nginx({"image": "mirror.local/nginx:1", "args": ["/nginx-ingress-controller"]})
    assert not ng_binary.is_nginx({"image": "nginx:1.29.3"})
    assert ng_binary.is_nginx({"image": "mirror.local/ingress-nginx/controller-chroot:v1.11.0@sha256:abc"})
    assert not ng_binary.is_nginx({"image": "mirror.local/ingress-nginx/controller-x:v1"})


def test_service_entries_keep_hostname_and_ip_of_one_lb_entry() -> None:
    svc = {"spec": {"type": "LoadBalancer", "externalIPs": ["5.5.5.5", "1.1.1.1"]},
           "status": {"loadBalancer": {"ingress": [{"ip": "1.1.1.1"}, {"hostname": "lb.example", "ip": "2.2.2.2"}]}}}
    assert ng_binary.service_entries(svc) == ([{"ip": "1.1.1.1"}, {"hostname": "lb.example", "ip": "2.2.2.2"}, {"ip": "5.5.5.5"}], True)
    assert ng_binary.service_addresses(svc) == (["1.1.1.1", "lb.example", "2.2.2.2", "5.5.5.5"], True)
    assert ng_binary.publish_service_key("a/b") == ("a", "b")
    assert ng_binary.publish_service_key("a/b/c") is None and ng_binary.publish_service_key("b") is None


def _ing(name: str, ts: str, host: str | None, paths: list[tuple[str, str, str]]) -> dict[str, Any]:
    rule: dict[str, Any] = {"http": {"paths": [{"path": p, "pathType": t, "backend": {"service": {"name": b, "port": {"number": 80}}}}
                                               for p, t, b in paths]}}
    if host:
        rule["host"] = host
    return {"metadata": {"name": name, "namespace": "ns", "creationTimestamp": ts}, "spec": {"rules": [rule]}}


def _backend(route: Any) -> str | None:
    return route.backend["service"]["name"] if route else None


def test_host_and_path_matching_rules() -> None:
    assert ng_binary.host_matches("*.example.com", "a.example.com")
    assert not ng_binary.host_matches("*.example.com", "a.b.example.com") and not ng_binary.host_matches("*.example.com", "example.com")
    assert ng_binary.prefix_match("/foo", "/foo/bar") and ng_binary.prefix_match("/foo/", "/foo") and not ng_binary.prefix_match("/foo", "/foobar")
    ings = [
        _ing("new", "2026-01-02T00:00:00Z", "app.example.com", [("/", "Prefix", "new-root")]),
        _ing("old", "2026-01-01T00:00:00Z", "app.example.com", [("/", "Prefix", "old-root"), ("/api", "Prefix", "api"),
                                                                ("/api/v1", "Exact", "exact")]),
        _ing("wild", "2026-01-01T00:00:00Z", "*.example.com", [("/", "Prefix", "wild")]),
        _ing("any", "2026-01-01T00:00:00Z", None, [("/static", "ImplementationSpecific", "static")]),
    ]
    assert _backend(ng_binary.select_route(ings, "app.example.com", "/")) == "old-root"  # oldest wins for same host+path
    assert _backend(ng_binary.select_route(ings, "app.example.com:80", "/api/x")) == "api"
    assert _backend(ng_binary.select_route(ings, "app.example.com", "/api/v1")) == "exact"
    assert _backend(ng_binary.select_route(ings, "app.example.com", "/apix")) == "old-root"  # element-wise prefix
    assert _backend(ng_binary.select_route(ings, "b.example.com", "/z")) == "wild"
    assert _backend(ng_binary.select_route(ings, "other.test", "/staticfiles")) == "static"  # plain string prefix
    assert ng_binary.select_route(ings, "other.test", "/") is None  # → default backend 404
    only_host = [_ing("h", "2026-01-01T00:00:00Z", "h.test", [("/a", "Prefix", "a")])]
    assert ng_binary.select_route(only_host, "h.test", "/b") is None  # a matched host server never falls back
