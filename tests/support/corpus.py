"""The test corpus in tests/programs: each file may start with `# entry: EXPR` and `# breakpoints: 7, 12`."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path

from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace
from model_backend.state import TraceResult
from tests.support import REPO, TESTS

PROGRAMS_DIR = TESTS / "programs"
# A loop the model walks one predicted step at a time for minutes (the pause, cancel and mid-run breakpoint
# tests and VS Code's DebugClient test use it).
SPIN = (REPO / "vscode-extension" / "test" / "fixtures" / "spin.py").read_text()

# A small loop that several tests trace (`count('berry', 'r')`).
COUNT = """\
def count(s, t):
    n = 0
    for c in s:
        if c == t:
            n += 1
    return n
"""


@dataclass(frozen=True)
class CorpusProgram:
    name: str
    path: Path
    entry: str | None
    breakpoints: tuple[int, ...]

    def load(self) -> Program:
        return Program.load(self.path, self.entry)

    @property
    def code_lines(self) -> tuple[int, ...]:
        """The lines that are neither blank nor comments (where a breakpoint can stop)."""
        lines = self.path.read_text(encoding="utf-8").splitlines()
        return tuple(i for i, text in enumerate(lines, 1) if text.strip() and not text.strip().startswith("#"))


def corpus() -> list[CorpusProgram]:
    items = []
    for path in sorted(PROGRAMS_DIR.glob("*.py")):
        head = path.read_text().splitlines()[:3]
        entry = next((m.group(1).strip() for h in head if (m := re.match(r"# entry: (.+)", h))), None)
        bps = next((m.group(1) for h in head if (m := re.match(r"# breakpoints: (.+)", h))), "")
        lines = tuple(int(x) for x in re.findall(r"\d+", bps))
        items.append(CorpusProgram(path.stem, path, entry, lines))
    return items


@functools.cache
def traced(name: str, objects: bool = True) -> tuple[Program, TraceResult]:
    """A corpus program and its trace, in trace format 3 (`objects`) or 2."""
    item = next(c for c in corpus() if c.name == name)
    program = item.load()
    return program, run_trace(program, Limits(objects=objects))
