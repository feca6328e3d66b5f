"""The neural engine: a language model predicts each next state; nothing of the program is run.

One session keeps the program and its trajectory in the model's KV cache: the program is encoded once
at start, and each step feeds only the action's tokens and generates the next frame under the
format's grammar (model_backend.grammar). The cache is cut back to the program (and the
current state re-encoded) only when the direction changes (forward <-> inverse contexts differ),
after set_variable, or when the context would outgrow the model.

A frame that still fails to parse (it cannot under the grammar, but the parser also checks meaning)
gets one sampled retry, then the engine returns the previous state with `error` set: it never raises
for a bad prediction.

Every operation is written once, as a generator that yields the token ids to feed next and receives
the logits after the last of them (`Feed`). The public methods drive it with one forward pass per feed
on this session's cache; `Together` and the model worker (model_backend.worker.batching) drive the
generators of many sessions at once, one forward pass over all their next tokens (engine/forward.py).
The session itself (context, rebasing, retries, the token loop and its search) is
engine/driver.FrameEngine's, shared with the vLLM engine; this module holds the model, its KV cache and
its forward passes.
"""

from __future__ import annotations

import functools
import itertools
import os
import threading
import time
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

import torch
from transformers import AutoTokenizer, DynamicCache, LlamaForCausalLM, PreTrainedTokenizerBase
from transformers.utils import logging as hf_logging

from model_backend import trace_format as fmt
from model_backend.engine.base import Engine, context_frame
from model_backend.engine.decoding import BranchPoint, FrameDecoder, Generated, Vocabulary, search
from model_backend.engine.draft import DRAFT_TOKENS, pack, propose
from model_backend.engine.driver import MAX_FRAME_TOKENS, FrameEngine
from model_backend.engine.ensemble import EnsembleCache, EnsembleLM, is_ensemble, load_ensemble
from model_backend.engine.errors import Cancelled, EngineError
from model_backend.engine.forward import ragged_forward
from model_backend.engine.llama import KVCache, LeanLlama
from model_backend.program import Program
from model_backend.state import State

DEFAULT_CHECKPOINT = Path(__file__).resolve().parent.parent / "checkpoints" / "default"
# The checkpoint that proposes arguments in input inference, when one ships (the default keeps every
# other prediction, the checks included); its model card says what it is.
DEFAULT_PROPOSER = DEFAULT_CHECKPOINT.parent / "proposer"

T = TypeVar("T")
K = TypeVar("K")
# An operation on a session: yields token ids to feed, receives the logits after the last one, returns T.
Feed = Generator[list[int], torch.Tensor, T]
DRAFT_ENV = "NDB_DRAFT"  # tokens a draft offers at most (0: no drafts), for every session a process creates
DRAFT_REFERENCES = 8  # recent states of other frames whose text a draft may copy (a caller's locals)
DRAFT_HISTORY = 256  # the latest states of the history searched for them


class Drafted(list[int]):
    """Token ids fed with a draft after them: `run` answers with the logits after each of the last
    `tail` of them ([tail, vocab]: the context's last token and the draft's), not only after the last
    (engine/draft.py)."""

    def __init__(self, ids: list[int], tail: int) -> None:
        super().__init__(ids)
        self.tail = tail


def whole_number_env(name: str, default: int, least: int = 0) -> int:
    """$name when it is a whole number >= `least`, else `default` (a bad value is ignored)."""
    value = os.environ.get(name, "").strip()
    return int(value) if value.isdigit() and int(value) >= least else default


def default_draft_tokens() -> int:
    """$NDB_DRAFT when it is a whole number >= 0, else DRAFT_TOKENS (a bad value is ignored)."""
    return whole_number_env(DRAFT_ENV, DRAFT_TOKENS)


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte <-> printable character table used by byte-level BPE vocabularies."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), ord("ÿ") + 1))
    chars, extra = keep[:], 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + extra)
            extra += 1
    return {b: chr(c) for b, c in zip(keep, chars, strict=True)}


