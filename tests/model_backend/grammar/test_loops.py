"""Loops (model_backend/grammar/loops.py): the element a `for` step takes, from range, enumerate and
iterables computed from shown values; sound on real traces, tight where they should be."""

from __future__ import annotations

import ast

import pytest

from model_backend import trace_format as fmt
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.grammar.loops import for_loops
from model_backend.program import Program
from model_backend.state import StackFrame, State
from tests.model_backend.grammar.support import (
    LOOPS,
    NAMES,
    SPLITS,
    forward_steps_checked,
    frame_accepted,
    line_frame,
    rules_on_a_program_traced_here,
    state_at,
)
from tests.support.corpus import traced


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


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_step_from_a_loop_header_takes_the_element_the_grammar_names(name: str) -> None:
    program, result = traced(name)
    forward_steps_checked(program, result, ("step_into", "step_over"))


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
    assert rules_on_a_program_traced_here(LOOPS + "\n\n" + ALIASED, "main()")["loops"] >= 40


def test_the_grammar_names_the_element_a_loop_takes() -> None:
    facts = ProgramFacts.of(Program(source=LOOPS, entry="count(['ab'], {}, 2)"))
    shown = {"words": "['ab', 'cd']", "table": "{}", "n": "2", "seen": "['a', 'b']", "total": "0"}

    def at(line: int, **changes: str) -> State:
        return State(event="line", line=line, stack=[StackFrame(function="count", line=line)], locals=shown | changes)

    def accepted(prev: State, arrival: State | None, frame: str, trail: tuple[State, ...] = ()) -> bool:
        steps = (*trail, *([arrival] if arrival else []))
        constraint = FrameConstraint(facts, prev, False, "step_over", tuple((state, "step_over") for state in steps))
        return frame_accepted(constraint, frame)

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


def test_the_loops_over_an_expression() -> None:
    loops = for_loops(ast.parse(SPLITS))
    assert loops[3].target == "i" and ast.unparse(loops[3].expression) == "s.split(' ')"  # type: ignore[arg-type]
    assert (loops[10].counter, loops[10].target) == ("word", "k")
    assert all(loops[line].round_known for line in (3, 10, 12, 14, 16))
    assert loops[14].mutation_check is not None  # `counts[...] = ...`: the rule checks `text` is not `counts`
    rebinding = for_loops(ast.parse("def f(s):\n    for w in s.split():\n        s = w\n"))
    assert not rebinding[2].round_known  # the body rebinds what the iterable reads: only a start is known


def test_the_grammar_names_the_word_a_split_gives() -> None:
    facts = ProgramFacts.of(Program(source=SPLITS, entry="main()"))
    shown = {"s": "'5 apples and 6 oranges'", "n": "19", "lis": "[]"}

    def at(line: int, **changes: str) -> State:
        return state_at("fruit_distribution", line, shown | changes)

    def accepted(prev: State, arrival: State, frame: str) -> bool:
        return frame_accepted(FrameConstraint(facts, prev, False, "step_over", ((arrival, "step_over"),)), frame)

    def line(number: int, locals_text: str) -> str:
        return line_frame(facts, number, locals_text)

    start = at(3)
    assert accepted(start, at(2), line(4, '{"..": "..", "i": "\'5\'"}'))
    assert not accepted(start, at(2), line(4, '{"..": "..", "i": "\'5 apples\'"}'))
    again = at(3, i="'apples'")
    assert accepted(again, at(4, i="'apples'"), line(4, '{"..": "..", "i": "\'and\'"}'))
    assert not accepted(again, at(4, i="'apples'"), line(6, '{"..": ".."}'))  # 'and' and more are left
    last = at(3, i="'oranges'", lis="[5, 6]")
    assert accepted(last, at(4, i="'oranges'", lis="[5, 6]"), line(6, '{"..": ".."}'))
    assert not accepted(last, at(4, i="'oranges'", lis="[5, 6]"), line(4, '{"..": "..", "i": "\'6\'"}'))
