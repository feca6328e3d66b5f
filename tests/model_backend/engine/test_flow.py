"""The line-flow rule (model_backend/grammar/): sound on real traces, and tight where it should be."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from itertools import pairwise
from typing import Any

import pytest

from model_backend import trace_format as fmt
from model_backend.grammar import EXPRESSION_FRAMES, FrameConstraint, ProgramFacts
from model_backend.grammar.bindings import value_repr
from model_backend.grammar.lines import frame_ends, next_lines
from model_backend.program import Program
from model_backend.sandbox import run_trace
from model_backend.state import StackFrame, State
from tests.support.corpus import corpus, traced

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
    # backwards, only a line that the later line can follow; none can precede line 2 (the frame's first:
    # its call event comes before it), so there the rule gives way rather than leave no line
    assert lines_offered("inv_step_into", inverse=True) >= {3, 5, 10}
    assert lines_offered("inv_step_call", inverse=True) >= {3, 5, 10}  # a jump: any line
    prev = prev.model_copy(update={"line": 4, "stack": [StackFrame(function="f", line=4)], "locals": {
        "xs": "[1]", "d": "'x'", "total": "0", "x": "1"}})
    assert lines_offered("inv_step_into", inverse=True) == {3}  # `for x in xs:` (never `else:`, line 8)
    assert lines_offered("inv_step_over", inverse=True) == {3}

    def events_offered(line: int, action: str | None) -> set[str]:
        state = prev.model_copy(update={"line": line, "stack": [StackFrame(function="f", line=line)]})
        return set(FrameConstraint(facts, state, False, action).allowed_specials())

    line_token, return_token = fmt.EVENT_TOKENS[(False, "line")], fmt.EVENT_TOKENS[(False, "return")]
    assert line_token in events_offered(2, "step_into") and return_token not in events_offered(2, "step_into")
    assert line_token not in events_offered(23, "step_over") and return_token in events_offered(23, "step_over")
    assert {line_token, return_token} <= events_offered(2, "step_return")


def test_a_step_within_the_frame_changes_only_what_it_can() -> None:
    """After step_over from `n += 1` (line 12), a diff names n (bound there), as 1 (deduce.py), and
    never total or d (an int and a str change only when rebound) nor xs (nothing the line does on an
    int reaches a list: flow.mutating_lines)."""
    facts = ProgramFacts.of(Program(source=FLOW, entry="f([1], 'x')"))
    prev = State(event="line", line=12, stack=[StackFrame(function="f", line=12)],
                 locals={"xs": "[1]", "d": "'x'", "total": "0", "x": "1", "n": "0"})

    def accepted(locals_text: str, action: str | None = "step_over") -> bool:
        return _locals_accepted(facts, prev, 13, locals_text, action)

    assert accepted('{"..": "..", "n": "1"}')
    assert not accepted('{"..": "..", "n": "1", "xs": "[2]"}')  # nothing `n += 1` does on an int reaches xs
    assert not accepted('{"..": ".."}')  # `n += 1` on a shown int gives 1 (deduce.py): the diff must say so
    assert not accepted('{"..": "..", "n": "2"}')
    assert not accepted('{"..": "..", "total": "1"}')
    assert not accepted('{"..": "..", "n": "1", "d": "\'y\'"}')
    assert accepted('{"..": "..", "total": "1"}', action="step_return")  # a return runs more than one line
    # A full dict is still accepted (the parser takes one anywhere).
    assert accepted('{"xs": "[1]", "d": "\'x\'", "total": "0", "x": "1", "n": "1"}')


def test_the_return_right_after_a_step_changes_only_what_the_line_can() -> None:
    """After step_over from `return total` (line 23) to the frame's return event, a diff written there
    never names the str d or the int n. Nor the list xs while `total` holds a number (the line is inert:
    nothing it does can change an object); it may when `total` holds an object whose operations could
    be the program's code."""
    facts = ProgramFacts.of(Program(source=FLOW, entry="f([1], 'x')"))

    def accepted(locals_text: str, action: str = "step_over", total: str = "0") -> bool:
        prev = State(event="line", line=23, stack=[StackFrame(function="f", line=23)],
                     locals={"xs": "[1]", "d": "'x'", "total": total, "x": "1", "n": "0"})
        constraint = FrameConstraint(facts, prev, False, action)
        constraint.push_frame_text(f"{fmt.EVENT_TOKENS[(False, 'return')]}{fmt.LINENO}23{fmt.SRC}{facts.lines[23]}"
                                   f"{fmt.ARG}{fmt._json(total)}{fmt.ARG}")  # the value: total's (returned_names)
        return constraint.accepts_text(locals_text.encode()) and bool(constraint.slot.feed(locals_text.encode()).complete)  # type: ignore[union-attr]

    assert not accepted('{"..": "..", "xs": "[1, 2]"}')
    assert accepted('{"..": "..", "xs": "[1, 2]"}', total="<Total object>")
    assert not accepted('{"..": "..", "d": "\'y\'"}')
    assert not accepted('{"..": "..", "n": "2"}')
    assert accepted('{"..": "..", "n": "2"}', action="step_return")


def _locals_accepted(facts: ProgramFacts, prev: State, line: int, locals_text: str, action: str | None) -> bool:
    """Whether the grammar takes `locals_text` as the whole locals of a line event on `line` after `action`."""
    constraint = FrameConstraint(facts, prev, False, action)
    constraint.push_special(fmt.EVENT_TOKENS[(False, "line")])
    constraint.push_special(fmt.LINENO)
    constraint.push_text(str(line).encode())
    constraint.push_special(fmt.ARG)
    return constraint.accepts_text(locals_text.encode()) and bool(constraint.slot.feed(locals_text.encode()).complete)  # type: ignore[union-attr]


def test_a_step_over_a_literal_assignment_binds_exactly_that_literal() -> None:
    """After a step from `n = 0` (line 10) to the next line, n is 0: written with that value, and not
    left out (unless a diff leaves it out because it was 0 already)."""
    facts = ProgramFacts.of(Program(source=FLOW, entry="f([1], 'x')"))
    prev = State(event="line", line=10, stack=[StackFrame(function="f", line=10)],
                 locals={"xs": "[1]", "d": "'x'", "total": "0", "x": "1"})

    def accepted(locals_text: str, action: str | None = "step_over", before: State = prev) -> bool:
        return _locals_accepted(facts, before, 11, locals_text, action)

    assert accepted('{"..": "..", "n": "0"}')
    assert not accepted('{"..": "..", "n": "1"}')
    assert not accepted('{"..": ".."}')
    assert not accepted('{"..": "..", "xs": "[2]"}')
    assert accepted('{"xs": "[1]", "d": "\'x\'", "total": "0", "x": "1", "n": "0"}')
    assert not accepted('{"xs": "[1]", "d": "\'x\'", "total": "0", "x": "1"}')
    assert accepted('{"..": ".."}', before=prev.model_copy(update={"locals": {**prev.locals, "n": "0"}}))
    assert accepted('{"..": "..", "n": "1"}', action="step_return")  # other actions go free
    assert accepted('{"..": ".."}', action=None)


def test_the_simple_assignments_and_their_reprs() -> None:
    from model_backend.grammar.bindings import simple_assignments

    source = ('x = ["", "M", 2.50, -1, (None, True)]\n'
              "y: int = 0x10\n"
              "z = {1, 2}\n"  # a set: left out
              "a = 1; b = 2\n"  # two statements on the line: left out
              "c = {'k': b'\\x00'}\n"
              "d = x\n"
              "def g():\n"
              "    global q\n"
              "    q = 1\n"  # the module's binding, not the frame's: left out
              "    s = 'at 0x7f00 ' * 1\n"  # an expression: left out
              "    t = 'obj at 0xdeadbeef'\n"
              "    u = 'x' \\\n"
              "        'y'\n"  # over two lines: left out
              "    w = '" + "w" * 300 + "'\n")
    literals, copies = simple_assignments(ast.parse(source), 200)
    assert copies == {6: ("d", "x")}
    assert literals == {1: ("x", "['', 'M', 2.5, -1, (None, True)]"), 2: ("y", "16"),
                     5: ("c", "{'k': b'\\x00'}"), 11: ("t", "'obj'"), 14: ("w", "'" + "w" * 199 + "...")}


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_step_over_a_simple_assignment_binds_it(name: str) -> None:
    """On the corpus traces: at the frame's next line event after a line of simple_assignments, the
    name holds the literal's repr, or the value the other name held at the line's own event."""
    program, result = traced(name)
    facts = ProgramFacts.of(program)
    last: dict[int, Any] = {}
    for event in result.events:
        if event.event == "line":
            before = last.get(event.frame_id)
            if before is not None and before.line in facts.literals:
                var, text = facts.literals[before.line]
                assert event.locals.get(var) == text, (before.line, event.line, var, event.locals.get(var), text)
            if before is not None and before.line in facts.copies and facts.copies[before.line][1] in before.locals:
                var, other = facts.copies[before.line]
                assert event.locals.get(var) == before.locals[other], (before.line, event.line, var, other)
            last[event.frame_id] = event
        elif event.event in ("return", "call"):
            last.pop(event.frame_id, None)


ASSIGNMENTS = """\
base = [1, 2]
alias = base
class K:
    size = 3
    width = size
    label = 'k'
def outer(n):
    seen = {'n': n}
    def inner():
        mine = seen
        mine['x'] = n
        return mine
    copy = inner()
    total = n
    for i in range(3):
        last = i
        total = last
    word = "at 0x1f"
    word = word
    return total
x = outer(alias)
y = x
"""


