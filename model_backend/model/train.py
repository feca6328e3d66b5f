"""Training of the neural debugger: a from-scratch Llama on the dataset builder's shards.

One function, `train`, runs unchanged on this CPU (fp32, torch threads from an option) and on one or several
GPUs (bf16 autocast; launch with `accelerate launch -m ...` or `torchrun` for several). What it does:

- reads `train-*.jsonl` / `heldout-*.jsonl` shards (records with "segments": [[text, trained], ...]),
  tokenizes them with `model_backend.data.tokenizer.encode_segments` (labels -100 on context pieces), cuts
  examples to `seq_len` (or drops them) and caches the token arrays in OUT/cache/;
- batches examples of similar length (a token budget or a fixed count per micro-batch), right-pads them
  (labels -100 on padding), and computes the loss on trained tokens only: logits are computed only at the
  positions that have a label, and the loss of one optimizer step is the mean over all its trained tokens
  (every micro-batch of the accumulation and every process weighted by its token count);
- AdamW (no decay on norms and embeddings), linear warm-up then cosine decay to `min_lr_ratio * lr`,
  gradient clipping at 1.0; with a time budget the cosine follows whichever of steps and wall-clock time is
  further along, so a fixed-time run ends with a decayed learning rate;
- a tqdm bar with loss, learning rate and tokens/s; held-out loss every `eval_every` steps;
- a checkpoint in OUT/last/ every `save_every` steps, at the end, and on Ctrl-C (model, optimizer,
  schedule, RNG states, data position, log): `resume=True` continues the same run exactly where it was;
- with `snapshot_every`, a loadable export every that many steps to OUT/snapshots/step-NNNNNN/, to
  average points along a run with `ndb average` (it helps while the learning rate is high, not in the
  cosine's low tail: docs/training.md);
- at the end an export to OUT/final/: safetensors shards under 16 MB, config.json, generation_config.json
  (eos = the frame stop tokens), the tokenizer files, training_log.json and loss.png.

A model name from `model_backend.model.pretrained.PRETRAINED` (e.g. "smollm2-135m") fine-tunes that
pretrained model instead: its own tokenizer plus the format's special tokens (written to OUT/tokenizer,
used instead of the dataset's), its weights with the embedding grown to match; no 16 MB limit on its
export, which is too big for git anyway.

The parts: train_config.py (the options), train_data.py (shards, tokenization, batches), objective.py
(loss, parameter groups, schedule, held-out loss), export.py (weights in and out); this module runs the loop.
"""


from __future__ import annotations

import json
import logging
import os
import platform
import shutil
import sys
import time
from collections.abc import Callable
from contextlib import nullcontext, suppress
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

import torch

from model_backend.model.config import describe, make_config, special_token_ids
from model_backend.model.export import MAX_SHARD_BYTES, export_final, load_weights, write_json
from model_backend.model.objective import CausalLMLoss, Schedule, check_batches, evaluate, param_groups
from model_backend.model.pretrained import PRETRAINED
from model_backend.model.train_config import FINAL, LAST, SNAPSHOTS, STATE_FILE, TrainConfig
from model_backend.model.train_data import IGNORE, BatchStream, collate, load_split, tokenizer_key


def _hardware(device: torch.device, threads: int) -> dict[str, Any]:
    info: dict[str, Any] = {"device": str(device), "torch": torch.__version__, "python": platform.python_version()}
    if device.type == "cuda":
        info["gpu"] = torch.cuda.get_device_name(device)
    else:
        info["cpu"] = platform.processor() or platform.machine()
        info["cores"] = os.cpu_count()
        info["threads"] = threads
    with suppress(OSError):
        info["load_average_at_start"] = [round(x, 2) for x in os.getloadavg()]
    return info



