"""Calls and returns: which lines call the program's functions, what a call binds and what it returns.

`must_call_lines(tree)` gives the lines that always call a function of the program before they end,
`method_call_lines(tree)` those that always call a method of the program on a name's object,
`call_bindings(tree, max_repr)` the parameters of the one call a line makes, bound to the caller's
names and literals (`Binding`), `pure_functions(tree)` the functions whose calls change no object of
their callers, `call_expressions(tree)` the lines whose value is computed from one call's result
(`CallExpression`, `RETURNED` standing for it), `call_results(tree)` the lines that bind or return
a call's result, and `returned_names(tree)` and `returned_tuples(tree)` the lines that only return a
name or a tuple of names. Derived from the source text alone, never by running it.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Iterator

from model_backend.grammar.containers import MUTATOR_NAMES
from model_backend.grammar.syntax import (
    COMPREHENSION_NODES,
    ArgumentSource,
    Lines,
    as_operation,
    bound_names,
    defines_a_class,
    immutable_literal,
    inert_expression,
    is_generator_def,
    may_print_a_container,
    plain_class,
    shared_names,
    statements_binding_names,
    statements_per_line,
    statements_with_a_value,
    suspends,
)
from model_backend.grammar.values import READING_FUNCTIONS, READING_METHODS, expression_reads


def _sole_definitions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """Names bound by a single `def` or `class` statement and by nothing else anywhere (no other def, class,
    assignment, parameter, import, loop or `as` target, `global`/`nonlocal`), with that statement."""
    defs: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]] = {}
    other: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            other.add(node.id)
        elif isinstance(node, ast.arg):
            other.add(node.arg)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            other.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            other.add(node.rest)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            other.update(node.names)
    return {name: nodes[0] for name, nodes in defs.items() if len(nodes) == 1 and name not in other}


def _plain_functions(tree: ast.Module) -> frozenset[str]:
    """Names that can only ever mean one plain function of the program: bound by a single undecorated
    `def` that cannot yield or await, and by nothing else (_sole_definitions). A load of such a name runs
    that function when called, or raises NameError."""
    return frozenset(name for name, node in _sole_definitions(tree).items()
                     if isinstance(node, ast.FunctionDef) and not node.decorator_list and not is_generator_def(node))


def _always_run(node: ast.AST) -> Iterator[ast.AST]:
    """The parts of an expression or statement that evaluating it always evaluates (unless something raises
    first), outermost first: all of them but the operands after the first of `and`/`or`, the branches of
    `x if c else y`, the comparisons after the first of a chain, a lambda's body, a generator expression's
    body, and what a list, set or dict comprehension runs in its own frame (a frame of its own in CPython
    3.11: the comprehension itself is yielded)."""
    yield node
    if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp):
        return
    if isinstance(node, ast.BoolOp):
        parts: list[ast.AST] = [*node.values[:1]]
    elif isinstance(node, ast.IfExp):
        parts = [node.test]
    elif isinstance(node, ast.Compare):
        parts = [node.left, node.comparators[0]]
    elif isinstance(node, ast.Lambda):
        parts = [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]
    elif isinstance(node, ast.GeneratorExp):
        parts = [node.generators[0].iter]
    else:
        parts = list(ast.iter_child_nodes(node))
    for part in parts:
        yield from _always_run(part)


def _runs_a_call(node: ast.AST, functions: frozenset[str]) -> bool:
    """Whether evaluating the expression always starts a frame of the program (unless something raises
    first): a call of one of `functions` by name, or a list, set or dict comprehension, where it always
    runs (_always_run)."""
    return any(isinstance(part, ast.ListComp | ast.SetComp | ast.DictComp) or (
        isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and part.func.id in functions)
        for part in _always_run(node))


def _one_line_statements(tree: ast.Module) -> Iterator[tuple[ast.stmt, list[ast.AST]]]:
    """Statements alone on their one line that cannot yield or await, with the parts a step from their line
    event evaluates: a simple statement, or the test of an `if`, `elif` or `while`. Left out: `for` and
    `with` headers (a loop's or a with's later visits to the line evaluate nothing of it), a def or class
    line, an `assert`'s message."""
    starts = statements_per_line(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or starts[node.lineno] != 1:
            continue
        if isinstance(node, ast.If | ast.While):
            runs: list[ast.AST] = [node.test]
            last = node.test.end_lineno
        elif isinstance(node, ast.Assert):
            runs, last = [node.test], node.end_lineno
        elif isinstance(node, ast.AnnAssign):  # a local's annotation is never evaluated
            runs, last = [node.target, *([node.value] if node.value else [])], node.end_lineno
        elif isinstance(node, ast.Expr | ast.Assign | ast.AugAssign | ast.Return | ast.Delete | ast.Raise):
            runs, last = [node], node.end_lineno
        else:
            continue
        if last == node.lineno and not suspends(node):
            yield node, runs


def must_call_lines(tree: ast.Module) -> Lines:
    """Lines whose line event step_into must leave by a call event (or an exception): the line holds one
    statement (_one_line_statements) that always calls a function of the program before it ends: a
    plain function by name, a comprehension, or `Class(...)` of a plain class whose `__init__` runs
    first (_initializers)."""
    classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    names = {node.name for node in classes}
    plain = {node.name for node in classes if plain_class(node, names)}
    functions = _plain_functions(tree) | frozenset(name for name in _initializers(tree) if name in plain)
    return frozenset(node.lineno for node, runs in _one_line_statements(tree)
                     if any(_runs_a_call(part, functions) for part in runs))


def method_call_lines(tree: ast.Module) -> dict[int, tuple[tuple[str, frozenset[str]], ...]]:
    """Line -> (NAME, classes) for the one-line statements (_one_line_statements) that always call
    `NAME.method(...)` (_always_run) of a method that can only mean one def (_instance_methods), with the
    classes whose instances find that def: its class and the module-level classes that inherit it
    through the program's classes alone (`inheriting`); none where a walrus could rebind NAME first. A
    step_into from the line's event where NAME shows an instance of one of those classes enters that def
    (or raises first). Empty where a class is not plain (its instances could find the name elsewhere);
    the caller leaves out programs that look names up dynamically."""
    if defines_a_class(tree):
        return {}
    methods = _instance_methods(tree)
    owners = {node.name: top.name for top in tree.body if isinstance(top, ast.ClassDef) for node in top.body
              if isinstance(node, ast.FunctionDef) and methods.get(node.name) is node}
    heirs = inheriting(tree)
    found: dict[int, tuple[tuple[str, frozenset[str]], ...]] = {}
    for node, runs in _one_line_statements(tree):
        if any(isinstance(part, ast.NamedExpr) for part in ast.walk(node)):
            continue
        receivers = {(part.func.value.id, heirs[owners[part.func.attr]])
                     for run in runs for part in _always_run(run)
                     if isinstance(part, ast.Call) and isinstance(part.func, ast.Attribute)
                     and isinstance(part.func.value, ast.Name) and owners.get(part.func.attr) in heirs}
        if receivers:
            found[node.lineno] = tuple(sorted(receivers, key=lambda r: (r[0], sorted(r[1]))))
    return found


def inheriting(tree: ast.Module) -> dict[str, frozenset[str]]:
    """Module-level class -> itself and the module-level classes that inherit from it, for classes that
    `class` statements alone bind (_sole_definitions), with no keyword, and whose bases are such classes
    or `object` all the way up: no class outside the program stands in their method resolution order."""
    sole = _sole_definitions(tree)
    classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef) and sole.get(node.name) is node}

    def ancestry(name: str, seen: frozenset[str]) -> frozenset[str] | None:
        node = classes.get(name)
        if node is None or name in seen or node.keywords:
            return None
        found = {name}
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id == "object":
                continue
            above = ancestry(base.id, seen | {name}) if isinstance(base, ast.Name) else None
            if above is None:
                return None
            found |= above
        return frozenset(found)

    lines = {name: ancestry(name, frozenset()) for name in classes}
    return {name: frozenset(k for k, up in lines.items() if up is not None and name in up)
            for name, up in lines.items() if up is not None}


