# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The endpoints of a Service port as its EndpointSlices give them: the one reading of the slices that
the backends check (how many are ready) and the data plane check (which ones, with their target port)
share.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.controllers.dataplane_reader import target

Obj = dict[str, Any]
# The label an EndpointSlice names its Service by.
SERVICE_NAME_LABEL = "kubernetes.io/service-name"
SLICE_API = "discovery.k8s.io/v1"


@dataclass(frozen=True)
class SliceEndpoint:
    """One endpoint address of a Service port, from its EndpointSlices."""

    address: str
    port: str
    ready: bool
    serving: bool
    terminating: bool
    pod: str | None = None

    @property
    def target(self) -> str:
        return target(self.address, self.port)


def slice_endpoints(slices: list[Obj], port_name: str | None) -> list[SliceEndpoint]:
    """The endpoints of the Service port named PORT_NAME, with the port each slice gives it (the
    target port). Conditions as the API defines them: ready unset is ready, serving unset
    follows ready, terminating unset is false."""
    out: dict[str, SliceEndpoint] = {}
    for item in slices:
        port = next((p.get("port") for p in item.get("ports") or [] if (p.get("name") or "") == (port_name or "")), None)
        if port is None:
            continue
        for endpoint in item.get("endpoints") or []:
            conditions = endpoint.get("conditions") or {}
            ready = conditions.get("ready") is not False
            serving = ready if conditions.get("serving") is None else bool(conditions.get("serving"))
            pod = (endpoint.get("targetRef") or {}).get("name")
            for address in endpoint.get("addresses") or []:
                found = SliceEndpoint(str(address), str(port), ready, serving, conditions.get("terminating") is True, pod)
                # One address in two slices (a move between them): ready in either counts.
                if found.target not in out or found.ready:
                    out[found.target] = found
    return sorted(out.values(), key=lambda e: e.target)


def ready_endpoints(slices: list[Obj], port_name: str | None) -> tuple[list[str], int]:
    """(the ready addresses, how many addresses) of the Service port named PORT_NAME (slice_endpoints)."""
    endpoints = slice_endpoints(slices, port_name)
    return sorted({e.address for e in endpoints if e.ready}), len({e.address for e in endpoints})


def backend_pods(client: Any) -> dict[str, frozenset[str]]:
    """namespace/Service -> the pods its EndpointSlices hold (ready or not), over the whole cluster."""
    out: dict[str, set[str]] = {}
    for eps in client.list(SLICE_API, "EndpointSlice"):
        metadata = eps.get("metadata") or {}
        service = (metadata.get("labels") or {}).get(SERVICE_NAME_LABEL)
        if not service:
            continue
        pods = out.setdefault("%s/%s" % (metadata.get("namespace"), service), set())
        for endpoint in eps.get("endpoints") or []:
            ref = endpoint.get("targetRef") or {}
            if ref.get("kind") == "Pod" and ref.get("name"):
                pods.add(str(ref["name"]))
    return {k: frozenset(v) for k, v in out.items()}
