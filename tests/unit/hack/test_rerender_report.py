"""hack/rerender-report.py: a recorded report.json rendered again, as the verify_report module writes it."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[3] / "hack" / "rerender-report.py"
PUZZLE = Path(__file__).resolve().parents[2] / "unit" / "plugins" / "module_utils" / "verify" / "data" / "puzzle_report.json"
spec = importlib.util.spec_from_file_location("rerender_report", SCRIPT)
assert spec and spec.loader
rerender = importlib.util.module_from_spec(spec)
spec.loader.exec_module(rerender)


def test_a_report_rendered_again_is_the_report_it_was_rendered_from(tmp_path: Path) -> None:
    assert rerender.main(["x", str(PUZZLE), str(tmp_path / "first")]) == 0
    assert sorted(p.name for p in (tmp_path / "first").iterdir()) == ["report.html", "report.json", "summary.md"]
    # Rendered from what it wrote, it writes the same files again, byte for byte.
    assert rerender.main(["x", str(tmp_path / "first" / "report.json"), str(tmp_path / "second")]) == 0
    for name in ("report.json", "summary.md", "report.html"):
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes(), name
    doc = json.loads((tmp_path / "first" / "report.json").read_text())
    assert doc["scenario"] == json.loads(PUZZLE.read_text()).get("scenario", "default") and doc["verdicts"]


def test_it_says_how_to_call_it() -> None:
    assert rerender.main(["x"]) == 2