def returned_names(tree: ast.Module) -> dict[int, str]:
    """Line -> name, for lines that hold nothing but `return name`. A return event of the frame right
    after a step from such a line returns the very object the name held at the line's event (nothing
    runs between them that could rebind it), so its repr is that value's."""
    starts = statements_per_line(tree)
    return {node.lineno: node.value.id for node in ast.walk(tree)
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Name)
            and node.lineno == node.end_lineno and starts.get(node.lineno) == 1}


def returned_tuples(tree: ast.Module) -> dict[int, tuple[str, ...]]:
    """Line -> names, for lines that hold nothing but `return a, b, ...` (plain names): the return event
    right after a step from such a line returns a new tuple of the objects the names held at the line's
    event, whose repr is made of theirs."""
    starts = statements_per_line(tree)
    return {node.lineno: tuple(e.id for e in node.value.elts) for node in ast.walk(tree)  # type: ignore[attr-defined]
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Tuple) and node.value.elts
            and all(isinstance(e, ast.Name) for e in node.value.elts)
            and node.lineno == node.end_lineno and starts.get(node.lineno) == 1}


def _bind(func: ast.FunctionDef, call: ast.Call, max_repr: int,
          program_names: set[str]) -> tuple[tuple[str, ArgumentSource], ...] | None:
    """Python's binding of `call`'s arguments to `func`'s parameters, for arguments that are names,
    literals or expressions of variables, operators and builtins (values.expression_reads; others bind
    to None: unknown), defaults that are immutable literals; None when the call does not bind plainly
    (`*`/`**`, a *args or **kwargs parameter, a missing or doubled argument)."""
    args = func.args
    if args.vararg or args.kwarg or any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords):
        return None
    positional = [a.arg for a in args.posonlyargs + args.args]
    if len(call.args) > len(positional):
        return None
    given: dict[str, ast.expr] = dict(zip(positional, call.args, strict=False))
    for keyword in call.keywords:
        if keyword.arg in given or keyword.arg in [a.arg for a in args.posonlyargs]:
            return None
        given[keyword.arg] = keyword.value  # type: ignore[index]
    defaults = dict(zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    names = positional + [a.arg for a in args.kwonlyargs]
    if set(given) - set(names):
        return None
    bound: list[tuple[str, ArgumentSource]] = []
    for name in names:
        if name in given:
            node = given[name]
            if isinstance(node, ast.Name):
                bound.append((name, ("name", node.id)))
            elif (text := immutable_literal(node, max_repr)) is not None:
                bound.append((name, ("literal", text)))
            elif expression_reads(node, program_names) is not None:
                bound.append((name, ("expression", ast.unparse(node))))
            else:
                bound.append((name, None))
        elif name in defaults:
            text = immutable_literal(defaults[name], max_repr)
            bound.append((name, ("literal", text) if text is not None else None))
        else:
            return None  # a TypeError at run time: no call event
    return tuple(bound)


Binding = tuple[tuple[tuple[str, ArgumentSource], ...], frozenset[str]]  # parameters, names to check


def call_bindings(tree: ast.Module, max_repr: int, objects: bool = True) -> dict[tuple[int, str], Binding]:
    """(line, function) -> the call event's parameters and where their values come from, for lines that
    hold one statement, on that line alone, whose only call is of a plain module-level function of the
    program (see _plain_functions), or is `NAME.method(...)` of an instance method (_instance_methods:
    its first parameter comes from ("receiver", NAME), which the caller checks holds an instance), with
    arguments that are inert expressions (inert_lines); or `Class(...)` of a class whose `__init__` runs first
    (_initializers), `self` then the new instance as the tracer writes it (`objects`: trace format 3 on). A step_into
    from the line's event that lands on that function's call event has run nothing else, so the frame's
    locals are exactly its parameters, holding the named variables' values. With the bindings come the
    names that arguments other than a name or a literal read: the caller checks they hold builtin values
    (an expression over them then changes no object, as on an inert line)."""
    if defines_a_class(tree):
        return {}
    plain = _plain_functions(tree)
    defs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in plain}
    program_names = bound_names(tree)
    found: dict[tuple[int, str], Binding] = {}
    for node in statements_binding_names(tree):
        call = node.value
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in defs
                and _inert_arguments(call)):
            # the call inside an expression, or with arguments that builtins compute (`g(s, len(s))`)
            call = _the_one_call(node, defs, program_names)
            if call is None:
                continue
        assert isinstance(call.func, ast.Name)
        bound = _bind(defs[call.func.id], call, max_repr, program_names)
        _record_binding(found, node.lineno, call.func.id, call, bound, program_names)
    methods = _instance_methods(tree)
    classes = {node.name for node in ast.walk(tree) if isinstance(node, ast.ClassDef)}
    initializers = _initializers(tree)
    for node in statements_binding_names(tree):
        call = node.value
        if (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in initializers
                and _inert_arguments(call)):
            init = initializers[call.func.id]  # `Class(...)`: `self` is the new instance, with no attribute yet
            bound = _bind(init, ast.Call(func=call.func, args=[ast.Constant(None), *call.args], keywords=call.keywords),
                          max_repr, program_names)
            if bound is not None:
                fresh = f"{call.func.id}()" if objects else f"<__main__.{call.func.id} object>"
                bound = ((bound[0][0], ("literal", fresh)), *bound[1:])
            _record_binding(found, node.lineno, "__init__", call, bound, program_names)
            continue
        if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in methods
                and isinstance(call.func.value, ast.Name) and call.func.value.id not in classes
                and _inert_arguments(call)):
            continue
        receiver = call.func.value.id
        bound = _bind(methods[call.func.attr], ast.Call(func=call.func, args=[call.func.value, *call.args],
                                                         keywords=call.keywords), max_repr, program_names)
        if bound is not None:  # the first parameter takes the receiver
            bound = ((bound[0][0], ("receiver", receiver)), *bound[1:])
        _record_binding(found, node.lineno, call.func.attr, call, bound, program_names)
    return found


