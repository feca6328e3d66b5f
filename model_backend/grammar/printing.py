"""Printing: what a `print(...)` line writes to stdout.

`printed_lines(tree)` gives the lines that are one `print(...)` call of builtin values,
`print_reads(call, bound)` the names such a call reads (its keywords among `PRINT_KEYWORDS`), and
`printed_text(call, shown)` the text it writes, computed on the values a state shows.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from model_backend.grammar.evaluation import value_of
from model_backend.grammar.syntax import bound_names, may_print_a_container, statements_per_line
from model_backend.grammar.values import MAX_TEXT, Unknown, expression_reads, holds_a_set


def printed_lines(tree: ast.Module) -> dict[int, ast.Call]:
    """Line -> the call, for lines that hold one statement, on one line, that is only `print(ARGS)` over
    expressions of variables, operators and builtins (print_reads), in a program none of whose own
    objects could print like a literal (may_print_a_container) and that never names `stdout` (which it
    could redirect). On values of the builtin types such a line runs no code of the program, so the
    values shown at its event give what the step prints (printed_text)."""
    if may_print_a_container(tree) or any(
            (isinstance(n, ast.Name) and "stdout" in n.id) or (isinstance(n, ast.Attribute) and "stdout" in n.attr)
            or (isinstance(n, ast.alias) and "stdout" in n.name) for n in ast.walk(tree)):
        return {}
    bound = bound_names(tree)
    starts = statements_per_line(tree)
    found: dict[int, ast.Call] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and node.end_lineno == node.lineno
                and starts.get(node.lineno) == 1 and print_reads(node.value, bound) is not None):
            found[node.lineno] = node.value
    return found


PRINT_KEYWORDS = frozenset({"sep", "end", "flush"})


def print_reads(call: ast.Call, bound: set[str]) -> frozenset[str] | None:
    """The variables a call of the builtin `print` reads, where its arguments are expressions
    expression_reads accepts and its keywords are constant `sep`, `end` (text or None) and `flush`;
    None for anything else (a `file=`, a starred argument, a program that rebinds `print`)."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "print") or "print" in bound:
        return None
    for keyword in call.keywords:
        if keyword.arg not in PRINT_KEYWORDS or not isinstance(keyword.value, ast.Constant):
            return None
        if keyword.arg != "flush" and not (keyword.value.value is None or isinstance(keyword.value.value, str)):
            return None
    reads: set[str] = set()
    for argument in call.args:
        found = None if isinstance(argument, ast.Starred) else expression_reads(argument, bound)
        if found is None:
            return None
        reads |= found
    return frozenset(reads)


def printed_text(call: ast.Call, shown: Mapping[str, str]) -> str | None:
    """What a call print_reads accepted writes, on the values `shown` holds: the str() of each argument
    (for the values built here, a string's own text, and otherwise its repr), joined by `sep`, then
    `end`; None where the values do not tell."""
    values = [value_of(argument, shown) for argument in call.args]
    if any(v is Unknown or holds_a_set(v) for v in values):
        return None
    options = {k.arg: k.value.value for k in call.keywords if isinstance(k.value, ast.Constant)}
    sep, end = options.get("sep"), options.get("end")
    text = (" " if sep is None else str(sep)).join(str(v) for v in values) + ("\n" if end is None else str(end))
    return text if len(text) <= MAX_TEXT else None
