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
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import platform
import re
import shutil
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import nullcontext, suppress
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from model_backend.engine.ensemble import tokenizer_files
from model_backend.model.config import SHAPES, describe, make_config, special_token_ids
from model_backend.model.pretrained import PRETRAINED

IGNORE = -100
MAX_SHARD_BYTES = 16_000_000  # every exported weight file stays under this (git-friendly)
EXPORT_SHARD_SIZE = "15MB"  # what save_pretrained aims for (10**6 bytes per MB, plus a small header)
LAST, FINAL, CACHE, SNAPSHOTS = "last", "final", "cache", "snapshots"
STATE_FILE = "train_state.json"


@dataclass
class TrainConfig:
    data_dir: str
    tokenizer_dir: str
    out_dir: str
    model_name: str = "small"
    max_steps: int | None = None  # optimizer steps; None: until the time budget is used
    time_budget_minutes: float | None = None  # wall clock of the whole run, resumes included
    batch_tokens: int | None = 8192  # padded tokens per micro-batch per process (when batch_size is None)
    batch_size: int | None = None  # examples per micro-batch per process (overrides batch_tokens)
    grad_accum: int = 1
    lr: float = 2e-3
    min_lr_ratio: float = 0.1
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.95
    warmup_steps: int = 100
    grad_clip: float = 1.0
    seq_len: int = 1024
    long_examples: Literal["truncate", "drop"] = "truncate"
    max_train_tokens: int | None = None  # stop reading train shards after this many tokens
    seed: int = 0
    save_every: int = 250
    eval_every: int = 250
    snapshot_every: int = 0  # also export OUT/snapshots/step-NNNNNN every N steps, for `ndb average` (0: never)
    eval_examples: int = 128  # held-out examples scored at each evaluation
    log_every: int = 10
    resume: bool = True
    threads: int | None = None  # torch CPU threads; None: all cores
    export_dtype: Literal["float32", "bfloat16"] = "float32"
    progress: bool = True
    init_from: str | None = None  # a model directory whose weights start the run (a fresh optimizer and schedule)
    compile: bool = False  # torch.compile the loss model (in place, so checkpoints keep their keys)

    def check(self) -> None:
        if self.model_name not in SHAPES and self.model_name not in PRETRAINED:
            names = ", ".join([*SHAPES, *PRETRAINED])
            raise ValueError(f"unknown model {self.model_name!r}; choose one of {names}")
        if self.max_steps is None and self.time_budget_minutes is None:
            raise ValueError("give max_steps, a time budget, or both")
        if self.max_steps is not None and self.max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        if self.batch_size is None and self.batch_tokens is None:
            raise ValueError("give batch_size or batch_tokens")
        if self.grad_accum < 1 or self.seq_len < 2:
            raise ValueError("grad_accum must be >= 1 and seq_len >= 2")
        if self.snapshot_every < 0:
            raise ValueError("snapshot_every must be >= 0 (0: no snapshots)")


# ----------------------------------------------------------------------------------------------- data


