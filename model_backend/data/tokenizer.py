"""The model's tokenizer: byte-level BPE trained on the dataset's train shards, saved in HF format.

- Byte-level (GPT-2's byte-to-unicode alphabet is the initial alphabet): any text encodes, and
  `decode(encode(text)) == text` exactly (no normalizer, no prefix space, no cleanup on decode).
- Every special token of the trace format (`trace_format.SPECIAL_TOKENS`), plus `<|pad|>` and
  `<|endoftext|>`, is an added special token: one id each, matched before pre-tokenization, so the
  free text between them never merges across a token boundary. They get the first ids (0, 1, ...).
- Pre-tokenization (`PATTERN`, then byte-level mapping): words (letters and `_`) with an optional
  leading space; digits ONE BY ONE; runs of punctuation that may hold single spaces (`": "`, `", "`,
  `{"..": "..", "`), so JSON and code punctuation compress; newline + indentation runs. Single digits
  make line numbers and integers compositional: "17" is "1" "7" whatever the number, so values never
  seen in training tokenize like those that were. Measured on the data (docs/training.md, ## Data):
  GPT-2's regex 0.212 tokens/char, GPT-2 + single digits 0.224, this pattern 0.196.
- No post-processor: `encode(text)` adds nothing; a trajectory starts with `<|trace_context_start|>`.

Saved with `PreTrainedTokenizerFast.save_pretrained` (tokenizer.json, tokenizer_config.json, plus a
special_tokens_map.json), so `AutoTokenizer.from_pretrained(dir)` loads it offline.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, trainers

from model_backend.data.build import iter_records
from model_backend.trace_format import SPECIAL_TOKENS

PAD = "<|pad|>"
EOS = "<|endoftext|>"
ALL_SPECIAL_TOKENS: list[str] = [PAD, EOS, *SPECIAL_TOKENS]
IGNORE_INDEX = -100  # label of a token that carries no loss
_SPECIAL_SPLIT = re.compile("|".join(re.escape(t) for t in sorted(ALL_SPECIAL_TOKENS, key=len, reverse=True)))


#: Pre-tokenizer split (onig regex): words, single digits, punctuation runs with inner single spaces,
#: whitespace (a run before a word keeps its last space for the word, as GPT-2's).
PATTERN = r" ?[\p{L}_]+| ?\p{N}|(?: ?[^\s\p{L}\p{N}_]+)+ ?|\s+(?!\S)|\s+"
#: The same with digit runs kept whole (for comparison; `individual_digits=False`).
PATTERN_DIGIT_RUNS = PATTERN.replace(r" ?\p{N}|", r" ?\p{N}+|")


def new_tokenizer(individual_digits: bool = True) -> Tokenizer:
    """An untrained byte-level BPE tokenizer with the pre-tokenizer above (special tokens come with
    training)."""
    tok = Tokenizer(models.BPE())
    split = pre_tokenizers.Split(Regex(PATTERN if individual_digits else PATTERN_DIGIT_RUNS), behavior="isolated")
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [split, pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)]
    )
    tok.decoder = decoders.ByteLevel()
    return tok


def _pieces(texts: Iterable[str]) -> Iterator[str]:
    """Free text between special tokens: what BPE learns merges on (special tokens are atomic)."""
    for text in texts:
        for piece in _SPECIAL_SPLIT.split(text):
            if piece:
                yield piece


def train_texts(data_dir: str | Path, split: str = "train", max_chars: int | None = None) -> Iterator[str]:
    """The full text of each trajectory of a split, in shard order, up to about `max_chars` in all."""
    total = 0
    for record in iter_records(data_dir, split):
        text = "".join(piece for piece, _ in record["segments"])
        yield text
        total += len(text)
        if max_chars is not None and total >= max_chars:
            return


def train_tokenizer(
    data_dir: str | Path,
    vocab_size: int = 2048,
    out_dir: str | Path | None = None,
    individual_digits: bool = True,
    max_chars: int | None = None,
    min_frequency: int = 2,
    measure_stats: bool = True,
) -> Any:
    """Train on the train shards of `data_dir` (never held-out), save to `out_dir` (default
    `<data_dir>/tokenizer`) and return the loaded `PreTrainedTokenizerFast`.

    `max_chars` caps the training text (the first shards, in order). With `measure_stats`, token counts
    of both splits are written to `<out_dir>/stats.json` (see `measure`).
    """
    from transformers import PreTrainedTokenizerFast

    data = Path(data_dir)
    out = Path(out_dir) if out_dir is not None else data / "tokenizer"
    if vocab_size < 256 + len(ALL_SPECIAL_TOKENS):
        raise ValueError(f"vocab_size must be at least {256 + len(ALL_SPECIAL_TOKENS)} (bytes + special tokens)")
    if not any(True for _ in iter_records(data, "train")):
        raise ValueError(f"no complete train shards in {data}")
    start = time.monotonic()
    tok = new_tokenizer(individual_digits)
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=min_frequency,
        special_tokens=ALL_SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_pieces(train_texts(data, "train", max_chars)), trainer=trainer)
    tok.add_special_tokens(ALL_SPECIAL_TOKENS)  # already in the vocab: marks them special for matching
    train_s = time.monotonic() - start

    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        pad_token=PAD,
        eos_token=EOS,
        unk_token=None,
        extra_special_tokens=list(SPECIAL_TOKENS),
        clean_up_tokenization_spaces=False,
        add_prefix_space=False,
    )
    out.mkdir(parents=True, exist_ok=True)
    fast.save_pretrained(str(out))
    special_map = {"pad_token": PAD, "eos_token": EOS, "additional_special_tokens": list(SPECIAL_TOKENS)}
    (out / "special_tokens_map.json").write_text(json.dumps(special_map, indent=2) + "\n", encoding="utf-8")
    loaded = load_tokenizer(out)
    if measure_stats:
        stats: dict[str, Any] = {
            "vocab_size": len(loaded),
            "individual_digits": individual_digits,
            "train_seconds": round(train_s, 1),
            "splits": {split: measure(loaded, data, split) for split in ("train", "heldout")},
        }
        (out / "stats.json").write_text(json.dumps(stats, indent=2) + "\n", encoding="utf-8")
    return loaded


def load_tokenizer(path: str | Path) -> Any:
    """`AutoTokenizer.from_pretrained(path)`, offline."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path), local_files_only=True)


