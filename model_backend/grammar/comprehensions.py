"""Comprehensions: the calls of a comprehension's code object and the steps of its loop.

`symbol_table(source)` reads the program's scopes, `comprehension_calls(top, tree)` the calls of a
list, set or dict comprehension where it stands (`ComprehensionCall`: the iterator given as `.0`
(`IteratorSource`), the free names it reads), `comprehension_loops(tree)` the comprehensions whose
loop the grammar follows element by element (`ComprehensionLoop`), and
`nested_comprehension_loops(tree)` those nested inside another's element. Derived from the source
text alone, never by running it.
"""

from __future__ import annotations

import ast
import symtable
from collections.abc import Iterator
from dataclasses import dataclass, replace

from model_backend.grammar.loops import LoopArgument, is_enumerate, range_arguments_of
from model_backend.grammar.syntax import (
    COMPREHENSION_NODES,
    STORE_BUILTINS,
    bound_names,
    defines_a_class,
    inert_expression,
    may_print_a_container,
    reads_only,
    statements_binding_names,
    statements_with_a_value,
)
from model_backend.grammar.values import expression_reads

_COMPREHENSIONS_BUILT = (ast.ListComp, ast.SetComp, ast.DictComp)  # called where they stand, unlike a genexpr
_COMPREHENSION_CODE = {ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>", ast.DictComp: "<dictcomp>"}
_ITERATOR_OF_DISPLAY = {ast.List: "list_iterator", ast.Tuple: "tuple_iterator", ast.Set: "set_iterator",
                        ast.Dict: "dict_keyiterator"}
# A comprehension's `.0` at its call event: ("name", the variable whose value it iterates: its iterator's
# type follows from that value's repr) or ("type", the iterator's type name); None where unknown.
IteratorSource = tuple[str, str] | None
ComprehensionCall = tuple[IteratorSource, tuple[str, ...], frozenset[str]]  # `.0`, free names, names to check


def _rebound(tree: ast.Module, name: str) -> bool:
    return any((isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load))
               or (isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and n.name == name)
               or (isinstance(n, ast.arg) and n.arg == name)
               or (isinstance(n, ast.alias) and (n.asname or n.name) == name) for n in ast.walk(tree))


def _iterator_source(node: ast.expr, range_is_builtin: bool) -> IteratorSource:
    if isinstance(node, ast.Name):
        return ("name", node.id)
    if type(node) in _ITERATOR_OF_DISPLAY and not (isinstance(node, ast.Dict) and None in node.keys):
        return ("type", _ITERATOR_OF_DISPLAY[type(node)])
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return ("type", "str_ascii_iterator" if node.value.isascii() else "str_iterator")
    if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
        return ("type", "bytes_iterator")
    if _is_range_call(node, range_is_builtin):
        return ("type", "range_iterator")
    return None


def _is_range_call(node: ast.expr, range_is_builtin: bool) -> bool:
    return (range_is_builtin and isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "range" and not node.keywords
            and all(inert_expression(a) and not isinstance(a, ast.Starred) for a in node.args))


def symbol_table(source: str) -> symtable.SymbolTable | None:
    """The compiler's symbol table of the program (None if it cannot be built): read, never run."""
    try:
        return symtable.symtable(source, "<program>", "exec")
    except (SyntaxError, ValueError, RecursionError):
        return None


def comprehension_calls(top: symtable.SymbolTable | None, tree: ast.Module) -> dict[tuple[int, str], ComprehensionCall]:
    """(line, "<listcomp>" | "<setcomp>" | "<dictcomp>") -> what its call event's locals hold, for lines that
    hold one statement, on that line alone, with one comprehension (and no generator expression or
    lambda), which runs before anything else of the statement could change an object: the statement is
    `name = <comp>`, `return <comp>`, `<comp>` alone, or a call of a name or of a name's method with the
    comprehension as its first argument; and the first `for`'s iterable is an inert expression or
    `range(...)`. Its frame then starts with `.0` (the iterable's iterator) and the free names it uses
    from the frame around it (symtable), holding that frame's values. The caller checks that the names
    the iterable reads (and a method's receiver) hold builtin values. Empty for a program with a class."""
    if top is None or defines_a_class(tree):
        return {}
    frees: dict[tuple[int, str], list[tuple[str, ...]]] = {}
    tables = [top]
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        name = table.get_name()
        if table.get_type() == "function" and name in ("listcomp", "setcomp", "dictcomp"):
            code = f"<{name}>"
            frees.setdefault((table.get_lineno(), code), []).append(tuple(table.get_frees()))  # type: ignore[attr-defined]
    range_is_builtin = not _rebound(tree, "range")
    found: dict[tuple[int, str], ComprehensionCall] = {}
    for node in statements_with_a_value(tree):
        frames = [n for n in ast.walk(node) if isinstance(n, (*_COMPREHENSIONS_BUILT, ast.GeneratorExp, ast.Lambda))]
        if len(frames) != 1 or not isinstance(frames[0], _COMPREHENSIONS_BUILT):
            continue
        comp, value = frames[0], node.value
        reads: set[str] = set()
        if value is not comp:
            if not (isinstance(value, ast.Call) and value.args and value.args[0] is comp):
                continue
            func = value.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                reads.add(func.value.id)  # a method of a builtin value: looking it up runs nothing
            elif not isinstance(func, ast.Name):
                continue
        first = comp.generators[0].iter
        if not (inert_expression(first) or _is_range_call(first, range_is_builtin)):
            continue
        reads |= {n.id for n in ast.walk(first) if isinstance(n, ast.Name)} - {"range"}
        code = _COMPREHENSION_CODE[type(comp)]
        names = frees.get((comp.lineno, code), [])
        if len(names) != 1:
            continue
        found[(node.lineno, code)] = (_iterator_source(first, range_is_builtin), names[0], frozenset(reads))
    return found


