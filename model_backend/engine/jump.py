"""pdb's `jump` without running anything: which lines a frame may jump to, from the source alone.

The oracle engine lets Python itself decide (it sets `frame.f_lineno` in its sandboxed re-run). The
neural engines cannot, so they check the rules that matter in practice (CPython 3.11's
`frame_setlineno`): the target is a line with code in the same function (not in a nested def), and it
is not inside a `for` loop's body, a `with` block or an `except` handler that the current line is not
in. Jumps out of such blocks are allowed, as in Python. tests/model_backend/engine/test_jump.py compares
these answers with Python's own on every pair of lines of test programs.
"""

from __future__ import annotations

import ast
import types

from model_backend import safe_ast

_BLOCKS = {ast.For: "the body of a for loop", ast.AsyncFor: "the body of a for loop",
           ast.With: "a with block", ast.AsyncWith: "a with block"}


def _code_objects(code: types.CodeType) -> list[types.CodeType]:
    out = [code]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            out.extend(_code_objects(const))
    return out


def _lines(code: types.CodeType) -> set[int]:
    return {line for _, _, line in code.co_lines() if line is not None}


def jump_target(source: str, function: str, from_line: int, to_line: int) -> tuple[int | None, str | None]:
    """Where a frame of `function` on `from_line` lands when it jumps to `to_line`, or why it cannot.

    Like Python, a line without code (a comment, `else:`, `finally:`) means the next line with code."""
    try:
        module = compile(source, "<program>", "exec")  # compiled, never run
        tree = safe_ast.parse(source)
    except (SyntaxError, ValueError):
        return None, "the program does not compile"
    codes = [c for c in _code_objects(module) if c.co_name == function and from_line in _lines(c)]
    if not codes:
        return None, f"line {from_line} is not code of {function}"
    later = sorted(n for n in _lines(codes[0]) if n >= to_line)
    if not later:
        return None, f"line {to_line} comes after the current code block"
    line = later[0]
    scope: ast.AST = tree
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == function \
                and node.lineno <= from_line <= (node.end_lineno or node.lineno):
            scope = node
    for node in ast.walk(scope):
        if isinstance(node, ast.For | ast.AsyncFor | ast.With | ast.AsyncWith) \
                and _inside(node.body, line) and not _inside(node.body, from_line):
            return None, f"can't jump into {_BLOCKS[type(node)]}"
        if isinstance(node, ast.Try | ast.TryStar):
            for handler in node.handlers:
                span = (handler.lineno, handler.end_lineno or handler.lineno)
                if span[0] <= line <= span[1] and not span[0] <= from_line <= span[1]:
                    return None, "can't jump into an 'except' block as there's no exception"
    return line, None


def _inside(body: list[ast.stmt], line: int) -> bool:
    return bool(body) and body[0].lineno <= line <= (body[-1].end_lineno or body[-1].lineno)
