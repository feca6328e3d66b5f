"""`ndb trace`, `ndb step` and `ndb dsl` as a user runs them: JSON lines out, one-line errors with status 2."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

NDB = [sys.executable, "-m", "dap_server"]
PROGRAM = "def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n"


def ndb(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*NDB, *args], capture_output=True, text=True, timeout=60)


def test_trace_prints_states_then_exit(program: Path) -> None:
    out = ndb("trace", str(program), "--entry", "f([1, 2])")
    assert out.returncode == 0, out.stderr
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    assert lines[0]["event"] == "call" and lines[0]["locals"] == {"xs": "[1, 2]"}
    assert lines[-2]["event"] == "return" and lines[-2]["value"] == "3"
    assert lines[-1] == {"exit": "normal", "reason": None}


def test_step_prints_full_locals_and_stack(program: Path) -> None:
    out = ndb("step", str(program), "--entry", "f([1, 2])", "--actions", "step_over,step_over,breakpoint:5,continue")
    assert out.returncode == 0, out.stderr
    states = [json.loads(line) for line in out.stdout.splitlines()]
    assert [s["action"] for s in states] == [None, "step_over", "step_over", "breakpoint:5", "continue"]
    assert states[2]["locals"] == {"xs": "[1, 2]", "total": "0"}  # full dict, not a diff
    assert states[3]["line"] == 5 and states[3]["locals"]["total"] == "3"
    assert states[3]["stack"] == [{"function": "f", "line": 5}]
    assert states[4]["event"] == "exit" and states[4]["exit"] == "normal"
    for key in ("action", "event", "line", "function", "locals", "value", "stack", "exit"):
        assert key in states[0]


def test_step_from_exit_and_backwards(program: Path) -> None:
    out = ndb("step", str(program), "--entry", "f([4])", "--start", "exit", "--actions", "inv_step_call")
    states = [json.loads(line) for line in out.stdout.splitlines()]
    assert states[0]["event"] == "return" and states[0]["value"] == "4"
    assert states[1]["event"] == "call" and states[1]["locals"] == {"xs": "[4]"}


def test_module_mode_starts_at_first_line(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("a = 1\nb = a + 1\n")
    states = [json.loads(line) for line in ndb("step", str(path), "--actions", "step_into").stdout.splitlines()]
    assert (states[0]["event"], states[0]["line"], states[0]["function"]) == ("line", 1, "<module>")


def test_dsl_prints_a_trajectory(program: Path) -> None:
    out = ndb("dsl", str(program), "--entry", "f([1, 2])", "--seed", "1")
    assert out.returncode == 0 and out.stdout.startswith("<|trace_context_start|><|format_v3|><|lineno_sep|>1<|src_sep|>def f(xs):")
    inverse = ndb("dsl", str(program), "--entry", "f([1, 2])", "--inverse")
    assert "<|inv_" in inverse.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["step", "/nonexistent/prog.py", "--actions", "step_into"], "no such file"),
        (["trace", "{bad}"], "syntax error"),
        (["step", "{prog}", "--entry", "f(", "--actions", "step_into"], "not an expression"),
        (["step", "{prog}", "--entry", "nope(1)", "--actions", "step_into"], "NameError"),
        (["step", "{prog}", "--entry", "f([1])", "--actions", "jump"], "unknown action"),
        (["step", "{prog}", "--entry", "f([1])", "--actions", "breakpoint:x"], "bad breakpoint"),
        (["step", "{prog}", "--entry", "f([1])", "--actions", "step_into", "--start", "middle"], "--start"),
        (["step", "{prog}", "--entry", "f([1])", "--actions", "step_into", "--engine", "magic"], "unknown engine"),
        (["step", "{prog}", "--entry", "f([1])", "--actions", "breakpoint:99"], "past the end of the program"),
        (["step", "{gap}", "--entry", "f([1])", "--actions", "step_into,breakpoint:3+2"], "line 2 is a line without code"),
        (["trace", "{prog}", "--entry", "f"], "is not a call"),
    ],
)
def test_bad_input_one_line_error_status_2(program: Path, tmp_path: Path, args: list[str], message: str) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    gap = tmp_path / "gap.py"
    gap.write_text("def f(xs):\n\n    return xs\n")
    args = [a.replace("{prog}", str(program)).replace("{bad}", str(bad)).replace("{gap}", str(gap)) for a in args]
    out = ndb(*args)
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and message in out.stderr, out.stderr