def test_a_program_traced_here_binds_its_simple_assignments() -> None:
    """The rule on a trace made now: copies in a module, a class body, a function, from a closure's cell,
    a name assigned to itself, and literals."""
    result = run_trace(Program(source=ASSIGNMENTS))
    facts = ProgramFacts.of(Program(source=ASSIGNMENTS))
    assert set(facts.copies) == {2, 5, 10, 14, 16, 17, 22}  # not 19: `word = word` copies nothing new
    checked = 0
    last: dict[int, Any] = {}
    for event in result.events:
        if event.event == "line":
            before = last.get(event.frame_id)
            if before is not None and before.line in facts.copies and facts.copies[before.line][1] in before.locals:
                var, other = facts.copies[before.line]
                assert event.locals.get(var) == before.locals[other], (before.line, var, other)
                checked += 1
            if before is not None and before.line in facts.literals:
                var, text = facts.literals[before.line]
                assert event.locals.get(var) == text, (before.line, var, text)
                checked += 1
            last[event.frame_id] = event
        elif event.event in ("return", "call"):
            last.pop(event.frame_id, None)
    assert checked >= 10, checked


def test_the_lines_step_into_must_leave_by_a_call() -> None:
    from model_backend.grammar.calls import must_call_lines

    source = ("def g(x):\n"                            # 1
              "    return x\n"                         # 2
              "def h(x):\n"                            # 3
              "    yield x\n"                          # 4
              "def f(a, b):\n"                         # 5
              "    y = g(a) + 1\n"                     # 6  a call
              "    z = a and g(b)\n"                   # 7  may not run
              "    w = g(a) if b else 0\n"             # 8  may not run
              "    if g(b) > 0:\n"                     # 9  the test runs
              "        pass\n"                         # 10
              "    while b < g(a):\n"                  # 11 every visit runs the test
              "        b += 1\n"                       # 12
              "    for i in [g(a)]:\n"                 # 13 a for header: later visits run nothing of it
              "        pass\n"                         # 14
              "    v = [i for i in a]\n"               # 15 a comprehension's own frame
              "    u = (i for i in a)\n"               # 16 a generator expression: no frame yet
              "    t = h(a)\n"                         # 17 a generator function: no frame yet
              "    s = lambda: g(a)\n"                 # 18 a lambda's body does not run
              "    r = a < b < g(a)\n"                 # 19 the end of a chain may not run
              "    q = k(a)\n"                         # 20 k is not the program's function
              "    p = g(\n"                           # 21 over two lines
              "        a)\n"                           # 22
              "    print(g(a)); g(b)\n"                # 23 two statements on the line
              "    assert a, g(b)\n"                   # 24 a message may not run
              "    o = max(a, key=len)[g(b)]\n"        # 25 a call inside anything else runs
              "    return g(a)\n")                     # 26
    assert must_call_lines(ast.parse(source)) == {6, 9, 11, 15, 25, 26}
    assert must_call_lines(ast.parse(source + "g = 3\n")) == {15}  # g may be something else


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_line_that_must_call_does(name: str) -> None:
    """On the corpus traces: the event after a line event on such a line (in a frame flow.py follows) is a
    call or an exception, in any frame."""
    program, result = traced(name)
    must_call = ProgramFacts.of(program).must_call
    for event, following in pairwise(result.events):
        if event.event == "line" and event.line in must_call and event.function not in EXPRESSION_FRAMES:
            assert following.event in ("call", "exception"), (event.function, event.line, following.event)


def test_the_grammar_asks_for_a_call_after_step_into_only() -> None:
    program = Program(source="def g(x):\n    return x\ndef f(a):\n    y = g(a)\n    return y\n", entry="f(1)")
    facts = ProgramFacts.of(program)
    prev = State(event="line", line=4, stack=[StackFrame(function="f", line=4)], locals={"a": "1"})
    line, ret, call = (fmt.EVENT_TOKENS[(False, e)] for e in ("line", "return", "call"))
    into = FrameConstraint(facts, prev, False, "step_into").allowed_specials()
    assert call in into and line not in into and ret not in into
    over = FrameConstraint(facts, prev, False, "step_over").allowed_specials()
    assert line in over


INERT = """\
from collections import defaultdict
def f(xs, n):
    d = defaultdict(list)
    alias = xs
    y = d[n]
    z = xs + [n] if n > 0 else xs[:1]
    alias += [2]
    a, b = xs[0], f"{z}"
    a, b = z
    if a in xs and not b: alias.append(a)
    while n < 0:
        n = -n
    return (
        a,
        z)
"""


def test_the_inert_lines_and_what_they_read() -> None:
    from model_backend.grammar.containers import inert_lines

    lines = inert_lines(ast.parse(INERT))
    assert lines == {4: {"xs"}, 5: {"d", "n"}, 6: {"xs", "n"}, 8: {"xs", "z"}, 11: {"n"}, 12: {"n"},
                     13: {"a", "z"}, 14: {"a", "z"}, 15: {"a", "z"}}
    # 3 calls, 7 changes a list in place, 9 unpacks a value (which may run a generator), 10 holds an
    # `if` and a statement. A class's operators may be the program's code: no line is inert.
    assert inert_lines(ast.parse(INERT + "class K:\n    pass\n")) == {}


def _steps_from_inert_lines(program: Program, events: list) -> int:
    """Check, on a trace, that the frame's next event after an inert line whose reads hold builtin values
    changes no variable but those the line binds; return how many steps were checked."""
    from model_backend.grammar.shown import builtin_value as _builtin_value

    facts = ProgramFacts.of(program)
    last: dict[int, Any] = {}
    checked = 0
    for event in events:
        before = last.pop(event.frame_id, None)
        if (event.event in ("line", "return") and before is not None and before.line in facts.inert
                and all(_builtin_value(before.locals.get(n)) for n in facts.inert[before.line])):
            changed = {n for n in set(before.locals) | set(event.locals) if before.locals.get(n) != event.locals.get(n)}
            allowed = facts.binds.get(before.line, frozenset()) | facts.shared
            assert changed <= allowed, (before.function, before.line, event.line, changed - allowed)
            checked += 1
        if event.event == "line":
            last[event.frame_id] = event
    return checked


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_step_from_an_inert_line_changes_only_what_it_binds(name: str) -> None:
    program, result = traced(name)
    _steps_from_inert_lines(program, result.events)


def test_a_program_traced_here_keeps_the_inert_rule() -> None:
    """A defaultdict's lookup (line 5) inserts a key, and `alias += [2]` (line 7) changes xs through its
    alias: the rule must stay off for both, and hold for the others."""
    program = Program(source=INERT, entry="f([1], 3)")
    result = run_trace(program)
    assert _steps_from_inert_lines(program, result.events) >= 5
    d_before, d_after = (e.locals["d"] for e in result.events if e.event == "line" and e.line in (5, 6))
    assert d_before != d_after  # what the repr check guards against
    xs_before, xs_after = (e.locals["xs"] for e in result.events if e.event == "line" and e.line in (7, 8))
    assert xs_before != xs_after


def test_the_grammar_keeps_a_diff_to_what_an_inert_line_binds() -> None:
    """After step_over from `z = xs + [n] ...` (line 6), a diff may name z only: not the list xs, which it
    may name after line 7 (`alias += [2]`, with alias), nor after line 6 once a read name holds an object of another type."""
    facts = ProgramFacts.of(Program(source=INERT, entry="f([1], 3)"))
    local = {"xs": "[1]", "n": "3", "d": "defaultdict(<class 'list'>, {3: []})", "alias": "[1]", "y": "[]"}

    def accepted(line: int, locals_text: str, **changes: str) -> bool:
        prev = State(event="line", line=line, stack=[StackFrame(function="f", line=line)], locals=local | changes)
        return _locals_accepted(facts, prev, line + 1, locals_text, "step_over")

    assert accepted(6, '{"..": "..", "z": "[1, 3]"}')
    assert not accepted(6, '{"..": "..", "z": "[1, 3]", "xs": "[1, 2]"}')
    assert not accepted(6, '{"..": "..", "z": "[1, 3]", "y": "[2]"}')
    assert accepted(7, '{"..": "..", "alias": "[1, 2]", "xs": "[1, 2]"}', z="[1, 3]")  # the same list
    assert not accepted(7, '{"..": "..", "xs": "[1, 2]"}', z="[1, 3]")  # alias must show `alias + [2]`
    assert accepted(6, '{"..": "..", "z": "[1, 3]", "y": "[2]"}', xs="<generator object g>")
    assert accepted(5, '{"..": "..", "y": "[]", "d": "defaultdict(<class \'list\'>, {3: [], 4: []})"}')


BACK = "def f(xs, d):\n    n = 1\n    total = n + 2\n    xs.append(total)\n    return total\n"


def test_a_step_back_changes_only_what_the_earlier_line_binds() -> None:
    """inv_step_over from a line event to the line before it in the frame: the earlier state differs from
    the later one only in what that line binds (`total = n + 2`, inert: not the list xs, not n), plus the
    objects a line that calls may change (`xs.append(total)`: xs, still not n). A full dict stays free
    (a first binding makes the earlier locals one: a diff cannot drop a name)."""
    facts = ProgramFacts.of(Program(source=BACK, entry="f([], 'x')"))

    def accepted(later_line: int, line: int, locals_text: str, action: str = "inv_step_over") -> bool:
        later = State(event="line", line=later_line, stack=[StackFrame(function="f", line=later_line)],
                      locals={"xs": "[3]" if later_line == 5 else "[]", "d": "'x'", "n": "1", "total": "3"})
        constraint = FrameConstraint(facts, later, True, action)
        constraint.push_frame_text(f"{fmt.EVENT_TOKENS[(True, 'line')]}{fmt.LINENO}{line}{fmt.SRC}{facts.lines[line]}"
                                   f"{fmt.ARG}")
        return constraint.accepts_text(locals_text.encode()) and bool(constraint.slot.feed(locals_text.encode()).complete)  # type: ignore[union-attr]

    assert accepted(4, 3, '{"..": "..", "total": "7"}')
    assert not accepted(4, 3, '{"..": "..", "n": "2"}')
    assert not accepted(4, 3, '{"..": "..", "xs": "[1]"}')
    assert accepted(4, 3, '{"xs": "[]", "d": "\'x\'", "n": "1"}')  # total not bound yet
    assert accepted(5, 4, '{"..": "..", "xs": "[]"}')  # the append changed the list
    assert not accepted(5, 4, '{"..": "..", "n": "0"}')
    assert accepted(4, 3, '{"..": "..", "n": "2"}', action="inv_step_call")  # a jump: the rule is for steps


