"""The frame grammar accepts every frame the serializer writes, and every path through it parses."""

from __future__ import annotations

import json
import random
from collections import OrderedDict, deque
from itertools import pairwise

import pytest

from model_backend import trace_format as fmt
from model_backend.grammar import (
    CUT_REPR,
    MAX_RUN,
    FrameConstraint,
    JsonString,
    ProgramFacts,
    Stack,
)
from model_backend.program import Program
from model_backend.sampler import sample_forward, sample_inverse
from model_backend.state import StackFrame, State
from tests.support import REPO
from tests.support.corpus import corpus, traced

NAMES = [c.name for c in corpus()]


def walk(facts: ProgramFacts, prev: State | None, inverse: bool, text: str, action: str | None = None) -> None:
    constraint = FrameConstraint(facts, prev, inverse, action)
    assert text.startswith(fmt.FRAME)
    constraint.push_frame_text(text[len(fmt.FRAME):])
    assert constraint.done


@pytest.mark.parametrize("objects", [True, False], ids=["format3", "format2"])
@pytest.mark.parametrize("name", NAMES)
def test_grammar_accepts_every_serialized_frame(name: str, objects: bool) -> None:
    program, result = traced(name, objects)
    facts = ProgramFacts.of(program, objects=objects)
    for seed in range(3):
        for inverse in (False, True):
            steps = (sample_inverse if inverse else sample_forward)(program, result, random.Random(seed))
            prev, taken = None, None
            for state, action in steps:  # with the action taken, so that the rules that need it apply
                walk(facts, prev, inverse, fmt.frame_target(state, prev, inverse), taken)
                prev, taken = state, action.kind if action is not None else None


@pytest.mark.parametrize("name", ["nested_calls", "class_inheritance", "generator_yield_from", "module_script",
                                  "list_dict_methods", "bubble_sort", "matrix_nested_loops"])
def test_random_paths_through_the_grammar_always_parse(name: str) -> None:
    program, result = traced(name)
    facts = ProgramFacts.of(program)
    steps = sample_forward(program, result, random.Random(1))
    pieces = [bytes([b]) for b in range(32, 127)] + [b'"', b'", ', b'{"', b'": "', b"12", b'"..": ".."', b"}"]
    rng = random.Random(0)
    for _ in range(80):
        at = rng.randrange(len(steps))
        prev = steps[at][0] if rng.random() < 0.7 else None
        inverse = rng.random() < 0.3
        action = rng.choice([None, "step_into", "step_over", "step_over", "step_return"]) if not inverse else None
        # the forward steps that led to prev, for the rules that read them (a loop's passes)
        trail = tuple((state, taken.kind) for state, taken in steps[:at] if taken is not None) if prev else ()
        constraint, out = FrameConstraint(facts, prev, inverse, action, trail), fmt.FRAME
        for _ in range(3000):
            if constraint.done:
                break
            if constraint.slot_kind == "src":
                out += constraint.forced_text() or ""
                constraint.push_forced()
                continue
            options = [("s", t) for t in constraint.allowed_specials()]
            options += [("t", p) for p in pieces if constraint.accepts_text(p)]
            assert options, f"dead end after {out!r}"
            kind, value = rng.choice(options)
            if kind == "s":
                constraint.push_special(value)  # type: ignore[arg-type]
                out += value  # type: ignore[operator]
            else:
                constraint.push_text(value)  # type: ignore[arg-type]
                out += value.decode()  # type: ignore[union-attr]
        assert constraint.done, out
        parsed = fmt.parse_frame(out, prev, inverse)
        assert isinstance(parsed, State), (parsed, out)
        if parsed.stack and program.entry is not None:
            assert all(f.function != "<module>" for f in parsed.stack)


def feed_json(text: str, repr_shape: bool = True) -> JsonString | None:
    return JsonString(repr_shape=repr_shape).feed(json.dumps(text, ensure_ascii=False).encode())


class Odd:
    def __repr__(self) -> str:
        return "Odd(']', \"[\", '\\\\')"


REPRS = [
    repr(v)
    for v in [
        [1, [2, (3, {4: "x"})]],
        "it's",
        'say "hi"',
        "both ' and \"",
        "a\\b\n",
        "([{",
        "}])",
        {"k": ["(", ")"]},
        {1, 2},
        set(),
        frozenset({(1, 2)}),
        deque([1, "]"]),
        OrderedDict(a=1),
        ValueError("can't parse '['"),
        KeyError("]"),
        b"\x00'\"",
        Odd(),
        "é[ü",
        3.5,
        None,
    ]
]


