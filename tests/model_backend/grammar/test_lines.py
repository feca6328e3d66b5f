"""Lines and branches (model_backend/grammar/lines.py): which line can follow which, the order of a
statement's line events, and branch tests computed from shown values; sound on real traces, tight where
they should be."""

from __future__ import annotations

import ast

import pytest

from model_backend import trace_format as fmt
from model_backend.grammar import EXPRESSION_FRAMES, FrameConstraint, ProgramFacts
from model_backend.grammar.lines import call_event_lines, frame_ends, next_lines, truth
from model_backend.program import Program
from model_backend.sandbox import run_trace
from model_backend.state import StackFrame, State
from tests.model_backend.grammar.support import FLOW, NAMES, parsed_expression, rules_on_a_program_traced_here
from tests.support.corpus import traced


def line_pairs(events: list) -> list[tuple[str, int, int]]:
    """(function, line, next line) for each two line events of one frame in a row (other frames' events
    between them allowed, as step_over skips them)."""
    last: dict[int, int] = {}
    pairs = []
    for event in events:
        if event.event == "line":
            if event.frame_id in last:
                pairs.append((event.function, last[event.frame_id], event.line))
            last[event.frame_id] = event.line
        elif event.event == "return":
            last.pop(event.frame_id, None)
    return pairs


def returns_after_lines(events: list) -> list[tuple[str, int]]:
    """(function, line) of each line event whose frame's next event is its return."""
    last: dict[int, int | None] = {}
    found = []
    for event in events:
        if event.event == "return" and last.get(event.frame_id) is not None:
            found.append((event.function, last[event.frame_id]))
        last[event.frame_id] = event.line if event.event == "line" else None
    return found


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_line_follows_a_line_it_may_follow(name: str) -> None:
    program, result = traced(name)
    tree = ast.parse(program.source)
    following, ends = next_lines(tree), frame_ends(tree)
    followed = [(f, a, b) for f, a, b in line_pairs(result.events) if f not in EXPRESSION_FRAMES]
    assert [(f, a, b) for f, a, b in followed if a in following and b not in following[a]] == []
    returned = [(f, a) for f, a in returns_after_lines(result.events) if f not in EXPRESSION_FRAMES]
    assert [(f, a) for f, a in returned if a in following and a not in ends] == []


@pytest.mark.parametrize("name", NAMES)
def test_every_traced_call_event_is_on_a_line_its_function_starts_on(name: str) -> None:
    program, result = traced(name)
    starts = call_event_lines(ast.parse(program.source))
    calls = [(e.function, e.line) for e in result.events if e.event == "call" and e.function in starts]
    assert [(f, line) for f, line in calls if line not in starts[f]] == []


CALLS = """\
import functools


def deco(f):
    @functools.wraps(f)
    def inner(*a):
        return f(*a)
    return inner


@deco
def add(
        x,
        y):
    total = x + y
    return total


def gen(n):
    yield n
    yield n + 1


class Box:
    @staticmethod
    def make(n):
        return [n] * 2


def main():
    s = add(1, 2) + len(Box.make(2))
    return s + sum(gen(3))
"""


def test_a_frame_starts_on_its_first_line_and_a_generator_resumes_where_it_stopped() -> None:
    starts = call_event_lines(ast.parse(CALLS))
    assert starts["add"] == {11}  # its decorator's line, not the `def` line, nor a line of its body
    assert starts["inner"] == {5} and starts["deco"] == {4} and starts["make"] == {25} and starts["Box"] == {24}
    assert "gen" not in starts  # it resumes on a `yield` line
    result = run_trace(Program(source=CALLS, entry="main()"))
    calls = {(e.function, e.line) for e in result.events if e.event == "call"}
    assert {("add", 11), ("inner", 5), ("make", 25), ("gen", 19), ("gen", 20), ("gen", 21)} <= calls


def test_step_into_a_call_offers_only_the_callees_first_lines() -> None:
    facts = ProgramFacts.of(Program(source=CALLS, entry="main()"))
    prev = State(event="line", line=30, function="main", stack=[StackFrame(function="main", line=30)])
    constraint = FrameConstraint(facts, prev, False, "step_into")
    constraint.push_special(fmt.EVENT_TOKENS[(False, "call")])
    constraint.push_special(fmt.LINENO)
    offered = {n for n in facts.lines if constraint.accepts_text(str(n).encode())
               and constraint.slot.feed(str(n).encode()).complete}  # type: ignore[union-attr]
    assert 5 in offered and 11 in offered  # deco's wrapper, and add itself
    assert not offered & {6, 12, 14, 15, 26}  # a line of a body, or a `def` under its decorator


