# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Whether a probe of an Ingress was answered from this cluster.

Two kind clusters on one network can hold the same LoadBalancer address (each MetalLB answers ARP for its own), and
a probe of one cluster's Ingress then passes on the other cluster's answer. The echo names the pod that answered; a
pod of this cluster is one that the Ingress's Services held in their EndpointSlices before or after the probe (a
rollout during it replaces pods), or a Pod of that name that still exists in the Ingress's namespace. Any other
pod answered from elsewhere, and the probe fails saying so. Only the default backend regex names pods: with one a
scenario gives, the answers are not checked."""
from __future__ import annotations

from typing import Any, Iterable

from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.endpoints import backend_pods
from ansible_collections.kindlab.ingress.plugins.module_utils.discovery.backends import backends_of

Obj = dict[str, Any]
# What backend_of gives for an answer that names no pod.
_NAMELESS = ("(error)", "(unmatched)", "nginx")


def services_of(ingresses: list[Obj]) -> list[str]:
    """namespace/Service of every backend of INGRESSES (rules and spec.defaultBackend)."""
    out: list[str] = []
    for ing in ingresses:
        ns = (ing.get("metadata") or {}).get("namespace")
        for ref in backends_of(ing):
            key = "%s/%s" % (ns, ref.service)
            if ref.service and key not in out:
                out.append(key)
    return out


def pods_behind(client: Any, services: list[str]) -> frozenset[str]:
    """The pods the EndpointSlices of SERVICES hold now (none read when there are none)."""
    if not services:
        return frozenset()
    held = backend_pods(client)
    return frozenset(p for s in services for p in held.get(s, frozenset()))


def foreign_pods(client: Any, answered: Iterable[str], known: frozenset[str], namespaces: list[str]) -> list[str]:
    """The pods of ANSWERED that are not this cluster's: in none of KNOWN and no Pod of that name in NAMESPACES."""
    out = []
    for pod in answered:
        if pod in _NAMELESS or pod in known or pod in out:
            continue
        if not any(client.get("v1", "Pod", pod, ns) is not None for ns in namespaces):
            out.append(pod)
    return out


def refuse_foreign(result: Obj, foreign: list[str], refs: list[tuple[str, str]]) -> None:
    """RESULT failed, in one line, when FOREIGN names a pod."""
    if not foreign:
        return
    result["foreign"] = foreign
    result["passed"] = False
    result["reason"] = ("answered from outside this cluster: pod%s %s answered at %s, which no EndpointSlice of the "
                        "Services of Ingress %s holds and no Pod of this cluster is named. Another cluster on the same "
                        "network may hold that address: give each cluster a pool of its own"
                        % ("s" if len(foreign) > 1 else "", ", ".join(foreign),
                           ", ".join(result.get("addresses") or [str(result.get("address"))]),
                           ", ".join("%s/%s" % r for r in refs)))
