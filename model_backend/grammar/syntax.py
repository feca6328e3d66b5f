"""Readings of a program's syntax tree that the grammar's families share.

The lines a statement spans and runs before its body (`line_span`, `header_lines`, `except_lines`,
`statements_per_line`), which code can suspend (`suspends`, `is_generator_def`, `suspending_functions`),
the names a statement binds (`header_parts`, `names_bound`, `bound_names`, `shared_names`; the
three most rules read first: `program_names`), which statements carry a value or bind names
(`statements_with_a_value`, `statements_binding_names`), which expressions call nothing and change
nothing (`inert_expression`, `reads_only`), literals shown as their repr (`immutable_literal`), and a
few guards (`defines_a_class`, `may_print_a_container`, `as_operation`). Derived from the source text alone, never by running it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from model_backend.tracer import safe_repr

Lines = frozenset[int]
EMPTY: Lines = frozenset()
LOOP_NODES = (ast.For, ast.AsyncFor, ast.While)
SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Module)
BLOCKS = ("body", "orelse", "handlers", "finalbody", "cases")


def line_span(first: int, last: int | None) -> Lines:
    return frozenset(range(first, (last if last is not None and last >= first else first) + 1))


def header_lines(node: ast.stmt) -> Lines:
    """The lines of a statement that run before its body: all of a simple statement, a compound one's
    first lines up to its body (decorators included)."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    body = getattr(node, "body", None)
    if isinstance(node, ast.Try | ast.TryStar):
        return frozenset({node.lineno})
    if isinstance(body, list) and body:
        return line_span(first, max(node.lineno, body[0].lineno - 1))
    if isinstance(node, ast.Match):
        return line_span(first, node.subject.end_lineno)
    return line_span(first, node.end_lineno)


