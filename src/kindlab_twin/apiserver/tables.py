"""Server-side printing: the Table responses kubectl asks for on `get`.

Columns follow the real API server's printers for the kinds the lab looks at; other
kinds get NAME/AGE, CRD kinds their additionalPrinterColumns.
"""
from __future__ import annotations

import datetime as _dt
import json
from typing import Any, Callable

from ..contract import Obj
from ..schema import ResourceType

Col = tuple[str, str, int, Callable[[Obj], Any]]  # (name, type, priority, cell)


def human_duration(seconds: float) -> str:
    """Go's duration.HumanDuration, which kubectl shows in AGE."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d{hours % 24}h" if hours % 24 else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y{dy}d" if dy else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def _age(obj: Obj) -> str:
    ts = (obj.get("metadata") or {}).get("creationTimestamp")
    if not ts:
        return "<unknown>"
    t = _dt.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=_dt.timezone.utc)
    return human_duration((_dt.datetime.now(_dt.timezone.utc) - t).total_seconds())


def _g(obj: Any, *path: str, default: Any = None) -> Any:
    for p in path:
        if not isinstance(obj, dict):
            return default
        obj = obj.get(p)
    return default if obj is None else obj


def _none(v: Any) -> str:
    return str(v) if v not in (None, "", []) else "<none>"


def _selector(sel: dict[str, str] | None) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted((sel or {}).items())) or "<none>"


def _containers(obj: Obj, field: str) -> str:
    cs = _g(obj, "spec", "template", "spec", "containers", default=[])
    return ",".join(str(c.get(field, "")) for c in cs if isinstance(c, dict))


def _pod_ready(obj: Obj) -> str:
    total = len(_g(obj, "spec", "containers", default=[]))
    ready = sum(1 for c in _g(obj, "status", "containerStatuses", default=[]) if c.get("ready"))
    return f"{ready}/{total}"


def _pod_status(obj: Obj) -> str:
    if _g(obj, "metadata", "deletionTimestamp"):
        return "Terminating"
    for c in _g(obj, "status", "containerStatuses", default=[]):
        reason = _g(c, "state", "waiting", "reason") or _g(c, "state", "terminated", "reason")
        if reason:
            return str(reason)
    return str(_g(obj, "status", "reason") or _g(obj, "status", "phase") or "Pending")


def _svc_external(obj: Obj) -> str:
    t = _g(obj, "spec", "type", default="ClusterIP")
    ext = list(_g(obj, "spec", "externalIPs", default=[]))
    if t == "ExternalName":
        return str(_g(obj, "spec", "externalName", default="<none>"))
    if t == "LoadBalancer":
        lb = [i.get("ip") or i.get("hostname") for i in _g(obj, "status", "loadBalancer", "ingress", default=[])]
        addrs = [a for a in lb if a] + ext
        return ",".join(addrs) if addrs else "<pending>"
    return ",".join(ext) if ext else "<none>"


def _svc_ports(obj: Obj) -> str:
    out = []
    for p in _g(obj, "spec", "ports", default=[]):
        s = str(p.get("port"))
        if p.get("nodePort"):
            s += f":{p['nodePort']}"
        out.append(f"{s}/{p.get('protocol', 'TCP')}")
    return ",".join(out) or "<none>"


def _ing_hosts(obj: Obj) -> str:
    rules = _g(obj, "spec", "rules", default=[])
    hosts = [r.get("host") or "*" for r in rules] if rules else ["*"]
    return ",".join(hosts[:4]) + (f" + {len(hosts) - 4} more..." if len(hosts) > 4 else "")


def _lb_addresses(obj: Obj) -> str:
    lb = _g(obj, "status", "loadBalancer", "ingress", default=[])
    return ",".join(str(i.get("ip") or i.get("hostname")) for i in lb if i.get("ip") or i.get("hostname"))


def _node_status(obj: Obj) -> str:
    conds = {c.get("type"): c.get("status") for c in _g(obj, "status", "conditions", default=[])}
    s = "Ready" if conds.get("Ready") == "True" else ("NotReady" if "Ready" in conds else "Unknown")
    return s + (",SchedulingDisabled" if _g(obj, "spec", "unschedulable") else "")


def _node_roles(obj: Obj) -> str:
    labels = _g(obj, "metadata", "labels", default={})
    roles = sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/"))
    return ",".join(roles) or "<none>"


def _node_addr(kind: str) -> Callable[[Obj], str]:
    return lambda o: next((a["address"] for a in _g(o, "status", "addresses", default=[]) if a.get("type") == kind), "<none>")


def _slice_endpoints(obj: Obj) -> str:
    addrs = [a for e in obj.get("endpoints") or [] for a in e.get("addresses") or []]
    if not addrs:
        return "<unset>"
    return ",".join(addrs[:3]) + (f" + {len(addrs) - 3} more..." if len(addrs) > 3 else "")


NAME: Col = ("Name", "string", 0, lambda o: _g(o, "metadata", "name", default=""))
AGE: Col = ("Age", "string", 0, _age)

COLUMNS: dict[tuple[str, str], list[Col]] = {
    ("", "Pod"): [NAME, ("Ready", "string", 0, _pod_ready), ("Status", "string", 0, _pod_status),
                  ("Restarts", "string", 0, lambda o: str(sum(int(c.get("restartCount", 0)) for c in _g(o, "status", "containerStatuses", default=[])))),
                  AGE, ("IP", "string", 1, lambda o: _none(_g(o, "status", "podIP"))),
                  ("Node", "string", 1, lambda o: _none(_g(o, "spec", "nodeName"))),
                  ("Nominated Node", "string", 1, lambda o: _none(_g(o, "status", "nominatedNodeName"))),
                  ("Readiness Gates", "string", 1, lambda o: "<none>")],
    ("", "Service"): [NAME, ("Type", "string", 0, lambda o: _g(o, "spec", "type", default="ClusterIP")),
                      ("Cluster-IP", "string", 0, lambda o: _none(_g(o, "spec", "clusterIP"))),
                      ("External-IP", "string", 0, _svc_external), ("Port(s)", "string", 0, _svc_ports), AGE,
                      ("Selector", "string", 1, lambda o: _selector(_g(o, "spec", "selector")))],
    ("networking.k8s.io", "Ingress"): [
        NAME, ("Class", "string", 0, lambda o: _none(_g(o, "spec", "ingressClassName"))),
        ("Hosts", "string", 0, _ing_hosts), ("Address", "string", 0, _lb_addresses),
        ("Ports", "string", 0, lambda o: "80, 443" if _g(o, "spec", "tls") else "80"), AGE],
    ("networking.k8s.io", "IngressClass"): [
        NAME, ("Controller", "string", 0, lambda o: _g(o, "spec", "controller", default="")),
        ("Parameters", "string", 0, lambda o: "<none>"), AGE],
    ("apps", "Deployment"): [
        NAME, ("Ready", "string", 0, lambda o: f"{_g(o, 'status', 'readyReplicas', default=0)}/{_g(o, 'spec', 'replicas', default=1)}"),
        ("Up-to-date", "integer", 0, lambda o: _g(o, "status", "updatedReplicas", default=0)),
        ("Available", "integer", 0, lambda o: _g(o, "status", "availableReplicas", default=0)), AGE,
        ("Containers", "string", 1, lambda o: _containers(o, "name")),
        ("Images", "string", 1, lambda o: _containers(o, "image")),
        ("Selector", "string", 1, lambda o: _selector(_g(o, "spec", "selector", "matchLabels")))],
    ("apps", "ReplicaSet"): [
        NAME, ("Desired", "integer", 0, lambda o: _g(o, "spec", "replicas", default=1)),
        ("Current", "integer", 0, lambda o: _g(o, "status", "replicas", default=0)),
        ("Ready", "integer", 0, lambda o: _g(o, "status", "readyReplicas", default=0)), AGE,
        ("Containers", "string", 1, lambda o: _containers(o, "name")),
        ("Images", "string", 1, lambda o: _containers(o, "image")),
        ("Selector", "string", 1, lambda o: _selector(_g(o, "spec", "selector", "matchLabels")))],
    ("", "Node"): [NAME, ("Status", "string", 0, _node_status), ("Roles", "string", 0, _node_roles), AGE,
                   ("Version", "string", 0, lambda o: _g(o, "status", "nodeInfo", "kubeletVersion", default="")),
                   ("Internal-IP", "string", 1, _node_addr("InternalIP")),
                   ("External-IP", "string", 1, _node_addr("ExternalIP")),
                   ("OS-Image", "string", 1, lambda o: _g(o, "status", "nodeInfo", "osImage", default="<unknown>")),
                   ("Kernel-Version", "string", 1, lambda o: _g(o, "status", "nodeInfo", "kernelVersion", default="<unknown>")),
                   ("Container-Runtime", "string", 1, lambda o: _g(o, "status", "nodeInfo", "containerRuntimeVersion", default="<unknown>"))],
    ("", "Namespace"): [NAME, ("Status", "string", 0, lambda o: _g(o, "status", "phase", default="")), AGE],
    ("discovery.k8s.io", "EndpointSlice"): [
        NAME, ("AddressType", "string", 0, lambda o: o.get("addressType", "")),
        ("Ports", "string", 0, lambda o: ",".join(str(p.get("port")) for p in o.get("ports") or []) or "<unset>"),
        ("Endpoints", "string", 0, _slice_endpoints), AGE],
    ("coordination.k8s.io", "Lease"): [NAME, ("Holder", "string", 0, lambda o: _g(o, "spec", "holderIdentity", default="")), AGE],
    ("", "ConfigMap"): [NAME, ("Data", "integer", 0, lambda o: len(o.get("data") or {}) + len(o.get("binaryData") or {})), AGE],
    ("", "Secret"): [NAME, ("Type", "string", 0, lambda o: o.get("type", "Opaque")),
                     ("Data", "integer", 0, lambda o: len(o.get("data") or {})), AGE],
}


def _jsonpath_cell(path: str) -> Callable[[Obj], Any]:
    parts = [p for p in path.strip().lstrip("{").rstrip("}").lstrip(".").split(".") if p]

    def cell(o: Obj) -> Any:
        v = _g(o, *parts)
        # lists and maps print as compact JSON, as the real server's printer does
        return json.dumps(v, separators=(",", ":")) if isinstance(v, (list, dict)) else v

    return cell


def columns_for(rt: ResourceType) -> list[Col]:
    if (rt.group, rt.kind) in COLUMNS:
        return COLUMNS[(rt.group, rt.kind)]
    if rt.printer_columns:
        cols = [NAME]
        for c in rt.printer_columns:
            typ = c.get("type", "string")
            cell = _jsonpath_cell(c.get("jsonPath", ""))
            if c.get("jsonPath") == ".metadata.creationTimestamp":
                cell, typ = _age, "string"
            cols.append((c.get("name", ""), typ if typ != "date" else "string", int(c.get("priority", 0)), cell))
        if not any(c.get("jsonPath") == ".metadata.creationTimestamp" for c in rt.printer_columns):
            cols.append(AGE)
        return cols
    return [NAME, AGE]


def partial_metadata(obj: Obj) -> Obj:
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": obj.get("metadata", {})}


def table(rt: ResourceType, objs: list[Obj], resource_version: str, include: str = "Metadata",
          with_columns: bool = True) -> Obj:
    cols = columns_for(rt)
    rows = []
    for o in objs:
        cells = []
        for _n, _t, _p, fn in cols:
            try:
                v = fn(o)
            except Exception:  # a malformed object must still print
                v = "<error>"
            cells.append(v)
        row: Obj = {"cells": cells}
        if include == "Object":
            row["object"] = o
        elif include != "None":
            row["object"] = partial_metadata(o)
        rows.append(row)
    return {
        "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": resource_version},
        "columnDefinitions": [
            {"name": n, "type": t, "format": "name" if n == "Name" else "", "description": n, "priority": p}
            for n, t, p, _cell in cols
        ] if with_columns else [],
        "rows": rows,
    }
