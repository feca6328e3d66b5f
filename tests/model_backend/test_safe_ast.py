"""model_backend.safe_ast: parsing is serialized across threads (CPython 3.11's AST conversion is not
thread-safe: python/cpython#106905, seen here as a worker session failing to open under load)."""

from __future__ import annotations

import ast
import threading

from model_backend import safe_ast


def test_a_parse_waits_while_another_thread_holds_the_lock() -> None:
    done = threading.Event()
    result: list[object] = []

    def parse() -> None:
        result.append(safe_ast.parse("x = [1, 2]\n"))
        done.set()

    with safe_ast._LOCK:  # as if another thread were parsing
        worker = threading.Thread(target=parse)
        worker.start()
        assert not done.wait(0.3)
    assert done.wait(5)
    worker.join()
    assert isinstance(result[0], ast.Module)


def test_same_results_as_the_ast_module() -> None:
    assert ast.dump(safe_ast.parse("f(a, *b)", mode="eval")) == ast.dump(ast.parse("f(a, *b)", mode="eval"))
    assert safe_ast.literal_eval("  {'a': (1, 2.5, None)}") == {"a": (1, 2.5, None)}
