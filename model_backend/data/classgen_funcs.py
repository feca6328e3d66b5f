"""The function and standard-library parts of `classgen` programs: closures, decorators, generator
pipelines, collections (Counter, defaultdict, OrderedDict, deque), itertools, re, json, math, while
loops and f-string formatting. Each is a function `(Gen) -> Part`; `classgen_parts.PARTS` lists them."""

from __future__ import annotations

from model_backend.data.classgen_base import Gen, Part, fill, indent, record_class

# ---------------------------------------------------------------------------------------------------
# functions: closures, decorators, generators


def counters(g: Gen) -> Part:
    """Closures sharing state through nonlocal: a counter/accumulator factory."""
    make = g.name(["make_counter", "make_accumulator", "make_tally", "make_meter"])
    fn = g.name(["tally_values", "accumulate_all", "run_meters", "count_up"])
    variant = g.rng.randint(0, 2)
    if variant == 0:
        code = fill("""
            def $make(start=0):
                total = start
                calls = 0

                def add(x):
                    nonlocal total, calls
                    total += x
                    calls += 1
                    return total

                def stats():
                    return calls, total

                return add, stats


            def $fn(values):
                add, stats = $make($start)
                for v in values:
                    if v % 3 == 0:
                        continue
                    add(v)
                return stats()""", make=make, fn=fn, start=g.rng.randint(0, 10))
    elif variant == 1:
        code = fill("""
            def $make(step):
                count = 0

                def tick():
                    nonlocal count
                    count += step
                    return count
                return tick


            def $fn(values):
                ticks = [$make(v) for v in values[:2]]
                out = []
                for t in ticks:
                    t()
                    out.append(t())
                return out""", make=make, fn=fn)
    else:
        code = fill("""
            def $make(limit):
                seen = []

                def remember(x):
                    if len(seen) >= limit:
                        seen.pop(0)
                    seen.append(x)
                    return list(seen)
                return remember


            def $fn(values):
                remember = $make($lim)
                last = []
                for v in values:
                    last = remember(v * 2)
                return last""", make=make, fn=fn, lim=g.rng.randint(2, 3))
    return Part([code], f"{fn}($ARG)", "ints", g.pick(["counted", "tallies", "closed"]))


