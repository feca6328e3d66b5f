"""Probe: how often does the model's inverse jump from a known return propose arguments that work?
The greedy jump alone and the best of the greedy and `samples` sampled ones, unchecked, scored with the
harness (the real f runs in the sandbox on each proposal; this is a measurement, not inference).

    python scripts/jump_probe.py PROBLEMS.jsonl [--model DIR] [--samples 8] [--limit N]

Compares checkpoints on the proposal step of input inference in minutes, where a whole `ndb eval
cruxeval --task input` run takes the better part of an hour. Run it on held-out problems of our own
builds (scripts/heldout_problems.py), never on CruxEval.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model_backend.engine import infer  # noqa: E402
from model_backend.engine.neural import NeuralEngine, create_neural_engine  # noqa: E402
from model_backend.eval.cruxeval import score  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("problems")
    parser.add_argument("--model", default=None)
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--temperature", type=float, default=1.0, help="of the sampled jumps")
    args = parser.parse_args()
    problems = [json.loads(line) for line in Path(args.problems).read_text().splitlines() if line.strip()]
    problems = problems[: args.limit]
    engine = create_neural_engine(args.model)
    assert isinstance(engine, NeuralEngine)
    engine.sample_temperature = args.temperature
    greedy_ok = any_ok = 0
    began = time.time()
    for n, problem in enumerate(problems):
        proposals = infer.propose(engine, problem["code"], "f", problem["output"], args.samples)
        passed = [score(problem, "input", p.arguments) for p in proposals]
        first = bool(proposals) and proposals[0].greedy and passed[0]
        greedy_ok += first
        any_ok += any(passed)
        print(n, problem["id"], "greedy", int(first), "any", int(any(passed)), f"of {len(proposals)}",
              repr(proposals[0].arguments if proposals else None)[:60], "| true", problem["input"][:60], flush=True)
    print(f"greedy {greedy_ok} any {any_ok} of {len(problems)} ({args.samples} samples) "
          f"in {time.time() - began:.0f}s, model {args.model or 'default'}, temperature {args.temperature:g}")


if __name__ == "__main__":
    main()
