"""Lines and branches: which line event can follow which in a frame, a static, generous model of
CPython 3.11's line events.

`next_lines(tree)` maps each line of a statement to the lines whose `line` event can come next in the
same frame when nothing else (no call, return or exception event) comes between: the rest of the
statement (a statement over several lines reports them in any order), the statement after it, the loop
header at the end of a loop body, the branches of an `if`, and so on. It over-approximates on purpose:
every `with` header, `except` line and `finally` block around a statement is added, since leaving a
block early runs them. `frame_ends(tree)` gives the lines from which a step can end in the frame's
return event, `statement_line_orders(source, tree)` the order of the line events of a statement over
several lines, read off its compiled code. `truth_tests(tree)` gives the branch tests made of
variables and builtins (`TruthTest`), and `truth(test, shown)` their value on the values a state shows.

Constrained decoding (model_backend/grammar/frame.py) uses them after step_into or step_over from a
line: the next line must be one that can follow, a return must come from a line that can end the frame.
This refuses the model's own mistakes (skipping a line, leaving a loop from its middle). Checked
against traced programs (tests/model_backend/grammar/) and every frame of our datasets
(`ndb grammar check`).
"""

from __future__ import annotations

import ast
import types
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

from model_backend.grammar.evaluation import value_of
from model_backend.grammar.syntax import (
    BLOCKS,
    EMPTY,
    LOOP_NODES,
    SCOPES,
    Lines,
    bound_names,
    except_lines,
    first_line,
    header_lines,
    line_span,
    may_print_a_container,
    statements_per_line,
    suspending_functions,
    suspends,
)
from model_backend.grammar.values import Unknown, expression_reads


def _transparent(node: ast.stmt) -> bool:
    """Statements that may compile to no instruction, hence no line event of their own."""
    return isinstance(node, ast.Global | ast.Nonlocal) or (
        isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))


class _Flow:
    def __init__(self, tree: ast.Module) -> None:
        # statement -> (the list it sits in, its index there, the node that owns the list, the list's name)
        self.place: dict[int, tuple[Sequence[ast.stmt], int, ast.AST, str]] = {}
        self.parent: dict[int, ast.AST] = {}
        for owner in ast.walk(tree):
            for name in BLOCKS:
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
        lines = header_lines(node)
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
        if isinstance(owner, SCOPES):
            return EMPTY  # the frame returns
        if isinstance(owner, ast.ExceptHandler | ast.match_case):
            parent = self.parent[id(owner)]
            assert isinstance(parent, ast.stmt)
            if isinstance(parent, ast.Try | ast.TryStar) and parent.finalbody:
                return self.first(parent.finalbody[0])
            return self.after(parent)
        assert isinstance(owner, ast.stmt)
        if isinstance(owner, LOOP_NODES) and name == "body":
            lines = header_lines(owner)
            if isinstance(owner, ast.While):  # `while True:` jumps straight back into its body
                lines |= self.first(owner.body[0])
            return lines
        if isinstance(owner, ast.With | ast.AsyncWith):
            return header_lines(owner)  # __exit__ runs on the header's line
        if isinstance(owner, ast.Try | ast.TryStar):
            if name == "body" and owner.orelse:
                return self.first(owner.orelse[0])
            if name != "finalbody" and owner.finalbody:
                return self.first(owner.finalbody[0])
            return self.after(owner)
        return self.after(owner)  # if, a loop's else

    def after_loop(self, loop: ast.stmt) -> Lines:
        orelse = getattr(loop, "orelse", [])
        return self.after(loop) | (self.first(orelse[0]) if orelse else EMPTY)

    def enclosing(self, node: ast.AST) -> Iterator[tuple[ast.AST, ast.AST]]:
        """(ancestor, the child of it on the way down) pairs, up to the function or module."""
        while id(node) in self.parent:
            parent = self.parent[id(node)]
            yield parent, node
            if isinstance(parent, SCOPES):
                return
            node = parent

    def successors(self, node: ast.stmt) -> Lines:
        """The lines whose event can follow one on a line of `node`'s header in the same frame."""
        lines = header_lines(node)  # a statement over several lines reports them in any order
        if len(lines) == 1 and not suspends(node):
            lines = EMPTY  # one line reports once (a generator's yield resumes on its own line)
        if isinstance(node, ast.If):
            lines |= self.first(node.body[0]) | (self.first(node.orelse[0]) if node.orelse else self.after(node))
        elif isinstance(node, LOOP_NODES):
            lines |= self.first(node.body[0]) | self.after_loop(node)
        elif isinstance(node, ast.With | ast.AsyncWith):
            lines |= self.first(node.body[0]) | self.after(node)  # the header's line comes again at the exit
        elif isinstance(node, ast.Try | ast.TryStar):
            lines |= self.first(node.body[0])
        elif isinstance(node, ast.ClassDef):  # the class body's own frame starts on the header's lines
            lines |= self.first(node.body[0]) | self.after(node)
        elif isinstance(node, ast.Match):
            for case in node.cases:
                lines |= line_span(case.pattern.lineno, case.pattern.end_lineno) | self.first(case.body[0])
                if case.guard is not None:
                    lines |= line_span(case.guard.lineno, case.guard.end_lineno)
            lines |= self.after(node)
        elif isinstance(node, ast.Continue | ast.Break):
            loop = next((a for a, _ in self.enclosing(node) if isinstance(a, LOOP_NODES)), None)
            if loop is not None:
                lines |= header_lines(loop) if isinstance(node, ast.Continue) else self.after_loop(loop)
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
        if isinstance(owner, SCOPES):
            return True
        if isinstance(owner, ast.ExceptHandler | ast.match_case):
            parent = self.parent[id(owner)]
            assert isinstance(parent, ast.stmt)
            return not (isinstance(parent, ast.Try | ast.TryStar) and parent.finalbody) and self.reaches_end(parent)
        assert isinstance(owner, ast.stmt)
        if (isinstance(owner, LOOP_NODES) and name == "body") or isinstance(owner, ast.With | ast.AsyncWith):
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
            loop = next((a for a, _ in self.enclosing(node) if isinstance(a, LOOP_NODES)), None)
            return loop is None or (isinstance(loop, ast.stmt) and self.reaches_end(loop))
        if isinstance(node, ast.If | ast.For | ast.AsyncFor | ast.While):
            return not node.orelse and self.reaches_end(node)
        return self.reaches_end(node)

    def on_the_way_out(self, node: ast.stmt) -> Lines:
        """What leaving the enclosing blocks early (an exception, a return, a break) can run next."""
        lines: set[int] = set()
        for ancestor, child in self.enclosing(node):
            if isinstance(ancestor, ast.With | ast.AsyncWith):
                lines |= header_lines(ancestor)
            elif isinstance(ancestor, ast.Try | ast.TryStar):
                if child in ancestor.body:
                    for handler in ancestor.handlers:
                        lines |= except_lines(handler)
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
            for line in header_lines(node):
                result.setdefault(line, set()).update(following)
        if isinstance(node, ast.Try | ast.TryStar):
            for handler in node.handlers:  # `except E:` is tested on its line; a match enters the handler
                header = except_lines(handler)
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
            ends.update(header_lines(node))
        elif isinstance(node, ast.ExceptHandler):  # left free
            ends.update(except_lines(node))
    return frozenset(ends)


