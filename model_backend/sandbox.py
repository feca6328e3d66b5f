"""Run the tracer on untrusted code in a separate, resource-limited process.

Whatever the program does (loops, allocates 50 GB, forks, writes a huge file, kills itself,
segfaults), `run_trace` returns a TraceResult with a clear exit code and reason within its limits,
and the caller keeps working. Limits: CPU time, address space, process count, file size, open
files, a wall-clock timeout, a fresh temporary working directory, closed stdin, no core dumps,
and an audit hook in the child that refuses forks, exec, signals, network and writes elsewhere.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

from model_backend.program import Program
from model_backend.state import TraceEvent, TraceResult

TRACER_PATH = Path(__file__).with_name("tracer.py")
_MAX_PIPE_BYTES = 256 << 20  # the parent never buffers more than this from one child


# The most events a session may ask the oracle to record (`--max-events`, launch.json `maxEvents`): a
# recorded event costs about 3.7 KB of the debugger's memory (100,000 events: 367 MB, 4 s to record).
MAX_EVENTS_CEILING = 500_000


class Limits(BaseModel):
    wall_time: float = 10.0  # seconds, whole child
    cpu_time: int = 10  # seconds of CPU
    memory_mb: int = 1024  # address space
    file_size_mb: int = 16  # largest file the program may write
    max_events: int = 10_000
    max_repr: int = 200  # characters per repr, then "..."
    # Record, at each event of a function's frame, the module globals its code names (for a debugging
    # session's `p GLOBAL`; the training data and the model's format have no globals).
    record_globals: bool = False
    # Record the attributes of the program's own objects (what a session expands under `self`); the
    # model's format has none either.
    record_attributes: bool = False
    max_stdout: int = 1 << 20


class Patch(BaseModel):
    """Set `name` to the value of `value` (a Python expression) just before event `index` is recorded;
    or, with `jump`, make line event `index` jump to that line of its frame (pdb's `jump`: the line is
    not run; Python refuses some jumps, e.g. into a block, and the run then ends with exit_reason
    "jump refused: ...")."""

    index: int
    name: str = ""
    value: str = ""
    jump: int | None = None


def _limit_child(limits: Limits) -> None:
    """preexec_fn: runs in the child between fork and exec."""
    mem = limits.memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_time, limits.cpu_time + 1))
    fsize = limits.file_size_mb << 20
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    # Counts all of the user's processes, and root is exempt; the audit hook refuses fork too.
    nproc = resource.getrlimit(resource.RLIMIT_NPROC)[1]
    resource.setrlimit(resource.RLIMIT_NPROC, (min(64, nproc) if nproc > 0 else 64, nproc))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write raises OSError instead


def _describe_signal(code: int) -> str:
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def run_check(source: str, limits: Limits | None = None) -> TraceResult:
    """Run `source` untraced in the sandbox (e.g. an `assert`); exit "normal" means it passed."""
    return run_trace(Program(source=source, path="<check>"), limits, trace=False)


def run_trace(
    program: Program, limits: Limits | None = None, patches: list[Patch] | None = None, trace: bool = True
) -> TraceResult:
    """Trace `program` in a sandboxed child process. Never raises for anything the program does."""
    limits = limits or Limits()
    with tempfile.TemporaryDirectory(prefix="ndb-sandbox-") as workdir:
        request = {
            "path": program.path,
            "source": program.source,
            "entry": program.entry,
            "argv": program.argv,
            "max_events": limits.max_events,
            "max_repr": limits.max_repr,
            "record_globals": limits.record_globals,
            "record_attributes": limits.record_attributes,
            "max_stdout": limits.max_stdout,
            "time_limit": limits.wall_time,
            "patches": [p.model_dump() for p in patches or []],
            "no_trace": not trace,
        }
        request_path = os.path.join(workdir, "request.json")
        with open(request_path, "w", encoding="utf-8") as fh:
            json.dump(request, fh)
        read_fd, write_fd = os.pipe()
        stderr_path = os.path.join(workdir, ".stderr")
        try:
            with open(stderr_path, "wb") as stderr:
                proc = subprocess.Popen(
                    # absolute: sys.executable is relative when python was found through a relative PATH
                    # entry, and the child starts in workdir
                    [os.path.abspath(sys.executable), "-I", "-X", "utf8", str(TRACER_PATH), request_path, str(write_fd)],
                    cwd=workdir,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    pass_fds=(write_fd,),
                    preexec_fn=lambda: _limit_child(limits),
                    start_new_session=True,  # its own process group, killed as a whole
                    env={"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "LANG": "C.UTF-8"},
                )
        finally:
            os.close(write_fd)
        data, timed_out = _read_all(read_fd, proc, limits.wall_time)
        returncode, cpu_seconds = _kill_group(proc)
        stderr_tail = _tail(stderr_path)
    # SIGXCPU comes only from the CPU rlimit; a SIGKILL we did not send is its hard limit.
    cpu_exhausted = returncode == -signal.SIGXCPU or cpu_seconds >= limits.cpu_time - 0.5
    return _build_result(data, returncode, timed_out, cpu_exhausted, limits, stderr_tail)


def _read_all(fd: int, proc: subprocess.Popen[bytes], wall_time: float) -> tuple[bytes, bool]:
    """Read the child's event stream until EOF or the wall-clock limit."""
    deadline = time.monotonic() + wall_time + 0.5  # the child checks its own deadline first
    chunks: list[bytes] = []
    size = 0
    timed_out = False
    with os.fdopen(fd, "rb", buffering=0) as pipe, selectors.DefaultSelector() as sel:
        sel.register(pipe, selectors.EVENT_READ)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            if not sel.select(timeout=remaining):
                continue
            chunk = pipe.read(1 << 16)
            if not chunk:
                break
            if size < _MAX_PIPE_BYTES:
                chunks.append(chunk)
                size += len(chunk)
    return b"".join(chunks), timed_out


