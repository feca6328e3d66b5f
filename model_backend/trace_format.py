"""Text format (version 3) of a program and a debugger trajectory, with special tokens.

Version 2 numbers the header's lines; version 3 writes the program's objects that have no __repr__
as `Class(field=value, ...)` (the tracer's `Limits.objects`) where version 2 has Python's
`<__main__.Class object>`. The text's syntax is the same: a checkpoint declares the version it reads
(`version` of `serialize_header`), and an engine serves that version. A header may show only some of
the program's lines (a program view, model_backend.view): the numbers stay the program's own.

A trajectory is a list of (state, action taken from it) pairs; the last action may be None.
`serialize` writes it, `parse` reads it back. Round trip holds for every state `serialize` accepts
(states as the tracer records them), except `index`, `confidence` and `error`, which are not written.
`parse` and `parse_frame` are total: any string gives a result or a FormatError, never an exception.
The grammar and the reasons behind it are in docs/trace-format.md.
"""

from __future__ import annotations

import json
import re
from typing import Any, get_args

from pydantic import BaseModel

from model_backend.program import Program
from model_backend.state import (
    Action,
    ActionKind,
    ExitCode,
    StackFrame,
    State,
    StateEvent,
)

FORMAT_VERSION = 3  # 2: the header numbers the program's lines ("12|    x = 1"); 3: objects' fields
SUPPORTED_VERSIONS = (2, 3)

TRACE_START = "<|trace_context_start|>"
VERSION_TOKENS = {v: f"<|format_v{v}|>" for v in SUPPORTED_VERSIONS}
VERSION = VERSION_TOKENS[FORMAT_VERSION]
ENTRY = "<|entry_sep|>"
CODE_END = "<|code_end|>"
FRAME = "<|frame_sep|>"
END_OF_FRAME = "<|action_sep|>"  # ends a generated frame; the action follows it
LINENO = "<|lineno_sep|>"
STACK = "<|stack_sep|>"
DEPTH = "<|depth_sep|>"
SRC = "<|src_sep|>"
ARG = "<|arg_sep|>"
STDOUT = "<|stdout_sep|>"
TRACE_END = "<|trace_end|>"  # ends an exit frame that nothing follows
STOP_TOKENS = (END_OF_FRAME, TRACE_END)  # where generation of one frame stops

EVENT_TOKENS: dict[tuple[bool, StateEvent], str] = {  # (inverse, event) -> token
    **{(False, e): f"<|{e}_sep|>" for e in ("call", "line", "return", "exception")},
    **{(True, e): f"<|inv_{e}_sep|>" for e in ("call", "line", "return", "exception")},
    (True, "inv_line_call"): "<|inv_line_call_sep|>",
}
ACTION_TOKENS: dict[ActionKind, str] = {k: f"<|{k}|>" for k in get_args(ActionKind)}
EXIT_TOKENS: dict[ExitCode, str] = {c: f"<|exit_{c}|>" for c in ("normal", "error", "never")}
# A tokenizer trained now holds the current version's token only; a checkpoint of an older version keeps
# its own (engine.neural.format_version reads which).
SPECIAL_TOKENS: list[str] = [
    TRACE_START, VERSION, ENTRY, CODE_END, FRAME, END_OF_FRAME, LINENO, STACK, DEPTH, SRC, ARG, STDOUT,
    TRACE_END, *EVENT_TOKENS.values(), *ACTION_TOKENS.values(), *EXIT_TOKENS.values(),
]

MAX_PROGRAM_LINES = 100_000  # a header's line numbers (gaps are filled with empty lines when read)
MAX_LINE = 999_999_999  # line numbers and depths have at most 9 digits, so parsing never builds huge ints
VALUE_EVENTS = ("return", "exception")  # frames that carry a value instead of locals
LOCALS_EVENTS = ("call", "line", "inv_line_call")  # states whose locals a following diff can refer to
DIFF_KEY = ".."  # `"..": ".."` stands for all unchanged variables

_EVENT_OF = {tok: key for key, tok in EVENT_TOKENS.items()}
_ACTION_OF = {tok: kind for kind, tok in ACTION_TOKENS.items()}
_EXIT_OF = {tok: code for code, tok in EXIT_TOKENS.items()}
_KNOWN = frozenset(SPECIAL_TOKENS) | frozenset(VERSION_TOKENS.values())
_TOKEN = re.compile(r"<\|[a-z0-9_]{1,40}\|>")
_INT = re.compile(r"[0-9]{1,9}")
_LINES = re.compile(r"[0-9]{1,9}(?:,[0-9]{1,9})*")
# Free text never contains "<|", so every "<|" in a trace starts a special token: "<" + k backslashes
# + "|" is written with k + 1 backslashes. Python source almost never contains "<|", so text stays raw.
_ESC = re.compile(r"<(\\*)\|")
_UNESC = re.compile(r"<\\(\\*)\|")


