"""Traefik's Gateway provider read from its args (controllers/traefik/gateway.py): on or off, the
GatewayClasses it claims, the address it writes, the entry points its listeners land on; and the
controller-type seam that hands it to diagnose."""
from __future__ import annotations

from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import base, registry
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import gateway

Obj = dict[str, Any]

# The entry points chart 41.6.0 renders by default (_podtemplate.tpl: --entryPoints.<name>.address=:<port>/tcp,
# websecure with http.tls).
CHART_ENTRY_POINTS = ["--entryPoints.metrics.address=:9100/tcp", "--entryPoints.traefik.address=:8080/tcp",
                      "--entryPoints.web.address=:8000/tcp", "--entryPoints.websecure.address=:8443/tcp",
                      "--entryPoints.websecure.http.tls=true"]


def gateway_args(ns: str, *extra: str) -> list[str]:
    """The args of release `traefik` in NS with providers.kubernetesGateway.enabled: its statusAddress.service
    defaults to its own Service (_podtemplate.tpl 578-612)."""
    return CHART_ENTRY_POINTS + ["--ping=true", "--providers.kubernetesingress", "--providers.kubernetesgateway",
                                 "--providers.kubernetesgateway.statusaddress.service.name=traefik",
                                 "--providers.kubernetesgateway.statusaddress.service.namespace=" + ns] + list(extra)


def labels(ns: str) -> dict[str, str]:
    return {"app.kubernetes.io/name": "traefik", "app.kubernetes.io/instance": "traefik-" + ns}


def workload(ns: str, args: list[str]) -> Obj:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "traefik", "namespace": ns},
            "spec": {"selector": {"matchLabels": labels(ns)}, "template": {"metadata": {"labels": labels(ns)}, "spec": {
                "serviceAccountName": "traefik",
                "containers": [{"name": "traefik", "image": "docker.io/traefik:v3.7.13", "args": args}]}}}}


