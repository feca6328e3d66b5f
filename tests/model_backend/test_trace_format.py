"""Trace format v1: round trip on real and random trajectories, the exact text, and a total parser."""

from __future__ import annotations

import json
import random
import re
import sys
import textwrap
from types import FrameType
from typing import Any, get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model_backend.program import Program
from model_backend.state import Action, ActionKind, StackFrame, State
from model_backend.trace_format import (
    END_OF_FRAME,
    EVENT_TOKENS,
    MAX_LINE,
    SPECIAL_TOKENS,
    TRACE_END,
    VALUE_EVENTS,
    FormatError,
    ParsedTrajectory,
    frame_target,
    parse,
    parse_frame,
    serialize,
    serialize_action,
    serialize_frame,
    serialize_header,
)
from tests.support.corpus import COUNT, corpus, traced

Steps = list[tuple[State, Action | None]]
STEP_INTO = Action(kind="step_into")
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def frame(function: str, line: int) -> StackFrame:
    return StackFrame(function=function, line=line)


def check_round_trip(program: Program, steps: Steps, inverse: bool) -> str:
    """Serialize, parse back, compare; also check the incremental API builds the same text."""
    text = serialize(program, steps, inverse)
    parsed = parse(text)
    assert isinstance(parsed, ParsedTrajectory), parsed
    assert parsed.steps == steps
    assert (parsed.code, parsed.entry) == (program.source, program.entry)
    if any(s.exit is None for s, _ in steps):
        assert parsed.inverse == inverse
    pieces, prev = [serialize_header(program)], None
    for state, action in steps:
        if action is None:
            pieces.append(frame_target(state, prev, inverse))
            assert parse_frame(pieces[-1], prev, inverse) == state
        else:
            pieces += [serialize_frame(state, prev, inverse), END_OF_FRAME, serialize_action(action)]
            assert parse_frame(pieces[-3], prev, inverse) == state
        prev = state
    assert "".join(pieces) == text
    return text


# ---------------------------------------------------------------- real traces from a small tracer

FILENAME = "<traced>"


def trace(source: str, entry: str) -> list[State]:
    """Record call/line/return/exception states of `source`'s own frames, as the project tracer does."""
    lines = source.splitlines()
    env: dict[str, Any] = {}
    exec(compile(source, FILENAME, "exec"), env)
    states: list[State] = []

    def tracer(fr: FrameType, event: str, arg: Any) -> Any:
        if fr.f_code.co_filename != FILENAME:
            return None
        stack, f = [], fr
        while f is not None:
            if f.f_code.co_filename == FILENAME:
                stack.append(frame(f.f_code.co_name, f.f_lineno))
            f = f.f_back  # type: ignore[assignment]
        value = repr(arg) if event == "return" else repr(arg[1]) if event == "exception" else None
        states.append(State(
            event=event, line=fr.f_lineno, function=fr.f_code.co_name, source=lines[fr.f_lineno - 1],
            locals={k: repr(v) for k, v in fr.f_locals.items()}, value=value, stack=stack[::-1],
            depth=len(stack) - 1,
        ))
        return tracer

    sys.settrace(tracer)
    try:
        eval(entry, env)
    except Exception:
        pass
    finally:
        sys.settrace(None)
    return states


MIXED = textwrap.dedent('''\
    def sq(x):
        return x * x
    def fact(n):
        return 1 if n <= 1 else n * fact(n - 1)
    def gen(k):
        for i in range(k):
            yield i
    def main(xs):
        total = 0
        for x in xs:
            total += sq(x)
        tmp = [y + 1 for y in xs]
        del tmp
        try:
            1 / 0
        except ZeroDivisionError:
            pass
        s = "quote\\" \' \\n <|frame_sep|> <\\\\| é 😀"
        return total + fact(3) + sum(gen(3)) + len(s)
    def boom(d):
        main([3])
        return d["missing"]
''')

REAL = [
    (COUNT, 'count("berry", "r")', "normal"),
    (MIXED, "main([1, 2])", "normal"),
    (MIXED, "boom({'a': 1})", "error"),
]


def forward(states: list[State], exit_code: str, every: int = 1) -> Steps:
    picked = states[::every]
    actions = [STEP_INTO if every == 1 else Action(kind="breakpoint", lines=(s.line or 1, 7)) for s in picked]
    reason = "KeyError: 'missing'" if exit_code == "error" else None
    return [*zip(picked, actions, strict=True), (State.exit_state(exit_code, reason), None)]  # type: ignore[arg-type]


