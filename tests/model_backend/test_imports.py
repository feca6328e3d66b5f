"""The packages' modules import one another without a cycle: model_backend's, dap_server's, mcp_server's
and lsp_server's. Read from the source with `ast`: imports at the top and inside functions count; only
those under `if TYPE_CHECKING:` do not, since they never run. `from a.b import c` imports the module a.b.c
where there is one (as `import a.b.c` does; a package's __init__ running first is no cycle)."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("model_backend", "dap_server", "mcp_server", "lsp_server")


def _modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


MODULES = _modules()


def _resolve(name: str) -> str | None:
    """The module that importing `name` runs (a name inside a module: that module)."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _from(module: str, name: str) -> str:
    return f"{module}.{name}" if f"{module}.{name}" in MODULES else module


def _type_checking(node: ast.AST) -> bool:
    test = node.test if isinstance(node, ast.If) else None
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _nodes(tree: ast.AST, type_checking: bool) -> list[ast.AST]:
    """Every node of `tree`; without `type_checking`, but the bodies of `if TYPE_CHECKING:` (their `else:`
    runs, so it counts)."""
    found, todo = [], [tree]
    while todo:
        node = todo.pop()
        found.append(node)
        if not type_checking and _type_checking(node):
            assert isinstance(node, ast.If)
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return found


def imports_of(module: str, source: str | None = None, type_checking: bool = False) -> set[str]:
    """The packages' modules that `source` (by default the text of `module`) imports where the import may
    run; with `type_checking`, those under `if TYPE_CHECKING:` too."""
    found = set()
    tree = ast.parse(MODULES[module].read_text() if source is None else source)
    for node in _nodes(tree, type_checking):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            # `from a.b import c`: the module a.b.c where there is one, else a name of a.b
            names = [_from(node.module, alias.name) for alias in node.names]
        for name in names:
            target = _resolve(name) if name.split(".")[0] in PACKAGES else None
            if target is not None and target != module:
                found.add(target)
    return found


def test_the_reader_counts_imports_in_functions_and_skips_type_checking_ones() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "import model_backend.tracer\n"
        "if TYPE_CHECKING:\n    from model_backend.grammar import rules\n"
        "else:\n    import dap_server.session\n"
        "def f():\n    from model_backend.data.classgen import realistic_programs\n"
    )
    assert imports_of("x", source) == {"model_backend.tracer", "dap_server.session", "model_backend.data.classgen"}
    assert "model_backend.grammar.rules" in imports_of("x", source, type_checking=True)


def test_the_packages_modules_import_one_another_without_a_cycle() -> None:
    assert len(MODULES) > 100
    graph = {m: imports_of(m) for m in MODULES}
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError, naming one cycle
