"""`ndb grammar check` on a tiny build: the grammar refuses none of the traced frames, and counts the rules
that governed the steps."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dap_server.cli import app
from model_backend.data.build import build_dataset, iter_records, record_text
from model_backend.grammar.automata import MAX_STRING
from model_backend.grammar.check import check_texts, program_texts
from model_backend.program import Program

PROGRAMS = [
    Program(source="def f(xs):\n    total = 0\n    for x in xs:\n        total += x\n    return total\n",
            entry="f([1, 2, 3])"),
    Program(source="def g(n):\n    out = []\n    for i in range(n):\n        out.append(i * i)\n    return out\n",
            entry="g(4)"),
]
LOUD = "def main(n):\n    text = 'word ' * n\n    print(text)\n    return len(text)\n"  # prints 5n + 1 characters
HEAD = re.compile(r"(\d+) trajectories of (.+) \((\w+)\): (\d+) values, refused 0; (\d+) stacks, refused 0; "
                  r"(\d+) local names, refused 0; longest run of one character in a value: \d+ \(MAX_RUN 64\); "
                  r"(\d+) whole frames after their actions, refused 0 \((\d+) of them steps from a `for` header")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("grammar") / "build"
    build_dataset(out, seed=3, n_generated=0, traj_per_program=6, heldout_fraction=0.0, workers=1, shard_size=50,
                  progress=False, real_code=False, programs=PROGRAMS)
    return out


def test_check_refuses_nothing_traced_and_counts_the_rules(built: Path) -> None:
    result = CliRunner().invoke(app, ["grammar", "check", str(built), "train"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1, lines  # nothing refused is listed
    head = HEAD.match(lines[0])
    assert head is not None, lines[0]
    trajectories, data, split, values, stacks, names, frames, loop_steps = head.groups()
    assert (data, split) == (str(built), "train")
    assert int(trajectories) == 12 and int(values) > 0 and int(frames) > 0
    assert int(loop_steps) > 0  # the `for` loops' steps are governed by the loop rule


def test_check_reads_only_the_first_n_trajectories(built: Path) -> None:
    result = CliRunner().invoke(app, ["grammar", "check", str(built), "train", "2"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"2 trajectories of {built} (train): ")


def test_a_build_with_program_views_is_checked_with_the_whole_programs_facts(tmp_path: Path) -> None:
    """Headers cut to a view leave functions out; the records carry the whole program, whose facts the check
    takes as the engines do, so steps into the functions a view leaves out are not counted as refused."""
    helpers = "".join(f"def helper{i}(x):\n    y = x + {i}\n    return y * 2\n\n\n" for i in range(8))
    main = "def main(n):\n    total = 0\n" + "".join(f"    total += helper{i}(n)\n" for i in range(8)) + "    return total\n"
    program = Program(source=helpers + main, entry="main(3)")
    out = tmp_path / "views"
    build_dataset(out, seed=5, n_generated=0, traj_per_program=6, heldout_fraction=0.0, workers=1, shard_size=50,
                  progress=False, real_code=False, programs=[program], format_version=2, header_tokens=64)
    records = list(iter_records(out, "train"))
    assert records and all(r["program_source"] == program.source for r in records)
    assert any(len(record_text(r).split("<|frame_sep|>")[0]) < len(program.source) / 2 for r in records)  # cut
    result = CliRunner().invoke(app, ["grammar", "check", str(out), "train"])
    assert result.exit_code == 0, result.output
    assert len(result.output.splitlines()) == 1 and HEAD.match(result.output), result.output
    header_only = check_texts((record_text(r) for r in records), "the headers' programs")
    assert not HEAD.match(header_only[0]), header_only[0]  # the views alone would refuse steps: the test compares


def test_check_programs_traces_a_folder_of_programs_and_refuses_nothing(tmp_path: Path) -> None:
    """Programs as a realistic benchmark split writes them (an entry line in the header), one of which prints
    more than a value's bound (a printed text has its own, MAX_TEXT)."""
    (tmp_path / "loud.py").write_text("# entry: main(60)\n" + LOUD)
    (tmp_path / "sums.py").write_text("# entry: f([1, 2, 3])\n" + PROGRAMS[0].source)
    result = CliRunner().invoke(app, ["grammar", "check-programs", str(tmp_path), "--trajectories", "4"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert len(lines) == 1, lines
    head = re.match(r"(\d+) trajectories of 2 programs of .*whole frames after their actions, refused 0 ", lines[0])
    assert head is not None and int(head.group(1)) == 8, lines[0]
    stdout_steps = [text for text in program_texts([Program(source=LOUD, entry="main(60)")], 4)
                    if any(len(m) > MAX_STRING for m in re.findall(r"<\|stdout_sep\|>(\"[^<]*)", text))]
    assert stdout_steps  # the check above covered a printed text longer than a value may be


def test_check_programs_names_a_file_without_an_entry(tmp_path: Path) -> None:
    (tmp_path / "bare.py").write_text(PROGRAMS[0].source)
    result = CliRunner().invoke(app, ["grammar", "check-programs", str(tmp_path / "bare.py")])
    assert result.exit_code == 2 and "entry" in result.output


def test_check_of_a_missing_build_fails(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["grammar", "check", str(tmp_path / "none"), "train"])
    assert result.exit_code == 2
