"""Comprehensions (model_backend/grammar/comprehensions.py): what a comprehension starts with, the
elements it takes and what its caller keeps; sound on real traces, tight where they should be."""

from __future__ import annotations

import ast

from model_backend import trace_format as fmt
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.grammar.bindings import value_repr
from model_backend.program import Program
from model_backend.sandbox import run_trace
from model_backend.state import StackFrame, State
from tests.model_backend.grammar.support import (
    call_events_after_lines,
    frame_accepted,
    on_every_traced_program,
    parsed_expression,
    rules_on_a_program_traced_here,
)

COMPREHENSIONS = """\
def f(items, tokens, s):
    a = [v for v in items if tokens]
    n = 3
    c = [x + n for x in (1, 2)]
    d = [y for y in range(n)]
    e = {z for z in {1: 2}}
    g = [ch for ch in "h\\u00e9"]
    items.extend([w * n for w in s])
    h = sorted([k for k in tokens])
    m = [[0 for _ in items] for _ in items]
    p = {q: n for q in s.split()}
    return a
"""


def test_what_a_comprehension_starts_with() -> None:
    from model_backend.grammar.comprehensions import comprehension_calls, symbol_table

    found = comprehension_calls(symbol_table(COMPREHENSIONS), ast.parse(COMPREHENSIONS))
    assert found == {
        (2, "<listcomp>"): (("name", "items"), ("tokens",), frozenset({"items"})),
        (4, "<listcomp>"): (("type", "tuple_iterator"), ("n",), frozenset()),
        (5, "<listcomp>"): (("type", "range_iterator"), (), frozenset({"n"})),
        (6, "<setcomp>"): (("type", "dict_keyiterator"), (), frozenset()),
        (7, "<listcomp>"): (("type", "str_iterator"), (), frozenset()),
        (8, "<listcomp>"): (("name", "s"), ("n",), frozenset({"items", "s"})),
        (9, "<listcomp>"): (("name", "tokens"), (), frozenset({"tokens"})),
    }  # not 10 (two comprehensions), nor 11 (`s.split()` is a call)


def _comprehension_starts_checked(program: Program, events: list) -> int:
    """On a trace: each comprehension's call event right after a line event of a line in
    facts.comprehensions holds the `.0` and free values the grammar would force; how many were checked."""
    from model_backend.grammar.shown import iterator_type as _iterator_type

    checked = 0
    for event, following, (source, frees, _) in call_events_after_lines(ProgramFacts.of(program).comprehensions, events):
        for name in frees:
            if name in event.locals:
                assert following.locals.get(name) == event.locals[name], (event.line, name)
        iterator = _iterator_type(event.locals.get(source[1])) if source and source[0] == "name" else (
            source[1] if source else None)
        if iterator is not None:
            assert following.locals.get(".0") == f"<{iterator} object>", (event.line, following.locals)
        checked += 1
    return checked


test_every_traced_comprehension_starts_as_its_line_says = on_every_traced_program(_comprehension_starts_checked)


def test_a_program_traced_here_starts_its_comprehensions_as_its_lines_say() -> None:
    program = Program(source=COMPREHENSIONS, entry="f([1], ['t'], 'ab')")
    assert _comprehension_starts_checked(program, run_trace(program).events) == 7


def test_the_grammar_writes_what_a_comprehension_starts_with() -> None:
    facts = ProgramFacts.of(Program(source=COMPREHENSIONS, entry="f([1], ['t'], 'ab')"))
    prev = State(event="line", line=2, stack=[StackFrame(function="f", line=2)],
                 locals={"items": "(1,)", "tokens": "['t']", "s": "'ab'"})

    def accepted(locals_text: str) -> bool:
        constraint = FrameConstraint(facts, prev, False, "step_into")
        constraint.push_frame_text(f"{fmt.EVENT_TOKENS[(False, 'call')]}{fmt.LINENO}2{fmt.STACK}"
                                   f'[["f", 2], ["<listcomp>", 2]]{fmt.SRC}{facts.lines[2]}{fmt.ARG}')
        return constraint.accepts_text(locals_text.encode()) and bool(constraint.slot.feed(locals_text.encode()).complete)  # type: ignore[union-attr]

    assert accepted('{".0": "<tuple_iterator object>", "tokens": "[\'t\']"}')
    assert not accepted('{".0": "<list_iterator object>", "tokens": "[\'t\']"}')  # items holds a tuple
    assert not accepted('{".0": "<tuple_iterator object>"}')  # the free name left out


ITERATED = """\
import math


def tally(name, table, n, words):
    kept = [ch for ch in name if ch != 'b']
    big = {k: v for k, v in table.items() if v > 1}
    grid = [[0 for _ in range(2)] for _ in range(len(name))]
    lengths = sum(len(w) for w in words)
    marks = {i: ch for i, ch in enumerate(name, 1)}
    sizes = len({abs(v) for v in range(-2, n)}) + 1
    kept.extend([ch * 2 for ch in kept])
    roots = [math.floor(len(v)) for v in words]
    both = [a for a in kept] + [b for b in name]
    shown = [print(w) for w in words]
    return [w for w in words if w in big] + [len(name)]
"""