def _inert_arguments(call: ast.Call) -> bool:
    return all(inert_expression(a) for a in [*call.args, *(k.value for k in call.keywords)])


def _record_binding(found: dict[tuple[int, str], Binding], line: int, function: str, call: ast.Call,
                    bound: tuple[tuple[str, ArgumentSource], ...] | None, program_names: set[str]) -> None:
    """Add a call's binding, with the names its computed arguments read, to `found`."""
    if bound is not None:
            computed = [a for a in [*call.args, *(k.value for k in call.keywords)]
                        if not isinstance(a, ast.Name | ast.Constant)]
            # the variables they read (not the builtins they call: `len` is no variable of the frame)
            each = [expression_reads(a, program_names) for a in computed]
            reads = frozenset(n.id for a in computed for n in ast.walk(a) if isinstance(n, ast.Name)) if any(
                r is None for r in each) else frozenset(name for r in each if r is not None for name in r)
            found[(line, function)] = (bound, reads)


def _initializers(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """Class name -> its `__init__`, for module-level classes that `Class(...)` can only mean (bound by their
    class statement alone, _sole_definitions) with no base, decorator, keyword or `__slots__`, and an
    undecorated `__init__` of their own: calling one makes an instance with no attribute, written
    `Class()`, and runs that `__init__` first."""
    found: dict[str, ast.FunctionDef] = {}
    sole = _sole_definitions(tree)
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and sole.get(node.name) is node and not node.bases
                and not node.keywords and not node.decorator_list):
            continue
        inits = [st for st in node.body if isinstance(st, ast.FunctionDef) and st.name == "__init__"]
        slots = any(isinstance(t, ast.Name) and t.id == "__slots__" for st in node.body if isinstance(st, ast.Assign)
                    for t in st.targets)
        if len(inits) == 1 and not inits[0].decorator_list and not is_generator_def(inits[0]) and not slots and (
                inits[0].args.posonlyargs or inits[0].args.args):
            found[node.name] = inits[0]
    return found


