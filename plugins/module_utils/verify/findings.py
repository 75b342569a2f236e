# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""A diagnose finding, the one shape ingress_diagnose returns for Ingresses and Gateway API alike."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

ERROR = "error"
WARNING = "warning"
INFO = "info"  # what a controller will do, stated so that a report can say who serves what; never a fault


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
