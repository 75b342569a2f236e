# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traefik: what the official chart's values mean for the proxy that runs.

`effective_config` renders the args of the two providers that read Ingresses and write their
status (kubernetesIngress and kubernetesIngressNGINX), the object names, the IngressClass and
the RBAC scope, as chart 41.6.0 renders them (templates/_podtemplate.tpl: the providers block,
_helpers.tpl: fullname, namespace, publish paths; ingressclass.yaml; rbac/). The other args
(entry points, metrics, ping, logs) are the chart's own and decide nothing the lab checks;
manifests.py renders them for method=manifest.
"""
from __future__ import annotations

import copy
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._images import split_image
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.config import TraefikConfig
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.notes import notes_for
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import (
    APP_VERSION,
    CHART_DEFAULTS,
    CHART_NAME,
    CHART_VERSION,
    GATEWAY,
    IMAGE_KEY,
    INGRESS,
    NGINX,
    ValuesError,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.chart_values import get_path, merge_values, set_path, trunc63, truthy

Values = dict[str, Any]
Obj = dict[str, Any]


def chart_names(values: Values, release: str, namespace: str) -> dict[str, str]:
    """_helpers.tpl traefik.fullname / traefik.namespace / ingressclass.yaml's name."""
    if truthy(values.get("fullnameOverride")):
        fullname = trunc63(str(values["fullnameOverride"]))
    else:
        name = str(values.get("nameOverride") or CHART_NAME)
        fullname = trunc63(release if name in release else "%s-%s" % (release, name))
    ns = trunc63(str(values["namespaceOverride"])) if truthy(values.get("namespaceOverride")) else namespace
    return {"fullname": fullname, "namespace": ns,
            "ingress_class": str(get_path(values, "ingressClass.name") or fullname)}


def _go_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(_go_text(v) for v in value)
    if isinstance(value, float) and value.is_integer():
        return "%d" % value
    return str(value)


def _flattened(path: str, content: Values) -> list[str]:
    """_helpers.tpl traefik.yaml2CommandLineArgs: maps recurse in key order, booleans and
    integers always render, anything else only when not empty."""
    out: list[str] = []
    for key in sorted(content):
        value = content[key]
        if isinstance(value, dict):
            out += _flattened("%s.%s" % (path, key), value)
        elif isinstance(value, (bool, int)) or truthy(value):
            out.append("--%s.%s=%s" % (path, key, _go_text(value)))
    return out


def provider_args(values: Values, names: dict[str, str]) -> list[str]:
    """The args of the Ingress providers and the Gateway provider, in template order
    (_podtemplate.tpl's providers block)."""
    v = values
    ing = get_path(v, "providers.kubernetesIngress") or {}
    ngx = get_path(v, "providers.kubernetesIngressNGINX") or {}
    namespaced = truthy(get_path(v, "rbac.namespaced"))
    rbac_namespaced = truthy(get_path(v, "rbac.enabled")) and namespaced
    default_service = "%s/%s" % (names["namespace"], names["fullname"])
    args: list[str] = []
    if truthy(ing.get("enabled")):
        args.append("--" + INGRESS)
        if truthy(ing.get("allowExternalNameServices")):
            args.append("--%s.allowExternalNameServices=true" % INGRESS)
        if ing.get("crossProviderNamespaces"):
            args.append("--%s.crossProviderNamespaces=%s" % (INGRESS, ",".join(ing["crossProviderNamespaces"])))
        if ing.get("allowEmptyServices") is not None and _go_text(ing["allowEmptyServices"]):
            args.append("--%s.allowEmptyServices=%s" % (INGRESS, _go_text(ing["allowEmptyServices"])))
        published = ing.get("publishedService") or {}
        if truthy(published.get("enabled")) and (truthy(get_path(v, "service.enabled")) or truthy(published.get("pathOverride"))):
            args.append("--%s.ingressendpoint.publishedservice=%s"
                        % (INGRESS, str(published.get("pathOverride") or default_service).rstrip("-")))
        endpoint = ing.get("ingressEndpoint") or {}
        if truthy(endpoint.get("hostname")):
            args.append("--%s.ingressendpoint.hostname=%s" % (INGRESS, endpoint["hostname"]))
        if truthy(endpoint.get("ip")):
            args.append("--%s.ingressendpoint.ip=%s" % (INGRESS, endpoint["ip"]))
        if truthy(ing.get("labelSelector")):
            args.append("--%s.labelSelector=%s" % (INGRESS, ing["labelSelector"]))
        if truthy(ing.get("ingressClass")):
            args.append("--%s.ingressClass=%s" % (INGRESS, ing["ingressClass"]))
        if namespaced:
            args.append("--%s.disableClusterScopeResources=true" % INGRESS)
        if truthy(ing.get("nativeLBByDefault")):
            args.append("--%s.nativeLBByDefault=true" % INGRESS)
        if truthy(ing.get("strictPrefixMatching")):
            args.append("--%s.strictPrefixMatching=true" % INGRESS)
    # (the kubernetesCRD block comes here in the template)
    args += gateway_args(v, names)
    if truthy(ing.get("enabled")):
        if ing.get("namespaces") or rbac_namespaced:
            args.append("--%s.namespaces=%s" % (INGRESS, ",".join(ing.get("namespaces") or []) or names["namespace"]))
    if truthy(ngx.get("enabled")):
        args.append("--" + NGINX)
        if truthy(ngx.get("watchNamespace")) or rbac_namespaced:
            watch = ngx.get("watchNamespace")
            watch_text = ",".join(watch) if isinstance(watch, list) else str(watch or "")
            args.append("--%s.watchnamespace=%s" % (NGINX, watch_text or names["namespace"]))
        publish = ngx.get("publishService") or {}
        if truthy(publish.get("enabled")) and (truthy(get_path(v, "service.enabled")) or truthy(publish.get("pathOverride"))):
            args.append("--%s.publishservice=%s" % (NGINX, str(publish.get("pathOverride") or default_service).rstrip("-")))
        if truthy(get_path(ngx, "modsec.enabled")):
            args.append("--%s.modsec=true" % NGINX)
        rest = {k: val for k, val in ngx.items() if k not in ("enabled", "publishService", "watchNamespace", "modsec")}
        args += _flattened(NGINX, rest)
    return args


