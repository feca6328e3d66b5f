"""Loops: `for` over range, enumerate and shown iterables, and each element step.

`for_loops(tree)` gives the `for` headers whose iterable is made of variables, constants and
builtins (`ForLoop`: its targets, its range arguments (`LoopArgument`, read by `range_arguments_of`),
whether it enumerates (`is_enumerate`), and the checks that its body does not change what it
iterates), and `iterable_elements(node, shown, max_repr)` the elements such an iterable gives on the
values a state shows: the next element a loop step binds. Derived from the source text alone, never
by running it.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from dataclasses import dataclass

from model_backend.grammar.evaluation import ITERABLES, value_of
from model_backend.grammar.syntax import (
    READING_BUILTINS,
    may_print_a_container,
    names_bound,
    program_names,
)
from model_backend.grammar.values import MAX_ELEMENTS, expression_reads, holds_a_set

# An argument of `range(...)` in a `for` header: ("int", digits), ("name", variable) or ("len", variable).
LoopArgument = tuple[str, str]
_FUNCTION_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(frozen=True)
class ForLoop:
    """A `for NAME in ITERABLE:` header whose next element the shown values can tell (see for_loops)."""

    target: str
    iterated: str | None  # `for NAME in iterated:`; None for a loop over `range(...)`
    range_arguments: tuple[LoopArgument, ...]
    body: tuple[int, int]  # the first and last line of the loop's body (its `else` excluded)
    # Whether a step that goes round again can be known: the body never binds the variable, the
    # iterable's variable or a range argument's, and no `global` or `nonlocal` names them
    round_known: bool
    # Whether the variable unbound at the header means the loop starts (the body never deletes it)
    unbound_means_start: bool
    # For a list, a dict or a set, which the body could change while the loop runs: None where it may
    # (see _mutation_check), else (names it reads from outside, names whose object it may change)
    mutation_check: tuple[frozenset[str], frozenset[str]] | None
    # `for counter, target in enumerate(iterated[, count_from]):`; for a loop over `expression`, the
    # first of the two names it unpacks each element into (`for key, value in counts.items():`)
    counter: str | None = None
    count_from: int = 0
    # `for NAME in EXPRESSION:` (or two names), where builtins build the iterable from variables
    # (model_backend/grammar/evaluation.py): the elements are computed from their shown values
    expression: ast.expr | None = None


def _only_read(names: list[str], body: list[ast.stmt], builtins: frozenset[str]) -> bool:
    """Whether every use of these names in `body` reads their objects without changing them: `name[i]`,
    `x in name`, `for y in name`, or an argument of a reading builtin. No method of them is looked up,
    nothing is stored into them, and no function of the program receives them."""
    parents: dict[int, ast.AST] = {}
    for statement in body:
        for node in ast.walk(statement):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
    for statement in body:
        for node in ast.walk(statement):
            if not (isinstance(node, ast.Name) and node.id in names):
                continue
            parent = parents.get(id(node))
            if isinstance(parent, ast.Subscript) and parent.value is node and isinstance(parent.ctx, ast.Load):
                continue
            if isinstance(parent, ast.Compare) and node in parent.comparators and all(
                    isinstance(op, ast.In | ast.NotIn) for op in parent.ops):
                continue
            if isinstance(parent, ast.For | ast.comprehension) and parent.iter is node:
                continue
            if (isinstance(parent, ast.Call) and node in parent.args and isinstance(parent.func, ast.Name)
                    and parent.func.id in builtins):
                continue
            return False
    return True


def range_arguments_of(node: ast.expr, bound: set[str]) -> list[LoopArgument] | None:
    """The arguments of `range(...)` (the builtin), each an int literal, a variable or `len(VARIABLE)`;
    None for anything else."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"
            and "range" not in bound and 1 <= len(node.args) <= 3 and not node.keywords):
        return None
    arguments: list[LoopArgument] = []
    for arg in node.args:
        value = arg.operand if isinstance(arg, ast.UnaryOp) and isinstance(arg.op, ast.USub) else arg
        if isinstance(value, ast.Constant) and type(value.value) is int:
            arguments.append(("int", str(-value.value if value is not arg else value.value)))
        elif isinstance(arg, ast.Name):
            arguments.append(("name", arg.id))
        elif (isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) and arg.func.id == "len"
              and "len" not in bound and len(arg.args) == 1 and not arg.keywords and isinstance(arg.args[0], ast.Name)):
            arguments.append(("len", arg.args[0].id))
        else:
            return None
    return arguments


