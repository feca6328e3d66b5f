"""IDE breakpoints under step_over and step_return for stepwise (model) engines.

A model predicts step_over in one jump and cannot know that a breakpoint waits in the callee, so
`StepwiseEngine.step_steps` takes such an action as single steps when a breakpoint is in reach
(model_backend/engine/breakpoints.py). Here the single steps come from real traces (`TraceSteps`): if
each step is right, the way through must stop exactly where pdb does, i.e. where the oracle's MDP
stops with the same breakpoints, on every program of the corpus.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Generator
from typing import Any

import pytest

from model_backend.engine import base
from model_backend.engine.base import StepwiseEngine
from model_backend.engine.breakpoints import breakpoint_in_reach
from model_backend.engine.constraint import ProgramFacts
from model_backend.mdp import BdbState, TraceMDP
from model_backend.program import Program
from model_backend.state import Action, State
from tests.corpus import corpus, traced


class TraceSteps(StepwiseEngine):
    """A stepwise engine whose every prediction is the real trace's next state (no model)."""

    name = "trace-steps"

    def __init__(self, program: Program, mdp: TraceMDP, position: int, bdb: BdbState) -> None:
        self.program, self.facts, self.mdp = program, ProgramFacts.of(program), mdp
        self.position, self.bdb = position, bdb
        self._state = mdp.state(position)
        self.history = [self._state]
        self.saved = [(position, copy.deepcopy(bdb))]  # per history entry, to go back to
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
        self.saved.append((self.position, copy.deepcopy(self.bdb)))
        return self._state
        yield

    def replace_current_steps(self, state: State) -> Generator[Any, Any, State]:
        del self.saved[len(self.history):]
        self.position, bdb = self.saved[-1]
        self.bdb = copy.deepcopy(bdb)
        assert self.mdp.state(self.position) == state
        self.history[-1] = self._state = state
        return state
        yield

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


@pytest.mark.parametrize("name", PROGRAMS)
def test_single_steps_stop_where_pdb_stops(name: str) -> None:
    program, result = traced(name)
    mdp = TraceMDP(result)
    for position, bdb, breakpoints in _cases(name, random.Random(name)):
        for kind in ("step_over", "step_return"):
            engine = TraceSteps(program, mdp, position, copy.deepcopy(bdb))
            start = engine.state
            got = engine.step(Action(kind=kind), breakpoints)
            want_position, want_stdout = mdp.step(position, Action(kind=kind), breakpoints, copy.deepcopy(bdb))
            want = mdp.state(want_position, stdout=want_stdout)
            context = f"{kind} from {start.function}:{start.line} ({start.event}) with breakpoints {sorted(breakpoints)}"
            assert got == want, context
            split = breakpoint_in_reach(engine.facts, start, kind, breakpoints)  # type: ignore[arg-type]
            assert (engine.predictions != [kind]) == split, context


def test_the_corpus_takes_the_single_steps_often() -> None:
    """The test above compares something: many of its cases take the single steps."""
    split = total = 0
    for name in PROGRAMS:
        program, result = traced(name)
        facts, mdp = ProgramFacts.of(program), TraceMDP(result)
        for position, _, breakpoints in _cases(name, random.Random(name)):
            total += 2
            split += sum(breakpoint_in_reach(facts, mdp.state(position), kind, breakpoints)
                         for kind in ("step_over", "step_return"))
    assert split > total // 10, (split, total)


def test_no_breakpoint_in_reach_takes_one_prediction() -> None:
    program, result = traced(next(c.name for c in corpus() if c.breakpoints))
    mdp = TraceMDP(result)
    engine = TraceSteps(program, mdp, mdp.start_position("entry"), BdbState())
    engine.step(Action(kind="step_over"))
    engine.step(Action(kind="step_return"), frozenset())
    assert engine.predictions == ["step_over", "step_return"]


def test_a_way_too_long_falls_back_to_one_jump(monkeypatch: pytest.MonkeyPatch) -> None:
    """With a tiny step budget the engine goes back to where it started and predicts the action in
    one jump: the history keeps no half-way states."""
    monkeypatch.setattr(base, "MAX_SINGLE_STEPS", 1)
    for item in corpus():
        program, result = traced(item.name)
        mdp = TraceMDP(result)
        facts = ProgramFacts.of(program)
        for position in range(len(mdp.nodes)):
            state = mdp.state(position)
            breakpoints = frozenset(e.line for e in result.events if e.event == "line" and e.depth > state.depth)
            if state.exit is None and breakpoints and breakpoint_in_reach(facts, state, "step_return", breakpoints):
                engine = TraceSteps(program, mdp, position, BdbState())
                got = engine.step(Action(kind="step_return"), breakpoints)
                if len(engine.predictions) == 2:  # one single step that did not stop, then the jump
                    assert engine.predictions[-1] == "step_return"
                    assert engine.history == [state, got]
                    return
    pytest.fail("no state in the corpus needs more than one single step")
