"""What one step can do inside a frame: a static, generous model of CPython 3.11's line events.

`next_lines(tree)` maps each line of a statement to the lines whose `line` event can come next in the
same frame when nothing else (no call, return or exception event) comes between: the rest of the
statement (a statement over several lines reports them in any order), the statement after it, the loop
header at the end of a loop body, the branches of an `if`, and so on. It over-approximates on purpose:
every `with` header, `except` line and `finally` block around a statement is added, since leaving a
block early runs them. `frame_ends(tree)` gives the lines from which a step can end in the frame's
return event, `line_bindings(tree)` maps each line to the names a step from there can bind,
`simple_assignments(tree)` gives the value a line that only assigns a literal or another name binds,
`must_call_lines(tree)` the lines that always call a function of the program before they end, and
`inert_lines(tree)` the lines that call nothing and change no object when the names they read hold
builtin values, `returned_names(tree)` the lines that only return a name, and `call_bindings(tree)` the
parameters of the one call a line makes, bound to the caller's names and literals.

Constrained decoding uses them after step_into or step_over from a line (model_backend/engine/
constraint.py): the next line must be one that can follow, a return must come from a line that can end
the frame, and a diff of the locals may name only a variable the line can bind, one a call can rebind
(`global`, `nonlocal`), or one whose value may be a mutable object (not after an inert line). This refuses the model's own mistakes (skipping a line, leaving a loop from its middle,
changing an int nobody assigned). Derived from the source text alone, never by running it, and checked
against traced programs (tests/test_flow.py) and every frame of our datasets (scripts/check_grammar.py).
"""

from __future__ import annotations

import ast
import builtins as _builtins_module
import copy
import importlib
import symtable
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from model_backend.engine.deduce import (
    MUTATOR_NAMES,
    READING_FUNCTIONS,
    READING_METHODS,
    expression_reads,
    holds_a_set,
    print_reads,
)
from model_backend.tracer import safe_repr

Lines = frozenset[int]
_EMPTY: Lines = frozenset()
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Module)
_BLOCKS = ("body", "orelse", "handlers", "finalbody", "cases")


def _span(first: int, last: int | None) -> Lines:
    return frozenset(range(first, (last if last is not None and last >= first else first) + 1))


def _header(node: ast.stmt) -> Lines:
    """The lines of a statement that run before its body: all of a simple statement, a compound one's
    first lines up to its body (decorators included)."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    body = getattr(node, "body", None)
    if isinstance(node, ast.Try | ast.TryStar):
        return frozenset({node.lineno})
    if isinstance(body, list) and body:
        return _span(first, max(node.lineno, body[0].lineno - 1))
    if isinstance(node, ast.Match):
        return _span(first, node.subject.end_lineno)
    return _span(first, node.end_lineno)


def _transparent(node: ast.stmt) -> bool:
    """Statements that may compile to no instruction, hence no line event of their own."""
    return isinstance(node, ast.Global | ast.Nonlocal) or (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))


def suspends(node: ast.AST) -> bool:
    """Whether the node's own code can yield or await: a nested def, lambda or class counts only for the
    parts that run where it stands (decorators, defaults, bases), not for its body."""
    todo: list[ast.AST] = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, ast.Yield | ast.YieldFrom | ast.Await):
            return True
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            todo.extend(_header_parts(current))
        elif isinstance(current, ast.Lambda):
            todo.append(current.args)
        else:
            todo.extend(ast.iter_child_nodes(current))
    return False


def is_generator_def(node: ast.AST) -> bool:
    """A def whose own body can yield or await: calling it makes a generator or coroutine, not a frame."""
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(suspends(st) for st in node.body)


def suspending_functions(tree: ast.Module) -> frozenset[str]:
    """Code names whose frames can yield or await: generator and coroutine defs, generator expressions."""
    names = {node.name for node in ast.walk(tree)
             if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and is_generator_def(node)}
    if any(isinstance(node, ast.GeneratorExp) for node in ast.walk(tree)):
        names.add("<genexpr>")
    return frozenset(names)


def _statements_per_line(tree: ast.Module) -> dict[int, int]:
    """Line -> how many statements start on it (more than one: `a = 1; b = 2`)."""
    starts: dict[int, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            starts[node.lineno] = starts.get(node.lineno, 0) + 1
    return starts


def _except_lines(handler: ast.ExceptHandler) -> Lines:
    """The lines of an `except E as e:` clause, which it tests (and binds `e`) on."""
    return _span(handler.lineno, handler.type.end_lineno if handler.type else handler.lineno)


class _Flow:
    def __init__(self, tree: ast.Module) -> None:
        # statement -> (the list it sits in, its index there, the node that owns the list, the list's name)
        self.place: dict[int, tuple[Sequence[ast.stmt], int, ast.AST, str]] = {}
        self.parent: dict[int, ast.AST] = {}
        for owner in ast.walk(tree):
            for name in _BLOCKS:
                block = getattr(owner, name, None)
                if not isinstance(block, list):
                    continue
                for index, child in enumerate(block):
                    if isinstance(child, ast.stmt):
                        self.place[id(child)] = (block, index, owner, name)
                    self.parent[id(child)] = owner
            for child in ast.iter_child_nodes(owner):
                self.parent.setdefault(id(child), owner)

    def first(self, node: ast.stmt) -> Lines:
        """The lines whose event can be the first one of running `node`."""
        lines = _header(node)
        if isinstance(node, ast.Try | ast.TryStar):
            lines |= self.first(node.body[0])
        if _transparent(node):
            lines |= self.after(node)
        return lines

    def after(self, node: ast.stmt) -> Lines:
        """The lines whose event can come once `node` has run to its end."""
        block, index, owner, name = self.place[id(node)]
        if index + 1 < len(block):
            return self.first(block[index + 1])
        return self.end_of_block(owner, name)

    def end_of_block(self, owner: ast.AST, name: str) -> Lines:
        if isinstance(owner, _SCOPES):
            return _EMPTY  # the frame returns
        if isinstance(owner, ast.ExceptHandler | ast.match_case):
            parent = self.parent[id(owner)]
            assert isinstance(parent, ast.stmt)
            if isinstance(parent, ast.Try | ast.TryStar) and parent.finalbody:
                return self.first(parent.finalbody[0])
            return self.after(parent)
        assert isinstance(owner, ast.stmt)
        if isinstance(owner, _LOOPS) and name == "body":
            lines = _header(owner)
            if isinstance(owner, ast.While):  # `while True:` jumps straight back into its body
                lines |= self.first(owner.body[0])
            return lines
        if isinstance(owner, ast.With | ast.AsyncWith):
            return _header(owner)  # __exit__ runs on the header's line
        if isinstance(owner, ast.Try | ast.TryStar):
            if name == "body" and owner.orelse:
                return self.first(owner.orelse[0])
            if name != "finalbody" and owner.finalbody:
                return self.first(owner.finalbody[0])
            return self.after(owner)
        return self.after(owner)  # if, a loop's else

    def after_loop(self, loop: ast.stmt) -> Lines:
        orelse = getattr(loop, "orelse", [])
        return self.after(loop) | (self.first(orelse[0]) if orelse else _EMPTY)

    def enclosing(self, node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
        """(ancestor, the child of it on the way down) pairs, up to the function or module."""
        while id(node) in self.parent:
            parent = self.parent[id(node)]
            yield parent, node
            if isinstance(parent, _SCOPES):
                return
            node = parent

    def successors(self, node: ast.stmt) -> Lines:
        """The lines whose event can follow one on a line of `node`'s header in the same frame."""
        lines = _header(node)  # a statement over several lines reports them in any order
        if len(lines) == 1 and not suspends(node):
            lines = _EMPTY  # one line reports once (a generator's yield resumes on its own line)
        if isinstance(node, ast.If):
            lines |= self.first(node.body[0]) | (self.first(node.orelse[0]) if node.orelse else self.after(node))
        elif isinstance(node, _LOOPS):
            lines |= self.first(node.body[0]) | self.after_loop(node)
        elif isinstance(node, ast.With | ast.AsyncWith):
            lines |= self.first(node.body[0]) | self.after(node)  # the header's line comes again at the exit
        elif isinstance(node, ast.Try | ast.TryStar):
            lines |= self.first(node.body[0])
        elif isinstance(node, ast.ClassDef):  # the class body's own frame starts on the header's lines
            lines |= self.first(node.body[0]) | self.after(node)
        elif isinstance(node, ast.Match):
            for case in node.cases:
                lines |= _span(case.pattern.lineno, case.pattern.end_lineno) | self.first(case.body[0])
                if case.guard is not None:
                    lines |= _span(case.guard.lineno, case.guard.end_lineno)
            lines |= self.after(node)
        elif isinstance(node, ast.Continue | ast.Break):
            loop = next((a for a, _ in self.enclosing(node) if isinstance(a, _LOOPS)), None)
            if loop is not None:
                lines |= _header(loop) if isinstance(node, ast.Continue) else self.after_loop(loop)
                if isinstance(node, ast.Continue) and isinstance(loop, ast.While):
                    lines |= self.first(loop.body[0])
        elif not isinstance(node, ast.Return | ast.Raise):
            lines |= self.after(node)  # every other statement, compound ones such as def and class included
        return lines | self.on_the_way_out(node)

    def reaches_end(self, node: ast.stmt) -> bool:
        """Whether running on past `node`'s end can fall off the end of its frame's code."""
        block, index, owner, name = self.place[id(node)]
        if not all(_transparent(later) for later in block[index + 1:]):
            return False
        if isinstance(owner, _SCOPES):
            return True
        if isinstance(owner, ast.ExceptHandler | ast.match_case):
            parent = self.parent[id(owner)]
            assert isinstance(parent, ast.stmt)
            return not (isinstance(parent, ast.Try | ast.TryStar) and parent.finalbody) and self.reaches_end(parent)
        assert isinstance(owner, ast.stmt)
        if (isinstance(owner, _LOOPS) and name == "body") or isinstance(owner, ast.With | ast.AsyncWith):
            return False  # back to the header's line first
        if isinstance(owner, ast.Try | ast.TryStar) and (
                (name == "body" and owner.orelse) or (name != "finalbody" and owner.finalbody)):
            return False  # the else or finally block runs first
        return self.reaches_end(owner)

    def may_end(self, node: ast.stmt) -> bool:
        """Whether a step from a line of `node`'s header can end in the frame's return event (a return,
        a yield, falling off the end; generously, anything in a `finally` block or a `with` header,
        which a return passes through)."""
        if isinstance(node, ast.Return | ast.With | ast.AsyncWith | ast.ClassDef) or suspends(node):
            return True
        if any(isinstance(a, ast.Try | ast.TryStar) and child in a.finalbody for a, child in self.enclosing(node)):
            return True
        if isinstance(node, ast.Raise | ast.Continue | ast.Try | ast.TryStar):
            return False
        if isinstance(node, ast.Break):
            loop = next((a for a, _ in self.enclosing(node) if isinstance(a, _LOOPS)), None)
            return loop is None or (isinstance(loop, ast.stmt) and self.reaches_end(loop))
        if isinstance(node, ast.If | ast.For | ast.AsyncFor | ast.While):
            return not node.orelse and self.reaches_end(node)
        return self.reaches_end(node)

    def on_the_way_out(self, node: ast.stmt) -> Lines:
        """What leaving the enclosing blocks early (an exception, a return, a break) can run next."""
        lines: set[int] = set()
        for ancestor, child in self.enclosing(node):
            if isinstance(ancestor, ast.With | ast.AsyncWith):
                lines |= _header(ancestor)
            elif isinstance(ancestor, ast.Try | ast.TryStar):
                if child in ancestor.body:
                    for handler in ancestor.handlers:
                        lines |= _except_lines(handler)
                if ancestor.finalbody and child not in ancestor.finalbody:
                    lines |= self.first(ancestor.finalbody[0])
            elif isinstance(ancestor, ast.ExceptHandler):  # the handler's `as` name is deleted on its line
                lines.add(ancestor.lineno)
        return frozenset(lines)


