"""One time axis per Ingress: the merge of actions, status changes, probe failures and data-plane
divergences, and its rendering in summary.md and report.html."""
from __future__ import annotations

from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report import report
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_md import markdown
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.verdicts import evaluate
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_html import render
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.timeline import LAB, markdown_lines, merge

# The watch began at 10:00:00; a rollout at +10 s; the controller of one/test kept routing to the
# old pod, so the probe failed from +12 s and the data plane was stale until +20 s.
STATUS = {
    "ingresses": {"one/test": {"passed": True, "reason": "stable"}, "two/test": {"passed": True, "reason": "stable"}},
    "timeline": [
        {"time": "2026-11-26T10:00:05.000Z", "t": 5.0, "ingress": "two/test", "event": "MODIFIED", "old": ["100.64.0.1"],
         "new": ["172.18.0.2"], "manager": "nginx-ingress-controller", "operation": "Update", "pod": None,
         "attributed_by": "candidates", "candidates": ["two/c-a", "two/c-b"]},
        {"time": "2026-11-26T10:00:15.000Z", "t": 15.0, "ingress": "one/test", "event": "MODIFIED", "old": ["100.64.0.0"],
         "new": [], "manager": "nginx-ingress-controller", "operation": "Update", "pod": "one/c-x", "attributed_by": "log"},
    ],
    "pod_restarts": [{"time": "2026-11-26T10:00:30.000Z", "ingress": "one/test", "from": "one/c-x", "to": "one/c-y"}],
    "elapsed": 60,
}
ACTIONS = {"actions": [
    {"name": "web", "kind": "rollout", "target": "one/deploy/web", "at": 10.0, "started": "2026-11-26T10:00:10.000Z",
     "ended": "2026-11-26T10:00:18.500Z", "ok": True, "error": None, "detail": "new pods web-2, web-3", "machinery": False},
    {"name": "freeze", "kind": "freeze", "target": "one/c-x", "at": 8.0, "started": None, "ended": None, "ok": False,
     "error": "no such pod", "detail": "", "machinery": True},
]}
FAILURES = [
    {"seq": 240, "time": "2026-11-26T10:00:12.000Z", "offset": 12.0, "status": 502, "problem": "got 502 (expected 200)",
     "backend": "(unmatched)"},
    {"seq": 241, "time": "2026-11-26T10:00:12.050Z", "offset": 12.05, "status": 502, "problem": "got 502 (expected 200)",
     "backend": "(unmatched)"},
    {"seq": 242, "time": "2026-11-26T10:00:12.100Z", "offset": 12.1, "status": 502, "problem": "got 502 (expected 200)",
     "backend": "(unmatched)"},
    {"seq": 300, "time": "2026-11-26T10:00:15.000Z", "offset": 15.0, "error": "connection refused", "backend": None},
]
PROBE = {"passed": False, "reason": "...", "ingresses": ["one/test"], "distribution": {"web-1": 396},
         "continuous": {"rate_requested": 20.0, "rate_achieved": 19.99, "duration": 20, "started": "2026-11-26T10:00:00.000Z",
                        "sent": 400, "failed_count": 4, "max_failures": 0, "failures": FAILURES,
                        "per_second": [{"second": i, "outcomes": {"answered": 20}} for i in range(12)]
                        + [{"second": 12, "outcomes": {"502": 3, "answered": 17}}, {"second": 13, "outcomes": {"answered": 20}},
                           {"second": 14, "outcomes": {"answered": 20}}, {"second": 15, "outcomes": {"refused": 1, "answered": 19}}]
                        + [{"second": i, "outcomes": {"answered": 20}} for i in range(16, 20)]}}
