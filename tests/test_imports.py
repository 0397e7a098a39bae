"""The package imports without circles (issue 29): a module that imports another which imports it back only works
in one import order, and hides which of the two depends on the other.

The graph is read from the source with ``ast``: every module-level import of a coordkit module (``import x``,
``from x import y`` where ``y`` may itself be a module, relative imports resolved), not the imports inside
functions (deliberately deferred) nor those under ``if TYPE_CHECKING:`` (annotations only, never run).
"""

import ast
from pathlib import Path

import pytest

import coordkit

PACKAGE = Path(coordkit.__file__).parent
ROOT = "coordkit"


def module_names() -> dict[str, Path]:
    """Every module of the package by its dotted name (a package by its own name, not ``…__init__``)."""
    names = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = (ROOT, *path.relative_to(PACKAGE).with_suffix("").parts)
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return names


def module_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module is imported: the module's body and the blocks it runs (if,
    try, with, class bodies), not function bodies nor the body of ``if TYPE_CHECKING:``."""
    found, pending = [], list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            pending.extend(node.orelse)
        elif not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            pending.extend(child for child in ast.iter_child_nodes(node) if isinstance(child, ast.stmt))
            pending.extend(
                statement
                for handler in getattr(node, "handlers", [])
                for statement in handler.body  # an except clause's statements are not direct stmt children
            )
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imported_modules(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool, known: set[str]) -> set[str]:
    """The coordkit modules an import statement loads: ``from a import b`` loads ``a.b`` when that is a module,
    else ``a``."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names} & known
    base = _absolute(node, importer, is_package)
    return {f"{base}.{alias.name}" if f"{base}.{alias.name}" in known else base for alias in node.names} & known


def _absolute(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    parts = importer.split(".")
    anchor = parts[: len(parts) - node.level + (1 if is_package else 0)]
    return ".".join([*anchor, *([node.module] if node.module else [])])


def import_graph() -> dict[str, set[str]]:
    """Each coordkit module → the coordkit modules it imports at module level."""
    modules = module_names()
    known = set(modules)
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        is_package = path.name == "__init__.py"
        graph[name] = {
            target
            for node in module_level_imports(tree)
            for target in imported_modules(node, name, is_package, known)
            if target != name
        }
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The graph's circles: one per strongly connected component of more than one module (Tarjan's algorithm),
    each as its modules in order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for target in sorted(graph[module]):
            if target not in index:
                visit(target)
                low[module] = min(low[module], low[target])
            elif target in on_stack:
                low[module] = min(low[module], index[target])
        if low[module] == index[module]:
            component = []
            while not component or component[-1] != module:
                component.append(stack.pop())
                on_stack.discard(component[-1])
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(found)


def test_the_package_has_no_import_circle():
    found = cycles(import_graph())
    assert not found, "import circles (each a set of modules importing each other at module level): " + "; ".join(
        " <-> ".join(component) for component in found
    )


# --- the graph reader itself ---------------------------------------------------------------------------------


def _graph_of(sources: dict[str, str]) -> dict[str, set[str]]:
    known = set(sources)
    return {
        name: {
            target
            for node in module_level_imports(ast.parse(source))
            for target in imported_modules(node, name, False, known)
            if target != name
        }
        for name, source in sources.items()
    }


def test_a_circle_through_a_from_import_of_a_module_is_found():
    graph = _graph_of(
        {
            "coordkit.f.experiments": "from coordkit.f import calibration\n",
            "coordkit.f.calibration": "from coordkit.f import experiments as ex\n",
            "coordkit.f": "",
        }
    )
    assert cycles(graph) == [["coordkit.f.calibration", "coordkit.f.experiments"]]


def test_a_longer_circle_is_found_whole():
    graph = _graph_of(
        {"coordkit.a": "import coordkit.b\n", "coordkit.b": "import coordkit.c\n", "coordkit.c": "import coordkit.a\n"}
    )
    assert cycles(graph) == [["coordkit.a", "coordkit.b", "coordkit.c"]]


@pytest.mark.parametrize(
    "deferred",
    [
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from coordkit.b import B\n",
        "def load():\n    from coordkit.b import B\n",
    ],
    ids=["under TYPE_CHECKING", "inside a function"],
)
def test_imports_that_do_not_run_at_import_time_are_not_edges(deferred):
    graph = _graph_of({"coordkit.a": deferred, "coordkit.b": "from coordkit.a import A\n"})
    assert cycles(graph) == []


def test_a_from_import_of_a_module_and_a_name_loads_both():
    node = ast.parse("from coordkit.f import charts, STRATEGIES\n").body[0]
    assert imported_modules(node, "coordkit.g", False, {"coordkit.f", "coordkit.f.charts"}) == {
        "coordkit.f",
        "coordkit.f.charts",
    }


def test_imports_in_blocks_that_run_at_import_time_are_edges():
    source = "try:\n    import coordkit.b\nexcept ImportError:\n    import coordkit.c\n"
    graph = _graph_of({"coordkit.a": source, "coordkit.b": "", "coordkit.c": ""})
    assert graph["coordkit.a"] == {"coordkit.b", "coordkit.c"}


def test_a_relative_import_is_resolved_from_the_importer():
    node = ast.parse("from ..sweeps import sweep\n").body[0]
    known = {"coordkit.rep.sweeps", "coordkit.sweeps"}
    assert imported_modules(node, "coordkit.rep.movies.model", False, known) == {"coordkit.rep.sweeps"}
    assert imported_modules(node, "coordkit.rep.movies", True, known) == {"coordkit.rep.sweeps"}
    assert imported_modules(node, "coordkit.rep", True, known) == {"coordkit.sweeps"}
