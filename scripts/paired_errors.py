"""Paired comparison of two `ndb eval next-state --errors` files of the same data and limit.

    python scripts/paired_errors.py OLD_ERRORS.jsonl NEW_ERRORS.jsonl [step_into,step_over]

"Fixed": a transition wrong in OLD and right in NEW; "broken": the reverse. z is the sign test's
(fixed - broken) / sqrt(fixed + broken). An error file lists the wrong transitions only, so both files
must come from the same `--data` and `--limit`.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from typing import Any


def load(path: str, actions: set[str] | None) -> dict[tuple[int, int], dict[str, Any]]:
    out = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            record = json.loads(line)
            if actions is None or record["action"] in actions:
                out[(record["trajectory"], record["transition"])] = record
    return out


def main() -> None:
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    actions = set(sys.argv[3].split(",")) if len(sys.argv) == 4 else None
    old, new = load(sys.argv[1], actions), load(sys.argv[2], actions)
    fixed = [k for k in old if k not in new]
    broken = [k for k in new if k not in old]
    both = [k for k in old if k in new]
    changed = sum(1 for k in both if old[k]["diff"] != new[k]["diff"])
    n = len(fixed) + len(broken)
    z = (len(fixed) - len(broken)) / math.sqrt(n) if n else 0.0
    print(f"fixed {len(fixed)}, broken {len(broken)}, z = {z:.1f}; wrong in both {len(both)} ({changed} with a different diff)")
    print("fixed by action:", dict(Counter(old[k]["action"] for k in fixed)),
          "broken by action:", dict(Counter(new[k]["action"] for k in broken)))


if __name__ == "__main__":
    main()
