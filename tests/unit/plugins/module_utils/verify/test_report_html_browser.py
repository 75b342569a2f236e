"""report.html in a real browser: Debian's chromium, headless, driven by Playwright (the
system binary via executable_path: no browser download). `make test` installs chromium
(hack/get-chromium.sh); without it this test is skipped, saying so.

The page of a real puzzle run must load with no console error and no request but its own
file, and its screenshot must show one/test and three/test alternating between two colours
and two/test in one colour, each colour the legend's colour of the pod that wrote it.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_html import BAR_Y, render
from ansible_collections.kindlab.ingress.tests.unit import png
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_report_html import (
    ONE, PUZZLE, THREE, TWO, runs,
)

CHROMIUM = os.environ.get("KINDLAB_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
# Where the full-page screenshot is kept for people to look at (artifacts/ is not committed).
SHOT_DIR = Path(__file__).resolve().parents[5] / "artifacts" / "tests"

pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="NOT TESTED: report.html was not rendered, no chromium binary here (make test installs Debian's "
           "chromium through hack/get-chromium.sh; or set KINDLAB_CHROMIUM)")


def _hex(rgb: tuple[int, int, int]) -> str:
    return "#%02x%02x%02x" % rgb


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in requirements-test.txt: run make setup")
    page_file = tmp_path_factory.mktemp("report") / "report.html"
    page_file.write_text(render(PUZZLE), encoding="utf-8")
    out: dict[str, Any] = {"console": [], "errors": [], "requests": [], "bars": {}}
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900}, device_scale_factor=1)
            page.on("console", lambda m: out["console"].append((m.type, m.text)))
            page.on("pageerror", lambda e: out["errors"].append(str(e)))
            page.on("request", lambda r: out["requests"].append(r.url))
            page.goto(page_file.as_uri(), wait_until="load")
            SHOT_DIR.mkdir(parents=True, exist_ok=True)
            out["png"] = SHOT_DIR / "report_html_puzzle.png"
            page.screenshot(path=str(out["png"]), full_page=True)
            out["legend"] = page.eval_on_selector_all(
                "#legend li[data-writer]",
                "els => Object.fromEntries(els.map(e => [e.dataset.writer, getComputedStyle(e.querySelector('.swatch')).backgroundColor]))")
            for svg in page.query_selector_all("svg.timeline"):
                key = svg.get_attribute("data-ingress")
                box = svg.bounding_box()
                assert key and box and box["width"] > 100
                svg.scroll_into_view_if_needed()
                box = svg.bounding_box()
                assert box
                scale = box["width"] / 960
                # One strip across the bar, a few pixels below its top edge (above the address labels).
                clip = {"x": box["x"], "y": box["y"] + (BAR_Y + 3) * scale, "width": box["width"], "height": 2}
                out["bars"][key] = png.read(page.screenshot(clip=clip))
        finally:
            browser.close()
    return out


def _rgb(css: str) -> str:
    r, g, b = (int(x) for x in css[css.index("(") + 1:css.index(")")].split(",")[:3])
    return _hex((r, g, b))


def _bar_colours(image: png.Image) -> list[str]:
    return [str(c) for c in runs([_hex(image.pixel(x, 0)) for x in range(image.width)])]


def test_the_page_loads_without_console_errors_or_fetches(rendered: dict[str, Any]) -> None:
    assert rendered["errors"] == []
    assert [m for m in rendered["console"] if m[0] in ("error", "warning")] == []
    assert len(rendered["requests"]) == 1 and rendered["requests"][0].startswith("file://")
    width, height = png.size(rendered["png"].read_bytes())
    assert width == 1100 and height > 900  # the whole page, longer than the viewport


def test_each_ingress_has_its_timeline_in_the_writers_colours(rendered: dict[str, Any]) -> None:
    legend = {writer: _rgb(css) for writer, css in rendered["legend"].items()}
    assert set(legend) == {ONE, TWO, THREE} and len(set(legend.values())) == 3
    assert sorted(rendered["bars"]) == ["one/test", "three/test", "two/test"]
    colours = {key: [c for c in _bar_colours(img) if c in legend.values()] for key, img in rendered["bars"].items()}
    for key, own in (("one/test", ONE), ("three/test", THREE)):
        seq = runs(colours[key])
        assert set(seq) == {legend[own], legend[TWO]}, (key, seq)
        assert len(seq) >= 4, (key, seq)  # alternating: own, two, own, two...
        assert all(a != b for a, b in zip(seq, seq[1:]))
    assert runs(colours["two/test"]) == [legend[TWO]]
    # The bars span the drawing: the strip is almost all segment colour, not background.
    for key, img in rendered["bars"].items():
        coloured = sum(1 for x in range(img.width) if _hex(img.pixel(x, 0)) in legend.values())
        assert coloured > 0.9 * img.width * (940 / 960), (key, coloured, img.width)


@pytest.fixture(scope="module")
def in_motion(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Issue 36: the report of a rollout behind a stale data plane (test_timeline's), in the browser: where each
    action line, probe second and replica stretch is drawn, in screen pixels, beside where its time puts it."""
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in requirements-test.txt: run make setup")
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report import report
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.verdicts import evaluate
    from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.verify.test_timeline import RESULTS

    expect = {"reachability": [{"ingress": "one/test", "rate": 20, "duration": 20}]}
    page_file = tmp_path_factory.mktemp("report") / "report.html"
    page_file.write_text(render(report("rollout", "kind", evaluate(RESULTS, expect), RESULTS, expect)), encoding="utf-8")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1100, "height": 900}, device_scale_factor=1)
            page.goto(page_file.as_uri(), wait_until="load")
            svg = page.query_selector('svg.timeline[data-ingress="one/test"]')
            assert svg is not None
            svg.scroll_into_view_if_needed()
            SHOT_DIR.mkdir(parents=True, exist_ok=True)
            svg.screenshot(path=str(SHOT_DIR / "report_html_in_motion.png"))
            box = svg.bounding_box()
            assert box
            marks = page.eval_on_selector_all(
                'svg.timeline[data-ingress="one/test"] .action line, svg.timeline[data-ingress="one/test"] rect.probe-second, '
                'svg.timeline[data-ingress="one/test"] rect.replica',
                """els => els.map(e => { const r = e.getBoundingClientRect(); const d = (e.closest('g.action') || e).dataset;
                       return {kind: e.tagName === 'line' ? 'action' : e.getAttribute('class'), at: parseFloat(d.at ?? d.start),
                               left: r.left, centre: r.left + r.width / 2, colour: getComputedStyle(e).fill}; })""")
            legend = page.eval_on_selector_all(
                "#motion-legend li", "els => els.map(e => [e.dataset.outcome || e.dataset.state, "
                "getComputedStyle(e.querySelector('.swatch')).backgroundColor])")
        finally:
            browser.close()
    return {"box": box, "marks": marks, "legend": dict(legend)}


