"""Benchmarks that are commands, not timed tests: `ndb bench tracer` (and the others registered here)."""

from __future__ import annotations

import statistics
import time
from typing import Any

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
