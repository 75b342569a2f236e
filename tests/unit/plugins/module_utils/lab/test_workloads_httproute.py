"""A workload's HTTPRoute: its spec, validation and the object."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.apply import ensure
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.model import WorkloadError
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import parse_workloads
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.render import render
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.summary import summary
from ansible_collections.kindlab.ingress.tests.unit.fakes import FakeClient

ROUTE: dict[str, Any] = {"parent_refs": ["web", {"gateway": "edge/shared", "section_name": "web"}],
                         "hostnames": ["app.example.test", "*.example.test"],
                         "paths": ["/", {"path": "/login", "path_type": "Exact"}]}


def test_the_route_attaches_to_its_parents_and_sends_to_the_workloads_service() -> None:
    (w,) = parse_workloads([{"name": "app", "namespace": "one", "ingress": False, "httproute": ROUTE}])
    objs = render(w)
    assert [o["kind"] for o in objs] == ["Deployment", "Service", "HTTPRoute"]
    route = objs[2]
    assert route["apiVersion"] == "gateway.networking.k8s.io/v1"
    assert route["metadata"]["name"] == "app" and route["metadata"]["namespace"] == "one"
    assert route["spec"] == {
        "parentRefs": [{"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "web"},
                       {"group": "gateway.networking.k8s.io", "kind": "Gateway", "name": "shared", "namespace": "edge",
                        "sectionName": "web"}],
        "hostnames": ["app.example.test", "*.example.test"],
        "rules": [{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}, {"path": {"type": "Exact", "value": "/login"}}],
                   "backendRefs": [{"group": "", "kind": "Service", "name": "app", "port": 80}]}],
    }
    assert summary(w)["httproute"]["parent_refs"] == [{"gateway": "one/web", "section_name": None},
                                                      {"gateway": "edge/shared", "section_name": "web"}]
    assert "ingress" not in summary(w)


def test_beside_an_ingress_and_with_weighted_backends() -> None:
    (w,) = parse_workloads([{"name": "app", "namespace": "one", "httproute": {
        "name": "app-route", "parent_refs": ["web"], "backend_refs": [{"weight": 90}, {"name": "canary", "port": 8080, "weight": 10}]}}])
    kinds = [o["kind"] for o in render(w)]
    assert kinds == ["Deployment", "Service", "Ingress", "HTTPRoute"]
    route = render(w)[3]
    assert route["metadata"]["name"] == "app-route" and "hostnames" not in route["spec"]
    assert route["spec"]["rules"][0]["backendRefs"] == [
        {"group": "", "kind": "Service", "name": "app", "port": 80, "weight": 90},
        {"group": "", "kind": "Service", "name": "canary", "port": 8080, "weight": 10}]


@pytest.mark.parametrize("route, message", [
    (True, "workloads[0].httproute: expected an HTTPRoute (a mapping), a list of 1 to 16, or false, got True"),
    ({"parent_refs": ["web"], "rule": []}, "workloads[0].httproute: expected only the keys"),
    ({"parent_refs": ["web"], "rules": []}, "workloads[0].httproute.rules: expected a list of 1 to 16 rules"),
    ({"parent_refs": ["web"], "rules": [{}], "paths": ["/"]},
     "workloads[0].httproute.rules: expected rules alone (paths and backend_refs are the short form of one rule), got ['paths']"),
    ({"parent_refs": ["web"], "rules": [{"matches": [{"path": "/a", "path_type": "RegularExpression"}]}]},
     "workloads[0].httproute.rules[0].matches[0].path_type: expected one of PathPrefix, Exact"),
    ({"parent_refs": ["web"], "rules": [{"matches": [{"headers": {"bad header": "x"}}]}]},
     "workloads[0].httproute.rules[0].matches[0].headers: expected HTTP header names, got 'bad header'"),
    ({"parent_refs": ["web"], "rules": [{"matches": [{"method": "get"}]}]},
     "workloads[0].httproute.rules[0].matches[0].method: expected one of GET, HEAD"),
    ({"parent_refs": ["web"], "rules": [{"filters": [{"type": "ExtensionRef", "extensionRef": {}}]}]},
     "workloads[0].httproute.rules[0].filters[0].type: expected one of RequestHeaderModifier, ResponseHeaderModifier, "
     "RequestRedirect, URLRewrite, got 'ExtensionRef'"),
    ({"parent_refs": ["web"], "rules": [{"filters": [{"type": "URLRewrite", "requestRedirect": {}}]}]},
     "workloads[0].httproute.rules[0].filters[0]: expected the keys type and urlRewrite (a mapping), as Gateway API writes "
     "a URLRewrite filter, got ['requestRedirect', 'type']"),
    ({"parent_refs": ["web"], "rules": [{"backend_refs": [{"port": 0}]}]},
     "workloads[0].httproute.rules[0].backend_refs[0].port: expected an integer from 1 to 65535"),
    ([{"parent_refs": ["web"]}, {"parent_refs": ["web"], "name": "app"}],
     "workloads[0].httproute[1].name: expected a name no other HTTPRoute of the workload has, got 'app'"),
    ([], "workloads[0].httproute: expected an HTTPRoute (a mapping), a list of 1 to 16, or false"),
    ({}, "workloads[0].httproute.parent_refs: expected a list of 1 to 32 Gateways"),
    ({"parent_refs": []}, "workloads[0].httproute.parent_refs: expected a list of 1 to 32 Gateways"),
    ({"parent_refs": ["Web"]}, "workloads[0].httproute.parent_refs[0].gateway: expected a Gateway as namespace/name"),
    ({"parent_refs": ["a/b/c"]}, "workloads[0].httproute.parent_refs[0].gateway: expected a Gateway as namespace/name"),
    ({"parent_refs": [{"gateway": "web", "port": 80}]}, "workloads[0].httproute.parent_refs[0]: expected only the keys gateway and section_name"),
    ({"parent_refs": [{"gateway": "web", "section_name": "Web"}]}, "workloads[0].httproute.parent_refs[0].section_name: expected a listener name"),
    ({"parent_refs": ["web", "one/web"]}, "workloads[0].httproute.parent_refs[1]: expected a parent not already named by parent_refs[0]"),
    ({"parent_refs": ["web"], "name": "A"}, "workloads[0].httproute.name: expected a DNS-1123 label"),
    ({"parent_refs": ["web"], "hostnames": "a.example"}, "workloads[0].httproute.hostnames: expected a list of at most 16 hostnames"),
    ({"parent_refs": ["web"], "hostnames": ["10.0.0.1"]}, "workloads[0].httproute.hostnames[0]: expected a DNS name"),
    ({"parent_refs": ["web"], "paths": []}, "workloads[0].httproute.paths: expected a list of 1 to 64 paths"),
    ({"parent_refs": ["web"], "paths": ["api"]}, "workloads[0].httproute.paths[0].path: expected an absolute path"),
    ({"parent_refs": ["web"], "paths": [{"path": "/", "path_type": "Prefix"}]},
     "workloads[0].httproute.paths[0].path_type: expected one of PathPrefix, Exact, got 'Prefix'"),
    ({"parent_refs": ["web"], "backend_refs": []}, "workloads[0].httproute.backend_refs: expected a list of 1 to 16 backends"),
    ({"parent_refs": ["web"], "backend_refs": [{"port": 0}]}, "workloads[0].httproute.backend_refs[0].port: expected an integer from 1 to 65535"),
    ({"parent_refs": ["web"], "backend_refs": [{"weight": -1}]},
     "workloads[0].httproute.backend_refs[0].weight: expected an integer from 0 to 1000000"),
    ({"parent_refs": ["web"], "backend_refs": [{"name": "Svc"}]}, "workloads[0].httproute.backend_refs[0].name: expected a Service name"),
    ({"parent_refs": ["web"], "backend_refs": [{"namespace": "two"}]},
     "workloads[0].httproute.backend_refs[0]: expected only the keys name, port and weight"),
])
def test_bad_routes_name_the_field(route: Any, message: str) -> None:
    with pytest.raises(WorkloadError) as err:
        parse_workloads([{"name": "app", "namespace": "one", "httproute": route}])
    assert message in str(err.value)


WHOLE: dict[str, Any] = {
    "name": "api", "parent_refs": ["web"], "hostnames": ["app.example.test"],
    "rules": [
        {"matches": [{"path": "/api", "headers": {"X-Canary": "yes"}, "query_params": {"v": "2"}, "method": "GET"}],
         "filters": [{"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}],
         "backend_refs": [{"name": "canary", "port": 8080}]},
        {"matches": [{"path": "/old", "path_type": "Exact"}],
         "filters": [{"type": "RequestRedirect",
                      "requestRedirect": {"path": {"type": "ReplaceFullPath", "replaceFullPath": "/new"}, "statusCode": 301}}],
         "backend_refs": []},
        {},
    ]}


def test_a_route_written_whole_keeps_every_rule_match_and_filter() -> None:
    (w,) = parse_workloads([{"name": "app", "namespace": "one", "ingress": False,
                             "httproute": [WHOLE, {"parent_refs": ["web"], "paths": ["/static"]}]}])
    routes = [o for o in render(w) if o["kind"] == "HTTPRoute"]
    assert [r["metadata"]["name"] for r in routes] == ["api", "app-2"]
    rules = routes[0]["spec"]["rules"]
    assert rules[0] == {
        "matches": [{"path": {"type": "PathPrefix", "value": "/api"},
                     "headers": [{"type": "Exact", "name": "X-Canary", "value": "yes"}],
                     "queryParams": [{"type": "Exact", "name": "v", "value": "2"}], "method": "GET"}],
        "filters": [{"type": "URLRewrite", "urlRewrite": {"path": {"type": "ReplacePrefixMatch", "replacePrefixMatch": "/"}}}],
        "backendRefs": [{"group": "", "kind": "Service", "name": "canary", "port": 8080}]}
    assert rules[1]["backendRefs"] == [] and rules[1]["filters"][0]["type"] == "RequestRedirect"
    # an empty rule: every path, to the workload's own Service
    assert rules[2] == {"matches": [{"path": {"type": "PathPrefix", "value": "/"}}],
                        "backendRefs": [{"group": "", "kind": "Service", "name": "app", "port": 80}]}
    assert routes[1]["spec"]["rules"][0]["matches"] == [{"path": {"type": "PathPrefix", "value": "/static"}}]


def test_the_summary_writes_a_route_as_it_was_written_and_parses_back_the_same() -> None:
    raw = {"name": "app", "namespace": "one", "ingress": False, "httproute": [WHOLE, {"parent_refs": ["web"], "paths": ["/static"]}]}
    (w,) = parse_workloads([raw])
    written = summary(w)["httproute"]
    assert isinstance(written, list) and "rules" in written[0] and "paths" in written[1] and "rules" not in written[1]
    (again,) = parse_workloads([{"name": "app", "namespace": "one", "ingress": False, "httproute": written}])
    assert again.httproutes == w.httproutes


class RouteClient(FakeClient):
    pass


def test_check_mode_before_the_crds_reports_the_route_as_created() -> None:
    client = RouteClient(["one"])
    workloads = parse_workloads([{"name": "app", "namespace": "one", "httproute": {"parent_refs": ["web"]}}])
    out = ensure(client, workloads, "present", check_mode=True, wait=False, wait_timeout=1)
    assert {"object": "HTTPRoute one/app", "action": "created"} in out["objects"] and client.writes == 0


def test_the_lab_workload_module_takes_httproute() -> None:
    from ansible_collections.kindlab.ingress.plugins.modules import lab_workload

    source = open(lab_workload.__file__).read()
    assert '"httproute": {"type": "raw"}' in source and "httproute:" in lab_workload.DOCUMENTATION
