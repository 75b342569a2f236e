"""The Gateway API target of a rehearsal (migration/translate.py): ingress2gateway run on a file of the
Ingresses, its output retargeted, its notes kept on the objects they name and set beside the requests;
and the `gateway` data plane that reads them back (migration/sides.py)."""
from __future__ import annotations

import json
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import GatewayError, parse_gateways
from ansible_collections.kindlab.ingress.plugins.module_utils.migration import sides, translate

Obj = dict[str, Any]

# The shape ingress2gateway v1.2.0 prints its notes in on stderr (boxes of a severity, the message,
# the source and the object), written here for the parser, not copied from a run.
STDERR = """\
\u250c\u2500 WARN  \u2500\u2500\u2500\u2500
\u2502  Something about host "a.example.test" that is not
\u2502  translated.
\u2502  source: INGRESS-NGINX
\u2514\u2500
\u250c\u2500 WARN  \u2500\u2500\u2500\u2500
\u2502  Failed to apply rewrite-target from Ingress shop/app: not supported
\u2502  source: STANDARD_EMITTER
\u2502  object: HTTPRoute: shop/app-a-example-test
\u2514\u2500
"""


def test_notes_are_read_from_the_boxes_with_their_object() -> None:
    general, about_app = translate.parse_notes(STDERR)
    assert general == translate.Note("WARN", 'Something about host "a.example.test" that is not translated.', "INGRESS-NGINX", "")
    assert about_app.object == "HTTPRoute: shop/app-a-example-test" and about_app.source == "STANDARD_EMITTER"
    assert translate.parse_notes("no boxes here\n") == []


def produced() -> list[Obj]:
    return [
        {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway", "metadata": {"name": "nginx", "namespace": "shop"},
         "spec": {"gatewayClassName": "nginx",
                  "listeners": [{"name": "a-example-test-http", "hostname": "a.example.test", "port": 80, "protocol": "HTTP"}]}},
        {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
         "metadata": {"name": "app-a-example-test", "namespace": "shop"},
         "spec": {"hostnames": ["a.example.test"], "parentRefs": [{"name": "nginx"}], "rules": []}, "status": {"parents": []}},
    ]


def test_retarget_sets_the_class_the_port_and_each_note_on_its_object() -> None:
    notes = translate.parse_notes(STDERR)
    gateway, route = translate.retarget(produced(), notes, "traefik", 8000, "ingress2gateway v1.2.0", 8443)
    assert gateway["spec"]["gatewayClassName"] == "traefik" and gateway["spec"]["listeners"][0]["port"] == 8000
    assert "status" not in route
    assert [n["message"] for n in translate.notes_of(route)] == ["Failed to apply rewrite-target from Ingress shop/app: not supported"]
    assert [n["source"] for n in translate.notes_of(gateway)] == ["INGRESS-NGINX"]  # the note naming no object
    assert route["metadata"]["annotations"][translate.TRANSLATOR_ANNOTATION] == "ingress2gateway v1.2.0"
    assert produced()[0]["spec"]["gatewayClassName"] == "nginx"  # a copy: the input is left as printed
    assert translate.notes_of({"metadata": {"annotations": {translate.NOTES_ANNOTATION: "not json"}}}) == []


def test_retarget_moves_https_listeners_and_the_route_ports_that_name_them() -> None:
    objs = produced()
    objs[0]["spec"]["listeners"].append({"name": "a-example-test-https", "hostname": "a.example.test", "port": 443,
                                         "protocol": "HTTPS", "tls": {"certificateRefs": [{"name": "a-tls"}]}})
    objs[1]["spec"]["parentRefs"] = [{"name": "nginx", "port": 443, "sectionName": "a-example-test-https"}]
    redirect = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                "metadata": {"name": "app-a-example-test-http", "namespace": "shop"},
                "spec": {"parentRefs": [{"name": "nginx", "port": 80}, {"name": "other", "namespace": "x", "port": 80}]}}
    gateway, route, http = translate.retarget(objs + [redirect], [], "traefik", 8000, "ingress2gateway v1.2.0", 8443)
    assert [(ln["protocol"], ln["port"]) for ln in gateway["spec"]["listeners"]] == [("HTTP", 8000), ("HTTPS", 8443)]
    assert route["spec"]["parentRefs"][0]["port"] == 8443
    # the port moves with its Gateway's listener; a parent the translation did not make keeps its own
    assert [p["port"] for p in http["spec"]["parentRefs"]] == [8000, 80]


