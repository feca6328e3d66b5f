"""Export the weights of a training checkpoint (a run's `last/model.safetensors`, or a copy of it taken
while the run went on) or of a model directory as a loadable model directory, like a run's `final/`.

    python scripts/export_checkpoint.py runs/v12_tail/snap-1763859600.safetensors --like runs/v12/final --out runs/v12_tail/s1
    python scripts/export_checkpoint.py runs/medft/final --like runs/medft/final --out runs/medft_bf16 --export-dtype bfloat16

`--like` names a model directory of the same shape and tokenizer: its config.json and tokenizer files
are used. The exported directory can be evaluated, or averaged with `ndb average`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from safetensors.torch import load_file
from transformers import LlamaConfig, LlamaForCausalLM

from model_backend.model.average import export_with_tokenizer_of
from model_backend.model.export import read_weights, unwrap_checkpoint_weights


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("weights", type=Path, help="a checkpoint's model.safetensors, or a model directory")
    parser.add_argument("--like", type=Path, required=True, help="a model directory of the same shape and tokenizer")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--export-dtype", default="float32", choices=("float32", "bfloat16"),
                        help="bfloat16 halves the files (the shipped members are stored so)")
    args = parser.parse_args()
    raw = read_weights(args.weights) if args.weights.is_dir() else load_file(str(args.weights))
    weights = unwrap_checkpoint_weights({k: v.float() for k, v in raw.items()})
    model = LlamaForCausalLM(LlamaConfig.from_pretrained(args.like))
    model.load_state_dict(weights, strict=True)
    log_path = args.like / "training_log.json"
    log = json.loads(log_path.read_text()) if log_path.is_file() else {}
    log = {k: v for k, v in log.items() if k not in ("records", "summary", "average")}
    log["exported_checkpoint"] = str(args.weights)
    export_with_tokenizer_of(args.like, model, args.out, log, args.export_dtype)
    print(f"{args.weights} -> {args.out}")


if __name__ == "__main__":
    main()
