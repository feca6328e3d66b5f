"""Unit tests of the adapter's value reader, safe evaluator, breakpoint lines and in-process TCP server."""

from __future__ import annotations

import contextlib
import math
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dap_server.breakpoints import BreakpointTable, LineMap, parse_hit_condition
from dap_server.evaluator import EvalError, Evaluator, evaluate, interpolate
from dap_server.server import serve_tcp
from dap_server.values import Opaque, Record, container_children, parse_value, show, with_attributes
from tests.support.dap_client import DapClient, Session, stdio_session

pytestmark = pytest.mark.timeout(120)

NAMES = {
    "xs": "[3, 1, 2]",
    "d": "{'a': 1, 'b': [1, 2]}",
    "s": "'hello'",
    "p": "Point(x=1, y=2)",
    "obj": "<__main__.Thing object at 0x7f00>",
    "q": "deque([4, 5])",
    "f": "inf",
}


@pytest.mark.parametrize(("expression", "expected"), [
    ("xs[0] + xs[-1]", 5),
    ("sorted(xs)", [1, 2, 3]),
    ("len(d['b']) * 2", 4),
    ("s.upper()[1:3]", "EL"),
    ("d.get('zz', 0)", 0),
    ("list(d.items())[0]", ("a", 1)),
    ("p.x + p.y", 3),
    ("q[1]", 5),
    ("sum(q)", 9),
    ("[x * x for x in xs if x > 1]", [9, 4]),
    ("{k: v for k, v in d.items() if k == 'a'}", {"a": 1}),
    ("xs if len(xs) > 2 else None", [3, 1, 2]),
    ("1 < xs[0] <= 3 and not False", True),
    ("f > 10 ** 6", True),
    ("f'{s}!'", "hello!"),
    ("type(xs)", "list"),
    ("max(xs, default=0)", 3),
    ("__import__", None),
])
def test_evaluator_features(expression: str, expected: object) -> None:
    if expected is None:
        with pytest.raises(EvalError):
            evaluate(expression, NAMES)
        return
    assert evaluate(expression, NAMES) == expected


@pytest.mark.parametrize(("expression", "message"), [
    ("9 ** 9 ** 9", "too large"),
    ("'a' * 10 ** 9", "too large"),
    ("[0] * 10 ** 8", "too large"),
    ("sum(range(10 ** 7))", "too large"),
    ("[i for i in range(10 ** 6) for j in range(10)]", "expensive"),
    ("xs.__class__", "not supported"),
    ("xs.append(4)", "not supported"),
    ("obj.attr", "only its repr"),
    ("obj + 1", "only by its repr"),
    ("open('/etc/passwd')", "never runs the program"),
    ("lambda: 1", "lambda is not supported"),
    ("(y := 3)", "assignment"),
    ("missing", "not defined"),
    ("xs[", "syntax error"),
    ("sorted(xs, key=len)", "key="),
    ("1 / 0", "ZeroDivisionError"),
])
def test_evaluator_refuses_and_bounds(expression: str, message: str) -> None:
    start = time.monotonic()
    with pytest.raises(EvalError) as info:
        evaluate(expression, NAMES)
    assert message in str(info.value)
    assert time.monotonic() - start < 5


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_evaluator_only_raises_eval_error(expression: str) -> None:
    with contextlib.suppress(EvalError):
        evaluate(expression, NAMES)


@settings(max_examples=300, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=10),
                    lambda c: st.lists(c, max_size=4) | st.tuples(c, c) | st.dictionaries(st.text(max_size=5), c,
                                                                                         max_size=4),
                    max_leaves=10))
def test_parse_value_reads_back_reprs(value: object) -> None:
    assert parse_value(repr(value)) == value


def test_parse_value_special_forms() -> None:
    assert isinstance(parse_value("<object at 0x1>"), Opaque)
    assert isinstance(parse_value("[1, 2, ..."), Opaque)
    assert math.isinf(parse_value("-inf"))
    point = parse_value("Point(x=1, y=[2])")
    assert isinstance(point, Record) and point.fields == {"x": 1, "y": [2]} and show(point) == "Point(x=1, y=[2])"
    assert [name for name, _, _ in container_children(point)] == ["x", "y"]
    assert parse_value("frozenset({1})") == frozenset({1}) and parse_value("set()") == set()
    assert [c[0] for c in container_children(parse_value("{'k': 1}"))] == ["'k'"]


