"""Run the tracer on untrusted code in a separate, isolated, resource-limited process.

Whatever the program does (loops, allocates 50 GB, forks, writes a huge file, kills itself,
segfaults, switches off the tracer's audit hook), `run_trace` returns a TraceResult with a clear exit
code and reason within its limits, and the caller keeps working.

Isolation is the operating system's, through bubblewrap (`bwrap`, on PATH or at `$NDB_BWRAP`): new
user, PID, network, IPC, UTS and cgroup namespaces (the program runs as uid 65534 and sees no network
and no process outside its own); a root file system that holds only /usr, the Python interpreter and the
tracer, all read-only, with a size-bounded tmpfs as the only writable directory (nothing of the run is
ever on the host's disk); a seccomp filter (libseccomp, through `pyseccomp`) refusing new processes,
new namespaces, sockets other than AF_UNIX, ptrace and kernel interfaces; `--die-with-parent` and a new
session. On top of that: rlimits on CPU time, address space, file size and open files, a wall-clock
timeout, closed stdin, no core dumps, and the tracer's audit hook as a second layer (docs/threat-model.md).

Where the kernel refuses namespaces (macOS, some containers) or bwrap is missing, `run_trace` raises
`SandboxUnavailable`, whose message names `--no-sandbox`. That flag (or `NDB_NO_SANDBOX=1`) is the explicit
opt-in that runs the program as the user's own code, the way debugpy does (`run_unsandboxed`), with a
warning: there is never a silently weaker sandbox.

The caller is bounded as well: the event stream is parsed line by line as it arrives, and a run stops
(with a "truncated at N" reason) at `max_events` events or `MAX_TRACE_BYTES` bytes of events.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import resource
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

from pydantic import BaseModel, ValidationError

from model_backend.program import Program
from model_backend.state import StackFrame, TraceEvent, TraceResult

TRACER_PATH = Path(__file__).with_name("tracer.py")
# The most bytes of events the parent reads from one run (then it stops the child): a parsed event costs
# a few times its JSON text, so this keeps the debugger's memory under twice the child's 1 GB cap.
MAX_TRACE_BYTES = 96 << 20
MAX_LINE_BYTES = 16 << 20  # one event's JSON line (a deep stack, many locals) at most
_STDERR_TAIL = 2000

# The most events a session may ask the oracle to record (`--max-events`, launch.json `maxEvents`): a
# recorded event costs about 3.7 KB of the debugger's memory (100,000 events: 367 MB, 4 s to record).
MAX_EVENTS_CEILING = 500_000

# Inside the sandbox: the program's working directory (a tmpfs) and where the tracer is mounted.
SANDBOX_WORKDIR = "/tmp/ndb-sandbox-run"
SANDBOX_TRACER = "/ndb/tracer.py"
SANDBOX_UID = 65534  # nobody
NO_SANDBOX_ENV = "NDB_NO_SANDBOX"
BWRAP_ENV = "NDB_BWRAP"


class SandboxUnavailable(RuntimeError):
    """The operating system's isolation cannot start here; the message says why and names --no-sandbox."""


class Limits(BaseModel):
    wall_time: float = 10.0  # seconds, whole child
    cpu_time: int = 10  # seconds of CPU
    memory_mb: int = 1024  # address space
    file_size_mb: int = 16  # largest file the program may write (its directory holds 4 times this)
    max_events: int = 10_000
    max_repr: int = 200  # characters per repr, then "..."
    # Record, at each event of a function's frame, the module globals its code names (for a debugging
    # session's `p GLOBAL`; the training data and the model's format have no globals).
    record_globals: bool = False
    # Record the attributes of the program's own objects (what a session expands under `self`); the
    # model's format has none either.
    record_attributes: bool = False
    # Write the program's objects that have no __repr__ as `Class(field=value, ...)` (trace format 3);
    # off, they read `<__main__.Class object>` as Python writes them (format 2, what older models read).
    objects: bool = True
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


# ---- isolation ---------------------------------------------------------------------------------

