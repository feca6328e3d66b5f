"""Debugging sessions held by the MCP server, and the limits on them.

A `Session` is one engine (oracle, or neural: in process or over a model worker) on one program, with
the IDE-like state around it: the breakpoint lines and the trajectory (every state reached, with the
action that led there). `Sessions` holds many of them under `Limits`: how many at once, how long one
may stay idle before it is closed, how long one call may run, how large a program may be.

Threads: the MCP SDK runs each tool call on a worker thread. A session serves one call at a time (its
lock); calls on different sessions run side by side, except that the in-process model serves one
prediction at a time (`MODEL_LOCK`: one model on a CPU gains nothing from two threads).
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Literal, TypeVar

from model_backend.engine.base import Engine
from model_backend.program import Program, ProgramError
from model_backend.state import Action, State
from model_backend.worker.client import launch_engine

EngineName = Literal["neural", "oracle"]
MODEL_LOCK = threading.Lock()
T = TypeVar("T")


class SessionError(Exception):
    """A request the server refuses (unknown session, limit reached, bad program): the agent reads the
    message as the tool's error result."""


@dataclass(frozen=True)
class Limits:
    max_sessions: int = 16  # open at once
    idle_seconds: float = 1800.0  # a session unused this long is closed
    call_seconds: float = 120.0  # one call's time: a followed step stops where it got to, an inference ends
    max_program_chars: int = 100_000
    max_entry_chars: int = 2_000
    max_count: int = 1_000  # actions one `step` call repeats at most
    max_trajectory: int = 10_000  # states kept per session (the oldest fall off)


@dataclass(frozen=True)
class EngineConfig:
    """Where neural states come from: a checkpoint (None: the shipped model) or a model worker's URL."""

    model: str | None = None
    worker: str | None = None

    def create(self, name: EngineName) -> Engine:
        return launch_engine(name, model=self.model, worker=self.worker)


@dataclass
class Step:
    """One entry of the trajectory: what was done (`start`, an action, `set x = 3`) and the state after."""

    what: str
    state: State
    action: Action | None = None
    breakpoints: frozenset[int] = frozenset()
    assignment: tuple[str, str] | None = None  # (name, value text) of a set_variable
    output: str = ""  # what the program printed up to this state (set by Session.record)


@dataclass
class Session:
    id: str
    engine_name: EngineName
    engine: Engine
    program: Program
    breakpoints: frozenset[int] = frozenset()
    trajectory: list[Step] = field(default_factory=list)
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def state(self) -> State:
        return self.trajectory[-1].state

    def record(self, step: Step, cap: int) -> None:
        """Append a step, with the program's output up to its state: a step back returns to the output
        of the last visit of the state it reaches (an unknown state keeps the output as it was)."""
        before = self.trajectory[-1].output if self.trajectory else ""
        if step.action is not None and step.action.is_inverse:
            step.output = next((s.output for s in reversed(self.trajectory) if s.state == step.state), before)
        else:
            step.output = before + step.state.stdout
        self.trajectory.append(step)
        del self.trajectory[:-cap]

    def timed(self, seconds: float) -> AbstractContextManager[None]:
        return timed(self.engine, seconds)

    def run(self, operation: Callable[[], T]) -> T:
        return run_engine(self.engine, operation)


def run_engine(engine: Engine, operation: Callable[[], T]) -> T:
    """Run one engine operation; the in-process model's under MODEL_LOCK."""
    if engine.name == "neural":
        with MODEL_LOCK:
            return operation()
    return operation()


@contextmanager
def timed(engine: Engine, seconds: float) -> Iterator[None]:
    """The engine's interrupt is set after `seconds`: an action followed one prediction at a time (a long
    continue) stops at the state it reached, which becomes the current one."""
    interrupt = threading.Event()
    engine.interrupt = interrupt
    timer = threading.Timer(seconds, interrupt.set)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


def load_program(source: str | None, path: str | None, entry: str | None, limits: Limits) -> Program:
    """The program from its text or its file, checked (syntax, entry is a call) and within the limits."""
    if (source is None) == (path is None):
        raise SessionError("give exactly one of `source` (the program's text) and `path` (a file)")
    if entry is not None and len(entry) > limits.max_entry_chars:
        raise SessionError(f"the entry call is longer than {limits.max_entry_chars} characters")
    try:
        if path is not None:
            program = Program.load(path, entry)
        else:
            assert source is not None
            program = Program(source=source, path="<program>", entry=entry)
            program.check()
    except ProgramError as exc:
        raise SessionError(str(exc)) from None
    if len(program.source) > limits.max_program_chars:
        raise SessionError(f"the program has {len(program.source)} characters; this server takes at most "
                           f"{limits.max_program_chars}")
    return program


class Sessions:
    """The open sessions. Ids are random: one agent cannot guess another's."""

    def __init__(self, limits: Limits, engines: EngineConfig) -> None:
        self.limits, self.engines = limits, engines
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._sessions)

    def open(self, program: Program, engine_name: EngineName) -> Session:
        """A new session paused at the program's first state (EngineError from the engine passes through)."""
        self.expire()
        self._check_room()
        engine = self.engines.create(engine_name)
        session = Session(secrets.token_hex(6), engine_name, engine, program)
        try:
            with session.timed(self.limits.call_seconds):
                state = session.run(lambda: engine.start(program))
            with self._lock:
                self._check_room()
                self._sessions[session.id] = session
        except BaseException:
            engine.close()
            raise
        session.record(Step("start", state), self.limits.max_trajectory)
        return session

    def _check_room(self) -> None:
        if len(self._sessions) >= self.limits.max_sessions:
            raise SessionError(f"{self.limits.max_sessions} sessions are open, the most this server holds: "
                               "end one first")

    def get(self, session_id: str) -> Session:
        self.expire()
        with self._lock:
            session = self._sessions.get(session_id)
        if session is None:
            raise SessionError(f"no session {session_id!r} (ended, expired after {self.limits.idle_seconds:g} s "
                               "idle, or never started): start one")
        session.last_used = time.monotonic()
        return session

    def end(self, session_id: str) -> Session:
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is None:
            raise SessionError(f"no session {session_id!r}")
        session.engine.close()
        return session

    def expire(self) -> None:
        """Close the sessions idle longer than the limit."""
        now = time.monotonic()
        with self._lock:
            stale = [s for s in self._sessions.values()
                     if now - s.last_used > self.limits.idle_seconds and not s.lock.locked()]
            for session in stale:
                del self._sessions[session.id]
        for session in stale:
            session.engine.close()

    def close_all(self) -> None:
        with self._lock:
            held, self._sessions = list(self._sessions.values()), {}
        for session in held:
            session.engine.close()

