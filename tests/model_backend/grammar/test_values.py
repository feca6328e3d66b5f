"""Expressions computed on shown values (model_backend/grammar/values.py, evaluation.py): the same
values Python gives, nothing where the values do not tell."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from model_backend.grammar.bindings import value_repr
from model_backend.grammar.loops import iterable_elements
from model_backend.grammar.values import expression_reads
from tests.model_backend.grammar.support import parsed_expression


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
    assert expression_reads(parsed_expression(source), set()) == reads


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
    assert expression_reads(parsed_expression(source), set()) is None


def test_a_builtin_the_program_rebinds_is_not_the_builtin() -> None:
    assert expression_reads(parsed_expression("sorted(xs)"), {"sorted"}) is None
    assert expression_reads(parsed_expression("sorted(xs, key=len)"), {"len"}) is None  # passed, not called
    assert expression_reads(parsed_expression("list(map(str.upper, xs))"), {"str"}) is None
    assert expression_reads(parsed_expression("s.translate(str.maketrans('a', 'b'))"), {"str"}) is None


def test_a_lambda_s_parameters_are_its_own() -> None:
    """What a lambda passed to map, filter or `key=` reads from outside is what it reads, less its
    parameters; a bound method passed (`key=counts.get`) reads its object."""
    assert expression_reads(parsed_expression("sorted(xs, key=lambda x: (x[k], -x[0]))"), set()) == {"xs", "k"}
    assert expression_reads(parsed_expression("list(map(lambda a, b: a * b, xs, ys))"), set()) == {"xs", "ys"}
    assert expression_reads(parsed_expression("max(counts, key=counts.get)"), set()) == {"counts"}
    assert expression_reads(parsed_expression("list(filter(None, xs))"), set()) == {"xs"}
    assert expression_reads(parsed_expression("sorted(xs)"), {"xs"}) == {"xs"}
    assert expression_reads(parsed_expression("dict.fromkeys(xs)"), {"dict"}) is None
    assert expression_reads(parsed_expression("dict.fromkeys(xs)"), set()) == {"xs"}  # `dict` is not a variable read
    assert expression_reads(parsed_expression("isinstance(x, int)"), {"int"}) is None
    assert expression_reads(parsed_expression("isinstance(x, t)"), set()) is None  # only builtin types, by name
    assert expression_reads(parsed_expression("isinstance(x, (int, str))"), set()) == {"x"}
    assert expression_reads(parsed_expression("type(x) == list"), {"list"}) is None
    assert expression_reads(parsed_expression("type(x) < list"), set()) is None


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
    assert iterable_elements(parsed_expression(source), shown, 200) == expected


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
    assert iterable_elements(parsed_expression(source), shown, 200) is None


def test_a_value_and_its_repr_cut_as_the_tracer_cuts_it() -> None:
    assert value_repr(parsed_expression("n - sum(lis)"), {"n": "19", "lis": "[5, 6]"}, 200) == "8"
    assert value_repr(parsed_expression("s[::-1] + s"), {"s": "'ab'"}, 200) == "'baab'"
    assert value_repr(parsed_expression("divmod(a, 3)"), {"a": "-7"}, 200) == "(-3, 2)"
    assert value_repr(parsed_expression("x * 2 + [0]"), {"x": "[1]"}, 200) == "[1, 1, 0]"
    assert value_repr(parsed_expression("(n - len(s)) * 'z' + s"), {"n": "5", "s": "'abc'"}, 200) == "'zzabc'"
    assert value_repr(parsed_expression("'ab' * n"), {"n": "-2"}, 200) == "''"
    assert value_repr(parsed_expression("'ab' * n"), {"n": str(10**9)}, 200) is None  # too long
    assert value_repr(parsed_expression("x * 1.5"), {"x": "[1]"}, 200) is None  # raises


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
def test_the_string_and_container_methods_give_what_python_gives(source: str, values: dict[str, object]) -> None:
    expected = eval(source, dict(values))  # noqa: S307 - the test's own constant expressions
    assert value_repr(parsed_expression(source), {name: repr(v) for name, v in values.items()}, 500) == repr(expected)


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
def test_the_operators_and_builtins_give_what_python_gives(source: str, values: dict[str, object]) -> None:
    expected = eval(source, dict(values))  # noqa: S307 - the test's own constant expressions
    assert value_repr(parsed_expression(source), {name: repr(v) for name, v in values.items()}, 500) == repr(expected)


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
def test_what_operators_and_builtins_leave_to_the_model(source: str, shown: dict[str, str]) -> None:
    assert expression_reads(parsed_expression(source), set()) is not None
    assert value_repr(parsed_expression(source), shown, 500) is None


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
    assert value_repr(parsed_expression(source), shown, 500) == repr(expected)


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
    assert value_repr(parsed_expression(source), shown, 500) is None


@pytest.mark.parametrize(("source", "values"), [
    ("(str(x), str(f), str(g), str(none), str(b), str(xs), str(t), str(d), str(s))",
     {"x": -7, "f": 0.1, "g": -0.0, "none": None, "b": True, "xs": [1, "it's", (2.5, None), [[]]], "t": (1,),
      "d": {"k": [1, 2], 3: "v"}, "s": "a'b"}),
    ("'[' + str(xs) + ']' + str(len(xs))", {"xs": [0.5, "q"]}),
])
def test_str_of_a_builtin_value_is_what_python_gives(source: str, values: dict[str, object]) -> None:
    expected = eval(source, dict(values))  # noqa: S307 - the test's own constant expressions
    assert value_repr(parsed_expression(source), {name: repr(v) for name, v in values.items()}, 500) == repr(expected)


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
    assert value_repr(parsed_expression(source), shown, 500) is None


def test_what_it_computes_of_sets_is_the_same_whatever_the_hash_seed() -> None:
    """String hashes, and so a set's order, differ from one process to the next: the values it computes
    do not (four processes with different PYTHONHASHSEED)."""
    script = (
        "import ast, json, sys\n"
        "from model_backend.grammar.bindings import value_repr\n"
        "from tests.model_backend.grammar.test_values import SET_CASES\n"
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
    assert value_repr(parsed_expression("len(list(map(lambda a: sum(map(lambda b: 1, xs)), xs)))"), shown, 100) is None
    assert value_repr(parsed_expression("len(list(map(lambda a: a, xs)))"), shown, 100) == "200"


def test_reversed_enumerate_and_zip_give_iterators() -> None:
    """Their values are iterators: a loop or a call that iterates takes the elements, nothing else does,
    and no value holding one is written (the tracer shows `<list_reverseiterator object>`)."""
    shown = {"xs": "[1, 2]"}
    for source in ("reversed(xs)", "enumerate(xs)", "zip(xs, xs)", "[reversed(xs)]", "len(reversed(xs))",
                   "reversed(xs)[0]", "reversed(enumerate(xs))", "f'{zip(xs)}'"):
        assert value_repr(parsed_expression(source), shown, 200) is None, source
    assert iterable_elements(parsed_expression("reversed(xs)"), shown, 200) == [2, 1]
    assert value_repr(parsed_expression("(list(reversed(xs)), sorted(zip(xs, 'ab')), reversed(xs) == [2, 1])"), shown,
                      200) == "([2, 1], [(1, 'a'), (2, 'b')], False)"  # an iterator equals no list, as in Python


def test_a_width_that_would_build_a_huge_text_is_left_to_the_model() -> None:
    for source in ("s.zfill(n)", "s.center(n)", "s.ljust(n, '-')", "s.rjust(n)", "s.expandtabs(n)",
                   "s.replace('a', s * 100)", "'{:1000000000}'.format(s)", "'%1000000000s' % s",
                   "'{}'.format(reversed(s))", "'%s' % (zip(s, s),)", "'%*s' % (n, s)", "'{:{}}'.format(s, n)",
                   "'{:{w}}'.format(s, w=n)", "'{:{0[0]}}'.format([n])"):
        assert value_repr(parsed_expression(source), {"s": repr("a\t" * 60), "n": str(10**9)}, 200) is None, source
    assert value_repr(parsed_expression("s.zfill(n)"), {"s": "'7'", "n": "'3'"}, 200) is None  # raises
    assert value_repr(parsed_expression("s + s"), {"s": repr("a" * 150)}, 200) == repr("a" * 300)[:200] + "..."
    assert value_repr(parsed_expression("x / 3"), {"x": "1"}, 200) == repr(1 / 3)
