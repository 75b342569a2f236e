# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Turning the verification modules' results into verdicts against a scenario's
expectations, and writing them as a JSON report and a Markdown summary.

An expectation says which subjects must fail (and why, as a regex over the module's
reason); every other subject must pass. So an expected failure is asserted as that
failure, and an unexpected pass is as much a miss as an unexpected failure.
"""
from __future__ import annotations

import json
import os
import re
import tempfile
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError
from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso, parse_time
from ansible_collections.kindlab.ingress.plugins.module_utils.migration import report as migration_report
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.report import EXPECT_KEYS as MIGRATION_EXPECT_KEYS
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe import ProbeError, parse_continuous, parse_ingresses
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.motion import motion, strips
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_html import render as render_html
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_html import window_length
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import WATCHED, WATCHED_KEYS
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.timeline import gateway_rows
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.timeline import markdown_lines as timeline_lines
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.timeline import merge as merge_timeline
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.timeline import status_origin

if TYPE_CHECKING:  # what a module hands its logic besides its options (see _module.Module)
    from ansible_collections.kindlab.ingress.plugins.module_utils._module import Module, Params

Obj = dict[str, Any]

# The watched subject kinds' checks (subjects/: gateways, routes, ...) follow status, in the table's order.
CHECKS = ("controllers", "addresses", "diagnose", "status") + WATCHED_KEYS + (
    "backends", "conflicts", "actions", "dataplane", "reachability", "migration")
_EXPECT_KEYS = {
    # A controller expected not to start (namespace/release: reason regex), and an Ingress expected
    # to get no status address (namespace/name: reason regex): the build goes on past them, and
    # verify asserts them like any other expected failure.
    "controllers": {"failing"},
    "addresses": {"failing"},
    "diagnose": {"findings"},
    "status": {"settle", "window", "max_changes", "pools", "allow_empty", "failing"},
    # From the same status watch, where the cluster serves Gateway API, one per watched kind: a Gateway
    # expected to fail (no address, outside the pools, changed more than status.max_changes;
    # namespace/name: reason regex), a route expected not to be Accepted and ResolvedRefs by each
    # parent it names.
    **{key: {"failing"} for key in WATCHED_KEYS},
    "backends": {"failing"},
    "conflicts": {"expected"},
    "reachability": {"probes"},
    # An action expected to fail (its name: error regex); every other lab_actions entry must work.
    "actions": {"failing"},
    # ingress_dataplane polled through the window: an Ingress expected to diverge at the end (its
    # findings' text: regex), and how often the data planes are read.
    "dataplane": {"failing", "interval"},
    # The migration rehearsal (ingress_migration): the baseline and targets, the Ingresses, the scenario's
    # own requests and the differences it expects (migration/report.py validates them).
    "migration": MIGRATION_EXPECT_KEYS,
}


class VerifyError(OptionError):
    """An expectation is malformed; the message names the field."""


@dataclass
class Verdict:
    check: str  # one of CHECKS
    subject: str  # what was checked: an Ingress, a probe, a finding
    expected: str  # "pass" or "fail: <regex>"
    observed: str  # "pass" or "fail: <reason>"
    met: bool


def _require(cond: bool, where: str, expected: str, got: Any) -> None:
    if not cond:
        raise VerifyError("%s: expected %s, got %r" % (where, expected, got))


def _regex(value: Any, where: str) -> str:
    _require(isinstance(value, str), where, "a regular expression string", value)
    try:
        re.compile(value)
    except re.error as exc:
        raise VerifyError("%s: %r is not a valid regular expression (%s)" % (where, value, exc)) from None
    return str(value)


# lab_expect.reachability of the inventory's default: a probe of every Ingress the lab's own workloads define.
EACH_INGRESS = "each_ingress"


def validate_expect(expect: Any) -> Obj:
    """Check the shape of a scenario's `lab_expect` before any check runs."""
    _require(isinstance(expect, dict), "lab_expect", "a mapping with some of " + ", ".join(CHECKS), expect)
    unknown = sorted(set(expect) - set(CHECKS))
    _require(not unknown, "lab_expect", "only the keys " + ", ".join(CHECKS), unknown)
    for check, body in expect.items():
        where = "lab_expect." + check
        if check == "reachability":
            if body == EACH_INGRESS:  # lab_definition expands it from the lab's workloads
                continue
            _require(isinstance(body, list), where, "a list of probes, or %s (a probe of each Ingress the lab "
                     "defines)" % EACH_INGRESS, body)
            for i, probe in enumerate(body):
                _probe_ingresses(probe, "%s[%d]" % (where, i))
                _probe_continuous(probe, "%s[%d]" % (where, i))
            continue
        if check == "migration":
            migration_report.validate(body, where)
            continue
        _require(isinstance(body, dict), where, "a mapping", body)
        extra = sorted(set(body) - _EXPECT_KEYS[check])
        _require(not extra, where, "only the keys " + ", ".join(sorted(_EXPECT_KEYS[check])), extra)
        failing = body.get("failing", {})
        _require(isinstance(failing, dict), where + ".failing", "a mapping of namespace/name to a reason regex", failing)
        for subject, pattern in failing.items():
            _regex(pattern, "%s.failing[%s]" % (where, subject))
    for i, finding in enumerate((expect.get("diagnose") or {}).get("findings", [])):
        where = "lab_expect.diagnose.findings[%d]" % i
        _require(isinstance(finding, dict) and isinstance(finding.get("kind"), str), where, "a mapping with kind", finding)
        for key in ("ingress", "culprit", "reason"):
            if key in finding:
                _regex(finding[key], "%s.%s" % (where, key))
    for i, conflict in enumerate((expect.get("conflicts") or {}).get("expected", [])):
        where = "lab_expect.conflicts.expected[%d]" % i
        pair = conflict.get("ingresses", conflict.get("routes")) if isinstance(conflict, dict) else None
        _require(isinstance(conflict, dict) and isinstance(pair, list) and len(pair) == 2
                 and ("ingresses" in conflict) != ("routes" in conflict)
                 and (not conflict.get("winner") or ("routes" in conflict and conflict["winner"] in pair)),
                 where, "a mapping with ingresses: [ns/name, ns/name], or routes: [ns/name, ns/name] (HTTPRoutes) and "
                 "optionally winner: one of them", conflict)
    return dict(expect)


