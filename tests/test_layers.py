"""Imports point down only: the layer order in docs/internals.md, checked on the source.

Every ``import`` in ``cupynum/`` is read with ``ast``, at module level and inside functions,
relative or absolute.  Each module belongs to one line of the layer table in
docs/internals.md (read from the page, so the page and the check cannot drift).  An import
may reach its own line or a line below it, never one above; module-level imports must not
form a cycle (a cycle breaks ``import`` order, and means the two modules are one).  Within
``_api`` every module has a line of its own, so the sections import each other in one order.

Also: nothing in the package imports ``benchmarks`` (the probes stay outside it), and no
Python file is over ~1,000 lines.
"""
from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cupynum"
INTERNALS = ROOT / "docs" / "internals.md"
MAX_LINES = 1000

# Imports that point up and are allowed for now, each with its reason.  Keep it short.
ALLOWED_UP: set = set()  # (module, target) pairs allowed to point up; keep it empty


def _layer_table():
    """The layers of the table in docs/internals.md, highest first: each a list of module
    names or ``prefix.*`` patterns.  A layer is a line; an indented line continues the one
    above; ``#`` starts a comment."""
    text = INTERNALS.read_text()
    block = re.search(r"```\{code-block\} text\n:name: layer-table\n\n(.*?)```", text, re.S)
    assert block, "docs/internals.md lost its layer table (the block named layer-table)"
    layers = []
    for raw in block.group(1).splitlines():
        entry = raw.split("#", 1)[0].split()
        if entry and raw[0].isspace() and layers:
            layers[-1].extend(entry)
        elif entry:
            layers.append(entry)
    return layers


def _rank(module, table):
    """The layer of ``module`` (0 = bottom): an exact name beats the longest ``prefix.*``."""
    best, best_len = None, -1
    for height, patterns in enumerate(reversed(table)):
        for pat in patterns:
            if pat == module:
                return height
            if pat.endswith(".*") and module.startswith(pat[:-1]) and len(pat) > best_len:
                best, best_len = height, len(pat)
    return best


def _modules():
    """{module name: path} for every .py file under cupynum/."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(module, path, known):
    """(target module, line, at module level) for each import in ``path`` that names a
    module of the package (``from pkg import sub`` names ``pkg.sub`` when that is a module)
    or of benchmarks/."""
    tree = ast.parse(path.read_text(), str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []

    def visit(node, top_level):
        for child in ast.iter_child_nodes(node):
            nested = not top_level or isinstance(
                child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if isinstance(child, ast.Import):
                for alias in child.names:
                    found.append((alias.name, child.lineno, top_level))
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[:len(package.split(".")) - child.level + 1]
                    source = ".".join(base + ([child.module] if child.module else []))
                else:
                    source = child.module
                for alias in child.names:
                    sub = f"{source}.{alias.name}"
                    found.append((sub if sub in known else source, child.lineno, top_level))
            visit(child, top_level and not nested)

    visit(tree, True)
    return [(t, line, top) for t, line, top in found
            if t.split(".")[0] in ("cupynum", "benchmarks")]


@pytest.fixture(scope="module")
def graph():
    known = _modules()
    return {m: _imports(m, p, known) for m, p in known.items()}


def test_every_module_has_a_layer():
    table = _layer_table()
    missing = [m for m in _modules() if _rank(m, table) is None]
    assert not missing, f"add these modules to the layer table in docs/internals.md: {missing}"


def test_imports_point_down(graph):
    table = _layer_table()
    up = []
    for module, imports in graph.items():
        for target, line, _ in imports:
            if target.split(".")[0] == "benchmarks":
                up.append(f"{module}:{line} imports {target} (benchmarks are outside the package)")
                continue
            if target not in graph:
                continue  # a name the package does not define (checked by the import itself)
            if _rank(target, table) > _rank(module, table) and (module, target) not in ALLOWED_UP:
                up.append(f"{module}:{line} imports {target}, a layer above it")
    assert not up, "imports that point up the layer order:\n" + "\n".join(up)


def test_allow_list_is_still_needed(graph):
    """An allowed upward import that no longer exists leaves the list."""
    present = {(m, t) for m, imports in graph.items() for t, _, _ in imports}
    assert ALLOWED_UP <= present, f"remove from ALLOWED_UP: {ALLOWED_UP - present}"


def test_no_import_cycles(graph):
    edges = {m: sorted({t for t, _, top in imports if top and t in graph and t != m})
             for m, imports in graph.items()}
    # A package's __init__ runs before its submodules: importing pkg.sub also imports pkg,
    # which is not an edge of its own (that is the package's structure, not a dependency).
    state, stack, cycles = {}, [], []

    def visit(m):
        state[m] = "open"
        stack.append(m)
        for t in edges[m]:
            if state.get(t) == "open":
                cycles.append(stack[stack.index(t):] + [t])
            elif t not in state:
                visit(t)
        stack.pop()
        state[m] = "done"

    for m in sorted(edges):
        if m not in state:
            visit(m)
    assert not cycles, "module-level import cycles:\n" + "\n".join(
        " -> ".join(c) for c in cycles)


def test_layer_check_catches_an_upward_import(tmp_path):
    """The checker itself: a nested ``import cupynum`` in _array is an upward import."""
    table = _layer_table()
    src = tmp_path / "_array.py"
    src.write_text("def f():\n    import cupynum\n    from ._api import indexing\n")
    found = _imports("cupynum._array", src, {"cupynum._api.indexing"})
    assert [(t, top) for t, _, top in found] == [("cupynum", False),
                                                 ("cupynum._api.indexing", False)]
    assert all(_rank(t, table) > _rank("cupynum._array", table) for t, _, _ in found)


def test_no_python_file_over_a_thousand_lines():
    long = {str(p.relative_to(ROOT)): n for p in sorted(PACKAGE.rglob("*.py"))
            if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f"split these modules (over {MAX_LINES} lines): {long}"
