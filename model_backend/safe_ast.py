"""`ast.parse` and `ast.literal_eval` of text, one thread at a time.

CPython 3.11 keeps the depth counter of its AST-to-object conversion in interpreter-wide state, so two
threads parsing at once can fail with "SystemError: AST constructor recursion depth mismatch"
(python/cpython#106905). The model worker and the debug adapter parse programs, expressions and values
from several threads; everything they parse goes through here. (The data builder parses in processes,
not threads, and calls `ast` directly.)
"""

from __future__ import annotations

import ast
import threading
from typing import Any, Literal

_LOCK = threading.Lock()


def parse(source: str, filename: str = "<unknown>", mode: Literal["exec", "eval"] = "exec") -> Any:
    """ast.parse under the lock (a Module for "exec", an Expression for "eval")."""
    with _LOCK:
        return ast.parse(source, filename=filename, mode=mode)


def literal_eval(text: str) -> Any:
    """ast.literal_eval of text: the parse under the lock, the evaluation outside it."""
    return ast.literal_eval(parse(text.lstrip(" \t"), mode="eval"))
