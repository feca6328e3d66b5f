"""Choosing the tokens of one predicted frame under the trace format's constraint.

Shared by the transformers engine (model_backend.engine.neural), which calls it between forward passes
on its own KV cache, and the vLLM engine (model_backend.worker.vllm_engine), which calls it from a vLLM
logits processor. Both therefore make the same choice from the same logits: the best token (or, when
sampling, the first of 64 draws) that `FrameConstraint` accepts; text the constraint forces (a frame's
source line) is taken as the tokenizer encodes it, never generated.
"""

from __future__ import annotations

import copy
import logging
import math
import os
import zlib
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import TypeVar

import torch

from model_backend import trace_format as fmt
from model_backend.engine.errors import EngineError
from model_backend.grammar import FrameConstraint, Locals
from model_backend.state import State

SAMPLE_DRAWS = 64  # draws tried in order before falling back to the best allowed token
BRANCH_MARGIN = 1.0  # nats: a greedy choice whose runner-up is closer than this is worth a second look
SEARCH_BRANCHES = 0  # close calls re-tried per frame by default: greedy (docs/results.md: "Settings chosen by measurement")
SEARCH_ENV = "NDB_SEARCH"  # overrides SEARCH_BRANCHES for every engine a process creates, e.g. 4

log = logging.getLogger(__name__)
Y = TypeVar("Y")
S = TypeVar("S")


def default_search_branches() -> int:
    """How many close calls an engine re-tries per frame: $NDB_SEARCH when it is a whole number >= 0,
    else SEARCH_BRANCHES (a bad value is logged, not fatal)."""
    value = os.environ.get(SEARCH_ENV, "").strip()
    if not value:
        return SEARCH_BRANCHES
    if value.isdigit():
        return int(value)
    log.warning("ignoring %s=%r (not a whole number >= 0); using %d", SEARCH_ENV, value, SEARCH_BRANCHES)
    return SEARCH_BRANCHES


@dataclass(frozen=True)
class BranchPoint:
    """A greedy choice with a close runner-up: where the search may try the other token."""

    position: int  # index in the decoder's `token_ids` of the choice
    snapshot: tuple[object, ...]  # the decoder's state before the choice
    margin: float  # chosen log-probability minus the runner-up's
    alternative: int
    alternative_logprob: float


@dataclass(frozen=True)
class Vocabulary:
    """What decoding needs of a tokenizer: the format's special token ids and every token's bytes."""

    special_ids: dict[str, int]
    token_bytes: list[bytes | None]  # None for special tokens
    encode: Callable[[str], list[int]]
    # (id, byte) of the one-byte tokens, and the ids of the tokens by their first byte (FrameDecoder.only_choice)
    single_bytes: tuple[tuple[int, bytes], ...] = field(init=False)
    by_first_byte: dict[int, tuple[int, ...]] = field(init=False)

    def __post_init__(self) -> None:
        by_first: dict[int, list[int]] = {}
        single: list[tuple[int, bytes]] = []
        for token_id, data in enumerate(self.token_bytes):
            if data:
                by_first.setdefault(data[0], []).append(token_id)
                if len(data) == 1:
                    single.append((token_id, data))
        object.__setattr__(self, "single_bytes", tuple(single))
        object.__setattr__(self, "by_first_byte", {b: tuple(ids) for b, ids in by_first.items()})

    @property
    def special_by_id(self) -> dict[int, str]:
        return {i: t for t, i in self.special_ids.items()}


@dataclass
class Generated:
    text: str
    logprobs: dict[str, float]  # variable name (or "..") -> summed log-probability of its tokens
    total_logprob: float = 0.0  # of every chosen token (forced text excluded): how the search ranks frames

    def confidence(self, state: State) -> dict[str, float]:
        """name -> probability the model gave to that variable's predicted value. Variables carried
        over through the `".."` marker get the marker's probability."""
        unchanged = math.exp(self.logprobs.get("..", 0.0))
        return {name: math.exp(self.logprobs[name]) if name in self.logprobs else unchanged for name in state.locals}


def branches_to_try(points: list[BranchPoint], count: int) -> list[BranchPoint]:
    """The search's re-tries (shared by both engines so that they try the same ones in the same order):
    the `count` closest calls, latest first, so that every branch starts inside the greedy prefix."""
    closest = sorted(points, key=lambda b: b.margin)[:count]
    return sorted(closest, key=lambda b: -b.position)


def request_generator(prompt: list[int], samples_drawn: int) -> torch.Generator:
    """The random generator of one sampled frame: seeded by the request (the prompt's token ids and how
    many samples the session drew before), not by what else runs, so a session replays the same draws
    and the transformers and vLLM engines make the same ones."""
    return torch.Generator().manual_seed(zlib.crc32(str(prompt).encode()) + samples_drawn)


