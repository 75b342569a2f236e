"""The docs stay a true map of the house (issue 33): docs/architecture.md's Layout names every file under
plugins/module_utils/ by its path there, docs/scenarios.md's table has a row for every file under scenarios/,
the README stays short, every relative link of the README and docs/*.md leads somewhere, and CHANGELOG.md's
source (changelogs/changelog.yaml, written by `make changelog`) holds every fragment as it is now. A file
added without its line in the docs fails here."""
from __future__ import annotations

import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"
MODULE_UTILS = ROOT / "plugins" / "module_utils"
SCENARIOS = ROOT / "scenarios"
README_MAX_LINES = 250

FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]\n]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}[ \t]+(.+?)[ \t]*#*[ \t]*$", re.M)


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def section(text: str, title: str) -> str:
    """The part of TEXT under the heading `## TITLE`, up to the next heading of that level."""
    start = text.index("\n## %s\n" % title)
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else len(text)]


def without_code(text: str) -> str:
    return INLINE_CODE.sub("", FENCE.sub("", text))


def unnamed_files(layout: str) -> list[str]:
    """The .py files under plugins/module_utils (but __init__.py) that LAYOUT does not name, in backquotes,
    by their path relative to plugins/module_utils."""
    files = sorted(p.relative_to(MODULE_UTILS).as_posix() for p in MODULE_UTILS.rglob("*.py")
                   if p.name != "__init__.py" and "__pycache__" not in p.parts)
    return [f for f in files if "`%s`" % f not in layout]


def scenario_rows(table: str) -> list[str]:
    """The files the scenario table's rows link to: a row begins `| [`name`](../scenarios/FILE)`."""
    return re.findall(r"^\| \[`[^`]+`\]\(\.\./scenarios/([^)#]+)\)", table, flags=re.M)


def slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(text: str) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", text)):
        base = slug(heading)
        n = seen.get(base, 0)
        seen[base] = n + 1
        out.add(base if n == 0 else "%s-%d" % (base, n))
    return out


def broken_links(path: Path, text: str) -> list[str]:
    """The relative links of TEXT (the file PATH) whose file does not exist, or whose #anchor names no
    heading of the Markdown file it points to."""
    broken = []
    for target in LINK.findall(without_code(text)):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, flags=re.I):  # https:, mailto:, ...
            continue
        name, _sep, anchor = target.partition("#")
        dest = (path.parent / name).resolve()
        if name and not dest.exists():
            broken.append("%s: %s (no such file)" % (path.relative_to(ROOT), target))
        elif anchor and (not name or dest.suffix == ".md") and anchor not in anchors(read(dest) if name else text):
            broken.append("%s: %s (no such heading)" % (path.relative_to(ROOT), target))
    return broken


def stale_fragments(changelog: dict) -> list[str]:
    """The fragments changelogs/changelog.yaml does not hold as they are now: not listed in a release, or
    with an entry its release's changes lack (a fragment added or edited since `make changelog`)."""
    stale = []
    releases = (changelog.get("releases") or {}).values()
    for path in sorted((ROOT / "changelogs" / "fragments").iterdir()):
        if path.suffix not in (".yml", ".yaml"):
            continue
        release = next((r for r in releases if path.name in (r.get("fragments") or [])), None)
        if release is None:
            stale.append(path.name + " (not in changelog.yaml)")
            continue
        changes = release.get("changes") or {}
        for section, entries in (yaml.safe_load(read(path)) or {}).items():
            if section == "trivial":
                continue  # antsibull-changelog keeps these in the fragment only (changes.py: "Ignore trivial section entries")
            held = changes.get(section)
            kept = entries == held if isinstance(entries, str) else all(e in (held or []) for e in entries or [])
            if not kept:
                stale.append("%s (%s changed)" % (path.name, section))
    return stale


def test_architecture_layout_names_every_file_under_module_utils() -> None:
    missing = unnamed_files(section(read(DOCS / "architecture.md"), "Layout"))
    assert not missing, "docs/architecture.md's Layout does not name: %s" % ", ".join(missing)