# How the tracer writes an instance of a plain class: with its fields (trace format 3), or as Python does
INSTANCE_REPR = re.compile(r"[A-Za-z_][\w.]*\(|<__main__\.[\w.]+ object>")


# An instance of a class of the program as instance_class reads it: Python's default repr, or a dataclass's
_DEFAULT_REPR = re.compile(r"<__main__\.(\w+) object>")
_FIELDS_REPR = re.compile(r"(\w+)\(")
# Types of the standard library whose reprs also start with their name and a parenthesis
_LIBRARY_REPRS = frozenset({"deque", "defaultdict", "OrderedDict", "Counter", "ChainMap", "Decimal", "Fraction",
                            "datetime", "date", "time", "timedelta", "timezone", "UUID", "Path", "PosixPath",
                            "PurePosixPath", "SimpleNamespace", "array", "range", "slice", "frozenset", "set",
                            "bytearray", "mappingproxy"})


def instance_class(text: str | None) -> str | None:
    """The class a value's text writes an instance of, as the default repr or a dataclass's writes it
    (`<__main__.C object>`, `C(x=1)`), where that text cannot be a builtin's or a library type's."""
    if text is None:
        return None
    default = _DEFAULT_REPR.fullmatch(text)
    if default is not None:
        return default.group(1)
    fields = _FIELDS_REPR.match(text)
    return fields.group(1) if fields is not None and fields.group(1) not in _LIBRARY_REPRS else None


