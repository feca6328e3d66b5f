"""A tiny checkpoint for the model worker tests, built from scratch in a temporary directory.

A tokenizer trained on a few sampled trajectories of corpus programs, and the "tiny" Llama shape
(head_dim 32, which vLLM's CPU backend accepts) trained for a few dozen steps on them, so that it writes
short, well-formed frames (a purely random model wanders to the frame length limit, which makes every
step slow). Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

PROGRAM_NAMES = ("early_return", "recursion_factorial", "while_loop")
TRAIN_STEPS = 60


def _programs() -> list[str]:
    from tests.support.corpus import corpus

    names = [c.name for c in corpus()]
    chosen = [n for n in PROGRAM_NAMES if n in names]
    return chosen or names[:3]


def build_tiny_checkpoint(out: Path, train_steps: int = TRAIN_STEPS, shape: str = "tiny") -> Path:
    import torch

    from model_backend.data import tokenizer as tokmod
    from model_backend.data.build import ShardInfo, SplitStats
    from model_backend.model.config import build_model
    from model_backend.sampler import sample_forward, sample_inverse, training_segments
    from tests.support.corpus import traced

    ckpt = out / "ckpt"
    if (ckpt / "config.json").exists():
        return ckpt
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    records = []
    for name in _programs():
        program, result = traced(name)
        for seed in range(4):
            inverse = seed == 3
            steps = (sample_inverse if inverse else sample_forward)(program, result, random.Random(seed))
            records.append({"segments": training_segments(program, steps, inverse)})
    for split in ("train", "heldout"):
        name = f"{split}-00000"
        raw = "".join(json.dumps(r) + "\n" for r in (records if split == "train" else records[:1])).encode()
        (data / f"{name}.jsonl").write_bytes(raw)
        info = ShardInfo(name=name, split=split, programs=len(records), sha256=hashlib.sha256(raw).hexdigest(),
                         bytes=len(raw), stats=SplitStats())
        (data / f"{name}.stats.json").write_text(info.model_dump_json())
    tok = tokmod.train_tokenizer(data, vocab_size=420, out_dir=out / "tok", measure_stats=False)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = build_model(shape, tok, seed=0)
        examples = []
        for record in records:
            ids, labels = tokmod.encode_segments(tok, record["segments"])
            examples.append((torch.tensor([ids[:768]]), torch.tensor([labels[:768]])))
        optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3)
        model.train()
        rng = random.Random(0)
        for _ in range(train_steps):
            inputs, targets = rng.choice(examples)
            loss = model(input_ids=inputs, labels=targets).loss
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
        model.eval()
    finally:
        torch.set_num_threads(threads)
    model.save_pretrained(ckpt)
    tok.save_pretrained(ckpt)
    return ckpt
