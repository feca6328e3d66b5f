"""The session core shared by the debug adapter and the terminal debugger.

It owns the engine and the current state and turns front-end commands (next, stepIn, stepOut, continue,
stepBack, reverseContinue) into engine actions, applying what an IDE adds on top of the engine's
transitions: conditional / hit-count / log-point breakpoints, exception filters, the reverse-stepping
rules and loop guards. It knows nothing of DAP; `dap_server.session` and `dap_server.terminal` translate.

Rules (also in docs/dap.md):
- Forward actions pass the breakpoint lines to the engine, which stops at them as pdb does. When the
  engine stops at a breakpoint line whose breakpoint does not fire (condition false, hit count not
  reached, log point), the command resumes: `continue` continues; `next`/`stepOut` interrupted inside a
  deeper call unwind with step_return (and step_over from the return event) until they are back at the
  depth they started from, which is where pdb's next/return would have stopped.
- stepBack is `inv_step_over`; when it lands on an `inv_line_call` state (the inverse tree's copy of a
  line that made calls, "the line with its calls done") it steps back once more, so each line shows once.
- reverseContinue repeats `inv_step_over` back to the start when no breakpoint is set, and `inv_step_into`
  (which also walks through the calls made earlier) when breakpoints are set, stopping on the first line
  event at a breakpoint line whose condition holds (hit counts and log points are not used backwards).
- Exception filter "raised": `continue` walks with step_into and stops at the first exception event of
  each raise (not at the same exception propagating through the callers). "uncaught": when a forward
  command ends in an error exit, the core walks back from the exit with inv_step_into through the
  propagating exception (exception / return / inv_line_call states) to its first exception event, the
  raise point, and stops there with reason exception; continuing from there runs to the exit.
- Every automatic loop is capped (MAX_AUTO_STEPS) and stops when the engine returns the same state twice.
- A pause (`interrupt` set while a command runs, from another thread) stops the command at the next state
  the engine reaches, with reason pause: between the single steps of a followed action too
  (Engine.interrupt), so a long predicted continue stops within one prediction.
"""

from __future__ import annotations

import contextlib
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from dap_server.breakpoints import Breakpoint, BreakpointTable, Hit
from dap_server.evaluator import EvalError, Evaluator
from dap_server.values import parse_value, show
from model_backend import safe_ast
from model_backend.engine.base import CallerFrame, Cancelled, Engine, EngineError
from model_backend.program import Program
from model_backend.state import Action, ActionKind, StackFrame, State

if TYPE_CHECKING:
    from model_backend.engine.infer import Inference, Proposal

StepKind = Literal["next", "stepIn", "stepOut", "continue", "stepBack", "reverseContinue"]
STEP_KINDS: tuple[str, ...] = ("next", "stepIn", "stepOut", "continue", "stepBack", "reverseContinue")
EXCEPTION_FILTERS = {"raised": "Raised Exceptions", "uncaught": "Uncaught Exceptions"}
EXIT_CODES = {"normal": 0, "error": 1, "never": 2}
MAX_AUTO_STEPS = 10_000
NEURAL_MAX_AUTO_STEPS = 1_000
INFER_SECONDS = 120.0  # an inference's time limit: its forward runs still going then are abandoned

EngineFactory = Callable[[str, str | None, str | None], Engine]


class CoreError(Exception):
    """A command that cannot be carried out; the message is shown to the user."""


class CommandCancelled(CoreError):
    """The user cancelled a long command (an inference) while it ran; its message is "cancelled", as DAP
    wants for a cancelled request."""


@dataclass
class Output:
    category: str  # stdout | stderr | console | important
    text: str


@dataclass
class Stop:
    """Where a command left the program, and what it printed meanwhile."""

    reason: str  # entry | step | breakpoint | exception | goto | pause | exit
    state: State
    outputs: list[Output] = field(default_factory=list)
    breakpoint_ids: list[int] = field(default_factory=list)
    description: str | None = None
    text: str | None = None

    @property
    def exited(self) -> bool:
        return self.state.event == "exit"


FrameKey = tuple[tuple[tuple[str, int], ...], str]


def frame_key(state: State) -> FrameKey:
    """A frame while it lives: its callers with their call lines, and its function."""
    callers = tuple((f.function, f.line) for f in state.stack[:-1])
    return callers, state.function or (state.stack[-1].function if state.stack else "<module>")


@dataclass
class Frame:
    id: int  # 1 = innermost
    name: str
    line: int
    is_top: bool


def default_engine_factory(name: str, model: str | None, worker: str | None) -> Engine:
    from model_backend.worker.client import launch_engine

    return launch_engine(name, model=model, worker=worker)


