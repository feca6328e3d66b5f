"""A program to debug: a script's source, where it came from, and an optional entry call."""

from __future__ import annotations

import ast
import types
from pathlib import Path

from pydantic import BaseModel

from model_backend import safe_ast


class ProgramError(ValueError):
    """The program cannot be debugged as given (missing file, syntax error, bad entry expression)."""


class Program(BaseModel):
    source: str
    path: str = "<program>"  # shown in stack frames; the file is never executed from this path
    entry: str | None = None  # an expression such as `f([1, 2])`, evaluated after the script's definitions
    argv: list[str] = []  # sys.argv[1:] for the oracle tracer's run; the model never sees them

    @classmethod
    def load(cls, path: str | Path, entry: str | None = None, argv: list[str] | None = None) -> Program:
        p = Path(path)
        try:
            source = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ProgramError(f"no such file: {path}") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ProgramError(f"cannot read {path}: {exc}") from None
        program = cls(source=source, path=str(p.resolve()), entry=entry, argv=list(argv or []))
        program.check()
        return program

    def check(self) -> None:
        """Raise ProgramError for a syntax error in the script, or an entry that is not a call expression."""
        try:
            safe_ast.parse(self.source, filename=self.path)
        except SyntaxError as exc:
            raise ProgramError(f"syntax error in {self.path} line {exc.lineno}: {exc.msg}") from None
        if self.entry is not None:
            try:
                tree = safe_ast.parse(self.entry, mode="eval")
            except SyntaxError as exc:
                raise ProgramError(f"entry {self.entry!r} is not an expression: {exc.msg}") from None
            if not isinstance(tree.body, ast.Call):  # `f` alone or `1 + 2` would run and stop nowhere
                raise ProgramError(f"entry {self.entry!r} is not a call: write the call to debug, e.g. f(1, 2)")

    @property
    def lines(self) -> list[str]:
        return self.source.splitlines()

    def code_lines(self) -> frozenset[int]:
        """The lines that have bytecode, i.e. where a line event (so a breakpoint) can happen. Compiled,
        never run."""
        stack = [compile(self.source, self.path, "exec", dont_inherit=True)]
        lines: set[int] = set()
        while stack:
            code = stack.pop()
            lines.update(line for _, _, line in code.co_lines() if line)
            stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
        return frozenset(lines)


def return_lines(source: str, function: str) -> list[int]:
    """Lines of the `return` statements of the top-level `function` (not of functions nested in it);
    its last line when it has none. ProgramError for a syntax error or when no such function exists."""
    try:
        tree = safe_ast.parse(source)
    except SyntaxError as exc:
        raise ProgramError(f"syntax error line {exc.lineno}: {exc.msg}") from None
    func = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function), None)
    if func is None:
        raise ProgramError(f"the program defines no top-level function {function!r}")
    lines: set[int] = set()
    todo: list[ast.AST] = list(func.body)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Return):
            lines.add(node.lineno)
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
            todo.extend(ast.iter_child_nodes(node))
    return sorted(lines) or [func.body[-1].lineno]


def return_line(source: str, function: str, returned: str) -> int:
    """The line input inference starts from, where `function` returned the value whose repr is
    `returned` (which return ran is not known): the last `return LITERAL` line whose literal is that
    value, else the last return line that is not a literal, else the last one. A `return LITERAL`
    returns only that literal (`return 'pp'` never returns 'v'). ProgramError as return_lines."""
    lines = return_lines(source, function)
    try:
        value = safe_ast.literal_eval(returned)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return lines[-1]
    literals: dict[int, object] = {}
    for node in ast.walk(safe_ast.parse(source)):
        if isinstance(node, ast.Return) and node.lineno in lines:
            try:
                literals[node.lineno] = None if node.value is None else ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                literals[node.lineno] = _NOT_A_LITERAL
    same = [n for n in lines if literals.get(n, _NOT_A_LITERAL) is not _NOT_A_LITERAL and _equal(literals[n], value)]
    other = [n for n in lines if literals.get(n, _NOT_A_LITERAL) is _NOT_A_LITERAL]
    return (same or other or lines)[-1]


_NOT_A_LITERAL = object()


def _equal(a: object, b: object) -> bool:
    try:
        return bool(a == b) and type(a) is type(b)
    except Exception:  # an odd comparison: say nothing
        return False