def inverse(states: list[State]) -> Steps:
    """The trace backwards, each line that made a call duplicated as inv_line_call (as the inverse tree)."""
    out: list[State] = []
    for state, nxt in zip(states, [*states[1:], None], strict=True):
        out.append(state)
        if state.event == "line" and nxt is not None and nxt.event == "call":
            out.append(state.model_copy(update={"event": "inv_line_call"}))
    kinds = ["inv_step_into", "inv_step_over", "inv_step_call"]
    return [(s, Action(kind=kinds[i % 3])) for i, s in enumerate(out[::-1])]  # type: ignore[arg-type]


@pytest.mark.parametrize("source,entry,exit_code", REAL)
def test_round_trip_real_traces(source: str, entry: str, exit_code: str) -> None:
    states = trace(source, entry)
    assert len(states) > 10
    program = Program(source=source, entry=entry)
    check_round_trip(program, forward(states, exit_code), inverse=False)
    check_round_trip(program, forward(states, exit_code, every=3), inverse=False)  # jumps across scopes
    check_round_trip(program, inverse(states), inverse=True)


@pytest.mark.parametrize("name", [c.name for c in corpus()])
def test_round_trip_project_tracer(name: str) -> None:
    """Every event the sandboxed tracer records on the corpus (generators, classes, exceptions, output)."""
    program, result = traced(name)
    states = [State.from_event(ev, ev.stdout).model_copy(update={"index": None}) for ev in result.events]
    steps: Steps = [(s, STEP_INTO) for s in states]
    check_round_trip(program, [*steps, (State.exit_state(result.exit, result.exit_reason), None)], False)
    check_round_trip(program, inverse(states), True)


def test_berry_example_uses_diffs() -> None:
    states = trace(COUNT, 'count("berry", "r")')
    text = check_round_trip(Program(source=COUNT, entry='count("berry", "r")'), forward(states, "normal"), False)
    frames = text.split("<|frame_sep|>")
    numbered = "".join(f"<|lineno_sep|>{n}<|src_sep|>{line}\n" for n, line in enumerate(COUNT.splitlines(), 1))
    assert frames[0] == f"<|trace_context_start|><|format_v3|>{numbered}<|entry_sep|>count(\"berry\", \"r\")<|code_end|>"
    assert frames[1] == ("<|call_sep|><|lineno_sep|>1<|stack_sep|>[[\"count\", 1]]<|src_sep|>def count(s, t):"
                         "<|arg_sep|>{\"s\": \"'berry'\", \"t\": \"'r'\"}<|action_sep|><|step_into|>")
    assert frames[2] == '<|line_sep|><|lineno_sep|>2<|arg_sep|>{"..": ".."}<|src_sep|>    n = 0<|action_sep|><|step_into|>'
    assert frames[3].startswith('<|line_sep|><|lineno_sep|>3<|arg_sep|>{"..": "..", "n": "0"}<|src_sep|>    for c in s:')
    assert frames[4].startswith('<|line_sep|><|lineno_sep|>4<|arg_sep|>{"..": "..", "c": "\'b\'"}')
    # the return repeats no locals (unchanged since the last line); the exit ends the trace
    assert frames[-2] == '<|return_sep|><|lineno_sep|>6<|src_sep|>    return n<|arg_sep|>"2"<|action_sep|><|step_into|>'
    assert frames[-1] == "<|exit_normal|>" + TRACE_END
    assert "<|stack_sep|>" not in "".join(frames[2:])  # one scope for the whole run


# ---------------------------------------------------------------- hand-built cases and exact text

P = Program(source="x = 1\n", entry=None)


def line(n: int, locals_: dict[str, str], stack: list[StackFrame] | None = None, **kw: Any) -> State:
    stack = stack or [frame("f", n)]
    return State(event=kw.pop("event", "line"), line=n, function=stack[-1].function, source=kw.pop("source", f"l{n}"),
                 locals=locals_, stack=stack, depth=kw.pop("depth", len(stack) - 1), **kw)