def decorated(g: Gen) -> Part:
    """A user decorator: call counting with nonlocal, memoization of a recursive function, a logging
    decorator writing into a module list, or a validating decorator factory."""
    variant = g.rng.randint(0, 3)
    deco = g.name(["counted", "memoize", "logged", "checked", "traced", "cached"])
    if variant == 0:
        fn = g.name(["weigh", "score_of", "cost_of"])
        drv = g.name(["weigh_all", "score_all", "price_all"])
        code = fill("""
            def $deco(func):
                calls = 0

                def wrapper(*args):
                    nonlocal calls
                    calls += 1
                    wrapper.calls = calls
                    return func(*args)
                wrapper.calls = 0
                return wrapper


            @$deco
            def $fn(x, factor=$f):
                return x * factor - 1


            def $drv(values):
                total = 0
                for v in values:
                    total += $fn(v)
                return total, $fn.calls""", deco=deco, fn=fn, f=g.rng.randint(2, 5), drv=drv)
        return Part([code], f"{drv}($ARG)", "ints", g.pick(["weighed", "scored"]))
    if variant == 1:
        fn = g.name(["fib", "ways", "stairs", "tiles"])
        drv = g.name(["count_ways", "sequence", "table_of"])
        rec = {"fib": "n if n < 2 else {f}(n - 1) + {f}(n - 2)", "ways": "1 if n < 2 else {f}(n - 1) + {f}(n - 2)",
               "stairs": "1 if n <= 1 else {f}(n - 1) + {f}(n - 2)",
               "tiles": "1 if n < 2 else {f}(n - 1) + 2 * {f}(n - 2)"}[fn if fn in ("fib", "ways", "stairs", "tiles") else "fib"]
        code = fill("""
            def $deco(func):
                cache = {}

                def wrapper(n):
                    if n not in cache:
                        cache[n] = func(n)
                    return cache[n]
                return wrapper


            @$deco
            def $fn(n):
                return $rec


            def $drv(n):
                return [$fn(i) for i in range(n + 3)]""", deco=deco, fn=fn, rec=rec.format(f=fn), drv=drv)
        return Part([code], f"{drv}($ARG)", "n", g.pick(["memo", "series"]))
    if variant == 2:
        log = g.name(["LOG", "CALLS", "HISTORY", "AUDIT"])
        fn1 = g.name(["normalize", "clean", "tidy"])
        fn2 = g.name(["shorten", "abbreviate", "squeeze"])
        drv = g.name(["prepare_names", "clean_all", "format_labels"])
        code = fill("""
            def $deco(func):
                def wrapper(*args):
                    result = func(*args)
                    $log.append(f"{func.__name__}->{result}")
                    return result
                return wrapper


            @$deco
            def $fn1(word):
                return word.strip().lower()


            @$deco
            def $fn2(word, size=$size):
                return word[:size]


            def $drv(words):
                out = [$fn2($fn1(w)) for w in words[:3]]
                return out, len($log)""", deco=deco, log=log, fn1=fn1, fn2=fn2, size=g.rng.randint(2, 4), drv=drv)
        return Part([code], f"{drv}($ARG)", "words", g.pick(["cleaned", "labels"]), consts=[f"{log} = []"])
    fn = g.name(["ratio", "share", "split_even"])
    drv = g.name(["ratios", "shares", "split_all"])
    code = fill("""
        def $deco(minimum):
            def decorate(func):
                def wrapper(a, b):
                    if b < minimum:
                        raise ValueError(f"{b} below {minimum}")
                    return func(a, b)
                return wrapper
            return decorate


        @$deco($m)
        def $fn(a, b):
            return a // b


        def $drv(values):
            good, bad = [], 0
            for a, b in zip(values, values[1:]):
                try:
                    good.append($fn(a, b))
                except ValueError:
                    bad += 1
            return good, bad""", deco=deco, m=g.rng.randint(2, 6), fn=fn, drv=drv)
    return Part([code], f"{drv}($ARG)", "ints", g.pick(["divided", "quotients"]))


def pipeline(g: Gen) -> Part:
    """Generator functions chained into a pipeline (filter, map, window, chunk, yield from)."""
    src = g.name(["read", "source", "emit", "produce"])
    stage1 = g.rng.choice(["filt", "scale", "dedupe"])
    stage2 = g.rng.choice(["window", "chunks", "running"])
    lo = g.rng.randint(2, 8)
    stages = {
        "filt": ("keep_above", """
            def $name(items, lo=$lo):
                for x in items:
                    if x >= lo:
                        yield x"""),
        "scale": ("scaled", """
            def $name(items, k=$k):
                for x in items:
                    yield x * k - $lo"""),
        "dedupe": ("unique", """
            def $name(items):
                seen = set()
                for x in items:
                    if x in seen:
                        continue
                    seen.add(x)
                    yield x"""),
        "window": ("pairs_sum", """
            def $name(items):
                prev = None
                for x in items:
                    if prev is not None:
                        yield prev + x
                    prev = x"""),
        "chunks": ("chunked", """
            def $name(items, size=$size):
                batch = []
                for x in items:
                    batch.append(x)
                    if len(batch) == size:
                        yield batch
                        batch = []
                if batch:
                    yield batch"""),
        "running": ("running_total", """
            def $name(items):
                total = 0
                for x in items:
                    total += x
                    yield total"""),
    }
    n1 = g.name([stages[stage1][0], stage1 + "_stage"])
    n2 = g.name([stages[stage2][0], stage2 + "_stage"])
    fn = g.name(["run_pipeline", "flow", "process_stream", "pipe"])
    use_yield_from = g.chance(0.4)
    src_code = (fill("""
        def $src(values):
            yield from values""", src=src) if use_yield_from else fill("""
        def $src(values):
            for v in values:
                yield v""", src=src))
    c1 = fill(stages[stage1][1], name=n1, lo=lo, k=g.rng.randint(2, 3))
    c2 = fill(stages[stage2][1], name=n2, size=g.rng.randint(2, 3))
    finish = g.rng.choice(["list", "sum", "max"]) if stage2 != "chunks" else "list"
    if finish == "list":
        tail = f"return list({n2}({n1}({src}(values))))"
    elif finish == "sum":
        tail = f"flow = {n2}({n1}({src}(values)))\nreturn sum(flow)"
    else:
        tail = f"flow = {n1}({src}(values))\nreturn max({n2}(flow), default=0)"
    drv = f"def {fn}(values):\n" + indent(tail)
    return Part([src_code, c1, c2, drv], f"{fn}($ARG)", "ints", g.pick(["piped", "streamed", "flowed"]))


