# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The addresses check, from the status watch: each Ingress had a status address at some point of the window, but
those lab_expect.addresses.failing names (namespace/name: reason regex), which the build goes on past."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import Check, Obj, Verdict, failing, per_subject


def _outcomes(status: Obj) -> dict[str, tuple[bool, str]]:
    """From the status watch: did each Ingress have a status address at some point of the window."""
    out = {}
    for key, item in (status.get("ingresses") or {}).items():
        seen = sorted({a for addrs in item.get("addresses_seen") or [] for a in addrs})
        out[key] = (True, "address " + ", ".join(seen)) if seen else (False, "no address during the watch window")
    return out


def _verdicts(results: Obj, body: Any, context: str) -> list[Verdict]:
    if "status" not in results:
        return []
    return per_subject("addresses", _outcomes(results["status"]), failing(body), context=context)


CHECK = Check("addresses", _verdicts, fed_by="status")
