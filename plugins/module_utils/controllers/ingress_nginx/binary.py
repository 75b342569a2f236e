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

from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import (
    CANNOT_START,
    CLASS_ANNOTATION,
    PUBLISH_SERVICE_MISSING,
    AnalysedController,
    Problem,
    ClusterState,
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

NGINX_BINARY = "/nginx-ingress-controller"
NGINX_DEFAULT_ELECTION_ID = "ingress-controller-leader"
# The status period (--status-update-interval; flags.go: default 60, anything below 5 raised to 5).
STATUS_SYNC_SECONDS = 60
MIN_STATUS_UPDATE_INTERVAL = 5
# The field manager the API server records for its writes (user agent nginx-ingress-controller/<version>).
FIELD_MANAGER = "nginx-ingress-controller"

# The flags of flags.go (and klog's), by kind: bools take no separate value (`--flag` or
# `--flag=false`); ints and durations must parse; any other name is unknown, and pflag
# (ExitOnError) then exits 2, so the pod crash-loops.
_NGINX_BOOL_FLAGS = frozenset("""
watch-ingress-without-class ingress-class-by-name profiling update-status update-status-on-shutdown
report-node-internal-ip-address version enable-ssl-passthrough disable-leader-election
disable-svc-external-name enable-annotation-validation enable-ssl-chain-completion enable-metrics
metrics-per-host metrics-per-undefined-host report-status-classes disable-catch-all disable-full-test
deep-inspect disable-sync-events enable-topology-aware-routing
logtostderr alsologtostderr add_dir_header skip_headers skip_log_headers one_output
""".split())
_NGINX_VALUE_FLAGS = frozenset("""
apiserver-host certificate-authority kubeconfig default-backend-service ingress-class controller-class
configmap publish-service tcp-services-configmap udp-services-configmap sync-period watch-namespace
watch-namespace-selector default-ssl-certificate health-check-path health-check-timeout election-id
election-ttl annotations-prefix sync-rate-limit publish-status-address time-buckets length-buckets
size-buckets max-buckets bucket-factor exclude-socket-metrics monitor-max-batch-size http-port https-port
ssl-passthrough-proxy-port default-server-port healthz-port healthz-host validating-webhook
validating-webhook-certificate validating-webhook-key status-port stream-port internal-logger-address
profiler-port profiler-address status-update-interval shutdown-grace-period post-shutdown-grace-period
dynamic-configuration-retries maxmind-mirror maxmind-license-key maxmind-edition-ids
maxmind-retries-count maxmind-retries-timeout
v vmodule log_dir log_file log_file_max_size stderrthreshold log_backtrace_at
""".split())
_NGINX_INT_FLAGS = frozenset(("status-update-interval", "http-port", "https-port"))
_NGINX_DURATION_FLAGS = frozenset(("election-ttl",))
_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}
_DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001, "us": 1e-6, "\u00b5s": 1e-6, "ns": 1e-9}


def is_nginx_image(image: str) -> bool:
    """registry.k8s.io/ingress-nginx/controller or its -chroot variant, from any registry or mirror."""
    return re.search(r"(^|/)ingress-nginx/controller(-chroot)?$", image_repository(image)) is not None


def is_nginx(container: Obj) -> bool:
    argv = list(container.get("command") or []) + list(container.get("args") or [])
    return is_nginx_image(str(container.get("image") or "")) or (bool(argv) and argv[0] == NGINX_BINARY)


def parse_duration(text: str) -> float:
    """Go's time.ParseDuration, in seconds; ValueError when it would not parse."""
    if text in ("0", ""):
        return 0.0
    total, pos = 0.0, 0
    for m in re.finditer(r"(\d+(?:\.\d+)?)(ms|us|\u00b5s|ns|h|m|s)", text):
        if m.start() != pos:
            raise ValueError(text)
        total += float(m.group(1)) * _DURATION_UNITS[m.group(2)]
        pos = m.end()
    if pos != len(text):
        raise ValueError(text)
    return total


def _flag_value_error(name: str, value: str) -> str | None:
    try:
        if name in _NGINX_INT_FLAGS:
            int(value)
        elif name in _NGINX_DURATION_FLAGS:
            parse_duration(value)
    except ValueError:
        return 'invalid argument "%s" for "--%s" flag' % (value, name)
    return None


