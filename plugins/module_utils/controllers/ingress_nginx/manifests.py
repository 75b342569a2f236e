# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ingress-nginx: the objects the chart would create, rendered from the same effective
configuration as the helm path (for clusters that cannot reach the chart: the twin)."""
from __future__ import annotations

import copy
import functools
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.values import (
    APP_VERSION,
    CHART_NAME,
    CHART_VERSION,
    ValuesError,
    go_string,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import DEFAULT_CLASS_ANNOTATION
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.chart_values import get_path, trunc63, truthy
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.chart import _update_status_omitted
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.config import ControllerConfig

Values = dict[str, Any]
Obj = dict[str, Any]


# ---------------------------------------------------------------- manifests


# Every kind render_manifests can produce: what a re-apply looks through for objects the
# release no longer renders (scope changes swap a ClusterRole for a Role, and so on).
RENDERED_KINDS: tuple[tuple[str, str], ...] = (
    ("v1", "ServiceAccount"), ("v1", "ConfigMap"), ("v1", "Service"), ("apps/v1", "Deployment"),
    ("rbac.authorization.k8s.io/v1", "Role"), ("rbac.authorization.k8s.io/v1", "RoleBinding"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"), ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("networking.k8s.io/v1", "IngressClass"),
)
MANAGED_BY = "kindlab.ingress"


def release_selector(release: str) -> str:
    """The label selector of every object the collection rendered for a release."""
    return "app.kubernetes.io/instance=%s,app.kubernetes.io/managed-by=%s" % (release, MANAGED_BY)


def _labels(cfg: ControllerConfig, component: bool = True) -> dict[str, str]:
    labels = {
        "helm.sh/chart": trunc63("%s-%s" % (CHART_NAME, CHART_VERSION)),
        "app.kubernetes.io/name": cfg.name,
        "app.kubernetes.io/instance": cfg.release,
        "app.kubernetes.io/version": APP_VERSION,
        "app.kubernetes.io/part-of": cfg.name,
        # Not "Helm": these objects are applied by the collection, not by a helm release.
        "app.kubernetes.io/managed-by": MANAGED_BY,
    }
    labels.update(cfg.values.get("commonLabels") or {})
    if component:
        labels["app.kubernetes.io/component"] = "controller"
    labels.update(get_path(cfg.values, "controller.labels") or {})
    return labels


def _selector(cfg: ControllerConfig) -> dict[str, str]:
    return {
        "app.kubernetes.io/name": cfg.name,
        "app.kubernetes.io/instance": cfg.release,
        "app.kubernetes.io/component": "controller",
    }


def _meta(cfg: ControllerConfig, name: str, namespaced: bool = True, component: bool = True) -> Obj:
    meta: Obj = {"name": name, "labels": _labels(cfg, component)}
    if namespaced:
        meta["namespace"] = cfg.namespace
    return meta


# Cluster-wide grants of clusterrole.yaml (namespaces list/watch only when unscoped).
def _cluster_rules(values: Values) -> list[Obj]:
    scoped = truthy(get_path(values, "controller.scope.enabled"))
    core = ["configmaps", "endpoints", "nodes", "pods", "secrets"] + ([] if scoped else ["namespaces"])
    rules: list[Obj] = [
        {"apiGroups": [""], "resources": core, "verbs": ["list", "watch"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["list", "watch"]},
    ]
    if scoped and truthy(get_path(values, "controller.scope.namespace")):
        rules.append({"apiGroups": [""], "resources": ["namespaces"], "resourceNames": [get_path(values, "controller.scope.namespace")], "verbs": ["get"]})
    rules += [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["services"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses/status"], "verbs": ["update"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingressclasses"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch", "get"]},
    ]
    return rules


# controller-role.yaml: always created with rbac.create (leader Lease, own namespace).
def _role_rules(cfg: ControllerConfig) -> list[Obj]:
    rules: list[Obj] = [
        {"apiGroups": [""], "resources": ["namespaces"], "verbs": ["get"]},
        {"apiGroups": [""], "resources": ["configmaps", "pods", "secrets", "endpoints"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["services"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses"], "verbs": ["get", "list", "watch"]},
    ]
    if not _update_status_omitted(cfg.values):
        rules.append({"apiGroups": ["networking.k8s.io"], "resources": ["ingresses/status"], "verbs": ["update"]})
    rules += [
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingressclasses"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [cfg.election_id], "verbs": ["get", "update"]},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch", "get"]},
    ]
    return rules


def _security_context(values: Values) -> Obj:
    custom = get_path(values, "controller.containerSecurityContext")
    if truthy(custom):
        return copy.deepcopy(custom)
    img = get_path(values, "controller.image") or {}
    chroot = truthy(img.get("chroot"))
    ctx: Obj = {
        "runAsNonRoot": img.get("runAsNonRoot"),
        "runAsUser": img.get("runAsUser"),
        "runAsGroup": img.get("runAsGroup"),
        "allowPrivilegeEscalation": truthy(img.get("allowPrivilegeEscalation")) or chroot,
    }
    if truthy(img.get("seccompProfile")):
        ctx["seccompProfile"] = copy.deepcopy(img["seccompProfile"])
    add = ["NET_BIND_SERVICE"] + ((["SYS_ADMIN"] if truthy(img.get("seccompProfile")) else []) + ["SYS_CHROOT"] if chroot else [])
    ctx["capabilities"] = {"drop": ["ALL"], "add": add}
    ctx["readOnlyRootFilesystem"] = img.get("readOnlyRootFilesystem")
    return {k: val for k, val in ctx.items() if val is not None}


def _unsupported_for_manifest(values: Values) -> list[str]:
    """Chart features the manifest renderer does not reproduce; refusing beats a silent
    difference from what helm would deploy."""
    problems = []
    checks = [
        ("controller.admissionWebhooks.enabled", "needs the chart's certificate jobs and webhook configuration; set it to false (labs disable it)"),
        ("defaultBackend.enabled", "the default backend Deployment is not rendered"),
        ("controller.service.internal.enabled", "the internal Service is not rendered"),
        ("controller.autoscaling.enabled", "the HorizontalPodAutoscaler is not rendered"),
        ("controller.keda.enabled", "the KEDA ScaledObject is not rendered"),
        ("tcp", "the TCP services ConfigMap is not rendered"),
        ("udp", "the UDP services ConfigMap is not rendered"),
    ]
    for path, why in checks:
        if truthy(get_path(values, path)):
            problems.append("%s: %s" % (path, why))
    kind = get_path(values, "controller.kind")
    if kind != "Deployment":
        problems.append("controller.kind: only Deployment is rendered, got %r" % (kind,))
    return problems


def _deployment(cfg: ControllerConfig) -> Obj:
    v = functools.partial(get_path, cfg.values)
    env: list[Obj] = [
        {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
        {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
    ]
    if truthy(v("controller.enableMimalloc")):
        env.append({"name": "LD_PRELOAD", "value": "/usr/local/lib/libmimalloc.so"})
    env += copy.deepcopy(v("controller.extraEnvs") or [])
    ports = [
        {"name": key, "containerPort": port, "protocol": "TCP"}
        for key, port in sorted((v("controller.containerPort") or {}).items())
    ]
    if truthy(v("controller.metrics.enabled")):
        ports.append({"name": go_string(v("controller.metrics.portName")), "containerPort": v("controller.metrics.port"), "protocol": "TCP"})
    container: Obj = {
        "name": go_string(v("controller.containerName")),
        "image": cfg.image,
        "imagePullPolicy": go_string(v("controller.image.pullPolicy")),
        "args": list(cfg.args),
        "securityContext": _security_context(cfg.values),
        "env": env,
        "ports": ports,
    }
    for key in ("lifecycle", "livenessProbe", "readinessProbe", "resources"):
        if truthy(v("controller." + key)):
            container[key] = copy.deepcopy(v("controller." + key))
    pod_labels = _labels(cfg)
    pod_labels.update(v("controller.podLabels") or {})
    template_meta: Obj = {"labels": pod_labels}
    if truthy(v("controller.podAnnotations")):
        template_meta["annotations"] = {k: go_string(x) for k, x in v("controller.podAnnotations").items()}
    pod_spec: Obj = {
        "dnsPolicy": go_string(v("controller.dnsPolicy")),
        "containers": [container],
        "serviceAccountName": cfg.service_account,
        "automountServiceAccountToken": truthy(v("serviceAccount.automountServiceAccountToken")),
        "terminationGracePeriodSeconds": v("controller.terminationGracePeriodSeconds"),
    }
    if truthy(v("controller.hostNetwork")):
        pod_spec["hostNetwork"] = True
    if truthy(v("controller.nodeSelector")):
        pod_spec["nodeSelector"] = dict(v("controller.nodeSelector"))
    spec: Obj = {"selector": {"matchLabels": _selector(cfg)}}
    if cfg.replicas is not None:
        spec["replicas"] = cfg.replicas
    spec["revisionHistoryLimit"] = cfg.values.get("revisionHistoryLimit")
    if truthy(v("controller.updateStrategy")):
        spec["strategy"] = copy.deepcopy(v("controller.updateStrategy"))
    spec["minReadySeconds"] = v("controller.minReadySeconds") or 0
    spec["template"] = {"metadata": template_meta, "spec": pod_spec}
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(cfg, cfg.controller_fullname), "spec": _drop_none(spec)}


def _service(cfg: ControllerConfig) -> Obj:
    s = functools.partial(get_path, get_path(cfg.values, "controller.service") or {})
    meta = _meta(cfg, cfg.controller_fullname)
    meta["labels"].update(s("labels") or {})
    if truthy(s("annotations")):
        meta["annotations"] = {k: go_string(x) for k, x in s("annotations").items()}
    spec: Obj = {"type": cfg.service_type}
    for key in ("loadBalancerIP", "loadBalancerClass", "externalTrafficPolicy", "ipFamilyPolicy"):
        if truthy(s(key)):
            spec[key] = s(key)
    if truthy(s("ipFamilies")):
        spec["ipFamilies"] = list(s("ipFamilies"))
    ports = []
    for name in ("http", "https"):
        if truthy(s("enable" + name.capitalize())):
            port: Obj = {"name": name, "port": s("ports." + name), "protocol": "TCP", "targetPort": s("targetPorts." + name)}
            if truthy(s("appProtocol")):
                port["appProtocol"] = name
            ports.append(port)
    spec["ports"] = ports
    spec["selector"] = _selector(cfg)
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}


def _drop_none(obj: Obj) -> Obj:
    return {k: val for k, val in obj.items() if val is not None}


def render_manifests(config: ControllerConfig) -> list[Obj]:
    """The objects chart 4.15.1 renders for these values (controller part only)."""
    problems = _unsupported_for_manifest(config.values)
    if problems:
        raise ValuesError("the manifest method cannot render these values: " + "; ".join(problems))
    cfg = config
    v = functools.partial(get_path, cfg.values)
    objs: list[Obj] = []
    if truthy(v("serviceAccount.create")):
        meta = _meta(cfg, cfg.service_account)
        if truthy(v("serviceAccount.annotations")):
            meta["annotations"] = dict(v("serviceAccount.annotations"))
        automount = truthy(v("serviceAccount.automountServiceAccountToken"))
        objs.append({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta, "automountServiceAccountToken": automount})
    subjects = [{"kind": "ServiceAccount", "name": cfg.service_account, "namespace": cfg.namespace}]
    if cfg.rbac.scope == "cluster":
        objs.append({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": _meta(cfg, cfg.fullname, namespaced=False, component=False),
            "rules": _cluster_rules(cfg.values),
        })
        objs.append({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": _meta(cfg, cfg.fullname, namespaced=False, component=False),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cfg.fullname},
            "subjects": subjects,
        })
    if cfg.rbac.scope != "none":
        objs.append({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": _meta(cfg, cfg.fullname), "rules": _role_rules(cfg)})
        objs.append({
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": _meta(cfg, cfg.fullname),
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": cfg.fullname},
            "subjects": subjects,
        })
    data: dict[str, str] = {}
    if truthy(v("controller.allowSnippetAnnotations")):
        data["allow-snippet-annotations"] = "true"
    for key, val in sorted((v("controller.config") or {}).items()):
        data[key] = go_string(val)
    configmap: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(cfg, cfg.controller_fullname)}
    if data:
        configmap["data"] = data
    objs.append(configmap)
    if cfg.ingress_class is not None:
        meta = _meta(cfg, cfg.ingress_class.name, namespaced=False)
        annotations: dict[str, str] = {}
        if cfg.ingress_class.default:
            annotations[DEFAULT_CLASS_ANNOTATION] = "true"
        annotations.update(v("controller.ingressClassResource.annotations") or {})
        if annotations:
            meta["annotations"] = annotations
        spec = {"controller": cfg.ingress_class.controller_value}
        objs.append({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass", "metadata": meta, "spec": spec})
    if cfg.service_name is not None:
        objs.append(_service(cfg))
    objs.append(_deployment(cfg))
    return objs


def object_names(objs: list[Obj]) -> list[str]:
    """Kind namespace/name for each object, for the module's `objects` return value."""
    out = []
    for obj in objs:
        meta = obj.get("metadata", {})
        ns = meta.get("namespace")
        out.append("%s %s%s" % (obj["kind"], ns + "/" if ns else "", meta["name"]))
    return out
