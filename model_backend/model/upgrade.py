"""Upgrade a checkpoint to read a newer trace format before it is fine-tuned on data of that format.

`upgrade_format(src, out, version)` adds the version's header token (`<|format_v3|>`) to the tokenizer,
grows the embeddings (and the output layer) by one row initialised from the old version token's row,
and records `ndb_format_version` in the config, which the engines read (engine.neural.format_version).
The rest of the format is unchanged from version 2 to 3, so every other weight carries over as it is.
"""

from __future__ import annotations

from pathlib import Path

import torch
from transformers import AutoTokenizer, LlamaForCausalLM

from model_backend import trace_format as fmt


def upgrade_format(src: str | Path, out: str | Path, version: int = fmt.FORMAT_VERSION) -> Path:
    if version not in fmt.SUPPORTED_VERSIONS:
        raise ValueError(f"unknown trace format {version}")
    tokenizer = AutoTokenizer.from_pretrained(str(src))
    model = LlamaForCausalLM.from_pretrained(str(src), dtype=torch.float32)
    vocab = tokenizer.get_vocab()
    new = fmt.VERSION_TOKENS[version]
    old = max((v for v, tok in fmt.VERSION_TOKENS.items() if tok in vocab and v != version), default=None)
    if new not in vocab:
        tokenizer.add_tokens([new], special_tokens=True)
        new_id = tokenizer.convert_tokens_to_ids(new)
        size = max(len(tokenizer), model.config.vocab_size)
        model.resize_token_embeddings(size, mean_resizing=False)
        if old is not None:
            old_id = vocab[fmt.VERSION_TOKENS[old]]
            with torch.no_grad():
                for layer in (model.get_input_embeddings(), model.get_output_embeddings()):
                    weight = getattr(layer, "weight", None)
                    if isinstance(weight, torch.Tensor):  # a tied output layer is copied twice: harmless
                        weight[new_id] = weight[old_id]
    model.config.ndb_format_version = version
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(out))
    tokenizer.save_pretrained(str(out))
    return out


if __name__ == "__main__":
    import sys

    print(upgrade_format(sys.argv[1], sys.argv[2]))
