# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""The verification report as one self-contained HTML page (report.html).

A pure function of the JSON report (``verify/report.py``'s ``report``): the verdict table, then one
section per Ingress with a drawing of its status address over the watch window, each segment
coloured by the controller pod that wrote it, and what each check says of that Ingress (the
diagnosis findings, with their fixes); the Gateway API objects and the lab in sections of their
own; then each check's sections (verify/checks/registry.py, in the table's order). Inline CSS and
SVG only: no script, no font, no image, nothing fetched (a Content-Security-Policy of
``default-src 'none'`` says so to the browser).
"""
from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import html_text as _e
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.dataplane import MISSING, STALE, UNREAD
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.motion import IN_STEP, STATES, Motion, motion
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.probe_continuous import ANSWERED
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.status.attribution import change_writer
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import kind_named
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.timeline import (
    GATEWAY_API_AXES, LAB, Row, Timeline, gateway_rows, merge, offset_text, status_origin,
)

Obj = dict[str, Any]

# Distinct for the common colour-vision deficiencies (Okabe-Ito), then a few more. The
# grey is kept for segments whose writer is unknown.
PALETTE = ("#0072b2", "#e69f00", "#009e73", "#cc79a7", "#d55e00", "#56b4e9", "#8c564b", "#f0e442", "#7f3fbf", "#1b9e77")
UNKNOWN_COLOUR = "#9a9a9a"
EMPTY_COLOUR = "#ffffff"

WIDTH = 960  # the SVG's user units
BAR_X = 10
BAR_W = WIDTH - 2 * BAR_X
BAR_Y = 18
BAR_H = 30


@dataclass(frozen=True)
class Segment:
    """One stretch of an Ingress's status: [start, end) in seconds since the watch began."""

    start: float
    end: float
    addresses: tuple[str, ...]
    writer: str | None  # "namespace/pod", or "manager <field manager>" when no pod is known
    source: str  # how the writer is known: attributed by log/address/manager (log in older results), candidates,
    # inferred, prediction, manager, unknown
    time: str = ""  # wall-clock time of the change that began it ("" for the window start)


def _num(value: Any, default: float = 0.0) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return default
    return number if math.isfinite(number) else default


def _addrs(value: Any) -> tuple[str, ...]:
    return tuple(str(a) for a in value or [])


def _key_order(key: str) -> tuple[str, str]:
    ns, _sep, name = key.partition("/")
    return ns, name


def window_length(status: Obj) -> float:
    """The watch window in seconds: what the watch measured, or at least up to the last change."""
    last = max((_num(e.get("t")) for e in status.get("timeline") or []), default=0.0)
    return max(_num(status.get("elapsed")), last, 0.0)


def window_start(status: Obj) -> dt.datetime | None:
    """Wall-clock start of the watch (timeline.status_origin: its `window_started`, or a change's time less its offset).
    Without it nothing else can be placed on the bar's axis."""
    return status_origin(status)


def _predicted_writers(diagnose: Obj) -> dict[tuple[str, tuple[str, ...]], str]:
    """(ingress, address) -> the pod diagnose predicts writes it, when that is one pod."""
    pods_of: dict[str, list[str]] = {}
    for c in diagnose.get("controllers") or []:
        ref = str(c.get("controller", ""))
        ns = ref.partition("/")[0]
        pods_of[ref] = [p if "/" in str(p) else "%s/%s" % (ns, p) for p in c.get("pods") or []]
    out: dict[tuple[str, tuple[str, ...]], str] = {}
    for key, ing in (diagnose.get("ingresses") or {}).items():
        for w in ing.get("writers") or []:
            pods = pods_of.get(str(w.get("controller", "")), [])
            if len(pods) == 1:
                out[(str(key), tuple(sorted(_addrs(w.get("address")))))] = pods[0]
    return out


def _attributed(source: str) -> bool:
    """Whether a segment's writer is the pod the status watch named (its log line, or since
    ingress_status weighs evidence, `attributed by log/address/manager`)."""
    return source == "log" or source.startswith("attributed by ")


