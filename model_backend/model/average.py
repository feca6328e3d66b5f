"""Weight averaging of checkpoints of one shape (a "model soup", Wortsman et al. 2022).

Each of our CPU runs starts from the last one's weights and ends at a low learning rate, so their end
points lie in one basin. The mean of two such end points can be better than either (docs/training.md
has the figures), the way stochastic weight averaging's mean of cycle end points is. `ndb average`
writes the mean as a model directory like a run's `final/`; `average.json` there records the sources.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch

from model_backend.engine.ensemble import tokenizer_difference

# Files of a model directory that describe the tokenizer (and its measured statistics); they must be the
# same in every source.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "stats.json")
# config.json keys that may differ between runs of one shape.
_CONFIG_NOISE = {"transformers_version", "dtype", "torch_dtype", "_name_or_path"}


class AverageError(ValueError):
    """The checkpoints cannot be averaged (different shapes or tokenizers, missing files)."""


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _config(model_dir: Path) -> dict[str, Any]:
    path = model_dir / "config.json"
    if not path.is_file():
        hint = ": an ensemble; give one of its members" if (model_dir / "ensemble.json").is_file() else ""
        raise AverageError(f"{model_dir}: no config.json (not a model directory{hint})")
    return {k: v for k, v in json.loads(path.read_text()).items() if k not in _CONFIG_NOISE}


def export_with_tokenizer_of(source: Path, model: Any, out: Path, log: dict[str, Any],
                             export_dtype: str = "float32") -> None:
    """Export `model` to `out` like a run's final/, with the tokenizer files of model directory `source`
    (`export_final` takes only those from it, never its weights)."""
    from model_backend.model.export import export_final

    export_final(model, source, out, log, export_dtype)


def average_checkpoints(models: list[Path], out: Path, weights: list[float] | None = None) -> dict[str, Any]:
    """Write the weighted mean of `models` (same config and tokenizer) to `out`; return its record."""
    from transformers import LlamaConfig, LlamaForCausalLM

    from model_backend.model.export import read_weights

    if len(models) < 2:
        raise AverageError("give at least two model directories to average")
    weights = weights or [1.0] * len(models)
    if len(weights) != len(models) or any(w <= 0 for w in weights):
        raise AverageError(f"need one positive weight per model, got {weights} for {len(models)} models")
    first = models[0]
    config = _config(first)
    for other in models[1:]:
        if _config(other) != config:
            raise AverageError(f"{other} has another shape than {first} (config.json differs)")
        differs = tokenizer_difference(first, other, TOKENIZER_FILES)
        if differs:
            raise AverageError(f"{other} has another tokenizer than {first} ({differs} differs)")

    total = sum(weights)
    mean: dict[str, torch.Tensor] = {}
    for model_dir, weight in zip(models, weights, strict=True):
        try:
            tensors = read_weights(model_dir)
        except FileNotFoundError as exc:
            raise AverageError(str(exc)) from exc
        if mean and tensors.keys() != mean.keys():
            raise AverageError(f"{model_dir} has other tensors than {first}")
        for key, tensor in tensors.items():
            part = tensor.double() * (weight / total)
            mean[key] = mean[key] + part if key in mean else part

    model = LlamaForCausalLM(LlamaConfig.from_pretrained(first))
    state = {k: v.float() for k, v in mean.items()}
    if "lm_head.weight" not in state and model.config.tie_word_embeddings:
        state["lm_head.weight"] = state["model.embed_tokens.weight"]  # tied embeddings are saved once
    model.load_state_dict(state, strict=True)

    record = {
        "sources": [
            {"path": str(m), "weight": w, "weights_sha256": [_sha256(f) for f in sorted(m.glob("*.safetensors"))]}
            for m, w in zip(models, weights, strict=True)
        ],
        "parameters": sum(p.numel() for p in model.parameters()),
    }
    log_path = models[-1] / "training_log.json"  # the loss curve shown is the last source's
    log: dict[str, Any] = json.loads(log_path.read_text()) if log_path.is_file() else {}
    log["average"] = record
    export_with_tokenizer_of(first, model, out, log)
    (out / "average.json").write_text(json.dumps(record, indent=1))
    return record

