"""Attribute paths (trace format 3): after `self.x = EXPR`, `self.x op= EXPR` or `self.x.append(v)` the
grammar writes the object's new text (constraint.FrameConstraint._attribute_updated, flow.attribute_updates),
and only where that text is certain."""

from __future__ import annotations

import ast
import random

from model_backend import trace_format as fmt
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.grammar.back import container_before
from model_backend.grammar.containers import attribute_updates, plain_classes
from model_backend.program import Program
from model_backend.sampler import sample_forward
from model_backend.sandbox import Limits, run_trace
from model_backend.state import StackFrame, State

SOURCE = """\
class Cart:
    def __init__(self, owner):
        self.items = []
        self.count = 0
        self.owner = owner

    def add(self, price):
        self.items.append(price)
        self.count += 1
        self.total = self.count * 2
        self.total = self.rate()
        return self.count

    def rate(self):
        return 2


def grow(cart, extra):
    other = cart
    cart.items.append(extra)
    return other


def main():
    c = Cart('bo')
    c.add(3)
    c.add(4.5)
    grow(c, 5)
    return c.count
"""

PROGRAM = Program(source=SOURCE, entry="main()")


def accepted(facts: ProgramFacts, prev: State, line: int, locals_text: str) -> bool:
    """Whether the grammar takes `locals_text` as the locals of a line event on `line` after step_over from `prev`."""
    constraint = FrameConstraint(facts, prev, False, "step_over")
    constraint.push_special(fmt.EVENT_TOKENS[(False, "line")])
    constraint.push_special(fmt.LINENO)
    constraint.push_text(str(line).encode())
    constraint.push_special(fmt.ARG)
    fed = constraint.slot.feed(locals_text.encode()) if constraint.slot is not None else None
    return fed is not None and bool(fed.complete)


def diff(**values: str) -> str:
    return fmt._json({"..": "..", **values})


def in_add(line: int, cart: str, **more: str) -> State:
    return State(event="line", line=line, stack=[StackFrame(function="main", line=26), StackFrame(function="add", line=line)],
                 locals={"self": cart, "price": "3", **more})


V3 = ProgramFacts.of(PROGRAM, objects=True)


def test_the_facts_name_the_updates_and_the_plain_class() -> None:
    tree = ast.parse(SOURCE)
    assert plain_classes(tree) == {"Cart": frozenset({"__init__", "add", "rate"})}
    updates = attribute_updates(tree)
    assert {line: (u.owner, u.attribute, u.kind) for line, u in updates.items()} == {
        3: ("self", "items", "set"), 4: ("self", "count", "set"), 5: ("self", "owner", "set"),
        8: ("self", "items", "append"), 9: ("self", "count", "set"), 10: ("self", "total", "set"),
        20: ("cart", "items", "append")}  # not line 11: it calls the program's own rate()
    assert V3.attribute_updates.keys() == updates.keys()
    assert ProgramFacts.of(PROGRAM).attribute_updates == {} and ProgramFacts.of(PROGRAM).classes == {}  # version 2


def test_an_append_through_an_attribute_writes_the_object_with_the_item_added() -> None:
    prev = in_add(8, "Cart(items=[], count=0, owner='bo')")
    assert accepted(V3, prev, 9, diff(self="Cart(items=[3], count=0, owner='bo')"))
    assert not accepted(V3, prev, 9, diff(self="Cart(items=[4], count=0, owner='bo')"))
    assert not accepted(V3, prev, 9, diff(self="Cart(items=[3], count=1, owner='bo')"))
    assert not accepted(V3, prev, 9, diff())  # the object changed: the diff must say so
    prev = in_add(8, "Cart(items=[1, 'a'], count=2, owner=None)")
    assert accepted(V3, prev, 9, diff(self="Cart(items=[1, 'a', 3], count=2, owner=None)"))
    assert not accepted(V3, prev, 9, diff(self="Cart(items=[1, 'a'], count=2, owner=None)"))


def test_an_augmented_and_a_computed_attribute_take_their_values() -> None:
    prev = in_add(9, "Cart(items=[3], count=0, owner='bo')")
    assert accepted(V3, prev, 10, diff(self="Cart(items=[3], count=1, owner='bo')"))
    assert not accepted(V3, prev, 10, diff(self="Cart(items=[3], count=2, owner='bo')"))
    prev = in_add(10, "Cart(items=[3], count=1, owner='bo')")  # a new field comes last
    assert accepted(V3, prev, 11, diff(self="Cart(items=[3], count=1, owner='bo', total=2)"))
    assert not accepted(V3, prev, 11, diff(self="Cart(total=2, items=[3], count=1, owner='bo')"))
    prev = in_add(10, "Cart(items=[3], total=0, count=4, owner='bo')")  # an old one keeps its place
    assert accepted(V3, prev, 11, diff(self="Cart(items=[3], total=8, count=4, owner='bo')"))
    assert not accepted(V3, prev, 11, diff(self="Cart(items=[3], total=0, count=4, owner='bo')"))


