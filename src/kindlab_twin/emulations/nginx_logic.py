"""ingress-nginx controller v1.15.1 behaviour as pure functions (no store writes).

The rules themselves (flags, claims, published addresses, sort order) are the collection's
ingress-nginx module (controllers/ingress_nginx/binary.py, through kindlab_twin.collection);
this module applies them to the twin's store and writes the binary's klog lines.

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
import json
import re
from dataclasses import dataclass, field
from typing import Any

from kindlab_twin.collection import base, nginx_binary, selection
from kindlab_twin.contract import Obj, Store

from .base import NODE, POD, SERVICE, pod_ready, pod_running

FIELD_MANAGER = nginx_binary.FIELD_MANAGER
CONTROLLER_VERSION = "v1.15.1"
CLASS_ANNOTATION = base.CLASS_ANNOTATION
KLOG_PID = 7  # dumb-init is PID 1; the controller is typically PID 7 in the real image's logs

# The binary's settings: the collection's ingress-nginx module parses the flags, as the
# diagnosis does, so what the twin runs is what the collection says it runs.
NginxConfig = nginx_binary.NginxSettings


class FlagError(Exception):
    """pflag parse failure: the binary prints the error and exits 2."""


def config_from_args(argv: list[str]) -> NginxConfig:
    flags, errors = nginx_binary.parse_nginx_flags(argv)
    if errors:
        raise FlagError(errors[0])
    return nginx_binary.nginx_settings(flags)


def validate_config(cfg: NginxConfig) -> str | None:
    """flags.go ParseFlags errors (each is klog.Fatal in main)."""
    fatal = nginx_binary.fatal_flag_errors(cfg)
    return fatal[0] if fatal else None


# --- class matching -------------------------------------------------------------------------

def our_class_names(ingress_classes: list[Obj], cfg: NginxConfig) -> set[str]:
    """Names the controller's IngressClass lister holds (store.go ingressClassEventHandler)."""
    return set(nginx_binary.nginx_our_classes(cfg, ingress_classes))


def claims(ing: Obj, cfg: NginxConfig, our_classes: set[str], ignore_ingress_class: bool) -> bool:
    """store.go GetIngressClass as the add handler applies it (the collection's nginx_claim:
    an Ingress it takes only at its next update is not taken when added)."""
    return nginx_binary.nginx_claim(ing, cfg, sorted(our_classes), ignore_ingress_class)[0] == "yes"


def watched(namespace: str, cfg: NginxConfig, namespace_labels: dict[str, dict[str, str]] | None = None) -> bool:
    """--watch-namespace (informers scoped to it), or --watch-namespace-selector checked at
    event time against the namespace's labels (store.go watchedNamespace)."""
    if cfg.watch_namespace:
        return namespace == cfg.watch_namespace
    if cfg.watch_namespace_selector:
        labels = (namespace_labels or {}).get(namespace)
        return labels is not None and selection.label_selector_matches(cfg.watch_namespace_selector, labels)
    return True


@dataclass
class IngressTracker:
    """The informer + store.go event handlers: which Ingresses land in ListIngresses.
    Feed it every observed state of the watched Ingresses; it replays add/update/delete."""

    cfg: NginxConfig
    ignore_ingress_class: bool
    seen: dict[tuple[str, str], Obj] = field(default_factory=dict)
    accepted: dict[tuple[str, str], Obj] = field(default_factory=dict)

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
                if claims(ing, self.cfg, our_classes, self.ignore_ingress_class):
                    self.accepted[k] = ing
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

    def on_update(self, k: tuple[str, str], old: Obj, cur: Obj, our: set[str]) -> None:
        if self.ignore_ingress_class:
            # store.go: with IgnoreIngressClass both errors stay nil, so any change syncs it
            self.accepted[k] = cur
            return
        # store.go UpdateFunc: errCur == nil (class valid now, old one invalid or anything
        # changed) → synced into the store; errOld == nil && errCur != nil → removed.
        # Both classes evaluated against the lister as it is now, so an Ingress whose
        # IngressClass appeared after its add is taken up at its next update.
        if claims(cur, self.cfg, our, False):
            self.accepted[k] = cur
        elif claims(old, self.cfg, our, False):
            self.accepted.pop(k, None)

    def list_ingresses(self) -> list[Obj]:
        return nginx_binary.sort_ingresses(list(self.accepted.values()))


# --- addresses --------------------------------------------------------------------------------

class PublishServiceError(Exception):
    pass


def name_or_ip(s: str) -> dict[str, str]:
    return {"ip": s} if base.is_ip(s) else {"hostname": s}


def split_ns_name(key: str) -> tuple[str, str]:
    parsed = nginx_binary.publish_service_key(key)
    if parsed is None:
        raise PublishServiceError(f"invalid format (namespace/name) found in '{key}'")
    return parsed


def address_from_service(svc: Obj | None, key: str) -> list[dict[str, str]]:
    _ns, name = split_ns_name(key)
    if svc is None:
        raise PublishServiceError(f'services "{name}" not found')
    return nginx_binary.service_entries(svc)[0]


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
        for a in nginx_binary.node_addresses(store.get(NODE, None, node_name), cfg.internal_ip):
            if not any(x.get("ip") == a or x.get("hostname") == a for x in addrs):
                addrs.append(name_or_ip(a))
    return addrs


def standardize(addrs: list[dict[str, str]]) -> list[dict[str, str]]:
    return nginx_binary.standardize_entries(addrs)


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