def first_line(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> int:
    """The first line of a def's or class's code: its first decorator's, else its `def`'s or `class`'s
    (where a frame of it starts, with a call event)."""
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def suspends(node: ast.AST) -> bool:
    """Whether the node's own code can yield or await: a nested def, lambda or class counts only for the
    parts that run where it stands (decorators, defaults, bases), not for its body."""
    todo: list[ast.AST] = [node]
    while todo:
        current = todo.pop()
        if isinstance(current, ast.Yield | ast.YieldFrom | ast.Await):
            return True
        if isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            todo.extend(header_parts(current))
        elif isinstance(current, ast.Lambda):
            todo.append(current.args)
        else:
            todo.extend(ast.iter_child_nodes(current))
    return False


def is_generator_def(node: ast.AST) -> bool:
    """A def whose own body can yield or await: calling it makes a generator or coroutine, not a frame."""
    return isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and any(suspends(st) for st in node.body)


def suspending_functions(tree: ast.Module) -> frozenset[str]:
    """Code names whose frames can yield or await: generator and coroutine defs, generator expressions."""
    names = {node.name for node in ast.walk(tree)
             if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and is_generator_def(node)}
    if any(isinstance(node, ast.GeneratorExp) for node in ast.walk(tree)):
        names.add("<genexpr>")
    return frozenset(names)


def statements_per_line(tree: ast.Module) -> dict[int, int]:
    """Line -> how many statements start on it (more than one: `a = 1; b = 2`)."""
    starts: dict[int, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt):
            starts[node.lineno] = starts.get(node.lineno, 0) + 1
    return starts


def except_lines(handler: ast.ExceptHandler) -> Lines:
    """The lines of an `except E as e:` clause, which it tests (and binds `e`) on."""
    return line_span(handler.lineno, handler.type.end_lineno if handler.type else handler.lineno)


# ---- which names one step can bind ---------------------------------------------------------------

_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def header_parts(node: ast.stmt) -> list[ast.AST]:
    """The parts of a statement that its header's lines run (a compound statement's body runs later)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return [*node.decorator_list, node.args, *([node.returns] if node.returns else [])]
    if isinstance(node, ast.ClassDef):
        return [*node.decorator_list, *node.bases, *node.keywords]
    if isinstance(node, ast.If | ast.While):
        return [node.test]
    if isinstance(node, ast.For | ast.AsyncFor):
        return [node.target, node.iter]
    if isinstance(node, ast.With | ast.AsyncWith):
        return list(node.items)
    if isinstance(node, ast.Try | ast.TryStar):
        return []
    if isinstance(node, ast.Match):
        return [node.subject]
    return [node]


def names_bound(parts: list[ast.AST]) -> set[str]:
    """Names these parts bind in the frame that runs them: assignment targets, imports, `as` names,
    capture patterns, and := targets (which leave a comprehension for the scope around it)."""
    names: set[str] = set()
    todo = list(parts)
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
        if isinstance(node, _NESTED_SCOPES):
            continue  # a def's or lambda's own names are its frame's (its defaults were listed as parts)
        if isinstance(node, _COMPREHENSIONS):
            names.update(n.target.id for n in ast.walk(node) if isinstance(n, ast.NamedExpr) and isinstance(n.target, ast.Name))
            continue
        todo.extend(ast.iter_child_nodes(node))
    return names


def shared_names(tree: ast.Module) -> frozenset[str]:
    """Names that code elsewhere can rebind during any call: those declared `global` or `nonlocal`."""
    return frozenset(n for node in ast.walk(tree) if isinstance(node, ast.Global | ast.Nonlocal) for n in node.names)


# Expression nodes whose evaluation, on values of the builtin types alone, runs no code of the program
# and changes no object: displays, operators, comparisons, indexing, f-strings. Calls, attributes,
# comprehensions, `*`/`**` unpacking, lambdas, `:=`, yield and await are left out.
_INERT_NODES = (ast.Constant, ast.Name, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.BinOp, ast.UnaryOp, ast.BoolOp,
                ast.Compare, ast.IfExp, ast.Subscript, ast.Slice, ast.JoinedStr, ast.FormattedValue,
                ast.expr_context, ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


def defines_a_class(tree: ast.Module) -> bool:
    """Whether the program defines a class whose instances may run the program's code where builtins run:
    in an operator, a comparison, a hash, a repr or str, iteration, truth, or an attribute read. A plain
    class does not (`plain_class`), and a program whose classes are all plain reads like one without
    classes: its instances' operators, comparisons and reprs are Python's own (or a dataclass's, which
    compare and write fields and run no line of the program), and calling the class runs its `__init__`
    as any call of a function of the program does."""
    classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    names = {node.name for node in classes}
    return any(not plain_class(node, names) for node in classes)


# Bases whose instances run no code of the program's behind operators: the program's plain classes, and
# these (exceptions, named tuples, enums and ABCs use only the standard library's own machinery).
_PLAIN_BASES = frozenset({"object", "Exception", "ValueError", "KeyError", "IndexError", "TypeError",
                          "RuntimeError", "LookupError", "ArithmeticError", "NamedTuple", "Enum", "IntEnum",
                          "StrEnum", "Flag", "IntFlag", "ABC"})
# Dunder names a plain class may define: its construction (which runs as a call of the program's code
# anyway) and its fields.
_PLAIN_DUNDERS = frozenset({"__init__", "__post_init__", "__slots__"})
_PLAIN_DECORATORS = frozenset({"dataclass", "staticmethod", "classmethod", "abstractmethod"})


def plain_class(node: ast.ClassDef, program_classes: set[str]) -> bool:
    """A class with no code of its own behind Python's operators: no dunder method but `__init__` and
    `__post_init__`, no property or other descriptor, no metaclass, no decorator but `dataclass` (and
    `staticmethod`, `classmethod`, `abstractmethod` on methods), bases among the program's own classes and
    _PLAIN_BASES, and a body of methods, docstrings, nested plain classes and fields whose values call
    nothing, or are a dataclass's `field(...)`."""
    def named(expr: ast.expr, allowed: frozenset[str] | set[str]) -> bool:
        target = expr.func if isinstance(expr, ast.Call) else expr
        name = target.id if isinstance(target, ast.Name) else target.attr if isinstance(target, ast.Attribute) else None
        return name in allowed

    if node.keywords or not all(named(base, _PLAIN_BASES | program_classes) and not isinstance(base, ast.Call)
                                for base in node.bases):
        return False
    if not all(named(d, {"dataclass"}) for d in node.decorator_list):
        return False
    for statement in node.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef):
            dunder = statement.name.startswith("__") and statement.name.endswith("__")
            if (dunder and statement.name not in _PLAIN_DUNDERS) or not all(
                    named(d, _PLAIN_DECORATORS) and not isinstance(d, ast.Call) for d in statement.decorator_list):
                return False
        elif isinstance(statement, ast.Assign | ast.AnnAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if not all(isinstance(t, ast.Name) and (not t.id.startswith("__") or t.id in _PLAIN_DUNDERS) for t in targets):
                return False
            value = statement.value  # a dataclass's `field(...)` (its factory runs as part of construction)
            if value is not None and not (isinstance(value, ast.Call) and named(value, {"field"})) and any(
                    isinstance(n, ast.Lambda | ast.Call) for n in ast.walk(value)):
                return False
        elif not isinstance(statement, ast.Expr | ast.Pass | ast.ClassDef) or (
                isinstance(statement, ast.Expr) and not isinstance(statement.value, ast.Constant)):
            return False
    return True


def inert_expression(node: ast.AST) -> bool:
    for part in ast.walk(node):
        if not isinstance(part, _INERT_NODES):
            return False
        if isinstance(part, ast.Name | ast.Subscript | ast.List | ast.Tuple) and not isinstance(part.ctx, ast.Load):
            return False
        if isinstance(part, ast.Dict) and None in part.keys:  # `{**other}`
            return False
    return True


# A parameter's value at a call event, known from the calling line: ("name", the caller's variable whose
# value it receives) or ("literal", the literal's repr); None where the line does not tell.
ArgumentSource = tuple[str, str] | None


def immutable_literal(node: ast.expr | None, max_repr: int) -> str | None:
    """The repr of a literal whose object cannot change (numbers, strings, bytes, bools, None, tuples of
    them), as the tracer shows it; None for anything else (a mutable default may have been mutated)."""
    if node is None:
        return None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None

    def immutable(v: object) -> bool:
        return isinstance(v, int | float | complex | str | bytes | type(None)) or (
            isinstance(v, tuple) and all(immutable(x) for x in v))

    return safe_repr(value, max_repr) if immutable(value) else None


def statements_with_a_value(tree: ast.Module) -> Iterator[ast.Assign | ast.AnnAssign | ast.Expr | ast.Return]:
    """`x = v`, `x: T = v`, `v` alone and `return v` statements that stand alone on one line."""
    starts = statements_per_line(tree)
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign | ast.AnnAssign | ast.Expr | ast.Return) and node.value is not None
                and node.lineno == node.end_lineno and starts.get(node.lineno) == 1):
            yield node


