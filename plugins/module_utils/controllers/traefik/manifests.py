# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traefik: the objects chart 41.6.0 creates for an Ingress-only Traefik, rendered from the same
effective configuration as the helm path (method=manifest, for clusters without helm).

The chart's CRDs are not rendered, so the kubernetesCRD provider must be off; values outside
the part this module renders are refused, naming them, rather than silently dropped. What is
rendered follows templates/rbac/, service.yaml, _podtemplate.tpl (the Deployment, with the
default entry points, ping, metrics and logs) and ingressclass.yaml.
"""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import DEFAULT_CLASS_ANNOTATION
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.chart_values import get_path, trunc63, truthy
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.chart import additional_arguments
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.config import TraefikConfig
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import (
    CHART_DEFAULTS,
    CHART_NAME,
    CHART_VERSION,
    CONTROLLER_VALUE,
    ValuesError,
)

Obj = dict[str, Any]

RENDERED_KINDS: tuple[tuple[str, str], ...] = (
    ("v1", "ServiceAccount"), ("v1", "Service"), ("apps/v1", "Deployment"),
    ("rbac.authorization.k8s.io/v1", "Role"), ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"), ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("networking.k8s.io/v1", "IngressClass"),
)
MANAGED_BY = "kindlab.ingress"

# Values this module renders beyond CHART_DEFAULTS' keys (each with the chart's meaning).
_MORE_KEYS = ("global.checkNewVersion", "global.sendAnonymousUsage", "log.level", "api.insecure",
              "providers.kubernetesCRD.enabled", "providers.kubernetesGateway.enabled")

_LOG_LEVELS = ("TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL", "PANIC")

_READ = ["get", "list", "watch"]
_CORE_RULES: list[Obj] = [
    {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
    {"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]},
    {"apiGroups": [""], "resources": ["secrets"], "verbs": _READ},
]
_INGRESS_RULES: list[Obj] = [
    {"apiGroups": ["extensions", "networking.k8s.io"], "resources": ["ingresses/status"], "verbs": ["update"]},
]


def _leaf_paths(values: Any, prefix: str = "") -> list[str]:
    if not isinstance(values, dict) or not values:
        return [prefix] if prefix else []
    out: list[str] = []
    for key, value in values.items():
        out += _leaf_paths(value, "%s.%s" % (prefix, key) if prefix else str(key))
    return out


def _unsupported(cfg: TraefikConfig) -> list[str]:
    known = set(_leaf_paths(CHART_DEFAULTS)) | set(_MORE_KEYS)
    problems = ["values.%s (not rendered by method=manifest)" % path for path in _leaf_paths(cfg.user_values)
                if path not in known and not any(path.startswith(k + ".") for k in known)]
    if get_path(cfg.values, "providers.kubernetesCRD.enabled") is not False:
        problems.append("providers.kubernetesCRD.enabled must be false: method=manifest applies none of the chart's CRDs")
    if truthy(get_path(cfg.values, "providers.kubernetesGateway.enabled")):
        problems.append("providers.kubernetesGateway.enabled (method=manifest renders no Gateway API objects)")
    insecure = get_path(cfg.values, "api.insecure")
    if insecure is not None and not isinstance(insecure, bool):
        problems.append("api.insecure: expected a boolean (the chart's schema), got %r" % (insecure,))
    level = get_path(cfg.values, "log.level")
    if level is not None and level not in _LOG_LEVELS:
        problems.append("log.level: expected one of %s (the chart's schema), got %r" % (", ".join(_LOG_LEVELS), level))
    if get_path(cfg.values, "deployment.kind") != "Deployment":
        problems.append("deployment.kind DaemonSet (method=manifest renders a Deployment)")
    return problems


def release_selector(release: str) -> str:
    """The label selector of every object the collection rendered for a release."""
    return "app.kubernetes.io/name=%s,app.kubernetes.io/managed-by=%s,kindlab.ingress/release=%s" % (CHART_NAME, MANAGED_BY, release)


def _labels(cfg: TraefikConfig) -> dict[str, str]:
    # _helpers.tpl traefik.labels; the instance name is <release>-<namespace>.
    return {
        "app.kubernetes.io/name": CHART_NAME,
        "app.kubernetes.io/instance": trunc63("%s-%s" % (cfg.release, cfg.namespace)),
        "helm.sh/chart": "%s-%s" % (CHART_NAME, CHART_VERSION),
        # Not "Helm": the collection applies these objects; the release label lets it prune them.
        "app.kubernetes.io/managed-by": MANAGED_BY,
        "kindlab.ingress/release": cfg.release,
    }


def _selector(cfg: TraefikConfig) -> dict[str, str]:
    labels = _labels(cfg)
    return {key: labels[key] for key in ("app.kubernetes.io/name", "app.kubernetes.io/instance")}


def _meta(cfg: TraefikConfig, name: str, namespace: str | None) -> Obj:
    meta: Obj = {"name": name, "labels": _labels(cfg)}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _namespaces(values: Any, key: str, release_ns: str) -> list[str]:
    return [release_ns] + [str(ns) for ns in get_path(values, key) or []]


def _rbac(cfg: TraefikConfig) -> list[Obj]:
    v = cfg.values
    ing_on = truthy(get_path(v, "providers.kubernetesIngress.enabled"))
    ngx_on = truthy(get_path(v, "providers.kubernetesIngressNGINX.enabled"))
    subjects = [{"kind": "ServiceAccount", "name": cfg.fullname, "namespace": cfg.namespace}]
    group = "rbac.authorization.k8s.io"
    if cfg.rbac_scope == "cluster":
        name = cfg.cluster_role_name
        rules = [{"apiGroups": [""], "resources": ["configmaps", "nodes", "services"], "verbs": _READ}] + _CORE_RULES
        if ing_on or ngx_on:
            rules += [{"apiGroups": ["extensions", "networking.k8s.io"], "resources": ["ingressclasses", "ingresses"], "verbs": _READ}]
            rules += _INGRESS_RULES + [{"apiGroups": [""], "resources": ["namespaces"], "verbs": ["list", "watch"]}]
        return [
            {"apiVersion": group + "/v1", "kind": "ClusterRole", "metadata": _meta(cfg, name, None), "rules": rules},
            {"apiVersion": group + "/v1", "kind": "ClusterRoleBinding", "metadata": _meta(cfg, name, None),
             "roleRef": {"apiGroup": group, "kind": "ClusterRole", "name": name}, "subjects": subjects},
        ]
    if cfg.rbac_scope != "namespace":
        return []
    # rbac/role.yaml and rolebinding.yaml: one pair in each namespace a provider reads.
    ing_ns = _namespaces(v, "providers.kubernetesIngress.namespaces", cfg.namespace)
    watch = get_path(v, "providers.kubernetesIngressNGINX.watchNamespace")
    watch_text = ",".join(watch) if isinstance(watch, list) else str(watch or "")
    ngx_ns = (watch_text or cfg.namespace).split(",") if ngx_on else []
    objs: list[Obj] = []
    for ns in sorted(set(ing_ns + [cfg.namespace] + ngx_ns)):
        rules = [{"apiGroups": [""], "resources": ["configmaps", "services"], "verbs": _READ}] + _CORE_RULES
        if (ns in ing_ns and ing_on) or (ns in ngx_ns and ngx_on):
            rules += [{"apiGroups": ["extensions", "networking.k8s.io"], "resources": ["ingresses"], "verbs": _READ}] + _INGRESS_RULES
        objs.append({"apiVersion": group + "/v1", "kind": "Role", "metadata": _meta(cfg, cfg.fullname, ns), "rules": rules})
        objs.append({"apiVersion": group + "/v1", "kind": "RoleBinding", "metadata": _meta(cfg, cfg.fullname, ns),
                     "roleRef": {"apiGroup": group, "kind": "Role", "name": cfg.fullname}, "subjects": subjects})
    return objs


# The chart's default ports: (name, container port, service port or None when not exposed).
_PORTS = (("metrics", 9100, None), ("traefik", 8080, None), ("web", 8000, 80), ("websecure", 8443, 443))


def args(cfg: TraefikConfig) -> list[str]:
    """The container's args in _podtemplate.tpl's order, around the providers' args."""
    v = cfg.values
    out = []
    if get_path(v, "global.checkNewVersion") is False:
        out.append("--global.checkNewVersion=false")
    if truthy(get_path(v, "global.sendAnonymousUsage")):
        out.append("--global.sendAnonymousUsage")
    out += ["--entryPoints.%s.address=:%d/tcp" % (name, port) for name, port, _exposed in _PORTS]
    out.append("--api.dashboard=true")
    insecure = get_path(v, "api.insecure")
    if isinstance(insecure, bool):  # yaml2CommandLineArgs: a boolean, true or false, is written out
        out.append("--api.insecure=%s" % str(insecure).lower())
    out += ["--ping=true", "--metrics.prometheus=true", "--metrics.prometheus.entrypoint=metrics"]
    extra = additional_arguments(v)
    out += cfg.args[:len(cfg.args) - len(extra)]
    out += ["--entryPoints.websecure.http.tls=true", "--log.level=%s" % (get_path(v, "log.level") or "INFO")]
    return out + extra


