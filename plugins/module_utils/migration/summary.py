# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The rehearsal in the verify report: its verdicts, its section of summary.md and of report.html.

Verdicts: the baseline served part of the corpus; per target and Ingress, no unexpected
difference; each expected difference seen. A rehearsal that could not run (a target the cluster
does not have) is one unmet verdict with its error, and the rest of the report is still written.
"""
from __future__ import annotations

import dataclasses
import html
import re
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._markdown import cell
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.prove import (
    CAUSE_GONE, CLOSED, EARLIER, KEPT, LATER, LATER_GONE, REMOVED_FILE)
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.compare import OUTCOMES
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.sides import parse_all
from ansible_collections.kindlab.ingress.plugins.module_utils.migration.judge import SAME_KEYS, parse_expected

Obj = dict[str, Any]
EXPECT_KEYS = {"baseline", "targets", "namespaces", "requests", "expected", "same", "samples", "report_only", "allowed", "fix"}
_LIMIT = 200  # rows of differences shown in summary.md and report.html (report.json has them all)


def validate(body: Any, where: str = "lab_expect.migration") -> None:
    """The expectation's shape, before anything runs (OptionError naming the field)."""
    from ansible_collections.kindlab.ingress.plugins.module_utils.migration.judge import ExpectError

    if not isinstance(body, dict):
        raise ExpectError("%s: expected a mapping with baseline and targets, got %r" % (where, body))
    extra = sorted(set(body) - EXPECT_KEYS)
    if extra:
        raise ExpectError("%s: expected only the keys %s, got %s" % (where, ", ".join(sorted(EXPECT_KEYS)), extra))
    try:
        parse_all(body.get("baseline"), body.get("targets"))
    except ExpectError:
        raise
    except ValueError as exc:
        raise ExpectError("%s.%s" % (where, exc)) from None
    parse_expected(body.get("expected"), where + ".expected")
    parse_expected(body.get("same"), where + ".same", SAME_KEYS)
    parse_expected(body.get("allowed"), where + ".allowed")
    if not isinstance(body.get("requests", []), list):
        raise ExpectError("%s.requests: expected a list of requests, got %r" % (where, body.get("requests")))
    samples = body.get("samples", 2)
    if not isinstance(samples, int) or samples < 1:
        raise ExpectError("%s.samples: expected a whole number of at least 1, got %r" % (where, samples))
    for key in ("report_only", "fix"):
        if not isinstance(body.get(key, False), bool):
            raise ExpectError("%s.%s: expected true or false, got %r" % (where, key, body.get(key)))


def _counts_text(counts: Obj) -> str:
    return ", ".join("%d %s" % (counts.get(o, 0), o.replace("_", " ")) for o in OUTCOMES)


def verdicts(result: Obj, report_only: bool = False) -> list[tuple[str, str, str, bool]]:
    """(subject, expected, observed, met) for the verify report. REPORT_ONLY (a rehearsal of a captured
    cluster, which nobody has yet said what to expect of): every difference is reported, none fails; the
    rehearsal must still run and the baseline serve part of the corpus."""
    if not result:
        return []
    if result.get("failed") or "verdict" not in result:
        return [("rehearsal", "runs", str(result.get("msg", "no result")), False)]
    out = []
    v = result["verdict"]
    comparison = result["comparison"]
    base = comparison["baseline"]
    out.append(("baseline %s" % base, "serves part of the corpus",
                "served %d of %d requests" % (comparison["baseline_served"], comparison["requests"]), not v["baseline_idle"]))
    unexpected: dict[tuple[str, str], list[Obj]] = {}
    for d in v["unexpected"]:
        unexpected.setdefault((d["target"], d["ingress"]), []).append(d)
    for target, body in sorted(comparison["targets"].items()):
        per_ingress: dict[str, dict[str, int]] = {}
        for row in body["rows"]:
            counts = per_ingress.setdefault(row["ingress"], {o: 0 for o in OUTCOMES})
            counts[row["outcome"]] += 1
        if body.get("everywhere"):
            per_ingress["*"] = {}
        for ingress, counts in sorted(per_ingress.items()):
            bad = unexpected.get((target, ingress), [])
            observed = (_counts_text(counts) if ingress != "*" else
                        "%d header(s) differ in every request" % len(body["everywhere"]))
            if bad:
                observed += "; unexpected: " + "; ".join(
                    "%s %s %r vs %r" % (d["request"], d["field"], d["baseline"], d["answer"]) for d in bad[:5])
            subject = "%s: %s" % (target, "every request" if ingress == "*" else ingress)
            if report_only:
                out.append((subject, "differences reported", observed.replace("; unexpected: ", "; differs: "), True))
            else:
                out.append((subject, "only expected differences", observed, not bad))
    for e in v["unseen"]:
        out.append(("expected difference", ", ".join("%s=%s" % kv for kv in sorted(e.items())), "not seen", False))
    for e in v.get("unseen_same") or []:
        out.append(("expected same answer", ", ".join("%s=%s" % kv for kv in sorted(e.items())), "not seen", False))
    return out