def test_each_action_probe_second_and_replica_stretch_is_drawn_at_its_time(in_motion: dict[str, Any]) -> None:
    from ansible_collections.kindlab.ingress.plugins.module_utils.verify.report_html import BAR_W, BAR_X, WIDTH

    box, marks = in_motion["box"], in_motion["marks"]
    px = box["width"] / WIDTH  # screen pixels per SVG unit
    length = 60.0  # the status window of test_timeline's report
    kinds = [m["kind"] for m in marks]
    assert kinds.count("action") == 1 and kinds.count("probe-second") == 20 and kinds.count("replica") == 3
    for m in marks:
        expected = box["x"] + (BAR_X + m["at"] * BAR_W / length) * px
        drawn = m["centre"] if m["kind"] == "action" else m["left"]
        assert abs(drawn - expected) <= 1.0, (m, expected)
    # Each mark in the colour the legend gives its outcome or state.
    legend = {k: _rgb(v) for k, v in in_motion["legend"].items()}
    assert set(legend) == {"answered", "502", "refused", "in step", "stale"}
    seconds = [m for m in marks if m["kind"] == "probe-second"]
    assert _rgb(seconds[12]["colour"]) == legend["502"] and _rgb(seconds[15]["colour"]) == legend["refused"]
    assert _rgb(seconds[0]["colour"]) == legend["answered"]
    assert [_rgb(m["colour"]) for m in marks if m["kind"] == "replica"] == [legend["in step"], legend["stale"], legend["in step"]]
