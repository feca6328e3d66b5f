"""Run-length encoding and decoding of strings, checked by a round trip."""
# entry: round_trip(["aaabccdddd", "abc", "zzzzzzzzzzzzy", ""])

import re
from itertools import groupby


def encode(text):
    parts = []
    for ch, run in groupby(text):
        length = len(list(run))
        parts.append(f"{length}{ch}" if length > 1 else ch)
    return "".join(parts)


def decode_pieces(encoded):
    for count, ch in re.findall(r"(\d*)(\D)", encoded):
        yield ch * int(count or 1)


def decode(encoded):
    return "".join(decode_pieces(encoded))


def ratio(text, encoded):
    if not text:
        return 1.0
    return round(len(encoded) / len(text), 2)


def round_trip(texts):
    results = []
    for text in texts:
        packed = encode(text)
        ok = decode(packed) == text
        results.append((packed, ratio(text, packed), ok))
        print(f"{text!r} -> {packed!r}")
    return results