def test_the_comprehensions_whose_elements_the_shown_values_tell() -> None:
    from model_backend.grammar.comprehensions import comprehension_loops

    found = comprehension_loops(ast.parse(ITERATED))
    assert {key: (loop.targets, loop.kind, loop.iterated, loop.makes_frames) for key, loop in found.items()} == {
        (5, "<listcomp>"): (("ch",), "name", "name", False),
        (6, "<dictcomp>"): (("k", "v"), "items", "table", False),
        (7, "<listcomp>"): (("_",), "range", None, True),  # the outer one; the inner one's caller is a comprehension
        (9, "<dictcomp>"): (("i", "ch"), "enumerate", "name", False),
        (10, "<setcomp>"): (("v",), "range", None, False),
        (11, "<listcomp>"): (("ch",), "name", "kept", False),  # `kept.extend(...)` runs after it
        (15, "<listcomp>"): (("w",), "name", "words", False),
    }  # not 8 (a generator expression), 12 (`math.floor` may be anything), 13 (two of a kind on the line),
    # 14 (it prints)
    assert found[(5, "<listcomp>")].reads == frozenset({"name"})


def test_a_program_traced_here_takes_the_elements_its_comprehensions_show() -> None:
    counts = rules_on_a_program_traced_here(ITERATED, "tally('abcb', {'p': 1, 'q': 2, 'r': 3}, 2, ['q', 'x'])")
    assert counts["comprehensions"] >= 50
    assert counts["nested"] >= 4  # back from `[0 for _ in range(2)]` to the next line event of the one around it


def test_the_grammar_names_the_element_a_comprehension_takes() -> None:
    facts = ProgramFacts.of(Program(source=ITERATED, entry="tally('ab', {}, 1, [])"))
    caller = State(event="line", line=5, stack=[StackFrame(function="tally", line=5)],
                   locals={"name": "'aba'", "table": "{}", "n": "1", "words": "[]"})
    stack = [*caller.stack, StackFrame(function="<listcomp>", line=5)]
    call = State(event="call", line=5, stack=stack, locals={".0": "<str_ascii_iterator object>"})

    def at(**bound: str) -> State:
        return State(event="line", line=5, function="<listcomp>", source=facts.lines[5], stack=stack,
                     locals={".0": "<str_ascii_iterator object>", **bound})

    def accepted(action: str, trail: tuple[State, ...], frame: State) -> bool:
        prev, before = trail[-1], trail[:-1]
        constraint = FrameConstraint(facts, prev, False, action, tuple((state, "step_into") for state in before))
        return frame_accepted(constraint, fmt.frame_target(frame, prev, False)[len(fmt.FRAME):])

    start = (caller, call, at())
    assert accepted("step_over", start, at(ch="'a'"))
    assert not accepted("step_over", start, at(ch="'b'"))
    assert not accepted("step_over", start, at())  # it must take an element
    assert accepted("step_into", (*start, at(ch="'a'"), at(ch="'b'")), at(ch="'a'"))  # 'a' again: the third
    assert not accepted("step_into", (*start, at(ch="'a'"), at(ch="'b'")), at(ch="'b'"))
    ended = State(event="return", line=5, function="<listcomp>", source=facts.lines[5], stack=stack, locals=at(ch="'a'").locals, value="['a', 'a']")
    done = (*start, at(ch="'a'"), at(ch="'b'"), at(ch="'a'"))
    assert accepted("step_over", done, ended)
    assert not accepted("step_over", done, at(ch="'a'"))  # the string is done: it returns
    assert not accepted("step_over", done, State(event="return", line=5, function="<listcomp>", source=facts.lines[5], stack=stack, locals=at(ch="'b'").locals,
                                                 value="['a', 'a']"))
    # where the trail does not reach the call, or the shown element is not where it stands: free
    assert accepted("step_over", (at(ch="'a'"), at(ch="'b'")), at(ch="'b'"))
    assert accepted("step_over", (*start, at(ch="'b'")), at(ch="'x'"))
    # a variable it reads holds a value the program could print as it likes: free
    odd = caller.model_copy(update={"locals": {**caller.locals, "name": "<function name>"}})
    assert accepted("step_over", (odd, call, at()), at(ch="'x'"))
    elsewhere = caller.model_copy(update={"line": 4, "stack": [StackFrame(function="tally", line=4)]})
    assert accepted("step_over", (elsewhere, call, at()), at(ch="'x'"))  # not the call's line event


