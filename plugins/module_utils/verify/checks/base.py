# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""What a check of the verify report is (`Check`, the record each check file fills in) and what the checks
share: a verdict, an expectation's error, the judging of a check that passes or fails each subject, the
message of a module that failed.

A check is one file beside this one; registry.py lists them in the order of the report's verdict table.
The lab_expect schema (verify/expect.py), the verdicts (verify/verdicts.py), summary.md (verify/report_md.py)
and report.html (verify/report_html.py) loop over the registry, never naming a check.
"""
from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any, Callable

from ansible_collections.kindlab.ingress.plugins.module_utils._errors import OptionError

Obj = dict[str, Any]
# (check, subject, observed) of every verdict: what a check's answer section reads of the others' verdicts.
Said = list[tuple[str, str, str]]
# (the lab_expect field, what it names: "Ingress", "controller", "Gateway", "HTTPRoute", ..., or "Ingress pattern"
# for a regex over Ingresses; the namespace/name or the regex): what lab_definition checks against the lab.
Reference = tuple[str, str, str]

NOT_RUN = "(could not run)"  # the subject of a check whose module failed


class VerifyError(OptionError):
    """An expectation is malformed; the message names the field."""


@dataclass
class Verdict:
    check: str  # a Check's key
    subject: str  # what was checked: an Ingress, a probe, a finding
    expected: str  # "pass" or "fail: <regex>"
    observed: str  # "pass" or "fail: <reason>"
    met: bool


@dataclass(frozen=True)
class Check:
    """One check of the report: its part of lab_expect, its verdicts, and its sections of summary.md and
    report.html. Every part but the verdicts is optional; a check leaves out what it does not have."""

    # Its key in lab_expect, and the `check` of its verdicts.
    key: str
    # (the results of the modules that ran, its lab_expect body or None when lab_expect does not name it, what
    # the other results know about something absent, absence_context) -> its verdicts; none when it did not run.
    verdicts: Callable[[Obj, Any, str], list[Verdict]]

    # --- lab_expect.<key>
    # The keys of its mapping; the schema checks them and `failing` (a mapping of subject to a reason regex).
    keys: frozenset[str] = frozenset({"failing"})
    # What its `failing` subjects are ("Ingress", "controller", a watched kind, "action"), for lab_definition's
    # references; None when it has no `failing`.
    subject: str | None = "Ingress"
    # (body, field) -> None, or VerifyError: a body that is not such a mapping (a list of probes, the rehearsal's
    # own), checked instead of the keys, where lab_expect names it.
    body: Callable[[Any, str], None] | None = None
    # (body, field) -> None, or VerifyError: what the mapping's entries say, once every key's shape is checked.
    entries: Callable[[Obj, str], None] | None = None
    # body -> the Ingresses, routes, ... it names beyond `failing`, each with its field.
    references: Callable[[Any], list[Reference]] | None = None

    # --- the module result it reads
    # The result whose module's failure gives one unmet verdict instead of its verdicts (None: it reads a failure
    # itself). Each names a check of the table; the not-run verdicts come module by module, where that check stands.
    fed_by: str | None = None
    # Judged only where its results have subjects or lab_expect names it: no not-run verdict otherwise.
    optional: bool = False
    # results -> why something may be absent, or "": the first check that knows says it for every check.
    absence: Callable[[Obj], str] | None = None
    # (every check's verdicts, its body) -> the verdicts as it restates them (a rehearsal's report_only marks
    # a target's own findings as the target's), after every check has judged.
    restate: Callable[[list[Verdict], Any], list[Verdict]] | None = None
    # (results, its body) -> more files of the report by name (a rehearsal's junit.xml), written with the others.
    files: Callable[[Obj, Any], dict[str, str]] | None = None

    # --- its sections, each where it goes in the page (the table's order among checks)
    # summary.md and report.html, before the verdict table: the answer a reader wants first.
    answer: Callable[[Obj, Said], list[str]] | None = None
    answer_html: Callable[[Obj, Said], str] | None = None
    # summary.md after the verdict table, report.html after the objects' sections.
    summary: Callable[[Obj], list[str]] | None = None
    html: Callable[[Obj], str] | None = None
    # report.html's objects (one section each, by namespace/name): those it has something to say of, and that part.
    objects: Callable[[Obj], set[str]] | None = None
    of_object: Callable[[Obj, str], str] | None = None
    # report.html, last: what no object's section took (given those objects).
    rest_html: Callable[[Obj, set[str]], str] | None = None
    # Whether its verdicts are listed in the section of the object they name (diagnose's name findings, which
    # of_object shows instead).
    object_verdicts: bool = True


def require(cond: bool, where: str, expected: str, got: Any) -> None:
    if not cond:
        raise VerifyError("%s: expected %s, got %r" % (where, expected, got))


def regex(value: Any, where: str) -> str:
    require(isinstance(value, str), where, "a regular expression string", value)
    try:
        re.compile(value)
    except re.error as exc:
        raise VerifyError("%s: %r is not a valid regular expression (%s)" % (where, value, exc)) from None
    return str(value)


def failing(body: Any) -> dict[str, str]:
    """A check's `failing` mapping (subject: reason regex), empty when lab_expect does not name it."""
    return dict((body or {}).get("failing", {}))


def outcomes(result: Obj, key: str = "ingresses") -> dict[str, tuple[bool, str]]:
    """(passed, reason) of each subject of a module's result: its Ingresses, or its KEY (gateways, routes)."""
    return {name: (bool(item.get("passed")), str(item.get("reason") or "")) for name, item in (result.get(key) or {}).items()}


def per_subject(check: str, observed: dict[str, tuple[bool, str]], expected_failing: dict[str, str], say_pass: bool = False,
                context: str = "", noun: str = "Ingress", seen_by: str = "selected") -> list[Verdict]:
    """Verdicts for a check that passes or fails each subject (status, backends); with say_pass a
    pass keeps its text (the data plane's: when it converged); context: what the other results know
    about a subject that is absent (absence_context); noun and seen_by: what a subject is and how it
    was found, for one that is absent ("no such Gateway watched")."""
    out = []
    for subject in sorted(set(observed) | set(expected_failing)):
        passed, reason = observed.get(subject, (True, "not observed"))
        if subject not in observed:
            passed, reason = False, "not observed (no such %s %s)%s" % (noun, seen_by, context)
        pattern = expected_failing.get(subject)
        if pattern is None:
            met = passed
            expected = "pass"
        else:
            met = not passed and re.search(pattern, reason) is not None
            expected = "fail: " + pattern
        text = ("pass: " + reason if say_pass and reason else "pass") if passed else "fail: " + reason
        out.append(Verdict(check, subject, expected, text, met))
    return out


def failure_of(result: Any) -> str | None:
    """The message of a module that failed (the verify role keeps going past it), None for one that ran."""
    if isinstance(result, dict) and result.get("failed"):
        return str(result.get("msg") or "the module failed without a message")
    return None


def explained(message: str, context: str) -> str:
    """A module's failure for a verdict, with what the other results know when it names something absent."""
    if context and re.search(r"not found|no such|does not exist|the server could not find", message, re.IGNORECASE):
        return message + context
    return message


def html_text(value: Any) -> str:
    """VALUE as HTML text (or an attribute's value)."""
    return html.escape(str(value), quote=True)
