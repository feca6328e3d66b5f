"""Parity with debugpy: one DAP script, run against debugpy and against `ndb dap`, stops alike.

For each program, one script is run against `python -m debugpy.adapter` (launch: type python, justMyCode,
console internalConsole, stopOnEntry false) and against `python -m dap_server dap` (launch: engine
oracle, stepping debugpy, stopOnEntry false), in lockstep: every command goes to both, then both stops
are read as VS Code reads them (threads -> stackTrace -> scopes -> variables). The script: the
program's `# breakpoints:` header as gutter breakpoints (setBreakpoints, then setExceptionBreakpoints:
`uncaught` for the programs named `*uncaught*`, else none), then PATTERN (or the program's own
`# script:` header), then `continue` until the program ends, at most MAX_STOPS commands. Only what
debugpy's capabilities allow is ever sent: no stepBack (debugpy never answers it).

Compared, exactly, as rendered lines (a difference fails with a unified diff of the two transcripts):
- the breakpoints answer: verified or not, and the line;
- at every stop: the stop reason (`step`, `breakpoint`, `exception`), the stop line, the frames that
  belong to the program (name:line, innermost first, `<module>` included), and the Locals scope's plain
  variables (name=value, sorted), each of the program's objects with the default repr expanded one level
  (`node.val=2`; its properties, whose getters debugpy runs and the oracle does not, and `_protected`
  names, which debugpy files under a group, left out). Normalized alike on both sides: debugpy's group entries (`special
  variables`, `function variables`, ...) are dropped, as are values that are classes, functions or
  modules (debugpy files those under its groups; the adapter lists them), a container nested three deep
  is written as pydevd's SafeRepr writes it (`[('add', (...), 3)]`),
  ` at 0x...` is removed, and a repr that raised is written `<repr failed>` (the oracle trace records
  `<repr failed: Error>`; debugpy shows `object.__repr__`, i.e. `<__main__.C object>` for a class of the
  program that defines __repr__);
- `exited` when the program ends.

Stops in a caller still on its call line (debugpy's stepOut, stepIn at a function's last line or at a
yield, a `next` that returns through two frames) are compared like any other: the adapter makes them too
(docs/dap.md, "Stepping styles"), with debugpy's `(return) f` entries, which are compared by value (a
returned object is not expanded: debugpy shows it as it is now, the adapter as it was returned).
Breakpoints may carry a condition, a hit condition or a log message (the `# specs:` header, JSON by line);
the exception filters are `uncaught` for the programs named `*uncaught*`, `raised` for `*raised*`.

Programs: DEFAULT_PROGRAMS (module-mode programs of tests/programs, the programs written for parity in
tests/parity_programs, and variants written at load time by tests/support/module_mode.py: module-mode
variants of entry-mode corpus programs, the entry called at module level, same line numbers, and script
variants of module-mode ones, with breakpoints and a script of their own; all named `parity/NAME` but
the first); with NDB_PARITY_ALL=1 every one of them. KNOWN_BUGS are adapter mismatches, marked
xfail(strict). The sessions run on a 2-worker pool (at most two debugpy sessions at a time), each
program's two adapters concurrently. `python tests/dap_server/test_debugpy_parity.py [NAME ...]` prints both
transcripts side by side.
"""

from __future__ import annotations

import ast
import contextlib
import difflib
import json
import os
import re
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.dap_client import DapClient, Session, TcpServer  # noqa: E402
from tests.support.module_mode import PARITY_DIR as PARITY  # noqa: E402
from tests.support.module_mode import write_script_variants, write_variants  # noqa: E402

pytestmark = pytest.mark.timeout(240)

CORPUS = ROOT / "tests" / "programs"

# After the first stop: this pattern, then `continue` until the end (at most MAX_STOPS commands).
PATTERN: tuple[str, ...] = (
    "next", "stepIn", "next", "next", "stepOut", "continue",
    "stepIn", "stepIn", "next", "continue",
    "next", "stepIn", "stepOut", "continue",
)
MAX_STOPS = 20
STOP_TIMEOUT = 30.0

