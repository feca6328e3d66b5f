"""The neural engine on tiny checkpoints built here: grammar, KV cache, failures, initial states."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from model_backend import trace_format as fmt
from model_backend.engine.base import EngineError
from model_backend.engine.decoding import SEARCH_BRANCHES, SEARCH_ENV, FrameDecoder
from model_backend.engine.initial import initial_state
from model_backend.engine.neural import DRAFT_ENV, LoadedModel, NeuralEngine, run_together
from model_backend.mdp import TraceMDP
from model_backend.program import Program
from model_backend.sandbox import run_trace
from model_backend.state import Action, State
from tests.support.corpus import corpus, traced

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def random_model(untrained_checkpoint: Path) -> LoadedModel:
    return LoadedModel.load(untrained_checkpoint)


@pytest.fixture(scope="module")
def trained_model(tiny_checkpoint: Path) -> LoadedModel:
    return LoadedModel.load(tiny_checkpoint)


@pytest.mark.parametrize("name", ["nested_calls", "recursion_factorial", "class_basic"])
def test_random_weights_never_give_an_unparsable_state(random_model: LoadedModel, name: str) -> None:
    program, _ = traced(name)
    engine = NeuralEngine(random_model)
    engine.start(program)
    for kind in ("step_into", "step_over", "inv_step_over", "step_return", "inv_step_call"):
        state = engine.step(Action(kind=kind))  # type: ignore[arg-type]
        assert state.error is None, state.error
        assert state.exit is not None or (state.line in ProgramLines(program) and state.stack)


def ProgramLines(program: Program) -> set[int]:  # noqa: N802 - reads as a set in the assertion
    return {i + 1 for i, text in enumerate(program.lines) if text.strip()}


def test_kv_cache_reuse_matches_a_fresh_encode(trained_model: LoadedModel) -> None:
    """The cached context after several steps gives the same next-token logits as encoding the same
    tokens from scratch, and the same next prediction."""
    program, _ = traced("early_return")
    engine = NeuralEngine(trained_model)
    engine.start(program)
    for kind in ("step_into", "step_over", "step_over"):
        engine.step(Action(kind=kind))  # type: ignore[arg-type]
    context = list(engine.context_ids)
    assert len(context) == engine._context_len()
    with torch.inference_mode():
        fresh = trained_model.model(input_ids=torch.tensor([context])).logits[0, -1]
    cached = engine.logits()
    assert torch.allclose(fresh, cached, atol=1e-4)
    # The next prediction from the cache equals the one from a new engine fed the same tokens.
    after_cache = engine.step(Action(kind="step_over"))
    other = NeuralEngine(trained_model)
    other.start(program)
    other._crop(0)
    other._feed(context)
    other._state, other.inverse = engine.history[-2], engine.inverse
    other.trail = engine.trail[:-1]  # the grammar reads the steps that led there too
    after_fresh = other.step(Action(kind="step_over"))
    # The same state; confidences agree to float precision (a cached and a fresh forward pass round apart).
    assert after_fresh.model_copy(update={"confidence": None}) == after_cache.model_copy(update={"confidence": None})
    assert after_fresh.confidence is not None and after_cache.confidence is not None
    assert after_fresh.confidence.keys() == after_cache.confidence.keys()
    assert all(abs(after_fresh.confidence[k] - after_cache.confidence[k]) < 1e-4 for k in after_cache.confidence)


def test_search_keeps_the_likeliest_of_greedy_and_its_branches_and_leaves_that_frame_in_the_cache(
        trained_model: LoadedModel) -> None:
    """With search, a frame is never less likely (by the model's own total log-probability) than the
    greedy one, is sometimes more likely, and the cache afterwards holds exactly the frame returned."""
    gains = []
    for name, kind in (("nested_calls", "step_into"), ("nested_calls", "step_return"), ("early_return", "step_over"),
                       ("class_basic", "inv_step_over")):
        program, _ = traced(name)
        frames = {}
        for branches in (0, 3):
            engine = NeuralEngine(trained_model)
            engine.search_branches = branches
            engine.start(program)
            with torch.inference_mode():
                engine._feed(trained_model.encode(fmt.serialize_action(Action(kind=kind))))  # type: ignore[arg-type]
                mark = engine._context_len()
                frames[branches] = engine._generate_frame(engine.state, sample=False)
                frame_ids = engine.context_ids[mark:]
                fresh = trained_model.model(input_ids=torch.tensor([engine.context_ids])).logits[0, -1]
            assert frames[branches] is not None
            assert torch.allclose(fresh, engine.logits(), atol=1e-4)  # the cache is the context
            assert trained_model.tokenizer.decode(frame_ids) == frames[branches].text
        gains.append(frames[3].total_logprob - frames[0].total_logprob)
    assert min(gains) >= 0
    assert max(gains) > 0  # the search found a likelier frame somewhere (else it would be untested)


def test_pruning_branches_that_cannot_win_changes_no_frame(trained_model: LoadedModel,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A branch stops once its total log-probability is below the best frame's (totals only fall):
    the frames chosen are those of a search that decodes every branch to its end, for fewer tokens."""
    def run() -> tuple[list[str], int]:
        texts, fed = [], 0
        for name, kind in (("nested_calls", "step_into"), ("early_return", "step_over"), ("class_basic", "step_into"),
                           ("recursion_factorial", "step_return")):
            engine = NeuralEngine(trained_model)
            engine.search_branches = 4
            engine.start(traced(name)[0])
            feed = engine._feed_steps
            def counting(ids: list[int], feed=feed):  # type: ignore[no-untyped-def]
                nonlocal fed
                fed += len(ids)
                return (yield from feed(ids))
            engine._feed_steps = counting  # type: ignore[method-assign]
            with torch.inference_mode():
                engine._feed(trained_model.encode(fmt.serialize_action(Action(kind=kind))))  # type: ignore[arg-type]
                frame = engine._generate_frame(engine.state, sample=False)
            texts.append(frame.text if frame else "")
        return texts, fed

    pruned, pruned_tokens = run()
    finish = NeuralEngine._finish_frame_steps
    monkeypatch.setattr(NeuralEngine, "_finish_frame_steps", lambda self, decoder, bound=None: finish(self, decoder))
    unpruned, unpruned_tokens = run()
    assert pruned == unpruned
    assert pruned_tokens < unpruned_tokens


@pytest.mark.parametrize("name", ["nested_calls", "class_basic", "early_return"])
def test_only_choice_is_the_one_token_a_scan_of_the_whole_vocabulary_allows(trained_model: LoadedModel,
                                                                             name: str) -> None:
    """`FrameDecoder.only_choice` tries the one-byte tokens and the tokens behind the one byte allowed;
    at every choice of a run it names the token that a scan of every token finds alone, or None."""
    checked, single = 0, 0
    scan = FrameDecoder.next_tokens

    def checking(self: FrameDecoder, logits: torch.Tensor | None, bound: float | None = None) -> list[int] | None:
        nonlocal checked, single
        if not self.done and self.constraint.forced_text() is None:
            allowed = [t for t in range(len(self.vocab.token_bytes)) if self.allows(t)]
            assert self.only_choice() == (allowed[0] if len(allowed) == 1 else None)
            checked, single = checked + 1, single + (len(allowed) == 1)
        return scan(self, logits, bound)

    program, _ = traced(name)
    engine = NeuralEngine(trained_model)
    engine.start(program)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(FrameDecoder, "next_tokens", checking)
        for kind in ("step_into",) * 6 + ("inv_step_over", "step_over", "step_return"):
            engine.step(Action(kind=kind))  # type: ignore[arg-type]
    assert checked >= 10 and 0 < single < checked


def test_a_greedy_step_runs_the_model_only_where_it_has_a_choice(trained_model: LoadedModel) -> None:
    """Tokens the grammar leaves alone are taken without the model, and tokens that need no logits
    ride with the next forward pass: the same states as a decoder that asks the model for every
    token and feeds every token at once, in fewer passes."""
    def run(lean: bool) -> tuple[list[object], int]:
        states, passes = [], 0
        for name in ("nested_calls", "early_return", "class_basic"):
            engine = NeuralEngine(trained_model)
            engine.draft_tokens = 0  # passes a draft saves are test_drafts_..._save_passes's
            forward = engine._forward

            def counting(ids: list[int], tail: int = 1, forward=forward) -> torch.Tensor:  # type: ignore[no-untyped-def]
                nonlocal passes
                passes += 1
                return forward(ids, tail)
            engine._forward = counting  # type: ignore[method-assign]
            engine.start(traced(name)[0])
            with pytest.MonkeyPatch.context() as patch:
                if not lean:
                    patch.setattr(FrameDecoder, "only_choice", lambda self: None)
                    patch.setattr(FrameDecoder, "wants_logits", lambda self: not self.done)
                for kind in ("step_into", "step_over", "step_over", "step_into", "inv_step_over"):
                    state = engine.step(Action(kind=kind))  # type: ignore[arg-type]
                    states.append(state.model_copy(update={"confidence": None}))
        return states, passes

    lean_states, lean_passes = run(lean=True)
    full_states, full_passes = run(lean=False)
    assert lean_states == full_states
    assert lean_passes < 0.75 * full_passes


def _session_states(model: LoadedModel, draft_tokens: int) -> tuple[list[State], dict[str, int]]:
    """The states of a fixed walk over three programs (forward, inverse, followed actions) with drafts of
    at most `draft_tokens` tokens, and the engines' draft figures summed."""
    states: list[State] = []
    figures = {"passes": 0, "drafted": 0, "saved": 0}
    for name in ("nested_calls", "early_return", "class_basic"):
        engine = NeuralEngine(model)
        engine.draft_tokens = draft_tokens
        engine.start(traced(name)[0])
        for kind in ("step_into", "step_into", "step_over", "step_return", "inv_step_over", "step_over", "step_into"):
            states.append(engine.step(Action(kind=kind)))  # type: ignore[arg-type]
        for key in figures:
            figures[key] += engine.draft_figures[key]
    return states, figures


def test_drafts_change_no_prediction_and_save_passes(trained_model: LoadedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """A draft rides with a forward pass and the decoder still chooses each token from the logits at its
    own position: the same states, confidences equal to float rounding, in fewer passes. (The engines
    are made with drafts off by $NDB_DRAFT: setting `draft_tokens` turns them on.)"""
    monkeypatch.setenv(DRAFT_ENV, "0")
    plain, plain_figures = _session_states(trained_model, 0)
    drafted, figures = _session_states(trained_model, 16)
    assert [s.model_copy(update={"confidence": None}) for s in drafted] == \
        [s.model_copy(update={"confidence": None}) for s in plain]
    for a, b in zip(drafted, plain, strict=True):
        assert (a.confidence or {}).keys() == (b.confidence or {}).keys()
        assert all(abs(a.confidence[k] - b.confidence[k]) < 1e-4 for k in a.confidence or {})  # type: ignore[index]
    assert plain_figures["drafted"] == plain_figures["saved"] == 0
    assert figures["drafted"] > 0 and figures["saved"] > 0
    assert figures["passes"] + figures["saved"] == plain_figures["passes"]


def test_a_session_that_drafted_goes_on_in_a_batched_pass(trained_model: LoadedModel) -> None:
    """A session's KV cache may hold a draft's tokens past its context; a batched round (run_together,
    which takes no drafts) first cuts it back: the same state as a session that never drafted."""
    program = traced("nested_calls")[0]
    results = []
    for draft_tokens in (16, 0):
        engine = NeuralEngine(trained_model)
        engine.draft_tokens = draft_tokens
        engine.start(program)
        for kind in ("step_into", "step_into", "step_over"):
            engine.step(Action(kind=kind))  # type: ignore[arg-type]
        [state] = run_together([(engine, engine.step_steps(Action(kind="step_over")))])
        assert isinstance(state, State)
        results.append(state.model_copy(update={"confidence": None}))
    assert results[0] == results[1]


@pytest.mark.parametrize(("value", "branches"), [(None, SEARCH_BRANCHES), ("0", 0), ("7", 7), ("-1", SEARCH_BRANCHES),
                                                  ("many", SEARCH_BRANCHES)])
def test_ndb_search_sets_the_engines_search_and_a_bad_value_keeps_the_default(
        random_model: LoadedModel, monkeypatch: pytest.MonkeyPatch, value: str | None, branches: int) -> None:
    if value is None:
        monkeypatch.delenv(SEARCH_ENV, raising=False)
    else:
        monkeypatch.setenv(SEARCH_ENV, value)
    assert NeuralEngine(random_model).search_branches == branches


def test_a_frame_that_fails_to_parse_gives_an_error_state(trained_model: LoadedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    program, _ = traced("early_return")
    engine = NeuralEngine(trained_model)
    start = engine.start(program)
    monkeypatch.setattr(fmt, "parse_frame", lambda *a, **k: fmt.FormatError(message="broken", position=0))
    state = engine.step(Action(kind="step_into"))
    assert state.error is not None and "prediction failed" in state.error
    assert state.line == start.line  # the previous state, marked
    monkeypatch.undo()
    assert engine.step(Action(kind="step_into")).error is None  # the session goes on


def test_a_grammar_that_allows_no_token_gives_an_error_state(trained_model: LoadedModel,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A dead end of the decoding grammar (a rule that leaves no token) fails the frame, not the engine."""
    from model_backend.grammar import FrameConstraint

    program, _ = traced("early_return")
    engine = NeuralEngine(trained_model)
    start = engine.start(program)
    monkeypatch.setattr(FrameConstraint, "accepts_text", lambda self, data: False)
    monkeypatch.setattr(FrameConstraint, "allowed_specials", lambda self: [])
    state = engine.step(Action(kind="step_into"))
    assert state.error is not None and "prediction failed" in state.error
    assert state.line == start.line
    monkeypatch.undo()
    assert engine.step(Action(kind="step_into")).error is None


def test_sampled_predictions_depend_on_the_request_not_on_torchs_global_seed(random_model: LoadedModel) -> None:
    """Samples (and the retry after a frame that fails to parse) are seeded by the prompt, as the vLLM
    engine seeds them, so a session can be replayed and both engines make the same draws."""
    program, _ = traced("nested_calls")
    drawn = []
    for global_seed in (1, 2):
        torch.manual_seed(global_seed)
        engine = NeuralEngine(random_model)
        engine.start(program)
        drawn.append([s.model_copy(update={"confidence": None}) for s in engine.sample(Action(kind="step_into"), 4)])
    assert drawn[0] == drawn[1]
    assert len({s.model_dump_json() for s in drawn[0]}) > 1  # still samples: the draws within a session differ


def test_set_variable_takes_literals_only(trained_model: LoadedModel) -> None:
    program, _ = traced("early_return")
    engine = NeuralEngine(trained_model)
    state = engine.start(program)
    name = next(iter(state.locals))
    assert engine.set_variable(name, "[1, 2]").locals[name] == "[1, 2]"
    with pytest.raises(EngineError, match="literal"):
        engine.set_variable(name, "__import__('os').getcwd()")


def test_initial_states_match_the_oracle_without_running_anything() -> None:
    checked = 0
    for item in corpus():
        program, result = traced(item.name)
        try:
            ours = initial_state(program)
        except EngineError:
            continue  # e.g. an entry that calls a builtin: the neural engine says so clearly
        truth = TraceMDP(result).state(0)
        assert (ours.event, ours.line, ours.function, ours.locals, ours.stack) == (
            truth.event, truth.line, truth.function, truth.locals, truth.stack), item.name
        checked += 1
    assert checked >= 40


ENTRY_SOURCE = "def f(text, items, table, span=sorted([3, 1])):\n    return text\n"


@pytest.mark.parametrize("entry", [
    "f('$78'.upper(), list(range(3)), dict(e=1, d=[2]))",
    "f(''.join(['A'] * 4), [x * 2 for x in 'ab'], {'k': len('abc')}, span=list(reversed((1, 2))))",
    "f(text=str(12).zfill(4), items=range(2, 5), table=dict())",
])
def test_an_entry_of_builtins_on_literals_binds_what_the_tracer_shows(entry: str) -> None:
    """Expressions of literals and builtins in the entry are computed (grammar/evaluation.py), never run: the call
    state is the one the program, traced in the sandbox, shows."""
    program = Program(source=ENTRY_SOURCE, entry=entry)
    ours = initial_state(program)
    truth = TraceMDP(run_trace(program)).state(0)
    assert (ours.event, ours.function, ours.locals) == (truth.event, truth.function, truth.locals)


@pytest.mark.parametrize(("source", "entry"), [
    (ENTRY_SOURCE, "f(g(1), [], {})"),  # a function, not a builtin
    (ENTRY_SOURCE + "def list(x):\n    return x\n", "f('a', list('ab'), {})"),  # the program's own `list`
    (ENTRY_SOURCE + "dict = None\n", "f('a', [], dict(a=1))"),
    (ENTRY_SOURCE, "f('a' * 10**9, [], {})"),  # not computed here (and far too long)
    (ENTRY_SOURCE, "f('a', zip([1], [2]), {})"),  # an iterator: its repr is not a literal's
    (ENTRY_SOURCE, "f(text, [], {})"),  # a variable
])
def test_an_entry_that_is_not_computed_is_a_clear_error(source: str, entry: str) -> None:
    with pytest.raises(EngineError, match="must be a literal, or an expression of literals and builtins"):
        initial_state(Program(source=source, entry=entry))


def test_missing_checkpoint_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="no model checkpoint"):
        LoadedModel.load(tmp_path)


@pytest.mark.parametrize("sample", [False, True])
def test_frame_job_redoes_a_choice_whose_token_vllm_dropped(random_model: LoadedModel, sample: bool) -> None:
    """The vLLM logits processor's bookkeeping (no vLLM needed): a row sampled during a chunked prefill
    gets a token that vLLM drops, then the same position is asked again with the real logits. The frame
    must come out as if the dropped call never happened."""
    from model_backend.engine.decoding import FrameDecoder
    from model_backend.grammar import FrameConstraint, ProgramFacts
    from model_backend.worker.vllm_engine import FrameJob

    program, result = traced("nested_calls")
    prev = TraceMDP(result).state(0)
    facts = ProgramFacts.of(program)
    vocab = len(random_model.token_bytes)

    def job() -> FrameJob:
        generator = torch.Generator().manual_seed(5) if sample else None
        decoder = FrameDecoder(FrameConstraint(facts, prev, False), random_model.vocabulary, sample, generator)
        return FrameJob(decoder, end_id=0)

    def logits(seed: int) -> torch.Tensor:
        return torch.randn(vocab, generator=torch.Generator().manual_seed(seed)) * 4

    # Random logits can make a long frame (sampled values run on), so the loop runs to the end token, with a
    # cap far above any frame the decoder allows rather than one that depends on the tokenizer of the day.
    straight, dropping = job(), job()
    for k in range(20_000):
        a = straight.next_token(logits(k), list(straight.token_ids))
        emitted = list(dropping.token_ids)
        if k % 3 == 0:  # a dropped sample first: vLLM asks again with the same emitted tokens
            dropping.next_token(logits(100_000 + k), emitted)
        b = dropping.next_token(logits(k), emitted)
        assert a == b
        if a == 0:
            break
    assert straight.failed is None and dropping.failed is None
    assert straight.decoder.done and dropping.token_ids == straight.token_ids
    assert dropping.decoder.result() == straight.decoder.result()
    straight.next_token(logits(0), [*straight.token_ids, 7])  # vLLM went its own way: the frame fails
    assert straight.failed is not None


def test_goto_moves_the_frame_and_later_steps_start_there(trained_model: LoadedModel) -> None:
    source = "def f(n):\n    a = 1\n    a += 10\n    for i in range(2):\n        a += i\n    return a\n"
    engine = NeuralEngine(trained_model)
    engine.search_branches = 0  # greedy: the tiny model's greedy step_into is a line event (its search prefers exiting)
    engine.start(Program(source=source, entry="f(0)"))
    with pytest.raises(EngineError, match="only when paused at a line"):
        engine.goto(3)  # at the call event
    at_line = engine.step(Action(kind="step_into"))
    assert at_line.event == "line"
    jumped = engine.goto(3)
    assert (jumped.line, jumped.source, jumped.stack[-1].line) == (3, "    a += 10", 3)
    assert jumped.locals == at_line.locals and engine.state == jumped
    for bad, why in ((5, "into the body of a for loop"), (0, "not in the program"), (40, "not in the program")):
        with pytest.raises(EngineError, match=why):
            engine.goto(bad)
    assert engine.state == jumped
    after = engine.step(Action(kind="step_over"))
    fresh = NeuralEngine(trained_model)  # a session opened at the jumped-to state predicts the same
    fresh.search_branches = 0
    fresh.resume(Program(source=source, entry="f(0)"), [jumped], inverse=False)
    assert fresh.step(Action(kind="step_over")) == after


def test_going_forward_from_a_line_reached_backwards_onto_a_call(random_model: LoadedModel) -> None:
    """Stepping back onto the line that made a call gives an `inv_line_call` state, which has no forward
    event; the next forward step must rebase on it as that line (it raised ValueError before)."""
    program, result = traced("nested_calls")
    mdp = TraceMDP(result)
    position = next(p for p, node in enumerate(mdp.nodes) if node.kind == "inv_line_call")
    state = mdp.state(position)
    assert state.event == "inv_line_call"
    engine = NeuralEngine(random_model)
    assert engine.resume(program, [state], inverse=True) == state
    for kind in ("step_into", "step_over", "inv_step_into", "step_return"):
        after = engine.step(Action(kind=kind))  # type: ignore[arg-type]
        assert after.error is None or after.error.startswith("prediction failed")


def test_a_step_from_a_loop_header_takes_the_next_element_whatever_the_weights(random_model: LoadedModel) -> None:
    """The engine remembers the states before the current one and the actions from them, and the grammar
    reads them: reached from the loop's body, the header's step takes the element after the variable's
    value (random weights could write anything else). Going back forgets it."""
    from model_backend.state import StackFrame, State

    program = Program(source="def f(s):\n    n = 0\n    for ch in s:\n        n += 1\n    return n\n", entry="f('abc')")

    def at(line: int, **shown: str) -> State:
        return State(event="line", line=line, function="f", source=program.lines[line - 1],
                     stack=[StackFrame(function="f", line=line)], locals=shown)

    body, header = at(4, s="'abc'", n="0", ch="'a'"), at(3, s="'abc'", n="1", ch="'a'")
    engine = NeuralEngine(random_model)
    engine.resume(program, [body, header], inverse=False)
    assert engine.trail == []  # a resumed session has not seen the step
    engine.trail = [(body, "step_into")]
    state = engine.step(Action(kind="step_into"))
    assert (state.line, state.locals["ch"], state.locals["n"]) == (4, "'b'", "1")
    assert engine.trail == [(body, "step_into"), (header, "step_into")]
    engine.step(Action(kind="inv_step_into"))
    assert engine.trail == []


@pytest.mark.parametrize(("value", "threads"), [(None, 1), ("3", 3), ("0", 1), ("two", 1), (" 2 ", 2)])
def test_the_in_process_model_runs_on_one_thread_unless_ndb_torch_threads_says(
        monkeypatch: pytest.MonkeyPatch, value: str | None, threads: int) -> None:
    from model_backend.engine.neural import THREADS_ENV, inference_threads

    if value is None:
        monkeypatch.delenv(THREADS_ENV, raising=False)
    else:
        monkeypatch.setenv(THREADS_ENV, value)
    assert inference_threads() == threads


def _without_confidence(state: State) -> State:
    return state.model_copy(update={"confidence": None})


def _resumed(model: LoadedModel, program: Program, history: list[State], action: Action) -> tuple[list[int], State]:
    """A new session resumed at `history`'s last state: its context, and what it predicts for `action`."""
    fresh = NeuralEngine(model)
    fresh.resume(program, history, False)
    context = list(fresh.context_ids)
    return context, _without_confidence(fresh.step(action))


def test_a_pass_that_fails_part_way_leaves_the_session_on_its_current_state(
        trained_model: LoadedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """A forward pass that raises after growing one layer of the KV cache (out of memory, say): the error
    reaches the caller, the session keeps its state and history, and its next prediction is that of a
    session resumed there (the cache rebuilt whole, every layer the same length)."""
    program = traced("class_basic")[0]
    engine = NeuralEngine(trained_model)
    engine.start(program)
    for kind in ("step_into", "step_over"):
        engine.step(Action(kind=kind))  # type: ignore[arg-type]
    history = list(engine.history)
    assert trained_model.lean is not None

    def fails_after_layer_0(ids: list[int], cache: Any, tail: int = 1) -> torch.Tensor:
        heads, _, head_dim = cache._shape
        key = torch.zeros(1, heads, len(ids), head_dim)
        cache.update(key, key, 0)
        raise RuntimeError("out of memory")

    with monkeypatch.context() as patched:
        patched.setattr(trained_model.lean, "forward", fails_after_layer_0)
        with pytest.raises(RuntimeError, match="out of memory"):
            engine.step(Action(kind="step_over"))
    assert engine.history == history and engine.state == history[-1]
    context, expected = _resumed(trained_model, program, history, Action(kind="step_over"))
    assert engine.context_ids == context
    after = engine.step(Action(kind="step_over"))
    assert len(set(engine.cache.lengths)) == 1
    assert _without_confidence(after) == expected


def test_a_batched_round_that_fails_ends_its_operations_with_an_error_and_the_sessions_go_on(
        trained_model: LoadedModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """run_together: a round whose forward pass raises gives each operation in it an EngineError that
    names the failure, and each session then predicts as one resumed at its current state."""
    import model_backend.engine.neural as neural

    program = traced("early_return")[0]
    engines = [NeuralEngine(trained_model) for _ in range(2)]
    for engine in engines:
        engine.start(program)
        engine.step(Action(kind="step_into"))
    histories = [list(engine.history) for engine in engines]

    def fails(*_: object) -> list[torch.Tensor]:
        raise RuntimeError("device lost")

    with monkeypatch.context() as patched:
        patched.setattr(neural, "ragged_forward", fails)
        results = run_together([(engine, engine.step_steps(Action(kind="step_over"))) for engine in engines])
    assert all(isinstance(r, EngineError) and "device lost" in str(r) for r in results)
    for engine, history in zip(engines, histories, strict=True):
        assert engine.history == history
        context, expected = _resumed(trained_model, program, history, Action(kind="step_over"))
        assert engine.context_ids == context
        [after] = run_together([(engine, engine.step_steps(Action(kind="step_over")))])
        assert isinstance(after, State)
        assert _without_confidence(after) == expected