class FrameDecoder:
    """The token-by-token choice of one frame after `<|frame_sep|>`.

    Use: `next_tokens(logits)` until it returns None: either the ids of forced text (`take_forced`), or
    the token `choose(logits)` picks (and records). `result()` is the frame text and per-variable
    log-probabilities. `search` re-decodes a frame from its close calls.
    """

    def __init__(self, constraint: FrameConstraint, vocab: Vocabulary, sample: bool,
                 generator: torch.Generator | None = None, temperature: float = 1.0) -> None:
        self.constraint = constraint
        self.vocab = vocab
        self.sample = sample
        self.temperature = temperature  # of sampled choices (recorded log-probabilities are the model's own)
        self.generator = generator  # for sampled choices; None: torch's global generator
        self._by_id = vocab.special_by_id
        self._text: list[str] = [fmt.FRAME]
        self.scores: dict[str, float] = {}
        self.total = 0.0
        self.token_ids: list[int] = []  # after `<|frame_sep|>`, forced ones included
        self.branch_points: list[BranchPoint] = []  # recorded when `record_branches` is set
        self.record_branches = False
        self._only_at = -1  # the position `_only` was found for
        self._only: int | None = None  # `_only_choice` there

    @property
    def done(self) -> bool:
        return self.constraint.done

    def wants_logits(self) -> bool:
        """Whether the next step needs the model's logits: a choice, not forced text, not a token the
        grammar leaves alone (greedy decoding), not the end."""
        return not self.done and self.constraint.forced_text() is None and self._only_choice() is None

    def only_choice(self) -> int | None:
        """The token the grammar allows here when it allows exactly one (None: two or more, or none).

        Text a slot accepts is accepted byte by byte, so a token is allowed only if its first byte is:
        the one-byte tokens are tried first, and the longer tokens only behind the one byte allowed."""
        specials = self._allowed_special_ids()
        if len(specials) > 1:
            return None
        allowed: list[bytes] = []
        for _, data in self.vocab.single_bytes:
            if self.constraint.accepts_text(data):
                allowed.append(data)
                if len(allowed) + len(specials) > 1:
                    return None
        if specials:
            return next(iter(specials)) if not allowed else None
        if not allowed:
            return None
        table = self.vocab.token_bytes
        found: int | None = None
        for token_id in self.vocab.by_first_byte.get(allowed[0][0], ()):
            text = table[token_id]
            if text is not None and self.constraint.accepts_text(text):
                if found is not None:
                    return None
                found = token_id
        return found

    def _only_choice(self) -> int | None:
        """`only_choice` once per position, and only where a greedy choice is due (a sampled one draws
        as it always did, so that a sample's draws do not depend on this)."""
        position = len(self.token_ids)
        if self._only_at != position:
            self._only_at = position
            self._only = None if self.sample else self.only_choice()
        return self._only

    def take_forced(self) -> list[int] | None:
        """The token ids of text the constraint forces here (now taken), or None when a choice is due."""
        forced = self.constraint.forced_text()
        if forced is None:
            return None
        self.constraint.push_forced()
        self._text.append(forced)
        ids = self.vocab.encode(forced)
        self.token_ids.extend(ids)
        return ids

    def choose(self, logits: torch.Tensor) -> int:
        """The best (or a sampled) allowed token for these next-token logits (1-D); it is recorded."""
        logprobs = torch.log_softmax(logits.float(), dim=-1)
        # The kind of event (the first choice) is never re-tried: a two-token exit frame would beat
        # a forty-token return frame on total log-probability whatever the return's tokens are.
        if self.record_branches and not self.sample and self.constraint.elements is not None:
            token_id, runner_up = self._best_and_close_runner_up(logprobs)
            position = len(self.token_ids)
            # A choice made again (vLLM re-asks a position after chunked prefill) replaces its record.
            self.branch_points = [b for b in self.branch_points if b.position < position]
            if runner_up is not None:
                margin = float(logprobs[token_id] - logprobs[runner_up])
                self.branch_points.append(BranchPoint(position, self.snapshot(), margin, runner_up,
                                                      float(logprobs[runner_up])))
        else:
            token_id = self._pick(logits)
        self.take(token_id, float(logprobs[token_id]))
        return token_id

    def take(self, token_id: int, logprob: float) -> None:
        """Record `token_id` as the next choice, with the log-probability the model gave it."""
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
            self.scores[key] = self.scores.get(key, 0.0) + logprob
        self.total += logprob
        self.token_ids.append(token_id)

    def next_tokens(self, logits: torch.Tensor | None, bound: float | None = None) -> list[int] | None:
        """The one step of every engine's token loop: what the frame continues with after `logits` (the
        next-token logits of the context so far). Text the constraint forces (a source line) comes whole,
        as the tokenizer encodes it; else the best allowed (or a sampled) token, recorded. None once the
        frame is complete. Raises EngineError where the frame cannot go on: its log-probability fell
        below `bound` (a search branch that can no longer beat the best frame), or the grammar left no
        token."""
        if self.done:
            return None
        if bound is not None and self.total < bound:
            raise EngineError("pruned: this branch can no longer beat the best frame")
        forced = self.take_forced()
        if forced is not None:
            return forced
        only = self._only_choice()
        if only is not None:  # certain under the grammar: no logits needed, log-probability 0
            self.take(only, 0.0)
            return [only]
        if logits is None:
            raise EngineError("no logits to choose the next token from")
        return [self.choose(logits)]

    def snapshot(self) -> tuple[object, ...]:
        """What `restore` needs to return to this point, from any later state of the decoder, also one
        that took other choices since. The constraint's slots are immutable values, so a shallow copy of
        it suffices."""
        rng = self.generator.get_state() if self.generator is not None else None
        return copy.copy(self.constraint), list(self._text), dict(self.scores), rng, self.total, list(self.token_ids)

    def restore(self, snapshot: tuple[object, ...]) -> None:
        constraint, text, scores, rng, total, token_ids = snapshot
        assert isinstance(constraint, FrameConstraint) and isinstance(text, list) and isinstance(scores, dict)
        assert isinstance(total, float) and isinstance(token_ids, list)
        self.constraint = copy.copy(constraint)
        self._text = list(text)
        self.scores = dict(scores)
        self.total = total
        self.token_ids = list(token_ids)
        self._only_at = -1
        if self.generator is not None and isinstance(rng, torch.Tensor):
            self.generator.set_state(rng)

    def result(self) -> Generated:
        return Generated("".join(self._text), dict(self.scores), self.total)

    def _pick(self, logits: torch.Tensor) -> int:
        if self.sample:
            probs = torch.softmax(logits.float() / self.temperature, dim=-1)
            draws = torch.multinomial(probs, num_samples=SAMPLE_DRAWS, replacement=False, generator=self.generator)
            specials = self._allowed_special_ids()
            for token_id in draws.tolist():
                if self._allows(token_id, specials):
                    return int(token_id)
        return self._best_allowed(logits)

    def _best_allowed(self, logits: torch.Tensor) -> int:
        """The most likely token the grammar allows here."""
        specials = self._allowed_special_ids()
        for token_id in torch.argsort(logits, descending=True).tolist():
            if self._allows(token_id, specials):
                return int(token_id)
        raise EngineError("the grammar allows no token here (tokenizer lacks single-byte tokens?)")

    def _best_and_close_runner_up(self, logprobs: torch.Tensor) -> tuple[int, int | None]:
        """The best allowed token, and the next allowed one if it is within BRANCH_MARGIN of it (only
        the tokens that close are checked, so this costs little more than finding the best)."""
        values, order = torch.sort(logprobs, descending=True)
        specials = self._allowed_special_ids()
        best: int | None = None
        for value, token_id in zip(values.tolist(), order.tolist(), strict=True):
            if best is not None and value < float(logprobs[best]) - BRANCH_MARGIN:
                break
            if self._allows(token_id, specials):
                if best is not None:
                    return best, int(token_id)
                best = int(token_id)
        if best is None:
            raise EngineError("the grammar allows no token here (tokenizer lacks single-byte tokens?)")
        return best, None

    def allows(self, token_id: int) -> bool:
        """Whether the grammar accepts `token_id` as the next token."""
        return self._allows(token_id, self._allowed_special_ids())

    def _allowed_special_ids(self) -> set[int]:
        return {self.vocab.special_ids[t] for t in self.constraint.allowed_specials()}

    def _allows(self, token_id: int, allowed_specials: set[int]) -> bool:
        if token_id in self._by_id:
            return token_id in allowed_specials
        table = self.vocab.token_bytes
        data = table[token_id] if token_id < len(table) else None
        return data is not None and bool(data) and self.constraint.accepts_text(data)


