"""`ndb eval next-state`, `ndb eval teacher-forced`, `ndb eval cruxeval`, `ndb eval realistic` and `ndb eval merge`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from model_backend.engine.infer import (
    DEFAULT_CHECKS,
    DEFAULT_EDITS,
    DEFAULT_SAMPLES,
    DEFAULT_WALKS,
    DEFAULT_WIDTH,
)
from model_backend.eval import merge as merge_commands

ModelOpt = Annotated[str | None, typer.Option("--model", help="Checkpoint directory (default: the shipped model).")]
JsonOpt = Annotated[Path | None, typer.Option("--json", help="Write the full results as JSON here.")]
LimitOpt = Annotated[int | None, typer.Option("--limit", help="Evaluate only the first N items.")]
SearchOpt = Annotated[int | None, typer.Option(
    "--search", help="Close calls per frame the neural engine re-decodes with the runner-up token (0: greedy; default: the engine's).")]


def register(app: typer.Typer) -> None:
    eval_app = typer.Typer(help="Evaluate a model: next-state accuracy, CruxEval, realistic programs.", no_args_is_help=True)
    app.add_typer(eval_app, name="eval")
    merge_commands.register(eval_app)

    @eval_app.command("next-state")
    def next_state(
        model: ModelOpt = None,
        data: Annotated[str, typer.Option("--data", help="Dataset directory (built by `ndb data build`).")] = "data_out/v2",
        split: Annotated[str, typer.Option("--split", help="heldout or train")] = "heldout",
        limit: LimitOpt = None,
        json_out: JsonOpt = None,
        plots: Annotated[Path | None, typer.Option("--plots", help="Directory for PNG plots.")] = None,
        errors: Annotated[Path | None, typer.Option("--errors", help="Write every wrong prediction here (JSONL, a diff against the truth).")] = None,
        search: SearchOpt = None,
    ) -> None:
        """Exact next-state match per action, per component and against the horizon (teacher forcing)."""
        from model_backend.engine import EngineError
        from model_backend.eval.next_state import evaluate, format_table, plot

        try:
            result = evaluate(model, data, split, limit, errors_path=errors, search_branches=search)
        except (EngineError, FileNotFoundError) as exc:
            typer.echo(f"ndb: error: {exc}", err=True)
            raise typer.Exit(2) from None
        typer.echo(format_table(result))
        if plots:
            for path in plot(result, str(plots)):
                typer.echo(f"plot: {path}")
        if json_out:
            json_out.write_text(json.dumps(result, indent=2) + "\n")

    @eval_app.command("teacher-forced")
    def teacher_forced(
        models: Annotated[list[str] | None, typer.Option("--model", help="A model directory (repeatable; default: the shipped model).")] = None,
        data: Annotated[str, typer.Option("--data", help="Dataset directory (`ndb data build` or `ndb data programs`).")] = "data_out/v2",
        split: Annotated[str, typer.Option("--split", help="heldout or train")] = "heldout",
        limit: LimitOpt = None,
        weights: Annotated[str, typer.Option("--weights", help='Weight vectors over the models, one per ";" (e.g. "1,0;1,1": the first alone, then a mean of both); default: each model alone.')] = "",
        cache: Annotated[Path | None, typer.Option("--cache", help="Keep each model's log-probabilities here, to compare weights again in seconds.")] = None,
        json_out: JsonOpt = None,
    ) -> None:
        """Greedy next-state exact match estimated from one teacher-forced pass per model, to compare models
        and their weighted means in minutes (model_backend/eval/teacher_forced.py: never above the decode)."""
        from model_backend.engine import EngineError
        from model_backend.eval.teacher_forced import compare_models

        try:
            chosen: list[str | None] = list(models) if models else [None]
            rows = compare_models(chosen, data, split, limit, weights, cache,
                                  log=lambda line: typer.echo(line, err=True))
        except (EngineError, FileNotFoundError, ValueError) as exc:
            typer.echo(f"ndb: error: {exc}", err=True)
            raise typer.Exit(2) from None
        for row in rows:
            typer.echo(row["line"])
        if json_out:
            json_out.write_text(json.dumps(rows, indent=2) + "\n")

    @eval_app.command("cruxeval")
    def cruxeval(
        data: Annotated[str, typer.Option("--data", help="CruxEval JSONL (code, input, output, id).")],
        task: Annotated[str, typer.Option("--task", help="output or input")] = "output",
        via: Annotated[str, typer.Option("--via", help="steps, step_return or breakpoint (output task)")] = "step_return",
        engine: Annotated[str, typer.Option("--engine", help="neural or oracle")] = "neural",
        model: ModelOpt = None,
        limit: LimitOpt = None,
        json_out: JsonOpt = None,
        search: SearchOpt = None,
        problem_seconds: Annotated[float, typer.Option(
            "--problem-seconds", help="Time limit per problem (0: none); a problem over it fails.")] = 120.0,
        follow_steps: Annotated[int | None, typer.Option(
            "--follow-steps", min=0, help="Single steps the neural engine takes for one step_return or breakpoint "
            "before it jumps (0: the model's one jump; default: the engine's, as in a debugging session).")] = None,
        samples: Annotated[int, typer.Option(
            "--samples", min=0, help="Input task: sampled inverse jumps proposing arguments, besides the greedy one.")] = DEFAULT_SAMPLES,
        checks: Annotated[int, typer.Option(
            "--checks", min=0, help="Input task: proposals run forward to f's return to confirm them "
            "(--samples 0 --checks 0: the model's one inverse jump).")] = DEFAULT_CHECKS,
        edits: Annotated[int, typer.Option(
            "--edits", min=0, help="Input task: edited argument lists checked at most while none is confirmed "
            "(edits of the runs whose returns come closest first).")] = DEFAULT_EDITS,
        width: Annotated[int, typer.Option(
            "--width", min=1, help="Input task: forward runs side by side.")] = DEFAULT_WIDTH,
        walks: Annotated[int, typer.Option(
            "--walks", min=0, max=1, help="Input task: 1 adds the arguments an inverse walk (inv_step_over from "
            "the return to the call) reaches to the proposals.")] = DEFAULT_WALKS,
        proposer: Annotated[str | None, typer.Option(
            "--proposer", help="Input task: a checkpoint that proposes the arguments (the inverse predictions), or "
            "'model' for --model's own; --model still checks them. Default: the shipped "
            "checkpoints/proposer for the shipped model, --model's own for any other.")] = None,
    ) -> None:
        """pass@1 with CruxEval's scoring; the last line is `pass@1: X.X% (N/M)`."""
        from model_backend.engine import EngineError
        from model_backend.eval.cruxeval import evaluate

        try:
            result = evaluate(data, task, via, engine, model, limit, search_branches=search,
                              problem_seconds=problem_seconds or None, follow_steps=follow_steps,
                              samples=samples, checks=checks, edits=edits, width=width, walks=walks,
                              proposer_model=proposer)
        except (EngineError, ValueError, OSError) as exc:
            typer.echo(f"ndb: error: {exc}", err=True)
            raise typer.Exit(2) from None
        if json_out:
            json_out.write_text(json.dumps(result, indent=2) + "\n")
        over = f", {result['timed_out']} over the {problem_seconds:g}s limit" if result["timed_out"] else ""
        typer.echo(f"task {result['task']} via {result['via']}, engine {engine}, {result['seconds']:.0f}s{over}")
        typer.echo(f"pass@1: {100 * result['pass_at_1']:.1f}% ({result['passed']}/{result['n']})")

    @eval_app.command("realistic")
    def realistic(
        split: Annotated[str, typer.Option("--split", help="dev or test (benchmarks/realistic/SPLIT/*.py)")] = "dev",
        engine: Annotated[str, typer.Option("--engine", help="neural or oracle")] = "neural",
        model: ModelOpt = None,
        json_out: JsonOpt = None,
        plots: Annotated[Path | None, typer.Option("--plots", help="Directory for PNG plots.")] = None,
        limit: LimitOpt = None,
        rollouts: Annotated[int, typer.Option("--rollouts", min=1, help="Random rollouts per program.")] = 1,
        actions: Annotated[int, typer.Option("--actions", min=1, help="Actions per rollout at most.")] = 20,
        seed: Annotated[int, typer.Option("--seed", help="Seed of the action sequences (the same for every engine).")] = 0,
        program_seconds: Annotated[float, typer.Option(
            "--program-seconds", help="Time limit per program, for the return check and apart for the rollouts (0: "
            "none); past it the action under way is paused (a failure) and the rest is not played.")] = 300.0,
        follow_steps: Annotated[int | None, typer.Option(
            "--follow-steps", min=0, help="Single steps the neural engine takes for one action before it jumps "
            "(0: the model's one jump; default: the engine's, as in a debugging session).")] = None,
        root: Annotated[Path | None, typer.Option(
            "--root", help="The benchmark's directory, holding dev/ and test/ (default: benchmarks/realistic).")] = None,
        program: Annotated[list[str] | None, typer.Option(
            "--program", help="Only this program of the split (its file name without .py); repeatable.")] = None,
    ) -> None:
        """Random debugging sessions on realistic programs, every stop compared with the oracle's."""
        from model_backend.engine import EngineError
        from model_backend.eval.realistic import evaluate
        from model_backend.eval.realistic_report import format_table, plot

        try:
            result = evaluate(split, engine, model, limit, rollouts, actions, seed, root,
                              program_seconds=program_seconds or None, follow_steps=follow_steps, names=program)
        except (EngineError, ValueError, OSError) as exc:
            typer.echo(f"ndb: error: {exc}", err=True)
            raise typer.Exit(2) from None
        if json_out:
            json_out.write_text(json.dumps(result, indent=2) + "\n")
        if plots:
            for path in plot(result, plots):
                typer.echo(f"plot: {path}")
        typer.echo(format_table(result))
