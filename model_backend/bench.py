"""Benchmarks that are commands, not timed tests: `ndb bench tracer` and `ndb bench large-values` (registered by
model_backend/cli.py and dap_server/cli.py)."""

from __future__ import annotations

import statistics
import time
from typing import Any

from model_backend.engine.oracle import SESSION_MAX_REPR
from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace

_BUSY = """\
def collatz(n):
    steps = 0
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps

def main(limit):
    total = 0
    for k in range(1, limit):
        total += collatz(k)
    return total
"""


def bench_tracer(repeats: int = 5, events: int = 20_000) -> dict[str, Any]:
    """Tracing throughput (events/s, end to end: child, pipe, parsing) and sandbox start-up latency."""
    busy = Program(source=_BUSY, path="/bench/busy.py", entry="main(400)")
    limits = Limits(max_events=events, wall_time=60, cpu_time=60)
    rates = []
    for _ in range(repeats):
        started = time.perf_counter()
        result = run_trace(busy, limits)
        rates.append(len(result.events) / (time.perf_counter() - started))
    trivial = Program(source="x = 1\n", path="/bench/trivial.py")
    startups = []
    for _ in range(repeats * 4):
        started = time.perf_counter()
        run_trace(trivial)
        startups.append((time.perf_counter() - started) * 1000)
    return {
        "events_per_run": len(result.events),
        "events_per_s_median": statistics.median(rates),
        "sandbox_startup_ms_median": statistics.median(startups),
        "sandbox_startup_ms_p90": sorted(startups)[int(0.9 * (len(startups) - 1))],
        "runs": repeats,
    }


# An object holding 100,000 numbers, whose method runs 2,000 events: a repr that wrote the whole list at
# every event would cost seconds.
_STORE = """
class Store:
    def __init__(self, n):
        self.items = list(range(n))

    def total(self):
        s = 0
        for x in self.items[:1000]:
            s += x
        return s

store = Store(100000)
print(store.total())
"""


def bench_large_values(runs: int = 3) -> list[dict[str, Any]]:
    """How long an oracle session's trace takes when an object holds a large value: a session records the
    attributes of the program's objects at every event, each repr cut at SESSION_MAX_REPR characters
    (docs/oracle.md). One row without the attributes, one with them."""
    program = Program(source=_STORE, path="store.py")
    rows = []
    for attributes in (False, True):
        limits = Limits(max_repr=SESSION_MAX_REPR, record_globals=True, record_attributes=attributes)
        times = []
        for _ in range(runs):
            started = time.perf_counter()
            result = run_trace(program, limits)
            times.append(time.perf_counter() - started)
        rows.append({"record_attributes": attributes, "events": len(result.events), "exit": result.exit,
                     "exit_reason": result.exit_reason, "median_s": statistics.median(times), "runs": runs})
    return rows

