"""Count the traced values that the grammar's repr-shape rule would refuse (it should be none).

    python scripts/check_repr_shape.py data_out/mix4 train 30000
    python scripts/check_repr_shape.py data_out/v2 heldout

Every local and return value of the first N trajectories of a split is fed, as the JSON string the
trace format writes, through `JsonString(repr_shape=True)`, the automaton constrained decoding uses.
Prints the number of values and trajectories, then any value refused (at most 20).
"""

from __future__ import annotations

import json
import sys

from model_backend import trace_format as fmt
from model_backend.data.build import iter_records, record_text
from model_backend.engine.constraint import JsonString


def main() -> None:
    data, split = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else None
    values = trajectories = 0
    refused: list[str] = []
    for record in iter_records(data, split):
        if limit is not None and trajectories >= limit:
            break
        parsed = fmt.parse(record_text(record))
        if isinstance(parsed, fmt.FormatError):
            continue
        trajectories += 1
        for state, _ in parsed.steps:
            for value in [*state.locals.values(), *([state.value] if state.value is not None else [])]:
                values += 1
                fed = JsonString(repr_shape=True).feed(json.dumps(value, ensure_ascii=False).encode())
                if fed is None or not fed.complete:
                    refused.append(value)
    print(f"{values} values in {trajectories} trajectories of {data} ({split}); refused: {len(refused)}")
    for value in refused[:20]:
        print("  ", repr(value))


if __name__ == "__main__":
    main()