def segments(status: Obj, diagnose: Obj | None = None) -> dict[str, list[Segment]]:
    """Each Ingress's status over the window, from ingress_status's timeline.

    A change's writer is the pod the watch attributed it to (its `attributed_by`), or "one of"
    its candidates when the watch could not decide: those are never filled in below, a wrong
    writer being worse than none. A stretch without either (the
    status the window starts with, or a change whose log line was not found) takes, in
    order: the pod seen writing the same address into the same Ingress, the pod seen writing
    it anywhere, the pod diagnose predicts writes it, the field manager; else it is unknown.
    """
    end = window_length(status)
    timeline = sorted((e for e in status.get("timeline") or [] if e.get("ingress")), key=lambda e: _num(e.get("t")))
    keys = set((status.get("ingresses") or {}).keys()) | {str(e["ingress"]) for e in timeline}
    raw: dict[str, list[Segment]] = {}
    for key in keys:
        info = (status.get("ingresses") or {}).get(key) or {}
        seen = info.get("addresses_seen") or []
        mine = [e for e in timeline if e["ingress"] == key]
        current = _addrs(mine[0].get("old")) if mine else _addrs(seen[0] if seen else [])
        managers = (info.get("writers") or {}).get("managers") or []
        writer: str | None = None
        source = "unknown"
        if managers and current:
            writer, source = "manager %s" % managers[0], "manager"
        start, when = 0.0, ""
        out: list[Segment] = []
        for e in mine:
            t = _num(e.get("t"))
            out.append(Segment(start, t, current, writer, source, when))
            current, start, when = _addrs(e.get("new")), t, str(e.get("time", ""))
            if e.get("pod"):
                by = e.get("attributed_by")
                writer, source = str(e["pod"]), "attributed by %s" % by if by else "log"
            elif e.get("candidates"):  # the watch could not decide between them: no guess below either
                writer, source = "one of %s" % ", ".join(str(c) for c in e["candidates"]), "candidates"
            elif e.get("manager") and current:
                writer, source = "manager %s" % e["manager"], "manager"
            else:
                writer, source = None, "unknown"
        out.append(Segment(start, max(end, start), current, writer, source, when))
        raw[key] = [s for s in out if s.end > s.start or len(out) == 1]
    # Fill in writers that are not known from a log line.
    by_ingress: dict[tuple[str, tuple[str, ...]], str] = {}
    anywhere: dict[tuple[str, ...], set[str]] = {}
    for key, segs in raw.items():
        for s in segs:
            if _attributed(s.source) and s.writer:
                by_ingress.setdefault((key, tuple(sorted(s.addresses))), s.writer)
                anywhere.setdefault(tuple(sorted(s.addresses)), set()).add(s.writer)
    predicted = _predicted_writers(diagnose or {})
    result: dict[str, list[Segment]] = {}
    for key, segs in raw.items():
        filled = []
        for s in segs:
            addrs = tuple(sorted(s.addresses))
            if not _attributed(s.source) and s.source != "candidates" and addrs:
                guess = by_ingress.get((key, addrs))
                if guess is None and len(anywhere.get(addrs, ())) == 1:
                    guess = next(iter(anywhere[addrs]))
                if guess is not None:
                    s = Segment(s.start, s.end, s.addresses, guess, "inferred", s.time)
                elif (key, addrs) in predicted:
                    s = Segment(s.start, s.end, s.addresses, predicted[(key, addrs)], "prediction", s.time)
            filled.append(s)
        result[key] = filled
    return result


def colours(all_segments: dict[str, list[Segment]]) -> dict[str, str]:
    """One colour per writer, stable for the same set of writers (sorted by name)."""
    writers = sorted({s.writer for segs in all_segments.values() for s in segs if s.writer and s.addresses})
    return {w: PALETTE[i % len(PALETTE)] for i, w in enumerate(writers)}


def _text_colour(fill: str) -> str:
    r, g, b = (int(fill[i:i + 2], 16) for i in (1, 3, 5))
    return "#000000" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "#ffffff"


def _tick_step(length: float) -> float:
    if length <= 0:
        return 1.0
    raw = length / 8
    magnitude = 10 ** math.floor(math.log10(raw))
    for step in (1, 2, 5, 10):
        if raw <= step * magnitude:
            return float(step * magnitude)
    return float(10 * magnitude)


def _fmt_s(seconds: float) -> str:
    return ("%.1f" % seconds).rstrip("0").rstrip(".") + " s"