def _took(row: Obj) -> str:
    """What took the request on each side, in each data plane's own account (compare's `records`)."""
    return "; ".join("%s: %s" % (plane, said) for plane, said in (row.get("records") or {}).items()) or "-"


def _difference_rows(result: Obj) -> list[tuple[str, Obj, Obj]]:
    """One entry per request that differs: (target, row, the differences folded into one: each field's
    baseline and target values, the responsible rules or annotations and causes, each once)."""
    rows = []
    for target, body in sorted(result["comparison"]["targets"].items()):
        for row in body["rows"]:
            diffs = row["differences"]
            if not diffs:
                continue
            folded = {"fields": ", ".join(d["field"] for d in diffs),
                      "baseline": "; ".join("%s %s" % (d["field"], d["baseline"] or "-") for d in diffs),
                      "target": "; ".join("%s %s" % (d["field"], d["target"] or "-") for d in diffs),
                      "responsible": "; ".join(dict.fromkeys(d["responsible"] for d in diffs)),
                      "cause": " / ".join(dict.fromkeys(d["cause"] for d in diffs))}
            rows.append((target, row, folded))
    return rows


FINDING = "finding of %s: "


def target_findings(verdicts: list[Any], targets: list[Obj]) -> list[Any]:
    """In a rehearsal (report_only), an unmet verdict of another check about a Gateway target's own objects (its
    Gateway named in what was observed: a route its listener does not accept, two of its routes tied) is a finding of
    that target, not a failure of the rehearsal: met, and its observed text says whose finding it is. VERDICTS: the
    verify report's (dataclasses with check, observed and met)."""
    gateways = {str(t["gateway"]): str(t["name"]) for t in targets if t.get("gateway")}
    out = []
    for v in verdicts:
        owner = None if v.met or v.check == "migration" else next(
            (name for ref, name in gateways.items() if re.search(r"(?<![\w/-])%s(?![\w-])" % re.escape(ref), v.observed)), None)
        out.append(dataclasses.replace(v, met=True, observed=FINDING % owner + re.sub(r"^fail: ", "", v.observed))
                   if owner else v)
    return out


def findings_by_target(said: list[tuple[str, str, str]]) -> dict[str, list[str]]:
    """Target -> its findings ("check subject: what was observed"), from (check, subject, observed) of the verdicts
    target_findings marked."""
    out: dict[str, list[str]] = {}
    for check, subject, observed in said:
        m = re.match(r"finding of ([^:]+): (.*)", observed, re.S)
        if m:
            out.setdefault(m.group(1), []).append("%s %s: %s" % (check, subject, m.group(2)))
    return out


def behaviours(result: Obj) -> dict[str, list[Obj]]:
    """Target -> the distinct behaviours that change there, most requests first: the differences grouped by what is
    responsible and their cause, each with the Ingresses and requests it changes (and their rows' indices) and one
    row's curl pair."""
    out: dict[str, list[Obj]] = {target: [] for target in sorted(result["comparison"]["targets"])}
    grouped: dict[tuple[str, str, str], Obj] = {}
    # the differences the judge found no expectation or allowance for: a behaviour with one of them is not accepted
    refused = {(d["target"], d["ingress"], d["request"], d["kind"], d["field"])
               for d in (result.get("verdict") or {}).get("unexpected") or []}
    for target, row, folded in _difference_rows(result):
        key = (target, folded["responsible"], folded["cause"])
        if key not in grouped:
            grouped[key] = {"responsible": folded["responsible"], "cause": folded["cause"], "ingresses": [], "requests": 0,
                            "example": "%s %s (%s)" % (row["method"], row["target"], row["kind"]),
                            "curl": [row["curl"][result["comparison"]["baseline"]], row["curl"][target]], "accepted": True,
                            "indices": []}
            out[target].append(grouped[key])
        grouped[key]["requests"] += 1
        grouped[key]["indices"].append(row["index"])
        if any((target, row["ingress"], row["target"], row["kind"], d["field"]) in refused for d in row["differences"]):
            grouped[key]["accepted"] = False
        if row["ingress"] not in grouped[key]["ingresses"]:
            grouped[key]["ingresses"].append(row["ingress"])
    for found in out.values():
        found.sort(key=lambda b: -int(b["requests"]))
    return out


