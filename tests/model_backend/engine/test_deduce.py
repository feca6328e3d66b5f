"""Loop iterables computed from shown values (model_backend/grammar/evaluation.py) and the loop rules that
use them: the same elements Python gives, nothing where the values do not tell, and every true step of a
traced program accepted."""

from __future__ import annotations

import ast
import copy
import json
import os
import subprocess
import sys

import pytest

from model_backend import trace_format as fmt
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.grammar.bindings import value_repr
from model_backend.grammar.lines import truth
from model_backend.grammar.loops import for_loops, iterable_elements
from model_backend.grammar.printing import print_reads, printed_text
from model_backend.grammar.values import expression_reads
from model_backend.program import Program
from model_backend.state import StackFrame, State
from tests.model_backend.engine.test_flow import _frame_accepted, _rules_on_a_program_traced_here


def _at(function: str, line: int, shown: dict[str, str]) -> State:
    return State(event="line", line=line, stack=[StackFrame(function=function, line=line)], locals=shown)


def _line_frame(facts: ProgramFacts, number: int, locals_text: str) -> str:
    """A line event's whole frame text, from right after `<|frame_sep|>`."""
    return (f"{fmt.EVENT_TOKENS[(False, 'line')]}{fmt.LINENO}{number}{fmt.ARG}{locals_text}{fmt.SRC}"
            f"{facts.lines[number]}{fmt.END_OF_FRAME}")


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
    ("xs", {"xs"}),
    ("[x * k for x in xs if x]", {"xs", "k"}),  # the comprehension's own variable is not read from outside
    ("s.replace('a', 'b')", {"s"}),
    ("x if x else y", {"x", "y"}),
    ("i.isdigit() and not (n > 2 or n is None)", {"i", "n"}),
    ("left < right and s[right] not in vowels", {"left", "right", "s", "vowels"}),
])
def test_the_iterables_it_computes_and_what_they_read(source: str, reads: set[str]) -> None:
    assert expression_reads(_expression(source), set()) == reads


@pytest.mark.parametrize("source", [
    "f(xs)",  # the program's own code
    "xs.attr",
    "x is y",  # identity: only against None
    "(lambda: 1)()",  # a lambda is only passed, to map, filter or `key=`
    "xs.pop()",  # a method that changes its object
    "s.encode()",  # not on the list
    "sorted(xs, key=f)",  # a key function of the program
    "map(f, xs)",
    "map(print, xs)",  # a builtin that is not on the list of functions passed
    "sorted(xs, key=lambda x, *rest: x)",  # a lambda with more than positional parameters
    "s.strip(chars=t)",  # a keyword the method does not take here
    "max(xs, default=0)",
    "[x async for x in xs]",
    "sorted(*xs)",
])
def test_what_it_leaves_to_the_model(source: str) -> None:
    assert expression_reads(_expression(source), set()) is None


def test_a_builtin_the_program_rebinds_is_not_the_builtin() -> None:
    assert expression_reads(_expression("sorted(xs)"), {"sorted"}) is None
    assert expression_reads(_expression("sorted(xs, key=len)"), {"len"}) is None  # passed, not called
    assert expression_reads(_expression("list(map(str.upper, xs))"), {"str"}) is None
    assert expression_reads(_expression("s.translate(str.maketrans('a', 'b'))"), {"str"}) is None


def test_a_lambda_s_parameters_are_its_own() -> None:
    """What a lambda passed to map, filter or `key=` reads from outside is what it reads, less its
    parameters; a bound method passed (`key=counts.get`) reads its object."""
    assert expression_reads(_expression("sorted(xs, key=lambda x: (x[k], -x[0]))"), set()) == {"xs", "k"}
    assert expression_reads(_expression("list(map(lambda a, b: a * b, xs, ys))"), set()) == {"xs", "ys"}
    assert expression_reads(_expression("max(counts, key=counts.get)"), set()) == {"counts"}
    assert expression_reads(_expression("list(filter(None, xs))"), set()) == {"xs"}
    assert expression_reads(_expression("sorted(xs)"), {"xs"}) == {"xs"}
    assert expression_reads(_expression("dict.fromkeys(xs)"), {"dict"}) is None
    assert expression_reads(_expression("dict.fromkeys(xs)"), set()) == {"xs"}  # `dict` is not a variable read
    assert expression_reads(_expression("isinstance(x, int)"), {"int"}) is None
    assert expression_reads(_expression("isinstance(x, t)"), set()) is None  # only builtin types, by name
    assert expression_reads(_expression("isinstance(x, (int, str))"), set()) == {"x"}
    assert expression_reads(_expression("type(x) == list"), {"list"}) is None
    assert expression_reads(_expression("type(x) < list"), set()) is None


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
    ("[w.upper() for w in text.split('b') if w]", {"text": "abcbd"}),
    ("[(i, j) for i, row in enumerate(grid) for j in row if i != j]", {"grid": [[0, 1], [1]]}),
    ("{ch: part.count(ch) for ch in part}", {"part": "gloo"}),
]


@pytest.mark.parametrize(("source", "values"), CASES)
def test_the_elements_are_those_python_gives(source: str, values: dict[str, object]) -> None:
    # Here, in the test, Python itself evaluates the expression on the same values for comparison.
    expected = list(eval(source, dict(values)))  # noqa: S307 - the test's own constant expressions
    shown = {name: repr(value) for name, value in values.items()}
    assert iterable_elements(_expression(source), shown, 200) == expected


