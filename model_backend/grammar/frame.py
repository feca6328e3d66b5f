"""Constrained decoding of one frame of the trace format.

A `FrameConstraint` follows the text of a frame as the model writes it and answers two questions:
which special tokens may come next, and whether a piece of ordinary text (a BPE token's bytes) may.
It enforces the grammar of docs/trace-format.md and the program's facts: line numbers of the
program only, function names of the program only, stacks whose callers sit on lines that can call
the frame above them, JSON locals whose keys are names that can be variables of the frame's function,
JSON strings of bounded length holding repr-shaped values (no plain key twice in a dict or a set, where
the program writes no repr of its own); and, given the action, what one step within a frame can do (the
line that can come next, the variables it can change, the value a literal assignment gives:
model_backend/grammar/lines.py). Every path through it ends in a frame that parses.
The source line after `<|src_sep|>` is not generated at all: it follows from the line number and is
fed to the model as forced text.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

import model_backend.grammar.registry as registry
from model_backend import trace_format as fmt
from model_backend.grammar.automata import (
    MAX_TEXT,
    Choice,
    JsonString,
    Locals,
    Slot,
    Stack,
    Value,
)
from model_backend.grammar.facts import ProgramFacts
from model_backend.grammar.rules.back import BackRules
from model_backend.grammar.rules.bindings import BindingRules
from model_backend.grammar.rules.calls import CallRules
from model_backend.grammar.rules.comprehensions import ComprehensionRules
from model_backend.grammar.rules.containers import ContainerRules
from model_backend.grammar.rules.lines import LineRules
from model_backend.grammar.rules.loops import LoopRules
from model_backend.grammar.rules.printing import PrintingRules
from model_backend.grammar.source import EXPRESSION_FRAMES
from model_backend.state import State

_SPECIAL_TOKEN = re.compile(r"<\|[a-z0-9_]+\|>")  # every "<|" of a frame starts one (docs/trace-format.md)


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


@dataclass
class FrameConstraint(LineRules, BindingRules, ContainerRules, LoopRules, ComprehensionRules, CallRules, PrintingRules,
                      BackRules):
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
                          unchanged=frozenset({forced[0]}) if forced is not None and unchanged else self._held(pairs),
                          shaped=(shaped,) if shaped is not None else (),
                          required=frozenset({shaped[0]}) if shaped is not None and not self._fits_before(*shaped) else frozenset(),
                          unique_keys=facts.unique_keys)
        if kind == "value":
            returned = registry.first("value", self)
            return Value(Choice(frozenset({returned})) if returned is not None else None, facts.unique_keys)
        if kind == "string":
            printed = self._printed if self.elements and self.elements[self.position].token == fmt.STDOUT else None
            return Choice(frozenset({fmt._json(printed).encode()})) if printed else JsonString(limit=MAX_TEXT)
        return None  # "src": forced text

    def _step_from_line(self) -> bool:
        """A step_into or step_over from a line event of a frame that grammar/lines.py follows. Its next event is
        in the same frame unless it is a call: pdb stops at a call event before any line or return of
        another frame (tests/model_backend/grammar/test_lines.py, `ndb grammar check`)."""
        prev = self.prev
        return (not self.inverse and self.action in ("step_into", "step_over") and prev is not None
                and prev.exit is None and prev.event == "line" and prev.line is not None
                and bool(prev.stack) and prev.stack[-1].function not in EXPRESSION_FRAMES)

    def _step_within_frame(self) -> bool:
        """Such a step, landing on a line event (of the same frame)."""
        return self.event == "line" and self._step_from_line()

    def _one_event_on(self) -> bool:
        """Whether this frame is the next traced event after `prev`: a forward step_into, or a step_over
        from a call event into the function's first line (LineRules._first_lines_after_call)."""
        prev = self.prev
        if self.action == "step_over":
            return self._first_lines_after_call() is not None
        return (self.action == "step_into" and not self.inverse and prev is not None and prev.exit is None
                and bool(prev.stack))

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
