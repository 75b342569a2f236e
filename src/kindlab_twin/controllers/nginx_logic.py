"""ingress-nginx controller v1.15.1 behaviour as pure functions (no store writes).

Sources read (kubernetes/ingress-nginx tag controller-v1.15.1):
- pkg/flags/flags.go: flag names, types and defaults; pflag parsing (`--f=v`, `--f v`,
  bools `--f`/`--f=false`; unknown flag → exit 2); --publish-service and
  --publish-status-address are mutually exclusive (fatal).
- cmd/nginx/main.go: a missing --publish-service Service is fatal at start (line 89), a
  missing --watch-namespace namespace too (96); if IngressClasses cannot be listed (403) it
  warns (111) and sets IgnoreIngressClass.
- internal/ingress/controller/store/store.go: GetIngressClass (ingressClassName → lister of
  IngressClasses whose spec.controller == --controller-class, or whose name == --ingress-class
  with --ingress-class-by-name; else annotation kubernetes.io/ingress.class == --ingress-class;
  else "_" with --watch-ingress-without-class); the update handler skips the class check when
  IgnoreIngressClass; ListIngresses sorts by creationTimestamp (ties: ns/name descending).
- internal/ingress/status/status.go: runningAddresses, statusAddressFromService,
  standardizeLoadBalancerIngresses, updateStatus/ingressSliceEqual (only IP and Hostname
  compared), the "updating Ingress status" log line (status.go:311), Shutdown.
- internal/k8s/main.go GetNodeIPs: ExternalIPs unless none or --report-node-internal-ip-address.
- internal/ingress/controller/status.go: Lease lock named --election-id in the pod's namespace,
  identity = pod name, lease duration --election-ttl (30 s), retry period ttl/4.
- cmd/nginx/main.go: user agent `nginx-ingress-controller/<ver> ...`, so the API server's
  default field manager (user-agent prefix) is `nginx-ingress-controller`.
"""
from __future__ import annotations

import datetime as _dt
import ipaddress
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

from kindlab_twin.contract import Obj, Store

from .base import NODE, POD, SERVICE, pod_ready, pod_running

FIELD_MANAGER = "nginx-ingress-controller"
CONTROLLER_VERSION = "v1.15.1"
DEFAULT_CONTROLLER_CLASS = "k8s.io/ingress-nginx"
DEFAULT_ANNOTATION_VALUE = "nginx"
CLASS_ANNOTATION = "kubernetes.io/ingress.class"
KLOG_PID = 7  # dumb-init is PID 1; the controller is typically PID 7 in the real image's logs

