"""Constrained decoding of one frame of the trace format.

A `FrameConstraint` follows the text of a frame as the model writes it and answers two questions:
which special tokens may come next, and whether a piece of ordinary text (a BPE token's bytes) may.
It enforces the grammar of docs/trace-format.md and the program's facts: line numbers of the
program only, function names of the program only, stacks whose callers sit on lines that can call
the frame above them, JSON locals whose keys are names that can be variables of the frame's function,
JSON strings of bounded length holding repr-shaped values (no plain key twice in a dict or a set, where
the program writes no repr of its own); and, given the action, what one step within a frame can do (the
line that can come next, the variables it can change, the value a literal assignment gives:
model_backend/engine/flow.py). Every path through it ends in a frame that parses.
The source line after `<|src_sep|>` is not generated at all: it follows from the line number and is
fed to the model as forced text.
"""

from __future__ import annotations

import ast
import json
import re
import symtable
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache
from typing import TypeVar

from model_backend import safe_ast
from model_backend import trace_format as fmt
from model_backend.grammar.back import container_before, values_before
from model_backend.grammar.bindings import (
    computed_values,
    imported_values,
    line_bindings,
    simple_assignments,
    value_repr,
)
from model_backend.grammar.calls import (
    RETURNED,
    Binding,
    CallExpression,
    call_bindings,
    call_expressions,
    call_results,
    must_call_lines,
    pure_functions,
    returned_names,
    returned_tuples,
)
from model_backend.grammar.comprehensions import (
    ComprehensionCall,
    ComprehensionLoop,
    comprehension_calls,
    comprehension_loops,
    nested_comprehension_loops,
    symbol_table,
)
from model_backend.grammar.containers import (
    AttributeUpdate,
    ItemStore,
    appended_values,
    attribute_updates,
    inert_lines,
    item_stores,
    mutating_lines,
    mutation_reprs,
    mutations,
    plain_classes,
)
from model_backend.grammar.lines import TruthTest, frame_ends, next_lines, statement_line_orders, truth_tests
from model_backend.grammar.lines import truth as deduced_truth
from model_backend.grammar.loops import ForLoop, LoopArgument, for_loops, iterable_elements
from model_backend.grammar.printing import printed_lines, printed_text
from model_backend.grammar.syntax import ArgumentSource, is_generator_def, shared_names, suspending_functions
from model_backend.program import Program
from model_backend.sandbox import Limits
from model_backend.state import State
from model_backend.tracer import MAX_ELEMENTS

# The repr of an int, a float, a str, a bool or None: a value that changes only when its name is rebound.
IMMUTABLE_REPR = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?|'([^'\\\n]|\\.)*'|\"([^\"\\\n]|\\.)*\"|True|False|None")
# How the repr of a list, a tuple, a dict or a set begins (a program without classes has no other
# objects printed so).
_CONTAINER_REPR_START = ("[", "(", "{")


def _builtin_value(text: str | None) -> bool:
    """Whether a shown value is a number, a string, a bool, None, a list, a tuple, a dict or a set."""
    return text is not None and (text.startswith(_CONTAINER_REPR_START) or IMMUTABLE_REPR.fullmatch(text) is not None)


def _iterator_type(text: str | None) -> str | None:
    """The type of `iter(value)` for a value shown as `text`, where its repr tells: a list, a tuple, a
    range, or a string without escapes (an escape may hide a character beyond ASCII)."""
    if text is None:
        return None
    if text.startswith("["):
        return "list_iterator"
    if text.startswith("("):
        return "tuple_iterator"
    if text.startswith("range("):
        return "range_iterator"
    if text[:1] in ("'", '"') and "\\" not in text:
        return "str_ascii_iterator" if text.isascii() else "str_iterator"
    return None


# Code inside an expression that runs in a frame of its own, and that frame's code name. Their lines are
# the expression's, which flow.py does not follow.
EXPRESSION_FRAME_NAMES: dict[type, str] = {ast.ListComp: "<listcomp>", ast.SetComp: "<setcomp>",
                                           ast.DictComp: "<dictcomp>", ast.GeneratorExp: "<genexpr>",
                                           ast.Lambda: "<lambda>"}
