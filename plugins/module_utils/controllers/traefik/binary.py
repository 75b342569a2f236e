# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Traefik v3.7.13: what the proxy does with its args, read from a running workload.

Two providers read Ingresses and write their status, each on its own: `kubernetes` (the
Ingress provider) and `kubernetesingressnginx` (ingress-nginx's rules, for a move off it). A
workload is therefore one status writer per enabled provider. Read from traefik v3.7.13:
- pkg/provider/kubernetes/ingress/kubernetes.go: shouldProcessIngress (547-557: a class name
  must be one of the IngressClasses with controller traefik.io/ingress-controller, filtered by
  name when `ingressClass` is set; otherwise the annotation must equal `ingressClass`, or be
  "traefik" or absent when it is unset); no class lookup with disableClusterScopeResources
  (234); updateIngressStatus (445-545: nothing without an ingressendpoint flag; publishedService
  by Service type; a LoadBalancer without status is skipped; an empty result clears).
- .../ingress/client.go: the status is compared (Hostname+IP set) and replaced by a PUT on
  every event (264-314); the user agent `traefik/<version> ... kubernetes/ingress` (113-120),
  so the API server records the manager `traefik` for both providers. No leader election.
- pkg/provider/kubernetes/ingress-nginx/: claims as ingress-nginx does (build.go:1065-1077,
  client.go:395-409: controllerClass, ingressClassByName, the annotation, watchIngressWithoutClass;
  IngressClasses ignored when it may not list them); writes only with publishStatusAddress
  (wins) or publishService (kubernetes.go:328-405; a pending LoadBalancer gives [] and clears).
- pkg/muxer/http/mux.go: a router's default priority is its rule's length (73-77) and routes
  are sorted with sort.Sort, not stable, after a map range (80-96): two Ingresses with the same
  host and path tie, and which answers is undefined (it may change at any reload).
"""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import label_selector_matches
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import (
    CLASS_ANNOTATION,
    PUBLISH_SERVICE_MISSING,
    AnalysedController,
    Problem,
    ClusterState,
    can_cluster_wide,
    container_argv,
    image_repository,
    ip_first,
    meta,
    pod_running_ready,
    pod_template,
    watch_scope,
    workload_service,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.chart import parse_args
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.traefik.values import CONTROLLER_VALUE, GATEWAY, INGRESS, NGINX

Obj = dict[str, Any]

DEFAULT_ANNOTATION_CLASS = "traefik"  # kubernetes.go traefikDefaultIngressClass
NGINX_DEFAULT_CLASS = "nginx"
NGINX_DEFAULT_CONTROLLER_CLASS = "k8s.io/ingress-nginx"
# The field manager of its status writes (user agent "traefik/<version> (...) kubernetes/ingress").
FIELD_MANAGER = "traefik"


def is_traefik(container: Obj) -> bool:
    repo = image_repository(str(container.get("image") or ""))
    argv = [str(a) for a in list(container.get("command") or []) + list(container.get("args") or [])]
    return repo.rsplit("/", 1)[-1] == "traefik" or any(
        a.lower().split("=", 1)[0] in ("--" + INGRESS, "--" + NGINX, "--" + GATEWAY) for a in argv)


def _list(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


def _lb_addresses(svc: Obj) -> list[str] | None:
    """status.loadBalancer.ingress as Traefik copies it (hostname and IP); None while pending."""
    ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress")
    if ingress is None:
        return None
    return [str(i.get(k)) for i in ingress for k in ("ip", "hostname") if i.get(k)]


def _ingress_provider(state: ClusterState, workload: Obj, flags: dict[str, str], base: dict[str, Any]) -> AnalysedController:
    """The `kubernetes` provider (kubernetesIngress)."""
    ns = base["namespace"]
    p = INGRESS + "."
    option_class = flags.get(p + "ingressclass", "")
    no_lookup = flags.get(p + "disableclusterscoperesources") == "true" or flags.get(p + "disableingressclasslookup") == "true"
    namespaces = _list(flags.get(p + "namespaces", ""))
    label_selector = flags.get(p + "labelselector", "")
    watch, watches = watch_scope(state, namespaces, "")
    classes = [] if no_lookup else sorted(
        str(meta(ic).get("name")) for ic in state.ingress_classes
        if (ic.get("spec") or {}).get("controller") == CONTROLLER_VALUE
        and (not option_class or meta(ic).get("name") == option_class))

    def claim(ing: Obj) -> tuple[str, str]:
        if label_selector and not label_selector_matches(label_selector, dict(meta(ing).get("labels") or {})):
            return "no", "its labels do not match --%slabelSelector=%s" % (p, label_selector)
        class_name = (ing.get("spec") or {}).get("ingressClassName")
        if class_name is not None:
            if class_name in classes:
                return "yes", "spec.ingressClassName %s is an IngressClass with controller %s" % (class_name, CONTROLLER_VALUE)
            if no_lookup:
                return "no", "spec.ingressClassName is set, and with disableClusterScopeResources it looks up no IngressClass"
            return "no", "spec.ingressClassName %s is not one of its IngressClasses %s" % (class_name, classes or "[]")
        annotation = str((meta(ing).get("annotations") or {}).get(CLASS_ANNOTATION, ""))
        if option_class:
            if annotation == option_class:
                return "yes", "annotation %s: %s matches its ingressClass" % (CLASS_ANNOTATION, annotation)
            return "no", "annotation %r is not its ingressClass %s" % (annotation, option_class)
        if annotation in ("", DEFAULT_ANNOTATION_CLASS):
            return "yes", ("no class and no annotation (with no ingressClass set it takes those)" if not annotation
                           else "annotation %s: traefik" % CLASS_ANNOTATION)
        return "no", "annotation %s: %s is not traefik" % (CLASS_ANNOTATION, annotation)

    problems: list[Problem] = []
    from_lb = False
    address: list[str] | None
    published = flags.get(p + "ingressendpoint.publishedservice", "")
    ip, hostname = flags.get(p + "ingressendpoint.ip", ""), flags.get(p + "ingressendpoint.hostname", "")
    if published:
        source, detail = "service", "--%singressendpoint.publishedservice=%s" % (p, published)
        svc_ns, _sep, svc_name = published.partition("/")
        svc = state.service(svc_ns, svc_name) if _sep else None
        if svc is None or (namespaces and svc_ns not in namespaces):
            problems.append(Problem("writes no status: its published Service %s %s" % (
                published, "is outside its namespaces" if svc is not None else "does not exist")))
            address = None
        else:
            stype = (svc.get("spec") or {}).get("type") or "ClusterIP"
            detail += " (type %s)" % stype
            spec = svc.get("spec") or {}
            if stype == "LoadBalancer":
                address, from_lb = _lb_addresses(svc), True
                if address is None:
                    detail += "; its LoadBalancer has no address yet, so it leaves the status alone"
            elif stype == "ClusterIP":
                address = [str(a) for a in spec.get("externalIPs") or []]
            elif stype == "NodePort":
                if no_lookup:
                    problems.append(Problem("writes no status: a NodePort published Service needs Nodes, which "
                                            "disableClusterScopeResources does not watch"))
                    address = None
                else:
                    address = [a["address"] for n in state.nodes for a in (n.get("status") or {}).get("addresses") or []
                               if a.get("type") == "ExternalIP" and a.get("address")]
            elif stype == "ExternalName":
                address = [str(spec.get("externalName", ""))]
            else:
                address = None
    elif ip or hostname:
        source, detail = "status-address", "--%singressendpoint (ip %s, hostname %s)" % (p, ip or "-", hostname or "-")
        address = [a for a in (ip, hostname) if a]
    else:
        source, detail, address = "none", "no --%singressendpoint.*: it writes no Ingress status" % p, None
    return AnalysedController(
        type="traefik", namespace=ns, name=base["name"] + "@kubernetes", kind=base["kind"], pods=base["pods"],
        ready_pods=base["ready"], settings=dict(base["settings"], provider="kubernetes", ingress_class=option_class or None,
                                                ingress_classes=classes, class_lookup=not no_lookup),
        watch=watch, publish_source=source, publish_detail=detail,
        address=ip_first(address) if address is not None else None, address_from_lb=from_lb, faults=problems,
        claim=claim, watches_namespace=watches,
        class_keys=["controller-class %s" % CONTROLLER_VALUE] + (
            ["annotation %s: %s" % (CLASS_ANNOTATION, option_class)] if option_class else ["ingresses without a class"]),
        sync_period=0,
        scope_fix=("rbac.namespaced: true", "--%snamespaces=%s" % (p, ns)),
        publish_fix=("providers.kubernetesIngress.publishedService.enabled: true",
                     "--%singressendpoint.publishedservice=%s/%s" % (p, ns, base["service"])),
        class_fix=("providers.kubernetesIngress.ingressClass: <a class of its own>", "--%singressClass=<a class of its own>" % p),
        stop_fix=("providers.kubernetesIngress.ingressClass: <a class of its own> (unset, it claims every Ingress "
                  "with no class)", "--%singressClass=<a class of its own>" % p) if not option_class else ("", ""),
    )


def _nginx_provider(state: ClusterState, workload: Obj, flags: dict[str, str], base: dict[str, Any]) -> AnalysedController:
    """The `kubernetesingressnginx` provider (kubernetesIngressNGINX)."""
    ns = base["namespace"]
    p = NGINX + "."
    ingress_class = flags.get(p + "ingressclass", NGINX_DEFAULT_CLASS)
    controller_class = flags.get(p + "controllerclass", NGINX_DEFAULT_CONTROLLER_CLASS)
    by_name = flags.get(p + "ingressclassbyname") == "true"
    without_class = flags.get(p + "watchingresswithoutclass") == "true"
    namespaces = _list(flags.get(p + "watchnamespace", ""))
    selector = flags.get(p + "watchnamespaceselector", "")
    watch, watches = watch_scope(state, namespaces, selector)
    may_list = can_cluster_wide(state, ns, base["service_account"], "networking.k8s.io", "ingressclasses", "list")
    classes: list[str] = []
    if may_list:
        for ic in state.ingress_classes:  # client.go filterIngressClass: a by-name match ends the scan
            name = str(meta(ic).get("name"))
            if by_name and name == ingress_class:
                classes.append(name)
                break
            if (ic.get("spec") or {}).get("controller") == controller_class:
                classes.append(name)

    def claim(ing: Obj) -> tuple[str, str]:
        class_name = (ing.get("spec") or {}).get("ingressClassName")
        annotations = meta(ing).get("annotations") or {}
        if classes and class_name is not None:
            if class_name in classes:
                return "yes", "spec.ingressClassName %s is an IngressClass with controller %s" % (class_name, controller_class)
            return "no", "spec.ingressClassName %s is not one of its IngressClasses %s" % (class_name, classes)
        if CLASS_ANNOTATION in annotations:
            if annotations[CLASS_ANNOTATION] == ingress_class:
                return "yes", "annotation %s: %s matches its ingressClass" % (CLASS_ANNOTATION, ingress_class)
            return "no", "annotation %s: %s is not its ingressClass %s" % (CLASS_ANNOTATION, annotations[CLASS_ANNOTATION], ingress_class)
        if without_class:
            return "yes", "watchIngressWithoutClass: it takes Ingresses %s" % (
                "without a class" if class_name is None else "whose class it cannot resolve")
        return "no", ("no class annotation and no watchIngressWithoutClass" if class_name is None else
                      "spec.ingressClassName %s, but it has no IngressClass with controller %s%s" % (
                          class_name, controller_class, "" if may_list else " (it may not list IngressClasses)"))

    problems: list[Problem] = []
    from_lb = False
    address: list[str] | None
    status_address = _list(flags.get(p + "publishstatusaddress", ""))
    publish = flags.get(p + "publishservice", "")
    if status_address:
        source, detail, address = "status-address", "--%spublishStatusAddress=%s" % (p, ",".join(status_address)), status_address
    elif publish:
        source, detail = "service", "--%spublishservice=%s" % (p, publish)
        svc_ns, _sep, svc_name = publish.partition("/")
        svc = state.service(svc_ns, svc_name) if _sep else None
        if svc is None:
            problems.append(Problem("writes no status: its publish Service %s does not exist" % publish, PUBLISH_SERVICE_MISSING,
                                    ("providers.kubernetesIngressNGINX.publishService.pathOverride: <namespace>/<an existing "
                                     "Service>", "--%spublishservice=<namespace>/<an existing Service>" % p)))
            address = None
        else:
            spec = svc.get("spec") or {}
            stype = spec.get("type") or "ClusterIP"
            detail += " (type %s)" % stype
            if stype == "ExternalName":
                address = [str(spec.get("externalName", ""))]
            elif stype == "ClusterIP":
                address = [str(spec.get("clusterIP", ""))]
            elif stype == "NodePort":
                address = [str(a) for a in spec.get("externalIPs") or []] or [str(spec.get("clusterIP", ""))]
            elif stype == "LoadBalancer":
                from_lb = True
                address = (_lb_addresses(svc) or []) + [str(a) for a in spec.get("externalIPs") or []]
                if not address:
                    detail += "; its LoadBalancer has no address yet, so it writes [] (clearing the status)"
            else:
                address = []
    else:
        source, detail, address = "none", "neither publishService nor publishStatusAddress: it writes no Ingress status", None
    return AnalysedController(
        type="traefik", namespace=ns, name=base["name"] + "@kubernetesingressnginx", kind=base["kind"], pods=base["pods"],
        ready_pods=base["ready"], settings=dict(base["settings"], provider="kubernetesingressnginx", ingress_class=ingress_class,
                                                controller_class=controller_class, ingress_classes=classes,
                                                may_list_ingress_classes=may_list, watch_without_class=without_class),
        watch=watch, publish_source=source, publish_detail=detail,
        address=ip_first(address) if address is not None else None, address_from_lb=from_lb, faults=problems,
        claim=claim, watches_namespace=watches,
        class_keys=["controller-class %s" % controller_class, "annotation %s: %s" % (CLASS_ANNOTATION, ingress_class)]
        + (["ingresses without a class"] if without_class else []),
        sync_period=0,
        scope_fix=("providers.kubernetesIngressNGINX.watchNamespace: %s" % ns, "--%swatchnamespace=%s" % (p, ns)),
        publish_fix=("providers.kubernetesIngressNGINX.publishService.enabled: true",
                     "--%spublishservice=%s/%s" % (p, ns, base["service"])),
        class_fix=("providers.kubernetesIngressNGINX.ingressClass and controllerClass: a class of its own",
                   "--%singressclass and --%scontrollerclass of its own" % (p, p)),
        # Traefik's migration guide (docs/content/migrate/nginx-to-traefik.md, "Ingress Status Race Condition").
        stop_fix=("providers.kubernetesIngressNGINX.publishService.enabled: false until cut-over (or give ingress-nginx "
                  "controller.publishService.pathOverride: %s/%s, so both publish Traefik's address)" % (ns, base["service"]),
                  "drop --%spublishservice and --%spublishStatusAddress" % (p, p)),
    )


def analyse(state: ClusterState, workload: Obj, container: Obj, pods: list[Obj]) -> list[AnalysedController]:
    """One AnalysedController per provider that reads Ingresses (each writes status on its own)."""
    ns = str(meta(workload).get("namespace"))
    name = str(meta(workload).get("name"))
    flags = parse_args(container_argv(container, ns))
    spec = pod_template(workload)
    sa = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    svc = workload_service(state, workload)
    ready = [p for p in pods if pod_running_ready(p)]
    base = {"namespace": ns, "name": name, "kind": str(workload.get("kind")), "pods": [key_of(p) for p in pods],
            "ready": [key_of(p) for p in ready], "service_account": sa,
            "service": str(meta(svc).get("name")) if svc else name,
            # No leader election: every replica writes, each on every event it sees.
            "settings": {"service_account": sa, "writes": "on every event, every replica (no leader election)",
                         "field_manager": FIELD_MANAGER}}
    out = []
    if INGRESS in flags:
        out.append(_ingress_provider(state, workload, flags, base))
    if NGINX in flags:
        out.append(_nginx_provider(state, workload, flags, base))
    return out


def on_duplicate(a: Any, b: Any) -> str:
    """Two Ingresses it serves route the same host and path (ingress_conflicts' Routes)."""
    return ("Traefik: undefined; both become routers with the same rule and so the same priority (the rule's length), "
            "and which one answers follows a map range and an unstable sort, so it can change at any reload and "
            "differ between replicas (backends %s and %s)" % (a.backend, b.backend))


# client.go:292 and ingress-nginx/client.go:307, at info (the chart's default level), as the chart's
# default "common" format prints it: in colour (log.noColor is false), and with the source file
# only at debug level, e.g. (colours removed)
# `2026-11-24T23:45:54Z INF Updated ingress status ingress=none namespace=dta` - no address in it.
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_UPDATED = re.compile(r"^(?P<when>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2}))\s+INF\s+"
                      r"(?:\S*/provider/kubernetes/(?P<provider>ingress|ingress-nginx)/client\.go:\d+ > )?"
                      r"Updated ingress status ingress=(?P<ingress>\S+) namespace=(?P<namespace>\S+)")


def provider_of_line(line: str) -> str | None:
    """The provider that logged a status line, when the line names its source file (debug level)."""
    m = _UPDATED.match(_ANSI.sub("", line).strip())
    if m is None or m.group("provider") is None:
        return None
    return "kubernetesingressnginx" if m.group("provider") == "ingress-nginx" else "kubernetes"


def status_log(line: str, year: int) -> tuple[dt.datetime | None, str, str, None] | None:
    """One "Updated ingress status" line of either provider: (when, namespace, ingress, None)."""
    m = _UPDATED.match(_ANSI.sub("", line).strip())
    if m is None:
        return None
    try:
        when: dt.datetime | None = dt.datetime.fromisoformat(m.group("when").replace("Z", "+00:00"))
    except ValueError:
        when = None
    return when, m.group("namespace"), m.group("ingress"), None