@dataclass
class TokenizedSplit:
    """Examples as one flat token array plus offsets (cheap to cache and to slice)."""

    ids: np.ndarray  # int32, all examples concatenated
    labels: np.ndarray  # int32, IGNORE where no loss
    offsets: np.ndarray  # int64, len n + 1
    stats: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def example(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.offsets[i], self.offsets[i + 1]
        return self.ids[a:b], self.labels[a:b]


def find_shards(data_dir: str | Path, split: str) -> list[Path]:
    """The split's complete shards (the builder's `shard_files`: a shard is complete once its stats file
    is written); hand-made `{split}-*.jsonl` files without stats files are taken as they are."""
    from model_backend.data.build import shard_files

    complete = shard_files(data_dir, split)
    if complete:
        return complete
    return sorted(p for p in Path(data_dir).glob(f"{split}-*.jsonl") if not p.with_suffix(".stats.json").exists())


def iter_segments(paths: list[Path]) -> Iterator[list[tuple[str, bool]]]:
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    segments = [(str(text), bool(trained)) for text, trained in record["segments"]]
                except (ValueError, KeyError, TypeError) as exc:
                    raise ValueError(f"{path}:{line_no}: not a record with 'segments': {exc}") from exc
                yield segments


def _file_key(paths: list[Path], extra: str) -> str:
    h = hashlib.sha1(extra.encode())
    for p in paths:
        st = p.stat()
        h.update(f"{p.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def _tokenizer_key(tokenizer_dir: str | Path) -> str:
    h = hashlib.sha1()
    for p in tokenizer_files(tokenizer_dir):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def tokenize_split(
    paths: list[Path],
    tokenizer: Any,
    seq_len: int,
    long_examples: str = "truncate",
    max_tokens: int | None = None,
    progress: bool = True,
    desc: str = "tokenize",
) -> TokenizedSplit:
    """Tokenize every record with encode_segments; cut (or drop) examples longer than seq_len.

    Examples left without any trained token are dropped (they carry no loss).
    """
    from tqdm.auto import tqdm

    from model_backend.data.tokenizer import encode_segments

    ids_parts: list[np.ndarray] = []
    label_parts: list[np.ndarray] = []
    offsets = [0]
    stats = {"records": 0, "truncated": 0, "dropped_long": 0, "dropped_untrained": 0, "tokens": 0, "trained_tokens": 0}
    bar = tqdm(desc=desc, unit=" ex", disable=not progress, mininterval=1.0, file=sys.stderr)
    for segments in iter_segments(paths):
        stats["records"] += 1
        bar.update(1)
        input_ids, labels = encode_segments(tokenizer, segments)
        ids_arr = np.asarray(input_ids, dtype=np.int32)
        lab_arr = np.asarray(labels, dtype=np.int32)
        if ids_arr.shape != lab_arr.shape:
            raise ValueError("encode_segments returned input_ids and labels of different lengths")
        if len(ids_arr) > seq_len:
            if long_examples == "drop":
                stats["dropped_long"] += 1
                continue
            ids_arr, lab_arr = ids_arr[:seq_len], lab_arr[:seq_len]
            stats["truncated"] += 1
        if len(ids_arr) < 2 or not (lab_arr[1:] != IGNORE).any():  # the first position is never predicted
            stats["dropped_untrained"] += 1
            continue
        ids_parts.append(ids_arr)
        label_parts.append(lab_arr)
        offsets.append(offsets[-1] + len(ids_arr))
        stats["tokens"] += len(ids_arr)
        stats["trained_tokens"] += int((lab_arr[1:] != IGNORE).sum())
        if max_tokens is not None and stats["tokens"] >= max_tokens:
            break
    bar.close()
    empty = np.zeros(0, dtype=np.int32)
    return TokenizedSplit(
        ids=np.concatenate(ids_parts) if ids_parts else empty,
        labels=np.concatenate(label_parts) if label_parts else empty,
        offsets=np.asarray(offsets, dtype=np.int64),
        stats=stats,
    )


def merge_splits(parts: list[TokenizedSplit]) -> TokenizedSplit:
    """The parts' examples one after another, in order (offsets shifted, stats summed)."""
    offsets = [np.zeros(1, dtype=np.int64)]
    base = 0
    for part in parts:
        offsets.append(part.offsets[1:] + base)
        base += int(part.offsets[-1])
    stats: dict[str, int] = {}
    for part in parts:
        for k, v in part.stats.items():
            stats[k] = stats.get(k, 0) + v
    empty = np.zeros(0, dtype=np.int32)
    return TokenizedSplit(
        ids=np.concatenate([q.ids for q in parts]) if parts else empty,
        labels=np.concatenate([q.labels for q in parts]) if parts else empty,
        offsets=np.concatenate(offsets),
        stats=stats,
    )


_WORKER_TOKENIZERS: dict[str, Any] = {}


def _tokenize_shard(job: tuple[str, str, int, str]) -> TokenizedSplit:
    """One shard in a worker process: (shard path, tokenizer dir, seq_len, long_examples)."""
    path, tokenizer_dir, seq_len, long_examples = job
    if tokenizer_dir not in _WORKER_TOKENIZERS:
        from transformers import AutoTokenizer

        _WORKER_TOKENIZERS[tokenizer_dir] = AutoTokenizer.from_pretrained(tokenizer_dir)
    return tokenize_split([Path(path)], _WORKER_TOKENIZERS[tokenizer_dir], seq_len, long_examples, progress=False)


def _save_split(data: TokenizedSplit, cache: Path) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_name(cache.name + ".tmp.npz")
    np.savez(tmp, ids=data.ids, labels=data.labels, offsets=data.offsets, stats=json.dumps(data.stats))
    os.replace(tmp, cache)


def _load_cached(cache: Path) -> TokenizedSplit:
    with np.load(cache) as z:
        return TokenizedSplit(ids=z["ids"], labels=z["labels"], offsets=z["offsets"], stats=json.loads(str(z["stats"])))


def load_split(
    cfg: TrainConfig, split: str, tokenizer: Any, tok_key: str, is_main: bool, max_tokens: int | None = None
) -> TokenizedSplit | None:
    """Tokenized split from OUT/cache/, one file per shard, so that shards added to the data directory
    between resumes are the only ones tokenized. Missing shards are tokenized in parallel (one process
    per shard, up to `cfg.threads` or all cores): on a GPU machine this would otherwise be minutes of
    one busy core. With `max_tokens` the split is read in order until the limit, as one cache file."""
    paths = find_shards(cfg.data_dir, split)
    if not paths:
        return None
    rules = f"{tok_key}|{cfg.seq_len}|{cfg.long_examples}"
    if max_tokens is not None:
        cache = Path(cfg.out_dir) / CACHE / f"{split}-{_file_key(paths, f'{rules}|{max_tokens}')}.npz"
        if cache.exists():
            return _load_cached(cache)
        data = tokenize_split(paths, tokenizer, cfg.seq_len, cfg.long_examples, max_tokens,
                              progress=cfg.progress and is_main, desc=f"tokenize {split}")
        if is_main:
            _save_split(data, cache)
        return data
    caches = [Path(cfg.out_dir) / CACHE / f"{p.stem}-{_file_key([p], rules)}.npz" for p in paths]
    parts: dict[int, TokenizedSplit] = {i: _load_cached(c) for i, c in enumerate(caches) if c.exists()}
    missing = [i for i in range(len(paths)) if i not in parts]
    workers = min(len(missing), cfg.threads or os.cpu_count() or 1)
    if missing:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(missing), desc=f"tokenize {split}", unit=" shard", disable=not (cfg.progress and is_main),
                   file=sys.stderr)
        if workers > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            jobs = [(str(paths[i]), str(cfg.tokenizer_dir), cfg.seq_len, cfg.long_examples) for i in missing]
            # spawn, not fork: the parent holds torch's and the tokenizer's threads (and maybe CUDA)
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
                for i, part in zip(missing, pool.map(_tokenize_shard, jobs), strict=True):
                    parts[i] = part
                    bar.update(1)
        else:
            for i in missing:
                parts[i] = tokenize_split([paths[i]], tokenizer, cfg.seq_len, cfg.long_examples, progress=False)
                bar.update(1)
        bar.close()
        if is_main:
            for i in missing:
                _save_split(parts[i], caches[i])
    return merge_splits([parts[i] for i in range(len(paths))])


def length_batches(
    lengths: np.ndarray, batch_tokens: int | None, batch_size: int | None, seed: int, epoch: int, chunk: int = 2048
) -> list[list[int]]:
    """Micro-batches of examples of similar length, in a random order fixed by (seed, epoch).

    Examples are shuffled, cut into chunks, sorted by length inside each chunk and grouped: at most
    `batch_size` examples, or at most `batch_tokens` padded tokens (an example longer than that alone).
    """
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(lengths))
    batches: list[list[int]] = []
    for start in range(0, len(order), chunk):
        part = order[start : start + chunk]
        part = part[np.argsort(-lengths[part], kind="stable")]
        cur: list[int] = []
        cur_max = 0
        for i in part.tolist():
            n = int(lengths[i])
            full = (batch_size is not None and len(cur) >= batch_size) or (
                batch_size is None and batch_tokens is not None and max(cur_max, n) * (len(cur) + 1) > batch_tokens
            )
            if cur and full:
                batches.append(cur)
                cur, cur_max = [], 0
            cur.append(i)
            cur_max = max(cur_max, n)
        if cur:
            batches.append(cur)
    perm = rng.permutation(len(batches))
    return [batches[i] for i in perm]