def test_exact_text_of_a_small_trace() -> None:
    steps: Steps = [
        (line(1, {"a": "1"}, event="call"), STEP_INTO),
        (line(2, {"a": "1", "b": "'x'"}, stdout="hi\n"), Action(kind="breakpoint", lines=(12, 15))),
        (line(3, {"b": "'x'"}), STEP_INTO),  # `a` deleted: full dict
        (line(4, {"b": "'x'"}, event="return", value="None"), Action(kind="continue")),
        (State.exit_state("error", "ValueError: bad"), None),
    ]
    assert check_round_trip(P, steps, False) == (
        "<|trace_context_start|><|format_v3|><|lineno_sep|>1<|src_sep|>x = 1\n<|code_end|>"
        '<|frame_sep|><|call_sep|><|lineno_sep|>1<|stack_sep|>[["f", 1]]<|src_sep|>l1<|arg_sep|>{"a": "1"}'
        "<|action_sep|><|step_into|>"
        '<|frame_sep|><|line_sep|><|lineno_sep|>2<|arg_sep|>{"..": "..", "b": "\'x\'"}<|src_sep|>l2'
        '<|stdout_sep|>"hi\\n"<|action_sep|><|breakpoint|>12,15'
        '<|frame_sep|><|line_sep|><|lineno_sep|>3<|arg_sep|>{"b": "\'x\'"}<|src_sep|>l3<|action_sep|><|step_into|>'
        '<|frame_sep|><|return_sep|><|lineno_sep|>4<|src_sep|>l4<|arg_sep|>"None"<|action_sep|><|continue|>'
        '<|frame_sep|><|exit_error|><|arg_sep|>"ValueError: bad"<|trace_end|>'
    )


def test_exact_text_inverse() -> None:
    steps: Steps = [
        (line(4, {"n": "2"}, event="return", value="2"), Action(kind="inv_step_over")),
        (line(3, {"n": "1"}), Action(kind="inv_step_call")),
        (line(1, {"n": "1"}, event="call"), None),  # same frame, but inverse calls are always full
    ]
    assert check_round_trip(P, steps, True) == (
        "<|trace_context_start|><|format_v3|><|lineno_sep|>1<|src_sep|>x = 1\n<|code_end|>"
        '<|frame_sep|><|inv_return_sep|><|lineno_sep|>4<|stack_sep|>[["f", 4]]<|src_sep|>l4<|arg_sep|>"2"'
        '<|arg_sep|>{"n": "2"}<|action_sep|><|inv_step_over|>'
        '<|frame_sep|><|inv_line_sep|><|lineno_sep|>3<|src_sep|>l3<|arg_sep|>{"n": "1"}<|action_sep|><|inv_step_call|>'
        '<|frame_sep|><|inv_call_sep|><|lineno_sep|>1<|src_sep|>l1<|arg_sep|>{"n": "1"}<|action_sep|>'
    )


def test_scope_changes_stack_and_depth() -> None:
    mod = frame("<module>", 9)
    steps: Steps = [
        (line(9, {}, [frame("<module>", 9)]), STEP_INTO),
        (line(2, {"x": "1"}, [mod, frame("g", 2)], event="call"), STEP_INTO),
        (line(3, {"x": "1"}, [mod, frame("g", 3)]), Action(kind="step_over")),
        (line(3, {"x": "5"}, [frame("<module>", 10), frame("g", 3)]), STEP_INTO),  # other instance of g
        (line(3, {"x": "5"}, [frame("<module>", 10), frame("h", 3)], depth=0), STEP_INTO),  # depth written
        (line(4, {"x": "6"}, [frame("<module>", 10), frame("h", 4)], depth=0), STEP_INTO),
        (line(5, {"x": "6"}, [frame("<module>", 10), frame("h", 5)], depth=1), None),  # only depth differs
    ]
    text = check_round_trip(P, steps, False)
    assert text.count("<|stack_sep|>") == 5
    assert '<|stack_sep|>[["<module>", 10], ["h", 3]]<|depth_sep|>0<|arg_sep|>{"x": "5"}' in text
    assert '<|lineno_sep|>4<|arg_sep|>{"..": "..", "x": "6"}' in text


def test_special_text_in_fields_round_trips() -> None:
    nasty = ['<|frame_sep|>', '<\\|', '<\\\\|x', '<<|', '"\'\n\\', "é😀\u2028", "|>", "<|", "<|bogus|>"]
    program = Program(source="".join(nasty), entry=nasty[0] + nasty[1])
    steps: Steps = [
        (line(1, {n: v for n, v in zip("abcdefghi", nasty, strict=True)}, source=src, stdout=src,
              event="call"), STEP_INTO)
        for src in nasty
    ]
    steps.append((State.exit_state("never", "<|trace_end|>", "<|"), None))
    text = check_round_trip(program, steps, False)
    assert text.count("<|") == sum(text.count(t) for t in SPECIAL_TOKENS)  # no stray token starts
    assert text.count("<|frame_sep|>") == len(steps)


