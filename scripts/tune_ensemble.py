"""Score ways of combining an ensemble's members, teacher-forced, on held-out trajectories kept apart from
the ones `ndb eval next-state --limit 600` reports (by default trajectories 1000 and after of the held-out
shard; in data_out/v2 they share no program with the first 600).

    python scripts/tune_ensemble.py model_backend/checkpoints/default --data data_out/v2 --skip 1000

For each combination it prints the mean loss per predicted-state token and the share of predicted frames
whose every token is the combination's argmax (teacher-forced, no grammar: a proxy for greedy exact
match that costs one forward pass per member instead of a decode). Combinations:
- "logits a": argmax of (1 - a) * z1 + a * z2 on the raw logits. The weighted mean of log-softmaxes that
  the engine decodes with picks the same tokens as this with a = w2 / (w1 + w2), whatever temperatures
  the members would get, because log-softmax only shifts a position's logits by a constant; so for
  greedy decoding a is the only free number. Its loss is that of the softmax of this mix.
- "probs a": the mixture (1 - a) * p1 + a * p2, which trusts whichever member is sure.
Two members only.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import torch
from transformers import AutoTokenizer, LlamaForCausalLM

from model_backend.engine.ensemble import EnsembleSpec, is_ensemble
from model_backend.model import train_data


def frame_runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """[start, end) of every run of trained positions: one predicted frame each."""
    runs, start = [], None
    for i, m in enumerate(mask):
        if m and start is None:
            start = i
        elif not m and start is not None:
            runs.append((start, i))
            start = None
    if start is not None:
        runs.append((start, len(mask)))
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ensemble", help="an ensemble directory (ensemble.json) with two members")
    parser.add_argument("--data", default="data_out/v2")
    parser.add_argument("--skip", type=int, default=1000, help="held-out trajectories left to the reported evaluation")
    parser.add_argument("--limit", type=int, default=None, help="at most this many trajectories after --skip")
    parser.add_argument("--mixes", default="0.2,0.3,0.4,0.5,0.6,0.7,0.8")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    if not is_ensemble(args.ensemble):
        parser.error(f"{args.ensemble} is not an ensemble directory")
    spec = EnsembleSpec.read(args.ensemble)
    if len(spec.members) != 2:
        parser.error("two members only")
    tokenizer = AutoTokenizer.from_pretrained(args.ensemble)
    held = train_data.tokenize_split(train_data.find_shards(args.data, "heldout"), tokenizer, 2048, progress=False)
    stop = len(held) if args.limit is None else min(len(held), args.skip + args.limit)
    indices = range(args.skip, stop)
    models = [LlamaForCausalLM.from_pretrained(str(m), dtype=torch.float32).eval() for m in spec.members]
    mixes = [float(a) for a in args.mixes.split(",")]
    kinds = [("logits", a) for a in mixes] + [("probs", a) for a in mixes]
    nll = {k: 0.0 for k in kinds}
    right_frames = {k: 0 for k in kinds}
    member_right = [0, 0]
    tokens = frames = 0
    with torch.inference_mode():
        for i in indices:
            ids, labels = held.example(i)
            x = torch.from_numpy(ids.astype(np.int64))[None]
            target = torch.from_numpy(labels[1:].astype(np.int64))
            keep = target != train_data.IGNORE
            if not keep.any():
                continue
            z = [m(input_ids=x).logits[0, :-1][keep].float() for m in models]
            y = target[keep]
            runs = frame_runs(keep.numpy())
            # positions of each frame inside the kept positions
            kept_index = np.cumsum(keep.numpy()) - 1
            frame_slices = [(int(kept_index[a]), int(kept_index[b - 1]) + 1) for a, b in runs]
            tokens += len(y)
            frames += len(frame_slices)
            for j, zj in enumerate(z):
                ok = (zj.argmax(-1) == y).numpy()
                member_right[j] += sum(bool(ok[a:b].all()) for a, b in frame_slices)
            lp = [zj.log_softmax(-1) for zj in z]
            for kind in kinds:
                mode, a = kind
                if mode == "logits":
                    mixed = ((1 - a) * z[0] + a * z[1]).log_softmax(-1)
                else:
                    mixed = torch.logaddexp(lp[0] + math.log(1 - a), lp[1] + math.log(a))
                nll[kind] -= float(mixed.gather(1, y[:, None]).sum())
                ok = (mixed.argmax(-1) == y).numpy()
                right_frames[kind] += sum(bool(ok[a:b].all()) for a, b in frame_slices)
    print(f"{len(indices)} trajectories ({args.skip}..{stop - 1}), {frames} frames, {tokens} predicted tokens")
    for j, member in enumerate(spec.members):
        print(f"member {member.name:12} frames all-argmax {100 * member_right[j] / frames:5.1f}%")
    for kind in kinds:
        mode, a = kind
        print(f"{mode:6} a={a:.2f}  loss {nll[kind] / tokens:.4f}  frames all-argmax {100 * right_frames[kind] / frames:5.1f}%")


if __name__ == "__main__":
    main()
