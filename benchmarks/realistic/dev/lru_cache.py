"""A least-recently-used cache on an OrderedDict in front of a slow lookup, with hit statistics."""
# entry: simulate_lookups(["a", "b", "a", "c", "d", "b", "e", "a", "c", "a"], 3)

from collections import OrderedDict
from dataclasses import dataclass, field


@dataclass
class LRUCache:
    capacity: int
    entries: OrderedDict = field(default_factory=OrderedDict)
    hits: int = 0
    misses: int = 0

    def get(self, key):
        if key not in self.entries:
            self.misses += 1
            return None
        self.entries.move_to_end(key)
        self.hits += 1
        return self.entries[key]

    def put(self, key, value):
        if key in self.entries:
            self.entries.move_to_end(key)
        self.entries[key] = value
        if len(self.entries) > self.capacity:
            evicted, _ = self.entries.popitem(last=False)
            return evicted
        return None

    def __repr__(self):
        return f"LRUCache({list(self.entries)}, hits={self.hits}, misses={self.misses})"


class SlowStore:
    def __init__(self):
        self.reads = 0

    def load(self, key):
        self.reads += 1
        return key.upper() * 2


def cached_lookup(cache, store, key):
    value = cache.get(key)
    if value is None:
        value = store.load(key)
        evicted = cache.put(key, value)
        if evicted is not None:
            print(f"evict {evicted}")
    return value


def simulate_lookups(keys, capacity):
    cache = LRUCache(capacity)
    store = SlowStore()
    values = [cached_lookup(cache, store, key) for key in keys]
    ratio = cache.hits / len(keys)
    print(cache)
    return {"values": values, "store_reads": store.reads, "hit_ratio": round(ratio, 2)}
