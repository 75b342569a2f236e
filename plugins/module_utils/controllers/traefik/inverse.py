# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traefik: the inverse of chart.py's values → args for the providers the collection models (the
Ingress provider, the ingress-nginx one and the Gateway one). Given the args a Traefik runs with
(from the chart, from plain manifests or written by hand), chart values whose rendered provider
args are the same effective flags; what no modelled value expresses goes to additionalArguments,
which the chart writes after its own args (the parser keeps the last occurrence). The chart's other
args (entry points, API, logs, metrics) are its own and are not captured: they are reported."""
from __future__ import annotations

import copy
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import (
    DEFAULT_CLASS_ANNOTATION,
    ClusterState,
    container_argv,
    meta,
    workload_service,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.chart_values import get_path, merge_values, set_path
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik import manifests
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.chart import (
    _flattened,
    chart_names,
    effective_config,
    parse_args,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import (
    CHART_DEFAULTS,
    CONTROLLER_VALUE,
    GATEWAY,
    INGRESS,
    NGINX,
    ValuesError,
)

Values = dict[str, Any]
Obj = dict[str, Any]

SECRET_FLAGS: tuple[str, ...] = ()
_PROVIDERS = (INGRESS, NGINX, GATEWAY)
# The ingress-nginx provider's options the chart writes from its own key of the same name
# (yaml2CommandLineArgs), by the lower-case flag name the parser sees.
_NGINX_KEYS = {k.lower(): k for k in get_path(CHART_DEFAULTS, "providers.kubernetesIngressNGINX")
               if k not in ("enabled", "publishService", "watchNamespace", "modsec")}


def _defaults() -> dict[str, dict[str, str]]:
    """Each provider's values for the options the chart writes out whether or not they are set:
    Traefik's own defaults (false for the booleans; for the ingress-nginx provider, the chart's
    values mirror them), so a flag left out and its default written compare equal."""
    ngx = {k: v for k, v in (get_path(CHART_DEFAULTS, "providers.kubernetesIngressNGINX") or {}).items()
           if k.lower() in _NGINX_KEYS}
    ingress = {"%s.%s" % (INGRESS, k): "false" for k in (
        "allowemptyservices", "allowexternalnameservices", "nativelbbydefault", "strictprefixmatching",
        "disableclusterscoperesources", "disableingressclasslookup")}
    return {INGRESS: ingress, NGINX: parse_args(_flattened(NGINX, ngx)), GATEWAY: {}}


def _provider(flag: str) -> str | None:
    return next((p for p in _PROVIDERS if flag == p or flag.startswith(p + ".")), None)


def effective_args(args: list[str], namespace: str, chart_version: str | None = None) -> dict[str, str]:
    """The provider flags Traefik runs with: names lower-cased, the last occurrence wins, booleans
    in lower case, each enabled provider's defaults filled in, a disabled provider's options dropped
    (it reads none of them), and "" as not set. NAMESPACE and CHART_VERSION are the registry's
    signature: Traefik's args name no namespace variable."""
    flags = {k: (v.lower() if v.lower() in ("true", "false") else v) for k, v in parse_args(args).items() if _provider(k)}
    out: dict[str, str] = {}
    for provider, defaults in _defaults().items():
        if flags.get(provider) != "true":
            continue
        out[provider] = "true"
        out.update(defaults)
        out.update({k: v for k, v in flags.items() if _provider(k) == provider and v != ""})
    return out


def _list(text: str) -> list[str]:
    return [item for item in text.split(",") if item]


