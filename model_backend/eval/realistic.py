"""`ndb eval realistic`: random debugging sessions on realistic programs, scored stop by stop against the oracle.

The benchmark is `benchmarks/realistic/{dev,test}/*.py`: each file starts with a one-line module docstring,
then a comment `# entry: NAME(ARGS)` (the call to debug, a literal call) and optionally `# kind: ...`.
The test split is for the record: nothing here is tuned on it.

For each program, K rollouts of up to N user-level actions, drawn with a seeded random generator from the
forward actions (ACTION_WEIGHTS): step_into, step_over, step_return, breakpoint (a tbreak on a random line
of a statement inside a function: `breakpoint:L`, whose line stays set as a breakpoint for later continues) and continue
(with the breakpoint lines drawn so far in the rollout; with none, to the program's end). The sequence depends only
on the seed, the program's name and the rollout's number, so every engine gets the same actions. A rollout
ends at the program's exit or after N actions.

The reference is an oracle engine on the same program that writes values as the engine under test reads
them: the model's cut (Limits().max_repr), not a debugging session's, and the object format of the engine's
`format_version`. Each stop is compared on event, line, function, locals, return value (or exception), stack
depth, exit code and the output so far; a set's elements in any order (their order follows string hashes,
which change from run to run). When the engine under test misses a stop it is put back on the true
state (StepwiseEngine.resume with the true history, and the true trail of forward steps the grammar reads),
so that every action is scored from a true state. The trust horizon of a rollout is the number of exact
stops before its first miss. The return value from the entry: start, one step_return from the entry frame,
the returned value compared (a None return followed by one step_into, so that an exception leaving the
entry frame, which pdb shows as a None return, counts only when the program's end is the error exit).

Refusals (an EngineError at start) and failed predictions (a state with `error`, or an EngineError during a
step, Cancelled included) are counted apart; a program the oracle itself cannot run (its entry fails) is
counted as broken; none of them stops the evaluation.
"""

from __future__ import annotations

import ast
import random
import re
import threading
import time
import traceback
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_backend import safe_ast
from model_backend.engine import Engine, EngineError, create_engine
from model_backend.engine.base import MAX_TRAIL, StepwiseEngine
from model_backend.engine.oracle import OracleEngine
from model_backend.eval.realistic_report import TIME_LIMIT, summarize
from model_backend.program import Program, ProgramError
from model_backend.sandbox import Limits
from model_backend.state import Action, ActionKind, State

ROOT = Path(__file__).resolve().parents[2] / "benchmarks" / "realistic"
SPLITS = ("dev", "test")
# How often each action is drawn: mostly steps, as in a debugging session; a continue without breakpoints
# ends the rollout, so it is the rarest.
ACTION_WEIGHTS: dict[ActionKind, float] = {
    "step_into": 0.3, "step_over": 0.3, "step_return": 0.15, "breakpoint": 0.15, "continue": 0.1,
}
COMPARED = ("event", "line", "function", "locals", "value", "depth", "exit", "output")
# Per program, for the return check and, apart, for the rollouts: past it the action under way is paused
# where it got to (a failure) and the rest is not played. A followed action takes up to 128 single steps.
PROGRAM_SECONDS = 300.0
HEADER_LINES = 12  # the entry and kind comments sit within the file's first lines
_ENTRY = re.compile(r"^#\s*entry:\s*(?P<call>.+?)\s*$")
_KIND = re.compile(r"^#\s*kind:\s*(?P<kind>.+?)\s*$")


class BenchmarkError(ValueError):
    """A benchmark file that cannot be evaluated (no entry line, syntax error, bad entry)."""


@dataclass(frozen=True)
class Benchmark:
    name: str  # the file's stem
    program: Program
    kind: str | None = None