def _probe_ingresses(probe: Any, where: str) -> list[str]:
    """The Ingresses (namespace/name) a reachability probe names; none for a probe by url."""
    _require(isinstance(probe, dict), where, "a probe mapping (http_probe options: ingress or url, ...)", probe)
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


# Checks whose `failing` subjects are Ingresses (namespace/name); controllers' are releases, each
# watched kind's its objects (gateways' Gateways, routes' HTTPRoutes, ...).
INGRESS_SUBJECTS = ("addresses", "status", "backends", "dataplane")
# What each per-subject check names, for "not observed" (`noun`).
_NOUNS = {"controllers": "controller"} | {kind.result_key: kind.kind for kind in WATCHED}


def gateway_references(expect: Obj) -> list[tuple[str, str]]:
    """(field, namespace/name) of every Gateway a validated lab_expect names."""
    return [("lab_expect.gateways.failing[%s]" % ref, ref) for ref in (expect.get("gateways") or {}).get("failing") or {}]


def route_references(expect: Obj) -> list[tuple[str, str]]:
    """(field, namespace/name) of every HTTPRoute a validated lab_expect names."""
    out = [("lab_expect.routes.failing[%s]" % ref, ref) for ref in (expect.get("routes") or {}).get("failing") or {}]
    for i, conflict in enumerate((expect.get("conflicts") or {}).get("expected") or []):
        out += [("lab_expect.conflicts.expected[%d].routes[%d]" % (i, j), str(ref)) for j, ref in enumerate(conflict.get("routes") or [])]
    return out