_NO_SANDBOX_WARNING = (
    "ndb: warning: --no-sandbox: the oracle runs your program as your own code, with no isolation "
    "(only rlimits and an audit hook the program can switch off), the way debugpy does"
)
_warned = False
_probe_lock = threading.Lock()
_probe_result: str | SandboxUnavailable | None = None  # the bwrap path, or why the sandbox cannot start
_seccomp_bpf: bytes | None = None

# Syscalls the seccomp filter refuses (EPERM) beyond what the namespaces already take away: new
# processes, namespaces and mounts, other processes' memory, kernel interfaces a program never needs.
_DENIED_SYSCALLS = (
    "fork", "vfork", "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree",
    "fsopen", "fsmount", "fsconfig", "fspick", "mount_setattr", "bpf", "perf_event_open",
    "userfaultfd", "keyctl", "add_key", "request_key", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "reboot", "swapon", "swapoff", "acct", "syslog", "quotactl",
    "open_by_handle_at", "name_to_handle_at", "lookup_dcookie", "settimeofday", "clock_settime",
    "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "iopl", "ioperm", "vhangup",
    "uselib", "personality", "mknod", "mknodat",
)
_CLONE_THREAD = 0x00010000
_AF_UNIX = 1


def run_unsandboxed() -> None:
    """The explicit opt-in of `--no-sandbox`: every later run in this process and its children runs
    the program without the operating system's isolation. Warns once on stderr."""
    os.environ[NO_SANDBOX_ENV] = "1"
    _warn_unsandboxed()


def _warn_unsandboxed() -> None:
    global _warned
    if not _warned:
        _warned = True
        print(_NO_SANDBOX_WARNING, file=sys.stderr, flush=True)


def unsandboxed() -> bool:
    return os.environ.get(NO_SANDBOX_ENV, "") not in ("", "0")


def _refusal(why: str) -> SandboxUnavailable:
    return SandboxUnavailable(
        f"the sandbox cannot start here: {why}. The oracle runs a program only inside it (bubblewrap: user, "
        "PID, network and mount namespaces and a seccomp filter), and this kernel or container refuses it "
        "(macOS has no namespaces; some containers forbid them). To run the program anyway as your own code, "
        "without isolation, the way debugpy does, pass --no-sandbox (or set NDB_NO_SANDBOX=1)."
    )


def seccomp_filter() -> bytes:
    """The seccomp program (classic BPF, as libseccomp exports it) that bwrap loads before the tracer
    starts. clone3 answers ENOSYS, so that glibc falls back to clone, whose flags the filter can read:
    a thread (CLONE_THREAD) is allowed, a new process is not."""
    global _seccomp_bpf
    if _seccomp_bpf is None:
        try:
            import pyseccomp as sc  # type: ignore[import-untyped]

            flt = sc.SyscallFilter(sc.ALLOW)
            flt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
            flt.add_rule(sc.ERRNO(errno.EPERM), "clone", sc.Arg(0, sc.MASKED_EQ, _CLONE_THREAD, 0))
            flt.add_rule(sc.ERRNO(errno.EAFNOSUPPORT), "socket", sc.Arg(0, sc.NE, _AF_UNIX))
            for name in _DENIED_SYSCALLS:
                try:
                    flt.add_rule(sc.ERRNO(errno.EPERM), name)
                except (RuntimeError, ValueError):  # no such syscall on this architecture
                    continue
            with tempfile.TemporaryFile() as fh:
                flt.export_bpf(fh)
                fh.seek(0)
                _seccomp_bpf = fh.read()
        except Exception as exc:  # pyseccomp or libseccomp.so.2 missing, or refusing
            raise _refusal(f"no seccomp filter ({type(exc).__name__}: {exc}; `pip install pyseccomp` and libseccomp2)") from None
    return _seccomp_bpf


def _python() -> str:
    # absolute: sys.executable is relative when python was found through a relative PATH entry
    return os.path.abspath(sys.executable)


