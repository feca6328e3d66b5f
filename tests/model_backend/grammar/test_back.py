"""Steps back (model_backend/grammar/back.py): what a step back may change, and the earlier values of
one-to-one updates."""

from __future__ import annotations

import pytest

from model_backend import trace_format as fmt
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.program import Program
from model_backend.sandbox import run_trace
from model_backend.state import StackFrame, State
from tests.model_backend.grammar.support import NAMES
from tests.support.corpus import traced

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
    going round again, the grammar holds its names to the values they had (back.values_before,
    back.container_before, FrameConstraint._loop_back): the true earlier frame is the only one it
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