def controller_references(expect: Obj) -> list[tuple[str, str]]:
    """(field, namespace/release) of every controller a validated lab_expect names."""
    return [("lab_expect.controllers.failing[%s]" % ref, ref)
            for ref in (expect.get("controllers") or {}).get("failing") or {}]


def ingress_references(expect: Obj) -> list[tuple[str, str]]:
    """(field, namespace/name) of every Ingress a validated lab_expect names: the failing subjects
    of addresses, status and backends, both Ingresses of each expected conflict, and the Ingresses
    each reachability probe goes through. Diagnose names Ingresses by regex (ingress_patterns)."""
    out = [("lab_expect.%s.failing[%s]" % (check, ref), ref)
           for check in INGRESS_SUBJECTS for ref in (expect.get(check) or {}).get("failing") or {}]
    for i, conflict in enumerate((expect.get("conflicts") or {}).get("expected") or []):
        out += [("lab_expect.conflicts.expected[%d].ingresses[%d]" % (i, j), str(ref))
                for j, ref in enumerate(conflict.get("ingresses") or [])]
    for i, probe in enumerate(expect.get("reachability") or []):
        where = "lab_expect.reachability[%d].ingress" % i
        listed = isinstance(probe.get("ingress"), list)  # several Ingresses, used in turn
        out += [("%s[%d]" % (where, j) if listed else where, ref)
                for j, ref in enumerate(_probe_ingresses(probe, "lab_expect.reachability[%d]" % i))]
    return out


def ingress_patterns(expect: Obj) -> list[tuple[str, str]]:
    """(field, regex) of every diagnose finding that names its Ingress."""
    return [("lab_expect.diagnose.findings[%d].ingress" % i, finding["ingress"])
            for i, finding in enumerate((expect.get("diagnose") or {}).get("findings") or []) if "ingress" in finding]


def _per_subject(check: str, observed: dict[str, tuple[bool, str]], failing: dict[str, str],
                 say_pass: bool = False, context: str = "") -> list[Verdict]:
    """Verdicts for a check that passes or fails each subject (status, backends); with say_pass a
    pass keeps its text (the data plane's: when it converged); context: what the other results know
    about a subject that is absent (absence_context)."""
    out = []
    for subject in sorted(set(observed) | set(failing)):
        passed, reason = observed.get(subject, (True, "not observed"))
        if subject not in observed:
            passed, reason = False, "not observed (no such %s %s)%s" % (
                _NOUNS.get(check, "Ingress"), "watched" if check in WATCHED_KEYS else "selected", context)
        pattern = failing.get(subject)
        if pattern is None:
            met = passed
            expected = "pass"
        else:
            met = not passed and re.search(pattern, reason) is not None
            expected = "fail: " + pattern
        text = ("pass: " + reason if say_pass and reason else "pass") if passed else "fail: " + reason
        out.append(Verdict(check, subject, expected, text, met))
    return out


def _unwatched(check: str, status: Obj, failing: dict[str, str]) -> list[Verdict]:
    """lab_expect names Gateways or routes and the status watch saw none: one unmet verdict per
    subject it names (or one for the check), saying whether the cluster serves Gateway API at all."""
    noun = _NOUNS[check]
    why = ("the cluster does not serve Gateway API (its CRDs are not installed)" if status.get("unserved")
           else "the lab's namespaces hold no %s" % noun)
    subjects = sorted(failing) or [NOT_RUN]
    return [Verdict(check, subject, "fail: " + failing[subject] if subject in failing else "the check runs",
                    "fail: no %s watched: %s" % (noun, why), False) for subject in subjects]


def _ingress_outcomes(result: Obj, key: str = "ingresses") -> dict[str, tuple[bool, str]]:
    """(passed, reason) of each subject of a module's result: its Ingresses, or its KEY (gateways, routes)."""
    return {name: (bool(item.get("passed")), str(item.get("reason") or "")) for name, item in (result.get(key) or {}).items()}