UNDO = """def f(xs, text, key):
    total = 0
    out = []
    counts = {}
    a, b = 0, 1
    word = ''
    for i, x in enumerate(xs):
        total += x
        out.append(x * 2)
        a, b = b, a + b
    for ch in text:
        word = ch + word
        counts[ch] = counts.get(ch, 0) + 1
    last = out.pop()
    if total > 100:
        total = 100
    return total, word, last
"""


def test_a_step_back_undoes_the_one_to_one_updates() -> None:
    """On a trace made here: every step back (inv_step_over) between two line events is accepted whole,
    and where the earlier line is a one-to-one update (`total += x`, `word = ch + word`, `out.append(...)`,
    `last = out.pop()`, `counts[ch] = counts.get(ch, 0) + 1`, `a, b = b, a + b`) or a loop's header
    going round again, the grammar holds its names to the values they had (deduce.values_before,
    deduce.container_before, FrameConstraint._loop_back): the true earlier frame is the only one it
    accepts there. The earlier line is one the later line can follow (FrameConstraint._preceding_lines)."""
    from model_backend.mdp import TraceMDP
    from model_backend.state import Action

    program = Program(source=UNDO, entry="f([3, 1, 4], 'abca', 'a')")
    facts = ProgramFacts.of(program)
    mdp = TraceMDP(run_trace(program))
    keys = frozenset(name.encode() for name in facts.names)
    undone: dict[int, int] = {}
    for position in range(len(mdp.nodes)):
        later = mdp.state(position)
        if later.event != "line" or later.stack[-1].function != "f":
            continue
        earlier = mdp.state(mdp.step(position, Action(kind="inv_step_over"))[0])
        if earlier.event != "line":
            continue
        constraint = FrameConstraint(facts, later, True, "inv_step_over")
        constraint.push_frame_text(fmt.frame_target(earlier, later, True)[len(fmt.FRAME):])
        assert constraint.done, (later.line, earlier.line)
        preceding = FrameConstraint(facts, later, True, "inv_step_over")
        preceding.event = "line"
        assert earlier.line in (preceding._preceding_lines() or {earlier.line})
        assert (preceding._preceding_lines() or set()) <= {later.line} | {
            n for n in facts.lines if later.line in facts.next_lines.get(n, {later.line})}
        pinned = dict(constraint._computed_back(keys))
        for name, value in pinned.items():  # each pinned value is the true one
            assert fmt._json(earlier.locals[name.decode()]).encode() == value, (earlier.line, name)
        if pinned:
            undone[earlier.line] = undone.get(earlier.line, 0) + 1
    # lines 7 and 11: the header going round again and leaving (its variables unchanged), but not the
    # last 'a' of 'abca' (the loop's first element: it may have started there); line 13 only where 'a'
    # is counted again (a count of 1 may be a new key or one that held 0)
    assert undone == {7: 3, 8: 3, 9: 3, 10: 3, 11: 3, 12: 4, 13: 1, 14: 1}, undone


def test_a_wrong_earlier_value_is_refused() -> None:
    facts = ProgramFacts.of(Program(source=UNDO, entry="f([3, 1, 4], 'abca', 'a')"))
    locals_ = {"xs": "[3, 1, 4]", "text": "'abca'", "key": "'a'", "total": "4", "out": "[6, 2]", "counts": "{}",
               "a": "1", "b": "2", "word": "''", "i": "1", "x": "1"}

    def accepted(later_line: int, line: int, locals_text: str, **changed: str) -> bool:
        later = State(event="line", line=later_line, stack=[StackFrame(function="f", line=later_line)],
                      locals={**locals_, **changed})
        constraint = FrameConstraint(facts, later, True, "inv_step_over")
        try:
            constraint.push_frame_text(f"{fmt.EVENT_TOKENS[(True, 'line')]}{fmt.LINENO}{line}{fmt.SRC}"
                                       f"{facts.lines[line]}{fmt.ARG}")
        except ValueError:  # the line is refused
            return False
        return constraint.accepts_text(locals_text.encode()) and bool(constraint.slot.feed(locals_text.encode()).complete)  # type: ignore[union-attr]

    assert accepted(9, 8, '{"..": "..", "total": "3"}')  # total += x, x == 1
    assert not accepted(9, 8, '{"..": "..", "total": "4"}')
    assert accepted(10, 9, '{"..": "..", "out": "[6]"}')
    assert not accepted(10, 9, '{"..": "..", "out": "[2]"}')
    assert accepted(7, 10, '{"..": "..", "a": "1", "b": "1"}')  # a, b = b, a + b gave 1, 2
    assert not accepted(7, 10, '{"..": "..", "a": "0", "b": "1"}')
    assert accepted(8, 7, '{"..": "..", "i": "0", "x": "3"}')  # the header took the second element
    assert not accepted(8, 7, '{"..": "..", "i": "0", "x": "4"}')
    assert accepted(8, 7, '{"..": "..", "i": "7"}', i="0", x="3")  # the first: the loop may start here
    assert not accepted(9, 7, '{"..": "..", "i": "0", "x": "3"}')  # line 9 never follows line 7
    assert accepted(12, 11, '{"..": "..", "ch": "\'a\'"}', ch="'b'", text="'abc'")  # the one before 'b'
    assert not accepted(12, 11, '{"..": "..", "ch": "\'c\'"}', ch="'b'", text="'abc'")
    assert accepted(12, 11, '{"..": "..", "ch": "\'c\'"}', ch="'b'", text="'abcb'")  # 'b' twice: left free
    assert not accepted(12, 11, '{"..": "..", "ch": "\'b\'"}', ch="'b'", text="'abab'")  # after 'a' both times
    assert accepted(13, 12, '{"..": "..", "word": "\'a\'"}', word="'ba'", ch="'b'")  # word = ch + word
    assert not accepted(13, 12, '{"..": "..", "word": "\'b\'"}', word="'ba'", ch="'b'")
    counts = {"counts": "{'a': 2, 'b': 1}", "ch": "'a'"}
    assert accepted(11, 13, '{"..": "..", "counts": "{\'a\': 1, \'b\': 1}"}', **counts)
    assert not accepted(11, 13, '{"..": "..", "counts": "{\'b\': 1}"}', **counts)  # 'a' was there: it comes first
    assert accepted(15, 14, '{"..": "..", "out": "[6, 2, 8]"}', last="8")  # last = out.pop()
    # `if total > 100:` (line 15) goes to line 16 when true: line 17 follows it only when false
    assert accepted(17, 15, '{"..": ".."}', total="8")
    assert not accepted(17, 15, '{"..": ".."}', total="150")
    assert accepted(17, 16, '{"..": "..", "total": "150"}', total="100")


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_step_back_between_lines_is_accepted(name: str) -> None:
    """On the corpus traces: from every line and return event, the state inv_step_over and inv_step_into
    lead to (the MDP's inverse transitions), written as the trace format writes it, is accepted whole by
    the grammar after that action (the rules for steps back included)."""
    from model_backend.mdp import TraceMDP
    from model_backend.state import Action

    program, result = traced(name)
    facts = ProgramFacts.of(program)
    mdp = TraceMDP(result)
    for position in range(len(mdp.nodes) - 1):
        later = mdp.state(position)
        if later.event not in ("line", "return"):
            continue
        for kind in ("inv_step_over", "inv_step_into"):
            target, _ = mdp.step(position, Action(kind=kind))  # type: ignore[arg-type]
            earlier = mdp.state(target)
            constraint = FrameConstraint(facts, later, True, kind)
            constraint.push_frame_text(fmt.frame_target(earlier, later, True)[len(fmt.FRAME):])
            assert constraint.done, (kind, later.line, earlier.line)


def test_the_lines_that_only_return_a_name() -> None:
    from model_backend.grammar.calls import returned_names

    source = "def f(a, b):\n    if a:\n        return a\n    c = b; return c\n    return (\n        b)\n"
    assert returned_names(ast.parse(source)) == {3: "a"}  # not two statements on a line, nor two lines


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_return_right_after_return_name_returns_its_value(name: str) -> None:
    """On the corpus traces: a frame's return event right after its line event on a `return name` line
    (no other event between, not a generator) carries the repr the name showed at that line."""
    program, result = traced(name)
    facts = ProgramFacts.of(program)
    for event, following in pairwise(result.events):
        if (event.event == "line" and event.line in facts.returns and following.event == "return"
                and following.frame_id == event.frame_id and not event.is_generator
                and facts.returns[event.line] in event.locals):
            assert following.value == event.locals[facts.returns[event.line]], (event.function, event.line)


def test_the_grammar_returns_the_named_value() -> None:
    """After step_into or step_over from `return total` (line 23) to the frame's return event, the value
    is total's; after step_return (which may run more) it is free."""
    facts = ProgramFacts.of(Program(source=FLOW, entry="f([1], 'x')"))
    prev = State(event="line", line=23, stack=[StackFrame(function="f", line=23)],
                 locals={"xs": "[1]", "d": "'x'", "total": "2.5", "x": "1", "n": "0"})

    def accepted(value: str, action: str) -> bool:
        constraint = FrameConstraint(facts, prev, False, action)
        constraint.push_frame_text(f"{fmt.EVENT_TOKENS[(False, 'return')]}{fmt.LINENO}23{fmt.SRC}{facts.lines[23]}"
                                   f"{fmt.ARG}")
        return constraint.accepts_text(value.encode()) and bool(constraint.slot.feed(value.encode()).complete)  # type: ignore[union-attr]

    for action in ("step_into", "step_over"):
        assert accepted('"2.5"', action) and not accepted('"2"', action) and not accepted("null", action)
    assert accepted('"2"', "step_return")


