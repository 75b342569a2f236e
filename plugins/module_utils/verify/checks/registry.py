# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The checks of the verify report, in the order of its verdict table (summary.md's and report.html's follow it).
Adding a check is one file beside this one (its `CHECK`, a base.Check) and its entry here; the kinds the status
watch follows beside the Ingresses (verify/subjects' table) are a check each already (watched.py).

The lab_expect schema, the verdicts and the report read `registry.CHECKS` when they run, never a check by name."""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks import (
    actions, addresses, backends, conflicts, controllers, dataplane, diagnose, migration, reachability, status, watched,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import Check

CHECKS: tuple[Check, ...] = (
    controllers.CHECK,
    addresses.CHECK,
    diagnose.CHECK,
    status.CHECK,
    *watched.CHECKS,  # gateways, routes, grpcroutes: beside status, in the subjects table's order
    backends.CHECK,
    conflicts.CHECK,
    actions.CHECK,
    dataplane.CHECK,
    reachability.CHECK,
    migration.CHECK,
)


def keys() -> tuple[str, ...]:
    """The checks' keys in lab_expect, in the table's order."""
    return tuple(c.key for c in CHECKS)


def check_named(key: str) -> Check:
    """The check of a lab_expect key (one of keys())."""
    return next(c for c in CHECKS if c.key == key)


def modules() -> list[tuple[str, tuple[Check, ...]]]:
    """The module results the checks read (fed_by), each with the checks it feeds in the table's order; a
    module comes where the check of its own name stands (status: after diagnose, though addresses is fed by it)."""
    fed = {c.fed_by for c in CHECKS if c.fed_by}
    return [(c.key, tuple(d for d in CHECKS if d.fed_by == c.key)) for c in CHECKS if c.key in fed]