def _deployment(cfg: TraefikConfig) -> Obj:
    probe = {"failureThreshold": 1, "httpGet": {"path": "/ping", "port": 8080, "scheme": "HTTP"},
             "initialDelaySeconds": 2, "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 2}
    container = {
        "name": cfg.fullname, "image": cfg.image, "imagePullPolicy": "IfNotPresent", "args": args(cfg),
        "env": [{"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                {"name": "USER", "value": "traefik"}],
        "ports": [{"containerPort": port, "name": name, "protocol": "TCP"} for name, port, _exposed in _PORTS],
        "readinessProbe": probe, "livenessProbe": dict(probe, failureThreshold=3),
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True},
        "volumeMounts": [{"mountPath": "/data", "name": "data"}, {"mountPath": "/tmp", "name": "tmp"}],
    }
    template_labels = dict(_labels(cfg))
    return {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(cfg, cfg.fullname, cfg.namespace),
        "spec": {
            "replicas": get_path(cfg.values, "deployment.replicas"),
            "selector": {"matchLabels": _selector(cfg)},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1}},
            "minReadySeconds": 0,
            "template": {
                "metadata": {"labels": template_labels,
                             "annotations": {"prometheus.io/path": "/metrics", "prometheus.io/port": "9100",
                                             "prometheus.io/scrape": "true"}},
                "spec": {
                    "serviceAccountName": cfg.fullname, "automountServiceAccountToken": True,
                    "terminationGracePeriodSeconds": 60, "hostNetwork": False, "containers": [container],
                    "securityContext": {"runAsGroup": 65532, "runAsNonRoot": True, "runAsUser": 65532,
                                        "seccompProfile": {"type": "RuntimeDefault"}},
                    "volumes": [{"name": "data", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    }


def render_manifests(cfg: TraefikConfig) -> list[Obj]:
    """The objects chart 41.6.0 renders for these values, in the order helm applies them."""
    problems = _unsupported(cfg)
    if problems:
        raise ValuesError("method=manifest cannot render these values (use method=helm): " + "; ".join(problems))
    # rbac/serviceaccount.yaml: created whenever serviceAccount.name is empty (it always is here).
    objs: list[Obj] = [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(cfg, cfg.fullname, cfg.namespace),
                        "automountServiceAccountToken": False}]
    objs += _rbac(cfg)
    if cfg.service_type is not None:
        spec = dict(get_path(cfg.values, "service.spec") or {})
        spec.update(type=cfg.service_type, selector=_selector(cfg),
                    ports=[{"port": exposed, "name": name, "targetPort": name, "protocol": "TCP"}
                           for name, _port, exposed in _PORTS if exposed])
        objs.append({"apiVersion": "v1", "kind": "Service", "metadata": _meta(cfg, cfg.fullname, cfg.namespace), "spec": spec})
    objs.append(_deployment(cfg))
    if cfg.ingress_class is not None:
        meta = _meta(cfg, cfg.ingress_class, None)
        meta["annotations"] = {DEFAULT_CLASS_ANNOTATION: "true" if cfg.default_class else "false"}
        objs.append({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": meta,
                     "spec": {"controller": CONTROLLER_VALUE}})
    return objs