@dataclass(frozen=True)
class ComprehensionLoop:
    """A list, set or dict comprehension whose elements the shown values can tell (see comprehension_loops)."""

    targets: tuple[str, ...]  # its variable; (key, value) over `.items()`; (counter, element) over enumerate
    kind: str  # "name": over `iterated`; "items": over `iterated.items()`; "enumerate"; "range"; "expression"
    iterated: str | None  # the variable whose value it iterates (None for `range(...)`)
    range_arguments: tuple[LoopArgument, ...]
    count_from: int  # enumerate's start
    reads: frozenset[str]  # the variables it reads from outside: each must hold a value of the builtin types
    makes_frames: bool  # whether its parts hold a comprehension of their own, where step_into stops
    # Whether the whole statement only reads (no method called after it, as in `xs.extend([...])`): then a
    # step from its return finds the caller's values as they were but for `result`, the name
    # `result = <comprehension>` binds
    statement_reads_only: bool = False
    result: str | None = None
    # kind "expression": the iterable builtins build from variables (model_backend/grammar/evaluation.py)
    expression: ast.expr | None = None
    node: ast.expr | None = None  # the comprehension itself: what it returns, computed on the caller's values


def _comprehension_loop(comp: ast.ListComp | ast.SetComp | ast.DictComp, bound: set[str],
                        builtins: frozenset[str]) -> ComprehensionLoop | None:
    """The loop of a comprehension with one `for` over a variable, `VARIABLE.items()`, `enumerate(VARIABLE[,
    INT])`, `range(ARGS)` or what builtins build from variables (values.expression_reads), whose parts
    only read (reads_only); None for anything else."""
    loop = _comprehension_loop_of(comp, bound, builtins)
    return replace(loop, node=comp) if loop is not None else None


def _comprehension_loop_of(comp: ast.ListComp | ast.SetComp | ast.DictComp, bound: set[str],
                           builtins: frozenset[str]) -> ComprehensionLoop | None:
    reads = reads_only(comp, builtins, bound)
    if reads is None or len(comp.generators) != 1 or comp.generators[0].is_async:
        return None
    target, iterable = comp.generators[0].target, comp.generators[0].iter
    if isinstance(target, ast.Name):
        names: tuple[str, ...] = (target.id,)
    elif (isinstance(target, ast.Tuple) and len(target.elts) == 2 and all(isinstance(e, ast.Name) for e in target.elts)
          and target.elts[0].id != target.elts[1].id):  # type: ignore[attr-defined]
        names = tuple(e.id for e in target.elts)  # type: ignore[attr-defined]
    else:
        return None
    makes_frames = any(isinstance(n, (*COMPREHENSION_NODES, ast.Lambda)) for n in ast.walk(comp) if n is not comp)
    if len(names) == 1 and isinstance(iterable, ast.Name):
        return ComprehensionLoop(names, "name", iterable.id, (), 0, reads, makes_frames)
    if len(names) == 1 and (arguments := range_arguments_of(iterable, bound)) is not None:
        return ComprehensionLoop(names, "range", None, tuple(arguments), 0, reads, makes_frames)
    if len(names) == 2 and is_enumerate(iterable, bound):
        assert isinstance(iterable, ast.Call)
        start = iterable.args[1].value if len(iterable.args) == 2 else 0  # type: ignore[attr-defined]
        return ComprehensionLoop(names, "enumerate", iterable.args[0].id, (), start, reads, makes_frames)  # type: ignore[attr-defined]
    if (len(names) == 2 and isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute)
            and iterable.func.attr == "items" and isinstance(iterable.func.value, ast.Name)
            and not iterable.args and not iterable.keywords):
        return ComprehensionLoop(names, "items", iterable.func.value.id, (), 0, reads, makes_frames)
    if expression_reads(iterable, bound) is not None:
        return ComprehensionLoop(names, "expression", None, (), 0, reads, makes_frames, expression=iterable)
    return None