def statements_binding_names(tree: ast.Module) -> Iterator[ast.Assign | ast.AnnAssign | ast.Expr | ast.Return]:
    """Those of statements_with_a_value whose targets, if any, are plain names."""
    for node in statements_with_a_value(tree):
        if isinstance(node, ast.Assign) and not all(isinstance(t, ast.Name) for t in node.targets):
            continue
        if isinstance(node, ast.AnnAssign) and not isinstance(node.target, ast.Name):
            continue
        yield node


def as_operation(node: ast.AugAssign) -> ast.BinOp:
    """`NAME op= VALUE` as the expression it binds: `NAME op VALUE`."""
    assert isinstance(node.target, ast.Name)
    return ast.BinOp(left=ast.Name(id=node.target.id, ctx=ast.Load()), op=node.op, right=node.value)


# Builtins that read their arguments and change none of them (given values of the builtin types).
READING_BUILTINS = frozenset({"len", "print", "sum", "min", "max", "sorted", "str", "repr", "list", "tuple", "set",
                               "frozenset", "any", "all", "enumerate", "zip", "reversed", "abs", "bool", "int",
                               "float", "dict", "isinstance", "type"})


def program_names(tree: ast.Module) -> tuple[set[str], frozenset[str], dict[int, int]]:
    """What most rules read of a program first: `bound_names`, `shared_names` and `statements_per_line`."""
    return bound_names(tree), shared_names(tree), statements_per_line(tree)