def ties(result: Obj) -> dict[str, list[Obj]]:
    """Target -> the requests its own account says routers tied at one priority take, grouped by those routers (most
    requests first): each group's routers, requests, Ingresses, how they answered (outcome -> count) and one request.
    Answering the same there is chance, not a kept behaviour: Traefik's order between them is not defined."""
    out: dict[str, list[Obj]] = {}
    for target, body in sorted(result["comparison"]["targets"].items()):
        groups: dict[tuple[str, ...], Obj] = {}
        for row in body["rows"]:
            if not row.get("tied"):
                continue
            group = groups.setdefault(tuple(row["tied"]), {"routers": list(row["tied"]), "requests": 0, "ingresses": [],
                                                           "outcomes": {}, "ids": [],
                                                           "example": "%s %s (%s)" % (row["method"], row["target"], row["kind"])})
            group["requests"] += 1
            group["ids"].append(row["id"])
            group["outcomes"][row["outcome"]] = group["outcomes"].get(row["outcome"], 0) + 1
            if row["ingress"] not in group["ingresses"]:
                group["ingresses"].append(row["ingress"])
        if groups:
            out[target] = sorted(groups.values(), key=lambda g: -int(g["requests"]))
    return out


def tie_said(result: Obj, target: str, group: Obj) -> str:
    """One group of ties (ties()) in one sentence, and whether the proven fixes left one router taking them."""
    proven = (result.get("fixes") or {}).get(target) or {}
    after = ""
    if "still_tied" in proven:
        left = sum(1 for i in group["ids"] if i in proven["still_tied"])
        after = ("; after the proven fixes one router takes each of them" if not left else
                 "; after the proven fixes %d of them still are" % left)
    return ("%d request(s) of %s are taken by one of the routers %s, tied at one priority in %s's own account: which one "
            "Traefik tries first is not defined and may change at any reload, so what they answer (now %s) is chance, "
            "not a kept behaviour; e.g. %s%s" % (
                group["requests"], ", ".join(group["ingresses"]), ", ".join(group["routers"]), target,
                ", ".join("%d %s" % (n, o) for o, n in sorted(group["outcomes"].items())), group["example"], after))


def fixes_said(result: Obj, target: str) -> str:
    """With fixes proven (ingress_migration's fix): how many behaviours of TARGET a proven fix keeps, how many remain
    and why, in one sentence; "" when none were tried."""
    proven = (result.get("fixes") or {}).get(target)
    if not proven:
        return ""
    if proven.get("no_table"):
        return "Fixes: %s; %d behaviour(s) remain." % (proven["no_table"], proven["remain"])
    why: dict[str, int] = {}
    for a in proven["attempts"]:
        if a["outcome"] not in KEPT:
            why[a["outcome"]] = why.get(a["outcome"], 0) + 1
    migrated = " (the migrated manifests: migrated/%s/%s)" % (
        target, ", and delete what %s names" % REMOVED_FILE if proven.get("removed") else "") if proven.get("migrated") else ""
    return "Fixes proven in the rehearsal cluster: %d of the %d behaviour(s) kept by a proven fix%s; %d remain%s." % (
        proven["kept"], len(proven["attempts"]), migrated, proven["remain"],
        ": " + ", ".join("%d %s" % (n, outcome) for outcome, n in sorted(why.items(), key=lambda kv: -kv[1])) if why else "")


