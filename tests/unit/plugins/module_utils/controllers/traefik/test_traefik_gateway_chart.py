"""Traefik's Gateway API provider: the args chart 41.6.0 renders, what the lab gives it, what the chart refuses."""
from __future__ import annotations

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.install import ControllerError, Request, plan
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import controller_type
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import chart
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import ValuesError

ON = {"providers": {"kubernetesGateway": {"enabled": True}}}


def test_off_by_default_no_gateway_args() -> None:
    cfg = chart.effective_config({}, "edge", "one")
    assert not any("kubernetesgateway" in a for a in cfg.args) and not chart.gateway_enabled({})


def test_on_it_publishes_its_own_service_by_default() -> None:
    cfg = chart.effective_config(ON, "edge", "one")
    assert [a for a in cfg.args if "kubernetesgateway" in a] == [
        "--providers.kubernetesgateway",
        "--providers.kubernetesgateway.statusaddress.service.name=edge-traefik",
        "--providers.kubernetesgateway.statusaddress.service.namespace=one",
    ]


def test_status_address_ip_hostname_namespaces_and_label_selector() -> None:
    values = {"providers": {"kubernetesGateway": {"enabled": True, "namespaces": ["a", "b"], "labelSelector": "team=a",
                                                  "statusAddress": {"ip": "203.0.113.7", "hostname": "gw.example.test",
                                                                    "service": {"enabled": False}}}}}
    assert [a for a in chart.effective_config(values, "edge", "one").args if "kubernetesgateway" in a] == [
        "--providers.kubernetesgateway",
        "--providers.kubernetesgateway.statusaddress.ip=203.0.113.7",
        "--providers.kubernetesgateway.statusaddress.hostname=gw.example.test",
        "--providers.kubernetesgateway.namespaces=a,b",
        "--providers.kubernetesgateway.labelSelector=team=a",
    ]
    # No Service of its own: no service status address (the chart's `and .service.enabled $.Values.service.enabled`).
    no_service = dict(ON, service={"enabled": False})
    assert [a for a in chart.effective_config(no_service, "edge", "one").args if "kubernetesgateway" in a] == ["--providers.kubernetesgateway"]


def test_the_gateway_args_come_between_the_ingress_providers_and_its_namespaces() -> None:
    """_podtemplate.tpl: kubernetesIngress's args, kubernetesGateway's, then kubernetesIngress.namespaces."""
    values = {"providers": {"kubernetesGateway": {"enabled": True}, "kubernetesIngress": {"namespaces": ["one"]}}}
    args = chart.effective_config(values, "edge", "one").args
    assert args.index("--providers.kubernetesgateway") < args.index("--providers.kubernetesingress.namespaces=one")
    assert args.index("--providers.kubernetesingress") < args.index("--providers.kubernetesgateway")


def test_the_lab_values_follow_the_release_and_only_with_the_provider_on() -> None:
    assert chart.gateway_lab_values({}, "edge", "one") == {}
    assert chart.gateway_lab_values({"fullnameOverride": "lb", **ON}, "edge", "one") == {
        "gateway": {"enabled": False}, "gatewayClass": {"enabled": False},
        "providers": {"kubernetesGateway": {"statusAddress": {"service": {"enabled": True, "name": "lb", "namespace": "one"}}}}}
    ctype = controller_type("traefik")
    assert ctype.gateway is not None
    assert ctype.gateway.lab_values is chart.gateway_lab_values and ctype.gateway.enabled is chart.gateway_enabled
    assert controller_type("ingress_nginx").gateway is None


@pytest.mark.parametrize("values", [dict(ON, rbac={"namespaced": True})])
def test_rbac_namespaced_with_the_provider_is_refused_as_the_chart_does(values: dict) -> None:
    with pytest.raises(ValuesError, match="Kubernetes Gateway provider requires ClusterRole"):
        chart.effective_config(values, "edge", "one")
    # The ingress_controller module refuses it too, before anything changes.
    with pytest.raises(ControllerError, match="values: providers.kubernetesGateway.enabled: the Gateway provider needs"):
        plan(Request(type="traefik", namespace="one", release="edge", values=values, method="helm"))
    with pytest.raises(ControllerError, match="values: providers.kubernetesGateway.enabled: the Gateway provider needs"):
        plan(Request(type="traefik", namespace="one", release="edge", values=ON, scope=True, method="helm"))


def test_the_manifest_method_refuses_the_provider() -> None:
    with pytest.raises(ControllerError, match=r"providers.kubernetesGateway.enabled \(method=manifest renders no Gateway API objects\)"):
        plan(Request(type="traefik", namespace="one", release="edge", values=dict(ON, providers={
            "kubernetesGateway": {"enabled": True}, "kubernetesCRD": {"enabled": False}}), method="manifest"))


def test_a_bad_gateway_value_names_its_path() -> None:
    with pytest.raises(ValuesError, match="providers.kubernetesGateway: expected a mapping, got True"):
        chart.effective_config({"providers": {"kubernetesGateway": True}}, "edge", "one")
    with pytest.raises(ValuesError, match="gatewayClass: expected a mapping"):
        chart.effective_config({"gatewayClass": "traefik"}, "edge", "one")
