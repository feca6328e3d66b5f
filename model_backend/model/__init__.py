"""Llama model shapes (`config`), training (`train`) and the `ndb train` command (`commands`).

Kept import-light: `from model_backend.model import build_model, train` loads torch/transformers lazily.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SHAPES", "build_model", "make_config", "train"]


def __getattr__(name: str) -> Any:
    if name in ("SHAPES", "build_model", "make_config"):
        from model_backend.model import config

        return getattr(config, name)
    if name == "train":
        from model_backend.model.train import train

        return train
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
