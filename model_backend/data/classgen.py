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
from string import Template

from model_backend.data.classgen_base import DOMAINS, Gen, Part, indent
from model_backend.data.classgen_kinds import KIND_PARTS, STRUCT_PARTS
from model_backend.data.classgen_parts import PARTS, RAISING_PARTS
from model_backend.data.funcgen import GenProgram

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
