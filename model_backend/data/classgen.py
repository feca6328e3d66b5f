"""Seeded generator of realistic, class-based Python programs (25 to 150 lines) with literal entry calls.

A program is a composition of 2 to 4 *parts* (`classgen_parts.PARTS`, `classgen_kinds.KINDS`), each a
small parameterized piece of a program: a class or dataclass with the functions that use it, a
generator pipeline, a decorator, a recursive tree, a graph search, a state machine, a parser, a stack
interpreter, a simulation, ... Every part draws its own variant (which methods, which bodies, with or
without `__repr__`, which collection) and its identifiers from the program's *domain* (library, shop,
bank, ...: class names, attribute names, sample words), so two programs differ in structure, not only in
names. A `main` function feeds the parts from its parameters, prints or collects their results and
returns a short value; the entry is `main(<literals>)` (or, for about a fifth of the programs, module
code that calls `main` and prints).

About one program in ten ends with an intended uncaught exception (a custom exception or a
`ValueError` from a validating setter): its class name is in `GenProgram.expect_errors`, so the build
accepts that exit. Programs of the declared kinds carry a `# kind: NAME` comment
(`model_backend.constructs` reads it).

The build (`build.py`) traces every program and keeps those that end normally or with an intended
exception within its limits (at most 400 events, no value repr over 120 characters), so the parts keep
their data small. `realistic_programs(n, seed)` is deterministic for a seed.
"""

from __future__ import annotations

import random
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from string import Template

from model_backend.data.funcgen import GenProgram


@dataclass(frozen=True)
class Domain:
    """The vocabulary of one program: an entity and its container, their attributes, sample words."""

    name: str
    entity: str  # a class name, e.g. "Book"
    group: str  # the class that holds entities, e.g. "Library"
    label: str  # a str attribute, e.g. "title"
    qty: str  # an int attribute, e.g. "pages"
    qty2: str  # a second int attribute, e.g. "copies"
    words: tuple[str, ...]  # short sample values of `label`
    item: str  # a loop variable for one entity, e.g. "book"


DOMAINS: tuple[Domain, ...] = (
    Domain("library", "Book", "Library", "title", "pages", "copies",
           ("dune", "emma", "iliad", "odyssey", "hamlet", "walden", "ulysses"), "book"),
    Domain("shop", "Item", "Cart", "name", "price", "qty",
           ("apple", "bread", "milk", "tea", "rice", "soap", "jam"), "item"),
    Domain("bank", "Account", "Bank", "owner", "balance", "limit",
           ("ana", "ben", "cleo", "dev", "eli", "fay", "gus"), "account"),
    Domain("school", "Student", "Course", "name", "grade", "credits",
           ("ivy", "jon", "kim", "lea", "max", "noa", "ola"), "student"),
    Domain("game", "Player", "Team", "nick", "score", "lives",
           ("ace", "bolt", "cyan", "dash", "echo", "fox", "gale"), "player"),
    Domain("shipping", "Parcel", "Depot", "dest", "weight", "priority",
           ("oslo", "rome", "lima", "kyiv", "baku", "doha", "riga"), "parcel"),
    Domain("music", "Track", "Playlist", "title", "seconds", "plays",
           ("intro", "solo", "coda", "riff", "verse", "hook", "outro"), "track"),
    Domain("garden", "Plant", "Bed", "species", "height", "water",
           ("fern", "mint", "sage", "rose", "lily", "basil", "thyme"), "plant"),
    Domain("tasks", "Task", "Board", "label", "effort", "rank",
           ("fix", "test", "docs", "deploy", "review", "plan", "merge"), "task"),
    Domain("fleet", "Vehicle", "Garage", "plate", "km", "fuel",
           ("ab1", "cd2", "ef3", "gh4", "ij5", "kl6", "mn7"), "vehicle"),
    Domain("kitchen", "Recipe", "Menu", "dish", "minutes", "servings",
           ("soup", "stew", "pie", "salad", "curry", "tart", "flan"), "recipe"),
    Domain("cluster", "Host", "Cluster", "hostname", "load", "cores",
           ("alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa"), "host"),
    Domain("hotel", "Room", "Hotel", "guest", "nights", "floor",
           ("smith", "jones", "brown", "lee", "khan", "garcia", "wu"), "room"),
    Domain("sensors", "Sensor", "Station", "sid", "reading", "threshold",
           ("t1", "t2", "h1", "p1", "w1", "t3", "h2"), "sensor"),
    Domain("museum", "Exhibit", "Gallery", "artist", "year", "visitors",
           ("monet", "klimt", "goya", "dali", "miro", "munch", "kahlo"), "exhibit"),
    Domain("clinic", "Patient", "Ward", "patient", "age", "visits",
           ("rita", "omar", "lina", "paul", "sara", "tom", "zoe"), "patient"),
)


