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
on this session's cache; the model worker (model_backend.worker.batching) drives the generators of many
sessions at once, one forward pass over all their next tokens.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, TypeVar

import torch
from transformers import AutoTokenizer, DynamicCache, LlamaForCausalLM, PreTrainedTokenizerBase
from transformers.utils import logging as hf_logging

from model_backend import trace_format as fmt
from model_backend.engine.base import Cancelled, Engine, EngineError, StepwiseEngine, context_frame
from model_backend.engine.decoding import (
    FrameDecoder,
    Generated,
    Vocabulary,
    branches_to_try,
    default_search_branches,
    request_generator,
)
from model_backend.engine.ensemble import EnsembleCache, EnsembleLM, is_ensemble, load_ensemble
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.program import Program
from model_backend.state import Action, State
from model_backend.view import HeaderPlanner, HeaderTooLong, ProgramView

DEFAULT_CHECKPOINT = Path(__file__).resolve().parent.parent / "checkpoints" / "default"
# The checkpoint that proposes arguments in input inference, when one ships (the default keeps every
# other prediction, the checks included); its model card says what it is.
DEFAULT_PROPOSER = DEFAULT_CHECKPOINT.parent / "proposer"
MAX_FRAME_TOKENS = 768
ORACLE_HINT = " (the model could not predict this step; the oracle engine, --engine oracle, runs the program for exact values)"

T = TypeVar("T")
K = TypeVar("K")
# An operation on a session: yields token ids to feed, receives the logits after the last one, returns T.
Feed = Generator[list[int], torch.Tensor, T]


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
        return loaded

    def _index_vocabulary(self) -> None:
        self.special_ids, self.token_bytes = index_vocabulary(self.tokenizer, self.model.config.vocab_size)
        self.format_version = format_version(self.tokenizer, self.model.config)

    def new_cache(self) -> DynamicCache | EnsembleCache:
        """An empty KV cache for one session (an ensemble keeps one per member)."""
        return self.model.new_cache() if isinstance(self.model, EnsembleLM) else DynamicCache()

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def line_costs(self, program: Program) -> list[int]:
        return line_costs(self.tokenizer, program)

    @property
    def vocabulary(self) -> Vocabulary:
        return Vocabulary(self.special_ids, self.token_bytes, self.encode)