CALLS = """\
from collections import defaultdict
def pick(text, i, sep=", ", opts=[]):
    return text
def f(seq, n):
    txt = pick(seq, 2)
    x = pick(seq[1:], n, sep="x")
    pick(*seq)
    y = pick(seq)
    d = defaultdict(list)
    z = pick(d, d[n])
    return pick(n, 'j', opts=seq)
"""


def test_the_parameters_a_line_binds_at_its_call() -> None:
    from model_backend.grammar.calls import call_bindings

    found = call_bindings(ast.parse(CALLS), 200)
    assert found == {
        (5, "pick"): ((("text", ("name", "seq")), ("i", ("literal", "2")), ("sep", ("literal", "', '")),
                       ("opts", None)), frozenset()),
        (6, "pick"): ((("text", ("expression", "seq[1:]")), ("i", ("name", "n")), ("sep", ("literal", "'x'")),
                       ("opts", None)), frozenset({"seq"})),
        (10, "pick"): ((("text", ("name", "d")), ("i", ("expression", "d[n]")), ("sep", ("literal", "', '")),
                        ("opts", None)), frozenset({"d", "n"})),
        (11, "pick"): ((("text", ("name", "n")), ("i", ("literal", "'j'")), ("sep", ("literal", "', '")),
                        ("opts", ("name", "seq"))), frozenset()),
    }  # not 7 (`*seq`) nor 8 (a missing argument: a TypeError, no call)
    assert call_bindings(ast.parse(CALLS + "class K:\n    pass\n"), 200) == {}


def _call_events_after_lines(table: dict[tuple[int, str], Any], events: list) -> Iterator[tuple[Any, Any, Any]]:
    """(line event, call event, table entry) for each call event right after a line event whose (line,
    called function) is in `table` and whose entry's last part, the names to check, hold builtin values."""
    from model_backend.grammar.shown import builtin_value as _builtin_value

    for event, following in pairwise(events):
        entry = table.get((event.line, following.function))
        if (event.event == "line" and following.event == "call" and entry is not None
                and all(_builtin_value(event.locals.get(name)) for name in entry[-1])):
            yield event, following, entry


def _calls_checked(program: Program, events: list) -> int:
    """On a trace: each call event right after a line event of a line in facts.calls (for that function)
    holds the bound values the grammar would force; returns how many were checked."""
    checked = 0
    for event, following, (bound, _) in _call_events_after_lines(ProgramFacts.of(program).calls, events):
        for param, source in bound:
            if source is not None and source[0] == "expression":
                want = value_repr(ast.parse(source[1], mode="eval").body, event.locals, 200)
                assert want is None or following.locals.get(param) == want, (event.line, param, want)
            elif source is not None and (source[0] == "literal" or source[1] in event.locals):
                want = source[1] if source[0] == "literal" else event.locals[source[1]]
                assert following.locals.get(param) == want, (event.line, param, following.locals.get(param), want)
        checked += 1
    return checked


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_call_holds_the_values_its_line_binds(name: str) -> None:
    program, result = traced(name)
    _calls_checked(program, result.events)


def test_a_program_traced_here_binds_its_calls() -> None:
    """The defaultdict lookup in line 10's arguments inserts a key into d before pick is called: the
    guard (d's value is not a builtin one) keeps the rule off there."""
    program = Program(source=CALLS.replace("    pick(*seq)\n    y = pick(seq)\n", ""), entry="f([1, 2], 3)")
    result = run_trace(program)
    assert _calls_checked(program, result.events) == 3
    line, call = next((a, b) for a, b in pairwise(result.events) if a.event == "line" and a.line == 8 and b.event == "call")
    assert line.locals["d"] != call.locals["text"]


def test_the_grammar_writes_the_values_a_call_receives() -> None:
    facts = ProgramFacts.of(Program(source=CALLS, entry="f([1, 2], 3)"))
    prev = State(event="line", line=5, stack=[StackFrame(function="f", line=5)], locals={"seq": "[1, 2]", "n": "3"})

    def accepted(locals_text: str, action: str = "step_into") -> bool:
        constraint = FrameConstraint(facts, prev, False, action)
        constraint.push_frame_text(f"{fmt.EVENT_TOKENS[(False, 'call')]}{fmt.LINENO}2{fmt.STACK}"
                                   f'[["f", {prev.line}], ["pick", 2]]{fmt.SRC}{facts.lines[2]}{fmt.ARG}')
        return constraint.accepts_text(locals_text.encode()) and bool(constraint.slot.feed(locals_text.encode()).complete)  # type: ignore[union-attr]

    right = '{"text": "[1, 2]", "i": "2", "sep": "\', \'", "opts": "[]"}'
    assert accepted(right) and accepted('{"text": "[1, 2]", "i": "2", "sep": "\', \'", "opts": "[5]"}')
    assert not accepted(right.replace('"2"', '"3"')) and not accepted(right.replace("[1, 2]", "[2]"))
    assert not accepted('{"i": "2", "sep": "\', \'", "opts": "[]"}')  # text left out
    prev = State(event="line", line=6, stack=[StackFrame(function="f", line=6)], locals={"seq": "[1, 2]", "n": "3"})
    assert accepted('{"text": "[2]", "i": "3", "sep": "\'x\'", "opts": "[]"}')  # `seq[1:]`, from deduce.py
    assert not accepted('{"text": "[1]", "i": "3", "sep": "\'x\'", "opts": "[]"}')
    prev = State(event="line", line=6, stack=[StackFrame(function="f", line=6)], locals={"seq": "[1, 2...", "n": "3"})
    assert accepted('{"text": "[1]", "i": "3", "sep": "\'x\'", "opts": "[]"}')  # a cut list: free
    # Line 10, `pick(d, d[n])`: d is a defaultdict, whose lookup inserts a key first: no value is forced.
    prev = State(event="line", line=10, stack=[StackFrame(function="f", line=10)],
                 locals={"seq": "[1, 2]", "n": "3", "d": "defaultdict(<class 'list'>, {})"})
    inserted = "defaultdict(<class 'list'>, {3: []})"
    assert accepted(f'{{"text": "{inserted}", "i": "[]", "sep": "\', \'", "opts": "[]"}}')


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
    for event, following, (source, frees, _) in _call_events_after_lines(ProgramFacts.of(program).comprehensions, events):
        for name in frees:
            if name in event.locals:
                assert following.locals.get(name) == event.locals[name], (event.line, name)
        iterator = _iterator_type(event.locals.get(source[1])) if source and source[0] == "name" else (
            source[1] if source else None)
        if iterator is not None:
            assert following.locals.get(".0") == f"<{iterator} object>", (event.line, following.locals)
        checked += 1
    return checked


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_comprehension_starts_as_its_line_says(name: str) -> None:
    program, result = traced(name)
    _comprehension_starts_checked(program, result.events)


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


def test_the_for_loops_whose_next_element_the_values_tell() -> None:
    from model_backend.grammar.loops import ForLoop, for_loops

    names = frozenset
    both = (names({"seen", "total"}), names({"seen", "total"}))
    assert for_loops(ast.parse(LOOPS)) == {
        4: ForLoop("word", "words", (), (5, 8), True, True, both),
        5: ForLoop("ch", "word", (), (6, 8), True, True, both),
        9: ForLoop("i", None, (("int", "1"), ("len", "words"), ("int", "2")), (10, 10), True, True,
                   (names({"total", "words"}), names({"total"}))),
        11: ForLoop("key", "table", (), (12, 12), True, True, (names({"total", "table"}), names({"total"}))),
        13: ForLoop("j", None, (("name", "n"),), (14, 14), False, True, None),  # the body rebinds j: only a start is known
        15: ForLoop("w", "words", (), (16, 16), True, True, None),  # the body appends to the list it iterates
        17: ForLoop("k", None, (("int", "-2"), ("name", "n")), (18, 18), True, True, (names(), names())),
        20: ForLoop("word", "words", (), (21, 21), True, True, (names({"total"}), names({"total"})), "pos", 1),
    }  # not 19: its body shares the header's line
    deleting = for_loops(ast.parse("def f(xs):\n    for x in xs:\n        del x\n"))
    assert not deleting[2].unbound_means_start and not deleting[2].round_known
    calls = for_loops(ast.parse("def f(xs, g):\n    for x in xs:\n        g(x)\n"))
    assert calls[2].mutation_check is None  # g may be the program's code, which could change xs
    assert for_loops(ast.parse("class L(list):\n    pass\n" + LOOPS)) == {}  # a list of the program's own


def test_the_elements_a_shown_value_iterates() -> None:
    from model_backend.grammar.shown import shown_elements

    assert shown_elements("'aba'") == (["'a'", "'b'", "'a'"], False)
    assert shown_elements("\"it's\"") == (["'i'", "'t'", '"\'"', "'s'"], False)
    assert shown_elements("[1, 'x', (2, 3), [4]]") == (["1", "'x'", "(2, 3)", "[4]"], True)
    assert shown_elements("(7,)") == (["7"], False)
    assert shown_elements("{'b': 1, 'a': [2]}") == (["'b'", "'a'"], True)
    assert shown_elements("{3, 1, 2}") == (["3", "1", "2"], True)  # a set iterates as its repr lists
    assert shown_elements("set()") == ([], True)
    assert shown_elements("[]") == ([], True)
    for text in ("[1, 2, 3...", "'abc...", "[1,2]", "[Node(1)]", "<list_iterator object>", "[...]", "{**a}", "42"):
        assert shown_elements(text) is None, text


def _forward_steps_checked(program: Program, result: Any, actions: tuple[str, ...]) -> dict[str, int]:
    """Walk the trace with each action from every state a step_into walk reaches, and check that the
    grammar, told the steps that led there, accepts the true frame after each step; how many of those
    steps the loop rule governed (steps from a loop's header), the item-store rule, and the rule for a
    return to the caller."""
    from model_backend.mdp import TraceMDP
    from model_backend.state import Action

    facts = ProgramFacts.of(program)
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


