"""`ndb worker` and `ndb bench worker`. Wired into the CLI by dap_server/cli.py with `register(app, bench_app)`."""

from __future__ import annotations

import logging
import os
from typing import Annotated

import typer

from model_backend.worker import protocol as proto


def register(app: typer.Typer, bench_app: typer.Typer | None = None) -> None:
    @app.command()
    def worker(
        host: Annotated[str, typer.Option("--host", help="Address to bind. Anything but loopback needs --token.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", help="Port to listen on (0: any free port, printed at start).")] = proto.DEFAULT_PORT,
        model: Annotated[str | None, typer.Option("--model", help="Checkpoint directory (default: the shipped model).")] = None,
        engine: Annotated[str, typer.Option("--engine", help="transformers or vllm")] = "transformers",
        device: Annotated[str, typer.Option("--device", help="cpu or cuda")] = "cpu",
        token: Annotated[str | None, typer.Option("--token", help="Clients must send this token at connect (default: $NDB_WORKER_TOKEN).")] = None,
        max_message_bytes: Annotated[int, typer.Option("--max-message-bytes", help="Largest message accepted; larger ones close the connection.")] = proto.DEFAULT_MAX_MESSAGE_BYTES,
        request_timeout: Annotated[float, typer.Option("--request-timeout", help="Seconds one request may take.")] = 120.0,
        idle_timeout: Annotated[float, typer.Option("--idle-timeout", help="Seconds without requests before a session is evicted.")] = 1800.0,
        max_sessions: Annotated[int, typer.Option("--max-sessions", help="Sessions held at once.")] = 256,
        max_batch: Annotated[int, typer.Option("--max-batch", help="Sessions batched in one device call.")] = 16,
        batch_window_ms: Annotated[float, typer.Option("--batch-window-ms", help="How long an idle worker waits for more requests before a batch.")] = 3.0,
        threads: Annotated[int | None, typer.Option("--threads", help="torch CPU threads (default: torch's choice).")] = None,
        log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning")] = "warning",
    ) -> None:
        """Serve a model to debug adapters over websockets (many sessions, batched on the device)."""
        from model_backend.engine.base import EngineError
        from model_backend.worker.server import WorkerConfig, load_backend, run_worker

        logging.basicConfig(level=log_level.upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
        config = WorkerConfig(
            host=host, port=port, token=token or os.environ.get("NDB_WORKER_TOKEN") or None,
            max_message_bytes=max_message_bytes, request_timeout_s=request_timeout, idle_timeout_s=idle_timeout,
            max_sessions=max_sessions,
        )
        try:
            config.check()
        except ValueError as exc:
            typer.echo(f"ndb: error: {exc}", err=True)
            raise typer.Exit(2) from None
        if engine not in ("transformers", "vllm"):
            typer.echo(f"ndb: error: --engine must be transformers or vllm, not {engine!r}", err=True)
            raise typer.Exit(2)
        if threads:
            import torch

            torch.set_num_threads(threads)
        try:
            backend = load_backend(engine, model, device, max_batch, batch_window_ms / 1000)
        except (EngineError, ImportError) as exc:
            typer.echo(f"ndb: error: {exc}", err=True)
            raise typer.Exit(2) from None
        run_worker(backend, config, announce=lambda line: typer.echo(line))

    if bench_app is not None:
        register_bench(bench_app)


def register_bench(bench_app: typer.Typer) -> None:
    @bench_app.command("worker")
    def bench_worker(
        url: Annotated[str | None, typer.Option("--url", help="ws://HOST:PORT of a running worker (default: start one here).")] = None,
        sessions: Annotated[int, typer.Option("--sessions", help="Concurrent simulated debug sessions.")] = 8,
        steps: Annotated[int, typer.Option("--steps", help="Steps per session.")] = 20,
        model: Annotated[str | None, typer.Option("--model", help="Checkpoint for the local worker (default: the shipped model).")] = None,
        engine: Annotated[str, typer.Option("--engine", help="Engine of the local worker: transformers or vllm.")] = "transformers",
        device: Annotated[str, typer.Option("--device", help="Device of the local worker.")] = "cpu",
        token: Annotated[str | None, typer.Option("--token", help="Token for --url (default: $NDB_WORKER_TOKEN).")] = None,
        seed: Annotated[int, typer.Option("--seed", help="Seed of the simulated users' actions.")] = 0,
        threads: Annotated[int, typer.Option("--threads", help="torch CPU threads of the local worker.")] = 1,
    ) -> None:
        """Load test: N sessions stepping at once; p50/p99 step latency, states/s, errors."""
        from model_backend.worker.bench import format_report, run_bench

        figures = run_bench(url=url, sessions=sessions, steps=steps, model=model, engine=engine, device=device,
                            token=token, seed=seed, threads=threads)
        typer.echo(format_report(figures))
        if figures["errors"]:
            raise typer.Exit(1)
