"""Containers: which lines change which objects, list, dict and set mutation, item stores and
attribute updates.

`inert_lines(tree)` gives the lines that call nothing and change no object when the names they read
hold builtin values, `mutating_lines(tree)` the objects a line can change, `mutations(tree)` the lines
that call one mutating method on a container (`MUTATOR_NAMES`), and `mutation_reprs(statement,
container, shown, ...)` the container's repr after it, computed on the values a state shows.
`appended_values(tree, max_repr)` gives the values `xs.append(v)` appends, `item_stores(tree,
max_repr)` the stores `d[k] = v` (`ItemStore`), `plain_classes(tree)` the classes whose objects keep
their fields in `__dict__`, and `attribute_updates(tree)` the stores `obj.field = v` into them
(`AttributeUpdate`). Derived from the source text alone, never by running it.
"""

from __future__ import annotations

import ast
import builtins as _builtins_module
import copy
from collections.abc import Mapping
from dataclasses import dataclass

from model_backend.grammar.evaluation import STEPS, evaluate
from model_backend.grammar.syntax import (
    COMPREHENSION_NODES,
    STORE_BUILTINS,
    STORE_READING_METHODS,
    ArgumentSource,
    bound_names,
    defines_a_class,
    header_lines,
    header_parts,
    immutable_literal,
    inert_expression,
    may_print_a_container,
    program_names,
    reads_only,
    shared_names,
    statements_per_line,
)
from model_backend.grammar.values import (
    ARITHMETIC,
    Rebuilt,
    Unknown,
    as_int,
    expression_reads,
    holds_a_set,
    plain_value,
    shown_container,
)


def _inert_statement(node: ast.stmt) -> bool:
    """Whether the statement's header evaluates only inert expressions and binds only plain names (a
    tuple of names only from a tuple display: unpacking anything else iterates it)."""
    if isinstance(node, ast.Pass | ast.Break | ast.Continue):
        return True
    if isinstance(node, ast.Expr | ast.Return | ast.If | ast.While):
        value = node.test if isinstance(node, ast.If | ast.While) else node.value
        return value is None or inert_expression(value)
    if isinstance(node, ast.AnnAssign):  # a local's annotation is never evaluated
        return node.simple == 1 and node.value is not None and inert_expression(node.value)
    if isinstance(node, ast.Assign):
        for target in node.targets:
            if isinstance(target, ast.Tuple | ast.List):
                if not (isinstance(node.value, ast.Tuple) and len(node.value.elts) == len(target.elts)
                        and all(isinstance(t, ast.Name) for t in target.elts)):
                    return False
            elif not isinstance(target, ast.Name):
                return False
        return inert_expression(node.value)
    return False


def inert_lines(tree: ast.Module) -> dict[int, frozenset[str]]:
    """Line -> the names its statement reads, for lines where every statement whose header holds the
    line is inert: it calls nothing and changes no object, provided the names it reads hold values of
    the builtin types (the caller checks their reprs: a number, a string, a bool, None, a list, a tuple,
    a dict or a set). Then a step from the line changes no variable but those the line binds. Empty for
    a program that defines a class: an instance's operators and repr may be the program's own code."""
    if defines_a_class(tree):
        return {}
    reads: dict[int, set[str]] = {}
    mixed: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        lines = header_lines(node)
        if not _inert_statement(node):
            mixed |= lines
            continue
        names = {n.id for part in header_parts(node) for n in ast.walk(part)
                 if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        for line in lines:
            reads.setdefault(line, set()).update(names)
    return {line: frozenset(names) for line, names in reads.items() if line not in mixed}


def _changed_through(node: ast.stmt, builtins: frozenset[str], bound: set[str]) -> set[str] | None:
    """The plain names through which a simple statement changes objects (`NAME[...] = ...`, `NAME[i][j]
    op= ...`, `NAME.method(...)`, `NAME op= ...`), where everything else it evaluates only reads
    (reads_only, or a method of a plain name called with reading arguments); None for any other
    statement (an attribute set, a call of the program's code, a method of something else)."""
    changed: set[str] = set()

    def target_ok(target: ast.expr) -> bool:
        if isinstance(target, ast.Name):
            return True
        if isinstance(target, ast.Tuple | ast.List):
            return all(target_ok(t) for t in target.elts)
        if isinstance(target, ast.Subscript):
            base, keys = target.value, [target.slice]
            while isinstance(base, ast.Subscript):
                keys.append(base.slice)
                base = base.value
            if not isinstance(base, ast.Name):
                return False
            changed.add(base.id)
            return all(reads_only(key, builtins, bound) is not None for key in keys)
        return False

    def value_ok(value: ast.expr) -> bool:
        if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name)
                and value.func.attr not in STORE_READING_METHODS and value.func.value.id in bound):
            changed.add(value.func.value.id)
            arguments = [a.value if isinstance(a, ast.Starred) else a for a in value.args]
            return all(reads_only(a, builtins, bound) is not None for a in [*arguments, *(k.value for k in value.keywords)])
        return reads_only(value, builtins, bound) is not None and not any(
            isinstance(n, (*COMPREHENSION_NODES, ast.Lambda)) for n in ast.walk(value))

    if isinstance(node, ast.Expr):
        return changed if value_ok(node.value) else None
    if isinstance(node, ast.Assign):
        return changed if all(target_ok(t) for t in node.targets) and value_ok(node.value) else None
    if isinstance(node, ast.AugAssign):
        if isinstance(node.target, ast.Name):
            changed.add(node.target.id)  # `xs += ys` extends the list xs holds
        return changed if target_ok(node.target) and value_ok(node.value) else None
    return None


