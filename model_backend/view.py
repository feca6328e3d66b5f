"""The program view: which of a program's lines the model reads in its header, chosen per state.

A model reads the program in a header of at most `budget` tokens. A program that fits is shown whole,
exactly as before any view existed. A longer one is shown in part, with its true line numbers (the
header numbers every line it shows, so a gap is visible). The parts, in order, each taken whole
while it fits:

1. the function the paused line is in (with the headers of the classes around it);
2. the functions of the other frames on the stack, innermost first;
3. the functions and classes the paused line can call (by name: `f(..)` -> def f or class f,
   `x.m(..)` -> every method m), then those the rest of its function can call;
4. the module's own statements (imports, constants) and every class's statements that are not
   methods (dataclass fields, class constants);
5. the signatures (decorators and `def` lines) of every other function;
6. the other functions whole, nearest to the paused line first.

When part 1 alone does not fit, it is cut to a window around the paused line with the function's
signature. A view stays while it still holds parts 1-3 of the current state (`ProgramView.covers`),
so a session re-encodes its header only when the program's focus moves out of it; the training data
applies the same rule along each trajectory (`model_backend.sampler`), so the model learns the views
it meets.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from model_backend import safe_ast
from model_backend import trace_format as fmt
from model_backend.program import Program
from model_backend.state import State


@dataclass(frozen=True)
class _Unit:
    """A function (or a class) of the program: its lines and what the view needs of it."""

    name: str
    start: int  # first line, decorators included
    end: int
    signature: frozenset[int]  # decorators and the header up to the body
    is_class: bool
    statements: frozenset[int]  # a class's own statements that are not methods (empty for functions)


@dataclass(frozen=True)
class _Outline:
    """What a view is chosen from, computed once per source text."""

    n_lines: int
    functions: tuple[_Unit, ...]
    classes: tuple[_Unit, ...]
    module_lines: frozenset[int]  # module-level statements that are not definitions
    calls: dict[int, frozenset[str]]  # line -> names called from a statement spanning it ('.m' for methods)


def _span(node: ast.stmt) -> tuple[int, int]:
    decorators = getattr(node, "decorator_list", [])
    start = min([node.lineno, *(d.lineno for d in decorators)])
    return start, node.end_lineno or node.lineno


def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> frozenset[int]:
    start, _ = _span(node)
    body_start = node.body[0].lineno if node.body else node.lineno + 1
    return frozenset(range(start, max(node.lineno, body_start - 1) + 1))


@functools.lru_cache(maxsize=32)
def outline(source: str) -> _Outline | None:
    """The program's units, or None when it does not parse (then a view is the whole program)."""
    try:
        tree = safe_ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None
    functions: list[_Unit] = []
    classes: list[_Unit] = []
    calls: dict[int, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            start, end = _span(node)
            functions.append(_Unit(node.name, start, end, _signature(node), False, frozenset()))
        elif isinstance(node, ast.ClassDef):
            start, end = _span(node)
            own: set[int] = set()
            for stmt in node.body:
                if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    s, e = _span(stmt)
                    own.update(range(s, e + 1))
            classes.append(_Unit(node.name, start, end, _signature(node), True, frozenset(own)))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else "." + func.attr if isinstance(func, ast.Attribute) else None
            if name is not None:
                for line in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                    calls.setdefault(line, set()).add(name)
    module_lines: set[int] = set()
    for stmt in tree.body:
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            s, e = _span(stmt)
            module_lines.update(range(s, e + 1))
    return _Outline(
        n_lines=len(source.split("\n")) - (1 if source.endswith("\n") else 0),
        functions=tuple(functions),
        classes=tuple(classes),
        module_lines=frozenset(module_lines),
        calls={line: frozenset(names) for line, names in calls.items()},
    )


def _innermost(units: Iterable[_Unit], line: int) -> _Unit | None:
    around = [u for u in units if u.start <= line <= u.end]
    return min(around, key=lambda u: u.end - u.start) if around else None


def _lines(unit: _Unit) -> frozenset[int]:
    return frozenset(range(unit.start, unit.end + 1))


@dataclass(frozen=True)
class ProgramView:
    """The lines a header shows (None: the whole program) and the lines it had to show for its state."""

    lines: frozenset[int] | None = None
    required: frozenset[int] = frozenset()

    def covers(self, program_source: str, state: State, budget: int, cost: Callable[[int], int]) -> bool:
        """Whether this view still holds what `state` needs (parts 1-3), so that it can stay."""
        if self.lines is None:
            return True
        needed, _ = _needed(program_source, state, budget, cost)
        return needed <= self.lines


def _class_context(o: _Outline, unit: _Unit) -> frozenset[int]:
    """The signatures of the classes around a unit (a method's `class C(Base):` line)."""
    lines: set[int] = set()
    for cls in o.classes:
        if cls.start <= unit.start and unit.end <= cls.end and cls is not unit:
            lines |= cls.signature
    return frozenset(lines)


def _function_part(o: _Outline, unit: _Unit) -> frozenset[int]:
    return _lines(unit) | _class_context(o, unit)


def _stack_lines(state: State) -> list[int]:
    lines = [state.line] if state.line else []
    lines += [frame.line for frame in reversed(state.stack[:-1])] if state.stack else []
    return [n for n in lines if n and n > 0]


def _callees(o: _Outline, line: int) -> list[frozenset[int]]:
    parts: list[frozenset[int]] = []
    for name in sorted(o.calls.get(line, ())):
        if name.startswith("."):
            for unit in o.functions:
                if unit.name == name[1:]:
                    parts.append(_function_part(o, unit))
        else:
            for unit in o.functions:
                if unit.name == name and not any(c.start <= unit.start <= c.end for c in o.classes):
                    parts.append(_lines(unit))
            for cls in o.classes:
                if cls.name == name:  # a class called: its header, fields and constructor
                    init = [_lines(u) for u in o.functions
                            if u.name in ("__init__", "__post_init__") and cls.start <= u.start <= cls.end]
                    parts.append(cls.signature | cls.statements | frozenset().union(*init))
    return parts


def _window(o: _Outline, unit: _Unit | None, line: int, budget: int, cost: Callable[[int], int]) -> frozenset[int]:
    """The paused line with as many lines around it as fit (and the function's signature)."""
    lo_bound, hi_bound = (unit.start, unit.end) if unit else (1, o.n_lines)
    shown = set(unit.signature if unit else ()) | {line}
    used = sum(cost(n) for n in shown)
    lo, hi = line - 1, line + 1
    while lo >= lo_bound or hi <= hi_bound:
        grew = False
        for n in (hi, lo):  # one below, then one above: a window leaning forward, where execution goes
            if lo_bound <= n <= hi_bound and n not in shown and used + cost(n) <= budget:
                shown.add(n)
                used += cost(n)
                grew = True
        if not grew:
            break
        lo, hi = lo - 1, hi + 1
    return frozenset(shown)


def _needed(source: str, state: State, budget: int, cost: Callable[[int], int]) -> tuple[frozenset[int], list[frozenset[int]]]:
    """Parts 1-3 for `state` (what a view must hold) and the optional parts 4-6 in order."""
    o = outline(source)
    if o is None:
        return frozenset(), []
    lines = _stack_lines(state)
    parts: list[frozenset[int]] = []
    if lines:
        here = _innermost(o.functions, lines[0])
        first = _function_part(o, here) if here else o.module_lines
        if sum(cost(n) for n in first) > budget:
            first = _window(o, here, lines[0], budget, cost)
        parts.append(first)
        for line in lines[1:]:
            unit = _innermost(o.functions, line)
            parts.append(_function_part(o, unit) if unit else frozenset({line}))
        parts.extend(_callees(o, lines[0]))
    needed: set[int] = set(parts[0]) if parts else set()  # the paused line at least, whatever its size
    used = sum(cost(n) for n in needed)
    for part in parts[1:]:
        extra = part - needed
        price = sum(cost(n) for n in extra)
        if used + price <= budget:
            needed |= extra
            used += price
    optional: list[frozenset[int]] = []
    if lines:  # what the rest of the paused function calls: where step_into goes next, so the view lasts
        here = _innermost(o.functions, lines[0])
        for line in range(here.start, here.end + 1) if here else ():
            optional.extend(_callees(o, line))
    optional += [o.module_lines, frozenset().union(*(c.signature | c.statements for c in o.classes))]
    optional += [u.signature for u in o.functions]
    anchor = lines[0] if lines else 1
    optional += [_lines(u) for u in sorted(o.functions, key=lambda u: abs((u.start + u.end) // 2 - anchor))]
    return frozenset(needed), optional


def choose_view(source: str, state: State | None, budget: int, cost: Callable[[int], int]) -> ProgramView:
    """The view for `state`: the whole program when it fits `budget`, else parts 1-6 as they fit.
    `cost(n)` is the number of tokens line n takes in the header."""
    o = outline(source)
    if o is None or sum(cost(n) for n in range(1, o.n_lines + 1)) <= budget:
        return ProgramView()
    if state is None:
        return ProgramView(_window(o, None, 1, budget, cost))
    needed, optional = _needed(source, state, budget, cost)
    shown = set(needed)
    used = sum(cost(n) for n in shown)
    for part in optional:
        extra = part - shown
        price = sum(cost(n) for n in extra)
        if extra and used + price <= budget:
            shown |= extra
            used += price
    return ProgramView(frozenset(shown), needed)


class HeaderTooLong(ValueError):
    """Even the smallest view of the program does not fit the model's context."""


def short_entry(entry: str) -> str:
    """`f(...)` for the call `f(<arguments>)`: the callee as written, the arguments left out (the first
    state's locals show their values)."""
    call = safe_ast.parse(entry, mode="eval").body
    assert isinstance(call, ast.Call), entry  # Program.check allows only calls
    return f"{ast.get_source_segment(entry, call.func)}(...)"


class HeaderPlanner:
    """Chooses and encodes the header of one session's program for an engine: `room` is how many
    tokens the header may take, `encode` the engine's tokenizer, `costs[n - 1]` line n's tokens.

    Where the entry's text crowds the smallest view out of the room, the header writes the entry as
    `NAME(...)` from then on (`self.shown`): the arguments' values are in the first state. A program
    whose header fits keeps its entry whole, as in the training data."""

    def __init__(self, program: Program, version: int, room: int, encode: Callable[[str], list[int]],
                 costs: list[int]) -> None:
        self.program, self.version, self.room, self.encode, self.costs = program, version, room, encode, costs
        self._show(program)

    def _show(self, program: Program) -> None:
        self.shown = program
        bare = self.encode(fmt.serialize_header(program.model_copy(update={"source": ""}), self.version))
        self.budget = self.room - len(bare)  # what the program's lines may take

    def cost(self, line: int) -> int:
        return self.costs[line - 1] if 0 < line <= len(self.costs) else 0

    def plan(self, state: State | None) -> tuple[ProgramView, list[int]]:
        """The view for `state` and the header's token ids. Raises HeaderTooLong."""
        view = choose_view(self.program.source, state, self.budget, self.cost)
        ids = self.encode(fmt.serialize_header(self.shown, self.version, view.lines))
        entry = self.program.entry
        if len(ids) > self.room and entry is not None and self.shown is self.program:
            self._show(self.program.model_copy(update={"entry": short_entry(entry)}))
            return self.plan(state)
        if len(ids) > self.room:
            raise HeaderTooLong(f"the program's header takes {len(ids)} tokens where the model reads at most {self.room}")
        return view, ids

    def holds(self, view: ProgramView, state: State) -> bool:
        return view.covers(self.program.source, state, self.budget, self.cost)
