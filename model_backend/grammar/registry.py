"""The declared rules of the frame grammar: where several rules could fill one slot of a frame, which
one wins is their explicit priority here (lower first), never the order of an expression.

Each `Rule` names the slot it fills, the Python behaviour it encodes (one line), and the test that
checks it (docs/grammar.md lists them all; tests/model_backend/grammar/test_registry.py checks that
each test exists and makes its rule win). `first(slot, frame, ask)` asks the slot's rules in order of
priority and gives the first result that says something (a non-empty one), else `otherwise`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from model_backend.grammar.frame import FrameConstraint

# The slots rules fill: the line a frame is on; the one variable a line that only binds it fixes
# ("locals.forced", asked first); the variables its locals must show, from what the step's line binds
# ("locals.bound") or from entering or leaving a frame ("locals.entry", before those of the line); the
# value a return event shows.
SLOTS = ("line", "locals.forced", "locals.entry", "locals.bound", "value")


@dataclass(frozen=True)
class Ask:
    """What a rule filling a frame's locals is given: the names the frame may show (`keys`), and the
    ones a diff may name (`diff_keys`; None: any of `keys`)."""

    keys: frozenset[bytes] = frozenset()
    diff_keys: frozenset[bytes] | None = None

    @property
    def changeable(self) -> frozenset[bytes]:
        """The names the step may change: a diff's, where one is bounded, else every one."""
        return self.keys if self.diff_keys is None else self.diff_keys


@dataclass(frozen=True)
class Rule:
    name: str
    priority: int  # among the rules of one slot, the lower wins
    slot: str
    behaviour: str  # the Python behaviour the rule encodes, in one line
    test: str  # "tests/<path>.py::<test function>" that checks it
    fn: Callable[[FrameConstraint, Ask], Any]


_TESTS = "tests/model_backend/grammar/test_rules.py"


def _rule(name: str, priority: int, slot: str, fn: Callable[[FrameConstraint, Ask], Any], behaviour: str,
          test: str) -> Rule:
    """A rule that the function `test` of _TESTS checks."""
    return Rule(name, priority, slot, behaviour, f"{_TESTS}::{test}", fn)