def comprehension_loops(tree: ast.Module) -> dict[tuple[int, str], ComprehensionLoop]:
    """(line, "<listcomp>" | "<setcomp>" | "<dictcomp>") -> its loop, for a comprehension called by the
    statement that holds it, alone on its line, where it is the only one of its kind outside other
    comprehensions: `x = ...`, `return ...` or `...` alone, whose parts read only (reads_only), but for
    a function or the method of a variable called last (`g([...])`, `xs.extend([...])`: the call runs
    after its arguments).

    CPython 3.11 runs such a comprehension on its line: a call event, a line event before the first
    element, then for each element a line event with its variable(s) bound to it (the jump back to the
    loop's top), and the return event once the iterable is done. If every variable it reads holds a
    value of the builtin types, nothing else runs and no object changes, so the iterable is what the
    caller showed at the line event of the call, and the trail's count of line events says which element
    a step takes (model_backend/grammar/frame.py). Empty for a program that defines a class or whose
    own objects could print like a container."""
    found: dict[tuple[int, str], ComprehensionLoop | None] = {}
    for node, comp, last_called, bound, builtins in _statement_comprehensions(tree):
        key = (node.lineno, _COMPREHENSION_CODE[type(comp)])
        loop = _comprehension_loop(comp, bound, builtins)
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else None
        result = target.id if isinstance(target, ast.Name) and comp is node.value else None
        found[key] = None if key in found or loop is None else replace(
            loop, statement_reads_only=not last_called, result=result)
    return {key: loop for key, loop in found.items() if loop is not None}


def nested_comprehension_loops(tree: ast.Module) -> dict[tuple[int, str], tuple[str, ComprehensionLoop]]:
    """(line, the inner one's code name) -> (the outer one's code name, the inner one's loop), for a list,
    set or dict comprehension that is the one part making a frame in the element of a comprehension
    comprehension_loops follows (`[[0 for _ in range(cols)] for _ in range(rows)]`), whose iterable reads
    none of the outer one's variables. The outer one calls it once per element, after its line event, so
    that line event shows what it iterates (read only, as in comprehension_loops); and when it returns,
    the outer one goes on to its next line event with its variables bound to the element taken."""
    found: dict[tuple[int, str], tuple[str, ComprehensionLoop] | None] = {}
    for node, comp, _, bound, builtins in _statement_comprehensions(tree):
        outer = _comprehension_loop(comp, bound, builtins)
        inner = [n for n in ast.walk(comp) if n is not comp and isinstance(n, (*COMPREHENSION_NODES, ast.Lambda))]
        if outer is None or len(inner) != 1 or not isinstance(inner[0], _COMPREHENSIONS_BUILT):
            continue
        results = [comp.key, comp.value] if isinstance(comp, ast.DictComp) else [comp.elt]
        if not any(inner[0] is n for result in results for n in ast.walk(result)):
            continue  # in a condition, or the outer one's own iterable
        loop = _comprehension_loop(inner[0], bound, builtins)
        iterable = inner[0].generators[0].iter
        if loop is None or {n.id for n in ast.walk(iterable) if isinstance(n, ast.Name)} & set(outer.targets):
            continue
        key = (node.lineno, _COMPREHENSION_CODE[type(inner[0])])
        found[key] = None if key in found else (_COMPREHENSION_CODE[type(comp)], loop)
    return {key: pair for key, pair in found.items() if pair is not None}


def _statement_comprehensions(tree: ast.Module) -> Iterator[
        tuple[ast.Assign | ast.AnnAssign | ast.Expr | ast.Return, ast.ListComp | ast.SetComp | ast.DictComp, bool,
              set[str], frozenset[str]]]:
    """The comprehensions outside other comprehensions of each statement comprehension_loops takes, with
    whether a method is called after them, the names the program binds, and the builtins that only read."""
    if defines_a_class(tree) or may_print_a_container(tree):
        return
    bound = bound_names(tree)
    builtins = frozenset(STORE_BUILTINS - bound - {"print"})  # nothing may print while the grammar skips the output
    for node in statements_binding_names(tree):
        value = node.value
        assert value is not None
        # a function or a variable's method called last, after its arguments (`g([...])`, `xs.extend([...])`);
        # a builtin that only reads is part of what the statement reads instead
        last_called = isinstance(value, ast.Call) and (
            isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name)
            or isinstance(value.func, ast.Name) and value.func.id not in builtins)
        parts = [*value.args, *(k.value for k in value.keywords)] if isinstance(value, ast.Call) and last_called else [value]
        if any(reads_only(part, builtins, bound) is None for part in parts):
            continue
        outer: list[ast.AST] = list(parts)
        while outer:
            part = outer.pop()
            if isinstance(part, _COMPREHENSIONS_BUILT):
                yield node, part, last_called, bound, builtins
            if not isinstance(part, (*COMPREHENSION_NODES, ast.Lambda)):
                outer.extend(ast.iter_child_nodes(part))
