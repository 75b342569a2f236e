"""gateway_translation as Ansible runs it: the real ingress2gateway v1.2.0 on Ingresses read through a fake
client, the objects applied once (then nothing changes), check mode, and bad input named before anything."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.migration import translate
from ansible_collections.kindlab.ingress.plugins.modules import gateway_translation
from ansible_collections.kindlab.ingress.tests.unit.fakes import Exit, FakeClient, run_module, use_fake_exits


def binary() -> str:
    from kindlab_twin import binaries

    path = binaries.binary_path("ingress2gateway")
    if not path.exists():
        pytest.skip("no %s (kindlab-twin build binaries ingress2gateway; make test builds it)" % path)
    return str(path)


def cluster() -> FakeClient:
    client = FakeClient(["shop"])
    ing = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": {"namespace": "shop", "name": "app",
                        "annotations": {"nginx.ingress.kubernetes.io/rewrite-target": "/$2"}},
           "spec": {"ingressClassName": "nginx", "rules": [{"host": "app.example.test", "http": {"paths": [
               {"path": "/app(/|$)(.*)", "pathType": "ImplementationSpecific",
                "backend": {"service": {"name": "app", "port": {"name": "http"}}}}]}}]}}
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"namespace": "shop", "name": "app"},
           "spec": {"ports": [{"name": "http", "port": 8080, "targetPort": 3000}]}}
    cls = {"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": {"name": "nginx"},
           "spec": {"controller": "k8s.io/ingress-nginx"}}
    for obj in (ing, svc, cls):
        client.objects[(obj["kind"], obj["metadata"].get("namespace"), obj["metadata"]["name"])] = obj
    return client


def run(args: dict[str, Any], client: FakeClient, monkeypatch: pytest.MonkeyPatch, check: bool = False) -> Exit:
    use_fake_exits(monkeypatch, client)
    return run_module(gateway_translation.main, dict(args, _ansible_check_mode=check))


def test_translated_applied_once_with_the_notes_on_the_route(monkeypatch: pytest.MonkeyPatch) -> None:
    client = cluster()
    args = {"namespaces": ["shop"], "gateway_class": "traefik", "binary": binary()}
    r = run(args, client, monkeypatch, check=True)
    assert not r.failed and r.result["changed"] and not any(k in ("Gateway", "HTTPRoute") for k, _ns, _n in client.objects)
    r = run(args, client, monkeypatch)
    assert not r.failed and r.result["changed"] and r.result["gateways"] == ["shop/nginx"]
    assert r.result["ingresses"] == ["shop/app"]
    gateway = client.objects[("Gateway", "shop", "nginx")]
    assert gateway["spec"]["gatewayClassName"] == "traefik" and {ln["port"] for ln in gateway["spec"]["listeners"]} == {8000}
    [route] = [o for (k, _ns, _n), o in client.objects.items() if k == "HTTPRoute"]
    assert route["spec"]["rules"][0]["backendRefs"] == [{"name": "app", "port": 8080}]  # the named port, as its number
    assert any("capture group" in n["message"] for n in translate.notes_of(route))
    again = run(args, client, monkeypatch)
    assert not again.failed and again.result["changed"] is False


@pytest.mark.parametrize("args, message", [
    ({"gateway_class": "Not_A_Name"}, "gateway_class: expected a GatewayClass name (a DNS subdomain), got 'Not_A_Name'"),
    ({"gateway_class": "traefik", "listener_port": 0}, "listener_port: expected a port from 1 to 65535, got 0"),
    ({"gateway_class": "traefik", "binary": "/nonexistent/ingress2gateway"},
     "binary: expected the ingress2gateway binary"),
    ({"gateway_class": "traefik", "namespaces": ["empty"]}, "namespaces: no Ingress selected in empty: nothing to translate"),
    ({"gateway_class": "traefik", "ingress_class": "other"}, "ingress2gateway translated none of the 1 Ingresses of shop"),
])
def test_bad_input_is_named_and_nothing_is_applied(args: dict[str, Any], message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    client = cluster()
    r = run(dict({"binary": binary()}, **args), client, monkeypatch)
    assert r.failed and message in r.result["msg"]
    assert client.writes == 0


def test_a_translator_failure_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = tmp_path / "ingress2gateway"
    broken.write_text("#!/bin/sh\necho 'Error: no such provider' >&2\nexit 3\n")
    broken.chmod(0o755)
    client = cluster()
    r = run({"gateway_class": "traefik", "binary": str(broken)}, client, monkeypatch)
    assert r.failed and r.result["msg"] == "ingress2gateway (%s) failed with exit code 3: Error: no such provider" % broken
    assert client.writes == 0
