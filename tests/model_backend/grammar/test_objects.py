"""model_backend/grammar/objects.py: which values only a new binding can change, which parameters keep their
objects, and what `name = C(...)` binds; each fact checked against what Python does where it can be."""

from __future__ import annotations

import ast

import pytest

from model_backend.grammar.objects import (
    StableForms,
    constructed_objects,
    entry_function,
    stable_forms,
    unchanging_parameters,
)
from model_backend.tracer import safe_repr

PLAIN = "class Node:\n    def __init__(self, v):\n        self.v = v\n\nclass Leaf(Node):\n    pass\n"


def forms(source: str) -> StableForms:
    return stable_forms(ast.parse(source), dynamic=False)


def test_plain_classes_and_their_subclasses_keep_their_text() -> None:
    found = forms(PLAIN)
    assert found.classes == {"Node", "Leaf"} and found.builtin_forms
    assert found.stable("<__main__.Node object>") and found.stable("<__main__.Leaf object>")
    assert not found.stable("<__main__.Other object>")  # not a class of the program's


@pytest.mark.parametrize("source", [
    "class Node:\n    def __repr__(self):\n        return 'n'\n",
    "@dataclass\nclass Node:\n    v: int\n",
    "class Meta(type):\n    pass\n\nclass Node(metaclass=Meta):\n    pass\n",
    "class Node(dict):\n    pass\n",
    "class Node:\n    __repr__ = lambda self: 'n'\n",
    "class Node:\n    pass\n\nNode.__repr__ = lambda self: 'n'\n",
    "class Node:\n    pass\n\nclass Other:\n    pass\n\ndef f(n):\n    n.__class__ = Other\n",
    "class Node:\n    pass\n\ndef f(n, name):\n    setattr(Node, name, None)\n",
    "class Node:\n    pass\n\nclass Node:\n    pass\n",
    "class Base:\n    def __init_subclass__(cls):\n        pass\n\nclass Node(Base):\n    pass\n",
])
def test_a_class_whose_text_may_change_is_not_stable(source: str) -> None:
    assert not forms(source).stable("<__main__.Node object>")


def test_builtin_forms_are_stable_unless_a_repr_could_write_one() -> None:
    found = forms("def f():\n    pass\n")
    for value in (iter([1]), iter({}), (x for x in "ab"), zip([1], [2], strict=True), lambda: 0, int):
        assert found.stable(safe_repr(value, 200)), safe_repr(value, 200)
    assert not found.stable("[1]") and not found.stable("Node(v=1)")
    assert not forms("class C:\n    def __repr__(self):\n        return f'<{self.k} object>'\n").builtin_forms


def test_iterating_does_not_change_an_iterators_text() -> None:
    it = iter([1, 2, 3])
    before = safe_repr(it, 200)
    next(it)
    assert safe_repr(it, 200) == before and forms("").stable(before)


def test_a_program_that_looks_names_up_keeps_nothing_stable() -> None:
    assert stable_forms(ast.parse(PLAIN), dynamic=True) == StableForms()
    assert unchanging_parameters(ast.parse("def f(a):\n    return a\n"), dynamic=True) == {}


def test_parameters_that_nothing_binds_again_are_unchanging() -> None:
    source = ("def f(a, b, *rest, c, **kw):\n    b += 1\n    a.append(b)\n    return a\n\n"
              "def g(x, y, z):\n    del y\n    for z in x:\n        pass\n    def inner():\n        nonlocal x\n"
              "        x = 1\n    return inner\n\n"
              "def h(p):\n    return [p for p in range(3)]\n")
    found = unchanging_parameters(ast.parse(source), dynamic=False)
    assert found["f"] == {"a", "rest", "c", "kw"}
    assert "g" not in found  # each parameter is bound again
    assert "h" not in found  # a comprehension's variable counts as a binding: nothing is assumed


def test_defs_of_one_code_name_keep_only_what_all_keep() -> None:
    source = ("class A:\n    def __init__(self, n):\n        self.n = n\n\n"
              "class B:\n    def __init__(self, n):\n        n = n + 1\n        self.n = n\n")
    assert unchanging_parameters(ast.parse(source), dynamic=False)["__init__"] == {"self"}


def test_construction_outside_try_binds_the_new_instance() -> None:
    source = ("class Node:\n    pass\n\n"
              "def f():\n    a = Node()\n    try:\n        b = Node()\n    except ValueError:\n        pass\n"
              "    c = Node(); d = 1\n    e = dict()\n    return a\n")
    tree = ast.parse(source)
    assert constructed_objects(tree, stable_forms(tree, False)) == {5: ("a", "<__main__.Node object>")}


@pytest.mark.parametrize("entry, function", [
    ("run([1, 2], 'x')", "run"), ("run(items=[1])", "run"), ("run(len([1]))", None),
    ("run([x for x in 'ab'])", None), ("obj.run(1)", None), ("run(", None), (None, None),
])
def test_the_entry_function_runs_alone_at_the_outermost_depth(entry: str | None, function: str | None) -> None:
    assert entry_function(entry) == function