def test_the_lines_that_can_follow_each_line() -> None:
    following = next_lines(ast.parse(FLOW))
    assert following[2] == {3}  # straight on: never a skipped line
    assert following[3] == {4, 10}  # into the loop, or past it
    assert following[4] == {5, 6}  # the if, or the elif
    assert following[5] == {3}  # the end of the body goes back to the header
    assert following[7] == {3}  # continue
    assert following[9] == {3}
    assert following[12] == {13}
    assert following[13] == {14, 11, 12}  # `while True:` may jump straight back into its body
    assert following[14] == {15}  # break
    assert following[16] == {15}  # the with's exit runs on its header line
    assert following[15] == {16, 17, 18}  # into the body; after the exit, the try (its line, or its body's)
    assert following[18] == {19, 22}  # the handler, or the finally
    assert following[20] == {19, 22}  # the finally (19: the handler's `as` name is cleared on its line)
    assert following[22] == {23}
    assert following[23] == set()  # a return: the next event is the return
    assert frame_ends(ast.parse(FLOW)) == {1, 15, 19, 22, 23}  # (generous: a with's exit, a finally, an except)


def test_a_program_traced_here_never_leaves_the_rule() -> None:
    """The rule on a trace made now, in the sandbox, of every branch of FLOW."""
    source = FLOW + "\n\nimport os\nfor data in ([1, 3, -1, 0], [], [5]):\n    f(data, os.devnull)\n"
    program = Program(source=source)
    result = run_trace(program)
    following = next_lines(ast.parse(source))
    pairs = [(f, a, b) for f, a, b in line_pairs(result.events) if f == "f"]
    assert len({(a, b) for _, a, b in pairs}) >= 20
    assert [(a, b) for _, a, b in pairs if b not in following[a]] == []


def test_the_grammar_applies_it_after_step_into_and_step_over_only() -> None:
    facts = ProgramFacts.of(Program(source=FLOW, entry="f([1], 'x')"))
    prev = State(event="line", line=2, stack=[StackFrame(function="f", line=2)], locals={"xs": "[1]", "d": "'x'"})

    def lines_offered(action: str | None, inverse: bool = False) -> set[int]:
        constraint = FrameConstraint(facts, prev, inverse, action)
        constraint.push_special(fmt.EVENT_TOKENS[(inverse, "line")])
        constraint.push_special(fmt.LINENO)
        return {n for n in facts.lines if constraint.accepts_text(str(n).encode())
                and (constraint.slot.feed(str(n).encode()).complete)}  # type: ignore[union-attr]

    assert lines_offered("step_into") == {3}
    assert lines_offered("step_over") == {3}
    assert lines_offered("step_return") >= {3, 5, 10}
    assert lines_offered(None) >= {3, 5, 10}
    # backwards, only a line that the later line can follow; none can precede line 2 (the frame's first:
    # its call event comes before it), so there the rule gives way rather than leave no line
    assert lines_offered("inv_step_into", inverse=True) >= {3, 5, 10}
    assert lines_offered("inv_step_call", inverse=True) >= {3, 5, 10}  # a jump: any line
    prev = prev.model_copy(update={"line": 4, "stack": [StackFrame(function="f", line=4)], "locals": {
        "xs": "[1]", "d": "'x'", "total": "0", "x": "1"}})
    assert lines_offered("inv_step_into", inverse=True) == {3}  # `for x in xs:` (never `else:`, line 8)
    assert lines_offered("inv_step_over", inverse=True) == {3}

    def events_offered(line: int, action: str | None) -> set[str]:
        state = prev.model_copy(update={"line": line, "stack": [StackFrame(function="f", line=line)]})
        return set(FrameConstraint(facts, state, False, action).allowed_specials())

    line_token, return_token = fmt.EVENT_TOKENS[(False, "line")], fmt.EVENT_TOKENS[(False, "return")]
    assert line_token in events_offered(2, "step_into") and return_token not in events_offered(2, "step_into")
    assert line_token not in events_offered(23, "step_over") and return_token in events_offered(23, "step_over")
    assert {line_token, return_token} <= events_offered(2, "step_return")


ORDERS = """\
def roman(num):
    tens = ['', 'X', 'XX']
    ones = ['', 'I', 'II']
    return (
        tens[num // 10]
        + ones[num % 10]
        + tens[0]
    )


def swap(chars, i, j):
    chars[i], chars[j] = (
        chars[j],
        chars[i],
    )
    pick = (chars[0] if i else
            chars[1])
    total = sum(
        [len(c) for c in chars]
    )
    return pick, total


def main():
    out = [roman(n) for n in (12, 21)]
    for k in range(2):
        out.append(roman(k))
    return swap(out, 0, 1)
"""