def test_step_into_is_free_where_the_comprehension_makes_frames() -> None:
    facts = ProgramFacts.of(Program(source=ITERATED, entry="tally('ab', {}, 1, [])"))
    caller = State(event="line", line=7, stack=[StackFrame(function="tally", line=7)], locals={"name": "'ab'"})
    stack = [*caller.stack, StackFrame(function="<listcomp>", line=7)]
    call = State(event="call", line=7, stack=stack, locals={".0": "<range_iterator object>"})
    first = State(event="line", line=7, stack=stack, locals={".0": "<range_iterator object>"})
    trail = tuple((state, "step_into") for state in (caller, call))
    assert FrameConstraint(facts, first, False, "step_over", trail)._comprehension_step == (("_", frozenset({"0"})),)
    assert FrameConstraint(facts, first, False, "step_into", trail)._comprehension_step is None


def test_a_caller_keeps_every_value_after_a_comprehension_that_only_reads() -> None:
    facts = ProgramFacts.of(Program(source=ITERATED, entry="tally('ab', {}, 1, [])"))
    shown = {"name": "'aba'", "table": "{'p': 1}", "n": "1", "words": "['q']", "kept": "['a', 'a']"}

    def accepted(line: int, after: dict[str, str], value: str) -> bool:
        caller = State(event="line", line=line, stack=[StackFrame(function="tally", line=line)], locals=shown)
        stack = [*caller.stack, StackFrame(function="<listcomp>", line=line)]
        returning = State(event="return", line=line, function="<listcomp>", source=facts.lines[line], stack=stack,
                          locals={".0": "<list_iterator object>", "ch": "'a'"}, value=value)
        following = State(event="line", line=line + 1, function="tally", source=facts.lines[line + 1],
                          stack=[StackFrame(function="tally", line=line + 1)], locals=after)
        constraint = FrameConstraint(facts, returning, False, "step_over", ((caller, "step_into"),))
        return frame_accepted(constraint, fmt.frame_target(following, returning, False)[len(fmt.FRAME):])

    assert accepted(5, shown | {"kept": "['a', 'a']"}, "['a', 'a']")
    assert not accepted(5, shown | {"kept": "['a']"}, "['a', 'a']")  # `kept = [...]` gets the list returned
    assert not accepted(5, shown | {"kept": "['a', 'a']", "table": "{}"}, "['a', 'a']")  # nothing else changed
    assert accepted(11, shown | {"kept": "['a', 'a', 'aa', 'aa']"}, "['aa', 'aa']")  # `kept.extend(...)` ran after it


def test_the_grammar_goes_back_to_the_comprehension_around_one_that_returns() -> None:
    from model_backend.mdp import TraceMDP
    from model_backend.state import Action

    program = Program(source=ITERATED, entry="tally('abc', {}, 1, [])")
    facts = ProgramFacts.of(program)
    mdp = TraceMDP(run_trace(program))
    walk = [mdp.start_position()]
    while walk[-1] != mdp.exit_position and len(walk) < 2000:
        walk.append(mdp.step(walk[-1], Action(kind="step_into"))[0])
    states = [mdp.state(position) for position in walk]
    # the inner `[0 for _ in range(2)]` returning for the second time, to the outer one's line event
    index = [i for i, state in enumerate(states) if state.event == "return" and len(state.stack) == 3][1]
    prev = states[index]
    state = mdp.state(mdp.step(walk[index], Action(kind="step_over"))[0])
    assert state.locals["_"] == "1" and len(state.stack) == 2
    trail = tuple((before, "step_into") for before in states[:index])

    def accepted(frame: State) -> bool:
        return frame_accepted(FrameConstraint(facts, prev, False, "step_over", trail),
                               fmt.frame_target(frame, prev, False)[len(fmt.FRAME):])

    assert accepted(state)
    assert not accepted(state.model_copy(update={"locals": state.locals | {"_": "0"}}))  # the element taken is the second
    assert not accepted(state.model_copy(update={"locals": state.locals | {"name": "'abc'"}}))  # not the outer's
    back = state.model_copy(update={"function": "tally", "stack": state.stack[:1], "depth": 0, "locals": {"name": "'abc'"}})
    assert not accepted(back)  # the outer one is not done
    assert not accepted(state.model_copy(update={"function": "tally", "stack": state.stack[:1], "depth": 0}))
    assert FrameConstraint(facts, prev, False, "step_over", trail[-3:])._outer_after_inner is None  # call not in the trail


def test_nested_comprehensions_share_one_bound() -> None:
    """A bound for each comprehension alone would allow 10,000 x 10,000 steps; the whole evaluation has
    10,000, and gives up past them."""
    nested = parsed_expression("sum(sum(1 for y in range(n)) for x in range(n))")
    assert value_repr(nested, {"n": "200"}, 200) is None  # 40,200 steps
    assert value_repr(nested, {"n": "50"}, 200) == "2500"
