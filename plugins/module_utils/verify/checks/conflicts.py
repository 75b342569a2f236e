# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The conflicts check (ingress_conflicts): the Ingress pairs whose host and path overlap and the HTTPRoute pairs that
tie on a listener are exactly those lab_expect.conflicts.expected lists (ingresses: [ns/name, ns/name], or routes:
[ns/name, ns/name] with optionally the winner Gateway API names)."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import Check, Obj, Reference, Verdict, require


def _entries(body: Obj, where: str) -> None:
    for i, conflict in enumerate(body.get("expected", [])):
        here = "%s.expected[%d]" % (where, i)
        pair = conflict.get("ingresses", conflict.get("routes")) if isinstance(conflict, dict) else None
        require(isinstance(conflict, dict) and isinstance(pair, list) and len(pair) == 2
                and ("ingresses" in conflict) != ("routes" in conflict)
                and (not conflict.get("winner") or ("routes" in conflict and conflict["winner"] in pair)),
                here, "a mapping with ingresses: [ns/name, ns/name], or routes: [ns/name, ns/name] (HTTPRoutes) and "
                "optionally winner: one of them", conflict)


def _references(body: Any) -> list[Reference]:
    """Both Ingresses, or both HTTPRoutes, of each expected conflict."""
    out = []
    for i, conflict in enumerate((body or {}).get("expected") or []):
        for field, kind in (("ingresses", "Ingress"), ("routes", "HTTPRoute")):
            out += [("lab_expect.conflicts.expected[%d].%s[%d]" % (i, field, j), kind, str(ref))
                    for j, ref in enumerate(conflict.get(field) or [])]
    return out


def _pair(ingresses: list[str]) -> tuple[str, str]:
    first, second = sorted(ingresses)[:2]
    return first, second


def _verdicts(results: Obj, body: Any, context: str) -> list[Verdict]:
    if "conflicts" not in results:
        return []
    result, expect = results["conflicts"], body or {}
    # Ingress pairs (ingress_conflicts' conflicts) and HTTPRoute pairs (its route_conflicts), alike.
    observed = {_pair(c.get("ingresses") or c.get("routes") or []): c
                for c in result.get("conflicts", []) + result.get("route_conflicts", [])
                if len(c.get("ingresses") or c.get("routes") or []) >= 2}
    wanted = {_pair(c.get("ingresses") or c.get("routes")) for c in expect.get("expected", [])}
    winners = {_pair(c["routes"]): c["winner"] for c in expect.get("expected", []) if c.get("winner")}
    out = []
    for pair in sorted(set(observed) | wanted):
        label = " vs ".join(pair)
        seen = pair in observed
        detail = str(observed[pair].get("reason") or observed[pair].get("message") or "conflict") if seen else "no conflict"
        met = seen == (pair in wanted)
        expected = "conflict" if pair in wanted else "no conflict"
        if pair in winners:
            expected += ", won by %s" % winners[pair]
            met = met and observed[pair].get("winner") == winners[pair]
        out.append(Verdict("conflicts", label, expected, detail if seen else "no conflict", met))
    if not out:
        out.append(Verdict("conflicts", "cluster", "no conflict", "no conflict", True))
    return out


CHECK = Check("conflicts", _verdicts, keys=frozenset({"expected"}), subject=None, entries=_entries, references=_references,
              fed_by="conflicts")
