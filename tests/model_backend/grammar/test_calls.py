"""Calls and returns (model_backend/grammar/calls.py): the lines that must call, the values a call
receives, returns and what callers keep; sound on real traces, tight where they should be."""

from __future__ import annotations

import ast
from itertools import pairwise
from typing import Any

import pytest

from model_backend import trace_format as fmt
from model_backend.grammar import EXPRESSION_FRAMES, FrameConstraint, ProgramFacts
from model_backend.grammar.bindings import value_repr
from model_backend.grammar.calls import INSTANCE_REPR
from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace
from model_backend.state import StackFrame, State
from tests.model_backend.grammar.support import (
    FLOW,
    NAMES,
    call_events_after_lines,
    frame_accepted,
    on_every_traced_program,
    rules_on_a_program_traced_here,
)
from tests.support.corpus import traced


def test_the_lines_step_into_must_leave_by_a_call() -> None:
    from model_backend.grammar.calls import must_call_lines

    source = ("def g(x):\n"                            # 1
              "    return x\n"                         # 2
              "def h(x):\n"                            # 3
              "    yield x\n"                          # 4
              "def f(a, b):\n"                         # 5
              "    y = g(a) + 1\n"                     # 6  a call
              "    z = a and g(b)\n"                   # 7  may not run
              "    w = g(a) if b else 0\n"             # 8  may not run
              "    if g(b) > 0:\n"                     # 9  the test runs
              "        pass\n"                         # 10
              "    while b < g(a):\n"                  # 11 every visit runs the test
              "        b += 1\n"                       # 12
              "    for i in [g(a)]:\n"                 # 13 a for header: later visits run nothing of it
              "        pass\n"                         # 14
              "    v = [i for i in a]\n"               # 15 a comprehension's own frame
              "    u = (i for i in a)\n"               # 16 a generator expression: no frame yet
              "    t = h(a)\n"                         # 17 a generator function: no frame yet
              "    s = lambda: g(a)\n"                 # 18 a lambda's body does not run
              "    r = a < b < g(a)\n"                 # 19 the end of a chain may not run
              "    q = k(a)\n"                         # 20 k is not the program's function
              "    p = g(\n"                           # 21 over two lines
              "        a)\n"                           # 22
              "    print(g(a)); g(b)\n"                # 23 two statements on the line
              "    assert a, g(b)\n"                   # 24 a message may not run
              "    o = max(a, key=len)[g(b)]\n"        # 25 a call inside anything else runs
              "    return g(a)\n")                     # 26
    assert must_call_lines(ast.parse(source)) == {6, 9, 11, 15, 25, 26}
    assert must_call_lines(ast.parse(source + "g = 3\n")) == {15}  # g may be something else


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_line_that_must_call_does(name: str) -> None:
    """On the corpus traces: the event after a line event on such a line (in a frame the line rules follow) is a
    call or an exception, in any frame."""
    program, result = traced(name)
    must_call = ProgramFacts.of(program).must_call
    for event, following in pairwise(result.events):
        if event.event == "line" and event.line in must_call and event.function not in EXPRESSION_FRAMES:
            assert following.event in ("call", "exception"), (event.function, event.line, following.event)


def test_the_grammar_asks_for_a_call_after_step_into_only() -> None:
    program = Program(source="def g(x):\n    return x\ndef f(a):\n    y = g(a)\n    return y\n", entry="f(1)")
    facts = ProgramFacts.of(program)
    prev = State(event="line", line=4, stack=[StackFrame(function="f", line=4)], locals={"a": "1"})
    line, ret, call = (fmt.EVENT_TOKENS[(False, e)] for e in ("line", "return", "call"))
    into = FrameConstraint(facts, prev, False, "step_into").allowed_specials()
    assert call in into and line not in into and ret not in into
    over = FrameConstraint(facts, prev, False, "step_over").allowed_specials()
    assert line in over


def test_the_lines_that_only_return_a_name() -> None:
    from model_backend.grammar.calls import returned_names

    source = "def f(a, b):\n    if a:\n        return a\n    c = b; return c\n    return (\n        b)\n"
    assert returned_names(ast.parse(source)) == {3: "a"}  # not two statements on a line, nor two lines


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_return_right_after_return_name_returns_its_value(name: str) -> None:
    """On the corpus traces: a frame's return event right after its line event on a `return name` line
    (no other event between, not a generator) carries the repr the name showed at that line."""
    program, result = traced(name)
    facts = ProgramFacts.of(program)
    for event, following in pairwise(result.events):
        if (event.event == "line" and event.line in facts.returns and following.event == "return"
                and following.frame_id == event.frame_id and not event.is_generator
                and facts.returns[event.line] in event.locals):
            assert following.value == event.locals[facts.returns[event.line]], (event.function, event.line)


