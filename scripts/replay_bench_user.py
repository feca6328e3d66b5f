"""Replay one simulated user of `ndb bench worker` on an in-process neural engine, step by step.

    python scripts/replay_bench_user.py USER SEED [STEPS] [--model PATH]

The user takes the same seeded actions as in the benchmark (same program, same breakpoints), and each
step prints its time, the forward passes and tokens it cost, the context length, and the predicted
state. Greedy decoding is deterministic, so this shows what made a benchmark session slow.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from model_backend.engine.neural import NeuralEngine, _shared_model
from model_backend.worker.bench import SimulatedUser


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("user", type=int)
    parser.add_argument("seed", type=int)
    parser.add_argument("steps", type=int, nargs="?", default=30)
    parser.add_argument("--model", default=None)
    args = parser.parse_args()
    torch.set_num_threads(1)
    user = SimulatedUser(args.user, args.seed)
    program = user.program
    engine = NeuralEngine(_shared_model(args.model))
    cost = {"passes": 0, "tokens": 0}
    forward = engine._forward

    def counted(ids: list[int]) -> torch.Tensor:
        cost["passes"] += 1
        cost["tokens"] += len(ids)
        return forward(ids)

    engine._forward = counted  # type: ignore[method-assign]
    state = engine.start(program)
    for n in range(args.steps):
        if state.event == "exit":
            state = engine.start(program)
        action, breakpoints = user.next_action()
        cost.update(passes=0, tokens=0)
        began = time.perf_counter()
        state = engine.step(action, breakpoints)
        shown = json.dumps(state.locals)
        print(f"{n:3d} {action.kind:14s} {sorted(breakpoints)!s:5s} {time.perf_counter() - began:6.2f} s "
              f"passes {cost['passes']:4d} tokens {cost['tokens']:5d} context {engine._context_len():5d} "
              f"{state.event} at line {state.line} {shown[:120]}{'...' if len(shown) > 120 else ''}"
              f"{' ERROR ' + state.error if state.error else ''}", flush=True)


if __name__ == "__main__":
    main()