def _mounts() -> list[str]:
    """Read-only binds of what the tracer needs: /usr, the interpreter and its standard library, the
    tracer itself. Nothing else of the host (home directories, the project, /etc) is visible."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = "/" + name
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in ("/etc/ld.so.cache", "/etc/localtime"):
        args += ["--ro-bind-try", path, path]
    python = _python()
    places = {sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix,
              os.path.dirname(python), os.path.dirname(os.path.realpath(python))}
    bound: list[str] = ["/usr"]
    for place in sorted(places, key=len):
        place = os.path.abspath(place)
        if place == "/" or any(place == b or place.startswith(b + os.sep) for b in bound):
            continue
        bound.append(place)
        args += ["--ro-bind", os.path.realpath(place), place]
    args += ["--ro-bind", str(TRACER_PATH), SANDBOX_TRACER]
    return args


def _bwrap_command(bwrap: str, seccomp_fd: int, limits: Limits, tail: list[str]) -> list[str]:
    tmpfs_bytes = 4 * (limits.file_size_mb << 20)
    return [
        bwrap,
        "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--disable-userns",
        "--unshare-pid", "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
        "--hostname", "sandbox", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
        *_mounts(),
        "--proc", "/proc", "--dev", "/dev",
        "--size", str(tmpfs_bytes), "--perms", "0700", "--tmpfs", SANDBOX_WORKDIR,
        "--remount-ro", "/dev", "--remount-ro", "/",
        "--chdir", SANDBOX_WORKDIR,
        "--seccomp", str(seccomp_fd),
        "--", *tail,
    ]


def _memfd(data: bytes, name: str) -> int:
    """A file descriptor reading `data` from its start, on no file system (an unlinked file where the
    system has no memfd, e.g. macOS with --no-sandbox)."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create(name, 0)
    else:
        with tempfile.TemporaryFile() as fh:
            fd = os.dup(fh.fileno())
    os.write(fd, data)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def isolation() -> str:
    """The bwrap binary once it has started a sandbox here (checked once a process), or raise
    SandboxUnavailable with the reason."""
    global _probe_result
    with _probe_lock:
        if _probe_result is None:
            _probe_result = _probe()
        if isinstance(_probe_result, SandboxUnavailable):
            raise _probe_result
        return _probe_result


def _probe() -> str | SandboxUnavailable:
    bwrap = os.environ.get(BWRAP_ENV) or shutil.which("bwrap")
    if not bwrap or not os.access(bwrap, os.X_OK):
        return _refusal("bubblewrap (`bwrap`) is not installed (Debian: apt-get install bubblewrap; or set NDB_BWRAP to the binary)")
    try:
        bpf = seccomp_filter()
    except SandboxUnavailable as exc:
        return exc
    fd = _memfd(bpf, "ndb-seccomp")
    try:
        command = _bwrap_command(bwrap, fd, Limits(), [_python(), "-I", "-S", "-c", "pass"])
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, pass_fds=(fd,), timeout=30,
                              check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return _refusal(f"{bwrap} failed to run: {exc}")
    finally:
        os.close(fd)
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return _refusal(f"{bwrap} exited with status {done.returncode}" + (f" ({detail[-1]})" if detail else ""))
    return bwrap


# ---- a run -------------------------------------------------------------------------------------

