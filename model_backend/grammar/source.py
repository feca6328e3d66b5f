"""The program as the grammar's fact builders read it (`Source`: parsed once, never run), and the facts
every family shares: the program's lines, names, code names, scopes and call sites. The rule families
(model_backend/grammar/rules/) build their facts from a `Source`; facts.py assembles them into `ProgramFacts`.
"""

from __future__ import annotations

import ast
import symtable
from dataclasses import dataclass
from typing import Any

from model_backend.grammar.syntax import is_generator_def
from model_backend.program import Program
from model_backend.sandbox import Limits

# Code inside an expression that runs in a frame of its own, and that frame's code name. Their lines are
# the expression's, which grammar/lines.py does not follow.
EXPRESSION_FRAME_NAMES: dict[type, str] = {ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>",
                                           ast.DictComp: "<dictcomp>", ast.GeneratorExp: "<genexpr>",
                                           ast.Lambda: "<lambda>"}
EXPRESSION_FRAMES = frozenset(EXPRESSION_FRAME_NAMES.values())


@dataclass(frozen=True)
class Source:
    """The program as the fact builders read it: parsed once, never run."""

    program: Program
    tree: ast.Module
    table: symtable.SymbolTable | None
    dynamic: bool  # it looks names up dynamically: then no rule that relies on names seen can be trusted
    objects: bool  # for trace format version 3 or later (objects written with their fields)
    max_repr: int = Limits().max_repr


