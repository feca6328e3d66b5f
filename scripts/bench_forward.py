"""Time one forward pass of the shipped model's in-process pass (engine/llama.py): N new tokens after a
context of C tokens, the median of repeated passes on one torch thread.

    python scripts/bench_forward.py [--context 600] [--tokens 1 200] [--model DIR]

It loads the model as a debugging session does (LoadedModel.load), so the pass is the one a session runs.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import torch

from model_backend.engine.neural import LoadedModel


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--context", type=int, default=600)
    parser.add_argument("--tokens", type=int, nargs="+", default=[1, 200])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--model")
    args = parser.parse_args()
    torch.set_num_threads(1)
    loaded = LoadedModel.load(args.model)
    if loaded.lean is None:
        raise SystemExit("the model does not take the lean pass")
    figures = {}
    with torch.inference_mode():
        cache = loaded.lean.new_cache()
        loaded.lean.forward([5 + i % 1000 for i in range(args.context)], cache)
        for n in args.tokens:
            times = []
            for _ in range(args.repeats if n < 100 else max(3, args.repeats // 8)):
                start = time.perf_counter()
                loaded.lean.forward([10 + i % 1000 for i in range(n)], cache)
                times.append(time.perf_counter() - start)
                cache.crop(-n)
            figures[f"{n} tokens after {args.context}, ms"] = round(1000 * statistics.median(times), 2)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
