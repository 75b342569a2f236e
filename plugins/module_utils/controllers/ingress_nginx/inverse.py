# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ingress-nginx: the inverse of chart.py's values → args. Given the args a controller runs with
(from a chart, from plain manifests or written by hand), chart values that render to the same
effective args: what the binary then sees after flags.go's defaults, $(POD_NAMESPACE) resolved.
A flag no modelled value expresses goes to controller.extraArgs, which the chart renders last
(pflag keeps the last occurrence), so the rendered args always come back equal."""
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
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.binary import (
    NGINX_DEFAULT_ELECTION_ID,
    analyse_nginx,
    parse_nginx_flags,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.chart import chart_profile, effective_config
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.values import (
    BINARY_DEFAULT_CONTROLLER_CLASS,
    BINARY_DEFAULT_INGRESS_CLASS,
    CHART_DEFAULTS,
    POD_NAMESPACE_REF,
    ValuesError,
    chart_names,
)

Values = dict[str, Any]
Obj = dict[str, Any]

# Flags whose value is a secret: the capture leaves them in the cluster (a lab never needs them).
SECRET_FLAGS = ("maxmind-license-key",)
_EXTRA = "controller.extraArgs"


def _binary_defaults(chart_version: str | None) -> dict[str, str]:
    """flags.go's values for the flags the chart renders whether or not they are set, so that a
    flag left out and the chart's rendering of its default compare equal. The metrics and
    annotation-validation defaults follow the binary the chart version ships (its profile)."""
    profile = chart_profile(chart_version)
    return {
        "ingress-class": BINARY_DEFAULT_INGRESS_CLASS,
        "controller-class": BINARY_DEFAULT_CONTROLLER_CLASS,
        "election-id": NGINX_DEFAULT_ELECTION_ID,
        "configmap": "",
        "health-check-path": "/healthz",
        "enable-metrics": "true" if profile.metrics_opt_out else "false",
        "enable-annotation-validation": "false" if profile.annotation_validation_opt_in else "true",
    }


def effective_args(args: list[str], namespace: str, chart_version: str | None = None) -> dict[str, str]:
    """The flags the binary runs with: pflag's parse (last occurrence wins, `--flag` alone is
    true), $(POD_NAMESPACE) resolved to NAMESPACE, flags.go's defaults filled in for the flags the
    chart renders by default. Flags the binary refuses are left out (args_to_values reports them)."""
    flags, _errors = parse_nginx_flags([a.replace(POD_NAMESPACE_REF, namespace) for a in args])
    defaults = _binary_defaults(chart_version)
    out = dict(defaults)
    # A string flag set to "" is its flags.go default for every flag without one of its own.
    out.update({k: v for k, v in flags.items() if v != "" or k in defaults})
    return out


def _put(values: Values, path: str, value: Any, defaults: Values) -> None:
    """Set PATH unless the chart's default already is VALUE."""
    if get_path(defaults, path) != value:
        set_path(values, path, value, ValuesError)


def _extra(values: Values, flag: str, value: str | None) -> None:
    set_path(values, "%s.%s" % (_EXTRA, flag), value, ValuesError)