class FormatError(BaseModel):
    """Why a text is not a valid trace: what is wrong and the character offset where it was found."""

    message: str
    position: int

    def __str__(self) -> str:
        return f"{self.message} (at offset {self.position})"


class ParsedTrajectory(BaseModel):
    version: int = FORMAT_VERSION
    code: str
    entry: str | None = None
    inverse: bool = False  # mode of the event frames (False when there are none)
    steps: list[tuple[State, Action | None]]  # full locals, as `serialize` took them

    @property
    def program(self) -> Program:
        return Program(source=self.code, entry=self.entry)


# ---------------------------------------------------------------- shared rules


def _escape(text: str) -> str:
    return _ESC.sub(r"<\\\1|", text)


def _json(obj: Any) -> str:
    return _escape(json.dumps(obj, ensure_ascii=False, separators=(", ", ": ")))


def _same_frame(prev: State | None, stack: list[StackFrame], depth: int) -> bool:
    """Same function instance as `prev` (as far as states tell): then stack and depth are not written."""
    return (
        prev is not None and prev.exit is None and bool(prev.stack) and len(prev.stack) == len(stack)
        and prev.stack[:-1] == stack[:-1] and prev.stack[-1].function == stack[-1].function
        and prev.depth == depth
    )


def _diff_base(prev: State | None, event: str, stack: list[StackFrame], depth: int) -> dict[str, str] | None:
    """The locals a diff refers to, or None when the full dict must be written."""
    if prev is None or event == "call" or prev.event not in LOCALS_EVENTS:
        return None
    return prev.locals if _same_frame(prev, stack, depth) else None


# ---------------------------------------------------------------- serialization


def _problem(state: State, inverse: bool) -> str | None:
    """Why `state` cannot be written so that it parses back equal, or None."""
    if state.event == "exit" or state.exit is not None:
        if state.event != "exit" or state.exit is None:
            return "event 'exit' and an exit code go together"
        if (state.line, state.function, state.source, state.value) != (None,) * 4 or state.locals \
                or state.stack or state.depth:
            return "an exit state carries only exit, exit_reason and stdout"
        return None
    if state.exit_reason is not None:
        return "exit_reason on a non-exit state"
    if state.line is None or not 0 <= state.line <= MAX_LINE or state.source is None:
        return f"a line in 0..{MAX_LINE} and a source are required"
    if not state.stack or (state.stack[-1].function, state.stack[-1].line) != (state.function, state.line):
        return "the stack must end with the state's (function, line)"
    if any(not 0 <= f.line <= MAX_LINE for f in state.stack) or not 0 <= state.depth <= MAX_LINE:
        return f"stack lines and depth must be in 0..{MAX_LINE}"
    if state.value is not None and state.event not in VALUE_EVENTS:
        return "only return and exception states carry a value"
    if (inverse, state.event) not in EVENT_TOKENS:
        return f"event {state.event!r} does not exist in {'inverse' if inverse else 'forward'} traces"
    if DIFF_KEY in state.locals:
        return f"{DIFF_KEY!r} is reserved for diffs"
    return None


def _locals_text(locals_: dict[str, str], base: dict[str, str] | None) -> str:
    if base is None or base.keys() - locals_.keys():  # no reference, or a deletion a diff cannot express
        return _json(locals_)
    return _json({DIFF_KEY: DIFF_KEY, **{k: v for k, v in locals_.items() if base.get(k) != v}})


def number_lines(text: str, shown: frozenset[int] | None = None) -> str:
    """The program as the header writes it: `<|lineno_sep|>N<|src_sep|>` before each line, the way
    frames write a line number and its source, so the model can read a line's number next to its text
    (and match a frame's source line against the header) instead of counting newlines. Lines are what
    Python's compiler counts (split at "\n"); each keeps its newline; the empty piece after a final
    newline is no line. `text` is already escaped (escaping never touches newlines). With `shown`, only
    those lines are written (a program view), each with its own number."""
    pieces = text.split("\n")
    if pieces[-1] == "":
        pieces.pop()
        ends = ["\n"] * len(pieces)
    else:
        ends = ["\n"] * (len(pieces) - 1) + [""]
    return "".join(
        f"{LINENO}{n}{SRC}{piece}{end}"
        for n, (piece, end) in enumerate(zip(pieces, ends, strict=True), 1)
        if shown is None or n in shown
    )


