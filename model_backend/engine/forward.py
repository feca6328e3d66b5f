"""The transformers engine's batched forward pass: many sessions' next tokens in one pass.

Why not padding: sessions have KV caches of different lengths. Padding them into one
batch cache would copy every cache at every token. Instead the new tokens of all sessions are packed
into one sequence (no padding at all); the projections, MLPs and the output head run once on the packed
tokens, and only attention runs per session, on that session's own DynamicCache, with its own positions
(RoPE) and a causal mask where a session feeds several tokens. This is what vLLM does with its variable
length attention kernels. The result is the same computation as feeding each session alone; floating
point sums may differ in the last bit between a batch of one and of many (matrix kernels block
differently), which can flip greedy choice only on an exact tie: the tests check identical greedy
states batched and unbatched.
"""

from __future__ import annotations

from typing import Any

import torch


def ragged_forward(model: Any, items: list[tuple[Any, list[int]]]) -> list[torch.Tensor]:
    """Feed each session's token ids to its own DynamicCache in one pass; return each one's last logits.

    `items`: (cache, token ids) per session, the caches distinct. Llama architecture (transformers'
    LlamaForCausalLM modules are used as they are; only the attention call is per session).
    """
    from transformers.models.llama.modeling_llama import apply_rotary_pos_emb, repeat_kv

    from model_backend.engine.ensemble import EnsembleLM

    if isinstance(model, EnsembleLM):  # each member on its own caches, then the mean of log-probs
        per_member = [
            ragged_forward(member, [(cache.members[k], ids) for cache, ids in items])
            for k, member in enumerate(model.models)
        ]
        return [model.combine(list(logits)) for logits in zip(*per_member, strict=True)]
    inner = model.model
    device = inner.embed_tokens.weight.device
    lengths = [len(ids) for _, ids in items]
    if any(n == 0 for n in lengths):
        raise ValueError("every session must feed at least one token")
    past = [cache.get_seq_length() for cache, _ in items]
    total = sum(lengths)
    input_ids = torch.tensor([i for _, ids in items for i in ids], device=device)
    positions = torch.cat([torch.arange(p, p + n, device=device) for p, n in zip(past, lengths, strict=True)])
    hidden = inner.embed_tokens(input_ids)[None]  # [1, T, H]
    cos, sin = inner.rotary_emb(hidden, positions[None])
    masks = [
        None if n == 1 else
        torch.arange(p + n, device=device)[None, :] <= (p + torch.arange(n, device=device))[:, None]
        for p, n in zip(past, lengths, strict=True)
    ]
    for layer in inner.layers:
        attn = layer.self_attn
        head_dim = attn.head_dim
        x = layer.input_layernorm(hidden)
        q = attn.q_proj(x).view(1, total, -1, head_dim).transpose(1, 2)
        k = attn.k_proj(x).view(1, total, -1, head_dim).transpose(1, 2)
        v = attn.v_proj(x).view(1, total, -1, head_dim).transpose(1, 2)
        q, k = apply_rotary_pos_emb(q, k, cos, sin)
        outputs = []
        start = 0
        for (cache, _), n, mask in zip(items, lengths, masks, strict=True):
            keys, values = cache.update(k[:, :, start : start + n], v[:, :, start : start + n], attn.layer_idx)
            keys = repeat_kv(keys, attn.num_key_value_groups)
            values = repeat_kv(values, attn.num_key_value_groups)
            outputs.append(torch.nn.functional.scaled_dot_product_attention(
                q[:, :, start : start + n], keys, values, attn_mask=mask, scale=attn.scaling,
            ))
            start += n
        attended = torch.cat(outputs, dim=2).transpose(1, 2).reshape(1, total, -1)
        hidden = hidden + attn.o_proj(attended)
        hidden = hidden + layer.mlp(layer.post_attention_layernorm(hidden))
    hidden = inner.norm(hidden)
    last = torch.tensor([sum(lengths[: i + 1]) - 1 for i in range(len(lengths))], device=device)
    logits = model.lm_head(hidden[0, last]).float()
    return list(logits.unbind(0))