def mutating_lines(tree: ast.Module) -> dict[int, tuple[frozenset[str], frozenset[str]]]:
    """Line -> (the names it reads, the names through which it changes objects), for lines that hold one
    simple statement changing objects only through plain names (_changed_through), in a program that
    defines no class and writes no `__repr__` or `__iter__` of its own. If every name read holds a value
    of the builtin types, no code of the program runs, and only the objects of those names can change,
    with whatever holds them or is held in them (the caller tells which by their reprs)."""
    if defines_a_class(tree) or may_print_a_container(tree):
        return {}
    bound = bound_names(tree)
    builtins = frozenset(STORE_BUILTINS - bound - {"print"})
    starts = statements_per_line(tree)
    found: dict[int, tuple[frozenset[str], frozenset[str]]] = {}
    for node in ast.walk(tree):
        if (not isinstance(node, ast.Expr | ast.Assign | ast.AugAssign) or starts.get(node.lineno) != 1
                or node.end_lineno != node.lineno):
            continue
        changed = _changed_through(node, builtins, bound)
        if not changed:
            continue  # None: not such a line; empty: it changes no object (inert_lines says more)
        reads = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
                 and n.id in bound} | changed
        found[node.lineno] = (frozenset(reads), frozenset(changed))
    return found


def mutations(tree: ast.Module) -> dict[int, tuple[str, ast.stmt, str | None]]:
    """Line -> (the container, the statement, the name bound to what a method returns), for lines that
    hold one statement, on one line, changing one list or dict through a plain name C: `C.method(ARGS)`
    or `X = C.method(ARGS)` with a method that changes it in place (MUTATOR_NAMES), `C[KEY] =
    VALUE`, `C[KEY] op= VALUE` or `del C[KEY]`, whose other parts are variables, operators and builtins
    (values.expression_reads), in a program none of whose own objects could print like a literal
    (may_print_a_container). On values of the builtin types such a statement runs no code of the
    program, so the shown values give the container after it (mutation_reprs). Names declared global or nonlocal are left out."""
    if may_print_a_container(tree):
        return {}
    bound, shared, starts = program_names(tree)
    found: dict[int, tuple[str, ast.stmt, str | None]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Expr | ast.Assign | ast.AugAssign | ast.Delete):
            continue
        if node.end_lineno != node.lineno or starts.get(node.lineno) != 1:
            continue
        result: str | None = None
        parts: list[ast.expr]
        value = node.value if isinstance(node, ast.Expr | ast.Assign | ast.AugAssign) else None
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and isinstance(value.func.value, ast.Name) \
                and value.func.attr in MUTATOR_NAMES and not isinstance(node, ast.AugAssign):
            if isinstance(node, ast.Assign):
                if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                    continue
                result = node.targets[0].id
            container = value.func.value.id
            parts = [*value.args, *(k.value for k in value.keywords)]
            if any(isinstance(a, ast.Starred) for a in value.args) or any(k.arg is None for k in value.keywords):
                continue
        elif isinstance(node, ast.Expr):
            continue
        else:
            targets = node.targets if isinstance(node, ast.Assign | ast.Delete) else [node.target]
            if len(targets) != 1 or not (isinstance(targets[0], ast.Subscript) and isinstance(targets[0].value, ast.Name)):
                continue
            index = targets[0].slice
            container = targets[0].value.id
            parts = ([b for b in (index.lower, index.upper, index.step) if b is not None]
                     if isinstance(index, ast.Slice) else [index]) + ([value] if value is not None else [])
        if {container, result} & shared or container == result or container not in bound:
            continue
        if all(expression_reads(part, bound) is not None for part in parts):
            found[node.lineno] = (container, node, result)
    return found