def parse_nginx_flags(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    """pflag as the binary parses its args: `--f=v`, `--f v` for value flags, `--bool` = true,
    the last occurrence wins, positionals are skipped, `--` ends the flags; a leading program
    path is skipped and the only shorthand is klog's -v. Returns (flags, errors): any error
    stops the binary at start (exit 2)."""
    flags: dict[str, str] = {}
    errors: list[str] = []
    args = argv[1:] if argv and not argv[0].startswith("-") else list(argv)
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            break
        if not arg.startswith("-") or arg == "-":
            continue
        name, eq, value = arg.lstrip("-").partition("=")
        if not arg.startswith("--") and name != "v":
            errors.append("unknown shorthand flag: '%s' in %s" % (name[:1], arg))
        elif name in _NGINX_BOOL_FLAGS:
            if eq and value not in _TRUE | _FALSE:
                errors.append('invalid argument "%s" for "--%s" flag' % (value, name))
            else:
                flags[name] = "false" if eq and value in _FALSE else "true"
        elif name not in _NGINX_VALUE_FLAGS:
            errors.append("unknown flag: --%s" % name)
        elif not eq and i >= len(args):
            errors.append("flag needs an argument: --%s" % name)
        else:
            if not eq:
                value = args[i]
                i += 1
            problem = _flag_value_error(name, value)
            if problem:
                errors.append(problem)
            else:
                flags[name] = value
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
    election_ttl: float
    update_status_on_shutdown: bool
    disable_leader_election: bool
    http_port: int
    default_backend_service: str

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def nginx_settings(flags: dict[str, str]) -> NginxSettings:
    """flags.go defaults for whatever the args leave out (flags as parse_nginx_flags kept them)."""
    def flag(name: str, default: bool) -> bool:
        return flags[name] == "true" if name in flags else default

    ttl = parse_duration(flags.get("election-ttl", "30s"))
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
        # flags.go: an interval below 5 s is raised to 5 s; a TTL that is not positive falls back to 30 s.
        sync_period=max(MIN_STATUS_UPDATE_INTERVAL, int(flags.get("status-update-interval", STATUS_SYNC_SECONDS))),
        election_ttl=ttl if ttl > 0 else 30.0,
        update_status_on_shutdown=flag("update-status-on-shutdown", True),
        disable_leader_election=flag("disable-leader-election", False),
        http_port=int(flags.get("http-port", "80")),
        default_backend_service=flags.get("default-backend-service", ""),
    )


def fatal_flag_errors(settings: NginxSettings) -> list[str]:
    """flags.go ParseFlags errors (each a klog.Fatal in main: exit 255)."""
    out = []
    if settings.publish_service and settings.publish_status_address:
        out.append("flags --publish-service and --publish-status-address are mutually exclusive")
    if settings.watch_namespace and settings.watch_namespace_selector:
        out.append("flags --watch-namespace and --watch-namespace-selector are mutually exclusive")
    return out


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


def publish_service_key(text: str) -> tuple[str, str] | None:
    """k8s.ParseNameNS: exactly "namespace/name", else None (the binary's start-up fails)."""
    parts = text.split("/")
    return (parts[0], parts[1]) if len(parts) == 2 else None


def service_entries(svc: Obj) -> tuple[list[dict[str, str]], bool]:
    """status.go statusAddressFromService: the status entries ({ip} / {hostname}) it publishes
    for its Service, and whether they come from a LoadBalancer (empty while it is pending;
    it never falls back to node addresses)."""
    spec = svc.get("spec") or {}
    stype = spec.get("type") or "ClusterIP"
    if stype == "ExternalName":
        return [{"hostname": str(spec.get("externalName", ""))}], False
    if stype == "ClusterIP" or (stype == "NodePort" and spec.get("externalIPs") is None):
        return [{"ip": str(spec.get("clusterIP", ""))}], False
    if stype == "NodePort":
        return [{"ip": str(ip)} for ip in spec["externalIPs"]], False
    if stype != "LoadBalancer":
        return [], False
    out: list[dict[str, str]] = []
    for ing in ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []:
        out.append({key: str(ing[key]) for key in ("hostname", "ip") if ing.get(key)})
    for ip in spec.get("externalIPs") or []:
        if not any(ip in entry.values() for entry in out):
            out.append({"ip": str(ip)})
    return out, True