def _locals_key(constraint: FrameConstraint) -> str | None:
    """Which variable the next token belongs to, for per-variable confidence."""
    slot = constraint.slot
    if isinstance(slot, Locals) and slot.phase in (2, 3, 4, 5, 6) and slot.key:
        return slot.key.decode("utf-8", "replace")
    return None


def search(decoder: FrameDecoder, branches: int,
           decode: Callable[[BranchPoint | None, float | None], Generator[Y, S, Generated | None]],
           ) -> Generator[Y, S, tuple[Generated | None, list[int]]]:
    """A frame by greedy decoding, then its `branches` closest calls re-decoded with the runner-up token:
    the frame with the highest total log-probability wins, with its token ids after `<|frame_sep|>`.

    Greedy decoding commits to each token; a frame goes wrong where the model hesitated between two (the
    next element of a list, whether a loop goes round again) and the rest follows the first pick: a
    small beam search that only branches where the model was unsure. `decode(point, bound)` runs the
    decoder to the frame's end, from the start (point None) or from `point` (the decoder already
    restored there and given the alternative token); it gives up (None) once the total falls below
    `bound`. How an engine gets the logits is its own: forward passes on a KV cache, or a vLLM request."""
    best = yield from decode(None, None)
    best_ids = list(decoder.token_ids)
    if not decoder.record_branches:
        return best, best_ids
    decoder.record_branches = False
    for point in branches_to_try(decoder.branch_points, branches):
        decoder.restore(point.snapshot)
        decoder.take(point.alternative, point.alternative_logprob)
        bound = best.total_logprob if best is not None else None
        candidate = yield from decode(point, bound)
        if candidate is not None and (best is None or candidate.total_logprob > best.total_logprob):
            best, best_ids = candidate, list(decoder.token_ids)
    return best, best_ids
