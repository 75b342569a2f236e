"""The tests/kind scripts run only on kind (hack/test-kind.sh), an hour into CI: every name they take
from the collection must exist now, or a refactor breaks them unseen (diagnose_table once asked
verify.status for status_addresses after it moved to verify.ingresses)."""
from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

KIND = Path(__file__).resolve().parents[2] / "kind"
PREFIX = "ansible_collections.kindlab.ingress."


def collection_names(tree: ast.Module) -> list[tuple[int, str, str]]:
    """(line, module, name) of every name a script uses from the collection: `from M import name`,
    and `alias.name` where `alias` is a module it imported from the collection."""
    out, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(PREFIX):
            for item in node.names:
                out.append((node.lineno, node.module or "", item.name))
                aliases[item.asname or item.name] = "%s.%s" % (node.module, item.name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            out.append((node.lineno, aliases[node.value.id], node.attr))
    return out


@pytest.mark.parametrize("script", sorted(p.name for p in KIND.glob("*.py")))
def test_every_collection_name_a_kind_script_uses_exists(script: str) -> None:
    tree = ast.parse((KIND / script).read_text())
    missing = []
    for line, module, name in collection_names(tree):
        try:
            owner = importlib.import_module(module)
        except ModuleNotFoundError:
            continue  # `from package import module`: the module itself is checked as an import below
        if not hasattr(owner, name):
            try:
                importlib.import_module("%s.%s" % (module, name))
            except ModuleNotFoundError:
                missing.append("%s:%d %s.%s" % (script, line, module, name))
    assert not missing, missing
