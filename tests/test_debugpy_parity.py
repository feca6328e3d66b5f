"""Parity with debugpy: the same DAP script, run against debugpy and against `ndb dap`, stops alike.

For every program below, one script (gutter breakpoints, then a fixed pattern of next / stepIn /
stepOut / continue, then continue until the program ends) is run against `python -m debugpy.adapter`
(launch: type python, justMyCode, internalConsole) and against `python -m dap_server dap` with
`{engine: "oracle", stepping: "debugpy"}`. Only what debugpy's capabilities allow is ever sent (never
stepBack: debugpy does not answer it). At every stop both sides are asked threads -> stackTrace ->
scopes -> variables, as VS Code does, and these fields must be exactly equal:

- the stop reason (`step`, `breakpoint`, `exception`) and the line;
- the stack frames that belong to the program (name and line, innermost first, `<module>` included);
- the Locals scope's plain variables, name and value. Normalized alike on both sides: debugpy's group
  entries (`special variables`, `function variables`, ...) and `(return) f` entries are dropped, as are
  values that are classes, functions or modules (debugpy files them under its groups, the adapter lists
  them), ` at 0x...` addresses are removed, and a repr that raised is written `<repr failed>` (debugpy
  shows the default `object.__repr__` then, the oracle trace records `<repr failed: Error>`).

The known difference after `stepOut` (docs/dap.md, "Stepping styles"): debugpy stops in the caller while
it is still on the call line; the adapter stops at the caller's next line. Scripts therefore follow every
stepOut with `continue` (both sides then run to the same breakpoint or the end), and at a stop made by
stepOut only the reason, the function stopped in and the frames below it are compared, not the top line
nor the locals (which are the caller's during the call on debugpy's side).

Programs: the module-mode programs of tests/programs (no `# entry:`), and tests/parity_programs/, copies
of entry-mode corpus programs that call their entry at module level (same line numbers). Breakpoints
come from each program's `# breakpoints:` header. The two sessions of one program run concurrently
(two adapters at a time, never more). Run `python tests/test_debugpy_parity.py NAME` to print both stop
sequences of one program.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import re
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.dap_client import DapClient, Session, TcpServer  # noqa: E402

pytestmark = pytest.mark.timeout(120)

CORPUS = ROOT / "tests" / "programs"
PARITY = ROOT / "tests" / "parity_programs"

# The fixed pattern after the first stop; then `continue` until the end (at most MAX_STOPS stops).
PATTERN: tuple[str, ...] = (
    "next", "stepIn", "next", "next", "stepOut", "continue",
    "stepIn", "stepIn", "next", "continue",
    "next", "stepIn", "stepOut", "continue",
)
MAX_STOPS = 30
STOP_TIMEOUT = 30.0

DEBUGPY_GROUPS = {"special variables", "function variables", "class variables", "module variables",
                  "protected variables"}
NOT_PLAIN = re.compile(r"<(class|function|module|built-in function|built-in method|bound method) ")
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
REPR_FAILED = re.compile(r"^<repr failed: .*>$")
DEFAULT_REPR = re.compile(r"^<__main__\.(\w+) object>$")


# ---- the programs ------------------------------------------------------------------------------------
def header_breakpoints(path: Path) -> tuple[int, ...]:
    for text in path.read_text(encoding="utf-8").splitlines()[:3]:
        if text.startswith("# breakpoints:"):
            return tuple(int(n) for n in re.findall(r"\d+", text))
    return ()


def is_entry_program(path: Path) -> bool:
    return any(t.startswith("# entry:") for t in path.read_text(encoding="utf-8").splitlines()[:3])


# Module-mode corpus programs left out, and why (checked against debugpy 1.8.22, see docs/dap.md).
EXCLUDED: dict[str, str] = {}


def programs() -> list[Path]:
    corpus = [p for p in sorted(CORPUS.glob("*.py")) if not is_entry_program(p) and p.stem not in EXCLUDED]
    return corpus + sorted(PARITY.glob("*.py"))


def program_id(path: Path) -> str:
    return ("parity/" if path.parent == PARITY else "") + path.stem


# ---- running one script ------------------------------------------------------------------------------
@dataclass
class StopView:
    command: str  # the command that led here ("launch" for the first stop)
    reason: str
    frames: list[tuple[str, int]]  # the program's own frames, innermost first
    variables: dict[str, str]

    def render(self) -> str:
        frames = ", ".join(f"{n}:{ln}" for n, ln in self.frames)
        variables = ", ".join(f"{k}={v}" for k, v in sorted(self.variables.items()))
        line = self.frames[0][1] if self.frames else "?"
        return f"after {self.command}: {self.reason} at line {line} | frames: {frames} | locals: {variables}"


def classes_with_repr(program: Path) -> set[str]:
    """Classes of the program that define __repr__ (debugpy falls back to object.__repr__ if it raises)."""
    tree = ast.parse(program.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and any(isinstance(f, ast.FunctionDef) and f.name == "__repr__" for f in node.body)}


def normalize_value(value: str, repr_classes: set[str]) -> str:
    value = ADDRESS.sub("", value)
    if REPR_FAILED.match(value):
        return "<repr failed>"
    m = DEFAULT_REPR.match(value)
    if m and m.group(1) in repr_classes:  # debugpy: the class's own __repr__ raised
        return "<repr failed>"
    return value


def plain_variables(variables: list[dict[str, Any]], repr_classes: set[str]) -> dict[str, str]:
    out = {}
    for v in variables:
        name, value = v["name"], v.get("value", "")
        if name.startswith("(") or name in DEBUGPY_GROUPS or NOT_PLAIN.match(value):
            continue
        out[name] = normalize_value(value, repr_classes)
    return out


def exception_filters(program: Path) -> list[str]:
    """`uncaught` for the programs that end with an uncaught exception, else none."""
    return ["uncaught"] if "uncaught" in program.stem else []


class Side:
    """One adapter session driven in lockstep with the other: send a command, then collect its stop."""

    def __init__(self, name: str, client: DapClient, program: Path, launch: dict[str, Any]) -> None:
        self.name = name
        self.client = client
        self.session = Session(self.client)
        self.program = str(program)
        self.launch_args = launch
        self.thread_id = 0
        self.mark = 0

    def launch(self, breakpoints: tuple[int, ...], exception_filters: list[str]) -> StopView | None:
        """initialize -> launch -> initialized -> setBreakpoints, setExceptionBreakpoints ->
        configurationDone -> launch response, then the first stop."""
        client = self.client
        self.session.initialize()
        self.session.program = self.program
        self.mark = client.mark()
        seq = client.send("launch", self.launch_args)
        client.wait_for(lambda m: (m.get("type") == "event" and m.get("event") == "initialized")
                        or (m.get("type") == "response" and m.get("request_seq") == seq),
                        since=self.mark, what="initialized event")
        self.session.set_breakpoints(list(breakpoints))
        client.request("setExceptionBreakpoints", {"filters": exception_filters})
        client.request("configurationDone")
        resp = client.response(seq)
        assert resp["success"], resp
        return self.collect("launch")

    def send(self, command: str) -> int:
        self.mark = self.client.mark()
        return self.client.send(command, {"threadId": self.thread_id})

    def collect(self, command: str, seq: int | None = None) -> StopView | None:
        """The stop a command led to (threads, stackTrace, scopes, variables), or None at the end."""
        client = self.client
        if seq is not None:
            resp = client.response(seq)
            assert resp["success"], f"{self.name}: {resp}"
        event = client.wait_for(lambda m: m.get("type") == "event"
                                and m.get("event") in ("stopped", "exited", "terminated"),
                                STOP_TIMEOUT, self.mark, what=f"{self.name}: a stop after {command}")
        self.mark = client.mark()
        if event["event"] != "stopped":
            return None
        body = event["body"]
        self.thread_id = body["threadId"]
        threads = client.request("threads")["body"]["threads"]
        assert any(t["id"] == self.thread_id for t in threads), threads
        frames = client.request("stackTrace", {"threadId": self.thread_id})["body"]["stackFrames"]
        own = [(f["name"], f["line"]) for f in frames if f.get("source", {}).get("path") == self.program]
        scopes = client.request("scopes", {"frameId": frames[0]["id"]})["body"]["scopes"]
        local = next(s for s in scopes if s["name"] == "Locals")
        variables = self.session.variables(local["variablesReference"])
        return StopView(command, body["reason"], own, plain_variables(variables, self.program_classes()))

    def program_classes(self) -> set[str]:
        return classes_with_repr(Path(self.program))

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError):
            self.client.request("disconnect", {"terminateDebuggee": True}, timeout=10)
        self.client.close()


def debugpy_side(program: Path) -> Side:
    return Side("debugpy", DapClient.stdio([sys.executable, "-m", "debugpy.adapter"]), program,
                {"type": "python", "request": "launch", "name": "parity", "program": str(program),
                 "justMyCode": True, "console": "internalConsole", "stopOnEntry": False,
                 "cwd": str(program.parent)})


def ndb_side(program: Path, tcp_port: int | None = None) -> Side:
    launch = {"program": str(program), "engine": "oracle", "stepping": "debugpy", "stopOnEntry": False}
    if tcp_port is None:
        return Side("ndb", DapClient.stdio([sys.executable, "-m", "dap_server", "dap"]), program, launch)
    return Side("ndb (tcp)", DapClient.tcp(tcp_port), program, launch)


def mid_line_in_caller(previous: StopView, theirs: StopView) -> int:
    """How many frames debugpy's stop left while stopping in a caller still on its call line (0: no).

    pydevd stops "in the back frame" at a return event when stepping in (stepIn at a function's last
    line, or at a yield; stepOut always), and when a `next` that returned into a caller goes on into
    that caller's own return. Then debugpy's frames are exactly the callers of the previous stop, lines
    unchanged. A `next` that returns only one frame stops at the caller's next line event (which, in a
    loop on one line such as a comprehension, is the same line): that is an ordinary stop.
    """
    if theirs.command == "continue" or theirs.reason != "step":
        return 0
    deb, prev = theirs.frames, previous.frames
    k = len(prev) - len(deb)
    if not deb or k < 1 or deb != prev[k:]:
        return 0
    if theirs.command == "next" and k < 2:
        return 0
    return k


def later_in_same_stack(theirs: StopView, ours: StopView) -> bool:
    """ndb's stop is in a frame of debugpy's stack (or called from its top frame): a later point."""
    deb, mine = theirs.frames, ours.frames
    if not mine:
        return False
    below = mine[1:]
    if len(below) > len(deb) or (below and deb[len(deb) - len(below):] != below):
        return False
    return len(below) == len(deb) or mine[0][0] == deb[len(deb) - len(mine)][0]


@dataclass
class Transcript:
    script: list[str]
    debugpy: list[str]
    ndb: list[str]
    known: int = 0  # stops that showed the known difference (debugpy in a caller, mid-line)
    ended_early: str = ""  # why the comparison stopped before the program ended


def where(stop: StopView | None) -> str:
    if stop is None:
        return "the end of the program"
    top = f"{stop.frames[0][0]}:{stop.frames[0][1]}" if stop.frames else "?"
    return f"{stop.reason} at {top}"


def run_script(program: Path, pattern: tuple[str, ...] = PATTERN, tcp_port: int | None = None,
               breakpoints: tuple[int, ...] | None = None) -> Transcript:
    """Run the script on both adapters in lockstep; with `tcp_port`, ndb is reached over TCP.

    The script is the pattern, then `continue` until the end (at most MAX_STOPS commands). At a stop
    where debugpy is in a caller still on its call line (the known difference), ndb is at a later
    point; the two are re-aligned before the pattern goes on:
    - ndb stopped at a line (a step): the next command is `continue` on both sides; no breakpoint lies
      between the two points (ndb checked every line event on the way), so both run to the same
      breakpoint or to the end;
    - ndb stopped at a breakpoint or an exception, or the program ended: that is the next stop debugpy
      reaches with `continue`, so debugpy alone is sent one `continue`, and its stop must equal ndb's.
    """
    breakpoints = header_breakpoints(program) if breakpoints is None else breakpoints
    filters = exception_filters(program)
    theirs_side = debugpy_side(program)
    ours_side = ndb_side(program, tcp_port)
    transcript = Transcript([], [], [])

    def record(theirs: StopView | None, ours: StopView | None, label: str | None = None) -> None:
        for view, out in ((theirs, transcript.debugpy), (ours, transcript.ndb)):
            if view is not None and label:
                view = StopView(label, view.reason, view.frames, view.variables)
            out.append("exited" if view is None else view.render())

    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            first = pool.submit(theirs_side.launch, breakpoints, filters)
            ours = ours_side.launch(breakpoints, filters)
            theirs = first.result()
        record(theirs, ours)
        commands = iter(pattern)
        while theirs is not None and ours is not None:
            if len(transcript.script) >= MAX_STOPS:
                transcript.ended_early = f"cut after {MAX_STOPS} commands"
                break
            command = next(commands, "continue")
            transcript.script.append(command)
            previous = theirs
            seqs = theirs_side.send(command), ours_side.send(command)
            theirs = theirs_side.collect(command, seqs[0])
            ours = ours_side.collect(command, seqs[1])
            k = mid_line_in_caller(previous, theirs) if theirs is not None else 0
            if not k:
                record(theirs, ours)
                continue
            assert theirs is not None
            transcript.known += 1
            text = (f"after {command}: step, debugpy in a caller still on its call line "
                    f"{theirs.frames[0][0]}:{theirs.frames[0][1]} ({k} frame(s) up; known difference, "
                    f"not compared), ndb: {where(ours)}")
            if ours is not None and ours.reason == "step" and later_in_same_stack(theirs, ours):
                transcript.debugpy.append(text)
                transcript.ndb.append(text)
                transcript.script.append("continue")
                seqs = theirs_side.send("continue"), ours_side.send("continue")
                theirs = theirs_side.collect("continue", seqs[0])
                ours = ours_side.collect("continue", seqs[1])
                record(theirs, ours)
            elif ours is None or ours.reason in ("breakpoint", "exception"):
                transcript.debugpy.append(text)
                transcript.ndb.append(text)
                transcript.script.append("(debugpy only: continue)")
                theirs = theirs_side.collect("continue", theirs_side.send("continue"))
                record(theirs, ours, label=f"{command} (debugpy: {command} + continue)")
            else:
                record(theirs, ours)
    finally:
        theirs_side.close()
        ours_side.close()
    return transcript


def assert_same(program: Path, transcript: Transcript) -> None:
    if transcript.debugpy != transcript.ndb:
        diff = "\n".join(difflib.unified_diff(transcript.debugpy, transcript.ndb, "debugpy",
                                              "ndb (oracle, stepping=debugpy)", lineterm="", n=3))
        pytest.fail(f"{program_id(program)}: breakpoints {list(header_breakpoints(program))}, exception "
                    f"filters {exception_filters(program)}, script {' '.join(transcript.script)}\n{diff}",
                    pytrace=False)


# ---- the tests ---------------------------------------------------------------------------------------
PROGRAMS = programs()


def test_enough_programs() -> None:
    assert len(PROGRAMS) >= 20


@pytest.mark.parametrize("program", PROGRAMS, ids=program_id)
def test_same_stops_as_debugpy(program: Path) -> None:
    transcript = run_script(program)
    assert len(transcript.debugpy) > 1, f"debugpy never stopped: {transcript.debugpy}"
    assert_same(program, transcript)


def test_parity_over_tcp() -> None:
    """The same comparison with the adapter served over TCP (`ndb dap --port 0`, i.e. serve_tcp)."""
    server = TcpServer()
    try:
        program = CORPUS / "class_basic.py"
        transcript = run_script(program, tcp_port=server.port)
        assert len(transcript.debugpy) > 2
        assert_same(program, transcript)
    finally:
        server.close()


if __name__ == "__main__":
    import time

    names = sys.argv[1:] or [program_id(p) for p in PROGRAMS]
    for name in names:
        path = next(p for p in PROGRAMS if program_id(p) == name or p.stem == name)
        t0 = time.monotonic()
        t = run_script(path)
        print(f"== {program_id(path)} bps {list(header_breakpoints(path))} ({time.monotonic() - t0:.1f}s, "
              f"{t.known} known) script: {' '.join(t.script)}" + (f" [ENDED: {t.ended_early}]" if t.ended_early else ""))
        a, b = t.debugpy, t.ndb
        for x, y in zip(a + [""] * (len(b) - len(a)), b + [""] * (len(a) - len(b))):
            print(("   " if x == y else "XX ") + x + ("" if x == y else "\n   " + y))
