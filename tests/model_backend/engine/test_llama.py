"""engine/llama.py: the lean forward pass gives transformers' logits (the shipped model's weights)."""

from __future__ import annotations

import torch
from transformers import DynamicCache

from model_backend.engine.forward import ragged_forward
from model_backend.engine.llama import INITIAL_CAPACITY, KVCache
from model_backend.engine.neural import LoadedModel


def test_logits_match_transformers_across_feeds_crops_and_growth(shipped_model: LoadedModel) -> None:
    lean, model = shipped_model.lean, shipped_model.model
    assert lean is not None
    generator = torch.Generator().manual_seed(0)
    ids = torch.randint(3, 2000, (INITIAL_CAPACITY + 300,), generator=generator).tolist()
    cache = lean.new_cache()
    reference = DynamicCache()
    with torch.inference_mode():
        # chunks of several sizes, past the first capacity; then a crop and a different continuation
        for chunk in (ids[:200], ids[200:201], ids[201:205], ids[205:INITIAL_CAPACITY + 300]):
            mine = lean.forward(chunk, cache)
            theirs = model(input_ids=torch.tensor([chunk]), past_key_values=reference, use_cache=True).logits[0, -1]
            assert torch.allclose(mine, theirs, atol=1e-4), float((mine - theirs).abs().max())
        cache.crop(150)
        reference.crop(150 - reference.get_seq_length())  # transformers 5 crops by a negative count
        mine = lean.forward([7, 8, 9], cache)
        theirs = model(input_ids=torch.tensor([[7, 8, 9]]), past_key_values=reference, use_cache=True).logits[0, -1]
        assert cache.get_seq_length() == reference.get_seq_length() == 153
        assert torch.allclose(mine, theirs, atol=1e-4)
        cache.crop(-3)
        assert cache.get_seq_length() == 150


def test_the_cache_serves_the_batched_pass(shipped_model: LoadedModel) -> None:
    lean = shipped_model.lean
    assert lean is not None
    caches: list[KVCache] = [lean.new_cache(), lean.new_cache()]
    a, b = list(range(10, 40)), list(range(50, 57))
    with torch.inference_mode():
        batched = ragged_forward(shipped_model.model, [(caches[0], a), (caches[1], b)])
        alone = [lean.forward(a, lean.new_cache()), lean.forward(b, lean.new_cache())]
    for mine, theirs in zip(batched, alone, strict=True):
        assert torch.allclose(mine, theirs, atol=1e-4)
    assert [c.get_seq_length() for c in caches] == [30, 7]


def test_the_shipped_model_takes_the_lean_pass(shipped_model: LoadedModel) -> None:
    assert shipped_model.lean is not None
    assert isinstance(shipped_model.new_cache(), KVCache)
