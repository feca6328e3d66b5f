"""Probe: does an inverse walk (inv_step_over from the return to the call) propose better arguments than
the one inv_step_call jump? Each alone, greedy, unchecked, scored with the harness.

    python scripts/walk_probe.py PROBLEMS.jsonl [LIMIT] [inv_step_over|inv_step_into]

Run on held-out problems of our own build (docs/results/session27/s99b_problems.jsonl), never CruxEval.
One line per problem (each proposal, whether it passes, the steps the walk took), then the counts.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from model_backend.engine import infer  # noqa: E402
from model_backend.engine.neural import create_neural_engine  # noqa: E402
from model_backend.eval.cruxeval import score  # noqa: E402
from model_backend.program import Program  # noqa: E402
from model_backend.sampler import hidden_entry  # noqa: E402
from model_backend.state import Action  # noqa: E402

WALK_STEPS = 80


def main() -> None:
    problems = [json.loads(line) for line in Path(sys.argv[1]).read_text().splitlines() if line.strip()]
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else len(problems)
    kind = sys.argv[3] if len(sys.argv) > 3 else "inv_step_over"
    engine = create_neural_engine()
    jump_ok = walk_ok = either = 0
    began = time.time()
    for n, problem in enumerate(problems[:limit]):
        program = Program(source=problem["code"], path="<infer>", entry=hidden_entry("f()"))
        known = infer.known_return(program, "f", problem["output"])
        params = infer.signature(problem["code"], "f")
        engine.start(program, at="exit", known_exit=known)
        jump = infer._arguments(engine.step(Action(kind="inv_step_call")), "f", params)
        engine.start(program, at="exit", known_exit=known)
        walk, taken = None, 0
        while taken < WALK_STEPS:
            taken += 1
            state = engine.step(Action(kind=kind))
            if state.error:
                break
            if state.event == "call" and state.function == "f" and state.depth == 0:
                walk = infer._arguments(state, "f", params)
                break
        jumped, walked = score(problem, "input", jump), score(problem, "input", walk)
        jump_ok += jumped
        walk_ok += walked
        either += jumped or walked
        print(n, problem["id"], "jump", jumped, repr(jump)[:60], "| walk", walked, taken, repr(walk)[:60],
              "| true", problem["input"][:60], flush=True)
    print(f"jump {jump_ok} walk {walk_ok} either {either} of {limit} in {time.time() - began:.0f}s")


if __name__ == "__main__":
    main()