def _map_flags(flags: dict[str, str], release: str, namespace: str, defaults: Values) -> tuple[Values, set[str]]:
    """The modelled values for FLAGS; returns (values, the flags they express)."""
    names = chart_names(defaults, release)
    values: Values = {}
    done: set[str] = set()

    def take(flag: str, path: str, value: Any) -> None:
        _put(values, path, value, defaults)
        done.add(flag)

    def flag_bool(flag: str) -> bool:
        return flags.get(flag) == "true"

    take("enable-annotation-validation", "controller.enableAnnotationValidations", flag_bool("enable-annotation-validation"))
    take("enable-metrics", "controller.metrics.enabled", flag_bool("enable-metrics"))
    publish = flags.get("publish-service")
    if publish is None:
        _put(values, "controller.publishService.enabled", False, defaults)
    elif publish != "%s/%s" % (namespace, names["controller"]) and not publish.endswith("-"):
        take("publish-service", "controller.publishService.pathOverride", publish)
    elif not publish.endswith("-"):
        done.add("publish-service")
    if flags["election-id"] != names["election_id"]:
        take("election-id", "controller.electionID", flags["election-id"])
    else:
        done.add("election-id")
    take("controller-class", "controller.ingressClassResource.controllerValue", flags["controller-class"])
    take("ingress-class", "controller.ingressClass", flags["ingress-class"])
    configmap_ns, _sep, configmap = flags["configmap"].partition("/")
    if configmap == names["controller"]:
        take("configmap", "controller.configMapNamespace", "" if configmap_ns == namespace else configmap_ns)
    watch = flags.get("watch-namespace")
    if watch:
        _put(values, "controller.scope.enabled", True, defaults)
        take("watch-namespace", "controller.scope.namespace", "" if watch == namespace else watch)
    elif flags.get("watch-namespace-selector"):
        take("watch-namespace-selector", "controller.scope.namespaceSelector", flags["watch-namespace-selector"])
    hook = flags.get("validating-webhook", "")
    hook_keys = ("validating-webhook", "validating-webhook-certificate", "validating-webhook-key")
    if all(k in flags for k in hook_keys) and hook.startswith(":") and hook[1:].isdigit():
        take("validating-webhook", "controller.admissionWebhooks.port", int(hook[1:]))
        take("validating-webhook-certificate", "controller.admissionWebhooks.certificate", flags["validating-webhook-certificate"])
        take("validating-webhook-key", "controller.admissionWebhooks.key", flags["validating-webhook-key"])
    else:
        _put(values, "controller.admissionWebhooks.enabled", False, defaults)
    if flags.get("healthz-host"):
        take("healthz-host", "controller.healthCheckHost", flags["healthz-host"])
    take("health-check-path", "controller.healthCheckPath", flags["health-check-path"])
    for flag, key in (("ingress-class-by-name", "ingressClassByName"), ("watch-ingress-without-class", "watchIngressWithoutClass"),
                      ("enable-topology-aware-routing", "enableTopologyAwareRouting"),
                      ("disable-leader-election", "disableLeaderElection")):
        if flag in flags:
            take(flag, "controller." + key, flag_bool(flag))
    if flags.get("election-ttl"):
        take("election-ttl", "controller.electionTTL", flags["election-ttl"])
    return values, done


def args_to_values(args: list[str], release: str, namespace: str, chart_version: str | None = None) -> tuple[Values, list[str]]:
    """Chart values (over the chart's defaults, for RELEASE in NAMESPACE) whose rendered args have
    the same effective flags as ARGS, and the flags only controller.extraArgs expresses, as
    `--flag=value` (what a reader should know the chart's values do not say)."""
    wanted = effective_args(args, namespace, chart_version)
    _flags, refused = parse_nginx_flags([a.replace(POD_NAMESPACE_REF, namespace) for a in args])
    defaults = merge_values(CHART_DEFAULTS, chart_profile(chart_version).defaults)
    values, done = _map_flags(wanted, release, namespace, defaults)
    extra: list[str] = []
    # What the modelled values leave different goes to extraArgs; two rounds settle it (the
    # second only sees flags the chart renders by default and the first round did not name).
    for _round in range(2):
        got = effective_args(effective_config(values, release, namespace, chart_version).args, namespace, chart_version)
        for flag in sorted(set(wanted) | set(got)):
            if wanted.get(flag) == got.get(flag):
                continue
            # A flag the binary does not take (or a default the chart renders) is repeated as is;
            # one to leave at flags.go's "" renders as `--flag=` (nil in extraArgs: "" would
            # render a bare `--flag`, which takes the next arg as its value).
            _extra(values, flag, wanted.get(flag) or None)
            if flag in wanted and flag not in done:
                extra.append("--%s=%s" % (flag, wanted[flag]))
    # The binary exits at start on these (the pod crash-loops): the values cannot carry them.
    extra += ["%s: the binary refuses it and exits; not reproduced" % error for error in refused]
    return values, sorted(set(extra))


