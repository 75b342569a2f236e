"""lab_gateway_api, lab_gateways and the workloads' HTTPRoutes in the whole lab definition."""
from __future__ import annotations

import copy
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.lab.definition import LabError, plan, validate

POOLS = [{"name": "lab-pool", "addresses": ["100.64.0.0/16"]}]
TRAEFIK_GATEWAY = {"providers": {"kubernetesGateway": {"enabled": True}}}
GATEWAYS: dict[str, Any] = {
    "classes": [{"name": "traefik-one"}],
    "gateways": [{"namespace": "one", "name": "web", "class": "traefik-one",
                  "listeners": [{"name": "web", "port": 8000, "allowed_routes": "All"}]}],
}
ROUTED = [{"name": "app", "namespace": "two", "ingress": False,
           "httproute": {"parent_refs": [{"gateway": "one/web", "section_name": "web"}], "hostnames": ["app.example.test"]}}]


def run(backend: str = "kind", controllers: Any = None, workloads: Any = None, gateway_api: Any = True,
        gateways: Any = None, namespaces: Any = None) -> dict[str, Any]:
    return validate(backend, {"name": "lab"}, POOLS, namespaces or ["one", "two"],
                    controllers if controllers is not None else [{"namespace": "one", "type": "traefik", "values": TRAEFIK_GATEWAY}],
                    workloads if workloads is not None else ROUTED, {}, gateway_api=gateway_api,
                    gateways=copy.deepcopy(GATEWAYS) if gateways is None else gateways)


def test_a_gateway_lab_validates_and_says_what_it_builds() -> None:
    out = run()
    assert out["gateway_api"] is True and out["gateway_api_version"] == "v1.6.1"
    assert out["httproutes"] == ["two/app"] and out["ingresses"] == []
    assert out["gateways"]["gateways"][0]["listeners"][0]["allowed_routes"] == {"namespaces": "All", "selector": {}}
    lines = plan(out)
    assert "Gateway API v1.6.1 CRDs (standard channel), before the controllers" in lines
    assert "GatewayClass traefik-one (controller traefik.io/gateway-controller)" in lines
    assert "Gateway one/web (class traefik-one): web HTTP:8000, routes from All" in lines
    assert any("HTTPRoute two/app (parents one/web#web, hosts app.example.test, paths PathPrefix /)" in line for line in lines)
    # Ordered as lab.yml builds: the CRDs before the controllers.
    assert lines.index("Gateway API v1.6.1 CRDs (standard channel), before the controllers") < \
        next(i for i, line in enumerate(lines) if line.startswith("controller "))


def test_off_by_default() -> None:
    out = validate("kind", {"name": "lab"}, POOLS, ["one"], [{"namespace": "one"}], [{"name": "a", "namespace": "one"}])
    assert out["gateway_api"] is False and out["gateway_api_version"] is None
    assert out["gateways"] == {"classes": [], "gateways": [], "translations": []} and out["httproutes"] == []
    assert not any("Gateway" in line for line in plan(out))


def test_traefik_with_the_gateway_provider_gets_the_lab_values_beneath_its_own() -> None:
    (traefik,) = run()["controllers"]
    values = traefik["values"]
    assert values["gateway"] == {"enabled": False} and values["gatewayClass"] == {"enabled": False}
    assert values["providers"]["kubernetesGateway"]["statusAddress"]["service"] == {
        "enabled": True, "name": "ingress-traefik", "namespace": "one"}
    assert traefik["gateway_provider"] is True
    assert "--providers.kubernetesgateway.statusaddress.service.name=ingress-traefik" in traefik["args"]
    # The user's explicit values win.
    own = {"providers": {"kubernetesGateway": {"enabled": True, "statusAddress": {"ip": "203.0.113.7", "service": {"enabled": False}}}},
           "gatewayClass": {"enabled": True, "name": "mine"}}
    (traefik,) = run(controllers=[{"namespace": "one", "type": "traefik", "release": "edge", "values": own}])["controllers"]
    assert traefik["values"]["gatewayClass"] == {"enabled": True, "name": "mine"}
    assert traefik["values"]["providers"]["kubernetesGateway"]["statusAddress"]["service"]["enabled"] is False
    assert "--providers.kubernetesgateway.statusaddress.ip=203.0.113.7" in traefik["args"]
    assert not any("statusaddress.service" in a for a in traefik["args"])


def test_a_traefik_without_the_provider_is_left_alone() -> None:
    (traefik,) = run(controllers=[{"namespace": "one", "type": "traefik"}])["controllers"]
    assert "gateway" not in traefik["values"] and traefik["gateway_provider"] is False
    assert not any("kubernetesgateway" in a for a in traefik["args"])