def test_the_grammar_returns_the_named_value() -> None:
    """After step_into or step_over from `return total` (line 23) to the frame's return event, the value
    is total's; after step_return (which may run more) it is free."""
    facts = ProgramFacts.of(Program(source=FLOW, entry="f([1], 'x')"))
    prev = State(event="line", line=23, stack=[StackFrame(function="f", line=23)],
                 locals={"xs": "[1]", "d": "'x'", "total": "2.5", "x": "1", "n": "0"})

    def accepted(value: str, action: str) -> bool:
        constraint = FrameConstraint(facts, prev, False, action)
        constraint.push_frame_text(f"{fmt.EVENT_TOKENS[(False, 'return')]}{fmt.LINENO}23{fmt.SRC}{facts.lines[23]}"
                                   f"{fmt.ARG}")
        return constraint.accepts_text(value.encode()) and bool(constraint.slot.feed(value.encode()).complete)  # type: ignore[union-attr]

    for action in ("step_into", "step_over"):
        assert accepted('"2.5"', action) and not accepted('"2"', action) and not accepted("null", action)
    assert accepted('"2"', "step_return")


CALLS = """\
from collections import defaultdict
def pick(text, i, sep=", ", opts=[]):
    return text
def f(seq, n):
    txt = pick(seq, 2)
    x = pick(seq[1:], n, sep="x")
    pick(*seq)
    y = pick(seq)
    d = defaultdict(list)
    z = pick(d, d[n])
    return pick(n, 'j', opts=seq)
"""


def test_the_parameters_a_line_binds_at_its_call() -> None:
    from model_backend.grammar.calls import call_bindings

    found = call_bindings(ast.parse(CALLS), 200)
    assert found == {
        (5, "pick"): ((("text", ("name", "seq")), ("i", ("literal", "2")), ("sep", ("literal", "', '")),
                       ("opts", None)), frozenset()),
        (6, "pick"): ((("text", ("expression", "seq[1:]")), ("i", ("name", "n")), ("sep", ("literal", "'x'")),
                       ("opts", None)), frozenset({"seq"})),
        (10, "pick"): ((("text", ("name", "d")), ("i", ("expression", "d[n]")), ("sep", ("literal", "', '")),
                        ("opts", None)), frozenset({"d", "n"})),
        (11, "pick"): ((("text", ("name", "n")), ("i", ("literal", "'j'")), ("sep", ("literal", "', '")),
                        ("opts", ("name", "seq"))), frozenset()),
    }  # not 7 (`*seq`) nor 8 (a missing argument: a TypeError, no call)
    assert call_bindings(ast.parse(CALLS + "class K:\n    pass\n"), 200) == found  # a plain class runs no code of its own
    assert call_bindings(ast.parse(CALLS + "class K:\n    def __eq__(self, other):\n        return True\n"), 200) == {}  # its `==` may be the program's


def _calls_checked(program: Program, events: list, objects: bool = True) -> int:
    """On a trace (`objects`: written in trace format 3, as run_trace writes by default): each call event
    right after a line event of a line in facts.calls (for that function) holds the bound values the grammar
    would force; returns how many were checked."""
    checked = 0
    for event, following, (bound, _) in call_events_after_lines(ProgramFacts.of(program, objects).calls, events):
        if any(source is not None and source[0] == "receiver" and not INSTANCE_REPR.match(event.locals.get(source[1], ""))
               for _, source in bound):
            continue  # the rule's guard: `self` comes only from a variable that holds an instance
        for param, source in bound:
            if source is not None and source[0] == "expression":
                want = value_repr(ast.parse(source[1], mode="eval").body, event.locals, 200)
                assert want is None or following.locals.get(param) == want, (event.line, param, want)
            elif source is not None and (source[0] == "literal" or source[1] in event.locals):
                want = source[1] if source[0] == "literal" else event.locals[source[1]]
                assert following.locals.get(param) == want, (event.line, param, following.locals.get(param), want)
        checked += 1
    return checked


