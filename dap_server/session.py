"""One DAP session: typed requests in, typed responses and events out, over the shared DebugCore.

Transport-agnostic: the server hands it decoded messages (or framing errors) and gives it a `send`
function. Every request gets exactly one response; nothing a client sends can raise out of
`handle_raw` (a failure becomes an error response with a readable message).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import dap_types as dap
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from dap_server.breakpoints import Breakpoint
from dap_server.core import (
    EXCEPTION_FILTERS,
    EXIT_CODES,
    INFER_SECONDS,
    CommandCancelled,
    CoreError,
    DebugCore,
    EngineFactory,
    Stop,
    exception_parts,
    infer_request,
    inference_lines,
    inference_verdict,
)
from dap_server.protocol import FramingError, RequestError, describe_validation_error, parse_request
from dap_server.values import parse_value, show, type_name
from dap_server.variables import Container, VariableStore, key_of
from model_backend.sandbox import MAX_EVENTS_CEILING

if TYPE_CHECKING:
    from model_backend.engine.infer import Proposal

log = logging.getLogger("dap_server")

THREAD_ID = 1
THREAD_NAME = "MainThread"


class LaunchArguments(BaseModel):
    """The `launch` configuration Neural Debug understands (other keys are kept and ignored)."""

    model_config = ConfigDict(extra="allow")
    program: str
    args: list[str] = []
    entry: str | None = None
    stopOnEntry: bool = False
    engine: Literal["neural", "oracle"] = "neural"
    model: str | None = None
    worker: str | None = None
    token: str | None = None  # the model worker's token (sent at connect, never shown)
    cwd: str | None = None
    noDebug: bool = False
    stepping: Literal["pdb", "debugpy"] = "pdb"
    maxEvents: int | None = Field(default=None, ge=1, le=MAX_EVENTS_CEILING)  # the oracle's event limit
    stopAtExit: bool = False  # pause at the program's last state instead of ending (to step back from the end)
    # neural engine: single predicted steps one next, stepOut or continue may take (engine/follow.py)
    followSteps: int | None = Field(default=None, ge=0, le=100_000)
    # neural engine: time limit of the Debug Console's `infer FUNCTION VALUE`
    inferSeconds: float = Field(default=INFER_SECONDS, gt=0, le=3600)


def _worker_url(args: LaunchArguments) -> str | None:
    """`worker` with the launch attribute `token` folded in as the URL's password (the client sends it)."""
    from model_backend.worker.protocol import with_token

    return with_token(args.worker, args.token)


class RequestFailed(Exception):
    """Answer the current request with success=false and this message."""


def capabilities() -> dap.Capabilities:
    return dap.Capabilities(
        supportsConfigurationDoneRequest=True,
        supportsStepBack=True,
        supportsSetVariable=True,
        supportsGotoTargetsRequest=True,
        supportsEvaluateForHovers=True,
        supportsConditionalBreakpoints=True,
        supportsHitConditionalBreakpoints=True,
        supportsLogPoints=True,
        supportsExceptionInfoRequest=True,
        exceptionBreakpointFilters=[
            dap.ExceptionBreakpointsFilter(filter="raised", label=EXCEPTION_FILTERS["raised"], default=False,
                                           description="Stop where any exception is raised (caught or not)."),
            dap.ExceptionBreakpointsFilter(filter="uncaught", label=EXCEPTION_FILTERS["uncaught"], default=True,
                                           description="Stop where an exception that ends the program is raised."),
        ],
        supportsTerminateRequest=True,
        supportsRestartRequest=True,
        supportsCancelRequest=True,
    )