def train(
    data_dir: str | Path,
    tokenizer_dir: str | Path,
    out_dir: str | Path,
    model_name: str = "small",
    *,
    callback: Callable[[dict[str, Any]], None] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Train (or resume) a model; returns the training log (also in OUT/final/training_log.json).

    `options` are the other TrainConfig fields (max_steps, time_budget_minutes, batch_tokens, batch_size,
    grad_accum, lr, weight_decay, warmup_steps, seq_len, seed, save_every, eval_every, resume, threads, ...).
    `callback(record)` is called after every optimizer step with that step's record.
    """
    known = {f.name for f in fields(TrainConfig)}
    unknown = set(options) - known
    if unknown:
        raise TypeError(f"unknown training options: {', '.join(sorted(unknown))}")
    cfg = TrainConfig(data_dir=str(data_dir), tokenizer_dir=str(tokenizer_dir), out_dir=str(out_dir), model_name=model_name, **options)
    cfg.check()
    return _Trainer(cfg, callback).run()


class _Trainer:
    def __init__(self, cfg: TrainConfig, callback: Callable[[dict[str, Any]], None] | None) -> None:
        self.cfg, self.callback = cfg, callback

    def run(self) -> dict[str, Any]:
        threads_before = torch.get_num_threads()
        try:
            return self._run()
        finally:
            torch.set_num_threads(threads_before)

    def _run(self) -> dict[str, Any]:
        from accelerate import Accelerator
        from accelerate.utils import set_seed
        from transformers import AutoTokenizer, LlamaForCausalLM

        cfg = self.cfg
        t0 = time.monotonic()
        use_gpu = torch.cuda.is_available()
        acc = Accelerator(mixed_precision="bf16" if use_gpu and torch.cuda.is_bf16_supported() else "no", cpu=not use_gpu)
        self.acc = acc
        threads = cfg.threads or os.cpu_count() or 1
        if acc.device.type == "cpu":
            torch.set_num_threads(threads)
        out = Path(cfg.out_dir)
        out.mkdir(parents=True, exist_ok=True)
        last = out / LAST

        pretrained = cfg.model_name in PRETRAINED
        if pretrained:  # the pretrained model's tokenizer (plus the format's tokens), not the dataset's
            from model_backend.model.pretrained import prepare_tokenizer

            tok_dir = out / "tokenizer"
            if acc.is_main_process and not (tok_dir / "tokenizer_config.json").exists():
                prepare_tokenizer(cfg.model_name, tok_dir)
            acc.wait_for_everyone()
            cfg.tokenizer_dir = str(tok_dir)
        tokenizer = AutoTokenizer.from_pretrained(cfg.tokenizer_dir)
        ids = special_token_ids(tokenizer)
        pad_id = int(ids["pad_token_id"])
        tok_key = tokenizer_key(cfg.tokenizer_dir)
        train_data = load_split(cfg, "train", tokenizer, tok_key, acc.is_main_process, cfg.max_train_tokens)
        if train_data is None or len(train_data) == 0:
            raise FileNotFoundError(f"no train-*.jsonl shards with trainable examples under {cfg.data_dir}")
        held = load_split(cfg, "heldout", tokenizer, tok_key, acc.is_main_process)
        if held is not None and len(held) == 0:
            held = None
        eval_batches: list[list[int]] = []
        if held is not None:  # a fixed random subset of the held-out examples, batched by length
            eval_batches = check_batches(held, cfg.eval_examples, cfg.batch_tokens, cfg.batch_size, cfg.seed)
        set_seed(cfg.seed)
        if pretrained:
            from model_backend.model.pretrained import load_model

            model = load_model(cfg.model_name, tokenizer)
            config = model.config
            shape = {"name": cfg.model_name, "pretrained": PRETRAINED[cfg.model_name].gguf}
        else:
            config = make_config(cfg.model_name, tokenizer, max_position_embeddings=max(2048, cfg.seq_len))
            model = LlamaForCausalLM(config)
            shape = describe(cfg.model_name)
        init_layers = None
        if cfg.init_from and not (cfg.resume and (last / STATE_FILE).exists()):
            init_layers = load_weights(model, Path(cfg.init_from))
            if init_layers != config.num_hidden_layers:
                acc.print(f"grew {cfg.init_from}'s {init_layers} layers to {config.num_hidden_layers}: each layer is "
                          "followed by copies whose output projections are zero (the same function at step 0)", file=sys.stderr)
        n_params = sum(p.numel() for p in model.parameters())
        loss_model = CausalLMLoss(model)
        if cfg.compile:
            # nn.Module.compile keeps the module and its state-dict keys; dynamic shapes because every
            # micro-batch has its own length. The gain is small on this CPU (docs/training.md).
            loss_model.compile(dynamic=True)
        optimizer = torch.optim.AdamW(
            param_groups(model, cfg.weight_decay), lr=cfg.lr, betas=(cfg.beta1, cfg.beta2), eps=1e-8,
            fused=False, foreach=True,
        )
        budget_s = cfg.time_budget_minutes * 60.0 if cfg.time_budget_minutes else None
        schedule = Schedule(cfg.lr, cfg.warmup_steps, cfg.max_steps, cfg.min_lr_ratio, budget_s)
        loss_model, optimizer = acc.prepare(loss_model, optimizer)
        acc.register_for_checkpointing(schedule)
        stream = BatchStream(train_data.lengths, cfg.batch_tokens, cfg.batch_size, cfg.seed)

        log: dict[str, Any] = {
            "config": asdict(cfg),
            "model": {**shape, "parameters": n_params, "vocab_size": config.vocab_size},
            "hardware": _hardware(acc.device, threads),
            "data": {"train": train_data.stats, "heldout": held.stats if held else None,
                     "train_examples": len(train_data), "eval_examples": sum(len(b) for b in eval_batches)},
            "records": [],
        }
        if init_layers is not None:
            log["init_from"] = {"path": cfg.init_from, "layers": init_layers}
        step, tokens, trained_tokens, prior_elapsed, train_time, cpu_time = 0, 0, 0, 0.0, 0.0, 0.0
        if cfg.resume and (last / STATE_FILE).exists():
            state = json.loads((last / STATE_FILE).read_text())
            if state["model_name"] != cfg.model_name or state["vocab_size"] != config.vocab_size:
                raise ValueError(f"{last} holds a {state['model_name']} model with vocab {state['vocab_size']}; "
                                 "use another --out or --no-resume")
            acc.load_state(str(last))
            stream.load_state_dict(state["stream"])
            step, tokens, trained_tokens = state["step"], state["tokens"], state["trained_tokens"]
            prior_elapsed, train_time = state["elapsed_s"], state["train_time_s"]
            cpu_time = state.get("cpu_time_s", 0.0)
            log["records"] = state["records"]
            log["resumed"] = [*state.get("resumed", []), step]
        elapsed = lambda: prior_elapsed + time.monotonic() - t0  # noqa: E731

        def save_checkpoint() -> None:
            acc.wait_for_everyone()
            tmp = out / (LAST + ".tmp")
            if acc.is_main_process:
                shutil.rmtree(tmp, ignore_errors=True)
            acc.wait_for_everyone()
            quiet = logging.getLogger("accelerate.utils.other")  # "Removed shared tensor lm_head": tied, expected
            level = quiet.level
            quiet.setLevel(logging.ERROR)
            try:
                acc.save_state(str(tmp))
            finally:
                quiet.setLevel(level)
            acc.wait_for_everyone()
            if acc.is_main_process:
                write_json(tmp / STATE_FILE, {
                    "step": step, "tokens": tokens, "trained_tokens": trained_tokens, "elapsed_s": elapsed(),
                    "train_time_s": train_time, "cpu_time_s": cpu_time, "stream": stream.state_dict(), "model_name": cfg.model_name,
                    "vocab_size": config.vocab_size, "records": log["records"], "resumed": log.get("resumed", []),
                })
                old = out / (LAST + ".old")
                shutil.rmtree(old, ignore_errors=True)
                if last.exists():
                    os.replace(last, old)
                os.replace(tmp, last)
                shutil.rmtree(old, ignore_errors=True)
            acc.wait_for_everyone()

        def export(model_dir: Path, run_log: dict[str, Any]) -> list[Path]:
            """A loadable model directory of the weights as they are now (main process only)."""
            base = acc.unwrap_model(loss_model).model
            gen = base.generation_config
            eos = ids["eos_token_id"]
            gen.eos_token_id = sorted({*([eos] if eos is not None else []), *ids["stop_token_ids"]}) or None
            gen.pad_token_id = pad_id
            gen.bos_token_id = ids["bos_token_id"]
            gen.do_sample = False
            return export_final(base, cfg.tokenizer_dir, model_dir, run_log, cfg.export_dtype,
                                max_file_bytes=None if pretrained else MAX_SHARD_BYTES)

        def shared_elapsed() -> float:
            """Elapsed seconds as process 0 sees them: every process takes the same LR and stop decision."""
            now = elapsed()
            if acc.num_processes > 1:
                from accelerate.utils import broadcast

                now = float(broadcast(torch.tensor([now], dtype=torch.float64, device=acc.device), from_process=0)[0])
            return now

        from tqdm.auto import tqdm

        bar = tqdm(total=cfg.max_steps, initial=step, desc=f"train {cfg.model_name}", unit="step",
                   disable=not (cfg.progress and acc.is_main_process), file=sys.stderr, dynamic_ncols=True)
        window = {"loss": 0.0, "count": 0, "tokens": 0, "trained": 0, "time": 0.0}
        stop_reason = "max_steps"
        loss_model.train()
        last_saved = step
        try:
            while cfg.max_steps is None or step < cfg.max_steps:
                now = shared_elapsed()
                if budget_s is not None and now >= budget_s:
                    stop_reason = "time_budget"
                    break
                t_step, c_step = time.monotonic(), time.process_time()
                lr = schedule.lr_at(step, now)
                for group in optimizer.param_groups:
                    group["lr"] = lr
                schedule.last_lr = lr
                # this process's micro-batches of the step: every num_processes-th of grad_accum * P
                micro = [stream.next() for _ in range(cfg.grad_accum * acc.num_processes)]
                mine = [collate(train_data, b, pad_id) for b in micro[acc.process_index :: acc.num_processes]]
                local = torch.tensor(
                    [float(sum(int((m["labels"][:, 1:] != IGNORE).sum()) for m in mine)),
                     float(sum(int(m["attention_mask"].sum()) for m in mine))], device=acc.device
                )
                global_counts = acc.reduce(local, reduction="sum") if acc.num_processes > 1 else local
                n_trained = float(global_counts[0])
                step_loss = 0.0
                for k, m in enumerate(mine):
                    b = {n: t.to(acc.device) for n, t in m.items()}
                    sync = k == len(mine) - 1
                    with nullcontext() if sync else acc.no_sync(loss_model):
                        loss_sum, _ = loss_model(**b)
                        acc.backward(loss_sum * acc.num_processes / n_trained)
                    step_loss += float(loss_sum.detach())
                grad_norm = acc.clip_grad_norm_(loss_model.parameters(), cfg.grad_clip)
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)
                step += 1
                dt = time.monotonic() - t_step
                train_time += dt
                cpu_time += time.process_time() - c_step
                loss_tot = torch.tensor([step_loss], device=acc.device)
                if acc.num_processes > 1:
                    loss_tot = acc.reduce(loss_tot, reduction="sum")
                step_tokens, step_trained = int(global_counts[1]), int(n_trained)
                tokens += step_tokens
                trained_tokens += step_trained
                window["loss"] += float(loss_tot[0])
                window["trained"] += step_trained
                window["tokens"] += step_tokens
                window["time"] += dt
                record: dict[str, Any] = {"step": step, "lr": lr, "step_loss": float(loss_tot[0]) / max(1, step_trained),
                                          "grad_norm": float(grad_norm) if grad_norm is not None else None}
                do_eval = bool(eval_batches) and (step % cfg.eval_every == 0)
                if step % cfg.log_every == 0 or do_eval or step == cfg.max_steps:
                    record.update(self._window_record(window, step, lr, tokens, trained_tokens, elapsed()))
                    if do_eval:
                        record["heldout_loss"] = evaluate(loss_model, held, eval_batches, pad_id, acc)  # type: ignore[arg-type]
                    log["records"].append(record)
                    bar.set_postfix(loss=f"{record['loss']:.4f}", lr=f"{lr:.2e}",
                                    tok_s=f"{record['tokens_per_s']:.0f}", trained_tok_s=f"{record['trained_tokens_per_s']:.0f}",
                                    **({"heldout": f"{record['heldout_loss']:.4f}"} if "heldout_loss" in record else {}))
                    window = {"loss": 0.0, "count": 0, "tokens": 0, "trained": 0, "time": 0.0}
                bar.update(1)
                if step % cfg.save_every == 0:
                    save_checkpoint()
                    last_saved = step
                if cfg.snapshot_every and step % cfg.snapshot_every == 0 and acc.is_main_process:
                    export(out / SNAPSHOTS / f"step-{step:06d}", {**log, "snapshot_step": step})
                if self.callback is not None:
                    self.callback(record)
        except KeyboardInterrupt:
            bar.close()
            if acc.num_processes == 1 and step > last_saved:
                print(f"\ninterrupted: saving a checkpoint at step {step} in {last}", file=sys.stderr)
                save_checkpoint()
            raise
        bar.close()

        if window["time"] > 0:  # steps since the last logged record
            log["records"].append(self._window_record(window, step, schedule.last_lr, tokens, trained_tokens, elapsed()))
        final_held = None
        if eval_batches:
            recs = log["records"]
            if recs and recs[-1]["step"] == step and recs[-1].get("heldout_loss") is not None:
                final_held = recs[-1]["heldout_loss"]  # just evaluated at this step
            else:
                final_held = evaluate(loss_model, held, eval_batches, pad_id, acc)  # type: ignore[arg-type]
        if final_held is not None and log["records"]:
            if log["records"][-1]["step"] == step:
                log["records"][-1]["heldout_loss"] = final_held
            else:
                log["records"].append({"step": step, "heldout_loss": final_held})
        if step > last_saved or not last.exists():
            save_checkpoint()
        log["summary"] = {
            "steps": step, "stop_reason": stop_reason, "tokens_seen": tokens, "trained_tokens_seen": trained_tokens,
            "train_time_s": round(train_time, 2), "elapsed_s": round(elapsed(), 2),
            "tokens_per_s": tokens / train_time if train_time else None,
            "trained_tokens_per_s": trained_tokens / train_time if train_time else None,
            # CPU seconds this process used in training steps (all its threads): throughput per CPU-second
            # is far less sensitive than wall-clock tokens/s to other jobs sharing the cores
            "cpu_time_s": round(cpu_time, 2), "tokens_per_cpu_s": tokens / cpu_time if cpu_time else None,
            "final_train_loss": next((r["loss"] for r in reversed(log["records"]) if r.get("loss") is not None), None),
            "final_heldout_loss": final_held, "epochs": stream.epoch + stream.pos / max(1, len(stream._batches)),
        }
        acc.wait_for_everyone()
        if acc.is_main_process:
            files = export(out / FINAL, log)
            log["summary"]["export"] = {"dir": str(out / FINAL), "files": [(p.name, p.stat().st_size) for p in files]}
            write_json(out / FINAL / "training_log.json", log)
            write_json(out / "training_log.json", log)
            shutil.copy2(out / FINAL / "loss.png", out / "loss.png")
        acc.wait_for_everyone()
        return log

    @staticmethod
    def _window_record(window: dict[str, float], step: int, lr: float, tokens: int, trained: int, elapsed_s: float) -> dict[str, Any]:
        t = window["time"] or 1e-9
        return {
            "step": step, "lr": lr,
            "loss": window["loss"] / max(1.0, window["trained"]),
            "tokens": tokens, "trained_tokens": trained, "elapsed_s": round(elapsed_s, 3),
            "tokens_per_s": window["tokens"] / t, "trained_tokens_per_s": window["trained"] / t,
        }
