"""The training data: shards of records tokenized into flat arrays (cached per shard under OUT/cache/),
and micro-batches of examples of similar length, right-padded, with labels IGNORE where no loss is taken."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from model_backend.engine.ensemble import tokenizer_files
from model_backend.model.train_config import CACHE, TrainConfig

IGNORE = -100


@dataclass
class TokenizedSplit:
    """Examples as one flat token array plus offsets (cheap to cache and to slice)."""

    ids: np.ndarray  # int32, all examples concatenated
    labels: np.ndarray  # int32, IGNORE where no loss
    offsets: np.ndarray  # int64, len n + 1
    stats: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def lengths(self) -> np.ndarray:
        return np.diff(self.offsets)

    def example(self, i: int) -> tuple[np.ndarray, np.ndarray]:
        a, b = self.offsets[i], self.offsets[i + 1]
        return self.ids[a:b], self.labels[a:b]


def find_shards(data_dir: str | Path, split: str) -> list[Path]:
    """The split's complete shards (the builder's `shard_files`: a shard is complete once its stats file
    is written); hand-made `{split}-*.jsonl` files without stats files are taken as they are."""
    from model_backend.data.build import shard_files

    complete = shard_files(data_dir, split)
    if complete:
        return complete
    return sorted(p for p in Path(data_dir).glob(f"{split}-*.jsonl") if not p.with_suffix(".stats.json").exists())


def iter_segments(paths: list[Path]) -> Iterator[list[tuple[str, bool]]]:
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            for line_no, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                    segments = [(str(text), bool(trained)) for text, trained in record["segments"]]
                except (ValueError, KeyError, TypeError) as exc:
                    raise ValueError(f"{path}:{line_no}: not a record with 'segments': {exc}") from exc
                yield segments


def _file_key(paths: list[Path], extra: str) -> str:
    h = hashlib.sha1(extra.encode())
    for p in paths:
        st = p.stat()
        h.update(f"{p.resolve()}|{st.st_size}|{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def tokenizer_key(tokenizer_dir: str | Path) -> str:
    h = hashlib.sha1()
    for p in tokenizer_files(tokenizer_dir):
        h.update(p.name.encode())
        h.update(p.read_bytes())
    return h.hexdigest()[:16]


def tokenize_split(
    paths: list[Path],
    tokenizer: Any,
    seq_len: int,
    long_examples: str = "truncate",
    max_tokens: int | None = None,
    progress: bool = True,
    desc: str = "tokenize",
) -> TokenizedSplit:
    """Tokenize every record with encode_segments; cut (or drop) examples longer than seq_len.

    Examples left without any trained token are dropped (they carry no loss).
    """
    from tqdm.auto import tqdm

    from model_backend.data.tokenizer import encode_segments

    ids_parts: list[np.ndarray] = []
    label_parts: list[np.ndarray] = []
    offsets = [0]
    stats = {"records": 0, "truncated": 0, "dropped_long": 0, "dropped_untrained": 0, "tokens": 0, "trained_tokens": 0}
    bar = tqdm(desc=desc, unit=" ex", disable=not progress, mininterval=1.0, file=sys.stderr)
    for segments in iter_segments(paths):
        stats["records"] += 1
        bar.update(1)
        input_ids, labels = encode_segments(tokenizer, segments)
        ids_arr = np.asarray(input_ids, dtype=np.int32)
        lab_arr = np.asarray(labels, dtype=np.int32)
        if ids_arr.shape != lab_arr.shape:
            raise ValueError("encode_segments returned input_ids and labels of different lengths")
        if len(ids_arr) > seq_len:
            if long_examples == "drop":
                stats["dropped_long"] += 1
                continue
            ids_arr, lab_arr = ids_arr[:seq_len], lab_arr[:seq_len]
            stats["truncated"] += 1
        if len(ids_arr) < 2 or not (lab_arr[1:] != IGNORE).any():  # the first position is never predicted
            stats["dropped_untrained"] += 1
            continue
        ids_parts.append(ids_arr)
        label_parts.append(lab_arr)
        offsets.append(offsets[-1] + len(ids_arr))
        stats["tokens"] += len(ids_arr)
        stats["trained_tokens"] += int((lab_arr[1:] != IGNORE).sum())
        if max_tokens is not None and stats["tokens"] >= max_tokens:
            break
    bar.close()
    empty = np.zeros(0, dtype=np.int32)
    return TokenizedSplit(
        ids=np.concatenate(ids_parts) if ids_parts else empty,
        labels=np.concatenate(label_parts) if label_parts else empty,
        offsets=np.asarray(offsets, dtype=np.int64),
        stats=stats,
    )


def merge_splits(parts: list[TokenizedSplit]) -> TokenizedSplit:
    """The parts' examples one after another, in order (offsets shifted, stats summed)."""
    offsets = [np.zeros(1, dtype=np.int64)]
    base = 0
    for part in parts:
        offsets.append(part.offsets[1:] + base)
        base += int(part.offsets[-1])
    stats: dict[str, int] = {}
    for part in parts:
        for k, v in part.stats.items():
            stats[k] = stats.get(k, 0) + v
    empty = np.zeros(0, dtype=np.int32)
    return TokenizedSplit(
        ids=np.concatenate([q.ids for q in parts]) if parts else empty,
        labels=np.concatenate([q.labels for q in parts]) if parts else empty,
        offsets=np.concatenate(offsets),
        stats=stats,
    )