DEFAULT_PROGRAMS = (
    # calls
    "parity/nested_calls", "decorators",
    # recursion
    "parity/recursion_factorial", "parity/recursion_fib", "parity/hanoi", "tree_walk",
    # loops
    "parity/while_loop", "parity/matrix_nested_loops",
    # classes
    "class_basic", "class_inheritance", "class_dataclass",
    # exceptions, caught
    "exc_callee_caller", "exc_nested_handlers", "parity/exc_try_except_else", "parity/exc_reraise_finally",
    # exceptions, uncaught (filter `uncaught`: both stop with reason exception at the raise)
    "exc_uncaught_module", "exc_assert_uncaught",
    # generators, comprehensions, lambdas
    "generator_for", "closures_adders", "lambdas_sorted_map",
    # stepIn at a line with two calls, stepOut to the call line, module end, breakpoints in a loop with a
    # condition, a hit count and a log point, the `raised` filter, a generator stepped through
    "parity/two_calls", "parity/module_end", "parity/loop_conditions", "parity/exc_raised_filter",
    "parity/generator_steps",
    # breakpoints on continuation lines; generators that end, by an exception and normally
    "multiline_statements", "generator_exception_consumer", "parity/generator_exhausted",
)

KNOWN_BUGS = {  # (all with NDB_PARITY_ALL=1; docs/dap.md, "Parity with debugpy")
    "generator_break": (
        "`next` at a `yield` (line 6): pydevd's step over stays with the generator and stops at its next "
        "line when the consumer resumes it (7); the adapter stops at the consumer's next line (13)"),
    "generator_del": (
        "`stepIn` at a generator's last `yield` that is never resumed: debugpy stops at the consumer's next "
        "line (16); the adapter stops on the consumer's call line with `(return) ticker`"),
    "generator_expressions": (
        "a generator expression's yield into a builtin (`sum(... for ...)`): debugpy shows `(return) <genexpr>` "
        "in the caller and keeps `(return) square` in the generator expression's frame; the adapter shows "
        "neither"),
    "generator_zip": (
        "`next` at the end of a generator consumed by zip(): debugpy stops at the consumer's next line (17); "
        "the adapter stops on the consumer's call line (15)"),
    "parity/generator_steps": (
        "stepOut from a generator at its last `for` step (line 5, i == 2): debugpy stops on the consumer's "
        "call line (10) with `(return) squares=None`; the adapter runs to the end"),
    "parity/hanoi": (
        "`(return) hanoi` is the list `moves` the call returned: debugpy shows it as it is now (changed by "
        "later calls), the adapter as it was returned; stops, frames and locals agree"),
    "tree_walk": (
        "a generator expression's yield into max(): as generator_expressions (`(return) <genexpr>`), and a "
        "stepOut of it that debugpy stops on the caller's call line, the adapter at the next breakpoint"),
}

DEBUGPY_GROUPS = {"special variables", "function variables", "class variables", "module variables",
                  "protected variables"}
NOT_PLAIN = re.compile(r"<(class|function|module|built-in function|built-in method|bound method) ")
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
REPR_FAILED = re.compile(r"^<repr failed: .*>$")
DEFAULT_REPR = re.compile(r"^<__main__\.(\w+) object>$")


# ---- the programs ------------------------------------------------------------------------------------
def header(path: Path, key: str) -> str | None:
    for text in path.read_text(encoding="utf-8").splitlines()[:5]:
        if text.startswith(f"# {key}:"):
            return text.partition(":")[2].strip()
    return None


def header_breakpoints(path: Path) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", header(path, "breakpoints") or ""))


def script_of(path: Path) -> tuple[str, ...]:
    own = header(path, "script")
    return tuple(own.split()) if own else PATTERN


def exception_filters(path: Path) -> list[str]:
    """`uncaught` for the programs that end with an uncaught exception, `raised` for those named so, else
    none."""
    return [name for name in ("uncaught", "raised") if name in path.stem]


def breakpoint_specs(path: Path) -> list[int | dict[str, Any]]:
    """The gutter breakpoints, with the condition, hit condition or log message the `# specs:` header
    gives a line (JSON: {"LINE": {"condition": ...}})."""
    specs = json.loads(header(path, "specs") or "{}")
    return [{"line": line, **specs[str(line)]} if str(line) in specs else line for line in header_breakpoints(path)]


def program_id(path: Path) -> str:
    return ("" if path.parent == CORPUS else "parity/") + path.stem


