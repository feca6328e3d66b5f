"""The neural engines' jump rules (model_backend/engine/jump.py) against Python's own, which the oracle
uses: every (from, to) pair of lines of a few functions, Python deciding in the sandbox."""

from __future__ import annotations

import pytest

from model_backend.engine.jump import jump_target
from model_backend.program import Program
from model_backend.sandbox import Patch, run_trace

BLOCKS = '''def f(n):
    a = 1
    for i in range(2):
        a += i
        with open("x", "w") as fh:
            a += 1
    # a comment
    try:
        a += 2
        if a > 100:
            raise ValueError(a)
    except ValueError:
        a = 0
    else:
        a += 5
    finally:
        a += 3
    while a < 20:
        a += 7
    return a
'''

NESTED = '''def outer(xs):
    total = 0

    def inner(x):
        return x * 2

    for x in xs:
        total += inner(x)
    return total
'''


@pytest.mark.parametrize("source,entry,function", [(BLOCKS, "f(0)", "f"), (NESTED, "outer([1, 2])", "outer")])
def test_jump_rules_agree_with_python(source: str, entry: str, function: str) -> None:
    program = Program(source=source, entry=entry)
    first: dict[int, int] = {}  # line -> index of its first line event in `function`
    for e in run_trace(program).events:
        if e.event == "line" and e.function == function:
            first.setdefault(e.line, e.index)
    compared = 0
    for start, index in sorted(first.items()):
        for to in range(1, len(source.splitlines()) + 2):
            result = run_trace(program, patches=[Patch(index=index, jump=to)])
            refused = result.exit == "error" and (result.exit_reason or "").startswith("jump refused")
            landed = None if refused else result.events[index + 1].line
            line, why = jump_target(source, function, start, to)
            assert (line is None) == refused, (start, to, why, result.exit_reason)
            assert line == landed, (start, to)
            compared += 1
    assert compared > 40


JUMPY = '''def f(n):
    a = 1
    a += 10
    a += 100
    for i in range(3):
        a += i
    return a


print(f(0))
'''

SCRIPTS = [
    ["b 3", "c", "j 4", "p ('V', a)", "n", "p ('V', a)", "n", "j 2", "n", "p ('V', a)", "c"],
    ["b 6", "c", "j 7", "n", "p ('V', a)", "c"],
    ["b 4", "c", "j 6", "p ('V', a)", "j 10", "j 1", "s", "p ('V', n, a)", "c"],
]


def _transcript(text: str) -> list[str]:
    """Locations (line, function) and the values printed with the ('V', ...) marker, in order."""
    import re

    out = []
    for line in text.splitlines():
        line = re.sub(r"^\((Pdb|ndb)\) ", "", line)
        if m := re.match(r"> .*\((\d+)\)(\S+)\(\)", line):
            out.append(f"at {m.group(1)} {m.group(2)}")
        elif line.startswith("('V'") or line.startswith("*** cannot jump") or line.startswith("*** Jump failed"):
            out.append("refused" if line.startswith("***") else line)
    return out


@pytest.mark.parametrize("script", SCRIPTS, ids=["forward-back", "out-of-loop", "refused-and-restart"])
def test_oracle_jump_matches_pdb(tmp_path, script: list[str]) -> None:
    import subprocess
    import sys

    program = tmp_path / "jumpy.py"
    program.write_text(JUMPY)
    commands = "\n".join([*script, "q"]) + "\n"
    pdb = subprocess.run([sys.executable, "-m", "pdb", str(program)], input=commands, capture_output=True,
                         text=True, timeout=60, cwd=tmp_path)
    ndb = subprocess.run([sys.executable, "-m", "dap_server", "debug", str(program), "--engine", "oracle"],
                         input=commands, capture_output=True, text=True, timeout=60, cwd=tmp_path)
    theirs, ours = _transcript(pdb.stdout), _transcript(ndb.stdout)
    # pdb restarts a program that ran to its end (one more stop at line 1); ndb reports the exit instead.
    restarted = theirs[:-1] if theirs and theirs[-1] == "at 1 <module>" else theirs
    assert len(ours) > 4 and ours == restarted, (pdb.stdout, ndb.stdout)
