"""Bindings (model_backend/grammar/bindings.py): the names a step binds, simple and computed assignments,
imported names; sound on real traces, tight where they should be."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from model_backend import trace_format as fmt
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.program import Program
from model_backend.sandbox import run_trace
from model_backend.state import StackFrame, State
from tests.model_backend.grammar.support import (
    COMPUTED,
    FLOW,
    NAMES,
    SPLITS,
    forward_steps_checked,
    frame_accepted,
    line_frame,
    locals_accepted,
    rules_on_a_program_traced_here,
    state_at,
)
from tests.support.corpus import traced


def test_a_step_within_the_frame_changes_only_what_it_can() -> None:
    """After step_over from `n += 1` (line 12), a diff names n (bound there), as 1 (evaluation.py), and
    never total or d (an int and a str change only when rebound) nor xs (nothing the line does on an
    int reaches a list: containers.mutating_lines)."""
    facts = ProgramFacts.of(Program(source=FLOW, entry="f([1], 'x')"))
    prev = State(event="line", line=12, stack=[StackFrame(function="f", line=12)],
                 locals={"xs": "[1]", "d": "'x'", "total": "0", "x": "1", "n": "0"})

    def accepted(locals_text: str, action: str | None = "step_over") -> bool:
        return locals_accepted(facts, prev, 13, locals_text, action)

    assert accepted('{"..": "..", "n": "1"}')
    assert not accepted('{"..": "..", "n": "1", "xs": "[2]"}')  # nothing `n += 1` does on an int reaches xs
    assert not accepted('{"..": ".."}')  # `n += 1` on a shown int gives 1 (evaluation.py): the diff must say so
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
    be the program's code. (The entry builds xs by a call, so xs is not a sealed literal: sealed.py.)"""
    facts = ProgramFacts.of(Program(source=FLOW, entry="f(list([1]), 'x')"))

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


def test_a_step_over_a_literal_assignment_binds_exactly_that_literal() -> None:
    """After a step from `n = 0` (line 10) to the next line, n is 0: written with that value, and not
    left out (unless a diff leaves it out because it was 0 already)."""
    facts = ProgramFacts.of(Program(source=FLOW, entry="f([1], 'x')"))
    prev = State(event="line", line=10, stack=[StackFrame(function="f", line=10)],
                 locals={"xs": "[1]", "d": "'x'", "total": "0", "x": "1"})

    def accepted(locals_text: str, action: str | None = "step_over", before: State = prev) -> bool:
        return locals_accepted(facts, before, 11, locals_text, action)

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
    forward_steps_checked(program, result, ("step_into", "step_over"))


def test_the_grammar_gives_imported_names_their_values_and_a_tuple_its_names() -> None:
    facts = ProgramFacts.of(Program(source=IMPORTS, entry=None))
    module = [StackFrame(function="<module>", line=1)]

    def accepted(prev: State, frame: str) -> bool:
        return frame_accepted(FrameConstraint(facts, prev, False, "step_over", ()), frame)

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


def test_a_builtin_type_called_empty_is_a_literal() -> None:
    from model_backend.grammar.bindings import simple_assignments

    source = "def f(x):\n    a = list()\n    b = dict()\n    c = set()\n    d = str()\n    e = list(x)\n    g = int()\n"
    assert simple_assignments(ast.parse(source), 200)[0] == {
        2: ("a", "[]"), 3: ("b", "{}"), 4: ("c", "set()"), 5: ("d", "''"), 7: ("g", "0")}
    assert simple_assignments(ast.parse("list = tuple\ndef f():\n    a = list()\n"), 200)[0] == {}  # not the builtin


def test_the_tests_and_values_it_computes() -> None:
    from model_backend.grammar.bindings import computed_values
    from model_backend.grammar.lines import truth_tests

    tests = truth_tests(ast.parse(COMPUTED))
    assert sorted(tests) == [4, 5, 7, 9, 18]
    assert ast.unparse(tests[18].expression) == "i.isdigit()"  # type: ignore[arg-type]
    assigned, returned = computed_values(ast.parse(COMPUTED))
    assert {line: (names, ast.unparse(e)) for line, (names, e) in assigned.items()} == {
        2: (("chars",), "list(text)"), 3: (("left", "right"), "(0, len(chars) - 1)"), 6: (("left",), "left + 1"),
        8: (("right",), "right - 1"), 11: (("left", "right"), "(left + 1, right - 1)"),
        16: (("lis",), "list()")}  # not 10: it stores items
    assert {line: ast.unparse(e) for line, e in returned.items()} == {12: "''.join(chars)", 20: "n - sum(lis)"}
    assert computed_values(ast.parse("class L(list):\n    pass\n" + COMPUTED)) == ({}, {})  # its objects print as lists
    assert computed_values(ast.parse("class A:\n    pass\n" + COMPUTED))[1]  # an A prints as no literal: kept


TEXTS = """\
def banner(text, width, sep):
    head, mid, tail = text.rpartition(sep)
    title = head.title().center(width, '*') if head.istitle() else head.swapcase().zfill(width)
    rows = [part.capitalize().ljust(width // 2) for part in text.split(sep)]
    pad = (width - len(tail)) * '-' + tail.casefold()
    copy = rows.copy()
    backwards = reversed(copy)  # an iterator: never written as a list
    pairs = zip(copy, list(backwards))
    copy = [a + b for a, b in pairs]
    kinds = [isinstance(part, str) or type(part) == list for part in (head, width, rows)]
    label = '{}:{:>3}|%s'.format(kinds, width) % (sep,)
    line = sep.join(copy) * 2 + label
    return title + mid + pad + line.expandtabs(4).removeprefix('Ab')


def main():
    banner('ab/Cd\\tEf/gh', 12, '/')
    banner('Hello World:x', 7, ':')
    return dict.fromkeys('banner', 0)
"""


