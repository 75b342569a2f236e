"""The module entries live in the runners (issue 55, item 4), as kubernetes.core keeps them in its runner.py: each
module in plugins/modules hands KindlabModule.run an entry it imports from a package's runner.py
(plugins/module_utils/<package>/runner.py), and only a runner.py defines a function that takes the module (a
parameter named `module`); every other file under plugins/module_utils takes plain arguments. Read with `ast`
from the source, as test_layers.py reads the imports (it also keeps the runners above their package's files)."""
from __future__ import annotations

import ast
from pathlib import Path

from ansible_collections.kindlab.ingress.tests.unit.plugins.module_utils.test_layers import (
    PACKAGE,
    ROOT,
    all_modules,
    is_runner,
)

MODULES = ROOT / "plugins" / "modules"


def takers_of_the_module(path: Path) -> list[tuple[int, str]]:
    """(line, name) of each function or lambda in PATH, nested ones too, with a parameter named `module`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs + [args.vararg, args.kwarg] if a]
            if "module" in names:
                found.append((node.lineno, getattr(node, "name", "<lambda>")))
    return found


def entries_of(path: Path) -> list[tuple[int, str, str | None]]:
    """Each `KindlabModule(...).run(ENTRY)` in PATH: (line, ENTRY as written, the module_utils module ENTRY is
    imported from by name, or None when ENTRY is not a name imported from module_utils)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    imported = {alias.asname or alias.name: node.module[len(PACKAGE) + 1:]
                for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PACKAGE + ".")
                for alias in node.names}
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "run"
                and isinstance(node.func.value, ast.Call) and getattr(node.func.value.func, "id", None) == "KindlabModule"):
            given = node.args[0] if len(node.args) == 1 and not node.keywords else None
            origin = imported.get(given.id) if isinstance(given, ast.Name) else None
            found.append((node.lineno, ", ".join(ast.unparse(a) for a in [*node.args, *node.keywords]), origin))
    return found


def module_files() -> list[Path]:
    return sorted(p for p in MODULES.glob("*.py") if p.name != "__init__.py")


def test_the_scans_see_what_they_look_for() -> None:
    # Scans that found nothing would pass vacuously.
    modules = all_modules()
    assert sorted(m for m in modules if is_runner(m)) == [
        "capture.runner", "cluster.runner", "controllers.runner", "lab.runner", "migration.runner", "verify.runner"]
    assert "run_kind_cluster" in [name for _line, name in takers_of_the_module(modules["cluster.runner"])]
    assert "logic" in [name for _line, name in takers_of_the_module(modules["verify.runner"])]  # nested in check_entry
    assert len(module_files()) >= 20
    assert [(given, origin) for _line, given, origin in entries_of(MODULES / "kind_cluster.py")] == [
        ("run_kind_cluster", "cluster.runner")]


def test_the_scans_catch_what_they_forbid(tmp_path: Path) -> None:
    domain = tmp_path / "domain.py"
    domain.write_text("def ok(params, client):\n    pass\n\n\ndef late(params, *, module=None):\n    pass\n\n\n"
                      "f = lambda module: module\n")
    assert takers_of_the_module(domain) == [(5, "late"), (9, "<lambda>")]
    module = tmp_path / "module.py"
    module.write_text("from %s.verify.report import run_verify_report\nfrom %s.verify.runner import check_entry\n\n"
                      "KindlabModule(argument_spec={}).run(run_verify_report)\n"
                      "KindlabModule(argument_spec={}).run(check_entry(a, b))\n" % (PACKAGE, PACKAGE))
    assert entries_of(module) == [(4, "run_verify_report", "verify.report"), (5, "check_entry(a, b)", None)]


def test_only_runners_take_the_module() -> None:
    found = ["%s:%d %s" % (path.relative_to(ROOT), line, name)
             for module, path in sorted(all_modules().items()) if not is_runner(module)
             for line, name in takers_of_the_module(path)]
    assert not found, ("functions outside a runner.py that take the module (move the entry to its package's runner.py, "
                       "and give the domain function plain arguments):\n" + "\n".join(found))


def test_every_module_takes_its_entry_from_a_runner() -> None:
    bad = []
    for path in module_files():
        entries = entries_of(path)
        if len(entries) != 1:
            bad.append("%s: %d calls of KindlabModule(...).run(...), expected one" % (path.relative_to(ROOT), len(entries)))
        bad += ["%s:%d runs %s, %s" % (path.relative_to(ROOT), line, given,
                                       "imported from %s, not a runner" % origin if origin else "not a name imported from module_utils")
                for line, given, origin in entries if origin is None or not is_runner(origin)]
    assert not bad, ("modules whose entry is not imported from a package's runner.py "
                     "(plugins/module_utils/<package>/runner.py):\n" + "\n".join(bad))