def appended_values(tree: ast.Module, max_repr: int) -> dict[int, tuple[str, ArgumentSource]]:
    """Line -> (list, what it appends), for lines that hold nothing but `NAME.append(ARG)` with ARG
    another variable or an immutable literal. Where NAME shows the whole repr of a list and ARG a
    builtin value, the list's repr after the step is its repr before with ARG's repr added at the end
    (list.append runs no code of the program): the caller builds it, if it fits under `max_repr`.
    Empty for a program whose own objects could print like a list."""
    if may_print_a_container(tree):
        return {}
    starts = statements_per_line(tree)
    shared = shared_names(tree)
    found: dict[int, tuple[str, ArgumentSource]] = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
            continue
        call = node.value
        func = call.func
        if (node.lineno != node.end_lineno or starts.get(node.lineno) != 1 or call.keywords or len(call.args) != 1
                or not isinstance(func, ast.Attribute) or func.attr != "append" or not isinstance(func.value, ast.Name)
                or func.value.id in shared):
            continue
        arg = call.args[0]
        if isinstance(arg, ast.Name):
            if arg.id != func.value.id:
                found[node.lineno] = (func.value.id, ("name", arg.id))
        else:
            text = immutable_literal(arg, max_repr)
            if text is not None:
                found[node.lineno] = (func.value.id, ("literal", text))
    return found


@dataclass(frozen=True)
class ItemStore:
    """A line that changes one item of a list or a dict, or adds one, and nothing else (see item_stores)."""

    container: str  # the variable whose list or dict it changes
    kind: str  # "item": `container[key] = ...` (or `op=`); "append": `container.append(...)`; "insert"
    key: ArgumentSource  # "item": the key or index (a variable, or a literal's repr); "insert": the position
    augmented: bool  # `container[key] op= ...`: the key must be there already (else a KeyError or IndexError)
    reads: frozenset[str]  # the variables the line reads: each must hold a value of the builtin types
    # `container[outer][key] = ...`: the key or index of the list or dict inside it whose item is stored
    outer: ArgumentSource = None


def _store_key(node: ast.expr, max_repr: int) -> ArgumentSource:
    """A key or an index written as a variable or an immutable literal; None for anything else."""
    if isinstance(node, ast.Name):
        return ("name", node.id)
    text = immutable_literal(node, max_repr)
    return ("literal", text) if text is not None else None