test_every_traced_call_holds_the_values_its_line_binds = on_every_traced_program(_calls_checked)


def test_a_program_traced_here_binds_its_calls() -> None:
    """The defaultdict lookup in line 10's arguments inserts a key into d before pick is called: the
    guard (d's value is not a builtin one) keeps the rule off there."""
    program = Program(source=CALLS.replace("    pick(*seq)\n    y = pick(seq)\n", ""), entry="f([1, 2], 3)")
    result = run_trace(program)
    assert _calls_checked(program, result.events) == 3
    line, call = next((a, b) for a, b in pairwise(result.events) if a.event == "line" and a.line == 8 and b.event == "call")
    assert line.locals["d"] != call.locals["text"]


METHODS = """\
class Box:
    def __init__(self, n):
        self.n = n
    def add(self, k, scale=2):
        self.n += k * scale
        return self.n
def main(x):
    b = Box(x)
    y = b.add(3)
    b.add(x + 1, scale=1)
    kind = Box
    return kind.add(b, y)
"""


def test_a_method_call_binds_self_to_its_receiver() -> None:
    """`NAME.method(...)` of an instance method defined once binds `self` to NAME's object (a "receiver",
    which the rule checks holds an instance); `Class.method(obj, ...)` binds nothing of the kind."""
    from model_backend.grammar.calls import call_bindings

    assert call_bindings(ast.parse(METHODS), 200) == {
        (8, "__init__"): ((("self", ("literal", "Box()")), ("n", ("name", "x"))), frozenset()),  # a new instance
        (9, "add"): ((("self", ("receiver", "b")), ("k", ("literal", "3")), ("scale", ("literal", "2"))), frozenset()),
        (10, "add"): ((("self", ("receiver", "b")), ("k", ("expression", "x + 1")), ("scale", ("literal", "1"))),
                      frozenset({"x"})),
        # checked when it runs: `kind` holds the class, so the rule stays off (below)
        (12, "add"): ((("self", ("receiver", "kind")), ("k", ("name", "b")), ("scale", ("name", "y"))), frozenset()),
    }
    for shadowing in ("    b.add = print\n", "def add(k):\n    return k\n", "    setattr(b, 'add', print)\n"):
        assert set(call_bindings(ast.parse(METHODS.replace("    kind = Box\n", shadowing)), 200)) == {(8, "__init__")}
    for other in ("class Box(dict):", "class Box:\n    __slots__ = ('n',)", "Box = list\nclass Box:"):
        assert (8, "__init__") not in call_bindings(ast.parse(METHODS.replace("class Box:", other)), 200)
    assert call_bindings(ast.parse(METHODS), 200, objects=False)[(8, "__init__")][0][0] == (
        "self", ("literal", "<__main__.Box object>"))  # trace format 2 writes it as Python does
    program = Program(source=METHODS, entry="main(1)")
    assert _calls_checked(program, run_trace(program).events) == 3
    assert _calls_checked(program, run_trace(program, Limits(objects=False)).events, objects=False) == 3

    facts = ProgramFacts.of(program)

    def accepted(receiver: str, locals_text: str) -> bool:
        prev = State(event="line", line=9, stack=[StackFrame(function="main", line=9)], locals={"x": "1", "b": receiver})
        constraint = FrameConstraint(facts, prev, False, "step_into")
        constraint.push_frame_text(f"{fmt.EVENT_TOKENS[(False, 'call')]}{fmt.LINENO}4{fmt.STACK}"
                                   f'[["main", 9], ["add", 4]]{fmt.SRC}{facts.lines[4]}{fmt.ARG}')
        return constraint.accepts_text(locals_text.encode()) and bool(constraint.slot.feed(locals_text.encode()).complete)  # type: ignore[union-attr]

    right = '{"self": "Box(n=1)", "k": "3", "scale": "2"}'
    assert accepted("Box(n=1)", right)
    assert not accepted("Box(n=1)", right.replace("n=1", "n=2")) and not accepted("Box(n=1)", right.replace('"3"', '"4"'))
    free = '{"self": "4", "k": "3", "scale": "2"}'  # what a class in NAME would bind (`self` is the first argument)
    assert accepted("<class '__main__.Box'>", free) and not accepted("Box(n=1)", free)


