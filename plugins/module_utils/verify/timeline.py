# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One time axis per Ingress (and per object of the other subject kinds the status watch saw change): the
story of an incident, top to bottom.

Merges, from the verify results, what happened during the window:
- actions (results.actions.actions): lab-wide, so each is shown on every Ingress's axis,
  where it reads in order with what it caused;
- status changes (results.status.timeline, and the controller pods replaced meanwhile), with
  their writer as status/attribution.change_writer words it (how it was attributed, or its candidates); a
  Gateway's on the axis `Gateway ns/name`, a route parent entry's on its route's (`HTTPRoute ns/name`);
- probe failures of continuous probes (results.reachability[*] or reachability_continuous[*],
  their continuous.failures), on the axis of each Ingress the probe names (a probe by URL is
  lab-wide), consecutive failures with the same cause in one row;
- data-plane divergences (results.dataplane.timeline; without it, its findings, untimed).

Every source may be absent. Rows are placed by their wall-clock time; `at` counts seconds
from the origin, the status watch's start when known (else the earliest time seen). Pure
functions of the results: report.py renders them in summary.md, report_html.py in report.html.
"""
from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils._markdown import cell
from ansible_collections.kindlab.ingress.plugins.module_utils._time import iso, parse_time
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_options import ProbeError, parse_ingresses
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.attribution import change_writer
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import WATCHED, kind_named

Obj = dict[str, Any]

LAB = "(lab)"  # the axis of lab-wide rows when no Ingress has one
KINDS = ("action", "status", "probe", "dataplane")  # the order of rows at the same instant
DIVERGENT = ("stale", "missing", "unread")


@dataclass(frozen=True)
class Row:
    """One event on an axis. `when` is its wall-clock time (None: not timed, listed last)."""

    when: dt.datetime | None
    kind: str  # one of KINDS
    ingress: str  # namespace/name, or LAB for a lab-wide row
    what: str
    detail: str = ""
    bad: bool = False  # a failure, a divergence, a failed action

    def time(self) -> str:
        return iso(self.when) if self.when else ""


@dataclass
class Timeline:
    origin: dt.datetime | None
    origin_from: str  # what the origin is: "status watch", "first event", ""
    axes: dict[str, list[Row]] = field(default_factory=dict)

    def at(self, row: Row) -> float | None:
        """Seconds from the origin to the row."""
        if row.when is None or self.origin is None:
            return None
        return (row.when - self.origin).total_seconds()


def _num(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _shift(when: dt.datetime | None, seconds: Any) -> dt.datetime | None:
    number = _num(seconds)
    return None if when is None or number is None else when + dt.timedelta(seconds=number)


def _addrs(value: Any) -> str:
    return ", ".join(str(a) for a in value or []) or "(empty)"


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# ---------------------------------------------------------------- the sources


def status_origin(status: Obj) -> dt.datetime | None:
    """When the status watch began: its `window_started`, or (an older result) any change's time minus its offset."""
    started = parse_time(status.get("window_started"))
    if started is not None:
        return started
    for entry in _list(status.get("timeline")):
        when = parse_time(_dict(entry).get("time"))
        if when is not None and _num(entry.get("t")) is not None:
            return _shift(when, -float(entry["t"]))
    return None


def axis_of(entry: Obj) -> str:
    """The axis of a status change: its Ingress (namespace/name), or its kind's axis (`Gateway ns/name`, ...)."""
    if entry.get("ingress"):
        return str(entry["ingress"])
    if not entry.get("kind") or not entry.get("object"):
        return ""
    kind = kind_named(str(entry["kind"]))
    return kind.axis(str(entry["object"])) if kind else "%s %s" % (entry["kind"], entry["object"])


def _conditions_change(old: list[Any], new: list[Any]) -> str:
    """`Accepted=True -> Accepted=False (NotAllowedByListeners)`: what changed among the conditions."""
    gone = [str(c) for c in old if c not in new]
    came = [str(c) for c in new if c not in old]
    return "%s -> %s" % (", ".join(gone) or "(none)", ", ".join(came) or "(none)")