def next_lines(tree: ast.Module) -> dict[int, Lines]:
    """Line -> the lines that can come next in the same frame (a line of several statements: all of
    theirs). Lines outside any statement's header are absent."""
    flow = _Flow(tree)
    result: dict[int, set[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and id(node) in flow.place:
            following = flow.successors(node)
            for line in _header(node):
                result.setdefault(line, set()).update(following)
        if isinstance(node, ast.Try | ast.TryStar):
            for handler in node.handlers:  # `except E:` is tested on its line; a match enters the handler
                header = _except_lines(handler)
                tested = (header | flow.first(handler.body[0]) | flow.on_the_way_out(node)
                          | {h.lineno for h in node.handlers}
                          | (flow.first(node.finalbody[0]) if node.finalbody else flow.after(node)))
                for line in header:
                    result.setdefault(line, set()).update(tested)
    return {line: frozenset(lines) for line, lines in result.items()}


def frame_ends(tree: ast.Module) -> Lines:
    """The lines from which one step (step_into or step_over, from a line event) can end in the frame's
    return event. Together with `next_lines`' keys (the lines this knows about) it lets the grammar
    refuse a return the line cannot make, and a line event after a line that nothing can follow."""
    flow = _Flow(tree)
    ends: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and id(node) in flow.place and flow.may_end(node):
            ends.update(_header(node))
        elif isinstance(node, ast.ExceptHandler):  # left free
            ends.update(_except_lines(node))
    return frozenset(ends)


# ---- which names one step can bind ---------------------------------------------------------------

_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _header_parts(node: ast.stmt) -> list[ast.AST]:
    """The parts of a statement that its header's lines run (a compound statement's body runs later)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [*node.decorator_list, node.args, *([node.returns] if node.returns else [])]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    if isinstance(node, ast.If | ast.While):
        return [node.test]
    if isinstance(node, ast.For | ast.AsyncFor):
        return [node.target, node.iter]
    if isinstance(node, ast.With | ast.AsyncWith):
        return list(node.items)
    if isinstance(node, ast.Try | ast.TryStar):
        return []
    if isinstance(node, ast.Match):
        return [node.subject]
    return [node]


def _names_bound(parts: list[ast.AST]) -> set[str]:
    """Names these parts bind in the frame that runs them: assignment targets, imports, `as` names,
    capture patterns, and := targets (which leave a comprehension for the scope around it)."""
    names: set[str] = set()
    todo = list(parts)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        if isinstance(node, _NESTED_SCOPES):
            continue  # a def's or lambda's own names are its frame's (its defaults were listed as parts)
        if isinstance(node, _COMPREHENSIONS):
            names.update(n.target.id for n in ast.walk(node) if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name))
            continue
        todo.extend(ast.iter_child_nodes(node))
    return names


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
            names = _names_bound(_header_parts(node))
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            spans.append((_header(node), names))
        elif isinstance(node, ast.ExceptHandler):
            spans.append((_except_lines(node),
                          {node.name} if node.name else set()))
        elif isinstance(node, ast.match_case):
            last = node.guard.end_lineno if node.guard else node.pattern.end_lineno
            spans.append((_span(node.pattern.lineno, last), _names_bound([node.pattern, *([node.guard] if node.guard else [])])))
        for lines, names in spans:
            for line in lines:
                result.setdefault(line, set()).update(names)
    return {line: frozenset(names) for line, names in result.items()}


def shared_names(tree: ast.Module) -> frozenset[str]:
    """Names that code elsewhere can rebind during any call: those declared `global` or `nonlocal`."""
    return frozenset(n for node in ast.walk(tree) if isinstance(node, ast.Global | ast.Nonlocal) for n in node.names)


def simple_assignments(tree: ast.Module, max_repr: int) -> tuple[dict[int, tuple[str, str]], dict[int, tuple[str, str]]]:
    """Lines that hold nothing but `name = <literal>` (or a builtin type called with no arguments, such as
    `list()`) or `name = other` (or `name: T = ...`), as two maps:
    line -> (name, repr of the literal) and line -> (name, other). After a step from such a line's event
    to the next line of the frame, `name` holds exactly that literal, shown as the tracer shows it (its
    `safe_repr`: cut at `max_repr` characters, then "..."), or the very object `other` held, so the
    same repr. A literal is read with ast.literal_eval, which evaluates no code. Sets are left out: a set
    of several elements may print in another order than it was written. Names declared global or
    nonlocal are left out: the binding is not the frame's own."""
    starts = _statements_per_line(tree)
    shared = shared_names(tree)
    bound = _bound_names(tree)
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


def _plain_functions(tree: ast.Module) -> frozenset[str]:
    """Names that can only ever mean one plain function of the program: bound by a single undecorated
    `def` that cannot yield or await, and by nothing else anywhere (no other def, class, assignment,
    parameter, import, loop or `as` target, `global`/`nonlocal`). A load of such a name runs that
    function when called, or raises NameError."""
    defs: dict[str, int] = {}
    plain: set[str] = set()
    other: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs[node.name] = defs.get(node.name, 0) + 1
            if isinstance(node, ast.FunctionDef) and not node.decorator_list and not is_generator_def(node):
                plain.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            other.add(node.id)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            other.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            other.add(node.rest)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            other.update(node.names)
    return frozenset(name for name in plain if defs[name] == 1 and name not in other)


def _runs_a_call(node: ast.AST, functions: frozenset[str]) -> bool:
    """Whether evaluating the expression always starts a frame of the program (unless something raises
    first): a call of one of `functions` by name, or a list, set or dict comprehension (a frame of its
    own in CPython 3.11), outside the parts that may not run (the operands after the first of `and`/`or`,
    the branches of `x if c else y`, the comparisons after the first of a chain, a lambda's body, a
    generator expression's body)."""
    if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
        return True
    if isinstance(node, ast.BoolOp):
        parts: list[ast.AST] = [*node.values[:1]]
    elif isinstance(node, ast.IfExp):
        parts = [node.test]
    elif isinstance(node, ast.Compare):
        parts = [node.left, node.comparators[0]]
    elif isinstance(node, ast.Lambda):
        parts = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    elif isinstance(node, ast.GeneratorExp):
        parts = [node.generators[0].iter]
    else:
        parts = list(ast.iter_child_nodes(node))
    return any(_runs_a_call(part, functions) for part in parts)


def must_call_lines(tree: ast.Module) -> Lines:
    """Lines whose line event step_into must leave by a call event (or an exception): the line holds one
    statement, on that line alone, that always calls a function of the program before it ends (see
    _runs_a_call): a simple statement, or the test of an `if`, `elif` or `while`. Left out: `for` and
    `with` headers (a loop's or a with's later visits to the line evaluate nothing of it), a def or class
    line, an `assert`'s message, and anything that can yield or await."""
    functions = _plain_functions(tree)
    starts = _statements_per_line(tree)
    lines: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or starts[node.lineno] != 1:
            continue
        if isinstance(node, ast.If | ast.While):
            runs: list[ast.AST] = [node.test]
            last = node.test.end_lineno
        elif isinstance(node, ast.Assert):
            runs, last = [node.test], node.end_lineno
        elif isinstance(node, ast.AnnAssign):  # a local's annotation is never evaluated
            runs, last = [node.target, *([node.value] if node.value else [])], node.end_lineno
        elif isinstance(node, ast.Expr | ast.Assign | ast.AugAssign | ast.Return | ast.Delete | ast.Raise):
            runs, last = [node], node.end_lineno
        else:
            continue
        if last == node.lineno and not suspends(node) and any(_runs_a_call(part, functions) for part in runs):
            lines.add(node.lineno)
    return frozenset(lines)


# Expression nodes whose evaluation, on values of the builtin types alone, runs no code of the program
# and changes no object: displays, operators, comparisons, indexing, f-strings. Calls, attributes,
# comprehensions, `*`/`**` unpacking, lambdas, `:=`, yield and await are left out.
_INERT_NODES = (ast.Constant, ast.Name, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.BinOp, ast.UnaryOp, ast.BoolOp,
                ast.Compare, ast.IfExp, ast.Subscript, ast.Slice, ast.JoinedStr, ast.FormattedValue,
                ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


def _defines_a_class(tree: ast.Module) -> bool:
    """Whether the program defines a class: its instances' operators and reprs may be the program's code."""
    return any(isinstance(node, ast.ClassDef) for node in ast.walk(tree))


def _inert_expression(node: ast.AST) -> bool:
    for part in ast.walk(node):
        if not isinstance(part, _INERT_NODES):
            return False
        if isinstance(part, ast.Name | ast.Subscript | ast.List | ast.Tuple) and not isinstance(part.ctx, ast.Load):
            return False
        if isinstance(part, ast.Dict) and None in part.keys:  # `{**other}`
            return False
    return True


def _inert_statement(node: ast.stmt) -> bool:
    """Whether the statement's header evaluates only inert expressions and binds only plain names (a
    tuple of names only from a tuple display: unpacking anything else iterates it)."""
    if isinstance(node, ast.Pass | ast.Break | ast.Continue):
        return True
    if isinstance(node, ast.Expr | ast.Return | ast.If | ast.While):
        value = node.test if isinstance(node, ast.If | ast.While) else node.value
        return value is None or _inert_expression(value)
    if isinstance(node, ast.AnnAssign):  # a local's annotation is never evaluated
        return node.simple == 1 and node.value is not None and _inert_expression(node.value)
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Tuple | ast.List):
                if not (isinstance(node.value, ast.Tuple) and len(node.value.elts) == len(target.elts)
                        and all(isinstance(t, ast.Name) for t in target.elts)):
                    return False
            elif not isinstance(target, ast.Name):
                return False
        return _inert_expression(node.value)
    return False


def inert_lines(tree: ast.Module) -> dict[int, frozenset[str]]:
    """Line -> the names its statement reads, for lines where every statement whose header holds the
    line is inert: it calls nothing and changes no object, provided the names it reads hold values of
    the builtin types (the caller checks their reprs: a number, a string, a bool, None, a list, a tuple,
    a dict or a set). Then a step from the line changes no variable but those the line binds. Empty for
    a program that defines a class: an instance's operators and repr may be the program's own code."""
    if _defines_a_class(tree):
        return {}
    reads: dict[int, set[str]] = {}
    mixed: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        lines = _header(node)
        if not _inert_statement(node):
            mixed |= lines
            continue
        names = {n.id for part in _header_parts(node) for n in ast.walk(part)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for line in lines:
            reads.setdefault(line, set()).update(names)
    return {line: frozenset(names) for line, names in reads.items() if line not in mixed}


def _changed_through(node: ast.stmt, builtins: frozenset[str], bound: set[str]) -> set[str] | None:
    """The plain names through which a simple statement changes objects (`NAME[...] = ...`, `NAME[i][j]
    op= ...`, `NAME.method(...)`, `NAME op= ...`), where everything else it evaluates only reads
    (_reads_only, or a method of a plain name called with reading arguments); None for any other
    statement (an attribute set, a call of the program's code, a method of something else)."""
    changed: set[str] = set()

    def target_ok(target: ast.expr) -> bool:
        if isinstance(target, ast.Name):
            return True
        if isinstance(target, ast.Tuple | ast.List):
            return all(target_ok(t) for t in target.elts)
        if isinstance(target, ast.Subscript):
            base, keys = target.value, [target.slice]
            while isinstance(base, ast.Subscript):
                keys.append(base.slice)
                base = base.value
            if not isinstance(base, ast.Name):
                return False
            changed.add(base.id)
            return all(_reads_only(key, builtins, bound) is not None for key in keys)
        return False

    def value_ok(value: ast.expr) -> bool:
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name)
                and value.func.attr not in _READING_METHODS and value.func.value.id in bound):
            changed.add(value.func.value.id)
            arguments = [a.value if isinstance(a, ast.Starred) else a for a in value.args]
            return all(_reads_only(a, builtins, bound) is not None for a in [*arguments, *(k.value for k in value.keywords)])
        return _reads_only(value, builtins, bound) is not None and not any(
            isinstance(n, (*_COMPREHENSION_NODES, ast.Lambda)) for n in ast.walk(value))

    if isinstance(node, ast.Expr):
        return changed if value_ok(node.value) else None
    if isinstance(node, ast.Assign):
        return changed if all(target_ok(t) for t in node.targets) and value_ok(node.value) else None
    if isinstance(node, ast.AugAssign):
        if isinstance(node.target, ast.Name):
            changed.add(node.target.id)  # `xs += ys` extends the list xs holds
        return changed if target_ok(node.target) and value_ok(node.value) else None
    return None


def mutating_lines(tree: ast.Module) -> dict[int, tuple[frozenset[str], frozenset[str]]]:
    """Line -> (the names it reads, the names through which it changes objects), for lines that hold one
    simple statement changing objects only through plain names (_changed_through), in a program that
    defines no class and writes no `__repr__` or `__iter__` of its own. If every name read holds a value
    of the builtin types, no code of the program runs, and only the objects of those names can change,
    with whatever holds them or is held in them (the caller tells which by their reprs)."""
    if _defines_a_class(tree) or _may_print_a_container(tree):
        return {}
    bound = _bound_names(tree)
    builtins = frozenset(_STORE_BUILTINS - bound - {"print"})
    starts = _statements_per_line(tree)
    found: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
    for node in ast.walk(tree):
        if (not isinstance(node, ast.Expr | ast.Assign | ast.AugAssign) or starts.get(node.lineno) != 1
                or node.end_lineno != node.lineno):
            continue
        changed = _changed_through(node, builtins, bound)
        if not changed:
            continue  # None: not such a line; empty: it changes no object (inert_lines says more)
        reads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                 and n.id in bound} | changed
        found[node.lineno] = (frozenset(reads), frozenset(changed))
    return found


