"""Followed actions: step_over, step_return and continue taken as single steps by stepwise (model) engines.

`GrammarEngine.step_steps` (model_backend/engine/driver.py) follows an action that runs through events with step_into, within a budget,
and finishes it with jumps past the budget; with no budget it still follows step_over and step_return
where an IDE breakpoint may wait inside a call (model_backend/engine/follow.py). Here every prediction
comes from a real trace (`TraceSteps`): if each step is right, the way through must stop exactly where
pdb does, i.e. where the oracle's MDP stops with the same breakpoints, on every program of the corpus.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Generator
from typing import Any

import pytest

from model_backend.engine.driver import GrammarEngine
from model_backend.engine.follow import breakpoint_in_reach, runs_through_events
from model_backend.grammar import ProgramFacts
from model_backend.mdp import BdbState, TraceMDP
from model_backend.program import Program
from model_backend.state import Action, State
from tests.support.corpus import corpus, traced


class TraceSteps(GrammarEngine):
    """A stepwise engine whose every prediction is the real trace's next state (no model)."""

    name = "trace-steps"

    def __init__(self, program: Program, mdp: TraceMDP, position: int, bdb: BdbState) -> None:
        self.program, self.facts, self.mdp = program, ProgramFacts.of(program), mdp
        self.position, self.bdb = position, bdb
        self._state = mdp.state(position)
        self.history = [self._state]
        self.predictions: list[str] = []

    def run(self, op: Generator[Any, Any, Any]) -> Any:
        try:
            next(op)
        except StopIteration as done:
            return done.value
        raise AssertionError("a trace needs no model")

    def predict_steps(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> Generator[Any, Any, State]:
        self.predictions.append(action.kind)
        self.position, stdout = self.mdp.step(self.position, action, breakpoints, self.bdb)
        self._state = self.mdp.state(self.position, stdout=stdout)
        self.history.append(self._state)
        return self._state
        yield

    def replace_current_steps(self, state: State) -> Generator[Any, Any, State]:
        raise NotImplementedError  # following an action never goes back

    def resume_steps(self, program: Program, history: list[State], inverse: bool) -> Generator[Any, Any, State]:
        raise NotImplementedError

    def sample_steps(self, action: Action, k: int) -> Generator[Any, Any, list[State]]:
        raise NotImplementedError


def _cases(name: str, rng: random.Random) -> list[tuple[int, BdbState, frozenset[int]]]:
    """States along a step_into walk of the program, each with a set of breakpoints on lines that run
    in some frame (so that some are hit), drawn at random."""
    program, result = traced(name)
    mdp = TraceMDP(result)
    lines = sorted({e.line for e in result.events if e.event == "line"})
    position, bdb = mdp.start_position("entry"), BdbState()
    cases = []
    for _ in range(80):
        state = mdp.state(position)
        if state.exit is not None:
            break
        for _ in range(2):
            breakpoints = frozenset(rng.sample(lines, min(len(lines), rng.choice((1, 1, 2, 3)))))
            cases.append((position, copy.deepcopy(bdb), breakpoints))
        position, _ = mdp.step(position, Action(kind="step_into"), frozenset(), bdb)
    return cases


PROGRAMS = [c.name for c in corpus()]


def _pdb_stop(mdp: TraceMDP, position: int, bdb: BdbState, action: Action, breakpoints: frozenset[int]) -> State:
    want_position, want_stdout = mdp.step(position, action, breakpoints, copy.deepcopy(bdb))
    return mdp.state(want_position, stdout=want_stdout)


ACTIONS = (Action(kind="step_over"), Action(kind="step_return"), Action(kind="continue"))


@pytest.mark.parametrize("name", PROGRAMS)
def test_followed_actions_stop_where_pdb_stops(name: str) -> None:
    """With the default budget every action that runs through events is single steps (step_into only),
    and it stops where pdb does, with what the calls printed on the way."""
    program, result = traced(name)
    mdp = TraceMDP(result)
    followed = 0
    for position, bdb, breakpoints in _cases(name, random.Random(name))[::3]:
        for action in (*ACTIONS, Action(kind="breakpoint", lines=tuple(sorted(breakpoints)))):
            engine = TraceSteps(program, mdp, position, copy.deepcopy(bdb))
            start = engine.state
            got = engine.step(action, breakpoints)
            context = f"{action} from {start.function}:{start.line} ({start.event}) with breakpoints {sorted(breakpoints)}"
            assert got == _pdb_stop(mdp, position, bdb, action, breakpoints), context
            if runs_through_events(engine.facts, start, action.kind):  # type: ignore[arg-type]
                assert set(engine.predictions) == {"step_into"}, context
                assert engine.followed_steps == len(engine.predictions) == len(engine.history) - 1, context
                followed += 1
            else:
                assert engine.predictions == [action.kind], context
    assert followed, "no case followed an action"


@pytest.mark.parametrize("name", PROGRAMS)
def test_single_steps_stop_where_pdb_stops(name: str) -> None:
    """With no budget, only step_over and step_return with a breakpoint in reach are single steps."""
    program, result = traced(name)
    mdp = TraceMDP(result)
    for position, bdb, breakpoints in _cases(name, random.Random(name)):
        for action in ACTIONS[:2]:
            engine = TraceSteps(program, mdp, position, copy.deepcopy(bdb))
            engine.follow_steps = 0
            start = engine.state
            got = engine.step(action, breakpoints)
            context = f"{action} from {start.function}:{start.line} ({start.event}) with breakpoints {sorted(breakpoints)}"
            assert got == _pdb_stop(mdp, position, bdb, action, breakpoints), context
            split = breakpoint_in_reach(engine.facts, start, action.kind, breakpoints)  # type: ignore[arg-type]
            assert (engine.predictions != [action.kind]) == split, context


def test_the_corpus_takes_the_single_steps_often() -> None:
    """The tests above compare something: many of their cases take single steps."""
    split = follow = total = 0
    for name in PROGRAMS:
        program, result = traced(name)
        facts, mdp = ProgramFacts.of(program), TraceMDP(result)
        for position, _, breakpoints in _cases(name, random.Random(name)):
            state = mdp.state(position)
            total += 2
            split += sum(breakpoint_in_reach(facts, state, kind, breakpoints) for kind in ("step_over", "step_return"))
            follow += sum(runs_through_events(facts, state, kind) for kind in ("step_over", "step_return"))
    assert split > total // 10, (split, total)
    assert follow > total // 3, (follow, total)


def test_no_breakpoint_in_reach_takes_one_prediction() -> None:
    program, result = traced(next(c.name for c in corpus() if c.breakpoints))
    mdp = TraceMDP(result)
    engine = TraceSteps(program, mdp, mdp.start_position("entry"), BdbState())
    engine.follow_steps = 0
    engine.step(Action(kind="step_over"))
    engine.step(Action(kind="step_return"), frozenset())
    assert engine.predictions == ["step_over", "step_return"]


@pytest.mark.parametrize("budget", [1, 5])
def test_past_the_budget_jumps_finish_the_action(budget: int) -> None:
    """With a tiny budget the engine takes that many single steps, then finishes with jumps from where it
    got to: with exact jumps it still stops where pdb does, and keeps the way in its history."""
    finished = 0
    for item in corpus():
        program, result = traced(item.name)
        mdp = TraceMDP(result)
        for position, bdb, breakpoints in _cases(item.name, random.Random(item.name))[::7]:
            for action in ACTIONS:
                engine = TraceSteps(program, mdp, position, copy.deepcopy(bdb))
                engine.follow_steps = budget
                start = engine.state
                got = engine.step(action, breakpoints)
                context = f"{item.name}: {action} from {start.function}:{start.line} ({start.event})"
                assert got == _pdb_stop(mdp, position, bdb, action, breakpoints), context
                if not runs_through_events(engine.facts, start, action.kind):  # type: ignore[arg-type]
                    continue
                assert engine.predictions[:budget].count("step_into") == min(budget, len(engine.predictions)), context
                assert engine.history[-1] == got and len(engine.history) == len(engine.predictions) + 1, context
                assert set(engine.predictions[budget:]) <= {"step_into", "step_return", "continue", "breakpoint"}, context
                finished += any(kind != "step_into" for kind in engine.predictions[budget:])
    assert finished > 20, finished


class GoingRound(TraceSteps):
    """A model that, single step after single step, goes round two states for ever; its jumps stop at the
    breakpoint (line 5)."""

    def __init__(self) -> None:  # noqa: D107 - no trace: every prediction is made up
        self.program = Program(source=LOOP, entry="spin(2)")
        self.facts = ProgramFacts.of(self.program)
        self._state = _at(2, {"n": "2"})
        self.history = [self._state]
        self.predictions = []

    def predict_steps(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> Generator[Any, Any, State]:
        self.predictions.append(action.kind)
        if action.kind == "step_into":
            self._state = _at(4 if self._state.line == 3 else 3, {"n": "2", "total": "0"})
        else:
            self._state = _at(5, {"n": "2", "total": "0"})
        self.history.append(self._state)
        return self._state
        yield


LOOP = "def spin(n):\n    total = 0\n    while total < n:\n        total += 0\n    return total\n"


def _at(line: int, local: dict[str, str]) -> State:
    from model_backend.state import StackFrame

    return State(event="line", line=line, function="spin", source=LOOP.splitlines()[line - 1], locals=local,
                 stack=[StackFrame(function="spin", line=line)], depth=0)


def test_predictions_that_go_round_finish_with_a_jump_at_the_third_visit() -> None:
    """A state the single steps reach a third time (MAX_REVISITS is 2) ends them: the rest of the budget
    would go round the same states, so the action finishes with its jump at once."""
    engine = GoingRound()
    got = engine.step(Action(kind="continue"), frozenset({5}))
    assert got.line == 5
    assert engine.predictions == ["step_into"] * 5 + ["continue"]  # 3, 4, 3, 4, 3: line 3 a third time
    assert engine.followed_steps == 5 and engine.follow_budget() > 5