def test_the_grammar_writes_the_values_a_call_receives() -> None:
    facts = ProgramFacts.of(Program(source=CALLS, entry="f([1, 2], 3)"))
    prev = State(event="line", line=5, stack=[StackFrame(function="f", line=5)], locals={"seq": "[1, 2]", "n": "3"})

    def accepted(locals_text: str, action: str = "step_into") -> bool:
        constraint = FrameConstraint(facts, prev, False, action)
        constraint.push_frame_text(f"{fmt.EVENT_TOKENS[(False, 'call')]}{fmt.LINENO}2{fmt.STACK}"
                                   f'[["f", {prev.line}], ["pick", 2]]{fmt.SRC}{facts.lines[2]}{fmt.ARG}')
        return constraint.accepts_text(locals_text.encode()) and bool(constraint.slot.feed(locals_text.encode()).complete)  # type: ignore[union-attr]

    right = '{"text": "[1, 2]", "i": "2", "sep": "\', \'", "opts": "[]"}'
    assert accepted(right) and accepted('{"text": "[1, 2]", "i": "2", "sep": "\', \'", "opts": "[5]"}')
    assert not accepted(right.replace('"2"', '"3"')) and not accepted(right.replace("[1, 2]", "[2]"))
    assert not accepted('{"i": "2", "sep": "\', \'", "opts": "[]"}')  # text left out
    prev = State(event="line", line=6, stack=[StackFrame(function="f", line=6)], locals={"seq": "[1, 2]", "n": "3"})
    assert accepted('{"text": "[2]", "i": "3", "sep": "\'x\'", "opts": "[]"}')  # `seq[1:]`, from evaluation.py
    assert not accepted('{"text": "[1]", "i": "3", "sep": "\'x\'", "opts": "[]"}')
    prev = State(event="line", line=6, stack=[StackFrame(function="f", line=6)], locals={"seq": "[1, 2...", "n": "3"})
    assert accepted('{"text": "[1]", "i": "3", "sep": "\'x\'", "opts": "[]"}')  # a cut list: free
    # Line 10, `pick(d, d[n])`: d is a defaultdict, whose lookup inserts a key first: no value is forced.
    prev = State(event="line", line=10, stack=[StackFrame(function="f", line=10)],
                 locals={"seq": "[1, 2]", "n": "3", "d": "defaultdict(<class 'list'>, {})"})
    inserted = "defaultdict(<class 'list'>, {3: []})"
    assert accepted(f'{{"text": "{inserted}", "i": "[]", "sep": "\', \'", "opts": "[]"}}')


RETURNS = """\
class Box:
    def __init__(self, n):
        self.n = n


total = 0


def bump(k):
    global total
    total += k
    return k + 1


def digits(text, depth):
    if not text:
        return depth
    head = text[0]
    rest = digits(text[1:], depth + 1)
    box = Box(rest)
    shown = bump(rest) + len(head)
    size = bump(len(head))
    return box.n + size + shown


def outer(word):
    count = 0

    def inner(x):
        nonlocal count
        count += x
        return count

    first = inner(2)
    again = inner(len(word))
    grid = [[k for k in range(2)] for _ in range(3)]
    return first + again + digits(word, 0) + len(grid)
"""


def test_the_lines_that_only_bind_a_call_result() -> None:
    from model_backend.grammar.calls import call_results

    assert call_results(ast.parse(RETURNS)) == {
        19: ("rest", "digits"), 20: ("box", "Box"), 22: ("size", "bump"), 34: ("first", "inner"), 35: ("again", "inner"),
    }  # not 21 (the call's result is added to), 11 (`total += k` holds no call)


def test_a_program_traced_here_returns_to_callers_that_kept_their_values() -> None:
    """Recursion (each caller keeps its own `text` and `depth`), a class's `__init__` (whose None is not
    what `box` gets), a callee that rebinds a global and one that rebinds its caller's variable through
    `nonlocal` (the rule must leave `total` and `count` free), and a comprehension that goes on binding
    `_` on its line after the inner one returns (the rule is off for comprehension frames)."""
    assert rules_on_a_program_traced_here(RETURNS, "outer('abc')")["returns"] >= 8


