"""Loop iterables computed from shown values (model_backend/engine/iterables.py) and the loop rules that
use them: the same elements Python gives, nothing where the values do not tell, and every true step of a
traced program accepted."""

from __future__ import annotations

import ast

import pytest

from model_backend import trace_format as fmt
from model_backend.engine.constraint import FrameConstraint, ProgramFacts
from model_backend.engine.flow import for_loops
from model_backend.engine.iterables import iterable_elements, iterable_reads
from model_backend.program import Program
from model_backend.state import StackFrame, State
from tests.test_flow import _frame_accepted, _rules_on_a_program_traced_here


def _expression(source: str) -> ast.expr:
    return ast.parse(source, mode="eval").body


@pytest.mark.parametrize(("source", "reads"), [
    ("s.split()", {"s"}),
    ("s.split(' ', 1)", {"s"}),
    ("sorted(d.items(), reverse=True)", {"d"}),
    ("reversed(list(enumerate(xs)))", {"xs"}),
    ("range(0, len(xs) // 2)", {"xs"}),
    ("zip(a, b[1:])", {"a", "b"}),
    ("xs[::-1]", {"xs"}),
    ("range(min(n, 3))", {"n"}),
])
def test_the_iterables_it_computes_and_what_they_read(source: str, reads: set[str]) -> None:
    assert iterable_reads(_expression(source), set()) == reads


@pytest.mark.parametrize("source", [
    "xs",  # a bare variable: the loop rules read it off its repr themselves
    "f(xs)",  # the program's own code
    "xs.pop()",  # a method that changes its object
    "s.replace('a', 'b')",  # not on the list
    "sorted(xs, key=len)",  # a key function
    "map(str, xs)",
    "[x for x in xs]",
    "sorted(*xs)",
    "x if x else y",
])
def test_what_it_leaves_to_the_model(source: str) -> None:
    assert iterable_reads(_expression(source), set()) is None


def test_a_builtin_the_program_rebinds_is_not_the_builtin() -> None:
    assert iterable_reads(_expression("sorted(xs)"), {"sorted"}) is None
    assert iterable_reads(_expression("sorted(xs)"), {"xs"}) == {"xs"}


CASES = [
    ("s.split(' ')", {"s": "1 apples and  2 oranges"}),
    ("s.split()", {"s": " This is\ta test "}),
    ("s.split(',', 1)", {"s": "a,b,c"}),
    ("s.strip().lower()", {"s": "  AbC "}),
    ("s.splitlines()", {"s": "x\ny\n"}),
    ("sorted(d)", {"d": {"b": 1, "a": 2, "c": 0}}),
    ("sorted(d.items(), reverse=True)", {"d": {"b": 1, "a": 2}}),
    ("d.values()", {"d": {"b": [1], "a": 2}}),
    ("reversed(list(enumerate(xs)))", {"xs": [5, 6, 7]}),
    ("enumerate(xs, 1)", {"xs": "ab"}),
    ("range(0, len(xs) // 2)", {"xs": [1, 2, 3, 4, 5]}),
    ("range(2, n + 1)", {"n": 6}),
    ("range(len(xs) - 1, -1, -1)", {"xs": "abc"}),
    ("zip(a, b[1:])", {"a": [1, 2, 3], "b": (4, 5, 6)}),
    ("xs[::-1]", {"xs": [1, "a", (2,)]}),
    ("xs[1:-1]", {"xs": "hello"}),
    ("xs + ys", {"xs": [1], "ys": [2, 3]}),
    ("sorted(xs)", {"xs": [3, 1.5, -2]}),
    ("range(min(n, 3))", {"n": 7}),
    ("range(abs(n) % 4)", {"n": -7}),
    ("sorted(xs)[::2]", {"xs": ["b", "c", "a"]}),
]


@pytest.mark.parametrize(("source", "values"), CASES)
def test_the_elements_are_those_python_gives(source: str, values: dict[str, object]) -> None:
    # Here, in the test, Python itself evaluates the expression on the same values for comparison.
    expected = list(eval(source, {}, dict(values)))  # noqa: S307 - the test's own constant expressions
    shown = {name: repr(value) for name, value in values.items()}
    assert iterable_elements(_expression(source), shown, 200) == expected