# The data plane was read from +1 s for 25 s, every second.
DATAPLANE = {"passed": False, "findings": [], "window_started": "2026-11-26T10:00:01.000Z", "duration": 25.0, "timeline": [
    {"time": "2026-11-26T10:00:11.000Z", "offset": 10.0, "pod": "one/c-x", "ingress": "one/test", "backend": "one-web-80",
     "finding": "stale", "addresses": ["10.244.0.5:8080"]},
    {"time": "2026-11-26T10:00:20.000Z", "offset": 19.0, "pod": "one/c-x", "ingress": "one/test", "backend": "one-web-80",
     "finding": "converged", "addresses": ["10.244.0.9:8080"]},
], "lag": [{"pod": "one/c-x", "controller": "one/c", "ingress": "one/test", "backend": "one-web-80", "lag": 9.0, "open": False,
            "divergences": 1, "from_start": False, "gone": None, "seen": 0.0}]}
RESULTS: dict[str, Any] = {"status": STATUS, "actions": ACTIONS, "reachability": [PROBE], "dataplane": DATAPLANE}


def story(key: str, results: dict[str, Any] | None = None) -> list[tuple[float | None, str, str, bool]]:
    tl = merge(results or RESULTS)
    return [(tl.at(r), r.kind, r.what, r.bad) for r in tl.axes[key]]


def test_every_source_on_one_axis_per_ingress_in_time_order() -> None:
    tl = merge(RESULTS)
    assert list(tl.axes) == ["one/test", "two/test"]
    assert tl.origin is not None and tl.origin.isoformat() == "2026-11-26T10:00:00+00:00" and tl.origin_from == "status watch"
    assert story("one/test") == [
        (0.0, "probe", "probe one/test: 400 requests at 20.0/s for 20s, 4 failed (allowed 0)", False),
        # No start time: placed by its offset from the watch's start.
        (8.0, "action", "freeze (test machinery) on one/c-x started", False),
        (8.0, "action", "freeze (test machinery) on one/c-x failed: no such pod", True),
        (10.0, "action", "rollout web on one/deploy/web started", False),
        (11.0, "dataplane", "data plane of one/c-x: stale for one-web-80", True),
        (12.0, "probe", "probe one/test: 3 requests failed in a row over 0.10s", True),
        (15.0, "status", "status 100.64.0.0 -> (empty)", True),
        (15.0, "probe", "probe one/test: request failed", True),
        (18.5, "action", "rollout web on one/deploy/web ended after 8.5s", False),
        (20.0, "dataplane", "data plane of one/c-x: converged for one-web-80", False),
        (30.0, "status", "controller pod replaced", False),
    ]


def test_actions_are_on_every_ingress_and_writers_say_how_they_were_attributed() -> None:
    two = merge(RESULTS).axes["two/test"]
    assert [(r.kind, r.what) for r in two] == [
        ("status", "status 100.64.0.1 -> 172.18.0.2"),
        ("action", "freeze (test machinery) on one/c-x started"),
        ("action", "freeze (test machinery) on one/c-x failed: no such pod"),
        ("action", "rollout web on one/deploy/web started"),
        ("action", "rollout web on one/deploy/web ended after 8.5s"),
    ]
    assert two[0].detail == "written by one of two/c-a, two/c-b [undecided] (nginx-ingress-controller Update)"
    one = {r.what: r for r in merge(RESULTS).axes["one/test"]}
    assert one["status 100.64.0.0 -> (empty)"].detail == "written by one/c-x [by log] (nginx-ingress-controller Update)"
    assert one["probe one/test: request failed"].detail == "connection refused"
    assert one["probe one/test: 3 requests failed in a row over 0.10s"].detail == "got 502 (expected 200)"
    assert one["data plane of one/c-x: stale for one-web-80"].detail == "10.244.0.5:8080"


