"""Keep the training trajectories a model gets wrong: a dataset of its hard examples.

    python scripts/mine_hard.py --model runs/medft5/final --data data_out/v61 --out data_out/hard61

Every trajectory of the split is scored teacher-forced (model_backend/eval/teacher_forced.py: one forward
pass each, the grammar applied) and those with at least one frame that greedy decoding would get wrong
are written to `--out` as hand-made shards (`train-*.jsonl`, which `ndb train` reads as they are), with
the source's held-out shards linked beside them. On this CPU a fine-tune sees a few million tokens per
hour; this spends them where the model is still wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from model_backend.data.build import shard_files
from model_backend.engine.neural import LoadedModel
from model_backend.eval.teacher_forced import Scorer, first_records, member_choices, replay

PER_SHARD = 2000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="one model directory")
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--limit", type=int, default=None, help="the first N trajectories only")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    vocab = LoadedModel.load(args.model).vocabulary
    records = first_records(args.data, "train", args.limit)
    rep = replay(vocab, records)
    scores = Scorer(rep, [member_choices(args.model, rep, log=lambda s: print(s, file=sys.stderr))], vocab).score([1.0])
    hard = {trajectory for (trajectory, _), ok in scores.right.items() if not ok}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kept = [json.dumps(records[number], ensure_ascii=False) + "\n" for number in sorted(hard)]
    for start in range(0, len(kept), PER_SHARD):
        (out / f"train-{start // PER_SHARD:05d}.jsonl").write_text("".join(kept[start:start + PER_SHARD]), encoding="utf-8")
    for shard in shard_files(args.data, "heldout"):
        for path in (shard, shard.with_suffix(".stats.json")):
            link = out / path.name
            if not link.exists():
                link.symlink_to(path.resolve())
    frames = len(scores.right)
    wrong = sum(not ok for ok in scores.right.values())
    print(f"{args.data}: {len(rep.sequences)} trajectories, {frames} frames, {wrong} wrong ({wrong / max(1, frames):.1%}); "
          f"kept {len(kept)} trajectories in {out}")


if __name__ == "__main__":
    main()
