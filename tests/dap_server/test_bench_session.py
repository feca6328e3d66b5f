"""`ndb bench session`: the oracle's plan and the timed terminal session (oracle engine, so it is quick)."""

from __future__ import annotations

from pathlib import Path

from dap_server.bench_session import bench_session, oracle_plan, stop_line
from model_backend.constructs import entry_call
from model_backend.program import Program

PROGRAM = '''"""Sums of squares."""
# entry: main(4)


def square(x):
    return x * x


def main(n):
    total = 0
    for i in range(n):
        total += square(i)
    label = f"sum {total}"
    return label
'''


def test_the_entry_comment_gives_the_call() -> None:
    assert entry_call(PROGRAM) == "main(4)"
    assert entry_call("x = 1\n") is None


def test_stop_line_reads_the_last_stop_printed() -> None:
    out = b"> /tmp/p.py(10)main()\n-> total = 0\n> /tmp/p.py(11)main()->Point(3)\n-> return p\n(ndb) "
    assert stop_line(out) == 11
    assert stop_line(b"*** Blank or comment\n(ndb) ") is None


def test_oracle_plan_puts_the_breakpoint_on_a_line_first_hit_far_enough() -> None:
    plan = oracle_plan(Program(source=PROGRAM, path="p.py", entry="main(4)"), steps=3, distance=6)
    assert plan is not None
    assert plan.breakpoint_steps >= 6
    # the first line reached 6 or more single steps in, and never before: the `label` line after the loop
    assert plan.breakpoint_line == 13
    assert plan.next_lines == [14, 14, None]  # the line, then its return event, then the end


def test_oracle_plan_is_none_when_no_line_is_first_reached_that_far() -> None:
    assert oracle_plan(Program(source=PROGRAM, path="p.py", entry="main(4)"), steps=1, distance=500) is None


def test_bench_session_times_a_real_terminal_session(tmp_path: Path) -> None:
    path = tmp_path / "prog.py"
    path.write_text(PROGRAM)
    figures = bench_session(str(path), steps=3, distance=6, engine="oracle", timeout=120)
    assert figures["breakpoint_line"] == 13
    assert figures["continue_stopped_at"] == 13
    assert figures["n_count"] == 2  # the oracle's run ends after two `n` from the breakpoint
    assert figures["n_stops_as_oracle"] == 2
    assert figures["first_prompt_s"] > 0