def bound_names(tree: ast.Module) -> set[str]:
    """Every name the program binds anywhere (so a builtin's name it binds may not be the builtin)."""
    return ({n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
            | {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
            | {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
            | {(a.asname or a.name).split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)
               for a in n.names})


def may_print_a_container(tree: ast.Module) -> bool:
    """Whether an object of the program's own could print like a list (a class with a base, or a
    `__repr__` or `__iter__` of its own), and so be taken for one."""
    return any(isinstance(n, ast.ClassDef) and (n.bases or n.keywords) for n in ast.walk(tree)) or any(
        isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in ("__repr__", "__iter__")
        for n in ast.walk(tree))


# Methods that leave the object they are called on as it was, whichever builtin type it has (str, list,
# tuple, dict, set): in a program without classes, the only other objects are the standard library's.
STORE_READING_METHODS = frozenset({
    "count", "index", "find", "rfind", "rindex", "startswith", "endswith", "lower", "upper", "strip", "lstrip",
    "rstrip", "split", "rsplit", "splitlines", "join", "replace", "title", "capitalize", "swapcase", "casefold",
    "zfill", "center", "ljust", "rjust", "partition", "rpartition", "removeprefix", "removesuffix", "isdigit",
    "isalpha", "isalnum", "isspace", "islower", "isupper", "istitle", "isdecimal", "isnumeric", "isidentifier",
    "get", "keys", "values", "items", "copy", "union", "intersection", "difference", "symmetric_difference",
    "issubset", "issuperset", "isdisjoint",
})
STORE_BUILTINS = READING_BUILTINS | {"range", "ord", "chr", "round", "divmod"}
COMPREHENSION_NODES = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def reads_only(node: ast.expr, builtins: frozenset[str], bound: set[str]) -> frozenset[str] | None:
    """The variables an expression reads, where evaluating it on values of the builtin types runs no code
    of the program and changes no object: inert parts (_INERT_NODES), calls of reading builtins and of
    reading methods (STORE_READING_METHODS), and comprehensions over such parts. None for anything else (a
    call of the program's functions, a method that may change its object, `:=`, a lambda, a builtin
    other than a reading one, such as `next`, passed as a value)."""
    reads: set[str] = set()

    def visit(part: ast.AST, hidden: frozenset[str]) -> bool:
        if isinstance(part, COMPREHENSION_NODES):
            for generator in part.generators:
                if generator.is_async or not visit(generator.iter, hidden):
                    return False
                hidden = hidden | {n.id for n in ast.walk(generator.target) if isinstance(n, ast.Name)}
                if not all(isinstance(n, ast.Name | ast.Tuple | ast.List | ast.expr_context) for n in ast.walk(generator.target)):
                    return False
                if not all(visit(condition, hidden) for condition in generator.ifs):
                    return False
            results = [part.key, part.value] if isinstance(part, ast.DictComp) else [part.elt]
            return all(visit(result, hidden) for result in results)
        if isinstance(part, ast.Call):
            func = part.func
            if isinstance(func, ast.Name):
                if func.id not in builtins:
                    return False
            elif not (isinstance(func, ast.Attribute) and func.attr in STORE_READING_METHODS and visit(func.value, hidden)):
                return False
            arguments = [a.value if isinstance(a, ast.Starred) else a for a in part.args]
            return all(visit(a, hidden) for a in [*arguments, *(k.value for k in part.keywords)])
        if not isinstance(part, _INERT_NODES):
            return False
        if isinstance(part, ast.Name | ast.Subscript | ast.List | ast.Tuple) and not isinstance(part.ctx, ast.Load):
            return False
        if isinstance(part, ast.Dict) and None in part.keys:
            return False
        if isinstance(part, ast.Name) and part.id not in hidden:
            if part.id in bound:
                reads.add(part.id)
            elif part.id not in builtins:
                return False
        return all(visit(child, hidden) for child in ast.iter_child_nodes(part))

    return frozenset(reads) if visit(node, frozenset()) else None
