"""Time `next` in VS Code's two stepping styles on the neural engine, over DAP as VS Code drives it.

    python scripts/bench_stepping_styles.py [--program examples/demo.py] [--entry CALL] [--steps 12]

For each style (pdb, debugpy) a session launches with stopOnEntry, then sends up to --steps `next`
requests, each timed from the request to its `stopped` event; the session ends early at the program's
exit. debugpy's style passes each call on a line with a step_into and a followed step_return, pdb's with
one followed step_over. Prints each style's stops, median and total seconds.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.support.dap_client import stdio_session  # noqa: E402

DEMO_ENTRY = "word_stats(['neural', 'debugger', 'dap'])"


def run(program: str, entry: str, stepping: str, steps: int) -> list[tuple[float, int]]:
    """(seconds, line) of each `next` until --steps or the program's end."""
    times: list[tuple[float, int]] = []
    with stdio_session() as session:
        with session.launch(program, engine="neural", entry=entry, stopOnEntry=True, stepping=stepping):
            pass
        session.wait_for_stop("entry", timeout=120)
        for _ in range(steps):
            began = time.perf_counter()
            session.command("next")
            event = session.client.wait_for(
                lambda m: m.get("type") == "event" and m.get("event") in ("stopped", "terminated", "exited"),
                300, session._stop_mark, what="stop after next")
            if event["event"] != "stopped":
                break
            stop = session.wait_for_stop(timeout=30)
            times.append((time.perf_counter() - began, stop.frames[0]["line"]))
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--program", default="examples/demo.py")
    ap.add_argument("--entry", default=DEMO_ENTRY)
    ap.add_argument("--steps", type=int, default=12)
    args = ap.parse_args()
    for stepping in ("pdb", "debugpy"):
        times = run(args.program, args.entry, stepping, args.steps)
        seconds = [t for t, _ in times]
        print(f"{stepping:8s} {len(times)} stops (lines {[line for _, line in times]}), "
              f"median {statistics.median(seconds) if seconds else 0:.2f} s, total {sum(seconds):.2f} s")


if __name__ == "__main__":
    main()