_BOOL_FLAGS = frozenset("""
watch-ingress-without-class ingress-class-by-name profiling update-status update-status-on-shutdown
report-node-internal-ip-address version enable-ssl-passthrough disable-leader-election
disable-svc-external-name enable-annotation-validation enable-ssl-chain-completion enable-metrics
metrics-per-host metrics-per-undefined-host report-status-classes disable-catch-all disable-full-test
deep-inspect disable-sync-events enable-topology-aware-routing
logtostderr alsologtostderr add_dir_header skip_headers skip_log_headers one_output
""".split())
_VALUE_FLAGS = frozenset("""
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
_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}


class FlagError(Exception):
    """pflag parse failure: the binary prints the error and exits 2."""


@dataclass
class NginxConfig:
    ingress_class: str = DEFAULT_ANNOTATION_VALUE
    controller_class: str = DEFAULT_CONTROLLER_CLASS
    watch_without_class: bool = False
    ingress_class_by_name: bool = False
    publish_service: str = ""
    publish_status_address: str = ""
    watch_namespace: str = ""
    watch_namespace_selector: str = ""
    election_id: str = "ingress-controller-leader"
    election_ttl: float = 30.0
    update_status: bool = True
    update_status_on_shutdown: bool = True
    use_node_internal_ip: bool = False
    disable_leader_election: bool = False
    status_update_interval: int = 60
    http_port: int = 80
    https_port: int = 443
    raw: dict[str, str] = field(default_factory=dict)


def parse_duration(s: str) -> float:
    """Go time.ParseDuration for the units flags use (h, m, s, ms)."""
    total, pos = 0.0, 0
    units = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 0.001, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
    if s in ("0", ""):
        return 0.0
    for m in re.finditer(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)", s):
        if m.start() != pos:
            raise ValueError(s)
        total += float(m.group(1)) * units[m.group(2)]
        pos = m.end()
    if pos != len(s):
        raise ValueError(s)
    return total


def parse_args(argv: list[str]) -> dict[str, str]:
    """pflag semantics: `--name=value`, `--name value` (non-bool), `--bool` = true,
    single-letter shorthand only for klog's -v; positionals are skipped; `--` ends flags."""
    out: dict[str, str] = {}
    i = 0
    args = list(argv)
    if args and not args[0].startswith("-"):
        args = args[1:]  # the binary path (/nginx-ingress-controller) from the chart's args
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            break
        if not a.startswith("-") or a == "-":
            continue
        if a.startswith("--"):
            name, eq, value = a[2:].partition("=")
        else:
            name, eq, value = a[1:].partition("=")
            if name != "v":
                raise FlagError(f"unknown shorthand flag: '{name[:1]}' in {a}")
        if name in _BOOL_FLAGS:
            if not eq:
                value = "true"
            elif value not in _TRUE | _FALSE:
                raise FlagError(f'invalid argument "{value}" for "--{name}" flag: strconv.ParseBool: parsing "{value}": invalid syntax')
            out[name] = "true" if value in _TRUE else "false"
        elif name in _VALUE_FLAGS:
            if not eq:
                if i >= len(args):
                    raise FlagError(f"flag needs an argument: --{name}")
                value = args[i]
                i += 1
            out[name] = value
        else:
            raise FlagError(f"unknown flag: --{name}")
    return out


def config_from_args(argv: list[str]) -> NginxConfig:
    raw = parse_args(argv)
    cfg = NginxConfig(raw=raw)

    def b(k: str, default: bool) -> bool:
        return raw[k] == "true" if k in raw else default

    cfg.ingress_class = raw.get("ingress-class", cfg.ingress_class)
    cfg.controller_class = raw.get("controller-class", cfg.controller_class)
    cfg.watch_without_class = b("watch-ingress-without-class", False)
    cfg.ingress_class_by_name = b("ingress-class-by-name", False)
    cfg.publish_service = raw.get("publish-service", "")
    cfg.publish_status_address = raw.get("publish-status-address", "")
    cfg.watch_namespace = raw.get("watch-namespace", "")
    cfg.watch_namespace_selector = raw.get("watch-namespace-selector", "")
    cfg.election_id = raw.get("election-id", cfg.election_id)
    cfg.update_status = b("update-status", True)
    cfg.update_status_on_shutdown = b("update-status-on-shutdown", True)
    cfg.use_node_internal_ip = b("report-node-internal-ip-address", False)
    cfg.disable_leader_election = b("disable-leader-election", False)
    try:
        if "election-ttl" in raw:
            cfg.election_ttl = parse_duration(raw["election-ttl"])
        for k, attr in (("status-update-interval", "status_update_interval"), ("http-port", "http_port"),
                        ("https-port", "https_port")):
            if k in raw:
                setattr(cfg, attr, int(raw[k]))
    except ValueError as exc:
        raise FlagError(f"invalid argument: {exc}") from exc
    if cfg.election_ttl <= 0:  # flags.go: non-positive TTL falls back to 30s
        cfg.election_ttl = 30.0
    return cfg


def validate_config(cfg: NginxConfig) -> str | None:
    """flags.go ParseFlags errors (each is klog.Fatal in main)."""
    if cfg.publish_service and cfg.publish_status_address:
        return "flags --publish-service and --publish-status-address are mutually exclusive"
    if cfg.watch_namespace and cfg.watch_namespace_selector:
        return "flags --watch-namespace and --watch-namespace-selector are mutually exclusive"
    return None


def effective_interval(cfg: NginxConfig) -> int:
    # flags.go: intervals below 5 s are raised to 5 s
    return max(5, cfg.status_update_interval)


# --- class matching -------------------------------------------------------------------------

def our_class_names(ingress_classes: list[Obj], cfg: NginxConfig) -> set[str]:
    """Names the controller's IngressClass lister holds (store.go ingressClassEventHandler)."""
    out = set()
    for ic in ingress_classes:
        name = ic["metadata"]["name"]
        if (cfg.ingress_class_by_name and name == cfg.ingress_class) or \
                (ic.get("spec") or {}).get("controller") == cfg.controller_class:
            out.add(name)
    return out


def ingress_class_of(ing: Obj, cfg: NginxConfig, our_classes: set[str], ignore_ingress_class: bool) -> str | None:
    """store.go GetIngressClass: the class name it accepts, or None when it ignores the Ingress.
    Note: an ingressClassName that is not ours is an error; it never falls back to the
    annotation (unless IgnoreIngressClass, when ingressClassName is not looked at)."""
    name = (ing.get("spec") or {}).get("ingressClassName")
    if not ignore_ingress_class and name is not None:
        return name if name in our_classes else None
    ann = (ing.get("metadata", {}).get("annotations") or {})
    if CLASS_ANNOTATION in ann:
        return ann[CLASS_ANNOTATION] if ann[CLASS_ANNOTATION] == cfg.ingress_class else None
    if cfg.watch_without_class:
        return "_"
    return None


def selector_matches(selector: str, labels: dict[str, str]) -> bool:
    """A label selector string (k=v, k==v, k!=v, k, !k, k in (a,b), k notin (a,b))."""
    parts, depth, cur = [], 0, ""
    for ch in selector:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    for part in (p.strip() for p in parts if p.strip()):
        m = re.match(r"^([^\s!=]+)\s+(in|notin)\s*\((.*)\)$", part)
        if m:
            vals = {v.strip() for v in m.group(3).split(",")}
            if (labels.get(m.group(1)) in vals) != (m.group(2) == "in"):
                return False
            continue
        if part.startswith("!"):
            if part[1:].strip() in labels:
                return False
            continue
        if "=" not in part:
            if part not in labels:
                return False
            continue
        k, op, v = re.match(r"^([^!=]+?)\s*(==|!=|=)\s*(.*)$", part).groups()  # type: ignore[union-attr]
        if op in ("=", "==") and labels.get(k) != v:
            return False
        if op == "!=" and labels.get(k) == v:
            return False
    return True


def watched(namespace: str, cfg: NginxConfig, namespace_labels: dict[str, dict[str, str]] | None = None) -> bool:
    """--watch-namespace (informers scoped to it), or --watch-namespace-selector checked at
    event time against the namespace's labels (store.go watchedNamespace)."""
    if cfg.watch_namespace:
        return namespace == cfg.watch_namespace
    if cfg.watch_namespace_selector:
        labels = (namespace_labels or {}).get(namespace)
        return labels is not None and selector_matches(cfg.watch_namespace_selector, labels)
    return True


@dataclass
class IngressTracker:
    """The informer + store.go event handlers: which Ingresses land in ListIngresses.
    Feed it every observed state of the watched Ingresses; it replays add/update/delete."""

    cfg: NginxConfig
    ignore_ingress_class: bool
    seen: dict[tuple[str, str], Obj] = field(default_factory=dict)
    accepted: dict[tuple[str, str], Obj] = field(default_factory=dict)
    events: list[str] = field(default_factory=list)

    def observe(self, ingresses: list[Obj], our_classes: set[str],
                namespace_labels: dict[str, dict[str, str]] | None = None) -> list[tuple[str, str]]:
        """Replay the informer events; returns the keys synced into the store this round
        (each gets a 'Sync' event upstream)."""
        synced: list[tuple[str, str]] = []
        current = {}
        for ing in ingresses:
            ns = ing["metadata"].get("namespace", "")
            if watched(ns, self.cfg, namespace_labels):
                current[(ns, ing["metadata"]["name"])] = ing
        for k, ing in current.items():
            old = self.seen.get(k)
            if old is None:
                self.on_add(k, ing, our_classes)
            elif old.get("metadata", {}).get("resourceVersion") != ing.get("metadata", {}).get("resourceVersion"):
                self.on_update(k, old, ing, our_classes)
            else:
                continue
            if self.accepted.get(k) is ing:
                synced.append(k)
        for k in list(self.seen):
            if k not in current:
                self.accepted.pop(k, None)
        self.seen = current
        return synced

    def on_add(self, k: tuple[str, str], ing: Obj, our: set[str]) -> None:
        cls = ingress_class_of(ing, self.cfg, our, self.ignore_ingress_class)
        if cls is None:
            self.events.append(f"ignore-add {k[0]}/{k[1]}")
            return
        self.events.append(f"add {k[0]}/{k[1]} class={cls}")
        self.accepted[k] = ing

    def on_update(self, k: tuple[str, str], old: Obj, cur: Obj, our: set[str]) -> None:
        if self.ignore_ingress_class:
            # store.go: with IgnoreIngressClass both errors stay nil, so any change syncs it
            self.accepted[k] = cur
            return
        # store.go UpdateFunc: errCur == nil (class valid now, old one invalid or anything
        # changed) → synced into the store; errOld == nil && errCur != nil → removed.
        # Both classes evaluated against the lister as it is now, so an Ingress whose
        # IngressClass appeared after its add is taken up at its next update.
        ok_old = ingress_class_of(old, self.cfg, our, False) is not None
        ok_cur = ingress_class_of(cur, self.cfg, our, False) is not None
        if ok_cur:
            self.accepted[k] = cur
        elif ok_old:
            self.accepted.pop(k, None)

    def list_ingresses(self) -> list[Obj]:
        return sort_ingresses(list(self.accepted.values()))


def sort_ingresses(ings: list[Obj]) -> list[Obj]:
    """store.go sortIngressSlice: creationTimestamp ascending; equal → ns/name descending."""
    def ns_name(i: Obj) -> str:
        return f"{i['metadata'].get('namespace', '')}/{i['metadata']['name']}"

    by_name = sorted(ings, key=ns_name, reverse=True)
    return sorted(by_name, key=lambda i: i["metadata"].get("creationTimestamp", ""))


# --- addresses --------------------------------------------------------------------------------

class PublishServiceError(Exception):
    pass


def name_or_ip(s: str) -> dict[str, str]:
    try:
        ipaddress.ip_address(s)
        return {"ip": s}
    except ValueError:
        return {"hostname": s}


def split_ns_name(key: str) -> tuple[str, str]:
    # k8s.ParseNameNS: "ns/name" exactly
    parts = key.split("/")
    if len(parts) != 2:
        raise PublishServiceError(f"invalid format (namespace/name) found in '{key}'")
    return parts[0], parts[1]


def address_from_service(svc: Obj | None, key: str) -> list[dict[str, str]]:
    ns, name = split_ns_name(key)
    if svc is None:
        raise PublishServiceError(f'services "{name}" not found')
    spec = svc.get("spec") or {}
    stype = spec.get("type", "ClusterIP")
    if stype == "ExternalName":
        return [{"hostname": spec.get("externalName", "")}]
    if stype == "ClusterIP":
        return [{"ip": spec.get("clusterIP", "")}]
    if stype == "NodePort":
        if spec.get("externalIPs") is None:
            return [{"ip": spec.get("clusterIP", "")}]
        return [{"ip": ip} for ip in spec["externalIPs"]]
    if stype == "LoadBalancer":
        addrs: list[dict[str, str]] = []
        for ing in (svc.get("status") or {}).get("loadBalancer", {}).get("ingress") or []:
            entry: dict[str, str] = {}
            if ing.get("hostname"):
                entry["hostname"] = ing["hostname"]
            if ing.get("ip"):
                entry["ip"] = ing["ip"]
            addrs.append(entry)
        for ip in spec.get("externalIPs") or []:
            if not any(a.get("ip") == ip or a.get("hostname") == ip for a in addrs):
                addrs.append({"ip": ip})
        return addrs
    raise PublishServiceError(f"unable to extract IP address/es from service {key}")


def node_ips(node: Obj | None, use_internal: bool) -> list[str]:
    if node is None:
        return []
    internal = [a["address"] for a in node.get("status", {}).get("addresses") or []
                if a.get("type") == "InternalIP" and a.get("address")]
    external = [a["address"] for a in node.get("status", {}).get("addresses") or []
                if a.get("type") == "ExternalIP" and a.get("address")]
    return internal if use_internal or not external else external


def selector_labels(pod_labels: dict[str, str]) -> dict[str, str]:
    return dict(pod_labels)


def running_addresses(cfg: NginxConfig, store: Store, pod_ns: str, pod_labels: dict[str, str],
                      can_get_nodes: bool = True, errors: list[str] | None = None) -> list[dict[str, str]]:
    """status.go runningAddresses: --publish-status-address > --publish-service > node IPs of
    the Running+Ready pods that carry all of this pod's labels. Without RBAC to get Nodes
    (a namespace-scoped Role cannot grant them) k8s.GetNodeIPs logs "Error getting node" and
    yields nothing for that pod, so node-IP mode then publishes an empty list."""
    if cfg.publish_status_address:
        return [name_or_ip(a) for a in re.split(r",\s*", cfg.publish_status_address)]
    if cfg.publish_service:
        ns, name = split_ns_name(cfg.publish_service)
        return address_from_service(store.get(SERVICE, ns, name), cfg.publish_service)
    addrs: list[dict[str, str]] = []
    for pod in store.list(POD, pod_ns, pod_labels):
        if not pod_running(pod) or not pod_ready(pod):
            continue
        node_name = pod.get("spec", {}).get("nodeName", "")
        if not can_get_nodes:
            if errors is not None:
                errors.append(node_name)
            continue
        node = store.get(NODE, None, node_name)
        for a in node_ips(node, cfg.use_node_internal_ip):
            if not any(x.get("ip") == a or x.get("hostname") == a for x in addrs):
                addrs.append(name_or_ip(a))
    return addrs


def standardize(addrs: list[dict[str, str]]) -> list[dict[str, str]]:
    """standardizeLoadBalancerIngresses (by IP) then lessLoadBalancerIngress (hostname, IP),
    both stable sorts, as updateStatus applies them."""
    out = sorted(addrs, key=lambda a: a.get("ip", ""))
    return sorted(out, key=lambda a: (a.get("hostname", ""), a.get("ip", "")))


def status_equal(current: list[dict[str, Any]] | None, new: list[dict[str, str]]) -> bool:
    cur = standardize([{k: v for k, v in (c or {}).items() if k in ("ip", "hostname")} for c in current or []])
    if len(cur) != len(new):
        return False
    return all(a.get("ip", "") == b.get("ip", "") and a.get("hostname", "") == b.get("hostname", "")
               for a, b in zip(cur, new))


# --- klog -------------------------------------------------------------------------------------

def klog_line(severity: str, where: str, msg: str, when: _dt.datetime | None = None) -> str:
    """klog text header: Lmmdd hh:mm:ss.uuuuuu threadid file:line] msg"""
    t = when or _dt.datetime.now(_dt.timezone.utc)
    return f"{severity}{t:%m%d %H:%M:%S}.{t.microsecond:06d} {KLOG_PID:7d} {where}] {msg}"


def klog_value(v: Any) -> str:
    """How klog renders a structured value: strings quoted, others as compact JSON."""
    if isinstance(v, str):
        return json.dumps(v)
    return json.dumps(v, separators=(",", ":"))


def klog_infos(where: str, msg: str, severity: str = "I", **kv: Any) -> str:
    parts = [json.dumps(msg)] + [f"{k}={klog_value(v)}" for k, v in kv.items()]
    return klog_line(severity, where, " ".join(parts))


def banner() -> list[str]:
    return [
        "-------------------------------------------------------------------------------",
        "NGINX Ingress controller",
        f"  Release:       {CONTROLLER_VERSION}",
        "  Build:         kindlab-twin",
        "  Repository:    https://github.com/kubernetes/ingress-nginx",
        "  nginx version: nginx/1.27.1",
        "",
        "-------------------------------------------------------------------------------",
        "",
    ]


def lb_status_value(entries: list[dict[str, Any]] | None) -> Any:
    """The Go value klog prints for a []IngressLoadBalancerIngress: nil → null."""
    if entries is None:
        return None
    return [{k: e[k] for k in ("ip", "hostname", "ports") if e.get(k)} for e in entries]


def env_hostname() -> str:
    return os.uname().nodename
