"""`ndb data programs`: given program files become one shard of a build, read by every command that reads
a build's split, with the grammar's facts taken from the whole program where views cut the header."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dap_server.cli import app
from model_backend import trace_format as fmt
from model_backend.data.build import facts_program, iter_records, record_text, shard_files
from model_backend.engine.neural import LoadedModel
from model_backend.eval.teacher_forced import replay

# Long enough (about 1,000 characters) that a 64-token header shows it through views.
SOURCE = '''"""Stock kept per item, with orders that fail when stock runs out."""
# entry: run(["apple", "pear", "apple", "fig", "apple"])


class OutOfStock(Exception):
    pass


class Store:
    def __init__(self, stock):
        self.stock = dict(stock)
        self.sold = []

    def order(self, item):
        left = self.stock.get(item, 0)
        if left <= 0:
            raise OutOfStock(item)
        self.stock[item] = left - 1
        self.sold.append(item)
        return left - 1


def summary(store):
    lines = []
    for item, left in sorted(store.stock.items()):
        lines.append(f"{item}: {left}")
    return "; ".join(lines)


def run(orders):
    store = Store({"apple": 2, "pear": 1})
    failed = 0
    for item in orders:
        try:
            store.order(item)
        except OutOfStock:
            failed += 1
    return summary(store), failed
'''


@pytest.fixture(scope="module")
def program_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("programs") / "store.py"
    path.write_text(SOURCE)
    return path


def _write(program_file: Path, out: Path, *extra: str) -> list[dict]:
    result = CliRunner().invoke(app, ["data", "programs", str(program_file), "--out", str(out), "--format", "2",
                                      "--trajectories", "6", *extra])
    assert result.exit_code == 0, result.output
    assert "1/1 programs used" in result.output
    assert [p.name for p in shard_files(out, "heldout")] == ["heldout-00000.jsonl"]
    return list(iter_records(out, "heldout"))


def test_whole_programs_give_one_record_per_trajectory_without_the_source_again(program_file: Path, tmp_path: Path) -> None:
    records = _write(program_file, tmp_path / "whole")
    assert 1 <= len(records) <= 6
    for record in records:
        parsed = fmt.parse(record_text(record))
        assert not isinstance(parsed, fmt.FormatError)
        assert "program_source" not in record
        assert parsed.program.source.count("\n") >= SOURCE.count("\n") - 2  # the whole program in the header
        assert len(record["actions"]) == len(parsed.steps) - 1 == len(record["horizons"])
    stats = json.loads((tmp_path / "whole" / "heldout-00000.stats.json").read_text())["stats"]
    assert stats["trajectories"] == len(records) and stats["used"] == 1


def test_views_cut_the_header_and_the_grammar_takes_the_whole_programs_facts(program_file: Path, tmp_path: Path) -> None:
    records = _write(program_file, tmp_path / "views", "--header-tokens", "64")
    headers = [fmt.parse(record_text(r)) for r in records]
    assert all(not isinstance(h, fmt.FormatError) for h in headers)
    assert any(len(h.program.source) < len(SOURCE) / 2 for h in headers)  # type: ignore[union-attr]
    for record, parsed in zip(records, headers, strict=True):
        assert record["program_source"] == SOURCE
        whole = facts_program(record, parsed.program)  # type: ignore[union-attr]
        assert whole.source == SOURCE and whole.entry == parsed.program.entry  # type: ignore[union-attr]
    # Every true frame is one the grammar lets the model write, with the whole program's facts.
    vocab = LoadedModel.load(None).vocabulary
    rep = replay(vocab, records)
    assert rep.transitions and all(t.producible for t in rep.transitions)


def test_same_seed_same_set_and_bad_options_fail_cleanly(program_file: Path, tmp_path: Path) -> None:
    first = _write(program_file, tmp_path / "a", "--seed", "4")
    again = _write(program_file, tmp_path / "b", "--seed", "4")
    assert first == again
    result = CliRunner().invoke(app, ["data", "programs", str(program_file), "--out", str(tmp_path / "c"),
                                      "--trajectories", "0"])
    assert result.exit_code == 2 and "--trajectories" in result.output
    missing = CliRunner().invoke(app, ["data", "programs", str(tmp_path / "nothing.py"), "--out", str(tmp_path / "d")])
    assert missing.exit_code == 2
