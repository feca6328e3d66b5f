"""`WorkerEngine`: the Engine interface over a websocket to `ndb worker` (synchronous, for the adapter).

The engine keeps the program, the current state and the last few states locally, so a debug session
survives the worker: when the connection fails, the request raises an `EngineError` saying so (the
adapter shows it in the Debug Console and keeps showing the current state), and the next request
reconnects and re-opens the session on the worker *at the current state* (protocol `open` with
`at="state"`) before doing what was asked. Responses are matched to requests by id and session id,
so an answer can never be another session's state.

The token (when the worker needs one) comes from the `token` argument, the URL's password
(`ws://:TOKEN@host:port`) or the environment variable NDB_WORKER_TOKEN; it is sent in the handshake's
`Authorization: Bearer` header and never shown in messages.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from pydantic import ValidationError
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus, InvalidURI
from websockets.sync.client import ClientConnection, connect

from model_backend.engine.base import Engine, EngineError, StartAt
from model_backend.program import Program
from model_backend.state import Action, State
from model_backend.worker import protocol as proto

log = logging.getLogger("model_backend.worker.client")

TOKEN_ENV = "NDB_WORKER_TOKEN"
WATCH_POLL_S = 0.05  # how often a step's wait looks at the engine's interrupt and the IDE's breakpoints


class WorkerError(EngineError):
    """The worker answered with a typed error (`code` is one of protocol.ErrorCode), or could not be
    reached (`code` "unavailable")."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


class WorkerUnavailable(WorkerError):
    """No answer: the worker cannot be reached, closed the connection, or did not answer in time.
    `stale`: an existing connection turned out to be closed (worth one immediate reconnection)."""

    def __init__(self, message: str, stale: bool = False) -> None:
        super().__init__("unavailable", message)
        self.stale = stale


class WorkerClient:
    """One websocket connection, one request at a time. Raises WorkerError; reconnects on demand."""

    def __init__(self, url: str, token: str | None = None, timeout: float = 300.0, connect_timeout: float = 10.0,
                 max_message_bytes: int = proto.DEFAULT_MAX_MESSAGE_BYTES) -> None:
        clean, url_token = proto.split_token(url)
        parts = urlsplit(clean)
        if parts.scheme not in ("ws", "wss") or not parts.hostname:
            raise EngineError(f"the worker address must look like ws://HOST:PORT, not {clean!r}")
        self.url = clean
        self.token = token or url_token or os.environ.get(TOKEN_ENV) or None
        self.timeout = timeout
        self.connect_timeout = connect_timeout
        self.max_message_bytes = max_message_bytes
        self._ws: ClientConnection | None = None
        self._ids = itertools.count(1)
        self.on_disconnect: Callable[[], None] | None = None

    @property
    def connected(self) -> bool:
        return self._ws is not None

    def connect(self) -> ClientConnection:
        if self._ws is not None:
            return self._ws
        headers = {"Authorization": f"Bearer {self.token}"} if self.token else None
        try:
            self._ws = connect(
                self.url, additional_headers=headers, open_timeout=self.connect_timeout, close_timeout=2,
                max_size=max(self.max_message_bytes, 1 << 20) * 8, proxy=None, legacy=True,
            )  # a direct connection, held until drop()
        except InvalidStatus as exc:
            status = exc.response.status_code
            if status == 401:
                reason = "refused the token" if self.token else "needs a token (launch attribute `token`)"
                raise WorkerError("unauthorized", f"the model worker at {self.url} {reason}") from None
            raise WorkerUnavailable(f"the model worker at {self.url} refused the connection (HTTP {status})") from None
        except InvalidURI as exc:
            raise EngineError(f"bad worker address {self.url!r}: {exc}") from None
        except (OSError, TimeoutError, InvalidHandshake) as exc:
            raise WorkerUnavailable(f"cannot reach the model worker at {self.url}: {_reason(exc)}") from None
        return self._ws

    def drop(self) -> None:
        ws, self._ws = self._ws, None
        if ws is not None:
            with contextlib.suppress(Exception):
                ws.close()
            if self.on_disconnect is not None:
                self.on_disconnect()

    def request(self, make: Callable[[int], Any], timeout: float | None = None,
                interrupt: threading.Event | None = None,
                live_breakpoints: Callable[[], frozenset[int]] | None = None) -> proto.Response:
        """Send the request `make(id)` and return its successful response (or raise WorkerError).

        While a step's answer is awaited, two things from other threads reach it: `interrupt` set (a
        pause) sends an `interrupt` of the session, once, and the worker then answers with the state
        reached so far; `live_breakpoints()` differing from the lines last sent (a breakpoint set in the
        IDE) sends them as `breakpoints`."""
        try:
            request = make(next(self._ids))
        except ValidationError as exc:
            raise WorkerError("bad_request", f"invalid request: {exc.errors()[0].get('msg', '')}") from None
        payload = request.model_dump_json(exclude_none=True)
        size = len(payload.encode())
        if size > self.max_message_bytes:
            raise WorkerError("too_large", f"the request is {size} bytes; the worker accepts at most "
                                           f"{self.max_message_bytes}")
        ws = self.connect()
        limit = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + limit
        session = getattr(request, "session", None)
        watch = session is not None and (interrupt is not None or live_breakpoints is not None)
        interrupted = False
        lines_sent = frozenset(getattr(request, "breakpoints", ()))
        try:
            ws.send(payload)
            while True:
                left = max(0.0, deadline - time.monotonic())
                if not watch:
                    raw = ws.recv(timeout=left)
                else:
                    assert session is not None
                    # Their own answers are skipped below, as any other id.
                    if interrupt is not None and interrupt.is_set() and not interrupted:
                        interrupted = True
                        ws.send(proto.InterruptRequest(id=next(self._ids), op="interrupt",
                                                       session=session).model_dump_json())
                    if live_breakpoints is not None and (lines := live_breakpoints()) != lines_sent:
                        lines_sent = lines
                        ws.send(proto.BreakpointsRequest(id=next(self._ids), op="breakpoints", session=session,
                                                         breakpoints=sorted(lines)).model_dump_json())
                    try:
                        raw = ws.recv(timeout=min(left, WATCH_POLL_S))
                    except TimeoutError:
                        if time.monotonic() < deadline:
                            continue
                        raise
                response = proto.Response.model_validate_json(raw)
                if response.id == request.id:
                    break
                if response.id is None:
                    raise WorkerError("bad_request", response.error.message if response.error else "bad request")
                log.debug("ignoring a stale response %s", response.id)  # from a request that timed out earlier
        except TimeoutError:
            self.drop()
            raise WorkerUnavailable(f"the model worker at {self.url} did not answer within {limit:g} s") from None
        except ConnectionClosed as exc:
            self.drop()
            if exc.rcvd is not None and exc.rcvd.code == 1009:
                raise WorkerError("too_large", f"the model worker at {self.url} closed the connection: "
                                               "a message was over its size limit") from None
            raise WorkerUnavailable(f"the model worker at {self.url} closed the connection ({_reason(exc)})",
                                    stale=True) from None
        except OSError as exc:
            self.drop()
            raise WorkerUnavailable(f"lost the model worker at {self.url}: {_reason(exc)}", stale=True) from None
        except ValidationError as exc:
            self.drop()
            raise WorkerError("bad_response", f"the model worker at {self.url} sent an unreadable answer: "
                                              f"{exc.errors()[0].get('msg', '')}") from None
        if not response.ok:
            error = response.error
            raise WorkerError(error.code if error else "internal", error.message if error else "request failed")
        wanted = getattr(request, "session", None)
        if wanted is not None and response.session != wanted:
            self.drop()
            raise WorkerError("bad_response", "the model worker answered for another session; dropped the connection")
        return response

    def health(self) -> proto.Health:
        response = self.request(lambda i: proto.HealthRequest(id=i, op="health"))
        assert response.health is not None
        return response.health

    def close(self) -> None:
        self.drop()


