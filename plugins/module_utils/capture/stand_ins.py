# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A cluster's Ingresses as the lab's workloads (lab/workloads/).

Each Service an Ingress or HTTPRoute names becomes a stand-in workload of the same name: the echo
app (it says which Service answered and what path arrived), the cluster workload's replicas, the
Service's port numbers and names. Each Ingress is kept whole (rules, hosts, paths, backends by
port number or name, TLS hosts, default backend, routing annotations) on the stand-in of its
first backend, so several Ingresses on one host merge in the lab as they do in the cluster. What
the lab cannot rebuild of an Ingress is written on it (NOT_REBUILT_ANNOTATION).
"""
from __future__ import annotations

import json
import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._names import is_dns1123_label
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import CLASS_ANNOTATION, CLASS_NAMED_ANNOTATION, ClusterState, meta
from ansible_collections.kindlab.ingress.plugins.module_utils.k8s.objects import key_of, selects
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import ingress_mappings

Obj = dict[str, Any]

# Annotations that decide which controller claims an Ingress and how it routes (the class annotation and
# each type's annotation_prefix); the others (kubectl's last-applied configuration, tooling, ...) are left
# in the cluster. Within those, the ones that can carry credentials or code: never copied.
_SECRET_WORDS = ("snippet", "auth", "secret", "token", "password")
# On a rebuilt Ingress: what of the captured one the lab could not rebuild (a JSON list of sentences);
# the migration rehearsal does not compare that Ingress's requests.
NOT_REBUILT_ANNOTATION = "kindlab.ingress/not-rebuilt"


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
        routing = key in (CLASS_ANNOTATION, CLASS_NAMED_ANNOTATION) or key.startswith(registry.annotation_prefixes())
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