@pytest.mark.parametrize(("source", "shown"), [
    ("s.split()", {"s": "'a b..."}),  # cut by the tracer
    ("s.split()", {}),  # not shown
    ("s.split()", {"s": "[1, 2]"}),  # a list has no split
    ("list(xs)", {"xs": "{3, 1, 2}"}),  # a set: its order here need not be the program's
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
        return _at("fruit_distribution", line, shown | changes)

    def accepted(prev: State, arrival: State, frame: str) -> bool:
        return _frame_accepted(FrameConstraint(facts, prev, False, "step_over", ((arrival, "step_over"),)), frame)

    def line(number: int, locals_text: str) -> str:
        return _line_frame(facts, number, locals_text)

    start = at(3)
    assert accepted(start, at(2), line(4, '{"..": "..", "i": "\'5\'"}'))
    assert not accepted(start, at(2), line(4, '{"..": "..", "i": "\'5 apples\'"}'))
    again = at(3, i="'apples'")
    assert accepted(again, at(4, i="'apples'"), line(4, '{"..": "..", "i": "\'and\'"}'))
    assert not accepted(again, at(4, i="'apples'"), line(6, '{"..": ".."}'))  # 'and' and more are left
    last = at(3, i="'oranges'", lis="[5, 6]")
    assert accepted(last, at(4, i="'oranges'", lis="[5, 6]"), line(6, '{"..": ".."}'))
    assert not accepted(last, at(4, i="'oranges'", lis="[5, 6]"), line(4, '{"..": "..", "i": "\'6\'"}'))


CONDITIONS = [
    ("i.isdigit()", {"i": "100"}),
    ("i.isdigit()", {"i": "apples"}),
    ("len(word) == 1 or len(word) % 2 == 0", {"word": "abc"}),
    ("left < right and s[right] not in vowels", {"left": 0, "right": 2, "s": "xyz", "vowels": "aeiou"}),
    ("left < right and s[right] not in vowels", {"left": 3, "right": 2, "s": "xy", "vowels": "aeiou"}),  # stops early
    ("num in seen", {"num": 4, "seen": {4: 0}}),
    ("not k.isupper()", {"k": "Ab"}),
    ("x is None or x > 2.5", {"x": None}),
    ("d.get(k, 0) >= 2", {"d": {"a": 3}, "k": "a"}),
    ("a < b < c", {"a": 1, "b": 3, "c": 2}),
    ("(n if n > 0 else -n) % 3 == 1", {"n": -4}),
    ("sum(xs) / len(xs) > 1.5", {"xs": [1, 2, 2]}),
    ("xs.count(1) and s.startswith('a')", {"xs": [1, 1], "s": "ba"}),
    ("divmod(n, 4)[1] == 3", {"n": 11}),
    ("sum(1 for x in title if x != 'e') * 2 > 3", {"title": "eye"}),
    ("len([num for num in xs if num % 2 != 0]) % 2 == 0", {"xs": [1, 3, 4]}),
    ("any(x == 'b' for x in xs) and all(ys)", {"xs": "abc", "ys": [1, 0]}),
    ("''.join(c.lower() for c in text if c in letters) == 'ab'", {"text": "A,b", "letters": "Ab"}),
]


@pytest.mark.parametrize(("source", "values"), CONDITIONS)
def test_a_test_is_true_where_python_says(source: str, values: dict[str, object]) -> None:
    expected = bool(eval(source, dict(values)))  # noqa: S307 - the test's own constant expressions
    assert truth(_expression(source), {name: repr(value) for name, value in values.items()}) is expected


@pytest.mark.parametrize(("source", "shown"), [
    ("d[k] > 1", {"d": "{'a': 1}", "k": "'b'"}),  # a KeyError: the program raises, the model says how
    ("int(s) > 1", {"s": "'x1'"}),
    ("x < y", {"x": "1", "y": "'a'"}),
    ("any([x > 1 for x in s])", {"s": "{1, 2}"}),  # a set, iterated in order
    ("n > 0", {"n": "<Counter object>"}),
    ("n > 0", {}),  # a global, or not bound yet
    ("x * 10 ** 13 > 1", {"x": "1"}),  # bigger than it computes
    ("[x for x in y]", {"y": "5"}),  # not iterable
    ("[a for a, b in xs]", {"xs": "[(1, 2, 3)]"}),  # unpacking raises
    ("sum(1 for _ in range(n) for _ in range(n))", {"n": "1000"}),  # too many steps to take here
])
def test_a_test_the_values_do_not_tell(source: str, shown: dict[str, str]) -> None:
    assert truth(_expression(source), shown) is None


def test_a_value_and_its_repr_cut_as_the_tracer_cuts_it() -> None:
    assert value_repr(_expression("n - sum(lis)"), {"n": "19", "lis": "[5, 6]"}, 200) == "8"
    assert value_repr(_expression("s[::-1] + s"), {"s": "'ab'"}, 200) == "'baab'"
    assert value_repr(_expression("divmod(a, 3)"), {"a": "-7"}, 200) == "(-3, 2)"
    assert value_repr(_expression("x * 2 + [0]"), {"x": "[1]"}, 200) == "[1, 1, 0]"
    assert value_repr(_expression("(n - len(s)) * 'z' + s"), {"n": "5", "s": "'abc'"}, 200) == "'zzabc'"
    assert value_repr(_expression("'ab' * n"), {"n": "-2"}, 200) == "''"
    assert value_repr(_expression("'ab' * n"), {"n": str(10**9)}, 200) is None  # too long
    assert value_repr(_expression("x * 1.5"), {"x": "[1]"}, 200) is None  # raises


@pytest.mark.parametrize(("source", "values"), [
    ("s.title() + s.capitalize() + s.swapcase() + s.casefold()", {"s": "hello wORLD"}),
    ("(s.istitle(), s.isascii(), s.isprintable(), s.rindex('l'))", {"s": "Hello\tWorld"}),
    ("s.partition(sep) + s.rpartition(sep)", {"s": "a/b/c", "sep": "/"}),
    ("[s.removeprefix('ab'), s.removesuffix('yz'), s.zfill(n), s.center(n, '*'), s.ljust(n), s.rjust(n)]",
     {"s": "abxyz", "n": 9}),
    ("s.expandtabs(n) + s.expandtabs()", {"s": "a\tbc\td", "n": 3}),
    ("(xs.copy(), d.copy(), d.copy() == d)", {"xs": [1, [2]], "d": {"a": 1}}),
    ("(dict.fromkeys(s, 0), list(dict.fromkeys(xs)), dict.fromkeys(s, xs))", {"s": "abca", "xs": [2, 1, 2]}),
    ("[isinstance(x, int), isinstance(x, (str, list)), [e for e in xs if isinstance(e, str)]]",
     {"x": True, "xs": ["a", 1, ("b",)]}),
    ("[type(x) == int, type(x) is bool, type(xs) != list, type(xs) is not tuple, len(xs) if type(xs) == list else 0]",
     {"x": True, "xs": ["a", 1]}),
    ("['{}-{!s:>7}|{:.2f}'.format(s, xs, f), '%s=%04d %r' % (s, n, xs), '%(k)s!' % d, 'n: %s' % xs]",
     {"s": "ab", "xs": [1, 2], "f": 2.0 / 3, "n": 7, "d": {"k": "v"}}),
])
def test_the_methods_of_session_34_give_what_python_gives(source: str, values: dict[str, object]) -> None:
    expected = eval(source, dict(values))  # noqa: S307 - the test's own constant expressions
    assert value_repr(_expression(source), {name: repr(v) for name, v in values.items()}, 500) == repr(expected)


@pytest.mark.parametrize(("source", "values"), [
    ("(x ** 2, x ** -1, 2 ** n, f ** 0.5, pow(x, n), pow(x, n, 7), (-x) ** 3)", {"x": 3, "n": 20, "f": 2.25}),
    ("(a & b, a | b, a ^ b, a << 3, a >> 1, ~a, +a, -(~b))", {"a": 12, "b": -10}),
    ("(float(s), float(n), float(), round(f), round(g), round(f, 1), round(n, -1))",
     {"s": "2.5e3", "n": 17, "f": 2.5, "g": -3.5}),
    ("(bin(n), hex(n), oct(n), bin(-n))", {"n": 202}),
    ("(dict(zip(ks, vs)), dict(d), dict(), dict(pairs), dict(['ab', 'cd']))",
     {"ks": "abc", "vs": [1, 2, 3], "d": {"x": 1}, "pairs": [("k", [1]), ("k", 2)]}),
    ("(list(map(int, s)), list(map(str.upper, ws)), list(map(len, ws)), ''.join(map(str, xs)))",
     {"s": "4071", "ws": ["ab", "C", ""], "xs": [1, 20]}),
    ("(list(map(lambda a, b: a - b, xs, ys)), sum(map(lambda x: x * x, xs)), list(filter(None, zs)))",
     {"xs": [5, 7, 9], "ys": [1, 2], "zs": [0, "", "a", [], [0], None, 3]}),
    ("(list(filter(lambda c: c not in v, s)), list(filter(str.isdigit, s)), list(filter(len, ws)))",
     {"s": "a1e2b", "v": "aeiou", "ws": ["", "x"]}),
    ("(sorted(ws, key=len), sorted(ws, key=len, reverse=True), sorted(ws, key=str.lower), sorted(xs, key=lambda x: -x))",
     {"ws": ["bb", "A", "c", "dd", "Bb"], "xs": [2, 3, 1]}),
    ("(max(ws, key=len), min(ws, key=len), max(d, key=d.get), min(d.items(), key=lambda kv: (kv[1], kv[0])))",
     {"ws": ["ab", "cd", "e", "fg"], "d": {"x": 1, "y": 3, "z": 3}}),
    ("sorted(d.items(), key=lambda kv: (-kv[1], kv[0]))", {"d": {"b": 1, "a": 1, "c": 2}}),
    ("(sorted(s, key=str.isupper), sorted(xs, key=lambda x: x % 2 == 0), max(ws, key=lambda w: w.startswith('b')),"
     " sorted(xs, key=lambda x: (x > 2, -x)), list(enumerate(s, start=1)), [i * c for i, c in enumerate(s, start=n)])",
     {"s": "aBcD", "xs": [4, 1, 3, 2], "ws": ["ab", "ba", "bc"], "n": -2}),
    ("(s.split(maxsplit=1), s.rsplit(sep=' ', maxsplit=1), t.splitlines(keepends=True), u.expandtabs(tabsize=2))",
     {"s": "a b  c", "t": "x\ny\n", "u": "a\tb"}),
    ("(s.translate(str.maketrans('ab', 'AB')), s.translate(str.maketrans('a', 'x', 'b')), s.translate({97: 'zz', 98: None}),"
     " s.translate(str.maketrans({'a': '1', 'c': None})))", {"s": "abcab"}),
])
def test_the_operators_and_builtins_of_session_37_give_what_python_gives(source: str, values: dict[str, object]) -> None:
    expected = eval(source, dict(values))  # noqa: S307 - the test's own constant expressions
    assert value_repr(_expression(source), {name: repr(v) for name, v in values.items()}, 500) == repr(expected)


@pytest.mark.parametrize(("source", "shown"), [
    ("2 ** n", {"n": "200"}),  # far beyond the numbers computed here: left to the model
    ("x ** 0.5", {"x": "-4.0"}),  # a complex number
    ("1 << n", {"n": "100"}),
    ("a | b", {"a": "True", "b": "False"}),  # bools: their `|` is the model's
    ("float(s)", {"s": "'inf'"}),
    ("map(int, s)", {"s": "'12'"}),  # an iterator: never written
    ("list(map(int, s))", {"s": "'1x'"}),  # raises in the program
    ("list(map(str.upper, xs))", {"xs": "[1]"}),
    ("sorted(xs, key=lambda x: x)", {"xs": "[1, 'a']"}),  # keys that do not compare
    ("min(xs, key=len)", {"xs": "[]"}),
    ("list(enumerate(xs, 1, start=2))", {"xs": "[1]"}),  # raises
    ("sorted(set(s), key=str.isupper)", {"s": "'abC'"}),  # equal keys among a set's values
    ("s.translate(t)", {"s": "'ab'", "t": "'xy'"}),  # a table that is not a dict
    ("s.translate({97: 'x' * 20000})", {"s": "'aaa'"}),  # too long
])
def test_what_the_values_of_session_37_do_not_tell(source: str, shown: dict[str, str]) -> None:
    assert expression_reads(_expression(source), set()) is not None
    assert value_repr(_expression(source), shown, 500) is None


SET_CASES = [
    ("(len(set(s)), sorted(set(s)), sorted(set(s), reverse=True), max(set(s)), min(frozenset(s)))", {"s": "banana"}),
    ("(c in seen, d in seen, c not in seen, len(seen), sorted(seen), bool(seen), seen == {d, c})",
     {"c": "b", "d": "z", "seen": {"a", "b"}}),
    ("(sorted(set(a) & set(b)), sorted(set(a) | set(b)), sorted(set(a) - set(b)), sorted(set(a) ^ set(b)))",
     {"a": "abcx", "b": "bcdy"}),
    ("(set(a).issubset(b), set(a).isdisjoint(b), sorted(set(a).union(b, 'q')), len(set(a).intersection(b)))",
     {"a": "ab", "b": "abc"}),
    ("(sum(set(xs)), any(set(xs)), all(set(xs)), sorted(set(ws), key=len), max(set(ws), key=len))",
     {"xs": [3, 0, 3, 5], "ws": ["ab", "c", "def", "c"]}),
    ("[w for w in ws if w not in set(stop)]", {"ws": ["a", "the", "b", "an"], "stop": ["the", "an"]}),
]


@pytest.mark.parametrize(("source", "values"), SET_CASES)
def test_a_set_is_taken_where_its_order_does_not_matter(source: str, values: dict[str, object]) -> None:
    expected = eval(source, dict(values))  # noqa: S307 - the test's own constant expressions
    shown = {name: repr(sorted(v)).replace("[", "{").replace("]", "}") if isinstance(v, set) else repr(v)
             for name, v in values.items()}
    assert value_repr(_expression(source), shown, 500) == repr(expected)


@pytest.mark.parametrize(("source", "shown"), [
    ("''.join(set(s))", {"s": "'ab'"}),  # in the order of this process's hashes
    ("list(set(s))", {"s": "'ab'"}),
    ("[c for c in set(s)]", {"s": "'ab'"}),
    ("tuple(seen)", {"seen": "{1, 2}"}),
    ("seen | {3}", {"seen": "{1, 2}"}),  # a set is never written
    ("f'{seen}'", {"seen": "{1, 2}"}),
    ("sum(set(xs))", {"xs": "[0.1, 0.2, 0.3]"}),  # a sum of floats depends on the order
    ("sorted(set(ws), key=len)", {"ws": "['ab', 'c', 'de']"}),  # equal keys: the order decides
    ("len(seen)", {"seen": "{1, 1}"}),  # not the repr of a set
    ("len(seen)", {"seen": "{1,2}"}),
    ("len(seen)", {"seen": "{[1]}"}),
])
def test_a_set_s_order_is_never_read(source: str, shown: dict[str, str]) -> None:
    assert value_repr(_expression(source), shown, 500) is None


@pytest.mark.parametrize(("source", "values"), [
    ("(str(x), str(f), str(g), str(none), str(b), str(xs), str(t), str(d), str(s))",
     {"x": -7, "f": 0.1, "g": -0.0, "none": None, "b": True, "xs": [1, "it's", (2.5, None), [[]]], "t": (1,),
      "d": {"k": [1, 2], 3: "v"}, "s": "a'b"}),
    ("'[' + str(xs) + ']' + str(len(xs))", {"xs": [0.5, "q"]}),
])
def test_str_of_a_builtin_value_is_what_python_gives(source: str, values: dict[str, object]) -> None:
    expected = eval(source, dict(values))  # noqa: S307 - the test's own constant expressions
    assert value_repr(_expression(source), {name: repr(v) for name, v in values.items()}, 500) == repr(expected)


@pytest.mark.parametrize(("source", "shown"), [
    ("str(seen)", {"seen": "{1, 2}"}),  # a set's text shows an order that need not be the program's
    ("str([seen])", {"seen": "{1, 2}"}),
    ("str(xs)", {"xs": "[1, {2, 3}]"}),
    ("str({frozenset(xs): 1})", {"xs": "[1, 2]"}),  # a set as a dict's key
    ("f'{ {frozenset(xs): 1} }'", {"xs": "[1, 2]"}),
    ("str(map(int, s))", {"s": "'12'"}),  # an iterator built here: its repr is not the program's
    ("str(reversed(xs))", {"xs": "[1]"}),
])
def test_str_of_a_set_or_an_iterator_is_left_to_the_model(source: str, shown: dict[str, str]) -> None:
    assert value_repr(_expression(source), shown, 500) is None


def test_what_it_computes_of_sets_is_the_same_whatever_the_hash_seed() -> None:
    """String hashes, and so a set's order, differ from one process to the next: the values it computes
    do not (four processes with different PYTHONHASHSEED)."""
    script = (
        "import ast, json, sys\n"
        "from model_backend.grammar.bindings import value_repr\n"
        "from tests.model_backend.engine.test_deduce import SET_CASES\n"
        "shown = lambda values: {k: repr(sorted(v)).replace('[', '{').replace(']', '}') if isinstance(v, set) else repr(v)"
        " for k, v in values.items()}\n"
        "print(json.dumps([value_repr(ast.parse(s, mode='eval').body, shown(v), 500) for s, v in SET_CASES]))\n"
    )
    outputs = set()
    for seed in ("0", "1", "2", "12345"):
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=120,
                             env={**os.environ, "PYTHONHASHSEED": seed})
        outputs.add(run.stdout)
    (only,) = outputs
    assert None not in json.loads(only)


def test_a_lambda_called_for_each_element_counts_against_the_one_bound() -> None:
    """Each call of a lambda passed to map, filter or `key=` is a step of MAX_ELEMENTS, as a
    comprehension's element is: nested ones do not multiply their bounds."""
    shown = {"xs": repr(list(range(200)))}
    assert value_repr(_expression("len(list(map(lambda a: sum(map(lambda b: 1, xs)), xs)))"), shown, 100) is None
    assert value_repr(_expression("len(list(map(lambda a: a, xs)))"), shown, 100) == "200"


def test_reversed_enumerate_and_zip_give_iterators() -> None:
    """Their values are iterators: a loop or a call that iterates takes the elements, nothing else does,
    and no value holding one is written (the tracer shows `<list_reverseiterator object>`)."""
    shown = {"xs": "[1, 2]"}
    for source in ("reversed(xs)", "enumerate(xs)", "zip(xs, xs)", "[reversed(xs)]", "len(reversed(xs))",
                   "reversed(xs)[0]", "reversed(enumerate(xs))", "f'{zip(xs)}'"):
        assert value_repr(_expression(source), shown, 200) is None, source
    assert iterable_elements(_expression("reversed(xs)"), shown, 200) == [2, 1]
    assert value_repr(_expression("(list(reversed(xs)), sorted(zip(xs, 'ab')), reversed(xs) == [2, 1])"), shown,
                      200) == "([2, 1], [(1, 'a'), (2, 'b')], False)"  # an iterator equals no list, as in Python


def test_a_width_that_would_build_a_huge_text_is_left_to_the_model() -> None:
    for source in ("s.zfill(n)", "s.center(n)", "s.ljust(n, '-')", "s.rjust(n)", "s.expandtabs(n)",
                   "s.replace('a', s * 100)", "'{:1000000000}'.format(s)", "'%1000000000s' % s",
                   "'{}'.format(reversed(s))", "'%s' % (zip(s, s),)", "'%*s' % (n, s)", "'{:{}}'.format(s, n)",
                   "'{:{w}}'.format(s, w=n)", "'{:{0[0]}}'.format([n])"):
        assert value_repr(_expression(source), {"s": repr("a\t" * 60), "n": str(10**9)}, 200) is None, source
    assert value_repr(_expression("s.zfill(n)"), {"s": "'7'", "n": "'3'"}, 200) is None  # raises
    assert value_repr(_expression("s + s"), {"s": repr("a" * 150)}, 200) == repr("a" * 300)[:200] + "..."
    assert value_repr(_expression("x / 3"), {"x": "1"}, 200) == repr(1 / 3)


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
    ("SETS", {"truths": 16, "computed": 10}),  # a set's members, length, sorted elements: never its order
    ("OPERATORS_AND_BUILTINS", {"computed": 36}),  # operators, numeric and text builtins, functions passed
    ("TEXTS", {"computed": 28}),  # str methods, and `*` of a string
    ("SPLITS", {"loops": 40, "comprehensions": 6}),  # over split, sorted(...items()), reversed(...), a slice
    ("COMPUTED", {"truths": 40, "computed": 20}),  # `while left < right and ...`, `left += 1`, `return n - ...`
])
def test_a_program_traced_here_keeps_to_what_its_values_give(program: str, least: dict[str, int]) -> None:
    """Every true step_into and step_over of the traced program is accepted, and the rules govern at
    least so many of its steps."""
    counts = _rules_on_a_program_traced_here(globals()[program], "main()")
    assert all(counts[rule] >= n for rule, n in least.items()), counts