@dataclass
class Part:
    """A piece of a program: its top-level definitions and how `main` uses it.

    `call` is a Template of the expression main evaluates, with `$ARG` for the part's input (main's
    parameter of kind `needs`). `result` is a short name for the result. `expect` lists exception
    class names that may end the program uncaught."""

    defs: list[str]
    call: str
    needs: str
    result: str
    imports: set[str] = field(default_factory=set)
    consts: list[str] = field(default_factory=list)
    kind: str | None = None
    expect: tuple[str, ...] = ()
    last: bool = False  # must be the last part main calls (it may raise uncaught)


class Gen:
    """Random choices and unique top-level names for one program."""

    def __init__(self, rng: random.Random, domain: Domain) -> None:
        self.rng = rng
        self.d = domain
        self.used: set[str] = set()
        #: input kind -> a function drawing the literal main receives for it
        self.inputs: dict[str, Callable[[], str]] = {}

    def pick(self, options: list[str] | tuple[str, ...]) -> str:
        return self.rng.choice(list(options))

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def name(self, options: list[str] | tuple[str, ...]) -> str:
        """A top-level name from options not used yet in this program (a numbered one if all are)."""
        free = [o for o in options if o not in self.used]
        name = self.rng.choice(free) if free else f"{options[0]}_{len(self.used)}"
        self.used.add(name)
        return name

    def const(self, options: list[str] | tuple[str, ...], value: object) -> tuple[str, str]:
        """A module constant: (its name, its line)."""
        name = self.name(options)
        return name, f"{name} = {value!r}"

    def words(self, lo: int = 3, hi: int = 5) -> list[str]:
        return self.rng.sample(list(self.d.words), self.rng.randint(lo, hi))

    def ints(self, lo: int = 3, hi: int = 6, top: int = 20) -> list[int]:
        return [self.rng.randint(1, top) for _ in range(self.rng.randint(lo, hi))]


def fill(text: str, **names: object) -> str:
    """`text` dedented, with `$name` placeholders replaced (a missing one raises KeyError)."""
    return Template(textwrap.dedent(text).strip("\n")).substitute({k: str(v) for k, v in names.items()})


def block(*pieces: str | None) -> str:
    """Join code pieces (each dedented already), leaving out None and empty ones."""
    return "\n".join(p for p in pieces if p)


def indent(text: str, n: int = 1) -> str:
    return textwrap.indent(text, "    " * n)


# ---------------------------------------------------------------------------------------------------
# the inputs main receives, shared by the parts that need the same kind

PARAM_NAMES: dict[str, list[str]] = {
    "words": ["names", "labels", "keys", "entries", "tags", "ids"],
    "ints": ["values", "amounts", "sizes", "numbers", "readings", "samples"],
    "pairs": ["records", "rows", "pairs", "data", "catalog", "stock"],
    "n": ["n", "rounds", "steps", "count", "limit", "k"],
}


def _standard_inputs(g: Gen) -> None:
    def pairs() -> str:
        return repr([(w, g.rng.randint(1, 20)) for w in g.words(3, 5)])

    g.inputs.setdefault("words", lambda: repr(g.words(3, 5)))
    g.inputs.setdefault("ints", lambda: repr(g.ints()))
    g.inputs.setdefault("pairs", pairs)
    g.inputs.setdefault("n", lambda: repr(g.rng.randint(2, 5)))


# ---------------------------------------------------------------------------------------------------
# composing a program


MAIN_NAMES = ["main", "run", "solve", "process", "simulate", "report", "demo", "go"]


