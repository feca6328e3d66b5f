"""Parameters of the entry call whose objects stay as they were for as long as its frame lives.

The entry call `f([[...], ...], {...})` passes literals: new objects that nothing but `f`'s parameters can
reach. Follow where `f`'s statements take those objects (a flow analysis of the def's source, never run):
a name can hold one of the parameter's objects at some depth (`row = rows[0]`: depth 1) or a new container
holding such objects (`rest = rows[1:]`). A statement that changes such an object in place (`row.append`,
`rows[0] = ...`) changes the parameter; one that hands such objects to other code (a call of the program,
an attribute or item store in an object it does not own) lets that code reach them, from their depth down.
A parameter is sealed when no statement changes it and every object that other code can reach is of an
immutable type, which the entry's literal tells (`[['book', 1]]` passed on from depth 2: strings and
numbers). Its value then stays what the frame showed at every stop of the entry frame.

The analysis holds where builtins run no code of the program on those objects: no class of the program
defines an operator, comparison, hash or container method (anything but `__init__`, `__post_init__`,
`__repr__` and `__str__`) or a metaclass, and no builtin it relies on is bound again by the program.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from model_backend import safe_ast
from model_backend.grammar.calls import _sole_definitions

Flow = tuple[str, int, bool]  # (parameter, depth, whether the object itself or a new container holding it)

_VALUE_BUILTINS = frozenset({"len", "str", "repr", "int", "float", "bool", "abs", "round", "isinstance", "print",
                             "any", "all", "hash", "ord", "chr", "format", "id", "divmod", "ascii", "bin",
                             "hex", "oct", "range"})
_ELEMENT_BUILTINS = frozenset({"min", "max", "next", "sum"})  # (a sum of lists holds their elements: shallower)
_HOLDING_BUILTINS = frozenset({"list", "tuple", "set", "frozenset", "sorted", "reversed", "iter", "dict"})
# Builtins and methods whose results are new tuples of the elements: an iteration's variable is such a tuple,
# counted as the container itself (shallower, so the analysis stays on the safe side) and its unpacked
# parts as the elements
_PAIRING_BUILTINS = frozenset({"enumerate", "zip"})
_QUIET_KEYWORDS = frozenset({"reverse", "sep", "end", "start", "strict"})
_ELEMENT_METHODS = frozenset({"get"})
_HOLDING_METHODS = frozenset({"keys", "values", "copy"})
_PAIRING_METHODS = frozenset({"items", "most_common"})
_VALUE_METHODS = frozenset({"count", "index", "startswith", "endswith", "find", "rfind", "split", "rsplit", "strip",
                            "lstrip", "rstrip", "lower", "upper", "title", "capitalize", "replace", "join",
                            "format", "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower",
                            "partition", "rpartition", "splitlines", "zfill", "ljust", "rjust", "center",
                            "encode", "casefold", "removeprefix", "removesuffix", "swapcase", "isdecimal"})
_FILLING_METHODS = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "appendleft",
                              "extendleft"})
_QUIET_DUNDERS = frozenset({"__init__", "__post_init__", "__slots__", "__repr__", "__str__", "__doc__"})
_NEW_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp, ast.JoinedStr,
                   ast.Constant)
_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _inner(flows: Iterable[Flow]) -> set[Flow]:
    """What an element of these values is: one level deeper for the objects, the held objects for a container."""
    return {(p, d + 1, True) if alias else (p, d, True) for p, d, alias in flows}


def _holding(flows: Iterable[Flow]) -> set[Flow]:
    """A new container of these values' elements."""
    return {(p, d + 1, False) if alias else (p, d, False) for p, d, alias in flows}


def _held(flows: Iterable[Flow]) -> set[Flow]:
    """A new container holding these values themselves."""
    return {(p, d, False) for p, d, _ in flows}


