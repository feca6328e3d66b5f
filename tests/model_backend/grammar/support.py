"""Helpers shared by the grammar's tests: the traced corpus, frames fed through the grammar, the rules
counted on a program traced here."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from itertools import pairwise
from typing import Any

import pytest

from model_backend import trace_format as fmt
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.program import Program
from model_backend.sandbox import run_trace
from model_backend.state import StackFrame, State, TraceEvent
from tests.support.corpus import corpus, traced

NAMES = [c.name for c in corpus()]


def on_every_traced_program(check: Callable[[Program, list[TraceEvent]], int]) -> Callable[[str], None]:
    """A test that runs `check` (which asserts what a rule says, and counts the places it checked) on the
    trace of every program of the corpus."""

    @pytest.mark.parametrize("name", NAMES)
    def test(name: str) -> None:
        program, result = traced(name)
        check(program, result.events)

    return test
FLOW = """\
def f(xs, d):
    total = 0
    for x in xs:
        if x > 2:
            total += x
        elif x < 0:
            continue
        else:
            total -= 1
    n = 0
    while True:
        n += 1
        if n > 2:
            break
    with open(d) as fh:
        fh.read()
    try:
        total = total / n
    except ZeroDivisionError:
        total = 0
    finally:
        n = 0
    return total
"""


def locals_accepted(facts: ProgramFacts, prev: State, line: int, locals_text: str, action: str | None) -> bool:
    """Whether the grammar takes `locals_text` as the whole locals of a line event on `line` after `action`."""
    constraint = FrameConstraint(facts, prev, False, action)
    constraint.push_special(fmt.EVENT_TOKENS[(False, "line")])
    constraint.push_special(fmt.LINENO)
    constraint.push_text(str(line).encode())
    constraint.push_special(fmt.ARG)
    return constraint.accepts_text(locals_text.encode()) and bool(constraint.slot.feed(locals_text.encode()).complete)  # type: ignore[union-attr]


def call_events_after_lines(table: dict[tuple[int, str], Any], events: list) -> Iterator[tuple[Any, Any, Any]]:
    """(line event, call event, table entry) for each call event right after a line event whose (line,
    called function) is in `table` and whose entry's last part, the names to check, hold builtin values."""
    from model_backend.grammar.shown import builtin_value as _builtin_value

    for event, following in pairwise(events):
        entry = table.get((event.line, following.function))
        if (event.event == "line" and following.event == "call" and entry is not None
                and all(_builtin_value(event.locals.get(name)) for name in entry[-1])):
            yield event, following, entry


LOOPS = """\
def count(words, table, n):
    seen = []
    total = 0
    for word in words:
        for ch in word:
            if ch in seen:
                total += 1
            seen.append(ch)
    for i in range(1, len(words), 2):
        total += len(words[i])
    for key in table:
        total += table[key]
    for j in range(n):
        j += 1
    for w in words:
        words.append(w) if len(words) < 4 else None
    for k in range(-2, n):
        pass
    for x in seen: total -= 1
    for pos, word in enumerate(words, 1):
        total += pos
    return total
"""