def computed_values(tree: ast.Module) -> tuple[dict[int, tuple[tuple[str, ...], ast.expr]], dict[int, ast.expr]]:
    """Two maps, for lines that hold one statement, on one line, whose expression is made of variables,
    operators and builtins (deduce.expression_reads) in a program none of whose own objects could print
    like a literal (_may_print_a_container; any other object's repr is no literal, and deduce.py then
    says nothing): line -> (the names, the expression) for `NAME = EXPR`, `A, B = EXPR` and `NAME op=
    EXPR` (as `NAME op EXPR`), and line -> the expression for `return EXPR`. On values of the builtin types such an expression runs no
    code of the program, so the values shown at the line's event give what the step binds or returns
    (model_backend/engine/constraint.py). Names declared global or nonlocal are left out."""
    if _may_print_a_container(tree):
        return {}, {}
    bound = _bound_names(tree)
    shared = shared_names(tree)
    starts = _statements_per_line(tree)
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
                continue  # a store into an item: flow.mutations
            value = _as_operation(node)
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


def printed_lines(tree: ast.Module) -> dict[int, ast.Call]:
    """Line -> the call, for lines that hold one statement, on one line, that is only `print(ARGS)` over
    expressions of variables, operators and builtins (deduce.print_reads), in a program none of whose own
    objects could print like a literal (_may_print_a_container) and that never names `stdout` (which it
    could redirect). On values of the builtin types such a line runs no code of the program, so the
    values shown at its event give what the step prints (deduce.printed_text)."""
    if _may_print_a_container(tree) or any(
            (isinstance(n, ast.Name) and "stdout" in n.id) or (isinstance(n, ast.Attribute) and "stdout" in n.attr)
            or (isinstance(n, ast.alias) and "stdout" in n.name) for n in ast.walk(tree)):
        return {}
    bound = _bound_names(tree)
    starts = _statements_per_line(tree)
    found: dict[int, ast.Call] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and node.end_lineno == node.lineno
                and starts.get(node.lineno) == 1 and print_reads(node.value, bound) is not None):
            found[node.lineno] = node.value
    return found