@pytest.mark.parametrize(("source", "shown"), [
    ("s.split()", {"s": "'a b..."}),  # cut by the tracer
    ("s.split()", {}),  # not shown
    ("s.split()", {"s": "[1, 2]"}),  # a list has no split
    ("sorted(xs)", {"xs": "{3, 1, 2}"}),  # a set: its order here need not be the program's
    ("sorted(xs)", {"xs": "[1, 'a']"}),  # raises
    ("sorted(xs)", {"xs": "[1,2]"}),  # not the repr Python writes: not a value the tracer showed
    ("range(n)", {"n": "100000000"}),  # too long to list
    ("range(10 // n)", {"n": "0"}),  # raises
    ("xs[n]", {"xs": "[1]", "n": "3"}),  # raises
    ("xs[::n]", {"xs": "[1]", "n": "0"}),  # raises
    ("xs", {"xs": "[<queue.Queue object>]"}),
    ("d.items()", {"d": "{'a': 'x" + "y" * 300 + "'}"}),  # an element the tracer would cut
    ("min(xs)", {"xs": "[]"}),  # raises
    ("zip(a, b)", {"a": "[1]", "b": "5"}),  # raises
])
def test_nothing_where_the_values_do_not_tell(source: str, shown: dict[str, str]) -> None:
    assert iterable_elements(_expression(source), shown, 200) is None


SPLITS = """\
def fruit_distribution(s, n):
    lis = list()
    for i in s.split(' '):
        if i.isdigit():
            lis.append(int(i))
    return n - sum(lis)


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


def test_the_loops_over_an_expression() -> None:
    loops = for_loops(ast.parse(SPLITS))
    assert loops[3].target == "i" and ast.unparse(loops[3].expression) == "s.split(' ')"  # type: ignore[arg-type]
    assert (loops[10].counter, loops[10].target) == ("word", "k")
    assert all(loops[line].round_known for line in (3, 10, 12, 14, 16))
    assert loops[14].mutation_check is not None  # `counts[...] = ...`: the rule checks `text` is not `counts`
    rebinding = for_loops(ast.parse("def f(s):\n    for w in s.split():\n        s = w\n"))
    assert not rebinding[2].round_known  # the body rebinds what the iterable reads: only a start is known


def test_a_program_traced_here_takes_the_elements_its_expressions_give() -> None:
    """Every true step_into and step_over of the traced program is accepted, and the rules govern the
    steps from the headers over `split`, `sorted(...items())`, `.items()`, `reversed(...)`, a slice, and
    the comprehension over `text.split('b')`."""
    counts = _rules_on_a_program_traced_here(SPLITS, "main()")
    assert counts["loops"] >= 40
    assert counts["comprehensions"] >= 6


def test_the_grammar_names_the_word_a_split_gives() -> None:
    facts = ProgramFacts.of(Program(source=SPLITS, entry="main()"))
    shown = {"s": "'5 apples and 6 oranges'", "n": "19", "lis": "[]"}

    def at(line: int, **changes: str) -> State:
        return State(event="line", line=line, stack=[StackFrame(function="fruit_distribution", line=line)],
                     locals=shown | changes)

    def accepted(prev: State, arrival: State, frame: str) -> bool:
        return _frame_accepted(FrameConstraint(facts, prev, False, "step_over", ((arrival, "step_over"),)), frame)

    def line(number: int, locals_text: str) -> str:
        return (f"{fmt.EVENT_TOKENS[(False, 'line')]}{fmt.LINENO}{number}{fmt.ARG}{locals_text}{fmt.SRC}"
                f"{facts.lines[number]}{fmt.END_OF_FRAME}")

    start = at(3)
    assert accepted(start, at(2), line(4, '{"..": "..", "i": "\'5\'"}'))
    assert not accepted(start, at(2), line(4, '{"..": "..", "i": "\'5 apples\'"}'))
    again = at(3, i="'apples'")
    assert accepted(again, at(4, i="'apples'"), line(4, '{"..": "..", "i": "\'and\'"}'))
    assert not accepted(again, at(4, i="'apples'"), line(6, '{"..": ".."}'))  # 'and' and more are left
    last = at(3, i="'oranges'", lis="[5, 6]")
    assert accepted(last, at(4, i="'oranges'", lis="[5, 6]"), line(6, '{"..": ".."}'))
    assert not accepted(last, at(4, i="'oranges'", lis="[5, 6]"), line(4, '{"..": "..", "i": "\'6\'"}'))
