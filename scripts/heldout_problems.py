"""Input-prediction problems from a build's held-out programs, in CruxEval's JSONL format.

    python scripts/heldout_problems.py data_out/s99b docs/results/session27/s99b_problems.jsonl 200

For the first N distinct held-out programs whose entry calls a top-level `f` with literal arguments and
returns normally: the code, the entry's arguments (`input`) and the repr of f's return value (`output`,
from the real run in the sandbox). `ndb eval cruxeval --data FILE --task input` then measures input
inference on programs no model here was trained on, without touching CruxEval (which is for
evaluation only, never for choosing how the search works).
"""

from __future__ import annotations

import ast
import json
import sys

from model_backend import trace_format as fmt
from model_backend.data.build import iter_records, record_text
from model_backend.sandbox import run_trace


def main() -> None:
    data, out, limit = sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 200
    seen: set[str] = set()
    problems = []
    for record in iter_records(data, "heldout"):
        if len(problems) >= limit:
            break
        if record["program_id"] in seen:
            continue
        parsed = fmt.parse(record_text(record))
        if isinstance(parsed, fmt.FormatError) or not parsed.entry:
            continue
        if parsed.entry.endswith("(...)"):  # an input jump hides the arguments: take another record
            continue
        seen.add(record["program_id"])
        call = ast.parse(parsed.entry, mode="eval").body
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "f" and not call.keywords):
            continue
        try:
            [ast.literal_eval(a) for a in call.args]
        except ValueError:
            continue
        result = run_trace(parsed.program)
        returns = [e for e in result.events if e.event == "return" and e.depth == 0 and e.function == "f"]
        if result.exit != "normal" or not returns or returns[-1].value is None:
            continue
        arguments = ", ".join(ast.unparse(a) for a in call.args)
        problems.append({"id": f"{record['program_id']}", "code": parsed.code, "input": arguments,
                         "output": returns[-1].value})
    with open(out, "w", encoding="utf-8") as fh:
        fh.writelines(json.dumps(p) + "\n" for p in problems)
    print(f"{len(problems)} problems from {len(seen)} programs -> {out}")


if __name__ == "__main__":
    main()