def additional_arguments(values: Values) -> list[str]:
    """additionalArguments, which _podtemplate.tpl writes after every arg of its own: the
    ones a provider reads change what it does (the parser keeps the last occurrence)."""
    extra = values.get("additionalArguments")
    if extra is None:
        return []
    if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
        raise ValuesError("additionalArguments: expected a list of strings (args such as --log.level=DEBUG), got %r" % (extra,))
    return list(extra)


def gateway_enabled(values: Values) -> bool:
    """Whether the values turn on the Gateway API provider (providers.kubernetesGateway.enabled)."""
    return truthy(get_path(values, "providers.kubernetesGateway.enabled"))


def gateway_args(values: Values, names: dict[str, str]) -> list[str]:
    """The Gateway provider's args that decide what it claims and the address it writes
    (_podtemplate.tpl's kubernetesGateway block; statusAddress.service defaults to the release's
    own Service). The chart's other Gateway args (nativeLB, qps, burst, ...) decide neither."""
    gw = get_path(values, "providers.kubernetesGateway") or {}
    if not truthy(gw.get("enabled")):
        return []
    args = ["--" + GATEWAY]
    status = gw.get("statusAddress") or {}
    if isinstance(status, dict):
        if truthy(status.get("ip")):
            args.append("--%s.statusaddress.ip=%s" % (GATEWAY, status["ip"]))
        if truthy(status.get("hostname")):
            args.append("--%s.statusaddress.hostname=%s" % (GATEWAY, status["hostname"]))
        service = status.get("service") or {}
        if truthy(service.get("enabled")) and truthy(get_path(values, "service.enabled")):
            args.append("--%s.statusaddress.service.name=%s" % (GATEWAY, service.get("name") or names["fullname"]))
            args.append("--%s.statusaddress.service.namespace=%s" % (GATEWAY, service.get("namespace") or names["namespace"]))
    if gw.get("namespaces") or (truthy(get_path(values, "rbac.enabled")) and truthy(get_path(values, "rbac.namespaced"))):
        args.append("--%s.namespaces=%s" % (GATEWAY, ",".join(gw.get("namespaces") or []) or names["namespace"]))
    if truthy(gw.get("labelSelector")):
        args.append("--%s.labelSelector=%s" % (GATEWAY, gw["labelSelector"]))
    return args