def parse_benchmark(path: Path) -> Benchmark:
    """One benchmark file: its source with the entry (and kind) read from its header comments."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BenchmarkError(f"cannot read {path}: {exc}") from None
    entry = kind = None
    for line in source.splitlines()[:HEADER_LINES]:
        if entry is None and (found := _ENTRY.match(line.strip())):
            entry = found["call"]
        elif kind is None and (found := _KIND.match(line.strip())):
            kind = found["kind"]
    if entry is None:
        raise BenchmarkError(f"{path}: no '# entry: NAME(ARGS)' line in its first {HEADER_LINES} lines")
    program = Program(source=source, path=str(path.resolve()), entry=entry)
    try:
        program.check()
    except ProgramError as exc:
        raise BenchmarkError(f"{path}: {exc}") from None
    return Benchmark(name=path.stem, program=program, kind=kind)


def load_benchmark(split: str, root: str | Path | None = None) -> list[Benchmark]:
    """The split's programs, by file name. BenchmarkError for an unknown split, an empty one, or a file
    without an entry line."""
    if split not in SPLITS:
        raise BenchmarkError(f"unknown split {split!r} (choose one of: {', '.join(SPLITS)})")
    folder = Path(root) if root is not None else ROOT
    files = sorted((folder / split).glob("*.py"))
    if not files:
        raise BenchmarkError(f"no programs in {folder / split}")
    return [parse_benchmark(path) for path in files]


def benchmark_programs(paths: Iterable[Path]) -> list[Program]:
    """The programs of benchmark files, or of folders of them, sorted by path.
    BenchmarkError for a file without an entry line or that cannot be read."""
    files = sorted(f for p in paths for f in (p.glob("*.py") if p.is_dir() else [p]))
    return [parse_benchmark(f).program for f in files]


def reference_limits(engine: Engine) -> Limits:
    """The oracle's limits that write values as `engine` reads them: the model's cut of reprs, and the
    program's objects as the engine's value format (version 3 on) shows them."""
    fmt_version = getattr(engine, "format_version", 2)
    if "objects" in Limits.model_fields:
        return Limits(objects=fmt_version >= 3)  # type: ignore[call-arg]
    return Limits()


def draw_actions(rng: random.Random, code_lines: list[int], count: int) -> list[Action]:
    """`count` actions drawn by `rng` (the same for every engine)."""
    kinds, weights = list(ACTION_WEIGHTS), list(ACTION_WEIGHTS.values())
    actions = []
    for _ in range(count):
        kind = rng.choices(kinds, weights=weights)[0]
        if kind == "breakpoint":
            actions.append(Action(kind="breakpoint", lines=(rng.choice(code_lines),)))
        else:
            actions.append(Action(kind=kind))
    return actions


def breakpoint_lines(program: Program) -> list[int]:
    """The lines a breakpoint is drawn from: those of statements inside functions (the entry call runs
    nothing else: the module's own lines ran, untraced, before it), or every line that holds code."""
    code = program.code_lines()
    lines = {node.lineno for function in ast.walk(safe_ast.parse(program.source))
             if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
             for statement in function.body for node in ast.walk(statement) if isinstance(node, ast.stmt)}
    return sorted(lines & code or code)


def rollout_actions(benchmark: Benchmark, seed: int, rollout: int, count: int) -> list[Action]:
    rng = random.Random(f"{seed}/{benchmark.name}/{rollout}")
    return draw_actions(rng, breakpoint_lines(benchmark.program), count)


def observed(state: State, output: str) -> dict[str, Any]:
    """What is compared at a stop (`output`: all the program printed until there)."""
    return {"event": state.event, "line": state.line, "function": state.function, "locals": dict(state.locals),
            "value": state.value, "depth": state.depth, "exit": state.exit, "output": output}


class _SortSets(ast.NodeTransformer):
    def visit_Set(self, node: ast.Set) -> ast.Set:
        self.generic_visit(node)
        node.elts.sort(key=ast.unparse)
        return node


def canonical(value: str) -> str:
    """A repr with the elements of each set written in one order: a set's order follows its elements'
    hashes, which vary from run to run for strings (nothing a model can know). A repr that does not parse
    (cut at the format's limit, an object without a repr of its own) stays as it is."""
    if "{" not in value:
        return value
    try:
        tree = safe_ast.parse(value, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return value
    if not any(isinstance(node, ast.Set) for node in ast.walk(tree)):
        return value
    return ast.unparse(_SortSets().visit(tree))


def _same(want: Any, got: Any) -> bool:
    if isinstance(want, str) and isinstance(got, str):
        return want == got or canonical(want) == canonical(got)
    return bool(want == got)


def difference(want: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    """The compared fields that differ, [expected, got] each; per variable for locals. Empty: exact. Values
    are compared as reprs, sets in any order (`canonical`); the output so far as printed."""
    diff: dict[str, Any] = {}
    for name in COMPARED:
        if want[name] == got[name]:
            continue
        if name == "locals":
            names = sorted(set(want[name]) | set(got[name]))
            wrong = {k: [want[name].get(k), got[name].get(k)] for k in names
                     if not _same(want[name].get(k), got[name].get(k))}
            if wrong:
                diff[name] = wrong
        elif name != "value" or not _same(want[name], got[name]):
            diff[name] = [want[name], got[name]]
    return diff


def _where(state: State) -> str:
    if state.event == "exit":
        return f"exit {state.exit}"
    return f"{state.event} {state.function}:{state.line} depth {state.depth}"


def _put_back(engine: Engine, program: Program, history: list[State], trail: list[tuple[State, str]]) -> None:
    """Put the engine under test on the true state (the last of `history`), with the true trail."""
    if not isinstance(engine, StepwiseEngine):
        raise EngineError(f"the {engine.name} engine cannot be put back on a state")
    engine.resume(program, history, inverse=False)
    engine.trail = trail[-MAX_TRAIL:]


def _timed_step(engine: Engine, action: Action, breakpoints: frozenset[int],
                deadline: float | None) -> tuple[State | None, str | None]:
    """The engine's step and its failure, if any. Past `deadline` (time.monotonic()) an action that runs
    through many single steps is paused where it got to (Engine.interrupt): a failure, "time limit"."""
    timer, paused = None, threading.Event()
    if deadline is not None:
        engine.interrupt = paused
        timer = threading.Timer(max(0.0, deadline - time.monotonic()), paused.set)
        timer.start()
    try:
        state = engine.step(action, breakpoints)
    except EngineError as exc:
        return None, f"{type(exc).__name__}: {exc}"
    finally:
        if timer is not None:
            timer.cancel()
            engine.interrupt = None
    if paused.is_set() and isinstance(engine, StepwiseEngine):  # a followed action paused before its stop
        return None, TIME_LIMIT
    return state, state.error


def play_rollout(engine: Engine, reference: Engine, program: Program, actions: list[Action],
                 deadline: float | None = None) -> dict[str, Any]:
    """One rollout: the stops, the misses and where the first one happened. Raises _Refused when the
    engine under test refuses the program (an EngineError at start)."""
    truth = reference.start(program)
    try:
        state = engine.start(program)
    except EngineError as exc:
        raise _Refused(str(exc)) from None
    output = truth.stdout
    start_diff = difference(observed(truth, output), observed(state, state.stdout))
    history: list[State] = [truth]
    trail: list[tuple[State, str]] = []
    breakpoints: set[int] = set()
    stops: list[dict[str, Any]] = []
    first: dict[str, Any] | None = None
    horizon = None
    if start_diff and truth.event != "exit":
        try:
            _put_back(engine, program, history, trail)
        except EngineError as exc:
            return _rollout(actions, stops, start_diff, 0, first, stopped=f"cannot resume: {exc}")
    stopped = None
    for number, action in enumerate(actions):
        if truth.event == "exit":
            break
        if deadline is not None and time.monotonic() > deadline:
            stopped = TIME_LIMIT
            break
        before = truth
        step_breaks = frozenset(breakpoints) if action.kind == "continue" else frozenset()
        truth = reference.step(action, step_breaks)
        began = time.perf_counter()
        predicted, error = _timed_step(engine, action, step_breaks, deadline)
        ms = 1000 * (time.perf_counter() - began)
        if action.kind == "breakpoint":
            breakpoints.update(action.lines)
        want = observed(truth, output + truth.stdout)
        got = None if predicted is None or error is not None else observed(predicted, output + predicted.stdout)
        stop: dict[str, Any] = {"action": str(action), "ms": round(ms, 2)}
        if got is None:
            stop.update(exact=False, failed=error)
        else:
            diff = difference(want, got)
            stop.update(exact=not diff, **({"diff": diff} if diff else {}))
        output += truth.stdout
        history.append(truth)
        trail.append((before, action.kind))
        stops.append(stop)
        if not stop["exact"]:
            if first is None:
                horizon = number
                first = {"step": number, "action": str(action), "from": _where(before), "expected": want, "got": got,
                         **({"failed": error} if got is None else {"diff": stop["diff"]})}
            if truth.event != "exit":
                try:
                    _put_back(engine, program, history, trail)
                except EngineError as exc:
                    return _rollout(actions, stops, start_diff, horizon, first, stopped=f"cannot resume: {exc}")
    return _rollout(actions, stops, start_diff, horizon if horizon is not None else len(stops), first, stopped)


class _Refused(Exception):
    """The engine under test refused the program at start."""


def _rollout(actions: list[Action], stops: list[dict[str, Any]], start_diff: dict[str, Any], horizon: int | None,
             first: dict[str, Any] | None, stopped: str | None = None) -> dict[str, Any]:
    result = {"actions": [str(a) for a in actions], "played": len(stops), "stops": stops,
              "start_exact": not start_diff, "trust_horizon": horizon, "first_divergence": first}
    if start_diff:
        result["start_diff"] = start_diff
    if stopped is not None:
        result["stopped"] = stopped
    return result


def entry_outcome(engine: Engine, state: State) -> str:
    """What the entry call did, from the state one step_return from its frame reached: `returns VALUE`,
    `raises` (a None return that ends the program with an error exit, as an exception leaving the frame
    shows in pdb), or where it stopped instead."""
    if state.error is not None:
        return f"failed: {state.error}"
    if state.event == "return" and state.depth == 0:
        if state.value in (None, "None"):
            after = engine.step(Action(kind="step_into"))
            if after.error is None and after.event == "exit" and after.exit == "error":
                return "raises"
        return f"returns {state.value}"
    return f"stops at {_where(state)}"


def check_return(engine: Engine, reference: Engine, program: Program, deadline: float | None = None) -> dict[str, Any]:
    """Start, one step_return from the entry frame: the returned value (or exception) against the oracle's."""
    reference.start(program)
    want = entry_outcome(reference, reference.step(Action(kind="step_return")))
    exception = reference.state.exit_reason if want == "raises" else None
    began = time.perf_counter()
    try:
        engine.start(program)
    except EngineError as exc:
        raise _Refused(str(exc)) from None
    state, error = _timed_step(engine, Action(kind="step_return"), frozenset(), deadline)
    try:
        got = f"failed: {error}" if state is None else entry_outcome(engine, state)
    except EngineError as exc:
        got = f"failed: {type(exc).__name__}: {exc}"
    same = got == want or (want.startswith("returns ") and got.startswith("returns ")
                           and _same(want.removeprefix("returns "), got.removeprefix("returns ")))
    return {"expected": want, "got": got, "exact": same,
            **({"exception": exception} if exception else {}), "ms": round(1000 * (time.perf_counter() - began), 2)}


def evaluate_program(engine: Engine, benchmark: Benchmark, rollouts: int, actions: int, seed: int,
                     seconds: float | None = None) -> dict[str, Any]:
    """One program's detail: its return check, then its rollouts; a refusal, a program the oracle cannot
    run or an engine crash is reported in `status` and `error`. Past `seconds` the action under way is
    paused and the rest of the rollouts is not played (the return check comes first: it always is)."""
    program = benchmark.program
    detail: dict[str, Any] = {"name": benchmark.name, "path": program.path, "kind": benchmark.kind,
                              "entry": program.entry, "constructs": _constructs(program.source)}
    reference = OracleEngine(reference_limits(engine))
    try:
        reference.start(program)
    except EngineError as exc:
        return {**detail, "status": "broken", "error": str(exc)}
    try:
        deadline = time.monotonic() + seconds if seconds else None
        detail["return"] = check_return(engine, reference, program, deadline)
        if seconds:  # the rollouts get their own time
            deadline = time.monotonic() + seconds
        detail["rollouts"] = [play_rollout(engine, reference, program, rollout_actions(benchmark, seed, k, actions),
                                           deadline) for k in range(rollouts)]
        detail["status"] = "ok"
    except _Refused as exc:
        detail.update(status="refused", error=str(exc))
    except EngineError as exc:  # the reference failed on a later run (e.g. not deterministic)
        detail.update(status="broken", error=str(exc))
    except Exception as exc:  # noqa: BLE001 - an engine bug: reported with the program, the eval goes on
        detail.update(status="crashed", error=f"{type(exc).__name__}: {exc}", traceback=traceback.format_exc())
    return detail


def _constructs(source: str) -> list[str] | None:
    try:
        from model_backend.constructs import constructs  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    try:
        return sorted(constructs(source))
    except SyntaxError:
        return None


def evaluate(split: str = "dev", engine_name: str = "neural", model: str | None = None, limit: int | None = None,
             rollouts: int = 1, actions: int = 20, seed: int = 0, root: str | Path | None = None,
             progress: bool = True, engine: Engine | None = None, program_seconds: float | None = PROGRAM_SECONDS,
             follow_steps: int | None = None, names: list[str] | None = None) -> dict[str, Any]:
    """The whole evaluation: figures and per-program detail. `engine`: an engine to test instead of
    creating `engine_name`'s. `program_seconds` (None: no limit) bounds the return check and, apart, the
    rollouts of one program; `follow_steps`: the single steps a model engine takes for one action before
    it jumps (None: the engine's default, as in a debugging session); `names`: only these programs (file
    stems; BenchmarkError for one the split lacks), before `limit`."""
    if rollouts < 1 or actions < 1:
        raise ValueError("rollouts and actions must be at least 1")
    benchmarks = load_benchmark(split, root)
    if names:
        missing = sorted(set(names) - {b.name for b in benchmarks})
        if missing:
            raise BenchmarkError(f"no program {', '.join(missing)} in the {split} split")
        benchmarks = [b for b in benchmarks if b.name in names]
    benchmarks = benchmarks[:limit] if limit else benchmarks
    if engine is None:
        if engine_name == "oracle":  # it writes values as its reference does
            engine = OracleEngine(reference_limits(OracleEngine()))
        else:
            engine = create_engine(engine_name, model=model)
    if follow_steps is not None:
        engine.follow(follow_steps)
    from tqdm import tqdm

    started = time.perf_counter()
    programs = [evaluate_program(engine, b, rollouts, actions, seed, program_seconds)
                for b in tqdm(benchmarks, desc=f"realistic {split}", disable=not progress)]
    engine.close()
    model_path = getattr(getattr(engine, "m", None), "path", None)
    return {"split": split, "engine": engine.name, "model": model_path if model_path is not None else model,
            "format_version": getattr(engine, "format_version", 2), "seed": seed, "rollouts": rollouts,
            "actions": actions, "limit": limit, "programs_chosen": names or None, "program_seconds": program_seconds,
            "follow_steps": getattr(engine, "follow_steps", None), "seconds": time.perf_counter() - started,
            **summarize(programs), "detail": programs}
