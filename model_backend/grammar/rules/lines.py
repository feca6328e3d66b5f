# mypy: disable-error-code="misc"
# (the rules are methods of FrameConstraint, which inherits them: their `self` is a FrameConstraint)
"""Lines and branches: which line a step can go to, forward and back, and which event can come next."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cached_property
from typing import TYPE_CHECKING, Any

from model_backend.grammar.automata import stack_after_event
from model_backend.grammar.calls import instance_class, method_call_lines, must_call_lines
from model_backend.grammar.containers import inert_lines
from model_backend.grammar.lines import (
    body_starts,
    call_event_lines,
    frame_ends,
    next_lines,
    statement_line_orders,
    truth_tests,
)
from model_backend.grammar.lines import truth as deduced_truth
from model_backend.grammar.shown import calls_deep, truth_of
from model_backend.grammar.source import EXPRESSION_FRAMES, Source
from model_backend.grammar.syntax import Lines
from model_backend.state import State

if TYPE_CHECKING:
    from model_backend.grammar.frame import FrameConstraint

_NO_EVENT_LINE = re.compile(r"\s*(else|finally)\s*:\s*(#.*)?")  # a clause's header: no code, never a line event


class LineRules:
    """The frame grammar's rules of this family: lines and branches."""

    def _event_may_follow(self: FrameConstraint, event: str) -> bool:
        """After such a step: a line event only if some line can follow the previous one in its frame, a
        return only if the previous line can end the frame, and neither after step_into from a line that
        always calls a function of the program; after step_into, a call only where the frame it comes from
        can call a function of the program. Every other event stays free."""
        if event == "call" and not self._lines_after_event("call"):
            return False
        if self._first_lines_after_call() is not None:
            return event == "line"
        if self._outer_after_inner is not None:
            return event in ("line", "exception")
        taken = self._comprehension_step
        if taken is not None:  # the next element (or an exception while the step works on it), or the end
            return event in ("line", "exception") if taken else event == "return"
        loop = self._loop_step
        if loop is not None and not loop.leaves:
            return event == "line"  # the loop's body, and only there (see _following_lines)
        if event in ("line", "return") and self._caller_line_after_return is not None:
            return self._may_go_on_from(self._caller_line_after_return, event)
        if event == "exception" and self._computes_here:
            return False  # what grammar/evaluation.py computes without an error raised nothing in Python either
        if event not in ("line", "return") or not self._step_from_line():
            return True
        assert self.prev is not None and self.prev.line is not None
        if loop is not None and event == "line":
            return bool(self._lines_after_step())
        if self.action == "step_into" and (self.prev.line in self.facts.must_call or self._calls_a_method()):
            return False
        goes_to = self._truth_step
        if goes_to is not None:  # the branch the shown value takes: a line, or past the frame's end
            return bool(goes_to) if event == "line" else not goes_to
        return self._may_go_on_from(self.prev.line, event)

    def _calls_a_method(self: FrameConstraint) -> bool:
        """Whether the previous state's line always calls a method of the program on a name's object
        (calls.method_call_lines) and that name shows an instance of a class that finds the method."""
        assert self.prev is not None and self.prev.line is not None
        return any(instance_class(self.prev.locals.get(name)) in classes
                   for name, classes in self.facts.method_calls.get(self.prev.line, ()))

    def _first_lines_after_call(self: FrameConstraint) -> frozenset[int] | None:
        """After step_into or step_over from a function's call event: the lines of its first line event,
        which comes next, in the same frame (lines.body_starts). None where the rule does not apply (a
        generator resuming, a lambda or a comprehension called on a `def` line, an unknown function)."""
        prev = self.prev
        if (self.inverse or self.action not in ("step_into", "step_over") or prev is None or prev.exit is not None
                or prev.event != "call" or prev.line is None or not prev.stack):
            return None
        start = self.facts.body_starts.get(prev.line)
        if start is None or start[0] != prev.stack[-1].function:
            return None
        lines = start[1] & self.facts.frame_lines
        return lines or None

    def _may_go_on_from(self: FrameConstraint, line: int, event: str) -> bool:
        """Whether a line or return event can come next in the frame after `line` has run: a line event
        if some line can follow it, a return if it can end the frame (free for a line grammar/lines.py does not know)."""
        following = self.facts.next_lines.get(line)
        if following is None:
            return True
        if event == "line":
            return bool(following & self.facts.frame_lines)
        return line in self.facts.ends

    def _lines_after_event(self: FrameConstraint, event: str | None = None) -> frozenset[int]:
        """The lines the next event can be on, as its stack allows (stack_after_event): a call's in the
        functions its caller's line (or function) can call, on their first lines where they cannot resume
        (lines.call_event_lines), any other event's in the function of the frame it happens in."""
        event = event or self.event
        if not self._one_event_on() or event is None:
            return self.facts.frame_lines
        assert self.prev is not None
        exact, top, _ = stack_after_event(self.prev, event)
        if top is not None:
            functions = self.facts.callees_of.get(top, self.facts.functions) if event == "call" else {top}
        elif exact:  # a call made from the line the caller stands on
            caller = self.prev.stack[exact - 1]
            functions = self.facts.callees_at.get((caller.function, caller.line), self.facts.functions)
        else:
            return self.facts.frame_lines
        if event == "call":  # a frame starts on its code's first line (but a generator's, which resumes)
            starts = self.facts.call_event_lines
            return frozenset(n for n in self.facts.frame_lines
                             if any(n in starts[f] if f in starts else self.facts.may_be_in(f, n) for f in functions))
        return frozenset(n for n in self.facts.frame_lines if any(self.facts.may_be_in(f, n) for f in functions))

    def _following_lines(self: FrameConstraint) -> frozenset[int] | None:
        """A line that can follow the previous one in its frame (None where the rule does not apply)."""
        if self._comprehension_step is not None or self._outer_after_inner is not None:
            assert self.prev is not None and self.prev.line is not None
            return frozenset({self.prev.line})  # the comprehension stands on its one line
        calling = self._caller_line_after_return if self.event == "line" else None
        if calling is not None:  # the caller goes on from the line it called from, as from that line's event
            return self.facts.next_lines[calling]
        return self._lines_after_step() if self._step_within_frame() else None

    def _preceding_lines(self: FrameConstraint) -> frozenset[int] | None:
        """_following_lines backwards: after inv_step_into or inv_step_over from a line event, landing on
        a line event or an inv_line_call (of the same frame: any other frame's events would lie between
        them), the lines that the later one can follow in their frame (lines.next_lines). A line grammar/lines.py
        does not follow stays possible, but for an `else:` or `finally:` (a clause's header holds no
        code and never has an event); so does the later line in the module's frame alone (at the trace's
        first state, a step back stays there). None where the rule does not apply."""
        prev = self.prev
        if (self.action not in ("inv_step_into", "inv_step_over") or self.event not in ("line", "inv_line_call") or prev is None
                or prev.exit is not None or prev.event != "line" or prev.line is None or not prev.stack
                or prev.stack[-1].function in EXPRESSION_FRAMES):
            return None
        later = prev.line
        # at the trace's start (the module's frame, alone on the stack) a step back stays where it is
        stays = later if len(prev.stack) == 1 and prev.stack[0].function == "<module>" else None

        def may_precede(line: int) -> bool:
            following = self.facts.next_lines.get(line)
            if following is None:
                return not _NO_EVENT_LINE.fullmatch(self.facts.lines.get(line, ""))
            return later in following and self._test_may_lead_here(line)

        return frozenset(n for n in self.facts.frame_lines if n == stays or may_precede(n))

    def _test_may_lead_here(self: FrameConstraint, line: int) -> bool:
        """Whether the earlier state may stand on `line`, as far as its test tells: an `if`, `elif` or
        `while` header whose test the grammar computes (lines.truth_tests) binds nothing and changes
        nothing, so it held the later state's values there, and on them the branch it takes must lead to
        the later line (_truth_step, forward, from that header)."""
        prev = self.prev
        if line not in self.facts.truths or prev is None:
            return True
        taken = type(self)(self.facts, self._later_on(line), False, "step_over")._truth_step
        return taken is None or prev.line in taken

    def _later_on(self: FrameConstraint, line: int) -> State:
        """The later state as it would stand on `line` of its frame (the same values): where a forward
        rule is asked what a step from that line does, for a step back onto it."""
        prev = self.prev
        assert prev is not None and prev.stack
        frames = [*prev.stack[:-1], prev.stack[-1].model_copy(update={"line": line})]
        return prev.model_copy(update={"line": line, "stack": frames})

    def _lines_after_step(self: FrameConstraint) -> frozenset[int] | None:
        """_following_lines, for the step from a line whatever event it lands on."""
        assert self.prev is not None and self.prev.line is not None
        following = self.facts.next_lines.get(self.prev.line)
        if not following:
            return None
        following &= self.facts.frame_lines
        ordered = self._statement_successors()
        if ordered is not None and following & ordered:
            following &= ordered
        goes_to = self._truth_step
        if goes_to is not None:
            return following & goes_to
        loop = self._loop_step
        if loop is not None:
            first, last = loop.loop.body
            inside = frozenset(n for n in following if first <= n <= last)
            return following - inside if loop.leaves else inside
        return following

    @cached_property
    def _truth_step(self: FrameConstraint) -> frozenset[int] | None:
        """After step_into or step_over from the header of `if NAME:`, `if not NAME:` or `while NAME:`
        (lines.truth_tests) where NAME shows a literal of the builtin types: the lines the branch it takes
        can go to (empty: the frame ends there). None where the rule does not apply."""
        prev = self.prev
        if not self._step_from_line() or prev is None or prev.line not in self.facts.truths:
            return None
        test = self.facts.truths[prev.line]
        truth = (truth_of(prev.locals.get(test.name)) if test.expression is None
                 else deduced_truth(test.expression, prev.locals))
        if truth is None:
            return None
        lines = (test.taken if truth != test.negated else test.skipped) & self.facts.frame_lines
        following = self.facts.next_lines.get(prev.line)
        if following is None or not lines <= following or (not lines and prev.line not in self.facts.ends):
            return None  # never the case for a test grammar/lines.py follows; a dead end if it were
        return lines

    def _statement_successors(self: FrameConstraint) -> frozenset[int] | None:
        """For a line of a statement whose line events follow its code (lines.statement_line_orders): the
        lines whose event can come next in the frame. The trail says where in the order the frame stands
        (back through single steps and the calls the frame made, to a line outside the statement or the
        frame's call); where it does not tell, every place the line holds in the order counts. After the
        last, the statement is done: the lines after it. None where the rule does not apply."""
        prev = self.prev
        assert prev is not None and prev.line is not None
        entry = self.facts.line_orders.get(prev.line)
        if entry is None:
            return None
        order, (first, last) = entry
        seen = [prev.line]  # the statement's line events so far, latest first
        started = False
        for state in self._own_states_back():
            if state.line is None:
                break
            if state.event == "line" and first <= state.line <= last:
                seen.append(state.line)
                continue
            started = state.event in ("line", "call")
            break
        done = tuple(reversed(seen))
        places = [i for i in range(len(order)) if order[i] == prev.line and i + 1 >= len(done)
                  and order[i + 1 - len(done):i + 1] == done and (not started or i + 1 == len(done))]
        if not places:
            return None
        after = self.facts.next_lines.get(prev.line, frozenset()) - frozenset(range(first, last + 1))
        return frozenset().union(*(frozenset({order[i + 1]}) if i + 1 < len(order) else after for i in places))

    def _own_states_back(self: FrameConstraint) -> Iterator[State]:
        """The states of the previous state's frame in the trail, latest first: back through single steps
        and the calls the frame made (skipped), up to where the trail no longer tells (a jump such as
        `continue`, a step_return out of the frame, a state outside the frame's call)."""
        prev = self.prev
        assert prev is not None
        for state, action in reversed(self.trail):
            within = calls_deep(state, prev)
            if action not in ("step_into", "step_over", "step_return") or state.exit is not None or within is None:
                return
            if within:
                continue  # inside a call the frame made
            if action == "step_return":
                return
            yield state


