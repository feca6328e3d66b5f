"""What the grammar may mention about a program: `ProgramFacts`, derived from its source text alone,
never by running it. `ProgramFacts.of(program)` assembles them from the fact builders of the rule
families (model_backend/grammar/): each builder reads the parsed program once and gives its fields.
"""

from __future__ import annotations

import ast
import symtable
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from model_backend import safe_ast
from model_backend.grammar.calls import (
    Binding,
    CallExpression,
)
from model_backend.grammar.comprehensions import (
    ComprehensionCall,
    ComprehensionLoop,
    symbol_table,
)
from model_backend.grammar.containers import (
    AttributeUpdate,
    ItemStore,
)
from model_backend.grammar.lines import TruthTest
from model_backend.grammar.loops import ForLoop
from model_backend.grammar.syntax import ArgumentSource, is_generator_def
from model_backend.program import Program
from model_backend.sandbox import Limits

# Code inside an expression that runs in a frame of its own, and that frame's code name. Their lines are
# the expression's, which grammar/lines.py does not follow.
EXPRESSION_FRAME_NAMES: dict[type, str] = {ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>",
                                           ast.DictComp: "<dictcomp>", ast.GeneratorExp: "<genexpr>",
                                           ast.Lambda: "<lambda>"}
EXPRESSION_FRAMES = frozenset(EXPRESSION_FRAME_NAMES.values())


