# mypy: disable-error-code="misc"
# (the rules are methods of FrameConstraint, which inherits them: their `self` is a FrameConstraint)
"""Loops: the element a step from a `for` header binds (lists, strings, ranges, enumerate, expressions of
builtins), or that it leaves the loop."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from model_backend.grammar.loops import ForLoop, for_loops, iterable_elements
from model_backend.grammar.shown import (
    INT_REPR,
    MAX_REPR,
    builtin_value,
    calls_deep,
    element_reprs,
    range_span,
    shown_elements,
)
from model_backend.grammar.source import Source

if TYPE_CHECKING:
    from model_backend.grammar.frame import FrameConstraint


Bindings = tuple[tuple[str, frozenset[str]], ...]  # (variable, the reprs it may take) for each variable bound


@dataclass(frozen=True)
class LoopStep:
    """What a step from a `for` header does (FrameConstraint._loop_step)."""

    loop: ForLoop
    bindings: Bindings  # for each variable the step binds; none: it leaves the loop

    @property
    def leaves(self) -> bool:
        return not self.bindings


class LoopRules:
    """The frame grammar's rules of this family: loops."""

    @cached_property
    def _loop_step(self: FrameConstraint) -> LoopStep | None:
        """After step_into or step_over from the header of a `for` loop over a shown value
        (loops.for_loops): the loop, and the element(s) the step may bind to its variable, or none when it
        leaves the loop. The element is the iterable's first when the loop starts (its variable unbound,
        or the header reached from outside its body), and the one after the variable's value when it goes
        round again (one of those after each place that value holds in the iterable, when it holds
        several). Iterating a value of the builtin types runs no code, so the step changes nothing else.
        None where the rule does not apply."""
        prev = self.prev
        if not self._step_from_line() or prev is None or prev.line not in self.facts.loops:
            return None
        loop = self.facts.loops[prev.line]
        current = prev.locals.get(loop.target)
        starts = True if current is None and loop.unbound_means_start else self._loop_starts(loop)
        if starts is None or (not starts and not loop.round_known):
            return None
        bindings = self._loop_bindings(loop, current, starts)
        if bindings is None:
            return None
        following = self.facts.next_lines.get(prev.line) or frozenset()
        first, last = loop.body
        if bindings and not any(first <= n <= last for n in following & self.facts.frame_lines):
            return None  # never the case for a loop grammar/lines.py follows; a dead end if it were
        return LoopStep(loop, bindings)

    def _loop_bindings(self: FrameConstraint, loop: ForLoop, current: str | None, starts: bool) -> Bindings | None:
        """What a step from the loop's header binds (none: it leaves), by the kind of loop."""
        if loop.expression is not None:
            return self._expression_step(loop, starts)
        if loop.iterated is None:
            return self._range_step(loop, current, starts)
        if loop.counter is not None:
            return self._enumerate_step(loop, current, starts)
        return self._element_step(loop, current, starts)

    def _iterated_values(self: FrameConstraint, loop: ForLoop, name: str, starts: bool) -> list[str] | None:
        """The element reprs of the value `name` shows (constraint.shown_elements), where they tell what
        the loop iterates: always when it starts (the header has just read it); going round again, only
        if the body cannot have changed a list, dict or set (_left_alone)."""
        assert self.prev is not None
        shown = self.prev.locals.get(name)
        parsed = shown_elements(shown) if shown is not None else None
        if shown is None or parsed is None or (parsed[1] and not starts and not self._left_alone(loop, shown)):
            return None
        return parsed[0]

    def _element_step(self: FrameConstraint, loop: ForLoop, current: str | None, starts: bool) -> Bindings | None:
        """The element of `for x in xs` (none: it leaves): the first, or the one after x's value, where
        the passes since the loop started pick among several places that value holds."""
        assert loop.iterated is not None
        values = self._iterated_values(loop, loop.iterated, starts)
        if values is None:
            return None
        after = [0] if starts else [i + 1 for i, value in enumerate(values) if value == current]
        if len(after) > 1:  # the value is there several times: how often the loop came round says which
            passes = self._passes_since_start(loop)
            if passes is not None and passes - 1 in after:
                after = [passes - 1]
        if len({i >= len(values) for i in after}) != 1:
            return None  # the value is not in the iterable, or it may be the last one or not
        taken = frozenset(values[i] for i in after if i < len(values))
        return ((loop.target, taken),) if taken else ()

    def _expression_step(self: FrameConstraint, loop: ForLoop, starts: bool) -> Bindings | None:
        """The element of `for x in EXPRESSION` or `for a, b in EXPRESSION` (none: it leaves), whose
        iterable builtins build from variables (model_backend/grammar/evaluation.py): computed from their
        shown values, which going round again still tell it only if the body cannot have changed a list
        or dict among them (_left_alone; the loop's flags say none is rebound). The element is the first,
        or the one after the variables' values, where the passes since the loop started pick among
        several places those values hold."""
        prev = self.prev
        assert prev is not None and loop.expression is not None
        read = {n.id for n in ast.walk(loop.expression) if isinstance(n, ast.Name)}
        if not starts and not all(self._left_alone(loop, value) for name, value in prev.locals.items()
                                  if name in read and value.startswith(("[", "{"))):
            return None
        names = (loop.counter, loop.target) if loop.counter is not None else (loop.target,)
        values = element_reprs(iterable_elements(loop.expression, prev.locals, MAX_REPR), len(names))
        if values is None:
            return None
        current = tuple(prev.locals.get(name) for name in names)
        after = [0] if starts else [i + 1 for i, value in enumerate(values) if value == current]
        if len(after) > 1:
            passes = self._passes_since_start(loop)
            if passes is not None and passes - 1 in after:
                after = [passes - 1]
        if len({i >= len(values) for i in after}) != 1:
            return None
        taken = {values[i] for i in after if i < len(values)}
        if len(names) == 2 and len(taken) > 1:
            return None  # each name would be free to take its part from another element
        return tuple((name, frozenset(value[k] for value in taken)) for k, name in enumerate(names)) if taken else ()

    def _enumerate_step(self: FrameConstraint, loop: ForLoop, current: str | None, starts: bool) -> Bindings | None:
        """The count and the element of `for i, x in enumerate(xs)` (none: it leaves); the count tells
        where the iteration stands."""
        assert self.prev is not None and loop.iterated is not None and loop.counter is not None
        values = self._iterated_values(loop, loop.iterated, starts)
        if values is None:
            return None
        if starts:
            index = 0
        else:
            count = self.prev.locals.get(loop.counter, "")
            if not INT_REPR.fullmatch(count):
                return None
            index = int(count) - loop.count_from + 1
            if not 0 < index <= len(values) or values[index - 1] != current:
                return None  # not where the shown values say the loop stands
        if index == len(values):
            return ()
        return ((loop.counter, frozenset({repr(loop.count_from + index)})), (loop.target, frozenset({values[index]})))

    def _passes_since_start(self: FrameConstraint, loop: ForLoop) -> int | None:
        """How many times the frame has been on the loop's header since the loop last started, this
        time included, read off the trail: back through single steps (and the calls the frame made) to
        the frame's call or a line outside the loop. None where the trail does not tell (it begins, or
        an action could have skipped a pass)."""
        prev = self.prev
        assert prev is not None and prev.stack
        passes = 1
        for state in self._own_states_back():
            if state.event == "call":  # the frame began with this loop (a generator resumes elsewhere)
                return passes if state.line is not None and not loop.body[0] <= state.line <= loop.body[1] else None
            if state.event != "line" or state.line is None:
                return None
            if state.line == prev.line:
                passes += 1
            elif not loop.body[0] <= state.line <= loop.body[1]:
                return passes  # the line before the loop
        return None

    def _left_alone(self: FrameConstraint, loop: ForLoop, iterated: str) -> bool:
        """Whether the loop's body surely leaves alone the list, dict or set shown as `iterated`
        (loops._mutation_check): it reads builtin values only, and changes no object through a name that
        could be an alias of it."""
        if loop.mutation_check is None or self.prev is None:
            return False
        reads, changed = loop.mutation_check
        shown = self.prev.locals
        return (all(name in shown and builtin_value(shown[name]) for name in reads)
                and all(shown[name] != iterated for name in changed))

    def _loop_stays_in_frame(self: FrameConstraint) -> bool:
        """Whether the event chosen after a loop's step is surely in the loop's frame: a line of its body,
        or, leaving it, a line or the return of a frame that is not a generator's (step_over past a
        generator's end goes on into its consumer)."""
        loop, prev = self._loop_step, self.prev
        if self._comprehension_step is not None:
            return True  # a line, the return or an exception of the comprehension's own frame
        if loop is None or prev is None:
            return False
        return not loop.leaves or self.event == "line" or (
            self.event == "return" and prev.stack[-1].function not in self.facts.suspending)

    def _range_step(self: FrameConstraint, loop: ForLoop, current: str | None, starts: bool) -> Bindings | None:
        """The element (none: it leaves) of a `for` over `range(...)`, whose arguments the shown values tell."""
        assert self.prev is not None

        def length(name: str) -> int | None:
            elements = self._iterated_values(loop, name, starts)
            return len(elements) if elements is not None else None

        span = range_span(loop.range_arguments, self.prev.locals, length)
        if span is None:
            return None
        if starts:
            taken = span[0] if span else None
        elif current is None or not INT_REPR.fullmatch(current) or int(current) not in span:
            return None
        else:
            taken = int(current) + span.step if int(current) + span.step in span else None
        return ((loop.target, frozenset({repr(taken)})),) if taken is not None else ()

    def _loop_starts(self: FrameConstraint, loop: ForLoop) -> bool | None:
        """Whether a step from a loop's header starts the loop (True) or goes round again (False): the
        header was reached by step_into or step_over from a line or call event of the same frame, or
        from the return event of a call it made, outside the body or in it. None where not known."""
        prev = self.prev
        if not self.trail or prev is None or not prev.stack:
            return None
        before, action = self.trail[-1]
        if action not in ("step_into", "step_over") or before.exit is not None:
            return None
        within = calls_deep(before, prev)
        if within == 0 and before.event in ("line", "call"):
            last = before.line  # a call event's line: the def, or where a generator resumes
        elif within == 1 and before.event == "return":
            last = before.stack[len(prev.stack) - 1].line  # the line that made the call
        else:
            return None
        if last is None or last == prev.line:
            return None
        return not loop.body[0] <= last <= loop.body[1]


def facts(source: Source) -> dict[str, Any]:
    """Loops: the `for` loops whose steps the grammar follows."""
    return {"loops": {} if source.dynamic else for_loops(source.tree)}
