"""A training run's options (`TrainConfig`) and the names of what a run writes under its output folder."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from model_backend.model.config import SHAPES
from model_backend.model.pretrained import PRETRAINED

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