class NeuralEngine(StepwiseEngine):
    name = "neural"

    def __init__(self, loaded: LoadedModel) -> None:
        self.m = loaded
        self.program: Program | None = None
        self.facts: ProgramFacts | None = None
        self.cache: DynamicCache | EnsembleCache | None = None
        self.header_len = 0
        self.view = ProgramView()  # the lines of the program the header in the cache shows
        self.planner: HeaderPlanner | None = None  # chooses the view of the program's header
        self.inverse = False  # the direction of the context in the cache
        self.history: list[State] = []
        self.trail: list[tuple[State, str]] = []
        self._state: State | None = None
        self.max_context = int(getattr(loaded.model.config, "max_position_embeddings", 2048))
        self.last_logits: torch.Tensor | None = None
        self.context_ids: list[int] = []  # the token ids in the cache, in order (for checks and tests)
        self.samples_drawn = 0
        self.sample_temperature = 1.0  # of sampled predictions (sample_steps): below 1 closer to greedy
        self.search_branches = default_search_branches()  # 0: plain greedy

    # ---- interface: start/step/state/... come from StepwiseEngine, driven by run -------------------
    def run(self, op: Feed[T]) -> T:
        """Drive an operation with one forward pass per feed on this session's own cache."""
        with self.m.lock, torch.inference_mode():
            try:
                ids = next(op)
                while True:
                    ids = op.send(self._forward(ids))
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]

    # ---- operations, as generators (see Feed) ----------------------------------------------------
    def resume_steps(self, program: Program, history: list[State], inverse: bool) -> Feed[State]:
        if not history:
            raise EngineError("resume needs at least the current state")
        state = history[-1]
        try:
            context_frame(state, inverse)
        except ValueError as exc:
            raise EngineError(f"the state cannot be written in the trace format: {exc}") from None
        facts = ProgramFacts.of(program, objects=self.format_version >= 3)
        self.program, self.facts = program, facts
        room = self.max_context - 2 * MAX_FRAME_TOKENS
        self.planner = HeaderPlanner(program, self.format_version, room, self.m.encode, self.m.line_costs(program))
        self._state = None
        yield from self._header_steps(state, inverse)
        self.history = list(history)
        self.trail = []
        self._state = state
        return state

    def predict_steps(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> Feed[State]:
        current = self.state
        if current.exit is not None:
            if action.is_inverse and len(self.history) > 1:
                # Inverse contexts have no exit frame: go back to the last state seen before it.
                self.history.pop()
                self._state = self.history[-1]
                self.trail = []
                yield from self._rebase_steps(self._state, inverse=True)
            return self.state
        if action.kind == "continue" and breakpoints and not action.is_inverse:
            action = Action(kind="breakpoint", lines=tuple(sorted(breakpoints)))
        if (action.is_inverse != self.inverse or self._context_len() > self.max_context - 2 * MAX_FRAME_TOKENS
                or not self._view_holds(current)):
            yield from self._rebase_steps(current, action.is_inverse)
        mark = self._context_len()
        yield from self._feed_steps(self.m.encode(fmt.serialize_action(action)))
        after_action = self._context_len()
        new_state = None
        problem = ""
        for attempt in range(2):  # greedy, then one sampled retry
            generated = yield from self._generate_frame_steps(current, attempt > 0, action.kind, tuple(self.trail))
            parsed = fmt.parse_frame(generated.text, current, action.is_inverse) if generated else None
            if isinstance(parsed, State) and generated is not None:
                new_state = parsed.model_copy(update={"confidence": generated.confidence(parsed)})
                break
            problem = str(parsed) if parsed is not None else "the frame did not end"
            self._crop(after_action)
        if new_state is None:
            self._crop(mark)  # as if the action had not been taken
            failed = current.model_copy(update={"error": f"prediction failed: {problem}{ORACLE_HINT}"})
            self._state = failed
            return failed
        self.history.append(new_state)
        self._record_step(current, action)
        self._state = new_state
        return new_state

    def replace_current_steps(self, state: State) -> Feed[State]:
        yield from self._rebase_steps(state, self.inverse)
        self.history[-1] = state
        self.trail = []
        self._state = state
        return state

    def sample_steps(self, action: Action, k: int) -> Feed[list[State]]:
        """k predictions with sampling (inverse actions are the ones with several plausible answers).

        The current state does not move; the context is re-encoded first when the action's direction
        differs from the cache's, as a step would. A sample that fails to parse comes back as the current
        state with `error` set."""
        current = self.state
        if current.exit is not None:
            raise EngineError("sampling needs a paused program, not the exit state")
        if action.kind == "breakpoint" and not action.lines:
            raise EngineError("a breakpoint action needs lines")
        if (action.is_inverse != self.inverse or self._context_len() > self.max_context - 2 * MAX_FRAME_TOKENS
                or not self._view_holds(current)):
            yield from self._rebase_steps(current, action.is_inverse)
        mark = self._context_len()
        yield from self._feed_steps(self.m.encode(fmt.serialize_action(action)))
        after_action = self._context_len()
        samples: list[State] = []
        for _ in range(k):
            generated = yield from self._generate_frame_steps(current, True, action.kind, tuple(self.trail))
            parsed = fmt.parse_frame(generated.text, current, action.is_inverse) if generated else None
            if isinstance(parsed, State) and generated is not None:
                samples.append(parsed.model_copy(update={"confidence": generated.confidence(parsed)}))
            else:
                problem = str(parsed) if parsed is not None else "the frame did not end"
                samples.append(current.model_copy(update={"error": f"prediction failed: {problem}"}))
            self._crop(after_action)
        self._crop(mark)
        return samples

    # ---- the KV cache --------------------------------------------------------------------------
    def _context_len(self) -> int:
        return self.cache.get_seq_length() if self.cache is not None else 0

    def _crop(self, length: int) -> None:
        assert self.cache is not None
        surplus = self.cache.get_seq_length() - length
        if surplus > 0:
            self.cache.crop(-surplus)  # transformers 5 crops by a negative count of tokens to drop
        del self.context_ids[length:]
        self.last_logits = None

    def _forward(self, ids: list[int]) -> torch.Tensor:
        """One forward pass of `ids` on this session's cache: the logits after the last of them."""
        assert self.cache is not None
        input_ids = torch.tensor([ids], device=self.m.device)
        out = self.m.model(input_ids=input_ids, past_key_values=self.cache, use_cache=True)
        return out.logits[0, -1].float()

    def _feed_steps(self, ids: list[int]) -> Feed[None]:
        if ids:
            self.context_ids.extend(ids)
            self.last_logits = yield ids

    def _feed(self, ids: list[int]) -> None:
        """Feed `ids` now (the caller holds the model lock and inference mode)."""
        if ids:
            self.context_ids.extend(ids)
            self.last_logits = self._forward(ids)

    @property
    def format_version(self) -> int:
        return self.m.format_version

    def _header_steps(self, state: State, inverse: bool) -> Feed[None]:
        """A fresh cache: the header with the view chosen for `state`, then `state` as the first frame."""
        assert self.planner is not None
        try:
            self.view, header = self.planner.plan(state)
        except HeaderTooLong as exc:
            raise EngineError(f"{exc}: debug it with the oracle engine (--engine oracle)") from None
        self.cache = self.m.new_cache()
        self.context_ids = []
        self.last_logits = None
        yield from self._feed_steps(header)
        self.header_len = len(header)
        self.inverse = inverse
        yield from self._feed_steps(self.m.encode(context_frame(state, inverse)))

    def _view_holds(self, state: State) -> bool:
        return self.planner is None or self.planner.holds(self.view, state)

    def _rebase_steps(self, state: State, inverse: bool) -> Feed[None]:
        """Cut the context back to the program and start a new trajectory at `state` (with a new header
        when the program view no longer holds what `state` needs)."""
        if not self._view_holds(state):
            yield from self._header_steps(state, inverse)
            return
        self._crop(self.header_len)
        self.inverse = inverse
        yield from self._feed_steps(self.m.encode(context_frame(state, inverse)))

    def _rebase(self, state: State, inverse: bool) -> None:
        self._drive(self._rebase_steps(state, inverse))

    def _drive(self, op: Feed[T]) -> T:
        """Drive an operation without taking the lock (the caller holds it)."""
        try:
            ids = next(op)
            while True:
                ids = op.send(self._forward(ids))
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    # ---- constrained generation ----------------------------------------------------------------
    def _generate_frame(self, prev: State, sample: bool, action: str | None = None,
                        trail: tuple[tuple[State, str], ...] = ()) -> Generated | None:
        return self._drive(self._generate_frame_steps(prev, sample, action, trail))

    def _generate_frame_steps(self, prev: State, sample: bool, action: str | None = None,
                              trail: tuple[tuple[State, str], ...] = ()) -> Feed[Generated | None]:
        """The next frame after `<|frame_sep|>`, left in the cache.

        Greedy decoding commits to each token; a frame goes wrong where the model hesitated between two
        (the next element of a list, whether a loop goes round again) and the rest follows the first
        pick. So greedy decoding records its close calls, and the `search_branches` closest ones are
        each re-decoded from that point with the runner-up token; the frame with the highest total
        log-probability wins (a small beam search that only branches where the model was unsure)."""
        assert self.facts is not None
        generator = None
        if sample:
            generator = request_generator([*self.context_ids, self.m.special_ids[fmt.FRAME]], self.samples_drawn)
            self.samples_drawn += 1
        decoder = FrameDecoder(FrameConstraint(self.facts, prev, self.inverse, action, trail), self.m.vocabulary, sample,
                               generator, self.sample_temperature)
        decoder.record_branches = not sample and self.search_branches > 0
        yield from self._feed_steps([self.m.special_ids[fmt.FRAME]])
        frame_start = self._context_len()
        best = yield from self._finish_frame_steps(decoder)
        best_ids = list(decoder.token_ids)
        if not decoder.record_branches:
            return best
        decoder.record_branches = False
        for point in branches_to_try(decoder.branch_points, self.search_branches):
            self._crop(frame_start + point.position)
            decoder.restore(point.snapshot)
            decoder.take(point.alternative, point.alternative_logprob)
            yield from self._feed_steps([point.alternative])
            bound = best.total_logprob if best is not None else None
            candidate = yield from self._finish_frame_steps(decoder, bound)
            if candidate is not None and (best is None or candidate.total_logprob > best.total_logprob):
                best, best_ids = candidate, list(decoder.token_ids)
        if best is not None and self.context_ids[frame_start:] != best_ids:  # the cache must hold the frame returned
            self._crop(frame_start)
            yield from self._feed_steps(best_ids)
        return best

    def _finish_frame_steps(self, decoder: FrameDecoder, bound: float | None = None) -> Feed[Generated | None]:
        """Decode until the frame's stop token (None if it runs past MAX_FRAME_TOKENS, or once its total
        log-probability falls below `bound`: it only falls as tokens are added, so such a branch cannot
        win, and a branch that rambles costs little)."""
        while len(decoder.token_ids) < MAX_FRAME_TOKENS:
            if decoder.done:
                return decoder.result()
            if bound is not None and decoder.total < bound:
                return None
            forced = decoder.take_forced()
            if forced is not None:
                yield from self._feed_steps(forced)
                continue
            assert self.last_logits is not None
            try:
                token = decoder.choose(self.last_logits)
            except EngineError:  # the grammar left no token (a rule's dead end): this frame fails, not the engine
                return None
            yield from self._feed_steps([token])
        return None


class Together(Generic[K, T]):
    """Operations of distinct sessions of one model, driven side by side: each round is one forward pass
    over every unfinished operation's next tokens (worker.batching.ragged_forward; on this CPU a pass
    costs about the same for one session as for several, as reading the weights dominates). Operations
    join while others run, so a search can keep the pass full: `add` one, `finished` runs rounds until
    some are done. An operation that raises EngineError gets the error as its result. Once
    time.monotonic() passes `deadline`, the unfinished ones are abandoned with an EngineError; once
    `cancel` is set, with Cancelled (checked before each round: one token's forward pass)."""

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
            from model_backend.worker.batching import ragged_forward

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
                    logits = ragged_forward(self._loaded.model, [(self._jobs[k][0].cache, self._pending[k]) for k in order])
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
        self._jobs[key][1].close()
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


def create_neural_engine(model: str | None = None, worker: str | None = None) -> Engine:
    if worker:
        try:
            from model_backend.worker.client import WorkerEngine
        except ImportError as exc:
            raise EngineError(f"the model worker client is not available: {exc}") from None
        return WorkerEngine(worker)
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


def _shared_model(path: str | None) -> LoadedModel:
    key = str(Path(path).resolve()) if path else str(DEFAULT_CHECKPOINT)
    if key not in _MODELS:
        _MODELS[key] = LoadedModel.load(key)
    return _MODELS[key]
