# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rehearsal's verdicts: every difference must be expected, every expected difference seen.

An expectation (lab_expect.migration.expected, or the module's `expected`) is a mapping of
regular expressions over a difference's target, ingress, request kind, request (its target path),
field and cause; the keys it leaves out match anything. A difference no expectation matches is
unexpected; an expectation no difference matches is a difference that did not happen. Differences
in every request (a data plane's own headers) count with ingress `*` and kind `everywhere`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError

Obj = dict[str, Any]
EXPECT_KEYS = ("target", "ingress", "kind", "request", "field", "cause")
# An answer expected to be the same on both sides: over the request, and `answer`, what both answered
# ("<status> <namespace/service>", see answered()), so that "the same" cannot be two 404s.
SAME_KEYS = ("target", "ingress", "kind", "request", "answer")


class ExpectError(OptionError):
    """An expected difference is malformed; the message names the field."""


def parse_expected(raw: Any, where: str = "expected", keys: tuple[str, ...] = EXPECT_KEYS) -> list[dict[str, str]]:
    if raw in (None, []):
        return []
    if not isinstance(raw, list):
        raise ExpectError("%s: expected a list of mappings of %s to regular expressions, got %r"
                          % (where, ", ".join(keys), raw))
    out = []
    for i, item in enumerate(raw):
        at = "%s[%d]" % (where, i)
        if not isinstance(item, dict) or not item:
            raise ExpectError("%s: expected a mapping with some of %s, got %r" % (at, ", ".join(keys), item))
        unknown = sorted(set(item) - set(keys))
        if unknown:
            raise ExpectError("%s: expected only the keys %s, got %s" % (at, ", ".join(keys), unknown))
        for k, v in item.items():
            if not isinstance(v, str):
                raise ExpectError("%s.%s: expected a regular expression string, got %r" % (at, k, v))
            try:
                re.compile(v)
            except re.error as exc:
                raise ExpectError("%s.%s: %r is not a valid regular expression (%s)" % (at, k, v, exc)) from None
        out.append({str(k): str(v) for k, v in item.items()})
    return out


@dataclass
class Difference:
    target: str
    ingress: str
    kind: str
    request: str
    field: str
    cause: str
    baseline: str
    answer: str
    curl: str

    def values(self) -> dict[str, str]:
        return {"target": self.target, "ingress": self.ingress, "kind": self.kind, "request": self.request,
                "field": self.field, "cause": self.cause}


def differences(comparison: Obj) -> list[Difference]:
    """Every reported difference of every target, flat."""
    out = []
    for target, body in (comparison.get("targets") or {}).items():
        for row in body.get("rows") or []:
            for d in row.get("differences") or []:
                out.append(Difference(target=target, ingress=row["ingress"], kind=row["kind"], request=row["target"],
                                      field=d["field"], cause=d["cause"], baseline=d["baseline"], answer=d["target"],
                                      curl=(row.get("curl") or {}).get(target, "")))
        for d in body.get("everywhere") or []:
            out.append(Difference(target=target, ingress="*", kind="everywhere", request="*", field=d["field"],
                                  cause=d["cause"], baseline=d["baseline"], answer=d["target"], curl=""))
    return out


def answered(answer: Obj) -> str:
    """An answer in short: its status (or the statuses of a repeated request) and the backend."""
    status = ",".join(sorted(answer.get("statuses") or {})) or str(answer.get("status"))
    backends = ",".join(sorted(answer.get("backends") or {})) or answer.get("backend") or "-"
    return "%s %s" % (status, backends)


def _matches(expectation: dict[str, str], diff: Difference) -> bool:
    values = diff.values()
    return all(re.search(pattern, values[k]) for k, pattern in expectation.items())


def _same_rows(comparison: Obj) -> list[dict[str, str]]:
    out = []
    for target, body in (comparison.get("targets") or {}).items():
        for row in body.get("rows") or []:
            if row["outcome"] == "same":
                out.append({"target": target, "ingress": row["ingress"], "kind": row["kind"], "request": row["target"],
                            "answer": row.get("answered") or answered(row.get("baseline") or {})})
    return out


def judge(comparison: Obj, expected: list[dict[str, str]], same: list[dict[str, str]] | None = None,
          allowed: list[dict[str, str]] | None = None) -> Obj:
    """unexpected: differences no expectation (or allowance) matches; unseen: expectations no difference matches
    (an allowance need not be seen: it accepts a change, as a CI gate's list of accepted behaviours does);
    unseen_same: answers expected the same on both sides that no such request had; baseline_idle: the
    baseline served none of the corpus (nothing was compared)."""
    diffs = differences(comparison)
    unexpected = [d for d in diffs if not any(_matches(e, d) for e in list(expected) + list(allowed or []))]
    unseen = [e for e in expected if not any(_matches(e, d) for d in diffs)]
    rows = _same_rows(comparison)
    unseen_same = [e for e in same or [] if not any(all(re.search(p, r[k]) for k, p in e.items()) for r in rows)]
    idle = comparison.get("requests", 0) > 0 and comparison.get("baseline_served", 0) == 0
    return {
        "passed": not unexpected and not unseen and not unseen_same and not idle,
        "baseline_idle": idle,
        "unseen_same": unseen_same,
        "unexpected": [d.values() | {"baseline": d.baseline, "answer": d.answer, "curl": d.curl} for d in unexpected],
        "unseen": unseen,
        "differences": len(diffs),
    }
