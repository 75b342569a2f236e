# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""ingress-nginx: what the controller binary does with its args, read from a running workload.

The rules are those of controller v1.15.1 (pkg/flags/flags.go, cmd/nginx/main.go,
internal/ingress/controller/store/store.go, internal/ingress/status/status.go,
internal/k8s/main.go); where v1.11.0 (the project's kind machines) differs, _versions.py says
so and why no verdict changes. See DESIGN.md.
"""
from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.select import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import (
    CLASS_ANNOTATION,
    ClusterState,
    Controller,
    meta,
    workload_service,
    can_cluster_wide,
    container_argv,
    image_repository,
    ip_first,
    pod_running_ready,
    pod_template,
    watch_scope,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.ingress_nginx.values import (
    BINARY_DEFAULT_CONTROLLER_CLASS,
    BINARY_DEFAULT_INGRESS_CLASS,
)

Obj = dict[str, Any]

NGINX_IMAGE = "registry.k8s.io/ingress-nginx/controller"
NGINX_BINARY = "/nginx-ingress-controller"
NGINX_DEFAULT_ELECTION_ID = "ingress-controller-leader"
# The status period (--status-update-interval; flags.go: default 60, anything below 5 raised to 5).
STATUS_SYNC_SECONDS = 60
MIN_STATUS_UPDATE_INTERVAL = 5
# The field manager the API server records for its writes (user agent nginx-ingress-controller/<version>).
FIELD_MANAGER = "nginx-ingress-controller"

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
        period = max(MIN_STATUS_UPDATE_INTERVAL, int(flags.get("status-update-interval", STATUS_SYNC_SECONDS)))
    except ValueError:
        period = STATUS_SYNC_SECONDS
    return NginxSettings(
        ingress_class=flags.get("ingress-class", BINARY_DEFAULT_INGRESS_CLASS),
        controller_class=flags.get("controller-class", BINARY_DEFAULT_CONTROLLER_CLASS),
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
        name = meta(ic).get("name")
        if (ic.get("spec") or {}).get("controller") == settings.controller_class or (
                settings.ingress_class_by_name and name == settings.ingress_class):
            out.append(str(name))
    return sorted(out)


def nginx_claim(ingress: Obj, settings: NginxSettings, our_classes: list[str], ignore_class: bool) -> tuple[str, str]:
    """store.go GetIngressClass plus the add/update handlers. Returns (claim, why) with
    claim "yes", "on_update" (ignored when added, taken up at its next update) or "no".
    An ingressClassName that is not ours never falls back to the annotation."""
    class_name = (ingress.get("spec") or {}).get("ingressClassName")
    annotation = (meta(ingress).get("annotations") or {}).get(CLASS_ANNOTATION)
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
    return ip_first(list(dict.fromkeys(a for a in addresses if a)))


def analyse_nginx(state: ClusterState, workload: Obj, container: Obj, pods: list[Obj]) -> Controller:
    ns = str(meta(workload).get("namespace"))
    name = str(meta(workload).get("name"))
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
    # --watch-namespace wins over --watch-namespace-selector (both together cannot start, above).
    watch, watches = watch_scope(state, [s.watch_namespace] if s.watch_namespace else [],
                                 "" if s.watch_namespace else s.watch_namespace_selector)

    svc = workload_service(state, workload)
    svc_name = str(meta(svc).get("name")) if svc else name
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
        # Without RBAC to list IngressClasses it takes up any Ingress of its scope at its next
        # update, whatever its class: the fix is that RBAC, not a class of its own.
        stop_fix=("rbac.scope: false (a ClusterRole that may list IngressClasses: it then honours spec.ingressClassName; "
                  "controller.scope.enabled stays true)", "RBAC for its ServiceAccount %s/%s to list ingressclasses"
                  % (ns, sa)) if ignore_class else ("", ""),
    )


# ---------------------------------------------------------------- a duplicate host/path


def created(ingress: Obj) -> str:
    return str(meta(ingress).get("creationTimestamp") or "")


def oldest(a: Obj, b: Obj) -> Obj:
    """The controller sorts Ingresses by creationTimestamp and keeps the first for a duplicate
    host+path; equal timestamps (one-second precision) sort by namespace/name *descending*
    (sortIngressSlice: `return in > jn`)."""
    ta, tb = created(a), created(b)
    if ta != tb:
        return a if ta < tb else b
    return a if key_of(a) > key_of(b) else b


def on_duplicate(a: Any, b: Any) -> str:
    """Two Ingresses it serves route the same host and path (ingress_conflicts' Routes)."""
    if a.path != b.path:
        # Its duplicate check compares path strings before it appends the '/' to Prefix paths.
        return ("ingress-nginx: undefined; it compares path strings (%s vs %s), then configures both as "
                "location %s/ (the oldest-wins rule covers identical strings only)" % (a.path, b.path, a.path.rstrip("/")))
    old = oldest(a.ingress, b.ingress)
    same_time = created(a.ingress) == created(b.ingress)
    return "ingress-nginx: the oldest Ingress wins for an identical host+path: %s (created %s%s)" % (
        key_of(old), created(old), "; same second as the other, so the later namespace/name wins" if same_time else "")


# ---------------------------------------------------------------- its status log line

# klog header: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg
_KLOG = re.compile(r"^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6})\s+\d+ [^\]]*\] (.*)$")
_UPDATING = '"updating Ingress status"'
# Controllers before v1.0 (the seed's) log plain text, Go's %v of []LoadBalancerIngress:
# `updating Ingress one/test status from [{172.18.0.2 }] to [{100.64.0.0 }]` (each {IP Hostname}).
_UPDATING_TEXT = re.compile(r"updating Ingress (?P<ns>[^/\s]+)/(?P<name>\S+) status (?:from \[[^\]]*\] )?to \[(?P<new>[^\]]*)\]")


def _kv(text: str, key: str) -> Any:
    """A klog structured value `key=<json>` (strings quoted, lists as JSON)."""
    m = re.search(r"(?:^|\s)%s=" % re.escape(key), text)
    if m is None:
        return None
    try:
        return json.JSONDecoder().raw_decode(text[m.end():])[0]
    except ValueError:
        return None


def _text_addresses(text: str) -> tuple[str, ...]:
    """`{172.18.0.2 } { lb.example.com}` → the non-empty IPs and hostnames."""
    out = []
    for entry in re.findall(r"\{([^}]*)\}", text):
        ip, _sep, hostname = entry.partition(" ")
        if ip.strip() or hostname.strip():
            out.append(ip.strip() or hostname.strip())
    return tuple(sorted(out))


def status_log(line: str, year: int) -> tuple[dt.datetime | None, str, str, tuple[str, ...]] | None:
    """One status update line of status.go, or None: v1.x's structured
    `"updating Ingress status" namespace=.. ingress=.. newValue=[..]` or v0.x's text.
    Returns (when, namespace, ingress, the addresses written)."""
    text = _UPDATING_TEXT.search(line)
    if _UPDATING not in line and text is None:
        return None
    when = None
    m = _KLOG.match(line.strip())
    if m:
        mo, d, h, mi, s, us = (int(x) for x in m.groups()[:6])
        try:
            when = dt.datetime(year, mo, d, h, mi, s, us, tzinfo=dt.timezone.utc)
        except ValueError:
            when = None
    if text is not None and _UPDATING not in line:
        return when, text.group("ns"), text.group("name"), _text_addresses(text.group("new"))
    ns, name, new = _kv(line, "namespace"), _kv(line, "ingress"), _kv(line, "newValue")
    if not isinstance(ns, str) or not isinstance(name, str):
        return None
    addrs = tuple(sorted(str(e.get("ip") or e.get("hostname")) for e in new or [] if isinstance(e, dict) and (e.get("ip") or e.get("hostname"))))
    return when, ns, name, addrs
