"""How the engines depend on the rest: the engine interface imports no grammar, the engines never
import the model worker (the worker depends on them), and the engines' and the worker's modules import
one another without a cycle. Read from the source with `ast`: every import counts, those inside
functions and under TYPE_CHECKING too."""

from __future__ import annotations

import graphlib

import pytest

from tests.model_backend.test_imports import MODULES, imports_of


def imports(module: str) -> set[str]:
    """The modules `module` imports anywhere in its source, under TYPE_CHECKING too."""
    return imports_of(module, type_checking=True)


def reached(module: str) -> set[str]:
    """Every module importing `module` may run, directly or through others."""
    seen, todo = set(), [module]
    while todo:
        for target in imports(todo.pop()) - seen:
            seen.add(target)
            todo.append(target)
    return seen


def test_the_import_reader_sees_imports_of_every_kind() -> None:
    assert "model_backend.engine.errors" in imports("model_backend.engine.base")  # at the top
    assert "model_backend.engine.jump" in imports("model_backend.engine.base")  # inside a function
    assert "model_backend.grammar" in imports("model_backend.engine.driver")
    assert "model_backend.engine.forward" in imports("model_backend.worker.server")


@pytest.mark.parametrize("module", ["model_backend.engine.base", "model_backend.engine.errors"])
def test_the_engine_interface_imports_no_grammar(module: str) -> None:
    grammar = sorted(m for m in reached(module) if m == "model_backend.grammar" or m.startswith("model_backend.grammar."))
    assert grammar == [], f"{module} reaches the grammar: {grammar}"


def test_the_engines_never_import_the_worker() -> None:
    engines = [m for m in MODULES if m == "model_backend.engine" or m.startswith("model_backend.engine.")]
    assert len(engines) > 10
    wrong = {m: sorted(t for t in imports(m) if t.startswith("model_backend.worker")) for m in engines}
    assert {m: t for m, t in wrong.items() if t} == {}


def test_the_engines_and_the_worker_import_without_cycles() -> None:
    mine = [m for m in MODULES if m.startswith(("model_backend.engine", "model_backend.worker"))]
    graph = {m: {t for t in imports(m) if t in mine} for m in mine}
    graphlib.TopologicalSorter(graph).prepare()  # raises CycleError, naming the cycle