def fix_of(result: Obj, target: str, behaviour: Obj) -> str:
    """What proving a fix for BEHAVIOUR said, in one line; "" when none was tried."""
    for a in ((result.get("fixes") or {}).get(target) or {}).get("attempts") or []:
        if (a["responsible"], a["cause"]) != (behaviour["responsible"], behaviour["cause"]):
            continue
        if a["outcome"] == CLOSED:
            return "fix proven: %s (%s)" % (a["says"], ", ".join((a.get("objects") or []) + ["removes " + r for r in a.get("removes") or []]))
        if a["outcome"] == EARLIER:
            return "closed by an earlier fix: %s" % a["says"]
        if a["outcome"] == LATER:
            return "closed by a later fix (%s): %s" % (a["before_it"], a["says"])
        if a["outcome"] == LATER_GONE:
            return "its cause gone after a later fix (%s; its requests still differ by %s, another behaviour): %s" % (
                a["before_it"], "; ".join(a.get("remaining") or []), a["says"])
        if a["outcome"] == CAUSE_GONE:
            return "fix proven, its cause gone (its requests still differ by %s, another behaviour): %s (%s)" % (
                "; ".join(a.get("remaining") or []), a["says"], ", ".join(a.get("objects") or []))
        if a.get("why"):
            return "no fix: %s" % a["why"]
        if a.get("changed"):
            return "fix tried and undone, it changed other requests (%s): %s" % (", ".join(a["changed"][:3]), a["says"])
        if a["outcome"] == "not closed":
            return "fix tried and undone, %d request(s) still differed (%s): %s" % (
                a.get("still_differ", 0), "; ".join(a.get("still") or [])[:400], a["says"])
        return str(a["outcome"])
    return ""


def answer_lines(result: Obj, findings: dict[str, list[str]] | None = None) -> list[str]:
    """The rehearsal's answer, for the top of summary.md: per target, how many requests change, what the target
    refused or found wrong with its own objects (FINDINGS: findings_by_target), and each behaviour that changes in
    one line (what is responsible, why, the Ingresses and requests, a curl pair to see it)."""
    if not result or "comparison" not in result:
        return []
    c = result["comparison"]
    lines = ["", "## What changes if you switch", ""]
    tied_by_target = ties(result)
    for target, found in behaviours(result).items():
        counts = c["targets"][target]["counts"]
        compared = sum(counts[o] for o in ("same", "differ", "noise"))
        lines.append("**%s**: %d of the %d requests compared change (%s); %s." % (
            target, counts["differ"], compared, _counts_text(counts),
            "%d behaviour(s) to change or accept before the switch" % len(found) if found else "nothing to change before the switch"))
        if fixes_said(result, target):
            lines.append(fixes_said(result, target))
        lines.append("")
        account = (result.get("refused") or {}).get(target) or {}
        for router in account.get("routers") or []:
            lines.append("- %s refused its router `%s` (its own account, /api/http/routers: %s): %s" % (
                target, cell(router["name"]), router["status"], cell("; ".join(router["errors"]) or "no error given")))
        if account.get("unread"):
            lines.append("- what %s built could not be read: %s" % (target, cell(account["unread"])))
        for finding in (findings or {}).get(target) or []:
            lines.append("- a finding of %s's own objects: %s" % (target, cell(finding)))
        tied = tied_by_target.get(target) or []
        for group in tied:
            lines.append("- a risk: %s" % cell(tie_said(result, target, group)))
        if account.get("routers") or account.get("unread") or (findings or {}).get(target) or tied:
            lines.append("")
        for i, b in enumerate(found, 1):
            lines.append("%d. %s**%s**: %s. %d request(s) of %s; e.g. `%s`:" % (
                i, "(allowed) " if b["accepted"] and _allows(result) else "", cell(b["responsible"]), cell(b["cause"]),
                b["requests"], ", ".join(b["ingresses"]), cell(b["example"])))
            if fix_of(result, target, b):
                lines.append("   - %s" % cell(fix_of(result, target, b)))
            lines += ["   ```sh"] + ["   " + line for line in b["curl"]] + ["   ```"]
        lines.append("")
    return lines


def _allows(result: Obj) -> bool:
    """Whether the rehearsal was told what to accept (an allowance or expectation), so that accepted means something."""
    verdict = result.get("verdict") or {}
    return int(verdict.get("differences") or 0) > len(verdict.get("unexpected") or [])


