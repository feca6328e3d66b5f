"""Expressions of the scalar types: ints, strings and conditions, plus the dispatch by type, binary
operations, helper calls and conditional expressions."""

from __future__ import annotations

import re

from model_backend.data.funcgen_scope import FuncScope, mentions, norm_expr
from model_backend.data.values import BOOL, DICT, INT, LINT, LSTR, SET, SIZED, STR, TUP


class ScalarExpressions(FuncScope):
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
            if mentions(e, name):
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

        def if_nonempty(types: tuple[str, ...], choices: list[str], form: str) -> str | None:
            """`form` of a variable of `types` and one of `choices`, where the variable is not empty."""
            li = self.v(types)
            if li is None:
                return None
            chosen = rng.choice(choices)
            return f"{form.format(li=li, chosen=chosen)} if {li} else {self.lit_int()}"

        def maxmin() -> str | None:
            return if_nonempty((LINT, SET), ["max", "min"], "{chosen}({li})")

        def first() -> str | None:
            return if_nonempty((LINT, TUP), ["0", "-1"], "{li}[{chosen}]")

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
            with self.comp_element(li.type) as e:
                c = self.cond_using(e)
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
            with self.comp_element(s.type) as e:
                c = self.cond_using(e)
                body = self.expr_using(STR, e, sub + 1) if self.chance(0.5) else e
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
            with self.comp_element(li.type) as e:
                c = self.cond_using(e)
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
            if mentions(c, name):
                break
            c = self.cond(1)
        return c
