"""Statements: assignments, augmented assignments, mutating calls, unpacking, if, early return, try /
except, raise, print; the choice of the next statement; and the function's final return (`FuncBuilder`)."""

from __future__ import annotations

import re
from collections.abc import Callable

from model_backend.data.funcgen_loops import LoopStatements
from model_backend.data.funcgen_scope import NAMES, RAISABLE, Sig, norm_expr
from model_backend.data.values import BOOL, DICT, ELEM, INT, LINT, LSTR, SET, STR, TUP

# The mutating calls of a list that take no argument, and the stores into a dict of an int value `v` at a key `k`
_LIST_CALLS = {"reverse": "reverse()", "sort": "sort()", "sort_rev": "sort(reverse=True)"}
_DICT_STORES = {"set": "{n}[{k}] = {v}", "update": "{n}.update({{{k}: {v}}})", "setdefault": "{n}.setdefault({k}, {v})"}

class FuncBuilder(LoopStatements):
    """Builds one function (or method) body statement by statement."""

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
            if m in ("append", "extend"):  # an element, or a list of the same type
                self.stmt(f"{n}.{m}({self.expr(et if m == 'append' else var.type, 1)})")
            elif m in _LIST_CALLS:
                self.stmt(f"{n}.{_LIST_CALLS[m]}")
            elif m == "insert":
                self.stmt(f"{n}.insert({self.rng.choice(['0', '0', '1', '-1', f'len({n})'])}, {self.expr(et, 1)})")
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
            if m in _DICT_STORES:
                self.stmt(_DICT_STORES[m].format(n=n, k=k, v=self.expr(INT, 1)))
            elif m == "incr":
                self.stmt(f"{n}[{k}] = {n}.get({k}, 0) + {self.lit_int(1, 2)}")
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

    def if_header(self) -> bool:
        """`if <condition>:`, where a block may open (two deep at the most); whether it is written."""
        if self.nest >= 2:
            return False
        self.emit(f"if {norm_expr(self.cond())}:")
        return True

    def s_if(self) -> bool:
        if not self.if_header():
            return False
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
        if not self.if_header():
            return False
        with self.block():
            t = self.return_type_hint or self.rng.choice([INT, STR, BOOL])
            self.stmt(f"return {self.expr(t, 1)}")
        self.return_type_hint = t
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

    def risky_binding(self) -> tuple[str, str, str, str] | None:
        """A risky operation (`risky`: its expression, exception and type) and a fresh name to bind it to."""
        r = self.risky()
        if r is None:
            return None
        e, exc, t = r
        return self.fresh(NAMES[t]), e, exc, t

    def s_try(self) -> bool:
        if self.nest >= 2:
            return False
        bound = self.risky_binding()
        if bound is None:
            return False
        name, e, exc, t = bound
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
        bound = self.risky_binding()
        if bound is None:
            return False
        name, e, exc, t = bound
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