def entering_in_order(following: dict[int, Lines], orders: dict[int, tuple[tuple[int, ...], tuple[int, int]]]
                      ) -> dict[int, Lines]:
    """`following` (lines.next_lines) for statements whose line events follow their code
    (lines.statement_line_orders): a step from a line outside such a statement lands on its first event
    line, not on any of its lines (its first instruction runs first, and its line differs from the line
    before); a step from one of its lines goes to a line that comes next in the order, or leaves the
    statement (when it ends, or raises to a handler)."""
    result = {}
    for line, lines in following.items():
        entered = set()
        for target in lines:
            order, (first, last) = orders.get(target, ((target,), (line, line)))
            entered.add(target if first <= line <= last else order[0])
        own = orders.get(line)
        if own is not None:
            order, (first, last) = own
            entered = {t for t in entered if not first <= t <= last} | {
                order[i + 1] for i in range(len(order) - 1) if order[i] == line}
        result[line] = frozenset(entered)
    return result


def facts(source: Source) -> dict[str, Any]:
    """Lines and branches: which line can follow which, where a frame can end, the order of a
    statement's line events, `if`/`while` tests, lines that always call, lines that run no code, where
    each function's body starts."""
    tree, dynamic = source.tree, source.dynamic
    orders = statement_line_orders(source.program.source, tree)
    return {"next_lines": entering_in_order(next_lines(tree), orders), "ends": frame_ends(tree),
            "body_starts": body_starts(tree), "line_orders": orders,
            "call_event_lines": {} if dynamic else call_event_lines(tree),
            "truths": {} if dynamic else truth_tests(tree), "must_call": must_call_lines(tree),
            "method_calls": {} if dynamic else method_call_lines(tree),
            "inert": {} if dynamic else inert_lines(tree)}