def test_the_grammar_takes_the_branch_and_the_value_the_shown_values_give() -> None:
    facts = ProgramFacts.of(Program(source=COMPUTED, entry="main()"))
    shown = {"s": "'5 apples'", "n": "19", "lis": "[]"}

    def step(line: int, **changes: str) -> FrameConstraint:
        return FrameConstraint(facts, _at("fruit_distribution", line, shown | changes), False, "step_over", ())

    def line(number: int, locals_text: str) -> str:
        return _line_frame(facts, number, locals_text)

    def returned(number: int, value: str) -> str:
        return (f"{fmt.EVENT_TOKENS[(False, 'return')]}{fmt.LINENO}{number}{fmt.SRC}{facts.lines[number]}"
                f"{fmt.ARG}{fmt._json(value)}{fmt.ARG}{{\"..\": \"..\"}}{fmt.END_OF_FRAME}")

    assert _frame_accepted(step(18, i="'5'"), line(19, '{"..": ".."}'))
    assert not _frame_accepted(step(18, i="'5'"), line(17, '{"..": ".."}'))
    assert _frame_accepted(step(18, i="'apples'"), line(17, '{"..": ".."}'))
    assert not _frame_accepted(step(18, i="'apples'"), line(19, '{"..": ".."}'))
    assert _frame_accepted(step(20, lis="[5, 6]"), returned(20, "8"))
    assert not _frame_accepted(step(20, lis="[5, 6]"), returned(20, "10"))
    assert _frame_accepted(step(20, lis="[5, 6...", n="19"), returned(20, "10"))  # a cut list: free