def pod(ns: str) -> Obj:
    return {"metadata": {"namespace": ns, "name": "traefik-abc", "labels": labels(ns)}, "spec": {"nodeName": "lab-control-plane"},
            "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}}


def service(ns: str, ip: str | None, name: str = "traefik") -> Obj:
    return {"metadata": {"namespace": ns, "name": name},
            "spec": {"type": "LoadBalancer", "selector": {"app.kubernetes.io/instance": "traefik-" + ns}},
            "status": {"loadBalancer": {"ingress": [{"ip": ip}] if ip else []}}}


def gateway_class(name: str = "traefik", labels: dict[str, str] | None = None,
                  controller: str = gateway.CONTROLLER_NAME) -> Obj:
    return {"metadata": {"name": name, "labels": labels or {}}, "spec": {"controllerName": controller}}


def state(installs: dict[str, list[str]], ips: dict[str, str | None] | None = None, **objects: Any) -> base.ClusterState:
    """A Traefik per namespace of INSTALLS (its args), each with its LoadBalancer Service (IPS, default 100.64.0.<n>)."""
    ips = ips if ips is not None else {ns: "100.64.0.%d" % (i + 1) for i, ns in enumerate(installs)}
    namespaces = sorted(set(installs) | {"apps", "infra"})
    return base.ClusterState(
        workloads=[workload(ns, args) for ns, args in installs.items()], pods=[pod(ns) for ns in installs],
        services=[service(ns, ips.get(ns)) for ns in installs],
        namespaces=[{"metadata": {"name": n, "labels": {"kubernetes.io/metadata.name": n}}} for n in namespaces],
        gateway_api=True, **objects)


def analysed(args: list[str], ns: str = "traefik", st: base.ClusterState | None = None) -> base.GatewayController | None:
    st = st or state({ns: args})
    w = workload(ns, args)
    return gateway.analyse(st, w, base.pod_template(w)["containers"][0], [pod(ns)])


@pytest.mark.parametrize("args, on", [
    ([], False), (["--providers.kubernetesingress"], False), (["--providers.kubernetesgateway"], True),
    (["--providers.kubernetesgateway=true"], True), (["--Providers.KubernetesGateway=TRUE"], True),
    (["--providers.kubernetesgateway.namespaces=apps"], True),
    # paerser: a value other than true switches the section off, whatever is set under it
    (["--providers.kubernetesgateway=false", "--providers.kubernetesgateway.namespaces=apps"], False),
])
def test_the_provider_is_on_as_paerser_reads_it(args: list[str], on: bool) -> None:
    assert (analysed(args) is not None) is on


def test_the_charts_defaults_write_its_services_load_balancer_address() -> None:
    c = analysed(gateway_args("traefik"))
    assert c is not None and c.ref == "traefik/traefik@kubernetesgateway" and c.controller_name == "traefik.io/gateway-controller"
    assert (c.address_source, c.address, c.watch) == ("service", ["100.64.0.1"], "all namespaces")
    assert c.settings["field_manager"] == "traefik" and "no leader election" in c.settings["writes"]
    assert [(ep["name"], ep["port"], ep["http_tls"]) for ep in c.entry_points] == [
        ("metrics", 9100, False), ("traefik", 8080, False), ("web", 8000, False), ("websecure", 8443, True)]


@pytest.mark.parametrize("extra, source, address", [
    (["--providers.kubernetesgateway.statusaddress.ip=192.0.2.7",
      "--providers.kubernetesgateway.statusaddress.hostname=lb.example.com"], "ip", ["192.0.2.7"]),
    (["--providers.kubernetesgateway.statusaddress.hostname=lb.example.com"], "hostname", ["lb.example.com"]),
])
def test_ip_before_hostname_before_the_service(extra: list[str], source: str, address: list[str]) -> None:
    c = analysed(gateway_args("traefik", *extra))
    assert c is not None and (c.address_source, c.address) == (source, address)


def test_no_status_address_writes_the_status_without_one() -> None:
    c = analysed(CHART_ENTRY_POINTS + ["--providers.kubernetesgateway"])
    assert c is not None and (c.address_source, c.address) == ("none", [])


def test_a_pending_load_balancer_gives_no_address() -> None:
    c = analysed(gateway_args("traefik"), st=state({"traefik": gateway_args("traefik")}, ips={"traefik": None}))
    assert c is not None and c.address == [] and "its LoadBalancer has no address" in c.address_detail


@pytest.mark.parametrize("args, why", [
    (gateway_args("traefik")[:-1] + ["--providers.kubernetesgateway.statusaddress.service.namespace=traefik",
                                     "--providers.kubernetesgateway.statusaddress.service.name=gone"],
     "the Service does not exist"),
    (gateway_args("traefik", "--providers.kubernetesgateway.namespaces=apps"),
     "the Service's namespace is outside its namespaces"),
    (CHART_ENTRY_POINTS + ["--providers.kubernetesgateway.statusaddress.service.name=traefik"],
     "a Service needs both"),
])
def test_a_service_it_cannot_get_stops_the_whole_sync(args: list[str], why: str) -> None:
    c = analysed(args)
    assert c is not None and c.address is None and c.address_source == "blocked" and why in c.address_detail


def test_it_claims_every_class_of_its_controller_name_unless_a_label_selector_narrows_it() -> None:
    c = analysed(gateway_args("traefik"))
    assert c is not None
    assert c.claim_class(gateway_class()) == (True, "the class has controllerName traefik.io/gateway-controller and it sets "
                                                    "no labelSelector, so it claims every such class")
    assert c.claim_class(gateway_class(controller="example.com/gw"))[0] is False
    narrowed = analysed(gateway_args("traefik", "--providers.kubernetesgateway.labelSelector=app.kubernetes.io/instance=traefik-traefik"))
    assert narrowed is not None
    assert narrowed.claim_class(gateway_class(labels=labels("traefik")))[0]
    assert narrowed.claim_class(gateway_class()) == (
        False, "its labels do not match --providers.kubernetesgateway.labelSelector=app.kubernetes.io/instance=traefik-traefik")
    # The fix it proposes selects the label the chart puts on its own GatewayClass.
    assert c.class_fix[1].startswith("--providers.kubernetesgateway.labelSelector=app.kubernetes.io/instance=traefik-traefik")


def test_listeners_land_on_the_entry_point_of_their_port() -> None:
    c = analysed(gateway_args("traefik"))
    assert c is not None
    assert c.serves_listener({"name": "web", "port": 8000, "protocol": "HTTP"}) == ("web", "entry point web :8000 listens on port 8000")
    assert c.serves_listener({"name": "tls", "port": 8443, "protocol": "HTTPS"})[0] == "websecure"
    # An HTTP listener skips an entry point with http.tls (kubernetes.go entryPointName).
    ep, why = c.serves_listener({"name": "plain", "port": 8443, "protocol": "HTTP"})
    assert ep is None and why.endswith("listens on port 8443 (websecure has http.tls, which an HTTP listener skips)")
    ep, why = c.serves_listener({"name": "http", "port": 80, "protocol": "HTTP"})
    assert ep is None and why.startswith("none of its entry points (metrics :9100, traefik :8080, web :8000, "
                                         "websecure :8443 with http.tls) listens on port 80")


def test_without_entry_points_it_has_http_on_80_and_traefik_when_something_uses_it() -> None:
    bare = analysed(["--providers.kubernetesgateway"])
    assert bare is not None and [ep["name"] for ep in bare.entry_points] == ["http"]
    assert bare.serves_listener({"name": "l", "port": 80, "protocol": "HTTP"})[0] == "http"
    with_api = analysed(["--providers.kubernetesgateway", "--api.insecure=true"])
    assert with_api is not None and [(ep["name"], ep["port"]) for ep in with_api.entry_points] == [("http", 80), ("traefik", 8080)]
    moved = analysed(["--providers.kubernetesgateway", "--entryPoints.web.address=:8000", "--ping=true", "--ping.entryPoint=web"])
    assert moved is not None and [ep["name"] for ep in moved.entry_points] == ["web"]


def test_the_seam_gives_the_gateway_side_to_types_that_have_one() -> None:
    assert registry.REGISTRY["traefik"].gateway is not None and registry.REGISTRY["traefik"].gateway.analyse is gateway.analyse
    assert registry.REGISTRY["ingress_nginx"].gateway is None
    # a Traefik recognised by its Gateway provider alone, whatever its image is called
    assert registry.detect({"image": "example.com/edge:1", "args": ["--providers.kubernetesgateway"]}) is registry.REGISTRY["traefik"]