_WORKER_TOKENIZERS: dict[str, Any] = {}


def _tokenize_shard(job: tuple[str, str, int, str]) -> TokenizedSplit:
    """One shard in a worker process: (shard path, tokenizer dir, seq_len, long_examples)."""
    path, tokenizer_dir, seq_len, long_examples = job
    if tokenizer_dir not in _WORKER_TOKENIZERS:
        from transformers import AutoTokenizer

        _WORKER_TOKENIZERS[tokenizer_dir] = AutoTokenizer.from_pretrained(tokenizer_dir)
    return tokenize_split([Path(path)], _WORKER_TOKENIZERS[tokenizer_dir], seq_len, long_examples, progress=False)


def _save_split(data: TokenizedSplit, cache: Path) -> None:
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_name(cache.name + ".tmp.npz")
    np.savez(tmp, ids=data.ids, labels=data.labels, offsets=data.offsets, stats=json.dumps(data.stats))
    os.replace(tmp, cache)


def _load_cached(cache: Path) -> TokenizedSplit:
    with np.load(cache) as z:
        return TokenizedSplit(ids=z["ids"], labels=z["labels"], offsets=z["offsets"], stats=json.loads(str(z["stats"])))


def load_split(
    cfg: TrainConfig, split: str, tokenizer: Any, tok_key: str, is_main: bool, max_tokens: int | None = None
) -> TokenizedSplit | None:
    """Tokenized split from OUT/cache/, one file per shard, so that shards added to the data directory
    between resumes are the only ones tokenized. Missing shards are tokenized in parallel (one process
    per shard, up to `cfg.threads` or all cores): on a GPU machine this would otherwise be minutes of
    one busy core. With `max_tokens` the split is read in order until the limit, as one cache file."""
    paths = find_shards(cfg.data_dir, split)
    if not paths:
        return None
    rules = f"{tok_key}|{cfg.seq_len}|{cfg.long_examples}"
    if max_tokens is not None:
        cache = Path(cfg.out_dir) / CACHE / f"{split}-{_file_key(paths, f'{rules}|{max_tokens}')}.npz"
        if cache.exists():
            return _load_cached(cache)
        data = tokenize_split(paths, tokenizer, cfg.seq_len, cfg.long_examples, max_tokens,
                              progress=cfg.progress and is_main, desc=f"tokenize {split}")
        if is_main:
            _save_split(data, cache)
        return data
    caches = [Path(cfg.out_dir) / CACHE / f"{p.stem}-{_file_key([p], rules)}.npz" for p in paths]
    parts: dict[int, TokenizedSplit] = {i: _load_cached(c) for i, c in enumerate(caches) if c.exists()}
    missing = [i for i in range(len(paths)) if i not in parts]
    workers = min(len(missing), cfg.threads or os.cpu_count() or 1)
    if missing:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(missing), desc=f"tokenize {split}", unit=" shard", disable=not (cfg.progress and is_main),
                   file=sys.stderr)
        if workers > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            jobs = [(str(paths[i]), str(cfg.tokenizer_dir), cfg.seq_len, cfg.long_examples) for i in missing]
            # spawn, not fork: the parent holds torch's and the tokenizer's threads (and maybe CUDA)
            with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
                for i, part in zip(missing, pool.map(_tokenize_shard, jobs), strict=True):
                    parts[i] = part
                    bar.update(1)
        else:
            for i in missing:
                parts[i] = tokenize_split([paths[i]], tokenizer, cfg.seq_len, cfg.long_examples, progress=False)
                bar.update(1)
        bar.close()
        if is_main:
            for i in missing:
                _save_split(parts[i], caches[i])
    return merge_splits([parts[i] for i in range(len(paths))])