def test_the_grammar_binds_the_value_an_expression_gives() -> None:
    facts = ProgramFacts.of(Program(source=COMPUTED, entry="main()"))
    shown = {"text": "'hello'", "vowels": "'aeiou'", "chars": "['h', 'e', 'l', 'l', 'o']", "left": "0", "right": "4"}

    def accepted(line: int, to: int, locals_text: str) -> bool:
        constraint = FrameConstraint(facts, _at("reverse_vowel", line, shown), False, "step_over", ())
        return _frame_accepted(constraint, _line_frame(facts, to, locals_text))

    assert accepted(6, 5, '{"..": "..", "left": "1"}')
    assert not accepted(6, 5, '{"..": "..", "left": "2"}')
    assert not accepted(6, 5, '{"..": ".."}')  # it changed: a diff must name it
    assert accepted(11, 4, '{"..": "..", "left": "1", "right": "3"}')
    assert not accepted(11, 4, '{"..": "..", "left": "1", "right": "4"}')


@pytest.mark.parametrize(("statement", "values"), [
    ("lis.append(int(i))", {"lis": [5], "i": "6"}),
    ("elements.insert(0, len(elements))", {"elements": [1, 0]}),
    ("seq.sort(reverse=True)", {"seq": [3, 1, 2]}),
    ("seen[target - num] = index", {"seen": {0: 0}, "target": 7, "num": 4, "index": 1}),
    ("scores[char] = scores.get(char, 0) + 1", {"scores": {"w": 1}, "char": "w"}),
    ("num_arr[idx[0]] = (num_arr[idx[0]] + 1) % 10", {"num_arr": [1, 9], "idx": (1, 9)}),
    ("grid[i] += [n]", {"grid": [[1], [2]], "i": 1, "n": 3}),
    ("del lookup['1F']", {"lookup": {"1F": 2, "o": 0}}),
    ("xs[1:3] = xs", {"xs": [1, 2, 3, 4]}),
    ("xs.append(xs)", {"xs": [1]}),  # it holds itself: `[1, [...]]`, as Python writes it
    ("last = stack.pop()", {"stack": [1, 2]}),
    ("d.update(b=2)", {"d": {"a": 1}}),
    ("old = d.setdefault('k', [])", {"d": {}}),
])
def test_a_container_changes_as_python_changes_it(statement: str, values: dict[str, object]) -> None:
    from model_backend.grammar.containers import mutation_reprs, mutations

    program = f"def f({', '.join(values)}):\n    {statement}\n"
    (container, node, result), = mutations(ast.parse(program)).values()
    shown = {name: repr(v) for name, v in values.items()}
    namespace = copy.deepcopy(values)
    exec(statement, {}, namespace)  # noqa: S102 - the test's own constant statements, to compare with
    expected = (repr(namespace[container]), repr(namespace[result]) if result else None)
    assert mutation_reprs(node, container, shown, 200) == expected