# What moves under the bar (motion.py): each probe second's outcome and each replica's state, by colour.
PROBE_COLOURS = {ANSWERED: "#2da44e", "404": "#e69f00", "502": "#d55e00", "503": "#cc79a7", "500": "#8c564b",
                 "timed out": "#57606a", "refused": "#7f3fbf", "reset": "#0072b2", "wrong body": "#f0e442", "error": "#1d1d1f"}
OTHER_STATUS_COLOURS = ("#b35806", "#542788", "#c51b7d", "#4d9221")
STATE_COLOURS = {IN_STEP: "#2da44e", STALE: "#e69f00", MISSING: "#d55e00", UNREAD: "#9a9a9a"}
ROWS_Y = BAR_Y + BAR_H + 32  # the first row under the axis and its labels
ROW_H = 26  # a row: its label (10 px text), then its band
BAND_H = 10


def outcome_colour(outcome: str) -> str:
    """A probe outcome's colour: its own for the usual ones, one of a few more for another status code."""
    if outcome in PROBE_COLOURS:
        return PROBE_COLOURS[outcome]
    return OTHER_STATUS_COLOURS[sum(map(ord, outcome)) % len(OTHER_STATUS_COLOURS)]


def _counts_text(counts: dict[str, int]) -> str:
    return ", ".join("%s %d" % (k, n) for k, n in sorted(counts.items(), key=lambda kv: (kv[0] != ANSWERED, -kv[1], kv[0])))


def _motion_svg(m: Motion, length: float, scale: float, height: int) -> list[str]:
    """Under the axis, one row per probe (a cell per second) and per replica (a stretch per state);
    the actions as dashed lines through the whole figure, named at the top."""
    parts: list[str] = []
    y = ROWS_Y
    for label, seconds in m.probes.items():
        parts.append('<text x="%d" y="%d" class="row-label">probe %s</text>' % (BAR_X, y + 9, _e(label)))
        for sec in seconds:
            if not 0 <= sec.start < length:
                continue
            x = BAR_X + sec.start * scale
            width = max(min(1.0, length - sec.start) * scale, 1.0)
            parts.append('<rect class="probe-second" data-probe="%s" data-start="%.3f" data-outcome="%s" x="%.2f" y="%d" '
                         'width="%.2f" height="%d" fill="%s"><title>probe %s, +%s: %s</title></rect>'
                         % (_e(label), sec.start, _e(sec.outcome), x, y + 12, width, BAND_H, outcome_colour(sec.outcome), _e(label),
                            _fmt_s(sec.start), _e(_counts_text(sec.counts))))
        y += ROW_H
    for pod, stretches in m.replicas.items():
        parts.append('<text x="%d" y="%d" class="row-label">data plane %s</text>' % (BAR_X, y + 9, _e(pod)))
        for st in stretches:
            start, end = max(st.start, 0.0), min(st.end, length)
            if end <= start:
                continue
            x = BAR_X + start * scale
            parts.append('<rect class="replica" data-pod="%s" data-state="%s" data-start="%.3f" data-end="%.3f" x="%.2f" y="%d" '
                         'width="%.2f" height="%d" fill="%s"><title>%s: %s from +%s to +%s%s</title></rect>'
                         % (_e(pod), _e(st.state), start, end, x, y + 12, max((end - start) * scale, 1.0), BAND_H,
                            STATE_COLOURS[st.state], _e(pod), _e(st.state), _fmt_s(start), _fmt_s(end),
                            _e(" (" + ", ".join(st.addresses) + ")" if st.addresses else "")))
        y += ROW_H
    for n, action in enumerate(m.actions):
        if not 0 <= action.at <= length:
            continue
        x = BAR_X + action.at * scale
        parts.append('<g class="action" data-at="%.3f" data-name="%s"><title>action %s at +%s%s</title>'
                     '<line x1="%.2f" x2="%.2f" y1="2" y2="%d" stroke="%s" stroke-width="1.5" stroke-dasharray="4 2"/>'
                     '<text x="%.2f" y="11" class="action-label"%s>%d %s</text></g>'
                     % (action.at, _e(action.name), _e(action.name), _fmt_s(action.at), "" if action.ok else " (failed)",
                        x, x, height - 2, "#1d1d1f" if action.ok else "#cf222e", x + 3,
                        ' text-anchor="end"' if x > WIDTH * 0.75 else "", n + 1, _e(action.name)))
    return parts


