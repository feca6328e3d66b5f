"""Sort the wrong predictions of `ndb eval next-state --errors FILE` into kinds and count them.

    python scripts/summarize_errors.py docs/results/next_state_errors.jsonl [--actions step_into,step_over]

Each miss gets the first kind that fits, in this order: the frame failed to parse; control flow
(event or line wrong: the wrong branch, the loop ended too early or too late); the wrong frame
(function or stack wrong, line right); then, with the position right, the locals: one variable with
a wrong value, a variable missing or extra, several wrong values; last, only the return value or the
exit wrong.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

KINDS = ("failed", "control flow", "frame/stack", "one value wrong", "variable missing or extra", "several values wrong",
         "return value/exit only")


def kind_of(diff: dict) -> str:
    if "failed" in diff:
        return "failed"
    if "event" in diff or "line" in diff:
        return "control flow"
    if "function" in diff or "stack" in diff:
        return "frame/stack"
    changed = diff.get("locals", {})
    if any(truth is None or predicted is None for truth, predicted in changed.values()):
        return "variable missing or extra"
    if len(changed) == 1:
        return "one value wrong"
    if changed:
        return "several values wrong"
    return "return value/exit only"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("errors", type=Path)
    parser.add_argument("--actions", default="step_into,step_over", help="comma-separated; 'all' for every action")
    args = parser.parse_args()
    wanted = None if args.actions == "all" else set(args.actions.split(","))
    errors = [json.loads(line) for line in args.errors.read_text().splitlines() if line.strip()]
    errors = [e for e in errors if wanted is None or e["action"] in wanted]
    counts = Counter(kind_of(e["diff"]) for e in errors)
    print(f"{len(errors)} wrong predictions ({args.actions})")
    for kind in KINDS:
        print(f"{kind:28} {counts[kind]:5} {100 * counts[kind] / max(1, len(errors)):5.1f}%")


if __name__ == "__main__":
    main()
