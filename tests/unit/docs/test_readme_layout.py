"""README's Layout names every file of the domain, and its Scenarios table every scenario: a file added
without a word in the docs fails here (issue 33), so a newcomer's map of the house stays whole."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
README = (ROOT / "README.md").read_text()


def section(title: str) -> str:
    start = README.index("\n## %s\n" % title)
    end = README.find("\n## ", start + 1)
    return README[start:end if end > 0 else len(README)]


def unnamed(layout: str) -> list[str]:
    """The files and packages under plugins/module_utils that `layout` does not name: a file by its stem,
    a package by its directory (name and slash)."""
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", layout))
    module_utils = ROOT / "plugins" / "module_utils"
    missing = [str(p.relative_to(ROOT)) for p in sorted(module_utils.rglob("*.py"))
               if p.name != "__init__.py" and p.stem not in words]
    missing += [str(p.relative_to(ROOT)) + "/" for p in sorted(module_utils.iterdir())
                if p.is_dir() and p.name != "__pycache__" and p.name + "/" not in layout]
    return missing


def test_layout_names_every_file_under_module_utils() -> None:
    missing = unnamed(section("Layout"))
    assert not missing, "README.md's Layout does not name: %s" % ", ".join(missing)


def test_a_file_the_layout_does_not_name_is_reported() -> None:
    layout = section("Layout")
    assert unnamed(layout.replace("motion", "m-o-t-i-o-n")) == ["plugins/module_utils/verify/motion.py"]
    assert unnamed(layout.replace("capture/", "capture")) == ["plugins/module_utils/capture/"]


def test_scenarios_table_has_every_scenario() -> None:
    table = section("Scenarios")
    rows = set(re.findall(r"^\| `([a-z0-9-]+)`", table, flags=re.M))
    scenarios = {p.stem for p in (ROOT / "scenarios").glob("*.yml")}
    assert scenarios <= rows, "README.md's Scenarios table lacks: %s" % ", ".join(sorted(scenarios - rows))
    assert rows <= scenarios, "README.md's Scenarios table names scenarios that do not exist: %s" % ", ".join(sorted(rows - scenarios))
