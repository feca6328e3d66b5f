"""What the tracer records: events, lines, locals as reprs, values, stdout, depth, stack."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace
from model_backend.tracer import MAX_ATTRIBUTES, safe_repr
from tests.support.corpus import COUNT


def test_entry_mode_starts_at_the_call_and_records_reprs() -> None:
    result = run_trace(Program(source=COUNT, path="/tmp/count.py", entry="count('berry', 'r')"))
    first, last = result.events[0], result.events[-1]
    assert (first.event, first.function, first.line, first.locals) == ("call", "count", 1, {"s": "'berry'", "t": "'r'"})
    assert (last.event, last.value, result.exit) == ("return", "2", "normal")
    assert result.events[2].locals == {"s": "'berry'", "t": "'r'", "n": "0"}
    assert all(e.depth == 0 and e.stack[-1].function == "count" for e in result.events)


def test_module_mode_user_names_only_and_stdout() -> None:
    src = "import math\nx = [1, 2]\nprint('hi', x)\n__secret__ = 1\ny = math.floor(2.5)\n"
    result = run_trace(Program(source=src, path="/tmp/mod.py"))
    assert result.events[0].event == "line" and result.events[0].line == 1
    final = result.events[-1]
    assert final.event == "return" and final.function == "<module>"
    assert final.locals == {"x": "[1, 2]", "y": "2"}  # no module object, no dunder
    assert result.events[3].stdout == "hi [1, 2]\n"  # printed by line 3, seen at the next event


def test_program_arguments_are_the_runs_sys_argv() -> None:
    src = "import sys\nargs = sys.argv[1:]\nname = sys.argv[0]\n"
    final = run_trace(Program(source=src, path="/tmp/argv.py", argv=["--n", "3"])).events[-1]
    assert final.locals == {"args": "['--n', '3']", "name": "'/tmp/argv.py'"}
    assert run_trace(Program(source=src, path="/tmp/argv.py")).events[-1].locals["args"] == "[]"


def test_nested_calls_depth_and_stack() -> None:
    src = "def a(x):\n    return b(x) + 1\n\ndef b(y):\n    return y * 2\n\nz = a(3)\n"
    result = run_trace(Program(source=src, path="/tmp/n.py"))
    in_b = next(e for e in result.events if e.function == "b" and e.event == "line")
    assert in_b.depth == 2
    assert [(f.function, f.line) for f in in_b.stack] == [("<module>", 7), ("a", 2), ("b", 5)]


def test_truncated_repr_and_hidden_addresses() -> None:
    src = "big = list(range(1000))\nobj = object()\n"
    result = run_trace(Program(source=src, path="/tmp/t.py"), Limits(max_repr=20))
    final = result.events[-1].locals
    assert final["big"] == "[0, 1, 2, 3, 4, 5, 6..." and final["obj"] == "<object object>"


def test_exceptions_recorded_with_type_and_message() -> None:
    src = "def f(x):\n    return 1 / x\n\ntry:\n    f(0)\nexcept ZeroDivisionError:\n    ok = True\nf(0)\n"
    result = run_trace(Program(source=src, path="/tmp/e.py"))
    exc = [e for e in result.events if e.event == "exception"]
    assert exc[0].function == "f" and exc[0].value == "ZeroDivisionError('division by zero')"
    assert result.exit == "error" and result.exit_reason == "ZeroDivisionError: division by zero"


def test_broken_repr_does_not_break_tracing() -> None:
    src = "class Bad:\n    def __repr__(self):\n        raise ValueError('no')\nb = Bad()\nc = 1\n"
    result = run_trace(Program(source=src, path="/tmp/r.py"))
    assert result.exit == "normal"
    assert result.events[-1].locals["b"] == "<repr failed: ValueError>"


def test_generator_keeps_its_frame_id_across_resumptions() -> None:
    src = "def g():\n    yield 1\n    yield 2\n\nfor v in g():\n    w = v\n"
    result = run_trace(Program(source=src, path="/tmp/g.py"))
    gen_events = [e for e in result.events if e.function == "g"]
    assert len({e.frame_id for e in gen_events}) == 1 and all(e.is_generator for e in gen_events)
    assert [e.event for e in gen_events].count("call") == 3  # started, resumed, resumed to finish


def test_set_variable_patch_changes_the_rest_of_the_run() -> None:
    from model_backend.sandbox import Patch

    program = Program(source=COUNT, path="/tmp/count.py", entry="count('berry', 'r')")
    result = run_trace(program, patches=[Patch(index=1, name="t", value="'b'")])
    assert result.events[1].locals["t"] == "'b'" and result.events[-1].value == "1"


def test_a_module_without_statements_records_no_events() -> None:
    """CPython reports an empty module's run at "line 0"; there is no such line to stop at."""
    for source in ("", "# only a comment\n", "\n\n"):
        result = run_trace(Program(source=source, path="/tmp/empty.py"))
        assert result.events == [] and result.exit == "normal", source


