"""Backend commands of `ndb`: trace, step, dsl (and, as they land, data, train, eval, worker, bench).

Errors a user can cause (bad path, syntax error, failing entry, unknown action) print one line on
stderr and exit with status 2.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer

from model_backend.engine.base import EngineError
from model_backend.engine.infer import (
    DEFAULT_CHECKS,
    DEFAULT_EDITS,
    DEFAULT_SAMPLES,
    DEFAULT_WALKS,
    DEFAULT_WIDTH,
)
from model_backend.program import Program, ProgramError
from model_backend.sandbox import MAX_EVENTS_CEILING, Limits
from model_backend.state import Action

ProgramArg = Annotated[Path, typer.Argument(help="The Python script to debug.", show_default=False)]
EntryOpt = Annotated[
    str | None, typer.Option("--entry", help="Call expression evaluated after the script's definitions, e.g. 'f([1, 2])'.")
]
MaxEventsOpt = Annotated[int, typer.Option(
    "--max-events", min=1, max=MAX_EVENTS_CEILING,
    help="Events the oracle records before it stops the program (a long loop stops there; you can step back).")]
NoSandboxOpt = Annotated[bool, typer.Option(
    "--no-sandbox", help="Run the program without the operating system's isolation, as your own code (the way "
    "debugpy does), where namespaces are refused (macOS, some containers). Prints a warning.")]


def sandbox_choice(no_sandbox: bool) -> None:
    if no_sandbox:
        from model_backend.sandbox import run_unsandboxed

        run_unsandboxed()


def fail(message: str) -> NoReturn:
    typer.echo(f"ndb: error: {message}", err=True)
    raise typer.Exit(2)


def load_program(path: Path, entry: str | None) -> Program:
    try:
        return Program.load(path, entry)
    except ProgramError as exc:
        fail(str(exc))


def parse_actions(text: str) -> list[Action]:
    # `breakpoint:12,15` would be split by the comma list: rejoin numbers that follow a breakpoint.
    parts = [p.strip() for p in text.split(",") if p.strip()]
    merged: list[str] = []
    for part in parts:
        if part.isdigit() and merged and merged[-1].startswith("breakpoint:"):
            merged[-1] += "," + part
        else:
            merged.append(part)
    try:
        return [Action.parse(item) for item in merged]
    except ValueError as exc:
        fail(str(exc))


def register(app: typer.Typer) -> None:
    @app.command()
    def trace(program: ProgramArg, entry: EntryOpt = None, max_events: MaxEventsOpt = Limits().max_events,
              no_sandbox: NoSandboxOpt = False) -> None:
        """Run PROGRAM in the sandbox and print the recorded states, one JSON object a line."""
        from model_backend.sandbox import SandboxUnavailable, run_trace

        sandbox_choice(no_sandbox)
        prog = load_program(program, entry)
        try:
            result = run_trace(prog, Limits(max_events=max_events))
        except SandboxUnavailable as exc:
            fail(str(exc))
        if not result.events and result.exit == "error" and entry is not None:
            fail(f"the entry expression {entry!r} failed: {result.exit_reason}")
        for event in result.events:
            sys.stdout.write(event.model_dump_json() + "\n")
        sys.stdout.write(json.dumps({"exit": result.exit, "reason": result.exit_reason}) + "\n")

    @app.command()
    def step(
        program: ProgramArg,
        actions: Annotated[str, typer.Option("--actions", help="Comma-separated: step_into, step_over, step_return, breakpoint:12, continue, inv_step_into, inv_step_over, inv_step_call.")],
        entry: EntryOpt = None,
        start: Annotated[str, typer.Option("--start", help="entry or exit")] = "entry",
        engine: Annotated[str, typer.Option("--engine", help="oracle (the default: the real run, in the sandbox) or neural (the model's predictions)")] = "oracle",
        model: Annotated[str | None, typer.Option("--model", help="Checkpoint directory (neural engine).")] = None,
        max_events: MaxEventsOpt = Limits().max_events,
    ) -> None:
        """Print the initial state, then the state after each action: one JSON object a line. The default
        engine is the oracle (exact states, for scripts and checks); --engine neural asks the model."""
        from model_backend.engine import create_engine

        if start not in ("entry", "exit"):
            fail(f"--start must be 'entry' or 'exit', not {start!r}")
        prog = load_program(program, entry)
        action_list = parse_actions(actions)
        code_lines = prog.code_lines()
        for action in action_list:
            for line in action.lines:
                if line not in code_lines:
                    where = "past the end of the program" if line > len(prog.lines) else "a line without code"
                    fail(f"breakpoint:{line} would never stop: line {line} is {where}")
        try:
            eng = create_engine(engine, model=model)
            eng.limit_events(max_events)
            sys.stdout.write(json.dumps(eng.start(prog, start).step_record(None)) + "\n")  # type: ignore[arg-type]
            for action in action_list:
                sys.stdout.write(json.dumps(eng.step(action).step_record(action)) + "\n")
        except EngineError as exc:
            fail(str(exc))

    @app.command()
    def dsl(
        program: ProgramArg,
        entry: EntryOpt = None,
        seed: Annotated[int, typer.Option("--seed", help="Random seed of the sampling policy.")] = 0,
        inverse: Annotated[bool, typer.Option("--inverse", help="Sample an inverse (backwards) trajectory.")] = False,
    ) -> None:
        """Print one sampled trajectory of PROGRAM in the model's text format."""
        import random

        from model_backend import sampler, trace_format
        from model_backend.sandbox import run_trace

        prog = load_program(program, entry)
        result = run_trace(prog)
        if not result.events:
            fail(f"the program recorded no events ({result.exit}: {result.exit_reason})")
        rng = random.Random(seed)
        steps = (sampler.sample_inverse if inverse else sampler.sample_forward)(prog, result, rng)
        sys.stdout.write(trace_format.serialize(prog, steps, inverse=inverse) + "\n")


    @app.command()
    def infer(
        program: ProgramArg,
        function: Annotated[str, typer.Option("--function", "-f", help="The top-level function whose call is asked for.")],
        returns: Annotated[str, typer.Option("--returns", help="The value it returned, as a Python literal, e.g. \"'abc'\" or '[1, 2]'.")],
        samples: Annotated[int, typer.Option("--samples", min=0, max=64, help="Sampled inverse jumps proposing arguments, besides the greedy one.")] = DEFAULT_SAMPLES,
        checks: Annotated[int, typer.Option("--checks", min=0, max=64, help="Proposals the model runs forward to confirm them (0: the greedy proposal, unchecked).")] = DEFAULT_CHECKS,
        edits: Annotated[int, typer.Option("--edits", min=0, max=1024, help="Edited argument lists checked at most while none is confirmed (those of the closest runs first).")] = DEFAULT_EDITS,
        width: Annotated[int, typer.Option("--width", min=1, max=64, help="Forward runs side by side.")] = DEFAULT_WIDTH,
        walks: Annotated[int, typer.Option("--walks", min=0, max=1, help="1: also propose the arguments an inverse walk (inv_step_over from the return to the call) reaches.")] = DEFAULT_WALKS,
        seconds: Annotated[float, typer.Option("--seconds", min=0, help="Time limit: forward runs still going then are abandoned (0: none).")] = 120.0,
        model: Annotated[str | None, typer.Option("--model", help="Checkpoint directory (default: the shipped model).")] = None,
        proposer: Annotated[str | None, typer.Option("--proposer", help="A checkpoint that proposes the arguments (the inverse predictions), or 'model' for --model's own; --model still checks them. Default: the shipped checkpoints/proposer for the shipped model, --model's own for any other.")] = None,
        json_out: Annotated[bool, typer.Option("--json", help="Print the inference as one JSON object.")] = False,
    ) -> None:
        """Infer arguments that make FUNCTION return a value, with the model only (no code is run):
        inverse jumps propose argument lists, forward runs to the return confirm them."""
        from model_backend.engine.infer import infer_arguments, new_sessions
        from model_backend.engine.neural import create_neural_engine, proposer_engine

        prog = load_program(program, None)
        try:
            engine = create_neural_engine(model)
            proposing = proposer_engine(engine, proposer) or engine
            deadline = time.monotonic() + seconds if seconds else None
            result = infer_arguments(proposing, prog.source, function, returns, samples, checks, edits, width,
                                     engine_factory=new_sessions(engine), deadline=deadline, walks=walks)
        except EngineError as exc:
            fail(str(exc))
        if json_out:
            sys.stdout.write(result.model_dump_json() + "\n")
            return
        _print_inference(result)

    from lsp_server.commands import register as register_lsp  # the front end registers here too: `ndb lsp`

    register_lsp(app)


