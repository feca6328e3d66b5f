"""The generator's vocabulary and the state of a function being built: variable names by type, the
records of variables, signatures and classes, one program's shared state (`ProgramBuilder`), and the
scope, emission and random helpers every production of `FuncBuilder` uses (`FuncScope`)."""

from __future__ import annotations

import ast
import random
import re
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from model_backend.data.values import BOOL, DICT, ELEM, INT, LINT, LSTR, SET, STR, TUP, Values

# ---------------------------------------------------------------------------------------------------
# names

NAMES: dict[str, list[str]] = {
    INT: ["n", "k", "num", "count", "total", "idx", "pos", "size", "step", "acc", "val", "start",
          "end", "limit", "diff", "score", "cnt", "length", "number", "times", "amount", "target",
          "shift", "m", "x", "y", "a", "b", "res", "value", "depth", "width", "index", "offset"],
    STR: ["s", "text", "word", "name", "string", "st", "line", "txt", "prefix", "suffix", "sep",
          "msg", "label", "key", "code", "letters", "sub", "part", "chars", "new_text", "result",
          "out", "tmp", "a", "b", "pattern", "token", "title", "fill", "char", "data", "sentence"],
    BOOL: ["flag", "ok", "found", "done", "valid", "changed", "matched", "is_ok", "seen_all", "has"],
    LINT: ["nums", "arr", "lst", "items", "values", "xs", "data", "numbers", "array", "seq",
           "elements", "scores", "digits", "res", "result", "output", "vals", "ints", "stack",
           "queue", "counts", "l", "a", "b", "nums2", "temp", "new_list", "sizes"],
    LSTR: ["words", "names", "parts", "tokens", "chars", "strings", "lines", "letters", "keys",
           "pieces", "labels", "items", "fields", "cells", "strs", "tags", "result", "out"],
    DICT: ["d", "counts", "mapping", "dic", "table", "freq", "memo", "lookup", "dct", "stats",
           "book", "inventory", "scores", "ages", "prices", "index", "seen", "cache", "m"],
    SET: ["seen", "uniq", "visited", "bag", "pool", "marks", "found", "keep", "ids", "group", "common"],
    TUP: ["t", "pair", "tup", "coords", "point", "res", "bounds", "triple", "span", "rec"],
}
LOOP_NAMES: dict[str, list[str]] = {
    "char": ["c", "ch", "char", "letter", "symbol", "x"],
    "int": ["n", "x", "num", "item", "v", "e", "el", "elem", "value", "i"],
    "str": ["w", "word", "s", "item", "name", "part", "token", "el"],
    "index": ["i", "j", "idx", "k", "pos", "index"],
    "key": ["k", "key", "name", "word"],
    "val": ["v", "val", "value", "cnt", "n"],
}
HELPER_NAMES = ["g", "h", "helper", "aux", "check", "convert", "process", "transform", "step", "apply",
                "compute", "combine", "normalize", "score", "update", "clean", "count_items", "pick",
                "merge", "shift", "walk", "build", "collect", "_inner", "calc", "fix", "encode", "split_up"]
MAIN_NAMES = ["main", "run", "solve", "f", "process_all", "driver", "compute_all", "evaluate"]
CLASS_NAMES = ["Counter", "Box", "Stack", "Bag", "Acc", "Buffer", "Tracker", "Inventory", "Wallet",
               "Register", "Queue", "Store", "Ledger", "Grid", "Deck", "Cart", "Tally", "Machine",
               "Shelf", "Record", "Cache", "Pocket", "Robot", "Walker", "Builder", "Account"]
METHOD_NAMES = ["add", "push", "update", "apply", "process", "step", "put", "feed", "consume", "merge",
                "total", "take", "insert", "record", "scale", "move", "append_item", "remove_item",
                "get", "run", "reset", "combine", "check", "shift", "grow", "use", "mark", "count_of"]
OBJ_NAMES = ["obj", "c", "b", "box", "acc", "st", "inv", "item", "w", "r", "m", "tracker", "store", "x"]
RAISABLE = ("ValueError", "KeyError", "IndexError")


