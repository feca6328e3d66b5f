"""Benchmark: the debug adapter's own overhead per step, beside debugpy's on the same program.

For each adapter (ours: `python -m dap_server.server` with the oracle engine; debugpy:
`python -m debugpy.adapter` launching the program with justMyCode) the benchmark starts a session over
stdio exactly as VS Code does, sets a breakpoint on the program's first executable line, and then sends
`next` N times, timing each from the moment the request is written to the moment the `stopped` event is
read. A second figure, "step + inspect", adds what VS Code asks on every stop (threads, stackTrace, scopes,
variables of the top frame). When the program ends before N steps, a new session is started (its start-up
is not timed) and counting goes on.

For our adapter the oracle engine's own time for the same transitions is measured in process too, so the
adapter's overhead (framing, validation, session logic, process boundary) = step latency - engine time.

`python -m dap_server.bench PROGRAM [--steps N]` prints the result as JSON.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import queue
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from dap_server.breakpoints import LineMap

REPO = Path(__file__).resolve().parents[1]
TIMEOUT = 60.0


class _Client:
    """A minimal blocking DAP client over a child process's stdio."""

    def __init__(self, argv: list[str]) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=str(REPO), env=env)
        self.seq = 0
        self.inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self.pending: list[dict[str, Any]] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        stream = self.proc.stdout
        while True:
            header = b""
            while not header.endswith(b"\r\n\r\n"):
                byte = stream.read(1)
                if not byte:
                    self.inbox.put(None)
                    return
                header += byte
            length = 0
            for line in header.split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
            body = stream.read(length)
            self.inbox.put(json.loads(body))

    def send(self, command: str, arguments: dict[str, Any] | None = None) -> int:
        self.seq += 1
        message: dict[str, Any] = {"seq": self.seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        data = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()
        return self.seq

    def wait(self, predicate: Any, timeout: float = TIMEOUT) -> dict[str, Any]:
        for i, message in enumerate(self.pending):
            if predicate(message):
                return self.pending.pop(i)
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError("no answer from the adapter")
            try:
                item = self.inbox.get(timeout=remaining)
            except queue.Empty:
                raise TimeoutError("no answer from the adapter") from None
            if item is None:
                raise EOFError("the adapter closed its output")
            if predicate(item):
                return item
            self.pending.append(item)

    def request(self, command: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        seq = self.send(command, arguments)
        return self.wait(lambda m: m.get("type") == "response" and m.get("request_seq") == seq)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.send("disconnect", {"terminateDebuggee": True})
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)


def _is_stop(message: dict[str, Any]) -> bool:
    return message.get("type") == "event" and message.get("event") in ("stopped", "terminated", "exited")


def _session(kind: str, program: str, first_line: int) -> _Client:
    if kind == "ndb":
        client = _Client([sys.executable, "-m", "dap_server.server"])
        client.request("initialize", {"adapterID": "neural-debug", "linesStartAt1": True, "columnsStartAt1": True})
        launch: dict[str, Any] = {"program": program, "engine": "oracle"}
    else:
        client = _Client([sys.executable, "-m", "debugpy.adapter"])
        client.request("initialize", {"adapterID": "python", "clientID": "ndb-bench", "linesStartAt1": True,
                                      "columnsStartAt1": True, "pathFormat": "path"})
        launch = {"type": "python", "request": "launch", "program": program, "justMyCode": True,
                  "console": "internalConsole", "cwd": str(Path(program).parent)}
    launch_seq = client.send("launch", launch)
    client.wait(lambda m: m.get("event") == "initialized" or (m.get("type") == "response"
                                                               and m.get("request_seq") == launch_seq))
    client.request("setBreakpoints", {"source": {"path": program}, "breakpoints": [{"line": first_line}]})
    client.request("setExceptionBreakpoints", {"filters": []})
    client.request("configurationDone")
    client.wait(lambda m: m.get("type") == "response" and m.get("request_seq") == launch_seq)
    stop = client.wait(_is_stop)
    if stop.get("event") != "stopped":
        raise RuntimeError(f"{kind}: the program ended before reaching line {first_line}")
    return client


def _inspect(client: _Client, thread_id: int) -> None:
    frames = client.request("stackTrace", {"threadId": thread_id, "startFrame": 0, "levels": 20})
    frame_id = frames["body"]["stackFrames"][0]["id"]
    scopes = client.request("scopes", {"frameId": frame_id})["body"]["scopes"]
    if scopes:
        client.request("variables", {"variablesReference": scopes[0]["variablesReference"]})


def _measure(kind: str, program: str, steps: int, first_line: int) -> dict[str, Any]:
    step_times: list[float] = []
    inspect_times: list[float] = []
    sessions = 0
    client = _session(kind, program, first_line)
    sessions += 1
    thread_id = client.request("threads")["body"]["threads"][0]["id"]
    try:
        while len(step_times) < steps:
            start = time.perf_counter()
            seq = client.send("next", {"threadId": thread_id})
            stop = client.wait(_is_stop)
            elapsed = time.perf_counter() - start
            client.wait(lambda m, seq=seq: m.get("type") == "response" and m.get("request_seq") == seq)
            if stop.get("event") != "stopped":
                client.close()  # the program ended: a new session (not timed) and go on counting
                client = _session(kind, program, first_line)
                sessions += 1
                thread_id = client.request("threads")["body"]["threads"][0]["id"]
                continue
            step_times.append(elapsed)
            t0 = time.perf_counter()
            client.request("threads")
            _inspect(client, thread_id)
            inspect_times.append(elapsed + time.perf_counter() - t0)
    finally:
        client.close()
    return {**_stats(step_times), "inspect_median_ms": _ms(statistics.median(inspect_times)),
            "sessions": sessions}


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


def _stats(times: list[float]) -> dict[str, Any]:
    ordered = sorted(times)
    return {
        "steps": len(times),
        "median_ms": _ms(statistics.median(ordered)),
        "mean_ms": _ms(statistics.fmean(ordered)),
        "p95_ms": _ms(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]),
        "min_ms": _ms(ordered[0]),
    }