def for_loops(tree: ast.Module) -> dict[int, ForLoop]:
    """Header line -> the loop, for `for NAME in VARIABLE:`, `for I, NAME in enumerate(VARIABLE[, INT]):`,
    `for NAME in range(ARGS):` loops (each argument an int literal, a variable, or `len(VARIABLE)`) and
    `for NAME in EXPRESSION:` or `for A, B in EXPRESSION:` loops over what builtins build from variables
    (`sentence.split()`, `sorted(counts.items())`: model_backend/grammar/evaluation.py), whose header stands
    alone on its line with the body on lines after it. A step from the header's line event takes the iterable's next element or
    leaves the loop, and nothing else happens (iterating a value of the builtin types runs none of the
    program's code): the caller reads that element from the shown values (model_backend/grammar/
    frame.py). When the loop starts, the header has just evaluated the iterable, so the shown value
    is the one iterated; going round again, the flags say whether the shown values still tell where the
    iteration stands. Empty for a program that may print a container of its own
    (a class with a base, or a `__repr__`): such an object's repr could look like a list and iterate
    otherwise."""
    if may_print_a_container(tree):
        return {}
    bound, declared, starts = program_names(tree)
    builtins = frozenset(READING_BUILTINS - bound)
    enclosing: dict[int, ast.AST] = {}  # a loop -> the function (or module) whose frame runs it
    todo: list[tuple[ast.AST, ast.AST]] = [(tree, tree)]
    while todo:
        node, scope = todo.pop()
        if isinstance(node, ast.For):
            enclosing[id(node)] = scope
        inner = node if isinstance(node, _FUNCTION_SCOPES) else scope
        todo.extend((child, inner) for child in ast.iter_child_nodes(node))
    loops: dict[int, ForLoop] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.For):
            continue
        if node.iter.end_lineno != node.lineno or node.body[0].lineno <= node.lineno or starts.get(node.lineno) != 1:
            continue
        counter: str | None = None
        count_from = 0
        iterated: str | None = None
        arguments: list[LoopArgument] = []
        expression: ast.expr | None = None
        reads: frozenset[str] | None = frozenset()
        if (isinstance(node.target, ast.Tuple) and len(node.target.elts) == 2
                and all(isinstance(e, ast.Name) for e in node.target.elts) and is_enumerate(node.iter, bound)):
            counter, target = (e.id for e in node.target.elts)  # type: ignore[attr-defined]
            if counter == target:
                continue
            call = node.iter
            assert isinstance(call, ast.Call)
            count_from = call.args[1].value if len(call.args) == 2 else 0  # type: ignore[attr-defined]
            iterated = call.args[0].id  # type: ignore[attr-defined]
        elif isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Name):
            target, iterated = node.target.id, node.iter.id
        elif isinstance(node.target, ast.Name) and (in_range := range_arguments_of(node.iter, bound)) is not None:
            target, arguments = node.target.id, in_range
        elif (reads := expression_reads(node.iter, bound)) is not None and (names := _loop_targets(node.target)):
            expression = node.iter
            counter, target = names if len(names) == 2 else (None, names[0])
        else:
            continue
        variables = ([iterated] if iterated else []) + [text for kind, text in arguments if kind != "int"] + sorted(reads or ())
        stored = names_bound(list(node.body))
        targets = {target} | ({counter} if counter else set())
        round_known = not (targets | set(variables)) & (stored | declared)
        deleted = any(isinstance(n, ast.Name) and n.id in targets and isinstance(n.ctx, ast.Del)
                      for statement in node.body for n in ast.walk(statement))
        closures = [scope for scope in ast.walk(enclosing[id(node)]) if isinstance(scope, _FUNCTION_SCOPES)
                    and scope is not enclosing[id(node)]]
        alone = _only_read(variables, node.body, builtins) and not any(  # nor can a function the body calls reach them
            isinstance(n, ast.Name) and n.id in variables for scope in closures for n in ast.walk(scope))
        body = (node.body[0].lineno, node.body[-1].end_lineno or node.body[-1].lineno)
        check = _mutation_check(node, stored, bound, builtins, targets) if alone and round_known else None
        loops[node.lineno] = ForLoop(target, iterated, tuple(arguments), body, round_known,
                                     not deleted and not targets & declared, check, counter, count_from, expression)
    return loops