def all_programs() -> list[Path]:
    corpus = [p for p in sorted(CORPUS.glob("*.py")) if header(p, "entry") is None]
    return corpus + sorted([*PARITY.glob("*.py"), *write_variants(), *write_script_variants()], key=lambda p: p.stem)


def selected_programs() -> list[Path]:
    if os.environ.get("NDB_PARITY_ALL"):
        return all_programs()
    by_id = {program_id(p): p for p in all_programs()}
    return [by_id[name] for name in DEFAULT_PROGRAMS]


def plain_classes(program: Path) -> set[str]:
    """Classes of the program with no __repr__ and no decorator (a dataclass writes its own): the adapter
    shows such an object with its fields, `Node(val=1, next=None)`, where debugpy shows
    `<__main__.Node object at 0x..>`; both expand into the same attributes (docs/dap.md)."""
    tree = ast.parse(program.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and not node.decorator_list
            and not any(isinstance(f, ast.FunctionDef) and f.name == "__repr__" for f in node.body)}


def debugpy_objects(value: str, plain: set[str]) -> str:
    """`[Node(value=2, children=[])]` as debugpy writes it: `[<__main__.Node object>]`."""
    try:
        tree = ast.parse(value, mode="eval")
    except SyntaxError:
        return value

    class Objects(ast.NodeTransformer):
        def visit_Call(self, node: ast.Call) -> ast.AST:
            if isinstance(node.func, ast.Name) and node.func.id in plain:
                return ast.Name(id=f"<__main__.{node.func.id} object>")
            return self.generic_visit(node)

    return ast.unparse(Objects().visit(tree))


def classes_with_repr(program: Path) -> set[str]:
    """Classes of the program that define __repr__ (debugpy falls back to object.__repr__ if it raises)."""
    tree = ast.parse(program.read_text(encoding="utf-8"))
    return {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)
            and any(isinstance(f, ast.FunctionDef) and f.name == "__repr__" for f in node.body)}


# ---- one stop ----------------------------------------------------------------------------------------
@dataclass
class StopView:
    command: str  # the command that led here ("launch" for the first stop)
    reason: str
    frames: list[tuple[str, int]]  # the program's own frames, innermost first
    variables: dict[str, str]

    def render(self, returns: bool = True) -> str:
        """One line; without `returns`, the `(return) f` entries left out (the figure's "frames, line and
        locals")."""
        frames = ", ".join(f"{n}:{ln}" for n, ln in self.frames)
        variables = ", ".join(f"{k}={v}" for k, v in sorted(self.variables.items())
                              if returns or not k.startswith("(return) "))
        line = self.frames[0][1] if self.frames else "?"
        return f"after {self.command}: {self.reason} at line {line} | frames: {frames} | locals: {variables}"


def properties(program: Path) -> set[str]:
    """Names of the program's properties: debugpy runs their getters to list them among an object's
    attributes; the oracle records no getter's result (running one could change the program's course)."""
    tree = ast.parse(program.read_text(encoding="utf-8"))
    return {f.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef) for f in node.body
            if isinstance(f, ast.FunctionDef)
            and any(isinstance(d, ast.Name) and d.id in ("property", "cached_property") for d in f.decorator_list)}


def nesting(node: ast.expr) -> int:
    parts = [*node.keys, *node.values] if isinstance(node, ast.Dict) else getattr(node, "elts", None)
    if parts is None or not isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        return 0
    return 1 + max((nesting(p) for p in parts if p is not None), default=0)


def pydevd_nesting(value: str) -> str:
    """A container nested three deep as debugpy writes it (pydevd's SafeRepr: the third level is `[...]`,
    `(...)`, `{...}`; 15 elements at the top, 10 at the second level, then `...`)."""
    try:
        tree = ast.parse(value, mode="eval")
    except SyntaxError:
        return value
    if nesting(tree.body) < 3:
        return value

    def render(node: ast.expr, level: int) -> str:
        brackets = {ast.List: "[]", ast.Tuple: "()", ast.Set: "{}", ast.Dict: "{}"}.get(type(node))
        if brackets is None:
            return ast.unparse(node)
        if level >= 2:
            return f"{brackets[0]}...{brackets[1]}"
        limit = (15, 10)[level]
        if isinstance(node, ast.Dict):
            items = [f"{render(k, level + 1) if k is not None else '**'}: {render(v, level + 1)}"
                     for k, v in zip(node.keys, node.values, strict=True)]
        else:
            items = [render(e, level + 1) for e in node.elts]  # type: ignore[attr-defined]
        more = len(items) > limit
        items = items[:limit] + (["..."] if more else [])
        tail = "," if isinstance(node, ast.Tuple) and len(items) == 1 else ""
        return brackets[0] + ", ".join(items) + tail + brackets[1]

    return render(tree.body, 0)


