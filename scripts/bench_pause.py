"""How long a DAP `pause` takes to stop a long predicted continue, a breakpoint set during one to be
answered and to stop it, and a `cancel` an inference.

Drives `python -m dap_server.server` over stdio as VS Code does (tests/support/dap_client.py), with the shipped
model (or --model, or a model worker with --worker URL), on a loop the model walks one predicted step at a
time: a conditional breakpoint that never fires inside `while i < limit: i += 1`. Each pause trial:
continue, wait `--wait` seconds, pause, time until the `stopped` event. Each breakpoint trial: continue,
wait, set an unconditional breakpoint on the loop's header, time until its answer and until the `stopped`
event, then put the never-firing one back. Then (not over a worker) an `infer` in the Debug Console,
cancelled from its progress report once it has started, timed until its answer.

    python scripts/bench_pause.py [--trials 5] [--wait 2] [--model DIR | --worker ws://HOST:PORT]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.support.corpus import SPIN  # noqa: E402
from tests.support.dap_client import stdio_session  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5)
    parser.add_argument("--wait", type=float, default=2.0, help="seconds between continue and pause")
    parser.add_argument("--model", default=None)
    parser.add_argument("--worker", default=None, help="a model worker's URL (no inference then)")
    args = parser.parse_args()
    program = Path(tempfile.mkdtemp()) / "spin.py"
    program.write_text(SPIN)
    never: list[int | dict[str, Any]] = [{"line": 4, "condition": "i < 0"}]
    pauses: list[float] = []
    answers: list[float] = []
    breaks: list[float] = []
    cancels: list[float] = []
    with stdio_session() as s:
        extra = {"model": args.model} if args.model else {}
        if args.worker:
            extra["worker"] = args.worker
        with s.launch(program, engine="neural", entry="spin(1000)", stopOnEntry=True, followSteps=5000,
                      inferSeconds=600, **extra):
            s.set_breakpoints(never)
        s.wait_for_stop("entry")
        for _ in range(args.trials):
            s.command("continue")
            time.sleep(args.wait)
            began = time.monotonic()
            s.client.request("pause", {"threadId": 1})
            stop = s.wait_for_stop("pause", timeout=120)
            pauses.append(time.monotonic() - began)
            print(f"pause: stopped after {pauses[-1]:.3f} s at line {stop.line}", flush=True)
        for _ in range(args.trials):
            s.command("continue")
            time.sleep(args.wait)
            began = time.monotonic()
            s.set_breakpoints([{"line": 3}])
            answers.append(time.monotonic() - began)
            stop = s.wait_for_stop("breakpoint", timeout=120)
            breaks.append(time.monotonic() - began)
            assert stop.line == 3, stop
            print(f"breakpoint: answered after {answers[-1]:.3f} s, stopped on it after {breaks[-1]:.3f} s",
                  flush=True)
            s.set_breakpoints(never)
        for _ in range(0 if args.worker else args.trials):
            mark = s.client.mark()
            seq = s.client.send("evaluate", {"expression": "infer spin 5", "frameId": 1, "context": "repl"})
            progress = s.client.event("progressStart", since=mark, timeout=60)["body"]["progressId"]
            s.client.event("progressUpdate", since=mark, timeout=300)  # the checks have begun
            began = time.monotonic()
            s.client.request("cancel", {"progressId": progress})
            answer = s.client.response(seq, timeout=120)
            assert answer["message"] == "cancelled", answer
            cancels.append(time.monotonic() - began)
            print(f"cancel: answered after {cancels[-1]:.3f} s", flush=True)
    for name, times in (("pause", pauses), ("setBreakpoints answered", answers),
                        ("setBreakpoints to stopped", breaks), ("cancel", cancels)):
        if not times:
            continue
        print(f"{name}: median {statistics.median(times):.3f} s, max {max(times):.3f} s over {len(times)} trials")


if __name__ == "__main__":
    main()