_STEP_COMMANDS = {"next", "stepIn", "stepOut", "continue", "stepBack", "reverseContinue"}
# Requests that make the program run, which a pause can stop: queuing one clears a pause meant for the
# run before it (DAPSession.triage).
_RUN_COMMANDS = _STEP_COMMANDS | {"launch", "configurationDone", "restart"}
# Requests handled on the reading thread at once, even while another command runs.
_AT_ONCE = {"cancel", "pause"}
# Requests handled on the reading thread while a step or continue runs (else in their turn): a breakpoint
# set then is answered at once and stops the run when it gets there, as in a real debugger.
_WHILE_RUNNING = {"setBreakpoints", "threads"}
# The commands during which those are handled at once: the ones that run the program for a while.
_LONG_RUNS = _STEP_COMMANDS | {"configurationDone"}
# Requests that are valid DAP but not offered by our capabilities.
_UNSUPPORTED = {
    "attach": "attach is not supported: Neural Debug launches programs (use request 'launch')",
    "restartFrame": "restartFrame is not supported",
    "stepInTargets": "step-in targets are not supported",
    "setFunctionBreakpoints": "function breakpoints are not supported",
    "setDataBreakpoints": "data breakpoints are not supported",
    "dataBreakpointInfo": "data breakpoints are not supported",
    "setInstructionBreakpoints": "instruction breakpoints are not supported",
    "setExpression": "setExpression is not supported (use setVariable)",
    "completions": "completions are not supported",
    "modules": "modules are not supported",
    "loadedSources": "loadedSources is not supported",
    "readMemory": "memory access is not supported",
    "writeMemory": "memory access is not supported",
    "disassemble": "disassembly is not supported",
    "locations": "locations are not supported",
    "terminateThreads": "terminateThreads is not supported",
    "breakpointLocations": "breakpointLocations is not supported",
    "runInTerminal": "runInTerminal is a reverse request (adapter to client)",
    "startDebugging": "startDebugging is a reverse request (adapter to client)",
}


