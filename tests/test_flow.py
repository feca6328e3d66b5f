"""The line-flow rule (model_backend/engine/flow.py): sound on real traces, and tight where it should be."""

from __future__ import annotations

import ast

import pytest

from model_backend import trace_format as fmt
from model_backend.engine.constraint import EXPRESSION_FRAMES, FrameConstraint, ProgramFacts
from model_backend.engine.flow import frame_ends, next_lines
from model_backend.program import Program
from model_backend.sandbox import run_trace
from model_backend.state import StackFrame, State
from tests.corpus import corpus, traced

NAMES = [c.name for c in corpus()]


def line_pairs(events: list) -> list[tuple[str, int, int]]:
    """(function, line, next line) for each two line events of one frame in a row (other frames' events
    between them allowed, as step_over skips them)."""
    last: dict[int, int] = {}
    pairs = []
    for event in events:
        if event.event == "line":
            if event.frame_id in last:
                pairs.append((event.function, last[event.frame_id], event.line))
            last[event.frame_id] = event.line
        elif event.event == "return":
            last.pop(event.frame_id, None)
    return pairs


def returns_after_lines(events: list) -> list[tuple[str, int]]:
    """(function, line) of each line event whose frame's next event is its return."""
    last: dict[int, int | None] = {}
    found = []
    for event in events:
        if event.event == "return" and last.get(event.frame_id) is not None:
            found.append((event.function, last[event.frame_id]))
        last[event.frame_id] = event.line if event.event == "line" else None
    return found


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_line_follows_a_line_it_may_follow(name: str) -> None:
    program, result = traced(name)
    tree = ast.parse(program.source)
    following, ends = next_lines(tree), frame_ends(tree)
    followed = [(f, a, b) for f, a, b in line_pairs(result.events) if f not in EXPRESSION_FRAMES]
    assert [(f, a, b) for f, a, b in followed if a in following and b not in following[a]] == []
    returned = [(f, a) for f, a in returns_after_lines(result.events) if f not in EXPRESSION_FRAMES]
    assert [(f, a) for f, a in returned if a in following and a not in ends] == []


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


def test_the_lines_that_can_follow_each_line() -> None:
    following = next_lines(ast.parse(FLOW))
    assert following[2] == {3}  # straight on: never a skipped line
    assert following[3] == {4, 10}  # into the loop, or past it
    assert following[4] == {5, 6}  # the if, or the elif
    assert following[5] == {3}  # the end of the body goes back to the header
    assert following[7] == {3}  # continue
    assert following[9] == {3}
    assert following[12] == {13}
    assert following[13] == {14, 11, 12}  # `while True:` may jump straight back into its body
    assert following[14] == {15}  # break
    assert following[16] == {15}  # the with's exit runs on its header line
    assert following[15] == {16, 17, 18}  # into the body; after the exit, the try (its line, or its body's)
    assert following[18] == {19, 22}  # the handler, or the finally
    assert following[20] == {19, 22}  # the finally (19: the handler's `as` name is cleared on its line)
    assert following[22] == {23}
    assert following[23] == set()  # a return: the next event is the return
    assert frame_ends(ast.parse(FLOW)) == {1, 15, 19, 22, 23}  # (generous: a with's exit, a finally, an except)


def test_a_program_traced_here_never_leaves_the_rule() -> None:
    """The rule on a trace made now, in the sandbox, of every branch of FLOW."""
    source = FLOW + "\n\nimport os\nfor data in ([1, 3, -1, 0], [], [5]):\n    f(data, os.devnull)\n"
    program = Program(source=source)
    result = run_trace(program)
    following = next_lines(ast.parse(source))
    pairs = [(f, a, b) for f, a, b in line_pairs(result.events) if f == "f"]
    assert len({(a, b) for _, a, b in pairs}) >= 20
    assert [(a, b) for _, a, b in pairs if b not in following[a]] == []


