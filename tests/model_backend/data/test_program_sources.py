"""Program sources for training data: generators, real code, decontamination, sandbox validity."""

from __future__ import annotations

import ast
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from model_backend.data import (
    GenProgram,
    algorithms_programs,
    check_runnable,
    decontaminate,
    fingerprints,
    generate_functions,
    generate_scripts,
    humaneval_programs,
    keep_runnable,
    load_cruxeval_fingerprints,
    normalize_code,
)
from model_backend.data.programs import DEFAULT_CRUXEVAL
from model_backend.data.real_code import humaneval_entries, strip_docstrings
from model_backend.program import Program


def _key(programs: list[Program]) -> list[tuple[str, str, str | None]]:
    return [(p.source, p.path, p.entry) for p in programs]


def _literal_args(entry: str) -> None:
    call = ast.parse(entry, mode="eval").body
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Name)
    for arg in call.args:
        ast.literal_eval(arg)


# ---- generators ------------------------------------------------------------------------------------

def test_generators_are_deterministic_per_seed() -> None:
    assert _key(generate_functions(40, seed=3)) == _key(generate_functions(40, seed=3))
    assert _key(generate_functions(40, seed=3)) != _key(generate_functions(40, seed=4))
    assert _key(generate_scripts(15, seed=3)) == _key(generate_scripts(15, seed=3))
    assert _key(generate_scripts(15, seed=3)) != _key(generate_scripts(15, seed=5))


def test_generated_programs_are_valid_short_and_called_with_literals() -> None:
    programs = generate_functions(200, seed=1)
    assert len(programs) == 200
    assert len({p.path for p in programs}) == 200
    for p in programs:
        p.check()
        assert p.entry is not None and p.entry.startswith("f(")
        _literal_args(p.entry)
        assert 2 <= len(p.source.splitlines()) <= 24
    mean_lines = sum(len(p.source.splitlines()) for p in programs) / len(programs)
    assert mean_lines < 14


def test_generated_programs_have_varied_features() -> None:
    programs = generate_functions(200, seed=2)
    node_types: Counter[str] = Counter()
    methods: Counter[str] = Counter()
    handlers: Counter[str] = Counter()
    param_names: set[str] = set()
    recursive = 0
    for p in programs:
        tree = ast.parse(p.source)
        node_types.update({type(n).__name__ for n in ast.walk(tree)})
        for n in ast.walk(tree):
            if isinstance(n, ast.Attribute):
                methods[n.attr] += 1
            if isinstance(n, ast.ExceptHandler) and n.type is not None:
                handlers[ast.unparse(n.type)] += 1
            if isinstance(n, ast.arg) and n.arg != "self":
                param_names.add(n.arg)
            if isinstance(n, ast.FunctionDef) and any(
                isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == n.name for c in ast.walk(n)
            ):
                recursive += 1
    for node in ["For", "While", "If", "IfExp", "Try", "Raise", "ClassDef", "ListComp", "DictComp",
                 "GeneratorExp", "Slice", "AugAssign", "BoolOp", "JoinedStr", "Tuple", "Dict", "Break"]:
        assert node_types[node] > 0, node
    assert sum(1 for n in node_types if n in {"Mod", "FloorDiv", "Add", "Sub", "Mult"}) == 5
    assert node_types["BitAnd"] + node_types["BitOr"] + node_types["BitXor"] > 0  # set operations
    for name in ["upper", "lower", "replace", "split", "join", "strip", "find", "count", "startswith",
                 "isdigit", "append", "pop", "insert", "extend", "reverse", "sort", "index", "remove",
                 "get", "items", "update", "setdefault"]:
        assert methods[name] > 0, name
    assert any("ValueError" in h for h in handlers) and any("IndexError" in h for h in handlers)
    assert recursive >= 5
    assert len(param_names) >= 60
    assert sum(1 for p in programs if len(ast.parse(p.source).body) > 1) >= 40  # helpers and classes
    assert any(isinstance(p, GenProgram) and p.expect_errors for p in programs)


def test_scripts_have_call_depth_and_both_modes() -> None:
    scripts = generate_scripts(60, seed=0)
    modes = Counter(p.entry is None for p in scripts)
    assert modes[True] >= 10 and modes[False] >= 10
    depths = []
    for p in scripts:
        p.check()
        tree = ast.parse(p.source)
        funcs = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        assert len(funcs) >= 1
        depths.append(len(funcs))
        if p.entry is None:
            module_code = [n for n in tree.body if not isinstance(n, ast.FunctionDef | ast.ClassDef)]
            assert module_code, "module-mode scripts call their functions themselves"
    assert max(depths) >= 4 and min(depths) <= 2


# ---- real code ------------------------------------------------------------------------------------

def test_humaneval_entries_from_check() -> None:
    test = (
        "def check(candidate):\n"
        "    assert candidate([1, 2], 3) == 4\n"
        "    assert candidate('a', x=2) == 1\n"
        "    assert candidate(list(range(3)), 1) == 2\n"  # not a literal: skipped
        "    assert abs(candidate([1.5], -1) - 2) < 1e-6\n"
    )
    assert humaneval_entries(test, "solve") == ["solve([1, 2], 3)", "solve('a', x=2)", "solve([1.5], -1)"]