def format_version(tokenizer: PreTrainedTokenizerBase, config: object) -> int:
    """The trace format version a checkpoint reads: its config's `ndb_format_version`, else the newest
    version token its tokenizer holds."""
    declared = getattr(config, "ndb_format_version", None)
    if isinstance(declared, int):
        if declared not in fmt.SUPPORTED_VERSIONS:
            raise EngineError(f"the model reads trace format {declared}; this ndb serves {list(fmt.SUPPORTED_VERSIONS)}")
        return declared
    vocab = tokenizer.get_vocab()
    held = [v for v, tok in fmt.VERSION_TOKENS.items() if tok in vocab]
    if not held:
        raise EngineError("the tokenizer holds no trace format version token")
    return max(held)


def line_costs(tokenizer: PreTrainedTokenizerBase, program: Program) -> list[int]:
    """Tokens each program line takes in the header (index 0 is line 1), for choosing a view."""
    lines = fmt.header_lines(program)
    return [len(ids) for ids in tokenizer(lines, add_special_tokens=False)["input_ids"]] if lines else []


def index_vocabulary(tokenizer: PreTrainedTokenizerBase, vocab_size: int) -> tuple[dict[str, int], list[bytes | None]]:
    """The trace format's special token ids, and each token's bytes (None for special tokens). Of the
    version tokens, a tokenizer needs only its own (`format_version`)."""
    vocab = tokenizer.get_vocab()
    special_ids = {tok: vocab[tok] for tok in [*fmt.SPECIAL_TOKENS, *fmt.VERSION_TOKENS.values()] if tok in vocab}
    missing = set(fmt.SPECIAL_TOKENS) - set(special_ids) - set(fmt.VERSION_TOKENS.values())
    if missing:
        raise EngineError(f"the tokenizer lacks special tokens: {sorted(missing)[:5]}")
    decode = {c: b for b, c in _bytes_to_unicode().items()}
    table: list[bytes | None] = [None] * max(len(vocab), vocab_size)
    added = set(tokenizer.all_special_tokens) | set(tokenizer.get_added_vocab())
    for token, index in vocab.items():
        if token in added:
            continue
        try:
            table[index] = bytes(decode[c] for c in token)
        except KeyError:  # not a byte-level token: fall back to its decoded text
            table[index] = str(tokenizer.decode([index])).encode()
    return special_ids, table


@dataclass
class LoadedModel:
    """A checkpoint in memory, shared by every session of a process (and a worker's sessions)."""

    model: LlamaForCausalLM | EnsembleLM
    tokenizer: PreTrainedTokenizerBase
    path: str
    device: torch.device
    special_ids: dict[str, int] = field(default_factory=dict)
    token_bytes: list[bytes | None] = field(default_factory=list)  # None for special tokens
    lock: threading.Lock = field(default_factory=threading.Lock)
    format_version: int = fmt.FORMAT_VERSION  # the trace format the checkpoint was trained on
    lean: LeanLlama | None = None  # the lean forward pass of a plain Llama (engine/llama.py); None: transformers'

    @classmethod
    def load(cls, path: str | Path | None = None, device: str = "cpu") -> LoadedModel:
        path = Path(path) if path else DEFAULT_CHECKPOINT
        ensemble = is_ensemble(path)
        if not ensemble and not (path / "config.json").exists():
            raise EngineError(
                f"no model checkpoint at {path} (train one with `ndb train`, or use the oracle engine)"
            )
        bars = hf_logging.is_progress_bar_enabled()
        hf_logging.disable_progress_bar()  # a debugger's start is no place for a "Loading weights" bar
        try:
            tokenizer = AutoTokenizer.from_pretrained(str(path))
            model = load_ensemble(path) if ensemble else LlamaForCausalLM.from_pretrained(str(path), dtype=torch.float32)
        except (OSError, ValueError) as exc:  # EnsembleError is a ValueError
            raise EngineError(f"cannot load the model at {path}: {exc}") from None
        finally:
            if bars:
                hf_logging.enable_progress_bar()
        dev = torch.device(device)
        model.to(dev)  # type: ignore[arg-type]  # transformers types `to` oddly
        model.eval()
        loaded = cls(model=model, tokenizer=tokenizer, path=str(path), device=dev)
        loaded._index_vocabulary()
        loaded.lean = LeanLlama(model) if LeanLlama.fits(model) else None
        return loaded

    def _index_vocabulary(self) -> None:
        self.special_ids, self.token_bytes = index_vocabulary(self.tokenizer, self.model.config.vocab_size)
        self.format_version = format_version(self.tokenizer, self.model.config)

    def new_cache(self) -> DynamicCache | EnsembleCache | KVCache:
        """An empty KV cache for one session (an ensemble keeps one per member)."""
        if isinstance(self.model, EnsembleLM):
            return self.model.new_cache()
        return self.lean.new_cache() if self.lean is not None else DynamicCache()

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def line_costs(self, program: Program) -> list[int]:
        return line_costs(self.tokenizer, program)

    @functools.cached_property
    def vocabulary(self) -> Vocabulary:
        """Built once: a decoder takes it for every frame, and it indexes every token."""
        return Vocabulary(self.special_ids, self.token_bytes, self.encode)