def test_the_grammar_applies_it_after_step_into_and_step_over_only() -> None:
    facts = ProgramFacts.of(Program(source=FLOW, entry="f([1], 'x')"))
    prev = State(event="line", line=2, stack=[StackFrame(function="f", line=2)], locals={"xs": "[1]", "d": "'x'"})

    def lines_offered(action: str | None, inverse: bool = False) -> set[int]:
        constraint = FrameConstraint(facts, prev, inverse, action)
        constraint.push_special(fmt.EVENT_TOKENS[(inverse, "line")])
        constraint.push_special(fmt.LINENO)
        return {n for n in facts.lines if constraint.accepts_text(str(n).encode())
                and (constraint.slot.feed(str(n).encode()).complete)}  # type: ignore[union-attr]

    assert lines_offered("step_into") == {3}
    assert lines_offered("step_over") == {3}
    assert lines_offered("step_return") >= {3, 5, 10}
    assert lines_offered(None) >= {3, 5, 10}
    assert lines_offered("inv_step_into", inverse=True) >= {3, 5, 10}

    def events_offered(line: int, action: str | None) -> set[str]:
        state = prev.model_copy(update={"line": line, "stack": [StackFrame(function="f", line=line)]})
        return set(FrameConstraint(facts, state, False, action).allowed_specials())

    line_token, return_token = fmt.EVENT_TOKENS[(False, "line")], fmt.EVENT_TOKENS[(False, "return")]
    assert line_token in events_offered(2, "step_into") and return_token not in events_offered(2, "step_into")
    assert line_token not in events_offered(23, "step_over") and return_token in events_offered(23, "step_over")
    assert {line_token, return_token} <= events_offered(2, "step_return")


def test_a_step_within_the_frame_changes_only_what_it_can() -> None:
    """After step_over from `n = 0` (line 10), a diff may name n (bound there) and xs (a list, which a
    call could mutate), never total or d: an int and a str change only when rebound."""
    facts = ProgramFacts.of(Program(source=FLOW, entry="f([1], 'x')"))
    prev = State(event="line", line=10, stack=[StackFrame(function="f", line=10)],
                 locals={"xs": "[1]", "d": "'x'", "total": "0", "x": "1"})

    def accepted(locals_text: str, action: str | None = "step_over") -> bool:
        constraint = FrameConstraint(facts, prev, False, action)
        constraint.push_special(fmt.EVENT_TOKENS[(False, "line")])
        constraint.push_special(fmt.LINENO)
        constraint.push_text(b"11")
        constraint.push_special(fmt.ARG)
        return constraint.accepts_text(locals_text.encode()) and bool(constraint.slot.feed(locals_text.encode()).complete)  # type: ignore[union-attr]

    assert accepted('{"..": "..", "n": "0"}')
    assert accepted('{"..": "..", "xs": "[2]"}')
    assert accepted('{"..": ".."}')
    assert not accepted('{"..": "..", "total": "1"}')
    assert not accepted('{"..": "..", "n": "0", "d": "\'y\'"}')
    assert accepted('{"..": "..", "total": "1"}', action="step_return")  # a return runs more than one line
    # A full dict is still accepted (the parser takes one anywhere).
    assert accepted('{"xs": "[1]", "d": "\'x\'", "total": "0", "x": "1", "n": "0"}')


def test_the_names_a_step_can_bind() -> None:
    from model_backend.engine.flow import line_bindings, shared_names

    source = ("import os.path as p, sys\n"
              "def g(a=(k := 1)):\n"
              "    global G\n"
              "    for i, (j, *r) in enumerate([]):\n"
              "        pass\n"
              "    y = [z for z in range(3) if (w := z)]\n"
              "    try:\n"
              "        del y\n"
              "    except ValueError as err:\n"
              "        pass\n"
              "    with open(p) as fh, open(p):\n"
              "        q: int = 1\n")
    binds = line_bindings(ast.parse(source))
    assert binds[1] == {"p", "sys"}
    assert binds[2] == {"g", "k"}  # the default runs where the def is
    assert binds[4] == {"i", "j", "r"}
    assert binds[6] == {"y", "w"}  # := leaves the comprehension; z stays in its own frame
    assert binds[8] == {"y"} and binds[9] == {"err"} and binds[11] == {"fh"} and binds[12] == {"q"}
    assert binds[7] == set() and binds[3] == set()
    assert shared_names(ast.parse(source)) == {"G"}
    assert line_bindings(ast.parse("from os import *\nx = 1\n")) == {}
