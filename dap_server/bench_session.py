"""Benchmark: what a person feels in `ndb debug` on one program: first prompt, `n`, and `c` to a breakpoint.

`ndb bench session PROGRAM [--entry CALL] [--steps N] [--distance D]` drives the real terminal debugger
(`ndb debug`, a child process over pipes, exactly as a person's keystrokes reach it) and times:

- **first prompt**: from starting `ndb debug` to its first `(ndb) ` prompt (process start, model load,
  first prediction);
- **`c` to a breakpoint**: `b LINE` then `c`, where LINE is chosen from the oracle's run so that the
  breakpoint's first hit is at least D single steps (`s`) from the start;
- **`n`**: then up to N `n` commands from that stop, each from writing the line to the next prompt (p50,
  p90, max), as long as both the oracle's run and the predicted one go on (a `c` that ends the predicted
  run times no `n`, and the JSON keeps the end of its output).

The oracle (in its sandbox) chooses the breakpoint's line and gives the stops `n` and `c` should reach,
so the figures say how often the timed stops were the right ones. The timed session itself uses the
engine asked for (neural by default), which never runs the program. The figures are a command's output,
not a timed test; docs/benchmarks.md keeps them with the command.
"""

from __future__ import annotations

import os
import re
import select
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from model_backend.constructs import entry_call
from model_backend.program import Program
from model_backend.state import Action

PROMPT = b"(ndb) "
STOP_LINE = re.compile(rb"^> .*?\((\d+)\)[^\s()]*\(\)", re.MULTILINE)  # > PATH(LINE)FUNC()


@dataclass
class OraclePlan:
    """What the oracle's run says the timed commands should reach."""

    breakpoint_line: int  # its first hit is at least `distance` single steps from the start
    breakpoint_steps: int  # how many `s` steps that first hit is from the start
    next_lines: list[int | None]  # the line after each `n` from there (None: the program ended)


def oracle_plan(program: Program, steps: int, distance: int) -> OraclePlan | None:
    """Run the program under the oracle (in its sandbox) and choose the breakpoint: the first line whose
    first hit is at least `distance` single steps from the start. Then read off where each of `steps`
    `n` commands from that stop lands. None where no line is first reached that far from the start."""
    from model_backend.engine.oracle import OracleEngine

    engine = OracleEngine()
    try:
        state = engine.start(program)
        seen = {state.line}
        for count in range(1, 50 * distance + 1):
            state = engine.step(Action(kind="step_into"))
            if state.exit is not None or state.line is None:
                return None
            if count >= distance and state.line not in seen and state.event == "line":
                line = state.line
                after = [engine.step(Action(kind="step_over")) for _ in range(steps)]
                return OraclePlan(line, count, [s.line if s.exit is None else None for s in after])
            seen.add(state.line)
        return None
    finally:
        engine.close()


@dataclass
class Terminal:
    """`ndb debug` in a child process; `send` writes one command and waits for the next prompt."""

    argv: list[str]
    timeout: float = 600.0
    proc: subprocess.Popen[bytes] = field(init=False)
    started: float = field(init=False)

    def __post_init__(self) -> None:
        self.started = time.perf_counter()
        env = dict(os.environ, COLUMNS="200", NO_COLOR="1")
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=env)

    def _until_prompt(self) -> bytes:
        out = self.proc.stdout
        assert out is not None
        data = b""
        deadline = time.monotonic() + self.timeout
        fd = out.fileno()
        while not data.endswith(PROMPT):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no prompt within {self.timeout:.0f} s; last output: {data[-400:]!r}")
            if not select.select([fd], [], [], 1.0)[0]:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise RuntimeError(f"ndb debug ended: {data[-800:].decode(errors='replace')}")
            data += chunk
        return data

    def first_prompt(self) -> tuple[float, bytes]:
        data = self._until_prompt()
        return time.perf_counter() - self.started, data

    def send(self, command: str) -> tuple[float, bytes]:
        stdin: IO[bytes] | None = self.proc.stdin
        assert stdin is not None
        begin = time.perf_counter()
        stdin.write(command.encode() + b"\n")
        stdin.flush()
        data = self._until_prompt()
        return time.perf_counter() - begin, data

    def close(self) -> None:
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.write(b"q\n")
                self.proc.stdin.close()
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()


def stop_line(output: bytes) -> int | None:
    """The line of the stop `ndb debug` printed (its `> FILE(LINE)func()` line), if any."""
    found = STOP_LINE.findall(output)
    return int(found[-1]) if found else None


def bench_session(path: str, entry: str | None = None, *, steps: int = 20, distance: int = 20,
                  engine: str = "neural", model: str | None = None, timeout: float = 600.0) -> dict[str, Any]:
    """Time the first prompt, N `n` and a `c` to a far breakpoint in `ndb debug PATH` (see the module)."""
    source = Path(path).read_text(encoding="utf-8")
    entry = entry or entry_call(source)
    program = Program(source=source, path=str(path), entry=entry)
    plan = oracle_plan(program, steps, distance)
    argv = [sys.executable, "-m", "dap_server", "debug", str(path), "--engine", engine]
    if entry:
        argv += ["--entry", entry]
    if model:
        argv += ["--model", model]

    term = Terminal(argv, timeout)
    try:
        first, _ = term.first_prompt()
        figures: dict[str, Any] = {"program": str(path), "lines": len(source.splitlines()), "engine": engine,
                                   "first_prompt_s": round(first, 2)}
        if plan is None:
            figures["continue"] = f"no line is first reached {distance} or more steps from the start"
            return figures
        figures.update({"breakpoint_line": plan.breakpoint_line, "breakpoint_steps_away": plan.breakpoint_steps})
        term.send(f"b {plan.breakpoint_line}")
        next_seconds: list[float] = []
        next_lines: list[int | None] = []
        try:
            seconds, out = term.send("c")
            stopped = stop_line(out)
            figures.update({"continue_s": round(seconds, 2), "continue_stopped_at": stopped})
            if stopped is None:  # the predicted run ended (or stopped nowhere): `n` has nothing to time
                figures["continue_output_tail"] = out[-300:].decode(errors="replace")
            for expected in plan.next_lines if stopped is not None else []:
                if expected is None:
                    break
                seconds, out = term.send("n")
                line = stop_line(out)
                if line is None:  # the predicted run ended here
                    break
                next_seconds.append(seconds)
                next_lines.append(line)
        except TimeoutError:
            figures["timed_out"] = f"a command took over {timeout:.0f} s (`c`, or `n` number {len(next_seconds) + 1})"
    finally:
        term.close()
    if next_seconds:
        ordered = sorted(next_seconds)
        figures.update({
            "n_count": len(next_seconds),
            "n_p50_s": round(statistics.median(ordered), 2),
            "n_p90_s": round(ordered[max(0, round(0.9 * len(ordered)) - 1)], 2),
            "n_max_s": round(ordered[-1], 2),
            "n_stops_as_oracle": sum(a == b for a, b in zip(next_lines, plan.next_lines, strict=False)),
        })
    return figures


def main(argv: list[str] | None = None) -> int:
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("program")
    parser.add_argument("--entry")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--distance", type=int, default=20)
    parser.add_argument("--engine", default="neural")
    parser.add_argument("--model")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    print(json.dumps(bench_session(args.program, args.entry, steps=args.steps, distance=args.distance,
                                   engine=args.engine, model=args.model, timeout=args.timeout), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