def gateway_lab_values(values: Values | None, release: str, namespace: str) -> Values:
    """What a lab with Gateway API (lab_gateway_api) gives a Traefik whose values turn on the Gateway
    provider, beneath its own values: none of the chart's own Gateway objects (its GatewayClass
    `traefik` and Gateway `traefik-gateway`: a second release collides on the class, and the lab
    creates its own from lab_gateways), and the Gateway's address from the release's own Service
    (its MetalLB address). Empty when the provider is off: the chart reads none of these then."""
    user = values or {}
    if not gateway_enabled(user):
        return {}
    names = chart_names(merge_values(CHART_DEFAULTS, user), release, namespace)
    return {"gateway": {"enabled": False}, "gatewayClass": {"enabled": False},
            "providers": {"kubernetesGateway": {"statusAddress": {"service": {
                "enabled": True, "name": names["fullname"], "namespace": names["namespace"]}}}}}


def parse_args(args: list[str]) -> dict[str, str]:
    """Traefik's flag parser (paerser): names are case-insensitive, `--name` alone is true,
    the last occurrence wins."""
    flags: dict[str, str] = {}
    for arg in args:
        if not arg.startswith("--"):
            continue
        name, eq, value = arg[2:].partition("=")
        flags[name.lower()] = value if eq else "true"
    return flags


def image_ref(values: Values) -> str:
    """_helpers.tpl traefik.image-name (no hub, no hardened image, no OCI metadata)."""
    img = values.get("image") or {}
    registry = img.get("registry") or "docker.io"
    repository = img.get("repository") or "traefik"
    if truthy(img.get("digest")):
        return "%s/%s@%s" % (registry, repository, img["digest"])
    return "%s/%s:%s" % (registry, repository, img.get("tag") or APP_VERSION)


def _check(values: Values) -> None:
    for path in ("providers", "providers.kubernetesIngress", "providers.kubernetesIngressNGINX", "providers.kubernetesGateway",
                 "providers.kubernetesGateway.statusAddress", "providers.kubernetesGateway.statusAddress.service",
                 "rbac", "ingressClass", "image", "service", "gateway", "gatewayClass"):
        if get_path(values, path) is not None and not isinstance(get_path(values, path), dict):
            raise ValuesError("%s: expected a mapping, got %r" % (path, get_path(values, path)))
    if gateway_enabled(values) and truthy(get_path(values, "rbac.namespaced")):
        # templates/requirements.yaml: "Kubernetes Gateway provider requires ClusterRole. RBAC cannot be namespaced."
        raise ValuesError("providers.kubernetesGateway.enabled: the Gateway provider needs the chart's ClusterRole "
                          "(GatewayClasses are cluster-wide), so rbac.namespaced (scope: true) must be false; the chart "
                          "fails with \"Kubernetes Gateway provider requires ClusterRole. RBAC cannot be namespaced.\"")
    kind = get_path(values, "deployment.kind")
    if kind not in ("Deployment", "DaemonSet"):
        raise ValuesError("deployment.kind: expected Deployment or DaemonSet, got %r" % (kind,))


def effective_config(values: Values | None, release: str, namespace: str, chart_version: str | None = None) -> TraefikConfig:
    user = copy.deepcopy(values or {})
    if not release or not isinstance(release, str):
        raise ValuesError("release: expected a non-empty string, got %r" % (release,))
    if not namespace or not isinstance(namespace, str):
        raise ValuesError("namespace: expected a non-empty string, got %r" % (namespace,))
    merged = merge_values(CHART_DEFAULTS, user)
    _check(merged)
    names = chart_names(merged, release, namespace)
    args = provider_args(merged, names) + additional_arguments(merged)
    rbac = "none" if not truthy(get_path(merged, "rbac.enabled")) else (
        "namespace" if truthy(get_path(merged, "rbac.namespaced")) else "cluster")
    cfg = TraefikConfig(
        release=release, namespace=names["namespace"], values=merged, user_values=user, fullname=names["fullname"],
        image=image_ref(merged), args=args, flags=parse_args(args),
        ingress_class=names["ingress_class"] if truthy(get_path(merged, "ingressClass.enabled")) else None,
        default_class=truthy(get_path(merged, "ingressClass.isDefaultClass")), rbac_scope=rbac,
        service_type=str(get_path(merged, "service.spec.type") or "ClusterIP") if truthy(get_path(merged, "service.enabled")) else None,
    )
    cfg.notes = notes_for(cfg)
    if (chart_version or CHART_VERSION) != CHART_VERSION:
        cfg.notes.append("chart %s is not modelled (the collection models %s): args and notes are chart %s's"
                         % (chart_version, CHART_VERSION, CHART_VERSION))
    return cfg


def _set(out: Values, path: str, value: Any, option: str) -> None:
    current = get_path(out, path)
    if current is not None and current != "" and current != value:
        raise ValuesError("%s=%r conflicts with values.%s=%r; drop one of them" % (option, value, path, current))
    set_path(out, path, value, ValuesError)


