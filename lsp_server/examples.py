"""The functions of a document and the example call each one is predicted on.

An example call comes from, in this order of preference:
- a launch entry the editor passed (the last entry used in a Neural Debug launch of that file);
- a `# ndb: f(...)` comment anywhere in the file (the call names the function);
- a doctest line `>>> f(...)` in the function's docstring.

Only top-level functions get an example (a program's entry is a call of a top-level function). Parsing
uses `ast` only: nothing of the document runs. A document that does not parse has no functions.
"""

from __future__ import annotations

import ast
import hashlib
import re
from dataclasses import dataclass

from model_backend import safe_ast

MAX_CALL_CHARS = 2_000
_COMMENT = re.compile(r"#\s*ndb:\s*(?P<call>.+?)\s*$")
_DOCTEST = re.compile(r"^\s*>>>\s*(?P<call>.+?)\s*$")


@dataclass(frozen=True)
class Function:
    name: str
    def_line: int  # 1-based line of `def` (after decorators)
    end_line: int  # 1-based last line of the body
    call: str | None  # the example call, e.g. `f([1, 2])`
    origin: str | None  # "launch", "comment" or "doctest"


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest()


def call_of(text: str, name: str | None = None) -> str | None:
    """`text` when it is one call expression (of `name`, when given), normalised by ast; else None."""
    if len(text) > MAX_CALL_CHARS:
        return None
    try:
        tree = safe_ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    body = getattr(tree, "body", None)
    if not isinstance(body, ast.Call) or not isinstance(body.func, ast.Name):
        return None
    if name is not None and body.func.id != name:
        return None
    return text.strip()


def called_name(call: str) -> str | None:
    try:
        tree = safe_ast.parse(call, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    body = getattr(tree, "body", None)
    if isinstance(body, ast.Call) and isinstance(body.func, ast.Name):
        return body.func.id
    return None


def comment_calls(source: str) -> dict[str, str]:
    """function name -> the call of its last `# ndb: f(...)` comment."""
    found: dict[str, str] = {}
    for line in source.splitlines():
        match = _COMMENT.search(line)
        if match is None:
            continue
        call = call_of(match.group("call"))
        name = called_name(call) if call else None
        if call and name:
            found[name] = call
    return found


def doctest_call(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    doc = ast.get_docstring(node)
    if not doc:
        return None
    for line in doc.splitlines():
        match = _DOCTEST.match(line)
        if match is not None and (call := call_of(match.group("call"), node.name)):
            return call
    return None


def functions(source: str, launch_entries: dict[str, str] | None = None) -> list[Function]:
    """The top-level functions of `source`, each with its example call (None when it has none).
    `launch_entries`: function name -> the entry of its last launch. [] when `source` does not parse."""
    try:
        tree = safe_ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    comments = comment_calls(source)
    launched = launch_entries or {}
    out = []
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.AsyncFunctionDef):
            out.append(Function(node.name, node.lineno, node.end_lineno or node.lineno, None, None))
            continue  # a coroutine's call returns a coroutine object: no predicted run
        if not isinstance(node, ast.FunctionDef):
            continue
        call, origin = None, None
        for candidate, where in ((launched.get(node.name), "launch"), (comments.get(node.name), "comment"),
                                 (doctest_call(node), "doctest")):
            if candidate and call_of(candidate, node.name):
                call, origin = candidate, where
                break
        out.append(Function(node.name, node.lineno, node.end_lineno or node.lineno, call, origin))
    return out


def function_at(source: str, line: int, launch_entries: dict[str, str] | None = None) -> Function | None:
    """The top-level function whose lines hold `line` (1-based)."""
    for function in functions(source, launch_entries):
        if function.def_line <= line <= function.end_line:
            return function
    return None