def _main(g: Gen, parts: list[Part], params: dict[str, str]) -> str:
    """The entry function: calls each part on its input and prints or collects the results."""
    name = g.name(MAIN_NAMES)
    style = g.rng.choice(["print", "print", "truthy", "total"])
    head = f"def {name}({', '.join(params.values())}):"
    lines: list[str] = []
    results = g.pick(["results", "out", "summary", "report", "collected"])
    if style in ("truthy", "total"):
        lines.append(f"{results} = 0")
    for part in parts:
        expr = Template(part.call).substitute(ARG=params.get(part.needs, ""))
        part.result = g.name([part.result])  # distinct from every top-level name and other results
        if part.last and part.expect:
            lines.append(f"{part.result} = {expr}")
            lines.append(f"print({part.result})")
            continue
        if style == "print":
            lines.append(f"{part.result} = {expr}")
            lines.append(f'print(f"{part.result}: {{{part.result}}}")' if g.chance(0.6) else f"print({part.result})")
        elif style == "truthy":
            lines.append(f"{part.result} = {expr}")
            lines.append(f"if {part.result}:\n    {results} += 1")
        else:
            lines.append(f"{part.result} = {expr}")
            lines.append(f"{results} += len(str({part.result}))")
    if style == "print":
        lines.append(f"return {len(parts)}")
    else:
        lines.append(f"return {results}")
    return head + "\n" + indent("\n".join(lines))


def compose(g: Gen, parts: list[Part]) -> tuple[str, str | None, tuple[str, ...]]:
    """(source, entry, expected errors) of a program made of `parts` (a raising part goes last)."""
    _standard_inputs(g)
    parts = sorted(parts, key=lambda p: p.last)  # stable: the others keep their order
    needs = list(dict.fromkeys(p.needs for p in parts if p.needs))
    params = {kind: g.name(PARAM_NAMES.get(kind, [kind])) for kind in needs}
    imports = sorted({i for p in parts for i in p.imports}, key=lambda s: (s.startswith("from"), s))
    consts = [c for p in parts for c in p.consts]
    kinds = list(dict.fromkeys(p.kind for p in parts if p.kind))
    top: list[str] = []
    if kinds:
        top.append("# kind: " + ", ".join(kinds))
    if imports:
        top.append("\n".join(imports))
    if consts:
        top.append("\n".join(consts))
    defs = [d for p in parts for d in p.defs]
    main = _main(g, parts, params)
    main_name = main.split("(", 1)[0][4:]
    args = ", ".join(g.inputs[kind]() for kind in needs)
    expect = tuple(sorted({e for p in parts for e in p.expect}))
    chunks = top + defs + [main]
    if g.chance(0.2):
        result = g.pick(["result", "answer", "outcome", "final"])
        chunks.append(f"{result} = {main_name}({args})\nprint({result})")
        entry = None
    else:
        entry = f"{main_name}({args})"
    return "\n\n\n".join(chunks) + "\n", entry, expect


def generate_one(rng: random.Random) -> tuple[str, str | None, tuple[str, ...], list[str]]:
    """One program: (source, entry, expected errors, the names of its parts)."""
    from model_backend.data.classgen_kinds import KIND_PARTS, STRUCT_PARTS
    from model_backend.data.classgen_parts import PARTS, RAISING_PARTS

    g = Gen(rng, rng.choice(DOMAINS))
    count = rng.choice([2, 2, 3, 3, 3, 4])
    general = {**PARTS, **STRUCT_PARTS}
    pool = dict(general)
    chosen: list[str] = []
    if rng.random() < 0.35:
        chosen.append(rng.choice(sorted(KIND_PARTS)))
        pool.update(KIND_PARTS)
    others = sorted(set(general) - set(chosen))
    chosen += rng.sample(others, count - len(chosen))
    if rng.random() < 0.11:
        chosen.append(rng.choice(sorted(RAISING_PARTS)))
        pool.update(RAISING_PARTS)
    rng.shuffle(chosen)
    parts = [pool[name](g) for name in chosen]
    source, entry, expect = compose(g, parts)
    return source, entry, expect, chosen


def realistic_programs(n: int, seed: int, min_lines: int = 25, max_lines: int = 150) -> list[GenProgram]:
    """`n` class-based programs of `min_lines` to `max_lines` lines, deterministic for `seed`. Path
    `<realistic-SEED-I>`, origin `realistic:<first part>` (the build's `source_kind`). Each parses; the
    build's trace check drops the few that do not run within its limits."""
    import ast

    rng = random.Random(f"realistic:{seed}")
    out: list[GenProgram] = []
    while len(out) < n:
        source, entry, expect, chosen = generate_one(rng)
        lines = len(source.splitlines())
        if not min_lines <= lines <= max_lines:
            continue
        ast.parse(source)  # a generator bug must show, not be filtered away
        out.append(GenProgram(source=source, path=f"<realistic-{seed}-{len(out)}>", entry=entry,
                              origin=f"realistic:{chosen[0]}", expect_errors=expect))
    return out