def mutations(tree: ast.Module) -> dict[int, tuple[str, ast.stmt, str | None]]:
    """Line -> (the container, the statement, the name bound to what a method returns), for lines that
    hold one statement, on one line, changing one list or dict through a plain name C: `C.method(ARGS)`
    or `X = C.method(ARGS)` with a method that changes it in place (deduce.MUTATOR_NAMES), `C[KEY] =
    VALUE`, `C[KEY] op= VALUE` or `del C[KEY]`, whose other parts are variables, operators and builtins
    (deduce.expression_reads), in a program none of whose own objects could print like a literal
    (_may_print_a_container). On values of the builtin types such a statement runs no code of the
    program, so the shown values give the container after it (deduce.mutation_reprs). Names declared global or nonlocal are left out."""
    if _may_print_a_container(tree):
        return {}
    bound = _bound_names(tree)
    shared = shared_names(tree)
    starts = _statements_per_line(tree)
    found: dict[int, tuple[str, ast.stmt, str | None]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Expr | ast.Assign | ast.AugAssign | ast.Delete):
            continue
        if node.end_lineno != node.lineno or starts.get(node.lineno) != 1:
            continue
        result: str | None = None
        parts: list[ast.expr]
        value = node.value if isinstance(node, ast.Expr | ast.Assign | ast.AugAssign) else None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name) \
                and value.func.attr in MUTATOR_NAMES and not isinstance(node, ast.AugAssign):
            if isinstance(node, ast.Assign):
                if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                    continue
                result = node.targets[0].id
            container = value.func.value.id
            parts = [*value.args, *(k.value for k in value.keywords)]
            if any(isinstance(a, ast.Starred) for a in value.args) or any(k.arg is None for k in value.keywords):
                continue
        elif isinstance(node, ast.Expr):
            continue
        else:
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            if len(targets) != 1 or not (isinstance(targets[0], ast.Subscript) and isinstance(targets[0].value, ast.Name)):
                continue
            index = targets[0].slice
            container = targets[0].value.id
            parts = ([b for b in (index.lower, index.upper, index.step) if b is not None]
                     if isinstance(index, ast.Slice) else [index]) + ([value] if value is not None else [])
        if {container, result} & shared or container == result or container not in bound:
            continue
        if all(expression_reads(part, bound) is not None for part in parts):
            found[node.lineno] = (container, node, result)
    return found


def returned_names(tree: ast.Module) -> dict[int, str]:
    """Line -> name, for lines that hold nothing but `return name`. A return event of the frame right
    after a step from such a line returns the very object the name held at the line's event (nothing
    runs between them that could rebind it), so its repr is that value's."""
    starts = _statements_per_line(tree)
    return {node.lineno: node.value.id for node in ast.walk(tree)
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Name)
            and node.lineno == node.end_lineno and starts.get(node.lineno) == 1}


def returned_tuples(tree: ast.Module) -> dict[int, tuple[str, ...]]:
    """Line -> names, for lines that hold nothing but `return a, b, ...` (plain names): the return event
    right after a step from such a line returns a new tuple of the objects the names held at the line's
    event, whose repr is made of theirs."""
    starts = _statements_per_line(tree)
    return {node.lineno: tuple(e.id for e in node.value.elts) for node in ast.walk(tree)  # type: ignore[attr-defined]
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and node.value.elts
            and all(isinstance(e, ast.Name) for e in node.value.elts)
            and node.lineno == node.end_lineno and starts.get(node.lineno) == 1}


# Standard-library modules that import without side effects and whose functions, classes and constants
# print the same on any machine with this Python (a module object does not: its repr names its file).
_KNOWN_MODULES = frozenset({"__future__", "math", "string", "collections", "functools", "itertools", "operator",
                            "heapq", "bisect", "re", "copy", "typing", "statistics", "fractions", "decimal"})


def imported_values(tree: ast.Module, max_repr: int) -> dict[int, tuple[tuple[str, str], ...]]:
    """Line -> (name, repr) for each name bound by a line that holds nothing but `from MODULE import a
    [as b], ...` with MODULE one of _KNOWN_MODULES. After the step, the names hold the module's
    attributes, read here from the same standard library (importing it runs no code of the program).
    Lines that import a module object, a name the module lacks (an ImportError) or `*` are left out."""
    starts = _statements_per_line(tree)
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


@dataclass(frozen=True)
class TruthTest:
    """An `if NAME:`, `elif not NAME:` or `while NAME:` header (see truth_tests)."""

    name: str
    negated: bool
    taken: Lines  # where a true test goes: the first line of the body
    skipped: Lines  # where a false one goes: the else branch, or past the statement (empty: the frame ends)
    # A test made of variables, operators and builtins (deduce.expression_reads) instead of a name
    expression: ast.expr | None = None


def truth_tests(tree: ast.Module) -> dict[int, TruthTest]:
    """Header line -> the test, for `if`, `elif` and `while` statements whose test is a plain name,
    `not` a name, or made of variables, operators and builtins (deduce.expression_reads: `len(word) ==
    1`, `i.isdigit()`), alone on the header's line, with the body on later lines. Testing such a test on
    values of the builtin types runs no code of the program, so the values shown at the header's line
    event say where a step goes (model_backend/engine/constraint.py). Empty for a program whose own
    objects could print like a literal (_may_print_a_container: a class with a base, a `__repr__` or
    `__iter__` of its own); another object of the program's shows a repr that is no literal, and then the
    test is left free (an object may be true or false as it likes)."""
    if _may_print_a_container(tree):
        return {}
    flow = _Flow(tree)
    starts = _statements_per_line(tree)
    bound = _bound_names(tree)
    found: dict[int, TruthTest] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.If | ast.While) or id(node) not in flow.place:
            continue
        test, negated = node.test, False
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, negated = test.operand, True
        expression = None if isinstance(test, ast.Name) else node.test
        if ((expression is not None and expression_reads(expression, bound) is None)
                or node.test.end_lineno != node.lineno or starts.get(node.lineno) != 1
                or node.body[0].lineno <= node.lineno):
            continue
        taken = flow.first(node.body[0])
        if isinstance(node, ast.While):
            skipped = flow.after_loop(node)
        else:
            skipped = flow.first(node.orelse[0]) if node.orelse else flow.after(node)
        if taken and not taken & skipped:
            found[node.lineno] = (TruthTest(test.id, negated, taken, skipped) if isinstance(test, ast.Name)
                                  else TruthTest("", False, taken, skipped, expression))
    return found


# A parameter's value at a call event, known from the calling line: ("name", the caller's variable whose
# value it receives) or ("literal", the literal's repr); None where the line does not tell.
ArgumentSource = tuple[str, str] | None


def _immutable_literal(node: ast.expr | None, max_repr: int) -> str | None:
    """The repr of a literal whose object cannot change (numbers, strings, bytes, bools, None, tuples of
    them), as the tracer shows it; None for anything else (a mutable default may have been mutated)."""
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None

    def immutable(v: object) -> bool:
        return isinstance(v, int | float | complex | str | bytes | type(None)) or (
            isinstance(v, tuple) and all(immutable(x) for x in v))

    return safe_repr(value, max_repr) if immutable(value) else None


def _bind(func: ast.FunctionDef, call: ast.Call, max_repr: int,
          program_names: set[str]) -> tuple[tuple[str, ArgumentSource], ...] | None:
    """Python's binding of `call`'s arguments to `func`'s parameters, for arguments that are names,
    literals or expressions of variables, operators and builtins (deduce.expression_reads; others bind
    to None: unknown), defaults that are immutable literals; None when the call does not bind plainly
    (`*`/`**`, a *args or **kwargs parameter, a missing or doubled argument)."""
    args = func.args
    if args.vararg or args.kwarg or any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return None
    positional = [a.arg for a in args.posonlyargs + args.args]
    if len(call.args) > len(positional):
        return None
    given: dict[str, ast.expr] = dict(zip(positional, call.args, strict=False))
    for keyword in call.keywords:
        if keyword.arg in given or keyword.arg in [a.arg for a in args.posonlyargs]:
            return None
        given[keyword.arg] = keyword.value  # type: ignore[index]
    defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    names = positional + [a.arg for a in args.kwonlyargs]
    if set(given) - set(names):
        return None
    bound: list[tuple[str, ArgumentSource]] = []
    for name in names:
        if name in given:
            node = given[name]
            if isinstance(node, ast.Name):
                bound.append((name, ("name", node.id)))
            elif (text := _immutable_literal(node, max_repr)) is not None:
                bound.append((name, ("literal", text)))
            elif expression_reads(node, program_names) is not None:
                bound.append((name, ("expression", ast.unparse(node))))
            else:
                bound.append((name, None))
        elif name in defaults:
            text = _immutable_literal(defaults[name], max_repr)
            bound.append((name, ("literal", text) if text is not None else None))
        else:
            return None  # a TypeError at run time: no call event
    return tuple(bound)


Binding = tuple[tuple[tuple[str, ArgumentSource], ...], frozenset[str]]  # parameters, names to check


def _statements_with_a_value(tree: ast.Module) -> Iterator[ast.Assign | ast.AnnAssign | ast.Expr | ast.Return]:
    """`x = v`, `x: T = v`, `v` alone and `return v` statements that stand alone on one line."""
    starts = _statements_per_line(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign | ast.AnnAssign | ast.Expr | ast.Return) and node.value is not None
                and node.lineno == node.end_lineno and starts.get(node.lineno) == 1):
            yield node