@pytest.mark.parametrize("text", REPRS)
def test_repr_shape_accepts_whole_reprs(text: str) -> None:
    fed = feed_json(text)
    assert fed is not None and fed.complete, text


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("[1, 2", "an open list"),
        ("'abc", "an open string literal"),
        ("{'a': [1, 2]", "an open dict"),
        ("(1, 2]", "a bracket that closes the wrong opener"),
        ("[1, 2]]", "a closer with nothing open"),
        ("['a', 'b]", "a list whose last string never ends"),
    ],
)
def test_repr_shape_rejects_broken_reprs(text: str, why: str) -> None:
    assert feed_json(text) is None, why
    assert feed_json(text, repr_shape=False) is not None, "plain strings (stdout) take any text"


def test_repr_shape_lets_a_cut_repr_end() -> None:
    cut = repr(list(range(100)))[:CUT_REPR] + "..."  # how the tracer shortens a long repr
    fed = feed_json(cut)
    assert fed is not None and fed.complete
    assert feed_json(cut[:50]) is None  # a short repr still has to be whole


def test_a_value_repeats_one_character_at_most_max_run_times() -> None:
    longest = repr("1" * MAX_RUN)
    fed = feed_json(longest)
    assert fed is not None and fed.complete and fed.run == 1  # the closing quote ends the run of ones
    assert feed_json(repr("1" * (MAX_RUN + 1))) is None, "one more is a degenerate loop"
    assert feed_json(repr("ab" * MAX_RUN)) is not None, "runs are of one character"
    assert feed_json(repr("1" * MAX_RUN + "2" + "1" * MAX_RUN)) is not None, "another character starts a new run"
    escaped = repr("\\" * MAX_RUN)  # 2 * MAX_RUN backslashes, each written as an escape sequence: no run
    assert feed_json(escaped) is not None
    assert feed_json("1" * (MAX_RUN + 1), repr_shape=False) is not None, "plain strings (stdout) take any text"
    partial = JsonString(repr_shape=True).feed(b'"\'' + b"1" * MAX_RUN)
    assert partial is not None and partial.feed(b"1") is None and partial.feed(b"'\"") is not None


def test_repr_shape_ignores_brackets_inside_string_literals() -> None:
    opened = JsonString(repr_shape=True).feed(b'"[\'(\', ')
    assert opened is not None and opened.brackets == b"[" and opened.quote == 0
    assert opened.feed(b']"') is not None
    assert opened.feed(b')"') is None


@pytest.mark.parametrize(
    ("text", "whole"),
    [
        ("{1, 1}", False), ("{1, 2}", True), ("{-1, 1}", True), ("{'a': 1, 'a': 2}", False),
        ("{'': 1, '': 2}", False), ('{"it\'s": 1, "it\'s": 2}', False), ("{1.5: 0, 1.5: 1}", False),
        ("{None: 1, None: 2}", False), ("{'a': 1, 'b': {'a': 2}}", True), ("{'a': {1, 1}}", False),
        ("[{1: 2}, {1: 3}]", True), ("{1: 'a', 2: 'a'}", True), ("{'x': [1, 1], 'y': [1, 1]}", True),
        ("{'a,b': 1, 'a': 2}", True), ("{'a:': 1, 'a': 2}", True), ("{}", True), ("Foo({'c': 1, 'c': 2})", False),
        # Not plain: two keys with one repr may be two values (tuples are left alone too).
        ("{<Foo object>, <Foo object>}", True), ("{(1, 2): 1, (1, 2): 2}", True), ("{nan, nan}", True),
    ],
)
def test_a_dict_or_set_holds_a_plain_key_once(text: str, whole: bool) -> None:
    fed = JsonString(repr_shape=True, unique_keys=True).feed(json.dumps(text, ensure_ascii=False).encode())
    assert (fed is not None and fed.complete) == whole, text
    assert feed_json(text) is not None, "without the rule every shape-correct repr goes"


def test_unique_keys_are_off_where_the_program_writes_its_own_reprs() -> None:
    """A user's __repr__ may print `{1, 1}` (a multiset, say): such programs go free."""
    plain = ProgramFacts.of(Program(source="def f(x):\n    return {x}\n", entry="f(1)"))
    custom = ProgramFacts.of(Program(source="class Bag:\n    def __repr__(self):\n        return '{1, 1}'\n"))
    assert plain.unique_keys and not custom.unique_keys


