"""Passes and time of one `c` to a far breakpoint with the shipped model, at the draft length of $NDB_DRAFT.

    NDB_TORCH_THREADS=1 NDB_DRAFT=16 python scripts/bench_drafts.py benchmarks/realistic/dev/fulfilment_simulation.py

The breakpoint is `ndb bench session`'s (its first hit at least 20 single steps from the start, from the
oracle's run). Prints the seconds, the stop, the engine's `draft_figures` (forward passes, drafted tokens,
passes a draft saved) and a digest of every predicted state, which is the same whatever the draft length
(engine/draft.py).
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

from dap_server.bench_session import entry_call, oracle_plan
from model_backend.engine.neural import create_neural_engine
from model_backend.program import Program
from model_backend.state import Action


def main(path: str) -> None:
    source = Path(path).read_text(encoding="utf-8")
    program = Program(source=source, path=path, entry=entry_call(source))
    plan = oracle_plan(program, 10, 20)
    if plan is None:
        raise SystemExit(f"{path}: no line is first reached 20 or more steps from the start")
    engine = create_neural_engine()
    engine.start(program)
    began = time.perf_counter()
    stop = engine.step(Action(kind="continue"), frozenset([plan.breakpoint_line]))
    seconds = time.perf_counter() - began
    states = [s.model_dump_json(exclude={"confidence"}) for s in engine.history]
    print(json.dumps({"program": path, "breakpoint_line": plan.breakpoint_line, "continue_s": round(seconds, 2),
                      "stopped_at": stop.line, "draft_tokens": getattr(engine, "draft_tokens", None),
                      "figures": getattr(engine, "draft_figures", None), "states": len(states),
                      "states_sha1": hashlib.sha1("\n".join(states).encode()).hexdigest()[:12]}))


if __name__ == "__main__":
    main(sys.argv[1])