def _rules_on_a_program_traced_here(source: str, entry: str) -> dict[str, int]:
    """Trace the program (it must end normally) and check every step_into and step_over along it
    (_forward_steps_checked): how many steps each rule governed."""
    program = Program(source=source, entry=entry)
    result = run_trace(program)
    assert result.exit == "normal"
    return _forward_steps_checked(program, result, ("step_into", "step_over"))


def _frame_accepted(constraint: FrameConstraint, frame: str) -> bool:
    """Whether the grammar takes the whole frame's text (from right after `<|frame_sep|>`)."""
    try:
        constraint.push_frame_text(frame)
    except ValueError:
        return False
    return constraint.done


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_step_from_a_loop_header_takes_the_element_the_grammar_names(name: str) -> None:
    program, result = traced(name)
    _forward_steps_checked(program, result, ("step_into", "step_over"))


ALIASED = """\
def encode(strings, chars):
    size = 0
    for part in chars:
        strings.sort()
        if 'U' not in part:
            size += 1
    return size


def main():
    parts = ['nU', 'uU', 'N']
    return count(['ab', 'a', 'cab', 'abcab'], {'y': 1, 'x': 2}, 2) + encode(parts, parts)
"""


def test_a_program_traced_here_takes_the_elements_its_loops_name() -> None:
    """Nested loops started again with their variable still bound, a string with a letter twice (the
    rule stays off after the first 'a'), a dict, a range over len(), a loop that starts from a call's
    return, loops whose step leaves them, and a list sorted through another name while it is iterated
    (the rule must stay off: `strings` shows the same repr as `chars`)."""
    assert _rules_on_a_program_traced_here(LOOPS + "\n\n" + ALIASED, "main()")["loops"] >= 40


def test_the_grammar_names_the_element_a_loop_takes() -> None:
    facts = ProgramFacts.of(Program(source=LOOPS, entry="count(['ab'], {}, 2)"))
    shown = {"words": "['ab', 'cd']", "table": "{}", "n": "2", "seen": "['a', 'b']", "total": "0"}

    def at(line: int, **changes: str) -> State:
        return State(event="line", line=line, stack=[StackFrame(function="count", line=line)], locals=shown | changes)

    def accepted(prev: State, arrival: State | None, frame: str, trail: tuple[State, ...] = ()) -> bool:
        steps = (*trail, *([arrival] if arrival else []))
        constraint = FrameConstraint(facts, prev, False, "step_over", tuple((state, "step_over") for state in steps))
        return _frame_accepted(constraint, frame)

    def line(number: int, locals_text: str) -> str:
        return f"{fmt.EVENT_TOKENS[(False, 'line')]}{fmt.LINENO}{number}{fmt.ARG}{locals_text}{fmt.SRC}{facts.lines[number]}{fmt.END_OF_FRAME}"

    header = at(4, word="'ab'", ch="'b'")
    assert accepted(header, at(8, word="'ab'", ch="'b'"), line(5, '{"..": "..", "word": "\'cd\'"}'))  # round again
    assert not accepted(header, at(8, word="'ab'", ch="'b'"), line(5, '{"..": "..", "word": "\'ab\'"}'))
    assert not accepted(header, at(8, word="'ab'", ch="'b'"), line(5, '{"..": "..", "word": "\'cd\'", "total": "1"}'))
    assert not accepted(header, at(8, word="'ab'", ch="'b'"), line(9, '{"..": ".."}'))  # the loop cannot end yet
    assert not accepted(header, at(8, word="'ab'", ch="'b'"), line(9, '{"..": "..", "word": "\'cd\'"}'))
    assert accepted(header, at(3), line(5, '{"..": "..", "word": "\'ab\'"}'))  # reached from before the loop: it starts
    assert accepted(header, None, line(5, '{"..": "..", "word": "\'ab\'"}'))  # not known where from: free
    assert accepted(header, None, line(9, '{"..": ".."}'))
    last = at(4, word="'cd'", ch="'d'")
    assert accepted(last, at(8, word="'cd'", ch="'d'"), line(9, '{"..": ".."}'))  # 'cd' was the last: it leaves
    assert not accepted(last, at(8, word="'cd'", ch="'d'"), line(5, '{"..": "..", "word": "\'ab\'"}'))
    assert not accepted(last, at(8, word="'cd'", ch="'d'"), line(5, '{"..": ".."}'))
    twice = at(5, word="'aXaY'", ch="'a'")  # 'a' twice: the step takes the letter after one of them
    for letter, taken in (("X", True), ("Y", True), ("a", False)):
        assert accepted(twice, at(8, word="'aXaY'", ch="'a'"), line(6, f'{{"..": "..", "ch": "\'{letter}\'"}}')) is taken
    either = at(5, word="'aXa'", ch="'a'")  # the first 'a' or the last: the loop may go on or leave
    assert accepted(either, at(8, word="'aXa'", ch="'a'"), line(4, '{"..": ".."}'))
    assert accepted(either, at(8, word="'aXa'", ch="'a'"), line(6, '{"..": "..", "ch": "\'X\'"}'))
    trail = [at(4, word="'aXaY'"), at(5, word="'aXaY'")]
    for letter in "aXa":
        trail += [at(6, word="'aXaY'", ch=repr(letter)), at(5, word="'aXaY'", ch=repr(letter))]
    fourth = trail.pop()  # on the header the fourth time, after 'a', 'X' and 'a': the loop takes 'Y'
    assert accepted(fourth, trail[-1], line(6, '{"..": "..", "ch": "\'Y\'"}'), tuple(trail[:-1]))
    assert not accepted(fourth, trail[-1], line(6, '{"..": "..", "ch": "\'X\'"}'), tuple(trail[:-1]))
    assert accepted(fourth, trail[-1], line(6, '{"..": "..", "ch": "\'X\'"}'))  # without the trail: either
    rebinding = at(13, j="5")  # the body rebinds j: where it stands is not known, only a start
    assert accepted(rebinding, at(14, j="5"), line(14, '{"..": "..", "j": "4"}'))
    assert not accepted(rebinding, at(12), line(14, '{"..": "..", "j": "4"}'))
    assert accepted(rebinding, at(12), line(14, '{"..": "..", "j": "0"}'))
    counted = at(20, pos="1", word="'ab'")  # enumerate(words, 1): the count says where the loop stands
    assert accepted(counted, at(21, pos="1", word="'ab'"), line(21, '{"..": "..", "pos": "2", "word": "\'cd\'"}'))
    assert not accepted(counted, at(21, pos="1", word="'ab'"), line(21, '{"..": "..", "pos": "2"}'))
    assert accepted(at(20, pos="2", word="'cd'"), at(21, pos="2", word="'cd'"), line(22, '{"..": ".."}'))
    ranged = at(9, i="1", words="['ab', 'cd', 'ef', 'gh']")
    assert accepted(ranged, at(10, i="1"), line(10, '{"..": "..", "i": "3"}'))  # range(1, 4, 2)
    assert not accepted(ranged, at(10, i="1"), line(10, '{"..": "..", "i": "2"}'))


def test_the_lines_that_append_a_name_or_a_literal() -> None:
    from model_backend.grammar.containers import appended_values

    source = ("def f(xs, y):\n    xs.append(y)\n    xs.append('a')\n    xs.append(xs)\n    xs.append(y + 1)\n"
              "    xs.append([1])\n    xs.append(y); y = 2\n    xs.extend(y)\n")
    assert appended_values(ast.parse(source), 200) == {2: ("xs", ("name", "y")), 3: ("xs", ("literal", "'a'"))}
    # not 4 (the list into itself), 5 (a computed value), 6 (a list literal: a mutable object), 7 (two
    # statements), 8 (extend); nothing where the program's own objects could print like a list
    assert appended_values(ast.parse("class L(list):\n    pass\n" + source), 200) == {}


def test_the_grammar_writes_the_list_an_append_makes() -> None:
    facts = ProgramFacts.of(Program(source=LOOPS, entry="count(['ab'], {}, 2)"))
    shown = {"words": "['ab']", "table": "{}", "n": "2", "total": "0", "word": "'ab'"}

    def accepted(locals_text: str, **changes: str) -> bool:
        prev = State(event="line", line=8, stack=[StackFrame(function="count", line=8)], locals=shown | changes)
        return _locals_accepted(facts, prev, 5, locals_text, "step_over")

    assert accepted('{"..": "..", "seen": "[\'a\', \'b\']"}', seen="['a']", ch="'b'")  # `seen.append(ch)`
    assert not accepted('{"..": "..", "seen": "[\'b\', \'a\']"}', seen="['a']", ch="'b'")
    assert not accepted('{"..": ".."}', seen="['a']", ch="'b'")
    assert accepted('{"..": "..", "seen": "[\'b\']"}', seen="[]", ch="'b'")
    assert accepted('{"..": "..", "seen": "[\'b\', \'a\']"}', seen="['a', ...", ch="'b'")  # cut: not known


STORES = """\
def tally(text, table, xs):
    seen = {}
    for ch in text:
        seen[ch] = seen.get(ch, 0) + 1
    table[1] = 'one'
    table[True] = len(seen)
    table['k'] += len(xs)
    xs[-1] = xs[0] * 2
    xs.insert(0, len(seen))
    xs.insert(-1, 'mid')
    xs.insert(99, [c for c in text if c != 'a'])
    xs.append(sorted(seen))
    big = list(range(40))
    big.append('x' * 60)
    big[0] = xs
    xs.append(xs)
    table[ch] = helper(ch)
    table[ch * 2] = 1
    seen[ch] = seen.pop(ch)
    return seen, table, xs, big


def helper(ch):
    return ch.upper()
"""


