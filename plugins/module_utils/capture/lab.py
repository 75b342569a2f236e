# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""lab_capture: a live cluster's ingress setup as a lab definition (a scenario) that reproduces it.

Read-only. The cluster is read once, as ingress_diagnose reads it (verify/diagnose.py); each
controller a registered type recognises becomes a lab controller whose chart values render the
same effective args (the type's args_to_values, then its capture_values: kind, replicas, RBAC,
IngressClass, Service type); each Ingress becomes a stand-in workload (lab/workloads.py) with the
same name, class, host, paths and the annotations that decide claiming and routing, backed by a
Service of the same name; lab_expect holds what the diagnosis finds now. Everything the lab cannot
express is said, in the result (`unexpressed`) and in the file (comments and lab_capture_report).
With anonymize, names, namespaces and hosts are replaced (capture/anonymize.py). Secrets,
ConfigMap data and tokens are never read into the file: only Ingress, Service, workload, RBAC and
IngressClass objects are, and a type's secret flags are dropped from its args.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._names import is_dns1123_label
from ansible_collections.kindlab.ingress.plugins.module_utils._yaml import yaml
from ansible_collections.kindlab.ingress.plugins.module_utils.capture.anonymize import anonymize_lab
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import (
    CLASS_ANNOTATION,
    CapturePart,
    ClusterState,
    InstallPart,
    container_argv,
    meta,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.install import ControllerError, parse_controllers
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import type_of_class
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of, selects
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.gateway_api import GROUP as GATEWAY_GROUP
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import PROTOCOLS as GATEWAY_PROTOCOLS
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.gateways import GatewayError, parse_gateways
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads import (
    ROUTE_FILTERS, ROUTE_PATH_TYPES, WorkloadError, ingress_mappings, parse_namespaces, parse_workloads)
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery import controllers as discovery
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery import snapshot
from ansible_collections.kindlab.ingress.plugins.module_utils.verify import diagnose
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.conflicts import find_conflicts
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.expect import VerifyError, validate_expect
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.selection import parse_selection

Obj = dict[str, Any]

# Annotations that decide which controller claims an Ingress and how it routes (the class annotation and
# each type's annotation_prefix); the others (kubectl's last-applied configuration, tooling, ...) are left
# in the cluster. Within those, the ones that can carry credentials or code: never copied.
_SECRET_WORDS = ("snippet", "auth", "secret", "token", "password")
# On a rebuilt Ingress: what of the captured one the lab could not rebuild (a JSON list of sentences);
# the migration rehearsal does not compare that Ingress's requests.
NOT_REBUILT_ANNOTATION = "kindlab.ingress/not-rebuilt"


class CaptureError(OptionError):
    """The capture cannot be written as asked; the message names the option or the object."""


@dataclass
class Capture:
    """A lab definition read from a cluster, and what it could not express."""

    lab: Obj
    unexpressed: list[str] = field(default_factory=list)
    # Each captured controller: the cluster's workload, the lab's release, the effective args both
    # run with, and where they differ (the lab's rule of no admission webhook, for one).
    controllers: list[Obj] = field(default_factory=list)


# ---------------------------------------------------------------- controllers


def release_of(how: InstallPart, workload: Obj) -> tuple[str, bool]:
    """The release whose chart names the workload as the cluster does: helm's instance label, then
    the workload's name's prefixes at each dash, shortest first (plain manifests name the Deployment after a
    release the chart would: ingress-nginx-controller ← ingress-nginx). (release, names match)."""
    ns, name = str(meta(workload).get("namespace")), str(meta(workload).get("name"))
    template = ((workload.get("spec") or {}).get("template") or {}).get("metadata") or {}
    label = ((meta(workload).get("labels") or {}).get("app.kubernetes.io/instance")
             or (template.get("labels") or {}).get("app.kubernetes.io/instance"))
    parts = name.split("-")
    candidates = ([label] if label else []) + ["-".join(parts[:i]) for i in range(1, len(parts) + 1)]
    for release in candidates:
        try:
            if how.effective_config({}, release, ns, None).deployment == (ns, name):
                return release, True
        except how.value_errors:
            continue
    return (label or name), False


def _without_secrets(argv: list[str], secret_flags: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """ARGV without the type's secret flags (`--f=v`, or `--f v`); and the flags dropped."""
    kept: list[str] = []
    dropped: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        name, eq, _value = arg.lstrip("-").partition("=")
        if arg.startswith("-") and name in secret_flags:
            dropped.append("--" + name)
            skip = not eq
            continue
        kept.append(arg)
    return kept, dropped


def _differences(capture: CapturePart, how: InstallPart, values: Obj, release: str, namespace: str, live: list[str]) -> list[str]:
    """Where the lab's args (rendered from VALUES) differ from the cluster's, flag by flag."""
    want = capture.effective_args(live, namespace, None)
    got = capture.effective_args(how.effective_config(values, release, namespace, None).args, namespace, None)
    return ["--%s: the cluster runs %r, the lab %r" % (flag, want.get(flag), got.get(flag))
            for flag in sorted(set(want) | set(got)) if want.get(flag) != got.get(flag)]


def capture_controllers(state: ClusterState, found: list[discovery.FoundWorkload]) -> tuple[list[Obj], list[Obj], list[str]]:
    """(lab_controllers entries, one record per controller, what could not be expressed)."""
    entries: list[Obj] = []
    records: list[Obj] = []
    notes: list[str] = []
    taken: set[str] = set()
    for f in found:
        ctype, ref = f.type, key_of(f.workload)
        ns = str(meta(f.workload).get("namespace"))
        capture, how = ctype.capture, ctype.install
        if capture is None or how is None:
            # (a lab can hold only a controller it can install, read back from the cluster's args)
            notes.append("controller %s: type %s cannot be captured (%s)"
                         % (ref, ctype.name, "the lab cannot install it" if how is None else "its args are not read back"))
            continue
        release, same_names = release_of(how, f.workload)
        if not same_names:
            notes.append("controller %s: no release of the %s chart names its workload so; the lab's release is %r"
                         % (ref, ctype.name, release))
        argv, secret = _without_secrets(container_argv(f.container, ns), capture.secret_flags)
        notes += ["controller %s: %s is a secret and stays in the cluster" % (ref, flag) for flag in secret]
        values, unexpressed = capture.args_to_values(argv, release, ns, None)
        notes += ["controller %s: %s" % (ref, text) for text in unexpressed]
        values, more = capture.capture_values(state, f.workload, f.container, values, release, taken)
        notes += ["controller %s: %s" % (ref, text) for text in more]
        differences = _differences(capture, how, values, release, ns, argv)
        notes += ["controller %s: args differ in the lab: %s" % (ref, text) for text in differences]
        entries.append({"namespace": ns, "type": ctype.name, "release": release, "values": values})
        records.append({"workload": ref, "kind": f.workload.get("kind"), "type": ctype.name, "release": "%s/%s" % (ns, release),
                        "differences": differences,
                        "problems": [p for c in f.controllers for p in c.problems]})
    return entries, records, notes


# ---------------------------------------------------------------- Ingresses → stand-in workloads
#
# Each Service an Ingress or HTTPRoute names becomes a stand-in workload of the same name: the echo
# app (it says which Service answered and what path arrived), the cluster workload's replicas, the
# Service's port numbers and names. Each Ingress is kept whole (rules, hosts, paths, backends by
# port number or name, TLS hosts, default backend, routing annotations) on the stand-in of its
# first backend, so several Ingresses on one host merge in the lab as they do in the cluster.


def _backend(raw: Obj | None) -> tuple[str, int | str | None] | None:
    """(Service, port number or name) of an Ingress backend; None for a resource backend."""
    svc = (raw or {}).get("service")
    if not svc or not svc.get("name"):
        return None
    port = svc.get("port") or {}
    return str(svc["name"]), port.get("number", port.get("name"))


def _ingress_rules(ing: Obj, where: str, notes: list[str]) -> tuple[list[Obj], Obj | None]:
    """The lab's rules (each path naming its Service and port) and default backend of ING."""
    spec = ing.get("spec") or {}
    rules = []
    for rule in spec.get("rules") or []:
        paths = []
        for p in (rule.get("http") or {}).get("paths") or []:
            backend = _backend(p.get("backend"))
            if backend is None:
                notes.append("%s: a backend that is not a Service (%s) is not reproduced" % (where, p.get("backend")))
                continue
            item: Obj = {"path": p.get("path") or "/", "path_type": p.get("pathType") or "Prefix", "service": backend[0]}
            if backend[1] is not None:
                item["port"] = backend[1]
            paths.append(item)
        if paths:
            rules.append({"host": rule["host"]} if rule.get("host") else {})
            rules[-1]["paths"] = paths
        elif not (rule.get("http") or {}).get("paths"):
            notes.append("%s: rule %s has no paths (its host goes to the default backend); not reproduced"
                         % (where, rule.get("host") or "(any host)"))
    default: Obj | None = None
    backend = _backend(spec.get("defaultBackend"))
    if backend is not None:
        default = {"service": backend[0]}
        if backend[1] is not None:
            default["port"] = backend[1]
    elif spec.get("defaultBackend"):
        notes.append("%s: its defaultBackend is not a Service; not reproduced" % where)
    return rules, default


def _annotations(ing: Obj, where: str, notes: list[str]) -> tuple[dict[str, str], list[str]]:
    """(the routing annotations kept, what is not rebuilt): every ingress-nginx and Traefik annotation and the
    class annotation, but those that may hold credentials or code, which stay in the cluster. Basic auth is kept
    (registry.credential_secrets): the rebuilt lab checks requests against a Secret of its own of that name."""
    kept: dict[str, str] = {}
    dropped: list[str] = []
    raw = {str(k): str(v) for k, v in (meta(ing).get("annotations") or {}).items()}
    # The annotations that name a credential Secret only name it: the lab generates one of its own under that name.
    naming = {a for s in registry.credential_secrets(str(meta(ing).get("namespace")), raw) for a in s.annotations}
    for key, value in sorted(raw.items()):
        routing = key == CLASS_ANNOTATION or key.startswith(registry.annotation_prefixes())
        if routing and (key in naming or not any(word in key.lower() for word in _SECRET_WORDS)):
            kept[key] = str(value)
        elif routing:
            dropped.append(key)
    if dropped:
        notes.append("%s: annotations %s may hold credentials or code and stay in the cluster; the rehearsal does not "
                     "compare its requests" % (where, ", ".join(dropped)))
    # A lab rebuilt from a capture, captured again, keeps what the first capture could not rebuild.
    try:
        earlier = json.loads((meta(ing).get("annotations") or {}).get(NOT_REBUILT_ANNOTATION) or "[]")
    except ValueError:
        earlier = []
    return kept, [str(e) for e in earlier if isinstance(earlier, list)] + [
        "annotation %s stays in the cluster (credentials or code)" % key for key in dropped]


def _replicas(state: ClusterState, namespace: str, service: str) -> tuple[int, str]:
    """The replicas of the workload behind SERVICE (1 when none), and what to say about it."""
    svc = state.service(namespace, service)
    if svc is None:
        return 1, "its Service %s does not exist in the cluster; the lab creates it" % service
    selector = (svc.get("spec") or {}).get("selector")
    for wl in state.workloads:
        labels = ((wl.get("spec") or {}).get("template") or {}).get("metadata", {}).get("labels") or {}
        if meta(wl).get("namespace") == namespace and selector and selects(selector, labels, form="Service"):
            return (1 if wl.get("kind") == "DaemonSet" else int((wl.get("spec") or {}).get("replicas", 1))), ""
    return 1, "no Deployment or DaemonSet behind its Service %s; the lab's stand-in runs 1 replica" % service


def stand_in(state: ClusterState, namespace: str, service: str, refs: list[int | str], where: str,
             notes: list[str]) -> tuple[Obj, str]:
    """The stand-in workload of SERVICE: the echo app, the replicas behind it, its ports (the
    cluster's, plus any of REFS it lacks, which the cluster's controllers cannot resolve either); and
    why requests to it are not comparable ("" when they are)."""
    replicas, why = _replicas(state, namespace, service)
    if why:
        notes.append("%s: %s" % (where, why))
    svc = state.service(namespace, service) or {}
    spec = svc.get("spec") or {}
    ports: list[Obj] = [{k: v for k, v in (("name", p.get("name")), ("port", p.get("port"))) if v is not None}
                        for p in spec.get("ports") or [] if p.get("port")][:16]
    for ref in refs:
        have = [p["port"] for p in ports] if isinstance(ref, int) else [p.get("name") for p in ports]
        if ref in have:
            continue
        if svc:
            notes.append("%s: Service %s has no port %s; the stand-in adds it" % (where, service, ref))
        number = ref if isinstance(ref, int) else next(n for n in range(80, 65536) if n not in [p["port"] for p in ports])
        ports.append({"name": ref if isinstance(ref, str) else "port-%d" % ref, "port": number})
    if len(ports) > 1:
        for p in ports:
            p.setdefault("name", "port-%d" % p["port"])
    workload: Obj = {"name": service, "namespace": namespace, "app": "echo", "replicas": replicas, "ingress": False}
    if ports and ports != [{"name": "http", "port": 80}]:
        workload["ports"] = ports
    not_rebuilt = ""
    if spec.get("type") == "ExternalName":
        not_rebuilt = "Service %s is ExternalName (a name outside the cluster)" % service
        notes.append("%s: %s; its stand-in answers instead and the rehearsal does not compare its requests" % (where, not_rebuilt))
    return workload, not_rebuilt


def _lab_name(name: str, where: str, notes: list[str]) -> str:
    if is_dns1123_label(name):
        return name
    out = re.sub(r"[^a-z0-9-]", "-", name.lower()).strip("-")[:63] or "ingress"
    notes.append("%s: its name is not a DNS label; the lab's Ingress is %s" % (where, out))
    return out


def capture_ingresses(state: ClusterState) -> tuple[list[Obj], dict[str, str], list[str]]:
    """(lab_workloads entries, cluster Ingress → lab Ingress (namespace/name), notes)."""
    notes: list[str] = []
    names: dict[str, str] = {}
    found: list[tuple[Obj, str, list[Obj], Obj | None]] = []
    refs: dict[tuple[str, str], list[int | str]] = {}
    for ing in sorted(state.ingresses, key=key_of):
        where = "Ingress %s" % key_of(ing)
        rules, default = _ingress_rules(ing, where, notes)
        if not rules and default is None:
            notes.append("%s: no rule with a Service backend; not reproduced" % where)
            continue
        ns = str(meta(ing).get("namespace"))
        for backend in [p for r in rules for p in r["paths"]] + ([default] if default else []):
            ports = refs.setdefault((ns, backend["service"]), [])
            if backend.get("port") is not None and backend["port"] not in ports:
                ports.append(backend["port"])
        found.append((ing, where, rules, default))
    workloads: dict[tuple[str, str], Obj] = {}
    unreachable: dict[tuple[str, str], str] = {}
    for (ns, service), ports in sorted(refs.items(), key=lambda item: item[0]):
        workloads[(ns, service)], unreachable[(ns, service)] = stand_in(state, ns, service, ports, "Service %s/%s" % (ns, service), notes)
    for ing, where, rules, default in found:
        ns = str(meta(ing).get("namespace"))
        ingress: Obj = {"name": _lab_name(str(meta(ing).get("name")), where, notes)}
        spec = ing.get("spec") or {}
        if spec.get("ingressClassName"):
            ingress["class"] = spec["ingressClassName"]
        # (rules: [] too: without it the lab's short form would give a default-backend-only Ingress a host-less / rule)
        ingress["rules"] = rules
        if default is not None:
            ingress["default_backend"] = default
        tls = [{"hosts": list(t["hosts"])} for t in spec.get("tls") or [] if t.get("hosts")]
        if len(tls) < len(spec.get("tls") or []):
            notes.append("%s: a tls entry without hosts (the controller's default certificate) is not reproduced" % where)
        if tls:
            ingress["tls"] = tls
            notes.append("%s: TLS for %s is served with a self-signed certificate the lab makes (the cluster's key is "
                         "never read)" % (where, ", ".join(h for t in tls for h in t["hosts"])))
        annotations, not_rebuilt = _annotations(ing, where, notes)
        backends = [p["service"] for r in rules for p in r["paths"]] + ([default["service"]] if default else [])
        not_rebuilt = sorted(set(not_rebuilt) | {unreachable[(ns, b)] for b in backends if unreachable[(ns, b)]})
        if not_rebuilt:
            annotations[NOT_REBUILT_ANNOTATION] = json.dumps(not_rebuilt)
        if annotations:
            ingress["annotations"] = annotations
        owner = workloads[(ns, backends[0])]
        mine = ingress_mappings(owner["ingress"]) + [ingress]
        owner["ingress"] = mine[0] if len(mine) == 1 else mine
        names[key_of(ing)] = "%s/%s" % (ns, ingress["name"])
    for wl in workloads.values():  # the workload's own Service needs no naming
        ings = ingress_mappings(wl["ingress"])
        for ing in ings:
            for path in [p for r in ing.get("rules") or [] for p in r["paths"]] + [ing.get("default_backend") or {}]:
                if path.get("service") == wl["name"]:
                    del path["service"]
        short = [_short_form(ing, wl) for ing in ings]
        wl["ingress"] = short if len(short) > 1 else short[0] if short else False
    return list(workloads.values()), names, notes


def _short_form(ing: Obj, owner: Obj) -> Obj:
    """ING as the lab's short form (host and paths) where that says the same: one rule, no default backend, every
    path to the owner's Service on the port the short form names (its first, by name where it has one)."""
    first = (owner.get("ports") or [{"name": "http", "port": 80}])[0]
    rules = ing.get("rules") or []
    if len(rules) != 1 or "default_backend" in ing or any(
            "service" in p or p.get("port") != first.get("name", first["port"]) for p in rules[0]["paths"]):
        return ing
    short = {k: v for k, v in ing.items() if k != "rules"}
    if rules[0].get("host"):
        short["host"] = rules[0]["host"]
    short["paths"] = [{"path": p["path"], "path_type": p["path_type"]} for p in rules[0]["paths"]]
    return short


# ---------------------------------------------------------------- Gateway API


def _listener(ln: Obj, where: str, notes: list[str]) -> Obj | None:
    protocol = str(ln.get("protocol") or "HTTP")
    if protocol not in GATEWAY_PROTOCOLS:
        notes.append("%s listener %s: protocol %s is not built by the lab; not reproduced" % (where, ln.get("name"), protocol))
        return None
    out: Obj = {"name": ln.get("name"), "port": ln.get("port"), "protocol": protocol}
    if ln.get("hostname"):
        out["hostname"] = ln["hostname"]
    if protocol == "HTTPS":
        notes.append("%s listener %s: its certificate stays in the cluster; the lab generates one of its own" % (where, ln.get("name")))
    namespaces = ((ln.get("allowedRoutes") or {}).get("namespaces") or {})
    source = namespaces.get("from", "Same")
    if source == "Selector":
        selector = namespaces.get("selector") or {}
        if selector.get("matchExpressions"):
            notes.append("%s listener %s: its namespace selector's matchExpressions are not reproduced (matchLabels are)"
                         % (where, ln.get("name")))
        out["allowed_routes"] = {"namespaces": "Selector", "selector": dict(selector.get("matchLabels") or {})}
    else:
        out["allowed_routes"] = source
    return out


def _route_match(match: Obj, where: str, notes: list[str]) -> Obj | None:
    """A route match as the lab writes it, or None (said) when it has a part the lab cannot build."""
    path = match.get("path") or {"type": "PathPrefix", "value": "/"}
    if path.get("type", "PathPrefix") not in ROUTE_PATH_TYPES:
        notes.append("%s: a %s path match (%s) is not reproduced" % (where, path.get("type"), path.get("value")))
        return None
    out: Obj = {"path": path.get("value", "/"), "path_type": path.get("type", "PathPrefix")}
    for field_name, key in (("headers", "headers"), ("queryParams", "query_params")):
        items = match.get(field_name) or []
        inexact = [str(h.get("name")) for h in items if h.get("type", "Exact") != "Exact"]
        if inexact:
            notes.append("%s: a match on %s %s by regular expression is not reproduced" % (where, field_name, ", ".join(inexact)))
            return None
        if items:
            out[key] = {str(h.get("name")): str(h.get("value")) for h in items}
    if match.get("method"):
        out["method"] = match["method"]
    return out


def _route_rule(rule: Obj, ns: str, where: str, notes: list[str]) -> Obj | None:
    """A route rule as the lab writes it (matches, the filters the lab builds, Service backends of the
    route's namespace), or None (said) when none of its matches can be built."""
    matches = [m for m in (_route_match(item, where, notes) for item in rule.get("matches") or [{}]) if m]
    if not matches:
        notes.append("%s: no match the lab can build; the rule is not reproduced" % where)
        return None
    filters = []
    for item in rule.get("filters") or []:
        own = ROUTE_FILTERS.get(str(item.get("type")))
        if own is None or not isinstance(item.get(own), dict):
            notes.append("%s: its %s filter is not reproduced" % (where, item.get("type")))
            continue
        filters.append({"type": item["type"], own: item[own]})
    backends = []
    for ref in rule.get("backendRefs") or []:
        if ref.get("kind", "Service") != "Service" or ref.get("group", "") != "" or ref.get("namespace", ns) != ns:
            notes.append("%s: a backend that is not a Service of its namespace (%s) is not reproduced" % (where, ref.get("name")))
            continue
        if ref.get("filters"):
            notes.append("%s: the filters of backend %s are not reproduced" % (where, ref.get("name")))
        backend: Obj = {"name": ref.get("name")}
        if isinstance(ref.get("port"), int) and ref["port"] != 80:  # the lab's default port
            backend["port"] = ref["port"]
        if ref.get("weight") is not None:
            backend["weight"] = ref["weight"]
        backends.append(backend)
    return {"matches": matches, "filters": filters, "backend_refs": backends}


def _route_spec(route: Obj, where: str, notes: list[str]) -> Obj | None:
    """The lab's httproute of ROUTE, every rule kept (the short form where it says the same), or None."""
    ns = str(meta(route).get("namespace"))
    spec = route.get("spec") or {}
    parents = []
    for ref in spec.get("parentRefs") or []:
        if ref.get("kind", "Gateway") != "Gateway" or ref.get("group", GATEWAY_GROUP) != GATEWAY_GROUP:
            notes.append("%s: a parent of kind %s is not reproduced" % (where, ref.get("kind")))
            continue
        parent: Obj = {"gateway": "%s/%s" % (ref.get("namespace") or ns, ref.get("name"))}
        if ref.get("sectionName"):
            parent["section_name"] = ref["sectionName"]
        if ref.get("port") is not None:
            notes.append("%s: its parentRef's port %s is not reproduced" % (where, ref["port"]))
        parents.append(parent)
    rules = [r for r in (_route_rule(rule, ns, "%s rule %d" % (where, i), notes)
                         for i, rule in enumerate(spec.get("rules") or [{}])) if r]
    if not parents or not rules:
        notes.append("%s: no Gateway parent or rule the lab can build; not reproduced" % where)
        return None
    out: Obj = {"name": meta(route).get("name"), "parent_refs": parents}
    if spec.get("hostnames"):
        out["hostnames"] = list(spec["hostnames"])
    (first, *more) = rules
    if not more and not first["filters"] and first["backend_refs"] and all(set(m) <= {"path", "path_type"} for m in first["matches"]):
        out["paths"], out["backend_refs"] = first["matches"], first["backend_refs"]  # the short form: one rule of paths
    else:
        out["rules"] = [{k: v for k, v in r.items() if v or k == "backend_refs"} for r in rules]
    return out


def _route_services(spec: Obj) -> list[Obj]:
    """The backends a captured httproute names, in order (the short form's, or every rule's)."""
    return list(spec.get("backend_refs") or []) + [b for rule in spec.get("rules") or [] for b in rule["backend_refs"]]


def capture_gateway_api(state: ClusterState, workloads: list[Obj]) -> tuple[Obj, list[str]]:
    """lab_gateways (classes and Gateways) from the cluster, and each HTTPRoute set on the stand-in
    workload of its first backend Service (one made when no Ingress's stand-in is that Service, and
    stand-ins for its other backends); the notes say what the lab cannot build."""
    notes: list[str] = []
    classes = [{"name": str(meta(c).get("name")), "controller_name": str((c.get("spec") or {}).get("controllerName") or ""),
                "labels": dict(meta(c).get("labels") or {})} for c in sorted(state.gateway_classes, key=lambda c: str(meta(c).get("name")))]
    gateways = []
    for gw in sorted(state.gateways, key=key_of):
        where = "Gateway %s" % key_of(gw)
        listeners = [ln for ln in (_listener(item, where, notes) for item in (gw.get("spec") or {}).get("listeners") or []) if ln]
        if not listeners:
            notes.append("%s: no listener the lab can build; not reproduced" % where)
            continue
        gateways.append({"namespace": str(meta(gw).get("namespace")), "name": str(meta(gw).get("name")),
                         "class": str((gw.get("spec") or {}).get("gatewayClassName")), "listeners": listeners})
    by_service = {(w["namespace"], w["name"]): w for w in workloads}
    for route in sorted(state.http_routes, key=key_of):
        where = "HTTPRoute %s" % key_of(route)
        spec = _route_spec(route, where, notes)
        if spec is None:
            continue
        ns = str(meta(route).get("namespace"))
        for backend in _route_services(spec):
            if (ns, backend["name"]) not in by_service:
                by_service[(ns, backend["name"])], _why = stand_in(state, ns, backend["name"], [backend.get("port", 80)], where, notes)
                workloads.append(by_service[(ns, backend["name"])])
        named = [b["name"] for b in _route_services(spec)]
        owners = [by_service[(ns, named[0])]] if named else [w for w in workloads if w["namespace"] == ns][:1]
        if not owners:
            notes.append("%s: it names no Service and its namespace has no stand-in to carry it; not reproduced" % where)
            continue
        owner = owners[0]
        if spec.get("backend_refs") == [{"name": owner["name"]}]:
            del spec["backend_refs"]  # the workload's own Service, the lab's default
        for rule in spec.get("rules") or []:
            if rule["backend_refs"] == [{"name": owner["name"]}]:
                del rule["backend_refs"]
        owner["httproute"] = ingress_mappings(owner.get("httproute")) + [spec]
    for wl in workloads:  # one route: the mapping form
        if isinstance(wl.get("httproute"), list) and len(wl["httproute"]) == 1:
            wl["httproute"] = wl["httproute"][0]
    return {"classes": classes, "gateways": gateways}, notes


# ---------------------------------------------------------------- expectations


def _ref_pattern(refs: list[str]) -> str:
    """A regex matching these controllers by namespace (the lab names their workloads after its releases)."""
    return "^%s$" % " ".join("%s/\\S+" % ref.split("/", 1)[0] for ref in refs)


def expectations(diagnosis: Obj, ingress_names: dict[str, str], releases: dict[str, str],
                 observed: dict[str, int] | None = None) -> tuple[Obj, list[str]]:
    """lab_expect from the live diagnosis: each error finding, the controllers that cannot start, the
    Ingresses nobody gives an address, the status it predicts; with OBSERVED (Ingress → status changes
    a short watch saw), what the watch saw too. (expect, notes)."""
    notes: list[str] = []
    findings: list[Obj] = []
    for f in diagnosis.get("findings") or []:
        if f.get("severity") != "error":
            continue
        want: Obj = {"kind": f["kind"]}
        if f.get("ingress"):
            if f["ingress"] not in ingress_names:
                notes.append("finding %s on %s: its Ingress is not reproduced, so it is not expected" % (f["kind"], f["ingress"]))
                continue
            want["ingress"] = "^%s$" % ingress_names[f["ingress"]]
        if f.get("culprits"):
            want["culprit"] = _ref_pattern(list(f["culprits"]))
        findings.append(want)
    expect: Obj = {}
    if findings:
        expect["diagnose"] = {"findings": findings}
    failing = {releases[c["controller"]]: "CrashLoopBackOff" for c in diagnosis.get("controllers") or []
               if c["controller"] in releases and any(p.startswith("cannot start") for p in c.get("problems") or [])}
    if failing:
        expect["controllers"] = {"failing": failing}
    predicted = {ref: ing for ref, ing in (diagnosis.get("ingresses") or {}).items() if ref in ingress_names}
    dark = {ingress_names[ref]: "no address" for ref, ing in predicted.items()
            if not any(w.get("address") for w in ing.get("writers") or [])}
    if dark:
        expect["addresses"] = {"failing": dark}
    # The status the diagnosis predicts: flapping between its writers, or only ever node addresses,
    # which no lab pool holds (lab_definition keeps the pools outside the node network).
    sources = {c["controller"]: c.get("publish_source") for c in diagnosis.get("controllers") or []}
    status: dict[str, str] = {}
    for ref, ing in predicted.items():
        writers = [w for w in ing.get("writers") or [] if w.get("address")]
        if ing.get("flapping"):
            status[ingress_names[ref]] = "change"
        elif writers and all(sources.get(w["controller"]) == "node-addresses" for w in writers):
            status[ingress_names[ref]] = "outside"
        elif ingress_names[ref] in dark:
            status[ingress_names[ref]] = "empty"
    if observed is not None:
        # What a short watch of the live cluster saw: a change it saw is expected whatever the
        # prediction; a predicted flap it did not see stays expected (the watch may be shorter than
        # the writers' sync period), and is said.
        for ref, changes in sorted(observed.items()):
            if ref not in ingress_names:
                continue
            name = ingress_names[ref]
            if changes and status.get(name) != "change":
                status[name] = "change"
                notes.append("Ingress %s changed status %d time(s) during the capture's watch, which the diagnosis did not "
                             "predict: expected to change in the lab too" % (ref, changes))
            elif not changes and status.get(name) == "change":
                notes.append("Ingress %s: the diagnosis predicts a flap the capture's watch did not see (its writers may sync "
                             "less often than the watch lasted); still expected" % ref)
    if status:
        expect["status"] = {"failing": status}
    notes.append("lab_expect holds the diagnosis's findings and the status it %s; reachability is not captured: "
                 "add lab_expect.reachability by hand" % ("predicts and the capture's watch saw" if observed is not None else "predicts"))
    return expect, notes


def expected_conflicts(state: ClusterState, ingress_names: dict[str, str]) -> list[Obj]:
    """The ambiguous host/path pairs (ingress_conflicts) among the reproduced Ingresses, by their lab names."""
    controllers = discovery.find_controllers(state)
    served_by = {key_of(i): discovery.servers_of(i, controllers) for i in state.ingresses}
    found = find_conflicts(state.ingresses, state.ingress_classes, None, served_by, {c.ref: c.type for c in controllers})
    pairs = {tuple(sorted(ingress_names[i] for i in c["ingresses"])) for c in found["conflicts"]
             if len(c["ingresses"]) == 2 and all(i in ingress_names for i in c["ingresses"])}
    return [{"ingresses": list(pair)} for pair in sorted(pairs)]


# ---------------------------------------------------------------- the whole capture


def capture(state: ClusterState, scenario: str = "captured", anonymize: bool = False,
            observed: dict[str, int] | None = None) -> Capture:
    """The lab definition for STATE (everything it needs listed: see read_cluster); OBSERVED: the
    status changes per Ingress a watch of the cluster saw (watch_status), if one ran. Pure."""
    found = discovery.find_workloads(state)
    controllers, records, notes = capture_controllers(state, found)
    for ic in sorted(state.ingress_classes, key=lambda c: str(meta(c).get("name"))):
        value = str((ic.get("spec") or {}).get("controller") or "")
        if type_of_class(value) == "unknown":
            notes.append("IngressClass %s: its controller %s is of no type the collection knows; its Ingresses are "
                         "reproduced, its controller is not" % (meta(ic).get("name"), value))
    workloads, ingress_names, more = capture_ingresses(state)
    notes += more
    gateway_api = bool(state.gateway_api and (state.gateway_classes or state.gateways or state.http_routes))
    lab_gateways: Obj = {}
    if gateway_api:
        lab_gateways, more = capture_gateway_api(state, workloads)
        notes += more
    diagnosis = diagnose.analyse(state)
    releases = {}
    for rec in records:
        for c in diagnosis["controllers"]:
            if c["controller"].split("@")[0] == rec["workload"]:
                releases[c["controller"]] = rec["release"]
    expect, more = expectations(diagnosis, ingress_names, releases, observed)
    notes += more
    conflicts = expected_conflicts(state, ingress_names)
    if conflicts:
        expect["conflicts"] = {"expected": conflicts}
    namespaces = sorted({c["namespace"] for c in controllers} | {w["namespace"] for w in workloads}
                        | {g["namespace"] for g in lab_gateways.get("gateways") or []})
    lab: Obj = {"lab_scenario": scenario, "lab_namespaces": namespaces, "lab_controllers": controllers,
                "lab_workloads": workloads, "lab_expect": expect, "lab_capture_report": notes}
    if gateway_api:
        lab.update(lab_gateway_api=True, lab_gateways=lab_gateways)
    result = Capture(lab=lab, unexpressed=notes, controllers=records)
    if anonymize:
        result.lab, result.controllers = anonymize_lab(lab, state, records)
        result.unexpressed = list(result.lab["lab_capture_report"])
    return result


def check(lab: Obj) -> None:
    """Validate the parts of the captured definition the lab validates (lab_definition does the rest
    with the inventory's cluster and pools): a CaptureError names the field."""
    try:
        ns_list, _labels = parse_namespaces(lab["lab_namespaces"], {})
        parse_controllers(lab["lab_controllers"])
        parse_workloads(lab["lab_workloads"], where="lab_workloads")
        parse_gateways(lab.get("lab_gateways"))
        validate_expect(lab["lab_expect"])
    except (ControllerError, WorkloadError, VerifyError, GatewayError) as exc:
        raise CaptureError("the captured definition does not validate (a bug to report, with the cluster's objects): %s"
                           % exc) from None
    for where in ("lab_controllers", "lab_workloads"):
        for i, item in enumerate(lab[where]):
            if item["namespace"] not in ns_list:
                raise CaptureError("%s[%d].namespace: %r is not in lab_namespaces" % (where, i, item["namespace"]))


def read_cluster(client: Any, namespaces: list[str]) -> ClusterState:
    """Everything the capture reads, as ingress_diagnose reads it; the Ingresses of NAMESPACES
    (all when empty). No Secret or ConfigMap is read."""
    try:
        selection = parse_selection(namespaces, [], None)
    except OptionError as exc:
        raise CaptureError(str(exc)) from None
    return snapshot.read_gateway_api(client, snapshot.read_state(client, selection))


def render(result: Capture, source: str) -> str:
    """The file: a header saying where it came from and what it could not express, then the definition."""
    lines = ["---", "# Captured by kindlab.ingress.lab_capture from %s (read-only)." % source,
             "# Reproduce: ansible-playbook playbooks/lab.yml -e @<this file>",
             "# Not expressed by this definition (also in lab_capture_report):"]
    lines += ["#   - %s" % note for note in result.unexpressed] or ["#   (nothing)"]
    body = str(yaml.safe_dump(result.lab, default_flow_style=False, sort_keys=False, width=120))
    return "\n".join(lines) + "\n" + body


def watch_status(client: Any, namespaces: list[str], seconds: float) -> dict[str, int]:
    """Ingress → how many times its status changed while ingress_status watched it for SECONDS
    (read-only; no writer attribution: only the counts go into the capture)."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify import status as _status

    result = _status.run(client, parse_selection(namespaces, [], None), _status.Options(window=seconds, max_changes=1000000,
                                                                                        attribute=False, gateway_api=False))
    return {ref: int(item.get("changes") or 0) for ref, item in (result.get("ingresses") or {}).items()}


def _services_and_ingresses(lab: Obj, namespaces: set[str]) -> dict[str, Obj]:
    """namespace/name → a stand-in as routing depends on it (its Service's ports, replicas, Ingresses), of NAMESPACES."""
    out = {}
    for wl in lab.get("lab_workloads") or []:
        if wl.get("namespace") in namespaces:
            out["%s/%s" % (wl["namespace"], wl["name"])] = {k: v for k, v in wl.items() if k not in ("httproute", "name", "namespace")}
    return out


def round_trip_differences(first: Obj, second: Obj, namespaces: list[str]) -> list[str]:
    """What a capture of the lab rebuilt from FIRST (SECOND) says differently of the Services and Ingresses of
    NAMESPACES (all of FIRST's when empty): [] when the rebuild routes by what the cluster routed by. HTTPRoutes and
    controllers are left out: a rehearsal adds its own."""
    chosen = set(namespaces) or {str(w.get("namespace")) for w in first.get("lab_workloads") or []}
    before, after = _services_and_ingresses(first, chosen), _services_and_ingresses(second, chosen)
    out = ["%s: captured, not in the rebuild" % ref for ref in sorted(set(before) - set(after))]
    out += ["%s: in the rebuild, not captured" % ref for ref in sorted(set(after) - set(before))]
    for ref in sorted(set(before) & set(after)):
        for key in sorted(set(before[ref]) | set(after[ref])):
            if before[ref].get(key) != after[ref].get(key):
                out.append("%s %s: captured %s, rebuilt %s" % (ref, key, json.dumps(before[ref].get(key), sort_keys=True),
                                                               json.dumps(after[ref].get(key), sort_keys=True)))
    return out