def change_text(entry: Obj) -> tuple[str, bool]:
    """A status change in words, and whether it is bad: an Ingress's or a Gateway's addresses (a
    Gateway's conditions too), a route parent entry's conditions."""
    if entry.get("event") == "DELETED":
        return "deleted", True
    new = _list(entry.get("new"))
    if not entry.get("kind"):
        return "status %s -> %s" % (_addrs(entry.get("old")), _addrs(new)), not new
    old_c, new_c = _list(entry.get("conditions_old")), _list(entry.get("conditions_new"))
    parts = []
    kind = kind_named(str(entry.get("kind")))
    if kind is not None and kind.parents is not None:  # a route kind's parent entry: its conditions, against what it needs
        parts.append("parent %s: %s" % (entry.get("parent"), _conditions_change(old_c, new_c) if new_c else "entry removed"))
        bad = bool(new_c) and not all(c in new_c for c in kind.needs)
    else:
        if _list(entry.get("old")) != new:
            parts.append("addresses %s -> %s" % (_addrs(entry.get("old")), _addrs(new)))
        if old_c != new_c:
            parts.append("conditions %s" % _conditions_change(old_c, new_c))
        bad = not new or any("=False" in str(c) for c in new_c)
    return "; ".join(parts) or "status rewritten", bad


def status_rows(status: Obj) -> list[Row]:
    rows = []
    for entry in _list(status.get("timeline")):
        entry = _dict(entry)
        axis = axis_of(entry)
        if not axis:
            continue
        verb, bad = change_text(entry)
        rows.append(Row(parse_time(entry.get("time")), "status", axis, verb,
                        "written by " + change_writer(entry) + ("; seen after a blind interval" if entry.get("seen_after_blind") else ""),
                        bad=bad))
    for restart in _list(status.get("pod_restarts")):
        restart = _dict(restart)
        axis = str(restart.get("ingress") or "") or ("%s %s" % (restart.get("kind"), str(restart.get("subject", "")).split(" ")[1])
                                                     if restart.get("kind") and restart.get("subject") else "")
        if axis:
            rows.append(Row(parse_time(restart.get("time")), "status", axis, "controller pod replaced",
                            "%s wrote it until then, %s from then on" % (restart.get("from", "?"), restart.get("to", "?"))))
    return rows


def action_rows(actions: Obj, origin: dt.datetime | None) -> list[Row]:
    """Lab-wide: a row when each action starts, and one when it ends (or fails without an end)."""
    rows = []
    for action in _list(actions.get("actions")):
        action = _dict(action)
        kind, name = str(action.get("kind") or "action"), str(action.get("name") or "")
        label = "%s%s on %s" % (kind if name in ("", kind) else "%s %s" % (kind, name),
                                " (test machinery)" if action.get("machinery") else "", action.get("target") or "?")
        started = parse_time(action.get("started")) or _shift(origin, action.get("at"))
        rows.append(Row(started, "action", LAB, "%s started" % label, str(action.get("detail") or "")))
        ended = parse_time(action.get("ended"))
        ok = action.get("ok") is not False
        if ended is not None or not ok:
            outcome = "ended" if ok else "failed: %s" % (action.get("error") or "no reason given")
            span = " after %.3gs" % (ended - started).total_seconds() if ended and started else ""
            rows.append(Row(ended or started, "action", LAB, "%s %s%s" % (label, outcome, span), bad=not ok))
    return rows


def probe_ingresses(result: Obj, probe: Obj) -> list[str]:
    """The Ingresses a probe names: http_probe's own list, else the expectation's (or the loop item's)."""
    named = result.get("ingresses")
    if isinstance(named, list) and named:
        return [str(n) for n in named]
    # A result registered in a loop carries its item; through async_status, the job's item.
    for source in (probe, _dict(result.get("item")), _dict(_dict(result.get("item")).get("item"))):
        try:
            refs = parse_ingresses(source.get("ingress"))
        except ProbeError:
            refs = []
        if refs:
            return ["%s/%s" % ref for ref in refs]
    return []


def _cause(failure: Obj) -> str:
    cause = str(failure.get("error") or failure.get("problem") or failure.get("status") or "failed")
    backend = str(failure.get("backend") or "")
    # "(unmatched)": the answer named no backend (an error page of the proxy, say).
    return cause + (" (answered by %s)" % backend if backend and not backend.startswith("(") else "")


def _runs(failures: list[Obj], rate: float | None) -> list[list[Obj]]:
    """Consecutive failures (neighbouring ticks, or within 1.5 periods) with the same cause."""
    runs: list[list[Obj]] = []
    for failure in failures:
        last = runs[-1][-1] if runs else None
        if last is not None and _cause(last) == _cause(failure):
            seq, prev = _num(failure.get("seq")), _num(last.get("seq"))
            if seq is not None and prev is not None:
                neighbours = seq - prev == 1
            else:
                gap, period = (_num(failure.get("offset")) or 0) - (_num(last.get("offset")) or 0), 1 / rate if rate else 1.0
                neighbours = 0 <= gap <= 1.5 * period
            if neighbours:
                runs[-1].append(failure)
                continue
        runs.append([failure])
    return runs