def program_facts(source: Source) -> dict[str, Any]:
    """The lines, names, code names and definitions' spans of the program, and the names each scope holds."""
    program, tree = source.program, source.tree
    lines = {i + 1: text for i, text in enumerate(program.lines) if text.strip()}
    names: set[str] = {".0", "__class__"}  # a comprehension's iterator; the cell super() uses
    functions: set[str] = {"<module>"}
    spans: dict[str, set[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            functions.add(node.name)
            names.add(node.name)
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            spans.setdefault(node.name, set()).update(range(first, (node.end_lineno or node.lineno) + 1))
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.expr) and type(node) in EXPRESSION_FRAME_NAMES:  # frames of their own, where they are
            name = EXPRESSION_FRAME_NAMES[type(node)]
            functions.add(name)
            spans.setdefault(name, set()).update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.update(node.names)
    if program.entry is not None:
        functions.discard("<module>")  # entry mode traces from the entry call: no module frame
    return {"lines": lines, "names": frozenset(names), "functions": frozenset(functions),
            "spans": {name: frozenset(span) for name, span in spans.items()},
            "scopes": {} if source.dynamic else scope_names(source.table, tree)}


# Names through which a program can reach a function without writing its name in a call, or bind
# variables without writing their names.
_DYNAMIC_LOOKUP = frozenset({"globals", "locals", "vars", "eval", "exec", "compile", "getattr", "__dict__",
                             "__getattribute__", "__import__", "import_module", "modules", "__code__", "__call__"})


def uses_dynamic_lookup(tree: ast.Module) -> bool:
    nodes = list(ast.walk(tree))
    aliases = [a for node in nodes if isinstance(node, ast.Import | ast.ImportFrom) for a in node.names]
    imported = {(a.asname or a.name).split(".")[0] for a in aliases}
    if any(a.name.split(".")[0] == "__main__" for a in aliases):  # the program's own module: any variable may hold it
        harmless = set()
    else:
        harmless = {id(node.func) for node in nodes if isinstance(node, ast.Call) and _is_vars_of_an_object(node, imported)}
        harmless |= _regex_compiles(nodes)
    return any(isinstance(node, ast.Name | ast.Attribute) and _name_of(node) in _DYNAMIC_LOOKUP
               and id(node) not in harmless for node in nodes)


def _regex_compiles(nodes: list[ast.AST]) -> set[int]:
    """The ids of `re.compile` attributes (for a name that only `import re` binds): that compiles a regular
    expression, not code, and reaches no function of the program."""
    modules = [a for node in nodes if isinstance(node, ast.Import) for a in node.names]
    regex = {a.asname or a.name for a in modules if a.name == "re"}
    regex -= {a.asname or a.name for a in modules if a.name != "re"}
    regex -= {n.id for n in nodes if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
    regex -= {a.asname or a.name for n in nodes if isinstance(n, ast.ImportFrom) for a in n.names}
    return {id(n) for n in nodes if isinstance(n, ast.Attribute) and n.attr == "compile"
            and isinstance(n.value, ast.Name) and n.value.id in regex}


def _is_vars_of_an_object(node: ast.Call, imported: set[str]) -> bool:
    """`vars(x)` for a variable `x` that no import binds: that is `x.__dict__`, an object's attributes, which
    neither binds a frame's locals nor (unless it is a module's namespace) reaches a function by name.
    Only `vars()` with no argument is `locals()`."""
    return (isinstance(node.func, ast.Name) and node.func.id == "vars"
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Name)
            and node.args[0].id not in imported)


def direct_call_lines(tree: ast.Module) -> dict[str, frozenset[int]]:
    """Plain functions that only direct calls by name can reach, and the lines those calls span.

    A frame of such a function sits right above a caller frame whose line is one of those calls: the
    tracer's stack holds the program's frames only, and nothing outside the program holds a reference to
    the function. Any other use of the name (passed as a value, decorated, a method, a generator whose
    body runs where it is iterated) leaves the function unconstrained. The caller checks for dynamic
    lookups (`uses_dynamic_lookup`), which would make the whole answer unsafe.
    """
    defs: dict[str, bool] = {}  # name -> every definition is a plain function
    class_bodies = [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    methods = {id(st) for body in class_bodies for st in body}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            plain = not node.decorator_list and id(node) not in methods and not is_generator_def(node)
            defs[node.name] = defs.get(node.name, True) and plain
        elif isinstance(node, ast.AsyncFunctionDef | ast.ClassDef):
            defs[node.name] = False
    lines: dict[str, set[int]] = {name: set() for name, plain in defs.items() if plain}
    called: set[int] = set()  # id() of the Name/Attribute nodes that are the callee of a call
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name | ast.Attribute):
            name = _name_of(node.func)
            called.add(id(node.func))
            if name in lines:
                lines[name].update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            continue  # a binding, not a use
        if isinstance(node, ast.Name | ast.Attribute) and id(node) not in called:
            lines.pop(_name_of(node), None)  # used as a value: whoever gets it may call it from anywhere
    return {name: frozenset(span) for name, span in lines.items()}


def comprehension_callers(tree: ast.Module) -> dict[str, frozenset[tuple[str, int]]]:
    """For list, set and dict comprehensions: the frames that can call one, as (code name, line) pairs.

    Python 3.11 runs each such comprehension as a function that the code around it calls at once, on the
    comprehension's own lines, and nothing else can reach (unlike a generator expression, which runs where
    it is iterated, or a lambda). So a `<listcomp>` frame sits right above a frame of the scope that holds
    the comprehension, on one of its lines: never above another `<listcomp>` unless one comprehension holds
    another. The scope follows the compiler: a comprehension's first iterable, a def's defaults and
    decorators and a class's bases belong to the scope around them, the rest to their own.
    """
    callers: dict[str, set[tuple[str, int]]] = {}
    todo: list[tuple[ast.AST, str]] = [(tree, "<module>")]
    while todo:
        node, scope = todo.pop()
        own = scope  # the code name of the scope that the node's `inside` runs in
        inside: list[ast.AST] = []
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            own, inside = node.name, [*node.body]
        elif isinstance(node, ast.Lambda):
            own, inside = "<lambda>", [node.body]
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            own = EXPRESSION_FRAME_NAMES[type(node)]
            if not isinstance(node, ast.GeneratorExp):
                callers.setdefault(own, set()).update((scope, n) for n in range(node.lineno, (node.end_lineno or node.lineno) + 1))
            first, *rest = node.generators
            inside = [child for child in ast.iter_child_nodes(node) if not isinstance(child, ast.comprehension)]
            inside += [first.target, *first.ifs, *rest]
            todo.append((first.iter, scope))
            todo.extend((child, own) for child in inside)
            continue
        in_own = {id(child) for child in inside}
        todo.extend((child, own if id(child) in in_own else scope) for child in ast.iter_child_nodes(node))
    return {kind: frozenset(pairs) for kind, pairs in callers.items()}


# symtable's names for the code objects without a name of their own (a user's def of one of these
# names shares its table name; both then get the union of the two scopes, which is still sound)
_ANONYMOUS_CODE_NAMES = {"listcomp": "<listcomp>", "setcomp": "<setcomp>", "dictcomp": "<dictcomp>",
                         "genexpr": "<genexpr>", "lambda": "<lambda>"}


def scope_names(top: symtable.SymbolTable | None, tree: ast.Module) -> dict[str, frozenset[str]]:
    """For each code name, the names its frames' `f_locals` can hold: a function's parameters, locals,
    cells and free variables; a class body's or the module's bindings (the module's also every name a
    function declares `global`). From the compiler's own symbol table (`symtable`), not by running.
    Only for programs without dynamic lookups or writes (`exec`, `locals()`, ...; `uses_dynamic_lookup`)."""
    if top is None:
        return {}
    scopes: dict[str, set[str]] = {}
    tables = [top]
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        name = table.get_name()
        if table.get_type() == "function":
            name = _ANONYMOUS_CODE_NAMES.get(name, name)
            names = {s.get_name() for s in table.get_symbols() if s.is_local() or s.is_free() or s.is_parameter()}
        else:  # the module (symtable calls it "top") or a class body
            name = "<module>" if table.get_type() == "module" else name
            names = {s.get_name() for s in table.get_symbols() if s.is_assigned() or s.is_imported() or s.is_local()}
        scopes.setdefault(name, set()).update(names)
    declared_global = {n for node in ast.walk(tree) if isinstance(node, ast.Global) for n in node.names}
    scopes.setdefault("<module>", set()).update(declared_global)
    return {name: frozenset(names) for name, names in scopes.items()}


def _name_of(node: ast.Name | ast.Attribute) -> str:
    return node.id if isinstance(node, ast.Name) else node.attr


# ---- text slots: tiny byte automata, immutable so that checking a candidate token is a cheap copy ----