def body_starts(tree: ast.Module) -> dict[int, tuple[str, Lines]]:
    """The line of a function's call event (its first decorator's, else its `def`'s: the code's first
    line) -> (its name, the lines its first line event can be on). Nothing runs between a call event
    and that line event: the body's first statement, past a docstring (a function's docstring compiles
    to no instruction). Functions whose body starts on the `def` line are left out: a generator's frame
    resumes with a call event on the line of its `yield`, which there is the `def` line."""
    flow = _Flow(tree)
    starts: dict[int, tuple[str, Lines]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef) or node.body[0].lineno == node.lineno:
            continue
        body = node.body
        docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and isinstance(
            body[0].value.value, str)
        first = body[1] if docstring and len(body) > 1 else body[0]
        starts[first_line(node)] = (node.name, flow.first(first))
    return starts


def call_event_lines(tree: ast.Module) -> dict[str, Lines]:
    """Code name -> the lines its frames' call events are on: each def's or class's first line (its first
    decorator's, else its `def`'s or `class`'s: the code's first line, where a frame starts). A name of
    which some def can suspend is left out: a generator or coroutine resumes with a call event on the
    line it stopped at."""
    suspending = suspending_functions(tree)
    lines: dict[str, set[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) and node.name not in suspending:
            lines.setdefault(node.name, set()).add(first_line(node))
    return {name: frozenset(found) for name, found in lines.items()}


@dataclass(frozen=True)
class TruthTest:
    """An `if NAME:`, `elif not NAME:` or `while NAME:` header (see truth_tests)."""

    name: str
    negated: bool
    taken: Lines  # where a true test goes: the first line of the body
    skipped: Lines  # where a false one goes: the else branch, or past the statement (empty: the frame ends)
    # A test made of variables, operators and builtins (values.expression_reads) instead of a name
    expression: ast.expr | None = None


def truth_tests(tree: ast.Module) -> dict[int, TruthTest]:
    """Header line -> the test, for `if`, `elif` and `while` statements whose test is a plain name,
    `not` a name, or made of variables, operators and builtins (values.expression_reads: `len(word) ==
    1`, `i.isdigit()`), alone on the header's line, with the body on later lines. Testing such a test on
    values of the builtin types runs no code of the program, so the values shown at the header's line
    event say where a step goes (model_backend/grammar/frame.py). Empty for a program whose own
    objects could print like a literal (may_print_a_container: a class with a base, a `__repr__` or
    `__iter__` of its own); another object of the program's shows a repr that is no literal, and then the
    test is left free (an object may be true or false as it likes)."""
    if may_print_a_container(tree):
        return {}
    flow = _Flow(tree)
    starts = statements_per_line(tree)
    bound = bound_names(tree)
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
    starts = statements_per_line(tree)
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


def truth(node: ast.expr, shown: Mapping[str, str]) -> bool | None:
    """Whether `node` is true on the values `shown` holds; None where they do not tell."""
    value = value_of(node, shown)
    return None if value is Unknown else bool(value)