def test_stack_entries_lie_in_their_own_functions() -> None:
    """Every entry of a stack, callers included, is on a line of the function it names."""

    source = "def inner(x):\n    return x + 1\n\n\ndef outer(y):\n    z = inner(y)\n    return z\n"
    facts = ProgramFacts.of(Program(source=source, entry="outer(1)"))

    def stack(text: str, line: int) -> Stack | None:
        return Stack.for_frame(facts, line).feed(text.encode())

    whole = stack('[["outer", 6], ["inner", 2]]', 2)
    assert whole is not None and whole.complete
    assert stack('[["outer", 2', 2) is None  # the caller's line is in inner, not outer
    assert stack('[["inner", 6', 2) is None
    assert stack('[["outer", 6], ["outer", 2]]', 2) is None  # the frame's own entry too (as before)
    assert stack('[["outer", 6], ', 2) is not None


def test_a_caller_sits_on_a_line_that_calls_the_function_above_it() -> None:
    """The demo's stack at a breakpoint in `longest` was [word_stats 13, word_stats 12, longest 5]: line 13
    calls nothing, word_stats never calls itself. Only line 14 calls `longest`."""
    facts = ProgramFacts.of(Program.load(REPO / "examples" / "demo.py", "word_stats(['a'])"))
    assert facts.call_lines == {"longest": frozenset({14}), "word_stats": frozenset()}

    def stack(text: str) -> Stack | None:
        return Stack.for_frame(facts, 5).feed(text.encode())

    good = stack('[["word_stats", 14], ["longest", 5]]')
    assert good is not None and good.complete
    assert stack('[["word_stats", 13') is None  # nothing on line 13 leads to line 5
    assert stack('[["word_stats", 12') is None
    assert stack('[["word_stats", 14], ["word_stats"') is None
    assert stack('[["longest", 5]]') is not None  # the bottom entry is whatever the entry expression called


def test_a_comprehension_frame_sits_on_the_scope_that_holds_it() -> None:
    """A list, set or dict comprehension is called by the code around it, on its own lines: the rule's
    pairs are exactly the (caller, line) pairs the tracer saw. The first iterable and a def's default
    belong to the outer scope, so `nested` (line 15) calls both its listcomps from <module>."""
    program, result = traced("comprehension_scopes")
    facts = ProgramFacts.of(program)
    seen = {(above.function, below.function, below.line) for event in result.events
            for below, above in pairwise(event.stack) if above.function in facts.comprehension_callers}
    expected = {("<listcomp>", "<module>", 2), ("<listcomp>", "grid", 3), ("<listcomp>", "<listcomp>", 3),
                ("<dictcomp>", "Table", 7), ("<listcomp>", "cells", 10), ("<listcomp>", "<module>", 13),
                ("<setcomp>", "<module>", 14), ("<listcomp>", "<setcomp>", 14), ("<listcomp>", "<module>", 15),
                ("<listcomp>", "<lambda>", 16)}
    assert seen == expected
    assert {(kind, *pair) for kind, pairs in facts.comprehension_callers.items() for pair in pairs} == expected

    def stack(text: str) -> Stack | None:
        return Stack.for_frame(facts, 13).feed(text.encode())

    good = stack('[["<module>", 13], ["<listcomp>", 13]]')
    assert good is not None and good.complete
    assert stack('[["<module>", 13], ["<listcomp>", 13], ["<listcomp>"') is None  # line 13 holds one comprehension
    assert stack('[["<module>", 13], ["<setcomp>"') is None  # the setcomp is on line 14
    # Every listcomp has the code name <listcomp>, so line 3's inner one stands for any depth of nesting.
    assert stack('[["grid", 3], ["<listcomp>", 3], ["<listcomp>", 3], ["<listcomp>"') is not None


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_caller_may_call_the_frame_above_it(name: str) -> None:
    """The stack rules on real traces: every caller/callee pair of every event's stack is allowed."""
    program, result = traced(name)
    facts = ProgramFacts.of(program)
    refused = [(below, above) for event in result.events for below, above in pairwise(event.stack)
               if not facts.may_call(below.function, below.line, above.function)]
    assert refused == []