class DAPSession:
    def __init__(self, send: Callable[[dict[str, Any]], None], engine_factory: EngineFactory | None = None,
                 name: str = "session") -> None:
        self._send_raw = send
        self._send_lock = threading.Lock()
        self._seq = 0
        self.name = name
        self.core = DebugCore(engine_factory)
        self.store = VariableStore()
        self.initialized = False
        self.launched = False
        self.configured = False
        self.terminated = False
        self.done = False  # disconnect received: the transport should stop
        self.launch_args: LaunchArguments | None = None
        self._pending_launch: dap.Request | None = None
        self._client: dap.InitializeRequestArguments | None = None
        self._program_bps: list[dict[str, Any]] = []
        self._top_locals: Container | None = None
        self._top_globals: Container | None = None
        self._sent_terminated = False
        self._entry_stop: Stop | None = None
        # Threads (see triage): commands run on the session's own thread, in order; the reading thread
        # handles pause and cancel at once, through these.
        self._runs_pending = 0  # run commands queued or running
        self._running: str | None = None  # the command of _LONG_RUNS the session's thread is running
        self._breakpoints_queued = 0  # setBreakpoints requests queued: a later one must not overtake them
        self._runs_lock = threading.Lock()
        self._inferences: dict[int, threading.Event] = {}  # running inferences (request seq) and their cancel
        self._progress_requests: dict[str, int] = {}  # progressId -> the request it reports on
        self._cancelled: set[int] = set()  # queued requests the client cancelled before they ran

    # ---- output ----------------------------------------------------------------------------------
    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    def _emit(self, message: BaseModel) -> None:
        with self._send_lock:
            message.seq = self._next_seq()  # type: ignore[attr-defined]
            data = message.model_dump(mode="json", exclude_none=True, by_alias=True)
            log.debug("%s -> %s", self.name, data)
            self._send_raw(data)

    def respond(self, request_seq: int, command: str, body: BaseModel | dict[str, Any] | None = None,
                success: bool = True, message: str | None = None) -> None:
        if isinstance(body, BaseModel):
            body = body.model_dump(mode="json", exclude_none=True, by_alias=True)
        if not success and body is None:
            body = {"error": {"id": 1, "format": message or "request failed",
                              "showUser": command in ("launch", "restart")}}
        self._emit(dap.Response(seq=0, type="response", request_seq=request_seq, success=success,
                                command=command, message=message, body=body))

    def event(self, event: BaseModel) -> None:
        self._emit(event)

    def output(self, text: str, category: str = "console") -> None:
        if text:
            self.event(dap.OutputEvent(seq=0, type="event", event="output",
                                       body=dap.OutputEventBody(category=category, output=text)))

    # ---- input -----------------------------------------------------------------------------------
    def handle_raw(self, item: dict[str, Any] | FramingError) -> None:
        """Handle one decoded message or framing error. Never raises."""
        try:
            if isinstance(item, FramingError):
                log.warning("%s: framing error: %s", self.name, item.message)
                self.respond(0, "", success=False, message=f"malformed message: {item.message}")
                return
            log.debug("%s <- %s", self.name, item)
            if item.get("type") in ("response", "event"):
                return  # answers to reverse requests (we send none) and stray events: nothing to do
            try:
                request = parse_request(item)
            except RequestError as exc:
                self.respond(exc.request_seq, exc.command, success=False, message=str(exc))
                return
            self.handle(request)
        except Exception as exc:  # noqa: BLE001 - the adapter must survive anything
            log.exception("%s: internal error", self.name)
            seq = item.get("seq", 0) if isinstance(item, dict) else 0
            command = item.get("command", "") if isinstance(item, dict) else ""
            try:
                self.respond(seq if isinstance(seq, int) and not isinstance(seq, bool) else 0,
                             command if isinstance(command, str) else "", success=False,
                             message=f"internal error: {type(exc).__name__}: {exc}")
            except Exception:  # noqa: BLE001
                log.exception("%s: could not even answer", self.name)

    def triage(self, item: dict[str, Any] | FramingError) -> bool:
        """Look at a message on the reading thread, before it is queued for `handle_raw` on the session's
        own thread (dap_server.server.serve_stream). `cancel` and `pause` are handled here and now (True),
        so that they reach the command that runs; a request that makes the program run clears any pause
        meant for the run before it; disconnect, terminate and restart stop what runs (restart clears
        the pause when its turn comes). While a step or continue runs, `setBreakpoints` and `threads` are
        handled here too, unless an earlier setBreakpoints still waits its turn (it must not overtake
        that one). Never raises."""
        if not isinstance(item, dict) or item.get("type") != "request":
            return False
        command = item.get("command")
        if command in _AT_ONCE:
            self.handle_raw(item)
            return True
        if command in _WHILE_RUNNING:
            with self._runs_lock:
                at_once = self._running is not None and not self._breakpoints_queued
                if not at_once and command == "setBreakpoints":
                    self._breakpoints_queued += 1
            if at_once:
                self.handle_raw(item)
                return True
        if command in _RUN_COMMANDS:
            with self._runs_lock:
                self._runs_pending += 1
        if command in ("disconnect", "terminate", "restart"):
            self.stop_running()
        elif command in _RUN_COMMANDS:
            self.core.interrupt.clear()
        return False

    def handled(self, item: dict[str, Any] | FramingError) -> None:
        """The session's thread has handled a message that `triage` queued."""
        if not isinstance(item, dict) or item.get("type") != "request":
            return
        command = item.get("command")
        with self._runs_lock:
            if command in _RUN_COMMANDS:
                self._runs_pending -= 1
            elif command == "setBreakpoints":
                self._breakpoints_queued = max(0, self._breakpoints_queued - 1)

    def stop_running(self) -> None:
        """Pause the run and cancel the inferences under way (thread-safe)."""
        self.core.interrupt.set()
        for cancel in list(self._inferences.values()):
            cancel.set()

    def handle(self, request: dap.Request) -> None:
        command = request.command
        if command == "disconnect":
            self._disconnect(request)
            return
        if not self.initialized and command != "initialize":
            self.respond(request.seq, command, success=False,
                         message=f"'{command}' before 'initialize': send initialize first")
            return
        if command in _UNSUPPORTED:
            self.respond(request.seq, command, success=False, message=_UNSUPPORTED[command])
            return
        if self.terminated and command not in ("restart", "threads", "cancel", "terminate"):
            self.respond(request.seq, command, success=False,
                         message=f"the debug session has ended; '{command}' is no longer possible")
            return
        handler: Callable[[Any], Any] | None = getattr(self, "_on_" + command, None)
        if command in _STEP_COMMANDS:  # next, stepIn, ...: each a step of its kind (_step)
            handler = partial(self._step, kind=command)
        if handler is None:
            self.respond(request.seq, command, success=False, message=f"'{command}' is not supported")
            return
        if request.seq in self._cancelled:  # cancelled while it waited its turn
            self._cancelled.discard(request.seq)
            self.respond(request.seq, command, success=False, message="cancelled")
            return
        # (A noDebug run swaps the breakpoints out until it ends: nothing may set them meanwhile.)
        long_run = command in _LONG_RUNS and not (self.launch_args is not None and self.launch_args.noDebug)
        if long_run:
            with self._runs_lock:
                self._running = command
        try:
            body = handler(request)
        except (RequestFailed, CoreError) as exc:
            self.respond(request.seq, command, success=False, message=str(exc))
            return
        finally:
            if long_run:
                with self._runs_lock:
                    self._running = None
        if body is not _NO_RESPONSE:
            self.respond(request.seq, command, body)

    # ---- lifecycle ---------------------------------------------------------------------------------
    def _on_initialize(self, request: dap.InitializeRequest) -> Any:
        if self.initialized:
            raise RequestFailed("the session is already initialized")
        self._client = request.arguments
        self.initialized = True
        return capabilities()

    def _lines_from_1(self) -> bool:
        return self._client is None or self._client.linesStartAt1 is not False

    def _out_line(self, line: int) -> int:
        return line if self._lines_from_1() else line - 1

    def _in_line(self, line: int) -> int:
        return line if self._lines_from_1() else line + 1

    def _launch(self, arguments: BaseModel) -> tuple[Stop, LaunchArguments]:
        """Launch the program that the launch configuration `arguments` names: the stop at its start, and
        the configuration read."""
        raw = arguments.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            args = LaunchArguments.model_validate(raw)
        except ValidationError as exc:
            raise RequestFailed(f"invalid launch configuration: {describe_validation_error(exc, '')}") from None
        self.core.stepping, self.core.stop_at_exit = args.stepping, args.stopAtExit
        stop = self.core.launch(args.program, args.entry, args.engine, args.model, _worker_url(args), args.cwd,
                                args.args, args.maxEvents, args.followSteps)
        self.launch_args = args
        return stop, args

    def _on_launch(self, request: dap.LaunchRequest) -> Any:
        if self.launched:
            raise RequestFailed("a program is already launched in this session")
        stop, args = self._launch(request.arguments)
        self.launched = True
        self._entry_stop = stop
        for out in stop.outputs:
            self.output(out.text, out.category)
        if args.args and args.engine != "oracle":
            self.output(f"note: program arguments {args.args} reach only the oracle engine's real run; "
                        "the model predicts from the source and the entry expression alone\n")
        self._apply_pending_breakpoints()
        self._pending_launch = request
        self.event(dap.InitializedEvent(seq=0, type="event", event="initialized"))
        if self.configured:
            self._finish_launch()
        return _NO_RESPONSE

    def _on_configurationDone(self, request: dap.ConfigurationDoneRequest) -> Any:
        self.configured = True
        self.respond(request.seq, request.command)
        if self._pending_launch is not None:
            self._finish_launch()
        return _NO_RESPONSE

    def _finish_launch(self) -> None:
        launch, self._pending_launch = self._pending_launch, None
        assert launch is not None and self.launch_args is not None and self._entry_stop is not None
        self.respond(launch.seq, launch.command)
        self._run_after_start(self._entry_stop)

    def _run_after_start(self, entry: Stop) -> None:
        args = self.launch_args
        assert args is not None
        if entry.exited:
            self._report(entry, outputs_sent=True)
        elif args.noDebug:
            self._report(self._run_to_end(), outputs_sent=False)
        elif args.stopOnEntry:
            self._report(entry, outputs_sent=True)
        else:
            self._report(self.core.run_to_first_stop(), outputs_sent=False)

    def _run_to_end(self) -> Stop:
        saved, stop_at_exit = self.core.breakpoints.items, self.core.stop_at_exit
        self.core.breakpoints.items, self.core.stop_at_exit = [], False  # noDebug: nothing stops it
        try:
            return self.core.step("continue")
        finally:
            self.core.breakpoints.items, self.core.stop_at_exit = saved, stop_at_exit

    def _on_restart(self, request: dap.RestartRequest) -> Any:
        if not self.launched:
            raise RequestFailed("nothing to restart: launch a program first")
        self.core.interrupt.clear()  # set by triage to stop the run under way; the new run must not stop
        new = request.arguments.arguments if request.arguments is not None else None
        stop = self._launch(new)[0] if new is not None else self.core.restart()
        self.terminated = False
        self._sent_terminated = False
        self.respond(request.seq, request.command)
        for out in stop.outputs:
            self.output(out.text, out.category)
        self._run_after_start(stop)
        return _NO_RESPONSE

    def _on_terminate(self, request: dap.TerminateRequest) -> Any:
        self.respond(request.seq, request.command)
        self.terminated = True
        self._send_terminated()
        return _NO_RESPONSE

    def _disconnect(self, request: dap.Request) -> None:
        self.respond(request.seq, request.command)
        self.terminated = True
        self.done = True
        self.core.close()

    def close(self) -> None:
        self.core.close()

    def _send_terminated(self) -> None:
        if not self._sent_terminated:
            self._sent_terminated = True
            self.event(dap.TerminatedEvent(seq=0, type="event", event="terminated"))

    def _on_cancel(self, request: dap.Request) -> Any:
        """Cancel a request by its seq or by the progressId of its progress report: an inference under
        way stops within one forward pass; a request still queued is answered "cancelled" when its turn
        comes. Other requests run too briefly to cancel (DAP lets an adapter ignore those)."""
        args = getattr(request, "arguments", None)
        seq = getattr(args, "requestId", None)
        progress = getattr(args, "progressId", None)
        if progress is not None:
            seq = self._progress_requests.get(progress, seq)
        if isinstance(seq, int):
            running = self._inferences.get(seq)
            if running is not None:
                running.set()
            else:
                self._cancelled.add(seq)
        return None

    def _on_pause(self, request: dap.PauseRequest) -> Any:
        """Stop the command under way at the next state it reaches (reason pause); when none runs the
        program is already paused."""
        if self._runs_pending > 0:
            self.core.interrupt.set()
        return None

    # ---- stopping -------------------------------------------------------------------------------
    def _report(self, stop: Stop, outputs_sent: bool = False) -> None:
        self.store.reset()
        self._top_locals = self._top_globals = None
        if not outputs_sent:
            for out in stop.outputs:
                self.output(out.text, out.category)
        if stop.exited:
            state = stop.state
            code = EXIT_CODES.get(state.exit or "normal", 1)
            self.event(dap.ExitedEvent(seq=0, type="event", event="exited", body=dap.ExitedEventBody(exitCode=code)))
            self.terminated = True
            self._send_terminated()
            return
        self.event(dap.StoppedEvent(
            seq=0, type="event", event="stopped",
            body=dap.StoppedEventBody(
                reason=stop.reason, threadId=THREAD_ID, allThreadsStopped=True, description=stop.description,
                text=stop.text, hitBreakpointIds=stop.breakpoint_ids or None,
            ),
        ))

    def _require_stopped(self) -> None:
        if not self.launched or not self.core.launched:
            raise RequestFailed("no program is running (launch one first)")
        if self._pending_launch is not None:
            raise RequestFailed("the program starts after configurationDone")
        if self.core.exited:
            raise RequestFailed("the program has exited")

    def _step(self, request: dap.Request, kind: str) -> Any:
        self._require_stopped()
        if kind == "continue":
            self.respond(request.seq, request.command, dap.ContinueResponseBody(allThreadsContinued=True))
        else:
            self.respond(request.seq, request.command)
        try:
            stop = self.core.step(kind)
        except CoreError as exc:
            # Nothing moved: say so, and show the (unchanged) stop again so the client is not left running.
            self.output(f"{kind} failed: {exc}\n", "stderr")
            stop = Stop("pause", self.core.state, description=f"{kind} failed: {exc}")
        self._report(stop)
        return _NO_RESPONSE

    # ---- goto (pdb's jump) ---------------------------------------------------------------------------
    def _on_gotoTargets(self, request: dap.GotoTargetsRequest) -> Any:
        """One target: the line asked for. Whether the frame can jump there is decided by goto."""
        self._require_stopped()
        args = request.arguments
        if not self._is_program(args.source):
            raise RequestFailed("jumps are possible only within the debugged program")
        line = self._in_line(args.line)
        if not 1 <= line <= len(self.core.source_lines):
            raise RequestFailed(f"line {line} is not in the program")
        target = dap.GotoTarget(id=line, label=f"line {line}", line=self._out_line(line))
        return dap.GotoTargetsResponseBody(targets=[target])

    def _on_goto(self, request: dap.GotoRequest) -> Any:
        self._require_stopped()
        stop = self.core.goto(request.arguments.targetId)  # a refused jump: an error response, no stop
        self.respond(request.seq, request.command)
        self._report(stop)
        return _NO_RESPONSE

    # ---- breakpoints -------------------------------------------------------------------------------
    def _is_program(self, source: dap.Source) -> bool:
        if self.core.program is None or not source.path:
            return False
        return _same_path(source.path, self.core.program.path)

    def _bp_body(self, bp: Breakpoint, source: dap.Source | None) -> dap.Breakpoint:
        return dap.Breakpoint(
            id=bp.id, verified=bp.verified, message=bp.message, source=source,
            line=self._out_line(bp.line if bp.line is not None else bp.requested_line),
            reason=None if bp.verified else "failed",
        )

    def _on_setBreakpoints(self, request: dap.SetBreakpointsRequest) -> Any:
        args = request.arguments
        specs: list[dict[str, Any]] = []
        if args.breakpoints is not None:
            for b in args.breakpoints:
                specs.append({"line": self._in_line(b.line), "condition": b.condition,
                              "hitCondition": b.hitCondition, "logMessage": b.logMessage})
        elif args.lines is not None:
            specs = [{"line": self._in_line(n)} for n in args.lines]
        source = args.source
        if self.core.program is None:
            # Before launch: keep them (for the program's path, if it is the one launched later), with
            # the ids that the `breakpoint` events sent once they are verified will carry.
            for spec in specs:
                spec["id"] = self.core.breakpoints.reserve_id()
            self._program_bps = [p for p in self._program_bps if p["source"].path != source.path]
            self._program_bps.append({"source": source, "specs": specs})
            return dap.SetBreakpointsResponseBody(breakpoints=[
                dap.Breakpoint(id=s["id"], verified=False, line=self._out_line(s["line"]), source=source,
                               message="pending: the program is not launched yet", reason="pending")
                for s in specs
            ])
        if not self._is_program(source):
            return dap.SetBreakpointsResponseBody(breakpoints=[
                dap.Breakpoint(verified=False, line=self._out_line(s["line"]), source=source, reason="failed",
                               message="only the launched program's own lines can stop")
                for s in specs
            ])
        bps = self.core.set_breakpoints(specs)
        return dap.SetBreakpointsResponseBody(breakpoints=[self._bp_body(bp, source) for bp in bps])

    def _apply_pending_breakpoints(self) -> None:
        pending, self._program_bps = self._program_bps, []
        for item in pending:
            if self._is_program(item["source"]):
                for bp in self.core.set_breakpoints(item["specs"]):
                    self.event(dap.BreakpointEvent(seq=0, type="event", event="breakpoint",
                                                   body=dap.BreakpointEventBody(reason="changed",
                                                                                breakpoint=self._bp_body(bp, item["source"]))))

    def _on_setExceptionBreakpoints(self, request: dap.SetExceptionBreakpointsRequest) -> Any:
        args = request.arguments
        filters = list(args.filters)
        if args.filterOptions:
            filters += [o.filterId for o in args.filterOptions]
        unknown = self.core.set_exception_filters(filters)
        out = []
        for f in filters:
            if f in unknown:
                out.append(dap.Breakpoint(verified=False, message=f"unknown exception filter {f!r}"))
            else:
                out.append(dap.Breakpoint(verified=True))
        return dap.SetExceptionBreakpointsResponseBody(breakpoints=out)

    def _on_exceptionInfo(self, request: dap.ExceptionInfoRequest) -> Any:
        self._require_stopped()
        state = self.core.state
        if state.event != "exception":
            raise RequestFailed("not stopped at an exception")
        name, message = exception_parts(state.value)
        mode = "always" if "raised" in self.core.exception_filters else "unhandled"
        frames = self.core.frames()
        trace = "".join(
            f'  File "{self.core.program.path if self.core.program else "?"}", line {f.line}, in {f.name}\n'
            for f in reversed(frames)
        )
        return dap.ExceptionInfoResponseBody(
            exceptionId=name, description=message or None, breakMode=mode,  # type: ignore[arg-type]
            details=dap.ExceptionDetails(message=message, typeName=name, fullTypeName=name,
                                         evaluateName="__exception__",
                                         stackTrace="Traceback (most recent call last):\n" + trace),
        )

    # ---- inspection --------------------------------------------------------------------------------
    def _on_threads(self, request: dap.ThreadsRequest) -> Any:
        return dap.ThreadsResponseBody(threads=[dap.Thread(id=THREAD_ID, name=THREAD_NAME)])

    def _on_stackTrace(self, request: dap.StackTraceRequest) -> Any:
        self._require_stopped()
        args = request.arguments
        frames = self.core.frames()
        start = max(args.startFrame or 0, 0)
        chosen = frames[start:] if not args.levels else frames[start : start + args.levels]
        path = self.core.program.path if self.core.program else None
        source = dap.Source(name=os.path.basename(path) if path else None, path=path)
        out = []
        for f in chosen:
            out.append(dap.StackFrame(id=f.id, name=f.name, source=source, line=self._out_line(f.line),
                                      column=1 if self._client is None or self._client.columnsStartAt1 is not False else 0))
        return dap.StackTraceResponseBody(stackFrames=out, totalFrames=len(frames))

    def _frame(self, frame_id: int | None) -> Any:
        for f in self.core.frames():
            if f.id == frame_id:
                return f
        raise RequestFailed(f"no frame with id {frame_id} (frame ids are valid only while stopped)")

    def _on_scopes(self, request: dap.ScopesRequest) -> Any:
        self._require_stopped()
        frame = self._frame(request.arguments.frameId)
        state = self.core.state
        scopes = []
        if frame.is_top:
            names = self.core.display_locals()
            attributes = self.core.object_attributes()
            locals_ = Container("scope", names=names, confidence=state.confidence, attributes=attributes)
            locals_ref = self.store.add(locals_, memo=(0, f"locals:{frame.id}"))
            self._top_locals = locals_
            scopes.append(dap.Scope(name="Locals", presentationHint="locals", variablesReference=locals_ref,
                                    namedVariables=len(names), expensive=False))
            if self.core.is_module_frame():
                globals_ = Container("scope", names=dict(state.locals), confidence=state.confidence,
                                     attributes=attributes)
                self._top_globals = globals_
                ref = self.store.add(globals_, memo=(0, f"globals:{frame.id}"))
                scopes.append(dap.Scope(name="Globals", variablesReference=ref, namedVariables=len(state.locals),
                                        expensive=False))
            elif (module_globals := self.core.module_globals()) is not None:
                globals_ = Container("scope", names=module_globals, confidence=None, attributes=attributes)
                self._top_globals = globals_
                ref = self.store.add(globals_, memo=(0, f"globals:{frame.id}"))
                scopes.append(dap.Scope(name="Globals", variablesReference=ref, namedVariables=len(module_globals),
                                        expensive=False))
            else:
                note = Container("note", note="the engine's state holds only the current frame's variables; "
                                              "module globals are shown when stopped at module level")
                ref = self.store.add(note, memo=(0, f"globals:{frame.id}"))
                scopes.append(dap.Scope(name="Globals", variablesReference=ref, expensive=False))
        elif (caller := self.core.caller_frame(frame.id)) is not None:
            # The oracle knows a caller's variables as of its call site (objects a callee mutated since
            # show their values from then).
            scope = Container("scope", names=dict(caller.locals), confidence=None, attributes=caller.attributes)
            ref = self.store.add(scope, memo=(0, f"locals:{frame.id}"))
            scopes.append(dap.Scope(name="Locals", presentationHint="locals", variablesReference=ref,
                                    namedVariables=len(caller.locals), expensive=False))
        else:
            note = Container("note", note=f"only the innermost frame's variables are known; {frame.name} is "
                                          f"paused at line {frame.line}")
            ref = self.store.add(note, memo=(0, f"locals:{frame.id}"))
            scopes.append(dap.Scope(name="Locals", presentationHint="locals", variablesReference=ref,
                                    expensive=False))
        return dap.ScopesResponseBody(scopes=scopes)

    def _on_variables(self, request: dap.VariablesRequest) -> Any:
        self._require_stopped()
        args = request.arguments
        try:
            variables = self.store.variables(args.variablesReference, args.start, args.count, args.filter)
        except KeyError:
            raise RequestFailed(
                f"unknown variablesReference {args.variablesReference} (references are valid only while stopped)"
            ) from None
        return dap.VariablesResponseBody(variables=variables)

    def _on_evaluate(self, request: dap.EvaluateRequest) -> Any:
        self._require_stopped()
        args = request.arguments
        asked = infer_request(args.expression) if args.context == "repl" else None
        if asked is not None:
            return self._infer(request.seq, *asked)
        if args.frameId is not None:
            self._frame(args.frameId)  # an unknown frame id is an error of its own
        value = self.core.evaluate(args.expression, args.frameId)
        ref = self.store.add_value(value, args.expression, memo=(-1, args.expression))
        return dap.EvaluateResponseBody(result=show(value), type=type_name(value) or None, variablesReference=ref)

    def _infer(self, seq: int, function: str, value: str) -> dap.EvaluateResponseBody:
        """The Debug Console's `infer FUNCTION VALUE`: the checked proposals go to the console as output,
        the pick is the result. The paused state stays as it is. A client that reports progress gets a
        cancellable progress report (one update per checked proposal); `cancel` stops it."""
        seconds = self.launch_args.inferSeconds if self.launch_args else INFER_SECONDS
        self.output(f"Inferring the arguments of {function} (up to {seconds:g} s)...\n")
        cancel = self._inferences[seq] = threading.Event()
        progress = InferenceProgress(self, seq, function, seconds) if self._reports_progress() else None
        try:
            result = self.core.infer(function, value, seconds, cancel=cancel,
                                     on_checked=progress.checked if progress else None)
        except CommandCancelled:
            self.output("Inference cancelled.\n")
            raise
        finally:
            del self._inferences[seq]
            if progress is not None:
                progress.end()
        self.output("".join(f"  {line}\n" for line in inference_lines(result)))
        return dap.EvaluateResponseBody(result=inference_verdict(result), variablesReference=0)

    def _reports_progress(self) -> bool:
        return bool(self._client is not None and self._client.supportsProgressReporting)

    def _on_setVariable(self, request: dap.SetVariableRequest) -> Any:
        self._require_stopped()
        args = request.arguments
        container = self.store.get(args.variablesReference)
        if container is None:
            raise RequestFailed(f"unknown variablesReference {args.variablesReference}")
        if container.kind == "scope":
            if args.name.startswith("("):
                raise RequestFailed(f"{args.name} cannot be set")
            text = self.core.set_variable(args.name, args.value)
        elif container.kind == "value" and container.root is not None:
            key = key_of(container.value, args.name)
            if isinstance(container.value, (set, frozenset)) or not isinstance(container.value, (list, tuple, dict)):
                raise RequestFailed("only elements of lists, tuples and dicts can be set")
            text = self.core.set_variable(container.root, args.value, path=[*container.path, key])
            text = show(_lookup(text, [*container.path, key]))
        else:
            raise RequestFailed("this variable cannot be set")
        self._refresh_scopes()
        self.store.forget_children()
        value = parse_value(text)
        ref = self.store.add_value(value, None)
        if self._client is not None and self._client.supportsInvalidatedEvent:
            self.event(dap.InvalidatedEvent(seq=0, type="event", event="invalidated",
                                            body=dap.InvalidatedEventBody(areas=["variables"], threadId=THREAD_ID)))
        return dap.SetVariableResponseBody(value=text, type=type_name(value) or None, variablesReference=ref)

    def _refresh_scopes(self) -> None:
        """After setVariable the state changed: later `variables` requests see the new values."""
        attributes = self.core.object_attributes()
        if self._top_locals is not None:
            self._top_locals.names = self.core.display_locals()
            self._top_locals.attributes = attributes
        if self._top_globals is not None:
            in_function = self.core.module_globals()
            self._top_globals.names = in_function if in_function is not None else dict(self.core.state.locals)
            self._top_globals.attributes = attributes

    def _on_source(self, request: dap.SourceRequest) -> Any:
        if self.core.program is None:
            raise RequestFailed("no program is loaded")
        return dap.SourceResponseBody(content=self.core.program.source, mimeType="text/x-python")


