"""`ndb worker`: a websocket server that holds one model and many debugging sessions.

One asyncio loop reads requests (websockets, JSON, `protocol.Request`); all model work goes to one
`BatchRunner` thread, which batches the operations of different sessions on the device. Each session is
an engine object (`NeuralEngine` for transformers, `VLLMEngine` for vLLM) that keeps its program and
trajectory (the transformers engine: in its own KV cache) between steps.

Rules:
- A session belongs to the connection that opened it; another connection naming its id gets
  `unknown_session`, and the session is closed when its connection goes away.
- Requests of one session run one at a time, in order; different sessions run concurrently.
- A request that runs past `request_timeout_s` is answered `timeout` and its session is closed (its cache
  may be half-updated); the client re-opens it at its current state.
- Sessions idle for `idle_timeout_s` are evicted; a request naming one gets `session_expired`.
- Messages over `max_message_bytes` close the connection with code 1009 (websockets' limit); anything
  else malformed gets a `bad_request` answer and the connection stays open.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import hmac
import json
import logging
import os
import secrets
import signal
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Generator
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any, Protocol

from pydantic import ValidationError
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request as HttpRequest
from websockets.http11 import Response as HttpResponse

from model_backend.engine.base import EngineError
from model_backend.program import ProgramError
from model_backend.state import State
from model_backend.worker import protocol as proto
from model_backend.worker.batching import BatchRunner, Cancelled

log = logging.getLogger("model_backend.worker")

MAX_IN_FLIGHT_PER_CONNECTION = 64
TOMBSTONES = 10_000  # ids of evicted sessions remembered, to answer session_expired instead of unknown


class SessionEngine(Protocol):
    """What the server needs of an engine: each operation as a generator for the batch runner."""

    def start_steps(self, program: Any, at: Any = ..., known_exit: State | None = ...) -> Generator[Any, Any, State]: ...
    def resume_steps(self, program: Any, history: list[State], inverse: bool) -> Generator[Any, Any, State]: ...
    def step_steps(self, action: Any, breakpoints: frozenset[int] = ...) -> Generator[Any, Any, State]: ...
    def set_variable_steps(self, name: str, value: str) -> Generator[Any, Any, State]: ...
    def goto_steps(self, line: int) -> Generator[Any, Any, State]: ...
    def sample_steps(self, action: Any, k: int) -> Generator[Any, Any, list[State]]: ...
    def follow(self, steps: int) -> None: ...
    interrupt: threading.Event | None  # set: the step under way stops at the next state (Engine.interrupt)
    live_breakpoints: Callable[[], frozenset[int]] | None  # read before each single step (Engine.live_breakpoints)


class Backend(Protocol):
    engine_name: str
    model: str
    device: str
    runner: BatchRunner[Any, Any]

    def new_engine(self) -> SessionEngine: ...
    def close(self) -> None: ...


class TransformersBackend:
    """The project's LlamaForCausalLM (model_backend.engine.neural) with one forward pass per round over
    all sessions' next tokens (engine/forward.py's ragged_forward)."""

    engine_name = "transformers"

    def __init__(self, model: str | None, device: str = "cpu", max_batch: int = 16, window_s: float = 0.003) -> None:
        from model_backend.engine.neural import LoadedModel

        self.loaded = LoadedModel.load(model, device)
        self.model = self.loaded.path
        self.device = str(self.loaded.device)
        self.runner: BatchRunner[Any, Any] = BatchRunner(
            self._answer_all, max_batch=max_batch, window_s=window_s, lock=self.loaded.lock, name="transformers-batch"
        )

    def new_engine(self) -> SessionEngine:
        from model_backend.engine.neural import NeuralEngine

        return NeuralEngine(self.loaded)

    def _answer_all(self, items: list[tuple[Any, list[int]]]) -> list[Any]:
        from model_backend.engine.forward import ragged_forward

        caches = [engine.cache for engine, _ in items]
        assert len({id(c) for c in caches}) == len(caches), "two operations of one session in a round"
        return ragged_forward(self.loaded.model, [(cache, ids) for cache, (_, ids) in zip(caches, items, strict=True)])

    def close(self) -> None:
        self.runner.stop()


def load_backend(engine: str, model: str | None, device: str = "cpu", max_batch: int = 16,
                 window_s: float = 0.003) -> Backend:
    if engine == "transformers":
        return TransformersBackend(model, device, max_batch, window_s)
    if engine == "vllm":
        from model_backend.worker.vllm_engine import VLLMBackend

        return VLLMBackend(model, device, max_batch, window_s)
    raise EngineError(f"unknown worker engine {engine!r} (choose transformers or vllm)")


@dataclass
class WorkerConfig:
    host: str = "127.0.0.1"
    port: int = proto.DEFAULT_PORT
    token: str | None = None
    max_message_bytes: int = proto.DEFAULT_MAX_MESSAGE_BYTES
    request_timeout_s: float = 120.0
    idle_timeout_s: float = 1800.0
    max_sessions: int = 256

    def check(self) -> None:
        if not proto.is_loopback(self.host) and not self.token:
            raise ValueError(
                f"binding {self.host} exposes the worker beyond this machine: give a token (--token or "
                "NDB_WORKER_TOKEN), which clients send at connect"
            )


@dataclass(eq=False)
class Session:
    id: str
    engine: SessionEngine
    owner: int  # connection id
    last_used: float = field(default_factory=time.monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    breakpoints: frozenset[int] = frozenset()  # the IDE's lines for the step under way (`breakpoints` updates them)


class RequestFailed(Exception):
    def __init__(self, code: proto.ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class WorkerServer:
    def __init__(self, backend: Backend, config: WorkerConfig) -> None:
        config.check()
        self.backend = backend
        self.config = config
        self.sessions: dict[str, Session] = {}
        self.expired: OrderedDict[str, str] = OrderedDict()
        self.started = time.monotonic()
        self.requests = 0
        self.port: int | None = None
        self._server: Server | None = None
        self._next_connection = 0
        self._stopping = False

    # ---- lifecycle -------------------------------------------------------------------------------
    async def serve(self, ready: Callable[[int], None] | None = None, stop: asyncio.Future[None] | None = None) -> None:
        """Serve until `stop` resolves (or forever)."""
        async with serve(
            self._connection,
            self.config.host,
            self.config.port,
            max_size=self.config.max_message_bytes,
            process_request=self._authorize,
            ping_interval=20,
            ping_timeout=60,
            close_timeout=5,
        ) as server:
            self._server = server
            self.port = next(iter(server.sockets)).getsockname()[1]
            reaper = asyncio.create_task(self._reap())
            if ready is not None:
                ready(self.port)
            try:
                await (stop if stop is not None else asyncio.get_running_loop().create_future())
            finally:
                self._stopping = True
                reaper.cancel()
                server.close()
                await server.wait_closed()

    def _authorize(self, connection: ServerConnection, request: HttpRequest) -> HttpResponse | None:
        token = self.config.token
        if not token:
            return None
        given = _token_of(request.headers)
        if given is not None and hmac.compare_digest(given.encode(), token.encode()):
            return None
        log.warning("refused a connection from %s: %s token", connection.remote_address,
                    "wrong" if given else "no")
        response = connection.respond(HTTPStatus.UNAUTHORIZED, "missing or wrong token\n")
        response.headers["WWW-Authenticate"] = 'Bearer realm="ndb worker"'
        return response

    async def _reap(self) -> None:
        idle = self.config.idle_timeout_s
        while True:
            await asyncio.sleep(max(0.05, min(idle / 4, 5.0)))
            now = time.monotonic()
            for session in list(self.sessions.values()):
                if not session.lock.locked() and now - session.last_used > idle:
                    self._drop(session, f"the session was closed after {idle:g} s without requests; open it again")
                    log.info("evicted idle session %s", session.id[:8])

    def _drop(self, session: Session, reason: str | None) -> None:
        self.sessions.pop(session.id, None)
        if reason is not None:
            self.expired[session.id] = reason
            while len(self.expired) > TOMBSTONES:
                self.expired.popitem(last=False)

    # ---- connections ----------------------------------------------------------------------------
    async def _connection(self, ws: ServerConnection) -> None:
        self._next_connection += 1
        conn = self._next_connection
        tasks: set[asyncio.Task[None]] = set()
        log.info("connection %d from %s", conn, ws.remote_address)
        try:
            async for message in ws:
                if len(tasks) >= MAX_IN_FLIGHT_PER_CONNECTION:
                    await self._send(ws, proto.Response.fail(_id_of(message), "busy", "too many requests in flight on this connection"))
                    continue
                task = asyncio.create_task(self._answer(ws, conn, message))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
        except ConnectionClosed:
            pass
        finally:
            for task in list(tasks):
                task.cancel()
            for session in [s for s in self.sessions.values() if s.owner == conn]:
                self._drop(session, None)
            log.info("connection %d closed (code %s)", conn, ws.close_code)

    async def _send(self, ws: ServerConnection, response: proto.Response) -> None:
        data = response.model_dump(mode="json", exclude_none=True)
        data.setdefault("id", None)  # always present: None when the request could not be read
        with contextlib.suppress(ConnectionClosed):
            await ws.send(json.dumps(data, ensure_ascii=False))

    async def _answer(self, ws: ServerConnection, conn: int, message: str | bytes) -> None:
        response = await self.handle(conn, message)
        await self._send(ws, response)

    async def handle(self, conn: int, message: str | bytes) -> proto.Response:
        """One message in, one response out. Never raises (except cancellation)."""
        self.requests += 1
        if isinstance(message, bytes):
            return proto.Response.fail(None, "bad_request", "binary messages are not accepted: send JSON text")
        try:
            data = json.loads(message)
        except (json.JSONDecodeError, RecursionError) as exc:
            return proto.Response.fail(None, "bad_request", f"malformed JSON: {exc}")
        request_id = _id_of(data)
        try:
            request = proto.REQUEST_ADAPTER.validate_python(data)
        except ValidationError as exc:
            return proto.Response.fail(request_id, "bad_request", _describe(exc))
        if self._stopping:
            return proto.Response.fail(request.id, "shutting_down", "the worker is stopping")
        try:
            return await self._dispatch(conn, request)
        except RequestFailed as exc:
            return proto.Response.fail(request.id, exc.code, exc.message)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the worker must keep serving
            log.exception("internal error on %s", type(request).__name__)
            return proto.Response.fail(request.id, "internal", f"{type(exc).__name__}: {exc}")

    async def _dispatch(self, conn: int, request: Any) -> proto.Response:
        if isinstance(request, proto.HealthRequest):
            return proto.Response(id=request.id, ok=True, health=self.health())
        if isinstance(request, proto.OpenRequest):
            return await self._open(conn, request)
        session = self._session(conn, request.session)
        if isinstance(request, proto.CloseRequest):
            self._drop(session, None)
            return proto.Response(id=request.id, ok=True, session=session.id)
        engine = session.engine
        # These two act on the step under way, so they are not taken in turn (that step holds the lock).
        if isinstance(request, proto.InterruptRequest):
            if engine.interrupt is not None:
                engine.interrupt.set()
            return proto.Response(id=request.id, ok=True, session=session.id)
        if isinstance(request, proto.BreakpointsRequest):
            session.breakpoints = frozenset(request.breakpoints)
            return proto.Response(id=request.id, ok=True, session=session.id)
        if engine.interrupt is not None:  # before any await: an interrupt sent after this request finds it set
            engine.interrupt.clear()
        op: Generator[Any, Any, Any]
        if isinstance(request, proto.StepRequest):
            session.breakpoints = frozenset(request.breakpoints)
            if request.follow_steps is not None:
                engine.follow(request.follow_steps)
            op = engine.step_steps(request.action, session.breakpoints)
        elif isinstance(request, proto.SetVariableRequest):
            op = engine.set_variable_steps(request.name, request.value)
        elif isinstance(request, proto.GotoRequest):
            op = engine.goto_steps(request.line)
        else:
            op = engine.sample_steps(request.action, request.k)
        result = await self._run(session, op)
        if isinstance(result, list):
            return proto.Response(id=request.id, ok=True, session=session.id, states=result)
        return proto.Response(id=request.id, ok=True, session=session.id, state=result)

    def _session(self, conn: int, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None or session.owner != conn:
            if session_id in self.expired:
                raise RequestFailed("session_expired", self.expired[session_id])
            raise RequestFailed("unknown_session", f"no session {session_id[:16]!r} on this connection")
        return session

    async def _open(self, conn: int, request: proto.OpenRequest) -> proto.Response:
        if len(self.sessions) >= self.config.max_sessions:
            raise RequestFailed("busy", f"the worker holds its maximum of {self.config.max_sessions} sessions")
        try:
            request.program.check()
        except ProgramError as exc:
            raise RequestFailed("bad_request", str(exc)) from None
        engine = self.backend.new_engine()
        engine.interrupt = threading.Event()
        if request.at == "state":
            if not request.history:
                raise RequestFailed("bad_request", "at='state' needs the current state as the last item of history")
            op = engine.resume_steps(request.program, list(request.history), request.inverse)
        else:
            op = engine.start_steps(request.program, request.at, request.known_exit)
        session = Session(id=secrets.token_hex(16), engine=engine, owner=conn)
        engine.live_breakpoints = lambda: session.breakpoints
        state = await self._run(session, op, registered=False)
        self.sessions[session.id] = session
        return proto.Response(id=request.id, ok=True, session=session.id, state=state)

    async def _run(self, session: Session, op: Generator[Any, Any, Any], registered: bool = True) -> Any:
        """Run one operation of a session on the batch runner, in order, under the request timeout."""
        async with session.lock:
            session.last_used = time.monotonic()
            if registered and self.sessions.get(session.id) is not session:
                op.close()
                raise RequestFailed("session_expired", self.expired.get(session.id, "the session was closed"))
            job = self.backend.runner.submit(session.engine, op)
            waiting: Awaitable[Any] = asyncio.shield(asyncio.wrap_future(job.future))
            try:
                result = await asyncio.wait_for(waiting, self.config.request_timeout_s)
            except TimeoutError:
                job.cancel()
                reason = (f"a request took more than {self.config.request_timeout_s:g} s; the session was closed "
                          "(open it again at the current state)")
                self._drop(session, reason)
                raise RequestFailed("timeout", reason) from None
            except asyncio.CancelledError:  # the client went away mid-request
                job.cancel()
                self._drop(session, None)
                raise
            except Cancelled as exc:
                self._drop(session, None)
                raise RequestFailed("shutting_down", str(exc)) from None
            except EngineError as exc:
                raise RequestFailed("engine_error", str(exc)) from None
            except Exception:
                self._drop(session, "the session was closed after an internal error in the worker; open it again")
                raise
            finally:
                session.last_used = time.monotonic()
            return result

    def health(self) -> proto.Health:
        runner = self.backend.runner
        return proto.Health(
            model=self.backend.model, engine=self.backend.engine_name, device=self.backend.device,
            sessions=len(self.sessions), queue_depth=runner.depth, max_sessions=self.config.max_sessions,
            max_batch=runner.max_batch, batch_window_ms=runner.window_s * 1000, mean_batch=round(runner.mean_batch, 3),
            max_seen_batch=runner.max_seen_batch, uptime_s=round(time.monotonic() - self.started, 3),
            requests=self.requests, idle_timeout_s=self.config.idle_timeout_s,
            request_timeout_s=self.config.request_timeout_s, max_message_bytes=self.config.max_message_bytes,
        )


def _token_of(headers: Headers) -> str | None:
    value = headers.get("Authorization")
    if not value:
        return None
    scheme, _, rest = value.strip().partition(" ")
    if scheme.lower() == "bearer":
        return rest.strip()
    if scheme.lower() == "basic":
        try:
            user, _, password = base64.b64decode(rest.strip(), validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        return password or user
    return None


def _id_of(data: Any) -> int | None:
    if isinstance(data, str | bytes):
        try:
            data = json.loads(data)
        except (json.JSONDecodeError, RecursionError, UnicodeDecodeError):
            return None
    value = data.get("id") if isinstance(data, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _describe(exc: ValidationError) -> str:
    errors = exc.errors(include_url=False)
    parts = []
    for error in errors[:3]:
        where = ".".join(str(p) for p in error.get("loc", ())) or "message"
        parts.append(f"{where}: {error.get('msg', 'invalid')}")
    more = f" (and {len(errors) - 3} more)" if len(errors) > 3 else ""
    return "invalid request: " + "; ".join(parts) + more


def run_worker(backend: Backend, config: WorkerConfig, announce: Callable[[str], None] = print) -> None:
    """Serve until SIGINT/SIGTERM; announce the address once listening (tests read this line)."""

    async def main() -> None:
        loop = asyncio.get_running_loop()
        stop: asyncio.Future[None] = loop.create_future()
        def request_stop() -> None:
            if not stop.done():
                stop.set_result(None)

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, request_stop)

        def ready(port: int) -> None:
            host = config.host if ":" not in config.host else f"[{config.host}]"
            announce(
                f"ndb worker: serving ws://{host}:{port} (engine {backend.engine_name}, device {backend.device}, "
                f"model {backend.model}, pid {os.getpid()}{', token required' if config.token else ''})"
            )

        await WorkerServer(backend, config).serve(ready, stop)

    try:
        asyncio.run(main())
    finally:
        backend.close()