def test_the_grammar_restores_what_a_caller_held_before_the_call() -> None:
    facts = ProgramFacts.of(Program(source=RETURNS, entry="outer('ab')"))
    caller = State(event="line", line=19, stack=[StackFrame(function="outer", line=37), StackFrame(function="digits", line=19)],
                   locals={"text": "'ab'", "depth": "0", "head": "'a'"})
    inside = State(event="line", line=16, stack=[*caller.stack, StackFrame(function="digits", line=16)],
                   locals={"text": "'b'", "depth": "1"})
    returning = State(event="return", line=23, stack=[*caller.stack, StackFrame(function="digits", line=23)],
                      locals={"text": "'b'", "depth": "1", "rest": "2", "head": "'b'"}, value="7")

    def accepted(locals_text: str, trail: tuple[State, ...] = (caller, inside)) -> bool:
        constraint = FrameConstraint(facts, returning, False, "step_over", tuple((state, "step_into") for state in trail))
        frame = (f"{fmt.EVENT_TOKENS[(False, 'line')]}{fmt.LINENO}20{fmt.STACK}"
                 f'[["outer", 37], ["digits", 20]]{fmt.ARG}{locals_text}{fmt.SRC}{facts.lines[20]}{fmt.END_OF_FRAME}')
        return frame_accepted(constraint, frame)

    assert accepted('{"text": "\'ab\'", "depth": "0", "head": "\'a\'", "rest": "7"}')
    assert not accepted('{"text": "\'b\'", "depth": "0", "head": "\'a\'", "rest": "7"}')  # the callee's text
    assert not accepted('{"text": "\'ab\'", "depth": "0", "head": "\'a\'", "rest": "2"}')  # not what it returned
    assert not accepted('{"text": "\'ab\'", "depth": "0", "rest": "7"}')  # a variable left out
    assert accepted('{"text": "\'b\'", "depth": "5", "rest": "2"}', trail=(inside,))  # the caller's call not in the trail


CALLER_STEPS = """\
def helper(res, n):
    return res[::-1] if n else res
def rev(xs):
    if not xs:
        return []
    tail = rev(xs[1:])
    return tail + [xs[0]]
def f(word, counts):
    kept = {k: v for k, v in counts.items() if v > 0}
    pair = helper((len(word), 5), len(word))
    i = word.index('k')
    try:
        j = word.index('z')
    except ValueError:
        j = -1
    sizes = helper([len(c) for c in word], 0)
    return rev([i, j]), kept, pair, sizes
"""


def _walked(source: str, entry: str) -> tuple[ProgramFacts, list[State]]:
    """The program's facts and every state of a walk of step_into from its start to its end."""
    from model_backend.mdp import TraceMDP
    from model_backend.state import Action

    program = Program(source=source, entry=entry)
    mdp = TraceMDP(run_trace(program))
    walk = [mdp.start_position()]
    while walk[-1] != mdp.exit_position and len(walk) < 2000:
        walk.append(mdp.step(walk[-1], Action(kind="step_into"))[0])
    return ProgramFacts.of(program), [mdp.state(position) for position in walk]


