# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Parsed workloads (model.py) rendered as the objects they are in the cluster: a Deployment and a Service
each, its Ingresses and HTTPRoutes, all labelled as the lab's."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import API_VERSION as GATEWAY_API_VERSION
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import GROUP as GATEWAY_GROUP
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.model import (
    HTTPRouteSpec, IngressPath, IngressSpec, Obj, RouteRule, ServicePort, Workload,
)

_APP_LABEL = "app.kubernetes.io/name"
# Every object the lab makes carries this label (its GatewayClasses and Gateways too, lab/gateways.py), so that the
# lab's own objects can be told apart.
PART_OF_LABEL = "app.kubernetes.io/part-of"
PART_OF = "kindlab-ingress"


def _labels(wl: Workload) -> dict[str, str]:
    return {_APP_LABEL: wl.name, PART_OF_LABEL: PART_OF, **wl.labels}


def _pod_spec(wl: Workload) -> Obj:
    container: Obj = {
        "name": "app",
        "image": wl.image,
        "ports": [{"name": "http", "containerPort": wl.port, "protocol": "TCP"}],
    }
    if wl.app == "echo":
        # echo-basic listens on HTTP_PORT and names its pod, namespace and Service from these.
        container["env"] = [
            {"name": "HTTP_PORT", "value": str(wl.port)},
            {"name": "SERVICE_NAME", "value": wl.name},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
            {"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
        ]
    if wl.rollout.readiness_probe:
        probe_path = "/health" if wl.app == "echo" else "/"
        container["readinessProbe"] = {"httpGet": {"path": probe_path, "port": "http"}, "periodSeconds": 2}
    if wl.rollout.pre_stop_sleep:
        # An exec of the image's sleep, not the preStop sleep action, which needs Kubernetes 1.30.
        container["lifecycle"] = {"preStop": {"exec": {"command": ["sleep", str(wl.rollout.pre_stop_sleep)]}}}
    spec: Obj = {"containers": [container]}
    if wl.rollout.grace_period is not None:
        spec["terminationGracePeriodSeconds"] = wl.rollout.grace_period
    return spec


def render(wl: Workload, workloads: list[Workload] | None = None) -> list[Obj]:
    """Deployment, Service and Ingresses (and HTTPRoute) for one workload; WORKLOADS: the lab's, whose
    Services its Ingresses may name."""
    selector = {_APP_LABEL: wl.name}
    labels = _labels(wl)
    meta = {"name": wl.name, "namespace": wl.namespace, "labels": labels}
    objs: list[Obj] = [
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": meta,
            "spec": {
                "replicas": wl.replicas,
                "selector": {"matchLabels": selector},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": _pod_spec(wl),
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": meta,
            "spec": {
                "type": "ClusterIP",
                "selector": selector,
                "ports": [_service_port(p) for p in wl.ports],
            },
        },
    ]
    neighbours = {other.name: other for other in workloads or [] if other.namespace == wl.namespace}
    objs += [_render_ingress(wl, ing, labels, neighbours) for ing in wl.ingresses]
    objs += [render_httproute(wl, route, labels) for route in wl.httproutes]
    return objs


def render_httproute(wl: Workload, route: HTTPRouteSpec, labels: dict[str, str]) -> Obj:
    """One of the workload's HTTPRoutes (gateway.networking.k8s.io/v1)."""
    parents = []
    for parent in route.parent_refs:
        ref: Obj = {"group": GATEWAY_GROUP, "kind": "Gateway", "name": parent.name}
        if parent.namespace != wl.namespace:
            ref["namespace"] = parent.namespace
        if parent.section_name:
            ref["sectionName"] = parent.section_name
        parents.append(ref)
    spec: Obj = {"parentRefs": parents, "rules": [_render_route_rule(rule) for rule in route.rules]}
    if route.hostnames:
        spec["hostnames"] = list(route.hostnames)
    return {"apiVersion": GATEWAY_API_VERSION, "kind": "HTTPRoute",
            "metadata": {"name": route.name, "namespace": wl.namespace, "labels": labels}, "spec": spec}


def _render_route_rule(rule: RouteRule) -> Obj:
    matches = []
    for match in rule.matches:
        item: Obj = {"path": {"type": match.path.path_type, "value": match.path.path}}
        if match.headers:
            item["headers"] = [{"type": "Exact", "name": k, "value": v} for k, v in match.headers.items()]
        if match.query_params:
            item["queryParams"] = [{"type": "Exact", "name": k, "value": v} for k, v in match.query_params.items()]
        if match.method:
            item["method"] = match.method
        matches.append(item)
    backends = []
    for backend in rule.backend_refs:
        ref: Obj = {"group": "", "kind": "Service", "name": backend.name, "port": backend.port}
        if backend.weight is not None:
            ref["weight"] = backend.weight
        backends.append(ref)
    out: Obj = {"matches": matches, "backendRefs": backends}
    if rule.filters:
        out["filters"] = [dict(f) for f in rule.filters]
    return out


def _service_port(port: ServicePort) -> Obj:
    out: Obj = {"port": port.port, "targetPort": "http", "protocol": "TCP"}  # every port reaches the container's
    if port.name:
        out["name"] = port.name
    return out


def _backend(wl: Workload, path: IngressPath, workloads: dict[str, Workload]) -> Obj:
    target = workloads.get(path.service or wl.name, wl)
    ref = target.port_ref(path.port)
    return {"service": {"name": path.service or wl.name, "port": {"number": ref} if isinstance(ref, int) else {"name": ref}}}


def _render_ingress(wl: Workload, ing: IngressSpec, labels: dict[str, str], workloads: dict[str, Workload] | None = None) -> Obj:
    """WORKLOADS: the namespace's workloads by name, for the port of a backend that is another's Service
    (without it, a backend's port is named as the workload's first)."""
    others = workloads or {}
    rules = []
    for rule in ing.rules:
        item: Obj = {"http": {"paths": [{"path": p.path, "pathType": p.path_type, "backend": _backend(wl, p, others)}
                                        for p in rule.paths]}}
        if rule.host:
            item["host"] = rule.host
        rules.append(item)
    metadata: Obj = {"name": ing.name, "namespace": wl.namespace, "labels": labels}
    if ing.annotations:
        metadata["annotations"] = ing.annotations
    spec: Obj = {"rules": rules} if rules else {}
    if ing.default_backend is not None:
        spec["defaultBackend"] = _backend(wl, ing.default_backend, others)
    if ing.tls:
        spec["tls"] = [{"hosts": list(hosts), "secretName": ing.tls_secret(i)} for i, hosts in enumerate(ing.tls)]
    if ing.ingress_class:
        spec["ingressClassName"] = ing.ingress_class
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": metadata, "spec": spec}
