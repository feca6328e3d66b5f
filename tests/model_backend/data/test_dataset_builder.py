"""The dataset builder on tiny builds: shards, split by function, determinism, resume, CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from model_backend import trace_format as fmt
from model_backend.data import build
from model_backend.data.build import BuildError, build_dataset, function_key, iter_records, split_of, usable
from model_backend.program import Program
from model_backend.state import TraceEvent, TraceResult


class Prog(Program):
    """A program with the generators' extra fields."""

    origin: str = "test"
    expect_errors: tuple[str, ...] = ()


_TEMPLATES = [
    ("def f(xs):\n    out = []\n    for x in xs:\n        if x % {k} == 0:\n            out.append(x * {k})\n"
     "    return out\n", ["f([1, 2, 3, 4, 6])", "f([9, 10, 12])"], ()),
    ("def f(s):\n    n = 0\n    for c in s:\n        if c == 'a':\n            n += {k}\n    return n\n",
     ["f('banana')", "f('abc')"], ()),
    ("def helper(a):\n    return a + {k}\n\n\ndef f(xs):\n    total = 0\n    for x in xs:\n"
     "        total += helper(x)\n    return total\n", ["f([1, 2])", "f([5, 6, 7])"], ()),
    ("def f(n):\n    if n <= {k}:\n        return 1\n    return n * f(n - 1)\n", ["f(4)", "f(6)"], ()),
    ("def f(d):\n    keys = sorted(d)\n    return [d[k] * {k} for k in keys]\n",
     ["f({'a': 1, 'b': 2})", "f({'z': 3})"], ()),
    ("def f(xs):\n    if len(xs) > {k}:\n        raise ValueError('too long')\n    return sum(xs)\n",
     ["f([1, 2, 3, 4, 5, 6, 7, 8])", "f([1])"], ("ValueError",)),
]


def tiny_programs() -> list[Program]:
    """24 function programs (12 functions x 2 inputs), a module-mode script, a duplicate, and two that
    the build must skip (an unexpected error, too few events)."""
    out: list[Program] = []
    for t, (template, entries, expect) in enumerate(_TEMPLATES):
        for k in (2, 3):
            source = template.format(k=k)
            for e, entry in enumerate(entries):
                out.append(Prog(source=source, path=f"<t{t}-{k}-{e}>", entry=entry, origin=f"gen:t{t}",
                                expect_errors=expect))
    script = ("def g(x):\n    return x * 2\n\n\ndef main(xs):\n    return [g(x) for x in xs]\n\n\n"
              "result = main([1, 2, 3])\nprint(result)\n")
    out.append(Prog(source=script, path="<script>", entry=None, origin="script:module"))
    out.append(out[0].model_copy())  # exact duplicate: dropped before splitting
    out.append(Prog(source="def f():\n    return 1 / 0\n", path="<err>", entry="f()", origin="gen:err"))
    out.append(Prog(source="x = 1\n", path="<short>", entry=None, origin="gen:short"))
    return out


SMALL = dict(seed=7, n_generated=0, traj_per_program=4, heldout_fraction=0.3, shard_size=20, progress=False)


def _build(out: Path, workers: int = 1, **kw: object) -> build.Manifest:
    args = {**SMALL, **kw}
    return build_dataset(out, programs=tiny_programs(), workers=workers, **args)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, build.Manifest]:
    out = tmp_path_factory.mktemp("data") / "v1"
    return out, _build(out)


def _files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.glob("*.jsonl"))}


def test_shards_and_manifest(built: tuple[Path, build.Manifest]) -> None:
    out, manifest = built
    names = sorted(p.name for p in out.glob("*.jsonl"))
    assert "train-00000.jsonl" in names and "heldout-00000.jsonl" in names
    assert len([n for n in names if n.startswith("train-")]) >= 2
    assert not list(out.glob("*.tmp"))
    on_disk = json.loads((out / "manifest.json").read_text())
    assert on_disk["settings"]["seed"] == 7
    assert manifest.duplicates == 1
    total = manifest.splits["train"].programs + manifest.splits["heldout"].programs
    assert total == len(tiny_programs()) - 1
    skipped = {**manifest.splits["train"].skipped}
    for reason, n in manifest.splits["heldout"].skipped.items():
        skipped[reason] = skipped.get(reason, 0) + n
    assert skipped == {"too_few_events": 1, "unexpected_error": 1}
    for split in ("train", "heldout"):
        s = manifest.splits[split]
        records = list(iter_records(out, split))
        assert s.trajectories == len(records) > 0
        assert s.chars == sum(len(build.record_text(r)) for r in records)
        assert s.inverse == sum(r["inverse"] for r in records)
    assert manifest.sources["gen"] > 0 and manifest.sources["script"] == 1
    # the ValueError template ends with its intended exception in one entry: kept
    assert any(r["source_kind"] == "gen:t5" for r in iter_records(out, "train")) or \
        any(r["source_kind"] == "gen:t5" for r in iter_records(out, "heldout"))


