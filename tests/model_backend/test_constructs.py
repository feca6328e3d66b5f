"""model_backend.constructs: each construct found in a small source that shows it, not in one without it."""

from __future__ import annotations

import textwrap

import pytest

from model_backend.constructs import CONSTRUCTS, KINDS, constructs, entry_call, kinds

CALL_CHAIN = """
# entry: ENTRY
def a(x):
    return b(x)
def b(x):
    return c(x)
def c(x):
    return d(x)
def d(x):
    return x
"""


def close(source: str, old: str, new: str) -> tuple[str, str]:
    """A case whose source without the construct is `source` with its one `old` replaced by `new`."""
    assert source.count(old) == 1, old
    return source, source.replace(old, new)


# construct -> (a source that uses it, a close source that does not)
CASES: dict[str, tuple[str, str]] = {
    "class_with_repr": (
        """
        class P:
            def __init__(self, x):
                self.x = x
            def __repr__(self):
                return "P(" + str(self.x) + ")"
        """,
        """
        class P:
            def __init__(self, x):
                self.x = x
            def show(self):
                return "P(" + str(self.x) + ")"
        """,
    ),
    "class_without_repr": (
        """
        class Base:
            def __repr__(self):
                return "B"
        class Child(Base):
            pass
        class Plain:
            pass
        """,
        """
        from dataclasses import dataclass
        class Base:
            def __repr__(self):
                return "B"
        class Child(Base):
            pass
        class Oops(ValueError):
            pass
        @dataclass
        class Point:
            x: int
        """,
    ),
    "dataclass": (
        """
        import dataclasses
        @dataclasses.dataclass(frozen=True)
        class Point:
            x: int
        """,
        """
        class Point:
            x: int
        """,
    ),
    "namedtuple": (
        """
        from collections import namedtuple
        Point = namedtuple("Point", "x y")
        """,
        """
        from collections import deque
        Point = tuple
        """,
    ),
    "inheritance_super": close(
        """
        class A:
            def __init__(self):
                self.a = 1
        class B(A):
            def __init__(self):
                super().__init__()
        """,
        "super().__init__()", "A.__init__(self)",
    ),
    "property_setter": (
        """
        class T:
            @property
            def v(self):
                return self._v
            @v.setter
            def v(self, value):
                self._v = value
        """,
        """
        class T:
            @property
            def v(self):
                return self._v
        """,
    ),
    "closure": (
        """
        def counter(start):
            def bump(step):
                return start + step
            return bump
        """,
        """
        def counter(start):
            def bump(start, step):
                return start + step
            return bump
        """,
    ),
    "decorator": (
        """
        def logged(fn):
            return fn
        @logged
        def f():
            return 1
        """,
        """
        class T:
            @staticmethod
            def f():
                return 1
        """,
    ),
    "nonlocal": (
        """
        def outer():
            n = 0
            def inc():
                nonlocal n
                n += 1
            inc()
            return n
        """,
        """
        n = 0
        def inc():
            global n
            n += 1
        """,
    ),
    "generator": (
        """
        def evens(n):
            for i in range(n):
                if i % 2 == 0:
                    yield i
        """,
        """
        def evens(n):
            return [i for i in range(n) if i % 2 == 0]
        """,
    ),
    "generator_pipeline": close(
        """
        def numbers(n):
            yield from range(n)
        def squares(items):
            for x in items:
                yield x * x
        def run(n):
            stream = numbers(n)
            return list(squares(stream))
        """,
        "stream = numbers(n)", "stream = list(range(n))",
    ),
    "custom_exception_caught": (
        """
        class AppError(Exception):
            pass
        class Missing(AppError):
            pass
        def get(d, k):
            if k not in d:
                raise Missing(k)
            return d[k]
        def safe(d, k):
            try:
                return get(d, k)
            except AppError:
                return None
        """,
        """
        class Missing(KeyError):
            pass
        def get(d, k):
            try:
                return d[k]
            except KeyError:
                return None
        """,
    ),
    "custom_exception_uncaught": (
        """
        class Missing(Exception):
            pass
        def find(pairs, k):
            for key, value in pairs:
                if key == k:
                    return value
            raise Missing(k)
        """,
        """
        class Missing(Exception):
            pass
        def find(pairs, k):
            try:
                for key, value in pairs:
                    if key == k:
                        return value
                raise Missing(k)
            except Missing:
                return None
            raise ValueError(k)
        """,
    ),
    "try_except_finally": (
        """
        def f(x):
            try:
                return 1 / x
            except ZeroDivisionError:
                return 0
            finally:
                print("done")
        """,
        """
        def f(x):
            try:
                return 1 / x
            finally:
                print("done")
        """,
    ),
    "recursion": (
        """
        def even(n):
            return n == 0 or odd(n - 1)
        def odd(n):
            return n != 0 and even(n - 1)
        """,
        """
        class Bag:
            def __init__(self):
                self.items = set()
            def add(self, x):
                self.items.add(x)
        """,
    ),
    "collections_counter": (
        """
        import collections
        def f(s):
            return collections.Counter(s)
        """,
        """
        import collections
        def f(s):
            return collections.deque(s)
        """,
    ),
    "collections_deque": (
        """
        from collections import deque as Q
        def f(s):
            return Q(s)
        """,
        """
        from collections import Counter
        def f(s):
            return Counter(s)
        """,
    ),
    "collections_defaultdict": (
        """
        from collections import defaultdict
        groups = defaultdict(list)
        """,
        """
        groups = {}
        """,
    ),
    "collections_ordereddict": (
        """
        from collections import OrderedDict
        cache = OrderedDict()
        """,
        """
        cache = dict()
        """,
    ),
    "itertools": (
        """
        from itertools import accumulate
        totals = list(accumulate([1, 2, 3]))
        """,
        """
        totals = [1, 3, 6]
        """,
    ),
    "re": (
        """
        import re
        words = re.findall(r"\\w+", "a b")
        """,
        """
        words = "a b".split()
        """,
    ),
    "json": (
        """
        import json
        data = json.loads("[1]")
        """,
        """
        data = [1]
        """,
    ),
    "math": (
        """
        from math import sqrt
        r = sqrt(2)
        """,
        """
        r = 2 ** 0.5
        """,
    ),
    "fstring": (
        """
        name = "x"
        s = f"hello {name}"
        """,
        """
        name = "x"
        s = f"hello" + name
        """,
    ),
    "while_break_continue_else": (
        """
        def f(xs):
            i = 0
            while i < len(xs):
                if xs[i] < 0:
                    break
                i += 1
            return i
        """,
        """
        def f(xs):
            i = 0
            while i < len(xs):
                for x in xs:
                    if x < 0:
                        break
                i += 1
            return i
        """,
    ),
    "module_constant": (
        """
        MAX_ITEMS = 10
        """,
        """
        max_items = 10
        def f():
            LIMIT = 3
            return LIMIT
        """,
    ),
    # four calls deep from a(1), three from b(1)
    "call_depth_3": (CALL_CHAIN.replace("ENTRY", "a(1)"), CALL_CHAIN.replace("ENTRY", "b(1)")),
}