def _loop_targets(target: ast.expr) -> tuple[str, ...] | None:
    """The names of `for NAME in` or `for A, B in` (two different names); None for any other target."""
    if isinstance(target, ast.Name):
        return (target.id,)
    if (isinstance(target, ast.Tuple) and len(target.elts) == 2 and all(isinstance(e, ast.Name) for e in target.elts)
            and target.elts[0].id != target.elts[1].id):  # type: ignore[attr-defined]
        return tuple(e.id for e in target.elts)  # type: ignore[attr-defined]
    return None


def is_enumerate(node: ast.expr, bound: set[str]) -> bool:
    """`enumerate(VARIABLE)` or `enumerate(VARIABLE, INT)`, with the builtin enumerate."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "enumerate"
            and "enumerate" not in bound and not node.keywords and 1 <= len(node.args) <= 2
            and isinstance(node.args[0], ast.Name)
            and (len(node.args) == 1 or (isinstance(node.args[1], ast.Constant) and type(node.args[1].value) is int)))


def _mutation_check(loop: ast.For, stored: set[str], bound: set[str], builtins: frozenset[str], targets: set[str]
                    ) -> tuple[frozenset[str], frozenset[str]] | None:
    """What a step must check to know that the loop's body leaves a list, a dict or a set it iterates
    alone, given that the body names that object only to read it (_only_read). The body must call only
    reading builtins and methods of plain names it does not rebind, store only into plain names or items
    of plain names it does not rebind, and set no attribute. Then, if every name it reads from outside
    (bound somewhere in the program, not by the body) holds a value of the builtin types, no code of the
    program runs, and the body can change an object only through the names whose methods it calls, whose
    items it sets, or that it augments: none of those may be the iterated object, whose repr such an alias
    would show. Returns (names read from outside, names changed through), or None where the body may do
    more."""
    changed: set[str] = set()
    for statement in loop.body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name) and func.id in builtins:
                    continue
                if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id not in stored:
                    changed.add(func.value.id)
                    continue
                return None
            if isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
                if not (isinstance(node.value, ast.Name) and node.value.id not in stored):
                    return None
                changed.add(node.value.id)
            elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                return None
            elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                changed.add(node.target.id)  # `xs += ys` extends the list xs holds
    reads = {n.id for statement in loop.body for n in ast.walk(statement)
             if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in bound} - stored
    return frozenset(reads | changed) - targets, frozenset(changed) - targets  # an element, not the iterable


def iterable_elements(node: ast.expr, shown: Mapping[str, str], max_repr: int) -> list[object] | None:
    """The elements iterating `node` gives, on the values `shown` (name -> repr) holds, in order; None
    where those values do not tell, or an element's repr would be cut by the tracer at `max_repr`."""
    value = value_of(node, shown)
    if not isinstance(value, ITERABLES):
        return None
    elements = list(value)
    if len(elements) > MAX_ELEMENTS:
        return None
    if any(len(repr(e)) > max_repr or holds_a_set(e) for e in elements):
        return None
    return elements