def _instance_methods(tree: ast.Module) -> dict[str, ast.FunctionDef]:
    """Method names that can only mean one instance method: defined once in the program, in the body of a
    module-level class, undecorated, not a generator and not a dunder; no other def, class, variable,
    parameter or attribute store of that name anywhere, and no `setattr` (which could shadow it on an
    instance). `NAME.method(...)` on an instance of a plain class (syntax.defines_a_class) then runs that
    def with `self` bound to NAME's object, before any other code of the program."""
    nodes = list(ast.walk(tree))
    if any(isinstance(n, ast.Name) and n.id in ("setattr", "vars") for n in nodes):
        return {}
    sole = _sole_definitions(tree)
    stored = {n.attr for n in nodes if isinstance(n, ast.Attribute) and not isinstance(n.ctx, ast.Load)}
    methods: dict[str, ast.FunctionDef] = {}
    for top in tree.body:
        if not isinstance(top, ast.ClassDef):
            continue
        for node in top.body:
            if (isinstance(node, ast.FunctionDef) and sole.get(node.name) is node and node.name not in stored
                    and not node.decorator_list and not is_generator_def(node) and not node.name.startswith("__")
                    and (node.args.posonlyargs or node.args.args)):
                methods[node.name] = node
    return methods


def _the_one_call(node: ast.Assign | ast.AnnAssign | ast.Expr | ast.Return, defs: dict[str, ast.FunctionDef],
                  program_names: set[str]) -> ast.Call | None:
    """In a statement alone on one line (statements_with_a_value), the one call of a function in `defs` (`return [ord(c)] + aux(s[1:])`,
    `return max(n, f(n - 1))`), where everything else in it, the call's arguments included, is made of
    variables, operators and builtins (values.expression_reads): the part evaluated before the call
    then runs no code of the program, and neither do the arguments. None for anything else."""
    value = node.value
    if value is None or any(isinstance(n, (*COMPREHENSION_NODES, ast.Lambda)) for n in ast.walk(value)):
        return None  # a call inside one runs in its frame, with its variables, later than the line's event
    calls = [n for n in ast.walk(value) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in defs]
    if len(calls) != 1:
        return None
    call = calls[0]
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    if not all(expression_reads(a, program_names) is not None for a in [*call.args, *(k.value for k in call.keywords)]):
        return None
    return call if expression_reads(_without(value, call), program_names) is not None else None


