# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""An Ingress's backends as its spec names them (rules[].http.paths[].backend and spec.defaultBackend): each
distinct Service port or resource once, with the first place that uses it. The backends check, the data plane
check, the probe's origin check and the capture of manifests read them here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

Obj = dict[str, Any]


@dataclass(frozen=True)
class BackendRef:
    service: str | None  # None for a resource backend
    port: int | str | None  # number or name
    where: str  # which rule/path uses it
    resource: str | None = None

    @property
    def label(self) -> str:
        if self.service is None:
            return "resource %s" % self.resource
        return "%s:%s" % (self.service, self.port if self.port is not None else "?")


def _ref(backend: Obj | None, where: str) -> BackendRef | None:
    if not backend:
        return None
    service = backend.get("service")
    if service:
        port = service.get("port") or {}
        number = port.get("number")
        return BackendRef(service.get("name"), number if number is not None else port.get("name"), where)
    resource = backend.get("resource") or {}
    return BackendRef(None, None, where, "%s %s" % (resource.get("kind"), resource.get("name")))


def backends_of(ingress: Obj) -> list[BackendRef]:
    """Each distinct backend of an Ingress, in spec order (the first place that uses it)."""
    spec = ingress.get("spec") or {}
    refs: list[BackendRef | None] = [_ref(spec.get("defaultBackend"), "defaultBackend")]
    for rule in spec.get("rules") or []:
        for path in (rule.get("http") or {}).get("paths") or []:
            refs.append(_ref(path.get("backend"), "%s%s" % (rule.get("host") or "*", path.get("path") or "/")))
    seen: set[tuple[Any, ...]] = set()
    out = []
    for ref in refs:
        if ref is not None and (ref.service, ref.port, ref.resource) not in seen:
            seen.add((ref.service, ref.port, ref.resource))
            out.append(ref)
    return out
