#!/usr/bin/env python3
"""Drive the real pdb programmatically and print where it stops: the reference for the oracle.

Usage:
    python tests/support/pdb_driver.py PROGRAM [--entry EXPR] --actions A1,A2,... [--actions B1,B2,...]

Actions are the debugger MDP's forward actions: step_into, step_over, step_return, continue and
breakpoint:L (or breakpoint:L1,L2). Each `--actions` list is one independent run of the program in
this process (fresh globals, fresh debugger); giving several saves interpreter start-ups. An empty
list (`--actions ""`) is allowed.

Output: one JSON object per line on the ORIGINAL stdout, one per stop:
    {"run": 0, "action": "step_over" | null, "implicit": false,
     "event": "call" | "line" | "return" | "exception" | "exit",
     "line": int | null, "function": str | null, "locals": {name: repr},
     "value": repr | null, "stdout": str, "exit": null | "normal" | "error"}
`action` is the action that led to the stop (null for the first stop). `value` is the returned
value (return events) or the exception (exception events). `stdout` is what the program printed
since the previous stop. When the actions run out before the program ends, the driver continues
with no breakpoints and prints the exit record with `"implicit": true`. A final exit record is
always printed per run ("error" when an exception escaped the program, with `exit_reason`;
SystemExit counts as a process exit status would: code 0 or None is "normal").

The program's own prints never reach the JSON stream: `sys.stdout` is replaced by an in-memory
buffer while the program runs (its content is reported in the `stdout` field); pdb's own messages
go to /dev/null. The JSON stream is written to the stdout object saved at start.

How actions map onto pdb commands (issued with `Pdb.onecmd`, pdb's own command implementations):
    step_into -> "step", step_over -> "next", step_return -> "return", continue -> "continue",
    breakpoint:L -> "tbreak L" then "continue".
All breakpoints are cleared at every stop (so a breakpoint lives for one action only, and
`continue` always means "run to the end").

Only the program's own file is user code: `stop_here` refuses every frame whose co_filename is not
the program's path (stdlib, `<string>` frames such as the entry expression or dataclass-generated
methods), and exception stops outside the file are ignored. Module mode runs the compiled program
with `Pdb.run` (first stop: the module's first line). Entry mode executes the module WITHOUT the
debugger, then `Pdb.runeval(EXPR)` (first stop: the `--Call--` of the entry function).
Locals of namespaces (the module, class bodies) leave out dunders and modules; pdb's own `__return__`
and `__exception__` keys are always left out. Memory addresses in reprs are normalized: " at 0x7f..." is removed.

Real pdb keeps the last stopped frame's locals dict alive until the next stop (`curframe_locals`),
which delays the finalization of objects referenced only from there (e.g. an unfinished generator
held by a function that just returned) to a moment when nothing is traced. `--release-locals`
drops that reference at the end of each stop; it is off by default (the reference is pdb's
behaviour).
"""

from __future__ import annotations

import argparse
import bdb
import builtins
import importlib.util
import inspect
import io
import json
import os
import pdb
import re
import sys
import types
from typing import Any, TextIO

_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
_COMMANDS = {"step_into": "step", "step_over": "next", "step_return": "return", "continue": "continue"}
MAX_STOPS = 20000  # safety net: a run that stops more often than this is quit


def normalize(text: str) -> str:
    return _ADDRESS.sub("", text)