class _Flows:
    """One pass over the def's statements: where the parameters' objects go (`names`), which parameters a
    statement changes (`changed`), and from which depth other code can reach each one's objects (`escape`)."""

    def __init__(self, parameters: Iterable[str], owned: set[str], builtins: frozenset[str]) -> None:
        self.names: dict[str, set[Flow]] = {p: {(p, 0, True)} for p in parameters}
        self.owned, self.builtins = owned, builtins
        self.changed: set[str] = set()
        self.escape: dict[str, int] = {}

    def bind(self, target: ast.expr, flows: set[Flow]) -> None:
        if isinstance(target, ast.Name):
            known = self.names.setdefault(target.id, set())
            known |= flows
        elif isinstance(target, ast.Tuple | ast.List):
            for element in target.elts:
                if isinstance(element, ast.Starred):
                    self.bind(element.value, _holding(flows))
                else:
                    self.bind(element, _inner(flows))
        elif isinstance(target, ast.Starred):
            self.bind(target.value, _holding(flows))
        elif isinstance(target, ast.Subscript | ast.Attribute):
            self.store_into(target.value, flows | self.value(target.slice) if isinstance(target, ast.Subscript) else flows,
                            isinstance(target, ast.Subscript))

    def store_into(self, container: ast.expr, flows: set[Flow], item: bool) -> None:
        """`container[k] = v` (item) or `container.a = v`: v's objects go into the container."""
        held = self.value(container)
        self.mutate(held)
        if item and isinstance(container, ast.Name) and container.id in self.owned:
            self.names[container.id] = self.names.get(container.id, set()) | _held(flows)
        else:
            self.hand_over(flows)

    def mutate(self, flows: Iterable[Flow]) -> None:
        self.changed.update(p for p, _, alias in flows if alias)

    def hand_over(self, flows: Iterable[Flow]) -> None:
        for p, d, _ in flows:
            self.escape[p] = min(self.escape.get(p, d), d)

    def value(self, node: ast.expr | None) -> set[Flow]:
        """The flows of an expression's value; the effects of the calls inside it are recorded."""
        if node is None or isinstance(node, ast.Constant):
            return set()
        if isinstance(node, ast.Name):
            return set(self.names.get(node.id, ()))
        if isinstance(node, ast.Subscript):
            base = self.value(node.value)
            self.value(node.slice)  # a key is only read
            return _holding(base) if isinstance(node.slice, ast.Slice) else _inner(base)
        if isinstance(node, ast.Slice):
            for part in (node.lower, node.upper, node.step):
                self.value(part)
            return set()
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            flows: set[Flow] = set()
            for element in node.elts:
                flows |= _holding(self.value(element.value)) if isinstance(element, ast.Starred) else _held(self.value(element))
            return flows
        if isinstance(node, ast.Dict):
            pairs: set[Flow] = set()
            for key, item in zip(node.keys, node.values, strict=True):
                pairs |= _held(self.value(key)) | (_held(self.value(item)) if key is not None else _holding(self.value(item)))
            return pairs
        if isinstance(node, ast.BinOp):
            return _holding(self.value(node.left) | self.value(node.right))
        if isinstance(node, ast.BoolOp):
            return set().union(*(self.value(v) for v in node.values))
        if isinstance(node, ast.IfExp):
            self.value(node.test)
            return self.value(node.body) | self.value(node.orelse)
        if isinstance(node, ast.NamedExpr):
            flows = self.value(node.value)
            self.bind(node.target, flows)
            return flows
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            for generator in node.generators:
                self.bind(generator.target, _inner(self.value(generator.iter)))
                for condition in generator.ifs:
                    self.value(condition)
            if isinstance(node, ast.DictComp):
                return _held(self.value(node.key) | self.value(node.value))
            return _held(self.value(node.elt))
        if isinstance(node, ast.Lambda):
            self.closure(node)
            return set()
        if isinstance(node, ast.Attribute):  # a bound method (`rows.append`) may be called later
            held = self.value(node.value)
            self.mutate(held)
            self.hand_over(held)
            return set()
        if isinstance(node, ast.Await | ast.Yield | ast.YieldFrom):
            self.hand_over(self.value(node.value))
            return set()
        for child in ast.iter_child_nodes(node):  # Compare, UnaryOp, JoinedStr, FormattedValue, Starred
            if isinstance(child, ast.expr):
                self.value(child)
        return set()

    def call(self, node: ast.Call) -> set[Flow]:
        arguments = [self.value(a.value if isinstance(a, ast.Starred) else a) for a in node.args]
        keywords = {k.arg: self.value(k.value) for k in node.keywords}
        passed = set().union(*arguments, *keywords.values())
        quiet = all(k in _QUIET_KEYWORDS for k in keywords)
        func = node.func
        if isinstance(func, ast.Name) and func.id in self.builtins and quiet:
            if func.id in _VALUE_BUILTINS:
                return set()
            if func.id in _ELEMENT_BUILTINS:
                return _inner(passed) if func.id != "next" or len(node.args) < 2 else _inner(arguments[0]) | arguments[1]
            if func.id in _HOLDING_BUILTINS:
                return _holding(passed)
            if func.id in _PAIRING_BUILTINS:
                return _held(passed)
        if isinstance(func, ast.Attribute):
            receiver = self.value(func.value)
            constant = isinstance(func.value, ast.Constant | ast.JoinedStr)
            if func.attr in _VALUE_METHODS and (receiver or constant or not passed) and quiet:
                return set()
            if func.attr in _ELEMENT_METHODS and receiver and quiet:
                return _inner(receiver) | passed
            if func.attr in _HOLDING_METHODS and receiver and quiet:
                return _holding(receiver)
            if func.attr in _PAIRING_METHODS and receiver and quiet:
                return _held(receiver)
            if func.attr in _FILLING_METHODS and isinstance(func.value, ast.Name) and func.value.id in self.owned:
                self.names[func.value.id] = self.names.get(func.value.id, set()) | _held(passed) | _holding(passed)
                return set()
            self.mutate(receiver)  # any other method may change its object, or hand it on
            self.hand_over(receiver)
        else:
            self.value(func)
        self.hand_over(passed)
        return set()

    def closure(self, node: ast.AST) -> None:
        """A nested def, lambda or class: what it names of these objects, it may change or hand on later."""
        for part in ast.walk(node):
            if isinstance(part, ast.Name) and part.id in self.names:
                self.mutate(self.names[part.id])
                self.hand_over(self.names[part.id])

    def statements(self, body: Iterable[ast.stmt]) -> None:
        for statement in body:
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Assign):
            flows = self.value(node.value)
            for target in node.targets:
                self.bind(target, flows)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.bind(node.target, self.value(node.value))
        elif isinstance(node, ast.AugAssign):
            flows = self.value(node.value)
            if isinstance(node.target, ast.Name):
                before = self.names.get(node.target.id, set())
                self.mutate(before)  # `rows += ...` changes a list in place
                if node.target.id not in self.owned and not before:
                    self.hand_over(flows)
                self.bind(node.target, _held(flows) | before)
            else:
                self.bind(node.target, flows)
        elif isinstance(node, ast.For | ast.AsyncFor):
            self.bind(node.target, _inner(self.value(node.iter)))
            self.statements(node.body)
            self.statements(node.orelse)
        elif isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Subscript | ast.Attribute):
                    self.mutate(self.value(target.value))
        elif isinstance(node, ast.With | ast.AsyncWith):
            for item in node.items:
                flows = self.value(item.context_expr)
                self.hand_over(flows)  # its __enter__ and __exit__ run
                if item.optional_vars is not None:
                    self.bind(item.optional_vars, flows)
            self.statements(node.body)
        elif isinstance(node, _NESTED_SCOPES):
            self.closure(node)
        elif isinstance(node, ast.Match):  # its patterns bind parts of the subject
            held = self.value(node.subject)
            self.mutate(held)
            self.hand_over(held)
            for case in node.cases:
                if case.guard is not None:
                    self.value(case.guard)
                self.statements(case.body)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                self.hand_over(self.names.get(name, ()))
        else:  # if, while, try, match, return, raise, assert, expressions
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    self.value(child)
                elif isinstance(child, ast.stmt):
                    self.statement(child)
                elif isinstance(child, ast.excepthandler):
                    for part in ast.iter_child_nodes(child):
                        if isinstance(part, ast.stmt):
                            self.statement(part)
                        elif isinstance(part, ast.expr):
                            self.value(part)