def _limit_child(limits: Limits, sandboxed: bool) -> None:
    """preexec_fn: runs in the child between fork and exec (bwrap's, or the tracer's without a sandbox)."""
    mem = limits.memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    resource.setrlimit(resource.RLIMIT_CPU, (limits.cpu_time, limits.cpu_time + 1))
    fsize = limits.file_size_mb << 20
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    if not sandboxed:
        # Counts all of the user's processes, and root is exempt: in the sandbox, seccomp refuses
        # every new process instead, and bwrap itself must be able to start its two.
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
    """Trace `program` in a sandboxed child process. Never raises for anything the program does; raises
    SandboxUnavailable where the sandbox cannot start (and --no-sandbox was not given)."""
    limits = limits or Limits()
    sandboxed = not unsandboxed()
    bwrap = isolation() if sandboxed else ""
    if not sandboxed:
        _warn_unsandboxed()
    request = {
        "path": program.path,
        "source": program.source,
        "entry": program.entry,
        "argv": program.argv,
        "max_events": limits.max_events,
        "max_repr": limits.max_repr,
        "record_globals": limits.record_globals,
        "record_attributes": limits.record_attributes,
        "objects": limits.objects,
        "max_stdout": limits.max_stdout,
        "time_limit": limits.wall_time,
        "patches": [p.model_dump() for p in patches or []],
        "no_trace": not trace,
    }
    request_fd = _memfd(json.dumps(request).encode("utf-8"), "ndb-request")
    read_fd, write_fd = os.pipe()
    own_fds = [request_fd, write_fd]
    workdir = None
    try:
        with tempfile.TemporaryFile() as stderr:
            try:
                # The environment is all ours, so `-s -P` (no user site, no script directory on the path)
                # isolate as `-I` would, and PYTHONHASHSEED (which -I's -E would ignore) makes a set of
                # strings come out in the same order on every run: replays (setVariable, jump) and
                # comparisons depend on it.
                env = {"PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0", "LANG": "C.UTF-8"}
                if sandboxed:
                    seccomp_fd = _memfd(seccomp_filter(), "ndb-seccomp")
                    own_fds.append(seccomp_fd)
                    tracer = [_python(), "-s", "-P", "-X", "utf8", SANDBOX_TRACER, "-", str(write_fd)]
                    command, cwd, pass_fds = _bwrap_command(bwrap, seccomp_fd, limits, tracer), "/", (write_fd, seccomp_fd)
                    env.update(TMPDIR=SANDBOX_WORKDIR, HOME=SANDBOX_WORKDIR)
                else:
                    workdir = tempfile.mkdtemp(prefix="ndb-sandbox-")
                    command = [_python(), "-s", "-P", "-X", "utf8", str(TRACER_PATH), "-", str(write_fd)]
                    cwd, pass_fds = workdir, (write_fd, write_fd)
                proc = _start(
                    read_fd,
                    command,
                    cwd=cwd,
                    stdin=request_fd,
                    stdout=subprocess.DEVNULL,
                    stderr=stderr,
                    pass_fds=pass_fds,
                    preexec_fn=lambda: _limit_child(limits, sandboxed),
                    start_new_session=True,  # its own process group, killed as a whole
                    env=env,
                )
            finally:
                for fd in own_fds:
                    os.close(fd)
            stream = _EventStream(limits.max_events)
            timed_out = stream.read(read_fd, limits.wall_time)
            if sandboxed and not (timed_out or stream.overflow):
                # The end record or the pipe's end: the child is leaving. Let bwrap reap it and exit on
                # its own (it reports how its child ended, and leaves no zombie of its init behind).
                _await_exit(proc.pid, 1.0)
            returncode, cpu_seconds = _kill_group(proc)
            stderr_tail = _tail(stderr)
    finally:
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
    if sandboxed and returncode > 128:  # bwrap reports a child killed by signal N as status 128 + N
        with contextlib.suppress(ValueError):
            returncode = -signal.Signals(returncode - 128)
    # SIGXCPU comes only from the CPU rlimit; a SIGKILL we did not send is its hard limit.
    cpu_exhausted = returncode == -signal.SIGXCPU or cpu_seconds >= limits.cpu_time - 0.5
    return _build_result(stream, returncode, timed_out, cpu_exhausted, limits, stderr_tail)