def junit_xml(result: Obj, gate: bool) -> str:
    """One JUnit test case per behaviour that changes, per target (and one per target where none does): with GATE (a
    CI gate: report_only false), a behaviour no allowance accepts is a failure, with its example and curl pair."""
    from xml.sax.saxutils import escape, quoteattr

    cases = []
    for target, found in behaviours(result).items():
        if not found:
            cases.append('  <testcase classname=%s name="nothing changes"/>' % quoteattr("rehearsal." + target))
        for b in found:
            name = "%s: %s" % (b["responsible"], b["cause"])
            said = "%d request(s) of %s; e.g. %s\n%s\n%s" % (b["requests"], ", ".join(b["ingresses"]), b["example"], *b["curl"])
            failure = ('<failure message=%s>%s</failure>' % (quoteattr("changes, and rehearse_allow does not allow it"), escape(said))
                       if gate and not b["accepted"] else "")
            cases.append("  <testcase classname=%s name=%s>%s<system-out>%s</system-out></testcase>"
                         % (quoteattr("rehearsal." + target), quoteattr(name[:300]), failure, escape(said)))
    failures = sum(1 for c in cases if "<failure" in c)
    return ('<?xml version="1.0" encoding="utf-8"?>\n<testsuite name="migration rehearsal" tests="%d" failures="%d">\n%s\n'
            "</testsuite>\n" % (len(cases), failures, "\n".join(cases)))


def answer_html(result: Obj, findings: dict[str, list[str]] | None = None) -> str:
    """answer_lines for the top of report.html."""
    if not result or "comparison" not in result:
        return ""
    e = html.escape
    c = result["comparison"]
    out = ['<section id="migration-answer"><h2>What changes if you switch</h2>']
    tied_by_target = ties(result)
    for target, found in behaviours(result).items():
        counts = c["targets"][target]["counts"]
        compared = sum(counts[o] for o in ("same", "differ", "noise"))
        out.append('<p data-target="%s"><strong>%s</strong>: %d of the %d requests compared change; %s.</p>' % (
            e(target), e(target), counts["differ"], compared,
            "%d behaviour(s) to change or accept before the switch" % len(found) if found else "nothing to change before the switch"))
        if fixes_said(result, target):
            out.append('<p class="fixes">%s</p>' % e(fixes_said(result, target)))
        account = (result.get("refused") or {}).get(target) or {}
        said = ["%s refused its router <code>%s</code> (its own account, /api/http/routers: %s): %s" % (
            e(target), e(r["name"]), e(r["status"]), e("; ".join(r["errors"]) or "no error given"))
            for r in account.get("routers") or []]
        said += ["what %s built could not be read: %s" % (e(target), e(account["unread"]))] if account.get("unread") else []
        said += ["a finding of %s's own objects: %s" % (e(target), e(f)) for f in (findings or {}).get(target) or []]
        said += ["a risk: %s" % e(tie_said(result, target, group)) for group in tied_by_target.get(target) or []]
        if said:
            out.append('<ul class="refused">%s</ul>' % "".join("<li>%s</li>" % line for line in said))
        if found:
            out.append("<ol>%s</ol>" % "".join(
                "<li><strong>%s</strong>: %s. %d request(s) of %s; e.g. <code>%s</code><br><code>%s</code><br><code>%s</code>%s</li>"
                % (e(b["responsible"]), e(b["cause"]), b["requests"], e(", ".join(b["ingresses"])), e(b["example"]),
                   e(b["curl"][0]), e(b["curl"][1]),
                   '<br><em class="fix">%s</em>' % e(fix_of(result, target, b)) if fix_of(result, target, b) else "")
                for b in found))
    out.append("</section>")
    return "".join(out)


def _translation_notes(comparison: Obj) -> list[tuple[str, str]]:
    """(target, note) for what a translator said of a target's whole translation (translate.set_beside_requests)."""
    return [(t, n) for t, b in sorted(comparison["targets"].items()) for n in b.get("translation_notes") or []]


