"""A lean forward pass of a transformers LlamaForCausalLM for decoding on the CPU.

The same computation as transformers' modules, on their weights, with less around it: the query, key
and value projections are one matrix product, so are the MLP's gate and up projections, and the KV
cache grows in place (`KVCache`) instead of being concatenated at every token. Decoding one token
reads every weight once, so on this CPU the modules' own overhead (masks, per-module calls, cache
copies) is a fifth of a token's time; this removes most of it. tests/model_backend/engine/test_llama.py
checks the logits against transformers'.

`KVCache` also serves engine/forward.py's batched pass (it has the `update`, `get_seq_length` and `crop`
that pass uses).
"""

from __future__ import annotations

from typing import TypeGuard

import torch
import torch.nn.functional as F
from transformers import LlamaForCausalLM

INITIAL_CAPACITY = 512  # tokens; a cache doubles when it fills


class KVCache:
    """Keys and values of one session, per layer, in buffers that grow by doubling."""

    def __init__(self, layers: int, kv_heads: int, head_dim: int, dtype: torch.dtype, device: torch.device) -> None:
        self._shape = (kv_heads, INITIAL_CAPACITY, head_dim)
        self.keys = [torch.empty(self._shape, dtype=dtype, device=device) for _ in range(layers)]
        self.values = [torch.empty(self._shape, dtype=dtype, device=device) for _ in range(layers)]
        self.lengths = [0] * layers

    def get_seq_length(self, layer_idx: int = 0) -> int:
        return self.lengths[layer_idx]

    def crop(self, max_length: int) -> None:
        """Keep the first `max_length` tokens; a negative number drops that many, as transformers' caches do."""
        for layer, length in enumerate(self.lengths):
            keep = length + max_length if max_length < 0 else min(length, max_length)
            self.lengths[layer] = max(keep, 0)

    def update(self, key: torch.Tensor, value: torch.Tensor, layer_idx: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Append `key` and `value` ([1, heads, n, head_dim]) to the layer; its keys and values so far
        ([1, heads, length, head_dim], views of the buffers)."""
        start, n = self.lengths[layer_idx], key.shape[2]
        if start + n > self.keys[layer_idx].shape[1]:
            capacity = max(2 * self.keys[layer_idx].shape[1], start + n)
            for buffers in (self.keys, self.values):
                grown = buffers[layer_idx].new_empty((self._shape[0], capacity, self._shape[2]))
                grown[:, :start] = buffers[layer_idx][:, :start]
                buffers[layer_idx] = grown
        self.keys[layer_idx][:, start:start + n] = key[0]
        self.values[layer_idx][:, start:start + n] = value[0]
        self.lengths[layer_idx] = start + n
        end = start + n
        return self.keys[layer_idx][None, :, :end], self.values[layer_idx][None, :, :end]


class LeanLlama:
    """The lean forward pass of `model` (its weights are shared, the fused projections are copies)."""

    def __init__(self, model: LlamaForCausalLM) -> None:
        config = model.config
        self.model = model
        self.inner = model.model
        self.heads = int(config.num_attention_heads)
        self.kv_heads = int(config.num_key_value_heads or self.heads)
        self.head_dim = getattr(config, "head_dim", None) or config.hidden_size // self.heads
        self.eps = config.rms_norm_eps
        layers = self.inner.layers
        self.qkv = [torch.cat([layer.self_attn.q_proj.weight, layer.self_attn.k_proj.weight,
                               layer.self_attn.v_proj.weight]) for layer in layers]
        self.gate_up = [torch.cat([layer.mlp.gate_proj.weight, layer.mlp.up_proj.weight]) for layer in layers]

    @staticmethod
    def fits(model: object) -> TypeGuard[LlamaForCausalLM]:
        """Whether `model` is the plain Llama this pass computes (no biases, SiLU, no sliding window)."""
        config = getattr(model, "config", None)
        return (isinstance(model, LlamaForCausalLM) and config is not None
                and not getattr(config, "attention_bias", False) and not getattr(config, "mlp_bias", False)
                and getattr(config, "hidden_act", "") == "silu"
                and getattr(config, "pretraining_tp", 1) == 1)

    def new_cache(self) -> KVCache:
        weight = self.inner.embed_tokens.weight
        return KVCache(len(self.inner.layers), self.kv_heads, self.head_dim, weight.dtype, weight.device)

    def _norm(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        variance = x.float().pow(2).mean(-1, keepdim=True)
        return weight * (x.float() * torch.rsqrt(variance + self.eps)).to(x.dtype)

    def forward(self, ids: list[int], cache: KVCache, tail: int = 1) -> torch.Tensor:
        """Feed `ids` after what `cache` holds; the logits after the last of them (float32), or, with
        `tail` > 1, after each of the last `tail` of them ([tail, vocab]: a draft's check, engine/draft.py)."""
        device = self.inner.embed_tokens.weight.device
        n, past = len(ids), cache.get_seq_length()
        hidden = self.inner.embed_tokens(torch.tensor(ids, device=device))[None]  # [1, n, H]
        positions = torch.arange(past, past + n, device=device)[None]
        cos, sin = self.inner.rotary_emb(hidden, positions)  # [1, n, head_dim]
        cos, sin = cos[:, None], sin[:, None]
        half = self.head_dim // 2
        mask = None if n == 1 else (torch.arange(past + n, device=device)[None, :]
                                    <= (past + torch.arange(n, device=device))[:, None])
        q_size, kv_size = self.heads * self.head_dim, self.kv_heads * self.head_dim
        for index, layer in enumerate(self.inner.layers):
            x = self._norm(hidden, layer.input_layernorm.weight)
            q, k, v = F.linear(x, self.qkv[index]).split([q_size, kv_size, kv_size], dim=-1)
            q = q.view(1, n, self.heads, self.head_dim).transpose(1, 2)
            k = k.view(1, n, self.kv_heads, self.head_dim).transpose(1, 2)
            v = v.view(1, n, self.kv_heads, self.head_dim).transpose(1, 2)
            q = q * cos + torch.cat([-q[..., half:], q[..., :half]], dim=-1) * sin
            k = k * cos + torch.cat([-k[..., half:], k[..., :half]], dim=-1) * sin
            keys, values = cache.update(k, v, index)
            attended = F.scaled_dot_product_attention(q, keys, values, attn_mask=mask,
                                                      scale=layer.self_attn.scaling,
                                                      enable_gqa=self.kv_heads != self.heads)
            hidden = hidden + F.linear(attended.transpose(1, 2).reshape(1, n, q_size), layer.self_attn.o_proj.weight)
            gate, up = F.linear(self._norm(hidden, layer.post_attention_layernorm.weight),
                                self.gate_up[index]).chunk(2, dim=-1)
            hidden = hidden + F.linear(F.silu(gate) * up, layer.mlp.down_proj.weight)
        if tail > 1:
            return F.linear(self._norm(hidden[0, -tail:], self.inner.norm.weight), self.model.lm_head.weight).float()
        last = self._norm(hidden[:, -1], self.inner.norm.weight)
        return F.linear(last, self.model.lm_head.weight)[0].float()