def probe_rows(results: list[Any], probes: list[Any]) -> list[Row]:
    rows = []
    for i, result in enumerate(results):
        result = _dict(result)
        cont = _dict(result.get("continuous"))
        if not cont:
            continue
        probe = _dict(probes[i]) if i < len(probes) else {}
        targets = probe_ingresses(result, probe) or [LAB]
        label = str(probe.get("name") or ", ".join(t for t in targets if t != LAB) or result.get("url") or "probe %d" % i)
        start = parse_time(cont.get("started"))
        summary = "probe %s: %s requests at %s/s for %ss, %s failed (allowed %s)" % (
            label, cont.get("sent", "?"), cont.get("rate_requested", "?"), cont.get("duration", "?"),
            cont.get("failed_count", 0), cont.get("max_failures", probe.get("max_failures", 0)))
        for target in targets:
            if start is not None:
                rows.append(Row(start, "probe", target, summary, "rate achieved %s/s" % cont.get("rate_achieved", "?")))
            for run in _runs([_dict(f) for f in _list(cont.get("failures"))], _num(cont.get("rate_requested"))):
                first, last = run[0], run[-1]
                when = parse_time(first.get("time")) or _shift(start, first.get("offset"))
                if len(run) == 1:
                    what = "probe %s: request failed" % label
                else:
                    span = (_num(last.get("offset")) or 0.0) - (_num(first.get("offset")) or 0.0)
                    what = "probe %s: %d requests failed in a row over %.2fs" % (label, len(run), span)
                rows.append(Row(when, "probe", target, what, _cause(first), bad=True))
    return rows


def _dataplane_text(entry: Obj) -> tuple[str, str, bool]:
    finding = str(entry.get("finding") or entry.get("kind") or "?")
    pod = entry.get("pod") or "(no pod)"
    backend = entry.get("backend") or entry.get("name") or ""
    addresses = entry.get("addresses")
    if addresses is None and entry.get("address"):
        addresses = [entry["address"]]
    what = "data plane of %s: %s%s" % (pod, finding, " for %s" % backend if backend else "")
    detail = ", ".join(str(a) for a in addresses or []) or str(entry.get("reason") or entry.get("message") or "")
    return what, detail, finding in DIVERGENT


def dataplane_rows(dataplane: Obj) -> list[Row]:
    """Timed rows from the data-plane timeline; without one, its findings, untimed."""
    rows = []
    timeline = _list(dataplane.get("timeline"))
    for entry in timeline:
        entry = _dict(entry)
        what, detail, bad = _dataplane_text(entry)
        rows.append(Row(parse_time(entry.get("time")), "dataplane", str(entry.get("ingress") or LAB), what, detail, bad))
    if timeline:
        return rows
    for finding in _list(dataplane.get("findings")):
        finding = _dict(finding)
        what, detail, bad = _dataplane_text(finding)
        named = [str(finding["ingress"])] if finding.get("ingress") else [str(i) for i in _list(finding.get("ingresses"))]
        for ingress in named or [LAB]:
            rows.append(Row(None, "dataplane", ingress, what + " (when it was read)", detail, bad))
    return rows


# ---------------------------------------------------------------- Gateway API objects at a glance

GATEWAY_API_AXES = tuple(k.kind + " " for k in WATCHED)  # the axes of their changes start so


def _writers_text(item: Obj) -> str:
    writers = _dict(item.get("writers"))
    pods, managers = [str(p) for p in _list(writers.get("pods"))], [str(m) for m in _list(writers.get("managers"))]
    if pods:
        return ", ".join(pods) + (" (%s)" % ", ".join(managers) if managers else "")
    return ", ".join(managers) or "no status writer seen"


