"""Count the traced stacks that the grammar's stack rule would refuse (it should be none).

    python scripts/check_stacks.py data_out/mix4 train 30000
    python scripts/check_stacks.py data_out/v2 heldout

Every stack of the first N trajectories of a split is fed, as the JSON the trace format writes, through
`Stack`, the automaton constrained decoding uses, with the facts of the trajectory's program: known
functions, program lines, every entry on a line of its own function, the last on the frame's line.
Prints the number of stacks and trajectories, then any stack refused (at most 20).
"""

from __future__ import annotations

import sys

from model_backend import trace_format as fmt
from model_backend.data.build import iter_records, record_text
from model_backend.engine.constraint import ProgramFacts, Stack
from model_backend.program import Program


def main() -> None:
    data, split = sys.argv[1], sys.argv[2]
    limit = int(sys.argv[3]) if len(sys.argv) > 3 else None
    stacks = trajectories = 0
    refused: list[str] = []
    for record in iter_records(data, split):
        if limit is not None and trajectories >= limit:
            break
        parsed = fmt.parse(record_text(record))
        if isinstance(parsed, fmt.FormatError):
            continue
        trajectories += 1
        program = Program(source=parsed.code, entry=parsed.entry)
        facts = ProgramFacts.of(program)
        for state, _ in parsed.steps:
            if not state.stack or state.line is None:
                continue
            stacks += 1
            automaton = Stack(functions=frozenset(f.encode() for f in facts.functions),
                              lines=frozenset(str(n).encode() for n in facts.lines),
                              final_line=str(state.line).encode(), facts=facts)
            text = fmt._json([[f.function, f.line] for f in state.stack])
            fed = automaton.feed(text.encode())
            if fed is None or not fed.complete:
                refused.append(f"{parsed.entry or ''}: line {state.line}, {text}")
    print(f"{stacks} stacks in {trajectories} trajectories of {data} ({split}); refused: {len(refused)}")
    for item in refused[:20]:
        print("  ", item)


if __name__ == "__main__":
    main()
