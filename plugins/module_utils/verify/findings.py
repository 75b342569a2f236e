# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A diagnose finding, the one shape ingress_diagnose returns for Ingresses and Gateway API alike."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, Sequence, TypeVar

ERROR = "error"
WARNING = "warning"
INFO = "info"  # what a controller will do, stated so that a report can say who serves what; never a fault


class Writer(Protocol):
    """A status writer as the culprit rule reads it: an Ingress controller or a Gateway API implementation."""

    @property
    def namespace(self) -> str: ...

    @property
    def address_from_lb(self) -> bool: ...  # it writes its Service's LoadBalancer address


W = TypeVar("W", bound=Writer)


def culprits_of(namespace: str, writers: Sequence[W], by_class: Sequence[W] | None = None) -> list[W]:
    """The one culprit rule, for an Ingress's writers and a Gateway's alike. A writer that claims the
    object only because it skips the class check (BY_CLASS are those its class names) is the culprit,
    when its class names another. Else the object's own namespace's controller is presumed its intended
    owner (a chart puts its Gateway there; a team its Ingress), so the culprits are the writers from other
    namespaces. Without a writer in its namespace, the culprits are those that do not publish a
    LoadBalancer address (node or fixed addresses are the usual accident); if that singles nobody out,
    all of them."""
    if by_class and len(by_class) < len(writers):
        return [w for w in writers if w not in by_class]
    if any(w.namespace == namespace for w in writers):
        return [w for w in writers if w.namespace != namespace]
    non_lb = [w for w in writers if not w.address_from_lb]
    return non_lb if 0 < len(non_lb) < len(writers) else list(writers)


@dataclass
class Finding:
    kind: str
    severity: str
    message: str
    ingress: str | None = None
    controllers: list[str] = field(default_factory=list)
    culprits: list[str] = field(default_factory=list)
    fix: dict[str, Any] = field(default_factory=dict)
    period: str | None = None
    # The Gateway API object it is about (namespace/name), where it is one.
    gateway: str | None = None
    route: str | None = None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "severity": self.severity, "message": self.message,
                               "controllers": self.controllers}
        for key in ("ingress", "gateway", "route", "period"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.culprits:
            out["culprits"] = self.culprits
        if self.fix:
            out["fix"] = self.fix
        return out


def addresses_text(addresses: list[str] | None) -> str:
    """Addresses as every finding writes them: [a, b], [] for none."""
    return "[%s]" % ", ".join(addresses or [])


def fix_of(settings: list[tuple[str, tuple[str, str]]]) -> dict[str, Any]:
    """A finding's fix from (controller ref, (its chart value, the flag it sets)) pairs: the chart values and
    the args, each prefixed with its controller, in order; none without a setting."""
    if not settings:
        return {}
    return {"chart_values": ["%s: %s" % (ref, value) for ref, (value, _flag) in settings],
            "args": ["%s: %s" % (ref, flag) for ref, (_value, flag) in settings]}