class NeuralEngine(FrameEngine):
    """A session on a transformers model: the context lives in this session's KV cache, and each fed
    token run is one forward pass on it (engine/driver.py holds what the vLLM engine shares)."""

    name = "neural"

    def __init__(self, loaded: LoadedModel) -> None:
        super().__init__()
        self.m = loaded
        self.cache: DynamicCache | EnsembleCache | KVCache | None = None
        self.max_context = int(getattr(loaded.model.config, "max_position_embeddings", 2048))
        self.last_logits: torch.Tensor | None = None
        self.context_ids: list[int] = []  # the context's token ids, in order (for checks and tests)
        # The KV cache may lag behind the context or hold tokens past it (a draft, a cut-off branch): it
        # is brought in line at the next forward pass (`_logits_steps`).
        self.cache_ids: list[int] = []  # the token ids in the KV cache, in order
        self._synced = 0  # the cache holds context_ids[:_synced] at least
        self.drafted_logits: dict[int, torch.Tensor] = {}  # context length -> the logits after it, from a draft's pass
        self._draft_tokens = default_draft_tokens()
        self._draft_room = self._draft_tokens  # the next draft's length: grows while drafts are taken whole
        self._last_draft: tuple[int, int] | None = None  # (context length it followed, its length)
        self.draft_figures: dict[str, int] = {"passes": 0, "drafted": 0, "saved": 0}  # forward passes, draft tokens fed, passes a draft saved
        # (id(state), inverse) -> the state and its frame in that direction, packed
        self._references: dict[tuple[int, bool], tuple[State, bytes]] = {}
        self._references_for: tuple[int, int, bool] | None = None  # (history length, id(state), inverse) they are of
        self._every = False  # while `run` drives: a draft's pass can answer with every position's logits

    @property
    def format_version(self) -> int:
        return self.m.format_version

    @property
    def draft_tokens(self) -> int:
        """Tokens a draft offers at most (0: no drafts); set, it also sets the next draft's length."""
        return self._draft_tokens

    @draft_tokens.setter
    def draft_tokens(self, tokens: int) -> None:
        self._draft_tokens = self._draft_room = max(tokens, 0)

    @property
    def vocabulary(self) -> Vocabulary:  # type: ignore[override]  # a property where FrameEngine declares an attribute
        return self.m.vocabulary

    def encode(self, text: str) -> list[int]:
        return self.m.encode(text)

    def line_costs(self, program: Program) -> list[int]:
        return self.m.line_costs(program)

    # ---- interface: start/step/state/... come from StepwiseEngine, driven by run -------------------
    def run(self, op: Feed[T]) -> T:
        """Drive an operation with one forward pass per feed on this session's own cache. An operation
        that fails part way (a forward pass that raises, an interrupt) leaves the session as `recover`
        says, and its error goes on to the caller."""
        with self.m.lock, torch.inference_mode():
            try:
                return self._drive(op)
            except BaseException:
                op.close()
                self.recover()
                raise

    def recover(self) -> None:
        """FrameEngine.recover, and the KV cache goes: a pass that failed part way may have grown some
        layers and not others."""
        self._drop_cache()
        super().recover()

    def _drive(self, op: Feed[T]) -> T:
        """Drive an operation without taking the lock (the caller holds it)."""
        every, self._every = self._every, True
        try:
            ids = next(op)
            while True:
                ids = op.send(self._forward(ids, tail=ids.tail if isinstance(ids, Drafted) else 1))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
        finally:
            self._every = every

    # ---- the KV cache --------------------------------------------------------------------------
    def _context_ids(self) -> list[int]:
        return self.context_ids

    def _context_len(self) -> int:
        return len(self.context_ids)

    def _new_context(self) -> None:
        self.context_ids = []
        self._drop_cache()
        self._draft_room = self._draft_tokens

    def _drop_cache(self) -> None:
        """An empty KV cache, and nothing kept of what the old one gave (logits, a draft's)."""
        self.cache = self.m.new_cache()
        self.cache_ids, self._synced, self.drafted_logits = [], 0, {}
        self.last_logits, self._last_draft = None, None

    def _crop(self, length: int) -> None:
        """Cut the context back to `length` tokens (the cache follows at the next pass, and keeps what
        a re-decode of the same tokens can use)."""
        if length >= len(self.context_ids):
            return
        del self.context_ids[length:]
        self._synced = min(self._synced, length)
        self.last_logits = None

    def _agreed(self) -> int:
        """How many tokens at the start of the context the KV cache holds."""
        agreed = min(self._synced, len(self.cache_ids))
        end = min(len(self.cache_ids), len(self.context_ids))
        while agreed < end and self.cache_ids[agreed] == self.context_ids[agreed]:
            agreed += 1
        return agreed

    def _cut_cache(self, length: int) -> None:
        """Keep the first `length` tokens of the KV cache."""
        assert self.cache is not None
        surplus = self.cache.get_seq_length() - length
        if surplus > 0:
            self.cache.crop(-surplus)  # transformers 5 crops by a negative count of tokens to drop
        del self.cache_ids[length:]
        self.drafted_logits = {n: x for n, x in self.drafted_logits.items() if n <= length}

    def _forward(self, ids: list[int], tail: int = 1) -> torch.Tensor:
        """One forward pass of `ids` on this session's cache: the logits after the last of them, or,
        with `tail` > 1, after each of the last `tail` of them ([tail, vocab])."""
        assert self.cache is not None
        if self.m.lean is not None and isinstance(self.cache, KVCache):
            return self.m.lean.forward(ids, self.cache, tail)
        input_ids = torch.tensor([ids], device=self.m.device)
        out = self.m.model(input_ids=input_ids, past_key_values=self.cache, use_cache=True)
        return out.logits[0, -tail:].float() if tail > 1 else out.logits[0, -1].float()

    def _feed_steps(self, ids: list[int]) -> Feed[None]:
        """Add `ids` to the context. They reach the KV cache with the next forward pass, when logits are
        wanted (`_logits_steps`): an action's tokens, `<|frame_sep|>` and a frame's last token need no
        logits of their own, so they ride with the pass of the next choice instead of costing one each."""
        if ids:
            self.context_ids.extend(ids)
            self.last_logits = None
        yield from ()

    def _logits_steps(self, draft: Callable[[], list[int]] | None = None) -> Feed[torch.Tensor]:
        """The logits after the whole context: from a draft's pass that guessed the context's last tokens,
        else what the cache lacks goes through one forward pass (the last token again when the context
        was cut back to a point whose logits are gone). `draft`, when given and `run` drives, offers
        tokens that may come next: they ride with the pass, and the logits after each are kept."""
        if self.last_logits is not None:
            return self.last_logits
        length = len(self.context_ids)
        agreed = self._agreed()
        if agreed == length and length in self.drafted_logits:
            self.last_logits = self.drafted_logits[length]
            self.draft_figures["saved"] += 1
            return self.last_logits
        if self._last_draft is not None:  # how much of the last draft the frame took sets the next one's length
            start, offered = self._last_draft
            if agreed >= start:  # (a context cut back before the draft says nothing of it)
                taken = min(agreed - start, offered)
                self._draft_room = min(2 * self._draft_room, self._draft_tokens) if taken == offered else taken + 1
            self._last_draft = None
        if agreed == length:
            if not length:
                raise EngineError("no context to predict from")
            agreed -= 1
        self._cut_cache(agreed)
        pending = self.context_ids[agreed:]
        guess = draft()[:self._draft_room] if draft is not None and self._every and self._draft_room > 0 else []
        self.draft_figures["passes"] += 1
        if guess:
            logits = yield Drafted(pending + guess, tail=len(guess) + 1)
            self.draft_figures["drafted"] += len(guess)
            self._last_draft = (length, len(guess))
            self.cache_ids = self.context_ids + guess
            for index in range(len(guess) + 1):  # row i: the logits after the context and i drafted tokens
                self.drafted_logits[length + index] = logits[index]
            self.last_logits = logits[0]
        else:
            self.last_logits = yield pending
            self.cache_ids = list(self.context_ids)
        self._synced = length
        return self.last_logits

    def _draft(self) -> list[int]:
        """What the frame being decoded may go on with (engine/draft.py): found in the context since the
        header, else in the frames of the last states of other functions (a return goes back to one)."""
        return propose(self.context_ids, self.header_len, self._draft_references(), self.draft_tokens)

    def _draft_references(self) -> list[bytes]:
        """The packed frames of the latest states of up to DRAFT_REFERENCES other (function, depth)
        pairs of the history, latest first; each frame is encoded once, and the history searched once per
        state (not at every pass of its frames)."""
        current = self._state
        now = (len(self.history), id(current), self.inverse)
        if now == self._references_for:
            return [packed for _, packed in self._references.values()]
        self._references_for = now
        seen = {(current.function, current.depth)} if current is not None else set()
        references: dict[tuple[int, bool], tuple[State, bytes]] = {}
        for state in itertools.islice(reversed(self.history), DRAFT_HISTORY):
            key = (state.function, state.depth)
            if key in seen or state.exit is not None:
                continue
            seen.add(key)
            known = self._references.get((id(state), self.inverse))
            if known is None:
                try:
                    known = (state, pack(self.encode(context_frame(state, self.inverse))))
                except ValueError:  # a state the format cannot write offers no draft
                    continue
            references[(id(state), self.inverse)] = known
            if len(references) == DRAFT_REFERENCES:
                break
        self._references = references
        return [packed for _, packed in references.values()]

    def logits(self) -> torch.Tensor:
        """The next-token logits after the context (for checks and tests)."""
        return self.run(self._logits_steps())

    def _feed(self, ids: list[int]) -> None:
        """Add `ids` to the context (the caller holds the model lock and inference mode)."""
        self._drive(self._feed_steps(ids))

    def _rebase(self, state: State, inverse: bool) -> None:
        self._drive(self._rebase_steps(state, inverse))

    # ---- constrained generation ----------------------------------------------------------------
    def _generate_frame(self, prev: State, sample: bool, action: str | None = None,
                        trail: tuple[tuple[State, str], ...] = ()) -> Generated | None:
        return self._drive(self._generate_frame_steps(prev, sample, action, trail))

    def _generate_frame_steps(self, prev: State, sample: bool, action: str | None = None,
                              trail: tuple[tuple[State, str], ...] = ()) -> Feed[Generated | None]:
        """The next frame after `<|frame_sep|>`, left in the cache: greedy, then the close calls
        re-decoded from their point in the cache (decoding.search)."""
        decoder = self._decoder(prev, sample, action, trail)
        yield from self._feed_steps([self.m.special_ids[fmt.FRAME]])
        frame_start = self._context_len()

        def decode(point: BranchPoint | None, bound: float | None) -> Feed[Generated | None]:
            if point is not None:
                self._crop(frame_start + point.position)
                yield from self._feed_steps([point.alternative])
            return (yield from self._finish_frame_steps(decoder, bound))

        best, best_ids = yield from search(decoder, self.search_branches, decode)
        if best is not None and self.context_ids[frame_start:] != best_ids:  # the cache must hold the frame returned
            self._crop(frame_start)
            yield from self._feed_steps(best_ids)
        return best

    def _finish_frame_steps(self, decoder: FrameDecoder, bound: float | None = None) -> Feed[Generated | None]:
        """Decode until the frame's stop token (None if it runs past MAX_FRAME_TOKENS, or once its total
        log-probability falls below `bound`: it only falls as tokens are added, so such a branch cannot
        win, and a branch that rambles costs little). A forward pass runs only where the decoder has a
        choice to make (`FrameDecoder.wants_logits`): forced text and tokens the grammar leaves alone
        join the context and ride with the next pass."""
        while len(decoder.token_ids) < MAX_FRAME_TOKENS:
            if decoder.wants_logits():
                yield from self._logits_steps(self._draft)
            try:
                ids = decoder.next_tokens(self.last_logits, bound)
            except EngineError:  # pruned, or the grammar left no token (a rule's dead end): this frame fails
                return None
            if ids is None:
                return decoder.result()
            yield from self._feed_steps(ids)
        return None


