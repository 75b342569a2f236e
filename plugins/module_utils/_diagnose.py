# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Predict, from the cluster's objects alone, which ingress controllers will write each
Ingress's status and with what address, and flag more than one writer before it flaps.

Everything is read the way the controller binary would see it: the workload's container
args (pflag semantics, `$(VAR)` expanded like the kubelet), its ServiceAccount's RBAC,
the IngressClasses, the publish Service and the nodes under its pods. The analysis is
pure (`analyse`) over a `ClusterState` snapshot; `run` only lists the objects once.

Controller types live in ANALYSERS (detect + analyse); ingress-nginx is the first. The
ingress-nginx rules below are those of controller v1.15.1 (pkg/flags/flags.go,
cmd/nginx/main.go, internal/ingress/controller/store/store.go,
internal/ingress/status/status.go, internal/k8s/main.go); see DESIGN.md.
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils._select import Selection, key_of, label_selector_matches, list_ingresses

Obj = dict[str, Any]

ERROR = "error"
WARNING = "warning"

# ---------------------------------------------------------------- cluster snapshot


@dataclass
class ClusterState:
    """Every object the analysis reads, listed once."""

    workloads: list[Obj] = field(default_factory=list)  # Deployments and DaemonSets
    pods: list[Obj] = field(default_factory=list)
    services: list[Obj] = field(default_factory=list)
    nodes: list[Obj] = field(default_factory=list)
    namespaces: list[Obj] = field(default_factory=list)
    ingress_classes: list[Obj] = field(default_factory=list)
    cluster_roles: list[Obj] = field(default_factory=list)
    cluster_role_bindings: list[Obj] = field(default_factory=list)
    ingresses: list[Obj] = field(default_factory=list)  # the selected ones

    def service(self, namespace: str, name: str) -> Obj | None:
        return next((s for s in self.services if _meta(s).get("namespace") == namespace and _meta(s).get("name") == name), None)

    def node(self, name: str) -> Obj | None:
        return next((n for n in self.nodes if _meta(n).get("name") == name), None)

    def namespace_labels(self, name: str) -> dict[str, str] | None:
        ns = next((n for n in self.namespaces if _meta(n).get("name") == name), None)
        return None if ns is None else dict(_meta(ns).get("labels") or {})


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


# ---------------------------------------------------------------- generic helpers


def expand_env(value: str, env: dict[str, str]) -> str:
    """The kubelet's $(VAR) expansion in args: known variables are replaced, `$$` escapes,
    unknown references stay as written."""
    def repl(m: re.Match[str]) -> str:
        if m.group(0) == "$$":
            return "$"
        return env.get(m.group(1), m.group(0))

    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_.-]*)\)", repl, value)


def container_env(container: Obj, namespace: str, pod_name: str = "") -> dict[str, str]:
    """Literal env values and the downward-API fields args refer to (POD_NAMESPACE, POD_NAME)."""
    env: dict[str, str] = {}
    for item in container.get("env") or []:
        name = item.get("name")
        if not name:
            continue
        if "value" in item and item["value"] is not None:
            env[name] = expand_env(str(item["value"]), env)
            continue
        path = (((item.get("valueFrom") or item.get("value_from") or {}).get("fieldRef") or {}).get("fieldPath"))
        if path == "metadata.namespace":
            env[name] = namespace
        elif path == "metadata.name" and pod_name:
            env[name] = pod_name
    return env


def container_argv(container: Obj, namespace: str) -> list[str]:
    """command + args with $(VAR) expanded: what the process gets."""
    env = container_env(container, namespace)
    return [expand_env(str(a), env) for a in list(container.get("command") or []) + list(container.get("args") or [])]


def pod_template(workload: Obj) -> Obj:
    return ((workload.get("spec") or {}).get("template") or {}).get("spec") or {}


def selector_matches(selector: Obj | None, labels: dict[str, str]) -> bool:
    """A LabelSelector object (matchLabels + matchExpressions); an empty one matches nothing,
    as for workloads."""
    if not selector:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, vals = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in vals:
            return False
        if op == "NotIn" and labels.get(key) in vals:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def pod_running_ready(pod: Obj) -> bool:
    status = pod.get("status") or {}
    if status.get("phase") != "Running" or _meta(pod).get("deletionTimestamp"):
        return False
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])


# ---------------------------------------------------------------- RBAC

_SA_GROUPS = ("system:serviceaccounts", "system:authenticated")


