"""A small DAP test client that drives an adapter the way VS Code does.

Modelled on debugpy's test `Session`: the adapter is spawned over stdio (or reached over TCP), every
message in both directions is recorded on a timeline, `launch()` is a context manager whose body is the
configuration phase (breakpoints are set there; `configurationDone` is sent when it exits), and helpers
wait for stops and fetch stack, scopes and variables.

It is deliberately independent of `dap_server`'s own framing code: it has its own strict reader.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DEFAULT_TIMEOUT = 30.0


def frame(message: dict[str, Any] | bytes) -> bytes:
    body = message if isinstance(message, bytes) else json.dumps(message).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class DapTimeout(AssertionError):
    pass


@dataclass
class Entry:
    time: float
    direction: str  # "->" client to adapter, "<-" adapter to client
    message: dict[str, Any]


@dataclass
class Stop:
    reason: str
    body: dict[str, Any]
    frames: list[dict[str, Any]] = field(default_factory=list)

    @property
    def line(self) -> int:
        return self.frames[0]["line"]

    @property
    def function(self) -> str:
        return self.frames[0]["name"]

    @property
    def frame_id(self) -> int:
        return self.frames[0]["id"]


class DapClient:
    """One connection to an adapter. Use `DapClient.stdio()` or `DapClient.tcp(port)`."""

    def __init__(self, write: Callable[[bytes], None], read: Callable[[], bytes], close: Callable[[], None],
                 process: subprocess.Popen[bytes] | None = None) -> None:
        self._write, self._read, self._close = write, read, close
        self.process = process
        self.timeline: list[Entry] = []
        self._seq = 0
        self._inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._seen: list[dict[str, Any]] = []  # every message received, in order
        self._lock = threading.Lock()
        self._eof = False
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()

    # ---- construction ------------------------------------------------------------------------------
    @classmethod
    def stdio(cls, argv: list[str] | None = None, log_file: str | None = None) -> DapClient:
        argv = argv or [sys.executable, "-m", "dap_server.server"]
        if log_file:
            argv = [*argv, "--log-file", log_file]
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=str(REPO), env=env)
        assert proc.stdin is not None and proc.stdout is not None
        stdin, stdout = proc.stdin, proc.stdout

        def write(data: bytes) -> None:
            stdin.write(data)
            stdin.flush()

        def read() -> bytes:
            return stdout.read1(65536)

        def close() -> None:
            with contextlib.suppress(OSError):
                stdin.close()
            wait_or_kill(proc)
            if proc.stderr is not None:
                proc.stderr.close()
            stdout.close()

        return cls(write, read, close, proc)

    @classmethod
    def tcp(cls, port: int, host: str = "127.0.0.1", timeout: float = 10.0) -> DapClient:
        sock = socket.create_connection((host, port), timeout=timeout)
        sock.settimeout(None)

        def read() -> bytes:
            try:
                return sock.recv(65536)
            except OSError:
                return b""

        def close() -> None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

        return cls(sock.sendall, read, close)

    # ---- wire --------------------------------------------------------------------------------------
    def _read_loop(self) -> None:
        buf = b""
        while True:
            chunk = self._read()
            if not chunk:
                break
            buf += chunk
            while True:
                end = buf.find(b"\r\n\r\n")
                if end < 0:
                    break
                header = buf[:end].decode("ascii")
                assert header.startswith("Content-Length: "), f"bad header from adapter: {header!r}"
                length = int(header.split(":", 1)[1])
                if len(buf) < end + 4 + length:
                    break
                message = json.loads(buf[end + 4 : end + 4 + length].decode("utf-8"))
                buf = buf[end + 4 + length :]
                with self._lock:
                    self.timeline.append(Entry(time.monotonic(), "<-", message))
                self._inbox.put(message)
        self._eof = True
        self._inbox.put(None)

    def send_bytes(self, data: bytes) -> None:
        self._write(data)

    def send(self, command: str, arguments: Any = None, **extra: Any) -> int:
        self._seq += 1
        message: dict[str, Any] = {"seq": self._seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        message.update(extra)
        with self._lock:
            self.timeline.append(Entry(time.monotonic(), "->", message))
        self._write(frame(message))
        return self._seq

    def _pump(self, timeout: float) -> dict[str, Any] | None:
        try:
            message = self._inbox.get(timeout=timeout)
        except queue.Empty:
            return None
        if message is not None:
            self._seen.append(message)
        return message

    def wait_for(self, predicate: Callable[[dict[str, Any]], bool], timeout: float = DEFAULT_TIMEOUT,
                 since: int = 0, what: str = "message") -> dict[str, Any]:
        """The first message received (at or after index `since`) that matches `predicate`."""
        deadline = time.monotonic() + timeout
        index = since
        while True:
            while index < len(self._seen):
                if predicate(self._seen[index]):
                    return self._seen[index]
                index += 1
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise DapTimeout(f"timed out waiting for {what}; last messages: {self._seen[-5:]}")
            message = self._pump(min(remaining, 0.5))
            if message is None and self._eof and self._inbox.empty():
                while index < len(self._seen):
                    if predicate(self._seen[index]):
                        return self._seen[index]
                    index += 1
                raise DapTimeout(f"adapter closed the connection while waiting for {what}")

    def response(self, seq: int, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        return self.wait_for(lambda m: m.get("type") == "response" and m.get("request_seq") == seq, timeout,
                             what=f"response to request {seq}")

    def request(self, command: str, arguments: Any = None, timeout: float = DEFAULT_TIMEOUT,
                expect_success: bool | None = True) -> dict[str, Any]:
        seq = self.send(command, arguments)
        resp = self.response(seq, timeout)
        assert resp["command"] == command, resp
        if expect_success is not None:
            assert resp["success"] is expect_success, resp
        return resp

    def mark(self) -> int:
        """An index into the received messages: wait for events that come after this point."""
        self._drain()
        return len(self._seen)

    def _drain(self) -> None:
        while True:
            try:
                message = self._inbox.get_nowait()
            except queue.Empty:
                return
            if message is None:
                self._inbox.put(None)
                return
            self._seen.append(message)

    def event(self, name: str, since: int = 0, timeout: float = DEFAULT_TIMEOUT) -> dict[str, Any]:
        return self.wait_for(lambda m: m.get("type") == "event" and m.get("event") == name, timeout, since,
                             what=f"event {name!r}")

    def received(self) -> list[dict[str, Any]]:
        self._drain()
        return list(self._seen)

    def close(self) -> None:
        self._close()
        self._reader.join(timeout=10)


class Session:
    """A debugging session over a DapClient, in the order VS Code drives one."""

    def __init__(self, client: DapClient) -> None:
        self.client = client
        self.capabilities: dict[str, Any] = {}
        self._launch_seq: int | None = None
        self._stop_mark = 0
        self.program: str | None = None

    def initialize(self) -> dict[str, Any]:
        resp = self.client.request("initialize", {
            "clientID": "ndb-tests", "adapterID": "neural-debug", "linesStartAt1": True, "columnsStartAt1": True,
            "pathFormat": "path", "supportsVariableType": True, "supportsVariablePaging": True,
            "supportsProgressReporting": True,  # as VS Code does
        })
        self.capabilities = resp["body"]
        return self.capabilities

    @contextlib.contextmanager
    def launch(self, program: str | Path, engine: str = "oracle", **arguments: Any) -> Iterator[Session]:
        """launch -> initialized event -> (body: configuration) -> configurationDone -> launch response."""
        self.program = str(program)
        mark = self.client.mark()
        self._launch_seq = self.client.send("launch", {"program": str(program), "engine": engine, **arguments})
        self.client.wait_for(
            lambda m: (m.get("type") == "event" and m.get("event") == "initialized")
            or (m.get("type") == "response" and m.get("request_seq") == self._launch_seq),
            since=mark, what="initialized event",
        )
        self._stop_mark = mark
        yield self
        self.configuration_done()

    def configuration_done(self) -> dict[str, Any]:
        self.client.request("configurationDone")
        assert self._launch_seq is not None
        resp = self.client.response(self._launch_seq)
        assert resp["success"], resp
        return resp

    def set_breakpoints(self, breakpoints: list[int | dict[str, Any]], path: str | None = None) -> list[dict[str, Any]]:
        specs = [b if isinstance(b, dict) else {"line": b} for b in breakpoints]
        resp = self.client.request("setBreakpoints", {"source": {"path": path or self.program},
                                                      "breakpoints": specs})
        return resp["body"]["breakpoints"]

    def set_exception_breakpoints(self, filters: list[str]) -> dict[str, Any]:
        return self.client.request("setExceptionBreakpoints", {"filters": filters})

    # ---- running -----------------------------------------------------------------------------------
    def wait_for_stop(self, reason: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> Stop:
        """The next `stopped` event (after the last command), then threads and stackTrace as VS Code asks."""
        event = self.client.wait_for(
            lambda m: m.get("type") == "event" and m.get("event") in ("stopped", "terminated"),
            timeout, self._stop_mark, what="stopped event",
        )
        assert event["event"] == "stopped", f"program ended instead of stopping: {event}"
        self._stop_mark = self.client.mark()
        body = event["body"]
        if reason is not None:
            assert body["reason"] == reason, body
        threads = self.client.request("threads")["body"]["threads"]
        assert threads and threads[0]["id"] == body["threadId"]
        frames = self.client.request("stackTrace", {"threadId": body["threadId"]})["body"]["stackFrames"]
        return Stop(body["reason"], body, frames)

    def wait_for_exit(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        exited = self.client.wait_for(
            lambda m: m.get("type") == "event" and m.get("event") in ("exited", "stopped"),
            timeout, self._stop_mark, what="exited event",
        )
        assert exited["event"] == "exited", f"stopped instead of exiting: {exited}"
        self.client.event("terminated", since=self._stop_mark, timeout=timeout)
        self._stop_mark = self.client.mark()
        return int(exited["body"]["exitCode"])

    def command(self, command: str, expect_success: bool = True) -> dict[str, Any]:
        self._stop_mark = self.client.mark()
        return self.client.request(command, {"threadId": 1}, expect_success=expect_success)

    def step(self, command: str, reason: str | None = None) -> Stop:
        self.command(command)
        return self.wait_for_stop(reason)

    # ---- inspecting --------------------------------------------------------------------------------
    def scopes(self, frame_id: int = 1) -> list[dict[str, Any]]:
        return self.client.request("scopes", {"frameId": frame_id})["body"]["scopes"]

    def variables(self, reference: int) -> list[dict[str, Any]]:
        return self.client.request("variables", {"variablesReference": reference})["body"]["variables"]

    def get_variables(self, frame_id: int = 1, scope: str = "Locals") -> dict[str, str]:
        for s in self.scopes(frame_id):
            if s["name"] == scope:
                return {v["name"]: v["value"] for v in self.variables(s["variablesReference"])}
        raise AssertionError(f"no scope {scope!r}")

    def get_variable(self, name: str, frame_id: int = 1) -> dict[str, Any]:
        scope = self.scopes(frame_id)[0]
        for v in self.variables(scope["variablesReference"]):
            if v["name"] == name:
                return v
        raise AssertionError(f"no variable {name!r}")

    def evaluate(self, expression: str, context: str = "watch", expect_success: bool = True) -> dict[str, Any]:
        resp = self.client.request("evaluate", {"expression": expression, "frameId": 1, "context": context},
                                   expect_success=expect_success)
        return resp

    def output(self, category: str = "stdout") -> str:
        return "".join(
            m["body"]["output"] for m in self.client.received()
            if m.get("event") == "output" and m["body"].get("category", "console") == category
        )

    def disconnect(self) -> None:
        with contextlib.suppress(DapTimeout, AssertionError, OSError):
            self.client.request("disconnect", {"terminateDebuggee": True}, timeout=10)


@contextlib.contextmanager
def opened(client: DapClient) -> Iterator[Session]:
    """An initialized session on `client`; disconnected and closed on the way out."""
    session = Session(client)
    try:
        session.initialize()
        yield session
    finally:
        session.disconnect()
        client.close()


def stdio_session(log_file: str | None = None) -> contextlib.AbstractContextManager[Session]:
    return opened(DapClient.stdio(log_file=log_file))


class TcpServer:
    """`python -m dap_server.server --port 0` (or `module`, e.g. ("dap_server", "dap") for `ndb dap`) in a
    subprocess; `.port` once it is listening."""

    def __init__(self, module: tuple[str, ...] = ("dap_server.server",)) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        self.process = subprocess.Popen([sys.executable, "-m", *module, "--port", "0"],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(REPO), env=env,
                                        text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert "listening on 127.0.0.1:" in line, line
        self.port = int(line.rsplit(":", 1)[1])

    def close(self) -> None:
        self.process.terminate()
        wait_or_kill(self.process)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def wait_or_kill(process: subprocess.Popen[Any], timeout: float = 10) -> None:
    """Wait for a process told to end; kill it if it has not within `timeout` seconds."""
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=timeout)


def tcp_session(server: TcpServer) -> contextlib.AbstractContextManager[Session]:
    return opened(DapClient.tcp(server.port))
