"""The vLLM engine's sessions where vLLM is not installed: its requests answered by the same transformers
model, the way vLLM answers them with the engine's logits processor (each request's prompt, then one
token at a time, every token the one `FrameJob.next_token` chooses, until the end-of-text token or the
request's token budget). The session code the two engines share (engine/driver.py) must then give the
transformers engine's states, searching close calls or not. test_vllm_engine.py runs vLLM itself."""

from __future__ import annotations

import random
import threading
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from transformers import DynamicCache  # noqa: E402

from model_backend.engine.neural import LoadedModel, NeuralEngine  # noqa: E402
from model_backend.program import Program  # noqa: E402
from model_backend.state import Action  # noqa: E402
from model_backend.worker.vllm_engine import FrameJob, Generation, VLLMEngine  # noqa: E402
from tests.support.corpus import corpus  # noqa: E402

pytestmark = [pytest.mark.timeout(900), pytest.mark.usefixtures("one_torch_thread")]
ACTIONS = ["step_into", "step_over", "step_into", "inv_step_over", "step_return", "continue", "inv_step_into"]


class TransformersRequests:
    """What VLLMEngine needs of a VLLMModel, with `generate` run on a transformers model."""

    def __init__(self, loaded: LoadedModel) -> None:
        self.loaded = loaded
        self.tokenizer = loaded.tokenizer
        self.special_ids = loaded.special_ids
        self.vocabulary = loaded.vocabulary
        self.format_version = loaded.format_version
        self.max_context = int(loaded.model.config.max_position_embeddings)
        self.end_id = int(loaded.tokenizer.eos_token_id)
        self.lock = threading.Lock()
        self.requests = 0

    def encode(self, text: str) -> list[int]:
        return self.loaded.encode(text)

    def generate(self, requests: list[Generation]) -> list[FrameJob]:
        for request in requests:
            self.requests += 1
            cache = DynamicCache()  # transformers' own pass, as vLLM computes it (not the engine's lean one)
            emitted: list[int] = []
            ids = request.prompt
            with torch.inference_mode():
                for _ in range(request.max_tokens):
                    out = self.loaded.model(input_ids=torch.tensor([ids]), past_key_values=cache, use_cache=True)
                    token = request.job.next_token(out.logits[0, -1].float(), list(emitted))
                    if token == self.end_id:
                        break
                    emitted.append(token)
                    ids = [token]
        return [r.job for r in requests]


@pytest.fixture(scope="module")
def loaded(tiny_checkpoint: Path) -> LoadedModel:
    return LoadedModel.load(tiny_checkpoint)


@pytest.mark.parametrize("branches", [0, 2])
def test_vllm_sessions_give_the_transformers_engines_states(loaded: LoadedModel, branches: int) -> None:
    requests = TransformersRequests(loaded)
    programs = [Program(source="def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n",
                        path="fact.py", entry="fact(3)"),
                *(c.load() for c in corpus() if c.name == "nested_calls")]
    compared = 0
    for index, program in enumerate(programs):
        rng = random.Random(index)
        actions = [Action(kind=rng.choice(ACTIONS)) for _ in range(6)]  # type: ignore[arg-type]
        ours, theirs = VLLMEngine(requests), NeuralEngine(loaded)  # type: ignore[arg-type]
        ours.search_branches = theirs.search_branches = branches
        got, want = [ours.start(program)], [theirs.start(program)]
        for action in actions:  # the same states from the same context, step by step
            got.append(ours.step(action))
            want.append(theirs.step(action))
            assert ours.context == theirs.context_ids, (program.path, action.kind)
        assert [s.model_copy(update={"confidence": None}) for s in got] == \
            [s.model_copy(update={"confidence": None}) for s in want], program.path
        for a, b in zip(got, want, strict=True):  # the same tokens' log-probabilities, to float32 noise
            assert (a.confidence or {}).keys() == (b.confidence or {}).keys(), program.path
            assert all(abs(a.confidence[k] - b.confidence[k]) < 1e-3 for k in a.confidence or {}), program.path
        compared += len(actions)
    assert compared == 12 and requests.requests >= 8  # a step from the exit state needs no frame
    samples = ours.sample(Action(kind="inv_step_into"), 2)  # a sampled frame goes through the same job
    assert len(samples) == 2 and ours.state == got[-1]