def item_stores(tree: ast.Module, max_repr: int) -> dict[int, ItemStore]:
    """Line -> the store, for lines that hold nothing but `NAME[KEY] = EXPR`, `NAME[KEY] op= EXPR`,
    `NAME.append(EXPR)` or `NAME.insert(INT, EXPR)`, with KEY a variable or an immutable literal and EXPR
    an expression that reads only (reads_only). Where every variable the line reads holds a value of the
    builtin types, nothing runs but the store itself: after a step from the line within its frame, a list
    or a dict NAME showed whole is the same but for one item, whose value is free (model_backend/grammar/
    frame.py builds that shape). `NAME[OUTER][KEY] = EXPR` (and `op=`) stores into the list or dict
    NAME holds at OUTER: then NAME's other items stay too, where that inner one is not also elsewhere in
    NAME (`[[0] * 3] * 3` holds one list three times), which the caller checks from the repr. Empty for a
    program that defines a class (an instance's methods and operators are the program's code) or where
    NAME is shared with other frames (`global`, `nonlocal`)."""
    if defines_a_class(tree):
        return {}
    bound, shared, starts = program_names(tree)
    builtins = frozenset(STORE_BUILTINS - bound)
    found: dict[int, ItemStore] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or node.lineno != node.end_lineno or starts.get(node.lineno) != 1:
            continue
        target = node.targets[0] if isinstance(node, ast.Assign) and len(node.targets) == 1 else (
            node.target if isinstance(node, ast.AugAssign) else None)
        store: tuple[str, str, ArgumentSource, ast.expr] | None = None
        outer: ArgumentSource = None
        if (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Subscript)
                and isinstance(target.value.value, ast.Name) and not isinstance(target.value.slice, ast.Slice)):
            outer = _store_key(target.value.slice, max_repr)  # `NAME[OUTER][KEY] = ...`
            if outer is None:
                continue
            target = ast.Subscript(value=target.value.value, slice=target.slice, ctx=target.ctx)
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and not isinstance(target.slice, ast.Slice):
            assert isinstance(node, ast.Assign | ast.AugAssign)
            store = (target.value.id, "item", _store_key(target.slice, max_repr), node.value)
        elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and not node.value.keywords:
            call = node.value
            func = call.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                if func.attr == "append" and len(call.args) == 1:
                    store = (func.value.id, "append", None, call.args[0])
                elif func.attr == "insert" and len(call.args) == 2:
                    position = immutable_literal(call.args[0], max_repr)
                    if position is not None and position.lstrip("-").isdigit():
                        store = (func.value.id, "insert", ("literal", position), call.args[1])
        if store is None:
            continue
        container, kind, key, value = store
        reads = reads_only(value, builtins, bound)
        if container in shared or reads is None or (kind == "item" and key is None):
            continue
        key_reads = {source[1] for source in (key, outer) if source is not None and source[0] == "name"}
        found[node.lineno] = ItemStore(container, kind, key, isinstance(node, ast.AugAssign),
                                       reads | key_reads | {container}, outer)
    return found


# What a class body may not define for `attribute_updates` to trust a store into its objects: hooks that
# run code on a store or a read, or keep the fields elsewhere than in `__dict__`
_BUILTIN_EXCEPTIONS = frozenset(n for n, v in vars(_builtins_module).items() if isinstance(v, type) and issubclass(v, BaseException))
_ATTRIBUTE_HOOKS = frozenset({"__setattr__", "__delattr__", "__getattribute__", "__getattr__", "__slots__", "__dict__",
                              "__repr__", "__class__", "__init_subclass__", "__set__", "__get__", "__set_name__"})


def plain_classes(tree: ast.Module) -> dict[str, frozenset[str]]:
    """Class name -> the names its body and its bases' bodies define, for the program's classes whose
    objects the trace format (version 3) writes as `Name(field=value, ...)` with their `__dict__` in its
    order, and whose attribute stores only set that `__dict__`'s entry: no keyword or decorator, bases
    that are such classes themselves (then object's `__setattr__` stores and `__repr__` writes them), a
    body of defs and plain assignments that defines no hook of _ATTRIBUTE_HOOKS, a name no other class,
    def, import, variable or string of the program holds (a namedtuple or `type(...)` named alike writes
    the same text), and no store into the class's attributes (`Name.x = ...` could add a descriptor).
    Empty for a program that names `__repr__` anywhere, calls setattr or delattr, stores into `f(...).x`,
    or has a class with a keyword or with a base that is neither one of its classes nor a builtin
    exception (an object that prints like a list or a number could be taken for one)."""
    if any(isinstance(n, ast.Name) and n.id in ("setattr", "delattr", "__repr__")
           or isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == "__repr__"
           or isinstance(n, ast.Attribute) and (n.attr == "__repr__" or not isinstance(n.ctx, ast.Load)
                                                and isinstance(n.value, ast.Call))  # `type(self).x = ...`
           or isinstance(n, ast.Constant) and n.value == "__repr__"
           for n in ast.walk(tree)):
        return {}
    defs: dict[str, list[ast.ClassDef]] = {}
    others: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            defs.setdefault(node.name, []).append(node)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            others.add(node.name)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            others.add(node.id)
        elif isinstance(node, ast.alias):
            others.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            others.add(node.value)
        elif (isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load)
              and isinstance(node.value, ast.Name)):
            others.add(node.value.id)  # `Cart.x = ...`
    bound = bound_names(tree)
    for nodes in defs.values():
        for node in nodes:
            if node.keywords or not all(
                    isinstance(b, ast.Name) and (b.id in defs or b.id in _BUILTIN_EXCEPTIONS and b.id not in bound)
                    for b in node.bases):
                return {}
    own: dict[str, tuple[ast.ClassDef, frozenset[str]]] = {}
    for name, nodes in defs.items():
        if len(nodes) != 1 or name in others or name == "namespace":  # SimpleNamespace writes `namespace(a=1)`
            continue
        node = nodes[0]
        if node.decorator_list:
            continue
        defined: set[str] = set()
        for statement in node.body:
            if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
                defined.add(statement.name)
            elif isinstance(statement, ast.Assign | ast.AnnAssign):
                targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
                if not all(isinstance(t, ast.Name) for t in targets):
                    break
                defined.update(t.id for t in targets)  # type: ignore[attr-defined]
            elif not isinstance(statement, ast.Expr | ast.Pass):
                break
        else:
            if not defined & _ATTRIBUTE_HOOKS:
                own[name] = (node, frozenset(defined))
    found: dict[str, frozenset[str]] = {}

    def resolve(name: str, seen: frozenset[str]) -> frozenset[str] | None:
        if name in found:
            return found[name]
        if name not in own or name in seen:
            return None
        node, defined = own[name]
        for base in node.bases:
            assert isinstance(base, ast.Name)
            inherited = resolve(base.id, seen | {name})
            if inherited is None:
                return None
            defined |= inherited
        found[name] = defined
        return defined

    for name in own:
        resolve(name, frozenset())
    return found


