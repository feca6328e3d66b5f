"""The debugger's data model: recorded events, states, actions and exit codes.

Everything that crosses a boundary (tracer -> tree -> engine -> adapter, or the model worker's wire)
is one of these pydantic models, so it validates and serializes the same way everywhere.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

EventKind = Literal["call", "line", "return", "exception"]
# "inv_line_call" is the inverse tree's duplicate of a line that made calls (see docs/mdp.md);
# "exit" is the terminal pseudo-state that carries the exit code.
StateEvent = Literal["call", "line", "return", "exception", "inv_line_call", "exit"]
ExitCode = Literal["normal", "error", "never"]

FORWARD_ACTIONS = ("step_into", "step_over", "step_return", "breakpoint", "continue")
INVERSE_ACTIONS = ("inv_step_into", "inv_step_over", "inv_step_call")
ActionKind = Literal[
    "step_into", "step_over", "step_return", "breakpoint", "continue",
    "inv_step_into", "inv_step_over", "inv_step_call",
]


class StackFrame(BaseModel):
    """One entry of the call stack, outermost first in a list."""

    model_config = ConfigDict(frozen=True)
    function: str
    line: int


class TraceEvent(BaseModel):
    """One `sys.settrace` event of the program's own code, as the tracer recorded it."""

    index: int
    event: EventKind
    line: int
    source: str  # the source line, stripped of its newline
    function: str  # code name: "f", "<module>", "<listcomp>", "Point.__init__" is just "__init__"
    depth: int  # call depth, 0 = outermost traced frame
    frame_id: int  # unique per frame instance; a generator keeps its id across resumptions
    parent_id: int = -1  # frame_id of the calling frame when it is the program's own code, else -1
    is_generator: bool = False
    internal: bool = False  # the interpreter's StopIteration inside `yield from` (see tracer)
    locals: dict[str, str] = Field(default_factory=dict)  # name -> repr, truncated
    value: str | None = None  # return value repr, or exception repr
    stdout: str = ""  # written since the previous event
    stack: list[StackFrame] = Field(default_factory=list)  # outermost first, ends with this frame
    globals: dict[str, str] = Field(default_factory=dict)  # module globals the code names (record_globals)
    # name -> {attribute path ("next.val") -> repr}, for names holding the program's objects (record_attributes)
    attributes: dict[str, dict[str, str]] = Field(default_factory=dict)


class TraceResult(BaseModel):
    """A whole recorded run: its events and how it ended."""

    events: list[TraceEvent]
    exit: ExitCode
    exit_reason: str | None = None  # e.g. "ZeroDivisionError: division by zero", "time limit 5.0s"
    stdout_tail: str = ""  # stdout written after the last recorded event
    truncated: bool = False  # event limit hit


class Action(BaseModel):
    """A debugger command. `lines` is only used by `breakpoint` (one or more target lines)."""

    model_config = ConfigDict(frozen=True)
    kind: ActionKind
    lines: tuple[int, ...] = ()

    @property
    def is_inverse(self) -> bool:
        return self.kind.startswith("inv_")

    def __str__(self) -> str:
        if self.kind == "breakpoint":  # "+" joins lines, so that a comma-separated action list stays simple
            return "breakpoint:" + "+".join(str(n) for n in self.lines)
        return self.kind

    @classmethod
    def parse(cls, text: str) -> Action:
        """Parse `step_into`, `breakpoint:12` or `breakpoint:12+15`. Raises ValueError on bad input."""
        text = text.strip()
        name, _, arg = text.partition(":")
        if name == "breakpoint":
            try:
                lines = tuple(int(part) for part in arg.replace(",", "+").split("+") if part.strip())
            except ValueError:
                raise ValueError(f"bad breakpoint line in {text!r}") from None
            if not lines or any(n < 1 for n in lines):
                raise ValueError(f"breakpoint needs one or more line numbers >= 1, got {text!r}")
            return cls(kind="breakpoint", lines=lines)
        if arg:
            raise ValueError(f"action {name!r} takes no argument, got {text!r}")
        if name not in FORWARD_ACTIONS + INVERSE_ACTIONS:
            known = ", ".join(FORWARD_ACTIONS + INVERSE_ACTIONS)
            raise ValueError(f"unknown action {name!r} (known: {known})")
        return cls(kind=name)  # type: ignore[arg-type]


class State(BaseModel):
    """What the debugger shows when paused: the answer to "where are we and what do the locals hold".

    `locals` is always the full dict (name -> repr). `exit` is set only on the terminal state.
    `confidence` (name -> probability) and `error` are filled by the neural engine.
    """

    event: StateEvent
    line: int | None = None
    function: str | None = None
    source: str | None = None
    locals: dict[str, str] = Field(default_factory=dict)
    value: str | None = None
    stack: list[StackFrame] = Field(default_factory=list)
    exit: ExitCode | None = None
    exit_reason: str | None = None
    stdout: str = ""  # program output produced by the transition that led here
    depth: int = 0
    index: int | None = None  # position in the recorded trace (oracle only)
    confidence: dict[str, float] | None = None
    error: str | None = None  # set when a prediction failed; the state is then the previous one

    @classmethod
    def from_event(cls, ev: TraceEvent, stdout: str = "", event: StateEvent | None = None) -> State:
        return cls(
            event=event or ev.event,
            line=ev.line,
            function=ev.function,
            source=ev.source,
            locals=dict(ev.locals),
            value=ev.value,
            stack=list(ev.stack),
            stdout=stdout,
            depth=ev.depth,
            index=ev.index,
        )

    @classmethod
    def exit_state(cls, code: ExitCode, reason: str | None = None, stdout: str = "") -> State:
        return cls(event="exit", exit=code, exit_reason=reason, stdout=stdout)

    def step_record(self, action: Action | None) -> dict[str, object]:
        """The JSON object `ndb step` prints for this state."""
        record: dict[str, object] = {"action": str(action) if action else None}
        record.update(self.model_dump(exclude={"confidence", "error"} if self.confidence is None else set()))
        if self.error is not None:
            record["error"] = self.error
        return record
