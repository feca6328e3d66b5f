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

This module builds whole programs; a function's body comes from `FuncBuilder`, whose productions are
split by family: funcgen_scope.py (names, variables and scopes), funcgen_scalars.py (int, string and
boolean expressions), funcgen_containers.py (list, dict, set and tuple expressions), funcgen_loops.py
(for and while loops), funcgen_statements.py (the other statements and the final return).
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Callable

from model_backend.data.funcgen_scope import (
    CLASS_NAMES,
    HELPER_NAMES,
    LOOP_NAMES,
    MAIN_NAMES,
    METHOD_NAMES,
    NAMES,
    OBJ_NAMES,
    ClassInfo,
    ProgramBuilder,
    Sig,
    Var,
)
from model_backend.data.funcgen_statements import FuncBuilder
from model_backend.data.values import BOOL, DICT, ELEM, INT, LINT, LSTR, SET, STR, TUP, literal_text
from model_backend.program import Program


class GenProgram(Program):
    """A Program that knows where it came from and which uncaught exceptions are intended."""

    origin: str = "gen"  # gen | script | humaneval | algorithms | ...
    expect_errors: tuple[str, ...] = ()  # exception class names the program may end with



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