def markdown_lines(result: Obj) -> list[str]:
    if not result or "comparison" not in result:
        if result and result.get("failed"):
            return ["", "## Migration rehearsal", "", "Could not run: %s" % cell(result.get("msg", ""))]
        return []
    c = result["comparison"]
    lines = ["", "## Migration rehearsal", "",
             "Baseline **%s** (%s): %d requests (%d served), %d sent in all in %.1f s." % (
                 c["baseline"], result["baseline"]["at"], c["requests"], c["baseline_served"], result["requests_sent"],
                 result["seconds"].get("replay", 0)),
             "", "| target | " + " | ".join(o.replace("_", " ") for o in OUTCOMES) + " |",
             "|---|" + "---|" * len(OUTCOMES)]
    for target, body in sorted(c["targets"].items()):
        counts = " | ".join(str(body["counts"][o]) for o in OUTCOMES)
        lines.append("| %s (%s) | %s |" % (target, result["targets"].get(target, ""), counts))
    everywhere = [(t, d) for t, b in sorted(c["targets"].items()) for d in b.get("everywhere") or []]
    if everywhere:
        lines += ["", "In every request both answered:", ""]
        lines += ["- %s: %s %r vs %r: %s" % (t, d["field"], d["baseline"], d["target"], d["cause"]) for t, d in everywhere]
    said = _translation_notes(c)
    if said:
        lines += ["", "What the translator said of the whole translation:", ""]
        lines += ["- %s: %s" % (t, n) for t, n in said]
    rows = _difference_rows(result)
    if rows:
        lines += ["", "| target | Ingress | request | baseline answered | target answered | responsible | cause | what took it |",
                  "|---|---|---|---|---|---|---|---|"]
        for target, row, d in rows[:_LIMIT]:
            lines.append("| %s | %s | `%s %s` (%s) | %s | %s | %s | %s | %s |" % tuple(cell(x) for x in (
                target, row["ingress"], row["method"], row["target"], row["kind"], d["baseline"], d["target"],
                d["responsible"], d["cause"], _took(row))))
        if len(rows) > _LIMIT:
            lines.append("")
            lines.append("%d more in report.json." % (len(rows) - _LIMIT))
        lines += ["", "Reproduce one: the curl lines are in report.json (results.migration.comparison, each row's `curl`)."]
        first = rows[0]
        lines += ["", "```sh", first[1]["curl"][c["baseline"]], first[1]["curl"][first[0]], "```"]
    unfaithful = [(t, r) for t, b in sorted(c["targets"].items()) for r in b["rows"] if r["outcome"] == "not_faithful"]
    if unfaithful:
        lines += ["", "Not compared:", ""]
        lines += ["- %s %s: %s" % (r["ingress"], r["target"], r["reason"]) for _t, r in unfaithful[:20]]
    return lines


def html_section(result: Obj) -> str:
    if not result or "comparison" not in result:
        if result and result.get("failed"):
            return '<h2 id="migration">Migration rehearsal</h2><p class="meta">Could not run: %s</p>' % html.escape(
                str(result.get("msg", "")))
        return ""
    e = html.escape
    c = result["comparison"]
    out = ['<h2 id="migration">Migration rehearsal</h2>',
           '<p class="meta">Baseline <strong>%s</strong> (%s): %d requests, %d served by it. Each request went %d '
           "time(s) through the baseline (a field that differs between those answers is noise) and once through each "
           "target.</p>" % (e(c["baseline"]), e(result["baseline"]["at"]), c["requests"], c["baseline_served"],
                            result.get("samples", 2)),
           '<table id="migration-counts"><thead><tr><th>target</th>%s</tr></thead><tbody>'
           % "".join("<th>%s</th>" % e(o.replace("_", " ")) for o in OUTCOMES)]
    for target, body in sorted(c["targets"].items()):
        out.append("<tr><td>%s</td>%s</tr>" % (e(target), "".join("<td>%d</td>" % body["counts"][o] for o in OUTCOMES)))
    out.append("</tbody></table>")
    said = _translation_notes(c)
    if said:
        out.append('<p class="meta">What the translator said of the whole translation:</p><ul id="migration-notes">%s</ul>'
                   % "".join("<li>%s: %s</li>" % (e(t), e(n)) for t, n in said))
    rows = _difference_rows(result)
    if rows:
        out.append('<table id="migration-differences"><thead><tr><th>target</th><th>Ingress</th><th>request</th>'
                   "<th>baseline answered</th><th>target answered</th><th>cause</th><th>what took it</th><th>reproduce</th>"
                   "</tr></thead><tbody>")
        for target, row, d in rows[:_LIMIT]:
            out.append("<tr><td>%s</td><td>%s</td><td><code>%s %s</code> (%s)</td><td>%s</td><td>%s</td>"
                       "<td><strong>%s</strong>: %s</td><td>%s</td><td><code>%s</code><br><code>%s</code></td></tr>" % (
                           e(target), e(row["ingress"]), e(row["method"]), e(row["target"]), e(row["kind"]),
                           e(d["baseline"]), e(d["target"]), e(d["responsible"]), e(d["cause"]), e(_took(row)),
                           e(row["curl"][result["comparison"]["baseline"]]), e(row["curl"][target])))
        out.append("</tbody></table>")
    return "".join(out)