def header_lines(program: Program) -> list[str]:
    """Each program line as the header writes it (`number_lines`), for pricing a view line by line."""
    text = _escape(program.source)
    return [LINENO + piece for piece in number_lines(text).split(LINENO)[1:]]


def serialize_header(program: Program, version: int = FORMAT_VERSION, shown: frozenset[int] | None = None) -> str:
    """The program (all of it, or the lines of a view) and its entry, in a checkpoint's `version`."""
    entry = "" if program.entry is None else ENTRY + _escape(program.entry)
    return TRACE_START + VERSION_TOKENS[version] + number_lines(_escape(program.source), shown) + entry + CODE_END


def serialize_frame(state: State, prev_state: State | None, inverse: bool) -> str:
    """`<|frame_sep|>` and the state's fields, without the terminator. Raises ValueError (see _problem)."""
    problem = _problem(state, inverse)
    if problem:
        raise ValueError(f"cannot serialize state: {problem}: {state!r}")
    stdout = STDOUT + _json(state.stdout) if state.stdout else ""
    if state.exit is not None:
        reason = "" if state.exit_reason is None else ARG + _json(state.exit_reason)
        return FRAME + EXIT_TOKENS[state.exit] + reason + stdout
    assert state.line is not None and state.source is not None  # checked by _problem
    parts = [FRAME, EVENT_TOKENS[inverse, state.event], LINENO, str(state.line)]
    if not _same_frame(prev_state, state.stack, state.depth):  # scope change: write where we are
        parts += [STACK, _json([[f.function, f.line] for f in state.stack])]
        if state.depth != len(state.stack) - 1:
            parts += [DEPTH, str(state.depth)]
    base = _diff_base(prev_state, state.event, state.stack, state.depth)
    src = SRC + _escape(state.source)
    if state.event in VALUE_EVENTS:
        parts += [src, ARG, _json(state.value)]
        if state.locals != (base if base is not None else {}):  # optional: omitted means "unchanged"
            parts += [ARG, _locals_text(state.locals, base)]
    elif state.event == "line" and not inverse:  # ND's order for forward lines: locals first
        parts += [ARG, _locals_text(state.locals, base), src]
    else:
        parts += [src, ARG, _locals_text(state.locals, base)]
    return "".join(parts) + stdout


def frame_target(state: State, prev_state: State | None, inverse: bool) -> str:
    """What a model generates for `state`: the frame and its stop token (TRACE_END for an exit)."""
    return serialize_frame(state, prev_state, inverse) + (TRACE_END if state.exit else END_OF_FRAME)


def serialize_action(action: Action) -> str:
    """The action's token(s), e.g. `<|step_over|>` or `<|breakpoint|>12,15`."""
    if action.kind != "breakpoint":
        if action.lines:
            raise ValueError(f"{action.kind} takes no lines: {action!r}")
        return ACTION_TOKENS[action.kind]
    if not action.lines or not all(1 <= n <= MAX_LINE for n in action.lines):
        raise ValueError(f"breakpoint needs lines in 1..{MAX_LINE}: {action!r}")
    return ACTION_TOKENS["breakpoint"] + ",".join(map(str, action.lines))


def serialize(program: Program, steps: list[tuple[State, Action | None]], inverse: bool = False) -> str:
    """Header and frames. A last step with an action makes a prompt: the next frame is what follows."""
    parts = [serialize_header(program)]
    prev = None
    for i, (state, action) in enumerate(steps):
        if action is None and i < len(steps) - 1:
            raise ValueError(f"step {i} has no action but is not the last step")
        end = TRACE_END if state.exit and action is None else END_OF_FRAME
        parts += [serialize_frame(state, prev, inverse), end, serialize_action(action) if action else ""]
        prev = state
    return "".join(parts)


# ---------------------------------------------------------------- parsing


class _Fail(Exception):
    def __init__(self, message: str, position: int):
        super().__init__(message)
        self.message, self.position = message, position