def test_prompt_and_exit_with_action() -> None:
    """A text ending in an action is a prompt; an exit may be followed by an inverse action."""
    steps: Steps = [
        (State.exit_state("normal", None, "out"), Action(kind="inv_step_into")),
        (line(5, {"r": "3"}, event="return", value="3"), Action(kind="inv_step_over")),
    ]
    text = check_round_trip(P, steps, True)
    assert text.endswith("<|action_sep|><|inv_step_over|>")
    assert "<|exit_normal|><|stdout_sep|>\"out\"<|action_sep|><|inv_step_into|>" in text


@pytest.mark.parametrize("state,inverse", [
    (line(1, {}, [frame("g", 1)]).model_copy(update={"function": "f"}), False),  # stack top disagrees
    (line(1, {}).model_copy(update={"stack": []}), False),
    (line(1, {"..": "x"}), False),
    (line(1, {}, event="inv_line_call"), False),
    (line(1, {}, value="3"), False),
    (line(1, {}).model_copy(update={"line": MAX_LINE + 1}), False),
    (State.exit_state("normal").model_copy(update={"locals": {"a": "1"}}), True),
    (State(event="exit"), False),
])
def test_unserializable_states_raise(state: State, inverse: bool) -> None:
    with pytest.raises(ValueError):
        serialize(P, [(state, None)], inverse)


def test_unserializable_steps_raise() -> None:
    with pytest.raises(ValueError):
        serialize(P, [(line(1, {}), None), (line(2, {}), None)])
    with pytest.raises(ValueError):
        serialize_action(Action(kind="breakpoint"))
    with pytest.raises(ValueError):
        serialize_action(Action(kind="continue", lines=(3,)))


@pytest.mark.parametrize("source", ["", "x", "x\n", "\n", "a = 1\n\nb = 2\n", "a\n\n", "s = '<|frame_sep|>'\n",
                                    "x = 1\x0c\ny = 2"])
def test_header_numbers_every_line_and_round_trips(source: str) -> None:
    header = serialize_header(Program(source=source, entry="f()"))
    assert header.count("<|lineno_sep|>") == len(source.split("\n")) - (source.split("\n")[-1] == "")
    parsed = parse(header)
    assert not isinstance(parsed, FormatError), parsed
    assert parsed.code == source and parsed.entry == "f()"


HEAD = "<|trace_context_start|><|format_v3|><|lineno_sep|>1<|src_sep|>x<|code_end|>"
CALL = '<|frame_sep|><|call_sep|><|lineno_sep|>1<|stack_sep|>[["f", 1]]<|src_sep|>s<|arg_sep|>{"a": "1"}<|action_sep|>'


@pytest.mark.parametrize("text,message", [
    ("", "got end of text"),
    ("hello", "text before the first special token"),
    (HEAD + "<|frame_sep|><|line_sep|><|lineno_sep|>1<|arg_sep|>{}<|src_sep|>s<|action_sep|>", "needs <|stack_sep|>"),
    (HEAD + CALL + '<|step_into|><|frame_sep|><|return_sep|><|lineno_sep|>2<|src_sep|>s<|arg_sep|>"1"'
     '<|action_sep|><|step_into|><|frame_sep|><|line_sep|><|lineno_sep|>3<|arg_sep|>{"..": ".."}<|src_sep|>s'
     '<|action_sep|>', "a locals diff needs"),
    (HEAD + CALL + '<|step_into|><|frame_sep|><|inv_line_sep|>', "in a forward trace"),
    (HEAD + CALL.replace('{"a": "1"}', '{"a": "1", "a": "2"}'), "duplicate key"),
    (HEAD + CALL.replace('{"a": "1"}', '{"a": 1}'), "JSON object of strings"),
    (HEAD + CALL.replace('[["f", 1]]', '[["f", true]]'), "[function, line]"),
    (HEAD + CALL.replace('[["f", 1]]', '[["f", 2]]'), "the stack ends at line 2"),
    (HEAD + CALL.replace(">1<", ">" + "9" * 5000 + "<"), "at most 9 digits"),
    (HEAD + CALL.replace('[["f", 1]]', '[["f", 1' + "0" * 5000 + ']]'), "bad JSON"),
    (HEAD + CALL.replace('{"a": "1"}', "[" * 100_000), "bad JSON"),
    (HEAD + CALL + "<|breakpoint|>0", "needs line numbers"),
    (HEAD + CALL + "<|breakpoint|>3,,4", "needs line numbers"),
    (HEAD + CALL + "<|step_into|>x", "unexpected text"),
    (HEAD + "<|frame_sep|><|exit_normal|><|trace_end|><|frame_sep|>", "text after <|trace_end|>"),
    (HEAD + "<|frame_sep|><|exit_normal|><|action_sep|>", "got end of text"),
    (HEAD + "<|frame_sep|><|exit_normal|><|arg_sep|>3<|trace_end|>", "needs a JSON string"),
    (HEAD + "<|format_v1|>", "unknown special token"),
    ("<|trace_context_start|><|format_v3|>x = 1<|code_end|>", "unexpected text after <|format_v3|>"),
    ("<|trace_context_start|><|format_v3|><|lineno_sep|>2<|src_sep|>x\n<|lineno_sep|>2<|src_sep|>y<|code_end|>",
     "program line 2 where line 3 or later"),
    ("<|trace_context_start|><|format_v3|><|lineno_sep|>999999<|src_sep|>x<|code_end|>", "past the 100000-line limit"),
    ("<|trace_context_start|><|format_v3|><|lineno_sep|>1<|src_sep|>x<|lineno_sep|>2<|src_sep|>y<|code_end|>",
     "only the last line"),
    ("<|trace_context_start|><|format_v3|><|lineno_sep|>1<|src_sep|>x\ny\n<|code_end|>", "holds a newline"),
    (HEAD + "<|frame_sep", "unknown special token"),
])
def test_parse_errors(text: str, message: str) -> None:
    result = parse(text)
    assert isinstance(result, FormatError), result
    assert message in result.message
    assert 0 <= result.position <= len(text)


