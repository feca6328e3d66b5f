"""`ndb grammar`: check the grammar of constrained decoding against traced data.

    ndb grammar check DATA SPLIT [N]
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