def _finding_text(finding: Obj) -> str:
    """ingress_diagnose calls the explanation `message`."""
    return str(finding.get("message") or finding.get("reason") or "")


def _diagnose_verdicts(result: Obj, expect: Obj) -> list[Verdict]:
    # An expected finding may be of any severity (a warning a scenario sets out to show); an
    # unexpected one fails the check only when it is an error.
    findings = list(result.get("findings", []))
    wanted = expect.get("findings", [])
    out = []
    matched: set[int] = set()
    for want in wanted:
        hit = None
        for i, finding in enumerate(findings):
            if i in matched or finding.get("kind") != want["kind"]:
                continue
            text = {"ingress": str(finding.get("ingress", "")), "culprit": " ".join(map(str, finding.get("culprits", []))),
                    "reason": _finding_text(finding)}
            if all(re.search(want[k], text[k]) for k in ("ingress", "culprit", "reason") if k in want):
                hit = i
                break
        label = "%s %s" % (want["kind"], want.get("ingress", ""))
        if hit is None:
            out.append(Verdict("diagnose", label.strip(), "finding " + json.dumps(want, sort_keys=True), "no such finding", False))
        else:
            matched.add(hit)
            f = findings[hit]
            out.append(Verdict("diagnose", label.strip(), "finding", "found: %s" % _finding_text(f), True))
    for i, finding in enumerate(findings):
        if i not in matched and finding.get("severity", "error") == "error":
            out.append(Verdict("diagnose", "%s %s" % (finding.get("kind"), finding.get("ingress", "")), "no finding",
                               "unexpected finding: %s" % _finding_text(finding), False))
    if not out:
        out.append(Verdict("diagnose", "cluster", "no finding", "no finding", True))
    return out


def _pair(ingresses: list[str]) -> tuple[str, str]:
    first, second = sorted(ingresses)[:2]
    return first, second


def _conflict_verdicts(result: Obj, expect: Obj) -> list[Verdict]:
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


def _reachability_verdicts(results: list[Obj], probes: list[Obj], context: str = "") -> list[Verdict]:
    """One per probe; context: what the other results know about an absent object (absence_context)."""
    out = []
    for i, (probe, result) in enumerate(zip(probes, results)):
        label = str(probe.get("name") or probe.get("ingress") or probe.get("url") or "probe %d" % i)
        passed = bool(result.get("passed"))
        reason = str(result.get("reason") or "")
        failure = failure_of(result)
        if failure is not None:  # the probe could not run at all: an Ingress it names is absent, say
            reason = "could not probe: " + _explained(failure, context)
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


def _action_verdicts(result: Obj, failing: dict[str, str]) -> list[Verdict]:
    """One per action: it must have worked, unless lab_expect.actions.failing names it."""
    out = []
    for action in result.get("actions") or []:
        name = str(action.get("name"))
        observed = "pass: " + str(action.get("detail") or "done") if action.get("ok") else "fail: " + str(action.get("error"))
        pattern = failing.get(name)
        met = bool(action.get("ok")) if pattern is None else (not action.get("ok") and re.search(pattern, observed) is not None)
        out.append(Verdict("actions", name, "pass" if pattern is None else "fail: " + pattern, observed, met))
    ran = {str(action.get("name")) for action in result.get("actions") or []}
    for name in sorted(set(failing) - ran):  # an expected failure of no action that ran is a miss, not a pass
        out.append(Verdict("actions", name, "fail: " + failing[name], "fail: not observed (no such action ran)", False))
    return out


def rollout_pods(actions: Obj) -> dict[str, tuple[str, list[str]]]:
    """address → (the rollout action, the pod IPs before it) for every rollout the actions did."""
    out = {}
    for action in actions.get("actions") or []:
        if action.get("kind") == "rollout" and action.get("ok"):
            for ip in action.get("before") or []:
                out[str(ip)] = (str(action.get("name")), list(action.get("before") or []))
    return out


