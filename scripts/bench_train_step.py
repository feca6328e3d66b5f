"""Training-step throughput of a model shape on this machine, eager or with torch.compile.

    python scripts/bench_train_step.py eager|compile [--model small] [--threads 2]

Random tokens in the shapes a length-bucketed 8,192-token micro-batch takes (the first pass over each
shape is warm-up, and compilation, and is not counted), AdamW steps, the loss on the second half of
each row the way frames are trained. Prints tokens/s over three timed passes.
"""

from __future__ import annotations

import argparse
import time

import torch

from model_backend.data.tokenizer import load_tokenizer
from model_backend.model.config import build_model
from model_backend.model.objective import CausalLMLoss

SHAPES = [(16, 512), (32, 256), (8, 1024), (20, 400), (12, 680)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["eager", "compile"])
    parser.add_argument("--model", default="small")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--tokenizer", default="model_backend/checkpoints/default")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    tokenizer = load_tokenizer(args.tokenizer)
    model = build_model(args.model, tokenizer, seed=0)
    loss_model = CausalLMLoss(model)
    if args.mode == "compile":
        loss_model.compile(dynamic=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    vocab = model.config.vocab_size

    def step(rows: int, width: int) -> None:
        ids = torch.randint(40, vocab, (rows, width))
        mask = torch.ones_like(ids)
        mask[0, width - 10 :] = 0  # one padded row, as in a real micro-batch
        labels = ids.clone()
        labels[:, : width // 2] = -100
        loss, count = loss_model(ids, mask, labels)
        (loss / count).backward()
        optimizer.step()
        optimizer.zero_grad()

    began = time.perf_counter()
    for shape in SHAPES:
        step(*shape)
    print(f"warm-up (incl. compilation): {time.perf_counter() - began:.1f}s")
    began, tokens = time.perf_counter(), 0
    for _ in range(3):
        for rows, width in SHAPES:
            step(rows, width)
            tokens += rows * width
    print(f"{args.mode} {args.model}: {tokens / (time.perf_counter() - began):.0f} tokens/s")


if __name__ == "__main__":
    main()
