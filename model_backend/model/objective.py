"""What a training step optimizes: the loss on trained tokens, the parameter groups, the learning-rate
schedule, and the held-out loss a run checks."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from model_backend.model.train_data import IGNORE, TokenizedSplit, collate, length_batches


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



def check_batches(held: TokenizedSplit, examples: int, batch_tokens: int | None, batch_size: int | None,
                  seed: int) -> list[list[int]]:
    """The held-out examples a run checks at `--eval-every`: a fixed random subset of `examples` for its
    seed, batched by length (scripts/heldout_loss.py, in git at 9959851, scores other models on these batches)."""
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
