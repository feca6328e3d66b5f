"""model_backend/grammar/syntax.py: which classes can run the program's code where builtins run."""

from __future__ import annotations

import ast

import pytest

from model_backend.grammar.syntax import defines_a_class

PLAIN = [
    "class K:\n    pass\n",
    "class K:\n    '''A record.'''\n    def __init__(self, n):\n        self.n = n\n    def grow(self):\n        self.n += 1\n",
    "from dataclasses import dataclass, field\n@dataclass\nclass K:\n    n: int = 0\n    tags: list = field(default_factory=list)\n",
    "from dataclasses import dataclass\n@dataclass(frozen=True, order=True)\nclass K:\n    n: int\n    def __post_init__(self):\n        pass\n",
    "class Base:\n    pass\nclass K(Base):\n    @staticmethod\n    def make():\n        return K()\n    @classmethod\n    def other(cls):\n        return cls()\n",
    "class Missing(KeyError):\n    pass\n",
    "from typing import NamedTuple\nclass P(NamedTuple):\n    x: int\n    y: int = 0\n",
    "from enum import Enum\nclass Color(Enum):\n    RED = 1\n",
    "class K:\n    __slots__ = ('n',)\n    LIMIT = 3\n",
    "from dataclasses import dataclass, field\nfrom collections import defaultdict\n@dataclass\nclass K:\n"
    "    counts: dict = field(default_factory=lambda: defaultdict(int))\n",  # runs as part of construction
]
RUNS_CODE = [
    "class K:\n    def __eq__(self, other):\n        return True\n",  # ==, in, list.index, dict keys
    "class K:\n    def __repr__(self):\n        return '[]'\n",  # prints like a list
    "class K:\n    def __iter__(self):\n        return iter([])\n",
    "class K:\n    @property\n    def n(self):\n        return 1\n",  # an attribute read runs code
    "import functools\nclass K:\n    @functools.cached_property\n    def n(self):\n        return 1\n",
    "class K:\n    n = property(lambda self: 1)\n",  # a descriptor
    "class K:\n    key = staticmethod(len)\n",
    "class K(dict):\n    def get(self, key):\n        return 0\n",  # prints like a dict, its methods are the program's
    "class Meta(type):\n    pass\nclass K(metaclass=Meta):\n    pass\n",
    "import functools\n@functools.total_ordering\nclass K:\n    pass\n",  # a decorator that may add operators
    "class Base:\n    def __lt__(self, other):\n        return True\n",  # a base of another class
    "class K:\n    class Inner:\n        def __hash__(self):\n            return 0\n",  # a nested class
]


@pytest.mark.parametrize("source", PLAIN)
def test_a_plain_class_runs_no_code_behind_builtins(source: str) -> None:
    assert not defines_a_class(ast.parse(source + "def f(xs):\n    return xs\n"))


@pytest.mark.parametrize("source", RUNS_CODE)
def test_a_class_with_code_behind_operators_or_attributes_is_not_plain(source: str) -> None:
    assert defines_a_class(ast.parse(source + "def f(xs):\n    return xs\n"))
