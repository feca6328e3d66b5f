"""Dynamic batching of many sessions' model work.

Every session operation of an engine is a generator (`model_backend.engine.neural.Feed`): it yields a
request for the device and receives the answer. For the transformers engine a request is "feed these
token ids to my cache, give me the logits after the last one"; for the vLLM engine it is one generation
request. A `BatchRunner` (one thread, the only one that touches the model) keeps a set of running
operations from different sessions, and in each round answers all their pending requests with one call
of its `answer_all` function: a single forward pass over every session's next tokens
(`ragged_forward`), or one `LLM.generate` over every session's prompt.

Collection window: when the runner is idle and a first operation arrives, it waits `window_s` (a few
milliseconds) for others before the first round; after that, operations join at the next round
(continuous batching), at most `max_batch` at a time, the others queue.

`ragged_forward` -- why not padding: sessions have KV caches of different lengths. Padding them into one
batch cache would copy every cache at every token. Instead the new tokens of all sessions are packed
into one sequence (no padding at all); the projections, MLPs and the output head run once on the packed
tokens, and only attention runs per session, on that session's own DynamicCache, with its own positions
(RoPE) and a causal mask where a session feeds several tokens. This is what vLLM does with its variable
length attention kernels. The result is the same computation as feeding each session alone; floating
point sums may differ in the last bit between a batch of one and of many (matrix kernels block
differently), which can flip greedy choice only on an exact tie: the tests check identical greedy
states batched and unbatched.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable, Generator
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import torch

log = logging.getLogger("model_backend.worker")

Req = TypeVar("Req")
Ans = TypeVar("Ans")


class Cancelled(Exception):
    """The operation was abandoned (timeout, client gone, shutdown) before it finished."""


@dataclass(eq=False)
class Job(Generic[Req, Ans]):
    """One session operation on its way through the runner."""

    owner: Any  # the engine (session) it runs on: answer_all needs its cache
    op: Generator[Req, Ans, Any]
    future: Future[Any] = field(default_factory=Future)
    pending: Req | None = None
    cancelled: bool = False
    started: float = 0.0

    def cancel(self) -> None:
        """Abandon the operation; the runner drops it at the next round (its session is then unusable)."""
        self.cancelled = True

    def settle(self, result: Any = None, error: BaseException | None = None) -> None:
        if self.future.done():
            return
        if error is not None:
            self.future.set_exception(error)
        else:
            self.future.set_result(result)


class BatchRunner(Generic[Req, Ans]):
    def __init__(
        self,
        answer_all: Callable[[list[tuple[Any, Req]]], list[Ans]],
        max_batch: int = 16,
        window_s: float = 0.003,
        lock: threading.Lock | None = None,
        name: str = "batch-runner",
        threads: int | None = None,
    ) -> None:
        self.answer_all = answer_all
        self.max_batch = max(1, max_batch)
        self.window_s = max(0.0, window_s)
        self.lock = lock or threading.Lock()
        self._queue: queue.Queue[Job[Req, Ans] | None] = queue.Queue()
        self._active: list[Job[Req, Ans]] = []
        self._stopped = False
        self.rounds = 0
        self.batched_requests = 0
        self.max_seen_batch = 0
        # torch's CPU thread count is per OS thread: the runner uses the count of the thread that made it
        # (vLLM's CPU attention also checks that it runs with the count it was set up with).
        self.threads = threads or torch.get_num_threads()
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    # ---- public --------------------------------------------------------------------------------
    def submit(self, owner: Any, op: Generator[Req, Ans, Any]) -> Job[Req, Ans]:
        job: Job[Req, Ans] = Job(owner, op)
        if self._stopped:
            op.close()
            job.settle(error=Cancelled("the worker is shutting down"))
            return job
        self._queue.put(job)
        return job

    def run(self, owner: Any, op: Generator[Req, Ans, Any], timeout: float | None = None) -> Any:
        """Submit and wait (for tests and synchronous callers)."""
        return self.submit(owner, op).future.result(timeout)

    @property
    def depth(self) -> int:
        """Operations waiting or running."""
        return self._queue.qsize() + len(self._active)

    @property
    def mean_batch(self) -> float:
        return self.batched_requests / self.rounds if self.rounds else 0.0

    def stop(self) -> None:
        self._stopped = True
        self._queue.put(None)
        self._thread.join(timeout=10)

    # ---- the loop ------------------------------------------------------------------------------
    def _admit(self, block: bool) -> bool:
        """Move queued jobs into the active set. Returns False when told to stop."""
        try:
            item = self._queue.get(block=block)
        except queue.Empty:
            return True
        if item is None:
            return False
        self._start(item)
        if block and self.window_s:  # first job after idling: wait a moment for company
            deadline = time.monotonic() + self.window_s
            while len(self._active) < self.max_batch:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                try:
                    more = self._queue.get(timeout=left)
                except queue.Empty:
                    break
                if more is None:
                    return False
                self._start(more)
        while len(self._active) < self.max_batch:
            try:
                more = self._queue.get_nowait()
            except queue.Empty:
                break
            if more is None:
                return False
            self._start(more)
        return True

    def _start(self, job: Job[Req, Ans]) -> None:
        if job.cancelled:
            job.op.close()
            job.settle(error=Cancelled("cancelled before it started"))
            return
        job.started = time.monotonic()
        with self.lock, torch.inference_mode():
            self._advance(job, None, first=True)
        if not job.future.done():
            self._active.append(job)

    def _advance(self, job: Job[Req, Ans], answer: Ans | None, first: bool = False) -> None:
        try:
            job.pending = next(job.op) if first else job.op.send(answer)  # type: ignore[arg-type]
        except StopIteration as done:
            job.settle(done.value)
        except Exception as exc:  # noqa: BLE001 - handed to the waiting request
            job.settle(error=exc)

    def _loop(self) -> None:
        if torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)
        try:
            while True:
                if not self._admit(block=not self._active):
                    break
                for job in [j for j in self._active if j.cancelled]:
                    self._active.remove(job)
                    job.op.close()
                    job.settle(error=Cancelled("cancelled"))
                if not self._active:
                    continue
                batch = self._active[: self.max_batch]
                with self.lock, torch.inference_mode():
                    try:
                        answers = self.answer_all([(job.owner, job.pending) for job in batch])  # type: ignore[misc]
                    except Exception as exc:  # noqa: BLE001 - a device failure fails this round's jobs
                        log.exception("batched model call failed")
                        for job in batch:
                            self._active.remove(job)
                            job.op.close()
                            job.settle(error=exc)
                        continue
                    self.rounds += 1
                    self.batched_requests += len(batch)
                    self.max_seen_batch = max(self.max_seen_batch, len(batch))
                    for job, answer in zip(batch, answers, strict=True):
                        self._advance(job, answer)
                        if job.future.done():
                            self._active.remove(job)
        finally:
            self._stopped = True
            leftover = list(self._active)
            while True:
                try:
                    item = self._queue.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    leftover.append(item)
            for job in leftover:
                job.op.close()
                job.settle(error=Cancelled("the worker is shutting down"))


# ---- the transformers engine's batched forward pass ----------------------------------------------


def ragged_forward(model: Any, items: list[tuple[Any, list[int]]]) -> list[torch.Tensor]:
    """Feed each session's token ids to its own DynamicCache in one pass; return each one's last logits.

    `items`: (cache, token ids) per session, the caches distinct. Llama architecture (transformers'
    LlamaForCausalLM modules are used as they are; only the attention call is per session).
    """
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb, repeat_kv

    from model_backend.engine.ensemble import EnsembleLM

    if isinstance(model, EnsembleLM):  # each member on its own caches, then the mean of log-probs
        per_member = [
            ragged_forward(member, [(cache.members[k], ids) for cache, ids in items])
            for k, member in enumerate(model.models)
        ]
        return [model.combine(list(logits)) for logits in zip(*per_member, strict=True)]
    inner = model.model
    device = inner.embed_tokens.weight.device
    lengths = [len(ids) for _, ids in items]
    if any(n == 0 for n in lengths):
        raise ValueError("every session must feed at least one token")
    past = [cache.get_seq_length() for cache, _ in items]
    total = sum(lengths)
    input_ids = torch.tensor([i for _, ids in items for i in ids], device=device)
    positions = torch.cat([torch.arange(p, p + n, device=device) for p, n in zip(past, lengths, strict=True)])
    hidden = inner.embed_tokens(input_ids)[None]  # [1, T, H]
    cos, sin = inner.rotary_emb(hidden, positions[None])
    masks = [
        None if n == 1 else
        torch.arange(p + n, device=device)[None, :] <= (p + torch.arange(n, device=device))[:, None]
        for p, n in zip(past, lengths, strict=True)
    ]
    for layer in inner.layers:
        attn = layer.self_attn
        head_dim = attn.head_dim
        x = layer.input_layernorm(hidden)
        q = attn.q_proj(x).view(1, total, -1, head_dim).transpose(1, 2)
        k = attn.k_proj(x).view(1, total, -1, head_dim).transpose(1, 2)
        v = attn.v_proj(x).view(1, total, -1, head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        outputs = []
        start = 0
        for (cache, _), n, mask in zip(items, lengths, masks, strict=True):
            keys, values = cache.update(k[:, :, start : start + n], v[:, :, start : start + n], attn.layer_idx)
            keys = repeat_kv(keys, attn.num_key_value_groups)
            values = repeat_kv(values, attn.num_key_value_groups)
            outputs.append(torch.nn.functional.scaled_dot_product_attention(
                q[:, :, start : start + n], keys, values, attn_mask=mask, scale=attn.scaling,
            ))
            start += n
        attended = torch.cat(outputs, dim=2).transpose(1, 2).reshape(1, total, -1)
        hidden = hidden + attn.o_proj(attended)
        hidden = hidden + layer.mlp(layer.post_attention_layernorm(hidden))
    hidden = inner.norm(hidden)
    last = torch.tensor([sum(lengths[: i + 1]) - 1 for i in range(len(lengths))], device=device)
    logits = model.lm_head(hidden[0, last]).float()
    return list(logits.unbind(0))