def _dataplane_outcomes(result: Obj, actions: Obj) -> dict[str, tuple[bool, str]]:
    """Per Ingress: the data-plane findings at the end of the window, in words (pod, addresses,
    whether stale addresses are the pods a rollout replaced), and when the data planes converged."""
    before_rollout = rollout_pods(actions)
    texts: dict[str, list[str]] = {}
    for finding in result.get("findings") or []:
        for ingress in [finding.get("ingress")] if finding.get("ingress") else finding.get("ingresses") or [""]:
            line = "%s in %s: %s" % (finding.get("kind"), finding.get("pod") or "no pod", finding.get("address") or finding.get("reason") or "")
            host = str(finding.get("address") or "").rsplit(":", 1)[0].strip("[]")  # an IPv6 target is [address]:port
            if finding.get("kind") == "stale" and host in before_rollout:
                line += " (a pod replaced by %s)" % before_rollout[host][0]
            if finding.get("since"):
                line += " (last seen ready %s)" % finding["since"]
            texts.setdefault(str(ingress), []).append(line)
    out = {ingress: (False, "; ".join(sorted(lines))) for ingress, lines in texts.items()}
    for pod in (result.get("pods") or {}).values():
        for backend in pod.get("backends") or []:
            ingress = str(backend.get("ingress"))
            if ingress not in out:
                out[ingress] = (True, "every replica routes to the ready endpoints" + _convergence(result, actions, ingress))
    return out


def _convergence(result: Obj, actions: Obj, ingress: str) -> str:
    """` (diverged, then converged N s after ACTION started)` for an Ingress whose replicas all match
    at the end: its last data-plane event is when the last divergence ended (a replica converged,
    or went); N counts from the last action that started before it. '' if it never diverged."""
    events = [e for e in result.get("timeline") or [] if e.get("ingress") == ingress]
    if not any(e.get("finding") in ("stale", "missing") for e in events):
        return ""
    times = [t for e in events for t in [parse_time(e.get("time"))] if t is not None]
    if not times:
        return ""
    when = max(times)
    before = [(t, str(a.get("name"))) for a in actions.get("actions") or []
              for t in [parse_time(a.get("started"))] if t is not None and t <= when]
    if not before:
        return " (diverged, then converged at %s)" % iso(when)
    started, name = max(before)
    return " (diverged, then converged %.1f s after %r started)" % ((when - started).total_seconds(), name)


def _controller_outcomes(result: Obj) -> dict[str, tuple[bool, str]]:
    """controller_health's result: namespace/release → (started, reason)."""
    return {key: (bool(item.get("passed")), str(item.get("reason") or ""))
            for key, item in (result.get("controllers") or {}).items()}


def _address_outcomes(status: Obj) -> dict[str, tuple[bool, str]]:
    """From the status watch: did each Ingress have a status address at some point of the window."""
    out = {}
    for key, item in (status.get("ingresses") or {}).items():
        seen = sorted({a for addrs in item.get("addresses_seen") or [] for a in addrs})
        out[key] = (True, "address " + ", ".join(seen)) if seen else (False, "no address during the watch window")
    return out


# The checks each module's result feeds. A module that failed (an object it reads is absent, the API
# server does not answer) gives each of them one unmet verdict saying why, and the report is written
# all the same: a broken lab is when the report matters most.
_FED_BY = {
    "controllers": ("controllers",),
    "diagnose": ("diagnose",),
    "status": ("addresses", "status") + WATCHED_KEYS,
    "backends": ("backends",),
    "conflicts": ("conflicts",),
    "actions": ("actions",),
    "dataplane": ("dataplane",),
}
NOT_RUN = "(could not run)"  # the subject of a check whose module failed


def failure_of(result: Any) -> str | None:
    """The message of a module that failed (the verify role keeps going past it), None for one that ran."""
    if isinstance(result, dict) and result.get("failed"):
        return str(result.get("msg") or "the module failed without a message")
    return None


