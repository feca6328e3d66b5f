"""Hostile programs against the oracle's sandbox (docs/threat-model.md): each one is contained, the debugger
stays alive with a clear result, and nothing leaks: no file outside, no packet on the host's loopback, no
process left alive. Many switch off the tracer's audit hook first, so that what holds is the operating
system's isolation (bubblewrap's namespaces, the read-only root, seccomp), not the program's own process.
"""

from __future__ import annotations

import glob
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from model_backend.program import Program
from model_backend.sandbox import MAX_TRACE_BYTES, Limits, TraceResult, run_trace
from tests.support import REPO, TESTS

HOSTILE = TESTS / "hostile"
FAST = Limits(wall_time=5.0, cpu_time=3, memory_mb=512)
# One second of CPU takes several of wall-clock time on a loaded machine: the CPU limit must still fire first.
CPU_BOUND = Limits(wall_time=30.0, cpu_time=1, memory_mb=512)
SECRET_ENV = "NDB_HOSTILE_SECRET"


@dataclass
class Case:
    exit: str
    reason: str = ""  # a part of the exit reason
    shown: dict[str, str] = field(default_factory=dict)  # name -> a part of its value in the last event
    hidden: tuple[str, ...] = ()  # parts no event, value or output may show
    limits: Limits = field(default_factory=lambda: FAST)
    tampers: bool = False  # the program switches off the audit hook first (checked)


CASES: dict[str, Case] = {
    "infinite_loop": Case("never", "event limit"),
    "c_loop": Case("never", "CPU time limit", limits=CPU_BOUND),
    "fork_bomb": Case("error", "Operation not permitted", tampers=True),
    "subprocess_touch": Case("error", "Operation not permitted", tampers=True),
    "alloc_50gb": Case("error", "MemoryError"),
    "segfault": Case("error", "segmentation fault"),
    "os_exit": Case("error", "status 3"),
    "deep_recursion": Case("never", "limit"),
    "threads_write": Case("normal", shown={"outcome": "('inside', 'written'), ('outside', 'FileNotFoundError'), "
                                                     "('tmp', 'OSError')"}, tampers=True),
    "settrace_none": Case("error", "FileNotFoundError"),
    "read_secrets": Case("normal", shown={"outcome": "'/etc/shadow': 'FileNotFoundError'"}, hidden=("SECRET",)),
    "tcp_loopback": Case("error", "Address family not supported", tampers=True),
    "udp_sendmsg": Case("error", "Address family not supported"),
    "rmtree_outside": Case("error", "FileNotFoundError", tampers=True),
    "hook_tamper": Case("normal", shown={"outcome": "('/dev/shm/ndb-hostile', 'OSError'), "
                                                    "('/etc/ndb-hostile', 'OSError')"}, tampers=True),
    "pidfd_kill_parent": Case("normal", shown={"parent": "1", "alive": "True"}),
    "kill_all": Case("normal", shown={"alive": "True"}, tampers=True),
    "sqlite_outside": Case("error", "unable to open database file"),
    "mkdir_outside": Case("error", "Read-only file system"),
    "sigalrm_child": Case("error", "Operation not permitted", tampers=True),
    "write_etc": Case("error", "Read-only file system", tampers=True),
    "big_output": Case("normal", shown={"done": "True"}),
    "fake_events": Case("never", "event limit", limits=Limits(wall_time=20.0, cpu_time=10, max_events=2000)),
    "env_secrets": Case("normal", hidden=(SECRET_ENV,)),
    "proc_view": Case("normal", shown={"pids": "[1, 2]", "uid": "65534"}),
    "fill_tmpfs": Case("error", "No space left on device"),
    "exec_shell": Case("error", "status", tampers=True),
}