def fake_runner(rc: int, out: str, err: str, seen: list[list[str]]) -> Any:
    def run(argv: list[str]) -> tuple[int, str, str]:
        seen.append(argv)
        with open(argv[argv.index("--input-file") + 1]) as handle:
            assert "kind: Ingress" in handle.read()
        return rc, out, err
    return run


def test_the_translator_reads_a_file_and_its_failure_is_one_line() -> None:
    seen: list[list[str]] = []
    ing = {"metadata": {"name": "app", "namespace": "shop", "resourceVersion": "9"}, "spec": {"rules": []}, "status": {}}
    objects = translate.input_objects([ing], [], [])
    assert objects == [{"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "app", "namespace": "shop"},
                        "spec": {"rules": []}}]
    out = json.dumps(produced()[1])
    got, notes = translate.run_translator("/bin/i2g", objects, "nginx", fake_runner(0, out, STDERR, seen))
    assert [o["kind"] for o in got] == ["HTTPRoute"] and len(notes) == 2
    assert seen[0][:2] == ["/bin/i2g", "print"] and seen[0][seen[0].index("--ingress-nginx-ingress-class") + 1] == "nginx"
    err = "Error: \n\n# Encountered 1 errors # paths.backends[0].service.port: cannot find port\nUsage:\n  ingress2gateway print"
    with pytest.raises(translate.TranslationError, match=r"exit code 1: Error: Encountered 1 errors paths\.backends\[0\]\.service\.port: cannot find port$"):
        translate.run_translator("/bin/i2g", objects, "nginx", fake_runner(1, "", err, []))
    with pytest.raises(translate.TranslationError, match="other than Gateway API ones: \\['Service'\\]"):
        translate.run_translator("/bin/i2g", objects, "nginx", fake_runner(0, "apiVersion: v1\nkind: Service\n", "", []))


def test_notes_go_beside_the_differing_requests_of_their_hosts() -> None:
    notes = ((), {"severity": "WARN", "message": "URL normalization"}), \
        (("a.example.test",), {"severity": "WARN", "message": "Failed to apply rewrite-target from Ingress shop/app: x"}), \
        (("a.example.test",), {"severity": "INFO", "message": "case-insensitive regex"})
    # as it says an annotation it did not apply: once per rule of the Ingress, naming it without the word Ingress
    body_size = (("a.example.test",), {"severity": "WARN", "message": 'Failed to apply shop.app.metadata.annotations."nginx.'
                                       'ingress.kubernetes.io/proxy-body-size" from shop/app: defaults'})
    notes += (body_size, body_size)
    rows = [{"host": "a.example.test", "ingress": "shop/app", "differences": [{"field": "path", "cause": "rewrite-target"}]},
            {"host": "a.example.test", "ingress": "shop/other", "differences": [{"field": "status", "cause": "x"}]},
            {"host": "a.example.test", "ingress": "shop/app", "differences": []},
            {"host": "b.example.test", "ingress": "shop/b", "differences": [{"field": "status"}]}]
    body: Obj = {"rows": rows}
    translate.set_beside_requests(body, notes)
    assert body["translation_notes"] == ["WARN: URL normalization"]
    assert rows[0]["translation_notes"] == ["WARN: Failed to apply rewrite-target from Ingress shop/app: x", "INFO: case-insensitive regex",
                                            body_size[1]["severity"] + ": " + body_size[1]["message"]]
    assert rows[1]["translation_notes"] == ["INFO: case-insensitive regex"]  # the other notes name another Ingress
    assert rows[1]["differences"][0]["cause"] == "x [the translator said: INFO: case-insensitive regex]"
    assert "translation_notes" not in rows[2] and "translation_notes" not in rows[3]


class FakeClient:
    def __init__(self, objects: list[Obj]) -> None:
        self.objects = objects

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj | None:
        return next((o for o in self.objects if o["kind"] == kind and o["metadata"]["name"] == name
                     and o["metadata"].get("namespace") == namespace), None)

    def list(self, api_version: str, kind: str, namespace: str | None = None, **_: Any) -> list[Obj]:
        return [o for o in self.objects if o["kind"] == kind and namespace in (None, o["metadata"].get("namespace"))]


