"""Traefik's rules (controllers/traefik): values → the Ingress providers' args, what the proxy
claims and publishes, and what diagnose and conflicts then say about a move off ingress-nginx."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.verify import diagnose as d
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import base, registry
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import binary, chart
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import ValuesError
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_diagnose import (
    cluster_rbac,
    ingress,
    lb_service,
    nginx_workload,
    pod,
    scoped_args,
)

Obj = dict[str, Any]
NGINX_PUBLISH = {"providers": {"kubernetesIngressNGINX": {"enabled": True, "publishService": {"enabled": True}}}}


def test_default_values_render_the_ingress_provider_publishing_its_own_service() -> None:
    cfg = chart.effective_config({}, "traefik", "traefik")
    assert cfg.args == ["--providers.kubernetesingress", "--providers.kubernetesingress.allowEmptyServices=true",
                        "--providers.kubernetesingress.ingressendpoint.publishedservice=traefik/traefik"]
    assert cfg.deployment == ("traefik", "traefik") and cfg.ingress_class == "traefik" and cfg.default_class
    assert any("cluster default" in n for n in cfg.notes)
    # A release name without the chart's name gets it appended (_helpers.tpl traefik.fullname).
    assert chart.effective_config({}, "edge", "ns").deployment == ("ns", "edge-traefik")


def test_the_ingress_nginx_provider_args_follow_the_chart() -> None:
    cfg = chart.effective_config(NGINX_PUBLISH, "t", "tns")
    nginx = [a for a in cfg.args if a.startswith("--providers.kubernetesingressnginx")]
    assert nginx == [
        "--providers.kubernetesingressnginx",
        "--providers.kubernetesingressnginx.publishservice=tns/t-traefik",
        "--providers.kubernetesingressnginx.controllerClass=k8s.io/ingress-nginx",
        "--providers.kubernetesingressnginx.disableSvcExternalName=false",
        "--providers.kubernetesingressnginx.httpEntryPoint=web",
        "--providers.kubernetesingressnginx.httpsEntryPoint=websecure",
        "--providers.kubernetesingressnginx.ingressClass=nginx",
        "--providers.kubernetesingressnginx.ingressClassByName=false",
        "--providers.kubernetesingressnginx.watchIngressWithoutClass=false",
    ]
    assert any("each overwrites the other's status" in n for n in cfg.notes)


def test_rbac_namespaced_limits_both_providers_and_drops_class_lookups() -> None:
    cfg = chart.effective_config({"rbac": {"namespaced": True}, "providers": {"kubernetesIngressNGINX": {"enabled": True}}},
                                 "traefik", "edge")
    assert "--providers.kubernetesingress.disableClusterScopeResources=true" in cfg.args
    assert "--providers.kubernetesingress.namespaces=edge" in cfg.args
    assert "--providers.kubernetesingressnginx.watchnamespace=edge" in cfg.args
    assert cfg.rbac_scope == "namespace"


def test_options_and_images_become_values() -> None:
    values = chart.apply_options({}, scope=True, publish_service=False, ingress_class="edge")
    assert values == {"rbac": {"namespaced": True}, "ingressClass": {"name": "edge"},
                      "providers": {"kubernetesIngress": {"publishedService": {"enabled": False}, "ingressClass": "edge"}}}
    with pytest.raises(ValuesError, match=r"scope=True conflicts with values.rbac.namespaced=False"):
        chart.apply_options({"rbac": {"namespaced": False}}, scope=True)
    assert chart.with_image({}, "kindlab/traefik:v3.7.13", "docker.io/traefik:v3.7.13")["image"] == {
        "registry": "docker.io", "repository": "kindlab/traefik", "tag": "v3.7.13"}
    assert chart.image_ref(chart.with_image({}, "registry.example.com/m/traefik:v3.7.13", "x:1")) == \
        "registry.example.com/m/traefik:v3.7.13"
    with pytest.raises(ValuesError, match="deployment.kind: expected Deployment or DaemonSet"):
        chart.effective_config({"deployment": {"kind": "StatefulSet"}}, "t", "n")


def traefik_workload(args: list[str], ns: str = "traefik") -> Obj:
    labels = {"app.kubernetes.io/name": "traefik", "app.kubernetes.io/instance": "traefik-traefik"}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "traefik", "namespace": ns},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                "serviceAccountName": "traefik",
                "containers": [{"name": "traefik", "image": "docker.io/traefik:v3.7.13", "args": args}]}}}}


def traefik_pod() -> Obj:
    p = pod("traefik", "traefik-abc")
    p["metadata"]["labels"] = {"app.kubernetes.io/name": "traefik", "app.kubernetes.io/instance": "traefik-traefik"}
    return p


def traefik_service(ip: str | None) -> Obj:
    svc = lb_service("traefik", ip)
    svc["metadata"]["name"] = "traefik"
    svc["spec"]["selector"] = {"app.kubernetes.io/name": "traefik"}
    if ip is None:
        svc["status"] = {}
    return svc


def migration(values: Obj, traefik_ip: str | None = "100.64.0.9", extra_ingresses: list[Obj] | None = None) -> base.ClusterState:
    """ingress-nginx in `one` (scoped, publishing 100.64.0.1) and Traefik in `traefik`."""
    cfg = chart.effective_config(values, "traefik", "traefik")
    crole, crb = cluster_rbac("traefik")
    crb["subjects"][0]["name"] = "traefik"
    return base.ClusterState(
        workloads=[nginx_workload("one", scoped_args("one")), traefik_workload(cfg.args)],
        pods=[pod("one", "c1"), traefik_pod()],
        services=[lb_service("one", "100.64.0.1"), traefik_service(traefik_ip)],
        nodes=[{"metadata": {"name": "lab-control-plane"}, "status": {"addresses": [{"type": "InternalIP", "address": "172.18.0.2"}]}}],
        namespaces=[{"metadata": {"name": n}} for n in ("one", "traefik", "apps")],
        ingress_classes=[{"metadata": {"name": "nginx-one"}, "spec": {"controller": "k8s.io/ingress-nginx-one"}},
                         {"metadata": {"name": "traefik"}, "spec": {"controller": "traefik.io/ingress-controller"}}],
        cluster_roles=[crole], cluster_role_bindings=[crb],
        ingresses=[ingress("one")] + (extra_ingresses or []),
    )


def test_both_publishing_is_a_fight_and_the_fix_is_the_migration_guides() -> None:
    result = d.analyse(migration(NGINX_PUBLISH))
    refs = [c["controller"] for c in result["controllers"]]
    assert refs == ["one/ingress-ingress-nginx-controller", "traefik/traefik@kubernetes", "traefik/traefik@kubernetesingressnginx"]
    writers = result["ingresses"]["one/test"]["writers"]
    assert [(w["controller"], w["address"]) for w in writers] == [
        ("one/ingress-ingress-nginx-controller", ["100.64.0.1"]), ("traefik/traefik@kubernetesingressnginx", ["100.64.0.9"])]
    [finding] = [f for f in result["findings"] if f["kind"] == "multiple_writers"]
    assert finding["culprits"] == ["traefik/traefik@kubernetesingressnginx"]
    assert "providers.kubernetesIngressNGINX.publishService.enabled: false" in finding["fix"]["chart_values"][0]
    assert not result["passed"]


def test_traefik_publishing_nothing_leaves_ingress_nginx_the_only_writer() -> None:
    result = d.analyse(migration({"providers": {"kubernetesIngressNGINX": {"enabled": True}}}))
    assert [w["controller"] for w in result["ingresses"]["one/test"]["writers"]] == ["one/ingress-ingress-nginx-controller"]
    assert result["passed"]
    nginx_provider = next(c for c in result["controllers"] if c["controller"].endswith("@kubernetesingressnginx"))
    assert nginx_provider["address"] is None and "writes no Ingress status" in nginx_provider["publish_detail"]


def test_the_ingress_provider_claims_classless_and_traefik_ingresses_and_waits_for_its_lb() -> None:
    # In a namespace ingress-nginx does not watch (its `one` would also take class-less ones up at
    # their next update: it may not list IngressClasses).
    classless = ingress("apps", "bare", annotation=None)
    traefik_class = ingress("apps", "t", annotation=None, class_name="traefik")
    other_class = ingress("apps", "o", annotation="nginx")
    state = migration({}, extra_ingresses=[classless, traefik_class, other_class])
    result = d.analyse(state)
    writers = {k: [w["controller"] for w in v["writers"]] for k, v in result["ingresses"].items()}
    assert writers["apps/bare"] == ["traefik/traefik@kubernetes"]
    assert writers["apps/t"] == ["traefik/traefik@kubernetes"]
    assert writers["apps/o"] == []  # annotation nginx: not Traefik's, and outside ingress-nginx's namespace
    # While its LoadBalancer has no address it leaves the status alone (kubernetes.go:478-483).
    pending = d.analyse(migration({}, traefik_ip=None, extra_ingresses=[classless]))
    assert pending["ingresses"]["apps/bare"]["writers"] == []


def test_detection_and_the_registry() -> None:
    assert registry.detect({"image": "docker.io/traefik:v3.7.13"}) is registry.REGISTRY["traefik"]
    assert registry.detect({"image": "kindlab/traefik:v3.7.13", "args": ["--ping=true"]}) is registry.REGISTRY["traefik"]
    assert registry.detect({"image": "traefik/whoami:v1.11.0"}) is None
    assert registry.type_of_class("traefik.io/ingress-controller") == "traefik"
    assert registry.type_of_class("k8s.io/ingress-nginx") == "ingress_nginx"
    assert binary.parse_args(["--Providers.KubernetesIngress", "--a=b"]) == {"providers.kubernetesingress": "true", "a": "b"}


def test_a_class_of_its_own_is_each_types_own_fix() -> None:
    import dataclasses

    from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.controllers import find_controllers

    controllers = {c.ref: c for c in find_controllers(migration(NGINX_PUBLISH))}
    # neither a fix that stops it nor one of scope or publishing: the fix is a class of its own, in the type's words
    plain = [dataclasses.replace(c, stop_fix=("", ""), scope_fix=("", ""), publish_fix=("", "")) for c in controllers.values()]
    fix = d._fix_for(plain)
    assert fix["chart_values"] == [
        "one/ingress-ingress-nginx-controller: give it its own class (controller.ingressClass / ingressClassResource) so it "
        "stops claiming the Ingress",
        "traefik/traefik@kubernetes: providers.kubernetesIngress.ingressClass: <a class of its own>",
        "traefik/traefik@kubernetesingressnginx: providers.kubernetesIngressNGINX.ingressClass and controllerClass: a class of its own"]
    assert fix["args"][1] == "traefik/traefik@kubernetes: --providers.kubernetesingress.ingressClass=<a class of its own>"
    assert d._fix_for([]) == {}


def test_a_missing_publish_service_of_traefik_is_fixed_in_traefiks_words() -> None:
    state = migration(NGINX_PUBLISH)
    state.services = [s for s in state.services if s["metadata"]["namespace"] != "traefik"]
    [finding] = [f for f in d.analyse(state)["findings"] if f["kind"] == "publish_service_missing"]
    assert finding["controllers"] == ["traefik/traefik@kubernetesingressnginx"]
    assert finding["fix"]["chart_values"][0].startswith(
        "traefik/traefik@kubernetesingressnginx: providers.kubernetesIngressNGINX.publishService.pathOverride")
    assert not any("controller.service.enabled" in v for v in finding["fix"]["chart_values"])
