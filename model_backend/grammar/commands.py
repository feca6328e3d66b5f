"""`ndb grammar`: check the grammar of constrained decoding against traced data.

    ndb grammar check DATA SPLIT [N]
    ndb grammar check-programs benchmarks/realistic/dev [--trajectories 6] [--format 2|3]
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    """Add the `grammar` command group to `app`."""
    grammar_app = typer.Typer(help="Check the grammar of constrained decoding.", no_args_is_help=True)
    app.add_typer(grammar_app, name="grammar")

    @grammar_app.command("check")
    def check(
        data: Annotated[Path, typer.Argument(help="A build's directory (`ndb data build --out`).")],
        split: Annotated[str, typer.Argument(help="The split: train or heldout.")],
        limit: Annotated[int | None, typer.Argument(help="Check the first N trajectories only.")] = None,
    ) -> None:
        """Feed every traced value, stack, local name and whole frame of a split through the grammar's rules,
        and count what they refuse (it should be nothing) and which rules governed each step."""
        from model_backend.grammar.check import check as run_check

        if not data.is_dir():
            typer.echo(f"ndb: error: no build at {data}", err=True)
            raise typer.Exit(2)
        for line in run_check(str(data), split, limit):
            typer.echo(line)

    @grammar_app.command("check-programs")
    def check_programs(
        paths: Annotated[list[Path], typer.Argument(help="Program files, or folders of them (a realistic "
                                                         "benchmark split: each names its entry call).")],
        trajectories: Annotated[int, typer.Option(help="Trajectories drawn from each program's trace.")] = 6,
        seed: Annotated[int, typer.Option(help="Seeds the draws.")] = 0,
        format_version: Annotated[int, typer.Option("--format", min=2, max=3,
                                                    help="Trace format: 3 (objects with fields) or 2.")] = 3,
    ) -> None:
        """Trace each program in the sandbox, draw trajectories from its trace as a build does, and feed
        them through the grammar's rules as `check` does: what they refuse (it should be nothing) and which
        rules governed each step, on whole programs rather than a build."""
        from model_backend.eval.realistic import BenchmarkError, benchmark_programs
        from model_backend.grammar.check import check_texts, program_texts

        try:
            programs = benchmark_programs(paths)
        except BenchmarkError as exc:
            typer.echo(f"ndb: error: {exc}", err=True)
            raise typer.Exit(2) from None
        if not programs:
            typer.echo("ndb: error: no programs", err=True)
            raise typer.Exit(2)
        label = f"{len(programs)} programs of {', '.join(str(p) for p in paths)}"
        for line in check_texts(program_texts(programs, trajectories, seed, format_version), label):
            typer.echo(line)