def _source(text: str) -> str:
    return textwrap.dedent(text).strip() + "\n"


@pytest.mark.parametrize("name", sorted(CASES))
def test_found_with_and_not_without(name: str) -> None:
    present, absent = CASES[name]
    assert name in constructs(_source(present))
    assert name not in constructs(_source(absent))


def test_every_syntactic_construct_has_a_case() -> None:
    assert set(CASES) | set(KINDS) == set(CONSTRUCTS)
    assert len(CONSTRUCTS) == len(set(CONSTRUCTS))


def test_kinds_come_from_the_kind_comment() -> None:
    source = '"""A machine."""\n# entry: run([1, 2])\n# kind: state_machine, parser\ndef run(x):\n    return x\n'
    assert kinds(source) == {"state_machine", "parser"}
    assert {"state_machine", "parser"} <= constructs(source)
    assert not {"interpreter", "simulation"} & constructs(source)
    assert entry_call(source) == "run([1, 2])"
    assert not kinds("def run(x):\n    return x\n")


def test_empty_source_uses_nothing() -> None:
    assert constructs("") == set()


def test_class_call_reaches_init_in_the_call_graph() -> None:
    source = _source(
        """
        # entry: main()
        class Node:
            def __init__(self, v):
                self.v = v
                self.check()
            def check(self):
                validate(self.v)
        def validate(v):
            return v
        def main():
            return Node(1)
        """
    )
    assert "call_depth_3" in constructs(source)


def test_super_call_of_the_same_method_is_not_recursion() -> None:
    source = _source(
        """
        class AppError(Exception):
            def __init__(self, message):
                super().__init__(message)
        """
    )
    assert "recursion" not in constructs(source)
    assert "inheritance_super" in constructs(source)
