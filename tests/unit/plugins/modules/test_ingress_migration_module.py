"""ingress_migration as Ansible runs it: options checked before any request, data planes found by
Service or address, real HTTP to two small servers on 127.0.0.1 standing in for the data planes."""
from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import pytest

from ansible_collections.kindlab.ingress.plugins.modules import ingress_migration
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, run_module, use_fake_exits

INGRESS = {"metadata": {"namespace": "shop", "name": "docs"},
           "spec": {"rules": [{"host": "d.test", "http": {"paths": [
               {"path": "/docs/", "pathType": "Prefix", "backend": {"service": {"name": "docs", "port": {"number": 80}}}}]}}]}}


def endpoint_slice(service: str, *pods: str) -> dict[str, Any]:
    return {"metadata": {"namespace": "shop", "name": service + "-abcde", "labels": {"kubernetes.io/service-name": service}},
            "endpoints": [{"addresses": ["10.244.0.%d" % (i + 9)], "targetRef": {"kind": "Pod", "name": p}}
                          for i, p in enumerate(pods)]}


def handler(redirects: bool, pod: str = "docs-0") -> type[BaseHTTPRequestHandler]:
    class Echo(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            path = self.path.split("?")[0]
            if redirects and path == "/docs":
                self.send_response(301)
                self.send_header("Location", "http://d.test/docs/")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if self.headers.get("Host") != "d.test" or not (path.startswith("/docs") or path.startswith("//docs")):
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = json.dumps({"path": self.path, "host": self.headers.get("Host"), "headers": {},
                               "namespace": "shop", "service": "docs", "pod": pod}).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass
    return Echo


@pytest.fixture
def planes() -> Iterator[tuple[str, str]]:
    servers = [ThreadingHTTPServer(("127.0.0.1", 0), handler(r)) for r in (True, False)]
    for s in servers:
        threading.Thread(target=s.serve_forever, daemon=True).start()
    yield tuple("127.0.0.1:%d" % s.server_address[1] for s in servers)  # type: ignore[misc]
    for s in servers:
        s.shutdown()


@pytest.fixture
def other_cluster() -> Iterator[str]:
    """A data plane whose echo names a pod this cluster's EndpointSlices do not hold (another cluster's)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler(False, pod="docs-7d9f-elsewhere"))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield "127.0.0.1:%d" % server.server_address[1]
    server.shutdown()


class FakeClient:
    def __init__(self, services: list[dict[str, Any]] | None = None) -> None:
        self.services = services or []
        self.slices = [endpoint_slice("docs", "docs-0")]
        self.calls: list[Any] = []

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str | None = None,
             field_selector: str | None = None) -> list[dict[str, Any]]:
        self.calls.append((kind, namespace))
        return {"Ingress": [INGRESS], "Service": self.services, "EndpointSlice": self.slices}.get(kind, [])


def run(args: dict[str, Any], client: FakeClient, monkeypatch: pytest.MonkeyPatch) -> Exit:
    use_fake_exits(monkeypatch, client)
    return run_module(ingress_migration.main, args)


def test_the_trailing_slash_redirect_is_the_one_difference(planes: tuple[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    base, target = planes
    args = {"baseline": {"name": "nginx", "address": base}, "targets": [{"name": "traefik", "address": target}]}
    r = run(dict(args, fail_on_difference=False), FakeClient(), monkeypatch)
    assert not r.failed and r.result["changed"] is False and not r.result["passed"]
    [unexpected] = {(d["request"], d["field"]) for d in r.result["verdict"]["unexpected"] if d["field"] == "status"}
    assert unexpected == ("/docs", "status")
    counts = r.result["comparison"]["targets"]["traefik"]["counts"]
    assert counts["differ"] == 1 and counts["same"] >= 4 and counts["neither"] >= 1
    r = run(dict(args, expected=[{"kind": "^slash$", "cause": "301"}]), FakeClient(), monkeypatch)
    assert not r.failed and r.result["passed"]
    r = run(args, FakeClient(), monkeypatch)
    assert r.failed and "unexpected: traefik shop/docs /docs status: '301' vs '200'" in r.result["msg"]


@pytest.mark.parametrize("args, message", [
    ({"baseline": {"name": "nginx"}, "targets": [{"name": "t", "address": "127.0.0.1"}]},
     "baseline: expected exactly one of namespace, gateway, address"),
    ({"baseline": {"name": "nginx", "address": "127.0.0.1"}, "targets": []}, "targets: expected a non-empty list"),
    ({"baseline": {"name": "nginx", "address": "127.0.0.1"}, "targets": [{"name": "t", "address": "localhost:80"}]},
     "targets[0].address: expected an IP address"),
    ({"baseline": {"name": "nginx", "address": "127.0.0.1"}, "targets": [{"name": "t", "address": "127.0.0.1"}],
      "expected": [{"feild": "x"}]}, "expected[0]: expected only the keys"),
    ({"baseline": {"name": "nginx", "address": "127.0.0.1"}, "targets": [{"name": "t", "address": "127.0.0.1"}],
      "requests": [{"ingress": "shop/nope", "path": "/"}]}, "requests[0].ingress: expected an Ingress of the rehearsal (shop/docs)"),
])
def test_bad_input_names_the_field_before_any_request(args: dict[str, Any], message: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    client = FakeClient()
    r = run(args, client, monkeypatch)
    assert r.failed and message in r.result["msg"]
    assert all(kind != "Service" for kind, _namespace in client.calls)


def test_a_target_namespace_without_a_load_balancer_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    args = {"baseline": {"name": "nginx", "address": "127.0.0.1"}, "targets": [{"name": "t", "namespace": "traefik"}]}
    r = run(args, FakeClient([{"metadata": {"name": "web", "namespace": "traefik"}, "spec": {"type": "ClusterIP"}}]),
            monkeypatch)
    assert r.failed and r.result["msg"] == ("targets[0].namespace: expected exactly one LoadBalancer Service in namespace "
                                            "traefik (the data plane's), found none: name it with targets[0].service")


def test_an_answer_from_a_pod_this_cluster_does_not_hold_stops_the_rehearsal_before_any_verdict(
        planes: tuple[str, str], other_cluster: str, monkeypatch: pytest.MonkeyPatch) -> None:
    base, _target = planes
    args = {"baseline": {"name": "nginx", "address": base}, "targets": [{"name": "traefik", "address": other_cluster}],
            "fail_on_difference": False}
    r = run(args, FakeClient(), monkeypatch)
    assert r.failed and "verdict" not in r.result and "comparison" not in r.result
    msg = r.result["msg"]
    assert "\n" not in msg and msg.startswith("the answers did not all come from the rehearsal's own data planes")
    assert ("traefik at %s (given by address), GET http://d.test/docs/: pod docs-7d9f-elsewhere of Service shop/docs answered, "
            "which no EndpointSlice of that Service in this cluster holds (and " % other_cluster) in msg
    # the same data plane, once its pod is this cluster's, is compared
    client = FakeClient()
    client.slices = [endpoint_slice("docs", "docs-0", "docs-7d9f-elsewhere")]
    r = run(args, client, monkeypatch)
    assert not r.failed and r.result["comparison"]["targets"]["traefik"]["counts"]["same"] >= 4


class ClusterWithIngress(FakeClient):
    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        found = (kind, namespace, name) == ("Ingress", "shop", "docs")
        return dict(INGRESS, apiVersion="networking.k8s.io/v1", kind="Ingress") if found else None


def test_fixes_are_tried_per_target_type_and_the_migrated_manifests_written(planes: tuple[str, str], tmp_path: Any,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    base, target = planes
    args = {"baseline": {"name": "nginx", "address": base}, "fail_on_difference": False, "fix": True,
            "migrated_dir": str(tmp_path), "targets": [{"name": "traefik-nginx-provider", "address": target},
                                                       {"name": "someone-elses", "address": target}]}
    r = run(args, ClusterWithIngress(), monkeypatch)
    assert not r.failed, r.result.get("msg")
    fixes = r.result["fixes"]
    # the redirect of /docs is one behaviour; Traefik's table has no edit for it, and nothing is applied
    [tried] = fixes["traefik-nginx-provider"]["attempts"]
    assert tried["outcome"] == "no fix known" and tried["requests"] == 1
    assert fixes["traefik-nginx-provider"]["kept"] == 0 and fixes["traefik-nginx-provider"]["remain"] == 1
    assert [p.split("/")[-1] for p in fixes["traefik-nginx-provider"]["migrated"]] == ["ingress-shop-docs.yaml"]
    assert (tmp_path / "traefik-nginx-provider" / "ingress-shop-docs.yaml").exists()
    assert fixes["someone-elses"] == {"attempts": [], "kept": 0, "remain": 1,
                                      "no_table": "no table of fixes for this target's type"}
    # in check mode nothing is tried: proving a fix edits the cluster
    r = run(dict(args, _ansible_check_mode=True), ClusterWithIngress(), monkeypatch)
    assert not r.failed and r.result["fixes"] == {}


class Switchable(ClusterWithIngress):
    """A cluster whose target data plane redirects /docs once an Ingress carrying the fix's annotation is applied."""

    def __init__(self, state: dict[str, bool]) -> None:
        super().__init__()
        self.state = state
        self.applied: list[dict[str, Any]] = []
        self.deleted: list[Any] = []

    def apply(self, obj: dict[str, Any]) -> None:
        self.applied.append(obj)
        self.state["redirects"] = "fixed" in ((obj.get("metadata") or {}).get("annotations") or {})

    def delete(self, *args: Any) -> None:
        self.deleted.append(args)


def test_an_ingress_targets_kept_fix_is_written_out_then_undone_for_the_next_target(
        planes: tuple[str, str], tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration import ingress_migration as rehearse_mod
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.fixes.base import Fix

    base, _target = planes
    state = {"redirects": False}

    class Target(handler(False)):  # type: ignore[misc,valid-type]
        def do_GET(self) -> None:  # noqa: N802
            if state["redirects"] and self.path.split("?")[0] == "/docs":
                self.send_response(301)
                self.send_header("Location", "http://d.test/docs/")
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            super().do_GET()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Target)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def table(_b: Any, objects: Any) -> Fix:
        ingress = objects.edited("Ingress", "shop/docs")
        ingress["metadata"]["annotations"] = {"fixed": "yes"}
        return Fix("redirect /docs", (ingress,))
    monkeypatch.setattr(rehearse_mod, "table_for", lambda name, gateway: table)
    monkeypatch.setattr(rehearse_mod.prove_mod, "SETTLE", 0.5)
    client = Switchable(state)
    try:
        r = run({"baseline": {"name": "nginx", "address": base}, "fail_on_difference": False, "fix": True,
                 "migrated_dir": str(tmp_path), "targets": [{"name": "t", "address": "127.0.0.1:%d" % server.server_address[1]}]},
                client, monkeypatch)
    finally:
        server.shutdown()
    assert not r.failed, r.result.get("msg")
    proven = r.result["fixes"]["t"]
    assert [a["outcome"] for a in proven["attempts"]] == ["closed"] and proven["kept"] == 1
    assert "the other Ingress targets read the same Ingresses" in proven["restored"]
    # applied (the fix), then applied back as the rehearsal built it (no annotation): the next target starts from there
    assert [(o.get("metadata") or {}).get("annotations") for o in client.applied] == [{"fixed": "yes"}, None], (client.applied, client.deleted)
    assert not state["redirects"]