def _statements_binding_names(tree: ast.Module) -> Iterator[ast.Assign | ast.AnnAssign | ast.Expr | ast.Return]:
    """Those of _statements_with_a_value whose targets, if any, are plain names."""
    for node in _statements_with_a_value(tree):
        if isinstance(node, ast.Assign) and not all(isinstance(t, ast.Name) for t in node.targets):
            continue
        if isinstance(node, ast.AnnAssign) and not isinstance(node.target, ast.Name):
            continue
        yield node


def call_bindings(tree: ast.Module, max_repr: int) -> dict[tuple[int, str], Binding]:
    """(line, function) -> the call event's parameters and where their values come from, for lines that
    hold one statement, on that line alone, whose only call is of a plain module-level function of the
    program (see _plain_functions) with arguments that are inert expressions (inert_lines). A step_into
    from the line's event that lands on that function's call event has run nothing else, so the frame's
    locals are exactly its parameters, holding the named variables' values. With the bindings come the
    names that arguments other than a name or a literal read: the caller checks they hold builtin values
    (an expression over them then changes no object, as on an inert line)."""
    if _defines_a_class(tree):
        return {}
    plain = _plain_functions(tree)
    defs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in plain}
    program_names = _bound_names(tree)
    found: dict[tuple[int, str], Binding] = {}
    for node in _statements_binding_names(tree):
        call = node.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in defs
                and all(_inert_expression(a) for a in [*call.args, *(k.value for k in call.keywords)])):
            # the call inside an expression, or with arguments that builtins compute (`g(s, len(s))`)
            call = _the_one_call(node, defs, program_names)
            if call is None:
                continue
        assert isinstance(call.func, ast.Name)
        bound = _bind(defs[call.func.id], call, max_repr, program_names)
        if bound is not None:
            computed = [a for a in [*call.args, *(k.value for k in call.keywords)]
                        if not isinstance(a, ast.Name | ast.Constant)]
            # the variables they read (not the builtins they call: `len` is no variable of the frame)
            each = [expression_reads(a, program_names) for a in computed]
            reads = frozenset(n.id for a in computed for n in ast.walk(a) if isinstance(n, ast.Name)) if any(
                r is None for r in each) else frozenset(name for r in each if r is not None for name in r)
            found[(node.lineno, call.func.id)] = (bound, reads)
    return found


def _the_one_call(node: ast.Assign | ast.AnnAssign | ast.Expr | ast.Return, defs: dict[str, ast.FunctionDef],
                  program_names: set[str]) -> ast.Call | None:
    """In a statement alone on one line (_statements_with_a_value), the one call of a function in `defs` (`return [ord(c)] + aux(s[1:])`,
    `return max(n, f(n - 1))`), where everything else in it, the call's arguments included, is made of
    variables, operators and builtins (deduce.expression_reads): the part evaluated before the call
    then runs no code of the program, and neither do the arguments. None for anything else."""
    value = node.value
    if value is None or any(isinstance(n, (*_COMPREHENSION_NODES, ast.Lambda)) for n in ast.walk(value)):
        return None  # a call inside one runs in its frame, with its variables, later than the line's event
    calls = [n for n in ast.walk(value) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defs]
    if len(calls) != 1:
        return None
    call = calls[0]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if not all(expression_reads(a, program_names) is not None for a in [*call.args, *(k.value for k in call.keywords)]):
        return None
    return call if expression_reads(_without(value, call), program_names) is not None else None


def _without(value: ast.expr, call: ast.Call, by: ast.expr | None = None) -> ast.expr:
    """A copy of `value` with `call` replaced by `by` (a constant when None; deepcopy takes a memo entry
    for the call as its copy); the tree is left as it is."""
    return copy.deepcopy(value, memo={id(call): by if by is not None else ast.Constant(None)})


def _as_operation(node: ast.AugAssign) -> ast.BinOp:
    """`NAME op= VALUE` as the expression it binds: `NAME op VALUE`."""
    assert isinstance(node.target, ast.Name)
    return ast.BinOp(left=ast.Name(id=node.target.id, ctx=ast.Load()), op=node.op, right=node.value)


# The name that stands for the value a call returned in call_expressions' expressions (no variable's name).
RETURNED = "<returned>"
# Builtins that build new objects or read their arguments, and never call code of the program on
# values of the builtin types (a pure function may call them).
_PURE_BUILTINS = READING_FUNCTIONS | frozenset({"print", "isinstance", "round", "float", "set", "dict", "frozenset",
                                                "repr", "pow", "hash", "map", "filter"})
_FRESH_MAKERS = frozenset({"list", "dict", "set", "sorted", "tuple", "str", "int", "float", "range", "len", "sum",
                           "min", "max", "abs", "round", "bool", "ord", "chr"})
_SAFE_AUGMENTED = (ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift)  # never in place on a list, set or dict


def _makes_a_new_object(value: ast.expr) -> bool:
    return isinstance(value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp | ast.SetComp | ast.Constant
                      | ast.JoinedStr) or (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _FRESH_MAKERS)


def _fresh_names(function: ast.FunctionDef) -> frozenset[str]:
    """The local names of `function` that only ever hold objects made in its frame: every binding is
    `NAME = VALUE` with VALUE a display, a comprehension, a constant, an f-string or a call of a builtin
    that makes a new object, or `NAME op= ...`; no parameter."""
    made: set[int] = set()  # the Name nodes bound by such a `NAME = VALUE`
    augmented: set[int] = set()
    for node in ast.walk(function):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and _makes_a_new_object(node.value)):
            made.add(id(node.targets[0]))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            augmented.add(id(node.target))
    stores = [n for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del)]
    stale = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)} | {
        n.id for n in stores if id(n) not in made and id(n) not in augmented}
    return frozenset(n.id for n in stores if id(n) in made) - stale


def pure_functions(tree: ast.Module) -> frozenset[str]:
    """The plain functions of the program (_plain_functions, at module level) whose calls change no object
    that existed before the call, in a program without classes: no `global`/`nonlocal`, no store into an
    attribute, items stored and mutating methods called only on objects made in the frame
    (_fresh_names), `op=` on other names only where it is never in place, and calls only of builtins that
    read (on values of the builtin types), of reading methods, of `math`, and of other such functions.
    A caller's objects are the same after such a call as before it."""
    if _defines_a_class(tree):
        return frozenset()
    plain = _plain_functions(tree)
    defs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in plain}
    bound = _bound_names(tree)
    imported_math = any(isinstance(n, ast.Import) and any(a.name == "math" and a.asname is None for a in n.names)
                        for n in ast.walk(tree))
    needs: dict[str, set[str]] = {}
    for name, function in defs.items():
        fresh = _fresh_names(function)
        calls: set[str] = set()
        called = {id(node.func) for node in ast.walk(function) if isinstance(node, ast.Call)}
        ok = True
        for node in ast.walk(function):
            if isinstance(node, ast.Global | ast.Nonlocal | ast.Yield | ast.YieldFrom | ast.Await | ast.ClassDef) or isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                ok = False
            elif (isinstance(node, ast.Attribute) and id(node) not in called and node.attr not in READING_METHODS
                  and not (imported_math and isinstance(node.value, ast.Name) and node.value.id == "math")):
                ok = False  # a method passed on, to be called by map, filter or a key: `map(xs.append, ys)`
            elif isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
                ok = ok and isinstance(node.value, ast.Name) and node.value.id in fresh
            elif isinstance(node, ast.AugAssign):  # an item's `op=` is the store's (checked above)
                ok = ok and (isinstance(node.op, _SAFE_AUGMENTED) or isinstance(node.target, ast.Subscript)
                             or (isinstance(node.target, ast.Name) and node.target.id in fresh))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in defs:
                calls.add(node.id)  # called, or passed on to be called: it must be pure too
            elif isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name):
                    ok = ok and (func.id in defs or (func.id in _PURE_BUILTINS and func.id not in bound))
                elif isinstance(func, ast.Attribute):
                    receiver = func.value
                    ok = ok and (func.attr in READING_METHODS
                                 or (func.attr in MUTATOR_NAMES and isinstance(receiver, ast.Name) and receiver.id in fresh)
                                 or (imported_math and isinstance(receiver, ast.Name) and receiver.id == "math"))
                else:
                    ok = False
            if not ok:
                break
        if ok:
            needs[name] = calls
    pure = set(needs)
    changed = True
    while changed:
        changed = False
        for name in list(pure):
            if not needs[name] <= pure:
                pure.discard(name)
                changed = True
    return frozenset(pure)


CallExpression = tuple[tuple[str, ...] | None, str, ast.expr]