def test_humaneval_programs() -> None:
    programs = humaneval_programs()
    problems = {p.path for p in programs}
    assert len(problems) >= 150 and len(programs) >= 500
    for p in programs[:50]:
        p.check()
        assert p.entry is not None
        _literal_args(p.entry)
        assert '"""' not in p.source  # docstrings stripped by default
    first = [p for p in programs if p.path == "<humaneval-0>"]
    assert first and all(p.entry.startswith("has_close_elements(") for p in first if p.entry)


def test_strip_docstrings_keeps_code() -> None:
    src = 'def f(x):\n    """Doc.\n\n    More."""\n    # note\n    return x\n\n\n\ndef g():\n    """Only doc."""\n'
    out = strip_docstrings(src)
    assert '"""Doc' not in out and "# note" in out and '"""Only doc."""' in out
    assert "\n\n\n" not in out


def test_algorithms_programs_are_standalone() -> None:
    programs = algorithms_programs(seed=0, n_random=1)
    assert len({p.path for p in programs}) >= 150
    assert _key(programs[:30]) == _key(algorithms_programs(seed=0, n_random=1)[:30])
    for p in programs:
        assert "algorithms" not in re.findall(r"^\s*(?:from|import)\s+(\w+)", p.source, re.M)
    for p in programs[:40]:
        p.check()
        assert p.entry is not None
        _literal_args(p.entry)


# ---- decontamination ------------------------------------------------------------------------------

def test_normalize_code_ignores_names_and_formatting() -> None:
    a = "def f(text):\n    n = 0\n    for ch in text:\n        if ch.isupper():\n            n += 1\n    return n\n"
    b = "def count_caps(s):   # counts\n    total = 0\n    for c in s:\n        if c.isupper(): total += 1\n    return total"
    c = a.replace("n += 1", "n += 2")
    assert normalize_code(a) == normalize_code(b)
    assert normalize_code(a) != normalize_code(c)
    assert "len" in normalize_code("def f(x):\n    return len(x)\n")  # builtins are kept


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self.names.get(node.arg, node.arg)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self.names.get(node.name, node.name)
        self.generic_visit(node)
        return node


@pytest.mark.skipif(not Path(DEFAULT_CRUXEVAL).exists(), reason="CruxEval dev file not available")
def test_decontamination_drops_a_planted_cruxeval_clone() -> None:
    with open(DEFAULT_CRUXEVAL, encoding="utf-8") as fh:
        rows = [json.loads(line) for line in fh if line.strip()]
    code = next(r["code"] for r in rows if "for " in r["code"] and r["code"].startswith("def f("))
    tree = ast.parse(code)
    bound = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    bound |= {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)}
    renamed = _Rename({name: f"renamed_{i}" for i, name in enumerate(sorted(bound))} | {"f": "g"}).visit(tree)
    clone_src = ast.unparse(renamed)
    assert clone_src != code
    clone = Program(source=clone_src, path="<clone>", entry=None)
    banned = load_cruxeval_fingerprints(DEFAULT_CRUXEVAL)
    others = generate_functions(30, seed=9)
    kept = decontaminate([clone, *others], banned)
    assert clone not in kept
    assert len(kept) >= 25  # generated programs are (almost always) kept
    assert fingerprints(clone_src) & banned


# ---- sandbox validity -----------------------------------------------------------------------------

def test_keep_runnable_drops_loops_and_unexpected_errors() -> None:
    pytest.importorskip("model_backend.sandbox")
    ok = Program(source="def f(xs):\n    t = 0\n    for x in xs:\n        t += x\n    return t\n", path="<ok>", entry="f([1, 2, 3])")
    loop = Program(source="def f(n):\n    while True:\n        n += 1\n", path="<loop>", entry="f(0)")
    bad = Program(source="def f(d):\n    v = d['k']\n    return v\n", path="<bad>", entry="f({})")
    intended = GenProgram(source="def f(d):\n    v = d['k']\n    return v\n", path="<intended>", entry="f({})",
                          expect_errors=("KeyError",))
    tiny = Program(source="x = 1\n", path="<tiny>", entry=None)
    kept = keep_runnable([ok, loop, bad, intended, tiny], workers=2, wall_time=3.0)
    assert [p.path for p in kept] == ["<ok>", "<intended>"]


def test_most_generated_programs_run() -> None:
    pytest.importorskip("model_backend.sandbox")
    programs = generate_functions(24, seed=5) + generate_scripts(6, seed=5)
    verdicts = check_runnable(programs, workers=2)
    kept = [v for v in verdicts if v.keep]
    assert len(kept) >= 0.85 * len(programs), [v.reason for v in verdicts if not v.keep]
    assert all(3 <= v.n_events <= 400 for v in kept)
