"""Seeded generator of short, CruxEval-style Python functions with literal inputs.

A program is built from a small typed grammar: every variable has one of the types of
`model_backend.data.values.GEN_TYPES`, expressions are drawn per type (string, list, dict, set and
tuple methods, slicing, arithmetic with `//` and `%`, comparisons, comprehensions, calls of helpers)
and statements are drawn from simple ones (assignments, augmented assignments, mutating method calls)
and compound ones (for / while loops, if / elif / else, try / except, raise, early return).
Constructs that could fail are guarded (`if x in lst: lst.remove(x)`) or wrapped in try / except,
except where the generator deliberately leaves an exception uncaught; it then records the exception
name in `GenProgram.expect_errors`, and `keep_runnable` accepts that error exit.

Program shapes ("kinds"): plain functions, one-liners, a function with a helper, recursion, a class
with `__init__` and methods used by `f`, exception-centred functions, while loops, and (in
`generate_scripts`) multi-function scripts with call depth 2 to 4 in entry or module mode.

Loops always terminate by construction: `for` loops iterate a finite value that their body cannot grow
(the iterated variable is frozen inside the body), while loops follow patterns with a strictly
decreasing measure. The sandbox check (`keep_runnable`) is the final word anyway.

Everything is drawn from `random.Random(seed)`: the same seed gives the same programs.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from model_backend.data.values import (
    BOOL,
    DICT,
    ELEM,
    INT,
    LINT,
    LSTR,
    SET,
    SIZED,
    STR,
    TUP,
    Values,
    literal_text,
)
from model_backend.program import Program


class GenProgram(Program):
    """A Program that knows where it came from and which uncaught exceptions are intended."""

    origin: str = "gen"  # gen | script | humaneval | algorithms | ...
    expect_errors: tuple[str, ...] = ()  # exception class names the program may end with


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


def _mentions(text: str, name: str) -> bool:
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


class FuncBuilder:
    """Builds one function (or method) body statement by statement."""

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
        return any(_mentions(text, v.name.split("[")[0].split(".")[0]) for v in self.all_vars())

    def fresh(self, pool: list[str]) -> str:
        free = [n for n in pool if n not in self.used]
        name = self.rng.choice(free) if free else f"{self.rng.choice(pool)}{len(self.used)}"
        self.used.add(name)
        return name

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

    def atom(self, t: str, avoid: str | None = None) -> str:
        name = self.v(t, avoid=avoid)
        if name is not None and self.chance(0.9):
            return name
        if t == BOOL:
            return self.cond(2)
        return self.lit(t)

    def seq_elem_str(self) -> str:
        """A short string that probably occurs in the strings around: a char var or a literal."""
        c = self.v(STR, lambda v: v.char)
        if c is not None and self.chance(0.5):
            return c
        return self.lit_str()

    # ---- expressions ----------------------------------------------------------------------------------
    def expr(self, t: str, d: int = 0) -> str:
        """An expression of type t that mentions at least one variable (a few tries)."""
        e = self._expr(t, d)
        for _ in range(3):
            if self.has_var(e):
                break
            e = self._expr(t, d)
        return e

    def _expr(self, t: str, d: int = 0) -> str:
        if d >= 2 or (d == 1 and self.chance(0.45)):
            return self.atom(t)
        producer = {INT: self.e_int, STR: self.e_str, BOOL: self.cond, LINT: self.e_lint, LSTR: self.e_lstr,
                    DICT: self.e_dict, SET: self.e_set, TUP: self.e_tup}[t]
        return producer(d)

    def expr_using(self, t: str, name: str, d: int = 0, tries: int = 5) -> str:
        """An expression of type t that mentions `name` (a loop variable, an accumulator)."""
        e = self.expr(t, d)
        for _ in range(tries - 1):
            if _mentions(e, name):
                return e
            e = self.expr(t, d)
        return e

    def binop(self, t: str, op: str, d: int, fn: str = "") -> str | None:
        """`a op b` (or `fn(a, b)` with op ","), with a != b and at least one variable."""
        for _ in range(4):
            a = self.expr(t, d)
            b = self.lit_int(1, 4) if t == INT and op in "+-*" and self.chance(0.35) else self.expr(t, d)
            if norm_expr(a) != norm_expr(b) and self.has_var(a + b):
                return f"{fn}(({a}), ({b}))" if fn else f"({a}) {op} ({b})"
        return None

    def helper_call(self, ret: str, d: int) -> str | None:
        sigs = [s for s in self.helpers if s.ret == ret]
        if not sigs:
            return None
        sig = self.rng.choice(sigs)
        args = ", ".join(self.arg(p, d + 1) for p in sig.params)
        return f"{sig.name}({args})"

    def arg(self, t: str, d: int = 1) -> str:
        """An argument of a call: mostly a variable as is, sometimes an expression."""
        name = self.v(t) if self.chance(0.7) else None
        return name if name is not None else self.expr(t, d)

    def called(self, name: str) -> bool:
        """Whether an emitted line already calls `name`."""
        pattern = re.compile(r"(?<![\w.])" + re.escape(name) + r"\(")
        return any(pattern.search(line) for line in self.lines)

    def weight_call(self, ret: str) -> float:
        if self.must_call is not None and self.must_call.ret == ret and not self.called(self.must_call.name):
            return 6.0
        return 0.6 if any(s.ret == ret for s in self.helpers) else 0.0

    def ifexp(self, t: str, d: int) -> str | None:
        a, b = self.expr(t, d + 1), self.expr(t, d + 1)
        if norm_expr(a) == norm_expr(b):
            return None
        return f"({a}) if ({self.cond(d + 1)}) else ({b})"

    def e_int(self, d: int) -> str:
        sub = d + 1
        rng = self.rng

        def length() -> str | None:
            x = self.v(SIZED)
            return f"len({x})" if x else None

        def str_method() -> str | None:
            s = self.v(STR)
            if s is None:
                return None
            m = rng.choice(["count", "count", "find", "rfind", "find"])
            return f"{s}.{m}({self.seq_elem_str()})"

        def list_count() -> str | None:
            li = self.v(LINT)
            return f"{li}.count({self.atom(INT)})" if li else None

        def li_index() -> str | None:
            li = self.v(LINT)
            if li is None:
                return None
            x = self.atom(INT)
            return f"{li}.index({x}) if {x} in {li} else -1"

        def maxmin() -> str | None:
            li = self.v((LINT, SET))
            if li is None:
                return None
            fn = rng.choice(["max", "min"])
            return f"{fn}({li}) if {li} else {self.lit_int()}"

        def first() -> str | None:
            li = self.v((LINT, TUP))
            if li is None:
                return None
            pos = rng.choice(["0", "-1"])
            return f"{li}[{pos}] if {li} else {self.lit_int()}"

        def dget() -> str | None:
            dv = self.v(DICT)
            return f"{dv}.get({self.expr(STR, sub)}, {self.lit_int()})" if dv else None

        def to_int() -> str | None:
            s = self.v(STR)
            return f"int({s}) if {s}.isdigit() else {self.lit_int()}" if s else None

        def ordc() -> str | None:
            c = self.v(STR, lambda v: v.char)
            return f"ord({c})" if c else None

        def count_if() -> str | None:
            li = self.pick((LINT, STR, LSTR))
            if li is None:
                return None
            e = self.fresh_comp(li.type)
            with self.block([Var(e, ELEM[li.type], char=li.type == STR, assignable=False)]):
                c = self.cond_using(e)
            self.used.discard(e)
            if self.chance(0.5):
                return f"len([{e} for {e} in {li.name} if ({c})])"
            return f"sum((1 for {e} in {li.name} if ({c})))"

        def div() -> str:
            op = rng.choice(["//", "%", "%", "//"])
            return f"({self.expr(INT, sub)}) {op} {self.lit_int(2, 5)}"

        return self.choose([
            (3, lambda: self.v(INT)),
            (0.8, lambda: self.lit_int(-2, 9)),
            (2, length),
            (2.5, lambda: self.binop(INT, rng.choice(['+', '-', '*', '+']), sub)),
            (1.2, div),
            (1.5, str_method),
            (0.6, list_count),
            (0.4, li_index),
            (1, lambda: f"sum({self.expr(LINT, sub)})"),
            (0.6, maxmin),
            (0.5, lambda: self.binop(INT, ',', sub, rng.choice(['max', 'min']))),
            (0.4, first),
            (0.7, dget),
            (0.4, lambda: f"abs({self.expr(INT, sub)})"),
            (0.4, to_int),
            (0.6, ordc),
            (0.5, count_if),
            (0.4, lambda: (lambda e: f"len({e})" if e else None)(self.binop(SET, rng.choice(["&", "|", "-"]), sub))),
            (self.weight_call(INT), lambda: self.helper_call(INT, d)),
            (0.4, lambda: self.ifexp(INT, d)),
        ]) or self.lit_int()

    def e_str(self, d: int) -> str:
        sub = d + 1
        rng = self.rng

        def method() -> str:
            recv = self.v(STR) if self.chance(0.85) else None
            recv = recv or f"({self.expr(STR, sub)})"
            m = rng.choice([
                "upper", "lower", "strip", "strip_arg", "lstrip", "rstrip", "title", "capitalize",
                "swapcase", "replace", "replace", "replace1", "zfill", "center", "ljust", "rjust",
                "removeprefix", "removesuffix", "casefold", "upper", "lower", "replace",
            ])
            if m == "strip_arg":
                return f"{recv}.strip({self.seq_elem_str()})"
            if m in ("lstrip", "rstrip") and self.chance(0.6):
                return f"{recv}.{m}({self.seq_elem_str()})"
            if m == "replace":
                return f"{recv}.replace({self.seq_elem_str()}, {self.lit_str(nonempty=False)})"
            if m == "replace1":
                return f"{recv}.replace({self.seq_elem_str()}, {self.lit_str(nonempty=False)}, 1)"
            if m == "zfill":
                return f"{recv}.zfill({self.lit_int(2, 7)})"
            if m in ("center", "ljust", "rjust"):
                return f"{recv}.{m}({self.lit_int(3, 8)}, {repr(self.values.char())})"
            if m in ("removeprefix", "removesuffix"):
                return f"{recv}.{m}({self.seq_elem_str()})"
            return f"{recv}.{m}()"

        def slice_() -> str | None:
            s = self.v(STR)
            if s is None:
                return None
            form = rng.choice(["[::-1]", "[:{k}]", "[{k}:]", "[{a}:{b}]", "[::2]", "[1:-1]", "[-{k}:]", "[:-{k}]", "[1::2]"])
            k, a, b = self.rng.randint(1, 3), self.rng.randint(0, 2), self.rng.randint(2, 5)
            if self.chance(0.3) and self.find(INT):
                k = self.v(INT)  # type: ignore[assignment]
            return s + form.format(k=k, a=a, b=b)

        def join() -> str:
            sep = rng.choice(["''", "''", "' '", "'-'", "','", repr(self.values.char())])
            return f"{sep}.join({self.expr(LSTR, sub)})"

        def join_sorted() -> str | None:
            s = self.v(STR)
            if s is None:
                return None
            return rng.choice([f"''.join(sorted({s}))", f"''.join(reversed({s}))", f"''.join(sorted({s}, reverse=True))"])

        def charop() -> str | None:
            c = self.v(STR, lambda v: v.char)
            if c is None:
                return None
            return rng.choice([f"{c}.upper()", f"{c} * {self.lit_int(1, 3)}", f"chr(ord({c}) + {self.lit_int(1, 3)})",
                               f"{c}.swapcase()", f"{c} + {self.lit_str()}"])

        def fstring() -> str | None:
            a = self.v((STR, INT))
            b = self.v((STR, INT, LINT), avoid=a)
            if a is None or b is None:
                return None
            mid = rng.choice(["", "-", ":", " ", ",", "="])
            return f"f'{{{a}}}{mid}{{{b}}}'"

        def comp_join() -> str | None:
            s = self.pick((STR, LSTR))
            if s is None:
                return None
            e = self.fresh_comp(s.type)
            with self.block([Var(e, STR, char=s.type == STR, assignable=False)]):
                c = self.cond_using(e)
                body = self.expr_using(STR, e, sub + 1) if self.chance(0.5) else e
            self.used.discard(e)
            return f"''.join([{body} for {e} in {s.name} if ({c})])"

        def first_char() -> str | None:
            s = self.v((STR, LSTR))
            return f"{s}[{rng.choice(['0', '-1'])}] if {s} else {self.lit_str(nonempty=False)}" if s else None

        def partition() -> str | None:
            s = self.v(STR)
            if s is None:
                return None
            return f"{s}.{rng.choice(['partition', 'rpartition'])}({self.seq_elem_str()})[{rng.choice(['0', '2'])}]"

        return self.choose([
            (3, lambda: self.v(STR)),
            (0.7, lambda: self.lit_str(nonempty=False)),
            (3.5, method),
            (1.5, slice_),
            (1.5, lambda: self.binop(STR, "+", sub)),
            (0.5, lambda: f"({self.atom(STR)}) * {self.lit_int(0, 3)}"),
            (1.2, join),
            (0.6, join_sorted),
            (0.8, lambda: f"str({self.expr(INT, sub)})"),
            (0.5, fstring),
            (0.7, charop),
            (0.4, comp_join),
            (0.4, first_char),
            (0.3, partition),
            (self.weight_call(STR), lambda: self.helper_call(STR, d)),
            (0.4, lambda: self.ifexp(STR, d)),
        ]) or self.lit_str()

    def cond(self, d: int = 0) -> str:
        c = self._cond(d)
        for _ in range(4):
            if self.has_var(c):
                break
            c = self._cond(d)
        return c

    def _cond(self, d: int = 0) -> str:
        sub = d + 1
        rng = self.rng

        def cmp_int() -> str | None:
            return self.binop(INT, rng.choice(["<", ">", "==", "!=", "<=", ">=", ">", "<"]), sub)

        def member() -> str | None:
            kind = rng.choice(["str", "list", "dict", "set", "lstr"])
            neg = " not" if self.chance(0.25) else ""
            if kind == "str" and self.find(STR):
                return f"{self.seq_elem_str()}{neg} in {self.v(STR)}"
            if kind == "list" and self.find(LINT):
                return f"{self.atom(INT)}{neg} in {self.v(LINT)}"
            if kind == "dict" and self.find(DICT):
                return f"{self.atom(STR)}{neg} in {self.v(DICT)}"
            if kind == "set" and self.find(SET):
                return f"{self.atom(INT)}{neg} in {self.v(SET)}"
            if kind == "lstr" and self.find(LSTR):
                return f"{self.atom(STR)}{neg} in {self.v(LSTR)}"
            return None

        def pred() -> str | None:
            s = self.v(STR)
            if s is None:
                return None
            m = rng.choice(["isdigit", "isalpha", "isupper", "islower", "isalnum", "isspace", "istitle",
                            "startswith", "endswith", "isdigit", "isupper", "startswith", "isidentifier",
                            "isnumeric", "isdecimal"])
            if m in ("startswith", "endswith"):
                return f"{s}.{m}({self.seq_elem_str()})"
            return f"{s}.{m}()"

        def length() -> str | None:
            x = self.v(SIZED)
            if x is None:
                return None
            op = rng.choice(['>', '<', '==', '>=', '!=', '>'])
            return f"len({x}) {op} {self.lit_int(0 if op in ('>', '==', '!=') else 1, 4)}"

        def parity() -> str:
            return f"({self.expr(INT, sub)}) % {self.lit_int(2, 3)} {rng.choice(['==', '!='])} 0"

        def quant() -> str | None:
            li = self.pick((LINT, STR, LSTR))
            if li is None:
                return None
            e = self.fresh_comp(li.type)
            with self.block([Var(e, ELEM[li.type], char=li.type == STR, assignable=False)]):
                c = self.cond_using(e)
            self.used.discard(e)
            return f"{rng.choice(['all', 'any'])}(({c} for {e} in {li.name}))"

        def palin() -> str | None:
            x = self.v((STR, LINT, LSTR))
            if x is None:
                return None
            return rng.choice([f"{x} == {x}[::-1]", f"{x} == sorted({x})" if not self.find(STR, lambda v: v.name == x)
                               else f"{x} == {x}[::-1]"])

        return self.choose([
            (2, lambda: self.v(BOOL)),
            (2.5, cmp_int),
            (0.8, lambda: self.binop(STR, rng.choice(['==', '!=', '==', '<']), sub)),
            (2.5, member),
            (2, pred),
            (0.6, lambda: (lambda c: f"not ({c})" if not c.startswith("not ") else None)(self.cond(sub)) if d < 2 else None),
            (0.8, lambda: f"({self.cond(sub)}) {rng.choice(['and', 'or'])} ({self.cond(sub)})" if d < 1 else None),
            (0.8, length),
            (0.7, parity),
            (0.3, quant),
            (0.3, palin),
            (0.3, lambda: self.v(SIZED)),
            (self.weight_call(BOOL), lambda: self.helper_call(BOOL, d)),
        ]) or "True"

    def cond_using(self, name: str) -> str:
        """A condition that mentions `name` (a comprehension or loop variable)."""
        var = next((v for v in reversed(self.all_vars()) if v.name == name), None)
        if var is not None and self.chance(0.6):
            rng = self.rng
            if var.type == STR and var.char:
                return rng.choice([f"{name}.isupper()", f"{name}.islower()", f"{name}.isalpha()", f"{name}.isdigit()",
                                   f"{name} in {self.atom(STR, avoid=name)}", f"{name} != {self.lit_str()}",
                                   f"{name} not in {self.lit_str()}", f"{name} == {self.lit_str()}",
                                   f"{name}.isalnum()", f"{name}.isspace()"])
            if var.type == STR:
                return rng.choice([f"len({name}) > {self.lit_int(1, 3)}", f"{name}.startswith({self.lit_str()})",
                                   f"{name} != {self.lit_str()}", f"{name}.isalpha()", f"{self.lit_str()} in {name}",
                                   f"{name}.endswith({self.lit_str()})", f"{name}.islower()"])
            if var.type == INT:
                return rng.choice([f"{name} > {self.lit_int(0, 5)}", f"{name} % 2 == 0", f"{name} % 2 == 1",
                                   f"{name} < {self.atom(INT, avoid=name)}", f"{name} != {self.lit_int()}", f"{name} >= 0",
                                   f"{name} % {self.lit_int(3, 4)} == {self.lit_int(0, 2)}"])
        c = self.cond(1)
        for _ in range(4):
            if _mentions(c, name):
                break
            c = self.cond(1)
        return c

    def fresh_comp(self, seq_type: str) -> str:
        pool = LOOP_NAMES["char"] if seq_type == STR else LOOP_NAMES["int" if ELEM.get(seq_type) == INT else "str"]
        return self.fresh(pool)

    def e_lint(self, d: int) -> str:
        sub = d + 1
        rng = self.rng

        def comp_map() -> str | None:
            src = self.pick((LINT, TUP, SET) if self.chance(0.7) else (STR, LSTR))
            if src is None:
                return None
            e = self.fresh_comp(src.type)
            with self.block([Var(e, ELEM[src.type], char=src.type == STR, assignable=False)]):
                if src.type in (STR, LSTR):
                    body = rng.choice([f"len({e})", f"ord({e})" if src.type == STR else f"len({e})",
                                       f"{src.name}.count({e})", f"{e}.count({self.lit_str()})"])
                else:
                    body = self.expr_using(INT, e, sub + 1)
                cond = f" if ({self.cond_using(e)})" if self.chance(0.3) else ""
            self.used.discard(e)
            return f"[{body} for {e} in {src.name}{cond}]"

        def comp_filter() -> str | None:
            src = self.pick((LINT, TUP))
            if src is None:
                return None
            e = self.fresh_comp(LINT)
            with self.block([Var(e, INT, assignable=False)]):
                c = self.cond_using(e)
            self.used.discard(e)
            return f"[{e} for {e} in {src.name} if ({c})]"

        def slice_() -> str | None:
            li = self.v(LINT)
            if li is None:
                return None
            form = rng.choice(["[::-1]", "[:{k}]", "[{k}:]", "[{a}:{b}]", "[::2]", "[1:]", "[:-1]", "[-{k}:]"])
            return li + form.format(k=self.lit_int(1, 3), a=self.lit_int(0, 2), b=self.lit_int(2, 5))

        def enum() -> str | None:
            li = self.v(LINT)
            if li is None:
                return None
            i, e = self.fresh(LOOP_NAMES["index"]), self.fresh(LOOP_NAMES["int"])
            self.used.discard(i)
            self.used.discard(e)
            body = rng.choice([f"{i} * {e}", f"{e} + {i}", f"{e} - {i}", f"{i}"])
            cond = rng.choice(["", "", f" if {i} % 2 == 0", f" if {e} > {i}"])
            return f"[{body} for {i}, {e} in enumerate({li}){cond}]"

        def zipped() -> str | None:
            lis = self.find(LINT)
            if len(lis) < 2:
                return None
            a, b = rng.sample(lis, 2)
            x, y = self.fresh(["x", "a", "p"]), self.fresh(["y", "b", "q"])
            self.used.discard(x)
            self.used.discard(y)
            return f"[{x} {rng.choice(['+', '-', '*'])} {y} for {x}, {y} in zip({a.name}, {b.name})]"

        return self.choose([
            (3, lambda: self.v(LINT)),
            (0.6, lambda: self.lit(LINT)),
            (1, lambda: f"sorted({self.v((LINT, SET, TUP))})" if self.find((LINT, SET, TUP)) else None),
            (0.5, lambda: f"sorted({self.v(LINT)}, reverse=True)" if self.find(LINT) else None),
            (1, slice_),
            (0.6, lambda: self.binop(LINT, "+", sub)),
            (1.8, comp_map),
            (1.2, comp_filter),
            (0.5, lambda: f"list(range({self.lit_int(1, 6)}))" if self.chance(0.5)
             else f"list(range({self.lit_int(0, 2)}, {self.lit_int(3, 7)}))"),
            (0.4, lambda: f"list(range(len({self.v(SIZED)})))" if self.find(SIZED) else None),
            (0.5, lambda: f"list({self.v(DICT)}.values())" if self.find(DICT) else None),
            (0.4, lambda: f"list({self.v((TUP, SET))})" if self.find((TUP, SET)) else None),
            (0.3, lambda: f"{self.v(LINT)}.copy()" if self.find(LINT) else None),
            (0.4, enum),
            (0.3, zipped),
            (0.5, lambda: (lambda e: f"sorted({e})" if e else None)(self.binop(SET, rng.choice(["&", "|", "-", "^"]), sub))),
            (self.weight_call(LINT), lambda: self.helper_call(LINT, d)),
            (0.2, lambda: self.ifexp(LINT, d)),
        ]) or self.lit(LINT)

    def e_lstr(self, d: int) -> str:
        sub = d + 1
        rng = self.rng

        def split() -> str | None:
            s = self.v(STR)
            if s is None:
                return None
            if self.chance(0.4):
                return f"{s}.split()"
            if self.chance(0.2):
                return f"{s}.rsplit({self.seq_elem_str()}, 1)"
            return f"{s}.split({self.seq_elem_str()})"

        def comp() -> str | None:
            src = self.pick((LSTR, STR))
            if src is None:
                return None
            e = self.fresh_comp(src.type)
            with self.block([Var(e, STR, char=src.type == STR, assignable=False)]):
                body = rng.choice([e, f"{e}.upper()", f"{e}[::-1]", f"{e} * 2", f"{e}.capitalize()",
                                   f"{e} + {self.lit_str()}", f"{e}[0]" if src.type == STR else f"{e}[:1]",
                                   f"{e}.strip({self.lit_str()})"])
                cond = f" if ({self.cond_using(e)})" if (body == e or self.chance(0.3)) else ""
            self.used.discard(e)
            return f"[{body} for {e} in {src.name}{cond}]"

        def from_ints() -> str | None:
            li = self.v((LINT, TUP))
            if li is None:
                return None
            e = self.fresh(LOOP_NAMES["int"])
            self.used.discard(e)
            return f"[str({e}) for {e} in {li}]"

        return self.choose([
            (3, lambda: self.v(LSTR)),
            (0.5, lambda: self.lit(LSTR)),
            (2, split),
            (0.8, lambda: f"list({self.v(STR)})" if self.find(STR) else None),
            (0.8, lambda: f"sorted({self.v((LSTR, STR))})" if self.find((LSTR, STR)) else None),
            (0.5, lambda: f"{self.v(LSTR)}[::-1]" if self.find(LSTR) else None),
            (0.4, lambda: f"{self.v(LSTR)}[{self.lit_int(0, 1)}:{self.lit_int(2, 4)}]" if self.find(LSTR) else None),
            (0.5, lambda: self.binop(LSTR, "+", sub)),
            (1.5, comp),
            (0.4, from_ints),
            (0.6, lambda: rng.choice([f"list({self.v(DICT)})", f"sorted({self.v(DICT)})", f"list({self.v(DICT)}.keys())"])
             if self.find(DICT) else None),
            (self.weight_call(LSTR), lambda: self.helper_call(LSTR, d)),
        ]) or self.lit(LSTR)

    def e_dict(self, d: int) -> str:
        rng = self.rng

        def count_comp() -> str | None:
            src = self.pick((STR, LSTR))
            if src is None:
                return None
            e = self.fresh_comp(src.type)
            self.used.discard(e)
            return rng.choice([f"{{{e}: {src.name}.count({e}) for {e} in {src.name}}}",
                               f"{{{e}: len({e}) for {e} in {src.name}}}" if src.type == LSTR
                               else f"{{{e}: ord({e}) for {e} in {src.name}}}"])

        def enum_comp() -> str | None:
            src = self.v((STR, LSTR))
            if src is None:
                return None
            i, e = self.fresh(LOOP_NAMES["index"]), self.fresh(LOOP_NAMES["str"])
            self.used.discard(i)
            self.used.discard(e)
            return f"{{{e}: {i} for {i}, {e} in enumerate({src})}}"

        def zipped() -> str | None:
            a, b = self.v((STR, LSTR)), self.v((LINT, TUP))
            return f"dict(zip({a}, {b}))" if a and b else None

        def from_items() -> str | None:
            dv = self.v(DICT)
            if dv is None:
                return None
            k, val = self.fresh(LOOP_NAMES["key"]), self.fresh(LOOP_NAMES["val"])
            self.used.discard(k)
            self.used.discard(val)
            return rng.choice([f"{{{k}: {val} * {self.lit_int(2, 3)} for {k}, {val} in {dv}.items()}}",
                               f"{{{k}: {val} for {k}, {val} in {dv}.items() if {val} > {self.lit_int(0, 3)}}}",
                               f"{{{k}: {val} + 1 for {k}, {val} in {dv}.items()}}",
                               f"{{{k}.upper(): {val} for {k}, {val} in {dv}.items()}}",
                               f"{{{k}: {val} for {k}, {val} in sorted({dv}.items())}}"])

        return self.choose([
            (3, lambda: self.v(DICT)),
            (0.6, lambda: self.lit(DICT)),
            (1, count_comp),
            (0.5, enum_comp),
            (0.6, zipped),
            (0.5, lambda: f"dict.fromkeys({self.v((STR, LSTR))}, {self.lit_int()})" if self.find((STR, LSTR)) else None),
            (0.3, lambda: f"{self.v(DICT)}.copy()" if self.find(DICT) else None),
            (0.8, from_items),
            (0.2, lambda: f"{{**{self.v(DICT)}, {self.lit_str()}: {self.lit_int()}}}" if self.find(DICT) else None),
        ]) or self.lit(DICT)

    def e_set(self, d: int) -> str:
        sub = d + 1
        rng = self.rng

        def comp() -> str | None:
            li = self.v((LINT, TUP))
            if li is None:
                return None
            e = self.fresh(LOOP_NAMES["int"])
            self.used.discard(e)
            return rng.choice([f"{{{e} % {self.lit_int(2, 4)} for {e} in {li}}}", f"{{{e} // 2 for {e} in {li}}}",
                               f"{{abs({e}) for {e} in {li}}}"])

        return self.choose([
            (3, lambda: self.v(SET)),
            (0.4, lambda: self.lit(SET)),
            (1.5, lambda: f"set({self.v((LINT, TUP))})" if self.find((LINT, TUP)) else None),
            (2.5, lambda: self.binop(SET, rng.choice(['|', '&', '-', '^', '|', '&']), sub)),
            (0.6, comp),
            (0.3, lambda: f"set(range({self.lit_int(1, 5)}))"),
            (0.4, lambda: f"{{len(w) for w in {self.v(LSTR)}}}" if self.find(LSTR) and "w" not in self.used else None),
            (0.3, lambda: f"set({self.v(DICT)}.values())" if self.find(DICT) else None),
        ]) or self.lit(SET)

    def e_tup(self, d: int) -> str:
        sub = d + 1
        rng = self.rng
        return self.choose([
            (3, lambda: self.v(TUP)),
            (0.5, lambda: self.lit(TUP)),
            (1, lambda: f"tuple({self.v(LINT)})" if self.find(LINT) else None),
            (1.2, lambda: f"({self.expr(INT, sub)}, {self.expr(INT, sub)})"),
            (0.5, lambda: f"{self.v(TUP)}[::-1]" if self.find(TUP) else None),
            (0.5, lambda: f"{self.v(TUP)} + ({self.expr(INT, sub)},)" if self.find(TUP) else None),
            (0.5, lambda: f"tuple(sorted({self.v((LINT, SET, TUP))}))" if self.find((LINT, SET, TUP)) else None),
            (0.5, lambda: f"divmod({self.expr(INT, sub)}, {self.lit_int(2, 5)})"),
            (0.4, lambda: f"(len({self.v(STR)}), {self.v(STR)}.count({self.seq_elem_str()}))" if self.find(STR) else None),
            (0.3, lambda: f"{self.v(TUP)}[{rng.choice(['1:', ':-1', '::2'])}]" if self.find(TUP) else None),
        ]) or self.lit(TUP)

    # ---- statements --------------------------------------------------------------------------------
    def new_type(self) -> str:
        return self.rng.choices([INT, STR, LINT, LSTR, DICT, BOOL, SET, TUP], [5, 5, 4, 2, 2.5, 1, 1.2, 1])[0]

    def s_assign(self) -> bool:
        t = self.new_type()
        e = self.expr(t)
        if not self.has_var(e):
            return False
        name = self.fresh(NAMES[t])
        self.stmt(f"{name} = {e}")
        self.last = self.declare(name, t)
        return True

    def s_reassign(self) -> bool:
        var = self.pick(tuple(NAMES), lambda v: v.assignable and not v.frozen and "[" not in v.name, write=True)
        if var is None:
            return False
        e = self.expr_using(var.type, var.name)
        if norm_expr(e) == var.name:
            return False
        self.stmt(f"{var.name} = {e}")
        self.last = var
        return True

    def s_aug(self) -> bool:
        var = self.pick((INT, STR, LINT), lambda v: v.assignable and not v.frozen, write=True)
        if var is None:
            return False
        if var.type == INT:
            op = self.rng.choice(["+=", "+=", "-=", "*=", "//=", "%="])
            if op in ("//=", "%="):
                rhs = self.lit_int(2, 4)  # never a zero divisor
            else:
                rhs = self.lit_int(2, 4) if op == "*=" and self.chance(0.7) else (
                    self.lit_int(1, 3) if self.chance(0.3) else self.expr(INT, 1))
        elif var.type == STR:
            op, rhs = "+=", self.expr(STR, 1)
        else:
            op, rhs = "+=", self.expr(LINT, 1)
        if norm_expr(rhs) == var.name:
            return False
        self.stmt(f"{var.name} {op} {rhs}")
        self.last = var
        return True

    def guarded(self, guard: str, text: str) -> None:
        self.emit(f"if {norm_expr(guard)}:")
        self.indent += 1
        self.stmt(text)
        self.indent -= 1

    def s_mutate(self) -> bool:
        var = self.pick((LINT, LSTR, DICT, SET), lambda v: not v.frozen, write=True)
        if var is None:
            return False
        rng = self.rng
        n = var.name
        if var.type in (LINT, LSTR):
            et = ELEM[var.type]
            m = rng.choice(["append", "append", "append", "extend", "insert", "reverse", "sort", "sort_rev", "pop",
                            "pop0", "remove", "setitem", "del", "pop_assign", "slice_assign"])
            if m == "append":
                self.stmt(f"{n}.append({self.expr(et, 1)})")
            elif m == "extend":
                self.stmt(f"{n}.extend({self.expr(var.type, 1)})")
            elif m == "insert":
                self.stmt(f"{n}.insert({self.rng.choice(['0', '0', '1', '-1', f'len({n})'])}, {self.expr(et, 1)})")
            elif m == "reverse":
                self.stmt(f"{n}.reverse()")
            elif m == "sort":
                self.stmt(f"{n}.sort()")
            elif m == "sort_rev":
                self.stmt(f"{n}.sort(reverse=True)")
            elif m == "pop":
                self.guarded(n, f"{n}.pop()")
            elif m == "pop0":
                self.guarded(f"len({n}) > 1", f"{n}.pop(0)")
            elif m == "remove":
                x = self.atom(et)
                self.guarded(f"{x} in {n}", f"{n}.remove({x})")
            elif m == "setitem":
                i = self.atom(INT)
                guard = f"len({n}) > {i}" if i.isdigit() else f"0 <= {i} < len({n})"
                self.guarded(guard, f"{n}[{i}] = {self.expr(et, 1)}")
            elif m == "del":
                self.guarded(n, f"del {n}[{rng.choice(['0', '-1'])}]")
            elif m == "slice_assign":
                self.stmt(f"{n}[{self.lit_int(0, 1)}:{self.lit_int(2, 3)}] = {self.expr(var.type, 1)}")
            else:
                t = self.fresh(NAMES[et])
                self.emit(f"{t} = {norm_expr(f'{n}.pop()')} if {n} else {self.lit(et)}")
                self.last = self.declare(t, et)
                return True
        elif var.type == DICT:
            m = rng.choice(["set", "set", "incr", "update", "setdefault", "pop", "del"])
            k = self.expr(STR, 1)
            if m == "set":
                self.stmt(f"{n}[{k}] = {self.expr(INT, 1)}")
            elif m == "incr":
                self.stmt(f"{n}[{k}] = {n}.get({k}, 0) + {self.lit_int(1, 2)}")
            elif m == "update":
                self.stmt(f"{n}.update({{{k}: {self.expr(INT, 1)}}})")
            elif m == "setdefault":
                self.stmt(f"{n}.setdefault({k}, {self.expr(INT, 1)})")
            elif m == "pop":
                self.stmt(f"{n}.pop({k}, None)")
            else:
                self.guarded(f"({k}) in {n}", f"del {n}[{k}]")
        else:
            m = rng.choice(["add", "add", "discard", "update"])
            if m == "update":
                self.stmt(f"{n}.update({self.expr(LINT, 1)})")
            else:
                self.stmt(f"{n}.{m}({self.expr(INT, 1)})")
        self.last = var
        return True

    def s_unpack(self) -> bool:
        rng = self.rng
        if self.chance(0.5):
            t = rng.choice([INT, STR, LINT])
            cands = self.find(t, lambda v: v.assignable and not v.frozen and "[" not in v.name)
            if len(cands) < 2:
                return False
            a, b = rng.sample(cands, 2)
            self.stmt(f"{a.name}, {b.name} = {b.name}, {a.name}")
            self.last = a
            return True
        q, r = self.fresh(["q", "quot", "hi", "a"]), self.fresh(["r", "rem", "lo", "b"])
        self.stmt(f"{q}, {r} = divmod({self.expr(INT, 1)}, {self.lit_int(2, 5)})")
        self.declare(q, INT)
        self.last = self.declare(r, INT)
        return True

    def s_if(self) -> bool:
        if self.nest >= 2:
            return False
        self.emit(f"if {norm_expr(self.cond())}:")
        with self.block():
            self.body(self.rng.randint(1, 2), simple=self.nest >= 2)
        r = self.rng.random()
        if r < 0.25:
            self.emit(f"elif {norm_expr(self.cond())}:")
            with self.block():
                self.body(1, simple=True)
        if r < 0.25 or self.chance(0.45):
            self.emit("else:")
            with self.block():
                self.body(1, simple=True)
        return True

    def s_return_early(self) -> bool:
        if self.nest >= 2:
            return False
        self.emit(f"if {norm_expr(self.cond())}:")
        with self.block():
            t = self.return_type_hint or self.rng.choice([INT, STR, BOOL])
            self.stmt(f"return {self.expr(t, 1)}")
        self.return_type_hint = t
        return True

    def acc_update(self, acc: Var, lv: Var) -> None:
        """One statement that folds the loop variable `lv` into the accumulator `acc`."""
        rng = self.rng
        n = acc.name
        if acc.type == INT:
            r = rng.random()
            if r < 0.35:
                self.stmt(f"{n} += 1")
            elif r < 0.8 and lv.type == INT:
                self.stmt(f"{n} {rng.choice(['+=', '+=', '-=', '*='])} {self.expr_using(INT, lv.name, 1)}")
            else:
                e = self.expr_using(INT, lv.name, 1)
                self.stmt(f"{n} += {e}" if _mentions(e, lv.name) and norm_expr(e) != n else f"{n} += 1")
        elif acc.type == STR:
            e = self.expr_using(STR, lv.name, 1) if lv.type != STR or self.chance(0.5) else lv.name
            if not _mentions(e, lv.name):
                e = lv.name if lv.type == STR else f"str({lv.name})"
            if self.chance(0.2):
                self.stmt(f"{n} = ({e}) + {n}")
            else:
                self.stmt(f"{n} += {e}")
        elif acc.type in (LINT, LSTR):
            et = ELEM[acc.type]
            e = lv.name if lv.type == et and self.chance(0.4) else self.expr_using(et, lv.name, 1)
            if self.chance(0.15):
                self.stmt(f"{n}.insert(0, {e})")
            else:
                self.stmt(f"{n}.append({e})")
        elif acc.type == DICT:
            k = lv.name if lv.type == STR else f"str({lv.name})" if lv.type == INT else self.expr(STR, 1)
            if self.chance(0.6):
                self.stmt(f"{n}[{k}] = {n}.get({k}, 0) + 1")
            else:
                self.stmt(f"{n}[{k}] = {self.expr(INT, 1)}")
        elif acc.type == SET:
            self.stmt(f"{n}.add({lv.name if lv.type == INT else self.expr_using(INT, lv.name, 1)})")

    def loop_header(self) -> tuple[str, list[Var], Var | None] | None:
        """Choose what a for loop iterates: (header, loop variables, iterated variable to freeze)."""
        rng = self.rng
        opts: list[tuple[float, str]] = []
        if self.find(STR):
            opts.append((3, "str"))
        if self.find(LINT):
            opts.append((3, "list"))
            opts.append((1, "range_len"))
            opts.append((0.8, "enumerate"))
        if self.find(LSTR):
            opts.append((1.5, "lstr"))
        if self.find(DICT):
            opts.append((1.5, "items"))
            opts.append((0.8, "keys"))
        if self.find((SET, TUP)):
            opts.append((0.5, "sorted"))
        if self.find(STR) and self.find(LINT):
            opts.append((0.3, "zip"))
        opts.append((0.25, "range"))
        kind = rng.choices([k for _, k in opts], [w for w, _ in opts])[0]
        if kind == "str":
            s = self.pick(STR)
            assert s is not None
            c = self.fresh(LOOP_NAMES["char"])
            return f"for {c} in {s.name}:", [Var(c, STR, char=True)], None
        if kind in ("list", "lstr"):
            li = self.pick(LINT if kind == "list" else LSTR)
            assert li is not None
            e = self.fresh(LOOP_NAMES["int" if kind == "list" else "str"])
            src = li.name if self.chance(0.85) else rng.choice([f"{li.name}[::-1]", f"sorted({li.name})", f"{li.name}[1:]"])
            return f"for {e} in {src}:", [Var(e, ELEM[li.type])], li
        if kind == "range_len":
            li = self.pick((LINT, STR, LSTR))
            assert li is not None
            i = self.fresh(LOOP_NAMES["index"])
            alias = Var(f"{li.name}[{i}]", ELEM[li.type], char=li.type == STR, assignable=li.type != STR)
            start = rng.choice(["", "", "1, "])
            return f"for {i} in range({start}len({li.name})):", [Var(i, INT, assignable=False), alias], li
        if kind == "enumerate":
            li = self.pick(LINT)
            assert li is not None
            i, e = self.fresh(LOOP_NAMES["index"]), self.fresh(LOOP_NAMES["int"])
            return f"for {i}, {e} in enumerate({li.name}):", [Var(i, INT, assignable=False), Var(e, INT)], li
        if kind == "items":
            dv = self.pick(DICT)
            assert dv is not None
            k, val = self.fresh(LOOP_NAMES["key"]), self.fresh(LOOP_NAMES["val"])
            return f"for {k}, {val} in {dv.name}.items():", [Var(k, STR), Var(val, INT)], dv
        if kind == "keys":
            dv = self.pick(DICT)
            assert dv is not None
            k = self.fresh(LOOP_NAMES["key"])
            it = rng.choice([dv.name, f"sorted({dv.name})", f"list({dv.name})", f"{dv.name}.keys()"])
            return f"for {k} in {it}:", [Var(k, STR), Var(f"{dv.name}[{k}]", INT)], dv
        if kind == "sorted":
            sv = self.pick((SET, TUP))
            assert sv is not None
            e = self.fresh(LOOP_NAMES["int"])
            return f"for {e} in sorted({sv.name}):", [Var(e, INT)], None
        if kind == "zip":
            s, li = self.pick(STR), self.pick(LINT)
            assert s is not None and li is not None
            c, e = self.fresh(LOOP_NAMES["char"]), self.fresh(LOOP_NAMES["int"])
            return f"for {c}, {e} in zip({s.name}, {li.name}):", [Var(c, STR, char=True), Var(e, INT)], li
        i = self.fresh(LOOP_NAMES["index"])
        n = self.lit_int(2, 5)
        iv = self.v(INT, lambda v: v.assignable) if self.chance(0.3) else None
        hdr = f"for {i} in range({n}):" if iv is None else f"for {i} in range(min({iv}, {n})):"
        return hdr, [Var(i, INT, assignable=False)], None

    def s_for(self) -> bool:
        if self.nest >= 2 or self.loop_depth >= (2 if self.chance(0.15) else 1):
            return False
        header = self.loop_header()
        if header is None:
            return False
        hdr, loop_vars, frozen = header
        acc: Var | None = None
        if self.chance(0.7):
            t = self.rng.choices([INT, STR, LINT, LSTR, DICT, SET], [4, 3.5, 4, 1, 1.5, 0.4])[0]
            existing = self.pick(t, lambda v: v.assignable and not v.frozen and v is not frozen and "[" not in v.name)
            if existing is not None and self.chance(0.3):
                acc = existing
            else:
                name = self.fresh(NAMES[t])
                init = {INT: self.rng.choice(["0", "0", "1"]), STR: "''", LINT: "[]", LSTR: "[]", DICT: "{}", SET: "set()"}[t]
                if t == INT and self.chance(0.2):
                    init = self.expr(INT, 1)
                self.stmt(f"{name} = {init}")
                acc = self.declare(name, t)
        self.emit(hdr)
        self.loop_depth += 1
        with self.frozen(frozen), self.block(loop_vars):
            lv = loop_vars[-1] if loop_vars[-1].assignable or len(loop_vars) == 1 else loop_vars[0]
            if acc is not None:
                pre = self.rng.randint(0, 1) if self.chance(0.4) else 0
                self.body(pre, simple=True)
                if self.chance(0.5) and self.nest < 2:
                    self.emit(f"if {norm_expr(self.cond_using(lv.name))}:")
                    with self.block():
                        self.acc_update(acc, lv)
                    r = self.rng.random()
                    if r < 0.35:
                        self.emit("else:")
                        with self.block():
                            self.acc_update(acc, lv) if self.chance(0.6) else self.body(1, simple=True)
                    elif r < 0.5:
                        self.emit("else:")
                        with self.block():
                            self.stmt(self.rng.choice(["break", "continue"]))
                else:
                    self.acc_update(acc, lv)
            else:
                self.body(self.rng.randint(1, 2), simple=self.nest >= 2)
                if self.chance(0.15):
                    self.emit(f"if {norm_expr(self.cond_using(lv.name))}:")
                    with self.block():
                        self.stmt("break")
        self.loop_depth -= 1
        if acc is not None:
            self.last = acc
        return True

    def s_while(self) -> bool:
        if self.nest >= 2 or self.loop_depth >= 1:
            return False
        rng = self.rng
        kinds = ["index"] if self.find((LINT, STR, LSTR)) else []
        if self.find(INT, lambda v: v.assignable and not v.frozen and "[" not in v.name):
            kinds += ["digits"]
        if self.find(LINT, lambda v: not v.frozen and v.assignable):
            kinds += ["pop"]
        if self.find(STR, lambda v: v.assignable and not v.frozen and "[" not in v.name):
            kinds += ["strip", "strip", "remove_sub"]
        kinds += ["grow"]
        kind = rng.choice(kinds)
        self.loop_depth += 1
        try:
            if kind == "index":
                seq = self.pick((LINT, STR, LSTR))
                assert seq is not None
                i = self.fresh(LOOP_NAMES["index"])
                self.stmt(f"{i} = 0")
                self.emit(f"while {i} < len({seq.name}):")
                alias = Var(f"{seq.name}[{i}]", ELEM[seq.type], char=seq.type == STR, assignable=seq.type != STR)
                with self.frozen(seq), self.block([alias]):
                    self.body(rng.randint(1, 2), simple=True)
                    self.stmt(f"{i} += {rng.choice(['1', '1', '2'])}")
                self.declare(i, INT, assignable=False)
            elif kind == "digits":
                n = self.pick(INT, lambda v: v.assignable and not v.frozen and "[" not in v.name)
                assert n is not None
                base = rng.choice(["10", "2", "10", "3"])
                acc = self.fresh(NAMES[LINT] if self.chance(0.5) else NAMES[INT])
                is_list = acc in NAMES[LINT]
                self.stmt(f"{acc} = {'[]' if is_list else '0'}")
                self.emit(f"while {n.name} > 0:")
                with self.block():
                    if is_list:
                        self.stmt(f"{acc}.append({n.name} % {base})")
                    else:
                        self.stmt(f"{acc} += {n.name} % {base}")
                    self.stmt(f"{n.name} //= {base}")
                self.last = self.declare(acc, LINT if is_list else INT)
            elif kind == "pop":
                li = self.pick(LINT, lambda v: not v.frozen and v.assignable)
                assert li is not None
                e = self.fresh(LOOP_NAMES["int"])
                self.emit(f"while {li.name}:")
                with self.frozen(li), self.block([Var(e, INT)]):
                    self.stmt(f"{e} = {li.name}.pop({rng.choice(['', '0'])})")
                    self.body(1, simple=True)
            elif kind == "strip":
                s = self.pick(STR, lambda v: v.assignable and not v.frozen and "[" not in v.name)
                assert s is not None
                c = self.lit_str()
                form = rng.choice(["start", "end", "first", "last"])
                if form == "start":
                    self.emit(f"while {s.name}.startswith({c}):")
                    body = f"{s.name} = {s.name}[{len(ast.literal_eval(c))}:]"
                elif form == "end":
                    self.emit(f"while {s.name}.endswith({c}):")
                    body = f"{s.name} = {s.name}[:-{len(ast.literal_eval(c))}]"
                elif form == "first":
                    self.emit(f"while {s.name} and {s.name}[0] {rng.choice(['==', '!='])} {repr(self.values.char())}:")
                    body = f"{s.name} = {s.name}[1:]"
                else:
                    self.emit(f"while len({s.name}) > {self.lit_int(1, 4)}:")
                    body = f"{s.name} = {s.name}[{rng.choice(['1:', ':-1', '2:', '::2'])}]"
                with self.block():
                    if self.chance(0.4):
                        self.body(1, simple=True)
                    self.stmt(body)
                self.last = s
            elif kind == "remove_sub":
                s = self.pick(STR, lambda v: v.assignable and not v.frozen and "[" not in v.name)
                assert s is not None
                c = self.lit_str()
                cnt = self.fresh(NAMES[INT])
                self.stmt(f"{cnt} = 0")
                self.emit(f"while {c} in {s.name}:")
                with self.block():
                    self.stmt(f"{s.name} = {s.name}.replace({c}, '', 1)")
                    self.stmt(f"{cnt} += 1")
                self.last = self.declare(cnt, INT)
            else:
                t = rng.choice([LINT, STR, LSTR])
                acc = self.fresh(NAMES[t])
                self.stmt(f"{acc} = {'[]' if t != STR else repr('')}")
                self.emit(f"while len({acc}) < {self.lit_int(2, 5)}:")
                with self.block():
                    if t == STR:
                        self.stmt(f"{acc} += {self.lit_str()}")
                    else:
                        self.stmt(f"{acc}.append({self.expr(ELEM[t], 1)})")
                self.last = self.declare(acc, t)
        finally:
            self.loop_depth -= 1
        return True

    def risky(self) -> tuple[str, str, str] | None:
        """(expression that may raise, exception name, its type)."""
        rng = self.rng
        opts: list[tuple[str, str, str]] = []
        if self.find(LINT):
            li = self.v(LINT)
            opts += [(f"{li}.index({self.atom(INT)})", "ValueError", INT),
                     (f"{li}[{self.atom(INT)}]", "IndexError", INT)]
        if self.find(STR):
            s = self.v(STR)
            opts += [(f"{s}.index({self.seq_elem_str()})", "ValueError", INT), (f"int({s})", "ValueError", INT),
                     (f"{s}[{self.atom(INT)}]", "IndexError", STR)]
        if self.find(DICT):
            opts += [(f"{self.v(DICT)}[{self.atom(STR)}]", "KeyError", INT)]
        if self.find(LSTR):
            opts += [(f"{self.v(LSTR)}[{self.atom(INT)}]", "IndexError", STR)]
        den = self.v(INT)
        if den is not None:
            opts += [(f"{self.atom(INT, avoid=den)} // {den}", "ZeroDivisionError", INT)]
        raising = [s for s in self.helpers if s.raises and s.ret]
        for sig in raising:
            args = ", ".join(self.expr(p, 1) for p in sig.params)
            opts += [(f"{sig.name}({args})", sig.raises[0], sig.ret or INT)] * 3
        if not opts:
            return None
        return rng.choice(opts)

    def s_try(self) -> bool:
        if self.nest >= 2:
            return False
        r = self.risky()
        if r is None:
            return False
        e, exc, t = r
        name = self.fresh(NAMES[t])
        self.emit("try:")
        with self.block():
            self.stmt(f"{name} = {e}")
            if self.chance(0.3):
                self.body(1, simple=True)
        alias = ""
        if self.chance(0.15):
            exc = "Exception"
        elif self.chance(0.15):
            exc = f"({exc}, {self.rng.choice([x for x in RAISABLE + ('TypeError',) if x != exc])})"
        if self.chance(0.15):
            alias = f" as {self.fresh(['e', 'err', 'exc'])}"
        self.emit(f"except {exc}{alias}:")
        with self.block():
            if alias and t == STR:
                self.stmt(f"{name} = str({alias[4:]})")
            else:
                self.stmt(f"{name} = {self.lit(t)}")
        if self.chance(0.1):
            self.emit("finally:")
            with self.block():
                self.body(1, simple=True)
        self.last = self.declare(name, t)
        return True

    def s_raise(self) -> bool:
        if not self.allow_raise or self.nest >= 2:
            return False
        exc = self.rng.choice(["ValueError", "ValueError", "KeyError", "IndexError"])
        self.emit(f"if {norm_expr(self.cond())}:")
        with self.block():
            arg = self.rng.choice([self.lit_str(), self.atom(self.rng.choice([INT, STR])),
                                   f"f'bad {{{self.v((INT, STR)) or 0}}}'", ""])
            self.stmt(f"raise {exc}({arg})")
        self.prog.expect.add(exc)
        self.raises.add(exc)
        return True

    def s_risky_bare(self) -> bool:
        """A risky operation left unguarded: the program may end with that exception (intended)."""
        if not self.allow_raise:
            return False
        r = self.risky()
        if r is None:
            return False
        e, exc, t = r
        name = self.fresh(NAMES[t])
        self.stmt(f"{name} = {e}")
        self.prog.expect.add(exc)
        self.raises.add(exc)
        self.last = self.declare(name, t)
        return True

    def s_print(self) -> bool:
        self.stmt(f"print({self.expr(self.rng.choice([INT, STR, LINT]), 1)})")
        return True

    def statement(self, simple: bool = False) -> None:
        opts: list[tuple[float, Callable[[], bool]]] = [
            (3.0 if self.nest == 0 else 0.7, self.s_assign),
            (1.5, self.s_reassign),
            (1.2, self.s_aug),
            (2.2, self.s_mutate),
            (0.4, self.s_unpack),
            (0.06, self.s_print),
        ]
        if not simple:
            opts += [(2.6, self.s_for), (1.4, self.s_if), (0.5, self.s_while), (0.6, self.s_try),
                     (0.4, self.s_return_early), (0.12, self.s_raise), (0.06, self.s_risky_bare)]
        opts = list(opts)
        while opts:
            fn = self.rng.choices([f for _, f in opts], [w for w, _ in opts])[0]
            if fn():
                return
            opts = [o for o in opts if o[1] is not fn]

    def body(self, n: int, simple: bool = False) -> None:
        for _ in range(n):
            self.statement(simple)

    def finish(self, ret: str | None = None, nontrivial: bool = False) -> str | None:
        """Emit the final return and return its type. The result is built from the values nobody has
        read yet (so that no computation is dead), else from the last value changed."""
        if self.must_call is not None and not self.called(self.must_call.name):
            t = self.must_call.ret or INT
            if ret in (None, t) and not self.return_type_hint and self.chance(0.4):
                self.stmt(f"return {self.helper_call_forced(self.must_call)}")
                return t
            name = self.fresh(NAMES[t])
            self.stmt(f"{name} = {self.helper_call_forced(self.must_call)}")
            self.last = self.declare(name, t)
        params = {p.name for p in self.params}
        unread = [v for v in self.all_vars() if v.reads == 0 and v.name not in params and "[" not in v.name]
        focus = unread[-1] if unread else self.last
        if ret is None:
            if self.return_type_hint is not None:
                ret = self.return_type_hint
            elif focus is not None and self.chance(0.85):
                ret = focus.type
            else:
                ret = self.rng.choices([INT, STR, LINT, BOOL, LSTR, DICT, TUP], [4, 4, 3, 1.5, 1, 1, 0.6])[0]
        if focus is not None and focus.type == ret and not nontrivial and self.chance(0.55):
            self.stmt(f"return {focus.name}")
            return ret
        if len(unread) >= 2 and self.chance(0.3):
            a, b = unread[-2], unread[-1]
            self.stmt(f"return ({a.name}, {b.name})")
            return TUP
        e = ""
        for _ in range(6):
            e = self.expr_using(ret, focus.name) if focus is not None else self.expr(ret)
            trivial = re.fullmatch(r"[\w.]+|'[^']*'|-?\d+", norm_expr(e)) is not None
            if self.has_var(e) and not (nontrivial and trivial):
                break
        self.stmt(f"return {e}")
        return ret

    def helper_call_forced(self, sig: Sig) -> str:
        return f"{sig.name}({', '.join(self.arg(p) for p in sig.params)})"


# ---------------------------------------------------------------------------------------------------
# whole programs


def _param_types(rng: random.Random, n: int) -> list[str]:
    return rng.choices([STR, LINT, INT, LSTR, DICT, SET, TUP, BOOL], [6, 6, 4, 1.5, 2.2, 1.0, 0.8, 0.3], k=n)


def _params(fb_used: set[str], rng: random.Random, types: list[str]) -> list[Var]:
    out = []
    for t in types:
        free = [n for n in NAMES[t] if n not in fb_used]
        name = rng.choice(free) if free else f"{NAMES[t][0]}{len(fb_used)}"
        fb_used.add(name)
        out.append(Var(name, t))
    return out


def _def_line(name: str, params: list[Var]) -> str:
    return f"def {name}({', '.join(p.name for p in params)}):"


def _int_param_values(prog: ProgramBuilder, var: Var, source: str) -> object:
    """Inputs for an int parameter: small and non-negative when it bounds a range or a repetition."""
    if re.search(rf"range\([^)]*\b{re.escape(var.name)}\b|\b{re.escape(var.name)}\s*\*|\*\s*{re.escape(var.name)}\b", source):
        return prog.rng.randint(0, 5)
    return prog.values.integer()


def _args_text(prog: ProgramBuilder, params: list[Var], source: str, overrides: dict[str, object] | None = None) -> str:
    parts = []
    for p in params:
        if overrides and p.name in overrides:
            value = overrides[p.name]
        elif p.type == INT:
            value = _int_param_values(prog, p, source)
        else:
            value = prog.values.value(p.type)
        parts.append(literal_text(value))
    return ", ".join(parts)


def build_function(prog: ProgramBuilder, name: str, types: list[str], n_stmts: int, helpers: list[Sig] | None = None,
                   classes: list[ClassInfo] | None = None, must_call: Sig | None = None, allow_raise: bool = True,
                   ret: str | None = None, extra: Callable[[FuncBuilder], None] | None = None,
                   nontrivial: bool = False) -> tuple[Sig, list[Var]]:
    """Build `def name(...)` into prog.chunks; return its signature and parameters."""
    used = set(prog.globals) | {name}
    params = _params(used, prog.rng, types)
    fb = FuncBuilder(prog, name, params, helpers=helpers, classes=classes, must_call=must_call, allow_raise=allow_raise)
    if extra is not None:
        extra(fb)
    fb.body(n_stmts)
    rtype = fb.finish(ret, nontrivial=nontrivial)
    prog.chunks.append([_def_line(name, params)] + fb.lines)
    return Sig(name, [p.type for p in params], rtype, tuple(sorted(fb.raises))), params


def _recursive(prog: ProgramBuilder, name: str, prefer: list[str] | None = None) -> Sig:
    """A structurally recursive function over a list, a string or a natural number."""
    rng = prog.rng
    ptype = rng.choice([LINT, LINT, STR, STR, INT, INT, "gcd"])
    usable = [t for t in prefer or [] if t in (LINT, STR, INT)]
    if usable and rng.random() < 0.8:
        ptype = rng.choice(usable)
    if ptype == "gcd":
        a, b = rng.sample(["a", "b", "x", "y", "m", "n"], 2)
        op = rng.choice(["%", "-"]) if rng.random() < 0.3 else "%"
        body = [f"def {name}({a}, {b}):",
                f"    if {b} == 0:" if op == "%" else f"    if {b} <= 0 or {a} <= 0:",
                f"        return {a}",
                f"    return {name}({b}, {a} % {b})" if op == "%" else f"    return {name}({b}, {a} - {b})" if rng.random() < 0.5
                else f"    return {name}({a} - 1, {b})"]
        prog.chunks.append(body)
        return Sig(name, [INT, INT], INT, recursive=True)
    pname = rng.choice(NAMES[ptype][:8])
    param = Var(pname, ptype)
    extra_param: Var | None = None
    if rng.random() < 0.3:
        et = rng.choice([INT, STR])
        extra_param = Var(rng.choice([n for n in NAMES[et] if n != pname][:6]), et, assignable=False)
    params = [param] + ([extra_param] if extra_param else [])
    fb = FuncBuilder(prog, name, params, allow_raise=False)
    ret = rng.choices([INT, STR, LINT, BOOL], [4, 3 if ptype == STR else 1, 2 if ptype == LINT else 1, 1])[0]
    if ptype == INT:
        base = rng.choice([f"{pname} <= 0", f"{pname} <= 1", f"{pname} == 0", f"{pname} < 2"])
        shrink = rng.choice([f"{pname} - 1", f"{pname} - 1", f"{pname} // 2", f"{pname} - 2"])
        head = Var(pname, INT, assignable=False)
    elif ptype == STR:
        base = rng.choice([f"not {pname}", f"len({pname}) <= 1", f"{pname} == ''"])
        first = rng.random() < 0.7
        shrink = f"{pname}[1:]" if first else f"{pname}[:-1]"
        head = Var(f"{pname}[0]" if first else f"{pname}[-1]", STR, char=True, assignable=False)
    else:
        base = rng.choice([f"not {pname}", f"len({pname}) == 0", f"len({pname}) <= 1"])
        first = rng.random() < 0.7
        shrink = f"{pname}[1:]" if first else f"{pname}[:-1]"
        head = Var(f"{pname}[0]" if first else f"{pname}[-1]", INT, assignable=False)
    fb.emit(f"if {base}:")
    with fb.block():
        if "<= 1" in base and ptype != INT and ret == ptype:
            fb.stmt(f"return {pname}")
        elif ret == INT:
            fb.stmt(f"return {rng.choice(['0', '0', '1', pname if ptype == INT else '0'])}")
        elif ret == STR:
            fb.stmt(f"return {rng.choice([repr(''), repr(''), fb.lit_str()])}")
        elif ret == LINT:
            fb.stmt(f"return {rng.choice(['[]', '[]', '[0]'])}")
        else:
            fb.stmt(f"return {rng.choice(['True', 'False'])}")
    fb.scopes[0] = [head] + ([extra_param] if extra_param else [])
    call_args = shrink + (f", {extra_param.name}" if extra_param else "")
    rest_name = fb.fresh(["rest", "sub", "tail", "r", "prev", "smaller", "res"])
    if rng.random() < 0.5:
        fb.stmt(f"{rest_name} = {name}({call_args})")
        rest = f"{rest_name}"
    else:
        rest = f"{name}({call_args})"
    rng_ = rng.random()
    if ret == INT:
        other = fb.expr_using(INT, head.name, 1) if head.type == INT else rng.choice(
            [f"ord({head.name})", f"int({head.name}.isupper())", f"len({head.name})", "1"])
        other = f"({other})"
        combo = rng.choice([f"{other} + {rest}", f"{rest} + {other}", f"{rest} * 2 + {other}", f"max({other}, {rest})",
                            f"{other} - {rest}", f"{rest} + 1", f"{other} * {rest}" if ptype == INT else f"{other} + {rest}"])
        if rng_ < 0.3:
            combo = f"{rest} + 1 if {fb.cond_using(head.name)} else {rest}"
    elif ret == STR:
        h = head.name if head.type == STR else f"str({head.name})"
        piece = rng.choice([h, f"{h}.upper()", f"{h} * 2", h, f"{h} + {fb.lit_str()}"])
        combo = rng.choice([f"{rest} + {piece}", f"{piece} + {rest}"])
        if rng_ < 0.3 and head.type == STR:
            combo = f"{piece} + {rest} if {fb.cond_using(head.name)} else {rest}"
    elif ret == LINT:
        h = head.name if head.type == INT else f"ord({head.name})"
        piece = rng.choice([h, f"{h} * 2", f"{h} % 3", f"{h} + 1"])
        combo = rng.choice([f"[{piece}] + {rest}", f"{rest} + [{piece}]"])
        if rng_ < 0.35:
            combo = f"[{piece}] + {rest} if {fb.cond_using(head.name)} else {rest}"
    else:
        combo = f"({fb.cond_using(head.name)}) {rng.choice(['and', 'or'])} {rest}"
    fb.stmt(f"return {combo}")
    prog.chunks.append([_def_line(name, params)] + fb.lines)
    return Sig(name, [p.type for p in params], ret, recursive=True)


def _class(prog: ProgramBuilder, prefer: list[str] | None = None) -> ClassInfo:
    rng = prog.rng
    cname = prog.global_name(CLASS_NAMES)
    n_init = rng.choice([1, 1, 2])
    init_types = rng.choices([LINT, STR, INT, DICT, LSTR], [4, 3, 3, 1, 1], k=n_init)
    if prefer:
        init_types = [rng.choice(prefer) if rng.random() < 0.7 else t for t in init_types]
    used: set[str] = {"self"}
    init_params = _params(used, rng, init_types)
    lines = [f"class {cname}:", f"    def __init__(self, {', '.join(p.name for p in init_params)}):"]
    attrs: list[Var] = []
    for p in init_params:
        attr = p.name if rng.random() < 0.6 else rng.choice([n for n in NAMES[p.type] if n != p.name])
        if any(a.name == f"self.{attr}" for a in attrs):
            attr = attr + "_"
        val = p.name if p.type not in (LINT, LSTR, DICT) or rng.random() < 0.6 else f"{'list' if p.type != DICT else 'dict'}({p.name})"
        lines.append(f"        self.{attr} = {val}")
        attrs.append(Var(f"self.{attr}", p.type))
    if rng.random() < 0.7:
        t = rng.choice([INT, INT, LINT, STR, DICT])
        attr = rng.choice([n for n in NAMES[t] if f"self.{n}" not in {a.name for a in attrs}])
        lines.append(f"        self.{attr} = {({INT: '0', LINT: '[]', STR: repr(''), DICT: '{}'})[t]}")
        attrs.append(Var(f"self.{attr}", t))
    methods: list[Sig] = []
    for _ in range(rng.choice([1, 1, 1, 2])):
        taken = {s.name for s in methods} | {a.name[5:] for a in attrs}
        mname = rng.choice([m for m in METHOD_NAMES if m not in taken])
        mtypes = rng.choices([INT, STR, LINT], [4, 3, 1], k=rng.choice([0, 1, 1, 1, 2]))
        mparams = _params(set(used) | {a.name[5:] for a in attrs}, rng, mtypes)
        fb = FuncBuilder(prog, mname, list(attrs) + mparams, indent=2, allow_raise=rng.random() < 0.3)
        fb.body(rng.randint(1, 2))
        rtype = None if rng.random() < 0.2 else fb.finish()
        if not fb.lines:
            fb.stmt("pass")
        lines.append(f"    def {mname}(self{''.join(', ' + p.name for p in mparams)}):")
        lines.extend(fb.lines)
        methods.append(Sig(mname, mtypes, rtype, tuple(sorted(fb.raises))))
    if rng.random() < 0.4:
        lines.append("    def __repr__(self):")
        lines.append(f"        return f'{cname}({{vars(self)}})'")
    prog.chunks.append(lines)
    return ClassInfo(cname, init_types, attrs, methods)


def _use_class(fb: FuncBuilder, info: ClassInfo) -> None:
    """Statements of f that create an instance and call its methods; its attributes become readable."""
    rng = fb.rng
    obj = fb.fresh(OBJ_NAMES)
    args = ", ".join(fb.expr(t, 1) if rng.random() < 0.4 else fb.atom(t) for t in info.init_params)
    fb.stmt(f"{obj} = {info.name}({args})")
    for a in info.attrs:
        fb.declare(obj + a.name[4:], a.type, assignable=False)
    for m in info.methods:
        margs = ", ".join(fb.atom(t) for t in m.params)
        call = f"{obj}.{m.name}({margs})"
        loopable = [v for v in fb.find((LINT, STR)) if "." not in v.name]
        if m.params and loopable and rng.random() < 0.4:
            src = rng.choice(loopable)
            et = ELEM[src.type]
            lv = fb.fresh(LOOP_NAMES["char" if src.type == STR else "int"])
            fb.emit(f"for {lv} in {src.name}:")
            with fb.block([Var(lv, et, char=src.type == STR)]):
                margs = ", ".join(lv if t == et and i == 0 else fb.atom(t) for i, t in enumerate(m.params))
                fb.stmt(f"{obj}.{m.name}({margs})")
        elif m.ret is not None and rng.random() < 0.7:
            name = fb.fresh(NAMES[m.ret])
            fb.stmt(f"{name} = {call}")
            fb.last = fb.declare(name, m.ret)
        else:
            fb.stmt(call)
    if fb.last is None and info.attrs:
        a = rng.choice(info.attrs)
        fb.last = Var(obj + a.name[4:], a.type, assignable=False)


KINDS = ("plain", "tiny", "helper", "recursion", "class", "exception", "while")
KIND_WEIGHTS = (0.34, 0.14, 0.13, 0.10, 0.11, 0.11, 0.07)


def generate_one(rng: random.Random, kind: str) -> tuple[str, str, tuple[str, ...]]:
    """One program of a kind: (source, entry expression, intended uncaught exceptions)."""
    prog = ProgramBuilder(rng)
    prog.globals.add("f")
    n_params = rng.choices([1, 2, 3], [4, 5, 1.5])[0]
    types = _param_types(rng, n_params)
    helpers: list[Sig] = []
    classes: list[ClassInfo] = []
    must: Sig | None = None
    n_stmts = rng.randint(2, 4)
    extra: Callable[[FuncBuilder], None] | None = None
    nontrivial = False
    if kind == "tiny":
        n_stmts = rng.choice([0, 0, 1])
        nontrivial = True
        types = types[:2]
    elif kind == "helper":
        hname = prog.global_name(HELPER_NAMES)
        allow = rng.random() < 0.35
        htypes = [rng.choice(types) if rng.random() < 0.6 else _param_types(rng, 1)[0] for _ in range(rng.choice([1, 1, 2]))]
        sig, _ = build_function(prog, hname, htypes, rng.randint(0, 2), allow_raise=allow)
        if allow and rng.random() < 0.7:
            _add_helper_raise(prog, sig)
        helpers.append(sig)
        must = sig
        n_stmts = rng.randint(1, 3)
    elif kind == "recursion":
        if rng.random() < 0.75:
            sig = _recursive(prog, prog.global_name(HELPER_NAMES), types)
            helpers.append(sig)
            must = sig
            n_stmts = rng.randint(0, 2)
        else:
            prog.globals.discard("f")
            sig = _recursive(prog, "f")
            source = prog.source()
            entry = f"f({_recursive_args(prog, sig)})"
            return source, entry, ()
    elif kind == "class":
        info = _class(prog, types)
        classes.append(info)
        n_stmts = rng.randint(0, 1)

        def extra(fb: FuncBuilder) -> None:
            _use_class(fb, info)
    elif kind == "exception":
        n_stmts = rng.randint(1, 2)

        def extra(fb: FuncBuilder) -> None:
            fb.body(rng.randint(0, 1))
            r = rng.random()
            if r < 0.55:
                fb.s_try()
            elif r < 0.85:
                fb.s_raise()
            else:
                fb.s_risky_bare()
    elif kind == "while":
        n_stmts = rng.randint(0, 2)

        def extra(fb: FuncBuilder) -> None:
            fb.body(rng.randint(0, 1))
            fb.s_while()
    sig, params = build_function(prog, "f", types, n_stmts, helpers=helpers, classes=classes, must_call=must, extra=extra,
                                 nontrivial=nontrivial)
    source = prog.source()
    if kind == "recursion" and helpers and helpers[0].recursive:
        overrides = _recursive_overrides(prog, params, helpers[0])
    else:
        overrides = None
    entry = f"f({_args_text(prog, params, source, overrides)})"
    return source, entry, tuple(sorted(prog.expect))


def _add_helper_raise(prog: ProgramBuilder, sig: Sig) -> None:
    """Put a guard that raises ValueError at the top of the helper just built."""
    chunk = prog.chunks[-1]
    header = chunk[0]
    params = header[header.index("(") + 1: header.index(")")].split(", ")
    p = prog.rng.choice(params)
    t = sig.params[params.index(p)]
    cond = {INT: f"{p} < 0", STR: f"not {p}", LINT: f"not {p}", LSTR: f"len({p}) < 2", DICT: f"not {p}",
            SET: f"not {p}", TUP: f"len({p}) < 2", BOOL: f"not {p}"}[t]
    chunk[1:1] = [f"    if {cond}:", f"        raise ValueError({prog.rng.choice([repr('empty'), repr('invalid'), repr('negative'), p])})"]
    sig.raises = ("ValueError",)
    prog.expect.add("ValueError")


def _recursive_args(prog: ProgramBuilder, sig: Sig) -> str:
    rng = prog.rng
    out = []
    for t in sig.params:
        if t == INT:
            out.append(str(rng.randint(0, 7) if len(sig.params) == 1 else rng.randint(0, 24)))
        else:
            out.append(literal_text(prog.values.value(t)))
    return ", ".join(out)


def _recursive_overrides(prog: ProgramBuilder, params: list[Var], sig: Sig) -> dict[str, object]:
    return {p.name: prog.rng.randint(0, 8) for p in params if p.type == INT}


_MUTATORS = {"append", "pop", "insert", "extend", "remove", "update", "setdefault", "sort", "reverse", "clear",
             "add", "discard", "popitem"}


def _removable(value: ast.expr, local_funcs: set[str]) -> bool:
    """An assigned value whose computation has no effect beyond the assignment."""
    for node in ast.walk(value):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and (func.id in local_funcs or func.id[:1].isupper()):
                return False
            if isinstance(func, ast.Attribute) and func.attr in _MUTATORS:
                return False
        if isinstance(node, ast.NamedExpr) or isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
            return False  # may raise an intended IndexError / KeyError
    return True


def prune_dead_stores(source: str) -> str:
    """Delete `name = value` statements whose name is never read in their function and whose value has
    no side effect (repeated until nothing changes). Statements inside try blocks and the only
    statement of a block are kept."""
    for _ in range(10):
        tree = ast.parse(source)
        local_funcs = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.ClassDef)}
        drop: tuple[int, int] | None = None
        for fn in ast.walk(tree):
            if not isinstance(fn, ast.FunctionDef):
                continue
            loads = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}
            loads |= {n.target.id for n in ast.walk(fn) if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name)}
            in_try = {id(n) for t in ast.walk(fn) if isinstance(t, ast.Try) for n in ast.walk(t)}
            for block in ast.walk(fn):
                for field_name in ("body", "orelse", "finalbody"):
                    stmts = getattr(block, field_name, None)
                    if not isinstance(stmts, list) or len(stmts) < 2:
                        continue
                    for st in stmts:
                        if (isinstance(st, ast.Assign) and id(st) not in in_try and all(
                                isinstance(t, ast.Name) and t.id not in loads for t in st.targets)
                                and _removable(st.value, local_funcs)):
                            drop = (st.lineno, st.end_lineno or st.lineno)
                            break
                    if drop:
                        break
                if drop:
                    break
            if drop:
                break
        if drop is None:
            return source
        lines = source.splitlines()
        source = "\n".join(lines[: drop[0] - 1] + lines[drop[1]:]) + "\n"
    return source


def _source_ok(source: str, max_lines: int) -> bool:
    try:
        compile(source, "<gen>", "exec")
    except SyntaxError:
        return False
    return len(source.splitlines()) <= max_lines


MAX_LINES = {"class": 24, "helper": 20}


def generate_functions(n: int, seed: int, max_lines: int = 18) -> list[Program]:
    """`n` generated programs, each a function `f` (with helpers or a class where its kind asks for one)
    and an entry `f(<literal args>)`. Deterministic given the seed; path `<gen-I>`."""
    rng = random.Random(f"funcgen:{seed}")
    out: list[Program] = []
    i = 0
    while len(out) < n:
        kind = rng.choices(KINDS, KIND_WEIGHTS)[0]
        try:
            source, entry, expect = generate_one(rng, kind)
            source = prune_dead_stores(source)
        except SyntaxError:  # a production assembled invalid code: skip it (deterministically)
            continue
        if not _source_ok(source, MAX_LINES.get(kind, max_lines)):
            continue
        out.append(GenProgram(source=source, path=f"<gen-{seed}-{i}>", entry=entry, origin=f"gen:{kind}",
                              expect_errors=expect))
        i += 1
    return out


# ---------------------------------------------------------------------------------------------------
# multi-function scripts


def generate_one_script(rng: random.Random) -> tuple[str, str | None, tuple[str, ...]]:
    """A chain of 2 to 4 functions (main -> helper -> helper ...), in entry or module mode."""
    prog = ProgramBuilder(rng)
    depth = rng.choice([2, 2, 3, 3, 4])
    prev: Sig | None = None
    sigs: list[Sig] = []
    for level in range(depth):
        top = level == depth - 1
        name = prog.global_name(MAIN_NAMES) if top else prog.global_name(HELPER_NAMES)
        helpers = [prev] if prev is not None else []
        if level == 0 and rng.random() < 0.25:
            sig = _recursive(prog, name)
        elif level == 0 and rng.random() < 0.2:
            info = _class(prog)

            def extra(fb: FuncBuilder, info: ClassInfo = info) -> None:
                _use_class(fb, info)
            sig, _ = build_function(prog, name, _param_types(rng, rng.choice([1, 2])), rng.randint(0, 1), extra=extra,
                                    allow_raise=False)
        else:
            n_stmts = rng.randint(0, 2) if not top else rng.randint(1, 3)
            types = _param_types(rng, rng.choice([1, 1, 2]) if not top else rng.choice([1, 2, 2, 3]))
            sig, _ = build_function(prog, name, types, n_stmts, helpers=helpers, must_call=prev,
                                    allow_raise=rng.random() < 0.15)
        sigs.append(sig)
        prev = sig
    main = sigs[-1]
    source_defs = prog.source()
    if rng.random() < 0.45:
        entry = f"{main.name}({_script_args(prog, main, source_defs)})"
        return source_defs, entry, tuple(sorted(prog.expect))
    # module mode: module-level code calls main (and sometimes a helper) and prints
    tail: list[str] = []
    r = rng.random()
    res = rng.choice(["result", "out", "answer", "res", "value", "output"])
    if r < 0.5:
        tail.append(f"{res} = {main.name}({_script_args(prog, main, source_defs)})")
        tail.append(f"print({res})")
    elif r < 0.75 and len(main.params) == 1:
        xs = ", ".join(_script_args(prog, main, source_defs) for _ in range(rng.randint(2, 3)))
        item = rng.choice(["item", "case", "arg", "x", "inp"])
        tail.append(f"for {item} in [{xs}]:")
        tail.append(f"    print({main.name}({item}))")
    else:
        data = rng.choice(["data", "inp", "sample", "args_", "given"])
        args = _script_args(prog, main, source_defs)
        if len(main.params) == 1:
            tail.append(f"{data} = {args}")
            tail.append(f"{res} = {main.name}({data})")
        else:
            tail.append(f"{res} = {main.name}({args})")
        if len(sigs) > 1 and sigs[0].ret is not None and rng.random() < 0.5:
            tail.append(f"{res}2 = {sigs[0].name}({_script_args(prog, sigs[0], source_defs)})")
            tail.append(f"print({res}, {res}2)")
        else:
            tail.append(f"print({res})")
    return prog.source(tail), None, tuple(sorted(prog.expect))


def _script_args(prog: ProgramBuilder, sig: Sig, source: str) -> str:
    if sig.recursive:
        return _recursive_args(prog, sig)
    parts = []
    for t in sig.params:
        value = prog.rng.randint(0, 6) if t == INT else prog.values.value(t)
        parts.append(literal_text(value))
    return ", ".join(parts)


def generate_scripts(n: int, seed: int, max_lines: int = 30) -> list[Program]:
    """`n` multi-function scripts (call depth 2 to 4); about 45% in entry mode, the rest in module mode
    (entry None: the script's own module-level code calls the functions). Path `<script-I>`."""
    rng = random.Random(f"scripts:{seed}")
    out: list[Program] = []
    i = 0
    while len(out) < n:
        try:
            source, entry, expect = generate_one_script(rng)
            source = prune_dead_stores(source)
        except SyntaxError:
            continue
        if not _source_ok(source, max_lines):
            continue
        out.append(GenProgram(source=source, path=f"<script-{seed}-{i}>", entry=entry,
                              origin="script:" + ("entry" if entry else "module"), expect_errors=expect))
        i += 1
    return out
