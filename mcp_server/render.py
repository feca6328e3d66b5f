"""The text an agent reads: compact, one fact a line, values cut to a bounded length.

A state reads like this (a neural one; an oracle state has no confidences):

    line 4 in f: total += 10 // x
      xs = [1, 0]
      total = 10
      x = 0
    stack: <module>:9 > f:4
    confidence (lowest): x 0.62, total 0.98

followed, where they apply, by what the step printed and the prediction's error.
"""

from __future__ import annotations

from model_backend.program import Program
from model_backend.state import State

MAX_VALUE_CHARS = 300
MAX_OUTPUT_CHARS = 2_000
MAX_CONFIDENCES = 5
TRAJECTORY_SHOWN = 200


def cut(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def where(state: State) -> str:
    """One line: the event, the line and the function, with the line's code."""
    if state.event == "exit":
        if state.exit == "error":
            return f"exited with an error: {state.exit_reason or 'unknown'}"
        return f"exited ({state.exit}{': ' + state.exit_reason if state.exit_reason else ''})"
    place = f"line {state.line} in {state.function or '<module>'}"
    code = (state.source or "").strip()
    head = {
        "line": place,
        "call": f"call of {state.function} at line {state.line}",
        "return": f"return from {state.function} at line {state.line}, value {cut(state.value or 'None')}",
        "exception": f"exception in {state.function} at line {state.line}: {cut(state.value or '?')}",
        "inv_line_call": f"{place}, its calls done (stepped back onto it)",
    }.get(state.event, f"{state.event} at {place}")
    return f"{head}: {code}" if code else head


def state_text(state: State) -> str:
    lines = [where(state)]
    if state.event != "exit":
        lines += [f"  {name} = {cut(value)}" for name, value in state.locals.items()]
        if state.stack:
            lines.append("stack: " + " > ".join(f"{f.function}:{f.line}" for f in state.stack))
    if state.confidence:
        lowest = sorted(state.confidence.items(), key=lambda item: item[1])[:MAX_CONFIDENCES]
        lines.append("confidence (lowest): " + ", ".join(f"{name} {p:.2f}" for name, p in lowest))
    if state.stdout:
        lines.append("printed: " + cut(repr(state.stdout), MAX_OUTPUT_CHARS))
    if state.error:
        lines.append(f"prediction failed: {state.error} (the state shown is the one before)")
    return "\n".join(lines)


def program_text(program: Program, current: int | None = None, breakpoints: frozenset[int] = frozenset()) -> str:
    """The program with line numbers; `>` marks the current line, `*` a breakpoint."""
    lines = program.lines
    width = len(str(len(lines)))
    out = []
    for number, code in enumerate(lines, 1):
        mark = (">" if number == current else " ") + ("*" if number in breakpoints else " ")
        out.append(f"{mark} {number:>{width}} | {code}")
    if program.entry:
        out.append(f"entry: {program.entry}")
    return "\n".join(out)


def brief(state: State) -> str:
    """One line of a trajectory: where, and the locals on one line."""
    shown = where(state)
    if state.event != "exit" and state.locals:
        shown += "  | " + ", ".join(f"{k}={cut(v, 60)}" for k, v in state.locals.items())
    return shown


def trajectory_text(steps: list[tuple[str, State]]) -> str:
    """`#N what -> where | locals`, the last TRAJECTORY_SHOWN steps."""
    first = max(0, len(steps) - TRAJECTORY_SHOWN)
    out = [f"({first} earlier steps not shown)"] if first else []
    out += [f"#{i} {what} -> {brief(state)}" for i, (what, state) in enumerate(steps) if i >= first]
    return "\n".join(out)