def test_records_are_well_formed(built: tuple[Path, build.Manifest]) -> None:
    out, _ = built
    n_inverse = 0
    for split in ("train", "heldout"):
        for record in iter_records(out, split):
            assert set(record) >= {"program_id", "source_kind", "inverse", "segments", "actions", "horizons"}
            segments = record["segments"]
            text = build.record_text(record)
            assert len(text) <= SMALL.get("max_chars", 6000)
            assert segments[0][1] is False and segments[1][1] is False  # header and given state
            trained = [t for t, flag in segments if flag]
            assert len(trained) == len(record["actions"]) == len(record["horizons"]) >= 1
            assert all(t.startswith(fmt.FRAME) and t.endswith(fmt.STOP_TOKENS) for t in trained)
            assert all(h >= 1 for h in record["horizons"])
            parsed = fmt.parse(text)
            assert not isinstance(parsed, fmt.FormatError), parsed
            assert parsed.inverse == record["inverse"] or len(parsed.steps) == 1
            assert [str(a) for _, a in parsed.steps if a is not None] == record["actions"]
            n_inverse += record["inverse"]
    assert n_inverse > 0


def test_heldout_is_disjoint_by_function(built: tuple[Path, build.Manifest]) -> None:
    out, manifest = built
    by_split = {s: list(iter_records(out, s)) for s in ("train", "heldout")}
    assert by_split["heldout"], "the tiny build should hold out some functions"
    for key in ("program_id", "function_id"):
        train = {r[key] for r in by_split["train"]}
        held = {r[key] for r in by_split["heldout"]}
        assert train and held and not train & held
    # both inputs of a function land in the same split: 12 functions, 24 programs
    functions = {r["function_id"] for rs in by_split.values() for r in rs}
    programs = {r["program_id"] for rs in by_split.values() for r in rs}
    assert len(functions) == 13 and len(programs) == 25  # + the script


def test_split_and_function_key() -> None:
    a = "def f(xs):\n    # count\n    return len(xs)\n\nprint(f([1]))\n"
    b = "def f(items):\n    return len(items)\n\nresult = f([4, 5])\n"
    assert function_key(a) == function_key(b)  # comments, names and driver code do not count
    assert function_key(a) != function_key("def f(xs):\n    return len(xs) + 1\n")
    keys = [function_key(f"def f(x):\n    return x + {i}\n") for i in range(2000)]
    held = sum(split_of(k, 0.05) == "heldout" for k in keys)
    assert 50 <= held <= 150
    assert split_of(keys[0], 0.05) == split_of(keys[0], 0.05)
    assert all(split_of(k, 0.0) == "train" for k in keys[:50])


def test_usable_reasons() -> None:
    ev = TraceEvent(index=0, event="line", line=1, source="x", function="f", depth=0, frame_id=1)
    many = [ev.model_copy(update={"index": i}) for i in range(5)]
    assert usable((), TraceResult(events=many, exit="normal")) is None
    assert usable((), TraceResult(events=many[:2], exit="normal")) == "too_few_events"
    assert usable((), TraceResult(events=many, exit="never")) == "no_end_within_limits"
    assert usable((), TraceResult(events=many, exit="normal", truncated=True)) == "too_many_events"
    err = TraceResult(events=many, exit="error", exit_reason="KeyError: 'a'")
    assert usable((), err) == "unexpected_error" and usable(("KeyError",), err) is None
    long = [ev.model_copy(update={"index": i, "locals": {"s": "'" + "a" * 200 + "'"}}) for i in range(5)]
    assert usable((), TraceResult(events=long, exit="normal")) == "long_value"
    assert usable((), TraceResult(events=long, exit="normal"), max_value_len=203) is None
    assert usable((), TraceResult(events=many, exit="normal"), max_events=4) == "too_many_events"


def test_keep_limits_let_long_runs_and_long_values_in(tmp_path: Path) -> None:
    """The benchmark's programs run past 400 events and show values cut at 200 characters: with raised
    limits a build keeps such programs, which the defaults leave out, and records the limits it used."""
    loop = Prog(source="def f(n):\n    out = []\n    for i in range(n):\n        out.append(i * 1000)\n"
                       "    return len(out)\n", entry="f(250)")  # about 500 events; `out` grows past 200 characters
    default = build_dataset(tmp_path / "default", seed=1, n_generated=0, workers=1, progress=False, real_code=False,
                            programs=[loop], heldout_fraction=0.0)
    assert default.splits["train"].used == 0 and default.splits["train"].skipped == {"too_many_events": 1}
    raised = build_dataset(tmp_path / "raised", seed=1, n_generated=0, workers=1, progress=False, real_code=False,
                           programs=[loop], heldout_fraction=0.0, max_events=2000, max_value_len=203)
    assert raised.splits["train"].used == 1 and raised.settings.keep["max_events"] == 2000
    assert raised.settings.limits["max_events"] == 2001
    texts = [build.record_text(r) for r in iter_records(tmp_path / "raised", "train")]
    assert texts and any("..." in t for t in texts)  # a value cut at the tracer's 200 characters