def normalize_value(value: str, repr_classes: set[str], plain: set[str] = frozenset()) -> str:  # type: ignore[assignment]
    value = pydevd_nesting(ADDRESS.sub("", value))
    if any(name + "(" in value for name in plain):  # objects written with their fields, as debugpy writes them
        value = debugpy_objects(value, plain)
    if REPR_FAILED.match(value):
        return "<repr failed>"
    m = DEFAULT_REPR.match(value)
    if m and m.group(1) in repr_classes:  # debugpy: the class's own __repr__ raised
        return "<repr failed>"
    return value


def plain_variables(variables: list[dict[str, Any]], repr_classes: set[str], plain: set[str] = frozenset()) -> dict[str, str]:  # type: ignore[assignment]
    out = {}
    for v in variables:
        name, value = v["name"], v.get("value", "")
        if (name.startswith("(") and not name.startswith("(return) ")) or name in DEBUGPY_GROUPS \
                or NOT_PLAIN.match(value):
            continue
        out[name] = normalize_value(value, repr_classes, plain)
    return out


# ---- one adapter session -----------------------------------------------------------------------------
class Side:
    """One adapter session driven in lockstep with the other: send a command, then collect its stop."""

    def __init__(self, name: str, client: DapClient, program: Path, launch: dict[str, Any]) -> None:
        self.name = name
        self.client = client
        self.session = Session(client)
        self.program = str(program)
        self.repr_classes = classes_with_repr(program)
        self.plain_classes = plain_classes(program)
        self.properties = properties(program)
        self.launch_args = launch
        self.thread_id = 0
        self.mark = 0
        self.breakpoints: list[str] = []

    def launch(self, breakpoints: list[int | dict[str, Any]], exception_filters: list[str]) -> StopView | None:
        """initialize -> launch -> `initialized` -> setBreakpoints, setExceptionBreakpoints ->
        configurationDone -> launch response, then the first stop."""
        client = self.client
        self.session.initialize()
        self.session.program = self.program
        self.mark = client.mark()
        seq = client.send("launch", self.launch_args)
        client.wait_for(lambda m: (m.get("type") == "event" and m.get("event") == "initialized")
                        or (m.get("type") == "response" and m.get("request_seq") == seq),
                        since=self.mark, what=f"{self.name}: initialized event")
        answer = self.session.set_breakpoints(breakpoints)
        self.breakpoints = [f"{'verified' if b.get('verified') else 'unverified'} at {b.get('line', '-')}"
                            for b in answer]
        client.request("setExceptionBreakpoints", {"filters": exception_filters})
        client.request("configurationDone")
        resp = client.response(seq)
        assert resp["success"], f"{self.name}: {resp}"
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
        shown = plain_variables(variables, self.repr_classes, self.plain_classes)
        for v in variables:  # the program's objects, one level down: their attributes
            # (not a returned object's: debugpy shows it as it is now, the adapter as it was returned)
            if v.get("variablesReference") and DEFAULT_REPR.match(shown.get(v["name"], "")) \
                    and not v["name"].startswith("(return) "):
                children = self.session.variables(v["variablesReference"])
                for name, value in plain_variables(children, self.repr_classes, self.plain_classes).items():
                    if name not in self.properties and not name.startswith("_"):  # debugpy: "protected variables"
                        shown[f"{v['name']}.{name}"] = value
        return StopView(command, body["reason"], own, shown)

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError):
            self.client.request("disconnect", {"terminateDebuggee": True}, timeout=10)
        self.client.close()