def test_the_rule_holds_back_where_the_new_text_is_not_certain() -> None:
    wrong = diff(self="Cart(items=[9], count=0, owner='bo')")
    whole = "Cart(items=[], count=0, owner='bo')"
    assert not accepted(V3, in_add(8, whole), 9, wrong)  # the rule fires on the whole text
    assert accepted(ProgramFacts.of(PROGRAM), in_add(8, whole), 9, wrong)  # format 2: nothing changes
    cut = "Cart(items=[], count=0, owner='" + "o" * 200 + "..."
    assert accepted(V3, in_add(8, cut), 9, wrong)  # a cut text
    assert accepted(V3, in_add(8, "Cart(items=[], count=0, seen=[], owner='bo')"), 9, wrong)  # another field may hold the list
    assert accepted(V3, in_add(8, "Other(items=[], count=0)"), 9, wrong)  # not a class of the program
    assert accepted(V3, in_add(8, "Cart(items=[...], count=0)"), 9, wrong)  # not a list of literals
    # the line calls the program's own code
    assert accepted(V3, in_add(11, "Cart(items=[3], count=1, owner='bo', total=2)"), 12,
                    diff(self="Cart(items=[3], count=1, owner='bo', total=7)"))


def test_a_variable_that_may_hold_the_same_object_keeps_the_rule_off() -> None:
    def grow(cart: str, **more: str) -> State:
        return State(event="line", line=20, stack=[StackFrame(function="main", line=28), StackFrame(function="grow", line=20)],
                     locals={"cart": cart, "extra": "5", **more})

    text = "Cart(items=[3], count=1, owner='bo')"
    wrong = diff(cart="Cart(items=[3, 6], count=1, owner='bo')")
    assert not accepted(V3, grow(text), 21, wrong)
    assert accepted(V3, grow(text), 21, diff(cart="Cart(items=[3, 5], count=1, owner='bo')"))
    assert accepted(V3, grow(text, other=text), 21, wrong)  # `other` may be the same object
    assert accepted(V3, grow(text, other="[3]"), 21, wrong)  # or the same list


def _with_head(head: str, objects: bool = True) -> tuple[ProgramFacts, State, int]:
    """The facts of SOURCE with `class Cart:` replaced by `head`, and the state before line 8's append."""
    source = SOURCE.replace("class Cart:", head)
    shift = head.count("\n")
    prev = in_add(8 + shift, "Cart(items=[], count=0, owner='bo')").model_copy(update={
        "line": 8 + shift,
        "stack": [StackFrame(function="main", line=26 + shift), StackFrame(function="add", line=8 + shift)]})
    return ProgramFacts.of(Program(source=source, entry="main()"), objects=objects), prev, 9 + shift


def test_a_dataclass_a_builtin_base_or_a_base_defining_the_attribute_keeps_the_rule_off() -> None:
    wrong = diff(self="Cart(items=[9], count=0, owner='bo')")
    for head in ("from dataclasses import dataclass\n\n\n@dataclass\nclass Cart:",  # writes its own repr
                 "class Cart(dict):",  # prints like a dict
                 "class Base:\n    items = property(lambda s: [])\n\n\nclass Cart(Base):",  # a descriptor
                 "class Base:\n    def __repr__(self):\n        return 'Cart()'\n\n\nclass Cart(Base):"):
        facts, prev, line = _with_head(head)
        assert accepted(facts, prev, line, wrong), head
    facts, prev, line = _with_head("class Base:\n    pass\n\n\nclass Cart(Base):")  # a plain base
    assert not accepted(facts, prev, line, wrong)
    assert accepted(facts, prev, line, diff(self="Cart(items=[3], count=0, owner='bo')"))
    named = SOURCE + "\n\nPair = __import__('collections').namedtuple('Cart', 'items count')\n"
    assert "Cart" not in ProgramFacts.of(Program(source=named, entry="main()"), objects=True).classes


def test_every_traced_frame_passes_and_the_rule_fires() -> None:
    program = Program(source=SOURCE, entry="main()")
    result = run_trace(program, Limits(objects=True))
    facts = ProgramFacts.of(program, objects=True)
    fired = 0
    for seed in range(6):
        prev: State | None = None
        taken: str | None = None
        trail: list[tuple[State, str]] = []
        for state, action in sample_forward(program, result, random.Random(seed)):
            constraint = FrameConstraint(facts, prev, False, taken, tuple(trail))
            constraint.push_frame_text(fmt.frame_target(state, prev, False)[len(fmt.FRAME):])
            assert constraint.done
            keys = frozenset(k.encode() for k in facts.names)
            fired += bool(constraint._attribute_updated(keys))
            if prev is not None and taken is not None:
                trail.append((prev, taken))
            prev, taken = state, action.kind if action is not None else None
    assert fired >= 3


def test_a_step_back_onto_a_slice_store_of_a_builtin_call_is_left_free() -> None:
    """`l[::3] = sorted(l[::3])` (met in version-3 data) calls no method of `l`: deduce.container_before
    says nothing of the list before it (and does not fail)."""
    statement = ast.parse("l[::3] = sorted(l[::3])").body[0]
    assert container_before(statement, "l", None, {"l": "[1, 2, 3]"}, 200) is None