def service_addresses(svc: Obj) -> tuple[list[str], bool]:
    """service_entries as text: each entry's hostname, then its IP."""
    entries, from_lb = service_entries(svc)
    return [entry[key] for entry in entries for key in ("hostname", "ip") if entry.get(key)], from_lb


def standardize_entries(entries: list[dict[str, str]]) -> list[dict[str, str]]:
    """updateStatus: standardizeLoadBalancerIngresses (by IP), then lessLoadBalancerIngress
    (hostname, then IP); both stable sorts, so IP-only entries come first, by IP text."""
    by_ip = sorted(entries, key=lambda e: e.get("ip", ""))
    return sorted(by_ip, key=lambda e: (e.get("hostname", ""), e.get("ip", "")))


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


def analyse_nginx(state: ClusterState, workload: Obj, container: Obj, pods: list[Obj]) -> AnalysedController:
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
    problems = [Problem("cannot start (CrashLoopBackOff): " + e, CANNOT_START) for e in errors + fatal_flag_errors(s)]
    ready = [p for p in pods if pod_running_ready(p)]
    from_lb = False
    address: list[str] | None
    if s.publish_status_address:
        source, detail = "status-address", "--publish-status-address=%s" % s.publish_status_address
        address = [a for a in re.split(r",\s*", s.publish_status_address) if a]
    elif s.publish_service:
        source, detail = "service", "--publish-service=%s" % s.publish_service
        key = publish_service_key(s.publish_service)
        svc = state.service(*key) if key else None
        if svc is None:
            problems.append(Problem("cannot start (CrashLoopBackOff): its publish Service %s does not exist (a missing "
                                    "publish Service is fatal at start-up and never falls back to node addresses)"
                                    % s.publish_service, PUBLISH_SERVICE_MISSING,
                                    ("controller.service.enabled: true (or fix controller.publishService.pathOverride)",
                                     "--publish-service=<namespace>/<an existing Service>")))
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
    if any(p.finding in (CANNOT_START, PUBLISH_SERVICE_MISSING) for p in problems):
        address = None
    elif not s.update_status:
        address = None
        problems.append(Problem("--update-status=false: it never writes Ingress status"))
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
    return AnalysedController(
        type="ingress_nginx", namespace=ns, name=name, kind=str(workload.get("kind")),
        pods=[key_of(p) for p in pods], ready_pods=[key_of(p) for p in ready], settings=settings,
        watch=watch, publish_source=source, publish_detail=detail, address=address, address_from_lb=from_lb,
        faults=problems, claim=lambda ing: nginx_claim(ing, s, our, ignore_class), watches_namespace=watches,
        class_keys=keys, sync_period=s.sync_period,
        scope_words="watches every namespace (no --watch-namespace)" if watch == "all namespaces" else "",
        publish_words="has no --publish-service, so it writes the node addresses %s of its pods" if source == "node-addresses" else "",
        scope_fix=("controller.scope.enabled: true", "--watch-namespace=$(POD_NAMESPACE)"),
        publish_fix=("controller.publishService.enabled: true", "--publish-service=$(POD_NAMESPACE)/%s" % svc_name),
        class_fix=("give it its own class (controller.ingressClass / ingressClassResource) so it stops claiming the Ingress",
                   "--ingress-class / --controller-class of its own"),
        # Without RBAC to list IngressClasses it takes up any Ingress of its scope at its next
        # update, whatever its class: the fix is that RBAC, not a class of its own.
        stop_fix=("rbac.scope: false (a ClusterRole that may list IngressClasses: it then honours spec.ingressClassName; "
                  "controller.scope.enabled stays true)", "RBAC for its ServiceAccount %s/%s to list ingressclasses"
                  % (ns, sa)) if ignore_class else ("", ""),
    )


# ---------------------------------------------------------------- a duplicate host/path


def created(ingress: Obj) -> str:
    return str(meta(ingress).get("creationTimestamp") or "")


def sort_ingresses(ingresses: list[Obj]) -> list[Obj]:
    """store.go ListIngresses (sortIngressSlice): creationTimestamp ascending; equal timestamps
    (one-second precision) by namespace/name *descending* (`return in > jn`)."""
    return sorted(sorted(ingresses, key=key_of, reverse=True), key=created)


def oldest(a: Obj, b: Obj) -> Obj:
    """The Ingress it keeps for a duplicate host+path: the first in its sorted list."""
    return sort_ingresses([a, b])[0]


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


