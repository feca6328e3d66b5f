"""Constrained decoding of one frame of the trace format.

A `FrameConstraint` follows the text of a frame as the model writes it and answers two questions:
which special tokens may come next, and whether a piece of ordinary text (a BPE token's bytes) may.
It enforces the grammar of docs/trace-format.md and the program's facts: line numbers of the
program only, function names of the program only, stacks whose callers sit on lines that can call
the frame above them, JSON locals whose keys are names that can be variables of the frame's function,
JSON strings of bounded length holding repr-shaped values (no plain key twice in a dict or a set, where
the program writes no repr of its own); and, given the action, what one step within a frame can do (the
line that can come next, the variables it can change, the value a literal assignment gives:
model_backend/engine/flow.py). Every path through it ends in a frame that parses.
The source line after `<|src_sep|>` is not generated at all: it follows from the line number and is
fed to the model as forced text.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TypeVar

from model_backend import safe_ast
from model_backend import trace_format as fmt
from model_backend.grammar import registry
from model_backend.grammar.automata import (
    Choice,
    JsonString,
    Locals,
    Slot,
    Spliced,
    Stack,
    Value,
    stack_after_event,
)
from model_backend.grammar.back import container_before, values_before
from model_backend.grammar.bindings import value_repr
from model_backend.grammar.calls import RETURNED, CallExpression
from model_backend.grammar.comprehensions import ComprehensionLoop
from model_backend.grammar.containers import mutation_reprs
from model_backend.grammar.facts import EXPRESSION_FRAMES, ProgramFacts
from model_backend.grammar.lines import truth as deduced_truth
from model_backend.grammar.loops import ForLoop, iterable_elements
from model_backend.grammar.printing import printed_text
from model_backend.grammar.shown import (
    IMMUTABLE_REPR,
    INT_REPR,
    MAX_LISTED,
    MAX_REPR,
    argument_expression,
    bound_texts,
    builtin_value,
    calls_deep,
    dict_entries,
    element_reprs,
    iterator_type,
    object_fields,
    range_span,
    shown_elements,
    store_parts,
    truth_of,
)
from model_backend.grammar.syntax import ArgumentSource
from model_backend.sandbox import Limits
from model_backend.state import State
from model_backend.tracer import MAX_ELEMENTS

_SPECIAL_TOKEN = re.compile(r"<\|[a-z0-9_]+\|>")  # every "<|" of a frame starts one (docs/trace-format.md)
_Entry = TypeVar("_Entry")

_NO_EVENT_LINE = re.compile(r"\s*(else|finally)\s*:\s*(#.*)?")  # a clause's header: no code, never a line event
MAX_LOOP_BACK = 256  # elements a step back onto a loop's header follows from the first (more: left to the model)


# ---- the frame grammar ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Element:
    token: str  # the special token that opens this element
    slot: str | None = None  # "line", "stack", "locals", "value", "string", "src" (forced), or None
    optional: bool = False


def _body(event: str, inverse: bool) -> list[Element]:
    src = Element(fmt.SRC, "src")
    if event in fmt.VALUE_EVENTS:
        return [src, Element(fmt.ARG, "value"), Element(fmt.ARG, "locals", optional=True)]
    if event == "line" and not inverse:
        return [Element(fmt.ARG, "locals"), src]
    return [src, Element(fmt.ARG, "locals")]


def frame_elements(event: str | None, inverse: bool) -> list[Element]:
    """The elements after the event token (or after an exit token when event is None)."""
    tail = [Element(fmt.STDOUT, "string", optional=True)]
    if event is None:
        return [Element(fmt.ARG, "string", optional=True), *tail, Element(fmt.TRACE_END)]
    head = [Element(fmt.LINENO, "line"), Element(fmt.STACK, "stack", optional=True)]
    return [*head, *_body(event, inverse), *tail, Element(fmt.END_OF_FRAME)]



Bindings = tuple[tuple[str, frozenset[str]], ...]  # (variable, the reprs it may take) for each variable bound


@dataclass(frozen=True)
class LoopStep:
    """What a step from a `for` header does (FrameConstraint._loop_step)."""

    loop: ForLoop
    bindings: Bindings  # for each variable the step binds; none: it leaves the loop

    @property
    def leaves(self) -> bool:
        return not self.bindings


@dataclass
class FrameConstraint:
    """Follows one frame, from its event token (right after `<|frame_sep|>`) to its stop token."""

    facts: ProgramFacts
    prev: State | None
    inverse: bool
    action: str | None = None  # the kind of the action taken from `prev`, when known
    # The forward steps that led to `prev`, oldest first, each state with the action taken from it (as
    # far back as known): where a loop's header was reached from (its body: the loop goes on; elsewhere:
    # it starts), and how many times since it started
    trail: tuple[tuple[State, str], ...] = ()
    elements: list[Element] | None = None  # None until the event (or exit) token has been chosen
    position: int = -1  # index of the element being filled (-1: right after the event token)
    slot: Slot | None = None
    slot_kind: str | None = None
    event: str | None = None
    line: int | None = None
    stack_written: bool = False
    stack_depth: int = 0  # the entries of a written stack
    function: str | None = None  # the frame's function, once a written stack has named it
    done: bool = False

    # -- what may come next --------------------------------------------------------------------
    def allowed_specials(self) -> list[str]:
        if self.done:
            return []
        if self.elements is None:
            events = [tok for (inv, event), tok in fmt.EVENT_TOKENS.items() if inv == self.inverse
                      and self._event_may_follow(event)]
            takes_element = self._loop_step is not None and not self._loop_step.leaves
            in_comprehension = self._comprehension_step is not None or self._outer_after_inner is not None
            return events + ([] if self.inverse or takes_element or in_comprehension else list(fmt.EXIT_TOKENS.values()))
        if self.slot_kind == "src" or (self.slot is not None and not self.slot.complete):
            return []  # the forced source text, or a slot that is not finished
        allowed = []
        for element in self.elements[self.position + 1 :]:
            if element.optional and element.token in (fmt.STACK, fmt.STDOUT) and self._loop_stays_in_frame():
                continue  # nothing ran that could print, and the frame is the same
            if element.token == fmt.STDOUT and self._printed == "":
                continue  # the step ran no code that prints
            allowed.append(element.token)
            required = not element.optional or (element.token == fmt.STACK and not self._stack_may_be_omitted()) or (
                element.token == fmt.STDOUT and bool(self._printed))
            if required:
                break
        return allowed

    def _stack_may_be_omitted(self) -> bool:
        # Without a stack the parser takes the previous one: there must be one, and its function must
        # be able to be on the chosen line (a line of another function is a change of scope).
        prev = self.prev
        if prev is None or prev.exit is not None or not prev.stack or self._outer_after_inner is not None:
            return False
        if self._one_event_on() and (prev.event == "return") != (self.event == "call"):
            return False  # one frame more or one less (stack_after_event): the stack changes length
        line = int(self.slot.prefix) if self.slot_kind == "line" and isinstance(self.slot, Choice) else self.line
        return line is None or self.facts.may_be_in(prev.stack[-1].function, line)

    def forced_text(self) -> str | None:
        """Text the model does not choose (the source line), to be fed right after `<|src_sep|>`."""
        if self.slot_kind == "src":
            assert self.line is not None
            return fmt._escape(self.facts.lines.get(self.line, ""))
        return None

    def accepts_text(self, data: bytes) -> bool:
        return self.slot is not None and self.slot.feed(data) is not None

    # -- advancing ---------------------------------------------------------------------------------
    def push_special(self, token: str) -> None:
        if token not in self.allowed_specials():
            raise ValueError(f"{token} is not allowed here")
        if self.elements is None:
            if token in fmt.EXIT_TOKENS.values():
                self.elements = frame_elements(None, self.inverse)
            else:
                self.event = next(e for (inv, e), t in fmt.EVENT_TOKENS.items() if t == token and inv == self.inverse)
                self.elements = frame_elements(self.event, self.inverse)
            return
        if self.slot_kind == "line" and isinstance(self.slot, Choice):
            self.line = int(self.slot.prefix)
        if self.slot_kind == "stack" and isinstance(self.slot, Stack):
            self.function = self.slot.last_function.decode("utf-8", "replace")
            self.stack_depth = self.slot.count
        elif self.slot_kind == "stack" and isinstance(self.slot, Choice):  # a stack the rules name whole
            entries = json.loads(self.slot.prefix)
            self.function, self.stack_depth = entries[-1][0], len(entries)
        self.position = next(
            i for i in range(self.position + 1, len(self.elements)) if self.elements[i].token == token
        )
        element = self.elements[self.position]
        if element.token in (fmt.END_OF_FRAME, fmt.TRACE_END):
            self.done, self.slot, self.slot_kind = True, None, None
            return
        if element.token == fmt.STACK:
            self.stack_written = True
        self.slot_kind = element.slot
        self.slot = self._new_slot(element.slot)

    def _new_slot(self, kind: str | None) -> Slot | None:
        facts = self.facts
        if kind == "line":  # lines some frame of the program can be on
            lines = registry.first("line", self, otherwise=frozenset())
            after_event = self._lines_after_event()  # where the event's stack lets the frame be
            if lines & after_event:
                lines &= after_event
            elif after_event:
                lines = after_event
            return Choice(frozenset(str(n).encode() for n in lines))
        if kind == "stack":
            outer = self._outer_after_inner if self.event == "line" else None
            if outer is not None:
                return Choice(frozenset({outer[0]}))
            stack = Stack.for_frame(facts, self.line)
            prev = self.prev
            if self._one_event_on() and prev is not None and self.event is not None:
                stack = stack.after_event(prev, self.event)
            return stack
        if kind == "locals" and self.event == "line" and self._outer_after_inner is not None and self.stack_written:
            pairs = self._outer_after_inner[1]
            return Locals(keys=frozenset(key for key, _ in pairs), diff_allowed=False,
                          forced=tuple((key, frozenset({value})) for key, value in pairs), unique_keys=facts.unique_keys)
        if kind == "locals":
            keys = frozenset(n.encode() for n in facts.locals_of(self._frame_function()))
            changeable = self._changeable()
            diff_keys = None if changeable is None else frozenset(
                k for k in keys if k.startswith(b"__") or k.decode("utf-8", "replace") in changeable)
            step = self._loop_step if self.event in ("line", "return") and not self.stack_written else None
            bindings = step.bindings if step is not None else (
                self._comprehension_step if self.event in ("line", "return") and not self.stack_written else None)
            if bindings is not None and all(name.encode() in keys for name, _ in bindings):
                # only the loop's variables can change, and only when it takes an element
                assert self.prev is not None
                shown = self.prev.locals
                return Locals(keys=keys, diff_allowed=self._diff_allowed(),
                              diff_keys=frozenset(k for k in keys if k.startswith(b"__"))
                              | {name.encode() for name, _ in bindings},
                              forced=tuple((name.encode(), frozenset(fmt._json(v).encode() for v in values))
                                           for name, values in bindings),
                              unchanged=frozenset(name.encode() for name, values in bindings if shown.get(name) in values),
                              unique_keys=facts.unique_keys)
            forced, unchanged = self._forced_value(keys if diff_keys is None else diff_keys)
            ask = registry.Ask(keys, diff_keys)
            # what the line itself binds: imported names, deduced values, a changed list or dict
            bound_here = registry.first("locals.bound", self, ask, otherwise=()) if forced is None else ()
            pairs = (forced,) if forced is not None else registry.first("locals.entry", self, ask, otherwise=bound_here)
            shaped = self._item_store(keys if diff_keys is None else diff_keys) if forced is None else None
            return Locals(keys=keys, diff_allowed=self._diff_allowed(), diff_keys=diff_keys,
                          forced=tuple((key, frozenset({value})) for key, value in pairs),
                          unchanged=frozenset({forced[0]}) if forced is not None and unchanged else self._held(bound_here),
                          shaped=(shaped,) if shaped is not None else (),
                          required=frozenset({shaped[0]}) if shaped is not None and not self._fits_before(*shaped) else frozenset(),
                          unique_keys=facts.unique_keys)
        if kind == "value":
            returned = registry.first("value", self)
            return Value(Choice(frozenset({returned})) if returned is not None else None, facts.unique_keys)
        if kind == "string":
            printed = self._printed if self.elements and self.elements[self.position].token == fmt.STDOUT else None
            return Choice(frozenset({fmt._json(printed).encode()})) if printed else JsonString()
        return None  # "src": forced text

    def _step_from_line(self) -> bool:
        """A step_into or step_over from a line event of a frame that flow.py follows. Its next event is
        in the same frame unless it is a call: pdb stops at a call event before any line or return of
        another frame (tests/model_backend/grammar/test_lines.py, `ndb grammar check`)."""
        prev = self.prev
        return (not self.inverse and self.action in ("step_into", "step_over") and prev is not None
                and prev.exit is None and prev.event == "line" and prev.line is not None
                and bool(prev.stack) and prev.stack[-1].function not in EXPRESSION_FRAMES)

    def _step_within_frame(self) -> bool:
        """Such a step, landing on a line event (of the same frame)."""
        return self.event == "line" and self._step_from_line()

    def _event_may_follow(self, event: str) -> bool:
        """After such a step: a line event only if some line can follow the previous one in its frame, a
        return only if the previous line can end the frame, and neither after step_into from a line that
        always calls a function of the program; after step_into, a call only where the frame it comes from
        can call a function of the program. Every other event stays free."""
        if event == "call" and not self._lines_after_event("call"):
            return False
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
            return False  # what deduce.py computes without an error raised nothing in Python either
        if event not in ("line", "return") or not self._step_from_line():
            return True
        assert self.prev is not None and self.prev.line is not None
        if loop is not None and event == "line":
            return bool(self._lines_after_step())
        if self.action == "step_into" and self.prev.line in self.facts.must_call:
            return False
        goes_to = self._truth_step
        if goes_to is not None:  # the branch the shown value takes: a line, or past the frame's end
            return bool(goes_to) if event == "line" else not goes_to
        return self._may_go_on_from(self.prev.line, event)

    def _may_go_on_from(self, line: int, event: str) -> bool:
        """Whether a line or return event can come next in the frame after `line` has run: a line event
        if some line can follow it, a return if it can end the frame (free for a line flow.py does not know)."""
        following = self.facts.next_lines.get(line)
        if following is None:
            return True
        if event == "line":
            return bool(following & self.facts.frame_lines)
        return line in self.facts.ends

    @cached_property
    def _computes_here(self) -> bool:
        """After a step from a line that only binds names to, or returns, an expression of variables,
        operators and builtins (flow.computed_values): whether the shown values give that expression a value (and, for
        `A, B = EXPR`, as many elements as names) in deduce.py, which computes only what Python would
        compute without raising."""
        prev = self.prev
        if not self._step_from_line() or prev is None or prev.stack[-1].function in self.facts.suspending:
            return False  # (a generator's step may stop in another frame: pdb's next passes over its yields)
        if prev.line in self.facts.computed_returns:  # `return EXPR`
            return value_repr(self.facts.computed_returns[prev.line], prev.locals, MAX_REPR) is not None
        entry = self.facts.computed.get(prev.line) if prev.line is not None else None
        return entry is not None and bound_texts(*entry, prev.locals) is not None

    @cached_property
    def _caller_line_after_return(self) -> int | None:
        """After step_into or step_over from a callee's return event: the line its caller stands on, where
        flow.py knows that line. The caller's next event is in its own frame (stack_after_event), and it
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

    def _one_event_on(self) -> bool:
        """Whether this frame is the next traced event after `prev` (a forward step_into)."""
        prev = self.prev
        return (self.action == "step_into" and not self.inverse and prev is not None and prev.exit is None
                and bool(prev.stack))

    def _lines_after_event(self, event: str | None = None) -> frozenset[int]:
        """The lines the next event can be on, as its stack allows (stack_after_event): a call's in the
        functions its caller's line (or function) can call, any other event's in the function of the
        frame it happens in."""
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
        return frozenset(n for n in self.facts.frame_lines if any(self.facts.may_be_in(f, n) for f in functions))

    def _following_lines(self) -> frozenset[int] | None:
        """A line that can follow the previous one in its frame (None where the rule does not apply)."""
        if self._comprehension_step is not None or self._outer_after_inner is not None:
            assert self.prev is not None and self.prev.line is not None
            return frozenset({self.prev.line})  # the comprehension stands on its one line
        calling = self._caller_line_after_return if self.event == "line" else None
        if calling is not None:  # the caller goes on from the line it called from, as from that line's event
            return self.facts.next_lines[calling]
        return self._lines_after_step() if self._step_within_frame() else None

    def _preceding_lines(self) -> frozenset[int] | None:
        """_following_lines backwards: after inv_step_into or inv_step_over from a line event, landing on
        a line event or an inv_line_call (of the same frame: any other frame's events would lie between
        them), the lines that the later one can follow in their frame (flow.next_lines). A line flow.py
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

    def _test_may_lead_here(self, line: int) -> bool:
        """Whether the earlier state may stand on `line`, as far as its test tells: an `if`, `elif` or
        `while` header whose test the grammar computes (flow.truth_tests) binds nothing and changes
        nothing, so it held the later state's values there, and on them the branch it takes must lead to
        the later line (_truth_step, forward, from that header)."""
        prev = self.prev
        if line not in self.facts.truths or prev is None:
            return True
        taken = FrameConstraint(self.facts, self._later_on(line), False, "step_over")._truth_step
        return taken is None or prev.line in taken

    def _later_on(self, line: int) -> State:
        """The later state as it would stand on `line` of its frame (the same values): where a forward
        rule is asked what a step from that line does, for a step back onto it."""
        prev = self.prev
        assert prev is not None and prev.stack
        frames = [*prev.stack[:-1], prev.stack[-1].model_copy(update={"line": line})]
        return prev.model_copy(update={"line": line, "stack": frames})

    def _lines_after_step(self) -> frozenset[int] | None:
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
    def _loop_step(self) -> LoopStep | None:
        """After step_into or step_over from the header of a `for` loop over a shown value
        (flow.for_loops): the loop, and the element(s) the step may bind to its variable, or none when it
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
            return None  # never the case for a loop flow.py follows; a dead end if it were
        return LoopStep(loop, bindings)

    def _loop_bindings(self, loop: ForLoop, current: str | None, starts: bool) -> Bindings | None:
        """What a step from the loop's header binds (none: it leaves), by the kind of loop."""
        if loop.expression is not None:
            return self._expression_step(loop, starts)
        if loop.iterated is None:
            return self._range_step(loop, current, starts)
        if loop.counter is not None:
            return self._enumerate_step(loop, current, starts)
        return self._element_step(loop, current, starts)

    def _iterated_values(self, loop: ForLoop, name: str, starts: bool) -> list[str] | None:
        """The element reprs of the value `name` shows (constraint.shown_elements), where they tell what
        the loop iterates: always when it starts (the header has just read it); going round again, only
        if the body cannot have changed a list, dict or set (_left_alone)."""
        assert self.prev is not None
        shown = self.prev.locals.get(name)
        parsed = shown_elements(shown) if shown is not None else None
        if shown is None or parsed is None or (parsed[1] and not starts and not self._left_alone(loop, shown)):
            return None
        return parsed[0]

    def _element_step(self, loop: ForLoop, current: str | None, starts: bool) -> Bindings | None:
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

    def _expression_step(self, loop: ForLoop, starts: bool) -> Bindings | None:
        """The element of `for x in EXPRESSION` or `for a, b in EXPRESSION` (none: it leaves), whose
        iterable builtins build from variables (model_backend/engine/deduce.py): computed from their
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

    def _enumerate_step(self, loop: ForLoop, current: str | None, starts: bool) -> Bindings | None:
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

    @cached_property
    def _truth_step(self) -> frozenset[int] | None:
        """After step_into or step_over from the header of `if NAME:`, `if not NAME:` or `while NAME:`
        (flow.truth_tests) where NAME shows a literal of the builtin types: the lines the branch it takes
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
            return None  # never the case for a test flow.py follows; a dead end if it were
        return lines

    @cached_property
    def _comprehension_step(self) -> Bindings | None:
        """After step_into or step_over from a line event of a list, set or dict comprehension's frame
        (flow.comprehension_loops) called by the statement that holds it: the element the step binds to
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

    def _comprehension_result(self) -> bytes | None:
        """After the step that ends a comprehension (_comprehension_step: no element left): what it
        returns, as JSON. It reads only builtin values that nothing changes while it runs (the rule's
        premise), so that is the whole comprehension computed on the caller's values at its call
        (deduce.py; a set's order is never written). None where the rule does not apply (one called by
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

    def _comprehension_loop(self, state: State) -> ComprehensionLoop | None:
        """The loop of the comprehension whose frame `state` is in: one its statement calls
        (flow.comprehension_loops), or one nested in such a one (flow.nested_comprehension_loops)."""
        if len(state.stack) < 2 or state.line is None:
            return None
        caller, frame = state.stack[-2], state.stack[-1]
        if caller.function not in EXPRESSION_FRAMES:
            return self.facts.comprehension_loops.get((state.line, frame.function))
        nested = self.facts.nested_loops.get((state.line, frame.function))
        return nested[1] if nested is not None and nested[0] == caller.function and caller.line == state.line else None

    @cached_property
    def _outer_after_inner(self) -> tuple[bytes, tuple[tuple[bytes, bytes], ...]] | None:
        """After step_over from the return event of a comprehension nested in another
        (flow.nested_comprehension_loops): the outer one's stack and whole locals at its next line event,
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
        step = FrameConstraint(self.facts, state, False, "step_over", self.trail[:index])._comprehension_step
        if not step or any(len(values) != 1 for _, values in step):
            return None
        after = dict(state.locals) | {name: next(iter(values)) for name, values in step}
        stack = fmt._json([[f.function, f.line] for f in state.stack]).encode()
        return stack, tuple((name.encode(), fmt._json(value).encode()) for name, value in after.items())

    def _comprehension_entry(self) -> tuple[int, State] | None:
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

    def _own_states_back(self) -> Iterator[State]:
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

    def _statement_successors(self) -> frozenset[int] | None:
        """For a line of a statement whose line events follow its code (flow.statement_line_orders): the
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

    def _passes_since_start(self, loop: ForLoop) -> int | None:
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

    def _left_alone(self, loop: ForLoop, iterated: str) -> bool:
        """Whether the loop's body surely leaves alone the list, dict or set shown as `iterated`
        (flow._mutation_check): it reads builtin values only, and changes no object through a name that
        could be an alias of it."""
        if loop.mutation_check is None or self.prev is None:
            return False
        reads, changed = loop.mutation_check
        shown = self.prev.locals
        return (all(name in shown and builtin_value(shown[name]) for name in reads)
                and all(shown[name] != iterated for name in changed))

    def _loop_stays_in_frame(self) -> bool:
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

    def _range_step(self, loop: ForLoop, current: str | None, starts: bool) -> Bindings | None:
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

    def _loop_starts(self, loop: ForLoop) -> bool | None:
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

    def _changeable(self) -> frozenset[str] | None:
        """The variables a diff may name after a step within the frame: those the previous line's
        statement can bind, those any call can rebind, and those whose value may be a mutable object
        (a value whose repr is a number, a string, a bool or None can only change by a new binding),
        unless the line is inert (flow.inert_lines) and every name it reads holds a builtin value; where
        the line changes objects only through some names (flow.mutating_lines), only the mutable values
        whose reprs hold theirs or are held in them.
        Dunder names (a class body's own) are always allowed. The frame's return event right after such
        a step is bound the same way (only the line's statement ran). None where the rule does not apply."""
        if self.inverse:
            return self._changeable_back()
        if self.event not in ("line", "return") or not self._step_from_line() or self.stack_written:
            return None
        prev = self.prev
        assert prev is not None and prev.line is not None
        bound = self.facts.binds.get(prev.line)
        if bound is None:
            return None
        reads = self.facts.inert.get(prev.line)
        if reads is not None and all(builtin_value(prev.locals.get(name)) for name in reads):
            return bound | self.facts.shared  # nothing ran that could change an object
        mutable = {name for name, value in prev.locals.items() if not IMMUTABLE_REPR.fullmatch(value)}
        mutating = self.facts.mutating.get(prev.line)
        if (mutating is not None and all(builtin_value(prev.locals.get(name)) for name in mutating[0])
                and all(len(prev.locals[name]) <= MAX_REPR for name in mutable)):  # no repr cut
            # Only the objects of the names it changes through could change, and any object that holds
            # one of them or is held in one (its repr holds theirs, or theirs holds its), or a view of
            # one (`dict_keys([...])`: any value not of the builtin types stays free)
            changed = [prev.locals[name] for name in mutating[1]]
            mutable = {name for name in mutable if not builtin_value(prev.locals[name])
                       or any(prev.locals[name] in c or c in prev.locals[name] for c in changed)}
        return bound | self.facts.shared | mutable

    def _changeable_back(self) -> frozenset[str] | None:
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
        mutable = {name for name, value in prev.locals.items() if not IMMUTABLE_REPR.fullmatch(value)}
        return bound | self.facts.shared | absent | mutable

    def _step_back_within_frame(self) -> bool:
        """inv_step_into or inv_step_over from a line or return event to a line event of the same frame (no
        stack written), or to its inv_line_call (the same line event, met first going back from a line
        whose statement made calls): the earlier state stands on the line whose statement took it to the
        later one."""
        prev = self.prev
        return (self.action in ("inv_step_into", "inv_step_over") and self.event in ("line", "inv_line_call")
                and not self.stack_written
                and self.line is not None and prev is not None and prev.exit is None and prev.event in ("line", "return")
                and bool(prev.stack) and prev.stack[-1].function not in EXPRESSION_FRAMES)

    def _computed_back(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """_computed and _mutated backwards: after such a step back onto a line that only computes one
        name or changes one list or dict in a way that is one-to-one on its value (`x += c`, `s = t + s`,
        `xs.append(v)`, `x = xs.pop()`, `counts[k] += 1`: deduce.value_before, deduce.container_before),
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

    def _loop_back(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
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
            forward = FrameConstraint(self.facts, at_header.model_copy(update={"locals": locals_}), False, "step_over")
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
            shown = FrameConstraint(self.facts, at_header, False, "step_over")._iterated_values(loop, loop.iterated, False)
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

    def _call_site(self) -> tuple[State, tuple[int, str]] | None:
        """Where this frame is the call event that step_into reached from a line event: that state, and
        (its line, this frame's function)."""
        prev = self.prev
        if (self.event != "call" or self.action != "step_into" or self.inverse or prev is None
                or prev.event != "line" or prev.line is None):
            return None
        return prev, (prev.line, self._frame_function() or "")

    def _call_arguments(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After step_into from a line whose one call is of this frame's function (flow.call_bindings),
        landing on its call event: the parameters whose values the line tells (a name among the caller's
        shown variables, a literal, or an expression whose value deduce.py computes from them), as (key,
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
            if kind == "name":
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

    def _comprehension_start(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After step_into from a line whose one comprehension is this frame's (flow.comprehension_calls),
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

    def _caller_after_return(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After step_into or step_over from a return event to a line or the return of the frame that
        called it: the caller's variables that held a number, a string, a bool or None at the line event
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
        kept = {name: value for name, value in caller.locals.items()
                if (untouched or IMMUTABLE_REPR.fullmatch(value)) and name not in bound and name not in self.facts.shared}
        names, text = self._value_after_call(caller, prev)
        if names and text is not None and self.event == "line":
            kept[names[0]] = text
        result = self.facts.call_results.get(caller.line)
        if result is not None and result[1] == prev.stack[-1].function and prev.value is not None:
            kept[result[0]] = prev.value
        if untouched and loop is not None and loop.result is not None and prev.value is not None:
            kept[loop.result] = prev.value
        return tuple((name.encode(), fmt._json(value).encode()) for name, value in kept.items() if name.encode() in keys)

    def _returned_to_caller(self) -> State | None:
        """After step_into or step_over from a return event to a line or the return of the frame that called
        it: the caller's line event from which the call was made (_caller_at_call); None elsewhere."""
        prev = self.prev
        if (prev is None or prev.event != "return" or self.inverse or self.action not in ("step_into", "step_over")
                or self.event not in ("line", "return") or len(prev.stack) < 2 or not self.stack_written
                or self.stack_depth != len(prev.stack) - 1 or self.function != prev.stack[-2].function
                or self.function in EXPRESSION_FRAMES):  # a comprehension goes on binding its variables on its line
            return None
        return self._caller_at_call(prev)

    def _value_after_return(self) -> bytes | None:
        """After a step from a callee's return to the return of its caller, on a line of
        flow.call_expressions that returns: the value its expression gives with the value returned, as
        JSON (_value_after_call); None where the rule does not apply or the values do not tell."""
        caller = self._returned_to_caller() if self.event == "return" else None
        if caller is None or self.prev is None:
            return None
        names, text = self._value_after_call(caller, self.prev)
        return fmt._json(text).encode() if names is None and text is not None else None

    def _pure_call_line(self, line: int, returning: State) -> CallExpression | None:
        """flow.call_expressions' entry for `line`, where the frame returning is of its function."""
        entry = self.facts.call_expressions.get(line)
        return entry if entry is not None and returning.stack[-1].function == entry[1] else None

    def _value_after_call(self, caller: State, returning: State) -> tuple[tuple[str, ...] | None, str | None]:
        """For a line of flow.call_expressions whose call `returning` returns from: the names it binds (None
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

    def _caller_at_call(self, returning: State) -> State | None:
        """The caller's line event from which the call that `returning` returns from was made: the last
        state of the trail outside that call, if it is the caller's line event on the calling line."""
        index = self._call_made_at(returning)
        return self.trail[index][0] if index is not None else None

    def _call_made_at(self, returning: State) -> int | None:
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

    def _returned_value(self) -> bytes | None:
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

    def _forced_value(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes] | None, bool]:
        """After a step within the frame from a line that is only `name = <literal>` or `name = other`:
        name's value (as JSON), and whether it had that value already. Nothing where the rule does not
        apply, or where `other` is not among the frame's shown variables (a global, a builtin)."""
        if not self._step_within_frame():
            return None, False
        prev = self.prev
        assert prev is not None and prev.line is not None
        if prev.line in self.facts.literals:
            name, text = self.facts.literals[prev.line]
        elif prev.line in self.facts.copies and self.facts.copies[prev.line][1] in prev.locals:
            name, other = self.facts.copies[prev.line]
            text = prev.locals[other]
        elif prev.line in self.facts.appends and (appended := self._appended(*self.facts.appends[prev.line])) is not None:
            name, text = appended
        else:
            return None, False
        if name.encode() not in keys:
            return None, False
        return (name.encode(), fmt._json(text).encode()), prev.locals.get(name) == text

    @cached_property
    def _printed(self) -> str | None:
        """What a step within the frame from a line (to its next line or its return) prints, where the
        shown values tell: the text of a line that only prints expressions of variables, operators and
        builtins (flow.printed_lines, deduce.printed_text), and nothing after a line whose value, branch
        or changed container the grammar computes (no code of the program ran); None elsewhere."""
        prev = self.prev
        if self.event not in ("line", "return") or not self._step_from_line():
            return None
        assert prev is not None and prev.line is not None
        call = self.facts.printed.get(prev.line)
        if call is not None:
            return printed_text(call, prev.locals)
        computed = self.facts.computed.get(prev.line)
        if computed is not None:
            names, expression = computed
            known = (value_repr(expression, prev.locals, MAX_REPR) if len(names) == 1
                     else iterable_elements(expression, prev.locals, MAX_REPR))
            return "" if known is not None else None
        returned = self.facts.computed_returns.get(prev.line)
        if returned is not None:
            return "" if value_repr(returned, prev.locals, MAX_REPR) is not None else None
        mutation = self.facts.mutations.get(prev.line)
        if mutation is not None:
            return "" if mutation_reprs(mutation[1], mutation[0], prev.locals, MAX_REPR) is not None else None
        return "" if prev.line in self.facts.truths and self._truth_step is not None else None

    def _stepped_from(self, table: Mapping[int, _Entry]) -> tuple[State, _Entry] | None:
        """After a step within the frame from a line event: the previous state and the table's entry for
        its line; None elsewhere."""
        prev = self.prev
        if not self._step_within_frame() or prev is None or prev.line not in table:
            return None
        return prev, table[prev.line]  # type: ignore[index]

    def _computed(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a step within the frame from a line that only binds names to an expression of variables,
        operators and builtins (flow.computed_values): those names with the values the expression gives
        on the shown values (model_backend/engine/deduce.py), as (key, JSON) pairs; empty where the
        shown values do not tell, or `A, B = EXPR` gives no pair of whole reprs."""
        entry = self._stepped_from(self.facts.computed)
        if entry is None:
            return ()
        prev, (names, expression) = entry
        texts = bound_texts(names, expression, prev.locals)
        if texts is None or any(name.encode() not in keys for name in names):
            return ()
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in zip(names, texts, strict=True))

    def _mutated(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a step within the frame from a line that changes one list or dict through its name
        (flow.mutations): the container with the value the statement leaves it (and the name bound to
        what its method returns), computed from the shown values (deduce.mutation_reprs), as (key, JSON)
        pairs; empty where the shown values do not tell."""
        entry = self._stepped_from(self.facts.mutations)
        if entry is None:
            return ()
        prev, (container, statement, result) = entry
        reprs = mutation_reprs(statement, container, prev.locals, MAX_REPR)
        if reprs is None or container.encode() not in keys or (result is not None and result.encode() not in keys):
            return ()
        pairs = [(container, reprs[0])] + ([(result, reprs[1])] if result is not None and reprs[1] is not None else [])
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in pairs)

    def _attribute_updated(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a step within the frame (to a line or its return) from a line that only sets one attribute
        of an object or appends to the list one attribute holds (flow.attribute_updates; facts of trace
        format version 3 only): the object's variable with its text after the line, as a (key, JSON) pair.
        Only where the variable shows the whole text of an object of one of the program's plain classes
        (`object_fields`) that does not define the attribute, no other variable shows the same text (it
        may be the same object), and the new value is known: for a set, what the expression gives on the
        shown values and fields (deduce.py), a number, string, bool or None field for `op=`; for an
        append, a number, string, bool or None added to a field that shows a list of literals whose text
        appears nowhere else in the object's (another field may hold the same list) and in no other
        variable. The field keeps its place, or a new one comes last (`__dict__`'s order). Empty elsewhere."""
        if self.event not in ("line", "return") or not self._step_from_line() or self.stack_written:
            return ()
        prev = self.prev
        assert prev is not None and prev.line is not None
        update = self.facts.attribute_updates.get(prev.line)
        if update is None or update.owner.encode() not in keys or prev.stack[-1].function in self.facts.suspending:
            return ()
        text = prev.locals.get(update.owner)
        parsed = object_fields(text) if text is not None else None
        if (text is None or parsed is None or parsed[0] not in self.facts.classes
                or update.attribute in self.facts.classes[parsed[0]]
                or any(other == text for name, other in prev.locals.items() if name != update.owner)):
            return ()
        name, fields = parsed
        old = fields.get(update.attribute)
        if update.kind == "append":
            if (old is None or not old.startswith("[") or shown_elements(old) is None or text.count(old) != 1
                    or any(other == old for other in prev.locals.values())):
                return ()
        elif update.augmented and (old is None or not IMMUTABLE_REPR.fullmatch(old)):
            return ()  # `op=` on a list changes it in place (another field may hold it)
        shown = dict(prev.locals) | {f"{update.owner}.{field}": value for field, value in fields.items()}
        value = value_repr(update.expression, shown, MAX_REPR)
        if value is None or len(value) > MAX_REPR:
            return ()
        if update.kind == "append":
            if not IMMUTABLE_REPR.fullmatch(value):
                return ()
            assert old is not None
            value = f"{old[:-1]}{', ' if old != '[]' else ''}{value}]"
        if update.attribute not in fields and len(fields) >= MAX_ELEMENTS:
            return ()  # the tracer writes `...` after that many fields
        after = name + "(" + ", ".join(f"{field}={v}" for field, v in (fields | {update.attribute: value}).items()) + ")"
        if len(after) > MAX_REPR:
            return ()
        return ((update.owner.encode(), fmt._json(after).encode()),)

    def _imported(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a step within the frame from a line that only imports names of a known module
        (flow.imported_values): those names with their values, as (key, JSON) pairs; empty elsewhere."""
        if not self._step_within_frame():
            return ()
        assert self.prev is not None and self.prev.line is not None
        pairs = self.facts.imports.get(self.prev.line, ())
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in pairs if name.encode() in keys)

    def _held(self, pairs: tuple[tuple[bytes, bytes], ...]) -> frozenset[bytes]:
        """The keys of these (key, JSON) pairs whose variable showed that value already (a diff may leave them out)."""
        shown = self.prev.locals if self.prev is not None else {}
        return frozenset(key for key, value in pairs
                         if key.decode() in shown and fmt._json(shown[key.decode()]).encode() == value)

    def _appended(self, name: str, source: ArgumentSource) -> tuple[str, str] | None:
        """After `name.append(arg)` (flow.appended_values): the list's repr with the argument's added,
        where the list shows its whole repr, the argument a builtin value, and the result fits the cut."""
        assert self.prev is not None and source is not None
        shown = self.prev.locals
        before = shown.get(name)
        if before is None or not before.startswith("[") or shown_elements(before) is None:
            return None
        kind, text = source
        if kind == "name":
            if not builtin_value(shown.get(text)):
                return None  # not shown (a global), or an object whose repr is the program's
            text = shown[text]
        after = f"{before[:-1]}{', ' if before != '[]' else ''}{text}]"
        return (name, after) if len(after) <= Limits().max_repr else None

    def _item_store(self, keys: frozenset[bytes]) -> tuple[bytes, Spliced] | None:
        """After a step within the frame (to a line or its return) from a line that only stores one item
        of a list or a dict (flow.item_stores), with every variable the line reads holding a builtin
        value: the shape of that list or dict, the same but for the one item (`store_parts`)."""
        if self.event not in ("line", "return") or not self._step_from_line() or self.stack_written:
            return None
        prev = self.prev
        assert prev is not None and prev.line is not None
        store = self.facts.stores.get(prev.line)
        if (store is None or store.container.encode() not in keys or prev.stack[-1].function in self.facts.suspending
                or not all(builtin_value(prev.locals.get(name)) for name in store.reads)):
            return None
        parts = store_parts(store, prev.locals)
        return (store.container.encode(), Spliced.of(parts)) if parts is not None else None

    def _fits_before(self, key: bytes, shape: Spliced) -> bool:
        """Whether the variable's value before the step fits the shape: if not (a key added, an item
        inserted), the step changed it, and a diff must name it."""
        assert self.prev is not None
        fed = shape.feed(fmt._json(self.prev.locals[key.decode()]).encode())
        return fed is not None and fed.complete

    def _frame_function(self) -> str | None:
        """The frame's function: from its stack, or the previous frame's when the stack was left out."""
        if self.stack_written:
            return self.function
        prev = self.prev
        return prev.stack[-1].function if prev is not None and prev.exit is None and prev.stack else None

    def _diff_allowed(self) -> bool:
        prev = self.prev
        return (
            prev is not None and self.event != "call" and prev.event in fmt.LOCALS_EVENTS and not self.stack_written
        )

    def push_text(self, data: bytes) -> None:
        fed = self.slot.feed(data) if self.slot is not None else None
        if fed is None:
            raise ValueError(f"{data!r} is not allowed here")
        self.slot = fed

    def push_forced(self) -> None:
        """The forced source text has been fed: the src element is complete."""
        self.slot_kind = None

    def push_frame_text(self, text: str) -> None:
        """Push a whole written frame, from right after `<|frame_sep|>`: special tokens, text, and the
        source line, which must be the forced text. ValueError at the first part the grammar refuses."""
        pos = 0
        for match in _SPECIAL_TOKEN.finditer(text):
            chunk = text[pos:match.start()]
            if self.slot_kind == "src":
                if chunk != self.forced_text():
                    raise ValueError(f"{chunk!r} is not the line's source")
                self.push_forced()
            elif chunk:
                self.push_text(chunk.encode())
            self.push_special(match.group())
            pos = match.end()
