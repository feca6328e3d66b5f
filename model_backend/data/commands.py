"""`ndb data`: build the training dataset and train the tokenizer.

    ndb data build --out data_out/v2 --seed 0 --programs 6000 --workers 2
    ndb data tokenizer --data data_out/v2 [--vocab 2048] [--out DIR]
    ndb data programs benchmarks/realistic/dev --out data_out/rdev2 --format 2 --header-tokens 512
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer


def _fail(message: str) -> None:
    typer.echo(f"ndb: error: {message}", err=True)
    raise typer.Exit(2)


def register(app: typer.Typer) -> None:
    """Add the `data` command group to `app`."""
    data_app = typer.Typer(help="Build the training dataset and the tokenizer.", no_args_is_help=True)
    app.add_typer(data_app, name="data")

    @data_app.command("build")
    def build(
        out: Annotated[Path, typer.Option("--out", help="Output directory (created; a rerun resumes it).")],
        seed: Annotated[int, typer.Option("--seed", help="Seed of the programs, the split into shards and the sampling.")] = 0,
        programs: Annotated[int, typer.Option("--programs", help="Number of generated programs (real code comes on top).")] = 6000,
        workers: Annotated[int, typer.Option("--workers", help="Tracing processes (1: in this process).")] = 2,
        traj: Annotated[int, typer.Option("--traj", help="Trajectories sampled per program.")] = 4,
        inverse: Annotated[float, typer.Option("--inverse", help="Probability that a trajectory is inverse.")] = 0.35,
        heldout: Annotated[float, typer.Option("--heldout", help="Fraction of functions held out.")] = 0.05,
        shard_size: Annotated[int, typer.Option("--shard-size", help="Target trajectories per shard.")] = 2000,
        max_chars: Annotated[int, typer.Option("--max-chars", help="Longest trajectory text kept (characters).")] = 6000,
        hide_start_locals: Annotated[float, typer.Option("--hide-start-locals", help="Chance that an inverse trajectory starting at a return hides its locals (only the output known).")] = 0.0,
        input_jumps: Annotated[float, typer.Option("--input-jumps", help="Chance that an inverse trajectory is an input jump: from the entry's return, only its value known, one inv_step_call to the call (what input inference proposes with).")] = 0.0,
        real_code: Annotated[bool, typer.Option("--real-code/--no-real-code", help="Add HumanEval and `algorithms` programs to the generated ones.")] = True,
        realistic: Annotated[int, typer.Option("--realistic", help="Class-based realistic programs (model_backend/data/classgen.py) on top of the others, minus look-alikes of benchmarks/realistic.")] = 0,
        stdlib: Annotated[bool, typer.Option("--stdlib/--no-stdlib", help="Add the standard library's pure-Python functions, called with generated inputs (model_backend/data/stdlib_code.py).")] = False,
        pypi: Annotated[bool, typer.Option("--pypi/--no-pypi", help="Add pure-Python functions of permissively licensed PyPI packages (boltons, inflection, toolz, more-itertools), called with generated inputs (model_backend/data/pypi_code.py).")] = False,
        more_code: Annotated[bool, typer.Option("--more-code/--no-more-code", help="Add the second set of library code: functions of the standard library and of more PyPI packages (sympy, mpmath, Jinja2, ...) that --stdlib and --pypi do not take (stdlib_code.more_stdlib_programs, pypi_code.more_pypi_programs).")] = False,
        format_version: Annotated[int, typer.Option("--format", help="Trace format of the records: 3 writes the program's objects with their fields, 2 as Python's default repr (for models that read format 2).")] = 3,
        header_tokens: Annotated[int | None, typer.Option("--header-tokens", help="Program views for programs whose header is longer than this many tokens (estimated at 3 characters a token), as the engines show them; default: whole programs.")] = None,
        max_events: Annotated[int, typer.Option("--max-events", help="Keep programs whose trace has at most this many events.")] = 400,
        max_value_len: Annotated[int, typer.Option("--max-value-len", help="Keep programs whose values are all at most this many characters (values are cut at 200, then '...').")] = 120,
        quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
    ) -> None:
        """Trace programs in the sandbox, sample trajectories, write train/held-out JSONL shards."""
        from model_backend.data.build import BuildError, build_dataset

        if format_version not in (2, 3) or (header_tokens is not None and header_tokens < 64):
            _fail("--format must be 2 or 3, and --header-tokens at least 64")
        if workers < 1 or traj < 1 or shard_size < 1 or max_chars < 1 or programs < 0 or realistic < 0:
            _fail("--workers, --traj, --shard-size and --max-chars must be >= 1, --programs and --realistic >= 0")
        if max_events < 3 or max_value_len < 1:
            _fail("--max-events must be >= 3 and --max-value-len >= 1")
        if not (0.0 <= inverse <= 1.0 and 0.0 <= heldout < 1.0 and 0.0 <= hide_start_locals <= 1.0
                and 0.0 <= input_jumps <= 1.0):
            _fail("--inverse, --hide-start-locals and --input-jumps must be in [0, 1] and --heldout in [0, 1)")
        from model_backend.sampler import SamplerConfig
        program_list = None
        if realistic > 0 or stdlib or pypi or more_code:  # without these the build loads its programs itself, as it always has
            from model_backend.data.programs import all_programs

            program_list = all_programs(seed=seed, n_generated=programs, humaneval=real_code,
                                        algorithms=real_code, n_realistic=realistic, stdlib=stdlib, pypi=pypi,
                                        more_code=more_code)
        try:
            manifest = build_dataset(
                out, seed=seed, n_generated=programs, traj_per_program=traj, inverse_fraction=inverse,
                heldout_fraction=heldout, workers=workers, shard_size=shard_size, max_chars=max_chars,
                progress=not quiet, sampler_config=SamplerConfig(hide_start_locals_prob=hide_start_locals,
                                             input_jump_prob=input_jumps),
                real_code=real_code, programs=program_list, format_version=format_version,
                header_tokens=header_tokens, max_events=max_events, max_value_len=max_value_len,
            )
        except BuildError as exc:
            _fail(str(exc))
            return
        for split, s in manifest.splits.items():
            skipped = ", ".join(f"{k} {v}" for k, v in s.skipped.items()) or "none"
            typer.echo(
                f"{split}: {s.used}/{s.programs} programs used (skipped: {skipped}), {s.trajectories} "
                f"trajectories ({s.inverse} inverse), {s.transitions} transitions, {s.chars:,} chars "
                f"({s.trained_chars:,} trained)"
            )
        typer.echo("sources (programs used): " + ", ".join(f"{k} {v}" for k, v in manifest.sources.items()))
        typer.echo(
            f"shards: {len(manifest.built)} built, {len(manifest.reused)} reused; {manifest.elapsed_s:.1f}s; "
            f"manifest: {Path(out) / 'manifest.json'}"
        )

    @data_app.command("convert")
    def convert(
        data: Annotated[Path, typer.Option("--data", help="A format-1 dataset directory.")],
        out: Annotated[Path, typer.Option("--out", help="Where to write the format-2 dataset.")],
    ) -> None:
        """Upgrade a format-1 dataset and its tokenizer to trace format 2 (numbered header lines), no re-tracing."""
        from model_backend.data.convert import ConvertError, convert_dataset

        if not (data / "manifest.json").is_file():
            _fail(f"no dataset (manifest.json) in {data}")
        start = time.monotonic()
        try:
            manifest = convert_dataset(data, out)
        except (ConvertError, ValueError, OSError) as exc:
            _fail(str(exc))
            return
        typer.echo(f"{len(manifest.shards)} shards converted to format 2 in {time.monotonic() - start:.1f}s: {out}")

    @data_app.command("programs")
    def programs_cmd(
        paths: Annotated[list[Path], typer.Argument(help="Program files, or folders of them (a realistic benchmark split: each names its entry call).")],
        out: Annotated[Path, typer.Option("--out", help="Output directory: one shard, SPLIT-00000.jsonl, as a build writes it.")],
        trajectories: Annotated[int, typer.Option("--trajectories", help="Trajectories drawn from each program's trace.")] = 8,
        seed: Annotated[int, typer.Option("--seed", help="Seeds the draws.")] = 0,
        format_version: Annotated[int, typer.Option("--format", min=2, max=3, help="Trace format: 3 (objects with fields) or 2.")] = 3,
        header_tokens: Annotated[int | None, typer.Option("--header-tokens", help="Program views for programs whose header is longer than this many tokens, as the engines show them; default: whole programs.")] = None,
        split: Annotated[str, typer.Option("--split", help="The split's name in the shard's file name.")] = "heldout",
    ) -> None:
        """Trace given programs as they are (no build limits) and write their trajectories as one shard of a
        build: an evaluation set of real programs for `ndb eval next-state` and `ndb grammar check`."""
        from model_backend.data.from_programs import write_program_set
        from model_backend.eval.realistic import BenchmarkError, benchmark_programs

        if trajectories < 1 or (header_tokens is not None and header_tokens < 64) or split not in ("train", "heldout"):
            _fail("--trajectories must be >= 1, --header-tokens at least 64, --split train or heldout")
        try:
            programs = benchmark_programs(paths)
        except BenchmarkError as exc:
            _fail(str(exc))
            return
        if not programs:
            _fail("no programs")
        start = time.monotonic()
        info = write_program_set(programs, out, trajectories, seed, format_version, header_tokens, split)
        s = info.stats
        typer.echo(f"{s.used}/{s.programs} programs used, {s.trajectories} trajectories ({s.inverse} inverse), "
                   f"{s.transitions} transitions, {s.chars:,} chars; {time.monotonic() - start:.1f}s: "
                   f"{out / (info.name + '.jsonl')}")

    @data_app.command("coverage")
    def coverage_cmd(
        data: Annotated[Path, typer.Option("--data", help="A dataset directory written by `ndb data build`.")],
        split: Annotated[list[str] | None, typer.Option("--split", help="Split to read (repeatable; default: train and heldout).")] = None,
    ) -> None:
        """Programs of a dataset by source and by construct (the realistic benchmark's list)."""
        from model_backend.data.coverage import coverage

        if not data.is_dir():
            _fail(f"no such dataset directory: {data}")
        for name in split or ["train", "heldout"]:
            for line in coverage(data, name).lines():
                typer.echo(line)

    @data_app.command("tokenizer")
    def tokenizer(
        data: Annotated[Path, typer.Option("--data", help="A dataset directory written by `ndb data build`.")],
        vocab: Annotated[int, typer.Option("--vocab", help="Vocabulary size, special tokens included.")] = 2048,
        out: Annotated[Path | None, typer.Option("--out", help="Where to save it (default: DATA/tokenizer).")] = None,
        digit_runs: Annotated[bool, typer.Option("--digit-runs", help="Keep digit runs whole instead of one token per digit.")] = False,
        max_chars: Annotated[int | None, typer.Option("--max-chars", help="Train on at most this many characters.")] = None,
    ) -> None:
        """Train the byte-level BPE tokenizer on the train shards; save it in Hugging Face format."""
        from model_backend.data.tokenizer import train_tokenizer

        if not data.is_dir():
            _fail(f"no such dataset directory: {data}")
        start = time.monotonic()
        try:
            train_tokenizer(data, vocab_size=vocab, out_dir=out, individual_digits=not digit_runs,
                            max_chars=max_chars)
        except ValueError as exc:
            _fail(str(exc))
            return
        target = out or data / "tokenizer"
        stats = json.loads((target / "stats.json").read_text(encoding="utf-8"))
        for split, s in stats["splits"].items():
            typer.echo(
                f"{split}: {s['trajectories']} trajectories, {s['chars']:,} chars, {s['tokens']:,} tokens "
                f"({s['trained_tokens']:,} trained), {s['tokens_per_char']} tokens/char, "
                f"{s['mean_tokens_per_trajectory']} tokens/trajectory (max {s['max_tokens_per_trajectory']})"
            )
        typer.echo(f"vocab {stats['vocab_size']}; saved to {target} in {time.monotonic() - start:.1f}s")