class _EventStream:
    """The child's events, parsed line by line as they arrive: the parent holds at most one unfinished
    line of text, skips a line that is not an event, and stops reading (the child is then killed) at the
    end record, the event limit, MAX_TRACE_BYTES, or a line longer than MAX_LINE_BYTES."""

    def __init__(self, max_events: int) -> None:
        self.max_events = max_events
        self.events: list[TraceEvent] = []
        self.end: dict[str, object] | None = None
        self.overflow = ""  # why reading stopped early, for the result's reason
        self.size = 0
        self._partial = bytearray()
        self._stopped = False
        # Stack entries are frozen: one object for each (function, line), shared by every event's stack,
        # so that a deep recursion costs a pointer a frame, not an object.
        self._frames: dict[tuple[str, int], StackFrame] = {}

    def read(self, fd: int, wall_time: float) -> bool:
        """Read until the end record, EOF, a limit, or the wall-clock deadline; True on the deadline."""
        deadline = time.monotonic() + wall_time + 0.5  # the child checks its own deadline first
        with os.fdopen(fd, "rb", buffering=0) as pipe, selectors.DefaultSelector() as sel:
            sel.register(pipe, selectors.EVENT_READ)
            while not self._stopped:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return True
                if not sel.select(timeout=remaining):
                    continue
                chunk = pipe.read(1 << 16)
                if not chunk:
                    break
                self._feed(chunk)
        return False

    def _feed(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > MAX_TRACE_BYTES:
            self._stop(f"trace truncated at {MAX_TRACE_BYTES} bytes of events (the debugger's limit)")
            return
        start = 0
        while not self._stopped:
            newline = chunk.find(b"\n", start)
            if newline < 0:
                self._partial += chunk[start:]
                if len(self._partial) > MAX_LINE_BYTES:
                    self._stop(f"trace truncated at an event longer than {MAX_LINE_BYTES} bytes (the debugger's limit)")
                return
            if self._partial:
                self._partial += chunk[start:newline]
                line = bytes(self._partial)
                self._partial.clear()
            else:
                line = chunk[start:newline]
            start = newline + 1
            if line:
                self._line(line)

    def _line(self, raw: bytes) -> None:
        try:
            obj = json.loads(raw)
            if "end" in obj:
                self.end = obj
                self._stopped = True
                return
            if len(self.events) >= self.max_events:
                self._stop(f"event limit {self.max_events} reached")
                return
            stack = obj.get("stack")
            if isinstance(stack, list):
                obj["stack"] = [self._shared(entry) for entry in stack]
            self.events.append(TraceEvent.model_validate(obj))
        except (ValueError, TypeError, ValidationError):
            pass  # a line cut short (by a kill, or by the end record written past it): skip it

    def _shared(self, entry: object) -> object:
        if not isinstance(entry, dict) or set(entry) != {"function", "line"}:
            return entry  # validation says what is wrong with it
        function, line = entry["function"], entry["line"]
        if type(function) is not str or type(line) is not int:
            return entry
        frame = self._frames.get((function, line))
        if frame is None:
            frame = StackFrame(function=function, line=line)
            if len(self._frames) < 100_000:
                self._frames[function, line] = frame
        return frame

    def _stop(self, reason: str) -> None:
        self.overflow = reason
        self._stopped = True
        self._partial.clear()


def _start(read_fd: int, command: list[str], **options: Any) -> subprocess.Popen[bytes]:
    try:
        return subprocess.Popen(command, **options)
    except BaseException:
        os.close(read_fd)
        raise


def _await_exit(pid: int, timeout: float) -> None:
    """Wait up to `timeout` seconds for the process to end, leaving it to be reaped by `_kill_group`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return
        time.sleep(0.002)


def _kill_group(proc: subprocess.Popen[bytes]) -> tuple[int, float]:
    """Kill the child's whole process group (bwrap's: its sandbox dies with it); return its exit status
    and the CPU seconds it used."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime


def _tail(fh: IO[bytes], size: int = _STDERR_TAIL) -> str:
    try:
        fh.seek(0, os.SEEK_END)
        fh.seek(max(0, fh.tell() - size))
        return fh.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def _build_result(
    stream: _EventStream, returncode: int, timed_out: bool, cpu_exhausted: bool, limits: Limits, stderr_tail: str
) -> TraceResult:
    events, end = stream.events, stream.end
    if end is not None:
        return TraceResult(
            events=events,
            exit=end["end"],  # type: ignore[arg-type]
            exit_reason=end.get("reason"),  # type: ignore[arg-type]
            stdout_tail=str(end.get("stdout") or ""),
            truncated=bool(end.get("truncated")),
        )
    if stream.overflow:
        return TraceResult(events=events, exit="never", exit_reason=stream.overflow, truncated=True)
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