def _without(value: ast.expr, call: ast.Call, by: ast.expr | None = None) -> ast.expr:
    """A copy of `value` with `call` replaced by `by` (a constant when None; deepcopy takes a memo entry
    for the call as its copy); the tree is left as it is."""
    return copy.deepcopy(value, memo={id(call): by if by is not None else ast.Constant(None)})


# The name that stands for the value a call returned in call_expressions' expressions (no variable's name).
RETURNED = "<returned>"
# Builtins that build new objects or read their arguments, and never call code of the program on
# values of the builtin types (a pure function may call them).
_PURE_BUILTINS = READING_FUNCTIONS | frozenset({"print", "isinstance", "round", "float", "set", "dict", "frozenset",
                                                "repr", "pow", "hash", "map", "filter"})
_FRESH_MAKERS = frozenset({"list", "dict", "set", "sorted", "tuple", "str", "int", "float", "range", "len", "sum",
                           "min", "max", "abs", "round", "bool", "ord", "chr"})
_SAFE_AUGMENTED = (ast.Div, ast.FloorDiv, ast.Mod, ast.Pow, ast.LShift, ast.RShift)  # never in place on a list, set or dict


def _makes_a_new_object(value: ast.expr) -> bool:
    return isinstance(value, ast.List | ast.Dict | ast.Set | ast.ListComp | ast.DictComp | ast.SetComp | ast.Constant
                      | ast.JoinedStr) or (
        isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _FRESH_MAKERS)


def _fresh_names(function: ast.FunctionDef) -> frozenset[str]:
    """The local names of `function` that only ever hold objects made in its frame: every binding is
    `NAME = VALUE` with VALUE a display, a comprehension, a constant, an f-string or a call of a builtin
    that makes a new object, or `NAME op= ...`; no parameter."""
    made: set[int] = set()  # the Name nodes bound by such a `NAME = VALUE`
    augmented: set[int] = set()
    for node in ast.walk(function):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and _makes_a_new_object(node.value)):
            made.add(id(node.targets[0]))
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
            augmented.add(id(node.target))
    stores = [n for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store | ast.Del)]
    stale = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)} | {
        n.id for n in stores if id(n) not in made and id(n) not in augmented}
    return frozenset(n.id for n in stores if id(n) in made) - stale


def pure_functions(tree: ast.Module) -> frozenset[str]:
    """The plain functions of the program (_plain_functions, at module level) whose calls change no object
    that existed before the call, in a program without classes: no `global`/`nonlocal`, no store into an
    attribute, items stored and mutating methods called only on objects made in the frame
    (_fresh_names), `op=` on other names only where it is never in place, and calls only of builtins that
    read (on values of the builtin types), of reading methods, of `math`, and of other such functions.
    A caller's objects are the same after such a call as before it."""
    if defines_a_class(tree):
        return frozenset()
    plain = _plain_functions(tree)
    defs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in plain}
    bound = bound_names(tree)
    imported_math = any(isinstance(n, ast.Import) and any(a.name == "math" and a.asname is None for a in n.names)
                        for n in ast.walk(tree))
    needs: dict[str, set[str]] = {}
    for name, function in defs.items():
        fresh = _fresh_names(function)
        calls: set[str] = set()
        called = {id(node.func) for node in ast.walk(function) if isinstance(node, ast.Call)}
        ok = True
        for node in ast.walk(function):
            if isinstance(node, ast.Global | ast.Nonlocal | ast.Yield | ast.YieldFrom | ast.Await | ast.ClassDef) or isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load):
                ok = False
            elif (isinstance(node, ast.Attribute) and id(node) not in called and node.attr not in READING_METHODS
                  and not (imported_math and isinstance(node.value, ast.Name) and node.value.id == "math")):
                ok = False  # a method passed on, to be called by map, filter or a key: `map(xs.append, ys)`
            elif isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
                ok = ok and isinstance(node.value, ast.Name) and node.value.id in fresh
            elif isinstance(node, ast.AugAssign):  # an item's `op=` is the store's (checked above)
                ok = ok and (isinstance(node.op, _SAFE_AUGMENTED) or isinstance(node.target, ast.Subscript)
                             or (isinstance(node.target, ast.Name) and node.target.id in fresh))
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in defs:
                calls.add(node.id)  # called, or passed on to be called: it must be pure too
            elif isinstance(node, ast.Call):
                func = node.func
                if isinstance(func, ast.Name):
                    ok = ok and (func.id in defs or (func.id in _PURE_BUILTINS and func.id not in bound))
                elif isinstance(func, ast.Attribute):
                    receiver = func.value
                    ok = ok and (func.attr in READING_METHODS
                                 or (func.attr in MUTATOR_NAMES and isinstance(receiver, ast.Name) and receiver.id in fresh)
                                 or (imported_math and isinstance(receiver, ast.Name) and receiver.id == "math"))
                else:
                    ok = False
            if not ok:
                break
        if ok:
            needs[name] = calls
    pure = set(needs)
    changed = True
    while changed:
        changed = False
        for name in list(pure):
            if not needs[name] <= pure:
                pure.discard(name)
                changed = True
    return frozenset(pure)


