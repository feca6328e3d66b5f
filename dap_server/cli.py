"""`ndb`: the one console script. Front-end commands live here; backend ones come from model_backend."""

from __future__ import annotations

from typing import Annotated

import typer

from mcp_server import commands as mcp_commands
from model_backend import cli as backend_cli
from model_backend.data import commands as data_commands
from model_backend.engine.follow import DEFAULT_FOLLOW_STEPS, VIEW_FOLLOW_STEPS
from model_backend.eval import commands as eval_commands
from model_backend.grammar import commands as grammar_commands
from model_backend.model import commands as model_commands
from model_backend.sandbox import Limits
from model_backend.worker import commands as worker_commands

app = typer.Typer(
    name="ndb",
    help="Neural Debug: a Python debugger whose debuggee is a language model.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
backend_cli.register(app)
data_commands.register(app)
model_commands.register(app)
eval_commands.register(app)
grammar_commands.register(app)
bench_app = typer.Typer(help="Benchmarks (figures go to docs/benchmarks.md).", no_args_is_help=True)
backend_cli.register_bench(bench_app)
app.add_typer(bench_app, name="bench")
worker_commands.register(app, bench_app)
mcp_commands.register(app)


@bench_app.command("dap")
def bench_dap(
    program: Annotated[str, typer.Argument(help="Program to step through.")] = "examples/loop.py",
    steps: Annotated[int, typer.Option(help="`next` requests to time.")] = 300,
) -> None:
    """The adapter's own overhead per step (oracle engine), beside debugpy's on the same program."""
    import json

    from dap_server.bench import run_bench

    typer.echo(json.dumps(run_bench(program, steps), indent=2))


@bench_app.command("session")
def bench_session(
    program: Annotated[str, typer.Argument(help="Program to debug (a benchmark program's `# entry:` is its call).")],
    entry: Annotated[str | None, typer.Option(help="Call expression (default: the `# entry:` comment).")] = None,
    steps: Annotated[int, typer.Option(help="`n` commands to time after the breakpoint.")] = 20,
    distance: Annotated[int, typer.Option(help="Single steps from the start to the breakpoint's first hit, at least.")] = 20,
    engine: Annotated[str, typer.Option(help="neural (default) or oracle.")] = "neural",
    model: Annotated[str | None, typer.Option(help="Checkpoint directory (default: the shipped model).")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds one command may take before the run stops there.")] = 600.0,
) -> None:
    """What a person feels in `ndb debug`: first prompt, `c` to a breakpoint, `n` (seconds, JSON)."""
    import json

    from dap_server.bench_session import bench_session as run

    figures = run(program, entry, steps=steps, distance=distance, engine=engine, model=model, timeout=timeout)
    typer.echo(json.dumps(figures, indent=2))


@bench_app.command("large-values")
def bench_large_values(runs: Annotated[int, typer.Option(min=1, help="Runs to take the median of.")] = 3) -> None:
    """An oracle session's trace when an object holds 100,000 numbers: with and without its attributes (JSON)."""
    import json

    from model_backend.bench import bench_large_values as run

    typer.echo(json.dumps(run(runs), indent=2))


@app.command()
def dap(
    port: Annotated[int | None, typer.Option("--port", help="Serve DAP over TCP on this port instead of stdio.")] = None,
    host: Annotated[str, typer.Option("--host", help="Address to bind with --port (loopback unless you say otherwise).")] = "127.0.0.1",
    log_file: Annotated[str | None, typer.Option("--log-file", help="Write a protocol log to this file.")] = None,
    token: Annotated[str | None, typer.Option(
        "--token", envvar="NDB_DAP_TOKEN", show_default=False,
        help="With --port: the secret every client sends as `adapterToken` in its launch/attach arguments; required "
        "for a --host other than loopback (also NDB_DAP_TOKEN).")] = None,
    no_sandbox: backend_cli.NoSandboxOpt = False,
) -> None:
    """Run the Debug Adapter Protocol server (stdio by default, as VS Code starts it)."""
    from dap_server import server

    backend_cli.sandbox_choice(no_sandbox)
    if port is None:
        server.serve_stdio(log_file=log_file)
    else:
        try:
            server.check_exposure(host, token)
        except ValueError as exc:
            backend_cli.fail(str(exc))
        server.serve_tcp(host=host, port=port, log_file=log_file, token=token)


@app.command()
def debug(
    program: backend_cli.ProgramArg,
    entry: backend_cli.EntryOpt = None,
    engine: Annotated[str, typer.Option("--engine", help="neural (default) or oracle")] = "neural",
    model: Annotated[str | None, typer.Option("--model", help="Checkpoint directory (default: the shipped model).")] = None,
    worker: Annotated[str | None, typer.Option("--worker", help="ws:// URL of a model worker.")] = None,
    args: Annotated[list[str] | None, typer.Argument(help="Program arguments (sys.argv[1:] of the oracle's run), after --.")] = None,
    max_events: backend_cli.MaxEventsOpt = Limits().max_events,
    follow_steps: Annotated[int | None, typer.Option(
        "--follow-steps", min=0, help="Neural engine: single predicted steps one `n` across a call, `r` or `c` may "
        f"take before the rest is predicted in one jump (0: always one jump; default {DEFAULT_FOLLOW_STEPS} for a program the "
        f"model's header shows whole, {VIEW_FOLLOW_STEPS} for a longer one it shows as a view).")] = None,
    no_sandbox: backend_cli.NoSandboxOpt = False,
) -> None:
    """Debug PROGRAM in the terminal with pdb's commands, plus `back` and `rc` to step backwards."""
    from dap_server.terminal import run_terminal

    backend_cli.sandbox_choice(no_sandbox)
    backend_cli.load_program(program, entry)  # a bad path or syntax error: one line, exit 2
    raise typer.Exit(run_terminal(str(program), entry, engine, model, worker, argv=args or [], max_events=max_events,
                                  follow_steps=follow_steps))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