class InferenceProgress:
    """An inference's progress report in the client (progressStart, one progressUpdate per checked
    proposal, progressEnd), cancellable: VS Code shows it with a Cancel button, which sends `cancel`
    with its progressId."""

    def __init__(self, session: DAPSession, seq: int, function: str, seconds: float) -> None:
        self.session, self.seconds = session, seconds
        self.id = f"infer-{seq}"
        self.began = time.monotonic()
        self.count = 0
        self.confirmed = 0
        session._progress_requests[self.id] = seq
        session.event(dap.ProgressStartEvent(
            seq=0, type="event", event="progressStart",
            body=dap.ProgressStartEventBody(progressId=self.id, title=f"Inferring the arguments of {function}",
                                            requestId=seq, cancellable=True, percentage=0,
                                            message=f"proposing (up to {seconds:g} s)"),
        ))

    def checked(self, proposal: Proposal) -> None:
        self.count += 1
        self.confirmed += proposal.confirmed
        elapsed = time.monotonic() - self.began
        message = f"{self.count} checked" + (", a predicted run confirms one" if self.confirmed else "")
        self.session.event(dap.ProgressUpdateEvent(
            seq=0, type="event", event="progressUpdate",
            body=dap.ProgressUpdateEventBody(progressId=self.id, message=message,
                                             percentage=min(99.0, 100 * elapsed / max(self.seconds, 1e-9))),
        ))

    def end(self) -> None:
        self.session._progress_requests.pop(self.id, None)
        self.session.event(dap.ProgressEndEvent(
            seq=0, type="event", event="progressEnd",
            body=dap.ProgressEndEventBody(progressId=self.id, message=f"{self.count} checked"),
        ))


class _NoResponse:
    pass


_NO_RESPONSE: Any = _NoResponse()


def _same_path(a: str, b: str) -> bool:
    try:
        return os.path.realpath(a) == os.path.realpath(b) or Path(a).resolve() == Path(b).resolve()
    except (OSError, ValueError):
        return a == b


def _lookup(text: str, path: list[Any]) -> Any:
    value = parse_value(text)
    for key in path:
        value = value[key]
    return value