OPERATORS_AND_BUILTINS = """\
def tally(words, n):
    counts = dict(zip(words, map(len, words)))
    longest = max(counts, key=counts.get)
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    digits = list(map(int, str(n)))
    mask = n & 0xFF | (n >> 2) ^ ~n
    power = pow(n, 2) + 2 ** len(digits)
    code = bin(n) + hex(n) + oct(n)
    kept = list(filter(lambda w: len(w) > 1, words))
    clean = words[0].translate(str.maketrans('ab', 'xy', 'c'))
    head = ' '.join(words).split(maxsplit=1)[0]
    return [longest, ranked, digits, mask, power, code, kept, clean, round(n / 3, 2), float(len(head))]


def main():
    tally(['abc', 'b', 'ccd', 'ab'], 1234)
    return tally(['x'], 7)
"""

SETS = """\
def uniques(words, stop):
    seen = set()
    kept = []
    for w in words:
        if w in seen or w in set(stop):
            continue
        seen.add(w)
        kept.append(w)
    common = sorted(set(words) & set(stop))
    sizes = set(map(len, words))
    return len(seen), sorted(seen), common, max(sizes), sum(sizes), 'the' in seen


def main():
    uniques(['the', 'cat', 'and', 'the', 'hat', 'cat'], ['and', 'or'])
    return uniques('a b a c'.split(), [])
"""


@pytest.mark.parametrize(("program", "least"), [
    pytest.param(SETS, {"truths": 16, "computed": 10}, id="SETS"),  # a set's members, length, sorted elements: never its order
    pytest.param(OPERATORS_AND_BUILTINS, {"computed": 36}, id="OPERATORS_AND_BUILTINS"),  # operators, numeric and text builtins, functions passed
    pytest.param(TEXTS, {"computed": 28}, id="TEXTS"),  # str methods, and `*` of a string
    pytest.param(SPLITS, {"loops": 40, "comprehensions": 6}, id="SPLITS"),  # over split, sorted(...items()), reversed(...), a slice
    pytest.param(COMPUTED, {"truths": 40, "computed": 20}, id="COMPUTED"),  # `while left < right and ...`, `left += 1`, `return n - ...`
])
def test_a_program_traced_here_keeps_to_what_its_values_give(program: str, least: dict[str, int]) -> None:
    """Every true step_into and step_over of the traced program is accepted, and the rules govern at
    least so many of its steps."""
    counts = rules_on_a_program_traced_here(program, "main()")
    assert all(counts[rule] >= n for rule, n in least.items()), counts


def test_the_grammar_takes_the_branch_and_the_value_the_shown_values_give() -> None:
    facts = ProgramFacts.of(Program(source=COMPUTED, entry="main()"))
    shown = {"s": "'5 apples'", "n": "19", "lis": "[]"}

    def step(line: int, **changes: str) -> FrameConstraint:
        return FrameConstraint(facts, state_at("fruit_distribution", line, shown | changes), False, "step_over", ())

    def line(number: int, locals_text: str) -> str:
        return line_frame(facts, number, locals_text)

    def returned(number: int, value: str) -> str:
        return (f"{fmt.EVENT_TOKENS[(False, 'return')]}{fmt.LINENO}{number}{fmt.SRC}{facts.lines[number]}"
                f"{fmt.ARG}{fmt._json(value)}{fmt.ARG}{{\"..\": \"..\"}}{fmt.END_OF_FRAME}")

    assert frame_accepted(step(18, i="'5'"), line(19, '{"..": ".."}'))
    assert not frame_accepted(step(18, i="'5'"), line(17, '{"..": ".."}'))
    assert frame_accepted(step(18, i="'apples'"), line(17, '{"..": ".."}'))
    assert not frame_accepted(step(18, i="'apples'"), line(19, '{"..": ".."}'))
    assert frame_accepted(step(20, lis="[5, 6]"), returned(20, "8"))
    assert not frame_accepted(step(20, lis="[5, 6]"), returned(20, "10"))
    assert frame_accepted(step(20, lis="[5, 6...", n="19"), returned(20, "10"))  # a cut list: free


def test_the_grammar_binds_the_value_an_expression_gives() -> None:
    facts = ProgramFacts.of(Program(source=COMPUTED, entry="main()"))
    shown = {"text": "'hello'", "vowels": "'aeiou'", "chars": "['h', 'e', 'l', 'l', 'o']", "left": "0", "right": "4"}

    def accepted(line: int, to: int, locals_text: str) -> bool:
        constraint = FrameConstraint(facts, state_at("reverse_vowel", line, shown), False, "step_over", ())
        return frame_accepted(constraint, line_frame(facts, to, locals_text))

    assert accepted(6, 5, '{"..": "..", "left": "1"}')
    assert not accepted(6, 5, '{"..": "..", "left": "2"}')
    assert not accepted(6, 5, '{"..": ".."}')  # it changed: a diff must name it
    assert accepted(11, 4, '{"..": "..", "left": "1", "right": "3"}')
    assert not accepted(11, 4, '{"..": "..", "left": "1", "right": "4"}')
