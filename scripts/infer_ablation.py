"""What each stage of input inference adds, read from one `ndb eval cruxeval --task input --json` file.

    python scripts/infer_ablation.py RESULTS.json PROBLEMS.jsonl

The stages share their draws (the proposals and their checks do not depend on the edits that follow),
so one run with edits also says what the same run would have picked
- with the greedy inverse jump alone (`--samples 0 --checks 0`),
- with the checks of the model's proposals only (`--edits 0`),
- with the edits (the run itself).
Each pick is scored as the harness scores it (the assert, in the sandbox). Also prints how often a
confirmed pick is wrong (the forward run was wrong) and where the passing picks came from.
"""

from __future__ import annotations

import json
import sys

from model_backend.eval.cruxeval import load_problems, score


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as fh:
        results = json.load(fh)
    problems = {p["id"]: p for p in load_problems(sys.argv[2])}
    stages = {"greedy jump": 0, "checked proposals": 0, "with edits": 0}
    confirmed = confirmed_wrong = from_edits = 0
    for result in results["results"]:
        problem, proposals = problems[result["id"]], result.get("proposals", [])
        greedy = next((p["arguments"] for p in proposals if p.get("greedy")), None)
        model = [p for p in proposals if p.get("edit_of") is None]
        checked = next((p["arguments"] for p in model if p.get("confirmed")), model[0]["arguments"] if model else None)
        stages["greedy jump"] += score(problem, "input", greedy)
        stages["checked proposals"] += score(problem, "input", checked)
        stages["with edits"] += result["pass"]
        if result.get("confirmed"):
            confirmed += 1
            confirmed_wrong += not result["pass"]
            pick = next(p for p in proposals if p["arguments"] == result["prediction"])
            from_edits += result["pass"] and pick.get("edit_of") is not None
    n = len(results["results"])
    for stage, passed in stages.items():
        print(f"{stage:>18}: {passed}/{n} ({100 * passed / max(1, n):.1f}%)")
    print(f"confirmed picks: {confirmed}, of which wrong: {confirmed_wrong}; passing picks found by an edit: {from_edits}")


if __name__ == "__main__":
    main()