def test_a_gateway_target_is_its_implementations_service_with_the_notes() -> None:
    gateway, route = translate.retarget(produced(), translate.parse_notes(STDERR), "traefik", 8000, "ingress2gateway v1.2.0", 8443)
    gateway["status"] = {"addresses": [{"type": "IPAddress", "value": "100.64.0.2"}]}
    svc = {"kind": "Service", "metadata": {"name": "traefik", "namespace": "traefik"},
           "spec": {"type": "LoadBalancer", "ports": [{"name": "web", "port": 80}, {"name": "websecure", "port": 443}]},
           "status": {"loadBalancer": {"ingress": [{"ip": "100.64.0.2"}]}}}
    client = FakeClient([gateway, route, svc])
    spec = sides.parse({"name": "gateway-api", "gateway": "shop/nginx"}, "targets[0]")
    plane = sides.resolve(client, spec)
    assert (plane.address.ip, plane.address.port) == ("100.64.0.2", 80)
    assert plane.described == "Gateway shop/nginx at 100.64.0.2:80 (Service traefik/traefik)"
    assert [(hosts, n["source"]) for hosts, n in plane.notes] == [((), "INGRESS-NGINX"), (("a.example.test",), "STANDARD_EMITTER")]
    del gateway["status"]
    with pytest.raises(Exception, match=r"targets\[0\]\.gateway: Gateway shop/nginx has no IP address in its status yet"):
        sides.resolve(client, spec)
    with pytest.raises(OptionError, match=r"targets\[0\]\.gateway: expected a Gateway as namespace/name, got 'nginx'"):
        sides.parse({"name": "g", "gateway": "nginx"}, "targets[0]")
    with pytest.raises(OptionError, match="exactly one of namespace, gateway, address"):
        sides.parse({"name": "g", "gateway": "shop/nginx", "address": "100.64.0.2"}, "targets[0]")


def test_a_gateway_target_takes_the_routes_of_every_gateway_at_its_address() -> None:
    """A translation of two class names makes two Gateways, both served by the target's Traefik at one address: a
    request sent there can be taken by the routes of either."""
    import copy

    gateway, route = translate.retarget(produced(), translate.parse_notes(STDERR), "traefik", 8000, "ingress2gateway v1.2.0", 8443)
    gateway["status"] = {"addresses": [{"type": "IPAddress", "value": "100.64.0.2"}]}
    other, other_route = copy.deepcopy(gateway), copy.deepcopy(route)
    other["metadata"]["name"] = "nginx-public"
    other_route["metadata"]["name"] = "public-route"
    other_route["spec"]["parentRefs"] = [{"name": "nginx-public"}]
    other_route["spec"]["hostnames"] = ["public.example.test"]
    elsewhere = dict(copy.deepcopy(gateway), status={"addresses": [{"type": "IPAddress", "value": "100.64.0.9"}]})
    elsewhere["metadata"]["name"] = "unrelated"
    svc = {"kind": "Service", "metadata": {"name": "traefik", "namespace": "traefik"},
           "spec": {"type": "LoadBalancer", "ports": [{"name": "web", "port": 80}]},
           "status": {"loadBalancer": {"ingress": [{"ip": "100.64.0.2"}]}}}
    plane = sides.resolve(FakeClient([gateway, route, other, other_route, elsewhere, svc]),
                          sides.parse({"name": "gateway-api", "gateway": "shop/nginx"}, "targets[0]"))
    assert plane.described == "Gateway shop/nginx with shop/nginx-public at the same address at 100.64.0.2:80 (Service traefik/traefik)"
    assert sorted({m.route for m in plane.routes or ()}) == sorted({"shop/%s" % route["metadata"]["name"], "shop/public-route"})


def test_the_lab_names_its_translations_and_their_mistakes() -> None:
    lab = parse_gateways({"classes": [{"name": "traefik"}], "translations": [{"namespaces": ["shop"], "class": "traefik"}]})
    [t] = lab.translations
    assert (t.namespaces, t.gateway_class, t.listener_port, t.ingress_class) == (["shop"], "traefik", 8000, "nginx")
    with pytest.raises(GatewayError, match=r"lab_gateways\.translations\[0\]\.class: expected one of the GatewayClasses"):
        parse_gateways({"classes": [{"name": "traefik"}], "translations": [{"namespaces": ["shop"], "class": "other"}]})
    with pytest.raises(GatewayError, match=r"lab_gateways\.translations\[0\]\.namespaces: expected a non-empty list"):
        parse_gateways({"classes": [{"name": "traefik"}], "translations": [{"namespaces": [], "class": "traefik"}]})
    with pytest.raises(GatewayError, match=r"lab_gateways\.translations\[0\]\.listener_port: expected a port"):
        parse_gateways({"classes": [{"name": "traefik"}], "translations": [{"namespaces": ["shop"], "class": "traefik",
                                                                            "listener_port": 0}]})
    # the gateway_api module's own option has no translations: they run after the lab's workloads
    with pytest.raises(GatewayError, match="expected only the keys classes, gateways"):
        parse_gateways({"translations": []}, where="")


