"""Huffman coding: build the code tree with heapq, encode a message to bits and decode it back."""
# entry: compress("abracadabra alakazam")
import heapq
from collections import Counter
from dataclasses import dataclass
from itertools import count


@dataclass
class Leaf:
    symbol: str
    weight: int


@dataclass
class Node:
    left: object
    right: object
    weight: int


def build_tree(text):
    tie_breaker = count()
    heap = [(weight, next(tie_breaker), Leaf(symbol, weight)) for symbol, weight in sorted(Counter(text).items())]
    heapq.heapify(heap)
    if len(heap) == 1:
        weight, _, only = heap[0]
        return Node(only, None, weight)
    while len(heap) > 1:
        w1, _, first = heapq.heappop(heap)
        w2, _, second = heapq.heappop(heap)
        heapq.heappush(heap, (w1 + w2, next(tie_breaker), Node(first, second, w1 + w2)))
    return heap[0][2]


def assign_codes(tree, prefix="", table=None):
    if table is None:
        table = {}
    if isinstance(tree, Leaf):
        table[tree.symbol] = prefix or "0"
        return table
    assign_codes(tree.left, prefix + "0", table)
    if tree.right is not None:
        assign_codes(tree.right, prefix + "1", table)
    return table


def encode(text, table):
    return "".join(table[symbol] for symbol in text)


def decode(bits, tree):
    out = []
    node = tree
    for bit in bits:
        node = node.left if bit == "0" else node.right
        if isinstance(node, Leaf):
            out.append(node.symbol)
            node = tree
    return "".join(out)


def compress(text):
    tree = build_tree(text)
    table = assign_codes(tree)
    bits = encode(text, table)
    restored = decode(bits, tree)
    assert restored == text, "decoding did not restore the text"
    for symbol in sorted(table, key=lambda s: (len(table[s]), s)):
        print(f"{symbol!r}: {table[symbol]}")
    saving = 1 - len(bits) / (8 * len(text))
    return len(bits), f"{saving:.1%}", bits[:24]