def _quiet_classes(tree: ast.Module) -> bool:
    """No class of the program runs code where builtins meet its instances (see the module's docstring)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            if node.keywords:
                return False
            for statement in node.body:
                names = ([statement.name] if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef) else
                         [t.id for t in statement.targets if isinstance(t, ast.Name)] if isinstance(statement, ast.Assign)
                         else [])
                if any(n.startswith("__") and n.endswith("__") and n not in _QUIET_DUNDERS for n in names):
                    return False
    return True


def _new_container_names(function: ast.FunctionDef) -> set[str]:
    """Names that every binding in the def gives a new container (a display, a comprehension, a holding
    builtin's result, the `*rest` of an unpacking) or an `op=` result: no other code holds their objects
    until the def hands them on."""
    fresh_targets: set[int] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None and (
                isinstance(node.value, _NEW_CONTAINERS) or (isinstance(node.value, ast.Call)
                                                             and isinstance(node.value.func, ast.Name)
                                                             and node.value.func.id in _HOLDING_BUILTINS)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            fresh_targets.update(id(t) for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AugAssign):
            fresh_targets.add(id(node.target))
        elif isinstance(node, ast.Starred) and isinstance(node.value, ast.Name) and isinstance(node.value.ctx, ast.Store):
            fresh_targets.add(id(node.value))
    fresh: set[str] = set()
    other: set[str] = {a.arg for a in ast.walk(function) if isinstance(a, ast.arg)}
    for node in ast.walk(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            (fresh if id(node) in fresh_targets else other).add(node.id)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            other.add(node.name)
        elif isinstance(node, ast.alias):
            other.add((node.asname or node.name).split(".")[0])
    return fresh - other


def _mutable_depth(value: object, depth: int = 0) -> int:
    """The deepest level of a literal's value that holds a list, dict or set (-1: none)."""
    deepest = depth if isinstance(value, list | dict | set) else -1
    children = (list(value.keys()) + list(value.values()) if isinstance(value, dict)
                else list(value) if isinstance(value, list | tuple | set | frozenset) else [])
    return max([deepest, *(_mutable_depth(child, depth + 1) for child in children)])


def _entry_values(function: ast.FunctionDef, entry: str) -> dict[str, object] | None:
    """Parameter -> the literal the entry call passes it; None where the call does not pass only literals."""
    call = safe_ast.parse(entry, mode="eval").body
    if not isinstance(call, ast.Call):
        return None
    try:
        positional = [ast.literal_eval(a) for a in call.args if not isinstance(a, ast.Starred)]
        keywords = {k.arg: ast.literal_eval(k.value) for k in call.keywords}
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if len(positional) != len(call.args) or None in keywords:
        return None
    names = [a.arg for a in [*function.args.posonlyargs, *function.args.args]]
    values: dict[str, object] = dict(zip(names, positional, strict=False))
    values.update({k: v for k, v in keywords.items() if k is not None})
    return values


def sealed_parameters(tree: ast.Module, entry: str | None, function_name: str | None, bound: set[str],
                      dynamic: bool) -> frozenset[str]:
    """The entry function's parameters whose objects stay unchanged while its frame lives (the module's
    docstring): `function_name` the entry call's function (objects.entry_function), `bound` every name the
    program binds (a builtin bound again is not trusted)."""
    if dynamic or entry is None or function_name is None or not _quiet_classes(tree):
        return frozenset()
    function = _sole_definitions(tree).get(function_name)
    if not isinstance(function, ast.FunctionDef) or function not in tree.body:
        return frozenset()
    if any(isinstance(n, ast.Yield | ast.YieldFrom | ast.Await) for n in ast.walk(function)) or function.decorator_list:
        return frozenset()
    try:
        values = _entry_values(function, entry)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return frozenset()
    if values is None:
        return frozenset()
    builtins = (_VALUE_BUILTINS | _ELEMENT_BUILTINS | _HOLDING_BUILTINS | _PAIRING_BUILTINS) - bound
    owned = _new_container_names(function)
    flows = _Flows(values, owned, frozenset(builtins))
    for _ in range(12):  # until the names' flows stop growing
        before = {name: set(f) for name, f in flows.names.items()}
        flows.statements(function.body)
        if flows.names == before:
            break
    else:
        return frozenset()
    return frozenset(p for p, value in values.items()
                     if p not in flows.changed and _mutable_depth(value) < flows.escape.get(p, 1 << 30))