def _subject_is(subject: Obj, namespace: str, service_account: str) -> bool:
    kind = subject.get("kind")
    if kind == "ServiceAccount":
        return subject.get("name") == service_account and subject.get("namespace") == namespace
    if kind == "Group":
        return subject.get("name") in _SA_GROUPS + ("system:serviceaccounts:%s" % namespace,)
    return kind == "User" and subject.get("name") == "system:serviceaccount:%s:%s" % (namespace, service_account)


def rule_allows(rule: Obj, group: str, resource: str, verb: str) -> bool:
    """One PolicyRule granting verb on every object of group/resource (resourceNames narrow it)."""
    groups, resources, verbs = rule.get("apiGroups") or [], rule.get("resources") or [], rule.get("verbs") or []
    return (("*" in groups or group in groups) and ("*" in resources or resource in resources)
            and ("*" in verbs or verb in verbs) and not rule.get("resourceNames"))


def can_cluster_wide(state: ClusterState, namespace: str, service_account: str, group: str, resource: str, verb: str) -> bool:
    """Whether the ServiceAccount may `verb` a cluster-scoped resource: only a
    ClusterRoleBinding to a ClusterRole grants that (a Role, or a RoleBinding even to a
    ClusterRole, is confined to its namespace and cannot cover cluster-scoped kinds)."""
    roles = {_meta(r).get("name"): r for r in state.cluster_roles}
    for crb in state.cluster_role_bindings:
        if not any(_subject_is(s, namespace, service_account) for s in crb.get("subjects") or []):
            continue
        ref = crb.get("roleRef") or {}
        if ref.get("kind") != "ClusterRole":
            continue
        if ref.get("name") == "cluster-admin":
            return True
        role = roles.get(ref.get("name"))
        if role and any(rule_allows(r, group, resource, verb) for r in role.get("rules") or []):
            return True
    return False


# ---------------------------------------------------------------- results


@dataclass
class Controller:
    """One controller workload as the analysis understands it."""

    type: str
    namespace: str
    name: str
    kind: str  # Deployment / DaemonSet
    pods: list[str]
    ready_pods: list[str]
    settings: dict[str, Any]  # type-specific, returned as is
    watch: str  # "all namespaces", "namespace one", "namespaces matching ..."
    publish_source: str  # status-address / service / node-addresses
    publish_detail: str
    address: list[str] | None  # None: it writes nothing (cannot start, update-status off)
    address_from_lb: bool
    problems: list[str] = field(default_factory=list)
    # type-specific callables (not returned)
    claim: Callable[[Obj], tuple[str, str]] | None = None
    watches_namespace: Callable[[str], bool] | None = None
    class_keys: list[str] = field(default_factory=list)  # what it claims, for collisions
    sync_period: int = 60
    scope_fix: tuple[str, str] = ("", "")
    publish_fix: tuple[str, str] = ("", "")

    @property
    def ref(self) -> str:
        return "%s/%s" % (self.namespace, self.name)

    @property
    def cluster_scoped(self) -> bool:
        return self.watch == "all namespaces"

    def as_dict(self) -> dict[str, Any]:
        return {
            "controller": self.ref, "type": self.type, "kind": self.kind, "pods": self.pods,
            "ready_pods": self.ready_pods, "watch": self.watch, "publish_source": self.publish_source,
            "publish_detail": self.publish_detail, "address": self.address,
            "settings": self.settings, "problems": self.problems,
        }