class Together(Generic[K, T]):
    """Operations of distinct sessions of one model, driven side by side: each round is one forward pass
    over every unfinished operation's next tokens (engine/forward.py; on this CPU a pass
    costs about the same for one session as for several, as reading the weights dominates). Operations
    join while others run, so a search can keep the pass full: `add` one, `finished` runs rounds until
    some are done. An operation that raises EngineError gets the error as its result. Once
    time.monotonic() passes `deadline`, the unfinished ones are abandoned with an EngineError; once
    `cancel` is set, with Cancelled (checked before each round: one token's forward pass); a round whose
    forward pass raises ends every operation in it with an EngineError. A session whose operation ends
    so is put back on its current state (`NeuralEngine.recover`)."""

    def __init__(self, deadline: float | None = None, cancel: threading.Event | None = None) -> None:
        self.deadline = deadline
        self.cancel = cancel
        self._jobs: dict[K, tuple[NeuralEngine, Feed[T]]] = {}
        self._pending: dict[K, list[int]] = {}  # the ids each unfinished operation feeds next
        self._done: list[tuple[K, T | EngineError]] = []
        self._loaded: LoadedModel | None = None

    def __len__(self) -> int:
        """Operations added and not yet handed back by `finished` (nor abandoned)."""
        return len(self._pending) + len(self._done)

    def add(self, key: K, engine: NeuralEngine, op: Feed[T]) -> None:
        if key in self._jobs:
            raise ValueError(f"an operation with key {key!r} is already running")
        if self._loaded is not None and engine.m is not self._loaded:
            raise ValueError("operations run together must be on sessions of one model")
        if any(other is engine for other, _ in self._jobs.values()):
            raise ValueError("a session can run one operation at a time")
        self._loaded = engine.m
        self._jobs[key] = (engine, op)
        with engine.m.lock, torch.inference_mode():
            self._advance(key, None)

    def finished(self) -> list[tuple[K, T | EngineError]]:
        """Run rounds until at least one operation is done; hand back those done, in the order added.
        Past the deadline, every unfinished operation comes back with an EngineError."""
        if not self._done and self._pending:
            assert self._loaded is not None
            with self._loaded.lock, torch.inference_mode():
                while self._pending and not self._done:
                    stop: EngineError | None = None
                    if self.cancel is not None and self.cancel.is_set():
                        stop = Cancelled("the prediction was cancelled")
                    elif self.deadline is not None and time.monotonic() > self.deadline:
                        stop = EngineError("the prediction ran past its time limit")
                    if stop is not None:
                        for key in list(self._pending):
                            self._close(key, stop)
                        break
                    order = list(self._pending)  # an operation yields only after its session has a cache
                    try:
                        logits = ragged_forward(self._loaded.model, [(self._jobs[k][0].cache, self._pending[k]) for k in order])
                    except Exception as exc:  # noqa: BLE001 - out of memory, say: every operation of the round fails
                        failed = EngineError(f"the model's forward pass failed: {type(exc).__name__}: {exc}")
                        for key in order:
                            self._close(key, failed)
                        break
                    for key, answer in zip(order, logits, strict=True):
                        self._advance(key, answer)
        done, self._done = self._done, []
        for key, _ in done:
            del self._jobs[key]
        return done

    def abandon(self, keys: list[K]) -> None:
        """Stop these operations where they are (their sessions are then unusable); none comes back."""
        for key in keys:
            if key in self._pending:
                self._jobs[key][1].close()
                del self._pending[key], self._jobs[key]
        self._done = [(k, r) for k, r in self._done if k not in keys]
        for key in keys:
            self._jobs.pop(key, None)

    def running(self) -> list[K]:
        return list(self._pending)

    def _close(self, key: K, error: EngineError) -> None:
        engine, op = self._jobs[key]
        op.close()
        engine.recover()
        del self._pending[key]
        self._done.append((key, error))

    def _advance(self, key: K, logits: torch.Tensor | None) -> None:
        op = self._jobs[key][1]
        try:
            self._pending[key] = next(op) if logits is None else op.send(logits)
        except StopIteration as done:
            self._pending.pop(key, None)
            self._done.append((key, done.value))
        except EngineError as exc:
            self._jobs[key][0].recover()
            self._pending.pop(key, None)
            self._done.append((key, exc))


