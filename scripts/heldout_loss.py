"""Held-out loss of several models on the same examples.

    python scripts/heldout_loss.py --data data_out/mix4 --seeds 2,3 runs/v8/final runs/v9/final
    python scripts/heldout_loss.py --data data_out/s99 --by-source runs/medft/final small8/

Default: on the subsets `ndb train` checks during a run, so that runs with different `--seed`s (each
checks its own random subset) can be compared on the same examples. For each seed: the same
`--eval-examples` held-out examples, in the same length-sorted batches, and the same loss (mean
cross-entropy per predicted-state token) as `objective.evaluate` computes at `--eval-every`.

`--by-source`: on every held-out trajectory instead, one at a time, with the loss per kind of program
(gen, script, humaneval, algorithms) and over all; a build that no model was trained on (a new
`--seed`) then compares models that saw different builds on equal terms.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

import torch
from accelerate import Accelerator
from transformers import AutoTokenizer, LlamaForCausalLM

from model_backend.data.tokenizer import encode_segments
from model_backend.model import objective, train_data
from model_backend.model.config import special_token_ids


def loss_by_source(models: dict[str, LlamaForCausalLM], tokenizer: object, data: str,
                   seq_len: int) -> dict[str, dict[str, float]]:
    """source kind -> model -> summed loss, and "tokens" -> predicted-state tokens, over every held-out record."""
    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for path in train_data.find_shards(data, "heldout"):
        for line in Path(path).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            record = json.loads(line)
            ids, labels = encode_segments(tokenizer, [(str(t), bool(b)) for t, b in record["segments"]])
            x = torch.tensor([ids[:seq_len]])
            target = torch.tensor(labels[1:seq_len])
            keep = target != train_data.IGNORE
            if not keep.any():
                continue
            kind = str(record.get("source_kind", "program")).split(":")[0]
            for name, model in models.items():
                logprobs = model(input_ids=x).logits[0, :-1][keep].float().log_softmax(-1)
                totals[kind][name] -= float(logprobs.gather(1, target[keep][:, None]).sum())
            totals[kind]["tokens"] += int(keep.sum())
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--data", required=True, help="a dataset (or mix) directory with heldout shards")
    parser.add_argument("--tokenizer", help="default: DATA/tokenizer")
    parser.add_argument("--seeds", default="0", help="comma-separated --seed values of the runs")
    parser.add_argument("--examples", type=int, default=96, help="the runs' --eval-examples")
    parser.add_argument("--batch-tokens", type=int, default=8192)
    parser.add_argument("--seq-len", type=int, default=1024)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--by-source", action="store_true", help="every held-out trajectory, per kind of program")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer or f"{args.data}/tokenizer")
    if args.by_source:
        models = {path: LlamaForCausalLM.from_pretrained(path, dtype=torch.float32).eval() for path in args.models}
        with torch.inference_mode():
            totals = loss_by_source(models, tokenizer, args.data, args.seq_len)
        overall: dict[str, float] = defaultdict(float)
        for kind in sorted(totals):
            for key, value in totals[kind].items():
                overall[key] += value
        for kind, sums in [*sorted(totals.items()), ("all", overall)]:
            losses = "  ".join(f"{path} {sums[path] / sums['tokens']:.4f}" for path in args.models)
            print(f"{kind:11} {int(sums['tokens']):7} tokens  {losses}")
        return
    held = train_data.tokenize_split(train_data.find_shards(args.data, "heldout"), tokenizer, args.seq_len, progress=False)
    pad_id = int(special_token_ids(tokenizer)["pad_token_id"])
    accelerator = Accelerator(cpu=True)
    loss_models = {path: objective.CausalLMLoss(LlamaForCausalLM.from_pretrained(path)) for path in args.models}
    for seed in (int(s) for s in args.seeds.split(",")):
        batches = objective.check_batches(held, args.examples, args.batch_tokens, None, seed)
        for path, loss_model in loss_models.items():
            with torch.no_grad():
                loss = objective.evaluate(loss_model, held, batches, pad_id, accelerator)
            print(f"seed {seed}  {path}  held-out loss {loss:.4f}")


if __name__ == "__main__":
    main()
