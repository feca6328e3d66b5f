"""Named Llama shapes for the neural debugger, built from scratch (never downloaded).

Every shape keeps `head_dim` in the set the vLLM CPU attention backend accepts (32, 64, 80, 96, 112, 128,
...; see ../shared/docs/vllm-on-cpu.md), ties the input and output embeddings (the vocabulary is a large
share of a small model) and uses RoPE, so that positions beyond the training length degrade gracefully.
The vocabulary size and the special token ids come from the tokenizer.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerBase

from model_backend import trace_format as fmt

VLLM_CPU_HEAD_DIMS = frozenset({32, 64, 80, 96, 112, 128, 160, 192, 224, 256, 512})


@dataclass(frozen=True)
class ModelShape:
    hidden_size: int
    num_hidden_layers: int
    num_attention_heads: int
    intermediate_size: int
    num_key_value_heads: int | None = None  # None: as many as the attention heads (no GQA)
    max_position_embeddings: int = 2048
    rope_theta: float = 10_000.0

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.num_attention_heads

    def non_embedding_params(self) -> int:
        """Parameters outside the (tied) embedding: attention, MLP and norms."""
        kv = self.num_key_value_heads or self.num_attention_heads
        h, hd = self.hidden_size, self.head_dim
        attn = h * h * 2 + 2 * h * kv * hd  # q, o; k, v
        mlp = 3 * h * self.intermediate_size
        return self.num_hidden_layers * (attn + mlp + 2 * h) + h

    def params(self, vocab_size: int) -> int:
        return self.non_embedding_params() + vocab_size * self.hidden_size


# Parameter counts: non-embedding, then the total with the 2048-token vocabulary (fp32 export size).
SHAPES: dict[str, ModelShape] = {
    # Tests only: 99k non-embedding; 230k in all (0.9 MB).
    "tiny": ModelShape(hidden_size=64, num_hidden_layers=2, num_attention_heads=2, intermediate_size=172),
    # 0.79M non-embedding; 1.05M in all (4.2 MB): compute-optimal for ~50 CPU minutes on a busy machine.
    "micro": ModelShape(hidden_size=128, num_hidden_layers=4, num_attention_heads=2, intermediate_size=344),
    # 1.77M non-embedding; 2.16M in all (8.7 MB).
    "mini": ModelShape(hidden_size=192, num_hidden_layers=4, num_attention_heads=3, intermediate_size=512),
    # 3.16M non-embedding; 3.69M in all (14.8 MB, one file).
    "small": ModelShape(hidden_size=256, num_hidden_layers=4, num_attention_heads=4, intermediate_size=688),
    # 4.75M non-embedding; 5.27M in all (21 MB: two files).
    "small6": ModelShape(hidden_size=256, num_hidden_layers=6, num_attention_heads=4, intermediate_size=688),
    # 6.33M non-embedding; 6.85M in all (27 MB: two files). "small" grown in depth (`--init-from` a small run).
    "small8": ModelShape(hidden_size=256, num_hidden_layers=8, num_attention_heads=4, intermediate_size=688),
    # 10.6M non-embedding; 11.4M in all: a GPU run to ship (23 MB in bf16: two files; scripts/gpu/).
    "medium": ModelShape(hidden_size=384, num_hidden_layers=6, num_attention_heads=6, intermediate_size=1024),
    # 25.3M non-embedding; 26.4M in all: a GPU run (105 MB in 15 MB files, or half in bf16).
    "base": ModelShape(hidden_size=512, num_hidden_layers=8, num_attention_heads=8, intermediate_size=1376),
}

for _name, _shape in SHAPES.items():  # a shape vLLM's CPU backend rejects is a bug here, not at inference
    assert _shape.hidden_size % _shape.num_attention_heads == 0, _name
    assert _shape.head_dim in VLLM_CPU_HEAD_DIMS, _name


def special_token_ids(tokenizer: PreTrainedTokenizerBase) -> dict[str, Any]:
    """bos / eos / pad ids for the model config, and the ids that end one generated frame."""
    stops = [tokenizer.convert_tokens_to_ids(t) for t in fmt.STOP_TOKENS]
    unk = tokenizer.unk_token_id
    stops = [i for i in stops if isinstance(i, int) and i != unk]
    eos = tokenizer.eos_token_id
    if eos is None:
        eos = stops[-1] if stops else None
    bos = tokenizer.bos_token_id
    pad = tokenizer.pad_token_id
    if pad is None:
        pad = eos if eos is not None else 0
    return {"bos_token_id": bos, "eos_token_id": eos, "pad_token_id": pad, "stop_token_ids": stops}


def make_config(name: str, tokenizer: PreTrainedTokenizerBase, max_position_embeddings: int | None = None) -> LlamaConfig:
    """The LlamaConfig of shape `name` for this tokenizer's vocabulary and special tokens."""
    if name not in SHAPES:
        raise ValueError(f"unknown model shape {name!r}; choose one of {', '.join(SHAPES)}")
    shape = SHAPES[name]
    ids = special_token_ids(tokenizer)
    return LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=shape.hidden_size,
        intermediate_size=shape.intermediate_size,
        num_hidden_layers=shape.num_hidden_layers,
        num_attention_heads=shape.num_attention_heads,
        num_key_value_heads=shape.num_key_value_heads or shape.num_attention_heads,
        head_dim=shape.head_dim,
        hidden_act="silu",
        max_position_embeddings=max_position_embeddings or shape.max_position_embeddings,
        initializer_range=0.02,
        rms_norm_eps=1e-5,
        use_cache=True,
        tie_word_embeddings=True,
        rope_parameters={"rope_type": "default", "rope_theta": shape.rope_theta},
        attention_bias=False,
        attention_dropout=0.0,
        mlp_bias=False,
        bos_token_id=ids["bos_token_id"],
        eos_token_id=ids["eos_token_id"],
        pad_token_id=ids["pad_token_id"],
    )


def build_model(name: str, tokenizer: PreTrainedTokenizerBase, seed: int | None = None) -> LlamaForCausalLM:
    """A freshly initialised LlamaForCausalLM of shape `name` (fp32, random weights, nothing downloaded)."""
    import torch

    config = make_config(name, tokenizer)
    if seed is not None:
        torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    return model


def describe(name: str) -> dict[str, Any]:
    shape = SHAPES[name]
    return {"name": name, **asdict(shape), "head_dim": shape.head_dim}