def _print_inference(result: Any) -> None:
    from rich.console import Console
    from rich.table import Table

    table = Table(title=f"{result.function}(...) == {result.returned}: arguments the model proposes")
    for column in ("#", "arguments", "votes", "predicted return", "confirmed"):
        table.add_column(column, overflow="fold")
    ranks = {p.arguments: rank for rank, p in enumerate(result.proposals, 1)}
    for rank, p in enumerate(result.proposals, 1):
        checked = p.predicted_return is not None or p.problem is not None
        predicted = p.predicted_return if p.predicted_return is not None else p.problem or "not checked"
        origin = (" (greedy)" if p.greedy else " (walk)" if p.walked
                  else f" (edit of #{ranks[p.edit_of]})" if p.edit_of in ranks else "")
        table.add_row(str(rank), p.arguments + origin, str(p.votes), predicted,
                      "yes" if p.confirmed else "no" if checked else "")
    console = Console()
    console.print(table)
    if result.arguments is None:
        console.print("The model proposed no argument list.", markup=False)
        return
    verdict = "confirmed by the forward run" if result.confirmed else "not confirmed: no checked proposal returns it"
    console.print(f"{result.function}({result.arguments})  # {verdict}", markup=False, highlight=False, soft_wrap=True)


def register_bench(bench_app: typer.Typer) -> None:
    @bench_app.command("tracer")
    def bench_tracer(
        repeats: Annotated[int, typer.Option(help="Runs to take the median of.")] = 5,
        events: Annotated[int, typer.Option(help="Events traced per throughput run.")] = 20_000,
    ) -> None:
        """Tracing throughput (events/s) and sandbox start-up latency (ms)."""
        from model_backend.bench import bench_tracer as run

        figures = run(repeats=repeats, events=events)
        for key, value in figures.items():
            typer.echo(f"{key}: {value:.1f}" if isinstance(value, float) else f"{key}: {value}")

    from lsp_server.commands import register_bench as register_lsp_bench

    register_lsp_bench(bench_app)