def _map_flags(flags: dict[str, str], namespace: str, names: dict[str, str]) -> Values:
    values: Values = {}

    def put(path: str, value: Any) -> None:
        if get_path(CHART_DEFAULTS, path) != value:
            set_path(values, path, value, ValuesError)

    own_service = "%s/%s" % (namespace, names["fullname"])
    ing, ngx, gw = (flags.get(p) == "true" for p in _PROVIDERS)
    put("providers.kubernetesIngress.enabled", ing)
    if ing:
        i = INGRESS + "."
        for key in ("allowExternalNameServices", "allowEmptyServices", "nativeLBByDefault", "strictPrefixMatching"):
            put("providers.kubernetesIngress." + key, flags.get(i + key.lower()) == "true")
        for key in ("crossProviderNamespaces", "namespaces"):
            if flags.get(i + key.lower()):
                put("providers.kubernetesIngress." + key, _list(flags[i + key.lower()]))
        published = flags.get(i + "ingressendpoint.publishedservice")
        if published is None:
            put("providers.kubernetesIngress.publishedService.enabled", False)
        elif published != own_service:
            put("providers.kubernetesIngress.publishedService.pathOverride", published)
        for key in ("hostname", "ip"):
            if flags.get(i + "ingressendpoint." + key):
                put("providers.kubernetesIngress.ingressEndpoint." + key, flags[i + "ingressendpoint." + key])
        for key in ("labelSelector", "ingressClass"):
            if flags.get(i + key.lower()):
                put("providers.kubernetesIngress." + key, flags[i + key.lower()])
        if flags.get(i + "disableclusterscoperesources") == "true":
            put("rbac.namespaced", True)
    if ngx:
        n = NGINX + "."
        put("providers.kubernetesIngressNGINX.enabled", True)
        if flags.get(n + "watchnamespace"):
            put("providers.kubernetesIngressNGINX.watchNamespace", flags[n + "watchnamespace"])
        publish = flags.get(n + "publishservice")
        if publish is not None:
            put("providers.kubernetesIngressNGINX.publishService.enabled", True)
            if publish != own_service:
                put("providers.kubernetesIngressNGINX.publishService.pathOverride", publish)
        if flags.get(n + "modsec") == "true":
            put("providers.kubernetesIngressNGINX.modsec.enabled", True)
        for low, key in _NGINX_KEYS.items():
            if n + low in flags:
                default = get_path(CHART_DEFAULTS, "providers.kubernetesIngressNGINX." + key)
                text = flags[n + low]
                put("providers.kubernetesIngressNGINX." + key, text == "true" if isinstance(default, bool) else text)
    if gw:
        g = GATEWAY + "."
        put("providers.kubernetesGateway.enabled", True)
        for key in ("ip", "hostname"):
            if flags.get(g + "statusaddress." + key):
                put("providers.kubernetesGateway.statusAddress." + key, flags[g + "statusaddress." + key])
        svc_name, svc_ns = flags.get(g + "statusaddress.service.name"), flags.get(g + "statusaddress.service.namespace")
        if svc_name and svc_ns:
            if svc_name != names["fullname"]:
                put("providers.kubernetesGateway.statusAddress.service.name", svc_name)
            if svc_ns != namespace:
                put("providers.kubernetesGateway.statusAddress.service.namespace", svc_ns)
        else:
            put("providers.kubernetesGateway.statusAddress.service.enabled", False)
        if flags.get(g + "namespaces"):
            put("providers.kubernetesGateway.namespaces", _list(flags[g + "namespaces"]))
        if flags.get(g + "labelselector"):
            put("providers.kubernetesGateway.labelSelector", flags[g + "labelselector"])
    return values


