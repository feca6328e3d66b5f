"""Bindings: the names a step binds, and the values of assignments and imports.

`line_bindings(tree)` maps each line to the names a step from there can bind (a diff of the locals may
name only those, a name a call can rebind through `global` or `nonlocal`, or one whose value may be a
mutable object), `simple_assignments(tree, max_repr)` gives the value a line that only assigns a
literal or another name binds, `computed_values(tree)` the assignments and returns whose value is an
expression of variables, operators and builtins, `imported_values(tree, max_repr)` the values an
import of a known standard module binds, and `value_repr(node, shown, max_repr)` the repr of such an
expression on the values a state shows. Derived from the source text alone, never by running it.
"""

from __future__ import annotations

import ast
import importlib
import types
from collections.abc import Mapping

from model_backend.grammar.evaluation import value_of
from model_backend.grammar.syntax import (
    Lines,
    as_operation,
    except_lines,
    header_lines,
    header_parts,
    line_span,
    may_print_a_container,
    names_bound,
    program_names,
    statements_per_line,
)
from model_backend.grammar.values import Unknown, expression_reads, holds_a_set
from model_backend.tracer import safe_repr


def line_bindings(tree: ast.Module) -> dict[int, frozenset[str]]:
    """Line -> the names a step from a line event there can bind in that frame (every statement whose
    header holds the line; a def or class binds its name). Empty when the program binds names in ways
    the text does not show (`from m import *`)."""
    result: dict[int, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            return {}
        spans: list[tuple[Lines, set[str]]] = []
        if isinstance(node, ast.stmt):
            names = names_bound(header_parts(node))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            spans.append((header_lines(node), names))
        elif isinstance(node, ast.ExceptHandler):
            spans.append((except_lines(node),
                          {node.name} if node.name else set()))
        elif isinstance(node, ast.match_case):
            last = node.guard.end_lineno if node.guard else node.pattern.end_lineno
            spans.append((line_span(node.pattern.lineno, last), names_bound([node.pattern, *([node.guard] if node.guard else [])])))
        for lines, names in spans:
            for line in lines:
                result.setdefault(line, set()).update(names)
    return {line: frozenset(names) for line, names in result.items()}


def simple_assignments(tree: ast.Module, max_repr: int) -> tuple[dict[int, tuple[str, str]], dict[int, tuple[str, str]]]:
    """Lines that hold nothing but `name = <literal>` (or a builtin type called with no arguments, such as
    `list()`) or `name = other` (or `name: T = ...`), as two maps:
    line -> (name, repr of the literal) and line -> (name, other). After a step from such a line's event
    to the next line of the frame, `name` holds exactly that literal, shown as the tracer shows it (its
    `safe_repr`: cut at `max_repr` characters, then "..."), or the very object `other` held, so the
    same repr. A literal is read with ast.literal_eval, which evaluates no code. Sets are left out: a set
    of several elements may print in another order than it was written. Names declared global or
    nonlocal are left out: the binding is not the frame's own."""
    bound, shared, starts = program_names(tree)
    literals: dict[int, tuple[str, str]] = {}
    copies: dict[int, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target: ast.expr = node.targets[0]
        elif isinstance(node, ast.AnnAssign) and node.value is not None and node.simple:
            target = node.target
        else:
            continue
        value_node = node.value
        if (not isinstance(target, ast.Name) or target.id in shared or value_node is None
                or node.lineno != node.end_lineno or starts.get(node.lineno) != 1):
            continue
        if isinstance(value_node, ast.Name):
            if value_node.id != target.id:
                copies[node.lineno] = (target.id, value_node.id)
            continue
        if (isinstance(value_node, ast.Call) and isinstance(value_node.func, ast.Name) and not value_node.args
                and not value_node.keywords and value_node.func.id in _EMPTY_VALUES and value_node.func.id not in bound):
            literals[node.lineno] = (target.id, _EMPTY_VALUES[value_node.func.id])
            continue
        try:
            value = ast.literal_eval(value_node)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            continue
        if not holds_a_set(value):
            literals[node.lineno] = (target.id, safe_repr(value, max_repr))
    return literals, copies


# What a builtin type called without arguments makes (`lis = list()`), as its repr
_EMPTY_VALUES = {"list": "[]", "dict": "{}", "set": "set()", "tuple": "()", "str": "''", "int": "0", "float": "0.0",
                 "bool": "False", "frozenset": "frozenset()"}


def computed_values(tree: ast.Module) -> tuple[dict[int, tuple[tuple[str, ...], ast.expr]], dict[int, ast.expr]]:
    """Two maps, for lines that hold one statement, on one line, whose expression is made of variables,
    operators and builtins (values.expression_reads) in a program none of whose own objects could print
    like a literal (may_print_a_container; any other object's repr is no literal, and evaluation.py then
    says nothing): line -> (the names, the expression) for `NAME = EXPR`, `A, B = EXPR` and `NAME op=
    EXPR` (as `NAME op EXPR`), and line -> the expression for `return EXPR`. On values of the builtin types such an expression runs no
    code of the program, so the values shown at the line's event give what the step binds or returns
    (model_backend/grammar/frame.py). Names declared global or nonlocal are left out."""
    if may_print_a_container(tree):
        return {}, {}
    bound, shared, starts = program_names(tree)
    assigned: dict[int, tuple[tuple[str, ...], ast.expr]] = {}
    returned: dict[int, ast.expr] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Return):
            continue
        if node.value is None or node.end_lineno != node.lineno or starts.get(node.lineno) != 1:
            continue
        value: ast.expr = node.value
        if isinstance(node, ast.Return):
            if not isinstance(value, ast.Name) and expression_reads(value, bound) is not None:
                returned[node.lineno] = value
            continue
        if isinstance(node, ast.AugAssign):
            if not isinstance(node.target, ast.Name):
                continue  # a store into an item: containers.mutations
            value = as_operation(node)
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if len(targets) != 1:
            continue
        target = targets[0]
        if isinstance(target, ast.Name):
            names: tuple[str, ...] = (target.id,)
        elif isinstance(target, ast.Tuple) and all(isinstance(e, ast.Name) for e in target.elts):
            names = tuple(e.id for e in target.elts)  # type: ignore[attr-defined]
        else:
            continue
        if len(set(names)) != len(names) or set(names) & shared or expression_reads(value, bound) is None:
            continue
        if isinstance(value, ast.Constant | ast.Name):
            continue  # simple_assignments' literals and copies
        assigned[node.lineno] = (names, value)
    return assigned, returned


# Standard-library modules that import without side effects and whose functions, classes and constants
# print the same on any machine with this Python (a module object does not: its repr names its file).
_KNOWN_MODULES = frozenset({"__future__", "math", "string", "collections", "functools", "itertools", "operator",
                            "heapq", "bisect", "re", "copy", "typing", "statistics", "fractions", "decimal"})


def imported_values(tree: ast.Module, max_repr: int) -> dict[int, tuple[tuple[str, str], ...]]:
    """Line -> (name, repr) for each name bound by a line that holds nothing but `from MODULE import a
    [as b], ...` with MODULE one of _KNOWN_MODULES. After the step, the names hold the module's
    attributes, read here from the same standard library (importing it runs no code of the program).
    Lines that import a module object, a name the module lacks (an ImportError) or `*` are left out."""
    starts = statements_per_line(tree)
    found: dict[int, tuple[tuple[str, str], ...]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in _KNOWN_MODULES
                and node.lineno == node.end_lineno and starts.get(node.lineno) == 1):
            continue
        module = importlib.import_module(node.module)  # type: ignore[arg-type]
        values: dict[str, str] = {}
        for alias in node.names:
            value = getattr(module, alias.name, None) if alias.name != "*" else None
            if value is None or isinstance(value, types.ModuleType):
                break
            values[alias.asname or alias.name] = safe_repr(value, max_repr)
        else:
            found[node.lineno] = tuple(values.items())
    return found


def value_repr(node: ast.expr, shown: Mapping[str, str], max_repr: int) -> str | None:
    """The repr of `node`'s value on the values `shown` holds, cut as the tracer cuts it (at `max_repr`
    characters, then "..."); None where they do not tell, or for a value that is or holds a set."""
    value = value_of(node, shown)
    if value is Unknown or holds_a_set(value) or isinstance(value, range):
        return None  # a range's repr is fine too, but the tracer writes `range(0, 3)`: keep it simple
    text = repr(value)
    return text if len(text) <= max_repr else text[:max_repr] + "..."