def gateway_rows(status: Obj) -> list[tuple[str, str, str, str, str, str]] | None:
    """(object, addresses seen, conditions, changes, written by, verdict) of each object of the watched
    kinds, a route kind's per parent entry, in the table's order; None where it watched none of them."""
    if all(status.get(kind.result_key) is None for kind in WATCHED):
        return None
    rows = []
    for kind in WATCHED:
        for key, item in sorted(_dict(status.get(kind.result_key)).items()):
            item = _dict(item)
            verdict = "pass" if item.get("passed") else "fail: %s" % item.get("reason")
            if kind.parents is None:
                seen = " → ".join(",".join(str(a) for a in _list(addrs)) or "(empty)" for addrs in _list(item.get("addresses_seen")))
                rows.append((kind.axis(key), seen or "(none)", ", ".join(str(c) for c in _list(item.get("conditions"))) or "(none)",
                             str(item.get("changes", 0)), _writers_text(item), verdict))
                continue
            parents = _dict(item.get("parents"))
            if not parents:
                named = ", ".join(str(p) for p in _list(item.get("named_parents"))) or "no parent"
                rows.append((kind.axis(key), "-", "no parent entry (it names %s)" % named, "0", "-", verdict))
            for label, parent in sorted(parents.items()):
                parent = _dict(parent)
                rows.append(("%s, parent %s" % (kind.axis(key), label), "-",
                             ", ".join(str(c) for c in _list(parent.get("conditions"))) or "(entry removed)",
                             str(parent.get("changes", 0)), _writers_text(parent), verdict))
    return rows


# ---------------------------------------------------------------- the merge


def _sort_key(row: Row) -> tuple[int, float, int]:
    if row.when is None:
        return (1, 0.0, KINDS.index(row.kind))
    return (0, row.when.timestamp(), KINDS.index(row.kind))


def merge(results: Obj, probes: list[Any] | None = None) -> Timeline:
    """Every Ingress's axis (and lab-wide rows merged into each), rows in time order."""
    status = _dict(results.get("status"))
    origin = status_origin(status)
    origin_from = "status watch" if origin else ""
    # The verify role registers the continuous probes apart from the one-shot ones (each list has
    # one entry per lab_expect.reachability item, skipped where the probe is of the other kind).
    probe_results = [_list(results.get(k)) for k in ("reachability", "reachability_continuous")]
    rows = status_rows(status) + action_rows(_dict(results.get("actions")), origin) \
        + [r for found in probe_results for r in probe_rows(found, probes or [])] + dataplane_rows(_dict(results.get("dataplane")))
    if origin is None:
        timed = [r.when for r in rows if r.when is not None]
        origin, origin_from = (min(timed), "first event") if timed else (None, "")
    shared = [r for r in rows if r.ingress == LAB]
    named = {r.ingress for r in rows if r.ingress != LAB}
    if shared:  # every watched Ingress has an axis for the lab-wide rows, even with no row of its own
        named |= {str(k) for k in _dict(status.get("ingresses"))}
    keys = sorted(named, key=lambda k: tuple(k.partition("/")[::2]))
    axes: dict[str, list[Row]] = {}
    for key in keys or ([LAB] if shared else []):
        mine = [r for r in rows if r.ingress == key] + (shared if key != LAB else [])
        axes[key] = sorted(mine, key=_sort_key)  # stable: same-instant rows keep the sources' order
    return Timeline(origin, origin_from, axes)


def offset_text(seconds: float | None) -> str:
    return "" if seconds is None else "%+.3f s" % seconds


# ---------------------------------------------------------------- summary.md


def markdown_lines(timeline: Timeline, limit: int = 200) -> list[str]:
    """The '## Timeline' section: one table per Ingress, at most `limit` rows each."""
    if not timeline.axes:
        return []
    origin = ("from %s (the %s's start)" % (iso(timeline.origin), timeline.origin_from)) if timeline.origin else ""
    lines = ["", "## Timeline", "",
             "Per Ingress (and per Gateway and HTTPRoute whose status changed), everything in time order: actions "
             "(lab-wide, so on every Ingress), status changes, probe failures, data-plane divergences. `at` is seconds %s." % (origin or "(no time known)")]
    for key, rows in timeline.axes.items():
        lines += ["", "### %s" % key, "", "| at | time | kind | what | detail |", "|---|---|---|---|---|"]
        for row in rows[:limit]:
            what = "**%s**" % cell(row.what) if row.bad else cell(row.what)
            lines.append("| %s | %s | %s | %s | %s |" % (offset_text(timeline.at(row)) or "-", row.time() or "-", row.kind, what,
                                                         cell(row.detail)))
        if len(rows) > limit:
            lines.append("| … | | | %d more rows | see report.json |" % (len(rows) - limit))
    return lines