def _load_tracer() -> types.ModuleType:
    """The tracer module (standard library only), for how the oracle writes the program's objects."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "model_backend", "tracer.py")
    spec = importlib.util.spec_from_file_location("_ndb_tracer", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_TRACER = _load_tracer()


def safe_repr(value: object) -> str:
    """repr(value) as the tracer writes it (the same text as Python's repr, a failing __repr__ written
    `<repr failed: E>`), so that the program's objects without a __repr__ read as the oracle writes
    them (trace format 3: `Node(val=1, next=None)`, where pdb prints `<__main__.Node object at 0x..>`):
    a display choice of the debugger, not a difference in where it stops or what it binds."""
    return normalize(_TRACER.safe_repr(value, 1 << 30))


def parse_actions(text: str) -> list[str]:
    """Split `step_into,breakpoint:7,breakpoint:3,9,continue` (a breakpoint may list several lines)."""
    actions: list[str] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if part.isdigit() and actions and actions[-1].startswith("breakpoint:"):
            actions[-1] += "," + part
            continue
        name, _, arg = part.partition(":")
        if name == "breakpoint":
            if not arg.isdigit():
                raise SystemExit(f"bad breakpoint action {part!r}")
        elif name not in _COMMANDS or arg:
            raise SystemExit(f"unknown action {part!r}")
        actions.append(part)
    return actions


def visible_locals(frame: types.FrameType) -> dict[str, str]:
    # Namespaces (the module, class bodies: code without CO_NEWLOCALS) show only the user's names.
    namespace = frame.f_code.co_name == "<module>" or not frame.f_code.co_flags & inspect.CO_NEWLOCALS
    result: dict[str, str] = {}
    for name, value in frame.f_locals.items():
        if name in ("__return__", "__exception__"):
            continue  # pdb's own bookkeeping
        if namespace and (
            (name.startswith("__") and name.endswith("__")) or isinstance(value, types.ModuleType)
        ):
            continue
        result[name] = safe_repr(value)
    return result


class DriverPdb(pdb.Pdb):
    def __init__(
        self, path: str, actions: list[str], emit: Any, take_stdout: Any, release_locals: bool = False
    ) -> None:
        self.release_locals = release_locals  # set before Pdb.__init__, which calls forget()
        self._sink = open(os.devnull, "w")  # noqa: SIM115 - closed in close()
        super().__init__(stdin=io.StringIO(), stdout=self._sink, nosigint=True, readrc=False)
        self.path = path
        self.actions = list(actions)
        self.emit = emit
        self.take_stdout = take_stdout
        self.pending: str | None = None  # the action that leads to the next stop
        self.stops = 0
        self.errors: list[str] = []
        self._event = "line"
        self._value: str | None = None

    def close(self) -> None:
        self._sink.close()

    def forget(self) -> None:
        super().forget()
        if self.release_locals:
            # pdb.setup() caches the stopped frame's f_locals in curframe_locals and keeps it until the
            # next stop: objects only referenced from there (an unfinished generator in a returning
            # frame) are finalized at the next stop, inside the trace function, so untraced.
            self.curframe_locals = {}

    # --- which frames are user code -------------------------------------------------------------
    def is_user(self, frame: types.FrameType) -> bool:
        return frame.f_code.co_filename == self.path

    def stop_here(self, frame: types.FrameType) -> bool:
        if not self.is_user(frame):
            return False
        return super().stop_here(frame)

    # --- note the event kind, then let pdb decide ------------------------------------------------
    def user_call(self, frame: types.FrameType, argument_list: Any) -> None:
        self._event, self._value = "call", None
        super().user_call(frame, argument_list)

    def user_line(self, frame: types.FrameType) -> None:
        self._event, self._value = "line", None
        super().user_line(frame)

    def user_return(self, frame: types.FrameType, return_value: Any) -> None:
        if not self.is_user(frame):
            return
        self._event, self._value = "return", safe_repr(return_value)
        super().user_return(frame, return_value)

    def user_exception(self, frame: types.FrameType, exc_info: Any) -> None:
        if not self.is_user(frame):
            return  # e.g. the StopIteration rule of dispatch_exception firing in a stdlib frame
        self._event, self._value = "exception", safe_repr(exc_info[1])
        super().user_exception(frame, exc_info)

    def error(self, msg: str) -> None:
        self.errors.append(str(msg))

    # --- a stop: record it, then issue the next action as pdb commands ----------------------------
    def interaction(self, frame: types.FrameType | None, traceback: Any) -> None:
        assert frame is not None  # bdb always passes the stopped frame
        self.setup(frame, traceback)
        self.stops += 1
        record: dict[str, Any] = {
            "action": self.pending,
            "implicit": False,
            "event": self._event,
            "line": frame.f_lineno,
            "function": frame.f_code.co_name,
            "locals": visible_locals(frame),
            "value": self._value,
            "stdout": self.take_stdout(),
            "exit": None,
        }
        if self.errors:
            record["pdb_errors"], self.errors = self.errors, []
        self.emit(record)
        self.clear_all_breaks()
        if self.stops >= MAX_STOPS:
            self.onecmd("quit")
        elif self.actions:
            action = self.actions.pop(0)
            self.pending = action
            if action.startswith("breakpoint:"):
                for line in action.partition(":")[2].split(","):
                    self.onecmd(f"tbreak {int(line)}")
                self.onecmd("continue")
            else:
                self.onecmd(_COMMANDS[action])
        else:
            self.pending = None  # out of actions: run to the end
            self.onecmd("continue")
        self.forget()


def reset_breakpoints() -> None:
    bdb.Breakpoint.next = 1
    bdb.Breakpoint.bplist = {}
    bdb.Breakpoint.bpbynumber = [None]


def run_once(
    path: str,
    source: str,
    entry: str | None,
    actions: list[str],
    run: int,
    out: TextIO,
    release_locals: bool = False,
) -> None:
    capture = io.StringIO()
    taken = 0

    def take_stdout() -> str:
        nonlocal taken
        text = capture.getvalue()[taken:]
        taken += len(text)
        return text

    def emit(record: dict[str, Any]) -> None:
        out.write(json.dumps({"run": run, **record}) + "\n")

    reset_breakpoints()
    debugger = DriverPdb(path, actions, emit, take_stdout, release_locals)
    code = compile(source, path, "exec")
    globs: dict[str, Any] = {"__name__": "__main__", "__file__": path, "__builtins__": builtins}
    exit_code, reason = "normal", None
    saved_stdout = sys.stdout
    sys.stdout = capture
    try:
        if entry is None:
            debugger.run(code, globs)
        else:
            exec(code, globs)  # definitions, not debugged
            take_stdout()
            debugger.runeval(entry, globs)
    except SystemExit as exc:  # like a process's exit status: 0 / None is a normal end
        if exc.code not in (None, 0):
            exit_code, reason = "error", f"SystemExit: {exc.code}"
    except BaseException as exc:  # the program's uncaught exception (BdbQuit is handled by bdb)
        exit_code, reason = "error", f"{type(exc).__name__}: {exc}"
    finally:
        sys.settrace(None)
        sys.stdout = saved_stdout
        debugger.close()
    if debugger.stops >= MAX_STOPS:
        exit_code, reason = "never", f"more than {MAX_STOPS} stops"
    record: dict[str, Any] = {
        "action": debugger.pending,
        "implicit": debugger.pending is None and debugger.stops > 0 and not debugger.actions,
        "event": "exit",
        "line": None,
        "function": None,
        "locals": {},
        "value": None,
        "stdout": take_stdout(),
        "exit": exit_code,
    }
    if reason:
        record["exit_reason"] = normalize(reason)
    emit(record)
    out.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("program")
    parser.add_argument("--entry", default=None, help="entry expression, e.g. 'f([1, 2])'")
    parser.add_argument(
        "--actions", action="append", default=None, help="comma-separated actions; repeat for more runs"
    )
    parser.add_argument(
        "--release-locals",
        action="store_true",
        help="not pdb: drop pdb's reference to the last stop's locals (see DriverPdb.forget)",
    )
    args = parser.parse_args(argv)
    path = os.path.realpath(args.program)
    with open(path, encoding="utf-8") as fh:
        source = fh.read()
    sys.modules["readline"] = None  # type: ignore[assignment]  # keep pdb from touching the terminal
    out = sys.stdout
    for run, text in enumerate(args.actions if args.actions is not None else [""]):
        run_once(path, source, args.entry, parse_actions(text), run, out, args.release_locals)
    return 0


if __name__ == "__main__":
    sys.exit(main())