CallExpression = tuple[tuple[str, ...] | None, str, ast.expr]


def call_expressions(tree: ast.Module) -> dict[int, CallExpression]:
    """Line -> (the names bound (none for an expression alone), or None for `return`; the function called;
    the statement's expression with the call replaced by the name RETURNED), for lines whose one call of a
    plain function of the program stands in an expression of variables, operators and builtins, its
    arguments too (_the_one_call): `return n * fact(n - 1)`, `total += f(x)`, `best = max(best, g(x))`,
    `y = f(x)`, in a program without classes. Nothing else on such a line runs code of the program or
    changes an object, so when that function's frame returns to it, the value the line binds or returns
    follows from the value returned and the caller's values at the call, where the call cannot have
    changed them (frame.py checks that)."""
    if defines_a_class(tree) or may_print_a_container(tree):
        return {}
    plain = _plain_functions(tree)
    defs = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name in plain}
    program_names = bound_names(tree)
    shared = shared_names(tree)
    found: dict[int, CallExpression] = {}
    for node in [*statements_binding_names(tree), *(n for n in ast.walk(tree) if isinstance(n, ast.AugAssign))]:
        names: tuple[str, ...] | None
        if isinstance(node, ast.AugAssign):
            if not isinstance(node.target, ast.Name) or node.lineno != node.end_lineno:
                continue
            names = (node.target.id,)
            statement: ast.Assign | ast.AnnAssign | ast.Expr | ast.Return = ast.Expr(
                value=as_operation(node))
        elif isinstance(node, ast.Return):
            names, statement = None, node
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            names = (target.id,) if isinstance(target, ast.Name) else None
            if names is None:
                continue
            statement = node
        elif isinstance(node, ast.Expr):
            names, statement = (), node
        else:
            continue
        if names is not None and set(names) & shared:
            continue
        value = statement.value
        if value is None:
            continue
        call = _the_one_call(statement, defs, program_names)
        if call is None:
            continue
        assert isinstance(call.func, ast.Name)
        found[node.lineno] = (names, call.func.id, _without(value, call, ast.Name(id=RETURNED, ctx=ast.Load())))
    return found


def call_results(tree: ast.Module) -> dict[int, tuple[str, str]]:
    """Line -> (name, function), for lines that hold nothing but `name = function(...)` or
    `name = obj.function(...)`. When a frame of `function` returns to such a line and the caller's next
    event is a line or its own return, no other call ran after it: `name` holds the value returned (the
    caller checks that the frame returning is of `function`: a class's `__init__` returns None, not
    the instance)."""
    found: dict[int, tuple[str, str]] = {}
    for node in statements_with_a_value(tree):
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call)):
            continue
        func = node.value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        if name is not None:
            found[node.lineno] = (node.targets[0].id, name)
    return found