def _kill_group(proc: subprocess.Popen[bytes]) -> tuple[int, float]:
    """Kill the child's whole process group; return its exit status and the CPU seconds it used."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime


def _tail(path: str, size: int = 2000) -> str:
    try:
        with open(path, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            fh.seek(max(0, fh.tell() - size))
            return fh.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _build_result(
    data: bytes, returncode: int, timed_out: bool, cpu_exhausted: bool, limits: Limits, stderr_tail: str
) -> TraceResult:
    events: list[TraceEvent] = []
    end: dict[str, object] | None = None
    for raw in data.split(b"\n"):
        if not raw:
            continue
        try:
            obj = json.loads(raw)
            if "end" in obj:
                end = obj
                break
            events.append(TraceEvent.model_validate(obj))
        except (ValueError, ValidationError):
            break  # a line cut short by a kill: keep what came before it
    if end is not None:
        return TraceResult(
            events=events,
            exit=end["end"],  # type: ignore[arg-type]
            exit_reason=end.get("reason"),  # type: ignore[arg-type]
            stdout_tail=str(end.get("stdout") or ""),
            truncated=bool(end.get("truncated")),
        )
    # No end record: the child was stopped from outside or stopped itself.
    if timed_out:
        return TraceResult(events=events, exit="never", exit_reason=f"wall-clock limit of {limits.wall_time:g}s reached")
    if cpu_exhausted and returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        return TraceResult(events=events, exit="never", exit_reason=f"CPU time limit of {limits.cpu_time}s reached")
    if returncode < 0:
        reason = f"the program's process was killed by {_describe_signal(returncode)}"
        if returncode == -signal.SIGSEGV:
            reason = "the program crashed with a segmentation fault (SIGSEGV)"
        return TraceResult(events=events, exit="error", exit_reason=reason)
    if returncode == 0:
        return TraceResult(events=events, exit="normal", exit_reason="the program ended with os._exit(0)")
    detail = stderr_tail.splitlines()[-1] if stderr_tail else ""
    reason = f"the program's process exited with status {returncode}" + (f": {detail}" if detail else "")
    return TraceResult(events=events, exit="error", exit_reason=reason)