CANARY = "nginx.ingress.kubernetes.io/canary"


def companion(a: Obj, b: Obj) -> str:
    """A canary Ingress (annotation canary: "true") beside a main one with the same host+path is merged
    into the main's location as its alternative backend (the canary-by-* and canary-weight annotations
    decide which requests go there): not a rival. Two canaries, or none, are rivals as usual."""
    def is_canary(i: Obj) -> bool:
        return str(((i.get("metadata") or {}).get("annotations") or {}).get(CANARY, "")).lower() == "true"
    if is_canary(a) == is_canary(b):
        return ""
    canary, main = (a, b) if is_canary(a) else (b, a)
    return "ingress-nginx: %s is a canary of %s (annotation canary), an alternative backend of the same location, " \
           "not a rival" % (key_of(canary), key_of(main))


# ---------------------------------------------------------------- its data plane's routing
# Server and location selection as the nginx.conf it generates behaves:
# - server: exact host > wildcard host (`*.example.com` = exactly one extra label) > the
#   catch-all server of rules without a host; a matched host's server never falls back;
# - location: Exact paths first, then the longest Prefix (by path element) or
#   ImplementationSpecific (a plain string prefix: nginx's `location /foo`) path;
# - one host+path in several Ingresses: the first in sort_ingresses order keeps it.


def host_matches(rule_host: str, host: str) -> bool:
    rule_host, host = rule_host.lower(), host.lower()
    if rule_host.startswith("*."):
        suffix = rule_host[1:]
        return host.endswith(suffix) and "." not in host[: -len(suffix)] and len(host) > len(suffix)
    return rule_host == host


def prefix_match(prefix: str, path: str) -> bool:
    """Prefix pathType: element-wise ("/foo" matches /foo, /foo/, /foo/bar, not /foobar)."""
    if prefix in ("", "/"):
        return True
    p = prefix.rstrip("/")
    return path == p or path.startswith(p + "/")


@dataclass
class Route:
    ingress: Obj
    path: str
    path_type: str
    backend: dict[str, Any]


def select_route(ingresses: list[Obj], host: str, path: str) -> Route | None:
    """The Ingress path that answers a request for host (a port is ignored) and path, or None
    (its default backend answers 404)."""
    host = host.split(":", 1)[0] if not host.startswith("[") else host
    rules: list[tuple[str, Obj, dict[str, Any]]] = []
    for ing in sort_ingresses(ingresses):
        for rule in (ing.get("spec") or {}).get("rules") or []:
            rules.append((rule.get("host") or "", ing, rule))
    exact = [r for r in rules if r[0] and not r[0].startswith("*") and host_matches(r[0], host)]
    wild = [r for r in rules if r[0].startswith("*") and host_matches(r[0], host)]
    server = exact or wild or [r for r in rules if not r[0]]
    candidates: list[Route] = []
    seen: set[tuple[str, str]] = set()
    for _host, ing, rule in server:
        for p in (rule.get("http") or {}).get("paths") or []:
            ptype = p.get("pathType", "ImplementationSpecific")
            ppath = p.get("path") or "/"
            if (ppath, ptype) in seen:
                continue  # the first Ingress keeps the location
            seen.add((ppath, ptype))
            candidates.append(Route(ing, ppath, ptype, p.get("backend") or {}))
    exact_hits = [r for r in candidates if r.path_type == "Exact" and r.path == path]
    if exact_hits:
        return exact_hits[0]
    hits = [r for r in candidates if r.path_type != "Exact" and (
        prefix_match(r.path, path) if r.path_type == "Prefix" else path.startswith(r.path))]
    if hits:
        return max(hits, key=lambda r: len(r.path))
    if not server:
        for ing in sort_ingresses(ingresses):  # spec.defaultBackend of a catch-all Ingress
            db = (ing.get("spec") or {}).get("defaultBackend")
            if db and not (ing.get("spec") or {}).get("rules"):
                return Route(ing, "/", "Prefix", db)
    return None


# ---------------------------------------------------------------- its status log line

# klog header: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg
_KLOG = re.compile(r"^[IWEF](\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.(\d{6})\s+\d+ [^\]]*\] (.*)$")
# status.go:311 logs this message (structured: namespace, ingress, currentValue, newValue).
STATUS_LOG_MESSAGE = "updating Ingress status"
_UPDATING = '"%s"' % STATUS_LOG_MESSAGE
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