@pytest.mark.parametrize(("statement", "shown"), [
    ("xs.append(1)", {"xs": "[1, 2..."}),  # cut
    ("xs.remove(5)", {"xs": "[1]"}),  # raises
    ("xs.sort()", {"xs": "[1, 'a']"}),  # raises
    ("xs.append(ys)", {"xs": "[1]", "ys": "[[1]]"}),  # ys may hold xs itself
    ("xs.append(ys)", {"xs": "[1]", "ys": "[1]"}),  # ys may be xs
    ("s.add(1)", {"s": "{2}"}),  # a set
    ("d[k] += 1", {"d": "{}", "k": "'a'"}),  # a KeyError
    ("xs[5] = 0", {"xs": "[1]"}),  # an IndexError
])
def test_a_change_the_values_do_not_tell(statement: str, shown: dict[str, str]) -> None:
    from model_backend.grammar.containers import mutation_reprs, mutations

    found = mutations(ast.parse(f"def f({', '.join(shown)}):\n    {statement}\n"))
    assert all(mutation_reprs(node, container, shown, 200) is None for container, node, _ in found.values())


def test_the_statements_that_change_one_container() -> None:
    from model_backend.grammar.containers import mutations

    source = ("def f(xs, d, g):\n    xs.append(len(d))\n    xs.append(g(1))\n    d[xs[0]] = xs\n    y = xs.pop()\n"
              "    xs.count(1)\n    xs.sort(key=len)\n    d.k = 1\n")
    assert {line: (c, r) for line, (c, _, r) in mutations(ast.parse(source)).items()} == {
        2: ("xs", None), 4: ("d", None), 5: ("xs", "y")}  # not 3 (the program's g), 6 (count only reads),
    # 7 (a key function), 8 (an attribute)
    assert mutations(ast.parse("class A:\n    def __repr__(self):\n        return '[]'\n" + source)) == {}


