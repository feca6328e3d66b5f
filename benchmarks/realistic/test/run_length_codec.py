"""Run-length encoding and decoding of strings, with a round-trip check."""
# entry: roundtrip(["aaabccddddd", "abc", "zzzzzzzzzzzzy"])
import re
from itertools import groupby

TOKEN = re.compile(r"(\d+)(\D)")


def encode(text):
    parts = []
    for char, run in groupby(text):
        count = len(list(run))
        parts.append(f"{count}{char}")
    return "".join(parts)


def decode(encoded):
    pieces = []
    for count, char in TOKEN.findall(encoded):
        pieces.append(char * int(count))
    return "".join(pieces)


def ratio(original, encoded):
    if not original:
        return 1.0
    return round(len(encoded) / len(original), 2)


def roundtrip(samples):
    report = []
    for text in samples:
        packed = encode(text)
        restored = decode(packed)
        if restored != text:
            raise ValueError(f"round trip failed for {text!r}")
        report.append((packed, ratio(text, packed)))
    best = min(report, key=lambda item: item[1])
    print(f"best compression: {best[0]} at {best[1]}")
    return report