def call_expressions(tree: ast.Module) -> dict[int, CallExpression]:
    """Line -> (the names bound (none for an expression alone), or None for `return`; the function called;
    the statement's expression with the call replaced by the name RETURNED), for lines whose one call of a
    plain function of the program stands in an expression of variables, operators and builtins, its
    arguments too (_the_one_call): `return n * fact(n - 1)`, `total += f(x)`, `best = max(best, g(x))`,
    `y = f(x)`, in a program without classes. Nothing else on such a line runs code of the program or
    changes an object, so when that function's frame returns to it, the value the line binds or returns
    follows from the value returned and the caller's values at the call, where the call cannot have
    changed them (constraint.py checks that)."""
    if _defines_a_class(tree) or _may_print_a_container(tree):
        return {}
    plain = _plain_functions(tree)
    defs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in plain}
    program_names = _bound_names(tree)
    shared = shared_names(tree)
    found: dict[int, CallExpression] = {}
    for node in [*_statements_binding_names(tree), *(n for n in ast.walk(tree) if isinstance(n, ast.AugAssign))]:
        names: tuple[str, ...] | None
        if isinstance(node, ast.AugAssign):
            if not isinstance(node.target, ast.Name) or node.lineno != node.end_lineno:
                continue
            names = (node.target.id,)
            statement: ast.Assign | ast.AnnAssign | ast.Expr | ast.Return = ast.Expr(
                value=_as_operation(node))
        elif isinstance(node, ast.Return):
            names, statement = None, node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            names = (target.id,) if isinstance(target, ast.Name) else None
            if names is None:
                continue
            statement = node
        elif isinstance(node, ast.Expr):
            names, statement = (), node
        else:
            continue
        if names is not None and set(names) & shared:
            continue
        value = statement.value
        if value is None:
            continue
        call = _the_one_call(statement, defs, program_names)
        if call is None:
            continue
        assert isinstance(call.func, ast.Name)
        found[node.lineno] = (names, call.func.id, _without(value, call, ast.Name(id=RETURNED, ctx=ast.Load())))
    return found


def call_results(tree: ast.Module) -> dict[int, tuple[str, str]]:
    """Line -> (name, function), for lines that hold nothing but `name = function(...)` or
    `name = obj.function(...)`. When a frame of `function` returns to such a line and the caller's next
    event is a line or its own return, no other call ran after it: `name` holds the value returned (the
    caller checks that the frame returning is of `function`: a class's `__init__` returns None, not
    the instance)."""
    found: dict[int, tuple[str, str]] = {}
    for node in _statements_with_a_value(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)):
            continue
        func = node.value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name is not None:
            found[node.lineno] = (node.targets[0].id, name)
    return found


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
            and all(_inert_expression(a) and not isinstance(a, ast.Starred) for a in node.args))


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
    if top is None or _defines_a_class(tree):
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
    for node in _statements_with_a_value(tree):
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
        if not (_inert_expression(first) or _is_range_call(first, range_is_builtin)):
            continue
        reads |= {n.id for n in ast.walk(first) if isinstance(n, ast.Name)} - {"range"}
        code = _COMPREHENSION_CODE[type(comp)]
        names = frees.get((comp.lineno, code), [])
        if len(names) != 1:
            continue
        found[(node.lineno, code)] = (_iterator_source(first, range_is_builtin), names[0], frozenset(reads))
    return found



# An argument of `range(...)` in a `for` header: ("int", digits), ("name", variable) or ("len", variable).
LoopArgument = tuple[str, str]
_FUNCTION_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
# Builtins that read their arguments and change none of them (given values of the builtin types).
_READING_BUILTINS = frozenset({"len", "print", "sum", "min", "max", "sorted", "str", "repr", "list", "tuple", "set",
                               "frozenset", "any", "all", "enumerate", "zip", "reversed", "abs", "bool", "int",
                               "float", "dict", "isinstance", "type"})


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
    # (model_backend/engine/deduce.py): the elements are computed from their shown values
    expression: ast.expr | None = None