def test_the_grammar_writes_the_container_a_statement_leaves() -> None:
    facts = ProgramFacts.of(Program(source=COMPUTED, entry="main()"))
    shown = {"s": "'5 apples'", "n": "19", "lis": "[5]", "i": "'6'"}
    constraint = FrameConstraint(facts, _at("fruit_distribution", 19, shown), False, "step_over", ())
    assert _frame_accepted(constraint, _line_frame(facts, 17, '{"..": "..", "lis": "[5, 6]"}'))
    constraint = FrameConstraint(facts, _at("fruit_distribution", 19, shown), False, "step_over", ())
    assert not _frame_accepted(constraint, _line_frame(facts, 17, '{"..": "..", "lis": "[5, 1]"}'))


def test_nested_comprehensions_share_one_bound() -> None:
    """A bound for each comprehension alone would allow 10,000 x 10,000 steps; the whole evaluation has
    10,000, and gives up past them."""
    nested = _expression("sum(sum(1 for y in range(n)) for x in range(n))")
    assert value_repr(nested, {"n": "200"}, 200) is None  # 40,200 steps
    assert value_repr(nested, {"n": "50"}, 200) == "2500"


PRINTS = [
    ("print('letters:', total)", {"total": 17}),
    ("print(xs, d, sep=' | ', end='')", {"xs": [1, 'a', None], "d": {"k": (1, 2.5)}}),
    ("print()", {}),
    ("print(x / 3, flush=True)", {"x": 10}),
    ("print(f'{name}: {score:>6.2f} {flag!r} {items}', end='!\\n')", {"name": "ab", "score": 3.14159, "flag": True,
                                                                   "items": ["x"]}),
    ("print(f'{n:05d}|{s!r:>8}|{s:^7}|{n:x}')", {"n": 42, "s": "hi"}),
    ("print(*[], sep=None, end=None)" if False else "print(' '.join(w.upper() for w in words), len(words))",
     {"words": ["a", "bc"]}),
]