def run_together(jobs: list[tuple[NeuralEngine, Feed[T]]], deadline: float | None = None) -> list[T | EngineError]:
    """Drive operations of several sessions of one model at once (see Together) until all are done;
    their results in the order given."""
    if len({id(engine.m) for engine, _ in jobs}) > 1 or len({id(engine) for engine, _ in jobs}) < len(jobs):
        raise ValueError("run_together needs distinct sessions of one model")  # before any starts
    together: Together[int, T] = Together(deadline)
    for index, (engine, op) in enumerate(jobs):
        together.add(index, engine, op)
    results: list[T | EngineError | None] = [None] * len(jobs)
    while together:
        for index, result in together.finished():
            results[index] = result
    return results  # type: ignore[return-value]


def create_neural_engine(model: str | None = None) -> Engine:
    """A session of the model at `model` (the shipped one when None), loaded once per process."""
    return NeuralEngine(_shared_model(model))


def proposer_engine(engine: Engine, proposer: str | None = None) -> Engine | None:
    """A new session of the model that proposes arguments for input inference, or None when `engine`'s
    own model proposes. `proposer` names a checkpoint, or "model" for `engine`'s own; None means the
    shipped proposer when `engine` runs the shipped model and the proposer is there."""
    if proposer == "model":
        return None
    if proposer is not None:
        return NeuralEngine(_shared_model(proposer))
    if (isinstance(engine, NeuralEngine) and (DEFAULT_PROPOSER / "config.json").is_file()
            and Path(engine.m.path).resolve() == DEFAULT_CHECKPOINT.resolve()):
        return NeuralEngine(_shared_model(str(DEFAULT_PROPOSER)))
    return None


_MODELS: dict[str, LoadedModel] = {}
THREADS_ENV = "NDB_TORCH_THREADS"  # torch CPU threads of a process's in-process model (default 1)


def inference_threads() -> int:
    """torch threads for the in-process model: $NDB_TORCH_THREADS when it is a whole number >= 1, else 1.
    One token's forward pass is too small to share: with two threads, any other busy process on the
    cores makes a debugging step several times slower (docs/benchmarks.md, "Language server")."""
    return whole_number_env(THREADS_ENV, 1, least=1)


def _shared_model(path: str | None) -> LoadedModel:
    key = str(Path(path).resolve()) if path else str(DEFAULT_CHECKPOINT)
    if key not in _MODELS:
        torch.set_num_threads(inference_threads())
        _MODELS[key] = LoadedModel.load(key)
    return _MODELS[key]
