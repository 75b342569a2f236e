# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ingress-nginx: the surprising effects of chart values, said in words (the module's `notes`)."""
from __future__ import annotations

import functools
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.values import (
    BINARY_DEFAULT_INGRESS_CLASS,
    CHART_DEFAULTS,
    CHART_TOP_LEVEL_KEYS,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CLASS_ANNOTATION
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.chart_values import get_path, truthy
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.config import ControllerConfig

Values = dict[str, Any]
Obj = dict[str, Any]


def notes_for(cfg: ControllerConfig, user: Values, chart_flags: dict[str, str]) -> list[str]:
    """What the values do that a reader of them might not expect; CHART_FLAGS are the flags the
    chart renders without extraArgs (to name the ones extraArgs override)."""
    v = functools.partial(get_path, cfg.values)
    u = functools.partial(get_path, user)
    notes: list[str] = []
    override = u("controller.publishService.pathOverride")
    if not truthy(v("controller.publishService.enabled")):
        if truthy(override):
            notes.append(
                "publishService.enabled=false: pathOverride %r is ignored (no --publish-service flag)" % override
            )
    elif not truthy(v("controller.service.enabled")) or not (
        truthy(v("controller.service.external.enabled")) or truthy(v("controller.service.internal.enabled"))
    ):
        notes.append("publishService.enabled=true but the chart renders no Service to publish: no --publish-service flag")
    if cfg.publish.source == "node-addresses":
        text = "status will carry the %s addresses of the nodes running Ready controller pods" % cfg.publish.node_address_type
        if cfg.rbac.can_get_nodes is False:
            text += ", but namespace-scoped RBAC cannot get Nodes: the address list comes out empty"
        notes.append(text)
    elif cfg.publish.source == "service" and truthy(override):
        notes.append(
            "publish service %s (pathOverride) must exist: a missing publish Service stops the controller at "
            "start-up and later leaves the status unchanged (no fallback to node addresses)" % cfg.publish.service
        )
    if "publish-service" in cfg.flags and "publish-status-address" in cfg.flags:
        notes.append("--publish-service and --publish-status-address are mutually exclusive: the controller exits at start-up")
    if v("controller.reportNodeInternalIp") and not v("controller.hostNetwork"):
        notes.append("reportNodeInternalIp=true is ignored without hostNetwork=true (the chart passes no flag)")
    if cfg.watch_namespace is None:
        if cfg.watch_namespace_selector:
            notes.append("scope.enabled=false with namespaceSelector: watches namespaces labelled %s" % cfg.watch_namespace_selector)
        else:
            notes.append("scope.enabled=false: watches every namespace")
        if truthy(v("controller.scope.namespace")):
            notes.append("scope.namespace %r is ignored while scope.enabled=false" % v("controller.scope.namespace"))
    elif truthy(v("controller.scope.namespaceSelector")) and truthy(v("controller.scope.enabled")):
        notes.append("scope.namespaceSelector is ignored while scope.enabled=true")
    if "watch-namespace" in cfg.flags and "watch-namespace-selector" in cfg.flags and cfg.flags["watch-namespace"]:
        notes.append("--watch-namespace and --watch-namespace-selector are mutually exclusive: the controller exits at start-up")
    scope_raw = u("rbac.scope")
    if isinstance(scope_raw, dict):
        notes.append(
            "rbac.scope is a map (%r): the chart only tests its truth, and a non-empty map is true%s"
            % (scope_raw, " even with enabled=false" if scope_raw.get("enabled") is False else "")
        )
    if cfg.rbac.scope == "namespace":
        notes.append(
            "namespace-scoped RBAC (rbac.scope) cannot list IngressClasses: the controller ignores "
            "spec.ingressClassName and claims only Ingresses with the %s: %s annotation%s"
            % (CLASS_ANNOTATION, cfg.class_annotation, " and class-less ones" if cfg.watch_without_class else "")
        )
        if cfg.watch_namespace and cfg.watch_namespace != cfg.namespace:
            notes.append(
                "watch namespace %s is not the release namespace %s and the Role lives in %s only: the controller "
                "cannot get that namespace and exits at start-up" % (cfg.watch_namespace, cfg.namespace, cfg.namespace)
            )
        if cfg.rbac.can_update_ingress_status is False:
            notes.append("extraArgs.update-status=\"false\": the Role grants no ingresses/status")
    elif cfg.rbac.scope == "cluster" and cfg.watch_namespace is not None:
        notes.append("rbac.scope=false with scope.enabled=true: the chart still creates a ClusterRole (it only refuses the opposite)")
    elif cfg.rbac.scope == "none":
        notes.append("rbac.create=false: no Role or ClusterRole; what the controller may do depends on service account %s" % cfg.service_account)
    if not cfg.update_status:
        notes.append("--update-status=false: this controller writes no Ingress status")
    if not truthy(v("controller.ingressClass")):
        notes.append("controller.ingressClass is empty: no --ingress-class flag, the binary still uses %r" % BINARY_DEFAULT_INGRESS_CLASS)
    ic = cfg.ingress_class
    if ic is not None and ic.name != cfg.class_annotation and not truthy(v("controller.ingressClassByName")):
        notes.append(
            "IngressClass %r is not the annotation value %r: Ingresses pick this controller with spec.ingressClassName: %s "
            "or the annotation %s: %s (not %s: %s)"
            % (ic.name, cfg.class_annotation, ic.name, CLASS_ANNOTATION, cfg.class_annotation, CLASS_ANNOTATION, ic.name)
        )
    if ic is not None and ic.name == CHART_DEFAULTS["controller"]["ingressClassResource"]["name"]:
        notes.append(
            "IngressClass %r (the chart's default name) is cluster-wide: a second release with the default name collides; "
            "give each release its own ingressClassResource.name" % ic.name
        )
    if ic is not None and ic.default:
        notes.append("IngressClass %r is the cluster default: new Ingresses without a class get it" % ic.name)
    if cfg.watch_without_class:
        notes.append("watchIngressWithoutClass=true: also claims Ingresses with neither a class name nor the annotation")
    if truthy(v("controller.admissionWebhooks.enabled")):
        notes.append("admissionWebhooks.enabled=true: a cluster-wide failurePolicy=Fail validating webhook per release (labs disable it)")
    if isinstance(cfg.replicas, int) and cfg.replicas > 1:
        notes.append("replicaCount=%d: only the leader (Lease %s) writes Ingress status" % (cfg.replicas, cfg.election_id))
    if truthy(v("defaultBackend.enabled")):
        notes.append("defaultBackend.enabled=true: the chart adds a default backend Deployment (not modelled)")
    for key, value in sorted((v("controller.extraArgs") or {}).items()):
        if key in chart_flags:
            notes.append("extraArgs.%s overrides the chart's --%s=%s (the last flag wins)" % (key, key, chart_flags[key]))
        if value is None:
            notes.append("extraArgs.%s is null: renders --%s= (an empty value); use \"\" for a bare flag" % (key, key))
        elif value is False:
            notes.append("extraArgs.%s=false renders --%s=false" % (key, key))
    for key in sorted(user):
        if key not in CHART_TOP_LEVEL_KEYS:
            notes.append("%s: not a chart 4.15.1 value (not modelled; passed to helm, which ignores it)" % key)
    return notes