def test_the_lines_that_store_one_item() -> None:
    from model_backend.grammar.containers import ItemStore, item_stores

    def store(name: str, kind: str, key: tuple[str, str] | None, reads: set[str], augmented: bool = False) -> ItemStore:
        return ItemStore(name, kind, key, augmented, frozenset(reads))

    assert item_stores(ast.parse(STORES), 200) == {
        4: store("seen", "item", ("name", "ch"), {"seen", "ch"}),
        5: store("table", "item", ("literal", "1"), {"table"}),
        6: store("table", "item", ("literal", "True"), {"table", "seen"}),
        7: store("table", "item", ("literal", "'k'"), {"table", "xs"}, augmented=True),
        8: store("xs", "item", ("literal", "-1"), {"xs"}),
        9: store("xs", "insert", ("literal", "0"), {"xs", "seen"}),
        10: store("xs", "insert", ("literal", "-1"), {"xs"}),
        11: store("xs", "insert", ("literal", "99"), {"xs", "text"}),  # `c` is the comprehension's
        12: store("xs", "append", None, {"xs", "seen"}),
        14: store("big", "append", None, {"big"}),
        15: store("big", "item", ("literal", "0"), {"big", "xs"}),
        16: store("xs", "append", None, {"xs"}),
    }  # not 17 (a call of the program's function), 18 (a key computed), 19 (pop changes the dict)
    assert item_stores(ast.parse("class C:\n    pass\n" + STORES), 200) == {}  # an object's methods may be the program's


def test_a_program_traced_here_keeps_the_items_a_store_leaves() -> None:
    """New keys and old ones, a key equal to another of another type (True and 1), an augmented store,
    negative indexes, inserts clamped at both ends, a list whose repr the tracer cuts after the step,
    and a list appended to itself (its repr shows `[...]`, after which the rule is off)."""
    assert _rules_on_a_program_traced_here(STORES, "tally('abca', {1: 'x', 'k': 2}, [1, 2, 3])")["stores"] >= 20


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_store_keeps_the_other_items(name: str) -> None:
    program, result = traced(name)
    _forward_steps_checked(program, result, ("step_over",))


def test_the_grammar_keeps_the_items_a_store_leaves() -> None:
    facts = ProgramFacts.of(Program(source=STORES, entry="tally('ab', {}, [1])"))
    shown = {"text": "'abca'", "table": "{1: 'x', 'k': 2}", "xs": "[1, 2, 3]", "seen": "{'a': 1, 'b': 1}", "ch": "'a'"}

    def accepted(line: int, locals_text: str, **changes: str) -> bool:
        prev = State(event="line", line=line, stack=[StackFrame(function="tally", line=line)], locals=shown | changes)
        return _locals_accepted(facts, prev, 3 if line == 4 else line + 1, locals_text, "step_over")

    def diff(**changes: str) -> str:
        return fmt._json({"..": "..", **changes})

    def seen(text: str) -> str:
        return diff(seen=text)

    assert accepted(4, seen("{'a': 2, 'b': 1}"))  # `seen[ch] = seen.get(ch, 0) + 1`
    assert not accepted(4, seen("{'a': 3, 'b': 1}"))  # the value deduce.py gives, 2
    assert not accepted(4, seen("{'a': 2, 'b': 2}"))  # another item changed
    assert not accepted(4, seen("{'a': 1, 'b': 1, 'aa': 1}"))  # a key made up
    assert not accepted(4, seen("{'b': 1, 'a': 2}"))  # an old key moved
    assert not accepted(4, seen("{'a': 2, 1, 'b': 1}"))
    assert not accepted(4, '{"..": ".."}')  # a's value changed to 2: the diff must say so
    assert accepted(4, '{"..": ".."}', seen="{'a': 1, 'b': 1, ...")  # a cut dict: free, even left out
    assert accepted(4, seen("{'a': 1, 'b': 1, 'c': 1}"), ch="'c'")  # a new key goes last
    assert not accepted(4, seen("{'c': 1, 'a': 1, 'b': 1}"), ch="'c'")
    assert not accepted(4, '{"..": ".."}', ch="'c'")  # a new key changes the dict
    assert accepted(4, seen("{'a': 1, 'b': 1, 'c': 1}"), ch="<Key object>")  # not a builtin value: free
    assert accepted(4, seen("{'b': 1, 'c': 1}"), seen="{'a': 1, 'b': 1, ...")  # a cut dict: free

    def table(text: str) -> str:
        return diff(table=text)

    assert accepted(6, table("{1: 2, 'k': 2}"))  # `table[True] = ...` stores under the equal key 1
    assert not accepted(6, table("{1: 'x', 'k': 2, True: 2}"))
    assert accepted(7, table("{1: 'x', 'k': 5}"))  # `table['k'] += len(xs)`
    assert accepted(7, '{"..": ".."}', table="{1: 'x'}")  # the key is missing: a KeyError, and the rule is off

    def xs(text: str) -> str:
        return diff(xs=text)

    assert accepted(8, xs("[1, 2, 2]"))  # `xs[-1] = xs[0] * 2`
    assert not accepted(8, xs("[2, 2, 3]"))
    assert accepted(9, xs("[2, 1, 2, 3]"))  # `xs.insert(0, len(seen))`
    assert not accepted(9, xs("[1, 2, 3, 2]"))
    assert accepted(10, xs("[1, 2, 'mid', 3]"))  # `xs.insert(-1, 'mid')`
    assert accepted(11, xs("[1, 2, 3, ['b', 'c']]"))  # `xs.insert(99, ...)`: at the end
    assert not accepted(11, xs("[1, 2, 3]"))
    long = "[" + ", ".join(map(str, range(40)))
    assert accepted(14, diff(big=(long + ", '" + "x" * 60)[:200] + "..."), big=long + "]")  # cut in the new item
    assert not accepted(14, diff(big=long + ", 'xxxx']"), big=long + ", 40]")


RETURNS = """\
total = 0


class Box:
    def __init__(self, n):
        self.n = n


def bump(k):
    global total
    total += k
    return k + 1


def digits(text, depth):
    if not text:
        return depth
    head = text[0]
    rest = digits(text[1:], depth + 1)
    box = Box(rest)
    shown = bump(rest) + len(head)
    size = bump(len(head))
    return box.n + size + shown


def outer(word):
    count = 0

    def inner(x):
        nonlocal count
        count += x
        return count

    first = inner(2)
    again = inner(len(word))
    grid = [[k for k in range(2)] for _ in range(3)]
    return first + again + digits(word, 0) + len(grid)
"""


def test_the_lines_that_only_bind_a_call_result() -> None:
    from model_backend.grammar.calls import call_results

    assert call_results(ast.parse(RETURNS)) == {
        19: ("rest", "digits"), 20: ("box", "Box"), 22: ("size", "bump"), 34: ("first", "inner"), 35: ("again", "inner"),
    }  # not 21 (the call's result is added to), 11 (`total += k` holds no call)


def test_a_program_traced_here_returns_to_callers_that_kept_their_values() -> None:
    """Recursion (each caller keeps its own `text` and `depth`), a class's `__init__` (whose None is not
    what `box` gets), a callee that rebinds a global and one that rebinds its caller's variable through
    `nonlocal` (the rule must leave `total` and `count` free), and a comprehension that goes on binding
    `_` on its line after the inner one returns (the rule is off for comprehension frames)."""
    assert _rules_on_a_program_traced_here(RETURNS, "outer('abc')")["returns"] >= 8


def test_the_grammar_restores_what_a_caller_held_before_the_call() -> None:
    facts = ProgramFacts.of(Program(source=RETURNS, entry="outer('ab')"))
    caller = State(event="line", line=19, stack=[StackFrame(function="outer", line=37), StackFrame(function="digits", line=19)],
                   locals={"text": "'ab'", "depth": "0", "head": "'a'"})
    inside = State(event="line", line=16, stack=[*caller.stack, StackFrame(function="digits", line=16)],
                   locals={"text": "'b'", "depth": "1"})
    returning = State(event="return", line=23, stack=[*caller.stack, StackFrame(function="digits", line=23)],
                      locals={"text": "'b'", "depth": "1", "rest": "2", "head": "'b'"}, value="7")

    def accepted(locals_text: str, trail: tuple[State, ...] = (caller, inside)) -> bool:
        constraint = FrameConstraint(facts, returning, False, "step_over", tuple((state, "step_into") for state in trail))
        frame = (f"{fmt.EVENT_TOKENS[(False, 'line')]}{fmt.LINENO}20{fmt.STACK}"
                 f'[["outer", 37], ["digits", 20]]{fmt.ARG}{locals_text}{fmt.SRC}{facts.lines[20]}{fmt.END_OF_FRAME}')
        return _frame_accepted(constraint, frame)

    assert accepted('{"text": "\'ab\'", "depth": "0", "head": "\'a\'", "rest": "7"}')
    assert not accepted('{"text": "\'b\'", "depth": "0", "head": "\'a\'", "rest": "7"}')  # the callee's text
    assert not accepted('{"text": "\'ab\'", "depth": "0", "head": "\'a\'", "rest": "2"}')  # not what it returned
    assert not accepted('{"text": "\'ab\'", "depth": "0", "rest": "7"}')  # a variable left out
    assert accepted('{"text": "\'b\'", "depth": "5", "rest": "2"}', trail=(inside,))  # the caller's call not in the trail


ORDERS = """\
def roman(num):
    tens = ['', 'X', 'XX']
    ones = ['', 'I', 'II']
    return (
        tens[num // 10]
        + ones[num % 10]
        + tens[0]
    )


def swap(chars, i, j):
    chars[i], chars[j] = (
        chars[j],
        chars[i],
    )
    pick = (chars[0] if i else
            chars[1])
    total = sum(
        [len(c) for c in chars]
    )
    return pick, total


def main():
    out = [roman(n) for n in (12, 21)]
    for k in range(2):
        out.append(roman(k))
    return swap(out, 0, 1)
"""