class BatchStream:
    """Endless, reproducible sequence of micro-batches over epochs; its position is saved in checkpoints."""

    def __init__(self, lengths: np.ndarray, batch_tokens: int | None, batch_size: int | None, seed: int) -> None:
        self.lengths, self.batch_tokens, self.batch_size, self.seed = lengths, batch_tokens, batch_size, seed
        self.epoch, self.pos = 0, 0
        self._batches = self._make()

    def _make(self) -> list[list[int]]:
        return length_batches(self.lengths, self.batch_tokens, self.batch_size, self.seed, self.epoch)

    def next(self) -> list[int]:
        if self.pos >= len(self._batches):
            self.epoch, self.pos = self.epoch + 1, 0
            self._batches = self._make()
        batch = self._batches[self.pos]
        self.pos += 1
        return batch

    def state_dict(self) -> dict[str, int]:
        return {"epoch": self.epoch, "pos": self.pos}

    def load_state_dict(self, state: dict[str, int]) -> None:
        if state["epoch"] != self.epoch:
            self.epoch = state["epoch"]
            self._batches = self._make()
        self.pos = state["pos"]


def collate(data: TokenizedSplit, batch: list[int], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-padded input_ids, attention_mask and labels (IGNORE on padding) for a micro-batch."""
    width = max(int(data.offsets[i + 1] - data.offsets[i]) for i in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), IGNORE, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, i in enumerate(batch):
        x, y = data.example(i)
        ids[row, : len(x)] = torch.from_numpy(x.astype(np.int64))
        labels[row, : len(y)] = torch.from_numpy(y.astype(np.int64))
        mask[row, : len(x)] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}


# ----------------------------------------------------------------------------------------------- model


class CausalLMLoss(nn.Module):
    """Wraps a LlamaForCausalLM: summed cross-entropy over trained tokens, logits only where a label is.

    Returns (loss sum, number of trained tokens). Wrapping (rather than calling the base model's parts
    from outside) keeps DDP's gradient hooks and accelerate's autocast in the path.
    """

    def __init__(self, model: nn.Module) -> None:
        super().__init__()
        self.model: Any = model

    def forward(
        self, input_ids: torch.Tensor, attention_mask: torch.Tensor, labels: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        hidden = self.model.model(input_ids=input_ids, attention_mask=attention_mask, use_cache=False).last_hidden_state
        target = labels[:, 1:]
        keep = target != IGNORE
        logits = self.model.lm_head(hidden[:, :-1][keep])
        loss = F.cross_entropy(logits.float(), target[keep], reduction="sum")
        return loss, keep.sum()


def param_groups(model: nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Weight decay on matrices of the blocks only; none on norms, biases and the (tied) embedding."""
    decay, no_decay, seen = [], [], set()
    for name, p in model.named_parameters():
        if not p.requires_grad or id(p) in seen:
            continue
        seen.add(id(p))
        if p.ndim < 2 or "embed" in name or "lm_head" in name or "norm" in name:
            no_decay.append(p)
        else:
            decay.append(p)
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


class Schedule:
    """Linear warm-up over `warmup_steps`, then cosine from lr to min_lr_ratio * lr.

    The cosine's progress is the further along of (step - warmup) / (max_steps - warmup) and the fraction
    of the time budget used, so it is a pure function of the step when there is no time budget.
    """

    def __init__(self, lr: float, warmup_steps: int, max_steps: int | None, min_lr_ratio: float, budget_s: float | None) -> None:
        self.base_lr, self.warmup, self.max_steps = lr, warmup_steps, max_steps
        self.min_lr, self.budget_s = lr * min_lr_ratio, budget_s
        self.last_lr = 0.0

    def progress(self, step: int, elapsed_s: float) -> float:
        p = 0.0
        if self.max_steps is not None:
            p = (step - self.warmup) / max(1, self.max_steps - self.warmup)
        if self.budget_s:
            p = max(p, elapsed_s / self.budget_s)
        return min(1.0, max(0.0, p))

    def lr_at(self, step: int, elapsed_s: float = 0.0) -> float:
        """Learning rate of optimizer step `step` (0-based)."""
        if step < self.warmup:
            return self.base_lr * (step + 1) / self.warmup
        p = self.progress(step, elapsed_s)
        return self.min_lr + (self.base_lr - self.min_lr) * 0.5 * (1.0 + math.cos(math.pi * p))

    def state_dict(self) -> dict[str, Any]:
        return {"last_lr": self.last_lr}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.last_lr = float(state["last_lr"])


# ----------------------------------------------------------------------------------------------- outputs


def plot_losses(log: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = log["records"]
    fig, ax = plt.subplots(figsize=(7, 4.2), dpi=110)
    train = [(r["step"], r["loss"]) for r in records if r.get("loss") is not None]
    held = [(r["step"], r["heldout_loss"]) for r in records if r.get("heldout_loss") is not None]
    if train:
        ax.plot(*zip(*train, strict=True), label="train (trained tokens)", lw=1.2)
    if held:
        ax.plot(*zip(*held, strict=True), "o-", label="held-out programs", lw=1.5, ms=3)
    ax.set_xlabel("optimizer step")
    ax.set_ylabel("cross-entropy (nats / token)")
    summary = log.get("summary", {})
    tokens = summary.get("tokens_seen")
    ax.set_title(f"{log['config']['model_name']} ({log['model']['parameters'] / 1e6:.2f}M params)"
                 + (f", {tokens / 1e6:.1f}M tokens" if tokens else ""))
    ax.grid(True, alpha=0.3, which="both")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


_LAYER_KEY = re.compile(r"^model\.layers\.(\d+)\.(.+)$")
# The projections that write a layer's result into the residual stream: zero, and the layer adds nothing.
_RESIDUAL_WRITERS = ("self_attn.o_proj.weight", "mlp.down_proj.weight")


def _layer_count(weights: dict[str, torch.Tensor]) -> int:
    return len({int(m.group(1)) for k in weights if (m := _LAYER_KEY.match(k))})


def grow_depth(weights: dict[str, torch.Tensor], layers: int, new_layers: int) -> dict[str, torch.Tensor]:
    """A deeper model that computes exactly what `weights` compute (block expansion, as in LLaMA Pro):
    layer i becomes layers i*k .. i*k+k-1, the original first, then copies whose output projections
    are zero, so each copy adds nothing to the residual stream until training moves it. The copies
    start from trained attention and MLP weights rather than random ones."""
    factor = new_layers // layers
    grown: dict[str, torch.Tensor] = {}
    for key, tensor in weights.items():
        match = _LAYER_KEY.match(key)
        if not match:
            grown[key] = tensor
            continue
        index, name = int(match.group(1)), match.group(2)
        for copy in range(factor):
            value = tensor.clone()
            if copy and name in _RESIDUAL_WRITERS:
                value.zero_()
            grown[f"model.layers.{index * factor + copy}.{name}"] = value
    return grown


def read_weights(model_dir: Path, what: str = "") -> dict[str, torch.Tensor]:
    """Every tensor of a model directory's weights: the shards its index names, else its *.safetensors
    files (the index decides, as for transformers, so a stray weight file beside the shards is not read)."""
    from safetensors.torch import load_file

    index = model_dir / "model.safetensors.index.json"
    if index.is_file() and not (model_dir / "model.safetensors").is_file():
        files = [model_dir / name for name in sorted(set(json.loads(index.read_text())["weight_map"].values()))]
    else:
        files = sorted(model_dir.glob("*.safetensors"))
    if not files:
        hint = " (an ensemble: give one of its members)" if (model_dir / "ensemble.json").is_file() else ""
        raise FileNotFoundError(f"{what}{model_dir}: no *.safetensors files{hint}")
    weights: dict[str, torch.Tensor] = {}
    for f in files:
        weights.update(load_file(str(f)))
    return weights


def unwrap_checkpoint_weights(weights: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """A LlamaForCausalLM state dict from exported weights or from a run's last/ checkpoint (whose keys
    carry the CausalLMLoss wrapper's "model." prefix), with the tied lm_head filled in."""
    if all(k.startswith("model.model.") or k == "model.lm_head.weight" for k in weights):
        weights = {k[len("model."):]: v for k, v in weights.items()}
    if "lm_head.weight" not in weights and "model.embed_tokens.weight" in weights:
        weights = {**weights, "lm_head.weight": weights["model.embed_tokens.weight"]}  # tied embeddings are saved once
    return weights


def _load_weights(model: nn.Module, model_dir: Path) -> int:
    """Start from another run's exported weights, e.g. to continue training the shipped model with a
    new schedule: the same shape and vocabulary, or the same width with a multiple of its depth
    (`grow_depth`). Returns the number of layers the weights had."""
    weights = unwrap_checkpoint_weights(read_weights(model_dir, "--init-from "))
    have, want = _layer_count(weights), getattr(getattr(model, "config", None), "num_hidden_layers", None)
    if want and have and want != have:
        if want % have:
            raise ValueError(f"--init-from {model_dir} has {have} layers; a model grown from it needs a multiple of {have}, not {want}")
        weights = grow_depth(weights, have, want)
    try:
        model.load_state_dict({k: v.float() for k, v in weights.items()}, strict=True)
    except RuntimeError as exc:
        raise ValueError(f"--init-from {model_dir} does not fit this model shape and vocabulary: {exc}") from exc
    return have


def _write_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(obj, indent=1))
    os.replace(tmp, path)


def export_final(
    model: nn.Module, tokenizer_dir: str | Path, final_dir: Path, log: dict[str, Any], export_dtype: str = "float32",
    max_file_bytes: int | None = MAX_SHARD_BYTES,
) -> list[Path]:
    """Write a loadable checkpoint to final_dir (replaced as a whole): safetensors shards < 16 MB (unless
    `max_file_bytes` is None), config, generation config, tokenizer files, training_log.json, loss.png.
    Returns the weight files."""
    import copy

    tmp = final_dir.with_name(final_dir.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    out_model: Any = model
    if export_dtype != "float32":
        out_model = copy.deepcopy(model).to(getattr(torch, export_dtype))
    out_model.save_pretrained(tmp, max_shard_size=EXPORT_SHARD_SIZE)
    for p in tokenizer_files(tokenizer_dir):
        if not (tmp / p.name).exists():
            shutil.copy2(p, tmp / p.name)
    _write_json(tmp / "training_log.json", log)
    if log.get("records"):  # `ndb average` of models that no run of ours wrote has no curve to draw
        plot_losses(log, tmp / "loss.png")
    weights = sorted(tmp.glob("*.safetensors"))
    limit = max_file_bytes if max_file_bytes is not None else math.inf
    too_big = [f"{p.name} ({p.stat().st_size} bytes)" for p in weights if p.stat().st_size >= limit]
    if too_big:
        raise RuntimeError(
            f"weight files over {MAX_SHARD_BYTES} bytes: {', '.join(too_big)} (one tensor is larger than the shard "
            "size: use export_dtype='bfloat16' or a smaller vocabulary / hidden size)"
        )
    old = final_dir.with_name(final_dir.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if final_dir.exists():
        os.replace(final_dir, old)
    os.replace(tmp, final_dir)
    shutil.rmtree(old, ignore_errors=True)
    return [final_dir / p.name for p in weights]


# ----------------------------------------------------------------------------------------------- loop


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


def check_batches(held: TokenizedSplit, examples: int, batch_tokens: int | None, batch_size: int | None,
                  seed: int) -> list[list[int]]:
    """The held-out examples a run checks at `--eval-every`: a fixed random subset of `examples` for its
    seed, batched by length (scripts/heldout_loss.py scores other models on the same batches)."""
    pick = np.random.default_rng(seed).permutation(len(held))[:examples]
    batches = length_batches(held.lengths[pick], batch_tokens, batch_size, seed, 0, chunk=len(pick))
    return [[int(pick[j]) for j in batch] for batch in batches]


@torch.no_grad()  # a held-out check: no graph to keep
def evaluate(
    loss_model: nn.Module, data: TokenizedSplit, batches: list[list[int]], pad_id: int, accelerator: Any
) -> float:
    """Mean cross-entropy per trained token over the given micro-batches (split across processes)."""
    loss_model.eval()
    total = torch.zeros(2, dtype=torch.float64, device=accelerator.device)
    for k in range(accelerator.process_index, len(batches), accelerator.num_processes):
        b = {n: t.to(accelerator.device) for n, t in collate(data, batches[k], pad_id).items()}
        loss, count = loss_model(**b)
        total += torch.stack([loss.double(), count.double()])
    loss_model.train()
    total = accelerator.reduce(total, reduction="sum")
    return float(total[0] / total[1].clamp(min=1))


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
        tok_key = _tokenizer_key(cfg.tokenizer_dir)
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
            init_layers = _load_weights(model, Path(cfg.init_from))
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
                _write_json(tmp / STATE_FILE, {
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
            _write_json(out / FINAL / "training_log.json", log)
            _write_json(out / "training_log.json", log)
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