@dataclass
class Finding:
    kind: str
    severity: str
    message: str
    ingress: str | None = None
    controllers: list[str] = field(default_factory=list)
    culprits: list[str] = field(default_factory=list)
    fix: dict[str, Any] = field(default_factory=dict)
    period: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "severity": self.severity, "message": self.message,
                               "controllers": self.controllers}
        for key in ("ingress", "period"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.culprits:
            out["culprits"] = self.culprits
        if self.fix:
            out["fix"] = self.fix
        return out


# ---------------------------------------------------------------- ingress-nginx

NGINX_IMAGE = "registry.k8s.io/ingress-nginx/controller"
NGINX_BINARY = "/nginx-ingress-controller"
NGINX_DEFAULT_INGRESS_CLASS = "nginx"
NGINX_DEFAULT_CONTROLLER_CLASS = "k8s.io/ingress-nginx"
NGINX_DEFAULT_ELECTION_ID = "ingress-controller-leader"
NGINX_STATUS_INTERVAL = 60  # status.go: updateInterval; flags.go raises anything below 5 s to 5 s
CLASS_ANNOTATION = "kubernetes.io/ingress.class"

# Boolean flags of flags.go (they take no separate value: `--flag` or `--flag=false`).
_NGINX_BOOL_FLAGS = frozenset("""
watch-ingress-without-class ingress-class-by-name profiling update-status update-status-on-shutdown
report-node-internal-ip-address version enable-ssl-passthrough disable-leader-election
disable-svc-external-name enable-annotation-validation enable-ssl-chain-completion enable-metrics
metrics-per-host metrics-per-undefined-host report-status-classes disable-catch-all disable-full-test
deep-inspect disable-sync-events enable-topology-aware-routing
logtostderr alsologtostderr add_dir_header skip_headers skip_log_headers one_output
""".split())
_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


def image_repository(image: str) -> str:
    """registry/path of an image reference, without its tag or digest."""
    name = image.split("@", 1)[0]
    head, _sep, last = name.rpartition("/")
    return (head + "/" if head else "") + last.split(":", 1)[0]


def is_nginx(container: Obj) -> bool:
    repo = image_repository(str(container.get("image") or ""))
    argv = list(container.get("command") or []) + list(container.get("args") or [])
    return repo == NGINX_IMAGE or (bool(argv) and argv[0] == NGINX_BINARY)


def parse_nginx_flags(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """pflag as the binary parses its args: `--f=v`, `--f v` for value flags, `--bool` = true,
    the last occurrence wins; a leading program path is skipped. Returns (flags, errors)."""
    flags: dict[str, str] = {}
    errors: list[str] = []
    args = argv[1:] if argv and not argv[0].startswith("-") else list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            break
        if not arg.startswith("--"):
            continue
        name, eq, value = arg[2:].partition("=")
        if name in _NGINX_BOOL_FLAGS:
            if eq and value not in _TRUE | _FALSE:
                errors.append('invalid argument "%s" for "--%s" flag' % (value, name))
                continue
            flags[name] = "false" if eq and value in _FALSE else "true"
        elif eq:
            flags[name] = value
        elif i < len(args):
            flags[name] = args[i]
            i += 1
        else:
            errors.append("flag needs an argument: --%s" % name)
    return flags, errors


@dataclass(frozen=True)
class NginxSettings:
    ingress_class: str
    controller_class: str
    watch_without_class: bool
    ingress_class_by_name: bool
    election_id: str
    update_status: bool
    publish_service: str
    publish_status_address: str
    watch_namespace: str
    watch_namespace_selector: str
    internal_ip: bool
    sync_period: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def nginx_settings(flags: dict[str, str]) -> NginxSettings:
    """flags.go defaults for whatever the args leave out."""
    def flag(name: str, default: bool) -> bool:
        return flags[name] == "true" if name in flags else default

    try:
        period = max(5, int(flags.get("status-update-interval", NGINX_STATUS_INTERVAL)))
    except ValueError:
        period = NGINX_STATUS_INTERVAL
    return NginxSettings(
        ingress_class=flags.get("ingress-class", NGINX_DEFAULT_INGRESS_CLASS),
        controller_class=flags.get("controller-class", NGINX_DEFAULT_CONTROLLER_CLASS),
        watch_without_class=flag("watch-ingress-without-class", False),
        ingress_class_by_name=flag("ingress-class-by-name", False),
        election_id=flags.get("election-id", NGINX_DEFAULT_ELECTION_ID),
        update_status=flag("update-status", True),
        publish_service=flags.get("publish-service", ""),
        publish_status_address=flags.get("publish-status-address", ""),
        watch_namespace=flags.get("watch-namespace", ""),
        watch_namespace_selector=flags.get("watch-namespace-selector", ""),
        internal_ip=flag("report-node-internal-ip-address", False),
        sync_period=period,
    )


def nginx_our_classes(settings: NginxSettings, ingress_classes: list[Obj]) -> list[str]:
    """IngressClasses the controller's lister keeps: spec.controller == --controller-class,
    or (with --ingress-class-by-name) the one named --ingress-class."""
    out = []
    for ic in ingress_classes:
        name = _meta(ic).get("name")
        if (ic.get("spec") or {}).get("controller") == settings.controller_class or (
                settings.ingress_class_by_name and name == settings.ingress_class):
            out.append(str(name))
    return sorted(out)


def nginx_claim(ingress: Obj, settings: NginxSettings, our_classes: list[str], ignore_class: bool) -> tuple[str, str]:
    """store.go GetIngressClass plus the add/update handlers. Returns (claim, why) with
    claim "yes", "on_update" (ignored when added, taken up at its next update) or "no".
    An ingressClassName that is not ours never falls back to the annotation."""
    class_name = (ingress.get("spec") or {}).get("ingressClassName")
    annotation = (_meta(ingress).get("annotations") or {}).get(CLASS_ANNOTATION)
    if not ignore_class and class_name is not None:
        if class_name in our_classes:
            return "yes", "spec.ingressClassName %s is an IngressClass with spec.controller %s" % (class_name, settings.controller_class)
        return "no", "spec.ingressClassName %s is not one of its IngressClasses %s" % (class_name, our_classes or "[]")
    if annotation is not None:
        if annotation == settings.ingress_class:
            why = "annotation %s: %s matches --ingress-class=%s" % (CLASS_ANNOTATION, annotation, settings.ingress_class)
            if ignore_class and class_name is not None:
                why += " (spec.ingressClassName %s is ignored: it may not list IngressClasses)" % class_name
            return "yes", why
        why = "annotation %s: %s differs from --ingress-class=%s" % (CLASS_ANNOTATION, annotation, settings.ingress_class)
    elif settings.watch_without_class:
        return "yes", "no class and --watch-ingress-without-class"
    else:
        why = "no class annotation%s and no --watch-ingress-without-class" % (
            "" if class_name is not None else ", no spec.ingressClassName")
    if ignore_class:
        # store.go: with IgnoreIngressClass the update handler skips the class check altogether.
        return "on_update", ("%s%s, so it is skipped when added; but it may not list IngressClasses (IgnoreIngressClass), "
                             "and then its update handler skips the class check, so it takes the Ingress up at its next "
                             "update (a status write by another controller is one)"
                             % (why, " (spec.ingressClassName %s is ignored)" % class_name if class_name is not None else ""))
    return "no", why


def service_addresses(svc: Obj) -> tuple[list[str], bool]:
    """status.go statusAddressFromService: (addresses, from a LoadBalancer)."""
    spec = svc.get("spec") or {}
    stype = spec.get("type") or "ClusterIP"
    if stype == "ExternalName":
        return [str(spec.get("externalName", ""))], False
    if stype == "ClusterIP":
        return [str(spec.get("clusterIP", ""))], False
    if stype == "NodePort":
        if spec.get("externalIPs") is None:
            return [str(spec.get("clusterIP", ""))], False
        return [str(ip) for ip in spec["externalIPs"]], False
    if stype == "LoadBalancer":
        out: list[str] = []
        for ing in ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
            for key in ("hostname", "ip"):
                if ing.get(key):
                    out.append(str(ing[key]))
        for ip in spec.get("externalIPs") or []:
            if ip not in out:
                out.append(str(ip))
        return out, True
    return [], False


def node_addresses(node: Obj | None, internal: bool) -> list[str]:
    """internal/k8s GetNodeIPs: ExternalIP unless there is none or internal is asked for."""
    if node is None:
        return []
    addrs = (node.get("status") or {}).get("addresses") or []
    ext = [a["address"] for a in addrs if a.get("type") == "ExternalIP" and a.get("address")]
    inner = [a["address"] for a in addrs if a.get("type") == "InternalIP" and a.get("address")]
    return inner if internal or not ext else ext


def standardize(addresses: list[str]) -> list[str]:
    """updateStatus sorts hostnames and IPs (IPs first, by text) before writing."""
    def is_ip(a: str) -> bool:
        try:
            ipaddress.ip_address(a)
            return True
        except ValueError:
            return False

    uniq = list(dict.fromkeys(a for a in addresses if a))
    return sorted(uniq, key=lambda a: ("" if is_ip(a) else a, a if is_ip(a) else ""))


def _workload_service(state: ClusterState, workload: Obj) -> Obj | None:
    """A Service in the workload's namespace selecting its pods (the chart's controller Service)."""
    ns = _meta(workload).get("namespace")
    labels = ((workload.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
    for svc in state.services:
        sel = (svc.get("spec") or {}).get("selector") or {}
        if _meta(svc).get("namespace") == ns and sel and all(labels.get(k) == v for k, v in sel.items()):
            return svc
    return None


def analyse_nginx(state: ClusterState, workload: Obj, container: Obj, pods: list[Obj]) -> Controller:
    ns = str(_meta(workload).get("namespace"))
    name = str(_meta(workload).get("name"))
    flags, errors = parse_nginx_flags(container_argv(container, ns))
    s = nginx_settings(flags)
    spec = pod_template(workload)
    sa = spec.get("serviceAccountName") or spec.get("serviceAccount") or "default"
    may_list_classes = can_cluster_wide(state, ns, sa, "networking.k8s.io", "ingressclasses", "list")
    may_get_nodes = can_cluster_wide(state, ns, sa, "", "nodes", "get")
    ignore_class = not may_list_classes
    our = [] if ignore_class else nginx_our_classes(s, state.ingress_classes)
    problems = ["cannot start (CrashLoopBackOff): " + e for e in errors]
    if s.publish_service and s.publish_status_address:
        problems.append("cannot start (CrashLoopBackOff): flags --publish-service and --publish-status-address are mutually exclusive")
    if s.watch_namespace and s.watch_namespace_selector:
        problems.append("cannot start (CrashLoopBackOff): flags --watch-namespace and --watch-namespace-selector are mutually exclusive")
    ready = [p for p in pods if pod_running_ready(p)]
    from_lb = False
    address: list[str] | None
    if s.publish_status_address:
        source, detail = "status-address", "--publish-status-address=%s" % s.publish_status_address
        address = [a for a in re.split(r",\s*", s.publish_status_address) if a]
    elif s.publish_service:
        source, detail = "service", "--publish-service=%s" % s.publish_service
        svc_ns, _sep, svc_name = s.publish_service.partition("/")
        svc = state.service(svc_ns, svc_name) if _sep and "/" not in svc_name else None
        if svc is None:
            problems.append("cannot start (CrashLoopBackOff): its publish Service %s does not exist (a missing "
                            "publish Service is fatal at start-up and never falls back to node addresses)" % s.publish_service)
            address = []
        else:
            address, from_lb = service_addresses(svc)
            detail += " (type %s)" % ((svc.get("spec") or {}).get("type") or "ClusterIP")
    else:
        source = "node-addresses"
        kind_word = "InternalIP" if s.internal_ip else "ExternalIP, else InternalIP"
        detail = "no --publish-service: the node addresses (%s) of its Running+Ready pods" % kind_word
        address = []
        if not may_get_nodes:
            detail += "; its ServiceAccount %s/%s may not get Nodes, so the list is empty" % (ns, sa)
        else:
            for pod in ready:
                address += node_addresses(state.node((pod.get("spec") or {}).get("nodeName", "")), s.internal_ip)
    address = standardize(address)
    if problems and any(p.startswith("cannot start") for p in problems):
        address = None
    elif not s.update_status:
        address = None
        problems.append("--update-status=false: it never writes Ingress status")
    if s.watch_namespace:
        watch = "namespace %s" % s.watch_namespace
    elif s.watch_namespace_selector:
        watch = "namespaces matching %s" % s.watch_namespace_selector
    else:
        watch = "all namespaces"

    def watches(namespace: str) -> bool:
        if s.watch_namespace:
            return namespace == s.watch_namespace
        if s.watch_namespace_selector:
            labels = state.namespace_labels(namespace)
            return labels is not None and label_selector_matches(s.watch_namespace_selector, labels)
        return True

    svc = _workload_service(state, workload)
    svc_name = str(_meta(svc).get("name")) if svc else name
    settings = s.as_dict()
    settings.update(service_account=sa, may_list_ingress_classes=may_list_classes, ignore_ingress_class=ignore_class,
                    may_get_nodes=may_get_nodes, ingress_classes=our, leader_lease="%s/%s" % (ns, s.election_id))
    keys = ["controller-class %s" % s.controller_class, "annotation %s: %s" % (CLASS_ANNOTATION, s.ingress_class)]
    if s.watch_without_class:
        keys.append("ingresses without a class")
    return Controller(
        type="ingress_nginx", namespace=ns, name=name, kind=str(workload.get("kind")),
        pods=[key_of(p) for p in pods], ready_pods=[key_of(p) for p in ready], settings=settings,
        watch=watch, publish_source=source, publish_detail=detail, address=address, address_from_lb=from_lb,
        problems=problems, claim=lambda ing: nginx_claim(ing, s, our, ignore_class), watches_namespace=watches,
        class_keys=keys, sync_period=s.sync_period,
        scope_fix=("controller.scope.enabled: true", "--watch-namespace=$(POD_NAMESPACE)"),
        publish_fix=("controller.publishService.enabled: true", "--publish-service=$(POD_NAMESPACE)/%s" % svc_name),
    )


# ---------------------------------------------------------------- controller types


@dataclass(frozen=True)
class Analyser:
    """One controller type: how to recognise its container, and how to read it."""

    name: str
    detect: Callable[[Obj], bool]
    analyse: Callable[[ClusterState, Obj, Obj, list[Obj]], Controller]


ANALYSERS: list[Analyser] = [Analyser("ingress_nginx", is_nginx, analyse_nginx)]


def workload_pods(state: ClusterState, workload: Obj) -> list[Obj]:
    ns = _meta(workload).get("namespace")
    selector = (workload.get("spec") or {}).get("selector")
    return sorted((p for p in state.pods if _meta(p).get("namespace") == ns
                   and selector_matches(selector, dict(_meta(p).get("labels") or {}))), key=key_of)


def find_controllers(state: ClusterState) -> list[Controller]:
    """One Controller per workload (not per pod) with a recognised container."""
    found = []
    for workload in sorted(state.workloads, key=key_of):
        for container in pod_template(workload).get("containers") or []:
            analyser = next((a for a in ANALYSERS if a.detect(container)), None)
            if analyser is not None:
                found.append(analyser.analyse(state, workload, container, workload_pods(state, workload)))
                break
    return found


# ---------------------------------------------------------------- prediction


def claimers_of(ingress: Obj, controllers: list[Controller]) -> list[tuple[Controller, str, str]]:
    """(controller, claim, why) for every controller that claims this Ingress, now or at its next update."""
    ns = str(_meta(ingress).get("namespace"))
    out = []
    for c in controllers:
        if c.address is None or c.claim is None or c.watches_namespace is None or not c.watches_namespace(ns):
            continue
        claim, why = c.claim(ingress)
        if claim != "no":
            out.append((c, claim, why))
    return out


def writers_of(ingress: Obj, controllers: list[Controller]) -> list[tuple[Controller, str, str]]:
    """(controller, claim, why) for every controller that will write this Ingress's status."""
    out = claimers_of(ingress, controllers)
    # A controller that only takes the Ingress up at its next update writes once another one
    # has written it (that write is the update); with nobody else it waits for an edit.
    if not any(claim == "yes" for _c, claim, _why in out):
        return []
    return out


def servers_of(ingress: Obj, controllers: list[Controller]) -> list[str]:
    """Refs of the controllers that route this Ingress: it is in their scope and they claim it
    outright (whether or not they may write its status)."""
    ns = str(_meta(ingress).get("namespace"))
    return [c.ref for c in controllers
            if c.claim is not None and c.watches_namespace is not None and c.watches_namespace(ns)
            and c.claim(ingress)[0] == "yes"]


def culprits_of(ingress_ns: str, writers: list[Controller]) -> list[Controller]:
    """Rule: the Ingress's own namespace's controller is presumed its intended owner, so the
    culprits are the writers from other namespaces. Without a writer in its namespace, the
    culprits are those that do not publish a LoadBalancer address (node or fixed
    addresses are the usual accident); if that singles nobody out, all of them."""
    own = [w for w in writers if w.namespace == ingress_ns]
    if own:
        return [w for w in writers if w.namespace != ingress_ns]
    non_lb = [w for w in writers if not w.address_from_lb]
    return non_lb if 0 < len(non_lb) < len(writers) else list(writers)


def fmt(addresses: list[str] | None) -> str:
    return "[%s]" % ", ".join(addresses or [])


def _why_culprit(c: Controller, ingress: str, others: list[Controller]) -> str:
    scope = ("watches every namespace (no --watch-namespace)" if c.cluster_scoped
             else "watches %s" % c.watch)
    if c.publish_source == "node-addresses":
        pub = "has no --publish-service, so it writes the node addresses %s of its pods" % fmt(c.address)
    elif c.publish_source == "service":
        pub = "publishes %s, so it writes %s" % (c.publish_detail, fmt(c.address))
    else:
        pub = "has %s, so it writes %s" % (c.publish_detail, fmt(c.address))
    rivals = " and ".join("%s sets to %s" % (o.ref, fmt(o.address)) for o in others)
    return "controller %s %s and %s into %s, which %s" % (c.ref, scope, pub, ingress, rivals)


def _fix_for(culprits: list[Controller]) -> dict[str, Any]:
    values: list[str] = []
    args: list[str] = []
    for c in culprits:
        if c.cluster_scoped and c.scope_fix[0]:
            values.append("%s: %s" % (c.ref, c.scope_fix[0]))
            args.append("%s: %s" % (c.ref, c.scope_fix[1]))
        if c.publish_source == "node-addresses" and c.publish_fix[0]:
            values.append("%s: %s" % (c.ref, c.publish_fix[0]))
            args.append("%s: %s" % (c.ref, c.publish_fix[1]))
    if not values:
        values = ["%s: give it its own class (controller.ingressClass / ingressClassResource) so it stops claiming the Ingress" % c.ref
                  for c in culprits]
        args = ["%s: --ingress-class / --controller-class of its own" % c.ref for c in culprits]
    return {"chart_values": values, "args": args}


def predict(state: ClusterState, controllers: list[Controller]) -> tuple[dict[str, Any], list[Finding]]:
    ingresses: dict[str, Any] = {}
    findings: list[Finding] = []
    for ing in state.ingresses:
        key = key_of(ing)
        ns = str(_meta(ing).get("namespace"))
        writers = writers_of(ing, controllers)
        distinct = {tuple(c.address or []) for c, _claim, _why in writers}
        # Controllers sharing a leader Lease (same namespace and --election-id) never write
        # at the same time: the status follows whoever holds the Lease, it does not alternate.
        lease_groups = {str(c.settings.get("leader_lease", c.ref)) for c, _claim, _why in writers}
        shared_only = len(lease_groups) == 1 and len(writers) > 1
        flapping = len(distinct) > 1 and not shared_only
        # Nobody writes it now, but these take it up at its next update (an edit of the Ingress).
        waiting = [] if writers else claimers_of(ing, controllers)
        ingresses[key] = {
            "writers": [{"controller": c.ref, "address": c.address, "claim": claim, "why": why} for c, claim, why in writers],
            "flapping": flapping,
            "writers_after_update": [{"controller": c.ref, "address": c.address, "claim": claim, "why": why}
                                     for c, claim, why in waiting],
        }
        if not writers:
            findings.append(Finding("unclaimed", WARNING, "%s: no controller found in the cluster claims it, so nothing "
                                    "will publish its status (%s)" % (key, _unclaimed_why(ing, controllers)), ingress=key))
        if shared_only and len(distinct) > 1:
            findings.append(Finding(
                "shared_leader", WARNING,
                "%s: %s share the leader Lease %s and would write different addresses (%s): only the Lease holder "
                "writes, so the status changes whenever the leadership moves" % (
                    key, " and ".join(c.ref for c, _cl, _w in writers), lease_groups.pop(),
                    ", ".join("%s → %s" % (c.ref, fmt(c.address)) for c, _cl, _w in writers)),
                ingress=key, controllers=[c.ref for c, _cl, _w in writers]))
        if writers and not flapping and not writers[0][0].address:
            w = writers[0][0]
            findings.append(Finding("empty_address", WARNING, "%s: its writer%s %s publish%s an empty address (%s)" % (
                key, "s" if len(writers) > 1 else "", ", ".join(c.ref for c, _cl, _w in writers),
                "" if len(writers) > 1 else "es", w.publish_detail), ingress=key, controllers=[c.ref for c, _cl, _w in writers],
                fix={"chart_values": ["%s: %s" % (w.ref, w.publish_fix[0])], "args": ["%s: %s" % (w.ref, w.publish_fix[1])]}))
        if not flapping:
            continue
        ws = [c for c, _claim, _why in writers]
        culprits = culprits_of(ns, ws)
        others = [w for w in ws if w not in culprits]
        period = max(w.sync_period for w in ws)
        reasons = [_why_culprit(c, key, others or [w for w in ws if w is not c]) for c in culprits]
        leases: dict[str, list[str]] = {}
        for w in ws:
            leases.setdefault(str(w.settings.get("leader_lease", w.ref)), []).append(w.ref)
        for lease, refs in leases.items():
            if len(refs) > 1:
                reasons.append("%s share the leader Lease %s, so only the one holding it writes at a time"
                               % (" and ".join(refs), lease))
        late = [c.ref for c, claim, _why in writers if claim == "on_update"]
        if late:
            reasons.append("%s ignored it when it was added but takes it up at its next update (IgnoreIngressClass: "
                           "the update handler skips the class check)" % ", ".join(late))
        findings.append(Finding(
            "multiple_writers", ERROR,
            "%s: %d controllers write its status with different addresses: %s. Culprit: %s. %s"
            % (key, len(ws), ", ".join("%s → %s" % (w.ref, fmt(w.address)) for w in ws),
               ", ".join(c.ref for c in culprits), "; ".join(reasons)),
            ingress=key, controllers=[w.ref for w in ws], culprits=[c.ref for c in culprits], fix=_fix_for(culprits),
            period="each writer re-syncs every %s s (only its leader), so the status flips at each sync" % period,
        ))
    return ingresses, findings


def _unclaimed_why(ing: Obj, controllers: list[Controller]) -> str:
    ns = str(_meta(ing).get("namespace"))
    parts = []
    for c in controllers:
        if c.watches_namespace is not None and not c.watches_namespace(ns):
            parts.append("%s watches %s" % (c.ref, c.watch))
        elif c.claim is not None:
            parts.append("%s: %s" % (c.ref, c.claim(ing)[1]))
    return "; ".join(parts) or "no ingress controller found"


def controller_findings(controllers: list[Controller]) -> list[Finding]:
    out: list[Finding] = []
    for c in controllers:
        for p in c.problems:
            if "publish Service" in p:
                out.append(Finding("publish_service_missing", ERROR, "controller %s %s" % (c.ref, p), controllers=[c.ref],
                                   fix={"chart_values": ["%s: controller.service.enabled: true (or fix controller.publishService.pathOverride)" % c.ref],
                                        "args": ["%s: --publish-service=<namespace>/<an existing Service>" % c.ref]}))
            elif p.startswith("cannot start"):
                out.append(Finding("cannot_start", ERROR, "controller %s %s" % (c.ref, p), controllers=[c.ref]))
    for i, a in enumerate(controllers):
        for b in controllers[i + 1:]:
            shared = [k for k in a.class_keys if k in b.class_keys]
            if not shared or a.type != b.type or not _scopes_overlap(a, b):
                continue
            out.append(Finding(
                "class_collision", WARNING,
                "controllers %s and %s both claim %s in overlapping namespaces (%s; %s): Ingresses there are served "
                "and written by both" % (a.ref, b.ref, " and ".join(shared), a.watch, b.watch),
                controllers=[a.ref, b.ref],
            ))
    return out


def _scopes_overlap(a: Controller, b: Controller) -> bool:
    if a.cluster_scoped or b.cluster_scoped or a.watch == b.watch:
        return True
    # Selector scopes: overlap when either admits the other's single namespace.
    for x, y in ((a, b), (b, a)):
        if x.watch.startswith("namespace ") and y.watches_namespace is not None and y.watches_namespace(x.watch[len("namespace "):]):
            return True
    return not (a.watch.startswith("namespace ") or b.watch.startswith("namespace "))


def analyse(state: ClusterState) -> dict[str, Any]:
    """The whole diagnosis over a snapshot (pure)."""
    controllers = find_controllers(state)
    ingresses, findings = predict(state, controllers)
    findings = controller_findings(controllers) + findings
    return {
        "controllers": [c.as_dict() for c in controllers],
        "ingresses": ingresses,
        "findings": [f.as_dict() for f in findings],
        "passed": not any(f.severity == ERROR for f in findings),
    }


# ---------------------------------------------------------------- reading the cluster


def read_state(client: Any, selection: Selection) -> ClusterState:
    """List everything the analysis needs, cluster-wide (controllers may live anywhere)."""
    rbac = "rbac.authorization.k8s.io/v1"
    return ClusterState(
        workloads=client.list("apps/v1", "Deployment") + client.list("apps/v1", "DaemonSet"),
        pods=client.list("v1", "Pod"),
        services=client.list("v1", "Service"),
        nodes=client.list("v1", "Node"),
        namespaces=client.list("v1", "Namespace"),
        ingress_classes=client.list("networking.k8s.io/v1", "IngressClass"),
        cluster_roles=client.list(rbac, "ClusterRole"),
        cluster_role_bindings=client.list(rbac, "ClusterRoleBinding"),
        ingresses=list_ingresses(client, selection),
    )


def run(client: Any, selection: Selection) -> dict[str, Any]:
    return analyse(read_state(client, selection))
