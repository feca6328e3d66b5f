"""`ndb bench worker`: N simulated debug sessions stepping at once against a model worker.

Each simulated user has its own connection (as each IDE's adapter does), opens a small program and takes
`steps` actions from a seeded mix (mostly step_into / step_over, some step_return, continue to a
breakpoint and step back), restarting the program when it exits. Step latency is measured at the client
from request to answer; states/s counts answered steps over the wall time of the whole run.
`errors` counts requests that failed (EngineError from the client); predictions the model got wrong
(`State.error`) are counted apart as `prediction_failures`. The users walk the trajectories the model
predicts, so one user whose predicted state goes astray (very long values) can hold the whole run: the
report names the slowest session and the longest step.
"""

from __future__ import annotations

import os
import random
import re
import statistics
import subprocess
import sys
import threading
import time
from typing import Any

from model_backend.engine.base import EngineError
from model_backend.program import Program
from model_backend.state import Action

PROGRAMS: list[tuple[str, str | None]] = [
    ("def count(s, t):\n    n = 0\n    for c in s:\n        if c == t:\n            n += 1\n    return n\n",
     "count('berry', 'r')"),
    ("def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n", "fact(5)"),
    ("def total(xs):\n    s = 0\n    for x in xs:\n        s = s + x * x\n    return s\n", "total([1, 2, 3, 4])"),
    ("def rev(words):\n    out = []\n    for w in words:\n        out.insert(0, w.upper())\n    return out\n",
     "rev(['a', 'bc', 'd'])"),
    ("def fib(n):\n    a, b = 0, 1\n    for _ in range(n):\n        a, b = b, a + b\n    return a\n", "fib(7)"),
    ("x = 3\ny = [i * x for i in range(4)]\nz = sum(y)\nprint(z)\n", None),
]
ACTION_MIX = [("step_into", 5), ("step_over", 3), ("step_return", 1), ("continue", 1), ("inv_step_over", 1)]
READY = re.compile(r"serving (ws://\S+)")


def start_local_worker(model: str | None, engine: str, device: str, extra: list[str] | None = None,
                       timeout: float = 600.0) -> tuple[subprocess.Popen[str], str]:
    """`ndb worker --port 0` as a child process; returns it and its URL once it listens."""
    command = [sys.executable, "-m", "model_backend.worker", "worker", "--port", "0", "--engine", engine,
               "--device", device, *(["--model", model] if model else []), *(extra or [])]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    seen: list[str] = []
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        match = READY.search(line)
        if match:
            threading.Thread(target=_drain, args=(proc,), daemon=True).start()
            return proc, match.group(1)
    proc.kill()
    raise RuntimeError("the worker did not start:\n" + "".join(seen[-20:]))


def _drain(proc: subprocess.Popen[str]) -> None:
    assert proc.stdout is not None
    for _ in proc.stdout:
        pass


class SimulatedUser:
    """User `index` of a run seeded `seed`: its program and its seeded actions (scripts/replay_bench_user.py,
    in git at 7e62079, replays the same ones on an in-process engine)."""

    def __init__(self, index: int, seed: int) -> None:
        self.rng = random.Random(seed * 1000 + index)
        source, self.entry = PROGRAMS[index % len(PROGRAMS)]
        self.program = Program(source=source, path=f"<bench {index}>", entry=self.entry)
        self.kinds = [k for k, w in ACTION_MIX for _ in range(w)]

    def next_action(self) -> tuple[Action, frozenset[int]]:
        """The next action, and the breakpoints it runs to (one random line for continue)."""
        action = Action(kind=self.rng.choice(self.kinds))  # type: ignore[arg-type]
        lines = len(self.program.lines)
        return action, frozenset({self.rng.randint(1, lines)}) if action.kind == "continue" else frozenset()


def _user(url: str, token: str | None, index: int, steps: int, seed: int, barrier: threading.Barrier,
          out: dict[str, Any]) -> None:
    from model_backend.worker.client import WorkerEngine

    user = SimulatedUser(index, seed)
    program = user.program
    engine = WorkerEngine(url, token=token)
    latencies: list[float] = []
    actions: list[str] = []
    errors: list[str] = []
    failures = 0
    try:
        barrier.wait()
        try:
            state = engine.start(program)
        except EngineError as exc:
            errors.append(f"start: {exc}")
            return
        for _ in range(steps):
            if state.event == "exit":
                try:
                    state = engine.start(program)
                except EngineError as exc:
                    errors.append(f"restart: {exc}")
                    continue
            action, breakpoints = user.next_action()
            began = time.perf_counter()
            try:
                state = engine.step(action, breakpoints)
            except EngineError as exc:
                errors.append(f"{action}: {exc}")
                continue
            latencies.append(time.perf_counter() - began)
            actions.append(action.kind)
            if state.error:
                failures += 1
    finally:
        engine.close()
        out[str(index)] = {"latencies": latencies, "actions": actions, "errors": errors, "failures": failures,
                           "program": user.entry or "<module>"}


