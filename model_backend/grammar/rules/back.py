# mypy: disable-error-code="misc"
# (the rules are methods of FrameConstraint, which inherits them: their `self` is a FrameConstraint)
"""Steps back: the names a step back can change and the values they held before the line ran."""

from __future__ import annotations

from typing import TYPE_CHECKING

from model_backend import trace_format as fmt
from model_backend.grammar.back import container_before, values_before
from model_backend.grammar.shown import IMMUTABLE_REPR, MAX_REPR, builtin_value
from model_backend.grammar.source import EXPRESSION_FRAMES

if TYPE_CHECKING:
    from model_backend.grammar.frame import FrameConstraint

MAX_LOOP_BACK = 256  # elements a step back onto a loop's header follows from the first (more: left to the model)


class BackRules:
    """The frame grammar's rules of this family: steps back."""

    def _changeable_back(self: FrameConstraint) -> frozenset[str] | None:
        """_changeable backwards: after inv_step_into or inv_step_over from a line event to a line event of
        the same frame (no stack written), the earlier state stands on the line being written, and the
        later one shows what that line's statement left. So the earlier state differs only in what the
        line can bind, what any call can rebind, and the values that may be mutable objects (none of
        those when the line is inert and every name it reads holds a builtin value and is not bound by
        it). A first binding or a `del` makes the earlier state's locals a full dict, which stays free;
        a name the later state lacks may come back (the end of `except E as name:` deletes it).
        None where the rule does not apply."""
        if not self._step_back_within_frame():
            return None
        prev = self.prev
        assert prev is not None and self.line is not None
        bound = self.facts.binds.get(self.line)
        if bound is None:
            return None
        absent = frozenset(name for name in self.facts.locals_of(self._frame_function()) if name not in prev.locals)
        reads = self.facts.inert.get(self.line)
        if reads is not None and not reads & bound and all(builtin_value(prev.locals.get(name)) for name in reads):
            return bound | self.facts.shared | absent
        mutable = {name for name, value in prev.locals.items() if not self.facts.stable.stable(value)}
        mutable -= self.facts.sealed_in(prev)  # the same at every stop of the entry frame (sealed.py)
        return bound | self.facts.shared | absent | mutable

    def _step_back_within_frame(self: FrameConstraint) -> bool:
        """inv_step_into or inv_step_over from a line or return event to a line event of the same frame (no
        stack written), or to its inv_line_call (the same line event, met first going back from a line
        whose statement made calls): the earlier state stands on the line whose statement took it to the
        later one."""
        prev = self.prev
        return (self.action in ("inv_step_into", "inv_step_over") and self.event in ("line", "inv_line_call")
                and not self.stack_written
                and self.line is not None and prev is not None and prev.exit is None and prev.event in ("line", "return")
                and bool(prev.stack) and prev.stack[-1].function not in EXPRESSION_FRAMES)

    def _computed_back(self: FrameConstraint, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """_computed and _mutated backwards: after such a step back onto a line that only computes one
        name or changes one list or dict in a way that is one-to-one on its value (`x += c`, `s = t + s`,
        `xs.append(v)`, `x = xs.pop()`, `counts[k] += 1`: back.value_before, back.container_before),
        that name's value before the line, from the later state's values, as a (key, JSON) pair; empty
        where the rule does not apply or the shown values do not tell."""
        prev = self.prev
        if not self._step_back_within_frame() or prev is None or prev.stack[-1].function in self.facts.suspending:
            return ()
        assert self.line is not None
        if self.line in self.facts.loops:
            return self._loop_back(keys)
        pairs: tuple[tuple[str, str], ...] = ()
        if self.line in self.facts.computed:
            names, expression = self.facts.computed[self.line]
            pairs = values_before(names, expression, prev.locals, MAX_REPR)
        elif self.line in self.facts.mutations:
            container, statement, result = self.facts.mutations[self.line]
            text = container_before(statement, container, result, prev.locals, MAX_REPR)
            pairs = ((container, text),) if text is not None else ()
        if any(name.encode() not in keys for name, _ in pairs):
            return ()
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in pairs)

    def _loop_back(self: FrameConstraint, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """_loop_step backwards, after a step back onto a `for` loop's header: the loop's variables
        before the header ran, as (key, JSON) pairs. Leaving the loop binds nothing, so they held what the
        later state shows. Going into the body, the header took the next element: the variables held the
        element before the shown one (the same before each place the shown one holds). The elements are
        those the forward rule reads (`for x in xs`), or follows from the first on, while each has one
        successor (at most MAX_LOOP_BACK); nothing where the shown element may be the first (the loop
        may have started there, after any earlier value), where the rule cannot tell the elements to
        the end, and where the element before is a list, a dict or any object that is not a number, a
        string, a bool or None (the body may have changed it)."""
        prev, line = self.prev, self.line
        assert prev is not None and prev.line is not None and line is not None
        loop = self.facts.loops[line]
        names = (loop.counter, loop.target) if loop.counter is not None else (loop.target,)
        later = tuple(prev.locals.get(name) for name in names)
        if any(value is None or name.encode() not in keys for name, value in zip(names, later, strict=True)):
            return ()
        pairs = tuple((name.encode(), fmt._json(value).encode()) for name, value in zip(names, later, strict=True)
                      if value is not None)
        if not loop.body[0] <= prev.line <= loop.body[1]:
            return pairs if prev.line in (self.facts.next_lines.get(line) or ()) else ()
        if not loop.round_known:
            return ()
        at_header = self._later_on(line)

        def successors(values: tuple[str | None, ...], starts: bool) -> set[tuple[str, ...]] | None:
            locals_ = {**prev.locals, **{n: v for n, v in zip(names, values, strict=True) if v is not None}}
            forward = type(self)(self.facts, at_header.model_copy(update={"locals": locals_}), False, "step_over")
            bindings = forward._loop_bindings(loop, locals_.get(loop.target), starts)
            if bindings is None:
                return None
            if not bindings:
                return set()
            taken = dict(bindings)
            if any(len(taken[n]) != 1 for n in names):
                return None
            return {tuple(next(iter(taken[n])) for n in names)}

        first = successors(later, True)
        if not first or later in first:
            return ()  # the loop may start here, whatever the variables held
        elements: list[tuple[str, ...]]
        if loop.iterated is not None and loop.counter is None and loop.expression is None:
            # `for x in xs`: the elements xs shows, as _element_step reads them (repeated ones too)
            shown = type(self)(self.facts, at_header, False, "step_over")._iterated_values(loop, loop.iterated, False)
            if shown is None or len(shown) > MAX_LOOP_BACK:
                return ()
            elements = [(value,) for value in shown]
        else:  # a range, enumerate or expression: one element after another, by the forward rule
            elements = [first.pop()]
            while True:  # to the loop's end: an element left out could be the shown one, after another
                following = successors(elements[-1], False)
                if following is None or len(elements) == MAX_LOOP_BACK:
                    return ()
                if not following:
                    break
                elements.append(following.pop())
        before = {elements[i - 1] for i in range(1, len(elements)) if elements[i] == later}
        if len(before) != 1:
            return ()
        (values,) = before
        if not all(IMMUTABLE_REPR.fullmatch(value) for value in values):
            return ()  # the body may have changed that element since the header took it
        return tuple((name.encode(), fmt._json(value).encode()) for name, value in zip(names, values, strict=True))
