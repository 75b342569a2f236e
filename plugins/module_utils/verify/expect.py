# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""lab_expect, a scenario's expectations: its shape checked before any check runs (validate_expect), and the
objects it names, which lab_definition checks against the lab (controller_references, ingress_references, ...).
One key per check of the registry (verify/checks/registry.py), each check's body checked by that check.

An expectation says which subjects must fail (and why, as a regex over the module's reason); every other
subject must pass. So an expected failure is asserted as that failure, and an unexpected pass is as much a
miss as an unexpected failure.
"""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import Obj, VerifyError, regex, require
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.reachability import EACH_INGRESS
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks import registry

__all__ = ["EACH_INGRESS", "VerifyError", "validate_expect", "controller_references", "ingress_references",
           "gateway_references", "route_references", "ingress_patterns"]


def validate_expect(expect: Any) -> Obj:
    """Check the shape of a scenario's `lab_expect` before any check runs: every key's shape in the order
    written, then what each check's entries say, in the table's order."""
    require(isinstance(expect, dict), "lab_expect", "a mapping with some of " + ", ".join(registry.keys()), expect)
    unknown = sorted(set(expect) - set(registry.keys()))
    require(not unknown, "lab_expect", "only the keys " + ", ".join(registry.keys()), unknown)
    for key, body in expect.items():
        check, where = registry.check_named(key), "lab_expect." + key
        if check.body is not None:
            check.body(body, where)
            continue
        require(isinstance(body, dict), where, "a mapping", body)
        extra = sorted(set(body) - check.keys)
        require(not extra, where, "only the keys " + ", ".join(sorted(check.keys)), extra)
        failing = body.get("failing", {})
        require(isinstance(failing, dict), where + ".failing", "a mapping of namespace/name to a reason regex", failing)
        for subject, pattern in failing.items():
            regex(pattern, "%s.failing[%s]" % (where, subject))
    for check in registry.CHECKS:
        if check.entries is not None:
            check.entries(expect.get(check.key) or {}, "lab_expect." + check.key)
    return dict(expect)


def references(expect: Obj, kind: str) -> list[tuple[str, str]]:
    """(field, reference) of every KIND a validated lab_expect names: each check's `failing` subjects of that kind
    in the table's order, then what each check names beyond them."""
    out = [("lab_expect.%s.failing[%s]" % (c.key, ref), ref)
           for c in registry.CHECKS if c.subject == kind for ref in (expect.get(c.key) or {}).get("failing") or {}]
    for c in registry.CHECKS:
        if c.references is not None:
            out += [(where, ref) for where, what, ref in c.references(expect.get(c.key)) if what == kind]
    return out


def controller_references(expect: Obj) -> list[tuple[str, str]]:
    """(field, namespace/release) of every controller a validated lab_expect names."""
    return references(expect, "controller")


def ingress_references(expect: Obj) -> list[tuple[str, str]]:
    """(field, namespace/name) of every Ingress a validated lab_expect names: the failing subjects of addresses,
    status, backends and dataplane, both Ingresses of each expected conflict, and the Ingresses each reachability
    probe goes through. Diagnose names Ingresses by regex (ingress_patterns)."""
    return references(expect, "Ingress")


def gateway_references(expect: Obj) -> list[tuple[str, str]]:
    """(field, namespace/name) of every Gateway a validated lab_expect names."""
    return references(expect, "Gateway")


def route_references(expect: Obj) -> list[tuple[str, str]]:
    """(field, namespace/name) of every HTTPRoute a validated lab_expect names."""
    return references(expect, "HTTPRoute")


def ingress_patterns(expect: Obj) -> list[tuple[str, str]]:
    """(field, regex) of every diagnose finding that names its Ingress."""
    return references(expect, "Ingress pattern")
