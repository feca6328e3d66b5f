"""The sandbox turns whatever a traced program does into a clear result, within its limits."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace
from tests.support import TESTS

FAST = Limits(wall_time=3.0, cpu_time=2, memory_mb=512)
# The CPU limit must fire before the wall clock's even when other processes share the CPU: one second of
# CPU takes several of wall-clock time on a loaded machine.
CPU_BOUND = Limits(wall_time=30.0, cpu_time=1, memory_mb=512)


def hostile(name: str) -> str:
    """The source of the hostile program tests/hostile/NAME.py (which test_sandbox_hostile also runs, with
    its checks that nothing leaks)."""
    return (TESTS / "hostile" / f"{name}.py").read_text(encoding="utf-8")


HUGE_FILE = """\
with open('big.bin', 'wb') as f:
    while True:
        f.write(b'x' * (1 << 20))
"""

CATCHES_EVERYTHING = """\
x = 0
while True:
    try:
        x += 1
    except BaseException:
        pass
"""

CASES = {
    # name: (source, expected exit, a word the reason must contain)
    "infinite loop": (hostile("infinite_loop"), "never", "event limit"),
    "loop in C code": (hostile("c_loop"), "never", "CPU time"),
    "allocates 50 GB": (hostile("alloc_50gb"), "error", "MemoryError"),
    "fork bomb": ("import os\nwhile True:\n    os.fork()\n", "error", "os.fork"),
    "subprocess": ("import subprocess\nsubprocess.run(['ls'])\n", "error", "subprocess.Popen"),
    "huge file": (HUGE_FILE, "error", "File too large"),
    "write outside": ("open('/tmp/ndb-evil.txt', 'w').write('x')\n", "error", "only inside"),
    "os._exit(3)": (hostile("os_exit"), "error", "status 3"),
    "os._exit(0)": ("import os\nx = 1\nos._exit(0)\n", "normal", "os._exit(0)"),
    "kills itself": ("import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", "error", "os.kill"),
    "raises SIGKILL": ("import signal\nsignal.raise_signal(signal.SIGKILL)\n", "error", "SIGKILL"),
    "segfault": (hostile("segfault"), "error", "segmentation fault"),
    "sys.exit(3)": ("import sys\nsys.exit(3)\n", "error", "SystemExit: 3"),
    "reads stdin": ("x = input()\n", "error", "EOFError"),
    "network": ("import socket\nsocket.socket().connect(('127.0.0.1', 9))\n", "error", "Address family not supported"),
    "catches everything": (CATCHES_EVERYTHING, "never", "event limit"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_hostile_program_gives_clear_result(name: str) -> None:
    source, exit_code, reason_word = CASES[name]
    limits = CPU_BOUND if name == "loop in C code" else FAST
    started = time.monotonic()
    result = run_trace(Program(source=source, path="/tmp/hostile.py"), limits)
    elapsed = time.monotonic() - started
    assert result.exit == exit_code, result.exit_reason
    assert result.exit_reason and reason_word in result.exit_reason
    assert elapsed < limits.wall_time + 2
    assert result.events, "the events before the failure are kept"


def test_nothing_written_outside_and_caller_keeps_working() -> None:
    run_trace(Program(source=CASES["write outside"][0], path="/tmp/w.py"), FAST)
    assert not os.path.exists("/tmp/ndb-evil.txt")
    ok = run_trace(Program(source="x = 1\ny = x + 1\n", path="/tmp/ok.py"), FAST)
    assert ok.exit == "normal" and [e.line for e in ok.events] == [1, 2, 2]


def test_wall_clock_limit_for_a_sleeping_program() -> None:
    result = run_trace(Program(source="import time\ntime.sleep(60)\n", path="/tmp/s.py"), Limits(wall_time=1.0))
    assert result.exit == "never" and "wall-clock" in (result.exit_reason or "")


def test_a_program_stopped_while_it_sleeps_keeps_its_events_and_output() -> None:
    """Nothing the program did before the limit is lost: every event, and what it printed last."""
    source = "import time\nprint('start')\nx = 1\nprint('waiting')\ntime.sleep(60)\n"
    result = run_trace(Program(source=source, path="/tmp/s.py"), Limits(wall_time=1.0))
    assert result.exit == "never" and result.exit_reason == "wall-clock limit of 1s reached"
    assert [e.line for e in result.events] == [1, 2, 3, 4, 5]
    assert "".join(e.stdout for e in result.events) + result.stdout_tail == "start\nwaiting\n"


def test_a_program_stopped_inside_a_long_c_call_keeps_its_events() -> None:
    """`sum` over a huge range never returns to the interpreter loop, so only the limit from outside
    stops it; the events before it were already sent."""
    source = "x = 1\ny = x + 1\nz = sum(range(10**12))\n"
    result = run_trace(Program(source=source, path="/tmp/c.py"), Limits(wall_time=1.0, cpu_time=1))
    assert result.exit == "never"
    assert [e.line for e in result.events] == [1, 2, 3]


def test_working_directory_is_fresh_and_temporary() -> None:
    src = "import os\nhere = os.getcwd()\nfiles = sorted(os.listdir('.'))\n"
    result = run_trace(Program(source=src, path="/tmp/cwd.py"), FAST)
    locals_ = result.events[-1].locals
    assert "ndb-sandbox-" in locals_["here"]
    assert locals_["files"] in ("[]", "['.stderr']")
    assert not os.path.exists(locals_["here"].strip("'"))


def test_runs_when_python_was_found_through_a_relative_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """`PATH=.venv/bin:$PATH python3 ...` gives a relative sys.executable; the child starts elsewhere."""
    import sys
    from pathlib import Path

    exe = Path(sys.executable)
    monkeypatch.chdir(exe.parent.parent)
    monkeypatch.setattr(sys, "executable", str(Path(exe.parent.name) / exe.name))
    ok = run_trace(Program(source="x = 1\ny = x + 1\n", path="/tmp/rel.py"), FAST)
    assert ok.exit == "normal" and [e.line for e in ok.events] == [1, 2, 2]


def _trace_cli(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    import sys

    program = tmp_path / "p.py"
    program.write_text("x = 1\n")
    code = "from dap_server.cli import main; main()"
    return subprocess.run([sys.executable, "-c", code, "trace", str(program), *args], capture_output=True, text=True,
                          timeout=120, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **env})


def test_where_the_sandbox_cannot_start_the_oracle_refuses_and_names_no_sandbox(tmp_path: Path) -> None:
    refused = _trace_cli(tmp_path, NDB_BWRAP="/bin/false")  # a bwrap that cannot start any sandbox
    assert refused.returncode == 2 and refused.stdout == ""
    assert "the sandbox cannot start here" in refused.stderr and "--no-sandbox" in refused.stderr
    missing = _trace_cli(tmp_path, NDB_BWRAP="/nonexistent/bwrap")
    assert missing.returncode == 2 and "not installed" in missing.stderr and "--no-sandbox" in missing.stderr


def test_no_sandbox_is_an_explicit_opt_in_with_a_warning(tmp_path: Path) -> None:
    done = _trace_cli(tmp_path, "--no-sandbox", NDB_BWRAP="/bin/false")
    assert done.returncode == 0, done.stderr
    assert "warning: --no-sandbox" in done.stderr
    assert '"exit": "normal"' in done.stdout.splitlines()[-1]


def test_a_set_of_strings_comes_out_in_the_same_order_on_every_run() -> None:
    """PYTHONHASHSEED=0 reaches the traced program (no -E), so replays and comparisons see one order."""
    source = "def f():\n    return {'ann', 'cy', 'dee', 'bob', 'eve', 'fay', 'gus', 'hal'}\n"
    values = {run_trace(Program(source=source, entry="f()")).events[-1].value for _ in range(3)}
    assert len(values) == 1
