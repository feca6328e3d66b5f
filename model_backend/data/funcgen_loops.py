"""Loops: `for` over a value the body cannot grow (frozen while it runs), with accumulators, and `while`
loops with a strictly decreasing measure, so that every loop terminates by construction."""

from __future__ import annotations

import ast

from model_backend.data.funcgen_containers import ContainerExpressions
from model_backend.data.funcgen_scope import LOOP_NAMES, NAMES, Var, mentions, norm_expr
from model_backend.data.values import DICT, ELEM, INT, LINT, LSTR, SET, STR, TUP


class LoopStatements(ContainerExpressions):
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
                self.stmt(f"{n} += {e}" if mentions(e, lv.name) and norm_expr(e) != n else f"{n} += 1")
        elif acc.type == STR:
            e = self.expr_using(STR, lv.name, 1) if lv.type != STR or self.chance(0.5) else lv.name
            if not mentions(e, lv.name):
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