def _real_binary() -> str:
    from kindlab_twin import binaries

    path = binaries.binary_path("ingress2gateway")
    if not path.exists():
        pytest.skip("no %s (kindlab-twin build binaries ingress2gateway; make test builds it)" % path)
    return str(path)


def _ing(name: str, host: str, path: str, path_type: str, port: Obj, annotations: dict[str, str] | None = None) -> Obj:
    return {"metadata": {"name": name, "namespace": "shop", "annotations": annotations or {}},
            "spec": {"ingressClassName": "nginx", "rules": [{"host": host, "http": {"paths": [
                {"path": path, "pathType": path_type, "backend": {"service": {"name": name, "port": port}}}]}}]}}


def test_the_real_translator_merges_a_host_drops_a_capture_rewrite_and_redirects_a_slash() -> None:
    """ingress2gateway v1.2.0 itself: what the rehearsal's target is built from."""
    import subprocess

    def run(argv: list[str]) -> tuple[int, str, str]:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        return done.returncode, done.stdout, done.stderr

    ingresses = [
        _ing("api", "quirks.example.test", "/api/v[0-9]+", "ImplementationSpecific", {"number": 80},
             {"nginx.ingress.kubernetes.io/use-regex": "true"}),
        _ing("static", "quirks.example.test", "/static", "Prefix", {"number": 80}),
        _ing("app", "rewrite.example.test", "/app(/|$)(.*)", "ImplementationSpecific", {"number": 80},
             {"nginx.ingress.kubernetes.io/rewrite-target": "/$2"}),
        _ing("docs", "slash.example.test", "/docs/", "Prefix", {"number": 80}),
    ]
    classes = [{"metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx"}}]
    produced, notes = translate.run_translator(_real_binary(), translate.input_objects(ingresses, [], classes), "nginx", run)
    routes = {o["metadata"]["name"]: o for o in produced if o["kind"] == "HTTPRoute"}
    [gateway] = [o for o in produced if o["kind"] == "Gateway"]
    assert sorted(ln["hostname"] for ln in gateway["spec"]["listeners"]) == ["quirks.example.test", "rewrite.example.test",
                                                                             "slash.example.test"]
    # use-regex on api turns static's Prefix on the same host into a case-insensitive regex too, in one route
    quirks = [r for r in routes.values() if r["spec"]["hostnames"] == ["quirks.example.test"]]
    assert [[m["path"] for rule in r["spec"]["rules"] for m in rule["matches"]] for r in quirks] == [[
        {"type": "RegularExpression", "value": "(?i)/api/v[0-9]+.*"}, {"type": "RegularExpression", "value": "(?i)/static.*"}]]
    # the capture-group rewrite is not converted, and it says so of the route it is about
    [rewrite] = [n for n in notes if "capture group" in n.message]
    assert "Ingress shop/app" in rewrite.message and rewrite.object.startswith("HTTPRoute: shop/")
    # a Prefix path with a trailing slash gets nginx's 301 for the path without it
    [docs] = [r for r in routes.values() if r["spec"]["hostnames"] == ["slash.example.test"]]
    filters = [f for rule in docs["spec"]["rules"] for f in rule.get("filters") or []]
    assert filters and filters[0]["requestRedirect"]["statusCode"] == 301


def test_named_ports_reach_the_translator_as_the_service_port_number() -> None:
    """From a file ingress2gateway v1.2.0 finds no Service (it reads them after the Ingresses used up the
    input) and refuses every named port: the real binary, on a named port, both ways."""
    import subprocess

    def run(argv: list[str]) -> tuple[int, str, str]:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
        return done.returncode, done.stdout, done.stderr

    binary = _real_binary()
    ing = _ing("app", "app.example.test", "/", "Prefix", {"name": "http"})
    svc = {"metadata": {"name": "app", "namespace": "shop"}, "spec": {"ports": [{"name": "http", "port": 8080, "targetPort": 3000}]}}
    classes = [{"metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx"}}]
    assert translate.with_port_numbers(ing, [svc])["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"] == {"number": 8080}
    assert translate.with_port_numbers(ing, [])["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["port"] == {"name": "http"}
    produced, _notes = translate.run_translator(binary, translate.input_objects([ing], [svc], classes), "nginx", run)
    [route] = [o for o in produced if o["kind"] == "HTTPRoute"]
    assert route["spec"]["rules"][0]["backendRefs"] == [{"name": "app", "port": 8080}]
    # as it is handed over without that step: the Service is in the file, and still not found
    raw = [{"apiVersion": "v1", "kind": "Service", **svc}, {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", **ing}]
    with pytest.raises(translate.TranslationError, match="cannot find port with name http in service app"):
        translate.run_translator(binary, raw, "nginx", run)
