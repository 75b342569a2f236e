# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The proof that every answer of a replay came from the data plane it was sent to, in this cluster.

Two clusters on one network can hold the same LoadBalancer address (each MetalLB answers ARP for its own), and
a request to it then reaches whichever answers first: a comparison of such answers measures the other cluster,
with a confident cause for every difference. So before any verdict, each answer a backend gave is checked: the
pod its echo names must be in this cluster's EndpointSlices of the Service it names, and the proxy that passed
it must be a pod behind that data plane's Service (a proxy whose type names its pod in a request header, as
Traefik's X-Forwarded-Server does, must have; no other proxy's header may be there).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import KindlabError
from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.registry import proxy_markers
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.corpus import Request
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.replay import Address, Observation

Obj = dict[str, Any]


class ForeignAnswer(KindlabError):
    """An answer came from outside the rehearsal's own data planes: nothing measured may be judged."""


@dataclass(frozen=True)
class Origin:
    """Who may answer for one data plane."""
    name: str
    address: Address
    pods: frozenset[str]  # the pods behind its Service; empty: not known (given by address)
    marker: str  # the header its proxy names its pod by; "" when its type adds none


def _header(received: dict[str, str], name: str) -> str:
    low = name.lower()
    return next((v for k, v in received.items() if k.lower() == low), "")


def why_foreign(answer: Observation, origin: Origin, backends: dict[str, frozenset[str]], markers: Sequence[str]) -> str:
    """Why ANSWER, sent to ORIGIN, did not come from it in this cluster; "" when it did (or says nothing: no backend
    answered, so no pod or proxy is named)."""
    if not answer.pod:
        return ""
    if answer.pod not in backends.get(answer.backend, frozenset()):
        return ("pod %s of Service %s answered, which no EndpointSlice of that Service in this cluster holds"
                % (answer.pod, answer.backend))
    for marker in markers:
        value = _header(answer.received, marker)
        if value and origin.pods and value not in origin.pods:
            return ("the request was passed by %s (%s: %s), not by a pod behind it (%s)"
                    % (value, marker, value, ", ".join(sorted(origin.pods))))
    if origin.marker and origin.pods and not _header(answer.received, origin.marker):
        return "the request reached pod %s without %s: no pod behind it passed it" % (answer.pod, origin.marker)
    return ""


def check(answers: dict[str, list[list[Observation]]], corpus: Sequence[Request], origins: Sequence[Origin],
          backends: dict[str, frozenset[str]]) -> None:
    """A ForeignAnswer naming the first answer that did not come from its data plane in this cluster (and how many
    more did not); nothing when every one did."""
    markers = proxy_markers()
    found = []
    for origin in origins:
        for request, sampled in zip(corpus, answers.get(origin.name) or []):
            for answer in sampled:
                why = why_foreign(answer, origin, backends, markers)
                if why:
                    found.append((origin, request, why))
    if found:
        origin, request, why = found[0]
        raise ForeignAnswer(
            "the answers did not all come from the rehearsal's own data planes, so none is judged: %s at %s:%d (%s), "
            "%s %s://%s%s: %s%s. Another cluster on the same network may hold that address: give the rehearsal a pool "
            "of its own" % (origin.name, origin.address.ip, origin.address.port,
                            "its Service's pods: " + ", ".join(sorted(origin.pods)) if origin.pods else "given by address",
                            request.method, request.scheme, request.host, request.target, why,
                            " (and %d more such answers)" % (len(found) - 1) if len(found) > 1 else ""))
