"""Compare ensembles (members and weights) fast: greedy next-state exact match estimated teacher-forced.

    python scripts/teacher_forced_proxy.py --model model_backend/checkpoints/default --data data_out/v2b \\
        --limit 600 --add medium4=runs/medft5/final --weights "1,1,1,1,0;1,1,1,1,1"

Members: those of `--model` (an ensemble directory, or one model directory) in order, then each `--add
NAME=DIR`. Each `--weights` vector (separated by ';') gives one weight per member, 0 to leave one out;
the default is the ensemble's own weights (0 for added members). For each vector it prints the estimated
exact match over all transitions, step_into, step_over and both. See model_backend/eval/teacher_forced.py
for how, and for how far the estimate is from a decode; `--check ERRORS.jsonl` compares the first
vector's verdicts with an `ndb eval next-state --errors` file of the same model on the same data.
Members' log-probabilities are cached in `--cache` (about a minute per member and 600 trajectories).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

from model_backend.engine.ensemble import EnsembleSpec, is_ensemble
from model_backend.engine.neural import LoadedModel
from model_backend.eval.teacher_forced import Scorer, first_records, member_choices, replay


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="an ensemble or model directory")
    ap.add_argument("--add", action="append", default=[], help="NAME=DIR: one more member (same tokenizer)")
    ap.add_argument("--data", required=True)
    ap.add_argument("--split", default="heldout")
    ap.add_argument("--limit", type=int, default=600)
    ap.add_argument("--weights", default="", help='weight vectors, e.g. "1,1,1;1,0,1"')
    ap.add_argument("--cache", default="/tmp/ndb-teacher-forced")
    ap.add_argument("--check", default="", help="an `ndb eval next-state --errors` file to compare with")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)

    if is_ensemble(args.model):
        spec = EnsembleSpec.read(args.model)
        members = [(m.name, m) for m in spec.members]
        default = list(spec.weights)
    else:
        members, default = [(Path(args.model).name, Path(args.model))], [1.0]
    for extra in args.add:
        name, _, path = extra.partition("=")
        members.append((name, Path(path)))
        default.append(0.0)
    vocab = LoadedModel.load(members[0][1]).vocabulary

    began = time.perf_counter()
    rep = replay(vocab, first_records(args.data, args.split, args.limit))
    print(f"{len(rep.transitions)} transitions, {len(rep.targets)} choices, "
          f"{sum(not t.producible for t in rep.transitions)} the grammar or tokenizer cannot produce "
          f"({time.perf_counter() - began:.0f} s)", file=sys.stderr)
    tables = [member_choices(path, rep, Path(args.cache), log=lambda s: print(s, file=sys.stderr))
              for _, path in members]
    scorer = Scorer(rep, tables, vocab)
    vectors = [[float(x) for x in v.split(",")] for v in args.weights.split(";")] if args.weights else [default]
    for number, weights in enumerate(vectors):
        if len(weights) != len(members) or not any(weights):
            sys.exit(f"{weights}: give one weight per member ({', '.join(n for n, _ in members)}), not all 0")
        scores = scorer.score(weights)
        shown = {"all": "all", "action:step_into": "step_into", "action:step_over": "step_over", "into+over": "into+over"}
        line = "  ".join(f"{label} {scores.table[k][0]:.1%}" for k, label in shown.items() if k in scores.table)
        print(f"{' '.join(f'{n}={w:g}' for (n, _), w in zip(members, weights, strict=True))}: {line}", flush=True)
        if number == 0 and args.check:
            wrong = {(e["trajectory"], e["transition"]) for e in map(json.loads, Path(args.check).read_text().splitlines())}
            agree = sum((key in wrong) != ok for key, ok in scores.right.items())
            optimistic = sum(ok and key in wrong for key, ok in scores.right.items())
            print(f"  against {args.check}: same verdict on {agree}/{len(scores.right)} transitions; "
                  f"right here but wrong there: {optimistic}; wrong here but right there: "
                  f"{len(scores.right) - agree - optimistic}")


if __name__ == "__main__":
    main()
