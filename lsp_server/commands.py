"""`ndb lsp` (the language server over stdio) and `ndb bench lsp`, registered by model_backend/cli.py."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from lsp_server.predictions import DEFAULT_DEBOUNCE, DEFAULT_MAX_STEPS


def register(app: typer.Typer) -> None:
    @app.command()
    def lsp(
        model: Annotated[str | None, typer.Option("--model", help="Checkpoint directory (default: the shipped model).")] = None,
        worker: Annotated[str | None, typer.Option("--worker", help="ws:// URL of a model worker: predictions run there.")] = None,
        max_steps: Annotated[int, typer.Option("--max-steps", min=1, max=1000, help="Predicted steps of one function's run shown inline.")] = DEFAULT_MAX_STEPS,
        debounce: Annotated[float, typer.Option("--debounce", min=0.0, max=10.0, help="Seconds without an edit before a prediction starts.")] = DEFAULT_DEBOUNCE,
        infer_seconds: Annotated[float, typer.Option("--infer-seconds", min=1.0, help="Time limit of one input inference.")] = 60.0,
        infer_samples: Annotated[int, typer.Option("--infer-samples", min=0, max=64, help="Sampled inverse jumps proposing arguments.")] = 8,
        infer_checks: Annotated[int, typer.Option("--infer-checks", min=1, max=64, help="Proposals run forward to confirm them.")] = 8,
        log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning, error (on stderr)")] = "warning",
    ) -> None:
        """Serve the Language Server Protocol over stdio: predicted returns, values and inputs in the editor
        (code lens, inlay hints, hover, a code action), from the model only: nothing of the code runs."""
        import logging

        from lsp_server.inference import InferenceSettings
        from lsp_server.server import Settings, build_server

        logging.basicConfig(level=log_level.upper(), format="ndb lsp: %(levelname)s %(message)s")
        settings = Settings(model=model, worker=worker, max_steps=max_steps, debounce=debounce,
                            inference=InferenceSettings(samples=infer_samples, checks=infer_checks, seconds=infer_seconds))
        server = build_server(settings)
        try:
            server.start_io()
        finally:
            server.predictor.close(wait=5.0)


def register_bench(bench_app: typer.Typer) -> None:
    @bench_app.command("lsp")
    def bench_lsp(
        keystrokes: Annotated[int, typer.Option(help="Edits (didChange + hover) timed while a prediction runs.")] = 50,
        model: Annotated[str | None, typer.Option("--model", help="Checkpoint directory (default: the shipped model).")] = None,
    ) -> None:
        """Code lens latency for a 10-line function, and the editor's wait on a keystroke while the model works."""
        from lsp_server.bench import run_bench

        typer.echo(json.dumps(run_bench(keystrokes=keystrokes, model=model), indent=2, ensure_ascii=False))
