# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The reachability check: lab_expect.reachability is a list of probes (http_probe's options: an Ingress or a url,
a continuous probe's rate, duration and max_failures, the backends expected to answer, failing: a reason regex
for a probe expected to fail), or each_ingress (lab_definition makes it a probe of every Ingress the lab's
workloads define). One verdict per probe; the verify role runs the continuous ones during the window."""
from __future__ import annotations

import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import (
    Check, Obj, Reference, Verdict, VerifyError, explained, failure_of, require,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_options import ProbeError, parse_continuous, parse_ingresses

# lab_expect.reachability of the inventory's default: a probe of every Ingress the lab's own workloads define.
EACH_INGRESS = "each_ingress"


def _body(body: Any, where: str) -> None:
    if body == EACH_INGRESS:  # lab_definition expands it from the lab's workloads
        return
    require(isinstance(body, list), where, "a list of probes, or %s (a probe of each Ingress the lab "
            "defines)" % EACH_INGRESS, body)
    for i, probe in enumerate(body):
        _probe_ingresses(probe, "%s[%d]" % (where, i))
        _probe_continuous(probe, "%s[%d]" % (where, i))


def _probe_ingresses(probe: Any, where: str) -> list[str]:
    """The Ingresses (namespace/name) a reachability probe names; none for a probe by url."""
    require(isinstance(probe, dict), where, "a probe mapping (http_probe options: ingress or url, ...)", probe)
    try:
        return ["%s/%s" % ref for ref in parse_ingresses(probe.get("ingress"))]
    except ProbeError as exc:
        raise VerifyError("%s.%s" % (where, exc)) from None


def _probe_continuous(probe: Obj, where: str) -> None:
    """rate, duration and max_failures of a continuous probe, checked as http_probe checks them."""
    try:
        parse_continuous(probe)
    except ProbeError as exc:
        raise VerifyError("%s.%s" % (where, exc)) from None


def _references(body: Any) -> list[Reference]:
    """The Ingresses each probe goes through."""
    out = []
    for i, probe in enumerate(body or []):
        where = "lab_expect.reachability[%d].ingress" % i
        listed = isinstance(probe.get("ingress"), list)  # several Ingresses, used in turn
        out += [("%s[%d]" % (where, j) if listed else where, "Ingress", ref)
                for j, ref in enumerate(_probe_ingresses(probe, "lab_expect.reachability[%d]" % i))]
    return out


def probe_runs(one_shot: list[Obj], continuous: list[Obj]) -> list[Obj]:
    """One result per lab_expect.reachability item: the verify role runs the continuous probes in the
    background during the window and the others after it, each loop skipping the other kind."""
    out = []
    for i, result in enumerate(one_shot):
        other = continuous[i] if i < len(continuous) else {}
        out.append(other if result.get("skipped") and other and not other.get("skipped") else result)
    return out


def _continuous_outcome(result: Obj, probe: Obj) -> tuple[bool, str]:
    """A continuous probe passes when its failures are within the allowed ones (and it sent any);
    observed says what was sent, what failed and the rate achieved."""
    cont = result.get("continuous") or {}
    failed, sent = int(cont.get("failed_count") or 0), int(cont.get("sent") or 0)
    allowed = int(probe.get("max_failures") or 0)
    passed = sent > 0 and failed <= allowed and bool(result.get("passed", True))
    text = "sent %d, failed %d (allowed %d), rate %s/s of %s/s" % (
        sent, failed, allowed, cont.get("rate_achieved", "?"), cont.get("rate_requested", probe.get("rate", "?")))
    if not sent:
        text = str(result.get("reason") or "nothing sent")
    elif failed:
        text += "; " + _failure_text(cont.get("failures") or [])
    return passed, text


def _failure_text(failures: list[Obj]) -> str:
    """'first at +12.05 s, last at +14.1 s: got 502 (expected 200) x30, ...' for a verdict."""
    counts: dict[str, int] = {}
    for f in failures:
        text = str(f.get("error") or f.get("problem") or f.get("status") or "failed")
        counts[text] = counts.get(text, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return "first at +%gs, last at +%gs: %s" % (
        failures[0].get("offset", 0), failures[-1].get("offset", 0),
        ", ".join("%s x%d" % kv for kv in ranked[:3]) + (", ..." if len(ranked) > 3 else "")) if failures else "no failure listed"


def _backend_count_text(least: int, most: Any) -> str:
    if most is not None and int(most) == least:
        return " from exactly %d backend%s" % (least, "" if least == 1 else "s")
    return (" from >= %d backends" % least if least else "") + (" from <= %d backends" % int(most) if most is not None else "")


def _probe_verdicts(results: list[Obj], probes: list[Obj], context: str = "") -> list[Verdict]:
    """One per probe; context: what the other results know about an absent object (absence_context)."""
    out = []
    for i, (probe, result) in enumerate(zip(probes, results)):
        label = str(probe.get("name") or probe.get("ingress") or probe.get("url") or "probe %d" % i)
        passed = bool(result.get("passed"))
        reason = str(result.get("reason") or "")
        failure = failure_of(result)
        if failure is not None:  # the probe could not run at all: an Ingress it names is absent, say
            reason = "could not probe: " + explained(failure, context)
        continuous = "continuous" in result
        if continuous:
            passed, reason = _continuous_outcome(result, probe)
        expect_fail = probe.get("failing")
        problems = []
        if expect_fail:
            if passed or not re.search(str(expect_fail), reason):
                problems.append("expected failure matching %r" % expect_fail)
        elif not passed:
            problems.append("expected success")
        distribution = result.get("distribution") or {}
        backends = probe.get("backends")
        if backends is not None and sorted(distribution) != sorted(backends):
            problems.append("expected answers from %s, got %s" % (sorted(backends), dict(distribution)))
        min_backends = int(probe.get("min_backends") or 0)
        if len(distribution) < min_backends:
            problems.append("expected answers from at least %d backends, got %s" % (min_backends, dict(distribution)))
        max_backends = probe.get("max_backends")
        if max_backends is not None and len(distribution) > int(max_backends):
            problems.append("expected answers from at most %d backends, got %s" % (int(max_backends), dict(distribution)))
        observed = ("pass" + (": " + reason if continuous else "") if passed else "fail: " + reason) \
            + (" %s" % dict(distribution) if distribution else "") \
            + (" (probed from inside node %s)" % result.get("node") if result.get("via") == "node" else "")
        expected = ("fail: %s" % expect_fail if expect_fail else "pass") \
            + (" with at most %d failed at %s/s" % (int(probe.get("max_failures") or 0), probe["rate"]) if continuous and "rate" in probe else "") \
            + (" from %s" % sorted(backends) if backends else "") \
            + _backend_count_text(min_backends, max_backends)
        out.append(Verdict("reachability", label, expected, observed, not problems))
    return out


def _verdicts(results: Obj, body: Any, context: str) -> list[Verdict]:
    if "reachability" not in results:
        return []
    return _probe_verdicts(probe_runs(results["reachability"], results.get("reachability_continuous") or []), body or [], context)


CHECK = Check("reachability", _verdicts, subject=None, body=_body, references=_references)