def args_to_values(args: list[str], release: str, namespace: str, chart_version: str | None = None) -> tuple[Values, list[str]]:
    """Chart values (over the chart's defaults, for RELEASE in NAMESPACE) whose rendered provider
    args have the same effective flags as ARGS, and what the values do not say by themselves: each
    flag put in additionalArguments, each the chart writes that could not be switched off, and each
    arg outside the modelled providers (not captured), as `--flag=value: why`."""
    wanted = effective_args(args, namespace)
    names = chart_names(merge_values(CHART_DEFAULTS, {}), release, namespace)
    values = _map_flags(wanted, namespace, names)
    notes: list[str] = []
    extra: list[str] = []
    for _round in range(2):
        got = effective_args(effective_config(merge_values(values, {"additionalArguments": extra}), release, namespace).args,
                             namespace)
        for flag in sorted(set(wanted) | set(got)):
            if wanted.get(flag) == got.get(flag):
                continue
            if flag in wanted:
                extra.append("--%s=%s" % (flag, wanted[flag]))
                notes.append("--%s=%s: in additionalArguments (no chart value says it)" % (flag, wanted[flag]))
            else:
                notes.append("--%s=%s: written by the chart, which cannot leave it out (the captured args do not set it)"
                             % (flag, got[flag]))
    if extra:
        values["additionalArguments"] = extra
    raw = parse_args(args)
    # The chart's own args: the CRD provider (on by default, it needs Traefik's CRDs) and the
    # version check follow the captured ones; the rest are reported where they differ.
    if raw.get("providers.kubernetescrd", "false").lower() != "true":
        values.setdefault("providers", {})["kubernetesCRD"] = {"enabled": False}
    if raw.get("global.checknewversion", "").lower() == "false":
        values["global"] = {"checkNewVersion": False}
    chart_own = parse_args(manifests.args(effective_config(values, release, namespace)))
    notes += ["--%s=%s: not captured (the chart writes its own entry points, API, logs and metrics; %s)"
              % (k, v, "it writes %r" % chart_own[k] if k in chart_own else "it leaves this out")
              for k, v in raw.items() if not _provider(k) and chart_own.get(k) != v
              and not k.startswith("providers.kubernetescrd") and k != "global.checknewversion"]
    return values, sorted(set(notes))


def capture_values(state: ClusterState, workload: Obj, container: Obj, values: Values, release: str,
                   taken_classes: set[str]) -> tuple[Values, list[str]]:
    """What the chart's values say of a running Traefik beyond its args (lab_capture): its workload
    kind and replicas, the IngressClass of traefik.io/ingress-controller it serves, its Service's
    type. Its RBAC scope follows its args (disableClusterScopeResources, which the chart's
    rbac.namespaced renders). Returns (values, notes); TAKEN_CLASSES as ingress_nginx's."""
    out = copy.deepcopy(values)
    notes: list[str] = []
    spec = workload.get("spec") or {}
    if workload.get("kind") == "DaemonSet":
        set_path(out, "deployment.kind", "DaemonSet", ValuesError)
    elif spec.get("replicas", 1) != 1:
        set_path(out, "deployment.replicas", spec.get("replicas", 1), ValuesError)
    flags = parse_args(container_argv(container, str(meta(workload).get("namespace"))))
    option = flags.get(INGRESS + ".ingressclass", "")
    classes = sorted(str(meta(c).get("name")) for c in state.ingress_classes
                     if (c.get("spec") or {}).get("controller") == CONTROLLER_VALUE)
    mine = [c for c in classes if c not in taken_classes and (not option or c == option)]
    if mine:
        ic = next(c for c in state.ingress_classes if meta(c).get("name") == mine[0])
        set_path(out, "ingressClass.name", mine[0], ValuesError)
        default = (meta(ic).get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) == "true"
        if default != get_path(CHART_DEFAULTS, "ingressClass.isDefaultClass"):
            set_path(out, "ingressClass.isDefaultClass", default, ValuesError)
        taken_classes.add(mine[0])
    else:
        set_path(out, "ingressClass.enabled", False, ValuesError)
    svc = workload_service(state, workload)
    if svc is None:
        notes.append("no Service selects its pods: the lab's chart creates its own (LoadBalancer)")
    else:
        kind = (svc.get("spec") or {}).get("type") or "ClusterIP"
        if kind != get_path(CHART_DEFAULTS, "service.spec.type"):
            set_path(out, "service.spec.type", kind, ValuesError)
    return out, notes