def test_error_position_points_at_the_problem() -> None:
    text = HEAD + CALL.replace('{"a": "1"}', '{"a": 1}')
    result = parse(text)
    assert isinstance(result, FormatError)
    assert text[result.position:].startswith('{"a": 1}')


# ---------------------------------------------------------------- random trajectories

TEXT = st.text(max_size=10) | st.sampled_from(
    ['"', "'\\n'", "a\nb", "<|frame_sep|>", "<\\|x", "<<|", '{"..": ".."}', "..", "é😀", "<|arg_sep|>x<|", "|>"]
)
NAMES = st.sampled_from(["a", "b", "n", "self", "é", "_x1", "data"])
FUNCS = st.sampled_from(["<module>", "f", "g", "<listcomp>", "__init__"])
LINES = st.integers(0, 60) | st.just(MAX_LINE)
ACTIONS = st.sampled_from([k for k in get_args(ActionKind) if k != "breakpoint"]).map(
    lambda k: Action(kind=k)) | st.lists(
    st.integers(1, 99) | st.just(MAX_LINE), min_size=1, max_size=3).map(
    lambda ls: Action(kind="breakpoint", lines=tuple(ls)))


@st.composite
def trajectories(draw: st.DrawFn) -> tuple[Program, Steps, bool]:
    """Random serializable trajectories; half of the steps stay in the previous frame (diffs apply)."""
    inverse = draw(st.booleans())
    events = [e for inv, e in EVENT_TOKENS if inv == inverse]
    steps: list[list[Any]] = []
    prev: State | None = None
    for _ in range(draw(st.integers(0, 7))):
        if draw(st.integers(0, 9)) == 0:
            state = State.exit_state(draw(st.sampled_from(["normal", "error", "never"])), draw(st.none() | TEXT),
                                     draw(st.just("") | TEXT))
        else:
            event, n = draw(st.sampled_from(events)), draw(LINES)
            if prev is not None and prev.stack and draw(st.booleans()):
                stack, depth = [*prev.stack[:-1], frame(prev.stack[-1].function, n)], prev.depth
                locals_ = {k: v for k, v in prev.locals.items() if draw(st.integers(0, 5))}  # some deleted
                locals_.update(draw(st.dictionaries(NAMES, TEXT, max_size=2)))
            else:
                stack = [*draw(st.lists(st.builds(frame, FUNCS, LINES), max_size=3)), frame(draw(FUNCS), n)]
                depth = draw(st.just(len(stack) - 1) | st.integers(0, 5))
                locals_ = draw(st.dictionaries(NAMES, TEXT, max_size=4))
            value = draw(st.none() | TEXT) if event in VALUE_EVENTS else None
            state = State(event=event, line=n, function=stack[-1].function, source=draw(TEXT), locals=locals_,
                          value=value, stack=stack, depth=depth, stdout=draw(st.just("") | TEXT))
        steps.append([state, draw(ACTIONS)])
        prev = state
    if draw(st.booleans()) and steps:
        steps[-1][1] = None
    program = Program(source=draw(TEXT), entry=draw(st.none() | TEXT))
    return program, [(s, a) for s, a in steps], inverse


