from __future__ import annotations

import copy
import json
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_html import (
    EMPTY_COLOUR, UNKNOWN_COLOUR, colours, render, segments, window_length, window_start,
)

# report.json of a real run of the puzzle on the twin (molecule scenario twin_puzzle, time scale
# 30: a 60 s sync every 2 s, a 150 s window in 5 s), with the modules' `invocation` dropped.
PUZZLE = json.loads((Path(__file__).parent / "data" / "puzzle_report.json").read_text(encoding="utf-8"))
ONE = "one/ingress-ingress-nginx-controller-7w7r67x4mj-plxhc"
TWO = "two/ingress-ingress-nginx-controller-222v2wbjvd-gbxz6"
THREE = "three/ingress-ingress-nginx-controller-7rx6dlghtz-pm9qn"


def puzzle() -> dict[str, Any]:
    return copy.deepcopy(PUZZLE)


def runs(values: list[Any]) -> list[Any]:
    """Consecutive duplicates collapsed."""
    return [v for i, v in enumerate(values) if i == 0 or values[i - 1] != v]


def test_the_window_comes_from_the_watch() -> None:
    status = PUZZLE["results"]["status"]
    assert window_length(status) == status["elapsed"] == 5.013
    start = window_start(status)
    assert start is not None and start.isoformat() == "2026-11-23T14:09:15.051000+00:00"


def test_segments_follow_the_changes_and_their_writers() -> None:
    segs = segments(PUZZLE["results"]["status"], PUZZLE["results"]["diagnose"])
    assert sorted(segs) == ["one/test", "three/test", "two/test"]
    one = segs["one/test"]
    # The bar covers the whole window, cut at each change's time.
    assert one[0].start == 0.0 and one[-1].end == 5.013
    assert [s.start for s in one[1:]] == [1.629, 1.942, 3.661, 3.963]
    assert all(a.end == b.start for a, b in zip(one, one[1:]))
    assert [s.addresses for s in one] == [("172.18.0.2",), ("100.64.0.0",), ("172.18.0.2",), ("100.64.0.0",), ("172.18.0.2",)]
    assert [s.writer for s in one] == [TWO, ONE, TWO, ONE, TWO]
    # The status the window starts with has no log line: its writer is the pod seen writing that value.
    assert [s.source for s in one] == ["inferred", "log", "log", "log", "log"]
    assert runs([s.writer for s in segs["three/test"]]) == [TWO, THREE, TWO, THREE, TWO, THREE]
    two = segs["two/test"]
    assert len(two) == 1 and two[0].writer == TWO and (two[0].start, two[0].end) == (0.0, 5.013)


def test_the_puzzle_shows_two_alternating_colours_for_one_and_three_and_one_colour_for_two() -> None:
    segs = segments(PUZZLE["results"]["status"], PUZZLE["results"]["diagnose"])
    palette = colours(segs)
    assert len(palette) == 3 and len(set(palette.values())) == 3
    for key in ("one/test", "three/test"):
        sequence = runs([palette[s.writer] for s in segs[key] if s.writer])
        assert len(set(sequence)) == 2 and len(sequence) >= 4, (key, sequence)
    assert {palette[s.writer] for s in segs["two/test"] if s.writer} == {palette[TWO]}


def test_without_log_lines_the_writer_is_diagnose_prediction_then_the_field_manager() -> None:
    doc = puzzle()
    for entry in doc["results"]["status"]["timeline"]:
        entry["pod"] = None
    segs = segments(doc["results"]["status"], doc["results"]["diagnose"])
    assert [(s.writer, s.source) for s in segs["one/test"][:2]] == [(TWO, "prediction"), (ONE, "prediction")]
    segs = segments(doc["results"]["status"], {})
    assert {(s.writer, s.source) for s in segs["one/test"]} == {("manager nginx-ingress-controller", "manager")}


def test_the_watchs_attribution_is_the_source_and_candidates_are_never_filled_in() -> None:
    doc = puzzle()
    timeline = doc["results"]["status"]["timeline"]
    one = [e for e in timeline if e["ingress"] == "one/test"]
    for e in one:
        e["attributed_by"] = "address"
    one[1].update(pod=None, attributed_by="candidates", candidates=[TWO, THREE])
    segs = segments(doc["results"]["status"], doc["results"]["diagnose"])["one/test"]
    assert [(s.writer, s.source) for s in segs[1:4]] == [
        (ONE, "attributed by address"), ("one of %s, %s" % (TWO, THREE), "candidates"), (ONE, "attributed by address")]
    # the status the window starts with is still inferred from the pod seen writing that value
    assert (segs[0].writer, segs[0].source) == (TWO, "inferred")