class ProcessWatch:
    """Every descendant of this process seen while a run goes on (polled from /proc), to check afterwards
    that none is still alive. Descendants already running when the watch starts are not the run's (a
    server another test left to the end of the session) and are not counted."""

    def __init__(self) -> None:
        self.seen: dict[int, str] = {}  # pid -> its start time (field 22 of /proc/PID/stat)
        self.before: dict[int, str] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    @staticmethod
    def _stat(pid: int) -> tuple[int, str, str] | None:
        try:
            text = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return None
        fields = text[text.rindex(")") + 2:].split()
        return int(fields[1]), fields[0], fields[19]  # ppid, state, start time

    def descendants(self, root: int) -> dict[int, str]:
        parents: dict[int, list[tuple[int, str]]] = {}
        for name in os.listdir("/proc"):
            if name.isdigit() and (stat := self._stat(int(name))):
                parents.setdefault(stat[0], []).append((int(name), stat[2]))
        found, todo = {}, [root]
        while todo:
            for pid, start in parents.get(todo.pop(), []):
                found[pid] = start
                todo.append(pid)
        return found

    def _poll(self) -> None:
        while not self._stop.is_set():
            self.seen.update((pid, start) for pid, start in self.descendants(os.getpid()).items()
                             if self.before.get(pid) != start)
            self._stop.wait(0.01)

    def __enter__(self) -> ProcessWatch:
        self.before = self.descendants(os.getpid())
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def alive(self) -> list[int]:
        """The processes seen that still run (a zombie or a reused pid is not one)."""
        left = []
        for pid, start in self.seen.items():
            stat = self._stat(pid)
            if stat is not None and stat[2] == start and stat[1] != "Z":
                left.append(pid)
        return left


@contextmanager
def listeners() -> Iterator[tuple[socket.socket, socket.socket]]:
    """A UDP and a TCP socket on the host's loopback, to see whether any packet or connection arrives."""
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        udp.bind(("127.0.0.1", 0))
        tcp.bind(("127.0.0.1", 0))
        tcp.listen(4)
        udp.setblocking(False)
        tcp.setblocking(False)
        yield udp, tcp
    finally:
        udp.close()
        tcp.close()


def nothing_arrived(udp: socket.socket, tcp: socket.socket) -> bool:
    try:
        udp.recvfrom(65536)
        return False
    except BlockingIOError:
        pass
    try:
        tcp.accept()[0].close()
        return False
    except BlockingIOError:
        return True


def host_paths_outside() -> set[str]:
    return set(glob.glob("/tmp/ndb-hostile*")) | set(glob.glob("/tmp/ndb-sandbox-*")) | {
        p for p in ("/etc/ndb-hostile", "/dev/shm/ndb-hostile", "/usr/ndb-hostile") if os.path.exists(p)}


def run_hostile(name: str, outside: Path, limits: Limits) -> tuple[TraceResult, ProcessWatch, bool, float]:
    with listeners() as (udp, tcp):
        argv = [str(outside), str(udp.getsockname()[1]), str(tcp.getsockname()[1])]
        program = Program(source=(HOSTILE / f"{name}.py").read_text(), path=f"/hostile/{name}.py", argv=argv)
        started = time.monotonic()
        with ProcessWatch() as watch:
            result = run_trace(program, limits)
        elapsed = time.monotonic() - started
        time.sleep(0.05)  # a packet sent at the very end would have arrived by now
        return result, watch, nothing_arrived(udp, tcp), elapsed


def everything_shown(result: TraceResult) -> str:
    parts = [result.exit_reason or "", result.stdout_tail]
    for event in result.events:
        parts += [event.stdout, event.value or "", json.dumps(event.locals)]
    return "\n".join(parts)


def test_at_least_25_hostile_programs() -> None:
    assert len(CASES) >= 25
    assert sorted(CASES) == sorted(p.stem for p in HOSTILE.glob("*.py") if p.stem != "sleep_forever")