def apply_options(values: Values | None, scope: bool | None = None, publish_service: bool | None = None,
                  ingress_class: str | None = None) -> Values:
    """The module's conveniences as chart values: scope → rbac.namespaced (the chart then limits
    both providers to the release namespace), publish_service → the Ingress provider's
    publishedService, ingress_class → the IngressClass the chart creates and the one the
    provider serves."""
    out = copy.deepcopy(values or {})
    if scope is not None:
        _set(out, "rbac.namespaced", scope, "scope")
    if publish_service is not None:
        _set(out, "providers.kubernetesIngress.publishedService.enabled", publish_service, "publish_service")
    if ingress_class is not None:
        if not ingress_class:
            raise ValuesError("ingress_class: expected a non-empty IngressClass name")
        _set(out, "ingressClass.name", ingress_class, "ingress_class")
        _set(out, "providers.kubernetesIngress.ingressClass", ingress_class, "ingress_class")
    return out


IMAGE_KEYS = ("image.registry", "image.repository", "image.tag", "image.digest")


def with_image(values: Values | None, image: str, default_image: str) -> Values:
    """The lab's Traefik image (lab_images.<IMAGE_KEY>) as image.registry/repository/tag/digest."""
    out = copy.deepcopy(values or {})
    if image == default_image:
        return out
    chosen = [key for key in IMAGE_KEYS if get_path(out, key) is not None]
    if chosen:
        raise ValuesError("%s: chooses the Traefik image while lab_images.%s is %r; set the image in one place"
                          % (chosen[0], IMAGE_KEY, image))
    repository, tag, digest = split_image(image)
    first, _sep, rest = repository.partition("/")
    registry, repo = (first, rest) if rest and ("." in first or ":" in first or first == "localhost") else ("docker.io", repository)
    img = out.setdefault("image", {})
    img.update({"registry": registry, "repository": repo, "tag": tag})
    if digest:
        img["digest"] = digest
    return out


def with_time_scale(values: Values | None, time_scale: float) -> Values:
    """Traefik has no status period to shorten: it writes on every change it sees."""
    if isinstance(time_scale, bool) or not isinstance(time_scale, (int, float)) or time_scale <= 0:
        raise ValuesError("time_scale: expected a number greater than 0, got %r" % (time_scale,))
    return copy.deepcopy(values or {})


# The Traefik of a migration rehearsal, by provider: Ingresses read through ingress-nginx's rules
# (`nginx`), through Traefik's own Ingress provider (`ingress`, what changing only the class gives), or
# Gateway API (`gateway`). None writes an Ingress status: the baseline's ingress-nginx keeps writing them.
REHEARSAL_PROVIDERS = ("nginx", "ingress", "gateway")


def rehearsal_values(provider: str, ingress_class: str, controller_class: str, gateway_class_labels: str = "") -> Values:
    """Chart values of a rehearsal target reading the Ingresses of INGRESS_CLASS (an IngressClass of
    CONTROLLER_CLASS, or the class annotation's value); a Gateway target serves only the GatewayClasses whose
    labels match GATEWAY_CLASS_LABELS (its labelSelector, which Traefik applies to GatewayClasses alone), so
    that two Gateway targets in one cluster do not serve each other's Gateways."""
    providers: Values = {"kubernetesCRD": {"enabled": False}, "kubernetesIngress": {"enabled": False}}
    if provider == "nginx":
        providers["kubernetesIngressNGINX"] = {"enabled": True, "ingressClass": ingress_class, "controllerClass": controller_class}
    elif provider == "ingress":
        providers["kubernetesIngress"] = {"ingressClass": ingress_class, "publishedService": {"enabled": False}}
        # its Middlewares (traefik.io, the chart's CRDs), which an Ingress names by annotation: how a fix keeps a
        # behaviour ingress-nginx had by annotation (migration/fixes/traefik_ingress_provider.py)
        providers["kubernetesCRD"] = {"enabled": True}
    elif provider == "gateway":
        providers["kubernetesGateway"] = {"enabled": True}
        if gateway_class_labels:
            providers["kubernetesGateway"]["labelSelector"] = gateway_class_labels
    else:
        raise ValuesError("provider: expected one of %s, got %r" % (", ".join(REHEARSAL_PROVIDERS), provider))
    return {"global": {"checkNewVersion": False, "sendAnonymousUsage": False}, "ingressClass": {"enabled": False},
            "providers": providers}
