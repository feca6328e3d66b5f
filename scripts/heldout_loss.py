"""Held-out loss of several models on the subsets `ndb train` checks during a run, so that runs with
different `--seed`s (each checks its own random subset) can be compared on the same examples.

    python scripts/heldout_loss.py --data data_out/mix4 --seeds 2,3 runs/v8/final runs/v9/final

For each seed: the same `--eval-examples` held-out examples, in the same length-sorted batches, and the
same loss (mean cross-entropy per predicted-state token) as `train.evaluate` computes at `--eval-every`.
"""

from __future__ import annotations

import argparse

import torch
from accelerate import Accelerator
from transformers import AutoTokenizer, LlamaForCausalLM

from model_backend.model import train
from model_backend.model.config import special_token_ids


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
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    tokenizer = AutoTokenizer.from_pretrained(args.tokenizer or f"{args.data}/tokenizer")
    held = train.tokenize_split(train.find_shards(args.data, "heldout"), tokenizer, args.seq_len, progress=False)
    pad_id = int(special_token_ids(tokenizer)["pad_token_id"])
    accelerator = Accelerator(cpu=True)
    models = {path: train.CausalLMLoss(LlamaForCausalLM.from_pretrained(path)) for path in args.models}
    for seed in (int(s) for s in args.seeds.split(",")):
        batches = train.check_batches(held, args.examples, args.batch_tokens, None, seed)
        for path, loss_model in models.items():
            with torch.no_grad():
                loss = train.evaluate(loss_model, held, batches, pad_id, accelerator)
            print(f"seed {seed}  {path}  held-out loss {loss:.4f}")


if __name__ == "__main__":
    main()
