"""All the programs we trace for training, CruxEval decontamination and the sandbox validity check.

Sources (see the modules): generated functions (`funcgen.generate_functions`), multi-function scripts
(`funcgen.generate_scripts`), HumanEval canonical solutions and `algorithms` functions
(`real_code`). `all_programs` combines them and removes every program one of whose functions
normalizes to a CruxEval function.

Normalization (`normalize_code`): parse, drop docstrings, rename every name the code *binds*
(parameters, assigned and loop variables, comprehension variables, functions, classes, `except ... as`
names, imports) to v0, v1, ... in order of first appearance, keep free names (builtins such as `len`,
attribute names, constants) as they are, and `ast.unparse` the result. Two functions with the same
structure and constants but different identifiers (and different formatting or comments) normalize to
the same text; a changed constant or operator gives a different text. Fingerprints are taken per
top-level function and for the whole module (CruxEval code sometimes has module-level lines before `f`).

`keep_runnable` traces each program in the sandbox and keeps those that end normally, or with an
exception listed in the program's `expect_errors` (only generated programs list any), with 3 to 400
events and no value longer than `max_value_len` characters.
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
from collections import Counter
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from model_backend.data.funcgen import generate_functions, generate_scripts
from model_backend.data.real_code import algorithms_programs, humaneval_programs
from model_backend.program import Program

DEFAULT_CRUXEVAL = Path(__file__).resolve().parents[3] / "shared" / "data" / "cruxeval_dev.jsonl"
#: The realistic benchmark's programs (`<root>/dev/*.py`, `<root>/test/*.py`), read for filtering only.
DEFAULT_REALISTIC = Path(__file__).resolve().parents[2] / "benchmarks" / "realistic"


# ---------------------------------------------------------------------------------------------------
# normalization and decontamination


class _Renamer(ast.NodeTransformer):
    """Rename bound names to v0, v1, ... in order of first appearance (source order)."""

    def __init__(self, bound: set[str]) -> None:
        self.bound = bound
        self.names: dict[str, str] = {}

    def new(self, name: str) -> str:
        if name not in self.bound:
            return name
        if name not in self.names:
            self.names[name] = f"v{len(self.names)}"
        return self.names[name]

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = self.new(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.AST:
        node.arg = self.new(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = self.new(node.name)
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        node.name = self.new(node.name)
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        node.name = self.new(node.name)
        self.generic_visit(node)
        return node

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        if node.name:
            node.name = self.new(node.name)
        self.generic_visit(node)
        return node

    def visit_alias(self, node: ast.alias) -> ast.AST:
        if node.asname:
            node.asname = self.new(node.asname)
        return node

    def visit_Global(self, node: ast.Global) -> ast.AST:
        node.names = [self.new(n) for n in node.names]
        return node

    def visit_Nonlocal(self, node: ast.Nonlocal) -> ast.AST:
        node.names = [self.new(n) for n in node.names]
        return node


def _bound_names(tree: ast.AST) -> set[str]:
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.ExceptHandler):
            if node.name:
                bound.add(node.name)
        elif isinstance(node, ast.alias) and node.asname:
            bound.add(node.asname)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
    return bound


def _strip_docstring_nodes(tree: ast.AST) -> None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                node.body = body[1:] or [ast.Pass()]


def _normalize_tree(tree: ast.AST) -> str:
    _strip_docstring_nodes(tree)
    renamed = _Renamer(_bound_names(tree)).visit(tree)
    ast.fix_missing_locations(renamed)
    return ast.unparse(renamed)


def normalize_code(src: str) -> str:
    """Canonical text of a piece of code with its bound identifiers renamed to v0, v1, ... (see the
    module docstring). Raises SyntaxError if `src` does not parse."""
    return _normalize_tree(ast.parse(src))


def fingerprints(src: str) -> set[str]:
    """The normalized whole module and each of its top-level functions and classes (empty set if the
    source does not parse)."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return set()
    out = {_normalize_tree(ast.parse(src))}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            out.add(_normalize_tree(ast.Module(body=[node], type_ignores=[])))
    return out


def load_cruxeval_fingerprints(path: str | Path = DEFAULT_CRUXEVAL) -> set[str]:
    """Fingerprints of every CruxEval problem's code in a JSONL file with a `code` field. The file is
    used for filtering only."""
    out: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out |= fingerprints(json.loads(line)["code"])
    return out


def function_fingerprints(src: str) -> set[str]:
    """The normalized text of every function and method of a source, nested ones included, each taken
    alone (empty set if the source does not parse). Two functions that differ only in their
    identifiers, formatting, comments or docstring give the same text."""
    try:
        tree = ast.parse(src)
    except SyntaxError:
        return set()
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            alone = ast.parse(ast.unparse(node))  # a copy: normalizing renames in place
            out.add(_normalize_tree(alone))
    return out