class WorkerEngine(Engine):
    """A debugging session whose states come from a model worker."""

    name = "worker"

    def __init__(self, url: str, token: str | None = None, timeout: float = 300.0, connect_timeout: float = 10.0,
                 max_message_bytes: int = proto.DEFAULT_MAX_MESSAGE_BYTES) -> None:
        self.client = WorkerClient(url, token, timeout, connect_timeout, max_message_bytes)
        self.client.on_disconnect = self._lost_session
        self.url = self.client.url
        self.program: Program | None = None
        self.session: str | None = None
        self.history: list[State] = []  # the last few states, the current one last (for re-opening)
        self.inverse = False
        self._state: State | None = None
        self._lock = threading.RLock()
        self.notices: list[str] = []  # things the user should know (reconnections); see drain_notices
        self.follow_steps: int | None = None  # sent with each step; None: the worker's default

    # ---- Engine ------------------------------------------------------------------------------------
    def start(self, program: Program, at: StartAt = "entry", known_exit: State | None = None) -> State:
        with self._lock:
            self._close_session()
            response = self.client.request(lambda i: proto.OpenRequest(
                id=i, op="open", program=program, at=at, known_exit=known_exit))
            assert response.state is not None and response.session is not None
            self.program, self.session = program, response.session
            self.history, self.inverse = [response.state], at == "exit"
            self._state = response.state
            return response.state

    def step(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> State:
        with self._lock:
            current = self.state
            response = self._in_session(lambda i, sid: proto.StepRequest(
                id=i, op="step", session=sid, action=action, breakpoints=sorted(breakpoints),
                follow_steps=self.follow_steps),
                interrupt=self.interrupt, live_breakpoints=self.live_breakpoints)
            state = response.state
            assert state is not None
            # Mirror the engine's own bookkeeping (NeuralEngine.step_steps) for re-opening later.
            if current.exit is not None:
                if action.is_inverse and len(self.history) > 1 and state.error is None:
                    self.history.pop()
                    self.inverse = True
            else:
                self.inverse = action.is_inverse
                if state.error is None:
                    self.history = [*self.history, state][-proto.MAX_HISTORY:]
            self._state = state
            return state

    def follow(self, steps: int) -> None:
        """The worker's session follows actions one predicted step at a time like an in-process model
        engine (Engine.follow): the count goes with each step."""
        if steps < 0:
            raise EngineError("the number of steps to follow cannot be negative")
        self.follow_steps = steps

    def set_variable(self, name: str, value: str) -> State:
        with self._lock:
            response = self._in_session(lambda i, sid: proto.SetVariableRequest(
                id=i, op="set_variable", session=sid, name=name, value=value))
            assert response.state is not None
            self.history[-1] = response.state
            self._state = response.state
            return response.state

    def goto(self, line: int) -> State:
        with self._lock:
            response = self._in_session(lambda i, sid: proto.GotoRequest(id=i, op="goto", session=sid, line=line))
            assert response.state is not None
            self.history[-1] = response.state
            self._state = response.state
            return response.state

    def sample(self, action: Action, k: int) -> list[State]:
        """k sampled predictions of the state `action` leads to; the current state does not move."""
        with self._lock:
            response = self._in_session(lambda i, sid: proto.SampleRequest(
                id=i, op="sample", session=sid, action=action, k=k))
            return list(response.states or [])

    def health(self) -> proto.Health:
        with self._lock:
            return self.client.health()

    def close(self) -> None:
        with self._lock:
            self._close_session()
            self.client.close()

    def drain_notices(self) -> list[str]:
        """Messages for the user since the last call (e.g. "reconnected, session re-opened")."""
        notices, self.notices = self.notices, []
        return notices

    # ---- sessions -------------------------------------------------------------------------------
    def _lost_session(self) -> None:
        self.session = None  # sessions live and die with their connection

    def _close_session(self) -> None:
        if self.session is not None and self.client.connected:
            sid = self.session
            with contextlib.suppress(EngineError):
                self.client.request(lambda i: proto.CloseRequest(id=i, op="close", session=sid), timeout=5)
        self.session = None

    def _reopen(self) -> None:
        assert self.program is not None and self._state is not None
        program = self.program
        history = [s.model_copy(update={"error": None}) for s in self.history[-proto.MAX_HISTORY:]]
        current = self._state.model_copy(update={"error": None})
        if not history or history[-1] != current:
            history = [*history, current][-proto.MAX_HISTORY:]
        response = self.client.request(lambda i: proto.OpenRequest(
            id=i, op="open", program=program, at="state", history=history, inverse=self.inverse))
        assert response.session is not None
        self.session = response.session
        self.notices.append(f"reconnected to the model worker at {self.url}; the session was re-opened at the "
                            "current state")

    def _in_session(self, make: Callable[[int, str], Any], interrupt: threading.Event | None = None,
                    live_breakpoints: Callable[[], frozenset[int]] | None = None) -> proto.Response:
        """Send a request of this session, re-opening the session first when it is gone.

        Sessions die with their connection, so re-opening (at the current state) is always safe: an
        action is never applied twice. A connection found closed (the worker restarted since the last
        request) is re-established once at once; a worker that cannot be reached raises."""
        if self.program is None or self._state is None:
            raise EngineError("the engine has not been started")
        try:
            for attempt in range(2):
                reopened = False
                try:
                    if self.session is None:
                        self._reopen()
                        reopened = True
                    return self.client.request(lambda i: make(i, self._sid()), interrupt=interrupt,
                                               live_breakpoints=live_breakpoints)
                except WorkerUnavailable as exc:
                    if not exc.stale or attempt:
                        raise
                except WorkerError as exc:
                    if exc.code in ("session_expired", "unknown_session") and not reopened and not attempt:
                        self.session = None
                        self._reopen()
                        self.notices[-1] = (f"the model worker had closed the session ({exc}); it was re-opened "
                                            "at the current state")
                        return self.client.request(lambda i: make(i, self._sid()), interrupt=interrupt,
                                                   live_breakpoints=live_breakpoints)
                    if exc.code == "timeout":
                        self.session = None
                    raise
            raise AssertionError("unreachable")
        except WorkerUnavailable as exc:
            raise WorkerUnavailable(f"{exc}. The current state stays as it was; the next action reconnects.") from None

    def _sid(self) -> str:
        assert self.session is not None
        return self.session


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text[:300]


def launch_engine(name: str, model: str | None = None, worker: str | None = None) -> Engine:
    """The engine a launch configuration names: with `worker` (the ws:// URL of `ndb worker`) the neural
    engine is that worker's WorkerEngine, else `model_backend.engine.create_engine`'s, in this process.
    Raises EngineError for an unknown or unusable one."""
    if worker and name == "neural":
        return WorkerEngine(worker)
    from model_backend.engine import create_engine

    return create_engine(name, model=model)
