"""Gateway API in the lab: lab_gateways' validation, the objects, the CRDs' sources and their apply."""
from __future__ import annotations

import copy
import io
from pathlib import Path
from typing import Any

import pytest
import yaml

from ansible_collections.kindlab.ingress.plugins.module_utils._versions import GATEWAY_API_MANIFEST_URL, GATEWAY_API_OFFLINE_CRDS
from ansible_collections.kindlab.ingress.plugins.module_utils.lab import gateways as gw
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import GatewayError, parse_gateways

from ansible_collections.kindlab.ingress.tests.unit.fakes import FakeClient

GOOD: dict[str, Any] = {
    "classes": [{"name": "traefik-one"}, {"name": "other", "controller_name": "example.com/gateway", "labels": {"team": "a"}}],
    "gateways": [{"namespace": "one", "name": "web", "class": "traefik-one", "listeners": [
        {"name": "web", "port": 8000, "hostname": "*.example.test", "allowed_routes": "All"},
        {"name": "teams", "port": 8000, "hostname": "teams.example.test",
         "allowed_routes": {"namespaces": "Selector", "selector": {"team": "a"}}},
        {"name": "plain", "port": 8000},
    ]}],
}


def with_change(path: list[Any], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(GOOD)
    node: Any = out
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return out


def test_the_objects_follow_the_spec() -> None:
    objs = gw.render(parse_gateways(GOOD))
    assert [o["kind"] for o in objs] == ["GatewayClass", "GatewayClass", "Gateway"]
    assert objs[0]["spec"] == {"controllerName": "traefik.io/gateway-controller"}
    assert objs[1]["metadata"]["labels"] == {"app.kubernetes.io/part-of": "kindlab-ingress", "team": "a"}
    gateway = objs[2]
    assert gateway["apiVersion"] == "gateway.networking.k8s.io/v1"
    assert gateway["metadata"]["namespace"] == "one" and gateway["spec"]["gatewayClassName"] == "traefik-one"
    assert gateway["spec"]["listeners"] == [
        {"name": "web", "port": 8000, "protocol": "HTTP", "hostname": "*.example.test", "allowedRoutes": {"namespaces": {"from": "All"}}},
        {"name": "teams", "port": 8000, "protocol": "HTTP", "hostname": "teams.example.test",
         "allowedRoutes": {"namespaces": {"from": "Selector", "selector": {"matchLabels": {"team": "a"}}}}},
        {"name": "plain", "port": 8000, "protocol": "HTTP", "allowedRoutes": {"namespaces": {"from": "Same"}}},
    ]


def test_the_summary_parses_back_to_the_same_objects() -> None:
    """lab.yml hands lab_definition's summary to the gateway_api role."""
    parsed = parse_gateways(GOOD)
    again = gw.summary(parsed)
    assert gw.render(parse_gateways(again)) == gw.render(parsed)


def test_none_and_empty_mean_no_gateways() -> None:
    assert gw.render(parse_gateways(None)) == [] and gw.render(parse_gateways({})) == []


@pytest.mark.parametrize("raw, message", [
    ([], "lab_gateways: expected a mapping"),
    ({"classes": [], "routes": []}, "lab_gateways: expected only the keys classes, gateways, translations, got ['routes']"),
    ({"classes": {}}, "lab_gateways.classes: expected a list of GatewayClasses"),
    (with_change(["classes", 0, "name"], "Traefik"), "lab_gateways.classes[0].name: expected a DNS-1123 subdomain"),
    (with_change(["classes", 0, "name"], KeyError), "lab_gateways.classes[0].name: expected a value (required)"),
    (with_change(["classes", 1, "name"], "traefik-one"),
     "lab_gateways.classes[1].name: expected a name unique among the classes (also used by classes[0])"),
    (with_change(["classes", 0, "controller_name"], "traefik"),
     "lab_gateways.classes[0].controller_name: expected a domain-prefixed path such as traefik.io/gateway-controller"),
    (with_change(["classes", 0, "labels"], {"a": 1}), "lab_gateways.classes[0].labels: expected a mapping of label names to strings"),
    (with_change(["gateways", 0, "class"], "nope"),
     "lab_gateways.gateways[0].class: expected one of the GatewayClasses of lab_gateways.classes ['other', 'traefik-one'], got 'nope'"),
    (with_change(["gateways", 0, "namespace"], "One"), "lab_gateways.gateways[0].namespace: expected a DNS-1123 label"),
    (with_change(["gateways", 0, "name"], "web_1"), "lab_gateways.gateways[0].name: expected a DNS-1123 subdomain"),
    (with_change(["gateways", 0, "listeners"], []), "lab_gateways.gateways[0].listeners: expected a list of 1 to 64 listeners"),
    (with_change(["gateways", 0, "listeners", 0, "port"], 0),
     "lab_gateways.gateways[0].listeners[0].port: expected a port number from 1 to 65535, got 0"),
    (with_change(["gateways", 0, "listeners", 0, "port"], 65536),
     "lab_gateways.gateways[0].listeners[0].port: expected a port number from 1 to 65535, got 65536"),
    (with_change(["gateways", 0, "listeners", 0, "port"], "8000"),
     "lab_gateways.gateways[0].listeners[0].port: expected a port number from 1 to 65535, got '8000'"),
    (with_change(["gateways", 0, "listeners", 0, "name"], "Web"), "lab_gateways.gateways[0].listeners[0].name: expected a DNS-1123 label"),
    (with_change(["gateways", 0, "listeners", 1, "name"], "web"),
     "lab_gateways.gateways[0].listeners[1].name: expected a name unique within the Gateway (also used by listeners[0])"),
    (with_change(["gateways", 0, "listeners", 0, "protocol"], "TLS"),
     "lab_gateways.gateways[0].listeners[0].protocol: expected HTTP or HTTPS (TLS passthrough listeners are not built"),
    ({"classes": [{"name": "a"}], "gateways": [{"namespace": "one", "name": "w" * 240, "class": "a", "listeners": [
        {"name": "websecure", "port": 8443, "protocol": "HTTPS"}]}]},
     "lab_gateways.gateways[0].listeners[0].name: expected a name that with the Gateway's makes a Secret name"),
    (with_change(["gateways", 0, "listeners", 0, "hostname"], "10.0.0.1:80"),
     "lab_gateways.gateways[0].listeners[0].hostname: expected a DNS name"),
    (with_change(["gateways", 0, "listeners", 0, "hostname"], "10.0.0.1"),
     "lab_gateways.gateways[0].listeners[0].hostname: expected a DNS name"),
    (with_change(["gateways", 0, "listeners", 1, "hostname"], "*.example.test"),
     "lab_gateways.gateways[0].listeners[1].hostname: expected a hostname other than that of listeners[0] on port 8000"),
    (with_change(["gateways", 0, "listeners", 0, "allowed_routes"], "Any"),
     "lab_gateways.gateways[0].listeners[0].allowed_routes.namespaces: expected one of Same, All, Selector, got 'Any'"),
    (with_change(["gateways", 0, "listeners", 1, "allowed_routes"], {"namespaces": "Selector"}),
     "lab_gateways.gateways[0].listeners[1].allowed_routes.selector: expected the namespace labels to match"),
    (with_change(["gateways", 0, "listeners", 0, "allowed_routes"], {"namespaces": "All", "selector": {"a": "b"}}),
     "lab_gateways.gateways[0].listeners[0].allowed_routes.selector: expected no selector unless namespaces is Selector (it is All)"),
    (with_change(["gateways", 0, "listeners", 0, "tls"], {}),
     "lab_gateways.gateways[0].listeners[0]: expected only the keys allowed_routes, hostname, name, port, protocol, got ['tls']"),
    ({"classes": [{"name": "a"}], "gateways": [{"namespace": "one", "name": "w", "class": "a", "listeners": [{"name": "l", "port": 1}]},
                                               {"namespace": "one", "name": "w", "class": "a", "listeners": [{"name": "l", "port": 1}]}]},
     "lab_gateways.gateways[1].name: expected a name unique within its namespace (also used by gateways[0])"),
])
def test_every_bad_input_names_its_field(raw: Any, message: str) -> None:
    with pytest.raises(GatewayError) as err:
        parse_gateways(raw)
    assert message in str(err.value)


def test_the_module_options_carry_no_prefix() -> None:
    with pytest.raises(GatewayError, match=r"^gateways\[0\]\.class: expected one of the GatewayClasses of classes \[\]"):
        parse_gateways({"classes": [], "gateways": copy.deepcopy(GOOD["gateways"])}, where="")


def test_lab_gateway_api_is_a_boolean() -> None:
    assert gw.parse_gateway_api(None) is False and gw.parse_gateway_api(True) is True
    with pytest.raises(GatewayError, match="lab_gateway_api: expected true or false, got 'yes'"):
        gw.parse_gateway_api("yes")


# ---------------------------------------------------------------- the CRDs

CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "gateways.gateway.networking.k8s.io"},
       "spec": {"group": "gateway.networking.k8s.io", "names": {"kind": "Gateway", "plural": "gateways"}}}