def absence_context(results: Obj) -> str:
    """What the other results know about why something is missing: controllers that did not start
    stop lab.yml before the workloads (and Gateways) are created; a watch that saw no Ingress at all."""
    controllers = results.get("controllers") or {}
    failures = [] if failure_of(controllers) else list(controllers.get("failures") or [])
    if failures:
        return " (the lab's controllers did not all start - %s - so the build stopped before the workloads)" % "; ".join(failures)
    status = results.get("status")
    if isinstance(status, dict) and not failure_of(status) and "ingresses" in status and not status["ingresses"]:
        return " (the lab's namespaces hold no Ingress: the build stopped before the workloads, or they were deleted since)"
    return ""


def _explained(message: str, context: str) -> str:
    """A module's failure for a verdict, with what the other results know when it names something absent."""
    if context and re.search(r"not found|no such|does not exist|the server could not find", message, re.IGNORECASE):
        return message + context
    return message


def _not_run_verdicts(results: Obj, expect: Obj, context: str) -> tuple[Obj, list[Verdict]]:
    """(the results that ran, one verdict per check fed by a module that failed); context: absence_context."""
    ran, verdicts = dict(results), []
    for key, checks in _FED_BY.items():
        message = failure_of(results.get(key))
        if message is None:
            continue
        del ran[key]
        for check in checks:
            if check in WATCHED_KEYS and check not in expect:
                continue  # judged only where the watch covered Gateway API or lab_expect names some
            verdicts.append(Verdict(check, NOT_RUN, "the check runs", "fail: " + _explained(message, context), False))
    return ran, verdicts


def evaluate(results: Obj, expect: Obj) -> list[Verdict]:
    """Verdicts for every check that ran (results has one entry per check name), and one unmet
    verdict per check whose module failed. The addresses verdicts come from the status watch."""
    context = absence_context(results)
    results, verdicts = _not_run_verdicts(results, expect, context)
    if "controllers" in results:
        verdicts += _per_subject("controllers", _controller_outcomes(results["controllers"]),
                                 (expect.get("controllers") or {}).get("failing", {}))
    if "status" in results:
        verdicts += _per_subject("addresses", _address_outcomes(results["status"]), (expect.get("addresses") or {}).get("failing", {}), context=context)
    if "diagnose" in results:
        verdicts += _diagnose_verdicts(results["diagnose"], expect.get("diagnose") or {})
    if "status" in results:
        verdicts += _per_subject("status", _ingress_outcomes(results["status"]), (expect.get("status") or {}).get("failing", {}),
                                 context=context)
        # Gateway API, where the watch covered it (the cluster serves it) or lab_expect names some
        for check in WATCHED_KEYS:
            if results["status"].get(check):
                verdicts += _per_subject(check, _ingress_outcomes(results["status"], check), (expect.get(check) or {}).get("failing", {}))
            elif check in expect:  # expected, and the watch saw none (or cannot: no CRDs): say why instead of judging nothing
                verdicts += _unwatched(check, results["status"], (expect.get(check) or {}).get("failing", {}))
    if "backends" in results:
        verdicts += _per_subject("backends", _ingress_outcomes(results["backends"]), (expect.get("backends") or {}).get("failing", {}),
                                 context=context)
    if "conflicts" in results:
        verdicts += _conflict_verdicts(results["conflicts"], expect.get("conflicts") or {})
    if results.get("actions"):
        verdicts += _action_verdicts(results["actions"], (expect.get("actions") or {}).get("failing", {}))
    if results.get("dataplane"):
        verdicts += _per_subject("dataplane", _dataplane_outcomes(results["dataplane"], results.get("actions") or {}),
                                 (expect.get("dataplane") or {}).get("failing", {}), say_pass=True)
    if "reachability" in results:
        verdicts += _reachability_verdicts(probe_runs(results["reachability"], results.get("reachability_continuous") or []),
                                           expect.get("reachability") or [], context)
    if results.get("migration") or "migration" in expect:
        rehearsal = results.get("migration") or {"failed": True, "msg": "the rehearsal did not run"}
        verdicts += [Verdict("migration", subject, expected, ("pass: " if met else "fail: ") + observed, met)
                     for subject, expected, observed, met in migration_report.verdicts(
                         rehearsal, bool((expect.get("migration") or {}).get("report_only")))]
    if (expect.get("migration") or {}).get("report_only"):  # a rehearsal: its targets' own findings never fail it
        verdicts = migration_report.target_findings(verdicts, (expect.get("migration") or {}).get("targets") or [])
    return verdicts


