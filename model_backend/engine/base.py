"""The engine interface: a paused program that moves under debugger actions.

The debug adapter and the terminal debugger know only this class. The oracle engine answers from a
real (sandboxed) trace; the neural engine predicts the same states with a model. Engines never raise
for a bad prediction: they return a State whose `error` says what went wrong.

`StepwiseEngine` is the shape of an engine whose operations are generators driven by a model (alone, or
by the worker with other sessions); engine/driver.py adds what reads the program through the grammar.
The interface imports no grammar.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from model_backend import safe_ast
from model_backend.engine.errors import Cancelled, EngineError
from model_backend.program import Program
from model_backend.state import Action, StackFrame, State

__all__ = ["MAX_TRAIL", "CallerFrame", "Cancelled", "Engine", "EngineError", "StartAt", "StepwiseEngine",
           "context_frame"]
StartAt = Literal["entry", "exit"]
MAX_TRAIL = 256
T = TypeVar("T")


@dataclass(frozen=True)
class CallerFrame:
    line: int  # the line the frame last ran (its call site)
    locals: dict[str, str]
    attributes: dict[str, dict[str, str]] = field(default_factory=dict)  # as Engine.object_attributes


class Engine(ABC):
    """One debugging session's debuggee."""

    name: str = "engine"

    @property
    def format_version(self) -> int:
        """The trace format whose values this engine's states hold (model_backend.trace_format): a
        neural engine's is its checkpoint's; an evaluation compares it with an oracle of that version."""
        from model_backend import trace_format as fmt

        return fmt.FORMAT_VERSION

    @abstractmethod
    def start(self, program: Program, at: StartAt = "entry", known_exit: State | None = None) -> State:
        """Load the program and return its first state.

        at="entry": the first line of the module, or the call event of the entry function.
        at="exit": the last recorded state (the entry function's return event, holding the output).
        A neural engine cannot compute that state without running the program, so it takes it from
        `known_exit` (e.g. a return state built from a known output); the oracle computes it.
        """

    @abstractmethod
    def step(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> State:
        """Apply one debugger action to the current state and return the new current state.

        `breakpoints` are the IDE's breakpoint lines: forward actions also stop on them, as pdb does
        (`continue` then means "run to the nearest breakpoint"). Inverse actions ignore them.
        """

    _state: State | None = None  # the current state, set by start/step
    # Set by the debugger (a pause while a command runs): an action that runs through many events stops
    # at the next state it reaches, which becomes the current state. Never cleared by the engine.
    interrupt: threading.Event | None = None
    # Set by the debugger for the length of one step: the IDE's breakpoint lines now. An action followed
    # one step at a time reads them before each step, so a breakpoint set while it runs (from another
    # thread) stops it, as in a real debugger. None: the `breakpoints` the step was given, throughout.
    live_breakpoints: Callable[[], frozenset[int]] | None = None

    @property
    def interrupted(self) -> bool:
        return self.interrupt is not None and self.interrupt.is_set()

    @property
    def state(self) -> State:
        """The current state (raises EngineError before start)."""
        if self._state is None:
            raise EngineError("the engine has not been started")
        return self._state

    @abstractmethod
    def set_variable(self, name: str, value: str) -> State:
        """Replace a local of the current frame by the value of the Python literal `value`.

        Later states are conditioned on the new value. Returns the updated current state.
        """

    def goto(self, line: int) -> State:
        """pdb's jump: the current frame continues at `line` (the lines between are not run). Only from
        a line event, to a line of the same function; EngineError when that jump is not possible."""
        raise EngineError(f"the {self.name} engine cannot jump to a line")

    def caller_frame(self, level: int) -> CallerFrame | None:
        """The variables of the frame `level` calls out from the current one (1: the caller), as they
        were when that frame last ran a line, i.e. at its call site; None when the engine does not
        know them. A neural state holds only the innermost frame, so only the oracle answers."""
        return None

    def call_site(self) -> CallerFrame | None:
        """At a return event: the caller's frame as it is at that moment, still on its call line (the
        assignment of the returned value not done yet), which is where debugpy shows a step out; None
        when the engine does not know it."""
        return self.caller_frame(1)

    def module_globals(self) -> dict[str, str] | None:
        """The module globals the current function's code names, as they are at this state (what `p NAME`
        means there besides the locals); None when the engine does not know them. A predicted state
        holds only its frame's locals, so only the oracle answers."""
        return None

    def object_attributes(self) -> dict[str, dict[str, str]] | None:
        """For the names (locals and module globals) that hold the program's own objects: their
        attributes' reprs by dotted path (`{"node": {"val": "1", "next.val": "2"}}`), as they are at this
        state; None when the engine does not know them. A predicted state holds only reprs, so only the
        oracle answers."""
        return None

    def follow(self, steps: int) -> None:  # noqa: B027 - optional hook
        """How many single predicted steps step_over across a call, step_return or continue may take before
        the rest is predicted in jumps (engine/follow.py); 0: one jump each. Only engines that predict one
        step at a time follow actions; the others ignore it."""

    def limit_events(self, count: int) -> None:  # noqa: B027 - optional hook
        """How many events a run of the program may record before it is stopped. Only an engine that runs
        the program (the oracle) has such a limit; the others ignore it."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (processes, connections)."""


def context_frame(state: State, inverse: bool) -> str:
    """The frame that starts a (re)based context in this direction. A state reached by stepping back
    onto the line that made a call (`inv_line_call`, an inverse-only event) is that line's `line` state
    when the context goes forward."""
    from model_backend import trace_format as fmt

    if not inverse and state.event == "inv_line_call":
        state = state.model_copy(update={"event": "line"})
    return fmt.frame_target(state, None, inverse)


class StepwiseEngine(Engine):
    """An engine whose operations are generators (`*_steps`) that yield work for the model and receive
    its answer; `run` drives one of them alone. The model worker drives many sessions' generators at
    once instead. Subclasses supply the generators, `run`, and keep `_state` current
    (engine/driver.py: the start from the program's text, and actions followed step by step)."""

    program: Program | None = None
    history: list[State]  # the states of the trajectory in the context, the current one last
    # The forward steps predicted on the way to the current state, oldest first, each state with the
    # action taken from it (at most MAX_TRAIL; emptied by a start, a step back, a set variable or a jump):
    # the grammar reads where a loop's header was reached from, and how often, to know which element
    # the loop takes next (grammar.frame.FrameConstraint.trail).
    trail: list[tuple[State, str]]
    def call_site(self) -> CallerFrame | None:
        """The caller's last state in the trajectory (no new prediction): its state on the call line when
        the trajectory holds it, else its latest state before the call."""
        state = self.state
        if state.depth < 1:
            return None
        call_line = state.stack[-2].line if len(state.stack) >= 2 else None
        latest: State | None = None
        for earlier in reversed(self.history[:-1]):
            if earlier.depth < state.depth - 1 or earlier.event == "exit":
                break
            if earlier.depth != state.depth - 1:
                continue
            if earlier.event == "line" and (call_line is None or earlier.line == call_line):
                latest = earlier
                break
            latest = latest or earlier
        if latest is None or latest.line is None:
            return None
        return CallerFrame(line=call_line or latest.line, locals=dict(latest.locals))

    def _record_step(self, before: State, action: Action) -> None:
        """Keep the trail after a prediction from `before`: a forward step is added (the oldest falls
        off past MAX_TRAIL); a step back empties it."""
        self.trail = [] if action.is_inverse else [*self.trail[1 - MAX_TRAIL:], (before, action.kind)]

    @abstractmethod
    def run(self, op: Generator[Any, Any, T]) -> T:
        """Drive one operation to its end and return its result."""

    @abstractmethod
    def predict_steps(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> Generator[Any, Any, State]:
        """One prediction: the state `action` leads to (`continue` with breakpoints: the nearest one)."""

    @abstractmethod
    def resume_steps(self, program: Program, history: list[State], inverse: bool) -> Generator[Any, Any, State]: ...

    @abstractmethod
    def replace_current_steps(self, state: State) -> Generator[Any, Any, State]:
        """Make `state` the current state (set_variable, goto): later predictions start from it."""

    @abstractmethod
    def sample_steps(self, action: Action, k: int) -> Generator[Any, Any, list[State]]: ...

    @abstractmethod
    def start_steps(self, program: Program, at: StartAt = "entry",
                    known_exit: State | None = None) -> Generator[Any, Any, State]: ...

    def step_steps(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> Generator[Any, Any, State]:
        """The state `action` leads to: one prediction here; engine/driver.py follows some actions in
        single steps."""
        return (yield from self.predict_steps(action, breakpoints))

    def set_variable_steps(self, name: str, value: str) -> Generator[Any, Any, State]:
        """The value must be a literal: neural mode runs no code."""
        current = self.state
        if current.event not in ("call", "line", "inv_line_call"):
            raise EngineError("variables can be set only when paused at a call or a line")
        if name not in current.locals:
            raise EngineError(f"no variable named {name!r} in the current frame")
        try:
            text = repr(safe_ast.literal_eval(value))
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            raise EngineError(f"neural mode runs no code: {value!r} must be a Python literal") from None
        updated = current.model_copy(update={"locals": {**current.locals, name: text}, "confidence": None})
        return (yield from self.replace_current_steps(updated))

    def start(self, program: Program, at: StartAt = "entry", known_exit: State | None = None) -> State:
        return self.run(self.start_steps(program, at, known_exit))

    def step(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> State:
        return self.run(self.step_steps(action, breakpoints))

    def set_variable(self, name: str, value: str) -> State:
        return self.run(self.set_variable_steps(name, value))

    def goto(self, line: int) -> State:
        return self.run(self.goto_steps(line))

    def goto_steps(self, line: int) -> Generator[Any, Any, State]:
        """The jump as a prediction needs no model: the frame moves to the line where Python would
        land (model_backend.engine.jump) with its variables unchanged, and later steps start there."""
        from model_backend.engine.jump import jump_target

        current = self.state
        program = self.program
        if current.event != "line" or current.line is None or program is None:
            raise EngineError("a jump is possible only when paused at a line (as in pdb)")
        if not 1 <= line <= len(program.lines):
            raise EngineError(f"line {line} is not in the program")
        function = current.function or "<module>"
        target, why = jump_target(program.source, function, current.line, line)
        if target is None:
            raise EngineError(f"cannot jump to line {line}: {why}")
        stack = [*current.stack[:-1], StackFrame(function=function, line=target)] if current.stack else []
        moved = current.model_copy(update={"line": target, "source": program.lines[target - 1], "stack": stack,
                                           "confidence": None, "stdout": ""})
        return (yield from self.replace_current_steps(moved))

    def resume(self, program: Program, history: list[State], inverse: bool) -> State:
        """Start at a given state (the last of `history`), e.g. to re-open a session elsewhere."""
        return self.run(self.resume_steps(program, history, inverse))

    def sample(self, action: Action, k: int) -> list[State]:
        """k sampled predictions of the state `action` leads to; the current state does not move."""
        return self.run(self.sample_steps(action, k))