# ---------------------------------------------------------------------------------------------------
# collections and standard-library modules


def counting(g: Gen) -> Part:
    """Counter, most_common, and a defaultdict(list) grouping."""
    fn = g.name(["word_stats", "frequencies", "count_labels", "histogram"])
    variant = g.rng.randint(0, 2)
    if variant == 0:
        code = fill("""
            def $fn(words):
                counts = Counter(w[0] for w in words)
                counts.update(words[:2])
                top = counts.most_common(2)
                return top, counts["$c"]""", fn=fn, c=g.pick(list(g.d.words))[0])
        imports = {"from collections import Counter"}
    elif variant == 1:
        code = fill("""
            def $fn(words):
                groups = defaultdict(list)
                for w in words:
                    groups[len(w)].append(w)
                longest = max(groups)
                return dict(groups), longest""", fn=fn)
        imports = {"from collections import defaultdict"}
    else:
        code = fill("""
            def $fn(words):
                letters = Counter()
                firsts = defaultdict(int)
                for w in words:
                    letters.update(w[:2])
                    firsts[w[0]] += 1
                common = [ch for ch, _ in letters.most_common(3)]
                return common, max(firsts.values())""", fn=fn)
        imports = {"from collections import Counter, defaultdict"}
    return Part([code], f"{fn}($ARG)", "words", g.pick(["freq", "counts", "stats"]), imports=imports)


def lru(g: Gen) -> Part:
    """An OrderedDict-based LRU cache class (move_to_end, popitem(last=False))."""
    cls = g.name(["LRUCache", "RecentCache", "Lookaside", "Memo"])
    cap_n, cap_l = g.const(["CACHE_SIZE", "CAPACITY", "SLOTS"], g.rng.randint(2, 3))
    fn = g.name(["replay_lookups", "simulate_cache", "cache_hits"])
    repr_def = ""
    if g.chance(0.5):
        repr_def = "\n\n" + indent(fill("""
            def __repr__(self):
                return f"$cls({list(self.data)})\"""", cls=cls))
    code = fill("""
        class $cls:
            def __init__(self, capacity=$cap):
                self.capacity = capacity
                self.data = OrderedDict()
                self.hits = 0

            def get(self, key):
                if key in self.data:
                    self.data.move_to_end(key)
                    self.hits += 1
                    return self.data[key]
                return None

            def put(self, key, value):
                self.data[key] = value
                self.data.move_to_end(key)
                if len(self.data) > self.capacity:
                    self.data.popitem(last=False)$repr


        def $fn(words):
            cache = $cls()
            for w in words + words[:2]:
                if cache.get(w) is None:
                    cache.put(w, len(w))
            return cache.hits, list(cache.data)""", cls=cls, cap=cap_n, repr=repr_def, fn=fn)
    return Part([code], f"{fn}($ARG)", "words", g.pick(["cached", "hits"]),
                imports={"from collections import OrderedDict"}, consts=[cap_l])


