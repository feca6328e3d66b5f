"""Predicted runs of example calls, cached by source hash, debounced, cancelled on edit.

A `Prediction` is what the model says one call does: its outcome ("returns X" / "raises E") with a
confidence, then, line by line, what each line of the function binds on each of its runs. It is made
one predicted step at a time (step_over from the call, each step one prediction: the model's single
steps are much surer than its long jumps), at most `max_steps` steps, partial lines published as they
come. The outcome is the return reached; a run cut at `max_steps` finishes with one predicted jump
(step_return). A None return goes on to the program's end: an exception escaping the call ends the
program with an error (mcp_server.queries.predict_return does the same).

The confidence is the lowest probability among the values of the predicted return frame (the engine
gives one per local, `State.confidence`; it gives none for the return value itself).

`Predictor` owns one worker thread that runs every prediction, one at a time: the language server's
handlers never wait on it, they read `Predictor.get` (what is cached) and are told of updates through
`on_update`. A document edit calls `Predictor.schedule` with the new source: the jobs of older sources
of that document are cancelled (checked between predicted steps), and the new ones start after the
debounce delay if no further edit came (a document just opened starts at once). Nothing of the user's
code runs: the engine is the neural one (in process, or a model worker's session).
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

from model_backend.engine.base import Engine, EngineError
from model_backend.program import Program, ProgramError
from model_backend.state import Action, State

log = logging.getLogger(__name__)
Status = Literal["pending", "running", "done", "failed", "cancelled"]
MAX_CACHED = 256
DEFAULT_MAX_STEPS = 40
DEFAULT_DEBOUNCE = 0.4
PUBLISH_EVERY = 1.0  # seconds between partial publications of the lines phase


class Stop(Exception):
    """The job was cancelled (its document changed, or the server is closing)."""


@dataclass
class Visit:
    """One run of a line: the locals before it ran, and the names it bound (name -> new value)."""

    before: dict[str, str]
    bound: dict[str, str]


@dataclass
class Prediction:
    call: str
    status: Status = "pending"
    outcome: str | None = None  # "returns 12", "raises ValueError: x", or why there is no prediction
    confidence: float | None = None
    lines: dict[int, list[Visit]] = field(default_factory=dict)  # line -> its runs, in order
    notes: dict[int, str] = field(default_factory=dict)  # line -> "returns 12" / "raises E" / the arguments
    steps: int = 0  # predicted steps of the lines phase
    complete: bool = False  # the lines phase reached the return (not cut at max_steps or by an error)
    seconds: float | None = None  # from the job's start to the outcome
    error: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"call": self.call, "status": self.status, "outcome": self.outcome, "confidence": self.confidence,
                "steps": self.steps, "complete": self.complete,
                "seconds": self.seconds, "error": self.error, "notes": {str(k): v for k, v in self.notes.items()},
                "lines": {str(line): [{"before": v.before, "bound": v.bound} for v in visits]
                          for line, visits in self.lines.items()}}


def outcome_of(start: State, returned: State, end: State | None) -> str:
    if returned.error or (end is not None and end.error):
        return f"no prediction: {returned.error or (end.error if end else '')}"
    if end is not None and end.event == "exit" and end.exit == "error":
        return f"raises {end.exit_reason or 'an exception'}"
    if returned.event == "return" and returned.depth == start.depth:
        return f"returns {returned.value or 'None'}"
    if returned.event == "exit" and returned.exit == "error":
        return f"raises {returned.exit_reason or 'an exception'}"
    return f"ends at line {returned.line}" if returned.line else "ends without a return"


def bindings(before: State, after: State) -> dict[str, str]:
    return {name: value for name, value in after.locals.items() if before.locals.get(name) != value}


def record(prediction: Prediction, before: State, after: State, depth: int) -> None:
    """Add what the step from `before` to `after` shows to the prediction's lines."""
    if before.line is None or before.depth != depth:
        return
    if before.event == "call":
        prediction.notes[before.line] = ", ".join(f"{k}={v}" for k, v in before.locals.items())
    elif before.event == "line":
        prediction.lines.setdefault(before.line, []).append(Visit(dict(before.locals), bindings(before, after)))


