# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verification modules' results judged against a scenario's validated lab_expect: every check of the
registry (verify/checks/registry.py) in the table's order.

A module that failed (an object it reads is absent, the API server does not answer) gives each check it feeds
one unmet verdict saying why, and the report is written all the same: a broken lab is when the report matters most.
"""
from __future__ import annotations

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import NOT_RUN, Obj, Verdict, explained, failure_of
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks import registry


def absence_context(results: Obj) -> str:
    """What the other results know about why something is missing (controllers that did not start stop lab.yml
    before the workloads and Gateways are created; a watch that saw no Ingress at all): the first check that knows."""
    return next((text for c in registry.CHECKS if c.absence is not None for text in [c.absence(results)] if text), "")


def _not_run_verdicts(results: Obj, expect: Obj, context: str) -> tuple[Obj, list[Verdict]]:
    """(the results that ran, one verdict per check fed by a module that failed); context: absence_context."""
    ran, verdicts = dict(results), []
    for key, checks in registry.modules():
        message = failure_of(results.get(key))
        if message is None:
            continue
        del ran[key]
        for check in checks:
            if check.optional and check.key not in expect:
                continue  # judged only where the watch covered Gateway API or lab_expect names some
            verdicts.append(Verdict(check.key, NOT_RUN, "the check runs", "fail: " + explained(message, context), False))
    return ran, verdicts


def evaluate(results: Obj, expect: Obj) -> list[Verdict]:
    """Verdicts for every check that ran (results has one entry per module), and one unmet verdict per check
    whose module failed; then each check may restate them (a rehearsal's report_only)."""
    context = absence_context(results)
    results, verdicts = _not_run_verdicts(results, expect, context)
    for check in registry.CHECKS:
        verdicts += check.verdicts(results, expect.get(check.key), context)
    for check in registry.CHECKS:
        if check.restate is not None:
            verdicts = check.restate(verdicts, expect.get(check.key))
    return verdicts