@pytest.mark.parametrize("kwargs, message", [
    ({"gateway_api": False, "workloads": []},
     "lab_gateways: GatewayClasses and Gateways need the Gateway API CRDs: set lab_gateway_api: true"),
    ({"gateway_api": False, "gateways": {}, "workloads": []},
     "lab_controllers[0].values: they turn on traefik's Gateway API provider, but lab_gateway_api is false"),
    ({"gateway_api": False, "gateways": {}, "controllers": [{"namespace": "one"}]},
     "lab_workloads[0].httproute: an HTTPRoute needs the Gateway API CRDs: set lab_gateway_api: true"),
    ({"gateway_api": "yes"}, "lab_gateway_api: expected true or false, got 'yes'"),
    ({"gateways": {"classes": [{"name": "c"}], "gateways": [{"namespace": "three", "name": "g", "class": "c",
                                                             "listeners": [{"name": "l", "port": 8000}]}]}},
     "lab_gateways.gateways[0].namespace: expected one of lab_namespaces ['one', 'two'], got 'three'"),
    ({"gateways": {"classes": [], "gateways": GATEWAYS["gateways"]}},
     "lab_gateways.gateways[0].class: expected one of the GatewayClasses of lab_gateways.classes [], got 'traefik-one'"),
    ({"gateways": {"classes": [{"name": "c"}], "gateways": [{"namespace": "one", "name": "g", "class": "c",
                                                            "listeners": [{"name": "l", "port": 0}]}]}},
     "lab_gateways.gateways[0].listeners[0].port: expected a port number from 1 to 65535, got 0"),
    ({"workloads": [{"name": "app", "namespace": "two", "httproute": {"parent_refs": ["one/api"]}}]},
     "lab_workloads[0].httproute.parent_refs[0].gateway: expected a Gateway of lab_gateways.gateways (namespace/name), "
     "one of ['one/web'], got 'one/api'"),
    ({"workloads": [{"name": "app", "namespace": "two", "httproute": {"parent_refs": ["web"]}}]},
     "lab_workloads[0].httproute.parent_refs[0].gateway: expected a Gateway of lab_gateways.gateways (namespace/name), "
     "one of ['one/web'], got 'two/web'"),
    ({"workloads": [{"name": "app", "namespace": "two", "httproute": {"parent_refs": [{"gateway": "one/web", "section_name": "websecure"}]}}]},
     "lab_workloads[0].httproute.parent_refs[0].section_name: expected a listener of Gateway one/web, one of ['web'], got 'websecure'"),
    ({"workloads": [{"name": "app", "namespace": "two", "httproute": {"parent_refs": ["one/web"], "paths": [{"path": "/", "path_type": "Prefix"}]}}]},
     "lab_workloads[0].httproute.paths[0].path_type: expected one of PathPrefix, Exact"),
    ({"controllers": [{"namespace": "one", "type": "traefik", "method": "manifest", "values": TRAEFIK_GATEWAY}]},
     "lab_controllers[0].method: the values turn on traefik's Gateway API provider, which only helm installs"),
    ({"controllers": [{"namespace": "one", "type": "traefik", "scope": True, "values": TRAEFIK_GATEWAY}]},
     "lab_controllers[0].values: providers.kubernetesGateway.enabled: the Gateway provider needs the chart's ClusterRole"),
    ({"controllers": [{"namespace": "one", "type": "traefik", "values": dict(TRAEFIK_GATEWAY, rbac={"namespaced": True})}]},
     "so rbac.namespaced (scope: true) must be false"),
    ({"controllers": [{"namespace": "one", "type": "traefik", "values": {"providers": {"kubernetesGateway": {"enabled": True, "statusAddress": "x"}}}}]},
     "lab_controllers[0].values: providers.kubernetesGateway.statusAddress: expected a mapping, got 'x'"),
])
def test_every_bad_gateway_input_is_refused_naming_the_field(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(LabError) as err:
        run(**kwargs)
    assert message in str(err.value)


def test_on_the_twin_a_gateway_lab_with_ingress_nginx_validates_and_traefik_stays_refused() -> None:
    out = run(backend="twin", controllers=[{"namespace": "one"}])
    assert out["gateway_api"] and out["httproutes"] == ["two/app"]
    with pytest.raises(LabError, match=r"lab_controllers\[0\]\.type: traefik runs on lab_backend kind only"):
        run(backend="twin")


def test_the_lab_definition_module_documents_and_takes_the_options() -> None:
    from ansible_collections.kindlab.ingress.plugins.modules import lab_definition

    source = open(lab_definition.__file__).read()
    assert '"gateway_api": {"type": "bool", "default": False}' in source and '"gateways": {"type": "dict", "default": {}}' in source
    assert "  gateway_api:\n" in lab_definition.DOCUMENTATION and "  gateways:\n" in lab_definition.DOCUMENTATION


def test_lab_expect_names_only_gateways_and_routes_the_lab_defines() -> None:
    def expect(value: Any) -> dict[str, Any]:
        return validate("kind", {"name": "lab"}, POOLS, ["one", "two"], [{"namespace": "one", "type": "traefik", "values": TRAEFIK_GATEWAY}],
                        ROUTED, value, gateway_api=True, gateways=copy.deepcopy(GATEWAYS))
    out = expect({"gateways": {"failing": {"one/web": "no address"}}, "routes": {"failing": {"two/app": "NotAllowedByListeners"}}})
    assert out["expect"]["routes"] == {"failing": {"two/app": "NotAllowedByListeners"}}
    with pytest.raises(LabError, match=r"lab_expect\.gateways\.failing\[one/api\]: expected a Gateway of lab_gateways\.gateways "
                                       r"\(namespace/name\), one of \['one/web'\], got 'one/api'"):
        expect({"gateways": {"failing": {"one/api": "x"}}})
    with pytest.raises(LabError, match=r"lab_expect\.routes\.failing\[one/app\]: expected an HTTPRoute of lab_workloads' httproute "
                                       r"\(namespace/name\), one of \['two/app'\], got 'one/app'"):
        expect({"routes": {"failing": {"one/app": "x"}}})
    with pytest.raises(LabError, match=r"lab_expect\.routes\.failing\[two/app\]: .*not a valid regular expression"):
        expect({"routes": {"failing": {"two/app": "("}}})
    with pytest.raises(LabError, match=r"lab_expect\.gateways: expected only the keys failing, got \['max_changes'\]"):
        expect({"gateways": {"max_changes": 2}})