def rolling(g: Gen) -> Part:
    """A deque as a bounded window and a rotating queue."""
    fn = g.name(["moving_average", "smooth", "rolling_max", "window_stats"])
    size_n, size_l = g.const(["WINDOW", "SPAN", "WIDTH"], g.rng.randint(2, 3))
    if g.chance(0.5):
        code = fill("""
            def $fn(values):
                window = deque(maxlen=$w)
                out = []
                for v in values:
                    window.append(v)
                    out.append(sum(window) // len(window))
                return out""", fn=fn, w=size_n)
    else:
        code = fill("""
            def $fn(values):
                queue = deque(values)
                turns = 0
                while queue and turns < $w * 4:
                    queue.rotate(-1)
                    head = queue.popleft()
                    if head % 2 == 0:
                        queue.append(head // 2)
                    turns += 1
                return list(queue), turns""", fn=fn, w=size_n)
    return Part([code], f"{fn}($ARG)", "ints", g.pick(["smoothed", "rolled", "window"]),
                imports={"from collections import deque"}, consts=[size_l])


def tools(g: Gen) -> Part:
    """itertools: groupby over sorted rows, accumulate, combinations, chain, islice."""
    fn = g.name(["group_rows", "combos", "prefix_sums", "chain_up"])
    variant = g.rng.randint(0, 3)
    if variant == 0:
        code = fill("""
            def $fn(rows):
                ordered = sorted(rows, key=lambda r: r[1] % 3)
                out = {}
                for key, grp in groupby(ordered, key=lambda r: r[1] % 3):
                    out[key] = [name for name, _ in grp]
                return out""", fn=fn)
        return Part([code], f"{fn}($ARG)", "pairs", "groups", imports={"from itertools import groupby"})
    if variant == 1:
        code = fill("""
            def $fn(values):
                target = $t
                found = []
                for a, b in combinations(values[:5], 2):
                    if a + b == target:
                        found.append((a, b))
                return found, len(list(combinations(values[:4], 2)))""", fn=fn, t=g.rng.randint(8, 20))
        return Part([code], f"{fn}($ARG)", "ints", "combos", imports={"from itertools import combinations"})
    if variant == 2:
        code = fill("""
            def $fn(values):
                sums = list(accumulate(values))
                products = list(islice(accumulate(values, lambda a, b: a * b % 97), 3))
                return sums[-1], products""", fn=fn)
        return Part([code], f"{fn}($ARG)", "ints", "accum", imports={"from itertools import accumulate, islice"})
    code = fill("""
        def $fn(words):
            joined = list(chain(words[:2], reversed(words[-2:])))
            pairs = list(zip_longest(joined, range(3), fillvalue=0))
            return len(joined), pairs[-1]""", fn=fn)
    return Part([code], f"{fn}($ARG)", "words", "chained", imports={"from itertools import chain, zip_longest"})


def regex(g: Gen) -> Part:
    """re: parse key=value settings, skip malformed ones, substitute."""
    fn = g.name(["parse_settings", "read_config", "parse_pairs", "load_options"])
    pat = g.name(["PATTERN", "SETTING_RE", "LINE_RE"])
    keys = ["port", "size", "depth", "retries", "level", "width", "timeout"]
    def lines() -> str:
        out = []
        for k in g.rng.sample(keys, g.rng.randint(3, 4)):
            out.append(f"{k}={g.rng.randint(1, 99)}" if g.rng.random() < 0.75 else g.rng.choice([f"{k}:3", f"{k}=", "#x"]))
        return repr(out)
    g.inputs["settings"] = lines
    variant = g.chance(0.5)
    body = fill("""
        def $fn(lines):
            found = {}
            bad = 0
            for line in lines:
                m = $pat.fullmatch(line.strip())
                if not m:
                    bad += 1
                    continue
                found[m.group(1)] = int(m.group(2))
            return found, bad""", fn=fn, pat=pat) if variant else fill("""
        def $fn(lines):
            text = ";".join(lines)
            found = {k: int(v) for k, v in $pat.findall(text)}
            digits = re.sub(r"\\d", "#", text[:12])
            return found, digits""", fn=fn, pat=pat)
    const = f'{pat} = re.compile(r"([a-z]+)=(\\d+)")'
    return Part([body], f"{fn}($ARG)", "settings", g.pick(["settings", "config", "options"]),
                imports={"import re"}, consts=[const])


