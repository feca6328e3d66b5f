"""Model weights in and out of a run: reading exported or checkpointed weights, growing a model's depth,
and the export of a loadable model directory (safetensors shards, tokenizer files, log, loss curve)."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
from pathlib import Path
from typing import Any

import torch
from torch import nn

from model_backend.engine.ensemble import tokenizer_files

MAX_SHARD_BYTES = 16_000_000  # every exported weight file stays under this (git-friendly)
EXPORT_SHARD_SIZE = "15MB"  # what save_pretrained aims for (10**6 bytes per MB, plus a small header)


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


def load_weights(model: nn.Module, model_dir: Path) -> int:
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


def write_json(path: Path, obj: Any) -> None:
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
    write_json(tmp / "training_log.json", log)
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