def _engine_only(program: str, steps: int, first_line: int) -> dict[str, Any]:
    """The oracle engine's own time for the same `next` transitions, in process."""
    from model_backend.engine.oracle import OracleEngine
    from model_backend.program import Program
    from model_backend.state import Action

    loaded = Program.load(program)
    engine = OracleEngine()
    times: list[float] = []
    bps = frozenset({first_line})
    while len(times) < steps:
        state = engine.start(loaded)
        if not (state.event == "line" and state.line == first_line):
            state = engine.step(Action(kind="continue"), bps)
        while len(times) < steps and state.event != "exit":
            t0 = time.perf_counter()
            state = engine.step(Action(kind="step_over"), bps)
            elapsed = time.perf_counter() - t0
            if state.event != "exit":
                times.append(elapsed)
    return _stats(times)


def run_bench(program: str, steps: int) -> dict[str, Any]:
    """Per-step latency (request `next` -> event `stopped`) of ndb (oracle) and of debugpy, same program."""
    path = str(Path(program).resolve())
    lines = LineMap.from_source(Path(path).read_text(encoding="utf-8"), path)
    if not lines.executable:
        raise ValueError(f"{program} has no executable line")
    first_line = min(lines.executable)
    result: dict[str, Any] = {
        "program": path,
        "steps": steps,
        "first_line": first_line,
        "python": platform.python_version(),
        "machine": f"{platform.system()} {platform.machine()}, {os.cpu_count()} CPUs",
    }
    ndb = _measure("ndb", path, steps, first_line)
    engine = _engine_only(path, steps, first_line)
    ndb["engine_median_ms"] = engine["median_ms"]
    ndb["overhead_median_ms"] = round(ndb["median_ms"] - engine["median_ms"], 3)
    result["ndb"] = ndb
    try:
        import debugpy  # noqa: F401

        result["debugpy"] = _measure("debugpy", path, steps, first_line)
    except Exception as exc:  # noqa: BLE001 - report, do not fail the whole benchmark
        result["debugpy"] = {"error": f"{type(exc).__name__}: {exc}"}
    return result


def main(argv: list[str] | None = None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m dap_server.bench", description=__doc__.splitlines()[0])
    parser.add_argument("program")
    parser.add_argument("--steps", type=int, default=200)
    ns = parser.parse_args(argv)
    print(json.dumps(run_bench(ns.program, ns.steps), indent=2))


if __name__ == "__main__":
    main()