@dataclass
class Var:
    name: str  # may be an alias expression: "self.items", "xs[i]", "obj.total"
    type: str
    char: bool = False  # a single character (iterating a string)
    assignable: bool = True  # may be the target of `name = ...`
    frozen: bool = False  # its object must not change size (an enclosing loop iterates it)
    reads: int = 0  # how often expressions used it so far (unread values are preferred)


@dataclass
class Sig:
    name: str
    params: list[str]
    ret: str | None
    raises: tuple[str, ...] = ()
    recursive: bool = False


@dataclass
class ClassInfo:
    name: str
    init_params: list[str]
    attrs: list[Var]
    methods: list[Sig]


def norm_expr(text: str) -> str:
    """Minimal parentheses and canonical quotes: productions parenthesize freely, this undoes it."""
    return ast.unparse(ast.parse(text, mode="eval"))


def norm_stmt(text: str) -> str:
    return ast.unparse(ast.parse(text))


def mentions(text: str, name: str) -> bool:
    return re.search(r"(?<![\w.])" + re.escape(name) + r"(?!\w)", text) is not None


class ProgramBuilder:
    """Shared state of one program: randomness, alphabet, used global names, intended errors."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.values = Values(rng)
        self.globals: set[str] = set()
        self.expect: set[str] = set()
        self.chunks: list[list[str]] = []  # top-level definitions, in order

    def global_name(self, pool: list[str]) -> str:
        free = [n for n in pool if n not in self.globals]
        name = self.rng.choice(free) if free else f"{self.rng.choice(pool)}{len(self.globals)}"
        self.globals.add(name)
        return name

    def source(self, tail: list[str] | None = None) -> str:
        lines: list[str] = []
        for chunk in self.chunks:
            lines.extend(chunk)
        lines.extend(tail or [])
        return "\n".join(lines) + "\n"


Producer = Callable[[], "str | None"]


class FuncScope(ABC):
    """One function (or method) being built: its variables by scope, its lines, and the random helpers
    the productions draw with (funcgen_scalars, funcgen_containers, funcgen_loops, funcgen_statements)."""

    def __init__(
        self,
        prog: ProgramBuilder,
        name: str,
        params: list[Var],
        helpers: list[Sig] | None = None,
        classes: list[ClassInfo] | None = None,
        must_call: Sig | None = None,
        indent: int = 1,
        allow_raise: bool = True,
    ) -> None:
        self.prog = prog
        self.rng = prog.rng
        self.values = prog.values
        self.name = name
        self.params = params
        self.helpers = list(helpers or [])
        self.classes = list(classes or [])
        self.must_call = must_call
        self.lines: list[str] = []
        self.indent = indent
        self.scopes: list[list[Var]] = [list(params)]
        self.used: set[str] = {v.name for v in params} | prog.globals | {name}
        self.loop_depth = 0
        self.nest = 0
        self.last: Var | None = None
        self.allow_raise = allow_raise
        self.raises: set[str] = set()
        self.return_type_hint: str | None = None

    # ---- scope -----------------------------------------------------------------------------------
    @contextmanager
    def block(self, new_vars: list[Var] | None = None) -> Iterator[None]:
        self.indent += 1
        self.nest += 1
        self.scopes.append(list(new_vars or []))
        try:
            yield
        finally:
            self.scopes.pop()
            self.indent -= 1
            self.nest -= 1
            if self.last is not None and not any(self.last in s for s in self.scopes):
                self.last = None

    @contextmanager
    def frozen(self, var: Var | None) -> Iterator[None]:
        if var is None:
            yield
            return
        old = var.frozen
        var.frozen = True
        try:
            yield
        finally:
            var.frozen = old

    def all_vars(self) -> list[Var]:
        return [v for scope in self.scopes for v in scope]

    def find(self, t: str | tuple[str, ...], pred: Callable[[Var], bool] | None = None) -> list[Var]:
        types = (t,) if isinstance(t, str) else t
        return [v for v in self.all_vars() if v.type in types and (pred is None or pred(v))]

    def pick(self, t: str | tuple[str, ...], pred: Callable[[Var], bool] | None = None, write: bool = False,
             avoid: str | None = None) -> Var | None:
        """A variable of type t, biased towards values nothing has read yet and towards the innermost
        scope (loop variables, new values), so that data flows from the inputs to the result."""
        cands = [v for v in self.find(t, pred) if v.name != avoid]
        if not cands:
            return None
        inner = self.scopes[-1]
        weights = [1.0 + (3.0 if v.reads == 0 else 0.0) + (1.5 if v in inner else 0.0) for v in cands]
        var = self.rng.choices(cands, weights)[0]
        if not write:
            var.reads += 1
        return var

    def has_var(self, text: str) -> bool:
        return any(mentions(text, v.name.split("[")[0].split(".")[0]) for v in self.all_vars())

    def fresh(self, pool: list[str]) -> str:
        free = [n for n in pool if n not in self.used]
        name = self.rng.choice(free) if free else f"{self.rng.choice(pool)}{len(self.used)}"
        self.used.add(name)
        return name

    def comp_names(self, *pools: list[str]) -> tuple[str, ...]:
        """Distinct fresh names, one from each pool, for the variables of a comprehension: free again
        after it (they are its own)."""
        names = tuple(self.fresh(pool) for pool in pools)
        for name in names:
            self.used.discard(name)
        return names

    def fresh_comp(self, seq_type: str) -> str:
        pool = LOOP_NAMES["char"] if seq_type == STR else LOOP_NAMES["int" if ELEM.get(seq_type) == INT else "str"]
        return self.fresh(pool)

    @contextmanager
    def comp_element(self, seq_type: str) -> Iterator[str]:
        """A fresh comprehension variable over a sequence of `seq_type`: an element of it in scope while
        the block runs (in a block of its own), its name free again after."""
        e = self.fresh_comp(seq_type)
        with self.block([Var(e, ELEM[seq_type], char=seq_type == STR, assignable=False)]):
            yield e
        self.used.discard(e)

    def declare(self, name: str, t: str, **kw: bool) -> Var:
        var = Var(name, t, **kw)
        self.scopes[-1].append(var)
        return var

    # ---- emission ----------------------------------------------------------------------------------
    def emit(self, text: str) -> None:
        self.lines.append("    " * self.indent + text)

    def stmt(self, text: str) -> None:
        self.emit(norm_stmt(text))

    # ---- random helpers ------------------------------------------------------------------------------
    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def choose(self, opts: list[tuple[float, Producer]]) -> str | None:
        opts = [o for o in opts if o[0] > 0]
        while opts:
            total = sum(w for w, _ in opts)
            r = self.rng.random() * total
            i = 0
            for i, (w, _) in enumerate(opts):  # noqa: B007
                r -= w
                if r <= 0:
                    break
            res = opts[i][1]()
            if res is not None:
                return res
            opts.pop(i)
        return None

    def lit(self, t: str) -> str:
        return self.values.literal(t, small=True)

    def lit_str(self, nonempty: bool = True) -> str:
        if not nonempty and self.chance(0.15):
            return "''"
        return repr(self.values.text(1, 2) if self.chance(0.35) else self.values.char())

    def lit_int(self, lo: int = 0, hi: int = 5) -> str:
        return str(self.rng.randint(lo, hi))

    def v(self, t: str | tuple[str, ...], pred: Callable[[Var], bool] | None = None, avoid: str | None = None) -> str | None:
        var = self.pick(t, pred, avoid=avoid)
        return var.name if var else None

    # ---- productions the subclasses supply -----------------------------------------------------------
    @abstractmethod
    def e_lint(self, d: int) -> str: ...

    @abstractmethod
    def e_lstr(self, d: int) -> str: ...

    @abstractmethod
    def e_dict(self, d: int) -> str: ...

    @abstractmethod
    def e_set(self, d: int) -> str: ...

    @abstractmethod
    def e_tup(self, d: int) -> str: ...

    @abstractmethod
    def body(self, n: int, simple: bool = False) -> None: ...
