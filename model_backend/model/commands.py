"""`ndb train`: train (or resume) the neural debugger's model on a built dataset; `ndb average`: average runs;
`ndb ensemble`: decode with several; `ndb export`: a training checkpoint's weights as a model directory.

`register(app)` adds the command to a Typer app (the CLI wires it into `ndb`). Runs unchanged on this
CPU and on GPUs; for several GPUs start it with `accelerate launch --num_processes N $(which ndb) train ...`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def _fail(message: str) -> typer.Exit:
    typer.echo(f"ndb: error: {message}", err=True)
    return typer.Exit(2)


# `--weights` of `ndb average` and `ndb ensemble`, read by _parse_weights.
WeightsOption = Annotated[str | None, typer.Option("--weights", help="Comma-separated weights, one per model (default: equal).")]


def _parse_weights(weights: str | None) -> list[float] | None:
    """--weights "3,1" as numbers; None when not given."""
    try:
        return [float(w) for w in weights.split(",")] if weights else None
    except ValueError as exc:
        raise _fail(f"--weights {weights!r}: give comma-separated numbers") from exc


def register(app: typer.Typer) -> None:
    @app.command("train")
    def train_command(
        data: Annotated[Path, typer.Option("--data", help="Dataset directory (train-*.jsonl, heldout-*.jsonl shards).")],
        out: Annotated[Path, typer.Option("--out", help="Run directory: last/ (checkpoint), final/ (export), logs.")],
        tokenizer: Annotated[Path | None, typer.Option("--tokenizer", help="Tokenizer directory (default: DATA/tokenizer).")] = None,
        model: Annotated[str, typer.Option("--model", help="Model shape (tiny, micro, mini, small, small6, small8, medium, base), or a pretrained model to fine-tune (smollm2-135m).")] = "small",
        max_steps: Annotated[int | None, typer.Option("--max-steps", help="Optimizer steps (cosine schedule length).")] = None,
        minutes: Annotated[float | None, typer.Option("--minutes", help="Wall-clock budget; stops cleanly (checkpoint + export).")] = None,
        batch_size: Annotated[int | None, typer.Option("--batch-size", help="Examples per micro-batch (instead of --batch-tokens).")] = None,
        batch_tokens: Annotated[int, typer.Option("--batch-tokens", help="Padded tokens per micro-batch (when no --batch-size).")] = 8192,
        grad_accum: Annotated[int, typer.Option("--grad-accum", help="Micro-batches per optimizer step.")] = 1,
        lr: Annotated[float, typer.Option("--lr", help="Peak learning rate.")] = 2e-3,
        warmup: Annotated[int, typer.Option("--warmup", help="Linear warm-up steps.")] = 100,
        weight_decay: Annotated[float, typer.Option("--weight-decay", help="AdamW weight decay (matrices only).")] = 0.1,
        seq_len: Annotated[int, typer.Option("--seq-len", help="Longer examples are truncated (or dropped with --drop-long).")] = 1024,
        drop_long: Annotated[bool, typer.Option("--drop-long", help="Drop examples longer than --seq-len instead of truncating.")] = False,
        max_train_tokens: Annotated[int | None, typer.Option("--max-train-tokens", help="Read train shards up to this many tokens.")] = None,
        seed: Annotated[int, typer.Option("--seed", help="Initialisation and data order.")] = 0,
        save_every: Annotated[int, typer.Option("--save-every", help="Checkpoint to OUT/last every N steps.")] = 250,
        eval_every: Annotated[int, typer.Option("--eval-every", help="Held-out loss every N steps.")] = 250,
        snapshot_every: Annotated[int, typer.Option("--snapshot-every", help="Also export OUT/snapshots/step-N every N steps, to average with `ndb average` (0: never).")] = 0,
        eval_examples: Annotated[int, typer.Option("--eval-examples", help="Held-out examples per evaluation.")] = 128,
        resume: Annotated[bool, typer.Option("--resume/--no-resume", help="Continue from OUT/last when it exists.")] = True,
        threads: Annotated[int | None, typer.Option("--threads", help="torch CPU threads (default: all cores).")] = None,
        export_dtype: Annotated[str, typer.Option("--export-dtype", help="float32 or bfloat16 weights in OUT/final.")] = "float32",
        progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Progress bars on stderr.")] = True,
        init_from: Annotated[Path | None, typer.Option("--init-from", help="Start from this model directory's weights (new optimizer and schedule); a shape of the same width and a multiple of its depth grows it.")] = None,
        compile_model: Annotated[bool, typer.Option("--compile/--no-compile", help="torch.compile the model (slow first steps, faster after).")] = False,
    ) -> None:
        """Train the model on a built dataset; export OUT/final (safetensors < 16 MB per file, tokenizer, loss curve)."""
        from model_backend.model.config import SHAPES
        from model_backend.model.pretrained import PRETRAINED, PretrainedMissing, gguf_file

        if model not in SHAPES and model not in PRETRAINED:
            raise _fail(f"unknown --model {model!r}; choose one of {', '.join([*SHAPES, *PRETRAINED])}")
        if model in PRETRAINED:
            try:
                gguf_file(model)
            except PretrainedMissing as exc:
                raise _fail(str(exc)) from exc
        if max_steps is None and minutes is None:
            raise _fail("give --max-steps, --minutes, or both")
        if export_dtype not in ("float32", "bfloat16"):
            raise _fail("--export-dtype must be float32 or bfloat16")
        if not data.is_dir():
            raise _fail(f"--data {data} is not a directory")
        tok_dir = tokenizer if tokenizer is not None else data / "tokenizer"
        if model in PRETRAINED:
            if tokenizer is not None:
                raise _fail(f"--tokenizer does not go with --model {model}: it brings its own (saved to OUT/tokenizer)")
        elif not (tok_dir / "tokenizer.json").is_file() and not (tok_dir / "tokenizer_config.json").is_file():
            raise _fail(f"no tokenizer in {tok_dir} (train one first, or pass --tokenizer)")

        from model_backend.model.train import train

        try:
            log = train(
                data, tok_dir, out, model,
                max_steps=max_steps, time_budget_minutes=minutes, batch_size=batch_size, batch_tokens=batch_tokens,
                grad_accum=grad_accum, lr=lr, warmup_steps=warmup, weight_decay=weight_decay, seq_len=seq_len,
                long_examples="drop" if drop_long else "truncate", max_train_tokens=max_train_tokens, seed=seed,
                save_every=save_every, eval_every=eval_every, snapshot_every=snapshot_every, eval_examples=eval_examples, resume=resume,
                threads=threads, export_dtype=export_dtype, progress=progress,
                init_from=str(init_from) if init_from else None, compile=compile_model,
            )
        except (ValueError, FileNotFoundError) as exc:
            raise _fail(str(exc)) from exc
        s = log["summary"]
        held = s["final_heldout_loss"]
        typer.echo(
            f"{s['steps']} steps ({s['stop_reason']}), {s['tokens_seen']} tokens ({s['trained_tokens_seen']} trained), "
            f"{s['tokens_per_s'] or 0:.0f} tokens/s ({s['trained_tokens_per_s'] or 0:.0f} trained/s), "
            f"train loss {s['final_train_loss'] or float('nan'):.4f}"
            + (f", held-out loss {held:.4f}" if held is not None else "")
            + f"; model in {out / 'final'}"
        )

    @app.command("average")
    def average_command(
        models: Annotated[list[Path], typer.Argument(help="Model directories of one shape and tokenizer (runs' final/).")],
        out: Annotated[Path, typer.Option("--out", help="Directory for the averaged model (replaced as a whole).")],
        weights: WeightsOption = None,
    ) -> None:
        """Average the weights of checkpoints of one shape (a model soup); OUT loads like a run's final/."""
        from model_backend.model.average import AverageError, average_checkpoints

        parsed = _parse_weights(weights)
        try:
            record = average_checkpoints(models, out, parsed)
        except (AverageError, FileNotFoundError) as exc:
            raise _fail(str(exc)) from exc
        sources = ", ".join(f"{s['path']} ({s['weight']:g})" for s in record["sources"])
        typer.echo(f"averaged {sources}: {record['parameters']} parameters; model in {out}")

    @app.command("export")
    def export_command(
        weights: Annotated[Path, typer.Argument(help="A checkpoint's model.safetensors (a run's last/), or a model directory.")],
        like: Annotated[Path, typer.Option("--like", help="A model directory of the same shape and tokenizer (its config and tokenizer files are used).")],
        out: Annotated[Path, typer.Option("--out", help="Directory for the exported model (loads like a run's final/).")],
        export_dtype: Annotated[str, typer.Option("--export-dtype", help="float32 or bfloat16 (half the files; the shipped members are stored so).")] = "float32",
    ) -> None:
        """Export a training checkpoint's weights (or a model directory's) as a model directory, like a run's final/."""
        if export_dtype not in ("float32", "bfloat16"):
            raise _fail(f"--export-dtype {export_dtype!r}: float32 or bfloat16")
        from safetensors import SafetensorError

        try:
            export_checkpoint(weights, like, out, export_dtype)
        except RuntimeError as exc:  # load_state_dict: missing keys or other shapes (a many-line message)
            raise _fail(f"{weights}: its weights do not fit {like}'s model (another shape or vocabulary)") from exc
        except (OSError, ValueError, SafetensorError) as exc:  # missing, unreadable
            raise _fail(f"{weights}: {exc}") from exc
        typer.echo(f"{weights} -> {out}")

    @app.command("ensemble")
    def ensemble_command(
        models: Annotated[list[Path], typer.Argument(help="Model directories that share one tokenizer (any shapes).")],
        out: Annotated[Path, typer.Option("--out", help="Directory for the ensemble (replaced as a whole).")],
        weights: WeightsOption = None,
        names: Annotated[str | None, typer.Option("--names", help="Comma-separated member folder names (default: the directories' names).")] = None,
    ) -> None:
        """Make an ensemble: the engines decode with the mean of the members' log-probabilities."""
        from model_backend.engine.ensemble import EnsembleError, make_ensemble

        parsed = _parse_weights(weights)
        try:
            make_ensemble(models, out, parsed, names.split(",") if names else None)
        except (EnsembleError, OSError) as exc:
            raise _fail(str(exc)) from exc
        typer.echo(f"ensemble of {', '.join(str(m) for m in models)} in {out}")


def export_checkpoint(weights: Path, like: Path, out: Path, export_dtype: str = "float32") -> None:
    """Load `weights` (a checkpoint file or a model directory) into `like`'s model and export it to `out` with
    `like`'s tokenizer and training log (its records left out, the exported checkpoint named)."""
    import json

    from safetensors.torch import load_file
    from transformers import LlamaConfig, LlamaForCausalLM

    from model_backend.model.average import export_with_tokenizer_of
    from model_backend.model.export import read_weights, unwrap_checkpoint_weights

    raw = read_weights(weights) if weights.is_dir() else load_file(str(weights))
    model = LlamaForCausalLM(LlamaConfig.from_pretrained(like))
    model.load_state_dict(unwrap_checkpoint_weights({k: v.float() for k, v in raw.items()}), strict=True)
    log_path = like / "training_log.json"
    log = json.loads(log_path.read_text()) if log_path.is_file() else {}
    log = {k: v for k, v in log.items() if k not in ("records", "summary", "average")}
    log["exported_checkpoint"] = str(weights)
    export_with_tokenizer_of(like, model, out, log, export_dtype)
