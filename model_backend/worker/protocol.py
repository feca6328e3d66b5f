"""The model worker's wire protocol: JSON text messages over a websocket, one pydantic model each.

Shared by the server (`model_backend.worker.server`) and the client (`model_backend.worker.client`).
Every request carries an `id` chosen by the client; every response repeats it. A response is either
`ok: true` with the fields of its request kind, or `ok: false` with an `error` of a fixed `code`.

Authentication happens at connect, not in messages: when the worker has a token, the websocket
handshake must carry `Authorization: Bearer TOKEN` (or HTTP Basic credentials whose password is the
token, as `ws://:TOKEN@host:port` sends); otherwise the handshake is refused with HTTP 401.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal
from urllib.parse import quote, unquote, urlsplit, urlunsplit

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from model_backend.program import Program
from model_backend.state import Action, State

PROTOCOL_VERSION = 1
DEFAULT_PORT = 8765
DEFAULT_MAX_MESSAGE_BYTES = 1 << 20  # 1 MiB: a program and a few states; larger messages close the connection
MAX_SAMPLES = 32
MAX_HISTORY = 8  # states a client sends when it re-opens a session at a given state

ErrorCode = Literal[
    "bad_request",  # malformed JSON, an unknown op, a field of the wrong type, a state the format cannot carry
    "unauthorized",  # missing or wrong token (at connect: HTTP 401)
    "too_large",  # a message over the maximum size (the worker closes the connection with code 1009)
    "unknown_session",  # no such session on this connection
    "session_expired",  # the session was evicted after being idle, or closed after a timeout: open it again
    "timeout",  # the request took longer than the worker's per-request limit; the session is closed
    "busy",  # too many sessions or requests in flight
    "engine_error",  # the engine refused the request (e.g. no such variable, program too long)
    "shutting_down",  # the worker is stopping
    "internal",  # a bug in the worker; details are in its log
]


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: int = Field(ge=0)


class OpenRequest(_Request):
    """Start a session on `program`.

    at="entry": the program's first state; at="exit": from `known_exit` (a neural engine cannot compute
    the final state); at="state": at the last state of `history` (e.g. re-opening a session after a
    dropped connection), with `inverse` telling the direction of the trajectory that led there.
    """

    op: Literal["open"]
    program: Program
    at: Literal["entry", "exit", "state"] = "entry"
    known_exit: State | None = None
    history: list[State] = Field(default_factory=list, max_length=MAX_HISTORY)
    inverse: bool = False


class StepRequest(_Request):
    op: Literal["step"]
    session: str
    action: Action
    breakpoints: list[int] = Field(default_factory=list, max_length=10_000)
    # Single predictions an action that runs through events may take before it ends in jumps (the
    # debugger's followSteps); None: the worker's default.
    follow_steps: int | None = Field(default=None, ge=0, le=100_000)


class SetVariableRequest(_Request):
    op: Literal["set_variable"]
    session: str
    name: str
    value: str


class GotoRequest(_Request):
    """pdb's jump: the session's current frame continues at `line` (nothing is predicted)."""

    op: Literal["goto"]
    session: str
    line: int = Field(ge=1, le=1_000_000)


class SampleRequest(_Request):
    """k sampled predictions of the state `action` leads to (typically an inverse action, where several
    earlier states are plausible). The session's current state does not move."""

    op: Literal["sample"]
    session: str
    action: Action
    k: int = Field(default=4, ge=1, le=MAX_SAMPLES)


class InterruptRequest(_Request):
    """Stop the session's step under way (a followed continue can walk a loop for minutes) at the next
    state it reaches, which its `step` answer then carries, as a pause in the debugger. Answered at once;
    nothing happens when no step runs. The next request of the session starts afresh."""

    op: Literal["interrupt"]
    session: str


class BreakpointsRequest(_Request):
    """The IDE's breakpoint lines changed while the session's step runs (a breakpoint set during a long
    continue): the step stops on the new ones from its next single step. Answered at once."""

    op: Literal["breakpoints"]
    session: str
    breakpoints: list[int] = Field(default_factory=list, max_length=10_000)


class HealthRequest(_Request):
    op: Literal["health"]


class CloseRequest(_Request):
    op: Literal["close"]
    session: str


Request = Annotated[
    OpenRequest | StepRequest | SetVariableRequest | GotoRequest | SampleRequest | InterruptRequest
    | BreakpointsRequest | HealthRequest | CloseRequest,
    Field(discriminator="op"),
]
REQUEST_ADAPTER: TypeAdapter[Request] = TypeAdapter(Request)


class ErrorInfo(BaseModel):
    code: ErrorCode
    message: str


class Health(BaseModel):
    protocol: int = PROTOCOL_VERSION
    model: str
    engine: str  # transformers | vllm
    device: str
    sessions: int
    queue_depth: int  # operations waiting for or on the device
    max_sessions: int
    max_batch: int
    batch_window_ms: float
    mean_batch: float  # operations per device call so far
    max_seen_batch: int
    uptime_s: float
    requests: int
    idle_timeout_s: float
    request_timeout_s: float
    max_message_bytes: int


class Response(BaseModel):
    id: int | None  # None only when the request could not be read at all
    ok: bool
    session: str | None = None  # open: the new session's id
    state: State | None = None  # open, step, set_variable, goto
    states: list[State] | None = None  # sample
    health: Health | None = None
    error: ErrorInfo | None = None

    @classmethod
    def fail(cls, request_id: int | None, code: ErrorCode, message: str) -> Response:
        return cls(id=request_id, ok=False, error=ErrorInfo(code=code, message=message))


def is_loopback(host: str) -> bool:
    """Whether binding `host` exposes the worker to this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def split_token(url: str) -> tuple[str, str | None]:
    """(url without credentials, token): `ws://:TOKEN@host:port` carries the token as the password."""
    parts = urlsplit(url)
    if parts.password is None and parts.username is None:
        return url, None
    netloc = parts.hostname or ""
    if ":" in netloc:
        netloc = f"[{netloc}]"
    if parts.port is not None:
        netloc += f":{parts.port}"
    token = parts.password if parts.password is not None else parts.username
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment)), unquote(token or "") or None


def with_token(url: str | None, token: str | None) -> str | None:
    """The worker URL with `token` as its password (what the launch attribute `token` becomes)."""
    if not url or not token:
        return url
    clean, _ = split_token(url)
    parts = urlsplit(clean)
    return urlunsplit((parts.scheme, f":{quote(token, safe='')}@{parts.netloc}", parts.path, parts.query, parts.fragment))