def probe_runs(one_shot: list[Obj], continuous: list[Obj]) -> list[Obj]:
    """One result per lab_expect.reachability item: the verify role runs the continuous probes in the
    background during the window and the others after it, each loop skipping the other kind."""
    out = []
    for i, result in enumerate(one_shot):
        other = continuous[i] if i < len(continuous) else {}
        out.append(other if result.get("skipped") and other and not other.get("skipped") else result)
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(scenario: str, backend: str, verdicts: list[Verdict], results: Obj, probes: list[Obj] | None = None,
             not_reproduced: list[str] | None = None) -> str:
    """The human summary: one table of verdicts, then the details that explain failures, then
    the timeline. probes: the expectation's reachability probes (their names and Ingresses);
    not_reproduced: what a captured scenario does not reproduce of its cluster."""
    unmet = [v for v in verdicts if not v.met]
    lines = [
        "# Ingress lab verification: %s" % scenario,
        "",
        "Backend: **%s**. %d checks, %d as expected, %d unmet: **%s**."
        % (backend, len(verdicts), len(verdicts) - len(unmet), len(unmet), "PASS" if not unmet else "FAIL"),
    ]
    # A rehearsal's answer comes first: what changes if you switch (its full table follows the checks).
    lines += migration_report.answer_lines(results.get("migration") or {}, migration_report.findings_by_target(
        [(v.check, v.subject, v.observed) for v in verdicts]))
    lines += [
        "",
        "| check | subject | expected | observed | |",
        "|---|---|---|---|---|",
    ]
    for v in verdicts:
        lines.append("| %s | %s | %s | %s | %s |" % (v.check, _cell(v.subject), _cell(v.expected), _cell(v.observed),
                                                     "ok" if v.met else "**UNMET**"))
    if not_reproduced:
        lines += ["", "## Not reproduced from the captured cluster", ""] + ["- %s" % _cell(n) for n in not_reproduced]
    findings = (results.get("diagnose") or {}).get("findings") or []
    if findings:
        lines += ["", "## Diagnosis", ""]
        for f in findings:
            lines.append("- **%s** %s: %s" % (f.get("kind"), f.get("ingress", ""), _finding_text(f)))
            fix = f.get("fix") or {}
            if fix:
                lines.append("  - fix: %s" % json.dumps(fix, sort_keys=True))
    lines += gateway_lines(results.get("status") or {})
    lines += migration_report.markdown_lines(results.get("migration") or {})
    lines += motion_lines(results, probes)
    # One time axis per Ingress (timeline.py): actions, status changes with their writers,
    # probe failures and data-plane divergences, in time order.
    lines += timeline_lines(merge_timeline(results, probes))
    return "\n".join(lines) + "\n"


def motion_lines(results: Obj, probes: list[Obj] | None) -> list[str]:
    """The '## In motion' section: report.html's figures under the status bars as text strips (motion.strips)."""
    found = results.get("status")
    status: Obj = found if isinstance(found, dict) else {}
    moving = motion(results, probes or [], status_origin(status))
    if not moving:
        return []
    lines = ["", "## In motion", "", "Per Ingress, on the status window's axis (report.html draws the same under each bar):"]
    for key, m in moving.items():
        lines += ["", "### %s" % key, "", "```"] + strips(m, window_length(status)) + ["```"]
    return lines