ROUTE_CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
             "metadata": {"name": "httproutes.gateway.networking.k8s.io"},
             "spec": {"group": "gateway.networking.k8s.io", "names": {"kind": "HTTPRoute", "plural": "httproutes"}}}
MANIFEST = yaml.safe_dump_all([CRD, ROUTE_CRD])


def test_the_crds_come_from_the_url_else_the_release_else_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KINDLAB_CACHE", str(tmp_path))
    assert gw.crds_source("file:///srv/std.yaml", "cache") == "file:///srv/std.yaml"
    assert gw.crds_source(None, "upstream") == GATEWAY_API_MANIFEST_URL
    with pytest.raises(GatewayError, match="not in the kindlab cache .*kindlab-twin build binaries gateway-api-crds"):
        gw.crds_source("", "cache")
    cached = tmp_path / GATEWAY_API_OFFLINE_CRDS
    cached.parent.mkdir(parents=True)
    cached.write_text(MANIFEST)
    assert gw.crds_source("", "cache") == cached.as_uri()
    with pytest.raises(GatewayError, match="source: expected upstream or cache"):
        gw.crds_source("", "rendered")


def test_reading_the_crds_checks_they_are_gateway_apis() -> None:
    assert [d["kind"] for d in gw.fetch_crds("u", lambda url, timeout: io.BytesIO(MANIFEST.encode()))] == ["CustomResourceDefinition"] * 2
    with pytest.raises(GatewayError, match="manifest_url: u is not Gateway API's standard-install.yaml"):
        gw.fetch_crds("u", lambda url, timeout: io.BytesIO(yaml.safe_dump(ROUTE_CRD).encode()))
    with pytest.raises(GatewayError, match="manifest_url: u is not valid YAML"):
        gw.fetch_crds("u", lambda url, timeout: io.BytesIO(b"a: [b"))

    def offline(url: str, timeout: int) -> Any:
        raise OSError("Network is unreachable")
    with pytest.raises(GatewayError, match="cannot read the Gateway API CRDs from u: Network is unreachable .offline"):
        gw.fetch_crds("u", offline)


