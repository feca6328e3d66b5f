"""The general parts of `classgen` programs: classes, dataclasses, named tuples, inheritance,
properties, closures, decorators, generators, exceptions, collections and standard-library modules.

Each part is a function `(Gen) -> Part` that draws its variant and names from the program's domain.
`PARTS` maps a part's name to it; `RAISING_PARTS` holds the parts whose program ends with an intended
uncaught exception.
"""

from __future__ import annotations

from collections.abc import Callable

from model_backend.data.classgen import Gen, Part, block, fill, indent

# ---------------------------------------------------------------------------------------------------
# classes


def registry(g: Gen) -> Part:
    """An entity class (with or without __repr__) and a container class holding entities in a dict or a
    list; methods mutate the entities' state; a driver function fills and queries it."""
    d = g.d
    ent, grp = g.name([d.entity]), g.name([d.group])
    hist = g.pick(["history", "log", "changes", "events"])
    bump = g.pick(["add", "increase", "bump", "adjust", "change_by"])
    total = g.pick(["total", "overall", "combined", "sum_all"])
    best = g.pick(["best", "top", "largest", "leader"])
    members = g.pick(["members", "entries", "items", "registry"])
    use_dict = g.chance(0.6)
    cap_name, cap_line = g.const(["CAP", "MAX_" + d.qty.upper(), "LIMIT"], g.rng.randint(15, 40))
    capped = g.chance(0.5)
    bump_body = (
        fill("""
            if self.$qty + amount > $cap:
                amount = $cap - self.$qty
            self.$qty += amount
            self.$hist.append(amount)
            return self.$qty""", qty=d.qty, cap=cap_name, hist=hist)
        if capped else
        fill("""
            self.$qty += amount
            self.$hist.append(amount)
            return self.$qty""", qty=d.qty, hist=hist)
    )
    repr_def = None
    if g.chance(0.5):
        repr_def = fill("""
            def __repr__(self):
                return f"$ent({self.$label!r}, $qty={self.$qty})\"""", ent=ent, label=d.label, qty=d.qty)
    entity = block(
        f"class {ent}:",
        indent(fill("""
            def __init__(self, $label, $qty=0):
                self.$label = $label
                self.$qty = $qty
                self.$hist = []""", label=d.label, qty=d.qty, hist=hist)),
        "",
        indent(f"def {bump}(self, amount):\n" + indent(bump_body)),
        "",
        indent(repr_def) if repr_def else None,
    ).rstrip()
    if use_dict:
        store = fill("""
            def __init__(self):
                self.$m = {}

            def register(self, $label, $qty):
                if $label in self.$m:
                    self.$m[$label].$bump($qty)
                else:
                    self.$m[$label] = $ent($label, $qty)
                return self.$m[$label]

            def $total(self):
                return sum(x.$q for x in self.$m.values())

            def $best(self):
                return max(self.$m.values(), key=lambda x: x.$q)""",
                     m=members, label=d.label, qty=d.qty, bump=bump, ent=ent, total=total, q=d.qty, best=best)
    else:
        store = fill("""
            def __init__(self):
                self.$m = []

            def register(self, $label, $qty):
                for x in self.$m:
                    if x.$label == $label:
                        x.$bump($qty)
                        return x
                created = $ent($label, $qty)
                self.$m.append(created)
                return created

            def $total(self):
                count = 0
                for x in self.$m:
                    count += x.$q
                return count

            def $best(self):
                top = self.$m[0]
                for x in self.$m[1:]:
                    if x.$q > top.$q:
                        top = x
                return top""",
                     m=members, label=d.label, qty=d.qty, bump=bump, ent=ent, total=total, q=d.qty, best=best)
    group_repr = fill(g.pick([
        """
        def __repr__(self):
            return f"$grp({len(self.$m)} $plural)\"""",
        """
        def __repr__(self):
            return f"<$grp size={len(self.$m)} total={self.$total()}>\"""",
    ]), grp=grp, m=members, plural=d.item + "s", total=total)
    group = f"class {grp}:\n" + indent(store + "\n\n" + group_repr)
    fn = g.name([f"fill_{d.group.lower()}", f"build_{d.group.lower()}", f"load_{d.group.lower()}"])
    var = d.group.lower()
    tail = g.rng.choice([
        f"return {var}.{total}(), {var}.{best}().{d.label}",
        f"leader = {var}.{best}()\n{d.item} = {var}.register(leader.{d.label}, 1)\nreturn {d.item}.{d.qty}",
        f"return [len({var}.{members}), {var}.{total}()]",
    ])
    driver = fill("""
        def $fn(rows):
            $var = $grp()
            for $label, $qty in rows:
                $var.register($label, $qty)
            $var.register(rows[0][0], 2)
        """, fn=fn, var=var, grp=grp, label=d.label, qty=d.qty) + "\n" + indent(tail)
    return Part([entity, group, driver], f"{fn}($ARG)", "pairs", g.pick(["totals", "standing", "ledger"]),
                consts=[cap_line] if capped else [])