def debugpy_side(program: Path) -> Side:
    return Side("debugpy", DapClient.stdio([sys.executable, "-m", "debugpy.adapter"]), program,
                {"type": "python", "request": "launch", "name": "parity", "program": str(program),
                 "justMyCode": True, "console": "internalConsole", "stopOnEntry": False,
                 "showReturnValue": True,  # as VS Code's Python extension sends it
                 "cwd": str(program.parent)})


def ndb_side(program: Path, tcp_port: int | None = None) -> Side:
    launch = {"program": str(program), "engine": "oracle", "stepping": "debugpy", "stopOnEntry": False}
    if tcp_port is None:
        return Side("ndb", DapClient.stdio([sys.executable, "-m", "dap_server", "dap"]), program, launch)
    return Side("ndb (tcp)", DapClient.tcp(tcp_port), program, launch)


# ---- one script on both ------------------------------------------------------------------------------
@dataclass
class Transcript:
    program: Path
    breakpoints: tuple[int, ...]
    filters: list[str]
    script: list[str] = field(default_factory=list)
    debugpy: list[str] = field(default_factory=list)
    ndb: list[str] = field(default_factory=list)
    plain: list[bool] = field(default_factory=list)  # per stop: equal by reason, frames, line and locals
    cut: bool = False

    @property
    def compared_stops(self) -> int:
        """debugpy's stops that ndb matched exactly (frames, line, locals, reason)."""
        return sum(1 for a, b in zip(self.debugpy, self.ndb, strict=False) if a == b and a.startswith("after "))

    @property
    def stops(self) -> int:
        """debugpy's stops (the end of the program counts as one)."""
        return sum(1 for a in self.debugpy if a.startswith("after ") or a == "exited")

    @property
    def equal_stops(self) -> int:
        return sum(1 for a, b in zip(self.debugpy, self.ndb, strict=False) if a == b
                   and (a.startswith("after ") or a == "exited"))

    @property
    def equal_plain_stops(self) -> int:
        """debugpy's stops that ndb matched by reason, frames, line and locals, `(return) f` left out."""
        return sum(self.plain)


def run_script(program: Path, tcp_port: int | None = None) -> Transcript:
    """Run the program's script on both adapters in lockstep (ndb over TCP when `tcp_port` is given)."""
    transcript = Transcript(program, header_breakpoints(program), exception_filters(program))
    theirs_side = debugpy_side(program)
    try:
        ours_side = ndb_side(program, tcp_port)
    except BaseException:
        theirs_side.close()
        raise

    def record(theirs: StopView | None, ours: StopView | None) -> None:
        for view, out in ((theirs, transcript.debugpy), (ours, transcript.ndb)):
            out.append("exited" if view is None else view.render())
        plain = [None if v is None else v.render(returns=False) for v in (theirs, ours)]
        transcript.plain.append(plain[0] == plain[1])

    def both(command: str) -> tuple[StopView | None, StopView | None]:
        transcript.script.append(command)
        seqs = theirs_side.send(command), ours_side.send(command)
        return theirs_side.collect(command, seqs[0]), ours_side.collect(command, seqs[1])

    try:
        with ThreadPoolExecutor(max_workers=1) as pool:  # launch both adapters at once
            specs = breakpoint_specs(program)
            first = pool.submit(theirs_side.launch, specs, transcript.filters)
            ours = ours_side.launch(specs, transcript.filters)
            theirs = first.result()
        transcript.debugpy.append(f"breakpoints: {', '.join(theirs_side.breakpoints)}")
        transcript.ndb.append(f"breakpoints: {', '.join(ours_side.breakpoints)}")
        record(theirs, ours)
        commands = iter(script_of(program))
        while theirs is not None and ours is not None:
            if len(transcript.script) >= MAX_STOPS:
                transcript.cut = True
                break
            theirs, ours = both(next(commands, "continue"))
            record(theirs, ours)
    finally:
        theirs_side.close()
        ours_side.close()
    return transcript


def assert_same(transcript: Transcript) -> None:
    assert len(transcript.debugpy) > 2, f"debugpy never stopped: {transcript.debugpy}"
    if transcript.debugpy != transcript.ndb:
        diff = "\n".join(difflib.unified_diff(transcript.debugpy, transcript.ndb, "debugpy",
                                              "ndb (oracle, stepping=debugpy)", lineterm="", n=3))
        pytest.fail(f"{program_id(transcript.program)}: breakpoints {list(transcript.breakpoints)}, "
                    f"exception filters {transcript.filters}, script: {' '.join(transcript.script)}\n{diff}",
                    pytrace=False)


