"""Dynamic batching of many sessions' model work.

Every session operation of an engine is a generator (`model_backend.engine.neural.Feed`): it yields a
request for the device and receives the answer. For the transformers engine a request is "feed these
token ids to my cache, give me the logits after the last one"; for the vLLM engine it is one generation
request. A `BatchRunner` (one thread, the only one that touches the model) keeps a set of running
operations from different sessions, and in each round answers all their pending requests with one call
of its `answer_all` function: a single forward pass over every session's next tokens
(`model_backend.engine.forward.ragged_forward`), or one `LLM.generate` over every session's prompt.

Collection window: when the runner is idle and a first operation arrives, it waits `window_s` (a few
milliseconds) for others before the first round; after that, operations join at the next round
(continuous batching), at most `max_batch` at a time, the others queue.

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
        """Abandon the operation; the runner drops it at the next round and puts its session back on its
        current state (`_failed`)."""
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
            _failed(job, exc)

    def _loop(self) -> None:
        if torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)
        try:
            while True:
                if not self._admit(block=not self._active):
                    break
                for job in [j for j in self._active if j.cancelled]:
                    self._active.remove(job)
                    _failed(job, Cancelled("cancelled"))
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
                            _failed(job, exc)
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


def _failed(job: Job[Any, Any], error: BaseException) -> None:
    """End a job that stopped part way with `error`: its operation is closed and its session, where it
    can (`recover`, as FrameEngine's), is put back on its current state, so that it stays usable."""
    job.op.close()
    recover = getattr(job.owner, "recover", None)
    if callable(recover):
        try:
            recover()
        except Exception:  # noqa: BLE001 - the job's own error is the one to report
            log.exception("a session could not recover after a failed operation")
    job.settle(error=error)