def run_bench(url: str | None = None, sessions: int = 8, steps: int = 20, model: str | None = None,
              engine: str = "transformers", device: str = "cpu", token: str | None = None, seed: int = 0,
              threads: int | None = 1) -> dict[str, Any]:
    from model_backend.worker.client import WorkerClient

    proc = None
    if url is None:
        proc, url = start_local_worker(model, engine, device, ["--threads", str(threads)] if threads else None)
    try:
        results: dict[str, Any] = {}
        barrier = threading.Barrier(sessions + 1)
        users = [threading.Thread(target=_user, args=(url, token, i, steps, seed, barrier, results), daemon=True)
                 for i in range(sessions)]
        for user in users:
            user.start()
        barrier.wait()
        began = time.perf_counter()
        for user in users:
            user.join()
        wall = time.perf_counter() - began
        client = WorkerClient(url, token=token)
        try:
            health = client.health().model_dump()
        except EngineError:
            health = {}
        finally:
            client.close()
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    latencies = sorted(x for r in results.values() for x in r["latencies"])
    errors = [e for r in results.values() for e in r["errors"]] + [f"session {i} did not finish" for i in range(sessions) if str(i) not in results]
    return {
        "url": url, "threads": threads if proc is not None else None, "sessions": sessions, "steps": steps, "engine": health.get("engine", engine),
        "device": health.get("device", device), "model": health.get("model", model),
        "p50_ms": _percentile(latencies, 50) * 1000, "p99_ms": _percentile(latencies, 99) * 1000,
        "mean_ms": statistics.fmean(latencies) * 1000 if latencies else 0.0,
        "states_per_s": len(latencies) / wall if wall > 0 else 0.0, "answered": len(latencies), "wall_s": wall,
        "errors": len(errors), "error_samples": errors[:5],
        "prediction_failures": sum(r["failures"] for r in results.values()),
        "mean_batch": health.get("mean_batch", 0.0), "max_batch_seen": health.get("max_seen_batch", 0),
        **stragglers(results),
    }


def stragglers(results: dict[str, Any]) -> dict[str, Any]:
    """The session with the most step time, and the longest single step (which session, which action)."""
    totals = {key: sum(r["latencies"]) for key, r in results.items() if r["latencies"]}
    if not totals:
        return {}
    slowest = max(totals, key=totals.__getitem__)
    ms, session, action = max((latency * 1000, key, kind) for key, r in results.items()
                              for latency, kind in zip(r["latencies"], r["actions"], strict=True))
    return {
        "slowest_session": {"session": int(slowest), "program": results[slowest]["program"],
                            "step_s": totals[slowest], "steps": len(results[slowest]["latencies"])},
        "longest_step": {"session": int(session), "action": action, "ms": ms},
    }


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    rank = max(0, min(len(values) - 1, round(q / 100 * (len(values) - 1))))
    return values[rank]


def format_report(f: dict[str, Any]) -> str:
    lines = [
        f"worker: {f['url']} (engine {f['engine']}, device {f['device']}, model {f['model']}"
        + (f", {f['threads']} torch thread(s))" if f.get("threads") else ")"),
        f"sessions: {f['sessions']}, steps per session: {f['steps']}, answered steps: {f['answered']} in {f['wall_s']:.1f} s",
        f"p50 step latency: {f['p50_ms']:.1f} ms",
        f"p99 step latency: {f['p99_ms']:.1f} ms",
        f"states/s: {f['states_per_s']:.2f}",
        *_straggler_lines(f),
        f"mean batch: {f['mean_batch']:.2f} (largest {f['max_batch_seen']})",
        f"prediction failures: {f['prediction_failures']}",
        f"errors: {f['errors']}",
    ]
    lines += [f"  {e}" for e in f["error_samples"]]
    return "\n".join(lines)


def _straggler_lines(f: dict[str, Any]) -> list[str]:
    if not f.get("slowest_session"):
        return []
    slow, step = f["slowest_session"], f["longest_step"]
    return [f"slowest session: #{slow['session']} ({slow['program']}), {slow['step_s']:.1f} s over {slow['steps']} "
            f"steps; longest step: {step['ms']:.1f} ms (#{step['session']}, {step['action']})"]