def dataclass_part(g: Gen) -> Part:
    """A dataclass with defaults and a default_factory list (ordered or not), built from rows, sorted
    or filtered, its list fields mutated."""
    d = g.d
    rec = g.name([d.entity, d.entity + "Rec", "Rec", "Entry"])
    tags = g.pick(["tags", "notes", "marks", "flags"])
    order = g.chance(0.5)
    thr_name, thr_line = g.const(["THRESHOLD", "CUTOFF", "MIN_" + d.qty.upper()], g.rng.randint(5, 12))
    deco = "@dataclass(order=True)" if order else "@dataclass"
    hide = g.chance(0.5)
    take = "rows[:3]" if hide else "rows[:2]"
    factory = "field(default_factory=list, repr=False)" if hide else "field(default_factory=list)"
    default_word = g.pick(list(d.words))
    post = None
    if g.chance(0.4):
        post = fill("""
            def __post_init__(self):
                if self.$qty < 0:
                    self.$qty = 0""", qty=d.qty)
    method = fill("""
        def mark(self, note):
            if note not in self.$tags:
                self.$tags.append(note)
            return len(self.$tags)""", tags=tags)
    cls = block(deco, f"class {rec}:", indent(fill("""
        $qty: int
        $label: str = "$dw"
        $tags: list = $factory""", qty=d.qty, label=d.label, dw=default_word, tags=tags, factory=factory)),
                "", indent(method), "" if post else None, indent(post) if post else None)
    make = g.name(["make_records", "parse_rows", "to_records", "collect"])
    fn = g.name([f"rank_{d.qty}", f"classify_{d.item}s", "tag_records", f"sort_{d.item}s"])
    sort_line = "recs.sort()" if order else f"recs.sort(key=lambda r: r.{d.qty})"
    body = g.rng.choice([
        fill("""
            for r in recs:
                if r.$qty >= $thr:
                    r.mark("big")
                else:
                    r.mark("small")
            return [r.$label for r in recs if "big" in r.$tags]""", qty=d.qty, thr=thr_name, label=d.label, tags=tags),
        fill("""
            first, last = recs[0], recs[-1]
            last.mark("max")
            first.mark("min")
            spare = $rec($thr)
            return first.$label, last.$qty, spare < first if $order else spare.$qty""", rec=rec, order=order, thr=thr_name, qty=d.qty, label=d.label),
    ])
    funcs = fill("""
        def $make(rows):
            return [$rec($qty, $label) for $label, $qty in rows]


        def $fn(rows):
            recs = $make($take)
            $sort
        """, make=make, rec=rec, qty=d.qty, label=d.label, fn=fn, sort=sort_line, take=take) + "\n" + indent(body)
    return Part([cls, funcs], f"{fn}($ARG)", "pairs", g.pick(["ranked", "marked", "tagged"]),
                imports={"from dataclasses import dataclass, field"}, consts=[thr_line])