def load_realistic_fingerprints(root: str | Path = DEFAULT_REALISTIC, splits: Iterable[str] = ("dev", "test")) -> set[str]:
    """`function_fingerprints` of every program of the realistic benchmark (`root/<split>/*.py`). The
    files are read for filtering only."""
    out: set[str] = set()
    for split in splits:
        for path in sorted(Path(root, split).glob("*.py")):
            out |= function_fingerprints(path.read_text(encoding="utf-8"))
    return out


def decontaminate_functions(programs: Iterable[Program], banned: set[str]) -> list[Program]:
    """Drop every program one of whose functions or methods (`function_fingerprints`) is in `banned`."""
    return [p for p in programs if not (function_fingerprints(p.source) & banned)]


def decontaminate(programs: Iterable[Program], banned: set[str]) -> list[Program]:
    """Drop every program whose module or one of whose top-level functions/classes is in `banned`."""
    cache: dict[str, bool] = {}
    out = []
    for p in programs:
        if p.source not in cache:
            cache[p.source] = not (fingerprints(p.source) & banned)
        if cache[p.source]:
            out.append(p)
    return out


# ---------------------------------------------------------------------------------------------------
# combining the sources


def all_programs(
    seed: int,
    n_generated: int,
    n_scripts: int | None = None,
    humaneval: bool = True,
    algorithms: bool = True,
    cruxeval_path: str | Path | None = DEFAULT_CRUXEVAL,
    n_realistic: int = 0,
    realistic_root: str | Path | None = DEFAULT_REALISTIC,
    stdlib: bool = False,
    pypi: bool = False,
    more_code: bool = False,
) -> list[Program]:
    """Generated functions (`n_generated`), multi-function scripts (`n_scripts`, default a quarter of
    `n_generated`), HumanEval and `algorithms` programs, then `n_realistic` class-based programs
    (`classgen.realistic_programs`) minus those with a function or method of the realistic benchmark
    (`load_realistic_fingerprints(realistic_root)`), with `stdlib` the standard library's functions
    (`stdlib_code.stdlib_programs`) and with `pypi` the functions of PyPI packages (`pypi_code.pypi_programs`),
    with `more_code` the second set of both (`more_stdlib_programs`, `more_pypi_programs`: functions the
    first sets do not take), all minus look-alikes of the benchmark too, all minus CruxEval
    look-alikes. Deterministic given
    the seed. Run `keep_runnable` on the result before tracing it for a dataset."""
    if n_scripts is None:
        n_scripts = n_generated // 4
    programs: list[Program] = []
    programs += generate_functions(n_generated, seed)
    programs += generate_scripts(n_scripts, seed)
    if humaneval:
        programs += humaneval_programs()
    if algorithms:
        programs += algorithms_programs(seed)
    if n_realistic > 0:
        from model_backend.data.classgen import realistic_programs

        realistic: list[Program] = list(realistic_programs(n_realistic, seed))
        if realistic_root is not None and Path(realistic_root).is_dir():
            realistic = decontaminate_functions(realistic, load_realistic_fingerprints(realistic_root))
        programs += realistic
    library: list[Program] = []  # library code, decontaminated against the benchmark like the realistic ones
    if stdlib:
        from model_backend.data.stdlib_code import stdlib_programs

        library += stdlib_programs(seed)
    if pypi:
        from model_backend.data.pypi_code import pypi_programs

        library += pypi_programs(seed)
    if more_code:
        from model_backend.data.pypi_code import more_pypi_programs
        from model_backend.data.stdlib_code import more_stdlib_programs

        library += more_stdlib_programs(seed) + more_pypi_programs(seed)
    if library and realistic_root is not None and Path(realistic_root).is_dir():
        library = decontaminate_functions(library, load_realistic_fingerprints(realistic_root))
    programs += library
    if cruxeval_path is not None and Path(cruxeval_path).exists():
        programs = decontaminate(programs, load_cruxeval_fingerprints(cruxeval_path))
    return programs


def origin_of(program: Program) -> str:
    """"gen", "script", "humaneval", "algorithms", "stdlib", "pypi", "realistic" (or "other" for a plain Program)."""
    origin = getattr(program, "origin", None)
    return origin.split(":")[0] if isinstance(origin, str) else "other"


# ---------------------------------------------------------------------------------------------------
# validity check in the sandbox


@dataclass
class Verdict:
    program: Program
    keep: bool
    reason: str  # "ok" or why it was dropped
    n_events: int
    exit: str | None