GLOBALS = """\
import math
LIMIT = 10
SEEN = []
x = 'module x'

def f(x):
    SEEN.append(x)
    return x < LIMIT and math.floor(x) == x

f(3)
"""


def test_a_functions_frame_records_the_module_globals_it_names() -> None:
    """With record_globals (debugging sessions): the globals f's code names, as they are at each event,
    never a module, nor a name its locals shadow; the module's own frame has none. Off by default."""
    result = run_trace(Program(source=GLOBALS, path="/tmp/g.py"), Limits(record_globals=True))
    in_f = [e for e in result.events if e.function == "f"]
    assert in_f[0].globals == {"SEEN": "[]", "LIMIT": "10"}
    assert in_f[-1].globals == {"SEEN": "[3]", "LIMIT": "10"}
    assert all(e.globals == {} for e in result.events if e.function == "<module>")
    plain = run_trace(Program(source=GLOBALS, path="/tmp/g.py"))
    assert all(e.globals == {} for e in plain.events)


OBJECTS = """\
class Node:
    kind = 'node'

    def __init__(self, val, nxt=None):
        self.val = val
        self.next = nxt

    @property
    def double(self):
        Node.reads += 1
        return self.val * 2

    def __getattr__(self, name):
        raise RuntimeError('the tracer must not call __getattr__')


Node.reads = 0


class Pair:
    __slots__ = ('a', 'b')

    def __init__(self, a):
        self.a = a


def link(n):
    head = None
    for i in range(n):
        head = Node(i, head)
    head.next.next.next = head
    p = Pair([head.val])
    return Node.reads
"""


def test_session_traces_record_the_attributes_of_the_programs_objects() -> None:
    """With record_attributes (debugging sessions): each name holding an instance of the program's classes
    gets its attributes' reprs by dotted path: __dict__, __slots__ (a slot never set left out), class data
    (not methods, properties or classes), nested objects three deep, a cycle stopped at its repr. No
    property getter or __getattr__ runs: the program returns 0 reads. Off by default."""
    program = Program(source=OBJECTS, path="/tmp/objects.py", entry="link(4)")
    result = run_trace(program, Limits(record_attributes=True))
    assert (result.exit, result.events[-1].value) == ("normal", "0")
    last = result.events[-1].attributes
    assert set(last) == {"head", "p"}
    assert last["p"] == {"a": "[3]"}
    head = last["head"]
    assert (head["val"], head["next.val"], head["next.next.val"], head["kind"]) == ("3", "2", "1", "'node'")
    # back to head: a cycle, not followed; its value marks where it meets itself again
    assert head["next.next.next"] == "Node(val=3, next=Node(val=2, next=Node(val=1, next=...)))"
    assert "next.next.next.val" not in head and "double" not in head and "reads" in head
    assert not any(k.endswith(("__init__", "__getattr__")) for k in head)
    plain = run_trace(program)
    assert all(e.attributes == {} for e in plain.events)