class _Loading:
    """A model engine made and started on a thread of its own (loading a model takes seconds)."""

    def __init__(self, name: str, make: Callable[[], Engine], program: Program) -> None:
        self._name, self._make, self._program = name, make, program
        self._engine: Engine | None = None
        self._state: State | None = None
        self._error: str | None = None
        self._lock = threading.Lock()  # whichever of the thread and `close` comes second closes the engine
        self._finished = self._closed = False
        self._thread = threading.Thread(target=self._run, name="ndb-engine-start", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._engine = self._make()
            self._state = self._engine.start(self._program)
        except CoreError as exc:
            self._error = str(exc)
        except Exception as exc:  # noqa: BLE001 - reported by the first command that needs the engine
            self._error = f"the {self._name} engine could not start the program: {exc}"
        with self._lock:
            self._finished = True
            if self._closed:
                self._close_engine()

    def result(self) -> tuple[Engine, State]:
        """The engine and its first state, once loaded (CoreError if it could not load or start)."""
        self._thread.join()
        if self._engine is None or self._state is None:
            self._close_engine()
            raise CoreError(self._error or f"the {self._name} engine did not start")
        return self._engine, self._state

    def close(self) -> None:
        """Close the engine once it is made (the thread is not waited for)."""
        with self._lock:
            self._closed = True
            if self._finished:
                self._close_engine()

    def _close_engine(self) -> None:
        if self._engine is not None:
            with contextlib.suppress(Exception):  # closing must not fail the session
                self._engine.close()


def _key(state: State) -> tuple[Any, ...]:
    return (
        state.event, state.line, state.function, state.depth, state.index, state.value, state.exit,
        tuple(sorted(state.locals.items())), tuple(state.stack),
    )


_EXC_RE = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*(?:\((.*)\)|:\s*(.*))?\s*$", re.S)


_INFER_RE = re.compile(r"^\s*infer\s+([A-Za-z_]\w*)\s+(\S.*?)\s*$", re.S)
INFER_SHOWN = 8  # checked proposals an inference lists


def infer_request(text: str) -> tuple[str, str] | None:
    """(FUNCTION, VALUE) when `text` is `infer FUNCTION VALUE`, which is never a Python expression (so a
    variable named `infer` still evaluates); else None."""
    match = _INFER_RE.match(text)
    if match is None:
        return None
    try:
        safe_ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return match.group(1), match.group(2)
    return None


def inference_lines(result: Inference) -> list[str]:
    """The checked proposals, as calls with what the model's run of each returned (the first few)."""
    checked = [p for p in result.proposals if p.predicted_return is not None]
    lines = [f"{result.function}({p.arguments}) -> {p.predicted_return}{'  confirmed' if p.confirmed else ''}"
             for p in checked[:INFER_SHOWN]]
    if len(checked) > INFER_SHOWN:
        lines.append(f"... and {len(checked) - INFER_SHOWN} more checked")
    return lines


def inference_verdict(result: Inference) -> str:
    """The pick, as a call, and whether a predicted run confirmed it."""
    if result.arguments is None:
        return "The model proposed no argument list."
    verdict = "a predicted run returns it" if result.confirmed else "not confirmed: no predicted run returns it"
    return f"{result.function}({result.arguments})  # {verdict}"


def exception_parts(value: str | None) -> tuple[str, str]:
    """(type name, message) from an exception repr such as `ValueError('bad')` or `ValueError: bad`."""
    if not value:
        return "Exception", ""
    m = _EXC_RE.match(value)
    if not m:
        return "Exception", value
    name = m.group(1)
    if m.group(2) is not None:
        inner = parse_value(f"({m.group(2)},)") if m.group(2).strip() else ()
        if isinstance(inner, tuple) and len(inner) == 1 and isinstance(inner[0], str):
            return name, inner[0]
        return name, m.group(2)
    return name, (m.group(3) or "").strip()


class DebugCore:
    def __init__(self, engine_factory: EngineFactory | None = None, max_auto_steps: int = MAX_AUTO_STEPS,
                 stepping: str = "pdb") -> None:
        self.engine_factory = engine_factory or default_engine_factory
        self.max_auto_steps = max_auto_steps
        # "pdb": stop wherever the engine stops (call and return events included, as pdb does);
        # "debugpy": stop on lines only, as debugpy does (see _to_line_like_debugpy).
        self.stepping = stepping
        # A forward command that runs off the end pauses at the program's last state instead (its final
        # values, the entry's return value), so that it can be stepped back from; the next one exits.
        self.stop_at_exit = False
        self._engine: Engine | None = None
        self._loading: _Loading | None = None  # a model engine loading and starting in the background
        self.engine_name = ""
        self.program: Program | None = None
        self.breakpoints = BreakpointTable()
        self.exception_filters: set[str] = set()
        self._state: State | None = None
        # debugpy style: the values returned into each live frame while stepping, by function name, shown in
        # that frame as "(return) f" (pydevd keeps them in the frame while it lives); see _note_return.
        self.returned: dict[FrameKey, dict[str, str]] = {}
        # debugpy style, at a callee's return event (the engine's state): the caller shown on its call line,
        # as debugpy stops there, and what the engine knows of that frame (see _call_line_stop).
        self._call_line: tuple[State, CallerFrame] | None = None
        self._uncaught_reported: tuple[Any, ...] | None = None
        # Set from another thread to pause the command that runs (the DAP pause request, Ctrl-C in the
        # terminal); whoever starts a command clears it first. Shared with the engine (Engine.interrupt).
        self.interrupt = threading.Event()
        self._step_lines: frozenset[int] = frozenset()  # the breakpoint lines the last engine step could stop on

    # ---- lifecycle -----------------------------------------------------------------------------
    def launch(self, program: str, entry: str | None = None, engine: str = "neural", model: str | None = None,
               worker: str | None = None, cwd: str | None = None, argv: list[str] | None = None,
               max_events: int | None = None, follow_steps: int | None = None) -> Stop:
        """Load the program, start an engine on it, and return the first state (reason entry).
        `max_events` raises or lowers how many events the oracle records before it stops the program;
        `follow_steps` how many single predictions a model engine takes for one next, return or continue."""
        from model_backend.program import ProgramError

        path = Path(program).expanduser()
        if cwd and not path.is_absolute():
            path = Path(cwd).expanduser() / path
        try:
            loaded = Program.load(path, entry, argv)
        except ProgramError as exc:
            raise CoreError(str(exc)) from None
        self.close()
        self.engine_name, self.program = engine, loaded
        self.breakpoints.set_source(loaded.source, loaded.path)
        if engine != "oracle" and not worker:
            # The first state of the in-process model comes from the program's text (engine/initial.py):
            # show it at once and load the model meanwhile; the first command that needs it waits for it.
            # (A model worker has its model loaded: its session starts at once, as the oracle's does.)
            from model_backend.engine.initial import initial_state

            try:
                first = initial_state(loaded)
            except Exception as exc:  # an entry whose arguments are not literals, ...
                raise CoreError(f"the {engine} engine could not start the program: {exc}") from None
            self._loading = _Loading(engine, lambda: self._new_engine(engine, model, worker, max_events, follow_steps),
                                     loaded)
            return self._started(first)
        self._engine = self._new_engine(engine, model, worker, max_events, follow_steps)
        return self._start()

    def _new_engine(self, engine: str, model: str | None, worker: str | None, max_events: int | None,
                    follow_steps: int | None) -> Engine:
        try:
            new_engine = self.engine_factory(engine, model, worker)
        except Exception as exc:  # EngineError, ImportError, a model that fails to load, ...
            raise CoreError(f"cannot start the {engine} engine: {exc}") from None
        if max_events is not None:
            new_engine.limit_events(max_events)
        if follow_steps is not None:
            new_engine.follow(follow_steps)
        new_engine.interrupt = self.interrupt
        return new_engine

    @property
    def engine(self) -> Engine | None:
        """The session's engine (waiting for a model engine that is still loading; CoreError if it failed)."""
        loading, self._loading = self._loading, None
        if loading is not None:
            engine, state = loading.result()
            self._engine = engine
            if self._state is not None and _key(state) != _key(self._state):  # the engine knows better
                self._state = state
        return self._engine

    def _start(self) -> Stop:
        assert self.engine is not None and self.program is not None
        try:
            state = self.engine.start(self.program)
        except Exception as exc:
            raise CoreError(f"the {self.engine_name} engine could not start the program: {exc}") from None
        return self._started(state)

    def _started(self, state: State) -> Stop:
        self._state = state
        self._call_line = None
        self._uncaught_reported = None
        self.returned.clear()
        for bp in self.breakpoints.items:
            bp.hits = 0
        outputs = [Output("console", self.banner() + "\n")]
        if state.stdout:
            outputs.append(Output("stdout", state.stdout))
        if state.event == "exit":
            return self._finish_exit(state, outputs)
        return Stop("entry", state, outputs, description="Paused on entry")

    def restart(self) -> Stop:
        if self.program is None or (self._engine is None and self._loading is None):
            raise CoreError("nothing to restart: no program was launched")
        return self._start()

    def close(self) -> None:
        loading, self._loading = self._loading, None
        if loading is not None:
            loading.close()
        if self._engine is not None:
            with contextlib.suppress(Exception):  # closing must not fail the session
                self._engine.close()
        self._engine = None

    def banner(self) -> str:
        path = self.program.path if self.program else "?"
        if self.engine_name == "oracle":
            return f"Neural Debug: {path} on the oracle engine: values are exact (from a real, sandboxed run)."
        return (
            f"Neural Debug: {path} on the {self.engine_name} engine: every value, line and output shown "
            "is a prediction of the model, not the result of running the program."
        )

    @property
    def cap(self) -> int:
        """Most engine steps one command may take on its own (a model call each, on the neural engine)."""
        if self.engine_name == "oracle":
            return self.max_auto_steps
        return min(self.max_auto_steps, NEURAL_MAX_AUTO_STEPS)

    @property
    def launched(self) -> bool:
        return (self._engine is not None or self._loading is not None) and self._state is not None

    @property
    def state(self) -> State:
        """The state shown: the engine's, or (debugpy style) the caller on its call line after a return."""
        if self._state is None:
            raise CoreError("no program is running (launch one first)")
        return self._call_line[0] if self._call_line is not None else self._state

    @property
    def exited(self) -> bool:
        return self._state is not None and self._state.event == "exit"

    @property
    def source_lines(self) -> list[str]:
        return self.program.lines if self.program else []

    # ---- breakpoints -----------------------------------------------------------------------------
    def set_breakpoints(self, specs: list[dict[str, Any]]) -> list[Breakpoint]:
        return self.breakpoints.replace(specs)

    def set_exception_filters(self, filters: list[str]) -> list[str]:
        unknown = [f for f in filters if f not in EXCEPTION_FILTERS]
        self.exception_filters = {f for f in filters if f in EXCEPTION_FILTERS}
        return unknown

    # ---- running -----------------------------------------------------------------------------------
    def run_to_first_stop(self) -> Stop:
        """What launching with stopOnEntry=false shows: the first breakpoint that fires, or the exit."""
        state = self.state
        outputs: list[Output] = []
        if (stop := self._breakpoint_stop(state, outputs)) is not None:
            return stop
        stop = self.step("continue")
        stop.outputs[:0] = outputs
        return stop

    def step(self, kind: str) -> Stop:
        if kind not in STEP_KINDS:
            raise CoreError(f"unknown step {kind!r}")
        if self.engine is None or self._state is None:
            raise CoreError("no program is running (launch one first)")
        on_call_line, self._call_line = self._call_line, None
        if kind in ("stepBack", "reverseContinue"):
            self.returned.clear()
            return self._reverse(kind)
        if self._state.event == "exit":
            raise CoreError("the program has exited; step back, restart or quit")
        if self.stepping == "debugpy" and self._uncaught_reported == _key(self._state):
            kind = "continue"  # debugpy: after an uncaught exception's stop, any step ends the program
        if on_call_line is not None and kind != "continue":
            return self._from_call_line(kind, on_call_line[0])
        # From the caller shown on its call line, that is where the command starts (for the uncaught filter,
        # an error exit is reported at its raise point unless the command started on that chain).
        shown = on_call_line[0] if on_call_line is not None else None
        if kind == "continue" and "raised" in self.exception_filters:
            return self._continue_watching_exceptions(shown)
        return self._forward(kind, shown)

    def until(self, line: int | None = None) -> Stop:
        """pdb's `until [LINE]`: step over until a line of the current frame greater than the current one
        (or at least LINE) is reached, or the frame returns; breakpoints stop it on the way. On a model,
        one prediction per step."""
        if self.engine is None or self._state is None:
            raise CoreError("no program is running (launch one first)")
        if self._state.event == "exit":
            raise CoreError("the program has exited; step back, restart or quit")
        if self._call_line is not None:
            raise CoreError("the caller is still on its call line: step first")
        start = self._state
        if start.line is None or (line is not None and line <= start.line):
            raise CoreError(f"the line must be greater than the current one ({start.line})")
        target = line if line is not None else start.line + 1

        def body(outputs: list[Output]) -> Stop:
            previous = start
            for _ in range(self.cap):
                state = self._engine_step("step_over", outputs)
                ended = self._ended(state, outputs, start)
                if ended is not None:
                    return ended
                if (stop := self._breakpoint_stop(state, outputs)) is not None:
                    return stop
                returned = state.depth < start.depth or (state.depth == start.depth and state.event == "return")
                arrived = state.depth == start.depth and state.event == "line" and (state.line or 0) >= target
                if returned or arrived or _key(state) == _key(previous):
                    reason, description, text = self._stop_reason(state)
                    return Stop(reason, state, outputs, description=description, text=text)
                if (paused := self._paused(state, outputs)) is not None:
                    return paused
                previous = state
            return self._capped(self.state, outputs, "automatic steps")

        return self._guarded(body)

    def _ended(self, state: State, outputs: list[Output], start: State) -> Stop | None:
        """The stop for a state that ends a command whatever it was: a failed prediction, or the exit."""
        if state.error:
            return Stop("step", state, outputs, description="Prediction failed")
        if state.event == "exit":
            return self._finish_exit(state, outputs, start)
        return None

    def _paused(self, state: State, outputs: list[Output]) -> Stop | None:
        """The stop for a command that a pause interrupted, at the state it reached (None: not paused)."""
        if not self.interrupt.is_set():
            return None
        outputs.append(Output("console", "Paused.\n"))
        return Stop("pause", state, outputs, description="Paused")

    def _engine_step(self, kind: ActionKind, outputs: list[Output], reverse: bool = False) -> State:
        assert self.engine is not None
        bps = frozenset() if reverse else self.breakpoints.active_lines()
        seen = set(bps)

        def lines_now() -> frozenset[int]:
            now = self.breakpoints.active_lines()
            seen.update(now)
            return now

        # A breakpoint set while the step runs (DAP's setBreakpoints is answered at once then) stops it too.
        self.engine.live_breakpoints = None if reverse else lines_now
        try:
            state = self.engine.step(Action(kind=kind), breakpoints=bps)
        finally:
            self.engine.live_breakpoints = None
            self._step_lines = frozenset(seen)
        self._state = state
        self._call_line = None
        drain = getattr(self.engine, "drain_notices", None)  # e.g. the model worker client's reconnections
        if drain is not None:
            outputs.extend(Output("console", f"{note}\n") for note in drain())
        if state.stdout and not reverse:
            outputs.append(Output("stdout", state.stdout))
        if state.error:
            outputs.append(Output("stderr", f"prediction failed: {state.error}\n"))
        return state

    def _guarded(self, body: Callable[[list[Output]], Stop]) -> Stop:
        """Run a command; an engine failure after progress still reports where the program is."""
        outputs: list[Output] = []
        before = self._state
        try:
            return body(outputs)
        except CoreError:
            raise
        except Exception as exc:
            if self._state is None or before is None or _key(self._state) == _key(before):
                raise CoreError(f"the {self.engine_name} engine failed: {type(exc).__name__}: {exc}") from None
            outputs.append(Output("stderr", f"the engine failed part way: {type(exc).__name__}: {exc}\n"))
            return Stop("pause", self._state, outputs, description="Paused after an engine error")

    def _reached(self, state: State, outputs: list[Output], count: bool = True) -> Hit:
        if state.event != "line" or state.line not in self.breakpoints.active_lines():
            return Hit(stop=False)
        hit = self.breakpoints.reached(state.line, self.eval_names(state), count=count,
                                       attributes=self.object_attributes(state),
                                       error_stops=self.stepping != "debugpy")
        outputs.extend(Output("console", text + "\n") for text in hit.logs)
        outputs.extend(Output("stderr", text + "\n") for text in hit.errors)
        return hit

    def _breakpoint_stop(self, state: State, outputs: list[Output], count: bool = True) -> Stop | None:
        """The stop at a breakpoint that fires at `state` (what it logs written to `outputs`), else None."""
        hit = self._reached(state, outputs, count=count)
        return Stop("breakpoint", state, outputs, hit.ids, description="Paused on breakpoint") if hit.stop else None

    def _capped(self, state: State, outputs: list[Output], steps: str) -> Stop:
        """The stop of a command that took `self.cap` steps without stopping (`steps` names them)."""
        outputs.append(Output("console", f"stopped after {self.cap} {steps}\n"))
        return Stop("pause", state, outputs, description="Paused: too many automatic steps")

    def _stop_reason(self, state: State) -> tuple[str, str | None, str | None]:
        if state.event == "exception" and "raised" in self.exception_filters:
            name, message = exception_parts(state.value)
            return "exception", "Paused on exception", f"{name}: {message}" if message else name
        if state.event == "return":
            return "step", f"Return from {state.function}", None
        return "step", None, None

    def _forward(self, kind: str, shown: State | None = None) -> Stop:
        def body(outputs: list[Output]) -> Stop:
            start = shown or self.state
            depth = start.depth
            if self.stepping == "debugpy" and kind == "next" and start.event == "line":
                # debugpy's step over: the calls the line makes are passed with step_return, so that their
                # return events are seen (their values are shown as "(return) f")
                state = self._engine_step("step_into", outputs)
                return self._walk_like_debugpy(kind, depth, state, outputs, start)
            action: ActionKind = {
                "next": "step_over", "stepIn": "step_into", "stepOut": "step_return", "continue": "continue"
            }[kind]  # type: ignore[assignment]
            state = self._engine_step(action, outputs)
            previous = start
            resuming = False
            for _ in range(self.cap):
                if state.error:
                    return Stop("step", state, outputs, description="Prediction failed")
                if state.event == "exit":
                    return self._finish_exit(state, outputs, start)
                hit = self._reached(state, outputs)
                if hit.stop:
                    return Stop("breakpoint", state, outputs, hit.ids, description="Paused on breakpoint",
                                text="; ".join(hit.errors) or None)
                if (paused := self._paused(state, outputs)) is not None:
                    return paused
                if self._natural(kind, depth, state, resuming) or _key(state) == _key(previous):
                    if self.stepping == "debugpy" and kind != "continue" and state.event != "line":
                        return self._walk_like_debugpy(kind, depth, state, outputs, start)
                    reason, description, text = self._stop_reason(state)
                    return Stop(reason, state, outputs, description=description, text=text)
                previous, resuming = state, True
                if kind == "continue":
                    state = self._engine_step("continue", outputs)
                elif state.depth > depth and state.event == "return":
                    state = self._engine_step("step_over", outputs)
                else:
                    state = self._engine_step("step_return", outputs)
            return self._capped(state, outputs, "automatic steps")

        return self._guarded(body)

    def _walk_like_debugpy(self, kind: str, depth: int, state: State, outputs: list[Output],
                           start: State) -> Stop:
        """debugpy (pydevd) stops on line events, and in a caller still on its call line at a return event;
        go on from `state` (a call, return or exception event, or the caller's next event after such a
        stop) until debugpy would stop. `depth` is the depth of the frame the command started in.

        stepIn: the next line event, or the next return event into a caller (shown on its call line).
        next: a line of the starting frame or above; past the frame's own return event, as stepIn.
        stepOut: the return event of the starting frame (the caller shown on its call line). Calls are
        passed with step_return, exception events unless the "raised" filter is on. Breakpoints stop.
        """
        mode = {"stepIn": "into", "next": "over", "stepOut": "out"}[kind]
        previous: State | None = None
        generator = frame_key(start)  # a `next` past a yield waits for this generator frame (mode "resume")
        for _ in range(self.cap):
            if state.error:
                return Stop("step", state, outputs, description="Prediction failed")
            if state.event == "exit":
                return self._finish_exit(state, outputs, start)
            if state.event == "line":
                if (stop := self._breakpoint_stop(state, outputs)) is not None:
                    return stop
                if mode == "into" or (mode == "over" and state.depth <= depth) or (mode == "out" and state.depth < depth) \
                        or (mode == "resume" and frame_key(state) == generator):
                    return Stop("step", state, outputs)
            elif state.event == "exception" and "raised" in self.exception_filters:
                reason, description, text = self._stop_reason(state)
                return Stop(reason, state, outputs, description=description, text=text)
            elif state.event == "call" and not self._generator(state):
                self.returned.pop(frame_key(state), None)  # a new frame: nothing returned into it yet
            elif state.event == "return":
                self._note_return(state)
                if mode == "into" or (mode == "out" and state.depth <= depth):
                    stop = self._call_line_stop(state, outputs)
                    if stop is not None:
                        return stop
                if mode == "over" and state.depth <= depth:
                    # pydevd: a step over that leaves its frame goes on as a step into; past a yield, it waits
                    # for the generator to be resumed (breakpoints still stop it)
                    yielded = self._generator(state) and self._yields_at(state.line)
                    mode = "resume" if yielded and frame_key(state) == generator else "into"
            if (paused := self._paused(state, outputs)) is not None:
                return paused
            if previous is not None and _key(state) == _key(previous):
                return Stop("step", state, outputs)
            previous = state
            action: ActionKind
            if mode == "into" or state.event == "return" or (mode == "resume" and state.function == generator[1]):
                action = "step_into"
            elif mode == "resume":
                action = "step_return" if state.depth > depth else "step_into"
            elif state.depth > depth or (mode == "out" and state.depth == depth):
                action = "step_return"
            else:
                action = "step_over"
            state = self._engine_step(action, outputs)
        return Stop("pause", state, outputs, description="Paused: too many automatic steps")

    def _call_line_stop(self, returned: State, outputs: list[Output]) -> Stop | None:
        """At a return event into a caller, the stop debugpy makes there: the caller's frame on its call
        line, its locals as they are at that moment (the engine's `call_site`: the oracle's exact frame,
        a model engine's last state of the caller, no new prediction), the returned value as
        `(return) f`. The engine stays at the return event. None when there is no caller (the module's
        return) or the engine does not know it."""
        assert self.engine is not None
        if returned.depth < 1 or len(returned.stack) < 2:
            return None
        try:
            site = self.engine.call_site()
        except Exception:  # an engine that cannot tell: no such stop
            site = None
        if site is None:
            return None
        caller = returned.stack[-2]
        lines = self.source_lines
        shown = State(event="line", line=site.line, function=caller.function, locals=dict(site.locals),
                      source=lines[site.line - 1].strip() if 0 < site.line <= len(lines) else None,
                      stack=[*returned.stack[:-2], StackFrame(function=caller.function, line=site.line)],
                      depth=returned.depth - 1)
        self._call_line = (shown, site)
        return Stop("step", shown, outputs)

    def _note_return(self, state: State) -> None:
        """A return event passed while stepping (debugpy style): its value is shown in the caller as
        "(return) f" from now on, while the caller lives; the returning frame's own are gone."""
        if self._generator(state) and (state.function == "<genexpr>" or self._yields_at(state.line)):
            return  # a yield: the frame lives on; debugpy shows no value for it (it does for the generator's end)
        self.returned.pop(frame_key(state), None)
        if state.value is not None and state.function and len(state.stack) >= 2 and self._knows_caller():
            caller = State(event="line", function=state.stack[-2].function, stack=state.stack[:-1])
            self.returned.setdefault(frame_key(caller), {})[self._return_name(state)] = state.value

    def _generator(self, state: State) -> bool:
        """Whether `state` is in a generator's frame (a resumption is a call event, a yield a return)."""
        if state.function == "<genexpr>":
            return True
        return self.program is not None and _in_generator(self.program.source, state.function or "", state.line)

    def _yields_at(self, line: int | None) -> bool:
        """Whether the program's statement at `line` yields."""
        import ast

        if self.program is None or line is None:
            return False
        try:
            tree = ast.parse(self.program.source)
        except SyntaxError:
            return False
        return any(isinstance(node, (ast.Yield, ast.YieldFrom)) and node.lineno <= line <= (node.end_lineno or node.lineno)
                   for node in ast.walk(tree))

    def _knows_caller(self) -> bool:
        """Whether the engine's return event returns straight into a frame of the program (not, say, into
        a dataclass's generated __init__), as far as the engine can tell."""
        assert self.engine is not None
        try:
            return self.engine.call_site() is not None
        except Exception:  # an engine that cannot tell: as if it did
            return True

    def _return_name(self, state: State) -> str:
        """The name debugpy gives a returned value: `C.f` for a method found on its first argument's class
        C (type(self).__name__ when that class's attribute is this very function), else `f`."""
        name = state.function or "?"
        if self.program is None or state.line is None:
            return name
        owner = _method_owner(self.program.source, name, state.line)
        if owner is None:
            return name
        first, defining = owner
        value = state.locals.get(first, "")
        m = re.match(r"<(?:class '|)(?:__main__\.)?(\w+)(?:' object| object|'>)", value) or re.match(r"(\w+)\(", value)
        cls = m.group(1) if m else None
        if cls is None:
            return name
        if cls == defining or not _overrides(self.program.source, cls, name, defining):
            return f"{cls}.{name}"
        return name

    def _returned_here(self, state: State) -> dict[str, str]:
        """The values returned into `state`'s frame while stepping; entries of frames no longer on the
        stack are dropped."""
        live = {frame_key(State(event="line", function=f.function, stack=state.stack[: i + 1]))
                for i, f in enumerate(state.stack)}
        for key in [k for k in self.returned if k not in live]:
            del self.returned[key]
        return dict(self.returned.get(frame_key(state), {}))

    def _from_call_line(self, kind: str, shown: State) -> Stop:
        """next / stepIn / stepOut from the caller shown on its call line: the engine goes on from the
        callee's return event to the caller's next event, and the command goes on from there as debugpy's
        would from that frame (_walk_like_debugpy)."""
        def body(outputs: list[Output]) -> Stop:
            state = self._engine_step("step_into", outputs)
            return self._walk_like_debugpy(kind, shown.depth, state, outputs, shown)

        return self._guarded(body)

    def _natural(self, kind: str, depth: int, state: State, resuming: bool) -> bool:
        """Whether `state` is where the command itself stops (not a breakpoint that interrupted it).

        `resuming`: the command was interrupted by a breakpoint that did not fire and is being finished.
        """
        # A line that was a breakpoint's during the step counts, though it may be gone now (removed while
        # the step ran): the engine stopped there for it, so a continue goes on.
        at_breakpoint = state.event == "line" and state.line in self.breakpoints.active_lines() | self._step_lines
        if kind == "stepIn":
            return True
        if kind == "continue":
            return not at_breakpoint
        if not resuming and not at_breakpoint:
            return True
        if kind == "next":
            return state.depth <= depth
        return state.depth < depth or (state.depth == depth and state.event == "return")  # stepOut

    def _continue_watching_exceptions(self, shown: State | None = None) -> Stop:
        def body(outputs: list[Output]) -> Stop:
            previous = self.state
            start = shown or previous
            for _ in range(self.cap):
                state = self._engine_step("step_into", outputs)
                ended = self._ended(state, outputs, start)
                if ended is not None:
                    return ended
                # debugpy stops again in each frame the exception passes through; pdb's rule, once a raise
                propagating = previous.event in ("exception", "return") and previous.depth > state.depth \
                    and self.stepping != "debugpy"
                if state.event == "exception" and not propagating:
                    name, message = exception_parts(state.value)
                    return Stop("exception", state, outputs, description="Paused on exception",
                                text=f"{name}: {message}" if message else name)
                if (stop := self._breakpoint_stop(state, outputs)) is not None:
                    return stop
                if _key(state) == _key(previous):
                    return Stop("step", state, outputs)
                if (paused := self._paused(state, outputs)) is not None:
                    return paused
                previous = state
            return self._capped(self.state, outputs, "steps")

        return self._guarded(body)

    def _finish_exit(self, state: State, outputs: list[Output], start: State | None = None) -> Stop:
        if state.exit == "error" and "uncaught" in self.exception_filters and start is not None:
            raised = self._find_raise_point(start, outputs)
            if raised is not None:
                name, message = exception_parts(raised.value)
                return Stop("exception", raised, outputs, description="Paused on uncaught exception",
                            text=f"{name}: {message}" if message else name)
        code = state.exit or "normal"
        reason = state.exit_reason
        text = f"The program exited: {code}" + (f" ({reason})" if reason else "") + "\n"
        if (code == "never" or self.stop_at_exit) and start is not None:
            last = self._last_state_before_exit(start)
            if last is not None and code == "never":
                why = reason or "it did not end"
                outputs.append(Output("console", f"The program was stopped ({why}). Paused at the last state "
                                                 "before that: step back to see how it got here.\n"))
                return Stop("pause", last, outputs, description=f"Paused: the program was stopped ({why})")
            if last is not None:
                outputs.append(Output("stderr" if code == "error" else "console", text))
                outputs.append(Output("console", "Paused at its last state (stopAtExit): step back to look "
                                                 "around; a forward command ends the session.\n"))
                return Stop("pause", last, outputs, description=f"Paused at the end: {text.strip()}")
        outputs.append(Output("stderr" if code == "error" else "console", text))
        return Stop("exit", state, outputs, description=text.strip())

    def _find_raise_point(self, start: State, outputs: list[Output]) -> State | None:
        """From an error exit, walk back to where the uncaught exception was raised (see module doc)."""
        walked: list[State] = []
        candidate_steps = -1
        scratch: list[Output] = []
        for steps in range(1, self.cap):
            state = self._engine_step("inv_step_into", scratch, reverse=True)
            if state.error or (walked and _key(state) == _key(walked[-1])):
                break
            walked.append(state)
            if state.event == "exception":
                candidate_steps = steps
            elif state.event not in ("return", "inv_line_call", "exit"):
                break
        seen_start = any(_key(s) == _key(start) for s in walked[: max(candidate_steps, 0)])
        if candidate_steps > 0 and not seen_start:
            target = walked[candidate_steps - 1]
            if _key(target) != self._uncaught_reported and _key(target) != _key(start):
                # Go forward again to it: one step_into per state walked past it.
                for _ in range(len(walked) - candidate_steps):
                    self._engine_step("step_into", scratch)
                if _key(self.state) == _key(target):
                    self._uncaught_reported = _key(target)
                    return target
        self._back_to_exit()  # nothing to show (or already shown)
        return None

    def _no_earlier_state(self, verb: str) -> str:
        """What to say when a step back stays put: the start of the program on the oracle; on the neural
        engine only that the model predicts nothing earlier (it may be wrong about that)."""
        if self.engine_name == "neural":
            return "The model predicts no earlier state from here (the start of the program, as far as it can tell)."
        return f"{verb} the start of the program."

    def _last_state_before_exit(self, start: State) -> State | None:
        """The state just before the exit, where a user can look around and step back, as after pressing
        pause: for a program stopped from outside (a limit on events or time, or a model that predicts it
        never ends), or any end with stop_at_exit. None (and the exit stays current) when the command
        began at that state."""
        state = self._engine_step("inv_step_into", [], reverse=True)
        if state.error or state.event == "exit" or _key(state) == _key(start):
            self._back_to_exit()
            return None
        return state

    def _back_to_exit(self) -> None:
        """Go forward to the exit again, without stopping at breakpoints."""
        assert self.engine is not None
        for _ in range(self.cap):
            before = _key(self.state)
            self._state = self.engine.step(Action(kind="continue"))
            if self.state.event == "exit" or self.state.error or _key(self.state) == before:
                break

    def _reverse(self, kind: str) -> Stop:
        def body(outputs: list[Output]) -> Stop:
            start = self.state
            self._uncaught_reported = None
            if kind == "stepBack":
                state = self._engine_step("inv_step_over", outputs, reverse=True)
                if state.event == "inv_line_call" and not state.error:
                    state = self._engine_step("inv_step_over", outputs, reverse=True)
                if _key(state) == _key(start):
                    outputs.append(Output("console", f"{self._no_earlier_state('Already at')}\n"))
                return Stop("step", state, outputs)
            action: ActionKind = "inv_step_into" if self.breakpoints.active_lines() else "inv_step_over"
            previous = start
            for _ in range(self.cap):
                state = self._engine_step(action, outputs, reverse=True)
                if state.error:
                    return Stop("step", state, outputs, description="Prediction failed")
                if _key(state) == _key(previous):
                    note = self._no_earlier_state("Reached")
                    outputs.append(Output("console", f"{note}\n"))
                    return Stop("step", state, outputs, description=note.rstrip("."))
                if (stop := self._breakpoint_stop(state, outputs, count=False)) is not None:
                    return stop
                if (paused := self._paused(state, outputs)) is not None:
                    return paused
                previous = state
            return self._capped(self.state, outputs, "steps back")

        return self._guarded(body)

    # ---- inspecting ----------------------------------------------------------------------------
    def frames(self) -> list[Frame]:
        state = self.state
        if state.event == "exit":
            return []
        stack = list(state.stack) or [StackFrame(function=state.function or "<module>", line=state.line or 1)]
        out = []
        for i, frame in enumerate(reversed(stack)):
            line = frame.line
            if i == 0 and state.line is not None:
                line = state.line
            out.append(Frame(id=i + 1, name=frame.function, line=line, is_top=i == 0))
        return out

    def display_locals(self, state: State | None = None) -> dict[str, str]:
        """The top frame's variables as shown: the locals, plus the return value or exception."""
        state = state or self.state
        shown = dict(state.locals)
        if state.event == "return" and state.value is not None:
            shown[f"(return) {state.function}"] = state.value
        if state.event == "exception" and state.value is not None:
            shown["(exception)"] = state.value
        if self.stepping == "debugpy" and state.event != "return" and state is self.state:
            shown.update({f"(return) {name}": value for name, value in self._returned_here(state).items()})
        return shown

    def module_globals(self) -> dict[str, str] | None:
        """The current function frame's module globals, where the engine knows them (the oracle)."""
        if self.engine is None or self._state is None or self.is_module_frame():
            return None
        try:
            return self.engine.module_globals()
        except Exception:  # an engine that cannot tell: no globals shown
            return None

    def object_attributes(self, state: State | None = None) -> dict[str, dict[str, str]]:
        """The attributes of the program's objects the current frame's names hold, where the engine knows
        them (the oracle); {} otherwise."""
        if self.engine is None or self._state is None or (state is not None and state is not self.state):
            return {}
        if self._call_line is not None:
            return self._call_line[1].attributes
        try:
            return self.engine.object_attributes() or {}
        except Exception:  # an engine that cannot tell: objects show only their reprs
            return {}

    def eval_names(self, state: State | None = None) -> dict[str, str]:
        """Names an expression may use: the locals (and, in a function on the oracle, the module globals
        its code names, which the locals shadow), plus pdb's __return__ / __exception__."""
        state = state or self.state
        names = dict(self.module_globals() or {}) if state is self.state else {}
        names.update(state.locals)
        if state.event == "return" and state.value is not None:
            names["__return__"] = state.value
        if state.event == "exception" and state.value is not None:
            names["__exception__"] = state.value
        return names

    def caller_frame(self, frame_id: int) -> CallerFrame | None:
        """The variables of stack frame `frame_id` (2: the caller of the innermost frame) when the
        engine knows them (the oracle does; a neural state holds only the innermost frame)."""
        if self.engine is None or frame_id < 2 or self.state.event == "exit":
            return None
        level = frame_id if self._call_line is not None else frame_id - 1  # the engine is one frame deeper
        try:
            return self.engine.caller_frame(level)
        except Exception:  # an engine that cannot tell: the frame shows no values
            return None

    def is_module_frame(self) -> bool:
        return (self.state.function or "<module>") == "<module>"

    def evaluate(self, expression: str, frame_id: int | None = None) -> Any:
        state = self.state
        if state.event == "exit":
            raise CoreError("the program has exited: there are no variables")
        names, attributes = self.eval_names(state), self.object_attributes(state)
        if frame_id not in (None, 1):
            caller = self.caller_frame(frame_id)
            if caller is None:
                raise CoreError("only the innermost frame's values are known in this state")
            names, attributes = caller.locals, caller.attributes
        try:
            return Evaluator(names, attributes=attributes).evaluate(expression)
        except EvalError as exc:
            raise CoreError(str(exc)) from None

    def infer(self, function: str, returned: str, seconds: float = INFER_SECONDS,
              cancel: threading.Event | None = None,
              on_checked: Callable[[Proposal], None] | None = None) -> Inference:
        """Which arguments make the program's top-level `function` return `returned` (a literal), as the
        model infers them (model_backend/engine/infer.py): nothing runs. On new sessions of this
        session's model, so the state being debugged stays as it is; neural engine with a local model
        only. Forward runs still going after `seconds` are abandoned; setting `cancel` (from another
        thread) ends it with CommandCancelled. `on_checked` hears of each proposal checked."""
        from model_backend.engine.infer import infer_arguments, new_sessions
        from model_backend.engine.neural import proposer_engine

        if self.engine is None or self.program is None:
            raise CoreError("no program is loaded")
        try:
            sessions = new_sessions(self.engine)
        except EngineError:
            raise CoreError(f"inference needs the neural engine with a local model (this session uses the "
                            f"{self.engine.name} engine)") from None
        proposer: Engine | None = None
        try:
            proposer = proposer_engine(self.engine) or sessions()
            return infer_arguments(proposer, self.program.source, function, returned, engine_factory=sessions,
                                   deadline=time.monotonic() + seconds, cancel=cancel, on_checked=on_checked)
        except Cancelled:
            raise CommandCancelled("cancelled") from None
        except EngineError as exc:
            raise CoreError(str(exc)) from None
        finally:
            if proposer is not None:
                proposer.close()

    def goto(self, line: int) -> Stop:
        """pdb's jump (DAP goto): the current frame continues at `line`; reason "goto"."""
        if self.engine is None:
            raise CoreError("no program is running")
        if self.state.event == "exit":
            raise CoreError("the program has exited")
        if not 1 <= line <= len(self.source_lines):
            raise CoreError(f"line {line} is not in the program (1 to {len(self.source_lines)})")
        if self._call_line is not None:
            raise CoreError("the caller is still on its call line (the call has returned): step first")
        try:
            state = self.engine.goto(line)
        except Exception as exc:  # EngineError (a refused jump), or an engine that failed
            raise CoreError(str(exc)) from None
        self._state = state
        self.returned.clear()
        return Stop("goto", state, description=f"Jumped to line {state.line}")

    def set_variable(self, name: str, value_text: str, path: list[Any] | None = None) -> str:
        """Set a local (or, with `path`, an element inside it) to `value_text`. Returns the new repr.

        The value may be a literal or an expression the evaluator can compute from the current values
        (e.g. `n + 1`); it is passed to the engine as a literal.
        """
        if self.engine is None:
            raise CoreError("no program is running")
        state = self.state
        if state.event == "exit":
            raise CoreError("the program has exited")
        if self._call_line is not None:
            raise CoreError("the caller is still on its call line (the call has returned): step first")
        if name not in state.locals:
            raise CoreError(f"no variable named {name!r} in the current frame")
        evaluator = Evaluator(self.eval_names(state), attributes=self.object_attributes(state))
        try:
            new_value: Any = evaluator.evaluate(value_text)
            literal_ok = _is_literal(new_value)
        except EvalError:
            new_value, literal_ok = None, False
        if path:
            if not literal_ok:
                raise CoreError(f"{value_text!r} is not a value the debugger can compute")
            whole = parse_value(state.locals[name])
            try:
                whole = _replace_in(whole, path, new_value)
            except (KeyError, IndexError, TypeError, ValueError) as exc:
                raise CoreError(f"cannot set that element: {exc}") from None
            text = show(whole)
        else:
            text = show(new_value) if literal_ok else value_text
        try:
            new_state = self.engine.set_variable(name, text)
        except Exception as exc:
            raise CoreError(f"could not set {name}: {exc}") from None
        if new_state.error:
            raise CoreError(f"could not set {name}: {new_state.error}")
        self._state = new_state
        return new_state.locals.get(name, text)


def _in_generator(source: str, name: str, line: int | None) -> bool:
    """Whether the function `name` whose body holds `line` is a generator (debugpy shows no "(return) f"
    for its yields or its end)."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return False
    for f in ast.walk(tree):
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == name and line is not None \
                and f.lineno <= line <= (f.end_lineno or f.lineno):
            todo: list[ast.AST] = list(f.body)
            while todo:
                node = todo.pop()
                if isinstance(node, (ast.Yield, ast.YieldFrom)):
                    return True
                if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                    todo.extend(ast.iter_child_nodes(node))
    return False


def _method_owner(source: str, name: str, line: int) -> tuple[str, str] | None:
    """For the method `name` whose body holds `line`: its first parameter and its class; else None."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for cls in ast.walk(tree):
        if not isinstance(cls, ast.ClassDef):
            continue
        for f in cls.body:
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == name \
                    and f.lineno <= line <= (f.end_lineno or f.lineno) and f.args.args:
                # a static method has no first argument to go by; a property's getter is no function of
                # the class (debugpy names its value `f`)
                if any((isinstance(d, ast.Name) and d.id in ("staticmethod", "property", "cached_property"))
                       or isinstance(d, ast.Attribute) for d in f.decorator_list):
                    return None
                return f.args.args[0].arg, cls.name
    return None


def _overrides(source: str, cls: str, name: str, defining: str) -> bool:
    """Whether looking `name` up on class `cls` finds another function than `defining`'s: `cls` or a class
    between them (by the program's class statements) defines it. Unknown classes count as overriding."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return True
    classes = {c.name: c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)}
    seen: set[str] = set()
    todo = [cls]
    while todo:  # depth-first along the bases: the first class that defines `name` wins, as a simple MRO
        current = todo.pop(0)
        if current in seen or current not in classes:
            continue
        seen.add(current)
        if current == defining:
            return False
        node = classes[current]
        if any(isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef)) and f.name == name for f in node.body):
            return True
        todo[:0] = [b.id for b in node.bases if isinstance(b, ast.Name)]
    return True


def _is_literal(value: Any) -> bool:
    from dap_server.values import Opaque, Record

    if isinstance(value, (Opaque, Record)):
        return False
    if isinstance(value, (list, tuple, set, frozenset)):
        return all(_is_literal(v) for v in value)
    if isinstance(value, dict):
        return all(_is_literal(k) and _is_literal(v) for k, v in value.items())
    return value is None or isinstance(value, (bool, int, float, complex, str, bytes))


def _replace_in(container: Any, path: list[Any], value: Any) -> Any:
    """A copy of `container` with the element at `path` (keys/indexes) replaced by `value`."""
    if not path:
        return value
    head, rest = path[0], path[1:]
    if isinstance(container, list):
        copy_list = list(container)
        copy_list[head] = _replace_in(copy_list[head], rest, value)
        return copy_list
    if isinstance(container, tuple):
        items = list(container)
        items[head] = _replace_in(items[head], rest, value)
        return tuple(items)
    if isinstance(container, dict):
        copy_dict = dict(container)
        copy_dict[head] = _replace_in(copy_dict[head], rest, value)
        return copy_dict
    raise TypeError(f"{type(container).__name__} elements cannot be set")
