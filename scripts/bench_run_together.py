"""Milliseconds per round of `ragged_forward` (what neural.run_together runs) for 1, 4, 8 and 16
sessions feeding one token each, after a 400-token context; and the plain transformers forward of one.

    OMP_NUM_THREADS=1 python scripts/bench_run_together.py
"""

from __future__ import annotations

import time

import torch
from transformers import DynamicCache

from model_backend.engine.neural import LoadedModel
from model_backend.worker.batching import ragged_forward

ROUNDS = 50


def main() -> None:
    loaded = LoadedModel.load()
    context = list(range(5, 405))
    with torch.inference_mode():
        for sessions in (1, 4, 8, 16):
            caches = [DynamicCache() for _ in range(sessions)]
            ragged_forward(loaded.model, [(c, context) for c in caches])
            began = time.perf_counter()
            for _ in range(ROUNDS):
                ragged_forward(loaded.model, [(c, [7]) for c in caches])
            ms = (time.perf_counter() - began) / ROUNDS * 1000
            print(f"{sessions:>2} sessions: {ms:.1f} ms per round, {ms / sessions:.2f} ms per token")
        cache = DynamicCache()
        loaded.model(input_ids=torch.tensor([context]), past_key_values=cache, use_cache=True)
        began = time.perf_counter()
        for _ in range(ROUNDS):
            loaded.model(input_ids=torch.tensor([[7]]), past_key_values=cache, use_cache=True)
        print(f"plain forward of one session: {(time.perf_counter() - began) / ROUNDS * 1000:.1f} ms per token")


if __name__ == "__main__":
    main()
