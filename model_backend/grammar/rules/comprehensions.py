# mypy: disable-error-code="misc"
# (the rules are methods of FrameConstraint, which inherits them: their `self` is a FrameConstraint)
"""Comprehensions: what a list, set or dict comprehension's frame starts with, the element each step binds, and
what it returns."""

from __future__ import annotations

import ast
from functools import cached_property
from typing import TYPE_CHECKING, Any

from model_backend import safe_ast
from model_backend import trace_format as fmt
from model_backend.grammar.bindings import value_repr
from model_backend.grammar.comprehensions import (
    ComprehensionLoop,
    comprehension_calls,
    comprehension_loops,
    nested_comprehension_loops,
)
from model_backend.grammar.loops import iterable_elements
from model_backend.grammar.rules.loops import Bindings
from model_backend.grammar.shown import (
    MAX_LISTED,
    MAX_REPR,
    builtin_value,
    calls_deep,
    dict_entries,
    element_reprs,
    iterator_type,
    range_span,
    shown_elements,
)
from model_backend.grammar.source import EXPRESSION_FRAMES, Source, comprehension_callers
from model_backend.state import State

if TYPE_CHECKING:
    from model_backend.grammar.frame import FrameConstraint


class ComprehensionRules:
    """The frame grammar's rules of this family: comprehensions."""

    @cached_property
    def _comprehension_step(self: FrameConstraint) -> Bindings | None:
        """After step_into or step_over from a line event of a list, set or dict comprehension's frame
        (comprehensions.comprehension_loops) called by the statement that holds it: the element the step binds to
        its variables, or none when the iterable is done and it returns. The trail says how many line
        events the frame has had since its call (the first comes before any element; each one after it
        follows an element), and the caller's state at the call shows the iterable. None where the rule
        does not apply (step_into where the comprehension makes frames of its own, a trail that does not
        reach the call, a variable read that does not hold a builtin value)."""
        prev = self.prev
        if (self.inverse or self.action not in ("step_into", "step_over") or prev is None or prev.exit is not None
                or prev.event != "line" or prev.line is None):
            return None
        loop = self._comprehension_loop(prev)
        if loop is None or (loop.makes_frames and self.action == "step_into"):
            return None
        entry = self._comprehension_entry()
        if entry is None:
            return None
        passes, caller = entry
        if not all(builtin_value(prev.locals.get(name, caller.locals.get(name))) for name in loop.reads):
            return None
        elements = self._comprehension_elements(loop, caller.locals)
        if elements is None:
            return None
        if passes > 1 and (passes - 2 >= len(elements) or any(
                prev.locals.get(name) != value for name, value in zip(loop.targets, elements[passes - 2], strict=True))):
            return None  # not where the shown values say the comprehension stands
        if passes == 1 and any(name in prev.locals for name in loop.targets):
            return None
        if passes - 1 >= len(elements):
            return ()
        return tuple((name, frozenset({value})) for name, value in zip(loop.targets, elements[passes - 1], strict=True))

    def _comprehension_result(self: FrameConstraint) -> bytes | None:
        """After the step that ends a comprehension (_comprehension_step: no element left): what it
        returns, as JSON. It reads only builtin values that nothing changes while it runs (the rule's
        premise), so that is the whole comprehension computed on the caller's values at its call
        (grammar/evaluation.py; a set's order is never written). None where the rule does not apply (one called by
        another comprehension)."""
        if self.event != "return" or self.stack_written or self._comprehension_step != ():
            return None
        prev = self.prev
        assert prev is not None
        if prev.stack[-2].function in EXPRESSION_FRAMES:
            return None  # one nested in another: the outer one's line event shows its variables before the element
        loop = self._comprehension_loop(prev)
        entry = self._comprehension_entry()
        if loop is None or loop.node is None or entry is None:
            return None
        text = value_repr(loop.node, entry[1].locals, MAX_REPR)
        return fmt._json(text).encode() if text is not None else None

    def _comprehension_loop(self: FrameConstraint, state: State) -> ComprehensionLoop | None:
        """The loop of the comprehension whose frame `state` is in: one its statement calls
        (comprehensions.comprehension_loops), or one nested in such a one (comprehensions.nested_comprehension_loops)."""
        if len(state.stack) < 2 or state.line is None:
            return None
        caller, frame = state.stack[-2], state.stack[-1]
        if caller.function not in EXPRESSION_FRAMES:
            return self.facts.comprehension_loops.get((state.line, frame.function))
        nested = self.facts.nested_loops.get((state.line, frame.function))
        return nested[1] if nested is not None and nested[0] == caller.function and caller.line == state.line else None

    @cached_property
    def _outer_after_inner(self: FrameConstraint) -> tuple[bytes, tuple[tuple[bytes, bytes], ...]] | None:
        """After step_over from the return event of a comprehension nested in another
        (comprehensions.nested_comprehension_loops): the outer one's stack and whole locals at its next line event,
        which binds its variables to the element it was working on (the outer one's step from its line
        event the inner one was called from, as _comprehension_step tells it). None where the rule does
        not apply."""
        prev = self.prev
        if (self.inverse or self.action != "step_over" or prev is None or prev.exit is not None
                or prev.event != "return" or prev.line is None or len(prev.stack) < 3
                or prev.stack[-2].function not in EXPRESSION_FRAMES):
            return None
        nested = self.facts.nested_loops.get((prev.line, prev.stack[-1].function))
        if nested is None or nested[0] != prev.stack[-2].function or prev.stack[-2].line != prev.line:
            return None
        index = self._call_made_at(prev)  # the outer one's line event the inner one was called from
        if index is None:
            return None
        state = self.trail[index][0]
        step = type(self)(self.facts, state, False, "step_over", self.trail[:index])._comprehension_step
        if not step or any(len(values) != 1 for _, values in step):
            return None
        after = dict(state.locals) | {name: next(iter(values)) for name, values in step}
        stack = fmt._json([[f.function, f.line] for f in state.stack]).encode()
        return stack, tuple((name.encode(), fmt._json(value).encode()) for name, value in after.items())

    def _comprehension_entry(self: FrameConstraint) -> tuple[int, State] | None:
        """How many line events the previous state's frame has had since its call event, that one
        included, and the caller's line event the call was made from (step_into), read off the trail
        back through single steps (and the frames the comprehension made); None where it does not tell."""
        prev = self.prev
        assert prev is not None
        count = 1
        for index in range(len(self.trail) - 1, -1, -1):
            state, action = self.trail[index]
            within = calls_deep(state, prev)
            if action not in ("step_into", "step_over") or state.exit is not None or within is None:
                return None
            if within:
                continue
            if state.event == "line":
                count += 1
                continue
            if state.event != "call" or index == 0:
                return None
            caller, how = self.trail[index - 1]
            if (how != "step_into" or caller.exit is not None or caller.event != "line"
                    or caller.stack != prev.stack[:-1]):
                return None
            return count, caller
        return None

    @staticmethod
    def _comprehension_elements(loop: ComprehensionLoop, shown: dict[str, str]) -> list[tuple[str, ...]] | None:
        """What the comprehension iterates, as the reprs its variables take for each element, from the
        caller's shown values; None where they do not tell."""
        if loop.kind == "range":
            def length(name: str) -> int | None:
                parsed = shown_elements(shown.get(name, ""))
                return len(parsed[0]) if parsed is not None else None

            span = range_span(loop.range_arguments, shown, length)
            return [(repr(n),) for n in span] if span is not None and len(span) <= MAX_LISTED else None
        if loop.kind == "expression":
            assert loop.expression is not None
            return element_reprs(iterable_elements(loop.expression, shown, MAX_REPR), len(loop.targets))
        assert loop.iterated is not None
        iterated = shown.get(loop.iterated)
        if iterated is None:
            return None
        if loop.kind == "items":
            try:
                node = safe_ast.parse(iterated, mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            entries = dict_entries(iterated, node) if isinstance(node, ast.Dict) else None
            return [tuple(entry) for entry in entries] if entries is not None else None
        parsed = shown_elements(iterated)
        if parsed is None:
            return None
        if loop.kind == "enumerate":
            return [(repr(loop.count_from + i), element) for i, element in enumerate(parsed[0])]
        return [(element,) for element in parsed[0]]

    def _comprehension_start(self: FrameConstraint, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After step_into from a line whose one comprehension is this frame's (comprehensions.comprehension_calls),
        landing on its call event: `.0`, the iterator of a value whose type its repr shows, and the free
        names among the caller's shown variables, as (key, JSON) pairs. Empty where it does not apply."""
        site = self._call_site()
        call = self.facts.comprehensions.get(site[1]) if site is not None else None
        if site is None or call is None:
            return ()
        prev = site[0]
        source, frees, reads = call
        if not all(builtin_value(prev.locals.get(name)) for name in reads):
            return ()
        shown = {name: prev.locals[name] for name in frees if name in prev.locals}
        iterator = iterator_type(prev.locals.get(source[1])) if source and source[0] == "name" else (
            source[1] if source else None)
        if iterator is not None:
            shown[".0"] = f"<{iterator} object>"
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in shown.items() if name.encode() in keys)


def facts(source: Source) -> dict[str, Any]:
    """Comprehensions: who can call one, what its call binds, its loop, and the loops nested in it."""
    tree, dynamic = source.tree, source.dynamic
    return {"comprehension_callers": {} if dynamic else comprehension_callers(tree),
            "comprehensions": {} if dynamic else comprehension_calls(source.table, tree),
            "comprehension_loops": {} if dynamic else comprehension_loops(tree),
            "nested_loops": {} if dynamic else nested_comprehension_loops(tree)}