def test_the_grammar_computes_calls_returns_comprehensions_and_what_cannot_raise() -> None:
    """These rules, each on the true step and on a wrong one: a call's arguments that builtins
    compute (`helper((len(word), 5), len(word))`), a caller that returns right after its callee only from a
    line that can end it, what a comprehension returns, and no exception from a line whose value evaluation.py
    computes."""
    from model_backend.grammar.calls import call_bindings

    bound, reads = call_bindings(ast.parse(CALLER_STEPS), 200)[(10, "helper")]
    assert bound == (("res", ("expression", "(len(word), 5)")), ("n", ("expression", "len(word)")))
    assert reads == {"word"}  # `len` is no variable: the caller's values can tell the arguments
    facts, states = _walked(CALLER_STEPS, "f('kwk', {'a': 1, 'b': 0})")

    def check(index: int, wrong: dict[str, Any] | None = None) -> FrameConstraint:
        """The step from states[index] to the next: the true frame accepted, the wrong one refused."""
        prev, state = states[index], states[index + 1]
        trail = tuple((before, "step_into") for before in states[:index])

        def accepted(frame: State) -> bool:
            return frame_accepted(FrameConstraint(facts, prev, False, "step_into", trail),
                                   fmt.frame_target(frame, prev, False)[len(fmt.FRAME):])

        assert accepted(state) and (wrong is None or not accepted(state.model_copy(update=wrong)))
        return FrameConstraint(facts, prev, False, "step_into", trail)

    def at(event: str, line: int, function: str, nth: int = 0) -> int:
        return [i for i, s in enumerate(states) if (s.event, s.line, s.function) == (event, line, function)][nth]

    check(at("line", 10, "f"), {"locals": {"res": "(5, 3)", "n": "3"}})
    check(at("line", 9, "<dictcomp>", 2), {"value": "{'a': 1, 'b': 0}"})  # the last element taken: it returns
    # a comprehension passed to a function runs before it, on what the caller showed
    first = at("line", 16, "<listcomp>")
    check(first, {"locals": states[first + 1].locals | {"c": "'w'"}})
    check(at("line", 16, "<listcomp>", 3), {"value": "[1, 1]"})
    # rev's innermost return to its caller on `tail = rev(xs[1:])`: that line cannot end the caller, and
    # the caller goes on to a line that can follow it (7), not to the line it called from
    after_return = check(at("return", 5, "rev"), {"line": 6, "source": facts.lines[6], "stack": [
        *states[at("return", 5, "rev") + 1].stack[:-1], StackFrame(function="rev", line=6)]})
    assert fmt.EVENT_TOKENS[(False, "return")] not in after_return.allowed_specials()
    ends_caller = FrameConstraint(facts, states[at("return", 7, "rev", 1)], False, "step_into")
    assert fmt.EVENT_TOKENS[(False, "return")] in ends_caller.allowed_specials()  # `return rev([i, j]), ...`
    exception = fmt.EVENT_TOKENS[(False, "exception")]
    assert exception not in check(at("line", 11, "f"), {"locals": states[at("line", 12, "f")].locals | {"i": "1"}}).allowed_specials()
    assert exception in FrameConstraint(facts, states[at("line", 13, "f")], False, "step_into").allowed_specials()


CALL_RESULTS = """\
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

    tree = ast.parse(CALL_RESULTS)
    assert pure_functions(tree) == {"collect", "fact"}  # main calls grow
    assert "grow" not in pure_functions(tree) and "alias" not in pure_functions(tree)  # through a parameter, an alias
    assert not pure_functions(ast.parse("class K:\n    def __eq__(self, other):\n        return True\n" + CALL_RESULTS))  # an object's operators may be the program's
    assert pure_functions(ast.parse("class A:\n    pass\n" + CALL_RESULTS)) == pure_functions(ast.parse(CALL_RESULTS))
    assert "fact" not in pure_functions(ast.parse(CALL_RESULTS.replace("1 if n < 2", "grow([]) if n < 2")))  # calls a grow
    passed = ("def adds(xs, ys):\n    list(map(xs.append, ys))\n\n\n"
              "def keyed(ws, d):\n    return sorted(ws, key=str.lower) + sorted(d, key=d.get)\n")
    assert pure_functions(ast.parse(passed)) == {"keyed"}  # a mutating method passed on, to be called by map


def test_the_lines_whose_value_follows_from_their_one_call() -> None:
    from model_backend.grammar.calls import call_expressions

    found = {line: (names, function, ast.unparse(e)) for line, (names, function, e) in call_expressions(ast.parse(CALL_RESULTS)).items()}
    assert found[26] == (None, "fact", "1 if n < 2 else n * <returned>")
    assert found[32] == (("total",), "fact", "total + <returned> * 2")
    assert found[33] == (("best",), "fact", "max(total, <returned>)")
    assert found[35] == (("parts",), "collect", "<returned>")
    assert found[37] == (None, "fact", "{'total': total + <returned>, 'xs': xs}")
    assert found[34] == (("size",), "grow", "len(xs) + <returned>")  # the rule checks what grow may change


def test_a_program_traced_here_binds_and_returns_what_its_calls_give() -> None:
    """Every true step is accepted with the values after calls forced, and the rule governs steps back from
    fact (recursive), collect and grow."""
    counts = rules_on_a_program_traced_here(CALL_RESULTS, "main()")
    assert counts["after_call"] >= 6, counts


def test_the_grammar_writes_the_value_a_line_gets_from_its_call() -> None:
    facts = ProgramFacts.of(Program(source=CALL_RESULTS, entry="main()"))
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
        return frame_accepted(constraint, frame)

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
        return frame_accepted(constraint, frame)

    assert after_fact('{"xs": "[3, 1]", "total": "48"}')
    assert not after_fact('{"xs": "[3, 1]", "total": "24"}')
    assert not after_fact('{"xs": "[3]", "total": "48"}')  # fact is pure: xs stays as it was


OBJECTS = """\
from dataclasses import dataclass