@pytest.mark.parametrize(("source", "values"), PRINTS)
def test_what_print_writes_is_what_python_writes(source: str, values: dict[str, object]) -> None:
    """Checked against Python itself printing the same constant values."""
    import contextlib
    import io

    call = _expression(source)
    assert isinstance(call, ast.Call) and print_reads(call, set()) is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        eval(source, {}, copy.deepcopy(values))  # the test's own constants: no program runs
    assert printed_text(call, {k: repr(v) for k, v in values.items()}) == out.getvalue()


@pytest.mark.parametrize("source", [
    "print(x, file=log)", "print(*xs)", "print(f(x))", "print(x, sep=s)", "print(f'{x:{width}}')", "print(x.attr)",
])
def test_prints_left_to_the_model(source: str) -> None:
    call = _expression(source)
    assert isinstance(call, ast.Call) and print_reads(call, set()) is None


def test_a_print_the_values_do_not_tell() -> None:
    call = _expression("print(x, f'{y:>20000}')")
    assert isinstance(call, ast.Call)
    assert printed_text(call, {"x": "[1, 2..."}) is None  # cut
    assert printed_text(call, {"x": "1", "y": "2"}) is None  # a width past the bound is not built
    assert printed_text(_expression("print(s)"), {"s": "{1, 2}"}) is None  # type: ignore[arg-type]  # a set
    assert print_reads(_expression("print(x)"), {"print"}) is None  # type: ignore[arg-type]  # rebound


PRINTING = """def report(words):
    total = 0
    for word in words:
        total += len(word)
        print(f'{word!r:>10} {len(word):3d}', total)
    mean = total / len(words)
    print('mean:', mean, sep='\t')
    if mean > 3:
        print('long words', end='')
    return total


def main():
    return report(['neural', 'debugger', 'dap'])
"""


def test_a_program_traced_here_prints_what_its_values_give() -> None:
    """Every true step of the traced program is accepted with the printed text and the silent steps forced."""
    counts = _rules_on_a_program_traced_here(PRINTING, "main()")
    assert counts["printed"] >= 8 and counts["silent"] >= 10, counts


def test_the_grammar_writes_what_a_print_line_prints() -> None:
    facts = ProgramFacts.of(Program(source=PRINTING, entry="main()"))
    assert sorted(facts.printed) == [5, 7, 9]
    shown = {"words": "['ab']", "total": "2", "word": "'ab'", "mean": "2.0"}

    def accepted(line: int, to: int, stdout: str | None, changed: str = "") -> bool:
        constraint = FrameConstraint(facts, _at("report", line, shown), False, "step_over", ())
        frame = _line_frame(facts, to, '{"..": ".."' + changed + "}")
        if stdout is not None:
            frame = frame.replace(fmt.END_OF_FRAME, f"{fmt.STDOUT}{fmt._json(stdout)}{fmt.END_OF_FRAME}")
        return _frame_accepted(constraint, frame)

    assert accepted(5, 3, "      'ab'   2 2\n")
    assert not accepted(5, 3, "      'ab'   2 3\n")
    assert not accepted(5, 3, None)  # it prints: the text is required
    assert accepted(7, 8, "mean:\t2.0\n")
    assert accepted(4, 5, None, ', "total": "4"')  # `total += len(word)` runs no code: nothing printed
    assert not accepted(4, 5, "x", ', "total": "4"')
    assert not ProgramFacts.of(Program(source="import sys\n" + PRINTING.replace("return total", "sys.stdout = None"),
                                       entry="main()")).printed  # a program that can redirect its output


