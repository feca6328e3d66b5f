"""Drafts of a frame's next tokens, taken from text the session has already seen (prompt lookup).

A step changes little of a state, so a new frame mostly repeats text that is already there: the stack
of the frame before it, the locals it carries over, a caller's locals on a return (in a state of the
history, not in the context). `propose` finds the last few tokens of the context earlier in the context,
then in those references, and offers the tokens that followed them.

The transformers engine feeds a draft with the tokens that wait for the next forward pass, and keeps
the logits after each of them (engine/neural.py, `_logits_steps`). The decoder still chooses every token
from the model's logits at its own position, so a draft saves the passes of the tokens it guessed and
changes no choice: the logits of a wider pass equal the one-token pass's up to float rounding.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

DRAFT_TOKENS = 16  # tokens a draft offers at most: docs/benchmarks.md, "Drafts from seen text"
MATCH_LENGTHS = (3, 2)  # how many of the context's last tokens must match, longest tried first
_WIDTH = array("I").itemsize  # bytes per token id in the packed search text


def pack(ids: Sequence[int]) -> bytes:
    """Token ids as bytes, for searching with bytes.rfind (one fixed-width item per id)."""
    return array("I", ids).tobytes()


def _follows(haystack: bytes, needle: bytes, end: int, k: int) -> list[int]:
    """Up to `k` ids after the latest whole-id occurrence of `needle` that ends at or before `end`
    (byte offsets) and has at least one id after it."""
    limit = min(end, len(haystack) - _WIDTH)
    found = haystack.rfind(needle, 0, limit)
    while found >= 0 and found % _WIDTH:
        found = haystack.rfind(needle, 0, found + len(needle) - 1)
    if found < 0:
        return []
    after = found + len(needle)
    return array("I", haystack[after:after + k * _WIDTH]).tolist()


def propose(context: Sequence[int], start: int, references: Sequence[bytes], k: int = DRAFT_TOKENS) -> list[int]:
    """Up to `k` tokens that may follow `context`: what followed the latest earlier occurrence of its last
    3 (else 2) tokens in context[start:], else in the first of `references` (packed, `pack`) that holds
    them. Empty when there is none or `k` < 1."""
    if k < 1:
        return []
    packed = pack(context[start:])
    for n in MATCH_LENGTHS:
        if len(context) - start < n:
            continue
        needle = pack(context[-n:])
        # In the context itself, an occurrence may not be the end: it must leave a token to offer.
        draft = _follows(packed, needle, len(packed) - _WIDTH, k) if len(context) - start > n else []
        if draft:
            return draft
        for reference in references:
            draft = _follows(reference, needle, len(reference), k)
            if draft:
                return draft
    return []