def test_deterministic_whatever_the_workers(built: tuple[Path, build.Manifest], tmp_path: Path) -> None:
    out, manifest = built
    again = _build(tmp_path / "again", workers=2)
    assert _files(tmp_path / "again") == _files(out)  # byte-identical shards
    assert [s.sha256 for s in again.shards] == [s.sha256 for s in manifest.shards]


def test_other_seed_gives_other_data(built: tuple[Path, build.Manifest], tmp_path: Path) -> None:
    out, _ = built
    other = tmp_path / "seed8"
    _build(other, seed=8)
    assert _files(other) != _files(out)


def test_resume_rebuilds_only_missing_shards(built: tuple[Path, build.Manifest], tmp_path: Path) -> None:
    src, _ = built
    out = tmp_path / "resume"
    out.mkdir()
    for p in src.iterdir():
        (out / p.name).write_bytes(p.read_bytes())
    original = _files(out)
    (out / "train-00001.jsonl").unlink()
    (out / "train-00001.jsonl.tmp").write_text('{"half": "a record cut by an interrupt')  # interrupted
    (out / "heldout-00000.jsonl").write_bytes(b"truncated")  # size no longer matches its stats
    mtimes = {p.name: p.stat().st_mtime_ns for p in out.glob("*.jsonl")}
    manifest = _build(out)
    assert manifest.built == ["train-00001", "heldout-00000"]
    assert "train-00000" in manifest.reused
    assert _files(out) == original
    assert not list(out.glob("*.tmp"))
    for name, mtime in mtimes.items():
        if name not in ("heldout-00000.jsonl",):
            assert (out / name).stat().st_mtime_ns == mtime, name
    # nothing left to do
    assert _build(out).built == []


def test_other_settings_in_same_dir_refused(built: tuple[Path, build.Manifest], tmp_path: Path) -> None:
    out = tmp_path / "cfg"
    _build(out, traj_per_program=1)
    with pytest.raises(BuildError):
        _build(out, traj_per_program=2)


def test_long_trajectories_are_shortened_or_dropped(tmp_path: Path) -> None:
    manifest = _build(tmp_path / "short", max_chars=700)
    records = list(iter_records(tmp_path / "short", "train")) + list(iter_records(tmp_path / "short", "heldout"))
    assert records and all(len(build.record_text(r)) <= 700 for r in records)
    assert manifest.splits["train"].dropped_trajectories + manifest.splits["heldout"].dropped_trajectories > 0


def test_cli_data_build_and_tokenizer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from model_backend.data.commands import register

    asked_real_code: list[bool] = []
    monkeypatch.setattr(build, "_load_programs",
                        lambda seed, n, real_code: asked_real_code.append(real_code) or tiny_programs())
    app = typer.Typer()
    register(app)

    @app.command()
    def other() -> None:  # a second command, so that `data` stays a sub-command group
        pass

    runner = CliRunner()
    out = tmp_path / "cli"
    result = runner.invoke(app, ["data", "build", "--out", str(out), "--programs", "3", "--workers", "1",
                                 "--quiet", "--heldout", "0.3", "--shard-size", "40"])
    assert result.exit_code == 0, result.output
    assert "train:" in result.output and (out / "train-00000.jsonl").is_file()
    result = runner.invoke(app, ["data", "build", "--out", str(out), "--programs", "4", "--quiet"])
    assert result.exit_code == 2 and "other settings" in result.output
    result = runner.invoke(app, ["data", "build", "--out", str(tmp_path / "gen-only"), "--programs", "3",
                                 "--workers", "1", "--quiet", "--no-real-code"])
    assert result.exit_code == 0, result.output
    assert asked_real_code == [True, True, False]
    result = runner.invoke(app, ["data", "tokenizer", "--data", str(out), "--vocab", "400"])
    assert result.exit_code == 0, result.output
    assert (out / "tokenizer" / "tokenizer.json").is_file() and "tokens/char" in result.output
    result = runner.invoke(app, ["data", "tokenizer", "--data", str(tmp_path / "missing")])
    assert result.exit_code == 2