RULES: tuple[Rule, ...] = (
    _rule("first_body_line", 5, "line", lambda frame, ask: frame._first_lines_after_call(),
          "a step from a function's call event goes to its body's first statement (a docstring runs no code)",
          "test_step_from_a_call_goes_to_the_first_statement"),
    _rule("following_lines", 10, "line", lambda frame, ask: frame._following_lines(),
          "a step within a frame goes to a line that can follow the previous one (Python's control flow)",
          "test_step_goes_to_a_following_line"),
    _rule("preceding_lines", 20, "line", lambda frame, ask: frame._preceding_lines(),
          "a step back within a frame lands on a line that the later line can follow",
          "test_step_back_lands_on_a_preceding_line"),
    _rule("frame_lines", 90, "line", lambda frame, ask: frame.facts.frame_lines,
          "any frame is on a line of a function of the program",
          "test_line_is_a_line_of_the_program"),
    _rule("literal_bound", 10, "locals.forced", lambda frame, ask: frame._literal_bound(),
          "`name = <literal>` binds the literal's value",
          "test_literal_assignment_binds_its_value"),
    _rule("copy_bound", 20, "locals.forced", lambda frame, ask: frame._copy_bound(),
          "`name = other` binds the value `other` holds",
          "test_copy_binds_the_other_value"),
    _rule("constructed_bound", 25, "locals.forced", lambda frame, ask: frame._constructed_bound(),
          "`name = C(...)` of a class without `__repr__` binds an instance written `<__main__.C object>` (format 2)",
          "test_construction_binds_a_new_instance"),
    _rule("append_bound", 30, "locals.forced", lambda frame, ask: frame._append_bound(),
          "`xs.append(v)` leaves the list with `v` added at its end",
          "test_append_adds_the_item_at_the_end"),
    _rule("call_arguments", 10, "locals.entry", lambda frame, ask: frame._call_arguments(ask.keys),
          "a call binds its parameters to the arguments the calling line passes (a method's `self` to the instance it is called on)",
          "test_call_binds_the_arguments"),
    _rule("comprehension_start", 20, "locals.entry", lambda frame, ask: frame._comprehension_start(ask.keys),
          "a comprehension's frame starts with `.0`, an iterator of its iterable, and its free names",
          "test_comprehension_starts_with_its_iterator"),
    _rule("caller_after_return", 30, "locals.entry", lambda frame, ask: frame._caller_after_return(ask.keys),
          "after a return the caller keeps the immutable values it held and binds `NAME = f(...)`'s result",
          "test_caller_keeps_its_values_after_a_return"),
    _rule("kept_in_frame", 40, "locals.entry", lambda frame, ask: frame._kept_in_frame(ask.keys),
          "a parameter no statement binds again keeps a value only a binding can change while its frame lives",
          "test_parameters_keep_their_values_in_their_frame"),
    _rule("imported", 10, "locals.bound", lambda frame, ask: frame._imported(ask.keys),
          "`import m` and `from m import n` bind the names of a known module",
          "test_import_binds_the_module"),
    _rule("computed", 20, "locals.bound", lambda frame, ask: frame._computed(ask.keys),
          "`NAME = EXPR` of variables, operators and builtins binds the value EXPR gives",
          "test_assignment_binds_the_computed_value"),
    _rule("mutated", 30, "locals.bound", lambda frame, ask: frame._mutated(ask.keys),
          "a list or dict method call leaves the container as the method does (`append`, `pop`, ...)",
          "test_method_call_changes_the_container"),
    _rule("computed_back", 40, "locals.bound", lambda frame, ask: frame._computed_back(ask.keys),
          "stepping back over a one-to-one change (`x += c`, `xs.append(v)`) restores the earlier value",
          "test_step_back_restores_the_earlier_value"),
    _rule("attribute_updated", 50, "locals.bound", lambda frame, ask: frame._attribute_updated(ask.changeable),
          "`obj.attr = EXPR` or `obj.attr.append(v)` changes one field of a plain object",
          "test_attribute_update_changes_one_field"),
    _rule("returned_value", 10, "value", lambda frame, ask: frame._returned_value(),
          "`return EXPR` returns the value EXPR gives (a loop left at a frame's end returns None)",
          "test_return_shows_the_returned_value"),
    _rule("comprehension_result", 20, "value", lambda frame, ask: frame._comprehension_result(),
          "a comprehension returns the list, set or dict its elements make",
          "test_comprehension_returns_its_result"),
    _rule("value_after_call", 30, "value", lambda frame, ask: frame._value_after_return(),
          "`return f(...)`-like lines return the value their expression gives with the callee's result",
          "test_return_of_a_call_shows_its_value"),
)

_recorded: list[set[str]] = []


@cache
def rules_of(slot: str) -> tuple[Rule, ...]:
    """The rules that fill `slot`, highest priority first."""
    return tuple(sorted((rule for rule in RULES if rule.slot == slot), key=lambda rule: rule.priority))


def first(slot: str, frame: FrameConstraint, ask: Ask | None = None, otherwise: Any = None) -> Any:
    """The result of the first of `slot`'s rules, by priority, whose result is not empty (or None);
    `otherwise` when none has one."""
    ask = ask if ask is not None else Ask()
    for rule in rules_of(slot):
        result = rule.fn(frame, ask)
        if result:
            for names in _recorded:
                names.add(rule.name)
            return result
    return otherwise


@contextmanager
def recording() -> Iterator[set[str]]:
    """The names of the rules that win a slot while the block runs."""
    names: set[str] = set()
    _recorded.append(names)
    try:
        yield names
    finally:
        del _recorded[next(i for i, recorded in enumerate(_recorded) if recorded is names)]  # by identity