def serialize(g: Gen) -> Part:
    """json: an object turned into a dict, dumped with sort_keys, loaded back and compared."""
    d = g.d
    cls = g.name([d.entity + "Doc", d.entity + "Snapshot", "Snapshot"])
    fn = g.name(["round_trip", "save_and_load", "export_state"])
    code = fill("""
        $record

            def to_dict(self):
                return {"$label": self.$label, "$qty": self.$qty}

            @classmethod
            def from_dict(cls, data):
                return cls(data["$label"], data["$qty"])


        def $fn(rows):
            docs = [$cls(a, b) for a, b in rows[:2]]
            text = json.dumps([x.to_dict() for x in docs], sort_keys=True)
            back = [$cls.from_dict(x) for x in json.loads(text)]
            same = all(a.$qty == b.$qty for a, b in zip(docs, back))
            return same, len(text)""", record=record_class(cls, d), cls=cls, label=d.label, qty=d.qty, fn=fn)
    return Part([code], f"{fn}($ARG)", "pairs", g.pick(["saved", "exported", "json_ok"]), imports={"import json"})


def stats(g: Gen) -> Part:
    """math: mean, standard deviation, gcd, floor/ceil, isclose."""
    mean = g.name(["mean", "average", "avg"])
    fn = g.name(["describe_values", "spread", "summary_stats", "measure"])
    body = g.rng.choice([
        fill("""
            m = $mean(values)
            var = sum((v - m) ** 2 for v in values) / len(values)
            sd = math.sqrt(var)
            return round(m, 2), round(sd, 2), math.isclose(sd, 0.0)""", mean=mean),
        fill("""
            g = 0
            for v in values:
                g = math.gcd(g, v)
            m = $mean(values)
            return g, math.floor(m), math.ceil(m)""", mean=mean),
        fill("""
            m = $mean(values)
            dist = math.hypot(m, max(values))
            return round(dist, 3), math.prod(values[:3]) % 1000""", mean=mean),
    ])
    code = fill("""
        def $mean(values):
            return sum(values) / len(values)


        def $fn(values):
        """, mean=mean, fn=fn) + "\n" + indent(body)
    return Part([code], f"{fn}($ARG)", "ints", g.pick(["spread", "moments", "stats"]), imports={"import math"})


def search_loop(g: Gen) -> Part:
    """while loops with break, continue and else: a two-pointer search or a first-match scan."""
    fn = g.name(["find_pair", "first_match", "scan", "locate"])
    if g.chance(0.5):
        code = fill("""
            def $fn(values):
                nums = sorted(values)
                lo, hi = 0, len(nums) - 1
                target = $t
                while lo < hi:
                    s = nums[lo] + nums[hi]
                    if s == target:
                        break
                    if s < target:
                        lo += 1
                        continue
                    hi -= 1
                else:
                    return None
                return nums[lo], nums[hi]""", fn=fn, t=g.rng.randint(10, 25))
    else:
        code = fill("""
            def $fn(values):
                i = 0
                skipped = 0
                while i < len(values):
                    v = values[i]
                    i += 1
                    if v % 2:
                        skipped += 1
                        continue
                    if v > $t:
                        found = v
                        break
                else:
                    found = -1
                return found, skipped""", fn=fn, t=g.rng.randint(5, 15))
    return Part([code], f"{fn}($ARG)", "ints", g.pick(["match", "pair", "hit"]))


def formatting(g: Gen) -> Part:
    """f-strings with format specs: a fixed-width table of rows, through a helper per row."""
    d = g.d
    row = g.name(["format_row", "render_row", "line_for"])
    fn = g.name(["render_table", "format_report", "layout"])
    w = g.rng.randint(5, 7)
    code = fill("""
        def $row($label, $qty, width=$w):
            bar = "#" * min($qty, 5)
            return f"{$label:<{width}}|{$qty:>3}|{bar}"


        def $fn(rows):
            lines = [$row(a, b) for a, b in rows[:3]]
            widest = max(len(x) for x in lines)
            return lines[0], widest""", row=row, label=d.label, qty=d.qty, w=w, fn=fn)
    return Part([code], f"{fn}($ARG)", "pairs", g.pick(["table", "rendered", "lines"]))