def test_absent_or_malformed_sources_are_tolerated() -> None:
    assert merge({}).axes == {} and merge({}).origin is None
    assert merge({"status": None, "actions": [], "reachability": None, "dataplane": "x"}).axes == {}
    # Without a status watch, the origin is the first event; lab-wide rows get an axis of their own.
    only_actions = merge({"actions": ACTIONS})
    assert list(only_actions.axes) == [LAB] and only_actions.origin_from == "first event"
    # The freeze has no time and no origin to place its offset from: listed last, untimed.
    assert [only_actions.at(r) for r in only_actions.axes[LAB]] == [0.0, 8.5, None, None]
    # Every watched Ingress has the lab-wide rows, even one whose status never changed.
    quiet = merge({"status": {"ingresses": {"three/test": {"passed": True}}}, "actions": ACTIONS})
    assert list(quiet.axes) == ["three/test"] and len(quiet.axes["three/test"]) == 4
    # A non-continuous probe adds nothing; a probe by URL is lab-wide, merged into every Ingress.
    by_url = dict(PROBE, ingresses=None, url="http://100.64.0.0/")
    merged = merge({"status": STATUS, "reachability": [{"passed": True}, by_url]})
    assert sum(1 for r in merged.axes["two/test"] if r.kind == "probe") == 3  # the window, the run, the single one
    # The verify role's continuous probes come apart from the one-shot ones, each list one entry per
    # expectation, skipped where the probe is of the other kind; through async_status, the item is the job's.
    split = merge({"reachability": [{"skipped": True}], "reachability_continuous": [
        dict(PROBE, ingresses=None, item={"ansible_job_id": "j1", "item": {"ingress": "two/test"}})]}, [{"name": "shop"}])
    assert list(split.axes) == ["two/test"] and split.axes["two/test"][1].what == "probe shop: 3 requests failed in a row over 0.10s"
    # The expectation (or the loop item) names the probe's Ingress when the result does not.
    named = merge({"reachability": [dict(PROBE, ingresses=None, item={"ingress": "two/test"})]}, [{"name": "checkout"}])
    assert list(named.axes) == ["two/test"] and named.axes["two/test"][1].what.startswith("probe checkout: 3 requests")


def test_data_plane_findings_without_a_timeline_are_listed_last_untimed() -> None:
    findings = {"findings": [
        {"kind": "stale", "pod": "one/c-x", "ingress": "one/test", "backend": "web:80", "address": "10.244.0.5:8080"},
        {"kind": "unread", "pod": "two/c-a", "ingresses": ["two/test"], "reason": "exec refused (403)"},
    ]}
    tl = merge({"status": STATUS, "dataplane": findings})
    assert [(tl.at(r), r.what, r.detail) for r in tl.axes["one/test"]][-1] == \
        (None, "data plane of one/c-x: stale for web:80 (when it was read)", "10.244.0.5:8080")
    assert tl.axes["two/test"][-1].detail == "exec refused (403)" and tl.axes["two/test"][-1].bad


def test_markdown_reads_top_to_bottom_with_failures_in_bold() -> None:
    lines = markdown_lines(merge(RESULTS))
    one = lines[lines.index("### one/test"):]
    assert one[2:4] == ["| at | time | kind | what | detail |", "|---|---|---|---|---|"]
    assert one[6] == "| +8.000 s | 2026-11-26T10:00:08.000Z | action | **freeze (test machinery) on one/c-x failed: no such pod** |  |"
    assert one[7] == ("| +10.000 s | 2026-11-26T10:00:10.000Z | action | rollout web on one/deploy/web started | "
                      "new pods web-2, web-3 |")
    assert one[8] == ("| +11.000 s | 2026-11-26T10:00:11.000Z | dataplane | **data plane of one/c-x: stale for one-web-80** | "
                      "10.244.0.5:8080 |")
    capped = markdown_lines(merge(RESULTS), limit=2)
    assert "| … | | | 9 more rows | see report.json |" in capped
    assert markdown_lines(merge({})) == []


