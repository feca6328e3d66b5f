"""Where input inference fails, read from one `ndb eval cruxeval --task input --json` file.

    python scripts/infer_reach.py RESULTS.json PROBLEMS.jsonl

For each failed problem: was the pick confirmed by a (wrong) forward run, and does any argument list the
search proposed or edited pass the harness's check (the assert, in the sandbox)? If one does but was not
picked, the model's forward run judged it wrong (or it was never checked). Prints those problems, then
the counts. For our own held-out problems; on CruxEval only to report, never to choose anything.
"""

from __future__ import annotations

import json
import sys

from model_backend.eval.cruxeval import load_problems, score


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as fh:
        results = json.load(fh)
    problems = {p["id"]: p for p in load_problems(sys.argv[2])}
    counts = {"failed": 0, "confirmed_wrong": 0, "a_proposal_passes": 0, "of_which_checked": 0}
    for result in results["results"]:
        if result["pass"]:
            continue
        counts["failed"] += 1
        counts["confirmed_wrong"] += bool(result.get("confirmed"))
        passing = [p for p in result.get("proposals", []) if score(problems[result["id"]], "input", p["arguments"])]
        if passing:
            counts["a_proposal_passes"] += 1
            counts["of_which_checked"] += any(p.get("predicted_return") is not None or p.get("problem") for p in passing)
            shown = [(p["arguments"][:40], p.get("predicted_return") or p.get("problem") or "not checked") for p in passing]
            print(result["id"], shown)
    print(counts)


if __name__ == "__main__":
    main()
