"""Several checkpoints that share one tokenizer, decoding as one model: the mean of their log-probabilities.

Models trained apart (another shape, another data order) make different mistakes, so the product of
their distributions is right more often than either (the default model card, "Lineage"). An ensemble is a
directory holding `ensemble.json`, the shared tokenizer files and one model directory per member:

    default/
      ensemble.json        {"members": ["small8", "medium"], "weights": [1.0, 1.0]}
      tokenizer.json ...   the members' tokenizer, byte for byte
      small8/  medium/     model directories as `ndb train` exports them

The engine sees one model: `EnsembleLM.forward` runs every member on its own KV cache (an
`EnsembleCache` holds one per member) and returns the weighted mean of the members' log-softmax as
logits. Softmax of that is the normalized weighted geometric mean of the members' distributions, so
greedy choice, sampling and per-token confidence work on it unchanged.
"""

from __future__ import annotations

import copy
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn
from transformers import DynamicCache, LlamaForCausalLM

ENSEMBLE_FILE = "ensemble.json"
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


class EnsembleError(ValueError):
    """An ensemble directory that cannot be loaded or made."""


# What a tokenizer directory holds (Hugging Face's files and our measured stats.json). `ndb train
# --tokenizer` may name a model directory (a member of the shipped ensemble): its weights, config and card
# are not the tokenizer's and must not travel into an export, an ensemble or a cache key.
TOKENIZER_FILE_NAMES = frozenset({
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json", "vocab.json",
    "merges.txt", "chat_template.jinja", "stats.json",
})


def tokenizer_files(tokenizer_dir: str | Path) -> list[Path]:
    """The tokenizer's files in a tokenizer or model directory, sorted."""
    return sorted(p for p in Path(tokenizer_dir).iterdir() if p.is_file() and p.name in TOKENIZER_FILE_NAMES)


def tokenizer_difference(a: Path, b: Path, names: tuple[str, ...] = TOKENIZER_FILES) -> str | None:
    """The first of `names` that differs between two model directories (present in one only, or other
    bytes), or None. Its absence from both is no difference."""
    for name in names:
        fa, fb = a / name, b / name
        if fa.is_file() != fb.is_file() or (fa.is_file() and fa.read_bytes() != fb.read_bytes()):
            return name
    return None


def is_ensemble(path: str | Path) -> bool:
    return (Path(path) / ENSEMBLE_FILE).is_file()


@dataclass
class EnsembleSpec:
    members: list[Path]
    weights: list[float]

    @classmethod
    def read(cls, path: str | Path) -> EnsembleSpec:
        root = Path(path)
        try:
            spec = json.loads((root / ENSEMBLE_FILE).read_text())
            names = [str(m) for m in spec["members"]]
            weights = [float(w) for w in spec.get("weights", [1.0] * len(names))]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise EnsembleError(f"{root / ENSEMBLE_FILE}: not an ensemble description: {exc}") from None
        if not names or len(weights) != len(names) or any(w <= 0 for w in weights):
            raise EnsembleError(f"{root / ENSEMBLE_FILE}: needs members and one positive weight per member")
        members = [root / name for name in names]
        for member in members:
            if member.resolve().parent != root.resolve() or not (member / "config.json").is_file():
                raise EnsembleError(f"{member}: not a model directory inside {root}")
            differs = tokenizer_difference(root, member)
            if differs:
                raise EnsembleError(f"{member} has another tokenizer than the ensemble ({differs} differs)")
        return cls(members, weights)


class EnsembleCache:
    """One DynamicCache per member, always at the same length (they are fed the same tokens)."""

    def __init__(self, members: int) -> None:
        self.members = [DynamicCache() for _ in range(members)]

    def get_seq_length(self) -> int:
        return self.members[0].get_seq_length()

    def crop(self, max_length: int) -> None:
        for cache in self.members:
            cache.crop(max_length)


class EnsembleLM(nn.Module):
    """The members as one causal LM: forward(input_ids, past_key_values=EnsembleCache) -> .logits."""

    def __init__(self, models: list[LlamaForCausalLM], weights: list[float]) -> None:
        super().__init__()
        self.models = nn.ModuleList(models)
        total = sum(weights)
        self.weights = [w / total for w in weights]
        vocab = {m.config.vocab_size for m in models}
        if len(vocab) != 1:
            raise EnsembleError(f"members have different vocabulary sizes: {sorted(vocab)}")
        self.config = copy.copy(models[0].config)  # what the engine reads: vocabulary and context length
        self.config.max_position_embeddings = min(m.config.max_position_embeddings for m in models)

    def new_cache(self) -> EnsembleCache:
        return EnsembleCache(len(self.models))

    def combine(self, logits: list[torch.Tensor]) -> torch.Tensor:
        """Weighted mean of the members' log-probabilities (float32)."""
        out = sum(w * x.float().log_softmax(-1) for w, x in zip(self.weights, logits, strict=True))
        assert isinstance(out, torch.Tensor)
        return out

    def forward(self, input_ids: torch.Tensor, past_key_values: EnsembleCache, use_cache: bool = True,
                **kwargs: Any) -> Any:
        from transformers.modeling_outputs import CausalLMOutputWithPast

        logits = [
            model(input_ids=input_ids, past_key_values=cache, use_cache=use_cache, **kwargs).logits
            for model, cache in zip(self.models, past_key_values.members, strict=True)
        ]
        return CausalLMOutputWithPast(logits=self.combine(logits), past_key_values=past_key_values)  # type: ignore[arg-type]


def load_ensemble(path: str | Path) -> EnsembleLM:
    spec = EnsembleSpec.read(path)
    models = [LlamaForCausalLM.from_pretrained(str(m), dtype=torch.float32) for m in spec.members]
    return EnsembleLM(models, spec.weights)


def first_member(path: str | Path) -> Path:
    """The model directory to use where only one model can run (the vLLM engine)."""
    return EnsembleSpec.read(path).members[0] if is_ensemble(path) else Path(path)


def make_ensemble(members: list[Path], out: Path, weights: list[float] | None = None,
                  names: list[str] | None = None) -> Path:
    """Copy model directories into a new ensemble directory `out` (replaced as a whole)."""
    if len(members) < 2:
        raise EnsembleError("an ensemble needs at least two models")
    weights = weights or [1.0] * len(members)
    names = names or [m.name for m in members]
    if len(weights) != len(members) or len(names) != len(members) or len(set(names)) != len(names):
        raise EnsembleError("give one weight and one distinct name per member")
    for member in members:
        if is_ensemble(member) or not (member / "config.json").is_file():
            raise EnsembleError(f"{member}: not a model directory")
        differs = tokenizer_difference(members[0], member)
        if differs or not (member / "tokenizer.json").is_file():
            raise EnsembleError(f"{member} has another tokenizer than {members[0]} ({differs or 'tokenizer.json'} differs)")
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for member, name in zip(members, names, strict=True):
        shutil.copytree(member, tmp / name)
    for p in tokenizer_files(members[0]):  # the shared tokenizer at the top, where AutoTokenizer finds it
        shutil.copy2(p, tmp / p.name)
    (tmp / ENSEMBLE_FILE).write_text(json.dumps({"members": names, "weights": weights}, indent=1) + "\n")
    EnsembleSpec.read(tmp)  # the result must load
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    return out
