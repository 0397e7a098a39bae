"""The exercises' code runs as written (issue 48, item 6): a student who types an exercise's code into the notebook,
or into a fresh kernel, gets no NameError and no error of the kit.

An exercise's code is what it gives between backticks (or in a code cell under it) that calls something: parameter
names on their own (`decay=False`) are not code. Each name the code uses must come from somewhere a student can
see: the notebook's own cells above the exercises, code given earlier in the exercises, a module the same exercise
names (`coordkit.sweep`; "`fetch(...)` (from `coordkit.agora.protocol`)"), a module that can be imported (`numpy`),
or the student's own work: a name the solutions notebook binds, or one that says it is theirs (`MySynthesis`,
`YourField`, `Yours`). 01's first exercise once used `pd`,
which 01 never imported.

Code that needs nothing but imports and leaves nothing to fill in (no `...`) is run: per notebook, in a fresh
interpreter, after the notebook's imports and those the exercises name, in the order the exercises give it.
"""

import ast
import builtins
import importlib
import importlib.util
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
EXERCISES_HEADING = re.compile(r"^#+ .*Exercises", re.MULTILINE)
EXERCISE_ITEM = re.compile(r"^(?=\d+\.\s+\*\*|\*\*Exercise)", re.MULTILINE)  # "1. **…" or "**Exercise 1 …"
CODE_SPAN = re.compile(r"```(?:python)?\n(.*?)```|`([^`\n]+)`", re.DOTALL)
MODULE_PATH = re.compile(r"^coordkit(\.\w+)*$")
BUILTINS = set(dir(builtins))
STUDENTS_OWN = re.compile(r"^(My|Your)[A-Z_]|^Yours$")


@dataclass
class Snippet:
    exercise: str  # "Exercise 3" or the item's first words
    code: str
    tree: ast.Module
    pointers: list[str]  # the dotted names its exercise gives between backticks


def chapters() -> list[Path]:
    """The paper notebooks with an Exercises section and a solutions notebook."""
    return [
        path
        for path in sorted(NOTEBOOKS.glob("0*.ipynb"))
        if exercises_start(nbformat.read(path, as_version=4)) is not None and solutions_of(path).exists()
    ]


def solutions_of(path: Path) -> Path:
    return NOTEBOOKS / "solutions" / f"{path.stem}_solutions.ipynb"


def exercises_start(notebook) -> int | None:
    starts = [
        i
        for i, cell in enumerate(notebook.cells)
        if cell.cell_type == "markdown" and EXERCISES_HEADING.search(cell.source)
    ]
    return starts[-1] if starts else None


def bound_names(tree: ast.AST) -> set[str]:
    """Names that code binds: assignments, loop and with targets, functions, classes, their arguments, imports."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def imports_in(tree: ast.AST) -> list[str]:
    return [ast.unparse(node) for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))]


def students_names(path: Path) -> set[str]:
    """What the solutions notebook binds, but not by importing it: what a student writes."""
    trees = code_trees(nbformat.read(solutions_of(path), as_version=4).cells)
    imported = bound_names(ast.parse("\n".join(line for tree in trees for line in imports_in(tree))))
    return set().union(*map(bound_names, trees)) - imported


def free_names(tree: ast.AST) -> set[str]:
    used = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}
    return used - bound_names(tree) - BUILTINS


def code_trees(cells) -> list[ast.Module]:
    return [ast.parse(cell.source) for cell in cells if cell.cell_type == "code"]


def snippets(notebook) -> list[Snippet]:
    """The exercises' code, in order, each with the dotted names its exercise mentions."""
    found, exercise, pointers = [], "", []
    for cell in notebook.cells[exercises_start(notebook) :]:
        if cell.cell_type == "code":
            found.append(Snippet(exercise, cell.source, ast.parse(cell.source), pointers))
            continue
        for item in EXERCISE_ITEM.split(cell.source):
            number = re.match(r"(?:\d+\.\s+)?\*\*(?:Exercise\s+)?(\d+)?", item)
            if number:
                exercise = f"Exercise {number.group(1) or item.split('.')[0]}"
            spans = [match.group(1) or match.group(2) for match in CODE_SPAN.finditer(item)]
            pointers = [span for span in spans if MODULE_PATH.match(span)]
            for span in spans:
                tree = parsed(span)
                if tree is not None and any(isinstance(node, ast.Call) for node in ast.walk(tree)):
                    found.append(Snippet(exercise, span, tree, pointers))
    return found


def parsed(code: str) -> ast.Module | None:
    try:
        return ast.parse(code)
    except SyntaxError:
        return None