class _Cursor:
    """The special tokens of a text, each with the free text that follows it up to the next token."""

    def __init__(self, text: str):
        self.items: list[tuple[str, str, int]] = []  # (token, text after it, offset of the token)
        self.i, self.end = 0, len(text)
        p = text.find("<|")
        if p != 0 and text:
            raise _Fail("text before the first special token", 0)
        while p >= 0:
            m = _TOKEN.match(text, p)
            if m is None or m.group() not in _KNOWN:
                raise _Fail(f"unknown special token {text[p:p + 30]!r}", p)
            q = text.find("<|", m.end())
            self.items.append((m.group(), text[m.end():q if q >= 0 else len(text)], p))
            p = q

    def peek(self) -> str | None:
        return self.items[self.i][0] if self.i < len(self.items) else None

    def take(self, *expected: str) -> tuple[str, str, int]:
        """The next token (one of `expected`), its text (unescaped) and the text's offset."""
        if self.i == len(self.items):
            raise _Fail(f"expected {' or '.join(expected)}, got end of text", self.end)
        tok, text, pos = self.items[self.i]
        if tok not in expected:
            raise _Fail(f"expected {' or '.join(expected)}, got {tok}", pos)
        self.i += 1
        return tok, _UNESC.sub(r"<\1|", text), pos + len(tok)

    def bare(self, *expected: str) -> str:
        tok, text, pos = self.take(*expected)
        if text:
            raise _Fail(f"unexpected text after {tok}", pos)
        return tok

    def text(self, tok: str) -> str:
        return self.take(tok)[1]

    def number(self, tok: str) -> int:
        _, text, pos = self.take(tok)
        if not _INT.fullmatch(text):
            raise _Fail(f"{tok} needs a number of at most 9 digits", pos)
        return int(text)

    def load(self, tok: str) -> tuple[Any, int]:
        _, text, pos = self.take(tok)
        try:
            return json.loads(text, object_pairs_hook=_unique_keys), pos
        except (ValueError, RecursionError) as exc:  # also huge ints and deep nesting
            raise _Fail(f"bad JSON after {tok}: {exc}", pos) from None

    def string(self, tok: str, nullable: bool = False) -> str | None:
        value, pos = self.load(tok)
        if not isinstance(value, str) and not (nullable and value is None):
            raise _Fail(f"{tok} needs a JSON string{' or null' if nullable else ''}", pos)
        return value

    def variables(self, base: dict[str, str] | None) -> dict[str, str]:
        value, pos = self.load(ARG)
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise _Fail("locals must be a JSON object of strings", pos)
        if DIFF_KEY not in value:
            return value
        if value.pop(DIFF_KEY) != DIFF_KEY:
            raise _Fail(f"the diff marker must be {DIFF_KEY!r}: {DIFF_KEY!r}", pos)
        if base is None:
            raise _Fail("a locals diff needs a previous call or line state of the same frame", pos)
        return {**base, **value}


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("duplicate key")
    return obj


def _stack(cur: _Cursor, line: int) -> list[StackFrame]:
    value, pos = cur.load(STACK)
    ok = isinstance(value, list) and value and all(
        isinstance(f, list) and len(f) == 2 and isinstance(f[0], str)
        and type(f[1]) is int and 0 <= f[1] <= MAX_LINE for f in value
    )
    if not ok:
        raise _Fail(f"the stack must be a non-empty list of [function, line] with lines in 0..{MAX_LINE}", pos)
    if value[-1][1] != line:
        raise _Fail(f"the stack ends at line {value[-1][1]}, the frame is at line {line}", pos)
    return [StackFrame(function=f, line=n) for f, n in value]


def _frame(cur: _Cursor, prev: State | None, inverse: bool | None) -> tuple[State, bool | None]:
    """One frame up to its terminator; `inverse` None accepts either mode. Returns the state and its mode."""
    cur.bare(FRAME)
    tok = cur.bare(*_EVENT_OF, *_EXIT_OF)
    if tok in _EXIT_OF:
        reason = cur.string(ARG) if cur.peek() == ARG else None
        stdout = cur.string(STDOUT) if cur.peek() == STDOUT else ""
        return State.exit_state(_EXIT_OF[tok], reason, stdout or ""), None
    mode, event = _EVENT_OF[tok]
    if inverse is not None and mode != inverse:
        raise _Fail(f"{tok} in a {'inverse' if inverse else 'forward'} trace", cur.items[cur.i - 1][2])
    line = cur.number(LINENO)
    if cur.peek() == STACK:
        stack = _stack(cur, line)
        depth = cur.number(DEPTH) if cur.peek() == DEPTH else len(stack) - 1
    elif prev is None or prev.exit is not None or not prev.stack:
        raise _Fail(f"a frame after a scope change needs {STACK}", cur.items[cur.i - 1][2])
    else:
        stack = [*prev.stack[:-1], StackFrame(function=prev.stack[-1].function, line=line)]
        depth = prev.depth
    base = _diff_base(prev, event, stack, depth)
    value = None
    if event in VALUE_EVENTS:
        source = cur.text(SRC)
        value = cur.string(ARG, nullable=True)
        locals_ = cur.variables(base) if cur.peek() == ARG else dict(base or {})
    elif event == "line" and not mode:
        locals_ = cur.variables(base)
        source = cur.text(SRC)
    else:
        source = cur.text(SRC)
        locals_ = cur.variables(base)
    stdout = cur.string(STDOUT) if cur.peek() == STDOUT else ""
    state = State(event=event, line=line, function=stack[-1].function, source=source, locals=locals_,
                  value=value, stack=stack, stdout=stdout or "", depth=depth)
    return state, mode