def expected_errors(program: Program) -> tuple[str, ...]:
    return tuple(getattr(program, "expect_errors", ()) or ())


def check_runnable(
    programs: list[Program],
    workers: int = 2,
    min_events: int = 3,
    max_events: int = 400,
    max_value_len: int | None = 120,
    wall_time: float = 5.0,
    progress: bool = False,
) -> list[Verdict]:
    """Trace every program in the sandbox and judge it (same order as `programs`)."""
    from model_backend.sandbox import Limits, run_trace

    limits = Limits(wall_time=wall_time, cpu_time=max(1, int(wall_time)), max_events=max_events + 1, max_repr=200)

    def judge(p: Program) -> Verdict:
        try:
            result = run_trace(p, limits)
        except Exception as exc:  # the sandbox should never raise; a broken program must not stop a build
            return Verdict(p, False, f"sandbox failed: {type(exc).__name__}: {exc}", 0, None)
        n = len(result.events)
        if result.exit == "never" or result.truncated:
            return Verdict(p, False, f"no end within limits ({result.exit_reason})", n, result.exit)
        if result.exit == "error":
            reason = result.exit_reason or ""
            name = reason.split(":", 1)[0].strip()
            if name not in expected_errors(p):
                return Verdict(p, False, f"unexpected error: {reason}", n, result.exit)
        if n < min_events:
            return Verdict(p, False, f"too few events ({n})", n, result.exit)
        if n > max_events:
            return Verdict(p, False, f"too many events ({n})", n, result.exit)
        if max_value_len is not None:
            for ev in result.events:
                longest = max([len(v) for v in ev.locals.values()] + [len(ev.value or "")])
                if longest > max_value_len:
                    return Verdict(p, False, f"value longer than {max_value_len} characters", n, result.exit)
        return Verdict(p, True, "ok", n, result.exit)

    verdicts: list[Verdict] = []
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        iterator = pool.map(judge, programs)
        if progress:
            from tqdm import tqdm

            iterator = tqdm(iterator, total=len(programs), desc="checking programs", unit="prog")
        verdicts.extend(iterator)
    return verdicts


def keep_runnable(programs: list[Program], workers: int = 2, **kwargs: object) -> list[Program]:
    """The programs that run in the sandbox: normal end, or an intended uncaught exception (listed in
    `expect_errors`), 3 to 400 events, short values. Order is preserved. Keyword arguments go to
    `check_runnable`."""
    return [v.program for v in check_runnable(programs, workers, **kwargs) if v.keep]  # type: ignore[arg-type]


# ---------------------------------------------------------------------------------------------------
# a summary command: python -m model_backend.data.programs --seed 0 --n 200


def summarize(verdicts: list[Verdict]) -> dict[str, dict[str, float]]:
    by_origin: dict[str, list[Verdict]] = {}
    for v in verdicts:
        key = getattr(v.program, "origin", "other")
        by_origin.setdefault(str(key), []).append(v)
        by_origin.setdefault(origin_of(v.program) + " (all)", []).append(v)
    out: dict[str, dict[str, float]] = {}
    for key in sorted(by_origin):
        vs = by_origin[key]
        kept = [v for v in vs if v.keep]
        out[key] = {
            "programs": len(vs),
            "kept": len(kept),
            "kept_error_exit": sum(1 for v in kept if v.exit == "error"),
            "mean_events": round(statistics.mean(v.n_events for v in kept), 1) if kept else 0.0,
            "median_events": float(statistics.median(v.n_events for v in kept)) if kept else 0.0,
            "mean_lines": round(statistics.mean(len(v.program.source.splitlines()) for v in kept), 1) if kept else 0.0,
        }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Generate programs, check them in the sandbox, print counts.")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--n", type=int, default=200, help="generated functions")
    parser.add_argument("--scripts", type=int, default=None)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--no-real", action="store_true", help="skip HumanEval and algorithms")
    parser.add_argument("--reasons", action="store_true", help="also count the reasons for dropping")
    args = parser.parse_args(argv)
    programs = all_programs(args.seed, args.n, args.scripts, humaneval=not args.no_real, algorithms=not args.no_real)
    verdicts = check_runnable(programs, args.workers, progress=True)
    for key, row in summarize(verdicts).items():
        print(f"{key:28s} " + "  ".join(f"{k}={v:g}" for k, v in row.items()))
    if args.reasons:
        reasons = Counter(v.reason.split(":")[0] if "error" in v.reason else v.reason for v in verdicts if not v.keep)
        for reason, count in reasons.most_common(15):
            print(f"{count:6d}  {reason}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
