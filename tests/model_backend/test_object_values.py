"""The program's objects in the state (trace format 3): the tracer writes an object without a __repr__
of its own as `Class(field=value, ...)`, and the debugger expands it like any constructor repr."""

from __future__ import annotations

from dap_server.values import parse_value, show
from model_backend import trace_format as fmt
from model_backend.engine.oracle import OracleEngine
from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace
from model_backend.state import Action

CART = '''\
from dataclasses import dataclass


@dataclass
class Item:
    name: str
    price: float


class Cart:
    def __init__(self):
        self.items = []
        self.owner = None


class Node:
    __slots__ = ("val", "next")

    def __init__(self, val):
        self.val = val
        self.next = self


class Deep:
    def __init__(self, inner):
        self.inner = inner


class Shown:
    def __repr__(self):
        return "Shown!"


def f():
    cart = Cart()
    cart.items.append(Item("a", 1.5))
    cart.owner = Node(3)
    deep = Deep(Deep(Deep(Deep(1))))
    shown = Shown()
    return cart
'''


def _last_locals(limits: Limits) -> dict[str, str]:
    result = run_trace(Program(source=CART, entry="f()"), limits)
    assert result.exit == "normal", result.exit_reason
    return result.events[-1].locals


def test_objects_are_written_with_their_fields() -> None:
    seen = _last_locals(Limits())
    assert seen["cart"] == "Cart(items=[Item(name='a', price=1.5)], owner=Node(val=3, next=...))"
    assert seen["deep"] == "Deep(inner=Deep(inner=Deep(inner=Deep(...))))"  # three objects deep, then cut
    assert seen["shown"] == "Shown!"  # a class's own __repr__ is kept


def test_format_two_writes_python_default_repr() -> None:
    seen = _last_locals(Limits(objects=False))
    assert seen["cart"] == "<__main__.Cart object>"
    assert seen["shown"] == "Shown!"


def test_object_value_round_trips_through_the_format() -> None:
    result = run_trace(Program(source=CART, entry="f()"))
    program = Program(source=CART, entry="f()")
    engine = OracleEngine(Limits())
    first = engine.start(program)
    last = engine.step(Action(kind="step_return"))
    assert last.value is not None and last.value.startswith("Cart(items=")
    text = fmt.serialize(program, [(first, Action(kind="step_return")), (last, None)])
    parsed = fmt.parse(text)
    assert isinstance(parsed, fmt.ParsedTrajectory) and parsed.version == 3
    assert parsed.steps[-1][0].value == last.value == result.events[-1].value


def test_an_object_value_expands_into_its_fields() -> None:
    value = parse_value("Cart(items=[Item(name='a', price=1.5)], owner=Node(val=3, next=...))")
    children = {name: (child, path) for name, child, path in value.children()}
    assert show(children["items"][0]) == "[Item(name='a', price=1.5)]"
    owner = children["owner"][0]
    assert {name: show(child) for name, child, _ in owner.children()} == {"val": "3", "next": "..."}
