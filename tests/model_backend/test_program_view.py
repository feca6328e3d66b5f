"""The program view (model_backend.view): a program longer than the model's header is shown in part,
chosen per state with true line numbers, the same way in the engines and in the training data."""

from __future__ import annotations

import pytest

from model_backend import sampler
from model_backend import trace_format as fmt
from model_backend.engine.base import EngineError
from model_backend.engine.follow import DEFAULT_FOLLOW_STEPS, VIEW_FOLLOW_STEPS
from model_backend.engine.neural import LoadedModel, NeuralEngine
from model_backend.engine.oracle import OracleEngine
from model_backend.program import Program
from model_backend.sandbox import Limits
from model_backend.state import Action, StackFrame, State
from model_backend.view import choose_view


def long_program(helpers: int = 200) -> str:
    """About 10 lines a helper, a `main` at the end that calls two of them."""
    parts = ["import math\n\nSCALE = 3\n\n"]
    for i in range(helpers):
        parts.append(
            f"def helper_{i}(x):\n    y = x * {i % 7 + 1}\n    if y > 10:\n        y -= SCALE\n"
            f"    for k in range(2):\n        y += k\n    z = [y, x]\n    return y + len(z)\n\n\n"
        )
    parts.append("def main(n):\n    total = 0\n    for i in range(n):\n        total += helper_3(i)\n"
                 "        total += helper_170(total % 5)\n    return total\n")
    return "".join(parts)


def chars(program: Program):  # noqa: ANN201 - a cost function: 1 token per 3 characters of a header line
    lines = fmt.header_lines(program)
    return lambda n: len(lines[n - 1]) // 3 if 0 < n <= len(lines) else 0


def at(line: int, function: str, stack: list[tuple[str, int]] | None = None) -> State:
    frames = [StackFrame(function=f, line=n) for f, n in (stack or [])] + [StackFrame(function=function, line=line)]
    return State(event="line", line=line, function=function, depth=len(frames) - 1, locals={}, stack=frames)


def test_a_program_that_fits_is_shown_whole() -> None:
    program = Program(source="def f(x):\n    return x + 1\n", entry="f(1)")
    assert choose_view(program.source, at(2, "f"), 500, chars(program)).lines is None


def test_a_long_program_shows_the_paused_function_its_callers_and_callees() -> None:
    source = long_program()
    program = Program(source=source, entry="main(2)")
    lines = source.split("\n")
    main_def = lines.index("def main(n):") + 1
    call_line = main_def + 3  # total += helper_3(i)
    helper_170 = lines.index("def helper_170(x):") + 1
    view = choose_view(source, at(helper_170 + 1, "helper_170", [("main", call_line + 1)]), 600, chars(program))
    assert view.lines is not None
    assert set(range(helper_170, helper_170 + 8)) <= view.lines  # the paused function, whole
    assert set(range(main_def, main_def + 6)) <= view.lines  # its caller
    assert sum(chars(program)(n) for n in view.lines) <= 600
    header = fmt.serialize_header(program, 3, view.lines)
    parsed = fmt.parse(header)
    assert isinstance(parsed, fmt.ParsedTrajectory)
    shown = parsed.code.split("\n")
    assert all(shown[n - 1] == lines[n - 1] for n in view.lines)  # true line numbers
    assert all(shown[n - 1] == "" for n in range(1, len(lines)) if n not in view.lines)


def test_training_records_cut_a_trajectory_where_the_view_changes() -> None:
    program = Program(source=long_program(), entry="main(2)")
    oracle = OracleEngine(Limits())
    steps: sampler.Steps = [(oracle.start(program), Action(kind="step_into"))]
    for _ in range(12):  # into helper_3 and back into main
        steps.append((oracle.step(Action(kind="step_into")), Action(kind="step_into")))
    steps[-1] = (steps[-1][0], None)
    assert {state.function for state, _ in steps} == {"main", "helper_3"}
    whole = sampler.training_records(program, steps, False, 3, None)
    cut = sampler.training_records(program, steps, False, 3, 60)  # main or helper_3, never both
    assert len(whole) == 1 and len(cut) > 1
    frames = 0
    for record in cut:
        parsed = fmt.parse("".join(text for text, _ in record))
        assert isinstance(parsed, fmt.ParsedTrajectory), parsed
        frames += sum(trained for _, trained in record)
    assert frames == len(steps) - 1  # every transition is trained once