def test_scenarios_table_has_a_row_for_every_scenario_file() -> None:
    rows = scenario_rows(section(read(DOCS / "scenarios.md"), "The scenarios"))
    files = sorted(p.name for p in SCENARIOS.iterdir() if p.is_file())
    assert sorted(set(files) - set(rows)) == [], "docs/scenarios.md's table lacks a row for: %s" % ", ".join(
        sorted(set(files) - set(rows)))
    assert sorted(set(rows) - set(files)) == [], "docs/scenarios.md's table names files that do not exist: %s" % (
        ", ".join(sorted(set(rows) - set(files))))
    assert len(rows) == len(set(rows)), "docs/scenarios.md's table has a scenario twice"


def test_readme_is_short() -> None:
    lines = len(read(ROOT / "README.md").splitlines())
    assert lines <= README_MAX_LINES, "README.md has %d lines (at most %d): move the detail to docs/" % (
        lines, README_MAX_LINES)


def test_relative_links_of_readme_and_docs_lead_somewhere() -> None:
    pages = [ROOT / "README.md"] + sorted(DOCS.glob("*.md"))
    broken = [b for page in pages for b in broken_links(page, read(page))]
    assert not broken, "broken links:\n  " + "\n  ".join(broken)


def test_changelog_holds_every_fragment() -> None:
    stale = stale_fragments(yaml.safe_load(read(ROOT / "changelogs" / "changelog.yaml")))
    assert not stale, "CHANGELOG.md is not generated from the fragments as they are: %s; run make changelog" % (
        ", ".join(stale))


# The checks above fail when they should.

def test_a_file_the_layout_does_not_name_is_reported() -> None:
    layout = section(read(DOCS / "architecture.md"), "Layout")
    before = set(unnamed_files(layout))
    assert set(unnamed_files(layout.replace("`verify/motion.py`", ""))) - before == {"verify/motion.py"}
    assert set(unnamed_files(layout.replace("`_time.py`", ""))) - before == {"_time.py"}


def test_a_scenario_without_a_row_is_reported() -> None:
    table = section(read(DOCS / "scenarios.md"), "The scenarios")
    row = next(line for line in table.splitlines() if line.startswith("| [`puzzle`]"))
    assert "puzzle.yml" not in scenario_rows(table.replace(row + "\n", ""))
    assert "puzzle.yml" in scenario_rows(table)


def test_a_broken_link_is_reported() -> None:
    page = DOCS / "probe.md"
    text = "[a](lab.md) [b](nowhere.md) [c](lab.md#no-such-heading) [d](#here) [e](https://example.invalid/x)\n" \
           "[f](#there) `[g](inline-code.md)`\n```\n[h](in-a-fence.md)\n```\n## Here\n"
    assert broken_links(page, text) == ["docs/probe.md: nowhere.md (no such file)",
                                        "docs/probe.md: lab.md#no-such-heading (no such heading)",
                                        "docs/probe.md: #there (no such heading)"]


def test_headings_become_githubs_anchors() -> None:
    assert slug("Rehearse your own cluster's move, in one command") == "rehearse-your-own-clusters-move-in-one-command"
    assert slug("probe_rate_bench.py") == "probe_rate_benchpy"
    assert slug("The host side: sudo, Tailscale, Docker Desktop") == "the-host-side-sudo-tailscale-docker-desktop"
    assert anchors("## A\n## A\n```\n## B\n```\n") == {"a", "a-1"}


def test_a_fragment_missing_from_the_changelog_or_changed_since_is_reported() -> None:
    changelog = yaml.safe_load(read(ROOT / "changelogs" / "changelog.yaml"))
    before = set(stale_fragments(changelog))
    release = next(r for r in changelog["releases"].values() if "35-puzzle-in-90s.yml" in (r.get("fragments") or []))
    edited = yaml.safe_load(read(ROOT / "changelogs" / "fragments" / "35-puzzle-in-90s.yml"))["minor_changes"][0]
    release["changes"]["minor_changes"] = [e for e in release["changes"]["minor_changes"] if e != edited]
    release["fragments"] = [f for f in release["fragments"] if f != "8-kind-host-side.yml"]
    expected = {"35-puzzle-in-90s.yml (minor_changes changed)", "8-kind-host-side.yml (not in changelog.yaml)"}
    assert set(stale_fragments(changelog)) - before == expected
