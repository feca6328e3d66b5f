"""Properties of the debugger MDP and the sampler on the corpus programs."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from model_backend import trace_format as fmt
from model_backend.mdp import TraceMDP, replay_forward
from model_backend.sampler import prompt_target_pairs, sample_forward, sample_inverse, sub_trace
from model_backend.state import Action
from tests.support.corpus import corpus, traced

NAMES = [c.name for c in corpus()]
SETTINGS = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def test_corpus_is_large_enough() -> None:
    assert len(NAMES) >= 40


@pytest.mark.parametrize("name", NAMES)
def test_step_into_replays_the_whole_trace(name: str) -> None:
    _, result = traced(name)
    assert replay_forward(result) == [e for e in result.events if not e.internal]


@pytest.mark.parametrize("name", NAMES)
def test_inverse_walk_visits_forward_states_in_reverse(name: str) -> None:
    """inv_step_into from the end visits every event in reverse order (plus the inv_line_call nodes)."""
    _, result = traced(name)
    mdp = TraceMDP(result)
    position, seen = mdp.exit_position, []
    while position != 0:
        position, _ = mdp.step(position, Action(kind="inv_step_into"))
        node = mdp.nodes[position]
        if node.kind == "event":
            seen.append(node.index)
    assert seen == list(range(len(result.events) - 1, -1, -1))


@pytest.mark.parametrize("name", NAMES)
def test_inverse_step_over_undoes_step_over_within_a_frame(name: str) -> None:
    _, result = traced(name)
    mdp = TraceMDP(result)
    position = mdp.start_position()
    for _ in range(200):
        nxt, _ = mdp.step(position, Action(kind="step_over"))
        if mdp.nodes[nxt].kind == "exit":
            break
        before, after = mdp.events[mdp.nodes[position].index], mdp.events[mdp.nodes[nxt].index]
        if before.frame_id == after.frame_id and before.event == "line" and not before.is_generator:
            back, _ = mdp.step(nxt, Action(kind="inv_step_over"))
            back_node = mdp.nodes[back]
            assert back_node.index == before.index  # the same line, maybe as its inv_line_call duplicate
        position = nxt


@given(name=st.sampled_from(NAMES), seed=st.integers(0, 10**6), inverse=st.booleans())
@SETTINGS
def test_sampled_trajectories_round_trip_through_the_text_format(name: str, seed: int, inverse: bool) -> None:
    program, result = traced(name)
    sample = sample_inverse if inverse else sample_forward
    steps = sample(program, result, random.Random(seed))
    parsed = fmt.parse(fmt.serialize(program, steps, inverse=inverse))
    assert isinstance(parsed, fmt.ParsedTrajectory), parsed
    expected = [(s.model_copy(update={"index": None}), a) for s, a in steps]
    assert parsed.steps == expected


@given(name=st.sampled_from(NAMES), seed=st.integers(0, 10**6))
@SETTINGS
def test_prompt_target_pairs_rebuild_the_text(name: str, seed: int) -> None:
    program, result = traced(name)
    steps = sample_forward(program, result, random.Random(seed))
    pairs = prompt_target_pairs(program, steps, inverse=False)
    assert len(pairs) == len(steps) - 1
    if pairs:
        prompt, target, _ = pairs[-1]
        assert prompt + target == fmt.serialize(program, steps[:-1] + [(steps[-1][0], None)], inverse=False)


@pytest.mark.parametrize("name", ["recursion_factorial", "nested_calls", "tree_walk", "generator_for", "exc_callee_caller", "exc_uncaught_entry", "closures"])
def test_sub_trace_is_a_complete_call(name: str) -> None:
    _, result = traced(name)
    calls = [e.index for e in result.events if e.event == "call"]
    for index in calls:
        sub = sub_trace(result, index)
        assert sub.events[0].event == "call" and sub.events[0].depth == 0
        assert all(e.depth >= 0 for e in sub.events)
        assert replay_forward(sub) == [e for e in sub.events if not e.internal]
        # The whole call: every event of the root frame and its callees, up to the root's own return.
        root = result.events[index]
        own = [e for e in result.events[index:] if e.frame_id == root.frame_id]
        end = result.events.index(next(e for e in own if e.event == "return"))
        assert [e.index for e in sub.events] == list(range(end - index + 1))
        assert [(e.event, e.line, e.function) for e in sub.events] == [
            (e.event, e.line, e.function) for e in result.events[index : end + 1]]
        assert sub.exit in ("normal", "error")
    whole = sub_trace(result, 0)  # the entry's call: the whole trace
    assert [(e.event, e.line) for e in whole.events] == [(e.event, e.line) for e in result.events]


@pytest.mark.parametrize("name", ["recursion_factorial", "nested_calls", "while_loop"])
def test_inverse_start_can_hide_the_returns_locals(name: str) -> None:
    from model_backend.sampler import SamplerConfig

    program, result = traced(name)
    hidden = sample_inverse(program, result, random.Random(3),
                            SamplerConfig(inverse_from_end_prob=1.0, hide_start_locals_prob=1.0))
    shown = sample_inverse(program, result, random.Random(3),  # the same draws, none hiding
                           SamplerConfig(inverse_from_end_prob=1.0, hide_start_locals_prob=1e-12))
    assert shown[0][0].event == "return" and shown[0][0].locals
    assert hidden[0][0] == shown[0][0].model_copy(update={"locals": {}})
    assert hidden[1:] == shown[1:] and hidden[0][1] == shown[0][1]  # only the start changes
    parsed = fmt.parse(fmt.serialize(program, hidden, inverse=True))
    assert isinstance(parsed, fmt.ParsedTrajectory) and parsed.steps[0][0].locals == {}


def test_an_input_jump_starts_where_input_inference_starts() -> None:
    """An input jump is the one prediction input inference proposes arguments with: its start frame is
    written exactly as `infer.known_return` writes it (the last return line, only the value, no output),
    whichever return ran, and its target is the call with the arguments."""
    from model_backend.engine.infer import known_return
    from model_backend.program import Program
    from model_backend.sampler import SamplerConfig, hidden_entry
    from model_backend.sandbox import run_trace

    source = ("def f(s, n):\n    if n > 3:\n        return s * 2\n    out = s.upper()\n    print(out)\n"
              "    return out + str(n)\n")
    for entry, returned in (("f('ab', 2)", "'AB2'"), ("f('ab', 5)", "'abab'")):  # the second returns on line 3
        program = Program(source=source, entry=entry)
        steps = sample_inverse(program, run_trace(program), random.Random(0), SamplerConfig(input_jump_prob=1.0))
        assert [a.kind for _, a in steps if a is not None] == ["inv_step_call"]
        start, call = steps[0][0], steps[1][0]
        known = known_return(Program(source=source, path="<infer>", entry=hidden_entry(entry)), "f", returned)
        assert fmt.frame_target(start, None, True) == fmt.frame_target(known, None, True)
        assert call.event == "call" and call.depth == 0 and call.locals == {"s": "'ab'", "n": entry[-2]}
    # No jump where the trace does not end at the entry's own return: the usual inverse trajectory.
    program = Program(source="def f(x):\n    return 1 / x\n", entry="f(0)")
    steps = sample_inverse(program, run_trace(program), random.Random(0), SamplerConfig(input_jump_prob=1.0))
    assert steps[0][0].locals or steps[0][0].event != "return"  # not hidden: an ordinary inverse start