def capture_values(state: ClusterState, workload: Obj, container: Obj, values: Values, release: str,
                   taken_classes: set[str]) -> tuple[Values, list[str]]:
    """What the chart's values say of a running controller of RELEASE beyond its args (lab_capture): its
    workload kind and replicas, the RBAC its ServiceAccount has, the IngressClass of its
    controller-class, its Service's type; and the lab's rule that no release runs an admission
    webhook. Returns (values, notes on what the lab cannot reproduce as it is). TAKEN_CLASSES: the
    IngressClass names other captured releases already create (the lab refuses a second)."""
    out = copy.deepcopy(values)
    notes: list[str] = []
    ns = str(meta(workload).get("namespace"))
    spec = workload.get("spec") or {}
    if workload.get("kind") == "DaemonSet":
        set_path(out, "controller.kind", "DaemonSet", ValuesError)
    elif spec.get("replicas", 1) != 1:
        set_path(out, "controller.replicaCount", spec.get("replicas", 1), ValuesError)
    analysed = analyse_nginx(state, workload, container, [])
    flags = effective_args(container_argv(container, ns), ns)
    if analysed.settings["may_list_ingress_classes"] is False:
        if flags.get("watch-namespace"):
            set_path(out, "rbac.scope", True, ValuesError)
        else:
            notes.append("its ServiceAccount may not list IngressClasses but it watches every namespace: the chart "
                         "renders namespaced RBAC only with controller.scope.enabled, so the lab's has cluster-wide RBAC")
    elif analysed.settings["may_get_nodes"] is False:
        notes.append("its ServiceAccount may not get Nodes: the chart's cluster-wide RBAC may, so the lab's publishes node addresses")
    if get_path(out, "controller.admissionWebhooks.enabled") is not False:
        set_path(out, "controller.admissionWebhooks.enabled", False, ValuesError)
        notes.append("its validating admission webhook is not reproduced (lab releases run none: each adds a cluster-wide "
                     "failurePolicy Fail webhook)")
    classes = sorted(str(meta(c).get("name")) for c in state.ingress_classes
                     if (c.get("spec") or {}).get("controller") == flags["controller-class"])
    mine = [c for c in classes if c not in taken_classes]
    if mine:
        ic = next(c for c in state.ingress_classes if meta(c).get("name") == mine[0])
        set_path(out, "controller.ingressClassResource.name", mine[0], ValuesError)
        if (meta(ic).get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION) == "true":
            set_path(out, "controller.ingressClassResource.default", True, ValuesError)
        taken_classes.add(mine[0])
    else:
        set_path(out, "controller.ingressClassResource.enabled", False, ValuesError)
    if len(classes) > len(mine[:1]):
        notes.append("IngressClass(es) %s of controller %s are not created by the lab (a release creates one, and a "
                     "name only once)" % (", ".join(c for c in classes if c not in mine[:1]), flags["controller-class"]))
    svc = workload_service(state, workload)
    names = chart_names(merge_values(CHART_DEFAULTS, out), release)
    publish = flags.get("publish-service", "")
    if publish == "%s/%s" % (ns, names["controller"]) and state.service(ns, names["controller"]) is None:
        # The chart would create the Service the cluster lacks: without its Service, the flag comes from extraArgs.
        set_path(out, "controller.service.enabled", False, ValuesError)
        set_path(out, "%s.publish-service" % _EXTRA, publish, ValuesError)
        notes.append("its publish Service %s does not exist: the lab's release creates no Service either" % publish)
    elif svc is None:
        notes.append("no Service selects its pods: the lab's chart creates its own (LoadBalancer)")
    else:
        kind = (svc.get("spec") or {}).get("type") or "ClusterIP"
        if kind != get_path(CHART_DEFAULTS, "controller.service.type"):
            set_path(out, "controller.service.type", kind, ValuesError)
    return out, notes