@dataclass(frozen=True)
class AttributeUpdate:
    """A line that only sets one attribute of an object held by a variable, or appends to a list one
    attribute holds (see attribute_updates)."""

    owner: str  # the variable holding the object
    attribute: str
    kind: str  # "set" (`OWNER.ATTR = EXPR`, `OWNER.ATTR op= EXPR`) or "append" (`OWNER.ATTR.append(EXPR)`)
    # the value set or appended; `OWNER.NAME` read in it is the name "OWNER.NAME", whose value the object's
    # field NAME shows (`OWNER.ATTR op= EXPR` is `"OWNER.ATTR" op EXPR`)
    expression: ast.expr
    augmented: bool = False  # `OWNER.ATTR op= EXPR` (in place on a mutable value: the caller refuses one)


class _OwnFields(ast.NodeTransformer):
    """`OWNER.NAME` read -> the name "OWNER.NAME" (not a dunder: a mangled name is stored otherwise)."""

    def __init__(self, owner: str) -> None:
        self.owner = owner

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        if (isinstance(node.value, ast.Name) and node.value.id == self.owner and isinstance(node.ctx, ast.Load)
                and not node.attr.startswith("__")):
            return ast.copy_location(ast.Name(id=f"{self.owner}.{node.attr}", ctx=ast.Load()), node)
        return self.generic_visit(node)


def attribute_updates(tree: ast.Module) -> dict[int, AttributeUpdate]:
    """Line -> the update, for lines that hold one statement, on one line, that is `OWNER.ATTR = EXPR`,
    `OWNER.ATTR op= EXPR` or `OWNER.ATTR.append(EXPR)`, with OWNER a variable (not global or nonlocal),
    ATTR no dunder, and EXPR made of variables, OWNER's attributes, operators and builtins
    (values.expression_reads). Where OWNER shows the whole version-3 text of an object of one of
    `plain_classes` (that does not define ATTR), such a line runs no code of the program, and the
    object's text after it is its text before with the one field changed, or added at the end
    (model_backend/grammar/frame.py checks the rest). Empty where `plain_classes` is."""
    if not plain_classes(tree):
        return {}
    bound, shared, starts = program_names(tree)
    found: dict[int, AttributeUpdate] = {}
    for node in ast.walk(tree):
        if node.__class__ not in (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr):
            continue
        assert isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr)
        if node.end_lineno != node.lineno or starts.get(node.lineno) != 1:
            continue
        kind = "set"
        target: ast.expr
        value: ast.expr | None
        if isinstance(node, ast.Expr):
            call = node.value
            if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "append"
                    and len(call.args) == 1 and not call.keywords and not isinstance(call.args[0], ast.Starred)):
                continue
            kind, target, value = "append", call.func.value, call.args[0]
        elif isinstance(node, ast.Assign):
            if len(node.targets) != 1:
                continue
            target, value = node.targets[0], node.value
        else:
            target, value = node.target, node.value
        if (value is None or not isinstance(target, ast.Attribute) or not isinstance(target.value, ast.Name)
                or target.attr.startswith("__") or target.value.id in shared):
            continue
        owner = target.value.id
        if isinstance(node, ast.AugAssign):
            value = ast.BinOp(left=ast.Attribute(value=ast.Name(id=owner, ctx=ast.Load()), attr=target.attr,
                                                 ctx=ast.Load()), op=node.op, right=value)
        expression = _OwnFields(owner).visit(copy.deepcopy(value))
        if not isinstance(expression, ast.expr) or expression_reads(expression, bound) is None:
            continue
        found[node.lineno] = AttributeUpdate(owner, target.attr, kind, expression, isinstance(node, ast.AugAssign))
    return found