@dataclass(frozen=True)
class ProgramFacts:
    """What the grammar may mention: derived from the source text alone, never by running it."""

    lines: dict[int, str]  # line number -> source text (non-blank lines)
    names: frozenset[str]  # identifiers that can be variables
    functions: frozenset[str]  # code names a frame can have
    spans: dict[str, frozenset[int]]  # def name -> the lines of its definition(s), decorators included
    # def name -> the only lines a frame of it can be called from, for functions that nothing but a
    # direct call by name reaches (see `direct_call_lines`); functions not listed may be called from anywhere
    call_lines: dict[str, frozenset[int]] = field(default_factory=dict)
    # code name -> the names its frames can hold as locals (see `scope_names`); absent: any of `names`
    scopes: dict[str, frozenset[str]] = field(default_factory=dict)
    # "<listcomp>", "<setcomp>", "<dictcomp>" -> the (caller's code name, caller's line) pairs a frame of
    # that kind can be called from (see `comprehension_callers`); absent: from anywhere
    comprehension_callers: dict[str, frozenset[tuple[str, int]]] = field(default_factory=dict)
    # line -> the lines whose event can come next in the same frame (model_backend/grammar/lines.py);
    # absent: any line
    next_lines: dict[int, frozenset[int]] = field(default_factory=dict)
    ends: frozenset[int] = frozenset()  # of next_lines' lines, those a step can end the frame from
    # a function's call-event line -> (its name, the lines its first line event can be on) (lines.body_starts)
    body_starts: dict[int, tuple[str, frozenset[int]]] = field(default_factory=dict)
    # line -> the names a step from there can bind in its frame; absent: any (bindings.line_bindings)
    binds: dict[int, frozenset[str]] = field(default_factory=dict)
    shared: frozenset[str] = frozenset()  # names any call can rebind (`global`, `nonlocal`)
    suspending: frozenset[str] = frozenset()  # code names whose frames can yield or await (generators, coroutines)
    # line -> (name, repr) where the line is only `name = <literal>`, and line -> (name, other) where it
    # is only `name = other` (bindings.simple_assignments)
    literals: dict[int, tuple[str, str]] = field(default_factory=dict)
    copies: dict[int, tuple[str, str]] = field(default_factory=dict)
    # No repr of the program's own can print braces as it likes (the source never names __repr__), so a
    # `{...}` in a value is a dict or a set, whose keys are distinct
    unique_keys: bool = False
    must_call: frozenset[int] = frozenset()  # lines that step_into leaves by a call (calls.must_call_lines)
    # line -> the names it reads, where it calls nothing and changes no object if those hold builtin
    # values (containers.inert_lines)
    inert: dict[int, frozenset[str]] = field(default_factory=dict)
    # line -> (names, expression) for `NAME = EXPR`, `A, B = EXPR`, `NAME op= EXPR`, and line -> EXPR for
    # `return EXPR`, where EXPR is made of variables, operators and builtins (bindings.computed_values)
    computed: dict[int, tuple[tuple[str, ...], ast.expr]] = field(default_factory=dict)
    computed_returns: dict[int, ast.expr] = field(default_factory=dict)
    printed: dict[int, ast.Call] = field(default_factory=dict)  # line -> `print(...)` (printing.printed_lines)
    pure: frozenset[str] = frozenset()  # functions whose calls change no object of their callers (calls.pure_functions)
    # line -> (names bound or None for `return`, the function called, the expression around its value)
    # (calls.call_expressions)
    call_expressions: dict[int, CallExpression] = field(default_factory=dict)
    # line -> (container, statement, name bound to what its method returns) (containers.mutations)
    mutations: dict[int, tuple[str, ast.stmt, str | None]] = field(default_factory=dict)
    # line -> (the names it reads, the names through which it changes objects), where it changes objects
    # only through plain names if those hold builtin values (containers.mutating_lines)
    mutating: dict[int, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)
    returns: dict[int, str] = field(default_factory=dict)  # line -> name, where it is only `return name`
    # line -> names, where it is only `return a, b, ...` (calls.returned_tuples)
    returned_tuples: dict[int, tuple[str, ...]] = field(default_factory=dict)
    # line -> (name, repr) pairs, where it only imports names of a known module (bindings.imported_values)
    imports: dict[int, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    truths: dict[int, TruthTest] = field(default_factory=dict)  # header line -> `if NAME:`... (lines.truth_tests)
    # (line, function) -> the parameters of the one call the line makes (calls.call_bindings)
    calls: dict[tuple[int, str], Binding] = field(default_factory=dict)
    # (line, "<listcomp>"...) -> the comprehension's `.0` and free names at its call event (comprehensions.comprehension_calls)
    comprehensions: dict[tuple[int, str], ComprehensionCall] = field(default_factory=dict)
    loops: dict[int, ForLoop] = field(default_factory=dict)  # header line -> `for` loop (loops.for_loops)
    # (line, "<listcomp>"...) -> the comprehension's loop (comprehensions.comprehension_loops)
    comprehension_loops: dict[tuple[int, str], ComprehensionLoop] = field(default_factory=dict)
    # (line, inner code name) -> (outer code name, its loop) (comprehensions.nested_comprehension_loops)
    nested_loops: dict[tuple[int, str], tuple[str, ComprehensionLoop]] = field(default_factory=dict)
    appends: dict[int, tuple[str, ArgumentSource]] = field(default_factory=dict)  # containers.appended_values
    stores: dict[int, ItemStore] = field(default_factory=dict)  # line -> one item stored (containers.item_stores)
    # line -> (name, function) where the line is only `name = function(...)` (calls.call_results)
    call_results: dict[int, tuple[str, str]] = field(default_factory=dict)
    # line -> (the order of its statement's line events, the statement's lines) (lines.statement_line_orders)
    line_orders: dict[int, tuple[tuple[int, ...], tuple[int, int]]] = field(default_factory=dict)
    # Only for a model that reads trace format version 3 (objects written with their fields; `of(...,
    # objects=True)`): class name -> the names its body defines (containers.plain_classes), and line -> the one
    # attribute it sets or appends to (containers.attribute_updates)
    classes: dict[str, frozenset[str]] = field(default_factory=dict)
    attribute_updates: dict[int, AttributeUpdate] = field(default_factory=dict)

    def locals_of(self, function: str | None) -> frozenset[str]:
        """The names a frame of `function` may show among its locals."""
        scope = self.scopes.get(function) if function is not None else None
        return self.names if scope is None else scope & self.names

    @cached_property
    def frame_lines(self) -> frozenset[int]:
        return frozenset(n for n in self.lines if any(self.may_be_in(f, n) for f in self.functions))

    def may_call(self, caller: str, line: int, function: str) -> bool:
        """Whether a frame of `caller` on `line` can have a frame of `function` right above it."""
        lines = self.call_lines.get(function)
        if lines is not None and line not in lines:
            return False
        callers = self.comprehension_callers.get(function)
        return callers is None or (caller, line) in callers

    @cached_property
    def callees_at(self) -> dict[tuple[str, int], frozenset[str]]:
        """(function, line) -> the functions a frame of that function on that line can call."""
        return {(c, n): frozenset(f for f in self.functions if self.may_call(c, n, f))
                for c in self.functions for n in self.lines if self.may_be_in(c, n)}

    @cached_property
    def callees_of(self) -> dict[str, frozenset[str]]:
        """Function -> the functions a frame of it can call, from any of its lines."""
        return {f: frozenset().union(*(self.callees_at[f, n] for n in self.lines if self.may_be_in(f, n)))
                for f in self.functions}

    def may_be_in(self, function: str, line: int) -> bool:
        """Whether a frame of `function` can be on `line` (unknown names, e.g. <module>, allow any)."""
        span = self.spans.get(function)
        return span is None or line in span

    @classmethod
    def of(cls, program: Program, objects: bool = False) -> ProgramFacts:
        """The facts of `program`; `objects`: for a model that reads trace format version 3 or later,
        whose values write the program's objects with their fields."""
        try:
            tree = safe_ast.parse(program.source)
        except SyntaxError:
            tree = ast.Module(body=[], type_ignores=[])
        source = Source(program, tree, symbol_table(program.source), _uses_dynamic_lookup(tree), objects)
        from model_backend.grammar.rules import FACT_BUILDERS  # the families' rules read facts.py

        fields = program_facts(source)
        for builder in FACT_BUILDERS:
            fields.update(builder(source))
        return cls(**fields)


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


def _uses_dynamic_lookup(tree: ast.Module) -> bool:
    nodes = list(ast.walk(tree))
    aliases = [a for node in nodes if isinstance(node, ast.Import | ast.ImportFrom) for a in node.names]
    imported = {(a.asname or a.name).split(".")[0] for a in aliases}
    if any(a.name.split(".")[0] == "__main__" for a in aliases):  # the program's own module: any variable may hold it
        harmless = set()
    else:
        harmless = {id(node.func) for node in nodes if isinstance(node, ast.Call) and _is_vars_of_an_object(node, imported)}
    return any(isinstance(node, ast.Name | ast.Attribute) and _name_of(node) in _DYNAMIC_LOOKUP
               and id(node) not in harmless for node in nodes)


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
    lookups (`_uses_dynamic_lookup`), which would make the whole answer unsafe.
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
    Only for programs without dynamic lookups or writes (`exec`, `locals()`, ...; `_uses_dynamic_lookup`)."""
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
