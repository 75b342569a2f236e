"""The verify report's checks are one registry (verify/checks/registry.py): each check file is in it, in the order
of the verdict table, the module results they read come in a fixed order, only the rehearsal's check reaches
migration/, and a check added to the table is validated, judged and rendered with nothing else edited."""
from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks import registry
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks.base import (
    Check, Obj, Verdict, VerifyError, per_subject, require,
)
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.expect import validate_expect
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.runner import run_verify_report
from ansible_collections.kindlab.ingress.plugins.module_utils.verify.subjects import WATCHED_KEYS
from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.test_layers import import_graph

CHECKS_DIR = Path(__file__).resolve().parents[5] / "plugins" / "module_utils" / "verify" / "checks"
PACKAGE = "ansible_collections.kindlab.ingress.plugins.module_utils.verify.checks"


def test_the_table_keeps_the_verdict_table_s_order() -> None:
    assert registry.keys() == ("controllers", "addresses", "diagnose", "status") + WATCHED_KEYS + (
        "backends", "conflicts", "actions", "dataplane", "reachability", "migration")
    assert len(set(registry.keys())) == len(registry.CHECKS)


def test_every_check_file_is_in_the_table() -> None:
    files = sorted(p.stem for p in CHECKS_DIR.glob("*.py") if p.stem not in ("__init__", "base", "registry"))
    assert files
    for stem in files:
        module = importlib.import_module("%s.%s" % (PACKAGE, stem))
        declared = getattr(module, "CHECKS", None) or (module.CHECK,)
        assert all(any(c is d for d in registry.CHECKS) for c in declared), "%s.py's check is not in registry.CHECKS" % stem


def test_the_module_results_come_where_the_check_of_their_name_stands() -> None:
    assert all(c.fed_by is None or c.fed_by in registry.keys() for c in registry.CHECKS)
    assert [(key, [c.key for c in checks]) for key, checks in registry.modules()] == [
        ("controllers", ["controllers"]), ("diagnose", ["diagnose"]), ("status", ["addresses", "status", *WATCHED_KEYS]),
        ("backends", ["backends"]), ("conflicts", ["conflicts"]), ("actions", ["actions"]), ("dataplane", ["dataplane"])]


def test_only_the_rehearsal_s_check_imports_migration() -> None:
    _modules, graph = import_graph()
    reaching = sorted(m for m, targets in graph.items() if m.startswith("verify.") and any(t.startswith("migration.") for t in targets))
    assert reaching == ["verify.checks.migration"]


# A check of the probes' budget, added to the table as a new check would be: its own key and body, its verdicts
# from the results, its sections and a file of its own.
def _budget_entries(body: Obj, where: str) -> None:
    require(isinstance(body.get("seconds", 1), int), where + ".seconds", "a whole number", body.get("seconds"))


def _budget_verdicts(results: Obj, body: Any, context: str) -> list[Verdict]:
    if "budget" not in results:
        return []
    spent = {k: (v <= int((body or {}).get("seconds", 1)), "%d s" % v) for k, v in results["budget"].items()}
    return per_subject("budget", spent, {}, say_pass=True)


BUDGET = Check("budget", _budget_verdicts, keys=frozenset({"seconds"}), subject=None, entries=_budget_entries,
               summary=lambda results: ["", "## Budget", "", "spent: %s" % sorted(results.get("budget") or {})],
               html=lambda results: '<h2 id="budget">Budget</h2>',
               files=lambda results, body: {"budget.txt": "%s\n" % json.dumps(results.get("budget"))})


def test_a_check_added_to_the_table_is_validated_judged_and_rendered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry, "CHECKS", registry.CHECKS + (BUDGET,))
    with pytest.raises(VerifyError, match=r"^lab_expect\.budget\.seconds: expected a whole number, got 'x'$"):
        validate_expect({"budget": {"seconds": "x"}})
    with pytest.raises(VerifyError, match=r"^lab_expect\.budget: expected only the keys seconds, got \['failing'\]$"):
        validate_expect({"budget": {"failing": {}}})
    params = {"scenario": "budget", "backend": "twin", "results": {"budget": {"probe/a": 1, "probe/b": 3}},
              "expect": {"budget": {"seconds": 2}}, "output_dir": str(tmp_path), "not_reproduced": []}
    out = run_verify_report(params, SimpleNamespace(check_mode=False))
    assert [(v["check"], v["subject"], v["met"]) for v in out["verdicts"]] == [("budget", "probe/a", True), ("budget", "probe/b", False)]
    assert [Path(f).name for f in out["files"]] == ["report.json", "summary.md", "report.html", "budget.txt"]
    assert "| budget | probe/b | pass | fail: 3 s | **UNMET** |" in (tmp_path / "summary.md").read_text()
    assert "## Budget\n\nspent: ['probe/a', 'probe/b']" in (tmp_path / "summary.md").read_text()
    assert '<h2 id="budget">Budget</h2>' in (tmp_path / "report.html").read_text()
    assert (tmp_path / "budget.txt").read_text() == '{"probe/a": 1, "probe/b": 3}\n'