def forward_steps_checked(program: Program, result: Any, actions: tuple[str, ...]) -> dict[str, int]:
    """Walk the trace with each action from every state a step_into walk reaches, and check that the
    grammar, told the steps that led there, accepts the true frame after each step; how many of those
    steps the loop rule governed (steps from a loop's header), the item-store rule, and the rule for a
    return to the caller."""
    from model_backend.mdp import TraceMDP
    from model_backend.state import Action

    facts = ProgramFacts.of(program, objects=True)  # run_trace writes trace format 3
    mdp = TraceMDP(result)
    walk = [mdp.start_position()]
    while walk[-1] != mdp.exit_position and len(walk) < 2000:
        walk.append(mdp.step(walk[-1], Action(kind="step_into"))[0])
    governed = stores = returns = ordered = comprehensions = truths = nested = mutating = computed = mutated = 0
    printed = silent = after_call = 0
    keys = frozenset(name.encode() for name in facts.names)
    states = [mdp.state(position) for position in walk]
    for index, position in enumerate(walk[1:], 1):
        prev = states[index]
        if prev.exit is not None:
            continue
        for action in actions:
            following, stdout = mdp.step(position, Action(kind=action))  # type: ignore[arg-type]
            state = mdp.state(following, stdout=stdout)
            trail = tuple((before, "step_into") for before in states[max(0, index - 64):index])
            constraint = FrameConstraint(facts, prev, False, action, trail)
            governed += constraint._loop_step is not None
            comprehensions += constraint._comprehension_step is not None
            nested += constraint._outer_after_inner is not None
            truths += constraint._truth_step is not None
            constraint.push_frame_text(fmt.frame_target(state, prev, False)[len(fmt.FRAME):])
            assert constraint.done, (prev.line, action)
            stores += constraint._item_store(keys) is not None
            returns += bool(constraint._caller_after_return(keys))
            ordered += (prev.event == "line" and prev.line in facts.line_orders
                        and constraint._statement_successors() is not None)
            mutating += prev.event == "line" and prev.line in facts.mutating and state.event in ("line", "return")
            mutated += bool(constraint._mutated(keys))
            printed += bool(constraint._printed)
            caller = constraint._returned_to_caller()
            after_call += caller is not None and constraint._value_after_call(caller, prev)[1] is not None
            silent += constraint._printed == ""
            computed += bool(constraint._computed(keys)) or (
                prev.line in facts.computed_returns and constraint._returned_value() is not None)
    return {"loops": governed, "stores": stores, "returns": returns, "ordered": ordered,
            "comprehensions": comprehensions, "truths": truths, "nested": nested, "mutating": mutating,
            "computed": computed, "mutated": mutated, "printed": printed, "silent": silent,
            "after_call": after_call}


def rules_on_a_program_traced_here(source: str, entry: str) -> dict[str, int]:
    """Trace the program (it must end normally) and check every step_into and step_over along it
    (forward_steps_checked): how many steps each rule governed."""
    program = Program(source=source, entry=entry)
    result = run_trace(program)
    assert result.exit == "normal"
    return forward_steps_checked(program, result, ("step_into", "step_over"))


def frame_accepted(constraint: FrameConstraint, frame: str) -> bool:
    """Whether the grammar takes the whole frame's text (from right after `<|frame_sep|>`)."""
    try:
        constraint.push_frame_text(frame)
    except ValueError:
        return False
    return constraint.done


def state_at(function: str, line: int, shown: dict[str, str]) -> State:
    return State(event="line", line=line, stack=[StackFrame(function=function, line=line)], locals=shown)


def line_frame(facts: ProgramFacts, number: int, locals_text: str) -> str:
    """A line event's whole frame text, from right after `<|frame_sep|>`."""
    return (f"{fmt.EVENT_TOKENS[(False, 'line')]}{fmt.LINENO}{number}{fmt.ARG}{locals_text}{fmt.SRC}"
            f"{facts.lines[number]}{fmt.END_OF_FRAME}")


def parsed_expression(source: str) -> ast.expr:
    return ast.parse(source, mode="eval").body


FRUIT = """\
def fruit_distribution(s, n):
    lis = list()
    for i in s.split(' '):
        if i.isdigit():
            lis.append(int(i))
    return n - sum(lis)
"""

SPLITS = FRUIT + """\


def tally(text, counts):
    for word, k in sorted(counts.items()):
        text += word * k
    for pair in counts.items():
        text += pair[0]
    for pos in reversed(list(enumerate(text))):
        counts[pos[1]] = pos[0]
    for ch in text[::-2]:
        counts[ch] = counts.get(ch, 0) + 1
    words = [w.upper() for w in text.split('b')]
    return words, counts


def main():
    fruit_distribution('5 apples and 6 oranges', 19)
    fruit_distribution('', 3)
    tally('ab', {'b': 2, 'a': 1})
"""
COMPUTED = """\
def reverse_vowel(text, vowels):
    chars = list(text)
    left, right = 0, len(chars) - 1
    while left < right:
        while left < right and chars[left] not in vowels:
            left += 1
        while left < right and chars[right] not in vowels:
            right -= 1
        if left < right:
            chars[left], chars[right] = chars[right], chars[left]
        left, right = left + 1, right - 1
    return ''.join(chars)


""" + FRUIT + """\


def main():
    reverse_vowel('hello world', 'aeiou')
    fruit_distribution('5 apples and 6 oranges', 19)
"""