def test_real_generators_tiny_build(tmp_path: Path) -> None:
    """30 generated programs (and the scripts that come with them), no real code, one worker."""
    manifest = build_dataset(tmp_path / "gen", seed=0, n_generated=30, workers=1, real_code=False,
                             heldout_fraction=0.2, progress=False)
    train = manifest.splits["train"]
    assert train.used > 10 and train.trajectories > 40
    assert {"gen", "script"} <= set(manifest.sources)
    ids = {s: {r["function_id"] for r in iter_records(tmp_path / "gen", s)} for s in ("train", "heldout")}
    assert not ids["train"] & ids["heldout"]


def _as_format_1(header: str) -> str:
    """A format-2 header written as format 1 (raw source), to build a format-1 dataset for the converter."""
    head = fmt.TRACE_START + fmt.VERSION
    body = header[len(head):-len(fmt.CODE_END)]
    lines, sep, entry = body.partition(fmt.ENTRY)
    raw = "".join(piece.split(fmt.SRC, 1)[1] for piece in lines.split(fmt.LINENO)[1:])
    return fmt.TRACE_START + "<|format_v1|>" + raw + sep + entry + fmt.CODE_END


def test_convert_upgrades_a_format_1_dataset_to_what_build_writes(built: tuple[Path, build.Manifest], tmp_path: Path) -> None:
    from model_backend.data.convert import ConvertError, convert_dataset, convert_header

    out, manifest = built
    old = tmp_path / "old"
    old.mkdir()
    for path in out.glob("*.jsonl"):
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        for r in records:
            r["segments"][0][0] = _as_format_1(r["segments"][0][0])
        (old / path.name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    settings = manifest.settings.model_copy(update={"format_version": 1})
    (old / build.MANIFEST).write_text(manifest.model_copy(update={"settings": settings}).model_dump_json())
    converted = convert_dataset(old, tmp_path / "new")
    assert converted.settings.format_version == 2
    v2 = fmt.VERSION_TOKENS[2].encode()
    # byte for byte what the build wrote, in format 2's header (these programs hold none of the objects
    # that format 3 writes differently)
    assert _files(tmp_path / "new") == {k: v.replace(fmt.VERSION.encode(), v2) for k, v in _files(out).items()}
    with pytest.raises(ConvertError):
        convert_header(fmt.TRACE_START + fmt.VERSION_TOKENS[2] + fmt.CODE_END)  # already format 2


def test_hidden_start_also_hides_the_entry_arguments(tmp_path: Path) -> None:
    """With --hide-start-locals 1, an inverse trajectory that starts at the entry's return knows only the
    output: its header says `f(...)`, so that the inputs are not given away (CruxEval's input task).
    Every other trajectory keeps the real call."""
    from model_backend.sampler import SamplerConfig

    _build(tmp_path / "h", inverse_fraction=1.0, sampler_config=SamplerConfig(
        inverse_from_end_prob=1.0, hide_start_locals_prob=1.0))
    hidden = shown = 0
    for record in iter_records(tmp_path / "h", "train"):
        parsed = fmt.parse("".join(text for text, _ in record["segments"]))
        assert isinstance(parsed, fmt.ParsedTrajectory)
        start = parsed.steps[0][0]
        if parsed.entry is None:
            continue
        if start.event == "return" and start.depth == 0 and not start.locals:
            assert parsed.entry == "f(...)"
            hidden += 1
        else:
            assert "..." not in parsed.entry and parsed.entry.startswith("f(")
            shown += 1
    assert hidden > 20 and shown == 0  # every entry-mode trajectory starts at f's return here


def test_input_jumps_are_built_once_per_program(tmp_path: Path) -> None:
    """--input-jumps 1 with --inverse 1: a program that returns gives the hidden return, one
    inv_step_call, the call, kept once however often drawn; one that raises (its intended exception)
    gets ordinary inverse trajectories."""
    from model_backend.sampler import SamplerConfig

    manifest = _build(tmp_path / "j", inverse_fraction=1.0, sampler_config=SamplerConfig(input_jump_prob=1.0))
    kinds: dict[str, list[bool]] = {}
    for split in ("train", "heldout"):
        for record in iter_records(tmp_path / "j", split):
            parsed = fmt.parse("".join(text for text, _ in record["segments"]))
            assert isinstance(parsed, fmt.ParsedTrajectory)
            if parsed.entry is None:
                continue
            jump = record["actions"] == ["inv_step_call"]
            if jump:
                assert parsed.entry == "f(...)" and parsed.steps[0][0].locals == {}
                assert parsed.steps[0][0].event == "return" and parsed.steps[1][0].event == "call"
            kinds.setdefault(record["program_id"], []).append(jump)
    jump_programs = [k for k in kinds.values() if True in k]
    assert len(jump_programs) >= 16 and all(k == [True] for k in jump_programs)
    assert len(jump_programs) < len(kinds)  # the programs that raise
    dropped = sum(s.dropped_trajectories for s in manifest.splits.values())
    assert dropped >= 3 * len(jump_programs)  # 4 draws per program, 3 of them repeats