@pytest.mark.parametrize("name", sorted(CASES))
def test_hostile_program_is_contained(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    case = CASES[name]
    secret = f"SECRET-{secrets.token_hex(8)}"
    monkeypatch.setenv(SECRET_ENV, secret)
    outside = tmp_path / "outside"
    (outside / "victim").mkdir(parents=True)
    (outside / "victim" / "keep.txt").write_text("keep")
    (outside / "secret.txt").write_text(secret)
    before = sorted(p.name for p in outside.rglob("*"))
    before_host = host_paths_outside()

    result, watch, quiet, elapsed = run_hostile(name, outside, case.limits)

    # a clear result, in time
    assert result.exit == case.exit, (result.exit, result.exit_reason)
    assert case.reason in (result.exit_reason or ""), result.exit_reason
    assert elapsed < case.limits.wall_time + 3
    last = result.events[-1].locals if result.events else {}
    if case.tampers:
        assert any(e.locals.get("tampered") == "True" for e in result.events), "the audit hook was switched off"
    for key, part in case.shown.items():
        assert part in last.get(key, ""), (key, last.get(key))
    shown = everything_shown(result)
    for part in case.hidden:
        assert part not in shown
    assert secret not in shown
    # nothing leaked: no file, no packet, no process
    assert sorted(p.name for p in outside.rglob("*")) == before
    assert host_paths_outside() <= before_host
    assert quiet, "a packet or connection reached the host's loopback"
    assert watch.seen, "the run's processes were watched"
    assert watch.alive() == []


def test_output_is_cut_with_a_visible_notice(tmp_path: Path) -> None:
    result, *_ = run_hostile("big_output", tmp_path, FAST)
    out = "".join(e.stdout for e in result.events) + result.stdout_tail
    assert out.endswith(f"\n[output truncated at {FAST.max_stdout} characters]\n")
    assert len(out) < FAST.max_stdout + 100


def test_the_cpu_limit_fires_first_under_load(tmp_path: Path) -> None:
    """Two busy processes share the CPU with the run: the CPU limit, not the wall clock's, still ends it."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        result, *_ = run_hostile("c_loop", tmp_path, CPU_BOUND)
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
    assert result.exit == "never" and "CPU time limit" in (result.exit_reason or ""), result.exit_reason


_FLOOD = """\
import json, resource, sys
sys.path.insert(0, {root!r})
from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace
source = open({program!r}).read()
def peak_mb():
    # VmHWM: this process image's own peak (ru_maxrss keeps the forking parent's across exec on Linux,
    # which under pytest is the test runner's, not the debugger's)
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
result = run_trace(Program(source=source, path="/hostile/flood.py"), Limits(wall_time=30, cpu_time=30,
                                                                          max_events=500_000))
print(json.dumps({{"exit": result.exit, "reason": result.exit_reason, "events": len(result.events),
                  "maxrss_mb": peak_mb()}}))
"""


def test_the_debugger_stays_bounded_when_a_program_floods_its_event_stream() -> None:
    """A program writing fake events as fast as it can into the tracer's pipe: the debugger stops reading at
    MAX_TRACE_BYTES, says so, and its own memory stays under twice the child's 1 GB cap."""
    code = _FLOOD.format(root=str(REPO), program=str(HOSTILE / "fake_events.py"))
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    elapsed = time.monotonic() - started
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["exit"] == "never"
    assert f"truncated at {MAX_TRACE_BYTES} bytes" in report["reason"]
    assert report["maxrss_mb"] < 2 * 1024
    assert elapsed < 60


_KILLED_PARENT = """\
import sys
sys.path.insert(0, {root!r})
from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace
print("running", flush=True)
run_trace(Program(source=open({program!r}).read(), path="/hostile/sleep.py"), Limits(wall_time=600, cpu_time=600))
"""


def test_nothing_outlives_a_killed_debugger() -> None:
    """SIGKILL the debugger while its program sleeps: the sandbox (bwrap, its init, the tracer) dies with it,
    and no directory is left behind."""
    before_dirs = set(glob.glob("/tmp/ndb-sandbox-*"))
    code = _KILLED_PARENT.format(root=str(REPO), program=str(HOSTILE / "sleep_forever.py"))
    debugger = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        assert debugger.stdout is not None and debugger.stdout.readline() == "running\n"
        watch = ProcessWatch()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:  # bwrap, its init and the tracer
            found = watch.descendants(debugger.pid)
            if len(found) >= 3:
                break
            time.sleep(0.05)
        watch.seen.update(found)
        assert len(watch.seen) >= 3, watch.seen
    finally:
        debugger.send_signal(signal.SIGKILL)
        debugger.wait()
    deadline = time.monotonic() + 5
    while watch.alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert watch.alive() == []
    assert set(glob.glob("/tmp/ndb-sandbox-*")) <= before_dirs
