"""What a breakpoint inside a callee costs `next` on the neural engine (model_backend/engine/breakpoints.py).

    OMP_NUM_THREADS=1 python scripts/bench_breakpoint_next.py

On examples/demo.py, steps over to line 14 (`return {"longest": longest(words), ...}`), then steps over
it once without breakpoints (one prediction) and once with a breakpoint on line 5 inside `longest`
(single predicted steps until pdb's stop), and prints where each stopped, how many states it took and
how long.
"""

from __future__ import annotations

import time

from model_backend.engine.base import StepwiseEngine
from model_backend.engine.neural import create_neural_engine
from model_backend.program import Program
from model_backend.state import Action


def main() -> None:
    engine = create_neural_engine()
    assert isinstance(engine, StepwiseEngine)
    program = Program.load("examples/demo.py", "word_stats(['neural', 'debugger', 'dap'])")
    for breakpoints in (frozenset(), frozenset({5})):
        state = engine.start(program)
        while state.line != 14 and state.exit is None:
            state = engine.step(Action(kind="step_over"))
        before, began = len(engine.history), time.perf_counter()
        state = engine.step(Action(kind="step_over"), breakpoints)
        print(f"breakpoints {sorted(breakpoints)}: stopped at {state.event} {state.function}:{state.line}, "
              f"{len(engine.history) - before} states, {time.perf_counter() - began:.2f} s")


if __name__ == "__main__":
    main()