class Job:
    def __init__(self, uri: str, digest: str, program: Program, prediction: Prediction) -> None:
        self.uri, self.digest, self.program, self.prediction = uri, digest, program, prediction
        self.cancel = threading.Event()


class Predictor:
    """Runs predictions on its own thread; see the module's docstring."""

    def __init__(self, engine_factory: Callable[[], Engine], on_update: Callable[[str], None],
                 max_steps: int = DEFAULT_MAX_STEPS, debounce: float = DEFAULT_DEBOUNCE) -> None:
        self.engine_factory, self.on_update = engine_factory, on_update
        self.max_steps, self.debounce = max_steps, debounce
        self._cache: OrderedDict[tuple[str, str], Prediction] = OrderedDict()
        self._latest: dict[str, str] = {}  # uri -> digest of its newest source
        self._jobs: dict[str, list[Job]] = {}  # uri -> its queued or running jobs
        self._timers: dict[str, threading.Timer] = {}
        self._queue: queue.Queue[Job | None] = queue.Queue()
        self._lock = threading.Lock()
        self._engine: Engine | None = None
        self._closed = False
        self.engine_error: str | None = None
        self.ended: deque[dict[str, object]] = deque(maxlen=64)  # the latest jobs' ends, for `ndb.status`
        self._thread = threading.Thread(target=self._work, name="ndb-lsp-predictor", daemon=True)
        self._thread.start()

    # ---- called from the server's handlers: never wait on a prediction -----------------------------
    def get(self, digest: str, call: str) -> Prediction | None:
        with self._lock:
            return self._cache.get((digest, call))

    def schedule(self, uri: str, digest: str, source: str, calls: list[str], path: str,
                 debounce: bool = True) -> None:
        """The document `uri` now holds `source`: cancel the jobs of its older sources, and queue a
        prediction of each call not cached yet: after the debounce delay if no further edit came (an
        edit), or at once (`debounce` False: a document opened, an example set, where no keystroke follows)."""
        with self._lock:
            self._latest[uri] = digest
            for job in self._jobs.get(uri, []):
                if job.digest != digest:
                    job.cancel.set()
            timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()
        if not debounce:
            self._enqueue(uri, digest, source, calls, path)
            return
        timer = threading.Timer(self.debounce, self._enqueue, (uri, digest, source, calls, path))
        timer.daemon = True
        with self._lock:
            self._timers[uri] = timer
        timer.start()

    def forget(self, uri: str) -> None:
        """The document closed: cancel its jobs."""
        with self._lock:
            self._latest.pop(uri, None)
            for job in self._jobs.pop(uri, []):
                job.cancel.set()
            timer = self._timers.pop(uri, None)
        if timer is not None:
            timer.cancel()

    def warm_up(self) -> None:
        """Load the model now, on the worker thread (the first prediction need not wait for it)."""
        self._queue.put(None)

    def close(self, wait: float = 10.0) -> None:
        """Cancel every job and end the worker thread (waiting up to `wait` s for the step under way)."""
        with self._lock:
            self._closed = True
            for jobs in self._jobs.values():
                for job in jobs:
                    job.cancel.set()
            for timer in self._timers.values():
                timer.cancel()
        self._queue.put(None)
        if threading.current_thread() is not self._thread:
            self._thread.join(wait)

    # ---- the worker thread -----------------------------------------------------------------------
    def _enqueue(self, uri: str, digest: str, source: str, calls: list[str], path: str) -> None:
        with self._lock:
            if self._closed or self._latest.get(uri) != digest:
                return
            for call in calls:
                key = (digest, call)
                cached = self._cache.get(key)
                if cached is not None and cached.status != "cancelled":
                    continue
                program = Program(source=source, path=path, entry=call)
                prediction = Prediction(call)
                self._cache[key] = prediction
                self._cache.move_to_end(key)
                while len(self._cache) > MAX_CACHED:
                    self._cache.popitem(last=False)
                job = Job(uri, digest, program, prediction)
                self._jobs.setdefault(uri, []).append(job)
                self._queue.put(job)

    def _engine_now(self) -> Engine:
        if self._engine is None:
            self._engine = self.engine_factory()
            self._engine.follow(0)  # one predicted jump per action: the lines phase steps itself
        return self._engine

    def _work(self) -> None:
        while True:
            job = self._queue.get()
            if self._closed:
                if self._engine is not None:
                    self._engine.close()
                return
            if job is None:
                try:
                    self._engine_now()
                except Exception as exc:  # noqa: BLE001 - reported to the editor, the server stays up
                    self.engine_error = f"the neural engine could not start: {exc}"
                    log.error(self.engine_error)
                continue
            try:
                self._run(job)
            except Stop:
                job.prediction.status = "cancelled"
            except (EngineError, ProgramError) as exc:
                job.prediction.status, job.prediction.error = "failed", str(exc)
                job.prediction.outcome = job.prediction.outcome or f"no prediction: {exc}"
            except Exception as exc:  # noqa: BLE001 - a bug must not take the editor's server down
                log.exception("prediction of %s failed", job.prediction.call)
                job.prediction.status, job.prediction.error = "failed", f"{type(exc).__name__}: {exc}"
                job.prediction.outcome = job.prediction.outcome or "no prediction (server error)"
            finally:
                with self._lock:
                    jobs = self._jobs.get(job.uri, [])
                    if job in jobs:
                        jobs.remove(job)
                    if job.prediction.status == "cancelled":  # a later request predicts it afresh
                        self._cache.pop((job.digest, job.prediction.call), None)
                    self.ended.append({"uri": job.uri, "digest": job.digest, "call": job.prediction.call,
                                       "status": job.prediction.status, "steps": job.prediction.steps})
            self.on_update(job.uri)

    def _run(self, job: Job) -> None:
        prediction, cancel = job.prediction, job.cancel
        began = time.monotonic()

        def check() -> None:
            if cancel.is_set():
                raise Stop

        check()
        prediction.status = "running"
        engine = self._engine_now()
        engine.interrupt = cancel
        job.program.check()
        start = engine.start(job.program)
        check()
        if start.error:
            raise EngineError(start.error)
        state, returned, published = start, None, time.monotonic()
        for _ in range(self.max_steps):
            check()
            after = engine.step(Action(kind="step_over"))
            prediction.steps += 1
            if after.error:
                prediction.error = after.error
                break
            record(prediction, state, after, start.depth)
            if after.depth == start.depth and after.event in ("return", "exception") and after.line is not None:
                verdict = f"returns {after.value}" if after.event == "return" else f"raises {after.value}"
                prediction.notes[after.line] = verdict
            state = after
            if after.event == "exit" or (after.event == "return" and after.depth == start.depth):
                prediction.complete, returned = True, after
                break
            if time.monotonic() - published > PUBLISH_EVERY:
                published = time.monotonic()
                self.on_update(job.uri)
        if returned is None:  # cut short: the rest in one predicted jump, less sure than single steps
            check()
            returned = state if state.error or state.event == "exit" else engine.step(Action(kind="step_return"))
        end = None
        if not returned.error and returned.event != "exit" and returned.value in (None, "None"):
            check()
            end = engine.step(Action(kind="continue"))  # an exception escaping ends the program with an error
        prediction.outcome = outcome_of(start, returned, end)
        values = list((returned.confidence or {}).values())
        prediction.confidence = min(values) if values else None
        prediction.status = "done"
        prediction.seconds = time.monotonic() - began
