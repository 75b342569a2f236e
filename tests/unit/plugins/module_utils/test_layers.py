"""The packages under plugins/module_utils form layers that only point down (issue 55): each file imports
only files of its own layer or of the layers below it, and no group of files imports itself round. The
imports are read with `ast` from the source (at module level, under TYPE_CHECKING and inside functions
alike), so an upward edge or a cycle fails here before anyone runs it. Each package's runner.py (the module entries,
test_runners.py) sits above the package's other files, and no file here imports one: only plugins/modules do. The
layers are described in docs/architecture.md's Layout."""
from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
MODULE_UTILS = ROOT / "plugins" / "module_utils"
PACKAGE = "ansible_collections.kindlab.ingress.plugins.module_utils"

# The layer table, bottom first: a file's layer is its top-level package's (a top-level `_name.py` file is
# a generic helper; transport/ knows nothing of Kubernetes, so it sits beside them). A file may import its own layer and the ones before it.
# A package's runner.py (`<package>/runner.py`, the module entries) stands above the other files of its layer: it may import
# them, they may not import it.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("generic helpers (_*.py) and the transport every request goes through", ("transport",)),
    ("kubernetes and the cluster", ("k8s", "cluster")),
    ("controller types", ("controllers",)),
    ("discovery", ("discovery",)),
    ("the lab, capture and migration", ("lab", "capture", "migration")),
    ("verification (the checks and the report)", ("verify",)),
)

# The upward edges still there, each with why: (importing module, imported module) → reason. Any other
# upward edge fails, and so does an entry here that the code no longer has (remove it then).
ALLOWED_UPWARD: dict[tuple[str, str], str] = {
    # KindlabModule, the one wrapper every Ansible module goes through, builds the one Client from the cluster
    # options and turns its missing libraries (K8S_IMPORT_ERROR) into missing_required_lib. The runners import _module
    # for its types (Module, Params; verify/runner.py's check_entry, Logic too); the modules themselves use it at run time.
    ("_module", "k8s.client"):
        "KindlabModule builds the Client and reports K8S_IMPORT_ERROR",
    # A lab definition's lab_expect is validated by verify/expect.py's schema (validate_expect, the reference
    # readers, EACH_INGRESS), which loops over the checks' registry (verify/checks/: each check validates its own
    # key, the watched kinds' from verify/subjects' table); moving the schema down means moving the checks with it.
    ("lab.definition", "verify.expect"):
        "lab_expect is validated by the checks' schema (verify/expect.py, over verify/checks/registry.py)",
    ("capture.scenario", "verify.expect"):
        "the captured lab_expect is validated by the checks' schema, as lab_definition validates it",
    # A capture writes down what the verification finds in the cluster now (lab_expect): the diagnosis, the
    # Ingress conflicts and, with `watch`, the status watch's change counts. These are verify's analyses,
    # the top floor itself, not helpers that could move down.
    ("capture.scenario", "verify.diagnose"):
        "the capture's lab_expect holds the diagnosis of the cluster",
    ("capture.expectations", "verify.conflicts"):
        "the capture's lab_expect holds the Ingress conflicts the cluster has",
    ("capture.cluster", "verify.status.run"):
        "lab_capture's watch counts status changes with ingress_status's watch",
    ("capture.cluster", "verify.status.options"):
        "lab_capture's watch counts status changes with ingress_status's watch (its options)",
}

# Import cycles still there (each a frozenset of module names) → why. None today.
ALLOWED_CYCLES: dict[frozenset[str], str] = {}


def module_name(path: Path) -> str:
    """plugins/module_utils/verify/subjects/kind.py → verify.subjects.kind (a package's __init__.py: the package)."""
    parts = list(path.relative_to(MODULE_UTILS).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(MODULE_UTILS.rglob("*.py"))}


def layer_of(module: str) -> int:
    top = module.split(".")[0]
    if "." not in module and top.startswith("_"):
        return 0
    for index, (_name, packages) in enumerate(LAYERS):
        if top in packages:
            return index
    raise AssertionError("plugins/module_utils/%s is in no layer: add its package to LAYERS in %s"
                         % (module.replace(".", "/"), Path(__file__).name))


def is_runner(module: str) -> bool:
    """A package's module entries: plugins/module_utils/<package>/runner.py."""
    return module.count(".") == 1 and module.endswith(".runner")


def rank_of(module: str) -> tuple[int, bool]:
    """The layer, then a runner above the layer's other files."""
    return layer_of(module), is_runner(module)


def describe_layer(module: str) -> str:
    index = layer_of(module)
    return "layer %d, %s%s" % (index + 1, LAYERS[index][0], ", its runner" if is_runner(module) else "")


def _inside(name: str, modules: dict[str, Path], exact: bool = False) -> str | None:
    """The module_utils module an imported dotted name lands in (the longest known prefix; with EXACT, only the
    name itself), None for a name outside module_utils."""
    if not name.startswith(PACKAGE + "."):
        return None
    parts = name[len(PACKAGE) + 1:].split(".")
    for end in range(len(parts), 0 if not exact else len(parts) - 1, -1):
        candidate = ".".join(parts[:end])
        if candidate in modules:
            return candidate
    return None