def _action(cur: _Cursor) -> Action:
    tok, text, pos = cur.take(*_ACTION_OF)
    kind = _ACTION_OF[tok]
    if kind != "breakpoint":
        if text:
            raise _Fail(f"unexpected text after {tok}", pos)
        return Action(kind=kind)
    lines = tuple(int(n) for n in text.split(",")) if _LINES.fullmatch(text) else ()
    if not lines or min(lines) < 1:
        raise _Fail(f"{tok} needs line numbers in 1..{MAX_LINE}, comma separated", pos)
    return Action(kind=kind, lines=lines)


def _source_lines(cur: _Cursor) -> str:
    """The program from the header's numbered lines (see number_lines); the lines a view leaves out
    come back empty, so that every line keeps its number."""
    pieces: list[str] = []
    while cur.peek() == LINENO:
        if pieces and not pieces[-1].endswith("\n"):
            raise _Fail("only the last line of the program may lack its newline", cur.items[cur.i][2])
        n = cur.number(LINENO)
        if n <= len(pieces):
            raise _Fail(f"program line {n} where line {len(pieces) + 1} or later was expected", cur.items[cur.i - 1][2])
        if n > MAX_PROGRAM_LINES:
            raise _Fail(f"program line {n} is past the {MAX_PROGRAM_LINES}-line limit", cur.items[cur.i - 1][2])
        pieces.extend(["\n"] * (n - 1 - len(pieces)))
        _, piece, pos = cur.take(SRC)
        if "\n" in piece[:-1]:
            raise _Fail("a program line holds a newline", pos)
        pieces.append(piece)
    return "".join(pieces)


def _parse(text: str) -> ParsedTrajectory:
    if not isinstance(text, str):
        raise _Fail("input is not a string", 0)
    cur = _Cursor(text)
    cur.bare(TRACE_START)
    version_token = cur.bare(*VERSION_TOKENS.values())
    version = next(v for v, tok in VERSION_TOKENS.items() if tok == version_token)
    code = _source_lines(cur)
    entry = cur.text(ENTRY) if cur.peek() == ENTRY else None
    cur.bare(CODE_END)
    steps: list[tuple[State, Action | None]] = []
    prev, inverse = None, None
    while cur.peek() is not None:
        state, mode = _frame(cur, prev, inverse)
        inverse = mode if inverse is None else inverse  # the first event frame fixes the mode
        end = cur.bare(END_OF_FRAME, *((TRACE_END,) if state.exit else ()))
        # After <|action_sep|> an action is required, except at the very end of a non-exit frame.
        action = None if end == TRACE_END or (cur.peek() is None and not state.exit) else _action(cur)
        if end == TRACE_END and cur.peek() is not None:
            raise _Fail(f"text after {TRACE_END}", cur.items[cur.i][2])
        steps.append((state, action))
        prev = state
    return ParsedTrajectory(version=version, code=code, entry=entry, inverse=bool(inverse), steps=steps)


def parse(text: str) -> ParsedTrajectory | FormatError:
    """Read a whole trace (or a prompt: one ending in an action). Never raises."""
    try:
        return _parse(text)
    except _Fail as fail:
        return FormatError(message=fail.message, position=fail.position)


def parse_frame(frame_text: str, prev_state: State | None, inverse: bool) -> State | FormatError:
    """Read one generated frame (`frame_target`'s text; the stop token may be missing). Never raises."""
    try:
        if not isinstance(frame_text, str):
            raise _Fail("input is not a string", 0)
        cur = _Cursor(frame_text)
        state, _ = _frame(cur, prev_state, inverse)
        if cur.peek() is not None:
            cur.bare(END_OF_FRAME, *((TRACE_END,) if state.exit else ()))
        if cur.peek() is not None:
            raise _Fail("text after the end of the frame", cur.items[cur.i][2])
        return state
    except _Fail as fail:
        return FormatError(message=fail.message, position=fail.position)
