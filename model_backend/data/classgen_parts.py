"""The general parts of `classgen` programs: classes, dataclasses, named tuples, inheritance,
properties and exceptions here; closures, decorators, generators, collections and standard-library
modules in `classgen_funcs`.

Each part is a function `(Gen) -> Part` that draws its variant and names from the program's domain.
`PARTS` maps a part's name to it; `RAISING_PARTS` holds the parts whose program ends with an intended
uncaught exception.
"""

from __future__ import annotations

from collections.abc import Callable

from model_backend.data.classgen_base import Gen, Part, block, fill, indent
from model_backend.data.classgen_funcs import (
    counters,
    counting,
    decorated,
    formatting,
    lru,
    pipeline,
    regex,
    rolling,
    search_loop,
    serialize,
    stats,
    tools,
)

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