def test_objects_with_recorded_attributes_expand_and_compute() -> None:
    """The oracle's attributes (values.with_attributes): a default repr becomes a Record named after its
    class, nested objects in turn; a repr of its own keeps its text and gains the attributes."""
    attributes = {"val": "1", "next": "<__main__.Node object>", "next.val": "2", "next.next": "None"}
    node = with_attributes("<__main__.Node object>", attributes)
    assert isinstance(node, Record) and node.name == "Node" and show(node) == "<__main__.Node object>"
    assert [(name, show(v), suffix) for name, v, suffix in container_children(node)] == [
        ("val", "1", ".val"), ("next", "<__main__.Node object>", ".next")]
    point = with_attributes("Point(x=1)", {"x": "1", "tag": "'a'"})
    assert point.fields == {"x": 1, "tag": "a"} and show(point) == "Point(x=1)"
    assert isinstance(with_attributes("<__main__.Node object>", {}), Opaque)
    names = {"node": "<__main__.Node object>", "k": "2"}
    evaluator = Evaluator(names, attributes={"node": attributes})
    assert evaluator.evaluate("node.next.val * k") == 4
    assert evaluator.evaluate("vars(node.next)") == {"val": 2, "next": None}
    with pytest.raises(EvalError, match="shows only its repr"):
        evaluate("node.val", names)  # without attributes (a neural state): the repr is all there is
    assert interpolate("at {node.next.val}", names, {"node": attributes}) == "at 2"
    pets = with_attributes("[<__main__.D object>, 2]", {"[0]": "<__main__.D object>", "[0].name": "'rex'", "[1]": "2"})
    assert isinstance(pets, list) and pets[0].fields == {"name": "rex"} and show(pets) == "[<__main__.D object>, 2]"
    by = with_attributes("{'a': (<__main__.D object>,)}", {"['a']": "(<__main__.D object>,)",
                                                          "['a'][0]": "<__main__.D object>", "['a'][0].name": "'bit'"})
    assert by["a"][0].fields == {"name": "bit"}
    assert isinstance(with_attributes("[<__main__.D object>, 2]", {"[1]": "2"}), Opaque)  # not whole: unread


def test_interpolate_log_messages() -> None:
    assert interpolate("xs={xs} first={xs[0]} {{literal}} {missing}", NAMES) == (
        "xs=[3, 1, 2] first=3 {literal} <error: name 'missing' is not defined in the current frame>")
    assert interpolate("unclosed {xs", NAMES) == "unclosed {xs"


SOURCE = '''\
"""Module docstring."""
import math


def f(a,
      b):
    """Docstring."""
    global G
    x = a + b

    return x


class C:
    y = 1

    def m(self):
        pass


@staticmethod
def g():
    return [
        1,
    ]
'''


def test_executable_lines_and_moves() -> None:
    lines = LineMap.from_source(SOURCE)
    # Lines with bytecode, as CPython reports line events: the decorated def line and the
    # continuation line of the multi-line list (24) too.
    assert {1, 2, 5, 9, 11, 14, 15, 17, 18, 21, 22, 23, 24} <= lines.executable
    assert not {0, 3, 6, 7, 8, 10, 12, 25} & lines.executable
    assert lines.resolve(9) == (9, None)
    assert lines.resolve(7)[0] == 9  # docstring: next line of the function
    assert lines.resolve(8)[0] == 9  # global statement
    assert lines.resolve(10)[0] == 11  # blank line inside the function
    assert lines.resolve(12)[0] == 14  # blank line between scopes: the next module statement
    assert lines.resolve(6)[0] == 9  # the def header's continuation belongs to the body
    assert lines.resolve(16)[0] == 17
    assert lines.resolve(25)[0] is None and "no later line" in (lines.resolve(25)[1] or "")
    assert lines.resolve(99)[0] is None and lines.resolve(0)[0] is None


def test_hit_conditions_and_table() -> None:
    assert parse_hit_condition("3") == ("==", 3) and parse_hit_condition(">= 2") == (">=", 2)
    assert parse_hit_condition("%2") == ("%", 2) and parse_hit_condition(" ") is None
    for bad in ("x", "%0", "> two"):
        with pytest.raises(ValueError):
            parse_hit_condition(bad)
    table = BreakpointTable()
    table.set_source("for i in range(6):\n    pass\n")
    table.replace([{"line": 2, "hitCondition": "%2", "condition": "i > 0"}])
    fired = [table.reached(2, {"i": str(i)}).stop for i in range(6)]
    assert fired == [False, False, True, False, True, False]  # hits counted only when the condition holds
    error = table.reached(2, {"j": "1"})
    assert error.stop is False or error.errors  # a condition error stops (and is reported) unless hit-gated
    assert error.errors and "not defined" in error.errors[0]


def test_serve_tcp_in_process_with_ready_callback(tmp_path: Path) -> None:
    program = tmp_path / "p.py"
    program.write_text("a = 1\nb = a + 1\n")
    ports: list[int] = []
    ready = threading.Event()
    stop = threading.Event()

    def announce(port: int) -> None:
        ports.append(port)
        ready.set()

    thread = threading.Thread(target=serve_tcp, kwargs={"port": 0, "ready": announce, "stop": stop}, daemon=True)
    thread.start()
    try:
        assert ready.wait(30)
        client = DapClient.tcp(ports[0])
        s = Session(client)
        try:
            s.initialize()
            with s.launch(program, stopOnEntry=True):
                pass
            assert s.wait_for_stop("entry").line == 1
            s.step("next")
            assert s.get_variables() == {"a": "1"}
        finally:
            s.disconnect()
            client.close()
    finally:
        stop.set()
        thread.join(timeout=10)


def test_log_file_records_the_messages(tmp_path: Path) -> None:
    log = tmp_path / "dap.log"
    with stdio_session(log_file=str(log)) as s:
        s.client.request("threads")
        s.client.request("nonsense", expect_success=False)
    text = log.read_text()
    assert "'command': 'initialize'" in text and "unknown command 'nonsense'" in text