def frozen_point(g: Gen) -> Part:
    """A frozen dataclass (a value object) moved around; assignment to a field fails and is caught."""
    cls = g.name(["Point", "Pos", "Vec", "Cell", "Coord"])
    walk = g.name(["walk", "trace_path", "follow", "wander"])
    moves = g.name(["MOVES", "DIRECTIONS", "STEPS"])
    dirs = g.rng.sample([("N", 0, 1), ("S", 0, -1), ("E", 1, 0), ("W", -1, 0)], 4)
    dist = g.pick(["manhattan", "dist", "norm1", "size"])
    const = f"{moves} = {{" + ", ".join(f'"{k}": ({dx}, {dy})' for k, dx, dy in dirs) + "}"
    code = fill("""
        @dataclass(frozen=True)
        class $cls:
            x: int = 0
            y: int = 0

            def moved(self, dx, dy):
                return $cls(self.x + dx, self.y + dy)

            def $dist(self):
                return abs(self.x) + abs(self.y)


        def $walk(values):
            p = $cls()
            far = p
            for i, v in enumerate(values):
                key = "$k"[i % 4]
                dx, dy = $moves[key]
                p = p.moved(dx * v, dy * v)
                if p.$dist() > far.$dist():
                    far = p
            try:
                p.x = 0
            except FrozenInstanceError:
                p = $cls(0, p.y)
            return p, far.$dist()""", cls=cls, dist=dist, walk=walk, moves=moves, k="".join(k for k, _, _ in dirs))
    return Part([code], f"{walk}($ARG)", "ints", g.pick(["position", "where", "endpoint"]),
                imports={"from dataclasses import FrozenInstanceError, dataclass"}, consts=[const])


def named_rows(g: Gen) -> Part:
    """A namedtuple of rows: max by a field, _replace, grouping in a dict."""
    d = g.d
    nt = g.name([d.entity + "Row", "Row", "Entry", "Pair"])
    fn = g.name(["summarize_rows", "tabulate", f"index_{d.item}s", "row_stats"])
    body = g.rng.choice([
        fill("""
            best = max(rows, key=lambda r: r.$qty)
            bumped = best._replace($qty=best.$qty + 1)
            total = sum(r.$qty for r in rows)
            return bumped, total""", qty=d.qty),
        fill("""
            by_len = {}
            for r in rows:
                by_len.setdefault(len(r.$label), []).append(r.$qty)
            return {k: sum(v) for k, v in sorted(by_len.items())}""", label=d.label, qty=d.qty),
        fill("""
            low = [r for r in rows if r.$qty % 2 == 0]
            first = rows[0]
            $label, $qty = first
            return len(low), $label.upper(), $qty""", label=d.label, qty=d.qty),
    ])
    code = fill("""
        $nt = namedtuple("$nt", ["$label", "$qty"])


        def $fn(pairs):
            rows = [$nt(*p) for p in pairs[:3]]
        """, nt=nt, label=d.label, qty=d.qty, fn=fn) + "\n" + indent(body)
    return Part([code], f"{fn}($ARG)", "pairs", g.pick(["rows", "table", "grouped"]),
                imports={"from collections import namedtuple"})


def hierarchy(g: Gen) -> Part:
    """A base class and two subclasses overriding a method and calling super()."""
    d = g.d
    base = g.name([d.entity, "Base" + d.entity, "Abstract" + d.entity])
    sub_a = g.name(["Premium" + d.entity, "Large" + d.entity, "Special" + d.entity])
    sub_b = g.name(["Budget" + d.entity, "Small" + d.entity, "Plain" + d.entity])
    rate_n, rate_l = g.const(["RATE", "FACTOR", "MULTIPLIER"], g.rng.randint(2, 4))
    cost = g.pick(["cost", "value", "weight", "points"])
    extra = g.pick(["bonus", "surcharge", "extra"])
    fn = g.name([f"price_{d.item}s", "evaluate_all", f"score_{d.item}s", "appraise"])
    describe = g.chance(0.5)
    base_repr = g.chance(0.5)
    take = "rows" if base_repr else "rows[:2]"
    desc = "\n\n" + indent(fill("""
        def describe(self):
            return f"{self.name}:{self.$cost()}\"""", cost=cost)) if describe else ""
    if base_repr:
        desc += "\n\n" + indent(fill("""
            def __repr__(self):
                return f"{type(self).__name__}({self.name!r})\"""", cost=cost))
    code = fill("""
        class $base:
            def __init__(self, name, $qty):
                self.name = name
                self.$qty = $qty

            def $cost(self):
                return self.$qty * $rate$desc


        class $sub_a($base):
            def __init__(self, name, $qty, $extra):
                super().__init__(name, $qty)
                self.$extra = $extra

            def $cost(self):
                return super().$cost() + self.$extra


        class $sub_b($base):
            def $cost(self):
                base = super().$cost()
                return base - base // 4""",
                base=base, qty=d.qty, cost=cost, rate=rate_n, desc=desc,
                sub_a=sub_a, sub_b=sub_b, extra=extra)
    collect = "[x.describe() for x in objs[:2]]" if describe else f"[x.{cost}() for x in objs]"
    driver = fill("""
        def $fn(rows):
            objs = []
            for i, ($label, $qty) in enumerate($take):
                if i % 2 == 0:
                    objs.append($sub_a($label, $qty, i + 1))
                else:
                    objs.append($sub_b($label, $qty))
            total = sum(x.$cost() for x in objs)
            return total, $collect""", fn=fn, label=d.label, qty=d.qty, sub_a=sub_a, sub_b=sub_b, cost=cost,
                  collect=collect, take=take)
    return Part([code, driver], f"{fn}($ARG)", "pairs", g.pick(["costs", "appraisal", "valuation"]),
                consts=[rate_l])