def test_the_order_of_line_events_inside_a_statement() -> None:
    from model_backend.grammar.lines import statement_line_orders

    found = statement_line_orders(ORDERS, ast.parse(ORDERS))
    chain = ((5, 6, 5, 7, 5, 4), (4, 8))
    pair = ((13, 14, 12), (12, 15))
    assert found == {line: chain for line in range(4, 9)} | {line: pair for line in range(12, 16)}
    # not 16-17 (a conditional expression jumps), 18-20 (a comprehension is code of its own)


def test_a_program_traced_here_keeps_the_order_of_its_statements_lines() -> None:
    assert rules_on_a_program_traced_here(ORDERS, "main()")["ordered"] >= 20


def test_the_grammar_follows_the_order_of_a_statements_lines() -> None:
    facts = ProgramFacts.of(Program(source=ORDERS, entry="main()"))
    stack = [StackFrame(function="main", line=27)]

    def at(line: int, event: str = "line") -> State:
        return State(event=event, line=line, stack=[*stack, StackFrame(function="roman", line=line)], locals={"num": "1"})

    def lines_after(prev: State, *trail: State) -> set[int]:
        constraint = FrameConstraint(facts, prev, False, "step_over", tuple((state, "step_over") for state in trail))
        constraint.push_special(fmt.EVENT_TOKENS[(False, "line")])
        constraint.push_special(fmt.LINENO)
        return {n for n in range(1, 30) if constraint.accepts_text(str(n).encode())
                and constraint.slot.feed(str(n).encode()).complete}  # type: ignore[union-attr]

    assert lines_after(at(5), at(3)) == {6}  # the statement's first event
    assert lines_after(at(5), at(3), at(5), at(6)) == {7}  # its second time on line 5
    assert lines_after(at(5), at(3), at(5), at(6), at(5), at(7)) == {4}  # the third: `return (` on line 4
    assert lines_after(at(6), at(5)) == {5}
    assert lines_after(at(5)) == {6, 7, 4}  # the trail does not tell which time: any
    assert lines_after(at(3)) == {5}  # into the statement: its first event, not any of its lines
    assert lines_after(at(6)) == {5}  # inside it, with no trail: what comes next in the order


def test_a_step_enters_a_statement_at_its_first_event() -> None:
    """lines.next_lines, as the facts hold it: a step into a statement whose line events follow its code
    lands on its first event line (line 18 of a dict display over lines 17-20, not the `}` of line 20)."""
    source = "def f():\n    n = 1\n    table = {\n        'a': (1, 2),\n        'b': (3, n),\n    }\n    return table\n"
    facts = ProgramFacts.of(Program(source=source, entry="f()"))
    assert facts.line_orders[3][0] == (4, 5, 3)
    assert facts.next_lines[2] == {4} and facts.next_lines[3] == {7}
    assert facts.next_lines[4] == {5, 7}  # the next in the order, or out of it (a raise, to a handler)
    program = Program(source=source, entry="f()")
    assert [e.line for e in run_trace(program).events if e.event == "line"] == [2, 4, 5, 3, 7]


TRUTHS = """\
def drain(queue, seen):
    done = []
    while queue:
        item = queue.pop()
        if not seen:
            seen = {item}
        elif item:
            done.append(item)
        else:
            pass
    if done:
        return done
"""


def test_the_tests_of_a_names_truth() -> None:
    from model_backend.grammar.lines import TruthTest, truth_tests

    assert truth_tests(ast.parse(TRUTHS)) == {
        3: TruthTest("queue", False, frozenset({4}), frozenset({11})),
        5: TruthTest("seen", True, frozenset({6}), frozenset({7})),
        7: TruthTest("item", False, frozenset({8}), frozenset({10})),
        11: TruthTest("done", False, frozenset({12}), frozenset()),  # false: the frame ends
    }


def test_a_program_traced_here_takes_the_branches_its_values_show() -> None:
    counts = rules_on_a_program_traced_here(TRUTHS, "drain([[], 0, 'a', 2.5, ()], set())")
    assert counts["truths"] >= 12
    assert rules_on_a_program_traced_here(TRUTHS, "drain([], {1})")["truths"] >= 2


