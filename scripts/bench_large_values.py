"""How long an oracle debugging session's trace takes when an object holds a large value.

A session records the attributes of the program's objects at every event (docs/oracle.md); each is a
repr cut at SESSION_MAX_REPR characters. This program's object holds 100,000 numbers and its method runs
2,000 events, so a repr that wrote the whole list at every event would cost seconds.

    python scripts/bench_large_values.py [--runs 3]
"""

import argparse
import statistics
import time

from model_backend.engine.oracle import SESSION_MAX_REPR
from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace

SOURCE = """
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    program = Program(source=SOURCE, path="store.py")
    for attributes in (False, True):
        limits = Limits(max_repr=SESSION_MAX_REPR, record_globals=True, record_attributes=attributes)
        times, result = [], None
        for _ in range(args.runs):
            start = time.perf_counter()
            result = run_trace(program, limits)
            times.append(time.perf_counter() - start)
        assert result is not None
        print(f"record_attributes={attributes}: {len(result.events)} events, exit {result.exit}"
              f"{' (' + result.exit_reason + ')' if result.exit_reason else ''}, "
              f"median {statistics.median(times):.2f} s of {args.runs} runs")


if __name__ == "__main__":
    main()