def imports_of(module: str, modules: dict[str, Path]) -> dict[str, int]:
    """The module_utils modules MODULE imports (anywhere in the file) → the line of the first such import."""
    path = modules[module]
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    is_package = path.name == "__init__.py"
    found: dict[str, int] = {}
    for node in ast.walk(tree):
        targets: list[str | None] = []
        if isinstance(node, ast.Import):
            targets = [_inside(alias.name, modules) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's own package
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                origin = PACKAGE + "." + ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            # `from package import submodule` imports the submodule; `from module import name`, the module.
            targets = [_inside(origin + "." + alias.name, modules) if _inside(origin + "." + alias.name, modules, exact=True)
                       else _inside(origin, modules) for alias in node.names]
        for target in targets:
            if target is not None and target != module and target not in found:
                found[target] = node.lineno
    return found


@functools.lru_cache(maxsize=None)
def import_graph() -> tuple[dict[str, Path], dict[str, dict[str, int]]]:
    modules = all_modules()
    return modules, {m: imports_of(m, modules) for m in modules}


def upward_edges(graph: dict[str, dict[str, int]]) -> list[tuple[str, str, int]]:
    return [(source, target, line) for source, targets in sorted(graph.items()) for target, line in sorted(targets.items())
            if rank_of(target) > rank_of(source)]


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, pending = work[-1]
            if pending:
                nxt = pending.pop(0)
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))
    return out


def test_the_scan_sees_the_imports() -> None:
    # A scan that found nothing would pass vacuously.
    modules, graph = import_graph()
    assert len(modules) > 100
    assert "k8s.selection" in graph["verify.runner"]  # from ...k8s.selection import ...
    assert "verify.status.run" in graph["capture.cluster"]  # inside a function
    assert "controllers.ingress_nginx" in graph["controllers.registry"]  # from ...controllers import ingress_nginx
    assert "controllers.registry" in graph["discovery.controllers"]
    assert "controllers.dataplane_reader" in graph["controllers.base"]
    assert "_module" in graph["lab.runner"]  # under TYPE_CHECKING


def test_every_file_is_in_a_layer() -> None:
    for module in all_modules():
        layer_of(module)


def test_no_file_imports_a_higher_layer() -> None:
    modules, graph = import_graph()
    new = ["%s:%d imports %s: %s (%s) may not import %s (%s); move the shared piece down, or, if it cannot move, "
           "allow the edge with its reason in ALLOWED_UPWARD (%s)"
           % (modules[source].relative_to(ROOT), line, PACKAGE + "." + target, source, describe_layer(source), target,
              describe_layer(target), Path(__file__).name)
           for source, target, line in upward_edges(graph) if (source, target) not in ALLOWED_UPWARD]
    assert not new, "imports of a higher layer:\n" + "\n".join(new)


def test_no_file_imports_a_runner() -> None:
    """A runner is what a module in plugins/modules calls: below it, nothing calls back up, not even another runner."""
    modules, graph = import_graph()
    found = ["%s:%d imports %s" % (modules[source].relative_to(ROOT), line, target)
             for source, targets in sorted(graph.items()) for target, line in sorted(targets.items()) if is_runner(target)]
    assert not found, "module_utils files that import a runner (move what they need out of it):\n" + "\n".join(found)


def test_the_allowed_upward_edges_are_still_there() -> None:
    _modules, graph = import_graph()
    present = {(source, target) for source, target, _line in upward_edges(graph)}
    stale = sorted(set(ALLOWED_UPWARD) - present)
    assert not stale, "ALLOWED_UPWARD lists edges the code no longer has (remove them): %s" % stale


def test_no_import_cycles() -> None:
    modules, graph = import_graph()
    found = []
    for component in cycles(graph):
        if frozenset(component) in ALLOWED_CYCLES:
            continue
        edges = ["%s:%d imports %s" % (modules[a].relative_to(ROOT), graph[a][b], b)
                 for a in component for b in sorted(graph[a]) if b in component]
        found.append("cycle among %s:\n  %s" % (", ".join(component), "\n  ".join(edges)))
    assert not found, "import cycles (move the shared piece to a module both can import downward):\n" + "\n".join(found)
    stale = [sorted(c) for c in ALLOWED_CYCLES if sorted(c) not in cycles(graph)]
    assert not stale, "ALLOWED_CYCLES lists cycles the code no longer has (remove them): %s" % stale


def test_generic_controller_code_reaches_a_type_only_through_the_registry() -> None:
    modules, graph = import_graph()
    controllers = MODULE_UTILS / "controllers"
    types = [["controllers", p.name] for p in controllers.iterdir() if (p / "__init__.py").is_file()]
    generic = [m for m, path in modules.items() if path.parent == controllers and path.name not in ("__init__.py", "registry.py")]
    assert "controllers.base" in generic and len(types) >= 2
    bad = ["%s imports %s" % (modules[source].relative_to(ROOT), target)
           for source in sorted(generic) for target in sorted(graph[source]) if target.split(".")[:2] in types]
    assert not bad, "generic controller code reaches a type's package other than through controllers/registry.py:\n" + "\n".join(bad)


@pytest.mark.parametrize("source,target,line,expected", [
    ("lab.workloads", "verify.report", 3, "higher"),
    ("k8s.objects", "k8s.client", 3, "same"),
    ("verify.report", "_errors", 3, "lower"),
    ("lab.runner", "lab.definition", 3, "lower"),
    ("lab.definition", "lab.runner", 3, "higher"),
    ("cluster.runner", "lab.gateways", 3, "higher"),
    ("lab.workloads.runner", "lab.definition", 3, "same"),
])
def test_the_layer_order(source: str, target: str, line: int, expected: str) -> None:
    upward = upward_edges({source: {target: line}, target: {}})
    assert bool(upward) == (expected == "higher")


def test_cycles_are_found() -> None:
    assert cycles({"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b": 1}, "b": {}}) == []