@FAST
@given(trajectories())
def test_round_trip_random(t: tuple[Program, Steps, bool]) -> None:
    check_round_trip(*t)


# ---------------------------------------------------------------- totality


def assert_total(text: str) -> ParsedTrajectory | FormatError:
    """parse never raises; an accepted text re-serializes to a text that parses to the same steps."""
    result = parse(text)
    if isinstance(result, FormatError):
        assert 0 <= result.position <= len(text)
        return result
    assert isinstance(result, ParsedTrajectory)
    again = parse(serialize(result.program, result.steps, result.inverse))
    assert isinstance(again, ParsedTrajectory) and again.steps == result.steps
    return result


FRAGMENTS = st.sampled_from(SPECIAL_TOKENS) | TEXT | st.sampled_from(
    ["1", "12,3", '[["f", 1]]', '[["f", 2], ["g", 1]]', '{"a": "1"}', '{"..": ".."}', '{"..": "..", "a": "2"}',
     '"x"', "null", "[", "-1", "9" * 40]
)


@FAST
@given(st.booleans(), st.lists(FRAGMENTS, max_size=40))
def test_parse_total_on_token_soup(with_head: bool, pieces: list[str]) -> None:
    assert_total((HEAD if with_head else "") + "".join(pieces))


@FAST
@given(st.text(max_size=200) | st.binary(max_size=200).map(lambda b: b.decode("utf-8", "replace")))
def test_parse_total_on_random_text(text: str) -> None:
    assert_total(text)
    assert isinstance(parse_frame(text, None, False), State | FormatError)


def pieces_of(text: str) -> list[str]:
    return [p for p in re.split(r"(<\|[a-z0-9_]+\|>)", text) if p]


@FAST
@given(trajectories(), st.randoms(use_true_random=False), st.integers(1, 4))
def test_parse_total_on_mutated_traces(t: tuple[Program, Steps, bool], rnd: random.Random, n_ops: int) -> None:
    pieces = pieces_of(serialize(*t))
    for _ in range(n_ops):
        i, j = rnd.randrange(len(pieces)), rnd.randrange(len(pieces))
        op = rnd.choice(["drop", "dup", "swap", "shuffle", "cut"])
        if op == "drop":
            del pieces[i]
        elif op == "dup":
            pieces.insert(i, pieces[j])
        elif op == "swap":
            pieces[i], pieces[j] = pieces[j], pieces[i]
        elif op == "shuffle":
            rnd.shuffle(pieces)
        else:
            pieces[i] = pieces[i][: rnd.randrange(len(pieces[i]) + 1)]
        if not pieces:
            break
    assert_total("".join(pieces))
    prev = t[1][0][0] if t[1] else None
    for k in range(len(pieces)):
        assert isinstance(parse_frame("".join(pieces[k:k + 12]), prev, t[2]), State | FormatError)


def test_every_truncation_is_an_error_or_a_prefix() -> None:
    states = trace(COUNT, 'count("berry", "r")')[:8]
    steps = forward(states, "normal", every=2)  # breakpoint actions: "<|breakpoint|>3,7"
    text = serialize(Program(source=COUNT), steps)
    accepted = 0
    for cut in range(len(text)):
        result = assert_total(text[:cut])
        if isinstance(result, ParsedTrajectory):
            accepted += 1
            got = result.steps
            assert [s for s, _ in got] == [s for s, _ in steps[: len(got)]]
            assert [a for _, a in got[:-1]] == [a for _, a in steps[: max(len(got) - 1, 0)]]
    assert accepted >= len(steps)  # header-only and every "...<|action_sep|>" cut are valid prompts


def test_json_fields_are_compact_json() -> None:
    """LOCALS use ND's `", "` / `": "` separators and keep non-ASCII characters."""
    text = serialize(P, [(line(1, {"é": "'ü'", "b": "[1, 2]"}, event="call"), None)])
    locals_text = text.split("<|arg_sep|>")[1].split("<|action_sep|>")[0]
    assert locals_text == '{"é": "\'ü\'", "b": "[1, 2]"}'
    assert json.loads(locals_text) == {"é": "'ü'", "b": "[1, 2]"}