@pytest.fixture(scope="module")
def engine(shipped_model: LoadedModel) -> NeuralEngine:
    return NeuralEngine(shipped_model)


def test_the_neural_engine_starts_and_steps_a_2000_line_program(engine: NeuralEngine) -> None:
    source = long_program(220)
    assert len(source.splitlines()) >= 2000
    program = Program(source=source, entry="main(2)")
    first = engine.start(program)
    assert first.function == "main" and engine.view.lines is not None
    assert engine.header_len <= engine.max_context - 2 * 768
    for _ in range(2):
        state = engine.step(Action(kind="step_over"))  # a prediction, right or wrong; never a refusal
        assert engine.header_len <= engine.max_context - 2 * 768
        assert state.error is None or "--engine oracle" in state.error


def test_a_line_longer_than_the_context_is_an_error_that_names_the_oracle(engine: NeuralEngine) -> None:
    source = "def f(x):\n    s = '" + " ".join(str(i) for i in range(3000)) + "'\n    return x\n"
    program = Program(source=source, entry="f(1)")
    assert engine.start(program).line == 1  # the long line is not needed at the call
    with pytest.raises(EngineError, match="--engine oracle"):
        engine.resume(program, [at(2, "f").model_copy(update={"source": source.split("\n")[1]})], inverse=False)


def test_an_entry_too_long_for_the_header_is_written_as_its_callee(engine: NeuralEngine) -> None:
    big = "[" + ", ".join(f"'item-{i}'" for i in range(400)) + "]"
    program = Program(source="def count(xs):\n    n = len(xs)\n    return n\n", entry=f"count({big})")
    first = engine.start(program)  # the header with the whole entry would not fit: no refusal
    assert first.function == "count" and engine.planner is not None
    assert engine.planner.shown.entry == "count(...)"
    header = engine.m.encode(fmt.serialize_header(engine.planner.shown, engine.format_version))
    assert engine.header_len == len(header) <= engine.max_context - 2 * 768
    state = engine.step(Action(kind="step_over"))
    assert state.error is None or "--engine oracle" in state.error


def test_an_entry_that_fits_stays_whole(engine: NeuralEngine) -> None:
    program = Program(source="def count(xs):\n    return len(xs)\n", entry="count([1, 2, 3])")
    engine.start(program)
    assert engine.planner is not None and engine.planner.shown.entry == "count([1, 2, 3])"


def test_a_program_shown_as_a_view_takes_one_jump_unless_a_budget_is_set(shipped_model: LoadedModel) -> None:
    """With no budget set, an engine follows an action in single steps where its header shows the whole
    program, and jumps where it shows a view; a budget that is set holds for both."""
    long, short = Program(source=long_program(60), entry="main(2)"), Program(source="def f(x):\n    return x + 1\n", entry="f(1)")
    engine = NeuralEngine(shipped_model)
    engine.start(short)
    assert engine.follow_steps is None and engine.follow_budget() == DEFAULT_FOLLOW_STEPS
    engine.start(long)
    assert engine.view.lines is not None and engine.follow_budget() == VIEW_FOLLOW_STEPS == 0
    engine.step(Action(kind="step_return"))  # from main's call event: one jump, no single step
    assert engine.followed_steps == 0
    engine.follow(3)
    engine.start(long)
    assert engine.follow_budget() == 3
    engine.step(Action(kind="step_return"))
    assert engine.followed_steps > 0