def test_unknown_writers_are_grey_and_an_empty_status_is_drawn_empty() -> None:
    status = {"elapsed": 10, "ingresses": {"a/x": {"addresses_seen": [["10.0.0.1"], []]}},
              "timeline": [{"ingress": "a/x", "t": 4, "time": "", "old": ["10.0.0.1"], "new": [], "pod": None, "manager": None}]}
    segs = segments(status)
    assert [(s.start, s.end, s.addresses, s.writer) for s in segs["a/x"]] == [(0.0, 4.0, ("10.0.0.1",), None), (4.0, 10.0, (), None)]
    page = render({"scenario": "t", "backend": "twin", "verdicts": [], "results": {"status": status}})
    fills = re.findall(r'<rect [^>]*fill="(#[0-9a-f]{6})"', page)
    assert fills == [UNKNOWN_COLOUR, EMPTY_COLOUR]


class _Checker(HTMLParser):
    """Collects tags, ids and every attribute that could load something."""

    VOID = {"meta", "br", "img", "input", "link", "hr", "rect", "line", "path"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.fetching: list[str] = []
        self.sections: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if tag in ("script", "img", "link", "iframe", "object", "embed") or any(k in a for k in ("src", "href", "xlink:href")):
            self.fetching.append(tag)
        if tag == "section" and a.get("data-ingress"):
            self.sections.append(str(a["data-ingress"]))
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in self.VOID:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        if tag in self.VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("unbalanced </%s> after %s" % (tag, self.stack[-3:]))
        else:
            self.stack.pop()


def test_the_page_is_well_formed_self_contained_and_has_a_section_per_ingress() -> None:
    page = render(PUZZLE)
    checker = _Checker()
    checker.feed(page)
    assert checker.errors == [] and checker.stack == []
    assert checker.fetching == []
    assert "default-src 'none'" in page and not re.search(r"(?i)(https?:)?//[a-z0-9.-]+\.[a-z]", page.replace("http-equiv", ""))
    assert checker.sections == ["one/test", "three/test", "two/test"]
    for svg in re.findall(r"<svg .*?</svg>", page):
        ET.fromstring(svg)  # each drawing is valid XML
    assert page.count('<svg class="timeline"') == 3
    assert '<span class="verdict PASS" id="verdict">PASS</span>' in page


def test_each_finding_and_its_fix_sit_in_the_section_of_the_ingress_it_explains() -> None:
    page = render(PUZZLE)
    sections = dict(re.findall(r'<section class="ingress" id="[^"]*" data-ingress="([^"]+)">(.*?)</section>', page))
    assert 'data-kind="multiple_writers"' in sections["one/test"]
    assert "two/ingress-ingress-nginx-controller: controller.scope.enabled: true" in sections["one/test"]
    assert "--publish-service=$(POD_NAMESPACE)/ingress-ingress-nginx-controller" in sections["three/test"]
    assert 'data-kind="multiple_writers"' not in sections["two/test"]
    # class_collision names no Ingress: it goes where both controllers it names are predicted writers.
    assert sections["one/test"].count('data-kind="class_collision"') == 1
    assert 'data-kind="class_collision"' not in sections["two/test"]
    assert "Other findings" not in page


def test_a_failed_report_is_shown_as_such_and_text_is_escaped() -> None:
    doc = puzzle()
    doc["scenario"] = "<script>alert(1)</script>"
    doc["verdicts"][0]["met"] = False
    doc["passed"] = False
    page = render(doc)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert '<span class="verdict FAIL" id="verdict">FAIL</span>' in page
    assert page.count('<td class="unmet">UNMET</td>') == 1


def test_ingresses_known_only_to_diagnose_are_listed_without_a_drawing() -> None:
    doc = puzzle()
    del doc["results"]["status"]
    page = render(doc)
    assert "<svg" not in page and page.count("Its status was not watched.") == 3


def test_verify_report_writes_report_html_beside_summary_md(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_verify_report

    params = {"scenario": "puzzle", "backend": "twin", "results": PUZZLE["results"], "expect": {}, "output_dir": str(tmp_path),
              "not_reproduced": []}
    out = run_verify_report(params, SimpleNamespace(check_mode=False))
    assert [Path(f).name for f in out["files"]] == ["report.json", "summary.md", "report.html"]
    written = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert (tmp_path / "report.html").read_text(encoding="utf-8") == render(written)
    again = run_verify_report(params, SimpleNamespace(check_mode=False))
    assert again["changed"] is False  # same content: nothing rewritten
    dry = dict(params, output_dir=str(tmp_path / "dry"))
    assert run_verify_report(dry, SimpleNamespace(check_mode=True))["changed"] is False
    assert not (tmp_path / "dry").exists()  # check mode writes nothing