def validated(g: Gen) -> Part:
    """A class with a property whose setter validates (ValueError), and a derived read-only property;
    the driver catches the rejections."""
    d = g.d
    cls = g.name([d.entity, "Tracked" + d.entity, d.entity + "State"])
    lo, hi = 0, g.rng.randint(12, 25)
    hi_n, hi_l = g.const(["MAX_" + d.qty2.upper(), "UPPER", "CEILING"], hi)
    derived = g.pick(["doubled", "level", "ratio", "percent"])
    expr = {"doubled": "self._v * 2", "level": "self._v // 5", "ratio": f"round(self._v / {hi_n}, 2)",
            "percent": f"self._v * 100 // {hi_n}"}[derived]
    q = d.qty2
    code = fill("""
        class $cls:
            def __init__(self, $label, $q):
                self.$label = $label
                self.$q = $q

            @property
            def $q(self):
                return self._v

            @$q.setter
            def $q(self, value):
                if value < $lo or value > $hi:
                    raise ValueError(f"$q out of range: {value}")
                self._v = value

            @property
            def $derived(self):
                return $expr""", cls=cls, label=d.label, q=q, lo=lo, hi=hi_n, derived=derived, expr=expr)
    fn = g.name(["apply_updates", f"update_{q}", "try_settings", "feed"])
    code2 = fill("""
        def $fn(values):
            obj = $cls("$w", 1)
            rejected = []
            for v in values:
                try:
                    obj.$q = v - $off
                except ValueError:
                    rejected.append(v)
            return obj.$derived, rejected""", fn=fn, cls=cls, w=g.pick(list(d.words)), q=q,
                 off=g.rng.randint(0, 6), derived=derived)
    return Part([code, code2], f"{fn}($ARG)", "ints", g.pick(["settled", "applied", "accepted"]), consts=[hi_l])


def validated_uncaught(g: Gen) -> Part:
    """A validating setter whose ValueError ends the program (the last input is out of range)."""
    d = g.d
    cls = g.name([d.entity + "Gauge", d.entity + "Meter", "Gauge"])
    hi = g.rng.randint(20, 40)
    fn = g.name(["set_levels", "apply_levels", "calibrate"])
    code = fill("""
        class $cls:
            def __init__(self):
                self._level = 0
                self.seen = 0

            @property
            def level(self):
                return self._level

            @level.setter
            def level(self, value):
                if not 0 <= value <= $hi:
                    raise ValueError(f"level {value} outside 0..$hi")
                self._level = value
                self.seen += 1


        def $fn(levels):
            gauge = $cls()
            for v in levels:
                gauge.level = v
            return gauge.seen""", cls=cls, hi=hi, fn=fn)
    g.inputs["levels"] = lambda: repr([g.rng.randint(0, hi) for _ in range(g.rng.randint(1, 3))] + [hi + g.rng.randint(1, 9)])
    return Part([code], f"{fn}($ARG)", "levels", "seen", expect=("ValueError",), last=True)


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
# exceptions