def test_attribute_recording_is_bounded_per_event() -> None:
    src = "class Bag:\n    pass\n\ndef f():\n    b = Bag()\n    for i in range(300):\n        setattr(b, f'a{i}', i)\n    return 1\n"
    result = run_trace(Program(source=src, path="/tmp/bag.py", entry="f()"), Limits(record_attributes=True))
    assert result.exit == "normal" and len(result.events[-1].attributes["b"]) == MAX_ATTRIBUTES


def test_module_globals_holding_objects_get_their_attributes_too() -> None:
    src = "class Cfg:\n    def __init__(self):\n        self.limit = 3\n\nCFG = Cfg()\n\ndef f(x):\n    return x < CFG.limit\n\nf(2)\n"
    result = run_trace(Program(source=src, path="/tmp/cfg.py"), Limits(record_globals=True, record_attributes=True))
    in_f = [e for e in result.events if e.function == "f"]
    assert in_f and all(e.attributes == {"CFG": {"limit": "3"}} for e in in_f)


def test_containers_of_objects_record_every_element() -> None:
    """A list, tuple or dict holding the program's objects records all its elements (so that the debugger
    can rebuild it) and looks into the objects; a container of plain values, one longer than
    MAX_ELEMENTS, or a dict with a key a path cannot hold records nothing."""
    src = ("class D:\n    def __init__(self, name):\n        self.name = name\n\n"
           "def f():\n    pets = [D('rex'), 2]\n    by = {'a': (D('bit'),)}\n    nums = [1, 2]\n"
           "    many = [D(i) for i in range(60)]\n    odd = {1.5: D('x')}\n    return 0\n")
    result = run_trace(Program(source=src, path="/tmp/pets.py", entry="f()"), Limits(record_attributes=True))
    last = result.events[-1].attributes
    assert last["pets"] == {"[0]": "D(name='rex')", "[0].name": "'rex'", "[1]": "2"}
    assert last["by"] == {"['a']": "(D(name='bit'),)", "['a'][0]": "D(name='bit')",
                          "['a'][0].name": "'bit'"}
    assert set(last) == {"pets", "by"}


class _Thing:
    """Its default repr carries an address, which safe_repr removes."""


_VALUES = st.recursive(
    st.one_of(st.integers(), st.text(max_size=30), st.none(), st.builds(_Thing)),
    lambda inner: st.one_of(st.lists(inner, max_size=40), st.tuples(inner), st.lists(inner, max_size=5).map(tuple),
                            st.dictionaries(st.text(max_size=5), inner, max_size=10),
                            st.frozensets(st.integers(), max_size=20), st.sets(st.text(max_size=8), max_size=20)),
    max_leaves=200,
)


def _whole_repr_cut(value: object, max_len: int) -> str:
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", repr(value))
    return text[:max_len] + "..." if len(text) > max_len else text


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.sampled_from([1, 7, 30, 200, 10_000]))
def test_safe_repr_writes_long_containers_part_way_with_the_same_text(value: object, max_len: int) -> None:
    assert safe_repr(value, max_len) == _whole_repr_cut(value, max_len)


def test_safe_repr_of_long_containers_and_containers_inside_themselves() -> None:
    cycle: list[object] = [1]
    cycle.append(cycle)
    mapping: dict[str, object] = {"a": 1}
    mapping["self"] = (mapping, [cycle])
    long = (list(range(1000)), {i: str(i) for i in range(500)}, set(range(300)), frozenset(range(100)),
            tuple(_Thing() for _ in range(100)), [[1]] * 200, [(i,) for i in range(100)], ["ab'c"] * 100)
    for value in (cycle, mapping, [cycle] * 300, *long):
        for max_len in (3, 12, 200):
            assert safe_repr(value, max_len) == _whole_repr_cut(value, max_len)