def length_batches(
    lengths: np.ndarray, batch_tokens: int | None, batch_size: int | None, seed: int, epoch: int, chunk: int = 2048
) -> list[list[int]]:
    """Micro-batches of examples of similar length, in a random order fixed by (seed, epoch).

    Examples are shuffled, cut into chunks, sorted by length inside each chunk and grouped: at most
    `batch_size` examples, or at most `batch_tokens` padded tokens (an example longer than that alone).
    """
    rng = np.random.default_rng([seed, epoch])
    order = rng.permutation(len(lengths))
    batches: list[list[int]] = []
    for start in range(0, len(order), chunk):
        part = order[start : start + chunk]
        part = part[np.argsort(-lengths[part], kind="stable")]
        cur: list[int] = []
        cur_max = 0
        for i in part.tolist():
            n = int(lengths[i])
            full = (batch_size is not None and len(cur) >= batch_size) or (
                batch_size is None and batch_tokens is not None and max(cur_max, n) * (len(cur) + 1) > batch_tokens
            )
            if cur and full:
                batches.append(cur)
                cur, cur_max = [], 0
            cur.append(i)
            cur_max = max(cur_max, n)
        if cur:
            batches.append(cur)
    perm = rng.permutation(len(batches))
    return [batches[i] for i in perm]


class BatchStream:
    """Endless, reproducible sequence of micro-batches over epochs; its position is saved in checkpoints."""

    def __init__(self, lengths: np.ndarray, batch_tokens: int | None, batch_size: int | None, seed: int) -> None:
        self.lengths, self.batch_tokens, self.batch_size, self.seed = lengths, batch_tokens, batch_size, seed
        self.epoch, self.pos = 0, 0
        self._batches = self._make()

    def _make(self) -> list[list[int]]:
        return length_batches(self.lengths, self.batch_tokens, self.batch_size, self.seed, self.epoch)

    def next(self) -> list[int]:
        if self.pos >= len(self._batches):
            self.epoch, self.pos = self.epoch + 1, 0
            self._batches = self._make()
        batch = self._batches[self.pos]
        self.pos += 1
        return batch

    def state_dict(self) -> dict[str, int]:
        return {"epoch": self.epoch, "pos": self.pos}

    def load_state_dict(self, state: dict[str, int]) -> None:
        if state["epoch"] != self.epoch:
            self.epoch = state["epoch"]
            self._batches = self._make()
        self.pos = state["pos"]


def collate(data: TokenizedSplit, batch: list[int], pad_id: int) -> dict[str, torch.Tensor]:
    """Right-padded input_ids, attention_mask and labels (IGNORE on padding) for a micro-batch."""
    width = max(int(data.offsets[i + 1] - data.offsets[i]) for i in batch)
    ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
    labels = torch.full((len(batch), width), IGNORE, dtype=torch.long)
    mask = torch.zeros((len(batch), width), dtype=torch.long)
    for row, i in enumerate(batch):
        x, y = data.example(i)
        ids[row, : len(x)] = torch.from_numpy(x.astype(np.int64))
        labels[row, : len(y)] = torch.from_numpy(y.astype(np.int64))
        mask[row, : len(x)] = 1
    return {"input_ids": ids, "attention_mask": mask, "labels": labels}