def errors(g: Gen) -> Part:
    """A custom exception hierarchy raised three calls deep and caught, with try/except/finally."""
    d = g.d
    base = g.name([d.entity + "Error", "ValidationError", "DomainError"])
    sub = g.name(["Invalid" + d.qty.title(), d.qty.title() + "TooLarge", "OutOfRange"])
    lim_n, lim_l = g.const(["MAX_" + d.qty.upper(), "UPPER_BOUND", "HARD_LIMIT"], g.rng.randint(8, 15))
    check = g.name([f"check_{d.qty}", "validate", "ensure_ok"])
    conv = g.name(["convert", "normalize_value", "prepare"])
    fn = g.name(["process_all", "safe_process", "load_values", "screen"])
    code = fill("""
        class $base(Exception):
            pass


        class $sub($base):
            def __init__(self, value, limit):
                super().__init__(f"{value} exceeds {limit}")
                self.value = value


        def $check(value):
            if value > $lim:
                raise $sub(value, $lim)
            if value == 0:
                raise $base("zero")
            return value


        def $conv(value):
            return $check(value) * 10


        def $fn(values):
            ok, bad, done = [], [], 0
            for v in values:
                try:
                    ok.append($conv(v))
                except $sub as err:
                    bad.append(err.value)
                except $base:
                    bad.append(0)
                finally:
                    done += 1
            return len(ok), bad, done""", base=base, sub=sub, lim=lim_n, check=check, conv=conv, fn=fn)
    return Part([code], f"{fn}($ARG)", "ints", g.pick(["screened", "checked", "verdicts"]), consts=[lim_l])


def errors_uncaught(g: Gen) -> Part:
    """A custom exception that ends the program: the last input breaks a rule three calls deep."""
    d = g.d
    exc = g.name(["Overdraft", "QuotaExceeded", "CapacityError", "BudgetExceeded"])
    budget = g.rng.randint(20, 40)
    cls = g.name([d.group + "Budget", "Budget", "Quota"])
    fn = g.name(["spend_all", "consume", "charge_all"])
    code = fill("""
        class $exc(Exception):
            def __init__(self, needed, left):
                super().__init__(f"needed {needed}, only {left} left")
                self.needed = needed


        class $cls:
            def __init__(self, amount):
                self.left = amount
                self.spent = []

            def take(self, amount):
                if amount > self.left:
                    raise $exc(amount, self.left)
                self.left -= amount
                self.spent.append(amount)


        def $fn(costs):
            budget = $cls($budget)
            try:
                for c in costs:
                    budget.take(c)
            finally:
                print("spent", sum(budget.spent))
            return budget.left""", exc=exc, cls=cls, fn=fn, budget=budget)
    def costs() -> str:
        first = [g.rng.randint(1, budget // 3) for _ in range(g.rng.randint(1, 2))]
        return repr(first + [budget])
    g.inputs["costs"] = costs
    return Part([code], f"{fn}($ARG)", "costs", "left", expect=(exc,), last=True)


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
        class $cls:
            def __init__(self, $label, $qty):
                self.$label = $label
                self.$qty = $qty

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
            return same, len(text)""", cls=cls, label=d.label, qty=d.qty, fn=fn)
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


PARTS: dict[str, Callable[[Gen], Part]] = {
    "registry": registry,
    "dataclass": dataclass_part,
    "frozen_point": frozen_point,
    "named_rows": named_rows,
    "hierarchy": hierarchy,
    "validated": validated,
    "counters": counters,
    "decorated": decorated,
    "pipeline": pipeline,
    "errors": errors,
    "counting": counting,
    "lru": lru,
    "rolling": rolling,
    "tools": tools,
    "regex": regex,
    "serialize": serialize,
    "stats": stats,
    "search_loop": search_loop,
    "formatting": formatting,
}

RAISING_PARTS: dict[str, Callable[[Gen], Part]] = {
    "validated_uncaught": validated_uncaught,
    "errors_uncaught": errors_uncaught,
}
