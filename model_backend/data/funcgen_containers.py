"""Expressions of the container types: lists of ints and of strings, dicts, sets and tuples
(methods, slices, comprehensions, conversions)."""

from __future__ import annotations

from model_backend.data.funcgen_scalars import ScalarExpressions
from model_backend.data.funcgen_scope import LOOP_NAMES
from model_backend.data.values import DICT, INT, LINT, LSTR, SET, SIZED, STR, TUP


class ContainerExpressions(ScalarExpressions):
    def e_lint(self, d: int) -> str:
        sub = d + 1
        rng = self.rng

        def comp_map() -> str | None:
            src = self.pick((LINT, TUP, SET) if self.chance(0.7) else (STR, LSTR))
            if src is None:
                return None
            with self.comp_element(src.type) as e:
                if src.type in (STR, LSTR):
                    body = rng.choice([f"len({e})", f"ord({e})" if src.type == STR else f"len({e})",
                                       f"{src.name}.count({e})", f"{e}.count({self.lit_str()})"])
                else:
                    body = self.expr_using(INT, e, sub + 1)
                cond = f" if ({self.cond_using(e)})" if self.chance(0.3) else ""
            return f"[{body} for {e} in {src.name}{cond}]"

        def comp_filter() -> str | None:
            src = self.pick((LINT, TUP))
            if src is None:
                return None
            with self.comp_element(LINT) as e:
                c = self.cond_using(e)
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
            i, e = self.comp_names(LOOP_NAMES["index"], LOOP_NAMES["int"])
            body = rng.choice([f"{i} * {e}", f"{e} + {i}", f"{e} - {i}", f"{i}"])
            cond = rng.choice(["", "", f" if {i} % 2 == 0", f" if {e} > {i}"])
            return f"[{body} for {i}, {e} in enumerate({li}){cond}]"

        def zipped() -> str | None:
            lis = self.find(LINT)
            if len(lis) < 2:
                return None
            a, b = rng.sample(lis, 2)
            x, y = self.comp_names(["x", "a", "p"], ["y", "b", "q"])
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
            with self.comp_element(src.type) as e:
                body = rng.choice([e, f"{e}.upper()", f"{e}[::-1]", f"{e} * 2", f"{e}.capitalize()",
                                   f"{e} + {self.lit_str()}", f"{e}[0]" if src.type == STR else f"{e}[:1]",
                                   f"{e}.strip({self.lit_str()})"])
                cond = f" if ({self.cond_using(e)})" if (body == e or self.chance(0.3)) else ""
            return f"[{body} for {e} in {src.name}{cond}]"

        def from_ints() -> str | None:
            li = self.v((LINT, TUP))
            if li is None:
                return None
            (e,) = self.comp_names(LOOP_NAMES["int"])
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
            i, e = self.comp_names(LOOP_NAMES["index"], LOOP_NAMES["str"])
            return f"{{{e}: {i} for {i}, {e} in enumerate({src})}}"

        def zipped() -> str | None:
            a, b = self.v((STR, LSTR)), self.v((LINT, TUP))
            return f"dict(zip({a}, {b}))" if a and b else None

        def from_items() -> str | None:
            dv = self.v(DICT)
            if dv is None:
                return None
            k, val = self.comp_names(LOOP_NAMES["key"], LOOP_NAMES["val"])
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
            (e,) = self.comp_names(LOOP_NAMES["int"])
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