# Methods that change a list or a dict in place, by type: on literal values none runs the program's code.
_MUTATORS: dict[type, frozenset[str]] = {
    list: frozenset({"append", "extend", "insert", "pop", "remove", "sort", "reverse", "clear"}),
    dict: frozenset({"update", "pop", "setdefault", "clear", "popitem"}),
}
MUTATOR_NAMES = frozenset().union(*_MUTATORS.values())


def mutation_reprs(statement: ast.stmt, container: str, shown: Mapping[str, str],
                   max_repr: int) -> tuple[str, str | None] | None:
    """For a statement that changes the list or dict `container` shows (mutations:
    `C.method(...)`, `X = C.method(...)`, `C[KEY] = VALUE`, `C[KEY] op= VALUE`, `del C[KEY]`): the
    container's repr after it and, for `X = C.method(...)`, the repr of what the method returns (else
    None), each cut as the tracer cuts it. None where the shown values do not tell: the container cut,
    a set, a builtin that raises, or a name it reads whose repr holds the container's (it may be the
    same object, or hold it, which would make the container hold itself)."""
    parsed = shown_container(shown, container)
    if parsed is None:
        return None
    text, obj = parsed
    if type(obj) not in _MUTATORS:
        return None
    read = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id != container}
    if any(text in shown.get(name, "") for name in read):
        return None
    namespace: dict[str, object] = {**shown, container: Rebuilt(obj)}
    token = STEPS.set([0])
    try:
        result = _mutate(statement, obj, namespace)
    except Exception:  # as in value_of
        return None
    finally:
        STEPS.reset(token)
    if holds_a_set(obj) or holds_a_set(result):
        return None

    def cut(value: object) -> str:
        whole = repr(value)
        return whole if len(whole) <= max_repr else whole[:max_repr] + "..."

    method = isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name)
    return cut(obj), (cut(result) if method else None)


def _mutate(statement: ast.stmt, obj: object, namespace: Mapping[str, object]) -> object:
    """Apply the statement to `obj` (the container rebuilt); what a method called returns, else None."""
    if isinstance(statement, ast.Expr) or isinstance(statement, ast.Assign) and isinstance(statement.targets[0], ast.Name):
        call = statement.value
        assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
        if call.func.attr not in _MUTATORS[type(obj)]:
            raise Unknown
        arguments = [evaluate(a, namespace) for a in call.args]
        keywords = {k.arg: evaluate(k.value, namespace) for k in call.keywords}
        if None in keywords or (keywords and call.func.attr not in ("sort", "update")):
            raise Unknown
        if call.func.attr == "sort" and (set(keywords) - {"reverse"} or arguments):
            raise Unknown  # a key function: the program's code
        return plain_value(getattr(obj, call.func.attr)(*arguments, **keywords))  # type: ignore[arg-type]
    if isinstance(statement, ast.Delete):
        (target,) = statement.targets
        assert isinstance(target, ast.Subscript)
        del obj[_key(target.slice, namespace)]  # type: ignore[attr-defined]
        return None
    assert isinstance(statement, ast.Assign | ast.AugAssign)
    target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
    assert isinstance(target, ast.Subscript)
    key = _key(target.slice, namespace)
    value = evaluate(statement.value, namespace)
    if isinstance(statement, ast.AugAssign):
        value = plain_value(ARITHMETIC[type(statement.op)](obj[key], value))  # type: ignore[index]
    obj[key] = value  # type: ignore[index]
    plain_value(obj)
    return None


def _key(index: ast.expr, namespace: Mapping[str, object]) -> object:
    if isinstance(index, ast.Slice):
        return slice(*(None if b is None else as_int(evaluate(b, namespace)) for b in (index.lower, index.upper, index.step)))
    return evaluate(index, namespace)
