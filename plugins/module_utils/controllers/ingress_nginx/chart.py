# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ingress-nginx: what chart values mean for the controller that runs.

`effective_config` maps chart values to what the chart renders (container args in template
order, RBAC, IngressClass, object names) and to what the controller binary then does with
those args (watch scope, which Ingresses it claims, where its status address comes from).
The helm path and the manifest path (manifests.py) both go through it, so they cannot disagree.

Facts were read from kubernetes/ingress-nginx at tag helm-chart-4.15.1
(charts/ingress-nginx/templates/_params.tpl, _helpers.tpl, controller-*.yaml,
clusterrole.yaml, values.yaml) and controller-v1.15.1 (cmd/nginx/main.go,
pkg/flags/flags.go, internal/ingress/status/status.go, store/store.go), and chart 4.11.0
where CHART_PROFILES says so.
"""
from __future__ import annotations

import copy
import functools
import re
from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._images import split_image
from ansible_collections.kindlab.ingress.plugins.module_utils._versions import INGRESS_NGINX_OFFLINE_CHART_VERSION
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.values import (
    BINARY_DEFAULT_CONTROLLER_CLASS,
    BINARY_DEFAULT_INGRESS_CLASS,
    CHART_DEFAULTS,
    CHART_VERSION,
    IMAGE_KEY,
    POD_NAMESPACE_REF,
    ValuesError,
    _SERVICE_TYPES,
    _flag_true,
    chart_names,
    check_types,
    go_default,
    go_string,
    image_ref,
    parse_flags,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.chart_values import get_path, merge_values, set_path, trunc63, truthy
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.binary import MIN_STATUS_UPDATE_INTERVAL, STATUS_SYNC_SECONDS
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.config import ControllerConfig, IngressClassInfo, PublishInfo, RbacInfo
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.notes import notes_for

Values = dict[str, Any]
Obj = dict[str, Any]


# ---------------------------------------------------------------- chart versions


@dataclass(frozen=True)
class ChartProfile:
    """Where another chart version renders the modelled values differently from 4.15.1."""

    version: str
    defaults: Values  # merged over CHART_DEFAULTS
    # 4.15.1 renders --enable-annotation-validation=false when validation is off and
    # --enable-metrics=true when metrics are on; 4.11.0 the other way round (=true when
    # validation is on, =false when metrics are off), matching its binary's defaults.
    annotation_validation_opt_in: bool = False
    metrics_opt_out: bool = False


CHART_PROFILES: dict[str, ChartProfile] = {
    CHART_VERSION: ChartProfile(CHART_VERSION, {}),
    # The chart the project's own machines install (from the served k8s.io/ingress-nginx module;
    # _versions.py): values.yaml has enableAnnotationValidations false and the v1.11.0 image.
    INGRESS_NGINX_OFFLINE_CHART_VERSION: ChartProfile(
        INGRESS_NGINX_OFFLINE_CHART_VERSION,
        {"controller": {"enableAnnotationValidations": False,
                        "image": {"tag": "v1.11.0",
                                  "digest": "sha256:a886e56d532d1388c77c8340261149d974370edca1093af4c97a96fb1467cb39"}}},
        annotation_validation_opt_in=True, metrics_opt_out=True),
}


def chart_profile(version: str | None) -> ChartProfile:
    """The modelled chart VERSION (None: the pin); the pin's for a version not modelled
    (effective_config says so in its notes)."""
    return CHART_PROFILES.get(version or CHART_VERSION, CHART_PROFILES[CHART_VERSION])


# ---------------------------------------------------------------- args


def _extra_arg(key: str, value: Any) -> str:
    # _params.tpl: `if eq ($value | quote | len) 2` → bare flag. Only "" quotes to two
    # characters ("\"\""); false quotes to "\"false\"" and nil quotes to nothing, so those
    # render as --key=false and --key= respectively.
    if isinstance(value, str) and value == "":
        return "--%s" % key
    return "--%s=%s" % (key, go_string(value))


def render_args(values: Values, names: dict[str, str], profile: ChartProfile | None = None) -> list[str]:
    """The controller container args in the order _params.tpl renders them."""
    profile = profile or CHART_PROFILES[CHART_VERSION]
    c = values.get("controller") or {}
    v = functools.partial(get_path, values)
    args = ["/nginx-ingress-controller"]
    validation = truthy(v("controller.enableAnnotationValidations"))
    if profile.annotation_validation_opt_in and validation:
        args.append("--enable-annotation-validation=true")
    elif not profile.annotation_validation_opt_in and not validation:
        args.append("--enable-annotation-validation=false")
    if truthy(v("defaultBackend.enabled")):
        backend = trunc63("%s-%s" % (names["fullname"], go_string(v("defaultBackend.name"))))
        args.append("--default-backend-service=%s/%s" % (POD_NAMESPACE_REF, backend))
    if truthy(v("controller.publishService.enabled")) and truthy(v("controller.service.enabled")):
        path = go_default("%s/%s" % (POD_NAMESPACE_REF, names["controller"]), v("controller.publishService.pathOverride"))
        path = path[:-1] if path.endswith("-") else path
        if truthy(v("controller.service.external.enabled")):
            args.append("--publish-service=%s" % path)
        elif truthy(v("controller.service.internal.enabled")):
            args.append("--publish-service=%s-internal" % path)
    args.append("--election-id=%s" % names["election_id"])
    args.append("--controller-class=%s" % go_string(v("controller.ingressClassResource.controllerValue")))
    if truthy(c.get("ingressClass")):
        args.append("--ingress-class=%s" % go_string(c["ingressClass"]))
    args.append("--configmap=%s/%s" % (go_default(POD_NAMESPACE_REF, c.get("configMapNamespace")), names["controller"]))
    if truthy(values.get("tcp")):
        args.append("--tcp-services-configmap=%s/%s-tcp" % (go_default(POD_NAMESPACE_REF, v("controller.tcp.configMapNamespace")), names["fullname"]))
    if truthy(values.get("udp")):
        args.append("--udp-services-configmap=%s/%s-udp" % (go_default(POD_NAMESPACE_REF, v("controller.udp.configMapNamespace")), names["fullname"]))
    if truthy(v("controller.scope.enabled")):
        args.append("--watch-namespace=%s" % go_default(POD_NAMESPACE_REF, v("controller.scope.namespace")))
    if not truthy(v("controller.scope.enabled")) and truthy(v("controller.scope.namespaceSelector")):
        args.append("--watch-namespace-selector=%s" % v("controller.scope.namespaceSelector"))
    if truthy(c.get("reportNodeInternalIp")) and truthy(c.get("hostNetwork")):
        args.append("--report-node-internal-ip-address=%s" % go_string(c["reportNodeInternalIp"]))
    if truthy(v("controller.admissionWebhooks.enabled")):
        args.append("--validating-webhook=:%s" % go_string(v("controller.admissionWebhooks.port")))
        args.append("--validating-webhook-certificate=%s" % go_string(v("controller.admissionWebhooks.certificate")))
        args.append("--validating-webhook-key=%s" % go_string(v("controller.admissionWebhooks.key")))
    if truthy(c.get("maxmindLicenseKey")):
        args.append("--maxmind-license-key=%s" % c["maxmindLicenseKey"])
    if truthy(c.get("healthCheckHost")):
        args.append("--healthz-host=%s" % c["healthCheckHost"])
    if c.get("healthCheckPath") != "/healthz":
        args.append("--health-check-path=%s" % go_string(c.get("healthCheckPath")))
    if truthy(c.get("ingressClassByName")):
        args.append("--ingress-class-by-name=true")
    if truthy(c.get("watchIngressWithoutClass")):
        args.append("--watch-ingress-without-class=true")
    if truthy(v("controller.metrics.enabled")) != profile.metrics_opt_out:
        args.append("--enable-metrics=%s" % go_string(v("controller.metrics.enabled")))
    if truthy(c.get("enableTopologyAwareRouting")):
        args.append("--enable-topology-aware-routing=true")
    if truthy(c.get("disableLeaderElection")):
        args.append("--disable-leader-election=true")
    if truthy(c.get("electionTTL")):
        args.append("--election-ttl=%s" % go_string(c["electionTTL"]))
    for key in sorted(c.get("extraArgs") or {}):  # Go templates range over maps in key order
        args.append(_extra_arg(key, c["extraArgs"][key]))
    return args


# ---------------------------------------------------------------- RBAC


def _check_rbac(values: Values) -> None:
    # clusterrole.yaml fails the render in one direction only.
    if truthy(get_path(values, "rbac.create")) and truthy(get_path(values, "rbac.scope")) and not truthy(
        get_path(values, "controller.scope.enabled")
    ):
        raise ValuesError(
            "rbac.scope: the chart refuses to render (\"Invalid configuration: 'rbac.scope' should be equal to "
            "'controller.scope.enabled' (true/false).\"): rbac.scope is %r (true) but controller.scope.enabled is "
            "%r; set controller.scope.enabled=true or rbac.scope=false"
            % (get_path(values, "rbac.scope"), get_path(values, "controller.scope.enabled"))
        )


def _update_status_omitted(values: Values) -> bool:
    """controller-role.yaml omits ingresses/status when extraArgs["update-status"] is the
    string "false"."""
    raw = (get_path(values, "controller.extraArgs") or {}).get("update-status")
    if isinstance(raw, bool):
        # `ne <bool> "false"` is a Go template type error: helm fails the render.
        raise ValuesError(
            "controller.extraArgs.update-status: the chart compares it with the string \"false\" and fails on "
            "a boolean (%r); quote it: \"false\" or \"true\"" % raw
        )
    return raw == "false"


def rbac_info(values: Values) -> RbacInfo:
    if not truthy(get_path(values, "rbac.create")):
        return RbacInfo("none", (), None, None, None)
    status_in_role = not _update_status_omitted(values)
    if truthy(get_path(values, "rbac.scope")):
        # A Role cannot grant cluster-scoped resources: IngressClasses and Nodes are out of reach.
        return RbacInfo("namespace", ("Role", "RoleBinding"), False, False, status_in_role)
    return RbacInfo("cluster", ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"), True, True, True)


# ---------------------------------------------------------------- the whole picture


def _resolve_ns(value: str, namespace: str) -> str:
    return value.replace(POD_NAMESPACE_REF, namespace)


def _publish(flags: dict[str, str], namespace: str) -> PublishInfo:
    if flags.get("publish-status-address"):
        addrs = tuple(a for a in re.split(r",\s*", flags["publish-status-address"]) if a)
        return PublishInfo("status-address", addresses=addrs)
    if flags.get("publish-service"):
        return PublishInfo("service", service=_resolve_ns(flags["publish-service"], namespace))
    internal = _flag_true(flags, "report-node-internal-ip-address", False)
    return PublishInfo(
        "node-addresses", node_address_type="InternalIP" if internal else "ExternalIP (InternalIP if the node has none)"
    )


def effective_config(values: Values | None, release: str, namespace: str,
                     chart_version: str | None = None) -> ControllerConfig:
    """Chart values → what the chart (CHART_VERSION unless another modelled one is named)
    renders and what the controller then does."""
    profile = chart_profile(chart_version)
    user = copy.deepcopy(values or {})
    if not release or not isinstance(release, str):
        raise ValuesError("release: expected a non-empty string, got %r" % (release,))
    if not namespace or not isinstance(namespace, str):
        raise ValuesError("namespace: expected a non-empty string, got %r" % (namespace,))
    unmodelled = check_types(user)
    merged = merge_values(merge_values(CHART_DEFAULTS, profile.defaults), user)
    svc_type = get_path(merged, "controller.service.type")
    if truthy(svc_type) and svc_type not in _SERVICE_TYPES:
        raise ValuesError("controller.service.type: expected one of %s, got %r" % (", ".join(_SERVICE_TYPES), svc_type))
    _check_rbac(merged)
    names = chart_names(merged, release)
    rel_ns = trunc63(go_default(namespace, merged.get("namespaceOverride")))
    args = render_args(merged, names, profile)
    flags = parse_flags(args)
    rbac = rbac_info(merged)

    watch = flags.get("watch-namespace") or None
    ic_values = get_path(merged, "controller.ingressClassResource") or {}
    ingress_class = (
        IngressClassInfo(go_string(ic_values.get("name")), go_string(ic_values.get("controllerValue")), truthy(ic_values.get("default")))
        if truthy(ic_values.get("enabled"))
        else None
    )
    service_on = truthy(get_path(merged, "controller.service.enabled")) and truthy(get_path(merged, "controller.service.external.enabled"))
    replicas = get_path(merged, "controller.replicaCount")
    cfg = ControllerConfig(
        release=release,
        namespace=rel_ns,
        values=merged,
        user_values=user,
        name=names["name"],
        fullname=names["fullname"],
        controller_fullname=names["controller"],
        service_account=names["service_account"],
        election_id=names["election_id"],
        image=image_ref(merged),
        args=args,
        flags=flags,
        rbac=rbac,
        watch_namespace=_resolve_ns(watch, rel_ns) if watch else None,
        watch_namespace_selector=(flags.get("watch-namespace-selector") or None) if not watch else None,
        ingress_class=ingress_class,
        class_annotation=flags.get("ingress-class", BINARY_DEFAULT_INGRESS_CLASS),
        controller_class=flags.get("controller-class", BINARY_DEFAULT_CONTROLLER_CLASS),
        watch_without_class=_flag_true(flags, "watch-ingress-without-class", False),
        update_status=_flag_true(flags, "update-status", True),
        publish=_publish(flags, rel_ns),
        service_name=names["controller"] if service_on else None,
        service_type=go_string(svc_type) if service_on else None,
        replicas=replicas if isinstance(replicas, int) else None,
        not_modelled=unmodelled,
    )
    chart_flags = parse_flags(render_args(merge_values(merged, {"controller": {"extraArgs": None}}), names, profile))
    cfg.notes = notes_for(cfg, user, chart_flags)
    if (chart_version or CHART_VERSION) not in CHART_PROFILES:
        cfg.notes.append("chart %s is not modelled (the collection models %s): args and notes are chart %s's"
                         % (chart_version, " and ".join(sorted(CHART_PROFILES, reverse=True)), CHART_VERSION))
    return cfg


# ---------------------------------------------------------------- convenience options


def controller_value_for(class_name: str) -> str:
    """The controller value the module pairs with an IngressClass name: the binary's default
    for the chart's default class, a per-class value otherwise (so two classes never share
    a controller by accident)."""
    return BINARY_DEFAULT_CONTROLLER_CLASS if class_name == "nginx" else "%s-%s" % (BINARY_DEFAULT_CONTROLLER_CLASS, class_name)


def apply_options(values: Values | None, scope: bool | None = None, publish_service: bool | None = None, ingress_class: str | None = None) -> Values:
    """Fold the module's convenience options into the chart values. A convenience option
    and an explicit value for the same key must agree; a disagreement is an error naming
    both (neither silently wins)."""
    out = copy.deepcopy(values or {})
    wanted: list[tuple[str, Any, str]] = []
    if scope is not None:
        wanted += [("controller.scope.enabled", scope, "scope"), ("rbac.scope", scope, "scope")]
    if publish_service is not None:
        wanted.append(("controller.publishService.enabled", publish_service, "publish_service"))
    if ingress_class is not None:
        if not ingress_class:
            raise ValuesError("ingress_class: expected a non-empty IngressClass name")
        wanted += [
            ("controller.ingressClassResource.name", ingress_class, "ingress_class"),
            ("controller.ingressClassResource.controllerValue", controller_value_for(ingress_class), "ingress_class"),
            ("controller.ingressClass", ingress_class, "ingress_class"),
        ]
    for path, value, option in wanted:
        current = get_path(out, path)
        if current is not None:
            same = truthy(current) == truthy(value) if path == "rbac.scope" else current == value
            if not same:
                raise ValuesError(
                    "%s=%r conflicts with values.%s=%r; drop one of them" % (option, value, path, current)
                )
            continue
        set_path(out, path, value, ValuesError)
    return out


# Values keys that choose the controller image (controller-deployment.yaml's image template).
IMAGE_KEYS = ("global.image.registry", "controller.image.registry", "controller.image.image",
              "controller.image.repository", "controller.image.tag", "controller.image.digest")


def image_values(ref: str) -> Values:
    """Chart values that make the chart render exactly `ref`: with controller.image.repository
    set, the chart renders <repository>:<tag>, then @<digest> when the digest is not empty (an
    empty digest clears the chart's pinned one)."""
    repository, tag, digest = split_image(ref)
    return {"controller": {"image": {"repository": repository, "tag": tag, "digest": digest}}}


def with_image(values: Values | None, image: str, default_image: str) -> Values:
    """Fold the lab's controller image (lab_images.<IMAGE_KEY>) into the values as
    controller.image.repository/tag/digest. The pinned default is what the chart renders anyway,
    so it adds nothing; another image in values that choose one themselves is an error naming both."""
    out = copy.deepcopy(values or {})
    if image == default_image:
        return out
    chosen = [key for key in IMAGE_KEYS if get_path(out, key) is not None]
    if chosen:
        raise ValuesError("%s: chooses the controller image while lab_images.%s is %r; "
                          "set the image in one place" % (chosen[0], IMAGE_KEY, image))
    return merge_values(out, image_values(image))


# A lab's time scale shortens the controller's own status period (binary.STATUS_SYNC_SECONDS)
# with --status-update-interval, so the real controller keeps its own clock.


def status_update_interval(time_scale: float) -> int:
    """The --status-update-interval for TIME_SCALE (60 / scale); a ValuesError unless that is a
    whole number of seconds, at least 5 (the verification windows divide by the same scale)."""
    if isinstance(time_scale, bool) or not isinstance(time_scale, (int, float)) or time_scale <= 0:
        raise ValuesError("time_scale: expected a number greater than 0, got %r" % (time_scale,))
    seconds = STATUS_SYNC_SECONDS / time_scale
    if seconds < MIN_STATUS_UPDATE_INTERVAL or abs(seconds - round(seconds)) > 1e-9:
        fits = [s for s in range(1, 13) if STATUS_SYNC_SECONDS % s == 0]
        raise ValuesError("time_scale: ingress-nginx's status period 60 s / %s = %.3g s, but "
                          "--status-update-interval takes whole seconds, at least %d; use one of %s"
                          % (time_scale, seconds, MIN_STATUS_UPDATE_INTERVAL, ", ".join(map(str, fits))))
    return int(round(seconds))


def with_time_scale(values: Values | None, time_scale: float) -> Values:
    """Fold the lab's time scale into the values as controller.extraArgs.status-update-interval;
    a value the user set there wins."""
    interval = status_update_interval(time_scale)
    out = copy.deepcopy(values or {})
    controller = out.setdefault("controller", {})
    if not isinstance(controller, dict):
        raise ValuesError("values.controller: expected a mapping, got %r" % (controller,))
    extra = controller.setdefault("extraArgs", {})
    if not isinstance(extra, dict):
        raise ValuesError("values.controller.extraArgs: expected a mapping, got %r" % (extra,))
    if interval != STATUS_SYNC_SECONDS:
        extra.setdefault("status-update-interval", interval)
    if not extra:
        del controller["extraArgs"]
    if not controller:
        del out["controller"]
    return out
