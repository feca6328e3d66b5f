"""coverage: a built dataset's programs counted by source and by construct."""

from __future__ import annotations

from pathlib import Path

from model_backend.data.build import build_dataset
from model_backend.data.coverage import coverage
from model_backend.program import Program

DATACLASS = '''from dataclasses import dataclass


@dataclass
class Item:
    name: str
    qty: int


def total(rows):
    items = [Item(n, q) for n, q in rows]
    return sum(i.qty for i in items)
'''

LOOP = '''def first_even(xs):
    i = 0
    while i < len(xs):
        if xs[i] % 2 == 0:
            break
        i += 1
    return f"at {i}"
'''


def test_counts_programs_by_source_and_construct(tmp_path: Path) -> None:
    programs = [Program(source=DATACLASS, path="<a>", entry="total([('a', 2), ('b', 3)])"),
                Program(source=LOOP, path="<b>", entry="first_even([3, 5, 6])")]
    build_dataset(tmp_path, seed=0, n_generated=0, traj_per_program=2, heldout_fraction=0.0, workers=1,
                  progress=False, real_code=False, programs=programs)
    report = coverage(tmp_path, "train")
    assert report.programs == 2
    assert report.trajectories >= 2
    assert report.constructs["dataclass"] == 1
    assert report.constructs["while_break_continue_else"] == 1
    assert report.constructs["fstring"] == 1
    assert "dataclass" not in report.missing and "recursion" in report.missing
    assert report.lines()[0].startswith("train: 2 programs")


def test_an_empty_split_counts_nothing(tmp_path: Path) -> None:
    report = coverage(tmp_path, "heldout")
    assert (report.programs, report.trajectories, report.unparsed) == (0, 0, 0)