CALLS = """\
import math


def collect(xs, n):
    out = []
    counts = {}
    for x in xs:
        out.append(x * n)
        counts[x] = counts.get(x, 0) + 1
        counts[x] += 1
    n //= 2
    return out + [math.floor(n)]


def grow(xs):
    xs.append(1)
    return len(xs)


def alias(xs):
    ys = xs
    ys.append(2)


def fact(n):
    return 1 if n < 2 else n * fact(n - 1)


def main():
    xs = [3, 1]
    total = 0
    total += fact(4) * 2
    best = max(total, fact(3))
    size = len(xs) + grow(xs)
    parts = collect(xs, 2)
    print(f'{best}:{size}', parts)
    return {"total": total + fact(2), "xs": xs}
"""


def test_the_functions_that_change_no_object_of_their_callers() -> None:
    from model_backend.grammar.calls import pure_functions

    tree = ast.parse(CALLS)
    assert pure_functions(tree) == {"collect", "fact"}  # main calls grow
    assert "grow" not in pure_functions(tree) and "alias" not in pure_functions(tree)  # through a parameter, an alias
    assert not pure_functions(ast.parse("class A:\n    pass\n" + CALLS))  # an object's methods may be the program's
    assert "fact" not in pure_functions(ast.parse(CALLS.replace("1 if n < 2", "grow([]) if n < 2")))  # calls a grow
    passed = ("def adds(xs, ys):\n    list(map(xs.append, ys))\n\n\n"
              "def keyed(ws, d):\n    return sorted(ws, key=str.lower) + sorted(d, key=d.get)\n")
    assert pure_functions(ast.parse(passed)) == {"keyed"}  # a mutating method passed on, to be called by map


def test_the_lines_whose_value_follows_from_their_one_call() -> None:
    from model_backend.grammar.calls import call_expressions

    found = {line: (names, function, ast.unparse(e)) for line, (names, function, e) in call_expressions(ast.parse(CALLS)).items()}
    assert found[26] == (None, "fact", "1 if n < 2 else n * <returned>")
    assert found[32] == (("total",), "fact", "total + <returned> * 2")
    assert found[33] == (("best",), "fact", "max(total, <returned>)")
    assert found[35] == (("parts",), "collect", "<returned>")
    assert found[37] == (None, "fact", "{'total': total + <returned>, 'xs': xs}")
    assert found[34] == (("size",), "grow", "len(xs) + <returned>")  # the rule checks what grow may change


def test_a_program_traced_here_binds_and_returns_what_its_calls_give() -> None:
    """Every true step is accepted with the values after calls forced, and the rule governs steps back from
    fact (recursive), collect and grow."""
    counts = _rules_on_a_program_traced_here(CALLS, "main()")
    assert counts["after_call"] >= 6, counts


def test_the_grammar_writes_the_value_a_line_gets_from_its_call() -> None:
    facts = ProgramFacts.of(Program(source=CALLS, entry="main()"))
    caller = State(event="line", line=34, stack=[StackFrame(function="main", line=34)],
                   locals={"xs": "[3, 1]", "total": "48", "best": "48"})
    inside = State(event="line", line=17, stack=[StackFrame(function="main", line=34), StackFrame(function="grow", line=17)],
                   locals={"xs": "[3, 1, 1]"})
    returning = inside.model_copy(update={"event": "return", "value": "3"})
    trail = ((caller, "step_into"), (inside, "step_into"))

    def accepted(locals_text: str) -> bool:
        constraint = FrameConstraint(facts, returning, False, "step_into", trail)
        frame = (f"{fmt.EVENT_TOKENS[(False, 'line')]}{fmt.LINENO}35{fmt.STACK}{fmt._json([['main', 35]])}"
                 f"{fmt.ARG}{locals_text}{fmt.SRC}{facts.lines[35]}{fmt.END_OF_FRAME}")
        return _frame_accepted(constraint, frame)

    # grow changed xs, so len(xs) is not read from the caller's [3, 1]: size stays the model's to write
    assert accepted('{"xs": "[3, 1, 1]", "total": "48", "best": "48", "size": "6"}')
    assert accepted('{"xs": "[3, 1, 1]", "total": "48", "best": "48", "size": "5"}')
    assert not accepted('{"xs": "[3, 1, 1]", "total": "47", "best": "48", "size": "6"}')  # an int grow cannot change
    fact_caller = caller.model_copy(update={"line": 32, "locals": {"xs": "[3, 1]", "total": "0"},
                                            "stack": [StackFrame(function="main", line=32)]})
    fact_frame = State(event="return", line=26, value="24", locals={"n": "4"},
                       stack=[StackFrame(function="main", line=32), StackFrame(function="fact", line=26)])

    def after_fact(locals_text: str) -> bool:
        constraint = FrameConstraint(facts, fact_frame, False, "step_over", ((fact_caller, "step_into"),))
        frame = (f"{fmt.EVENT_TOKENS[(False, 'line')]}{fmt.LINENO}33{fmt.STACK}{fmt._json([['main', 33]])}"
                 f"{fmt.ARG}{locals_text}{fmt.SRC}{facts.lines[33]}{fmt.END_OF_FRAME}")
        return _frame_accepted(constraint, frame)

    assert after_fact('{"xs": "[3, 1]", "total": "48"}')
    assert not after_fact('{"xs": "[3, 1]", "total": "24"}')
    assert not after_fact('{"xs": "[3]", "total": "48"}')  # fact is pure: xs stays as it was