def _bound_names(tree: ast.Module) -> set[str]:
    """Every name the program binds anywhere (so a builtin's name it binds may not be the builtin)."""
    return ({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
            | {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
            | {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
            | {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)
               for a in n.names})


def _may_print_a_container(tree: ast.Module) -> bool:
    """Whether an object of the program's own could print like a list (a class with a base, or a
    `__repr__` or `__iter__` of its own), and so be taken for one."""
    return any(isinstance(n, ast.ClassDef) and (n.bases or n.keywords) for n in ast.walk(tree)) or any(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in ("__repr__", "__iter__")
        for n in ast.walk(tree))


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


def _range_arguments(node: ast.expr, bound: set[str]) -> list[LoopArgument] | None:
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
    (`sentence.split()`, `sorted(counts.items())`: model_backend/engine/deduce.py), whose header stands
    alone on its line with the body on lines after it. A step from the header's line event takes the iterable's next element or
    leaves the loop, and nothing else happens (iterating a value of the builtin types runs none of the
    program's code): the caller reads that element from the shown values (model_backend/engine/
    constraint.py). When the loop starts, the header has just evaluated the iterable, so the shown value
    is the one iterated; going round again, the flags say whether the shown values still tell where the
    iteration stands. Empty for a program that may print a container of its own
    (a class with a base, or a `__repr__`): such an object's repr could look like a list and iterate
    otherwise."""
    if _may_print_a_container(tree):
        return {}
    bound = _bound_names(tree)
    builtins = frozenset(_READING_BUILTINS - bound)
    declared = shared_names(tree)
    starts = _statements_per_line(tree)
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
                and all(isinstance(e, ast.Name) for e in node.target.elts) and _is_enumerate(node.iter, bound)):
            counter, target = (e.id for e in node.target.elts)  # type: ignore[attr-defined]
            if counter == target:
                continue
            call = node.iter
            assert isinstance(call, ast.Call)
            count_from = call.args[1].value if len(call.args) == 2 else 0  # type: ignore[attr-defined]
            iterated = call.args[0].id  # type: ignore[attr-defined]
        elif isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Name):
            target, iterated = node.target.id, node.iter.id
        elif isinstance(node.target, ast.Name) and (in_range := _range_arguments(node.iter, bound)) is not None:
            target, arguments = node.target.id, in_range
        elif (reads := expression_reads(node.iter, bound)) is not None and (names := _loop_targets(node.target)):
            expression = node.iter
            counter, target = names if len(names) == 2 else (None, names[0])
        else:
            continue
        variables = ([iterated] if iterated else []) + [text for kind, text in arguments if kind != "int"] + sorted(reads or ())
        stored = _names_bound(list(node.body))
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


def _is_enumerate(node: ast.expr, bound: set[str]) -> bool:
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


def appended_values(tree: ast.Module, max_repr: int) -> dict[int, tuple[str, ArgumentSource]]:
    """Line -> (list, what it appends), for lines that hold nothing but `NAME.append(ARG)` with ARG
    another variable or an immutable literal. Where NAME shows the whole repr of a list and ARG a
    builtin value, the list's repr after the step is its repr before with ARG's repr added at the end
    (list.append runs no code of the program): the caller builds it, if it fits under `max_repr`.
    Empty for a program whose own objects could print like a list."""
    if _may_print_a_container(tree):
        return {}
    starts = _statements_per_line(tree)
    shared = shared_names(tree)
    found: dict[int, tuple[str, ArgumentSource]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        func = call.func
        if (node.lineno != node.end_lineno or starts.get(node.lineno) != 1 or call.keywords or len(call.args) != 1
                or not isinstance(func, ast.Attribute) or func.attr != "append" or not isinstance(func.value, ast.Name)
                or func.value.id in shared):
            continue
        arg = call.args[0]
        if isinstance(arg, ast.Name):
            if arg.id != func.value.id:
                found[node.lineno] = (func.value.id, ("name", arg.id))
        else:
            text = _immutable_literal(arg, max_repr)
            if text is not None:
                found[node.lineno] = (func.value.id, ("literal", text))
    return found



# Methods that leave the object they are called on as it was, whichever builtin type it has (str, list,
# tuple, dict, set): in a program without classes, the only other objects are the standard library's.
_READING_METHODS = frozenset({
    "count", "index", "find", "rfind", "rindex", "startswith", "endswith", "lower", "upper", "strip", "lstrip",
    "rstrip", "split", "rsplit", "splitlines", "join", "replace", "title", "capitalize", "swapcase", "casefold",
    "zfill", "center", "ljust", "rjust", "partition", "rpartition", "removeprefix", "removesuffix", "isdigit",
    "isalpha", "isalnum", "isspace", "islower", "isupper", "istitle", "isdecimal", "isnumeric", "isidentifier",
    "get", "keys", "values", "items", "copy", "union", "intersection", "difference", "symmetric_difference",
    "issubset", "issuperset", "isdisjoint",
})
_STORE_BUILTINS = _READING_BUILTINS | {"range", "ord", "chr", "round", "divmod"}
_COMPREHENSION_NODES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class ItemStore:
    """A line that changes one item of a list or a dict, or adds one, and nothing else (see item_stores)."""

    container: str  # the variable whose list or dict it changes
    kind: str  # "item": `container[key] = ...` (or `op=`); "append": `container.append(...)`; "insert"
    key: ArgumentSource  # "item": the key or index (a variable, or a literal's repr); "insert": the position
    augmented: bool  # `container[key] op= ...`: the key must be there already (else a KeyError or IndexError)
    reads: frozenset[str]  # the variables the line reads: each must hold a value of the builtin types
    # `container[outer][key] = ...`: the key or index of the list or dict inside it whose item is stored
    outer: ArgumentSource = None


def _reads_only(node: ast.expr, builtins: frozenset[str], bound: set[str]) -> frozenset[str] | None:
    """The variables an expression reads, where evaluating it on values of the builtin types runs no code
    of the program and changes no object: inert parts (_INERT_NODES), calls of reading builtins and of
    reading methods (_READING_METHODS), and comprehensions over such parts. None for anything else (a
    call of the program's functions, a method that may change its object, `:=`, a lambda, a builtin
    other than a reading one, such as `next`, passed as a value)."""
    reads: set[str] = set()

    def visit(part: ast.AST, hidden: frozenset[str]) -> bool:
        if isinstance(part, _COMPREHENSION_NODES):
            for generator in part.generators:
                if generator.is_async or not visit(generator.iter, hidden):
                    return False
                hidden = hidden | {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
                if not all(isinstance(n, ast.Name | ast.Tuple | ast.List | ast.expr_context) for n in ast.walk(generator.target)):
                    return False
                if not all(visit(condition, hidden) for condition in generator.ifs):
                    return False
            results = [part.key, part.value] if isinstance(part, ast.DictComp) else [part.elt]
            return all(visit(result, hidden) for result in results)
        if isinstance(part, ast.Call):
            func = part.func
            if isinstance(func, ast.Name):
                if func.id not in builtins:
                    return False
            elif not (isinstance(func, ast.Attribute) and func.attr in _READING_METHODS and visit(func.value, hidden)):
                return False
            arguments = [a.value if isinstance(a, ast.Starred) else a for a in part.args]
            return all(visit(a, hidden) for a in [*arguments, *(k.value for k in part.keywords)])
        if not isinstance(part, _INERT_NODES):
            return False
        if isinstance(part, ast.Name | ast.Subscript | ast.List | ast.Tuple) and not isinstance(part.ctx, ast.Load):
            return False
        if isinstance(part, ast.Dict) and None in part.keys:
            return False
        if isinstance(part, ast.Name) and part.id not in hidden:
            if part.id in bound:
                reads.add(part.id)
            elif part.id not in builtins:
                return False
        return all(visit(child, hidden) for child in ast.iter_child_nodes(part))

    return frozenset(reads) if visit(node, frozenset()) else None


def _store_key(node: ast.expr, max_repr: int) -> ArgumentSource:
    """A key or an index written as a variable or an immutable literal; None for anything else."""
    if isinstance(node, ast.Name):
        return ("name", node.id)
    text = _immutable_literal(node, max_repr)
    return ("literal", text) if text is not None else None


def item_stores(tree: ast.Module, max_repr: int) -> dict[int, ItemStore]:
    """Line -> the store, for lines that hold nothing but `NAME[KEY] = EXPR`, `NAME[KEY] op= EXPR`,
    `NAME.append(EXPR)` or `NAME.insert(INT, EXPR)`, with KEY a variable or an immutable literal and EXPR
    an expression that reads only (_reads_only). Where every variable the line reads holds a value of the
    builtin types, nothing runs but the store itself: after a step from the line within its frame, a list
    or a dict NAME showed whole is the same but for one item, whose value is free (model_backend/engine/
    constraint.py builds that shape). `NAME[OUTER][KEY] = EXPR` (and `op=`) stores into the list or dict
    NAME holds at OUTER: then NAME's other items stay too, where that inner one is not also elsewhere in
    NAME (`[[0] * 3] * 3` holds one list three times), which the caller checks from the repr. Empty for a
    program that defines a class (an instance's methods and operators are the program's code) or where
    NAME is shared with other frames (`global`, `nonlocal`)."""
    if _defines_a_class(tree):
        return {}
    bound = _bound_names(tree)
    builtins = frozenset(_STORE_BUILTINS - bound)
    starts = _statements_per_line(tree)
    shared = shared_names(tree)
    found: dict[int, ItemStore] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.lineno != node.end_lineno or starts.get(node.lineno) != 1:
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AugAssign) else None)
        store: tuple[str, str, ArgumentSource, ast.expr] | None = None
        outer: ArgumentSource = None
        if (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Subscript)
                and isinstance(target.value.value, ast.Name) and not isinstance(target.value.slice, ast.Slice)):
            outer = _store_key(target.value.slice, max_repr)  # `NAME[OUTER][KEY] = ...`
            if outer is None:
                continue
            target = ast.Subscript(value=target.value.value, slice=target.slice, ctx=target.ctx)
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and not isinstance(target.slice, ast.Slice):
            assert isinstance(node, ast.Assign | ast.AugAssign)
            store = (target.value.id, "item", _store_key(target.slice, max_repr), node.value)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and not node.value.keywords:
            call = node.value
            func = call.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                if func.attr == "append" and len(call.args) == 1:
                    store = (func.value.id, "append", None, call.args[0])
                elif func.attr == "insert" and len(call.args) == 2:
                    position = _immutable_literal(call.args[0], max_repr)
                    if position is not None and position.lstrip("-").isdigit():
                        store = (func.value.id, "insert", ("literal", position), call.args[1])
        if store is None:
            continue
        container, kind, key, value = store
        reads = _reads_only(value, builtins, bound)
        if container in shared or reads is None or (kind == "item" and key is None):
            continue
        key_reads = {source[1] for source in (key, outer) if source is not None and source[0] == "name"}
        found[node.lineno] = ItemStore(container, kind, key, isinstance(node, ast.AugAssign),
                                       reads | key_reads | {container}, outer)
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
    # kind "expression": the iterable builtins build from variables (model_backend/engine/deduce.py)
    expression: ast.expr | None = None
    node: ast.expr | None = None  # the comprehension itself: what it returns, computed on the caller's values


def _comprehension_loop(comp: ast.ListComp | ast.SetComp | ast.DictComp, bound: set[str],
                        builtins: frozenset[str]) -> ComprehensionLoop | None:
    """The loop of a comprehension with one `for` over a variable, `VARIABLE.items()`, `enumerate(VARIABLE[,
    INT])`, `range(ARGS)` or what builtins build from variables (deduce.expression_reads), whose parts
    only read (_reads_only); None for anything else."""
    loop = _comprehension_loop_of(comp, bound, builtins)
    return replace(loop, node=comp) if loop is not None else None


def _comprehension_loop_of(comp: ast.ListComp | ast.SetComp | ast.DictComp, bound: set[str],
                           builtins: frozenset[str]) -> ComprehensionLoop | None:
    reads = _reads_only(comp, builtins, bound)
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
    makes_frames = any(isinstance(n, (*_COMPREHENSION_NODES, ast.Lambda)) for n in ast.walk(comp) if n is not comp)
    if len(names) == 1 and isinstance(iterable, ast.Name):
        return ComprehensionLoop(names, "name", iterable.id, (), 0, reads, makes_frames)
    if len(names) == 1 and (arguments := _range_arguments(iterable, bound)) is not None:
        return ComprehensionLoop(names, "range", None, tuple(arguments), 0, reads, makes_frames)
    if len(names) == 2 and _is_enumerate(iterable, bound):
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
    comprehensions: `x = ...`, `return ...` or `...` alone, whose parts read only (_reads_only), but for
    a function or the method of a variable called last (`g([...])`, `xs.extend([...])`: the call runs
    after its arguments).

    CPython 3.11 runs such a comprehension on its line: a call event, a line event before the first
    element, then for each element a line event with its variable(s) bound to it (the jump back to the
    loop's top), and the return event once the iterable is done. If every variable it reads holds a
    value of the builtin types, nothing else runs and no object changes, so the iterable is what the
    caller showed at the line event of the call, and the trail's count of line events says which element
    a step takes (model_backend/engine/constraint.py). Empty for a program that defines a class or whose
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
        inner = [n for n in ast.walk(comp) if n is not comp and isinstance(n, (*_COMPREHENSION_NODES, ast.Lambda))]
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
    if _defines_a_class(tree) or _may_print_a_container(tree):
        return
    bound = _bound_names(tree)
    builtins = frozenset(_STORE_BUILTINS - bound - {"print"})  # nothing may print while the grammar skips the output
    for node in _statements_binding_names(tree):
        value = node.value
        assert value is not None
        # a function or a variable's method called last, after its arguments (`g([...])`, `xs.extend([...])`);
        # a builtin that only reads is part of what the statement reads instead
        last_called = isinstance(value, ast.Call) and (
            isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name)
            or isinstance(value.func, ast.Name) and value.func.id not in builtins)
        parts = [*value.args, *(k.value for k in value.keywords)] if isinstance(value, ast.Call) and last_called else [value]
        if any(_reads_only(part, builtins, bound) is None for part in parts):
            continue
        outer: list[ast.AST] = list(parts)
        while outer:
            part = outer.pop()
            if isinstance(part, _COMPREHENSIONS_BUILT):
                yield node, part, last_called, bound, builtins
            if not isinstance(part, (*_COMPREHENSION_NODES, ast.Lambda)):
                outer.extend(ast.iter_child_nodes(part))


# Expressions whose code jumps (a branch or a loop inside the statement): the line events of a statement
# that holds one do not follow its code in one order.
_JUMPING = (ast.IfExp, ast.BoolOp, ast.Yield, ast.YieldFrom, ast.Await)


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def statement_line_orders(source: str, tree: ast.Module) -> dict[int, tuple[tuple[int, ...], tuple[int, int]]]:
    """Line -> (the lines of its statement's line events, in order; the statement's first and last line),
    for simple statements over several lines whose code does not jump. CPython 3.11 reports a line event
    when an instruction's line differs from the one run before it in the frame, so the events of such a
    statement follow its compiled code: `return (a\\n + b\\n + c\\n)` gives 2, 3, 2, 4, 2, 1 (each `+`
    is on the line its left operand starts). Read off the code objects `compile` makes (compiling runs
    nothing of the program). A statement compiled more than once (in a `finally`) or with an instruction
    of no line inside is left out."""
    try:
        module = compile(source, "<program>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return {}
    runs: list[list[int]] = []  # each code object's lines, one per co_lines range, in code order
    for code in _code_objects(module):
        runs.append([line if line is not None else -1 for _, _, line in code.co_lines()])
    starts = _statements_per_line(tree)
    found: dict[int, tuple[tuple[int, ...], tuple[int, int]]] = {}
    for node in ast.walk(tree):
        if (not isinstance(node, ast.stmt) or hasattr(node, "body") or node.end_lineno is None
                or node.end_lineno == node.lineno or isinstance(node, ast.Assert | ast.Global | ast.Nonlocal)
                or starts.get(node.lineno) != 1 or starts.get(node.end_lineno, 0) != 0
                or any(isinstance(part, _JUMPING) or (isinstance(part, ast.Compare) and len(part.ops) > 1)
                       for part in ast.walk(node))):
            continue
        first, last = node.lineno, node.end_lineno
        blocks = []
        for lines in runs:
            inside = [i for i, line in enumerate(lines) if first <= line <= last]
            if inside:
                blocks.append(lines[inside[0]:inside[-1] + 1])
        if len(blocks) != 1 or not all(first <= line <= last for line in blocks[0]):
            continue  # compiled twice, or mixed with code of other lines
        order = [blocks[0][0]]
        for line in blocks[0][1:]:
            if line != order[-1]:
                order.append(line)
        for line in range(first, last + 1):
            found[line] = (tuple(order), (first, last))
    return found


# What a class body may not define for `attribute_updates` to trust a store into its objects: hooks that
# run code on a store or a read, or keep the fields elsewhere than in `__dict__`
_BUILTIN_EXCEPTIONS = frozenset(n for n, v in vars(_builtins_module).items() if isinstance(v, type) and issubclass(v, BaseException))
_ATTRIBUTE_HOOKS = frozenset({"__setattr__", "__delattr__", "__getattribute__", "__getattr__", "__slots__", "__dict__",
                              "__repr__", "__class__", "__init_subclass__", "__set__", "__get__", "__set_name__"})


def plain_classes(tree: ast.Module) -> dict[str, frozenset[str]]:
    """Class name -> the names its body and its bases' bodies define, for the program's classes whose
    objects the trace format (version 3) writes as `Name(field=value, ...)` with their `__dict__` in its
    order, and whose attribute stores only set that `__dict__`'s entry: no keyword or decorator, bases
    that are such classes themselves (then object's `__setattr__` stores and `__repr__` writes them), a
    body of defs and plain assignments that defines no hook of _ATTRIBUTE_HOOKS, a name no other class,
    def, import, variable or string of the program holds (a namedtuple or `type(...)` named alike writes
    the same text), and no store into the class's attributes (`Name.x = ...` could add a descriptor).
    Empty for a program that names `__repr__` anywhere, calls setattr or delattr, stores into `f(...).x`,
    or has a class with a keyword or with a base that is neither one of its classes nor a builtin
    exception (an object that prints like a list or a number could be taken for one)."""
    if any(isinstance(n, ast.Name) and n.id in ("setattr", "delattr", "__repr__")
           or isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == "__repr__"
           or isinstance(n, ast.Attribute) and (n.attr == "__repr__" or not isinstance(n.ctx, ast.Load)
                                                and isinstance(n.value, ast.Call))  # `type(self).x = ...`
           or isinstance(n, ast.Constant) and n.value == "__repr__"
           for n in ast.walk(tree)):
        return {}
    defs: dict[str, list[ast.ClassDef]] = {}
    others: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            defs.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            others.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            others.add(node.id)
        elif isinstance(node, ast.alias):
            others.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            others.add(node.value)
        elif (isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load)
              and isinstance(node.value, ast.Name)):
            others.add(node.value.id)  # `Cart.x = ...`
    bound = _bound_names(tree)
    for nodes in defs.values():
        for node in nodes:
            if node.keywords or not all(
                    isinstance(b, ast.Name) and (b.id in defs or b.id in _BUILTIN_EXCEPTIONS and b.id not in bound)
                    for b in node.bases):
                return {}
    own: dict[str, tuple[ast.ClassDef, frozenset[str]]] = {}
    for name, nodes in defs.items():
        if len(nodes) != 1 or name in others or name == "namespace":  # SimpleNamespace writes `namespace(a=1)`
            continue
        node = nodes[0]
        if node.decorator_list:
            continue
        defined: set[str] = set()
        for statement in node.body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                defined.add(statement.name)
            elif isinstance(statement, ast.Assign | ast.AnnAssign):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                if not all(isinstance(t, ast.Name) for t in targets):
                    break
                defined.update(t.id for t in targets)  # type: ignore[attr-defined]
            elif not isinstance(statement, ast.Expr | ast.Pass):
                break
        else:
            if not defined & _ATTRIBUTE_HOOKS:
                own[name] = (node, frozenset(defined))
    found: dict[str, frozenset[str]] = {}

    def resolve(name: str, seen: frozenset[str]) -> frozenset[str] | None:
        if name in found:
            return found[name]
        if name not in own or name in seen:
            return None
        node, defined = own[name]
        for base in node.bases:
            assert isinstance(base, ast.Name)
            inherited = resolve(base.id, seen | {name})
            if inherited is None:
                return None
            defined |= inherited
        found[name] = defined
        return defined

    for name in own:
        resolve(name, frozenset())
    return found


@dataclass(frozen=True)
class AttributeUpdate:
    """A line that only sets one attribute of an object held by a variable, or appends to a list one
    attribute holds (see attribute_updates)."""

    owner: str  # the variable holding the object
    attribute: str
    kind: str  # "set" (`OWNER.ATTR = EXPR`, `OWNER.ATTR op= EXPR`) or "append" (`OWNER.ATTR.append(EXPR)`)
    # the value set or appended; `OWNER.NAME` read in it is the name "OWNER.NAME", whose value the object's
    # field NAME shows (`OWNER.ATTR op= EXPR` is `"OWNER.ATTR" op EXPR`)
    expression: ast.expr
    augmented: bool = False  # `OWNER.ATTR op= EXPR` (in place on a mutable value: the caller refuses one)


class _OwnFields(ast.NodeTransformer):
    """`OWNER.NAME` read -> the name "OWNER.NAME" (not a dunder: a mangled name is stored otherwise)."""

    def __init__(self, owner: str) -> None:
        self.owner = owner

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if (isinstance(node.value, ast.Name) and node.value.id == self.owner and isinstance(node.ctx, ast.Load)
                and not node.attr.startswith("__")):
            return ast.copy_location(ast.Name(id=f"{self.owner}.{node.attr}", ctx=ast.Load()), node)
        return self.generic_visit(node)


def attribute_updates(tree: ast.Module) -> dict[int, AttributeUpdate]:
    """Line -> the update, for lines that hold one statement, on one line, that is `OWNER.ATTR = EXPR`,
    `OWNER.ATTR op= EXPR` or `OWNER.ATTR.append(EXPR)`, with OWNER a variable (not global or nonlocal),
    ATTR no dunder, and EXPR made of variables, OWNER's attributes, operators and builtins
    (deduce.expression_reads). Where OWNER shows the whole version-3 text of an object of one of
    `plain_classes` (that does not define ATTR), such a line runs no code of the program, and the
    object's text after it is its text before with the one field changed, or added at the end
    (model_backend/engine/constraint.py checks the rest). Empty where `plain_classes` is."""
    if not plain_classes(tree):
        return {}
    bound = _bound_names(tree)
    shared = shared_names(tree)
    starts = _statements_per_line(tree)
    found: dict[int, AttributeUpdate] = {}
    for node in ast.walk(tree):
        if node.__class__ not in (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr):
            continue
        assert isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr)
        if node.end_lineno != node.lineno or starts.get(node.lineno) != 1:
            continue
        kind = "set"
        target: ast.expr
        value: ast.expr | None
        if isinstance(node, ast.Expr):
            call = node.value
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append"
                    and len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred)):
                continue
            kind, target, value = "append", call.func.value, call.args[0]
        elif isinstance(node, ast.Assign):
            if len(node.targets) != 1:
                continue
            target, value = node.targets[0], node.value
        else:
            target, value = node.target, node.value
        if (value is None or not isinstance(target, ast.Attribute) or not isinstance(target.value, ast.Name)
                or target.attr.startswith("__") or target.value.id in shared):
            continue
        owner = target.value.id
        if isinstance(node, ast.AugAssign):
            value = ast.BinOp(left=ast.Attribute(value=ast.Name(id=owner, ctx=ast.Load()), attr=target.attr,
                                                 ctx=ast.Load()), op=node.op, right=value)
        expression = _OwnFields(owner).visit(copy.deepcopy(value))
        if not isinstance(expression, ast.expr) or expression_reads(expression, bound) is None:
            continue
        found[node.lineno] = AttributeUpdate(owner, target.attr, kind, expression, isinstance(node, ast.AugAssign))
    return found
