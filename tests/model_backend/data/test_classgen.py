"""The class-based realistic program generator (model_backend/data/classgen.py), its decontamination
against benchmarks/realistic and its hook into `ndb data build --realistic N`."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

from model_backend.constructs import CONSTRUCTS, KINDS, constructs
from model_backend.data.build import usable
from model_backend.data.classgen import realistic_programs
from model_backend.data.programs import (
    all_programs,
    decontaminate_functions,
    function_fingerprints,
    load_realistic_fingerprints,
)
from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace


@pytest.fixture(scope="module")
def programs300() -> list:
    return realistic_programs(300, seed=11)


def test_same_seed_same_programs_other_seed_other_programs() -> None:
    a, b, c = realistic_programs(15, 4), realistic_programs(15, 4), realistic_programs(15, 5)
    assert [(p.source, p.entry, p.expect_errors) for p in a] == [(p.source, p.entry, p.expect_errors) for p in b]
    assert [p.source for p in a] != [p.source for p in c]


def test_programs_parse_have_literal_entries_and_sizes(programs300: list) -> None:
    for p in programs300[:200]:
        tree = ast.parse(p.source)
        assert 25 <= len(p.source.splitlines()) <= 150
        assert any(isinstance(n, ast.ClassDef) for n in ast.walk(tree)) or "def " in p.source
        if p.entry is not None:
            call = ast.parse(p.entry, mode="eval").body
            assert isinstance(call, ast.Call)
            for arg in call.args:
                ast.literal_eval(arg)  # only literals: the model never runs code
        Program(source=p.source, entry=p.entry).check()
    assert len({p.source for p in programs300}) == len(programs300)
    # varied in structure, not only in names: many distinct sets of parts
    assert len({p.origin for p in programs300}) >= 20


def test_construct_coverage(programs300: list) -> None:
    counts: Counter[str] = Counter()
    for p in programs300:
        counts.update(constructs(p.source))
    missing = [name for name in CONSTRUCTS if counts[name] == 0]
    assert not missing, missing
    for kind in KINDS:  # kinds are declared by comment
        assert any("# kind: " in p.source and kind in constructs(p.source) for p in programs300)


def test_some_programs_end_by_an_intended_exception(programs300: list) -> None:
    raising = [p for p in programs300 if p.expect_errors]
    assert 0.04 <= len(raising) / len(programs300) <= 0.2


def test_traces_end_normally_or_by_the_intended_exception() -> None:
    sample = realistic_programs(20, seed=2)
    sample += [p for p in realistic_programs(80, seed=3) if p.expect_errors][:3]
    usable_count = 0
    for p in sample:
        result = run_trace(p, Limits())
        assert not result.truncated and result.exit != "never", (result.exit_reason, p.source)
        if result.exit == "error":
            assert (result.exit_reason or "").split(":")[0] in p.expect_errors, (result.exit_reason, p.source)
        assert 50 <= len(result.events) <= 1500
        usable_count += usable(p.expect_errors, result) is None  # the build's criteria, on the same trace
    assert any(p.expect_errors for p in sample)
    assert usable_count >= 0.8 * len(sample)  # the build keeps most (at most 400 events, short values)


LOOKALIKE = '''
class Shelf:
    def __init__(self, owner):
        self.owner = owner
        self.slots = []

    def stack_up(self, things):
        for thing in things:
            if thing % 7 == 3:
                self.slots.append(thing * 11)
        return len(self.slots)
'''


def test_decontamination_drops_a_benchmark_lookalike(tmp_path: Path) -> None:
    bench = tmp_path / "realistic"
    (bench / "dev").mkdir(parents=True)
    (bench / "test").mkdir()
    (bench / "test" / "shelf.py").write_text(LOOKALIKE + "\n\nprint(Shelf('x').stack_up([3, 10]))\n")
    banned = load_realistic_fingerprints(bench)
    # the same method renamed and reformatted, inside another program
    renamed = LOOKALIKE.replace("Shelf", "Rack").replace("stack_up", "fill").replace("thing", "t")
    lookalike = Program(source="import math\n" + renamed + "\n\ndef main():\n    return Rack('a').fill([3])\n")
    changed = Program(source=lookalike.source.replace("* 11", "* 12").replace("= []", "= [0]"))
    assert function_fingerprints(lookalike.source) & banned
    assert decontaminate_functions([lookalike, changed], banned) == [changed]
    # the build's list: generated programs with a function of the benchmark are dropped
    gen = realistic_programs(30, seed=0)
    (bench / "dev" / "copied.py").write_text(gen[5].source)
    kept = all_programs(0, 0, humaneval=False, algorithms=False, cruxeval_path=None, n_realistic=30,
                        realistic_root=bench)
    assert gen[5].source not in {p.source for p in kept}
    assert 0 < len(kept) < 30


def test_realistic_zero_keeps_the_program_list() -> None:
    base = all_programs(1, 20, humaneval=False, algorithms=False, cruxeval_path=None)
    assert [p.source for p in all_programs(1, 20, humaneval=False, algorithms=False, cruxeval_path=None,
                                           n_realistic=0)] == [p.source for p in base]
    more = all_programs(1, 20, humaneval=False, algorithms=False, cruxeval_path=None, n_realistic=5)
    assert [p.source for p in more[: len(base)]] == [p.source for p in base]
    assert all(getattr(p, "origin", "").startswith("realistic:") for p in more[len(base):])