def _backend(tokenizer: Any) -> Tokenizer:
    """The `tokenizers.Tokenizer` behind a HF fast tokenizer (or the object itself)."""
    if isinstance(tokenizer, Tokenizer):
        return tokenizer
    return tokenizer.backend_tokenizer


def encode_segments(
    tokenizer: Any, segments: Sequence[Sequence[Any]], add_eos: bool = False
) -> tuple[list[int], list[int]]:
    """(input_ids, labels) of a record's `segments` ([text, trained] pairs): each piece is encoded on its
    own and the results concatenated; labels are the ids on trained pieces and -100 elsewhere.
    Pieces begin and end at special tokens, so this equals encoding the whole text (tested).
    `add_eos` appends `<|endoftext|>` (with label -100) to separate packed trajectories."""
    backend = _backend(tokenizer)
    encodings = backend.encode_batch([str(text) for text, _ in segments], add_special_tokens=False)
    input_ids: list[int] = []
    labels: list[int] = []
    for (_, trained), enc in zip(segments, encodings, strict=True):
        input_ids.extend(enc.ids)
        labels.extend(enc.ids if trained else [IGNORE_INDEX] * len(enc.ids))
    if add_eos:
        eos = backend.token_to_id(EOS)
        if eos is None:
            raise ValueError(f"the tokenizer has no {EOS}")
        input_ids.append(eos)
        labels.append(IGNORE_INDEX)
    return input_ids, labels


def measure(tokenizer: Any, data_dir: str | Path, split: str = "train", batch: int = 256) -> dict[str, Any]:
    """Token and character counts of a split: totals, trained (loss-bearing) parts, tokens per
    character, mean tokens per trajectory, longest trajectory."""
    backend = _backend(tokenizer)
    n = chars = tokens = trained_chars = trained_tokens = longest = 0
    pending: list[list[Any]] = []

    def flush() -> None:
        nonlocal tokens, trained_tokens, longest
        flat = [str(text) for segments in pending for text, _ in segments]
        encodings = backend.encode_batch(flat, add_special_tokens=False)
        k = 0
        for segments in pending:
            length = 0
            for _, trained in segments:
                count = len(encodings[k].ids)
                length += count
                trained_tokens += count if trained else 0
                k += 1
            tokens += length
            longest = max(longest, length)
        pending.clear()

    for record in iter_records(data_dir, split):
        segments = record["segments"]
        n += 1
        chars += sum(len(t) for t, _ in segments)
        trained_chars += sum(len(t) for t, trained in segments if trained)
        pending.append(segments)
        if len(pending) >= batch:
            flush()
    if pending:
        flush()
    return {
        "trajectories": n,
        "chars": chars,
        "tokens": tokens,
        "trained_chars": trained_chars,
        "trained_tokens": trained_tokens,
        "tokens_per_char": round(tokens / chars, 4) if chars else 0.0,
        "mean_tokens_per_trajectory": round(tokens / n, 1) if n else 0.0,
        "max_tokens_per_trajectory": longest,
    }