class CrdClient(FakeClient):
    """CRDs become Established once applied."""

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        obj = super().get(api_version, kind, name, namespace)
        if obj is not None and kind == "CustomResourceDefinition":
            obj["status"] = {"conditions": [{"type": "Established", "status": "True"}]}
        return obj


def test_ensure_applies_the_crds_then_the_objects_idempotently() -> None:
    client = CrdClient(["one"])
    parsed = parse_gateways(GOOD)
    first = gw.ensure(client, [CRD, ROUTE_CRD], parsed, check_mode=False, wait_timeout=5)
    assert first["changed"] and [o["object"] for o in first["objects"]][-1] == "Gateway one/web"
    assert not any("CustomResourceDefinition" in d["before_header"] for d in first["diff"])
    again = gw.ensure(client, [CRD, ROUTE_CRD], parsed, check_mode=False, wait_timeout=5)
    assert not again["changed"]


def test_check_mode_before_the_crds_reports_the_objects_as_created_and_changes_nothing() -> None:
    client = CrdClient(["one"])
    out = gw.ensure(client, [CRD], parse_gateways(GOOD), check_mode=True, wait_timeout=5)
    assert out["changed"] and client.writes == 0
    assert {o["action"] for o in out["objects"]} == {"created"}
    # crds: false in check mode (lab.yml's second step), the CRDs not there either
    out = gw.ensure(client, [], parse_gateways(GOOD), check_mode=True, wait_timeout=5)
    assert out["changed"] and client.writes == 0 and len(out["objects"]) == 3


