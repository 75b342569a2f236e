# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The backends check (ingress_backends): each Ingress's backend Services exist, have the port and ready endpoints,
but those lab_expect.backends.failing names (namespace/name: reason regex)."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import (
    Check, Obj, Verdict, failing, outcomes, per_subject,
)


def _verdicts(results: Obj, body: Any, context: str) -> list[Verdict]:
    if "backends" not in results:
        return []
    return per_subject("backends", outcomes(results["backends"]), failing(body), context=context)


CHECK = Check("backends", _verdicts, fed_by="backends")
