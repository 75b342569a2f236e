# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""lab_capture's anonymize: namespaces, Ingress and Service names, hosts, IngressClass names and
releases of a captured lab definition replaced by neutral ones, consistently (the same name gets
the same replacement everywhere: in values, args, patterns and keys of lab_expect) and
deterministically (the n-th name of a kind in sorted order becomes <kind>-n), so a capture from
production can go into a public issue and still reproduce the same verdicts.

Names are replaced as whole words (runs of letters, digits, dots, dashes and stars), and a
namespace also where it is one dash-separated part of a longer word (an IngressClass nginx-payments,
a controller value k8s.io/ingress-nginx-payments). The names a controller type gives by default
(nginx, traefik, ingress-nginx, ...) are kept: the lab's charts render them whatever the cluster's are.
"""
from __future__ import annotations

import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.base import ClusterState, meta
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import REGISTRY
from ansible_collections.kindlab.ingress.plugins.module_utils.lab.workloads.parse import ingress_mappings

Obj = dict[str, Any]

_WORD = re.compile(r"[A-Za-z0-9*][A-Za-z0-9.*-]*")
# Words that name nothing of the user's: Kubernetes' own namespaces (and kube-*) and the types' chart and class names.
_KEEP = {"default", "kube-system", "kube-public", "controller", "ingress"}


def _kept() -> set[str]:
    keep = set(_KEEP)
    for t in REGISTRY.values():
        keep |= {t.name, *((t.install.chart_name,) if t.install is not None else ()),
                 *(t.ingress.class_markers if t.ingress is not None else ())}
    return keep


def _host(host: str, n: int) -> str:
    return ("*." if host.startswith("*.") else "") + "host-%d.example" % n


def mapping(lab: Obj, state: ClusterState) -> tuple[dict[str, str], dict[str, str]]:
    """(whole word → replacement, namespace → replacement) for what LAB names."""
    keep = _kept()
    namespaces = sorted((set(lab["lab_namespaces"]) | {str(meta(n).get("name")) for n in state.namespaces}
                         | {str(meta(o).get("namespace")) for o in state.workloads + state.ingresses}) - keep)
    stand_ins = [i for w in lab["lab_workloads"] for i in ingress_mappings(w.get("ingress"))]
    ingresses = sorted({i["name"] for i in stand_ins} | {str(meta(i).get("name")) for i in state.ingresses})
    routes = sorted({str(meta(r).get("name")) for r in state.http_routes})
    gateways = sorted({str(meta(g).get("name")) for g in state.gateways}
                      | {str(meta(c).get("name")) for c in state.gateway_classes})
    route_hosts = {str(h) for r in state.http_routes for h in (r.get("spec") or {}).get("hostnames") or []}
    route_hosts |= {str(ln["hostname"]) for g in state.gateways for ln in (g.get("spec") or {}).get("listeners") or []
                    if ln.get("hostname")}
    backends = [((p.get("backend") or {}).get("service") or {}).get("name") for i in state.ingresses
                for r in (i.get("spec") or {}).get("rules") or [] for p in (r.get("http") or {}).get("paths") or []]
    backends += [((i.get("spec") or {}).get("defaultBackend") or {}).get("service", {}).get("name") for i in state.ingresses]
    services = sorted({w["name"] for w in lab["lab_workloads"]} | {str(meta(s).get("name")) for s in state.services}
                      | {str(b) for b in backends if b})
    hosts = sorted({i["host"] for i in stand_ins if i.get("host")} | route_hosts
                   | {r["host"] for i in stand_ins for r in i.get("rules") or [] if r.get("host")}
                   | {r["host"] for i in state.ingresses for r in (i.get("spec") or {}).get("rules") or [] if r.get("host")}
                   | {h for i in state.ingresses for t in (i.get("spec") or {}).get("tls") or [] for h in t.get("hosts") or []})
    classes = sorted({str(meta(c).get("name")) for c in state.ingress_classes}
                     | {i["class"] for i in stand_ins if i.get("class")})
    releases = sorted({c["release"] for c in lab["lab_controllers"]})
    workloads = sorted({str(meta(w).get("name")) for w in state.workloads})
    words: dict[str, str] = {}
    for kind, names in (("ns", namespaces), ("ingress", ingresses), ("svc", services), ("class", classes),
                        ("release", releases), ("workload", workloads), ("route", routes), ("gateway", gateways)):
        n = 0
        for name in names:
            if name in keep or name in words or name.startswith("kube-"):
                continue
            n += 1
            words[name] = "%s-%d" % (kind, n)
    for n, host in enumerate(hosts, 1):
        words[host] = _host(host, n)
    return words, {ns: words[ns] for ns in namespaces if ns in words}


def _rewrite_word(word: str, words: dict[str, str], namespaces: dict[str, str]) -> str:
    if word in words:
        return words[word]
    parts = word.split("-")
    if len(parts) > 1:
        return "-".join(namespaces.get(p, p) for p in parts)
    return word


def rewrite(value: Any, words: dict[str, str], namespaces: dict[str, str], keys: bool = False) -> Any:
    """VALUE with every name replaced; mapping keys too when KEYS (lab_expect's namespace/name keys)."""
    if isinstance(value, str):
        return _WORD.sub(lambda m: _rewrite_word(m.group(0), words, namespaces), value)
    if isinstance(value, list):
        return [rewrite(v, words, namespaces, keys) for v in value]
    if isinstance(value, dict):
        return {(rewrite(k, words, namespaces) if keys and isinstance(k, str) else k): rewrite(v, words, namespaces, keys)
                for k, v in value.items()}
    return value


def anonymize_lab(lab: Obj, state: ClusterState, records: list[Obj]) -> tuple[Obj, list[Obj]]:
    """LAB and the capture's per-controller RECORDS with their names replaced (see the module's
    docstring); their structure is unchanged."""
    words, namespaces = mapping(lab, state)
    out = {key: rewrite(value, words, namespaces, keys=key == "lab_expect") for key, value in lab.items()}
    return out, [rewrite(r, words, namespaces) for r in records]