def pointed_import(name: str, pointers: list[str]) -> str | None:
    """The import a student reads from the exercise's text for ``name``: `coordkit.sweep`, or a module that has it."""
    for pointer in pointers:
        parent, _, last = pointer.rpartition(".")
        named = object_named(pointer)
        if last == name and named is not None:
            return f"from {parent} import {name}"
        if isinstance(named, ModuleType) and hasattr(named, name):
            return f"from {pointer} import {name}"
    return None


def object_named(dotted: str):
    """What a dotted name names, as Python finds it: attributes first (`coordkit.sweep` is a function), then
    modules; None if nothing."""
    parent, _, last = dotted.rpartition(".")
    owner = object_named(parent) if parent else None
    if hasattr(owner, last):
        return getattr(owner, last)
    try:
        return importlib.import_module(dotted)
    except ImportError:
        return None


def is_module(name: str) -> bool:
    return importlib.util.find_spec(name) is not None


def has_ellipsis(tree: ast.AST) -> bool:
    return any(isinstance(node, ast.Constant) and node.value is Ellipsis for node in ast.walk(tree))


def unknown_names(notebook, students: set[str]) -> list[str]:
    """Each name an exercise's code uses that no cell above, no earlier exercise code, no module it names and no
    student's work gives."""
    above = set().union(*map(bound_names, code_trees(notebook.cells[: exercises_start(notebook)])))
    given, unknown = set(), []
    for snippet in snippets(notebook):
        for name in sorted(free_names(snippet.tree) - above - given):
            if not (
                name in students
                or STUDENTS_OWN.match(name)
                or is_module(name)
                or pointed_import(name, snippet.pointers)
            ):
                unknown.append(f"{snippet.exercise}: `{name}` in `{snippet.code[:60]}`")
        given |= bound_names(snippet.tree)
    return unknown


@pytest.mark.parametrize("path", chapters(), ids=lambda path: path.stem)
def test_every_name_an_exercise_uses_comes_from_somewhere_a_student_can_see(path):
    unknown = unknown_names(nbformat.read(path, as_version=4), students_names(path))
    assert not unknown, (
        f"{path.name}: exercise code uses names a student cannot find (import them in the notebook, or say where they"
        f" come from in the exercise, e.g. (from `coordkit.x`)): {unknown}"
    )


def test_a_name_the_notebook_never_defines_is_found_and_one_the_exercise_points_to_is_not():
    """01's first exercise once used `pd`, which 01 never imported; `sweep` is found through `coordkit.sweep`."""
    notebook = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("from coordkit import BeerGame\ngame = BeerGame()"),
            nbformat.v4.new_markdown_cell(
                "## 6 · Exercises\n\n**Exercise 1 · ★.** Tabulate `pd.DataFrame(game.run().summary())`.\n\n"
                "**Exercise 2 · ★.** Sweep with `sweep(BeerGame, {}, seeds=3)` (the function `coordkit.sweep`), then"
                " `MyRule()` and `table = pd.concat([x])`, and `table.mean()`."
            ),
        ]
    )
    assert unknown_names(notebook, students=set()) == [
        "Exercise 1: `pd` in `pd.DataFrame(game.run().summary())`",
        "Exercise 2: `pd` in `table = pd.concat([x])`",
        "Exercise 2: `x` in `table = pd.concat([x])`",
    ]


@pytest.mark.parametrize("path", chapters(), ids=lambda path: path.stem)
def test_the_exercises_complete_code_runs_in_a_fresh_interpreter(path):
    notebook = nbformat.read(path, as_version=4)
    imports = [line for tree in code_trees(notebook.cells[: exercises_start(notebook)]) for line in imports_in(tree)]
    available = bound_names(ast.parse("\n".join(imports)))
    students = students_names(path)
    program, ran = list(imports), []
    for snippet in snippets(notebook):
        missing = free_names(snippet.tree) - available
        if has_ellipsis(snippet.tree) or missing & students or any(map(STUDENTS_OWN.match, missing)):
            continue  # the student's to complete
        needed = {}
        for name in missing:
            needed[name] = pointed_import(name, snippet.pointers) or (f"import {name}" if is_module(name) else None)
        if None in needed.values():
            continue  # needs a variable of the notebook, or the student's own code: checked by name above
        program += [*needed.values(), f"print('ran', {snippet.exercise!r})", snippet.code]
        available |= set(needed) | bound_names(snippet.tree)
        ran.append(f"{snippet.exercise}: {snippet.code[:50]}")
    if not ran:
        pytest.skip(f"{path.name}: no exercise code runs without the notebook's variables")
    done = subprocess.run(
        [sys.executable, "-c", "\n".join(program)], capture_output=True, text=True, cwd=path.parent, timeout=600
    )
    assert done.returncode == 0, (
        f"{path.name}: exercise code failed; ran so far {done.stdout!r}:\n{done.stderr[-3000:]}"
    )