class Shape:
    def __init__(self, size):
        self.size = size

    def area(self):
        return self.size * self.size

    def grow(self, by):
        self.size += by


class Square(Shape):
    def describe(self):
        return "square"


@dataclass
class Box:
    items: list

    def add(self, item):
        self.items.append(item)


def main(n):
    s = Shape(n)
    q = Square(n + 1)
    b = Box([])
    total = s.area() + q.area()
    q.grow(2)
    if q.area() > 10:
        b.add(q.describe())
    xs = []
    xs.append(3)
    b.add(len(xs)) if n else None
    return total
"""


def test_a_plain_class_with_its_own_init_must_be_called() -> None:
    """`Shape(n)` runs Shape's `__init__`; a subclass's call (its base's `__init__` found through the
    program's classes) and a dataclass's generated `__init__` are left free."""
    from model_backend.grammar.calls import must_call_lines

    lines = must_call_lines(ast.parse(OBJECTS))
    assert 29 in lines and 30 not in lines and 31 not in lines
    with_new = OBJECTS.replace("    def area(self):", "    def __new__(cls, size):\n        return 1\n\n    def area(self):")
    assert 29 not in must_call_lines(ast.parse(with_new))  # __new__ may make no Shape: no __init__ runs


def test_the_lines_that_call_a_method_on_a_names_object() -> None:
    """`NAME.method(...)` where it always runs, with the classes whose instances find the method: Square
    inherits Shape's; `xs.append` is not a method of the program; a branch of `x if c else y` may not run."""
    from model_backend.grammar.calls import inheriting, method_call_lines

    tree = ast.parse(OBJECTS)
    assert inheriting(tree) == {"Shape": {"Shape", "Square"}, "Square": {"Square"}, "Box": {"Box"}}
    assert method_call_lines(tree) == {
        32: (("q", frozenset({"Shape", "Square"})), ("s", frozenset({"Shape", "Square"}))),
        33: (("q", frozenset({"Shape", "Square"})),),
        34: (("q", frozenset({"Shape", "Square"})),),
        35: (("b", frozenset({"Box"})), ("q", frozenset({"Square"}))),
    }
    assert method_call_lines(ast.parse(OBJECTS.replace("class Box:", "class Box:\n    def __eq__(self, other):\n"
                                                                      "        return True\n"))) == {}
    assert set(method_call_lines(ast.parse(OBJECTS + "Shape.area = len\n"))) == {33, 35}  # area is rebound
    assert 32 not in method_call_lines(ast.parse(OBJECTS.replace("s.area()", "(s := q).area()")))


def test_step_into_a_method_call_on_an_instance_is_a_call() -> None:
    """Traced here: every step_into and step_over frame is accepted, and a step_into from a line that calls a
    method on a name showing an instance (`Shape(size=3)`, `Box(items=[])`, `<__main__.Box object>`) offers
    only a call event (or an exception); on a name that shows something else, a line event stays open."""
    from model_backend.grammar.calls import instance_class

    counts = rules_on_a_program_traced_here(OBJECTS, "main(2)")
    assert counts
    facts = ProgramFacts.of(Program(source=OBJECTS, entry="main(2)"), objects=True)
    line, call, exception = (fmt.EVENT_TOKENS[(False, e)] for e in ("line", "call", "exception"))
    shown = {"n": "2", "s": "Shape(size=2)", "q": "Square(size=3)", "b": "Box(items=[])"}
    for number in (32, 33, 34, 35):
        prev = State(event="line", line=number, stack=[StackFrame(function="main", line=number)], locals=shown)
        allowed = FrameConstraint(facts, prev, False, "step_into").allowed_specials()
        assert call in allowed and exception in allowed and line not in allowed, number
        assert line in FrameConstraint(facts, prev, False, "step_over").allowed_specials()
    prev = State(event="line", line=33, stack=[StackFrame(function="main", line=33)], locals={**shown, "q": "[1]"})
    assert line in FrameConstraint(facts, prev, False, "step_into").allowed_specials()
    assert [instance_class(t) for t in ("<__main__.Box object>", "Box(items=[])", "deque([1])", "'Box(1)'", None)] == [
        "Box", "Box", None, None, None]
