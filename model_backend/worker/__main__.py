"""`python -m model_backend.worker worker ...` / `... bench ...`: the worker commands without the ndb CLI."""

from __future__ import annotations

import typer

from model_backend.worker.commands import register

app = typer.Typer(no_args_is_help=True, add_completion=False, pretty_exceptions_enable=False)
bench_app = typer.Typer(no_args_is_help=True)
register(app, bench_app)
app.add_typer(bench_app, name="bench")

if __name__ == "__main__":
    app()