def gateway_lines(status: Obj) -> list[str]:
    """The '## Gateway API' section: each Gateway and each HTTPRoute parent entry (timeline.gateway_rows),
    where the status watch covered them. Their changes, one by one, are in the timeline."""
    rows = gateway_rows(status)
    if rows is None:
        return []
    lines = ["", "## Gateway API", "", "| object | addresses | conditions | changes | written by | verdict |", "|---|---|---|---|---|---|"]
    lines += ["| %s |" % " | ".join(_cell(cell) for cell in row) for row in rows]
    return lines


def report(scenario: str, backend: str, verdicts: list[Verdict], results: Obj, expect: Obj | None = None) -> Obj:
    """The JSON report: verdicts first, then every module's raw result (and the expectations
    judged, when given: report.html names probes and places their failures from them)."""
    unmet = [v for v in verdicts if not v.met]
    extra = {} if expect is None else {"expect": expect}
    return extra | {
        "scenario": scenario,
        "backend": backend,
        "passed": not unmet,
        "unmet": [asdict(v) for v in unmet],
        "verdicts": [asdict(v) for v in verdicts],
        "results": results,
    }


# --- the verify_report module -----------------------------------------------------------------


def _unchanged(path: str, text: str) -> bool:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read() == text
    except (OSError, UnicodeDecodeError):
        return False


def write_files(texts: dict[str, str]) -> bool:
    """Write every file whose content differs: each goes to a temporary file beside it first,
    and only when every one is written are they renamed into place (a rename within a directory
    is atomic), so a failure while writing (a full disk) leaves every file as it was and none
    half-written. Returns whether any file changed."""
    staged: list[tuple[str, str]] = []
    try:
        for path, text in texts.items():
            if _unchanged(path, text):
                continue
            fd, tmp = tempfile.mkstemp(prefix=".%s." % os.path.basename(path), suffix=".tmp", dir=os.path.dirname(path) or ".")
            staged.append((tmp, path))
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            os.chmod(tmp, 0o644)  # as open() gave under the usual umask; mkstemp's 0600 would hide the report
        for tmp, path in staged:
            os.replace(tmp, path)
    finally:
        for tmp, _path in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return bool(staged)


def run_verify_report(params: Params, module: Module) -> Obj:
    """The verify_report module: judge the results, write report.json, summary.md and report.html
    (not in check mode). Every text is rendered before the first file is written, and the files
    are written all or none (write_files), so a failure leaves no report half-written."""
    expect = validate_expect(params["expect"])
    verdicts = evaluate(params["results"], expect)
    doc = report(params["scenario"], params["backend"], verdicts, params["results"], expect)
    if params["not_reproduced"]:
        doc["not_reproduced"] = list(params["not_reproduced"])
    files = [os.path.join(params["output_dir"], name) for name in ("report.json", "summary.md", "report.html")]
    changed = False
    if not module.check_mode:
        report_json = json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n"
        texts = {
            files[0]: report_json,
            files[1]: markdown(params["scenario"], params["backend"], verdicts, params["results"], expect.get("reachability"),
                               params["not_reproduced"]),
            # report.html: the same report drawn for people (_report_html), from the JSON as written.
            files[2]: render_html(json.loads(json.dumps(doc, default=str))),
        }
        rehearsal = params["results"].get("migration") or {}
        if "comparison" in rehearsal:  # one JUnit case per behaviour that changes (a CI gate reads it)
            texts[os.path.join(params["output_dir"], "junit.xml")] = migration_report.junit_xml(
                rehearsal, not (expect.get("migration") or {}).get("report_only"))
            files.append(os.path.join(params["output_dir"], "junit.xml"))
        os.makedirs(params["output_dir"], exist_ok=True)
        changed = write_files(texts)
    return {"changed": changed, "verdicts": doc["verdicts"], "unmet": doc["unmet"], "passed": doc["passed"], "files": files}
