# mypy: disable-error-code="misc"
# (the rules are methods of FrameConstraint, which inherits them: their `self` is a FrameConstraint)
"""Calls and returns: the arguments a call binds, what the caller holds after a return, and the value a return
event shows."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from model_backend import trace_format as fmt
from model_backend.grammar.bindings import value_repr
from model_backend.grammar.calls import (
    INSTANCE_REPR,
    RETURNED,
    CallExpression,
    call_bindings,
    call_expressions,
    call_results,
    pure_functions,
    returned_names,
    returned_tuples,
)
from model_backend.grammar.shown import IMMUTABLE_REPR, MAX_REPR, argument_expression, builtin_value
from model_backend.grammar.source import EXPRESSION_FRAMES, Source, direct_call_lines
from model_backend.grammar.syntax import suspending_functions
from model_backend.sandbox import Limits
from model_backend.state import State

if TYPE_CHECKING:
    from model_backend.grammar.frame import FrameConstraint


class CallRules:
    """The frame grammar's rules of this family: calls and returns."""

    @cached_property
    def _caller_line_after_return(self: FrameConstraint) -> int | None:
        """After step_into or step_over from a callee's return event: the line its caller stands on, where
        grammar/lines.py knows that line. The caller's next event is in its own frame (stack_after_event), and it
        goes on from that line as a step from the line's event would: a line event only on a line that
        can follow it, and a return only from a line that can end the frame (`return g(x)`, the body's
        last line). None where the rule does not apply (a comprehension's or a generator's frame)."""
        prev = self.prev
        if (self.inverse or self.action not in ("step_into", "step_over") or prev is None or prev.exit is not None
                or prev.event != "return" or len(prev.stack) < 2):
            return None
        caller = prev.stack[-2]
        if (caller.function in EXPRESSION_FRAMES or caller.function in self.facts.suspending
                or caller.line not in self.facts.next_lines):
            return None
        return caller.line

    def _call_site(self: FrameConstraint) -> tuple[State, tuple[int, str]] | None:
        """Where this frame is the call event that step_into reached from a line event: that state, and
        (its line, this frame's function)."""
        prev = self.prev
        if (self.event != "call" or self.action != "step_into" or self.inverse or prev is None
                or prev.event != "line" or prev.line is None):
            return None
        return prev, (prev.line, self._frame_function() or "")

    def _call_arguments(self: FrameConstraint, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After step_into from a line whose one call is of this frame's function (calls.call_bindings),
        landing on its call event: the parameters whose values the line tells (a name among the caller's
        shown variables, a literal, or an expression whose value grammar/evaluation.py computes from them), as (key,
        JSON) pairs. Empty where the rule does not apply."""
        site = self._call_site()
        binding = self.facts.calls.get(site[1]) if site is not None else None
        if site is None or binding is None:
            return ()
        prev = site[0]
        bound, reads = binding
        if not all(builtin_value(prev.locals.get(name)) for name in reads):
            return ()  # an argument's expression could change an object another one names
        pairs = []
        for param, source in bound:
            if source is None or param.encode() not in keys:
                continue
            kind, text = source
            if kind == "receiver":  # a method's `self`: the object NAME holds, where it is an instance
                if not INSTANCE_REPR.match(prev.locals.get(text, "")):
                    return ()
                text = prev.locals[text]
            elif kind == "name":
                if text not in prev.locals:
                    continue  # a global or a builtin: not shown, so not known
                text = prev.locals[text]
            elif kind == "expression":
                computed = value_repr(argument_expression(text), prev.locals, MAX_REPR)
                if computed is None:
                    continue
                text = computed
            pairs.append((param.encode(), fmt._json(text).encode()))
        return tuple(pairs)

    def _caller_after_return(self: FrameConstraint, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After step_into or step_over from a return event to a line or the return of the frame that
        called it: the caller's variables that held a value only a binding can change (objects.StableForms),
        or a sealed parameter of the entry frame (sealed.py), at the line event
        of the call (the last state of the caller in the trail) and that neither the line nor a call can
        rebind, with those values (a callee cannot rebind its caller's locals but through `global` or
        `nonlocal`); and for a line that is only `NAME = callee(...)`, NAME with the value returned. As
        (key, JSON) pairs; empty where the rule does not apply."""
        prev = self.prev
        caller = self._returned_to_caller()
        if prev is None or caller is None or caller.line is None:
            return ()
        bound = self.facts.binds.get(caller.line)
        if bound is None:
            return ()
        # A comprehension that only reads, in a statement that only reads, changed no object either
        loop = self.facts.comprehension_loops.get((caller.line, prev.stack[-1].function))
        untouched = loop is not None and loop.statement_reads_only and all(
            builtin_value(prev.locals.get(name, caller.locals.get(name))) for name in loop.reads)
        # A call of a pure function from a line that otherwise only reads changed no object at all
        call = self._pure_call_line(caller.line, prev)
        untouched = untouched or (call is not None and call[1] in self.facts.pure)
        sealed = self.facts.sealed_in(caller)  # the entry frame's parameters that no code changes (sealed.py)
        kept = {name: value for name, value in caller.locals.items()
                if (untouched or self.facts.stable.stable(value) or name in sealed)
                and name not in bound and name not in self.facts.shared}
        names, text = self._value_after_call(caller, prev)
        if names and text is not None and self.event == "line":
            kept[names[0]] = text
        result = self.facts.call_results.get(caller.line)
        if result is not None and result[1] == prev.stack[-1].function and prev.value is not None:
            kept[result[0]] = prev.value
        if untouched and loop is not None and loop.result is not None and prev.value is not None:
            kept[loop.result] = prev.value
        return tuple((name.encode(), fmt._json(value).encode()) for name, value in kept.items() if name.encode() in keys)

    def _returned_to_caller(self: FrameConstraint) -> State | None:
        """After step_into or step_over from a return event to a line or the return of the frame that called
        it: the caller's line event from which the call was made (_caller_at_call); None elsewhere."""
        prev = self.prev
        if (prev is None or prev.event != "return" or self.inverse or self.action not in ("step_into", "step_over")
                or self.event not in ("line", "return") or len(prev.stack) < 2 or not self.stack_written
                or self.stack_depth != len(prev.stack) - 1 or self.function != prev.stack[-2].function
                or self.function in EXPRESSION_FRAMES):  # a comprehension goes on binding its variables on its line
            return None
        return self._caller_at_call(prev)

    def _value_after_return(self: FrameConstraint) -> bytes | None:
        """After a step from a callee's return to the return of its caller, on a line of
        calls.call_expressions that returns: the value its expression gives with the value returned, as
        JSON (_value_after_call); None where the rule does not apply or the values do not tell."""
        caller = self._returned_to_caller() if self.event == "return" else None
        if caller is None or self.prev is None:
            return None
        names, text = self._value_after_call(caller, self.prev)
        return fmt._json(text).encode() if names is None and text is not None else None

    def _pure_call_line(self: FrameConstraint, line: int, returning: State) -> CallExpression | None:
        """calls.call_expressions' entry for `line`, where the frame returning is of its function."""
        entry = self.facts.call_expressions.get(line)
        return entry if entry is not None and returning.stack[-1].function == entry[1] else None

    def _value_after_call(self: FrameConstraint, caller: State, returning: State) -> tuple[tuple[str, ...] | None, str | None]:
        """For a line of calls.call_expressions whose call `returning` returns from: the names it binds (None
        for `return`) and the value its expression gives with the value returned, on the caller's values
        at the call where the call cannot have changed them (the function is pure, or they show numbers,
        strings, bools or None); (None, None) where the rule does not apply or the values do not tell."""
        assert caller.line is not None
        entry = self._pure_call_line(caller.line, returning)
        if entry is None or returning.value is None:
            return None, None
        names, function, expression = entry
        shown = {RETURNED: returning.value}
        for name, value in caller.locals.items():
            if function in self.facts.pure or IMMUTABLE_REPR.fullmatch(value):
                shown[name] = value
        return names, value_repr(expression, shown, MAX_REPR)

    def _caller_at_call(self: FrameConstraint, returning: State) -> State | None:
        """The caller's line event from which the call that `returning` returns from was made: the last
        state of the trail outside that call, if it is the caller's line event on the calling line."""
        index = self._call_made_at(returning)
        return self.trail[index][0] if index is not None else None

    def _call_made_at(self: FrameConstraint, returning: State) -> int | None:
        """The index in the trail of the state _caller_at_call names."""
        outer = returning.stack[:-1]
        for index in range(len(self.trail) - 1, -1, -1):
            state = self.trail[index][0]
            if state.exit is not None:
                return None
            if len(state.stack) > len(outer) and state.stack[:len(outer)] == outer:
                continue  # inside the call
            return index if state.event == "line" and state.stack == outer else None
        return None

    def _returned_value(self: FrameConstraint) -> bytes | None:
        """After a step from a line that is only `return name` to the frame's return event: the value
        `name` showed at the line's event (as JSON). None where the rule does not apply (another frame,
        a generator, a name that is not among the frame's shown variables)."""
        if self.event != "return" or not self._step_from_line() or self.stack_written:
            return None
        prev = self.prev
        assert prev is not None and prev.line is not None
        if self._loop_step is not None:  # a loop left at the end of its frame: the implicit `return None`
            return fmt._json("None").encode()
        if prev.stack[-1].function in self.facts.suspending:
            return None
        names = self.facts.returned_tuples.get(prev.line)
        if names is not None and all(name in prev.locals for name in names):
            texts = [prev.locals[name] for name in names]
            max_repr = Limits().max_repr
            if any(len(text) > max_repr for text in texts):
                return None  # an element the tracer cut: the tuple's repr is not known
            whole = "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"
            return fmt._json(whole if len(whole) <= max_repr else whole[:max_repr] + "...").encode()
        expression = self.facts.computed_returns.get(prev.line)
        if expression is not None:
            text = value_repr(expression, prev.locals, MAX_REPR)
            return fmt._json(text).encode() if text is not None else None
        name = self.facts.returns.get(prev.line)
        if name is None or name not in prev.locals:
            return None
        return fmt._json(prev.locals[name]).encode()


def facts(source: Source) -> dict[str, Any]:
    """Calls and returns: where a function can be called from, what a call binds, generators, pure
    functions, and what `return` lines return."""
    tree, dynamic = source.tree, source.dynamic
    return {"call_lines": {} if dynamic else direct_call_lines(tree), "suspending": suspending_functions(tree),
            "pure": frozenset() if dynamic else pure_functions(tree),
            "call_expressions": {} if dynamic else call_expressions(tree), "returns": returned_names(tree),
            "returned_tuples": returned_tuples(tree),
            "calls": {} if dynamic else call_bindings(tree, source.max_repr, source.objects), "call_results": call_results(tree)}