def test_the_order_of_line_events_inside_a_statement() -> None:
    from model_backend.grammar.lines import statement_line_orders

    found = statement_line_orders(ORDERS, ast.parse(ORDERS))
    chain = ((5, 6, 5, 7, 5, 4), (4, 8))
    pair = ((13, 14, 12), (12, 15))
    assert found == {line: chain for line in range(4, 9)} | {line: pair for line in range(12, 16)}
    # not 16-17 (a conditional expression jumps), 18-20 (a comprehension is code of its own)


def test_a_program_traced_here_keeps_the_order_of_its_statements_lines() -> None:
    assert _rules_on_a_program_traced_here(ORDERS, "main()")["ordered"] >= 20


def test_the_grammar_follows_the_order_of_a_statements_lines() -> None:
    facts = ProgramFacts.of(Program(source=ORDERS, entry="main()"))
    stack = [StackFrame(function="main", line=27)]

    def at(line: int, event: str = "line") -> State:
        return State(event=event, line=line, stack=[*stack, StackFrame(function="roman", line=line)], locals={"num": "1"})

    def lines_after(prev: State, *trail: State) -> set[int]:
        constraint = FrameConstraint(facts, prev, False, "step_over", tuple((state, "step_over") for state in trail))
        constraint.push_special(fmt.EVENT_TOKENS[(False, "line")])
        constraint.push_special(fmt.LINENO)
        return {n for n in range(1, 30) if constraint.accepts_text(str(n).encode())
                and constraint.slot.feed(str(n).encode()).complete}  # type: ignore[union-attr]

    assert lines_after(at(5), at(3)) == {6}  # the statement's first event
    assert lines_after(at(5), at(3), at(5), at(6)) == {7}  # its second time on line 5
    assert lines_after(at(5), at(3), at(5), at(6), at(5), at(7)) == {4}  # the third: `return (` on line 4
    assert lines_after(at(6), at(5)) == {5}
    assert lines_after(at(5)) == {6, 7, 4}  # the trail does not tell which time: any


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
    counts = _rules_on_a_program_traced_here(ITERATED, "tally('abcb', {'p': 1, 'q': 2, 'r': 3}, 2, ['q', 'x'])")
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
        return _frame_accepted(constraint, fmt.frame_target(frame, prev, False)[len(fmt.FRAME):])

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


IMPORTS = """\
from math import floor, ceil
from string import ascii_lowercase as letters
from collections import Counter
import copy


def spread(values):
    low, high = floor(min(values)), ceil(max(values))
    return low, high


def single(word):
    counts = Counter(word)
    return (counts,)


pair = spread([1.5, 2.5])
one = single(letters[:3])
again = copy.copy(pair)
"""


def test_the_lines_that_import_known_names_and_return_tuples() -> None:
    from model_backend.grammar.bindings import imported_values
    from model_backend.grammar.calls import returned_tuples

    tree = ast.parse(IMPORTS)
    assert imported_values(tree, 200) == {
        1: (("floor", "<built-in function floor>"), ("ceil", "<built-in function ceil>")),
        2: (("letters", "'abcdefghijklmnopqrstuvwxyz'"),),
        3: (("Counter", "<class 'collections.Counter'>"),),
    }  # not 4: a module's repr names its file
    assert returned_tuples(tree) == {9: ("low", "high"), 14: ("counts",)}


def test_a_program_traced_here_imports_and_returns_what_the_grammar_says() -> None:
    program = Program(source=IMPORTS, entry=None)
    result = run_trace(program)
    assert result.exit == "normal"
    _forward_steps_checked(program, result, ("step_into", "step_over"))


def test_the_grammar_gives_imported_names_their_values_and_a_tuple_its_names() -> None:
    facts = ProgramFacts.of(Program(source=IMPORTS, entry=None))
    module = [StackFrame(function="<module>", line=1)]

    def accepted(prev: State, frame: str) -> bool:
        return _frame_accepted(FrameConstraint(facts, prev, False, "step_over", ()), frame)

    start = State(event="line", line=1, stack=module, locals={})
    line2 = f"{fmt.EVENT_TOKENS[(False, 'line')]}{fmt.LINENO}2{fmt.ARG}{{}}{fmt.SRC}{facts.lines[2]}{fmt.END_OF_FRAME}"
    right = line2.replace("{}", '{"floor": "<built-in function floor>", "ceil": "<built-in function ceil>"}')
    assert accepted(start, right)
    assert not accepted(start, line2.replace("{}", '{"floor": "<built-in function floor>"}'))  # ceil left out
    assert not accepted(start, right.replace("<built-in function ceil>", "15.5"))
    bound = start.model_copy(update={"locals": {"floor": "<built-in function floor>", "ceil": "<built-in function ceil>"}})
    same = line2.replace("{}", '{"..": "..", "ceil": "<built-in function ceil>"}')
    assert accepted(bound, line2.replace("{}", '{"..": ".."}'))  # imported again: nothing changes
    assert accepted(bound, same)

    caller = StackFrame(function="<module>", line=17)
    at9 = State(event="line", line=9, stack=[caller, StackFrame(function="spread", line=9)],
                locals={"values": "[1.5, 2.5]", "low": "1", "high": "3"})

    def returns(value: str) -> str:
        state = at9.model_copy(update={"event": "return", "function": "spread", "source": facts.lines[9], "value": value})
        return fmt.frame_target(state, at9, False)[len(fmt.FRAME):]

    assert accepted(at9, returns("(1, 3)"))
    assert not accepted(at9, returns("(3, 1)"))
    assert not accepted(at9, returns("[1, 3]"))


TRUTHS = """\
def drain(queue, seen):
    done = []
    while queue:
        item = queue.pop()
        if not seen:
            seen = {item}
        elif item:
            done.append(item)
        else:
            pass
    if done:
        return done
"""


def test_the_tests_of_a_names_truth() -> None:
    from model_backend.grammar.lines import TruthTest, truth_tests

    assert truth_tests(ast.parse(TRUTHS)) == {
        3: TruthTest("queue", False, frozenset({4}), frozenset({11})),
        5: TruthTest("seen", True, frozenset({6}), frozenset({7})),
        7: TruthTest("item", False, frozenset({8}), frozenset({10})),
        11: TruthTest("done", False, frozenset({12}), frozenset()),  # false: the frame ends
    }


def test_a_program_traced_here_takes_the_branches_its_values_show() -> None:
    counts = _rules_on_a_program_traced_here(TRUTHS, "drain([[], 0, 'a', 2.5, ()], set())")
    assert counts["truths"] >= 12
    assert _rules_on_a_program_traced_here(TRUTHS, "drain([], {1})")["truths"] >= 2


def test_the_grammar_takes_the_branch_a_names_value_says() -> None:
    facts = ProgramFacts.of(Program(source=TRUTHS, entry="drain([], set())"))

    def goes_to(line: int, action: str = "step_over", **shown: str) -> tuple[set[int], bool]:
        prev = State(event="line", line=line, stack=[StackFrame(function="drain", line=line)], locals=shown)
        constraint = FrameConstraint(facts, prev, False, action, ())
        returns = fmt.EVENT_TOKENS[(False, "return")] in constraint.allowed_specials()
        if fmt.EVENT_TOKENS[(False, "line")] not in constraint.allowed_specials():
            return set(), returns
        constraint.push_special(fmt.EVENT_TOKENS[(False, "line")])
        constraint.push_special(fmt.LINENO)
        return {n for n in range(1, 14) if constraint.accepts_text(str(n).encode())
                and constraint.slot.feed(str(n).encode()).complete}, returns  # type: ignore[union-attr]

    assert goes_to(3, queue="[0]") == ({4}, False)
    assert goes_to(3, "step_into", queue="[]") == ({11}, False)
    assert goes_to(5, seen="set()") == ({6}, False)
    assert goes_to(5, seen="{1}") == ({7}, False)
    assert goes_to(7, item="''") == ({10}, False)
    assert goes_to(7, item="'a'") == ({8}, False)
    assert goes_to(11, done="[]") == (set(), True)
    assert goes_to(11, done="[2.5]") == ({12}, False)
    assert goes_to(7, item="deque([1])") == ({8, 10}, False)  # a repr that does not tell: free
    assert goes_to(7, item="'abcdefghij...") == ({8, 10}, False)


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
        return _frame_accepted(constraint, fmt.frame_target(following, returning, False)[len(fmt.FRAME):])

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
        return _frame_accepted(FrameConstraint(facts, prev, False, "step_over", trail),
                               fmt.frame_target(frame, prev, False)[len(fmt.FRAME):])

    assert accepted(state)
    assert not accepted(state.model_copy(update={"locals": state.locals | {"_": "0"}}))  # the element taken is the second
    assert not accepted(state.model_copy(update={"locals": state.locals | {"name": "'abc'"}}))  # not the outer's
    back = state.model_copy(update={"function": "tally", "stack": state.stack[:1], "depth": 0, "locals": {"name": "'abc'"}})
    assert not accepted(back)  # the outer one is not done
    assert not accepted(state.model_copy(update={"function": "tally", "stack": state.stack[:1], "depth": 0}))
    assert FrameConstraint(facts, prev, False, "step_over", trail[-3:])._outer_after_inner is None  # call not in the trail


GRIDS = """\
def fill(rows, cols, table):
    grid = [[0 for _ in range(cols)] for _ in range(rows)]
    same = [[0] * cols] * rows
    for i in range(rows):
        for j in range(cols):
            grid[i][j] = i * cols + j
            same[i][j] += 1
    table['a'][0] = len(grid)
    grid[-1][0] = table['b']
    return grid, same, table
"""


def test_the_lines_that_store_one_item_of_an_inner_list_or_dict() -> None:
    from model_backend.grammar.containers import item_stores

    found = item_stores(ast.parse(GRIDS), 200)
    assert {line: (store.container, store.outer, store.key, store.augmented) for line, store in found.items()} == {
        6: ("grid", ("name", "i"), ("name", "j"), False),
        7: ("same", ("name", "i"), ("name", "j"), True),
        8: ("table", ("literal", "'a'"), ("literal", "0"), False),
        9: ("grid", ("literal", "-1"), ("literal", "0"), False),
    }
    assert found[6].reads == frozenset({"grid", "i", "j", "cols"})