def figure_height(m: Motion | None) -> int:
    rows = len(m.probes) + len(m.replicas) if m else 0
    return 76 if not rows else ROWS_Y + rows * ROW_H + 2


def timeline_svg(key: str, segs: list[Segment], length: float, palette: dict[str, str], m: Motion | None = None) -> str:
    """The drawing of one Ingress over the window: its status address (the bar, coloured by writer), the
    axis, and under it on the same axis what moved (motion.py): a row per continuous probe, a row per
    controller replica's data plane, and the actions as dashed lines through all of them."""
    scale = BAR_W / length if length > 0 else 0.0
    height = figure_height(m)
    parts = ['<svg class="timeline" data-ingress="%s" viewBox="0 0 %d %d" width="%d" height="%d" role="img" '
             'aria-label="status address of %s over the watch window, and what moved under it" shape-rendering="crispEdges">'
             % (_e(key), WIDTH, height, WIDTH, height, _e(key))]
    for i, s in enumerate(segs):
        x0 = BAR_X + (s.start * scale if scale else 0.0)
        x1 = BAR_X + (s.end * scale if scale else BAR_W)
        width = max(x1 - x0, 1.0)
        label = ", ".join(s.addresses) or "(empty)"
        fill = EMPTY_COLOUR if not s.addresses else palette.get(s.writer or "", UNKNOWN_COLOUR)
        tip = "%s: %s from %s to %s, written by %s (%s)" % (key, label, _fmt_s(s.start), _fmt_s(s.end), s.writer or "unknown", s.source)
        parts.append('<g class="segment" data-index="%d" data-writer="%s" data-addresses="%s" data-start="%.3f" data-end="%.3f">'
                     '<title>%s</title><rect x="%.2f" y="%d" width="%.2f" height="%d" fill="%s"%s/>'
                     % (i, _e(s.writer or ""), _e(label), s.start, s.end, _e(tip), x0, BAR_Y, width, BAR_H, fill,
                        ' stroke="#777" stroke-dasharray="3 3"' if not s.addresses else ""))
        if width >= 7.2 * len(label) + 8:
            parts.append('<text x="%.2f" y="%d" fill="%s" class="seg-label">%s</text>'
                         % (x0 + 4, BAR_Y + BAR_H - 10, _text_colour(fill), _e(label)))
        parts.append("</g>")
        if i and scale:
            parts.append('<line class="change" x1="%.2f" x2="%.2f" y1="%d" y2="%d" stroke="#222" stroke-width="1"/>'
                         % (x0, x0, BAR_Y - 6, BAR_Y))
    parts.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#444"/>' % (BAR_X, BAR_X + BAR_W, BAR_Y + BAR_H + 2, BAR_Y + BAR_H + 2))
    if scale:
        step = _tick_step(length)
        tick = 0.0
        while tick <= length + 1e-9:
            x = BAR_X + tick * scale
            anchor = "start" if tick == 0 else ("end" if x > WIDTH - 30 else "middle")
            parts.append('<line x1="%.2f" x2="%.2f" y1="%d" y2="%d" stroke="#444"/><text x="%.2f" y="%d" text-anchor="%s" '
                         'class="tick">%s</text>' % (x, x, BAR_Y + BAR_H + 2, BAR_Y + BAR_H + 7, x, BAR_Y + BAR_H + 20,
                                                     anchor, _fmt_s(tick)))
            tick = round(tick + step, 6)
        if m is not None:
            parts.extend(_motion_svg(m, length, scale, height))
    parts.append("</svg>")
    return "".join(parts)


def motion_legend(moving: dict[str, Motion]) -> str:
    """The legend of what the figures show below their bars: only the outcomes and states drawn."""
    outcomes = sorted({sec.outcome for m in moving.values() for secs in m.probes.values() for sec in secs},
                      key=lambda o: (o != ANSWERED, o))
    states = [st for st in STATES if any(x.state == st for m in moving.values() for xs in m.replicas.values() for x in xs)]
    items = ['<li data-outcome="%s"><span class="swatch" style="background:%s"></span>probe: %s</li>'
             % (_e(o), outcome_colour(o), _e(o)) for o in outcomes]
    items += ['<li data-state="%s"><span class="swatch" style="background:%s"></span>data plane: %s</li>'
              % (_e(st), STATE_COLOURS[st], _e(st)) for st in states]
    return '<ul class="legend" id="motion-legend">%s</ul>' % "".join(items) if items else ""


_CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:24px auto;max-width:1000px;
color:#1d1d1f;background:#fff;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:16px;margin:0 0 6px}
.verdict{display:inline-block;padding:2px 10px;border-radius:4px;color:#fff;font-weight:700}
.PASS{background:#1a7f37}.FAIL{background:#cf222e}
table{border-collapse:collapse;width:100%;margin:6px 0 12px}
th,td{border:1px solid #d8d8d8;padding:4px 6px;text-align:left;vertical-align:top}
th{background:#f4f4f6}
tr.unmet td{background:#fff0f0}td.met{color:#1a7f37;font-weight:600}td.unmet{color:#cf222e;font-weight:700}
section.ingress{border:1px solid #ddd;border-radius:6px;padding:10px 12px;margin:12px 0}
.meta{color:#555}
.legend{display:flex;flex-wrap:wrap;gap:4px 16px;margin:6px 0 10px;padding:0;list-style:none}
.legend li{display:flex;align-items:center;gap:6px}
.swatch{display:inline-block;width:14px;height:14px;border:1px solid #0003}
svg.timeline{display:block;max-width:100%;height:auto}
svg .seg-label{font:12px "DejaVu Sans Mono",monospace}svg .tick{font:11px sans-serif;fill:#444}
svg .row-label{font:10px sans-serif;fill:#444}svg .action-label{font:10px sans-serif;fill:#1d1d1f}
.finding{border-left:4px solid #cf222e;background:#fff8f6;padding:6px 10px;margin:8px 0}
.finding.warning{border-color:#bf8700;background:#fffbea}
.fix{margin:4px 0 0}.fix code{background:#f1f1f4;padding:0 3px}
code{font-family:"DejaVu Sans Mono",monospace;font-size:12.5px}
details{margin:6px 0}
table.timeline-rows tr.bad td{background:#fff0f0}table.timeline-rows tr.action td{font-weight:600}
"""


def _verdict_rows(verdicts: list[Obj]) -> str:
    rows = []
    for v in verdicts:
        met = bool(v.get("met"))
        rows.append('<tr class="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td class="%s">%s</td></tr>'
                    % ("met" if met else "unmet", _e(v.get("check", "")), _e(v.get("subject", "")), _e(v.get("expected", "")),
                       _e(v.get("observed", "")), "met" if met else "unmet", "ok" if met else "UNMET"))
    return "".join(rows)


def _changes_table(key: str, timeline: list[Obj]) -> str:
    mine = [e for e in timeline if e.get("ingress") == key]
    if not mine:
        return ""
    rows = "".join("<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>" % (
        _e(_fmt_s(_num(e.get("t")))), _e(e.get("time", "")), _e(", ".join(_addrs(e.get("old"))) or "(empty)"),
        _e(", ".join(_addrs(e.get("new"))) or "(empty)"), _e(change_writer(e))) for e in mine)
    return ("<details><summary>%d status change%s</summary><table><thead><tr><th>at</th><th>time</th><th>from</th><th>to</th>"
            "<th>writer</th></tr></thead><tbody>%s</tbody></table></details>" % (len(mine), "" if len(mine) == 1 else "s", rows))


def _timeline_table(rows: list[Row], tl: Timeline, limit: int = 300) -> str:
    """The Ingress's timeline as rows in time order (bad ones marked)."""
    if not rows:
        return ""
    body = "".join('<tr class="%s%s" data-kind="%s"><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>' % (
        _e(r.kind), " bad" if r.bad else "", _e(r.kind), _e(offset_text(tl.at(r)) or "-"), _e(r.time() or "-"), _e(r.kind),
        _e(r.what), _e(r.detail)) for r in rows[:limit])
    more = '<p class="meta">%d more rows in report.json</p>' % (len(rows) - limit) if len(rows) > limit else ""
    bad = sum(1 for r in rows if r.bad)
    return ('<details class="story"%s><summary>timeline: %d event%s, %d bad</summary><table class="timeline-rows"><thead><tr>'
            "<th>at</th><th>time</th><th>kind</th><th>what</th><th>detail</th></tr></thead><tbody>%s</tbody></table>%s</details>"
            % (" open" if bad else "", len(rows), "" if len(rows) == 1 else "s", bad, body, more))


def _gateway_api_html(status: Obj, story: Timeline, verdicts: list[Obj]) -> str:
    """The watched kinds' objects (Gateways, routes) beside the Ingresses: one table (timeline.gateway_rows), then each
    object's timeline of changes with their writers, and its verdicts."""
    rows = gateway_rows(status)
    if rows is None:
        return ""
    out = ['<h2 id="gateway-api">Gateway API</h2><table id="gateway-api-objects"><thead><tr><th>object</th><th>addresses</th>'
           "<th>conditions</th><th>changes</th><th>written by</th><th>verdict</th></tr></thead><tbody>%s</tbody></table>"
           % "".join('<tr class="%s">%s</tr>' % ("ok" if row[5] == "pass" else "bad", "".join("<td>%s</td>" % _e(c) for c in row))
                     for row in rows)]
    for axis in sorted(k for k in story.axes if k.startswith(GATEWAY_API_AXES)):
        kind, _sep, key = axis.partition(" ")
        watched = kind_named(kind)  # GATEWAY_API_AXES: always a watched kind's axis
        check = watched.result_key if watched else ""
        mine = [v for v in verdicts if v.get("check") == check and v.get("subject") == key]
        out.append('<section class="ingress" id="%s-%s" data-object="%s"><h3>%s</h3>%s%s</section>' % (
            _e(kind.lower()), _e(key.replace("/", "-")), _e(axis), _e(axis), _timeline_table(story.axes[axis], story),
            "<table><tbody>%s</tbody></table>" % _verdict_rows(mine) if mine else ""))
    return "".join(out)


def render(doc: Obj) -> str:
    """report.json (as a dict) -> the HTML page."""
    results = doc.get("results") or {}
    status = results.get("status") or {}
    verdicts = [v for v in doc.get("verdicts") or [] if isinstance(v, dict)]
    unmet = [v for v in verdicts if not v.get("met")]
    passed = bool(doc.get("passed", not unmet))
    scenario = str(doc.get("scenario", "default"))

    segs = segments(status, results.get("diagnose") or {}) if status else {}
    palette = colours(segs)
    length = window_length(status)
    start = window_start(status)
    # The expectation's probes name the probes and, when a result does not, their Ingresses.
    expected_probes = ((doc.get("expect") or {}).get("reachability") or []) if isinstance(doc.get("expect"), dict) else []
    story = merge(results, expected_probes)
    moving = motion(results, expected_probes, start)
    # An object's section: each Ingress the watch drew, a check has something to say of, or the timeline has an axis for.
    keys = set(segs).union(*(c.objects(results) for c in registry.CHECKS if c.objects is not None)) \
        | {k for k in story.axes if k != LAB and not k.startswith(GATEWAY_API_AXES)}
    unlisted = {c.key for c in registry.CHECKS if not c.object_verdicts}  # checks whose verdicts name no object (diagnose's findings)

    out = ['<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
           '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; style-src \'unsafe-inline\'">'
           '<meta name="viewport" content="width=device-width, initial-scale=1">'
           "<title>Ingress lab verification: %s</title><style>%s</style></head><body>" % (_e(scenario), _CSS)]
    out.append('<h1>Ingress lab verification: %s <span class="verdict %s" id="verdict">%s</span></h1>'
               % (_e(scenario), "PASS" if passed else "FAIL", "PASS" if passed else "FAIL"))
    out.append('<p class="meta">Backend <strong>%s</strong>. %d checks, %d as expected, %d unmet.%s</p>' % (
        _e(doc.get("backend", "unknown")), len(verdicts), len(verdicts) - len(unmet), len(unmet),
        (" Status watched for %s from %s." % (_fmt_s(length), start.isoformat(timespec="seconds").replace("+00:00", "Z"))
         if start else (" Status watched for %s." % _fmt_s(length) if status else ""))))

    said = [(str(v.get("check")), str(v.get("subject")), str(v.get("observed"))) for v in verdicts]
    out.extend(c.answer_html(results, said) for c in registry.CHECKS if c.answer_html is not None)  # a rehearsal's answer first
    out.append('<h2>Verdicts</h2><table id="verdicts"><thead><tr><th>check</th><th>subject</th><th>expected</th>'
               "<th>observed</th><th></th></tr></thead><tbody>%s</tbody></table>" % _verdict_rows(verdicts))

    out.append("<h2>Ingresses</h2>")
    if palette:
        out.append('<p class="meta">Each bar is the Ingress\'s <code>status.loadBalancer.ingress</code> over the watch window '
                   "(seconds since it began); each colour is the controller pod that wrote that address. A change of colour "
                   "within a bar is a rewrite by another controller: a flap.</p>")
        out.append('<ul class="legend" id="legend">%s%s</ul>' % ("".join(
            '<li data-writer="%s"><span class="swatch" style="background:%s"></span>%s</li>' % (_e(w), c, _e(w))
            for w, c in palette.items()),
            '<li><span class="swatch" style="background:%s"></span>writer unknown</li>' % UNKNOWN_COLOUR))
    if not keys:
        out.append("<p>No Ingress was checked.</p>")
    if moving:
        shown = [what for what, there in (
            ("the actions as dashed lines, numbered and named (lab-wide, so on every Ingress)", any(m.actions for m in moving.values())),
            ("each continuous probe second by second, coloured by what its requests came to in that second (its most frequent "
             "failure, green when all were answered; the counts on hover)", any(m.probes for m in moving.values())),
            ("each controller replica's data plane for the Ingress: in step with the EndpointSlices, stale, missing or "
             "unread (the addresses on hover)", any(m.replicas for m in moving.values()))) if there]
        out.append('<p class="meta">Under each bar, on the same axis: %s.</p>' % _e("; ".join(shown)))
        out.append(motion_legend(moving))
    if story.axes:
        origin = ("the %s's start, %s" % (story.origin_from, story.origin.isoformat(timespec="seconds").replace("+00:00", "Z"))
                  if story.origin else "the first event")
        out.append('<p class="meta">Below each figure, its timeline: actions, status changes, probe failures and data-plane '
                   "divergences as rows in time order; <em>at</em> is seconds from %s.</p>" % _e(origin))
    for key in sorted(keys, key=_key_order):
        info = (status.get("ingresses") or {}).get(key) or {}
        checks = [v for v in verdicts if v.get("check") not in unlisted and key in str(v.get("subject", "")).split(" vs ")]
        out.append('<section class="ingress" id="ingress-%s" data-ingress="%s"><h3>%s</h3>' % (_e(key.replace("/", "-")), _e(key), _e(key)))
        if key in segs:
            writers = sorted({s.writer for s in segs[key] if s.writer and s.addresses})
            changes = int(_num(info.get("changes"), float(len(segs[key]) - 1)))
            out.append('<p class="meta">%d change%s in the window; %s; writers: %s</p>' % (
                changes, "" if changes == 1 else "s", _e(info.get("reason") or ("stable" if info.get("passed", True) else "failed")),
                _e(", ".join(writers) or "unknown")))
            out.append(timeline_svg(key, segs[key], length, palette, moving.get(key)))
            for r in (status.get("pod_restarts") or []):
                if r.get("ingress") == key:
                    out.append('<p class="meta restart">controller pod replaced at %s: %s, then %s</p>' % (
                        _e(r.get("time", "")), _e(r.get("from", "")), _e(r.get("to", ""))))
            out.append(_changes_table(key, status.get("timeline") or []))
        else:
            out.append('<p class="meta">Its status was not watched.</p>')
        out.append(_timeline_table(story.axes.get(key, []), story))
        if checks:
            out.append("<table><tbody>%s</tbody></table>" % _verdict_rows(checks))
        out.extend(c.of_object(results, key) for c in registry.CHECKS if c.of_object is not None)  # diagnose's findings of it
        out.append("</section>")

    out.append(_gateway_api_html(status, story, verdicts))
    if LAB in story.axes:  # lab-wide rows when no Ingress has an axis of its own
        out.append('<section class="ingress" id="ingress-lab" data-ingress="%s"><h3>the lab</h3>%s</section>'
                   % (_e(LAB), _timeline_table(story.axes[LAB], story)))
    out.extend(c.html(results) for c in registry.CHECKS if c.html is not None)
    out.extend(c.rest_html(results, keys) for c in registry.CHECKS if c.rest_html is not None)  # findings no section took
    out.append('<p class="meta">Written by kindlab.ingress.verify_report from report.json; self-contained, '
               "no network fetches.</p></body></html>\n")
    return "".join(out)