@pytest.mark.parametrize(
    ("source", "constrained"),
    [
        ("def f(n):\n    return f(n - 1) if n else 0\n", {"f": {2}}),  # recursion: called from its own line
        ("def g(x):\n    return x\n\ndef f(xs):\n    return sorted(xs, key=g)\n", {"f": set()}),  # g as a value
        ("def g(x):\n    return x\n\ndef f(xs):\n    h = g\n    return h(xs)\n", {"f": set()}),
        ("def d(fn):\n    return fn\n\n@d\ndef g():\n    return 1\n\ndef f():\n    return g()\n", {"f": set()}),
        ("def g():\n    yield 1\n\ndef f():\n    return list(g())\n", {"f": set()}),  # runs where it is iterated
        ("class A:\n    def g(self):\n        return 1\n\ndef g():\n    return A().g()\n", {}),  # g is also a method
        ("def g():\n    return 1\n\ndef f():\n    return globals()['g']()\n", {}),  # a dynamic lookup
        ("def g(a,\n      b):\n    return a\n\ndef f():\n    return g(\n        1,\n        2)\n", {"f": set(), "g": {6, 7, 8}}),
    ],
)
def test_which_functions_only_direct_calls_reach(source: str, constrained: dict[str, set[int]]) -> None:
    facts = ProgramFacts.of(Program(source=source, entry="f()"))
    assert {name: set(lines) for name, lines in facts.call_lines.items()} == constrained


def test_locals_are_names_the_frames_function_can_hold() -> None:
    source = (
        "counter = 0\n"
        "def outer(n):\n"
        "    total = n\n"
        "    def inner(k):\n"
        "        global counter\n"
        "        counter += k\n"
        "        return total + k\n"
        "    return [inner(i) for i in range(n)]\n"
        "class Box:\n"
        "    size = 3\n"
        "    def grow(self):\n"
        "        return super().grow()\n"
    )
    facts = ProgramFacts.of(Program(source=source, entry="outer(2)"))
    assert facts.locals_of("outer") == {"n", "total", "inner"}
    assert facts.locals_of("inner") == {"k", "total"}  # a free variable shows; a global does not
    assert facts.locals_of("<listcomp>") == {".0", "i", "inner"}  # inner: a free variable of it
    assert facts.locals_of("<module>") == {"counter", "outer", "Box"}
    assert facts.locals_of("Box") == {"size", "grow"}
    assert facts.locals_of("grow") == {"self", "__class__"}  # super()'s cell
    assert facts.locals_of(None) == facts.names  # unknown function: any name of the program

    text = '{"n": "2", "i": "0"}'  # `i` lives in the comprehension, not in outer
    frame = FrameConstraint(facts, None, False)
    for token in (fmt.EVENT_TOKENS[(False, "line")], fmt.LINENO):
        frame.push_special(token)
    frame.push_text(b"3")
    frame.push_special(fmt.STACK)
    frame.push_text(b'[["outer", 3]]')
    frame.push_special(fmt.ARG)
    assert frame.accepts_text(text[:12].encode())
    assert not frame.accepts_text(text.encode())

    top = ProgramFacts.of(Program(source="def top(a):\n    b = a\n    return b\n", entry="top(1)"))
    assert top.locals_of("top") == {"a", "b"}  # symtable calls the module "top" too: not this function

    dynamic = ProgramFacts.of(Program(source=source + "exec('x = 1')\n", entry="outer(2)"))
    assert dynamic.locals_of("outer") == dynamic.names  # exec can bind anything anywhere


@pytest.mark.parametrize(
    ("tail", "dynamic"),
    [
        ("def show(box):\n    return vars(box)\n", False),  # an object's attributes: no locals, no functions
        ("def show(box):\n    return f'{vars(box)}'\n", False),
        ("def show():\n    return vars()\n", True),  # vars() is locals()
        ("import sys\ndef show():\n    return vars(sys)\n", True),  # a module's namespace
        ("def show(box):\n    look = vars\n    return look(box)\n", True),  # vars as a value
        ("def show(box):\n    return vars(box.inner)\n", True),  # an attribute might be a module
        ("import __main__ as me\ndef show():\n    box = me\n    return vars(box)\n", True),  # the program's own
        ("import re\nWORD = re.compile('[a-z]+')\n", False),  # a regular expression, not code
        ("import re as regex\nWORD = regex.compile('[a-z]+')\n", False),
        ("import re\nimport builtins as re\nWORD = re.compile('x = 1', 'f', 'exec')\n", True),  # not the re module
        ("import re\nre = __builtins__\nWORD = re.compile('x = 1', 'f', 'exec')\n", True),
        ("import re\nfrom builtins import compile as re\nWORD = re.compile\n", True),
        ("def show(box):\n    return box.compile('x = 1', 'f', 'exec')\n", True),  # any object's compile
    ],
)
def test_only_vars_of_an_object_keeps_the_rules(tail: str, dynamic: bool) -> None:
    source = "def g(a):\n    b = a\n    return b\n\ndef f():\n    return g(1)\n" + tail
    facts = ProgramFacts.of(Program(source=source, entry="f()"))
    assert (facts.call_lines == {}) == dynamic
    assert (facts.locals_of("g") == facts.names) == dynamic