EXPRESSION_FRAMES = frozenset(EXPRESSION_FRAME_NAMES.values())
_SPECIAL_TOKEN = re.compile(r"<\|[a-z0-9_]+\|>")  # every "<|" of a frame starts one (docs/trace-format.md)
_Entry = TypeVar("_Entry")
_MAX_REPR = Limits().max_repr  # the tracer cuts a longer repr
MAX_STRING = 240  # bytes in one JSON string (reprs are cut at 200 characters by the tracer)
MAX_STACK = 32


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
    # line -> the lines whose event can come next in the same frame (model_backend/engine/flow.py);
    # absent: any line
    next_lines: dict[int, frozenset[int]] = field(default_factory=dict)
    ends: frozenset[int] = frozenset()  # of next_lines' lines, those a step can end the frame from
    # line -> the names a step from there can bind in its frame; absent: any (flow.line_bindings)
    binds: dict[int, frozenset[str]] = field(default_factory=dict)
    shared: frozenset[str] = frozenset()  # names any call can rebind (`global`, `nonlocal`)
    suspending: frozenset[str] = frozenset()  # code names whose frames can yield or await (generators, coroutines)
    # line -> (name, repr) where the line is only `name = <literal>`, and line -> (name, other) where it
    # is only `name = other` (flow.simple_assignments)
    literals: dict[int, tuple[str, str]] = field(default_factory=dict)
    copies: dict[int, tuple[str, str]] = field(default_factory=dict)
    # No repr of the program's own can print braces as it likes (the source never names __repr__), so a
    # `{...}` in a value is a dict or a set, whose keys are distinct
    unique_keys: bool = False
    must_call: frozenset[int] = frozenset()  # lines that step_into leaves by a call (flow.must_call_lines)
    # line -> the names it reads, where it calls nothing and changes no object if those hold builtin
    # values (flow.inert_lines)
    inert: dict[int, frozenset[str]] = field(default_factory=dict)
    # line -> (names, expression) for `NAME = EXPR`, `A, B = EXPR`, `NAME op= EXPR`, and line -> EXPR for
    # `return EXPR`, where EXPR is made of variables, operators and builtins (flow.computed_values)
    computed: dict[int, tuple[tuple[str, ...], ast.expr]] = field(default_factory=dict)
    computed_returns: dict[int, ast.expr] = field(default_factory=dict)
    printed: dict[int, ast.Call] = field(default_factory=dict)  # line -> `print(...)` (flow.printed_lines)
    pure: frozenset[str] = frozenset()  # functions whose calls change no object of their callers (flow.pure_functions)
    # line -> (names bound or None for `return`, the function called, the expression around its value)
    # (flow.call_expressions)
    call_expressions: dict[int, CallExpression] = field(default_factory=dict)
    # line -> (container, statement, name bound to what its method returns) (flow.mutations)
    mutations: dict[int, tuple[str, ast.stmt, str | None]] = field(default_factory=dict)
    # line -> (the names it reads, the names through which it changes objects), where it changes objects
    # only through plain names if those hold builtin values (flow.mutating_lines)
    mutating: dict[int, tuple[frozenset[str], frozenset[str]]] = field(default_factory=dict)
    returns: dict[int, str] = field(default_factory=dict)  # line -> name, where it is only `return name`
    # line -> names, where it is only `return a, b, ...` (flow.returned_tuples)
    returned_tuples: dict[int, tuple[str, ...]] = field(default_factory=dict)
    # line -> (name, repr) pairs, where it only imports names of a known module (flow.imported_values)
    imports: dict[int, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    truths: dict[int, TruthTest] = field(default_factory=dict)  # header line -> `if NAME:`... (flow.truth_tests)
    # (line, function) -> the parameters of the one call the line makes (flow.call_bindings)
    calls: dict[tuple[int, str], Binding] = field(default_factory=dict)
    # (line, "<listcomp>"...) -> the comprehension's `.0` and free names at its call event (flow.comprehension_calls)
    comprehensions: dict[tuple[int, str], ComprehensionCall] = field(default_factory=dict)
    loops: dict[int, ForLoop] = field(default_factory=dict)  # header line -> `for` loop (flow.for_loops)
    # (line, "<listcomp>"...) -> the comprehension's loop (flow.comprehension_loops)
    comprehension_loops: dict[tuple[int, str], ComprehensionLoop] = field(default_factory=dict)
    # (line, inner code name) -> (outer code name, its loop) (flow.nested_comprehension_loops)
    nested_loops: dict[tuple[int, str], tuple[str, ComprehensionLoop]] = field(default_factory=dict)
    appends: dict[int, tuple[str, ArgumentSource]] = field(default_factory=dict)  # flow.appended_values
    stores: dict[int, ItemStore] = field(default_factory=dict)  # line -> one item stored (flow.item_stores)
    # line -> (name, function) where the line is only `name = function(...)` (flow.call_results)
    call_results: dict[int, tuple[str, str]] = field(default_factory=dict)
    # line -> (the order of its statement's line events, the statement's lines) (flow.statement_line_orders)
    line_orders: dict[int, tuple[tuple[int, ...], tuple[int, int]]] = field(default_factory=dict)
    # Only for a model that reads trace format version 3 (objects written with their fields; `of(...,
    # objects=True)`): class name -> the names its body defines (flow.plain_classes), and line -> the one
    # attribute it sets or appends to (flow.attribute_updates)
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
        lines = {i + 1: text for i, text in enumerate(program.lines) if text.strip()}
        names: set[str] = {".0", "__class__"}  # a comprehension's iterator; the cell super() uses
        functions: set[str] = {"<module>"}
        spans: dict[str, set[int]] = {}
        try:
            tree = safe_ast.parse(program.source)
        except SyntaxError:
            tree = ast.Module(body=[], type_ignores=[])
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
        dynamic = _uses_dynamic_lookup(tree)  # then neither rule below can be trusted
        table = symbol_table(program.source)
        literals, copies = simple_assignments(tree, Limits().max_repr)
        computed, computed_returns = ({}, {}) if dynamic else computed_values(tree)
        return cls(
            lines=lines, names=frozenset(names), functions=frozenset(functions),
            spans={name: frozenset(span) for name, span in spans.items()},
            call_lines={} if dynamic else direct_call_lines(tree),
            scopes={} if dynamic else scope_names(table, tree),
            comprehension_callers={} if dynamic else comprehension_callers(tree),
            next_lines=next_lines(tree),
            ends=frame_ends(tree),
            binds={} if dynamic else line_bindings(tree),
            shared=shared_names(tree),
            suspending=suspending_functions(tree),
            literals=literals,
            copies=copies,
            unique_keys="__repr__" not in program.source,
            must_call=must_call_lines(tree),
            inert={} if dynamic else inert_lines(tree),
            mutating={} if dynamic else mutating_lines(tree),
            computed=computed,
            computed_returns=computed_returns,
            mutations={} if dynamic else mutations(tree),
            printed={} if dynamic else printed_lines(tree),
            pure=frozenset() if dynamic else pure_functions(tree),
            call_expressions={} if dynamic else call_expressions(tree),
            returns=returned_names(tree),
            returned_tuples=returned_tuples(tree),
            imports=imported_values(tree, Limits().max_repr),
            truths={} if dynamic else truth_tests(tree),
            calls={} if dynamic else call_bindings(tree, Limits().max_repr),
            comprehensions={} if dynamic else comprehension_calls(table, tree),
            loops={} if dynamic else for_loops(tree),
            comprehension_loops={} if dynamic else comprehension_loops(tree),
            nested_loops={} if dynamic else nested_comprehension_loops(tree),
            appends=appended_values(tree, Limits().max_repr),
            stores={} if dynamic else item_stores(tree, Limits().max_repr),
            call_results=call_results(tree),
            line_orders=statement_line_orders(program.source, tree),
            classes=plain_classes(tree) if objects and not dynamic else {},
            attribute_updates=attribute_updates(tree) if objects and not dynamic else {},
        )


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


@dataclass(frozen=True)
class Choice:
    """One of a fixed set of byte strings (a line number, a function name, `null`)."""

    options: frozenset[bytes]
    prefix: bytes = b""

    def feed(self, data: bytes) -> Choice | None:
        prefix = self.prefix + data
        return replace(self, prefix=prefix) if any(o.startswith(prefix) for o in self.options) else None

    @property
    def complete(self) -> bool:
        return self.prefix in self.options


_CLOSER_OF = {0x29: 0x28, 0x5D: 0x5B, 0x7D: 0x7B}  # ) ] } -> ( [ {
_JSON_ESCAPED = {0x22: 0x22, 0x5C: 0x5C, 0x2F: 0x2F}  # \" \\ \/ stand for these characters
CUT_REPR = 200  # the tracer cuts a longer repr there and adds "...", so its shape is no longer whole
# One character repeated more than this in a row ends a value's repr: no value in our datasets has a run
# longer than 42 (scripts/check_grammar.py), while a model that starts repeating one character (a
# degenerate loop) would otherwise write it up to MAX_STRING times, in every variable of the frame.
_NO_EVENT_LINE = re.compile(r"\s*(else|finally)\s*:\s*(#.*)?")  # a clause's header: no code, never a line event
MAX_LOOP_BACK = 256  # elements a step back onto a loop's header follows from the first (more: left to the model)
MAX_RUN = 64


def _repr_shape_step(brackets: bytes, quote: int, escaped: bool, char: int) -> tuple[bytes, int, bool] | None:
    """One character of a Python repr: brackets must close in order, outside string literals."""
    if quote:
        if escaped:
            return brackets, quote, False
        if char == 0x5C:
            return brackets, quote, True
        return brackets, (0 if char == quote else quote), False
    if char in (0x27, 0x22):
        return brackets, char, False
    if char in (0x28, 0x5B, 0x7B):
        return brackets + bytes([char]), 0, False
    opener = _CLOSER_OF.get(char)
    if opener is not None:
        if not brackets or brackets[-1] != opener:
            return None
        return brackets[:-1], 0, False
    return brackets, 0, False


# A dict key or set element whose repr is its value: two equal texts are one value, which a dict or a
# set cannot hold twice (not so for `<Foo object>`, whose repr hides which object it is).
_PLAIN_KEY = re.compile(IMMUTABLE_REPR.pattern.encode())

# One entry per open bracket of a repr, innermost last: None, or for a `{`, (kind, keys seen, the text of
# the key or element being written (None once it holds a bracket), whether a dict's value is being written).
Braces = tuple[tuple[int, frozenset[bytes], bytes | None, bool] | None, ...]
_UNKNOWN, _DICT, _SET = 0, 1, 2


def _with_key(seen: frozenset[bytes], text: bytes | None) -> frozenset[bytes] | None:
    """`seen` and one more key or element; None if it is a plain one already there."""
    if text is None or not _PLAIN_KEY.fullmatch(text):
        return seen
    return None if text in seen else seen | {text}


def _unique_keys_step(braces: Braces, quote: int, char: int) -> Braces | None:
    """One character of a repr (`quote`: the string literal open before it, 0 outside one) for the rule
    that a dict's keys and a set's elements are distinct: None where a plain key comes a second time.
    The repr's brackets are checked by _repr_shape_step; this follows only what sits in `{...}`."""
    top = braces[-1] if braces else None
    if quote:  # inside a string literal: part of the key's text
        if top is not None and top[2] is not None and not top[3]:
            return (*braces[:-1], (top[0], top[1], top[2] + bytes([char]), top[3]))
        return braces
    if char in (0x28, 0x5B, 0x7B):  # a bracket opens: the key holding it is not a plain one
        if top is not None and not top[3]:
            braces = (*braces[:-1], (top[0], top[1], None, top[3]))
        return (*braces, (_UNKNOWN, frozenset(), b"", False) if char == 0x7B else None)
    if char in (0x29, 0x5D, 0x7D):
        if char == 0x7D and top is not None and not top[3] and _with_key(top[1], top[2]) is None:
            return None  # a set's last element
        return braces[:-1]
    if top is None or char == 0x20:
        return braces
    kind, seen, text, in_value = top
    if char == 0x3A and not in_value and kind != _SET:  # a dict's key ends
        keys = _with_key(seen, text)
        return None if keys is None else (*braces[:-1], (_DICT, keys, b"", True))
    if char == 0x2C:
        if in_value:  # a dict's value ends
            return (*braces[:-1], (_DICT, seen, b"", False))
        keys = _with_key(seen, text)  # a set's element ends
        return None if keys is None else (*braces[:-1], (_SET, keys, b"", False))
    if in_value or text is None:
        return braces
    return (*braces[:-1], (kind, seen, text + bytes([char]), in_value))


@dataclass(frozen=True)
class JsonString:
    """A JSON string as json.dumps(ensure_ascii=False) writes it, at most MAX_STRING bytes inside.

    With `repr_shape`, the string holds a Python repr: its brackets close in order and its string
    literals end before the closing quote (unless it is long enough to be one the tracer cut), and no
    character repeats more than MAX_RUN times in a row. No value the tracer wrote in our datasets
    breaks this; it keeps a model from stopping half-way through a list or a string, or from looping
    on one character.
    """

    phase: int = 0  # 0 before the opening quote, 1 inside, 2 after a backslash, 3..6 in \uXXXX, 7 closed
    length: int = 0
    last: int = 0
    repr_shape: bool = False
    brackets: bytes = b""  # the repr's open brackets, innermost last
    quote: int = 0  # the quote of the repr's open string literal, 0 outside one
    escaped: bool = False  # after a backslash inside that literal
    run: int = 0  # how many times `last` repeats at the end (plain characters only)
    unique_keys: bool = False  # with repr_shape: refuse a plain dict key or set element written twice
    braces: Braces = ()  # for unique_keys (see _unique_keys_step)

    def feed(self, data: bytes) -> JsonString | None:
        phase, length, last, run = self.phase, self.length, self.last, self.run
        shape, brackets, quote, escaped = self.repr_shape, self.brackets, self.quote, self.escaped
        braces = self.braces
        for byte in data:
            char = -1  # the repr's character this byte completes, if any
            if phase == 0:
                if byte != 0x22:
                    return None
                phase = 1
            elif phase == 1:
                if byte == 0x22:
                    if shape and (brackets or quote) and length < CUT_REPR:
                        return None
                    phase = 7
                elif length >= MAX_STRING:
                    return None
                elif byte == 0x5C:
                    phase, length, run = 2, length + 1, 0
                elif byte < 0x20 or (byte == 0x7C and last == 0x3C):  # control char, or "<|"
                    return None
                else:
                    run = run + 1 if byte == last else 1
                    if shape and run > MAX_RUN:
                        return None
                    length += 1
                    char = byte
            elif phase == 2:
                if byte == 0x75:  # \u
                    phase = 3
                elif byte in b'"\\/bfnrt':
                    phase = 1
                    char = _JSON_ESCAPED.get(byte, 0)
                else:
                    return None
            elif 3 <= phase <= 6:
                if byte not in b"0123456789abcdefABCDEF":
                    return None
                if phase == 6:
                    phase, char = 1, 0  # json.dumps escapes only control characters this way
                else:
                    phase += 1
            else:
                return None
            if shape and char >= 0:
                if self.unique_keys and length <= CUT_REPR:  # past it the tracer cut the repr
                    stepped_braces = _unique_keys_step(braces, quote, char)
                    if stepped_braces is None:
                        return None
                    braces = stepped_braces
                stepped = _repr_shape_step(brackets, quote, escaped, char)
                if stepped is None:
                    return None
                brackets, quote, escaped = stepped
            last = byte
        return JsonString(phase, length, last, shape, brackets, quote, escaped, run, self.unique_keys, braces)

    @property
    def complete(self) -> bool:
        return self.phase == 7


@dataclass(frozen=True)
class Value:
    """A return value or exception: a JSON string, or `null`."""

    inner: JsonString | Choice | None = None
    unique_keys: bool = False  # see JsonString

    def feed(self, data: bytes) -> Value | None:
        if not data:
            return self
        inner = self.inner
        if inner is None:
            inner = (Choice(frozenset({b"null"})) if data[:1] == b"n"
                     else JsonString(repr_shape=True, unique_keys=self.unique_keys))
        fed = inner.feed(data)
        return Value(fed, self.unique_keys) if fed is not None else None

    @property
    def complete(self) -> bool:
        return self.inner is not None and self.inner.complete


# Where a Spliced string stands in its template: (part, bytes of a fixed part matched, the automaton of
# a free value being written, or None in a fixed part)
_Path = tuple[int, int, JsonString | None]


@dataclass(frozen=True)
class Spliced:
    """A JSON string whose repr is fixed text with, in the gaps, the repr of one value each: a list or a
    dict after a step that changed one item or added one (the other items as they were). Or that repr
    as the tracer cuts a long one: its first CUT_REPR characters and `...`.

    `parts` are the fixed texts, JSON-escaped and without quotes, and None for each gap. A gap ends
    where its value's brackets and quotes are closed and the next fixed text matches; as that is not
    known in advance, every way through is followed (`paths`)."""

    parts: tuple[bytes | None, ...]
    paths: frozenset[_Path] = frozenset()
    phase: int = 0  # 0 before the opening quote, 1 inside, 2 in the cut's "...", 3 closed
    chars: int = 0  # characters of the repr so far
    escape: int = 0  # bytes left of a JSON escape (`\n`: 1 after the backslash; `\uXXXX`: 4 after the `u`)
    dots: int = 0

    @classmethod
    def of(cls, parts: tuple[str | None, ...]) -> Spliced:
        escaped = tuple(None if part is None else fmt._json(part)[1:-1].encode() for part in parts)
        return cls(escaped, cls._settled(escaped, frozenset({(0, 0, None if escaped[0] is not None else _GAP)})))

    @staticmethod
    def _settled(parts: tuple[bytes | None, ...], paths: frozenset[_Path]) -> frozenset[_Path]:
        """The paths with every move that takes no byte: past a fixed part's end, or a gap's closed value."""
        todo, seen = list(paths), set(paths)
        while todo:
            index, offset, gap = todo.pop()
            if index == len(parts):
                continue
            part = parts[index]
            ended = (gap is not None and gap.phase == 1 and gap.length > 0 and not gap.brackets and not gap.quote
                     ) if part is None else offset == len(part)
            if ended:
                following = (index + 1, 0, _GAP if index + 1 < len(parts) and parts[index + 1] is None else None)
                if following not in seen:
                    seen.add(following)
                    todo.append(following)
        return frozenset(seen)

    def _complete_path(self) -> bool:
        return any(index == len(self.parts) for index, _, _ in self.paths)

    def feed(self, data: bytes) -> Spliced | None:
        state: Spliced | None = self
        for byte in data:
            if state is None:
                return None
            state = state._step(byte)
        return state

    def _step(self, byte: int) -> Spliced | None:
        if self.phase == 0:
            return replace(self, phase=1) if byte == 0x22 else None
        if self.phase == 2:  # the tracer's cut: `...` and the closing quote
            if self.dots < 3:
                return replace(self, dots=self.dots + 1) if byte == 0x2E else None
            return replace(self, phase=3) if byte == 0x22 else None
        if self.phase != 1:
            return None
        if self.escape == 0 and byte == 0x22:  # the closing quote: the repr is whole
            return replace(self, phase=3) if self._complete_path() else None
        starts_char = self.escape == 0 and not 0x80 <= byte < 0xC0
        if starts_char and self.chars == CUT_REPR:  # a longer repr: the tracer cut it here
            alive = any(index < len(self.parts) for index, _, _ in self.paths)
            return replace(self, phase=2, dots=1) if byte == 0x2E and alive else None
        moved: set[_Path] = set()
        for index, offset, gap in self.paths:
            if index == len(self.parts):
                continue
            part = self.parts[index]
            if part is None:
                assert gap is not None
                if byte == 0x2C and gap.phase == 1 and not gap.brackets and not gap.quote:
                    continue  # one value's repr has no comma outside its brackets and quotes
                fed = gap.feed(bytes([byte]))
                if fed is not None and fed.phase != 7:
                    moved.add((index, 0, fed))
            elif offset < len(part) and part[offset] == byte:
                moved.add((index, offset + 1, None))
        if not moved:
            return None
        if self.escape:
            escape = 4 if self.escape == 1 and byte == 0x75 else self.escape - 1
        else:
            escape = 1 if byte == 0x5C else 0
        return replace(self, paths=self._settled(self.parts, frozenset(moved)), chars=self.chars + starts_char,
                       escape=escape)

    @property
    def complete(self) -> bool:
        return self.phase == 3


_GAP = JsonString(phase=1, repr_shape=True)  # a gap's value, inside the string already


@dataclass(frozen=True)
class Locals:
    """`{"name": "repr", ...}` with our separators; keys from the program's names, each at most once;
    the diff marker `"..": ".."` only where a diff is allowed, and only first."""

    keys: frozenset[bytes]
    diff_allowed: bool
    diff_keys: frozenset[bytes] | None = None  # the only keys a diff may name (None: any of `keys`)
    # (key, its possible values as JSON) pairs: names the step bound to known values; each key must be
    # written, except in a diff when it had such a value already (it is in `unchanged`)
    forced: tuple[tuple[bytes, frozenset[bytes]], ...] = ()
    unchanged: frozenset[bytes] = frozenset()
    # (key, the shape its value must have) pairs: a list or a dict the step changed in one item at most;
    # unlike a forced key, it may be left out
    shaped: tuple[tuple[bytes, Spliced], ...] = ()
    required: frozenset[bytes] = frozenset()  # keys that must be written (a shaped value its old one cannot fit)
    unique_keys: bool = False  # see JsonString
    phase: int = 0  # 0 '{', 1 first key or '}', 2 key, 3 ':', 4 ' ', 5 value, 6 ',' or '}', 7 ' ', 8 '"', 9 done
    used: frozenset[bytes] = frozenset()
    key: bytes = b""
    value: JsonString | Choice | Spliced | None = None
    count: int = 0

    def _key_options(self) -> list[bytes]:
        options = [k for k in self.keys if k not in self.used]
        if self.diff_keys is not None and b".." in self.used:
            options = [k for k in options if k in self.diff_keys]
        if self.diff_allowed and self.count == 0:
            options.append(b"..")
        return options

    def _may_close(self) -> bool:
        """Whether `}` may come: the forced keys written (in a diff, if the value changed)."""
        return self.required <= self.used and all(
            key in self.used or (key in self.unchanged and b".." in self.used) for key, _ in self.forced)

    def feed(self, data: bytes) -> Locals | None:
        s: Locals | None = self
        for i, byte in enumerate(data):
            if s is None:
                return None
            if s.phase == 5:  # inside the value: hand the rest of the chunk to the string automaton
                return s._feed_value(data[i:])
            s = s._step(byte)
        return s

    def _feed_value(self, data: bytes) -> Locals | None:
        assert self.value is not None
        for i in range(len(data)):
            fed = self.value.feed(data[i : i + 1])
            if fed is None:
                return None
            if fed.complete:
                rest = replace(self, phase=6, value=None, count=self.count + 1)
                return rest.feed(data[i + 1 :]) if i + 1 < len(data) else rest
            self = replace(self, value=fed)
        return self

    def _step(self, byte: int) -> Locals | None:
        p = self.phase
        if p == 0:
            return replace(self, phase=1) if byte == 0x7B else None
        if p in (1, 8):
            if byte == 0x22 and self._key_options():
                return replace(self, phase=2, key=b"")
            if p == 1 and byte == 0x7D and self._may_close():
                return replace(self, phase=9)
            return None
        if p == 2:
            if byte == 0x22:
                if self.key not in self._key_options():
                    return None
                forced = dict(self.forced).get(self.key)
                shaped = dict(self.shaped).get(self.key)
                value: JsonString | Choice | Spliced = (
                    Choice(frozenset({b'".."'})) if self.key == b".." else
                    Choice(forced) if forced is not None else
                    shaped if shaped is not None
                    else JsonString(repr_shape=True, unique_keys=self.unique_keys)
                )
                return replace(self, phase=3, used=self.used | {self.key}, value=value)
            key = self.key + bytes([byte])
            return replace(self, key=key) if any(k.startswith(key) for k in self._key_options()) else None
        if p == 3:
            return replace(self, phase=4) if byte == 0x3A else None
        if p == 4:
            return replace(self, phase=5) if byte == 0x20 else None
        if p == 6:
            if byte == 0x7D:
                return replace(self, phase=9) if self._may_close() else None
            if byte == 0x2C and self._key_options():
                return replace(self, phase=7)
            return None
        if p == 7:
            return replace(self, phase=8) if byte == 0x20 else None
        return None

    @property
    def complete(self) -> bool:
        return self.phase == 9


@dataclass(frozen=True)
class Stack:
    """`[["f", 3], ["g", 7]]`: known function names, program lines, the last entry on the frame's line,
    and (with `facts`) every entry on a line of its own function, every caller on a line that can call
    the function above it, and no entry from which the stack could not reach the frame's line."""

    functions: frozenset[bytes]
    lines: frozenset[bytes]
    final_line: bytes
    facts: ProgramFacts | None = None
    # function -> the fewest entries that must follow an entry of it (0: it can end the stack);
    # functions that cannot lead to the frame's line are absent
    to_end: dict[str, int] | None = None
    # (caller's function, caller's line) -> the fewest entries after it that end the stack
    after_line: dict[tuple[str, int], int] | None = None
    last_function: bytes = b""
    # One traced event from the previous state (Stack.after_event): the entries it keeps as they were,
    # the function of the entry above them, and how many entries the stack has
    kept: tuple[tuple[bytes, bytes], ...] = ()
    kept_top: bytes | None = None
    size: int | None = None
    phase: int = 0  # 0 '[', 1 '[', 2 name, 3 ',', 4 ' ', 5 line, 6 ']' closing the item, 7 ',' or ']', 8 ' ', 9 done
    part: Choice | JsonString | None = None
    last_line: bytes = b""
    count: int = 0

    @classmethod
    def for_frame(cls, facts: ProgramFacts, line: int | None) -> Stack:
        """The stack of a frame on `line` of the program `facts` describe."""
        to_end = _entries_to_end(facts, line) if line is not None else None
        after_line = None
        if to_end is not None:
            after_line = {at: 1 + min(to_end[f] for f in callees if f in to_end)
                          for at, callees in facts.callees_at.items() if not callees.isdisjoint(to_end)}
        return cls(functions=frozenset(f.encode() for f in facts.functions),
                   lines=frozenset(str(n).encode() for n in facts.lines), final_line=str(line).encode(), facts=facts,
                   to_end=to_end, after_line=after_line)

    def after_event(self, prev: State, event: str) -> Stack:
        """This stack, for an `event` traced right after `prev` (step_into; stack_after_event)."""
        kept, top, count = stack_after_event(prev, event)
        entries = [(f.function.encode(), str(f.line).encode()) for f in prev.stack[:kept]]
        return replace(self, kept=tuple(entries), kept_top=top.encode() if top is not None else None, size=count)

    def feed(self, data: bytes) -> Stack | None:
        s: Stack | None = self
        for byte in data:
            if s is None:
                return None
            s = s._step(byte)
        return s

    def _step(self, byte: int) -> Stack | None:
        p = self.phase
        if p == 0:
            return replace(self, phase=1) if byte == 0x5B else None
        if p == 1:
            if byte == 0x5B and self.count < MAX_STACK:
                caller = int(self.last_line) if self.count else None
                names = frozenset(b'"' + f + b'"' for f in self.functions if self._may_follow(caller, f, self.count))
                return replace(self, phase=2, part=Choice(names)) if names else None
            return None
        if p == 2:
            assert isinstance(self.part, Choice)
            fed = self.part.feed(bytes([byte]))
            if fed is None:
                return None
            if fed.complete:
                return replace(self, phase=3, part=fed, last_function=fed.prefix[1:-1])
            return replace(self, part=fed)
        if p == 3:
            return replace(self, phase=4) if byte == 0x2C else None
        if p == 4:
            # The last item the bound allows must end on the frame's own line, or ']' could never come.
            lines = frozenset({self.final_line}) if self.count + 1 >= self.limit else self.lines
            if self.count < len(self.kept):
                lines = lines & {self.kept[self.count][1]}
            if self.facts is not None:  # on a line of its own function, from which the stack can still end
                lines = frozenset(n for n in lines if self._fits(n) and self._may_end_from(n))
            return replace(self, phase=5, part=Choice(lines)) if byte == 0x20 else None
        if p == 5:
            assert isinstance(self.part, Choice)
            if byte == 0x5D and self.part.complete:
                return replace(self, phase=7, last_line=self.part.prefix, count=self.count + 1)
            fed = self.part.feed(bytes([byte]))
            return replace(self, part=fed) if fed is not None else None
        if p == 7:
            if (byte == 0x5D and self.last_line == self.final_line and self._last_fits()
                    and self.size in (None, self.count)):
                return replace(self, phase=9)
            if byte == 0x2C and self.count < self.limit and self._may_continue(int(self.last_line), self.count):
                return replace(self, phase=8)
            return None
        if p == 8:
            return replace(self, phase=1) if byte == 0x20 else None
        return None

    def _may_follow(self, caller: int | None, function: bytes, index: int) -> bool:
        """Whether entry `index` (0 = the bottom) can be `function`, the entry below (of `last_function`)
        being on `caller`."""
        if index < len(self.kept) and function != self.kept[index][0]:
            return False
        if index == len(self.kept) and self.kept_top is not None and function != self.kept_top:
            return False
        if self.facts is None or self.to_end is None:
            return True
        name = function.decode("utf-8", "replace")
        needed = self.to_end.get(name)
        if needed is None or index + 1 + needed > self.limit:
            return False
        return caller is None or self.facts.may_call(self.last_function.decode("utf-8", "replace"), caller, name)

    def _may_continue(self, caller: int, count: int) -> bool:
        """Whether, after `count` entries the last of which (of `last_function`) is on `caller`, another
        entry can follow."""
        if self.after_line is None:
            return True
        needed = self.after_line.get((self.last_function.decode("utf-8", "replace"), caller))
        return needed is not None and count + needed <= self.limit

    def _may_end_from(self, line: bytes) -> bool:
        """Whether the entry being written (number `count`) can be on `line`: it ends the stack there, or
        an entry it can call follows."""
        return line == self.final_line or self._may_continue(int(line), self.count + 1)

    def _last_fits(self) -> bool:
        return self._fits(self.final_line)

    def _fits(self, line: bytes) -> bool:
        """Whether the entry just written (its function, at `line`) can be: the line lies in the function."""
        if self.facts is None:
            return True
        return self.facts.may_be_in(self.last_function.decode("utf-8", "replace"), int(line))

    @property
    def limit(self) -> int:
        """The most entries the stack may have."""
        return min(self.size, MAX_STACK) if self.size is not None else MAX_STACK

    @property
    def complete(self) -> bool:
        return self.phase == 9


def stack_after_event(prev: State, event: str) -> tuple[int, str | None, int]:
    """What the stack of the next traced event after `prev` keeps: Python's frames come and go one at a
    time, so a return event leaves its frame, and then a call event (only) adds one, made from the line
    the caller stands on. Returns how many bottom entries stay exactly as they were, the function of the
    entry above them when that entry stays but its line may move (None: the entry above them is new),
    and the number of entries. Without this a model could write any stack the call graph allows: 32
    frames of a loop that calls nothing."""
    remaining = len(prev.stack) - (1 if prev.event == "return" else 0)
    if remaining <= 0:
        return 0, None, 1
    if event == "call" and prev.event in ("line", "return"):
        return remaining, None, remaining + 1
    return remaining - 1, prev.stack[remaining - 1].function, remaining + (1 if event == "call" else 0)


def _entries_to_end(facts: ProgramFacts, final_line: int) -> dict[str, int]:
    """For each function, the fewest stack entries that must follow one of its entries before an entry
    on `final_line` can end the stack (0 when its own entry can be on that line); unreachable ones absent.
    A breadth-first search backwards over the facts' call graph."""
    needed = {f: 0 for f in facts.functions if facts.may_be_in(f, final_line)}
    frontier = list(needed)
    while frontier:
        reached = []
        for f, callees in facts.callees_of.items():
            if f not in needed and any(g in callees for g in frontier):
                needed[f] = needed[frontier[0]] + 1
                reached.append(f)
        frontier = reached
    return needed


Slot = Choice | JsonString | Value | Locals | Stack | Spliced


# ---- the frame grammar ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Element:
    token: str  # the special token that opens this element
    slot: str | None = None  # "line", "stack", "locals", "value", "string", "src" (forced), or None
    optional: bool = False


def _body(event: str, inverse: bool) -> list[Element]:
    src = Element(fmt.SRC, "src")
    if event in fmt.VALUE_EVENTS:
        return [src, Element(fmt.ARG, "value"), Element(fmt.ARG, "locals", optional=True)]
    if event == "line" and not inverse:
        return [Element(fmt.ARG, "locals"), src]
    return [src, Element(fmt.ARG, "locals")]


def frame_elements(event: str | None, inverse: bool) -> list[Element]:
    """The elements after the event token (or after an exit token when event is None)."""
    tail = [Element(fmt.STDOUT, "string", optional=True)]
    if event is None:
        return [Element(fmt.ARG, "string", optional=True), *tail, Element(fmt.TRACE_END)]
    head = [Element(fmt.LINENO, "line"), Element(fmt.STACK, "stack", optional=True)]
    return [*head, *_body(event, inverse), *tail, Element(fmt.END_OF_FRAME)]


def shown_elements(text: str) -> tuple[list[str], bool] | None:
    """The reprs of what iterating the value shown as `text` gives, in order, and whether that value is
    mutable (a list, a dict or a set); None unless `text` is the whole repr of a str, or of a list, a
    tuple, a dict or a set of literals (a value cut with `...` is not). The elements are read off the
    text, in its order: a set iterates in the order its repr lists."""
    try:
        node = safe_ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return ([repr(ch) for ch in node.value], False) if repr(node.value) == text else None
    if text == "set()":
        return [], True
    if isinstance(node, ast.Dict):
        entries = _dict_entries(text, node)
        return ([key for key, _ in entries], True) if entries is not None else None
    if not isinstance(node, ast.List | ast.Tuple | ast.Set):
        return None
    elements = [_literal_text(text, e) for e in node.elts]
    if None in elements:
        return None
    opener, closer = {ast.List: ("[", "]"), ast.Tuple: ("(", ")"), ast.Set: ("{", "}")}[type(node)]
    if isinstance(node, ast.Tuple) and len(elements) == 1:
        closer = ",)"
    if text != opener + ", ".join(elements) + closer:  # type: ignore[arg-type]
        return None
    return elements, not isinstance(node, ast.Tuple)  # type: ignore[return-value]


def _object_fields(text: str) -> tuple[str, dict[str, str]] | None:
    """The class name and the fields, each field's value as written, of an object shown in trace format
    version 3's form `Name(field=value, ...)`, whole (not cut, no `...` past the fields' bound); None for
    any other text."""
    if len(text) > _MAX_REPR:
        return None
    try:
        node = safe_ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
        return None
    fields: dict[str, str] = {}
    for keyword in node.keywords:
        value = ast.get_source_segment(text, keyword.value)
        if keyword.arg is None or value is None or keyword.arg in fields:
            return None
        fields[keyword.arg] = value
    if text != node.func.id + "(" + ", ".join(f"{k}={v}" for k, v in fields.items()) + ")":
        return None
    return node.func.id, fields


def _dict_entries(text: str, node: ast.Dict) -> list[tuple[str, str]] | None:
    """The (key, value) texts of the dict `text` shows (parsed as `node`), where it is the whole repr of
    a dict of literals; None otherwise."""
    if None in node.keys:
        return None
    keys = [_literal_text(text, k) for k in node.keys]  # type: ignore[arg-type]
    values = [_literal_text(text, v) for v in node.values]
    if None in keys or None in values:
        return None
    entries = list(zip(keys, values, strict=True))
    return entries if text == "{" + ", ".join(f"{k}: {v}" for k, v in entries) + "}" else None  # type: ignore[return-value]


def _store_parts(store: ItemStore, shown: dict[str, str]) -> tuple[str | None, ...] | None:
    """The repr of `store.container` after the store, as fixed texts around one gap (None) for the
    item's new value: from its shown repr (a whole list, or a whole dict of literal keys) and the key's.
    None where the values do not tell: a value cut or not of the right type, an index out of range, a
    key not there for an augmented store; for `NAME[OUTER][KEY]`, an inner value whose repr shows
    elsewhere in NAME's (it may be the same object)."""
    before = shown[store.container]
    key = _key_value(store.key, shown) if store.key is not None else None
    if store.key is not None and key is None:
        return None
    if store.outer is None:
        return _item_parts(before, store.kind, key, store.augmented)
    outer = _key_value(store.outer, shown)
    around = _item_parts(before, "item", outer, True) if outer is not None else None
    if around is None or store.kind != "item":
        return None
    head, _, tail = around
    inner = before[len(head):len(before) - len(tail or "")]  # type: ignore[arg-type]
    if before.count(inner) != 1:
        return None
    parts = _item_parts(inner, store.kind, key, store.augmented)
    if parts is None:
        return None
    return (f"{head}{parts[0]}", None, f"{parts[2]}{tail}")


def _key_value(source: ArgumentSource, shown: dict[str, str]) -> object | None:
    """The key or index a store names (a variable's shown value, or a literal), where it is an immutable value."""
    assert source is not None
    text = shown.get(source[1]) if source[0] == "name" else source[1]
    try:
        return ast.literal_eval(text) if text is not None and IMMUTABLE_REPR.fullmatch(text) else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _item_parts(before: str, kind: str, key: object | None, augmented: bool) -> tuple[str | None, ...] | None:
    """The repr `before` (a whole list or dict) after a store of one item under `key` (see _store_parts)."""
    try:
        node = safe_ast.parse(before, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if isinstance(node, ast.List):
        elements = shown_elements(before)
        if elements is None:
            return None
        items, count = elements[0], len(elements[0])
        if kind == "append":
            return ("[" + "".join(f"{item}, " for item in items), None, "]")
        if not isinstance(key, int):
            return None
        position = int(key)
        if kind == "insert":  # list.insert's clamping
            position = min(max(position + count if position < 0 else position, 0), count)
            rest = items[position:]
        elif -count <= position < count:
            position %= count
            rest = items[position + 1:]
        else:
            return None  # an IndexError
        return ("[" + "".join(f"{item}, " for item in items[:position]), None, "".join(f", {item}" for item in rest) + "]")
    entries = _dict_entries(before, node) if isinstance(node, ast.Dict) and kind == "item" else None
    if entries is None:
        return None
    written = [f"{k}: {v}" for k, v in entries]
    try:
        index = next((i for i, (k, _) in enumerate(entries) if ast.literal_eval(k) == key), None)
    except (TypeError, ValueError):
        return None
    if index is None:
        if augmented:
            return None  # a KeyError
        return ("{" + "".join(f"{entry}, " for entry in written) + repr(key) + ": ", None, "}")
    return ("{" + "".join(f"{entry}, " for entry in written[:index]) + f"{entries[index][0]}: ", None,
            "".join(f", {entry}" for entry in written[index + 1:]) + "}")


def _literal_text(text: str, node: ast.expr) -> str | None:
    """The part of `text` that `node` spans, where it is a literal written exactly as its repr."""
    part = ast.get_source_segment(text, node)
    if part is None or isinstance(node, ast.Starred):
        return None
    try:
        return part if repr(ast.literal_eval(node)) == part else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


_INT_REPR = re.compile(r"-?\d+")
_MAX_LISTED = 10_000  # a longer range is left to the model
_FALSE_REPRS = frozenset({"None", "False", "0", "0.0", "-0.0", "''", '""', "[]", "{}", "()", "set()", "frozenset()",
                          "0j", "b''", 'b""'})


def _range_span(arguments: tuple[LoopArgument, ...], shown: dict[str, str],
                length: Callable[[str], int | None]) -> range | None:
    """The range `range(ARGS)` gives, each argument an int literal, a variable showing an int, or
    `len(VARIABLE)` (`length` says how many elements that variable's shown value holds, where it tells);
    None where the values do not tell, or where range() would raise (a step of 0)."""
    values: list[int] = []
    for kind, text in arguments:
        if kind == "int":
            values.append(int(text))
        elif kind == "name" and _INT_REPR.fullmatch(shown.get(text, "")):
            values.append(int(shown[text]))
        elif kind == "len" and (count := length(text)) is not None:
            values.append(count)
        else:
            return None
    return range(*values) if not (len(values) == 3 and values[2] == 0) else None


def _element_reprs(elements: list[object] | None, names: int) -> list[tuple[str, ...]] | None:
    """The reprs a loop's `names` variables (one, or two it unpacks each element into) take for each
    element; None where the elements are not known or one does not unpack into two (Python raises)."""
    if elements is None:
        return None
    if names == 1:
        return [(repr(element),) for element in elements]
    if not all(isinstance(e, tuple | list | str) and len(e) == 2 for e in elements):
        return None
    return [(repr(e[0]), repr(e[1])) for e in elements]  # type: ignore[index]


@lru_cache(maxsize=1024)
def _argument_expression(text: str) -> ast.expr:
    """A call argument's expression, kept by flow.call_bindings as its source text, parsed once."""
    return ast.parse(text, mode="eval").body


def _truth_of(text: str | None) -> bool | None:
    """Whether the value shown as `text` is true, where it is the whole repr of a number, a string, a
    bool, None or a container of literals; None where the repr does not tell."""
    if text is None:
        return None
    if text in _FALSE_REPRS:
        return False
    try:
        value = ast.literal_eval(safe_ast.parse(text, mode="eval"))
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None
    return bool(value) if repr(value) == text else None


def _bound_texts(names: tuple[str, ...], expression: ast.expr, shown: dict[str, str]) -> list[str] | None:
    """The reprs `NAME = EXPR` or `A, B = EXPR` binds, computed on the shown values (deduce.py); None where
    they do not tell (or EXPR would not unpack into as many values as names)."""
    if len(names) == 1:
        text = value_repr(expression, shown, _MAX_REPR)
        return [text] if text is not None else None
    elements = iterable_elements(expression, shown, _MAX_REPR)
    return [repr(e) for e in elements] if elements is not None and len(elements) == len(names) else None


def _calls_deep(state: State, frame: State) -> int | None:
    """How many calls deep `state` is inside the frame `frame` is on (0: on that frame itself), read off
    their stacks; None where it is not inside that frame's call."""
    depth, stack = len(frame.stack), state.stack
    if (not frame.stack or len(stack) < depth or stack[:depth - 1] != frame.stack[:-1]
            or stack[depth - 1].function != frame.stack[-1].function):
        return None
    return len(stack) - depth


Bindings = tuple[tuple[str, frozenset[str]], ...]  # (variable, the reprs it may take) for each variable bound


@dataclass(frozen=True)
class LoopStep:
    """What a step from a `for` header does (FrameConstraint._loop_step)."""

    loop: ForLoop
    bindings: Bindings  # for each variable the step binds; none: it leaves the loop

    @property
    def leaves(self) -> bool:
        return not self.bindings


@dataclass
class FrameConstraint:
    """Follows one frame, from its event token (right after `<|frame_sep|>`) to its stop token."""

    facts: ProgramFacts
    prev: State | None
    inverse: bool
    action: str | None = None  # the kind of the action taken from `prev`, when known
    # The forward steps that led to `prev`, oldest first, each state with the action taken from it (as
    # far back as known): where a loop's header was reached from (its body: the loop goes on; elsewhere:
    # it starts), and how many times since it started
    trail: tuple[tuple[State, str], ...] = ()
    elements: list[Element] | None = None  # None until the event (or exit) token has been chosen
    position: int = -1  # index of the element being filled (-1: right after the event token)
    slot: Slot | None = None
    slot_kind: str | None = None
    event: str | None = None
    line: int | None = None
    stack_written: bool = False
    stack_depth: int = 0  # the entries of a written stack
    function: str | None = None  # the frame's function, once a written stack has named it
    done: bool = False

    # -- what may come next --------------------------------------------------------------------
    def allowed_specials(self) -> list[str]:
        if self.done:
            return []
        if self.elements is None:
            events = [tok for (inv, event), tok in fmt.EVENT_TOKENS.items() if inv == self.inverse
                      and self._event_may_follow(event)]
            takes_element = self._loop_step is not None and not self._loop_step.leaves
            in_comprehension = self._comprehension_step is not None or self._outer_after_inner is not None
            return events + ([] if self.inverse or takes_element or in_comprehension else list(fmt.EXIT_TOKENS.values()))
        if self.slot_kind == "src" or (self.slot is not None and not self.slot.complete):
            return []  # the forced source text, or a slot that is not finished
        allowed = []
        for element in self.elements[self.position + 1 :]:
            if element.optional and element.token in (fmt.STACK, fmt.STDOUT) and self._loop_stays_in_frame():
                continue  # nothing ran that could print, and the frame is the same
            if element.token == fmt.STDOUT and self._printed == "":
                continue  # the step ran no code that prints
            allowed.append(element.token)
            required = not element.optional or (element.token == fmt.STACK and not self._stack_may_be_omitted()) or (
                element.token == fmt.STDOUT and bool(self._printed))
            if required:
                break
        return allowed

    def _stack_may_be_omitted(self) -> bool:
        # Without a stack the parser takes the previous one: there must be one, and its function must
        # be able to be on the chosen line (a line of another function is a change of scope).
        prev = self.prev
        if prev is None or prev.exit is not None or not prev.stack or self._outer_after_inner is not None:
            return False
        if self._one_event_on() and (prev.event == "return") != (self.event == "call"):
            return False  # one frame more or one less (stack_after_event): the stack changes length
        line = int(self.slot.prefix) if self.slot_kind == "line" and isinstance(self.slot, Choice) else self.line
        return line is None or self.facts.may_be_in(prev.stack[-1].function, line)

    def forced_text(self) -> str | None:
        """Text the model does not choose (the source line), to be fed right after `<|src_sep|>`."""
        if self.slot_kind == "src":
            assert self.line is not None
            return fmt._escape(self.facts.lines.get(self.line, ""))
        return None

    def accepts_text(self, data: bytes) -> bool:
        return self.slot is not None and self.slot.feed(data) is not None

    # -- advancing ---------------------------------------------------------------------------------
    def push_special(self, token: str) -> None:
        if token not in self.allowed_specials():
            raise ValueError(f"{token} is not allowed here")
        if self.elements is None:
            if token in fmt.EXIT_TOKENS.values():
                self.elements = frame_elements(None, self.inverse)
            else:
                self.event = next(e for (inv, e), t in fmt.EVENT_TOKENS.items() if t == token and inv == self.inverse)
                self.elements = frame_elements(self.event, self.inverse)
            return
        if self.slot_kind == "line" and isinstance(self.slot, Choice):
            self.line = int(self.slot.prefix)
        if self.slot_kind == "stack" and isinstance(self.slot, Stack):
            self.function = self.slot.last_function.decode("utf-8", "replace")
            self.stack_depth = self.slot.count
        elif self.slot_kind == "stack" and isinstance(self.slot, Choice):  # a stack the rules name whole
            entries = json.loads(self.slot.prefix)
            self.function, self.stack_depth = entries[-1][0], len(entries)
        self.position = next(
            i for i in range(self.position + 1, len(self.elements)) if self.elements[i].token == token
        )
        element = self.elements[self.position]
        if element.token in (fmt.END_OF_FRAME, fmt.TRACE_END):
            self.done, self.slot, self.slot_kind = True, None, None
            return
        if element.token == fmt.STACK:
            self.stack_written = True
        self.slot_kind = element.slot
        self.slot = self._new_slot(element.slot)

    def _new_slot(self, kind: str | None) -> Slot | None:
        facts = self.facts
        if kind == "line":  # lines some frame of the program can be on
            lines = self._following_lines() or self._preceding_lines() or facts.frame_lines
            after_event = self._lines_after_event()
            lines = (lines & after_event) or after_event or lines
            return Choice(frozenset(str(n).encode() for n in lines))
        if kind == "stack":
            outer = self._outer_after_inner if self.event == "line" else None
            if outer is not None:
                return Choice(frozenset({outer[0]}))
            stack = Stack.for_frame(facts, self.line)
            prev = self.prev
            if self._one_event_on() and prev is not None and self.event is not None:
                stack = stack.after_event(prev, self.event)
            return stack
        if kind == "locals" and self.event == "line" and self._outer_after_inner is not None and self.stack_written:
            pairs = self._outer_after_inner[1]
            return Locals(keys=frozenset(key for key, _ in pairs), diff_allowed=False,
                          forced=tuple((key, frozenset({value})) for key, value in pairs), unique_keys=facts.unique_keys)
        if kind == "locals":
            keys = frozenset(n.encode() for n in facts.locals_of(self._frame_function()))
            changeable = self._changeable()
            diff_keys = None if changeable is None else frozenset(
                k for k in keys if k.startswith(b"__") or k.decode("utf-8", "replace") in changeable)
            step = self._loop_step if self.event in ("line", "return") and not self.stack_written else None
            bindings = step.bindings if step is not None else (
                self._comprehension_step if self.event in ("line", "return") and not self.stack_written else None)
            if bindings is not None and all(name.encode() in keys for name, _ in bindings):
                # only the loop's variables can change, and only when it takes an element
                assert self.prev is not None
                shown = self.prev.locals
                return Locals(keys=keys, diff_allowed=self._diff_allowed(),
                              diff_keys=frozenset(k for k in keys if k.startswith(b"__"))
                              | {name.encode() for name, _ in bindings},
                              forced=tuple((name.encode(), frozenset(fmt._json(v).encode() for v in values))
                                           for name, values in bindings),
                              unchanged=frozenset(name.encode() for name, values in bindings if shown.get(name) in values),
                              unique_keys=facts.unique_keys)
            forced, unchanged = self._forced_value(keys if diff_keys is None else diff_keys)
            # what the line itself binds: imported names, deduced values, a changed list or dict
            bound_here = (self._imported(keys) or self._computed(keys) or self._mutated(keys)
                          or self._computed_back(keys) or self._attribute_updated(keys if diff_keys is None else diff_keys)
                          ) if forced is None else ()
            pairs = (forced,) if forced is not None else (
                self._call_arguments(keys) or self._comprehension_start(keys) or self._caller_after_return(keys)
                or bound_here)
            shaped = self._item_store(keys if diff_keys is None else diff_keys) if forced is None else None
            return Locals(keys=keys, diff_allowed=self._diff_allowed(), diff_keys=diff_keys,
                          forced=tuple((key, frozenset({value})) for key, value in pairs),
                          unchanged=frozenset({forced[0]}) if forced is not None and unchanged else self._held(bound_here),
                          shaped=(shaped,) if shaped is not None else (),
                          required=frozenset({shaped[0]}) if shaped is not None and not self._fits_before(*shaped) else frozenset(),
                          unique_keys=facts.unique_keys)
        if kind == "value":
            returned = self._returned_value() or self._comprehension_result()
            caller = self._returned_to_caller() if returned is None and self.event == "return" else None
            if caller is not None and self.prev is not None:
                names, text = self._value_after_call(caller, self.prev)
                returned = fmt._json(text).encode() if names is None and text is not None else None
            return Value(Choice(frozenset({returned})) if returned is not None else None, facts.unique_keys)
        if kind == "string":
            printed = self._printed if self.elements and self.elements[self.position].token == fmt.STDOUT else None
            return Choice(frozenset({fmt._json(printed).encode()})) if printed else JsonString()
        return None  # "src": forced text

    def _step_from_line(self) -> bool:
        """A step_into or step_over from a line event of a frame that flow.py follows. Its next event is
        in the same frame unless it is a call: pdb stops at a call event before any line or return of
        another frame (tests/test_flow.py, scripts/check_grammar.py)."""
        prev = self.prev
        return (not self.inverse and self.action in ("step_into", "step_over") and prev is not None
                and prev.exit is None and prev.event == "line" and prev.line is not None
                and bool(prev.stack) and prev.stack[-1].function not in EXPRESSION_FRAMES)

    def _step_within_frame(self) -> bool:
        """Such a step, landing on a line event (of the same frame)."""
        return self.event == "line" and self._step_from_line()

    def _event_may_follow(self, event: str) -> bool:
        """After such a step: a line event only if some line can follow the previous one in its frame, a
        return only if the previous line can end the frame, and neither after step_into from a line that
        always calls a function of the program; after step_into, a call only where the frame it comes from
        can call a function of the program. Every other event stays free."""
        if event == "call" and not self._lines_after_event("call"):
            return False
        if self._outer_after_inner is not None:
            return event in ("line", "exception")
        taken = self._comprehension_step
        if taken is not None:  # the next element (or an exception while the step works on it), or the end
            return event in ("line", "exception") if taken else event == "return"
        loop = self._loop_step
        if loop is not None and not loop.leaves:
            return event == "line"  # the loop's body, and only there (see _following_lines)
        if event in ("line", "return") and self._caller_line_after_return is not None:
            return self._may_go_on_from(self._caller_line_after_return, event)
        if event == "exception" and self._computes_here:
            return False  # what deduce.py computes without an error raised nothing in Python either
        if event not in ("line", "return") or not self._step_from_line():
            return True
        assert self.prev is not None and self.prev.line is not None
        if loop is not None and event == "line":
            return bool(self._lines_after_step())
        if self.action == "step_into" and self.prev.line in self.facts.must_call:
            return False
        goes_to = self._truth_step
        if goes_to is not None:  # the branch the shown value takes: a line, or past the frame's end
            return bool(goes_to) if event == "line" else not goes_to
        return self._may_go_on_from(self.prev.line, event)

    def _may_go_on_from(self, line: int, event: str) -> bool:
        """Whether a line or return event can come next in the frame after `line` has run: a line event
        if some line can follow it, a return if it can end the frame (free for a line flow.py does not know)."""
        following = self.facts.next_lines.get(line)
        if following is None:
            return True
        if event == "line":
            return bool(following & self.facts.frame_lines)
        return line in self.facts.ends

    @cached_property
    def _computes_here(self) -> bool:
        """After a step from a line that only binds names to, or returns, an expression of variables,
        operators and builtins (flow.computed_values): whether the shown values give that expression a value (and, for
        `A, B = EXPR`, as many elements as names) in deduce.py, which computes only what Python would
        compute without raising."""
        prev = self.prev
        if not self._step_from_line() or prev is None or prev.stack[-1].function in self.facts.suspending:
            return False  # (a generator's step may stop in another frame: pdb's next passes over its yields)
        if prev.line in self.facts.computed_returns:  # `return EXPR`
            return value_repr(self.facts.computed_returns[prev.line], prev.locals, _MAX_REPR) is not None
        entry = self.facts.computed.get(prev.line) if prev.line is not None else None
        return entry is not None and _bound_texts(*entry, prev.locals) is not None

    @cached_property
    def _caller_line_after_return(self) -> int | None:
        """After step_into or step_over from a callee's return event: the line its caller stands on, where
        flow.py knows that line. The caller's next event is in its own frame (stack_after_event), and it
        goes on from that line as a step from the line's event would: a line event only on a line that
        can follow it, and a return only from a line that can end the frame (`return g(x)`, the body's
        last line). None where the rule does not apply (a comprehension's or a generator's frame)."""
        prev = self.prev
        if (self.inverse or self.action not in ("step_into", "step_over") or prev is None or prev.exit is not None
                or prev.event != "return" or len(prev.stack) < 2):
            return None
        caller = prev.stack[-2]
        if (caller.function in EXPRESSION_FRAMES or caller.function in self.facts.suspending
                or caller.line not in self.facts.next_lines):
            return None
        return caller.line

    def _one_event_on(self) -> bool:
        """Whether this frame is the next traced event after `prev` (a forward step_into)."""
        prev = self.prev
        return (self.action == "step_into" and not self.inverse and prev is not None and prev.exit is None
                and bool(prev.stack))

    def _lines_after_event(self, event: str | None = None) -> frozenset[int]:
        """The lines the next event can be on, as its stack allows (stack_after_event): a call's in the
        functions its caller's line (or function) can call, any other event's in the function of the
        frame it happens in."""
        event = event or self.event
        if not self._one_event_on() or event is None:
            return self.facts.frame_lines
        assert self.prev is not None
        exact, top, _ = stack_after_event(self.prev, event)
        if top is not None:
            functions = self.facts.callees_of.get(top, self.facts.functions) if event == "call" else {top}
        elif exact:  # a call made from the line the caller stands on
            caller = self.prev.stack[exact - 1]
            functions = self.facts.callees_at.get((caller.function, caller.line), self.facts.functions)
        else:
            return self.facts.frame_lines
        return frozenset(n for n in self.facts.frame_lines if any(self.facts.may_be_in(f, n) for f in functions))

    def _following_lines(self) -> frozenset[int] | None:
        """A line that can follow the previous one in its frame (None where the rule does not apply)."""
        if self._comprehension_step is not None or self._outer_after_inner is not None:
            assert self.prev is not None and self.prev.line is not None
            return frozenset({self.prev.line})  # the comprehension stands on its one line
        calling = self._caller_line_after_return if self.event == "line" else None
        if calling is not None:  # the caller goes on from the line it called from, as from that line's event
            return self.facts.next_lines[calling]
        return self._lines_after_step() if self._step_within_frame() else None

    def _preceding_lines(self) -> frozenset[int] | None:
        """_following_lines backwards: after inv_step_into or inv_step_over from a line event, landing on
        a line event or an inv_line_call (of the same frame: any other frame's events would lie between
        them), the lines that the later one can follow in their frame (flow.next_lines). A line flow.py
        does not follow stays possible, but for an `else:` or `finally:` (a clause's header holds no
        code and never has an event); so does the later line in the module's frame alone (at the trace's
        first state, a step back stays there). None where the rule does not apply."""
        prev = self.prev
        if (self.action not in ("inv_step_into", "inv_step_over") or self.event not in ("line", "inv_line_call") or prev is None
                or prev.exit is not None or prev.event != "line" or prev.line is None or not prev.stack
                or prev.stack[-1].function in EXPRESSION_FRAMES):
            return None
        later = prev.line
        # at the trace's start (the module's frame, alone on the stack) a step back stays where it is
        stays = later if len(prev.stack) == 1 and prev.stack[0].function == "<module>" else None

        def may_precede(line: int) -> bool:
            following = self.facts.next_lines.get(line)
            if following is None:
                return not _NO_EVENT_LINE.fullmatch(self.facts.lines.get(line, ""))
            return later in following and self._test_may_lead_here(line)

        return frozenset(n for n in self.facts.frame_lines if n == stays or may_precede(n))

    def _test_may_lead_here(self, line: int) -> bool:
        """Whether the earlier state may stand on `line`, as far as its test tells: an `if`, `elif` or
        `while` header whose test the grammar computes (flow.truth_tests) binds nothing and changes
        nothing, so it held the later state's values there, and on them the branch it takes must lead to
        the later line (_truth_step, forward, from that header)."""
        prev = self.prev
        if line not in self.facts.truths or prev is None:
            return True
        taken = FrameConstraint(self.facts, self._later_on(line), False, "step_over")._truth_step
        return taken is None or prev.line in taken

    def _later_on(self, line: int) -> State:
        """The later state as it would stand on `line` of its frame (the same values): where a forward
        rule is asked what a step from that line does, for a step back onto it."""
        prev = self.prev
        assert prev is not None and prev.stack
        frames = [*prev.stack[:-1], prev.stack[-1].model_copy(update={"line": line})]
        return prev.model_copy(update={"line": line, "stack": frames})

    def _lines_after_step(self) -> frozenset[int] | None:
        """_following_lines, for the step from a line whatever event it lands on."""
        assert self.prev is not None and self.prev.line is not None
        following = self.facts.next_lines.get(self.prev.line)
        if not following:
            return None
        following &= self.facts.frame_lines
        ordered = self._statement_successors()
        if ordered is not None and following & ordered:
            following &= ordered
        goes_to = self._truth_step
        if goes_to is not None:
            return following & goes_to
        loop = self._loop_step
        if loop is not None:
            first, last = loop.loop.body
            inside = frozenset(n for n in following if first <= n <= last)
            return following - inside if loop.leaves else inside
        return following

    @cached_property
    def _loop_step(self) -> LoopStep | None:
        """After step_into or step_over from the header of a `for` loop over a shown value
        (flow.for_loops): the loop, and the element(s) the step may bind to its variable, or none when it
        leaves the loop. The element is the iterable's first when the loop starts (its variable unbound,
        or the header reached from outside its body), and the one after the variable's value when it goes
        round again (one of those after each place that value holds in the iterable, when it holds
        several). Iterating a value of the builtin types runs no code, so the step changes nothing else.
        None where the rule does not apply."""
        prev = self.prev
        if not self._step_from_line() or prev is None or prev.line not in self.facts.loops:
            return None
        loop = self.facts.loops[prev.line]
        current = prev.locals.get(loop.target)
        starts = True if current is None and loop.unbound_means_start else self._loop_starts(loop)
        if starts is None or (not starts and not loop.round_known):
            return None
        bindings = self._loop_bindings(loop, current, starts)
        if bindings is None:
            return None
        following = self.facts.next_lines.get(prev.line) or frozenset()
        first, last = loop.body
        if bindings and not any(first <= n <= last for n in following & self.facts.frame_lines):
            return None  # never the case for a loop flow.py follows; a dead end if it were
        return LoopStep(loop, bindings)

    def _loop_bindings(self, loop: ForLoop, current: str | None, starts: bool) -> Bindings | None:
        """What a step from the loop's header binds (none: it leaves), by the kind of loop."""
        if loop.expression is not None:
            return self._expression_step(loop, starts)
        if loop.iterated is None:
            return self._range_step(loop, current, starts)
        if loop.counter is not None:
            return self._enumerate_step(loop, current, starts)
        return self._element_step(loop, current, starts)

    def _iterated_values(self, loop: ForLoop, name: str, starts: bool) -> list[str] | None:
        """The element reprs of the value `name` shows (constraint.shown_elements), where they tell what
        the loop iterates: always when it starts (the header has just read it); going round again, only
        if the body cannot have changed a list, dict or set (_left_alone)."""
        assert self.prev is not None
        shown = self.prev.locals.get(name)
        parsed = shown_elements(shown) if shown is not None else None
        if shown is None or parsed is None or (parsed[1] and not starts and not self._left_alone(loop, shown)):
            return None
        return parsed[0]

    def _element_step(self, loop: ForLoop, current: str | None, starts: bool) -> Bindings | None:
        """The element of `for x in xs` (none: it leaves): the first, or the one after x's value, where
        the passes since the loop started pick among several places that value holds."""
        assert loop.iterated is not None
        values = self._iterated_values(loop, loop.iterated, starts)
        if values is None:
            return None
        after = [0] if starts else [i + 1 for i, value in enumerate(values) if value == current]
        if len(after) > 1:  # the value is there several times: how often the loop came round says which
            passes = self._passes_since_start(loop)
            if passes is not None and passes - 1 in after:
                after = [passes - 1]
        if len({i >= len(values) for i in after}) != 1:
            return None  # the value is not in the iterable, or it may be the last one or not
        taken = frozenset(values[i] for i in after if i < len(values))
        return ((loop.target, taken),) if taken else ()

    def _expression_step(self, loop: ForLoop, starts: bool) -> Bindings | None:
        """The element of `for x in EXPRESSION` or `for a, b in EXPRESSION` (none: it leaves), whose
        iterable builtins build from variables (model_backend/engine/deduce.py): computed from their
        shown values, which going round again still tell it only if the body cannot have changed a list
        or dict among them (_left_alone; the loop's flags say none is rebound). The element is the first,
        or the one after the variables' values, where the passes since the loop started pick among
        several places those values hold."""
        prev = self.prev
        assert prev is not None and loop.expression is not None
        read = {n.id for n in ast.walk(loop.expression) if isinstance(n, ast.Name)}
        if not starts and not all(self._left_alone(loop, value) for name, value in prev.locals.items()
                                  if name in read and value.startswith(("[", "{"))):
            return None
        names = (loop.counter, loop.target) if loop.counter is not None else (loop.target,)
        values = _element_reprs(iterable_elements(loop.expression, prev.locals, _MAX_REPR), len(names))
        if values is None:
            return None
        current = tuple(prev.locals.get(name) for name in names)
        after = [0] if starts else [i + 1 for i, value in enumerate(values) if value == current]
        if len(after) > 1:
            passes = self._passes_since_start(loop)
            if passes is not None and passes - 1 in after:
                after = [passes - 1]
        if len({i >= len(values) for i in after}) != 1:
            return None
        taken = {values[i] for i in after if i < len(values)}
        if len(names) == 2 and len(taken) > 1:
            return None  # each name would be free to take its part from another element
        return tuple((name, frozenset(value[k] for value in taken)) for k, name in enumerate(names)) if taken else ()

    def _enumerate_step(self, loop: ForLoop, current: str | None, starts: bool) -> Bindings | None:
        """The count and the element of `for i, x in enumerate(xs)` (none: it leaves); the count tells
        where the iteration stands."""
        assert self.prev is not None and loop.iterated is not None and loop.counter is not None
        values = self._iterated_values(loop, loop.iterated, starts)
        if values is None:
            return None
        if starts:
            index = 0
        else:
            count = self.prev.locals.get(loop.counter, "")
            if not _INT_REPR.fullmatch(count):
                return None
            index = int(count) - loop.count_from + 1
            if not 0 < index <= len(values) or values[index - 1] != current:
                return None  # not where the shown values say the loop stands
        if index == len(values):
            return ()
        return ((loop.counter, frozenset({repr(loop.count_from + index)})), (loop.target, frozenset({values[index]})))

    @cached_property
    def _truth_step(self) -> frozenset[int] | None:
        """After step_into or step_over from the header of `if NAME:`, `if not NAME:` or `while NAME:`
        (flow.truth_tests) where NAME shows a literal of the builtin types: the lines the branch it takes
        can go to (empty: the frame ends there). None where the rule does not apply."""
        prev = self.prev
        if not self._step_from_line() or prev is None or prev.line not in self.facts.truths:
            return None
        test = self.facts.truths[prev.line]
        truth = (_truth_of(prev.locals.get(test.name)) if test.expression is None
                 else deduced_truth(test.expression, prev.locals))
        if truth is None:
            return None
        lines = (test.taken if truth != test.negated else test.skipped) & self.facts.frame_lines
        following = self.facts.next_lines.get(prev.line)
        if following is None or not lines <= following or (not lines and prev.line not in self.facts.ends):
            return None  # never the case for a test flow.py follows; a dead end if it were
        return lines

    @cached_property
    def _comprehension_step(self) -> Bindings | None:
        """After step_into or step_over from a line event of a list, set or dict comprehension's frame
        (flow.comprehension_loops) called by the statement that holds it: the element the step binds to
        its variables, or none when the iterable is done and it returns. The trail says how many line
        events the frame has had since its call (the first comes before any element; each one after it
        follows an element), and the caller's state at the call shows the iterable. None where the rule
        does not apply (step_into where the comprehension makes frames of its own, a trail that does not
        reach the call, a variable read that does not hold a builtin value)."""
        prev = self.prev
        if (self.inverse or self.action not in ("step_into", "step_over") or prev is None or prev.exit is not None
                or prev.event != "line" or prev.line is None):
            return None
        loop = self._comprehension_loop(prev)
        if loop is None or (loop.makes_frames and self.action == "step_into"):
            return None
        entry = self._comprehension_entry()
        if entry is None:
            return None
        passes, caller = entry
        if not all(_builtin_value(prev.locals.get(name, caller.locals.get(name))) for name in loop.reads):
            return None
        elements = self._comprehension_elements(loop, caller.locals)
        if elements is None:
            return None
        if passes > 1 and (passes - 2 >= len(elements) or any(
                prev.locals.get(name) != value for name, value in zip(loop.targets, elements[passes - 2], strict=True))):
            return None  # not where the shown values say the comprehension stands
        if passes == 1 and any(name in prev.locals for name in loop.targets):
            return None
        if passes - 1 >= len(elements):
            return ()
        return tuple((name, frozenset({value})) for name, value in zip(loop.targets, elements[passes - 1], strict=True))

    def _comprehension_result(self) -> bytes | None:
        """After the step that ends a comprehension (_comprehension_step: no element left): what it
        returns, as JSON. It reads only builtin values that nothing changes while it runs (the rule's
        premise), so that is the whole comprehension computed on the caller's values at its call
        (deduce.py; a set's order is never written). None where the rule does not apply (one called by
        another comprehension)."""
        if self.event != "return" or self.stack_written or self._comprehension_step != ():
            return None
        prev = self.prev
        assert prev is not None
        if prev.stack[-2].function in EXPRESSION_FRAMES:
            return None  # one nested in another: the outer one's line event shows its variables before the element
        loop = self._comprehension_loop(prev)
        entry = self._comprehension_entry()
        if loop is None or loop.node is None or entry is None:
            return None
        text = value_repr(loop.node, entry[1].locals, _MAX_REPR)
        return fmt._json(text).encode() if text is not None else None

    def _comprehension_loop(self, state: State) -> ComprehensionLoop | None:
        """The loop of the comprehension whose frame `state` is in: one its statement calls
        (flow.comprehension_loops), or one nested in such a one (flow.nested_comprehension_loops)."""
        if len(state.stack) < 2 or state.line is None:
            return None
        caller, frame = state.stack[-2], state.stack[-1]
        if caller.function not in EXPRESSION_FRAMES:
            return self.facts.comprehension_loops.get((state.line, frame.function))
        nested = self.facts.nested_loops.get((state.line, frame.function))
        return nested[1] if nested is not None and nested[0] == caller.function and caller.line == state.line else None

    @cached_property
    def _outer_after_inner(self) -> tuple[bytes, tuple[tuple[bytes, bytes], ...]] | None:
        """After step_over from the return event of a comprehension nested in another
        (flow.nested_comprehension_loops): the outer one's stack and whole locals at its next line event,
        which binds its variables to the element it was working on (the outer one's step from its line
        event the inner one was called from, as _comprehension_step tells it). None where the rule does
        not apply."""
        prev = self.prev
        if (self.inverse or self.action != "step_over" or prev is None or prev.exit is not None
                or prev.event != "return" or prev.line is None or len(prev.stack) < 3
                or prev.stack[-2].function not in EXPRESSION_FRAMES):
            return None
        nested = self.facts.nested_loops.get((prev.line, prev.stack[-1].function))
        if nested is None or nested[0] != prev.stack[-2].function or prev.stack[-2].line != prev.line:
            return None
        index = self._call_made_at(prev)  # the outer one's line event the inner one was called from
        if index is None:
            return None
        state = self.trail[index][0]
        step = FrameConstraint(self.facts, state, False, "step_over", self.trail[:index])._comprehension_step
        if not step or any(len(values) != 1 for _, values in step):
            return None
        after = dict(state.locals) | {name: next(iter(values)) for name, values in step}
        stack = fmt._json([[f.function, f.line] for f in state.stack]).encode()
        return stack, tuple((name.encode(), fmt._json(value).encode()) for name, value in after.items())

    def _comprehension_entry(self) -> tuple[int, State] | None:
        """How many line events the previous state's frame has had since its call event, that one
        included, and the caller's line event the call was made from (step_into), read off the trail
        back through single steps (and the frames the comprehension made); None where it does not tell."""
        prev = self.prev
        assert prev is not None
        count = 1
        for index in range(len(self.trail) - 1, -1, -1):
            state, action = self.trail[index]
            within = _calls_deep(state, prev)
            if action not in ("step_into", "step_over") or state.exit is not None or within is None:
                return None
            if within:
                continue
            if state.event == "line":
                count += 1
                continue
            if state.event != "call" or index == 0:
                return None
            caller, how = self.trail[index - 1]
            if (how != "step_into" or caller.exit is not None or caller.event != "line"
                    or caller.stack != prev.stack[:-1]):
                return None
            return count, caller
        return None

    @staticmethod
    def _comprehension_elements(loop: ComprehensionLoop, shown: dict[str, str]) -> list[tuple[str, ...]] | None:
        """What the comprehension iterates, as the reprs its variables take for each element, from the
        caller's shown values; None where they do not tell."""
        if loop.kind == "range":
            def length(name: str) -> int | None:
                parsed = shown_elements(shown.get(name, ""))
                return len(parsed[0]) if parsed is not None else None

            span = _range_span(loop.range_arguments, shown, length)
            return [(repr(n),) for n in span] if span is not None and len(span) <= _MAX_LISTED else None
        if loop.kind == "expression":
            assert loop.expression is not None
            return _element_reprs(iterable_elements(loop.expression, shown, _MAX_REPR), len(loop.targets))
        assert loop.iterated is not None
        iterated = shown.get(loop.iterated)
        if iterated is None:
            return None
        if loop.kind == "items":
            try:
                node = safe_ast.parse(iterated, mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                return None
            entries = _dict_entries(iterated, node) if isinstance(node, ast.Dict) else None
            return [tuple(entry) for entry in entries] if entries is not None else None
        parsed = shown_elements(iterated)
        if parsed is None:
            return None
        if loop.kind == "enumerate":
            return [(repr(loop.count_from + i), element) for i, element in enumerate(parsed[0])]
        return [(element,) for element in parsed[0]]

    def _own_states_back(self) -> Iterator[State]:
        """The states of the previous state's frame in the trail, latest first: back through single steps
        and the calls the frame made (skipped), up to where the trail no longer tells (a jump such as
        `continue`, a step_return out of the frame, a state outside the frame's call)."""
        prev = self.prev
        assert prev is not None
        for state, action in reversed(self.trail):
            within = _calls_deep(state, prev)
            if action not in ("step_into", "step_over", "step_return") or state.exit is not None or within is None:
                return
            if within:
                continue  # inside a call the frame made
            if action == "step_return":
                return
            yield state

    def _statement_successors(self) -> frozenset[int] | None:
        """For a line of a statement whose line events follow its code (flow.statement_line_orders): the
        lines whose event can come next in the frame. The trail says where in the order the frame stands
        (back through single steps and the calls the frame made, to a line outside the statement or the
        frame's call); where it does not tell, every place the line holds in the order counts. After the
        last, the statement is done: the lines after it. None where the rule does not apply."""
        prev = self.prev
        assert prev is not None and prev.line is not None
        entry = self.facts.line_orders.get(prev.line)
        if entry is None:
            return None
        order, (first, last) = entry
        seen = [prev.line]  # the statement's line events so far, latest first
        started = False
        for state in self._own_states_back():
            if state.line is None:
                break
            if state.event == "line" and first <= state.line <= last:
                seen.append(state.line)
                continue
            started = state.event in ("line", "call")
            break
        done = tuple(reversed(seen))
        places = [i for i in range(len(order)) if order[i] == prev.line and i + 1 >= len(done)
                  and order[i + 1 - len(done):i + 1] == done and (not started or i + 1 == len(done))]
        if not places:
            return None
        after = self.facts.next_lines.get(prev.line, frozenset()) - frozenset(range(first, last + 1))
        return frozenset().union(*(frozenset({order[i + 1]}) if i + 1 < len(order) else after for i in places))

    def _passes_since_start(self, loop: ForLoop) -> int | None:
        """How many times the frame has been on the loop's header since the loop last started, this
        time included, read off the trail: back through single steps (and the calls the frame made) to
        the frame's call or a line outside the loop. None where the trail does not tell (it begins, or
        an action could have skipped a pass)."""
        prev = self.prev
        assert prev is not None and prev.stack
        passes = 1
        for state in self._own_states_back():
            if state.event == "call":  # the frame began with this loop (a generator resumes elsewhere)
                return passes if state.line is not None and not loop.body[0] <= state.line <= loop.body[1] else None
            if state.event != "line" or state.line is None:
                return None
            if state.line == prev.line:
                passes += 1
            elif not loop.body[0] <= state.line <= loop.body[1]:
                return passes  # the line before the loop
        return None

    def _left_alone(self, loop: ForLoop, iterated: str) -> bool:
        """Whether the loop's body surely leaves alone the list, dict or set shown as `iterated`
        (flow._mutation_check): it reads builtin values only, and changes no object through a name that
        could be an alias of it."""
        if loop.mutation_check is None or self.prev is None:
            return False
        reads, changed = loop.mutation_check
        shown = self.prev.locals
        return (all(name in shown and _builtin_value(shown[name]) for name in reads)
                and all(shown[name] != iterated for name in changed))

    def _loop_stays_in_frame(self) -> bool:
        """Whether the event chosen after a loop's step is surely in the loop's frame: a line of its body,
        or, leaving it, a line or the return of a frame that is not a generator's (step_over past a
        generator's end goes on into its consumer)."""
        loop, prev = self._loop_step, self.prev
        if self._comprehension_step is not None:
            return True  # a line, the return or an exception of the comprehension's own frame
        if loop is None or prev is None:
            return False
        return not loop.leaves or self.event == "line" or (
            self.event == "return" and prev.stack[-1].function not in self.facts.suspending)

    def _range_step(self, loop: ForLoop, current: str | None, starts: bool) -> Bindings | None:
        """The element (none: it leaves) of a `for` over `range(...)`, whose arguments the shown values tell."""
        assert self.prev is not None

        def length(name: str) -> int | None:
            elements = self._iterated_values(loop, name, starts)
            return len(elements) if elements is not None else None

        span = _range_span(loop.range_arguments, self.prev.locals, length)
        if span is None:
            return None
        if starts:
            taken = span[0] if span else None
        elif current is None or not _INT_REPR.fullmatch(current) or int(current) not in span:
            return None
        else:
            taken = int(current) + span.step if int(current) + span.step in span else None
        return ((loop.target, frozenset({repr(taken)})),) if taken is not None else ()

    def _loop_starts(self, loop: ForLoop) -> bool | None:
        """Whether a step from a loop's header starts the loop (True) or goes round again (False): the
        header was reached by step_into or step_over from a line or call event of the same frame, or
        from the return event of a call it made, outside the body or in it. None where not known."""
        prev = self.prev
        if not self.trail or prev is None or not prev.stack:
            return None
        before, action = self.trail[-1]
        if action not in ("step_into", "step_over") or before.exit is not None:
            return None
        within = _calls_deep(before, prev)
        if within == 0 and before.event in ("line", "call"):
            last = before.line  # a call event's line: the def, or where a generator resumes
        elif within == 1 and before.event == "return":
            last = before.stack[len(prev.stack) - 1].line  # the line that made the call
        else:
            return None
        if last is None or last == prev.line:
            return None
        return not loop.body[0] <= last <= loop.body[1]

    def _changeable(self) -> frozenset[str] | None:
        """The variables a diff may name after a step within the frame: those the previous line's
        statement can bind, those any call can rebind, and those whose value may be a mutable object
        (a value whose repr is a number, a string, a bool or None can only change by a new binding),
        unless the line is inert (flow.inert_lines) and every name it reads holds a builtin value; where
        the line changes objects only through some names (flow.mutating_lines), only the mutable values
        whose reprs hold theirs or are held in them.
        Dunder names (a class body's own) are always allowed. The frame's return event right after such
        a step is bound the same way (only the line's statement ran). None where the rule does not apply."""
        if self.inverse:
            return self._changeable_back()
        if self.event not in ("line", "return") or not self._step_from_line() or self.stack_written:
            return None
        prev = self.prev
        assert prev is not None and prev.line is not None
        bound = self.facts.binds.get(prev.line)
        if bound is None:
            return None
        reads = self.facts.inert.get(prev.line)
        if reads is not None and all(_builtin_value(prev.locals.get(name)) for name in reads):
            return bound | self.facts.shared  # nothing ran that could change an object
        mutable = {name for name, value in prev.locals.items() if not IMMUTABLE_REPR.fullmatch(value)}
        mutating = self.facts.mutating.get(prev.line)
        if (mutating is not None and all(_builtin_value(prev.locals.get(name)) for name in mutating[0])
                and all(len(prev.locals[name]) <= _MAX_REPR for name in mutable)):  # no repr cut
            # Only the objects of the names it changes through could change, and any object that holds
            # one of them or is held in one (its repr holds theirs, or theirs holds its), or a view of
            # one (`dict_keys([...])`: any value not of the builtin types stays free)
            changed = [prev.locals[name] for name in mutating[1]]
            mutable = {name for name in mutable if not _builtin_value(prev.locals[name])
                       or any(prev.locals[name] in c or c in prev.locals[name] for c in changed)}
        return bound | self.facts.shared | mutable

    def _changeable_back(self) -> frozenset[str] | None:
        """_changeable backwards: after inv_step_into or inv_step_over from a line event to a line event of
        the same frame (no stack written), the earlier state stands on the line being written, and the
        later one shows what that line's statement left. So the earlier state differs only in what the
        line can bind, what any call can rebind, and the values that may be mutable objects (none of
        those when the line is inert and every name it reads holds a builtin value and is not bound by
        it). A first binding or a `del` makes the earlier state's locals a full dict, which stays free;
        a name the later state lacks may come back (the end of `except E as name:` deletes it).
        None where the rule does not apply."""
        if not self._step_back_within_frame():
            return None
        prev = self.prev
        assert prev is not None and self.line is not None
        bound = self.facts.binds.get(self.line)
        if bound is None:
            return None
        absent = frozenset(name for name in self.facts.locals_of(self._frame_function()) if name not in prev.locals)
        reads = self.facts.inert.get(self.line)
        if reads is not None and not reads & bound and all(_builtin_value(prev.locals.get(name)) for name in reads):
            return bound | self.facts.shared | absent
        mutable = {name for name, value in prev.locals.items() if not IMMUTABLE_REPR.fullmatch(value)}
        return bound | self.facts.shared | absent | mutable

    def _step_back_within_frame(self) -> bool:
        """inv_step_into or inv_step_over from a line or return event to a line event of the same frame (no
        stack written), or to its inv_line_call (the same line event, met first going back from a line
        whose statement made calls): the earlier state stands on the line whose statement took it to the
        later one."""
        prev = self.prev
        return (self.action in ("inv_step_into", "inv_step_over") and self.event in ("line", "inv_line_call")
                and not self.stack_written
                and self.line is not None and prev is not None and prev.exit is None and prev.event in ("line", "return")
                and bool(prev.stack) and prev.stack[-1].function not in EXPRESSION_FRAMES)

    def _computed_back(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """_computed and _mutated backwards: after such a step back onto a line that only computes one
        name or changes one list or dict in a way that is one-to-one on its value (`x += c`, `s = t + s`,
        `xs.append(v)`, `x = xs.pop()`, `counts[k] += 1`: deduce.value_before, deduce.container_before),
        that name's value before the line, from the later state's values, as a (key, JSON) pair; empty
        where the rule does not apply or the shown values do not tell."""
        prev = self.prev
        if not self._step_back_within_frame() or prev is None or prev.stack[-1].function in self.facts.suspending:
            return ()
        assert self.line is not None
        if self.line in self.facts.loops:
            return self._loop_back(keys)
        pairs: tuple[tuple[str, str], ...] = ()
        if self.line in self.facts.computed:
            names, expression = self.facts.computed[self.line]
            pairs = values_before(names, expression, prev.locals, _MAX_REPR)
        elif self.line in self.facts.mutations:
            container, statement, result = self.facts.mutations[self.line]
            text = container_before(statement, container, result, prev.locals, _MAX_REPR)
            pairs = ((container, text),) if text is not None else ()
        if any(name.encode() not in keys for name, _ in pairs):
            return ()
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in pairs)

    def _loop_back(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """_loop_step backwards, after a step back onto a `for` loop's header: the loop's variables
        before the header ran, as (key, JSON) pairs. Leaving the loop binds nothing, so they held what the
        later state shows. Going into the body, the header took the next element: the variables held the
        element before the shown one (the same before each place the shown one holds). The elements are
        those the forward rule reads (`for x in xs`), or follows from the first on, while each has one
        successor (at most MAX_LOOP_BACK); nothing where the shown element may be the first (the loop
        may have started there, after any earlier value), where the rule cannot tell the elements to
        the end, and where the element before is a list, a dict or any object that is not a number, a
        string, a bool or None (the body may have changed it)."""
        prev, line = self.prev, self.line
        assert prev is not None and prev.line is not None and line is not None
        loop = self.facts.loops[line]
        names = (loop.counter, loop.target) if loop.counter is not None else (loop.target,)
        later = tuple(prev.locals.get(name) for name in names)
        if any(value is None or name.encode() not in keys for name, value in zip(names, later, strict=True)):
            return ()
        pairs = tuple((name.encode(), fmt._json(value).encode()) for name, value in zip(names, later, strict=True)
                      if value is not None)
        if not loop.body[0] <= prev.line <= loop.body[1]:
            return pairs if prev.line in (self.facts.next_lines.get(line) or ()) else ()
        if not loop.round_known:
            return ()
        at_header = self._later_on(line)

        def successors(values: tuple[str | None, ...], starts: bool) -> set[tuple[str, ...]] | None:
            locals_ = {**prev.locals, **{n: v for n, v in zip(names, values, strict=True) if v is not None}}
            forward = FrameConstraint(self.facts, at_header.model_copy(update={"locals": locals_}), False, "step_over")
            bindings = forward._loop_bindings(loop, locals_.get(loop.target), starts)
            if bindings is None:
                return None
            if not bindings:
                return set()
            taken = dict(bindings)
            if any(len(taken[n]) != 1 for n in names):
                return None
            return {tuple(next(iter(taken[n])) for n in names)}

        first = successors(later, True)
        if not first or later in first:
            return ()  # the loop may start here, whatever the variables held
        elements: list[tuple[str, ...]]
        if loop.iterated is not None and loop.counter is None and loop.expression is None:
            # `for x in xs`: the elements xs shows, as _element_step reads them (repeated ones too)
            shown = FrameConstraint(self.facts, at_header, False, "step_over")._iterated_values(loop, loop.iterated, False)
            if shown is None or len(shown) > MAX_LOOP_BACK:
                return ()
            elements = [(value,) for value in shown]
        else:  # a range, enumerate or expression: one element after another, by the forward rule
            elements = [first.pop()]
            while True:  # to the loop's end: an element left out could be the shown one, after another
                following = successors(elements[-1], False)
                if following is None or len(elements) == MAX_LOOP_BACK:
                    return ()
                if not following:
                    break
                elements.append(following.pop())
        before = {elements[i - 1] for i in range(1, len(elements)) if elements[i] == later}
        if len(before) != 1:
            return ()
        (values,) = before
        if not all(IMMUTABLE_REPR.fullmatch(value) for value in values):
            return ()  # the body may have changed that element since the header took it
        return tuple((name.encode(), fmt._json(value).encode()) for name, value in zip(names, values, strict=True))

    def _call_site(self) -> tuple[State, tuple[int, str]] | None:
        """Where this frame is the call event that step_into reached from a line event: that state, and
        (its line, this frame's function)."""
        prev = self.prev
        if (self.event != "call" or self.action != "step_into" or self.inverse or prev is None
                or prev.event != "line" or prev.line is None):
            return None
        return prev, (prev.line, self._frame_function() or "")

    def _call_arguments(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After step_into from a line whose one call is of this frame's function (flow.call_bindings),
        landing on its call event: the parameters whose values the line tells (a name among the caller's
        shown variables, a literal, or an expression whose value deduce.py computes from them), as (key,
        JSON) pairs. Empty where the rule does not apply."""
        site = self._call_site()
        binding = self.facts.calls.get(site[1]) if site is not None else None
        if site is None or binding is None:
            return ()
        prev = site[0]
        bound, reads = binding
        if not all(_builtin_value(prev.locals.get(name)) for name in reads):
            return ()  # an argument's expression could change an object another one names
        pairs = []
        for param, source in bound:
            if source is None or param.encode() not in keys:
                continue
            kind, text = source
            if kind == "name":
                if text not in prev.locals:
                    continue  # a global or a builtin: not shown, so not known
                text = prev.locals[text]
            elif kind == "expression":
                computed = value_repr(_argument_expression(text), prev.locals, _MAX_REPR)
                if computed is None:
                    continue
                text = computed
            pairs.append((param.encode(), fmt._json(text).encode()))
        return tuple(pairs)

    def _comprehension_start(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After step_into from a line whose one comprehension is this frame's (flow.comprehension_calls),
        landing on its call event: `.0`, the iterator of a value whose type its repr shows, and the free
        names among the caller's shown variables, as (key, JSON) pairs. Empty where it does not apply."""
        site = self._call_site()
        call = self.facts.comprehensions.get(site[1]) if site is not None else None
        if site is None or call is None:
            return ()
        prev = site[0]
        source, frees, reads = call
        if not all(_builtin_value(prev.locals.get(name)) for name in reads):
            return ()
        shown = {name: prev.locals[name] for name in frees if name in prev.locals}
        iterator = _iterator_type(prev.locals.get(source[1])) if source and source[0] == "name" else (
            source[1] if source else None)
        if iterator is not None:
            shown[".0"] = f"<{iterator} object>"
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in shown.items() if name.encode() in keys)

    def _caller_after_return(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After step_into or step_over from a return event to a line or the return of the frame that
        called it: the caller's variables that held a number, a string, a bool or None at the line event
        of the call (the last state of the caller in the trail) and that neither the line nor a call can
        rebind, with those values (a callee cannot rebind its caller's locals but through `global` or
        `nonlocal`); and for a line that is only `NAME = callee(...)`, NAME with the value returned. As
        (key, JSON) pairs; empty where the rule does not apply."""
        prev = self.prev
        caller = self._returned_to_caller()
        if prev is None or caller is None or caller.line is None:
            return ()
        bound = self.facts.binds.get(caller.line)
        if bound is None:
            return ()
        # A comprehension that only reads, in a statement that only reads, changed no object either
        loop = self.facts.comprehension_loops.get((caller.line, prev.stack[-1].function))
        untouched = loop is not None and loop.statement_reads_only and all(
            _builtin_value(prev.locals.get(name, caller.locals.get(name))) for name in loop.reads)
        # A call of a pure function from a line that otherwise only reads changed no object at all
        call = self._pure_call_line(caller.line, prev)
        untouched = untouched or (call is not None and call[1] in self.facts.pure)
        kept = {name: value for name, value in caller.locals.items()
                if (untouched or IMMUTABLE_REPR.fullmatch(value)) and name not in bound and name not in self.facts.shared}
        names, text = self._value_after_call(caller, prev)
        if names and text is not None and self.event == "line":
            kept[names[0]] = text
        result = self.facts.call_results.get(caller.line)
        if result is not None and result[1] == prev.stack[-1].function and prev.value is not None:
            kept[result[0]] = prev.value
        if untouched and loop is not None and loop.result is not None and prev.value is not None:
            kept[loop.result] = prev.value
        return tuple((name.encode(), fmt._json(value).encode()) for name, value in kept.items() if name.encode() in keys)

    def _returned_to_caller(self) -> State | None:
        """After step_into or step_over from a return event to a line or the return of the frame that called
        it: the caller's line event from which the call was made (_caller_at_call); None elsewhere."""
        prev = self.prev
        if (prev is None or prev.event != "return" or self.inverse or self.action not in ("step_into", "step_over")
                or self.event not in ("line", "return") or len(prev.stack) < 2 or not self.stack_written
                or self.stack_depth != len(prev.stack) - 1 or self.function != prev.stack[-2].function
                or self.function in EXPRESSION_FRAMES):  # a comprehension goes on binding its variables on its line
            return None
        return self._caller_at_call(prev)

    def _pure_call_line(self, line: int, returning: State) -> CallExpression | None:
        """flow.call_expressions' entry for `line`, where the frame returning is of its function."""
        entry = self.facts.call_expressions.get(line)
        return entry if entry is not None and returning.stack[-1].function == entry[1] else None

    def _value_after_call(self, caller: State, returning: State) -> tuple[tuple[str, ...] | None, str | None]:
        """For a line of flow.call_expressions whose call `returning` returns from: the names it binds (None
        for `return`) and the value its expression gives with the value returned, on the caller's values
        at the call where the call cannot have changed them (the function is pure, or they show numbers,
        strings, bools or None); (None, None) where the rule does not apply or the values do not tell."""
        assert caller.line is not None
        entry = self._pure_call_line(caller.line, returning)
        if entry is None or returning.value is None:
            return None, None
        names, function, expression = entry
        shown = {RETURNED: returning.value}
        for name, value in caller.locals.items():
            if function in self.facts.pure or IMMUTABLE_REPR.fullmatch(value):
                shown[name] = value
        return names, value_repr(expression, shown, _MAX_REPR)

    def _caller_at_call(self, returning: State) -> State | None:
        """The caller's line event from which the call that `returning` returns from was made: the last
        state of the trail outside that call, if it is the caller's line event on the calling line."""
        index = self._call_made_at(returning)
        return self.trail[index][0] if index is not None else None

    def _call_made_at(self, returning: State) -> int | None:
        """The index in the trail of the state _caller_at_call names."""
        outer = returning.stack[:-1]
        for index in range(len(self.trail) - 1, -1, -1):
            state = self.trail[index][0]
            if state.exit is not None:
                return None
            if len(state.stack) > len(outer) and state.stack[:len(outer)] == outer:
                continue  # inside the call
            return index if state.event == "line" and state.stack == outer else None
        return None

    def _returned_value(self) -> bytes | None:
        """After a step from a line that is only `return name` to the frame's return event: the value
        `name` showed at the line's event (as JSON). None where the rule does not apply (another frame,
        a generator, a name that is not among the frame's shown variables)."""
        if self.event != "return" or not self._step_from_line() or self.stack_written:
            return None
        prev = self.prev
        assert prev is not None and prev.line is not None
        if self._loop_step is not None:  # a loop left at the end of its frame: the implicit `return None`
            return fmt._json("None").encode()
        if prev.stack[-1].function in self.facts.suspending:
            return None
        names = self.facts.returned_tuples.get(prev.line)
        if names is not None and all(name in prev.locals for name in names):
            texts = [prev.locals[name] for name in names]
            max_repr = Limits().max_repr
            if any(len(text) > max_repr for text in texts):
                return None  # an element the tracer cut: the tuple's repr is not known
            whole = "(" + ", ".join(texts) + ("," if len(texts) == 1 else "") + ")"
            return fmt._json(whole if len(whole) <= max_repr else whole[:max_repr] + "...").encode()
        expression = self.facts.computed_returns.get(prev.line)
        if expression is not None:
            text = value_repr(expression, prev.locals, _MAX_REPR)
            return fmt._json(text).encode() if text is not None else None
        name = self.facts.returns.get(prev.line)
        if name is None or name not in prev.locals:
            return None
        return fmt._json(prev.locals[name]).encode()

    def _forced_value(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes] | None, bool]:
        """After a step within the frame from a line that is only `name = <literal>` or `name = other`:
        name's value (as JSON), and whether it had that value already. Nothing where the rule does not
        apply, or where `other` is not among the frame's shown variables (a global, a builtin)."""
        if not self._step_within_frame():
            return None, False
        prev = self.prev
        assert prev is not None and prev.line is not None
        if prev.line in self.facts.literals:
            name, text = self.facts.literals[prev.line]
        elif prev.line in self.facts.copies and self.facts.copies[prev.line][1] in prev.locals:
            name, other = self.facts.copies[prev.line]
            text = prev.locals[other]
        elif prev.line in self.facts.appends and (appended := self._appended(*self.facts.appends[prev.line])) is not None:
            name, text = appended
        else:
            return None, False
        if name.encode() not in keys:
            return None, False
        return (name.encode(), fmt._json(text).encode()), prev.locals.get(name) == text

    @cached_property
    def _printed(self) -> str | None:
        """What a step within the frame from a line (to its next line or its return) prints, where the
        shown values tell: the text of a line that only prints expressions of variables, operators and
        builtins (flow.printed_lines, deduce.printed_text), and nothing after a line whose value, branch
        or changed container the grammar computes (no code of the program ran); None elsewhere."""
        prev = self.prev
        if self.event not in ("line", "return") or not self._step_from_line():
            return None
        assert prev is not None and prev.line is not None
        call = self.facts.printed.get(prev.line)
        if call is not None:
            return printed_text(call, prev.locals)
        computed = self.facts.computed.get(prev.line)
        if computed is not None:
            names, expression = computed
            known = (value_repr(expression, prev.locals, _MAX_REPR) if len(names) == 1
                     else iterable_elements(expression, prev.locals, _MAX_REPR))
            return "" if known is not None else None
        returned = self.facts.computed_returns.get(prev.line)
        if returned is not None:
            return "" if value_repr(returned, prev.locals, _MAX_REPR) is not None else None
        mutation = self.facts.mutations.get(prev.line)
        if mutation is not None:
            return "" if mutation_reprs(mutation[1], mutation[0], prev.locals, _MAX_REPR) is not None else None
        return "" if prev.line in self.facts.truths and self._truth_step is not None else None

    def _stepped_from(self, table: Mapping[int, _Entry]) -> tuple[State, _Entry] | None:
        """After a step within the frame from a line event: the previous state and the table's entry for
        its line; None elsewhere."""
        prev = self.prev
        if not self._step_within_frame() or prev is None or prev.line not in table:
            return None
        return prev, table[prev.line]  # type: ignore[index]

    def _computed(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a step within the frame from a line that only binds names to an expression of variables,
        operators and builtins (flow.computed_values): those names with the values the expression gives
        on the shown values (model_backend/engine/deduce.py), as (key, JSON) pairs; empty where the
        shown values do not tell, or `A, B = EXPR` gives no pair of whole reprs."""
        entry = self._stepped_from(self.facts.computed)
        if entry is None:
            return ()
        prev, (names, expression) = entry
        texts = _bound_texts(names, expression, prev.locals)
        if texts is None or any(name.encode() not in keys for name in names):
            return ()
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in zip(names, texts, strict=True))

    def _mutated(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a step within the frame from a line that changes one list or dict through its name
        (flow.mutations): the container with the value the statement leaves it (and the name bound to
        what its method returns), computed from the shown values (deduce.mutation_reprs), as (key, JSON)
        pairs; empty where the shown values do not tell."""
        entry = self._stepped_from(self.facts.mutations)
        if entry is None:
            return ()
        prev, (container, statement, result) = entry
        reprs = mutation_reprs(statement, container, prev.locals, _MAX_REPR)
        if reprs is None or container.encode() not in keys or (result is not None and result.encode() not in keys):
            return ()
        pairs = [(container, reprs[0])] + ([(result, reprs[1])] if result is not None and reprs[1] is not None else [])
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in pairs)

    def _attribute_updated(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a step within the frame (to a line or its return) from a line that only sets one attribute
        of an object or appends to the list one attribute holds (flow.attribute_updates; facts of trace
        format version 3 only): the object's variable with its text after the line, as a (key, JSON) pair.
        Only where the variable shows the whole text of an object of one of the program's plain classes
        (`_object_fields`) that does not define the attribute, no other variable shows the same text (it
        may be the same object), and the new value is known: for a set, what the expression gives on the
        shown values and fields (deduce.py), a number, string, bool or None field for `op=`; for an
        append, a number, string, bool or None added to a field that shows a list of literals whose text
        appears nowhere else in the object's (another field may hold the same list) and in no other
        variable. The field keeps its place, or a new one comes last (`__dict__`'s order). Empty elsewhere."""
        if self.event not in ("line", "return") or not self._step_from_line() or self.stack_written:
            return ()
        prev = self.prev
        assert prev is not None and prev.line is not None
        update = self.facts.attribute_updates.get(prev.line)
        if update is None or update.owner.encode() not in keys or prev.stack[-1].function in self.facts.suspending:
            return ()
        text = prev.locals.get(update.owner)
        parsed = _object_fields(text) if text is not None else None
        if (text is None or parsed is None or parsed[0] not in self.facts.classes
                or update.attribute in self.facts.classes[parsed[0]]
                or any(other == text for name, other in prev.locals.items() if name != update.owner)):
            return ()
        name, fields = parsed
        old = fields.get(update.attribute)
        if update.kind == "append":
            if (old is None or not old.startswith("[") or shown_elements(old) is None or text.count(old) != 1
                    or any(other == old for other in prev.locals.values())):
                return ()
        elif update.augmented and (old is None or not IMMUTABLE_REPR.fullmatch(old)):
            return ()  # `op=` on a list changes it in place (another field may hold it)
        shown = dict(prev.locals) | {f"{update.owner}.{field}": value for field, value in fields.items()}
        value = value_repr(update.expression, shown, _MAX_REPR)
        if value is None or len(value) > _MAX_REPR:
            return ()
        if update.kind == "append":
            if not IMMUTABLE_REPR.fullmatch(value):
                return ()
            assert old is not None
            value = f"{old[:-1]}{', ' if old != '[]' else ''}{value}]"
        if update.attribute not in fields and len(fields) >= MAX_ELEMENTS:
            return ()  # the tracer writes `...` after that many fields
        after = name + "(" + ", ".join(f"{field}={v}" for field, v in (fields | {update.attribute: value}).items()) + ")"
        if len(after) > _MAX_REPR:
            return ()
        return ((update.owner.encode(), fmt._json(after).encode()),)

    def _imported(self, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a step within the frame from a line that only imports names of a known module
        (flow.imported_values): those names with their values, as (key, JSON) pairs; empty elsewhere."""
        if not self._step_within_frame():
            return ()
        assert self.prev is not None and self.prev.line is not None
        pairs = self.facts.imports.get(self.prev.line, ())
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in pairs if name.encode() in keys)

    def _held(self, pairs: tuple[tuple[bytes, bytes], ...]) -> frozenset[bytes]:
        """The keys of these (key, JSON) pairs whose variable showed that value already (a diff may leave them out)."""
        shown = self.prev.locals if self.prev is not None else {}
        return frozenset(key for key, value in pairs
                         if key.decode() in shown and fmt._json(shown[key.decode()]).encode() == value)

    def _appended(self, name: str, source: ArgumentSource) -> tuple[str, str] | None:
        """After `name.append(arg)` (flow.appended_values): the list's repr with the argument's added,
        where the list shows its whole repr, the argument a builtin value, and the result fits the cut."""
        assert self.prev is not None and source is not None
        shown = self.prev.locals
        before = shown.get(name)
        if before is None or not before.startswith("[") or shown_elements(before) is None:
            return None
        kind, text = source
        if kind == "name":
            if not _builtin_value(shown.get(text)):
                return None  # not shown (a global), or an object whose repr is the program's
            text = shown[text]
        after = f"{before[:-1]}{', ' if before != '[]' else ''}{text}]"
        return (name, after) if len(after) <= Limits().max_repr else None

    def _item_store(self, keys: frozenset[bytes]) -> tuple[bytes, Spliced] | None:
        """After a step within the frame (to a line or its return) from a line that only stores one item
        of a list or a dict (flow.item_stores), with every variable the line reads holding a builtin
        value: the shape of that list or dict, the same but for the one item (`_store_parts`)."""
        if self.event not in ("line", "return") or not self._step_from_line() or self.stack_written:
            return None
        prev = self.prev
        assert prev is not None and prev.line is not None
        store = self.facts.stores.get(prev.line)
        if (store is None or store.container.encode() not in keys or prev.stack[-1].function in self.facts.suspending
                or not all(_builtin_value(prev.locals.get(name)) for name in store.reads)):
            return None
        parts = _store_parts(store, prev.locals)
        return (store.container.encode(), Spliced.of(parts)) if parts is not None else None

    def _fits_before(self, key: bytes, shape: Spliced) -> bool:
        """Whether the variable's value before the step fits the shape: if not (a key added, an item
        inserted), the step changed it, and a diff must name it."""
        assert self.prev is not None
        fed = shape.feed(fmt._json(self.prev.locals[key.decode()]).encode())
        return fed is not None and fed.complete

    def _frame_function(self) -> str | None:
        """The frame's function: from its stack, or the previous frame's when the stack was left out."""
        if self.stack_written:
            return self.function
        prev = self.prev
        return prev.stack[-1].function if prev is not None and prev.exit is None and prev.stack else None

    def _diff_allowed(self) -> bool:
        prev = self.prev
        return (
            prev is not None and self.event != "call" and prev.event in fmt.LOCALS_EVENTS and not self.stack_written
        )

    def push_text(self, data: bytes) -> None:
        fed = self.slot.feed(data) if self.slot is not None else None
        if fed is None:
            raise ValueError(f"{data!r} is not allowed here")
        self.slot = fed

    def push_forced(self) -> None:
        """The forced source text has been fed: the src element is complete."""
        self.slot_kind = None

    def push_frame_text(self, text: str) -> None:
        """Push a whole written frame, from right after `<|frame_sep|>`: special tokens, text, and the
        source line, which must be the forced text. ValueError at the first part the grammar refuses."""
        pos = 0
        for match in _SPECIAL_TOKEN.finditer(text):
            chunk = text[pos:match.start()]
            if self.slot_kind == "src":
                if chunk != self.forced_text():
                    raise ValueError(f"{chunk!r} is not the line's source")
                self.push_forced()
            elif chunk:
                self.push_text(chunk.encode())
            self.push_special(match.group())
            pos = match.end()
