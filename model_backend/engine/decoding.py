"""Choosing the tokens of one predicted frame under the trace format's constraint.

Shared by the transformers engine (model_backend.engine.neural), which calls it between forward passes
on its own KV cache, and the vLLM engine (model_backend.worker.vllm_engine), which calls it from a vLLM
logits processor. Both therefore make the same choice from the same logits: the best token (or, when
sampling, the first of 64 draws) that `FrameConstraint` accepts; text the constraint forces (a frame's
source line) is taken as the tokenizer encodes it, never generated.
"""

from __future__ import annotations

import copy
import math
import zlib
from collections.abc import Callable
from dataclasses import dataclass

import torch

from model_backend import trace_format as fmt
from model_backend.engine.base import EngineError
from model_backend.engine.constraint import FrameConstraint, Locals
from model_backend.state import State

SAMPLE_DRAWS = 64  # draws tried in order before falling back to the best allowed token


@dataclass(frozen=True)
class Vocabulary:
    """What decoding needs of a tokenizer: the format's special token ids and every token's bytes."""

    special_ids: dict[str, int]
    token_bytes: list[bytes | None]  # None for special tokens
    encode: Callable[[str], list[int]]

    @property
    def special_by_id(self) -> dict[int, str]:
        return {i: t for t, i in self.special_ids.items()}


@dataclass
class Generated:
    text: str
    logprobs: dict[str, float]  # variable name (or "..") -> summed log-probability of its tokens

    def confidence(self, state: State) -> dict[str, float]:
        """name -> probability the model gave to that variable's predicted value. Variables carried
        over through the `".."` marker get the marker's probability."""
        unchanged = math.exp(self.logprobs.get("..", 0.0))
        return {name: math.exp(self.logprobs[name]) if name in self.logprobs else unchanged for name in state.locals}


def request_generator(prompt: list[int], samples_drawn: int) -> torch.Generator:
    """The random generator of one sampled frame: seeded by the request (the prompt's token ids and how
    many samples the session drew before), not by what else runs, so a session replays the same draws
    and the transformers and vLLM engines make the same ones."""
    return torch.Generator().manual_seed(zlib.crc32(str(prompt).encode()) + samples_drawn)


class FrameDecoder:
    """The token-by-token choice of one frame after `<|frame_sep|>`.

    Use: while not `done`, either `take_forced()` gives token ids to feed as they are, or `choose(logits)`
    picks the next token (and records it). `result()` is the frame text and per-variable log-probabilities.
    """

    def __init__(self, constraint: FrameConstraint, vocab: Vocabulary, sample: bool,
                 generator: torch.Generator | None = None) -> None:
        self.constraint = constraint
        self.vocab = vocab
        self.sample = sample
        self.generator = generator  # for sampled choices; None: torch's global generator
        self._by_id = vocab.special_by_id
        self._text: list[str] = [fmt.FRAME]
        self.scores: dict[str, float] = {}

    @property
    def done(self) -> bool:
        return self.constraint.done

    def take_forced(self) -> list[int] | None:
        """The token ids of text the constraint forces here (now taken), or None when a choice is due."""
        forced = self.constraint.forced_text()
        if forced is None:
            return None
        self.constraint.push_forced()
        self._text.append(forced)
        return self.vocab.encode(forced)

    def choose(self, logits: torch.Tensor) -> int:
        """The best (or a sampled) allowed token for these next-token logits (1-D); it is recorded."""
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        token_id = self._pick(logits)
        key = _locals_key(self.constraint)
        if token_id in self._by_id:
            self.constraint.push_special(self._by_id[token_id])
            self._text.append(self._by_id[token_id])
        else:
            data = self.vocab.token_bytes[token_id]
            assert data is not None
            self.constraint.push_text(data)
            self._text.append(data.decode("utf-8", "replace"))
        if key is not None:
            self.scores[key] = self.scores.get(key, 0.0) + float(logprobs[token_id])
        return token_id

    def snapshot(self) -> tuple[object, ...]:
        """What `restore` needs to undo the choices made after this point. The constraint's slots are
        immutable values, so a shallow copy of it suffices."""
        rng = self.generator.get_state() if self.generator is not None else None
        return copy.copy(self.constraint), len(self._text), dict(self.scores), rng

    def restore(self, snapshot: tuple[object, ...]) -> None:
        constraint, n_text, scores, rng = snapshot
        assert isinstance(constraint, FrameConstraint) and isinstance(n_text, int) and isinstance(scores, dict)
        self.constraint = copy.copy(constraint)
        del self._text[n_text:]
        self.scores = dict(scores)
        if self.generator is not None and isinstance(rng, torch.Tensor):
            self.generator.set_state(rng)

    def result(self) -> Generated:
        return Generated("".join(self._text), dict(self.scores))

    def _pick(self, logits: torch.Tensor) -> int:
        allowed_specials = {self.vocab.special_ids[t] for t in self.constraint.allowed_specials()}
        if self.sample:
            probs = torch.softmax(logits.float(), dim=-1)
            order = torch.multinomial(probs, num_samples=SAMPLE_DRAWS, replacement=False, generator=self.generator).tolist()
        else:
            order = []
        order += torch.argsort(logits, descending=True).tolist()
        table = self.vocab.token_bytes
        for token_id in order:
            if token_id in self._by_id:
                if token_id in allowed_specials:
                    return int(token_id)
                continue
            data = table[token_id] if token_id < len(table) else None
            if data and self.constraint.accepts_text(data):
                return int(token_id)
        raise EngineError("the grammar allows no token here (tokenizer lacks single-byte tokens?)")


def _locals_key(constraint: FrameConstraint) -> str | None:
    """Which variable the next token belongs to, for per-variable confidence."""
    slot = constraint.slot
    if isinstance(slot, Locals) and slot.phase in (2, 3, 4, 5, 6) and slot.key:
        return slot.key.decode("utf-8", "replace")
    return None