FACT = "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n"


def fact_state(event: str, lines: list[int]) -> State:
    return State(event=event, line=lines[-1], function="fact", source=FACT.splitlines()[lines[-1] - 1],
                 stack=[StackFrame(function="fact", line=n) for n in lines], depth=len(lines) - 1, locals={"n": "2"})


def test_one_event_adds_or_leaves_one_frame_at_most() -> None:
    """Python's frames come and go one at a time: after a line event, the next event's stack is the same
    (its last line may move) or, for a call, one entry more; after a return, one entry less first. The
    shipped model once answered a step_into from `w.apply()` with a 32-frame stack of a loop."""
    facts = ProgramFacts.of(Program(source=FACT, entry="fact(3)"))

    def after(prev: State, event: str, text: str, line: int) -> Stack | None:
        return Stack.for_frame(facts, line).after_event(prev, event).feed(text.encode())

    on_4 = fact_state("line", [4, 4])
    good = after(on_4, "call", '[["fact", 4], ["fact", 4], ["fact", 1]]', 1)
    assert good is not None and good.complete
    assert after(on_4, "call", '[["fact", 4], ["fact", 1]]', 1) is None  # a call adds a frame
    assert after(on_4, "call", '[["fact", 4], ["fact", 4], ["fact", 4], ', 1) is None  # one frame only
    assert after(on_4, "call", '[["fact", 2], ', 1) is None  # the frames below stay as they were
    assert after(on_4, "call", '[["fact", 4], ["fact", 2], ', 1) is None  # the call is made from line 4
    returned = fact_state("return", [4, 4, 3])
    back = after(returned, "return", '[["fact", 4], ["fact", 4]]', 4)
    assert back is not None and back.complete
    assert after(returned, "return", '[["fact", 4], ["fact", 4], ', 4) is None  # the returning frame left
    first = after(fact_state("return", [4]), "call", '[["fact", 1]]', 1)  # a new call at the bottom
    assert first is not None and first.complete


def test_a_step_into_frame_keeps_the_stack_discipline() -> None:
    """The whole frame after step_into: the line follows the stack rule too (a line event stays in the
    frame's own function), and a frame with a frame too many is refused."""
    facts = ProgramFacts.of(Program(source=FACT, entry="fact(3)"))
    on_4 = fact_state("line", [4, 4])
    call = State(event="call", line=1, function="fact", source="def fact(n):", locals={"n": "1"}, depth=2,
                 stack=[StackFrame(function="fact", line=n) for n in (4, 4, 1)])
    walk(facts, on_4, False, fmt.frame_target(call, on_4, False), "step_into")
    deeper = call.model_copy(update={"stack": [StackFrame(function="fact", line=n) for n in (4, 4, 4, 1)], "depth": 3})
    with pytest.raises(ValueError):
        walk(facts, on_4, False, fmt.frame_target(deeper, on_4, False), "step_into")
    walk(facts, on_4, False, fmt.frame_target(deeper, on_4, False), None)  # no action known: no rule


def test_a_frame_that_changes_the_stack_length_writes_its_stack() -> None:
    """After a return, the next event (other than a call) is in the caller, one frame less: written
    without a stack it would keep the frame that returned (here, recursion keeps the function the same)."""
    facts = ProgramFacts.of(Program(source=FACT, entry="fact(3)"))
    returned = fact_state("return", [4, 4, 3])
    back = fact_state("return", [4, 4])
    walk(facts, returned, False, fmt.frame_target(back, returned, False), "step_into")
    unwritten = fmt.frame_target(back, returned, False).replace('<|stack_sep|>[["fact", 4], ["fact", 4]]', "")
    assert unwritten != fmt.frame_target(back, returned, False)
    with pytest.raises(ValueError):
        walk(facts, returned, False, unwritten, "step_into")
