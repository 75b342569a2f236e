# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One check per kind the status watch follows beside the Ingresses (verify/subjects' table: gateways, routes,
grpcroutes): each object passes, but those lab_expect.<result_key>.failing names (namespace/name: reason regex): a
Gateway expected to fail (no address, outside the pools, changed more than status.max_changes), a route expected
not to be Accepted and ResolvedRefs by each parent it names. Judged where the watch covered the kind (the cluster
serves Gateway API) or lab_expect names it; a kind named and not watched says why. A kind added to the subjects
table is a check here with no line of its own."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import (
    NOT_RUN, Check, Obj, Verdict, failing, outcomes, per_subject,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import WATCHED
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects.kind import SubjectKind


def _unwatched(check: str, noun: str, status: Obj, expected_failing: dict[str, str]) -> list[Verdict]:
    """lab_expect names Gateways or routes and the status watch saw none: one unmet verdict per
    subject it names (or one for the check), saying whether the cluster serves Gateway API at all."""
    why = ("the cluster does not serve Gateway API (its CRDs are not installed)" if status.get("unserved")
           else "the lab's namespaces hold no %s" % noun)
    subjects = sorted(expected_failing) or [NOT_RUN]
    return [Verdict(check, subject, "fail: " + expected_failing[subject] if subject in expected_failing else "the check runs",
                    "fail: no %s watched: %s" % (noun, why), False) for subject in subjects]


def watched_check(kind: SubjectKind) -> Check:
    """The check of one watched kind, keyed by its result key."""
    key = kind.result_key

    def verdicts(results: Obj, body: Any, context: str) -> list[Verdict]:
        if "status" not in results:
            return []
        if results["status"].get(key):
            return per_subject(key, outcomes(results["status"], key), failing(body), noun=kind.kind, seen_by="watched")
        if body is not None:  # expected, and the watch saw none (or cannot: no CRDs): say why instead of judging nothing
            return _unwatched(key, kind.kind, results["status"], failing(body))
        return []

    return Check(key, verdicts, subject=kind.kind, fed_by="status", optional=True)


CHECKS = tuple(watched_check(kind) for kind in WATCHED)