def test_a_program_traced_here_keeps_the_items_an_inner_store_leaves() -> None:
    counts = _rules_on_a_program_traced_here(GRIDS, "fill(3, 2, {'a': [5, 6], 'b': 7})")
    assert counts["stores"] >= 10  # `same` holds one list three times: its stores stay free


def test_the_grammar_keeps_the_other_items_of_a_grid() -> None:
    facts = ProgramFacts.of(Program(source=GRIDS, entry="fill(2, 2, {})"))

    def accepted(line: int, locals_text: str, **shown: str) -> bool:
        prev = State(event="line", line=line, stack=[StackFrame(function="fill", line=line)], locals=shown)
        return _locals_accepted(facts, prev, {7: 5}.get(line, line + 1), locals_text, "step_over")

    grid = {"grid": "[[0, 1], [0, 0]]", "i": "1", "j": "0", "cols": "2"}
    assert accepted(6, '{"..": "..", "grid": "[[0, 1], [2, 0]]"}', **grid)
    assert not accepted(6, '{"..": "..", "grid": "[[0, 1], [2, 2]]"}', **grid)  # another item of the row
    assert not accepted(6, '{"..": "..", "grid": "[[9, 1], [2, 0]]"}', **grid)  # another row
    same = {"same": "[[1, 0], [1, 0]]", "i": "0", "j": "1"}
    assert accepted(7, '{"..": "..", "same": "[[1, 1], [1, 1]]"}', **same)  # one list twice: both rows show it
    table = {"table": "{'a': [5, 6], 'b': 7}", "grid": "[[0]]"}
    assert accepted(8, '{"..": "..", "table": "{\'a\': [1, 6], \'b\': 7}"}', **table)
    assert not accepted(8, '{"..": "..", "table": "{\'a\': [1, 6], \'b\': 8}"}', **table)


def test_a_builtin_type_called_empty_is_a_literal() -> None:
    from model_backend.grammar.bindings import simple_assignments

    source = "def f(x):\n    a = list()\n    b = dict()\n    c = set()\n    d = str()\n    e = list(x)\n    g = int()\n"
    assert simple_assignments(ast.parse(source), 200)[0] == {
        2: ("a", "[]"), 3: ("b", "{}"), 4: ("c", "set()"), 5: ("d", "''"), 7: ("g", "0")}
    assert simple_assignments(ast.parse("list = tuple\ndef f():\n    a = list()\n"), 200)[0] == {}  # not the builtin


MUTATING = """\
def two_sum(array, target):
    seen = {}
    grid = [[0, 0], [1, 1]]
    row = grid[1]
    for index, num in enumerate(array):
        seen[target - num] = index
        grid[index % 2][0] += num
        row.append(len(seen))
        seen.update(row=index)
        array[0], array[1] = array[1], array[0]
        other = seen.get(num, row)
        f(seen)
    return seen, grid


def f(d):
    d.clear()
"""


def test_the_lines_that_change_objects_only_through_names() -> None:
    from model_backend.grammar.containers import mutating_lines

    names = frozenset
    assert mutating_lines(ast.parse(MUTATING)) == {
        6: (names({"seen", "target", "num", "index"}), names({"seen"})),
        7: (names({"grid", "index", "num"}), names({"grid"})),
        8: (names({"row", "seen"}), names({"row"})),
        9: (names({"seen", "index"}), names({"seen"})),
        10: (names({"array"}), names({"array"})),
        17: (names({"d"}), names({"d"})),
    }  # not 11 (it binds, `get` only reads: the inert rule's), not 12 (a call of the program's code)
    assert mutating_lines(ast.parse("class A:\n    pass\n" + MUTATING)) == {}  # an object's methods may be the program's


def test_a_store_leaves_the_objects_it_cannot_reach() -> None:
    """After step_over from `seen[target - num] = index` the list `array` keeps its value (the model had
    written a loop of text there), `seen` may change; after `grid[index % 2][0] += num`, `row` may
    change too: its repr is inside grid's, and it is grid's row."""
    facts = ProgramFacts.of(Program(source=MUTATING, entry="two_sum([4, 11], 7)"))
    shown = {"array": "[4, 11]", "target": "7", "seen": "{}", "grid": "[[0, 0], [1, 1]]", "row": "[1, 1]",
             "index": "0", "num": "4"}

    def accepted(line: int, locals_text: str, to: int | None = None) -> bool:
        prev = State(event="line", line=line, stack=[StackFrame(function="two_sum", line=line)], locals=shown)
        return _locals_accepted(facts, prev, to or line + 1, locals_text, "step_over")

    assert accepted(6, '{"..": "..", "seen": "{3: 0}"}')
    assert not accepted(6, '{"..": "..", "seen": "{3: 0}", "array": "[0: 0: 0]"}')
    assert not accepted(6, '{"..": "..", "grid": "[[0, 0]]"}')
    assert accepted(7, '{"..": "..", "grid": "[[4, 0], [1, 1]]"}')
    assert accepted(7, '{"..": "..", "grid": "[[0, 0], [5, 1]]", "row": "[5, 1]"}')
    assert not accepted(7, '{"..": "..", "array": "[4]"}')
    assert accepted(12, '{"..": "..", "array": "[4]"}', to=5)  # f is the program's code: anything mutable may change


def test_a_program_traced_here_changes_only_what_its_lines_reach() -> None:
    counts = _rules_on_a_program_traced_here(MUTATING.replace("        f(seen)\n", ""), "two_sum([4, 11, 2], 7)")
    assert counts["mutating"] >= 20


CALLER_STEPS = """\
def helper(res, n):
    return res[::-1] if n else res
def rev(xs):
    if not xs:
        return []
    tail = rev(xs[1:])
    return tail + [xs[0]]
def f(word, counts):
    kept = {k: v for k, v in counts.items() if v > 0}
    pair = helper((len(word), 5), len(word))
    i = word.index('k')
    try:
        j = word.index('z')
    except ValueError:
        j = -1
    sizes = helper([len(c) for c in word], 0)
    return rev([i, j]), kept, pair, sizes
"""


def _walked(source: str, entry: str) -> tuple[ProgramFacts, list[State]]:
    """The program's facts and every state of a walk of step_into from its start to its end."""
    from model_backend.mdp import TraceMDP
    from model_backend.state import Action

    program = Program(source=source, entry=entry)
    mdp = TraceMDP(run_trace(program))
    walk = [mdp.start_position()]
    while walk[-1] != mdp.exit_position and len(walk) < 2000:
        walk.append(mdp.step(walk[-1], Action(kind="step_into"))[0])
    return ProgramFacts.of(program), [mdp.state(position) for position in walk]


def test_the_grammar_computes_calls_returns_comprehensions_and_what_cannot_raise() -> None:
    """These rules, each on the true step and on a wrong one: a call's arguments that builtins
    compute (`helper((len(word), 5), len(word))`), a caller that returns right after its callee only from a
    line that can end it, what a comprehension returns, and no exception from a line whose value deduce.py
    computes."""
    from model_backend.grammar.calls import call_bindings

    bound, reads = call_bindings(ast.parse(CALLER_STEPS), 200)[(10, "helper")]
    assert bound == (("res", ("expression", "(len(word), 5)")), ("n", ("expression", "len(word)")))
    assert reads == {"word"}  # `len` is no variable: the caller's values can tell the arguments
    facts, states = _walked(CALLER_STEPS, "f('kwk', {'a': 1, 'b': 0})")

    def check(index: int, wrong: dict[str, Any] | None = None) -> FrameConstraint:
        """The step from states[index] to the next: the true frame accepted, the wrong one refused."""
        prev, state = states[index], states[index + 1]
        trail = tuple((before, "step_into") for before in states[:index])

        def accepted(frame: State) -> bool:
            return _frame_accepted(FrameConstraint(facts, prev, False, "step_into", trail),
                                   fmt.frame_target(frame, prev, False)[len(fmt.FRAME):])

        assert accepted(state) and (wrong is None or not accepted(state.model_copy(update=wrong)))
        return FrameConstraint(facts, prev, False, "step_into", trail)

    def at(event: str, line: int, function: str, nth: int = 0) -> int:
        return [i for i, s in enumerate(states) if (s.event, s.line, s.function) == (event, line, function)][nth]

    check(at("line", 10, "f"), {"locals": {"res": "(5, 3)", "n": "3"}})
    check(at("line", 9, "<dictcomp>", 2), {"value": "{'a': 1, 'b': 0}"})  # the last element taken: it returns
    # a comprehension passed to a function runs before it, on what the caller showed
    first = at("line", 16, "<listcomp>")
    check(first, {"locals": states[first + 1].locals | {"c": "'w'"}})
    check(at("line", 16, "<listcomp>", 3), {"value": "[1, 1]"})
    # rev's innermost return to its caller on `tail = rev(xs[1:])`: that line cannot end the caller, and
    # the caller goes on to a line that can follow it (7), not to the line it called from
    after_return = check(at("return", 5, "rev"), {"line": 6, "source": facts.lines[6], "stack": [
        *states[at("return", 5, "rev") + 1].stack[:-1], StackFrame(function="rev", line=6)]})
    assert fmt.EVENT_TOKENS[(False, "return")] not in after_return.allowed_specials()
    ends_caller = FrameConstraint(facts, states[at("return", 7, "rev", 1)], False, "step_into")
    assert fmt.EVENT_TOKENS[(False, "return")] in ends_caller.allowed_specials()  # `return rev([i, j]), ...`
    exception = fmt.EVENT_TOKENS[(False, "exception")]
    assert exception not in check(at("line", 11, "f"), {"locals": states[at("line", 12, "f")].locals | {"i": "1"}}).allowed_specials()
    assert exception in FrameConstraint(facts, states[at("line", 13, "f")], False, "step_into").allowed_specials()