def test_a_gateway_in_a_missing_namespace_is_refused() -> None:
    client = CrdClient([])
    with pytest.raises(GatewayError, match="gateways: namespace.s. one do not exist"):
        gw.ensure(client, [CRD], parse_gateways(GOOD), check_mode=False, wait_timeout=5)


def test_crds_never_established_time_out() -> None:
    clock = iter(range(0, 100, 10))
    with pytest.raises(GatewayError, match="wait_timeout: the Gateway API CRDs gateways.gateway.networking.k8s.io were not Established within 5s"):
        gw.wait_established(FakeClient([]), ["gateways.gateway.networking.k8s.io"], 5, sleep=lambda s: None,
                            clock=lambda: float(next(clock)))


HTTPS: dict[str, Any] = {"classes": [{"name": "traefik"}], "gateways": [{"namespace": "one", "name": "web", "class": "traefik", "listeners": [
    {"name": "websecure", "port": 8443, "protocol": "HTTPS", "hostname": "shop.example.test"},
    {"name": "any", "port": 8443, "protocol": "HTTPS"},
]}]}


def test_an_https_listener_terminates_with_a_generated_certificate() -> None:
    parsed = parse_gateways(HTTPS)
    [gateway] = [o for o in gw.render(parsed) if o["kind"] == "Gateway"]
    assert gateway["spec"]["listeners"][0]["tls"] == {
        "mode": "Terminate", "certificateRefs": [{"group": "", "kind": "Secret", "name": "web-websecure-tls"}]}
    assert gw.certificate_secrets(parsed) == [("one", "web-websecure-tls", "shop.example.test"),
                                              ("one", "web-any-tls", gw.NO_HOSTNAME_CERT_NAME)]
    assert gw.render(parse_gateways(gw.summary(parsed))) == gw.render(parsed)


def test_a_generated_certificate_names_its_host_and_matches_its_key() -> None:
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization

    cert_pem, key_pem = gw.self_signed("*.example.test")
    cert = x509.load_pem_x509_certificate(cert_pem.encode())
    key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    assert cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName) == ["*.example.test"]
    assert cert.public_key().public_numbers() == key.public_key().public_numbers()  # type: ignore[union-attr]
    assert cert.issuer == cert.subject  # self-signed: the probes do not verify it


def test_the_certificates_are_made_once_and_never_shown() -> None:
    client = CrdClient(["one"])
    parsed = parse_gateways(HTTPS)
    planned = gw.ensure(client, [CRD], parsed, check_mode=True, wait_timeout=5)
    assert client.writes == 0 and {"Secret one/web-websecure-tls", "Secret one/web-any-tls"} <= {
        o["object"] for o in planned["objects"] if o["action"] == "created"}
    first = gw.ensure(client, [CRD], parsed, check_mode=False, wait_timeout=5)
    secret = client.get("v1", "Secret", "web-websecure-tls", "one")
    assert secret is not None and secret["type"] == "kubernetes.io/tls" and set(secret["data"]) == {"tls.crt", "tls.key"}
    shown = repr(first["diff"])
    assert "web-websecure-tls" in shown and "PRIVATE KEY" not in shown and secret["data"]["tls.key"] not in shown
    again = gw.ensure(client, [CRD], parsed, check_mode=False, wait_timeout=5)
    assert not again["changed"] and client.get("v1", "Secret", "web-websecure-tls", "one") == secret