def test_the_grammar_takes_the_branch_a_names_value_says() -> None:
    facts = ProgramFacts.of(Program(source=TRUTHS, entry="drain([], set())"))

    def goes_to(line: int, action: str = "step_over", **shown: str) -> tuple[set[int], bool]:
        prev = State(event="line", line=line, stack=[StackFrame(function="drain", line=line)], locals=shown)
        constraint = FrameConstraint(facts, prev, False, action, ())
        returns = fmt.EVENT_TOKENS[(False, "return")] in constraint.allowed_specials()
        if fmt.EVENT_TOKENS[(False, "line")] not in constraint.allowed_specials():
            return set(), returns
        constraint.push_special(fmt.EVENT_TOKENS[(False, "line")])
        constraint.push_special(fmt.LINENO)
        return {n for n in range(1, 14) if constraint.accepts_text(str(n).encode())
                and constraint.slot.feed(str(n).encode()).complete}, returns  # type: ignore[union-attr]

    assert goes_to(3, queue="[0]") == ({4}, False)
    assert goes_to(3, "step_into", queue="[]") == ({11}, False)
    assert goes_to(5, seen="set()") == ({6}, False)
    assert goes_to(5, seen="{1}") == ({7}, False)
    assert goes_to(7, item="''") == ({10}, False)
    assert goes_to(7, item="'a'") == ({8}, False)
    assert goes_to(11, done="[]") == (set(), True)
    assert goes_to(11, done="[2.5]") == ({12}, False)
    assert goes_to(7, item="deque([1])") == ({8, 10}, False)  # a repr that does not tell: free
    assert goes_to(7, item="'abcdefghij...") == ({8, 10}, False)


CONDITIONS = [
    ("i.isdigit()", {"i": "100"}),
    ("i.isdigit()", {"i": "apples"}),
    ("len(word) == 1 or len(word) % 2 == 0", {"word": "abc"}),
    ("left < right and s[right] not in vowels", {"left": 0, "right": 2, "s": "xyz", "vowels": "aeiou"}),
    ("left < right and s[right] not in vowels", {"left": 3, "right": 2, "s": "xy", "vowels": "aeiou"}),  # stops early
    ("num in seen", {"num": 4, "seen": {4: 0}}),
    ("not k.isupper()", {"k": "Ab"}),
    ("x is None or x > 2.5", {"x": None}),
    ("d.get(k, 0) >= 2", {"d": {"a": 3}, "k": "a"}),
    ("a < b < c", {"a": 1, "b": 3, "c": 2}),
    ("(n if n > 0 else -n) % 3 == 1", {"n": -4}),
    ("sum(xs) / len(xs) > 1.5", {"xs": [1, 2, 2]}),
    ("xs.count(1) and s.startswith('a')", {"xs": [1, 1], "s": "ba"}),
    ("divmod(n, 4)[1] == 3", {"n": 11}),
    ("sum(1 for x in title if x != 'e') * 2 > 3", {"title": "eye"}),
    ("len([num for num in xs if num % 2 != 0]) % 2 == 0", {"xs": [1, 3, 4]}),
    ("any(x == 'b' for x in xs) and all(ys)", {"xs": "abc", "ys": [1, 0]}),
    ("''.join(c.lower() for c in text if c in letters) == 'ab'", {"text": "A,b", "letters": "Ab"}),
]


@pytest.mark.parametrize(("source", "values"), CONDITIONS)
def test_a_test_is_true_where_python_says(source: str, values: dict[str, object]) -> None:
    expected = bool(eval(source, dict(values)))  # noqa: S307 - the test's own constant expressions
    assert truth(parsed_expression(source), {name: repr(value) for name, value in values.items()}) is expected


@pytest.mark.parametrize(("source", "shown"), [
    ("d[k] > 1", {"d": "{'a': 1}", "k": "'b'"}),  # a KeyError: the program raises, the model says how
    ("int(s) > 1", {"s": "'x1'"}),
    ("x < y", {"x": "1", "y": "'a'"}),
    ("any([x > 1 for x in s])", {"s": "{1, 2}"}),  # a set, iterated in order
    ("n > 0", {"n": "<Counter object>"}),
    ("n > 0", {}),  # a global, or not bound yet
    ("x * 10 ** 13 > 1", {"x": "1"}),  # bigger than it computes
    ("[x for x in y]", {"y": "5"}),  # not iterable
    ("[a for a, b in xs]", {"xs": "[(1, 2, 3)]"}),  # unpacking raises
    ("sum(1 for _ in range(n) for _ in range(n))", {"n": "1000"}),  # too many steps to take here
])
def test_a_test_the_values_do_not_tell(source: str, shown: dict[str, str]) -> None:
    assert truth(parsed_expression(source), shown) is None