def test_summary_and_report_html_carry_the_timeline() -> None:
    expect = {"reachability": [{"ingress": "one/test", "rate": 20, "duration": 20}]}
    verdicts = evaluate(RESULTS, expect)
    text = markdown("rollout", "kind", verdicts, RESULTS, expect["reachability"])
    assert "## Timeline" in text and text.index("### one/test") < text.index("### two/test")
    page = render(report("rollout", "kind", verdicts, RESULTS, expect))
    section = page[page.index('id="ingress-one-test"'):page.index('id="ingress-two-test"')]
    rows = section[section.index('class="timeline-rows"'):]
    order = ["rollout web on one/deploy/web started", "data plane of one/c-x: stale", "3 requests failed in a row",
             "status 100.64.0.0 -&gt; (empty)", "controller pod replaced"]
    positions = [rows.index(text) for text in order]
    assert positions == sorted(positions)
    assert '<details class="story" open><summary>timeline: 11 events, 5 bad</summary>' in section
    # Under the bar, on its axis (issue 36): the action that started (the freeze never did), the probe second by
    # second, the replica's data plane in step, stale, in step again.
    figure = section[section.index("<svg"):section.index("</svg>")]
    assert figure.count('<g class="action"') == 1 and '<g class="action" data-at="10.000" data-name="web">' in figure
    seconds = [(cell.split('data-start="')[1].split('"')[0], cell.split('data-outcome="')[1].split('"')[0])
               for cell in figure.split('<rect class="probe-second"')[1:]]
    assert len(seconds) == 20 and seconds[12] == ("12.000", "502") and seconds[15] == ("15.000", "refused")
    assert {o for _s, o in seconds[:12] + seconds[16:]} == {"answered"}
    assert "<title>probe one/test, +12 s: answered 17, 502 3</title>" in figure
    stretches = [(r.split('data-state="')[1].split('"')[0], r.split('data-start="')[1].split('"')[0], r.split('data-end="')[1].split('"')[0])
                 for r in figure.split('<rect class="replica"')[1:]]
    assert stretches == [("in step", "1.000", "11.000"), ("stale", "11.000", "20.000"), ("in step", "20.000", "26.000")]
    assert "one/c-x: stale from +11 s to +20 s (10.244.0.5:8080)" in figure
    # The legend names only what is drawn.
    legend = page[page.index('id="motion-legend"'):]
    legend = legend[:legend.index("</ul>")]
    assert [x.split('"')[1] for x in legend.split("<li data-")[1:]] == ["answered", "502", "refused", "in step", "stale"]


def test_a_failure_names_the_backend_that_answered_and_runs_break_on_a_new_cause() -> None:
    failures = [
        {"seq": 1, "time": "2026-11-26T10:00:01.000Z", "offset": 1.0, "status": 500, "problem": "got 500 (expected 200)",
         "backend": "web-1"},
        {"seq": 2, "time": "2026-11-26T10:00:01.050Z", "offset": 1.05, "status": 500, "problem": "got 500 (expected 200)",
         "backend": "web-2"},
        {"seq": 3, "time": "2026-11-26T10:00:01.100Z", "offset": 1.1, "status": 500, "problem": "got 500 (expected 200)",
         "backend": "web-2"},
        {"seq": 5, "time": "2026-11-26T10:00:01.200Z", "offset": 1.2, "status": 500, "problem": "got 500 (expected 200)",
         "backend": "web-2"},
    ]
    probe = {"ingresses": ["one/test"], "continuous": {"started": "2026-11-26T10:00:00.000Z", "rate_requested": 20,
                                                       "failures": failures}}
    rows = [(r.what, r.detail) for r in merge({"reachability": [probe]}).axes["one/test"] if r.bad]
    assert rows == [("probe one/test: request failed", "got 500 (expected 200) (answered by web-1)"),
                    ("probe one/test: 2 requests failed in a row over 0.05s", "got 500 (expected 200) (answered by web-2)"),
                    ("probe one/test: request failed", "got 500 (expected 200) (answered by web-2)")]  # seq 4 passed