# ---- the pool ----------------------------------------------------------------------------------------
class Runs:
    """All selected programs' scripts, started at once on 2 workers (at most two debugpy sessions)."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.futures: dict[str, Future[Transcript]] = {}

    def submit(self, program: Path, tcp_port: int | None = None) -> Future[Transcript]:
        key = program_id(program) + ("" if tcp_port is None else f"@tcp:{tcp_port}")
        if key not in self.futures:
            self.futures[key] = self.pool.submit(run_script, program, tcp_port)
        return self.futures[key]

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def runs(request: pytest.FixtureRequest) -> Iterator[Runs]:
    holder = Runs()
    for item in request.session.items:  # start every selected program's script now, in order
        callspec = getattr(item, "callspec", None)
        if callspec is not None and isinstance(callspec.params.get("program"), Path) \
                and getattr(item, "module", None) is request.module:
            holder.submit(callspec.params["program"])
    yield holder
    holder.close()


@contextlib.contextmanager
def ndb_dap_tcp() -> Iterator[int]:
    """`python -m dap_server dap --port 0` (`ndb dap --port 0`): serve_tcp on a free port."""
    server = TcpServer(("dap_server", "dap"))
    try:
        yield server.port
    finally:
        server.close()


# ---- the tests ---------------------------------------------------------------------------------------
PROGRAMS = selected_programs()


def params() -> list[Any]:
    out = []
    for path in PROGRAMS:
        reason = KNOWN_BUGS.get(program_id(path))
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        out.append(pytest.param(path, id=program_id(path), marks=marks))
    return out


def test_enough_programs() -> None:
    assert len([p for p in PROGRAMS if program_id(p) not in KNOWN_BUGS]) >= 20
    assert all(header_breakpoints(p) for p in PROGRAMS)


@pytest.mark.parametrize("program", params())
def test_same_stops_as_debugpy(program: Path, runs: Runs) -> None:
    transcript = runs.submit(program).result()
    assert_same(transcript)
    assert transcript.compared_stops >= 2, transcript.debugpy


def test_parity_figure(runs: Runs) -> None:
    """Over every selected script, known mismatches included: at least 98% of debugpy's stops equal."""
    transcripts = [runs.submit(p).result() for p in PROGRAMS]
    equal, total = sum(t.equal_plain_stops for t in transcripts), sum(t.stops for t in transcripts)
    assert len(transcripts) >= 15
    assert equal >= 0.98 * total, f"{equal} of {total} stops equal by frames, line and locals"


def test_parity_over_tcp(runs: Runs) -> None:
    """The same comparison with the adapter served over TCP (`ndb dap --port 0`)."""
    program = next(p for p in PROGRAMS if program_id(p) == "parity/recursion_fib")
    with ndb_dap_tcp() as port:
        transcript = runs.submit(program, tcp_port=port).result()
    assert_same(transcript)
    assert transcript.compared_stops >= 5


if __name__ == "__main__":
    import time

    names = sys.argv[1:] or [program_id(p) for p in all_programs()]
    equal = plain = total = 0
    for name in names:
        path = next(p for p in all_programs() if program_id(p) == name or p.stem == name)
        t0 = time.monotonic()
        t = run_script(path)
        print(f"== {program_id(path)} bps {list(t.breakpoints)} ({time.monotonic() - t0:.1f}s, "
              f"{t.compared_stops} compared) script: {' '.join(t.script)}"
              + (" [cut]" if t.cut else ""))
        a, b = t.debugpy, t.ndb
        for x, y in zip(a + [""] * (len(b) - len(a)), b + [""] * (len(a) - len(b)), strict=True):
            print(("   " if x == y else "XX ") + x + ("" if x == y else "\n   " + y))
        equal, plain, total = equal + t.equal_stops, plain + t.equal_plain_stops, total + t.stops
    print(f"parity on {len(names)} scripts, {total} debugpy stops: {plain} equal by reason, frames, line and locals "
          f"({100 * plain / max(total, 1):.1f}%); {equal} with the (return) values too ({100 * equal / max(total, 1):.1f}%)")
