"""Which program constructs a Python source uses, found statically from its `ast` (code is never run).

Contract: `constructs(source)` returns the subset of `CONSTRUCTS` that `source` uses; a source that does
not parse raises `SyntaxError`. Detection is syntactic and name-based, so it approximates: a call
`x.name()` is taken to reach every user-defined method called `name` unless `x` is a module, a literal or a
name or `self` attribute bound to a builtin container. The rules, one per name:

- class_with_repr: a class that defines `__repr__`.
- class_without_repr: an ordinary class (not a dataclass, named tuple, enum or exception) with no
  `__repr__` of its own nor in a user-defined base class.
- dataclass: a class decorated with `dataclass` or `dataclasses.dataclass` (with or without arguments).
- namedtuple: a call of `collections.namedtuple` or a class based on `typing.NamedTuple`.
- inheritance_super: a call of `super()` in a method.
- property_setter: a method decorated with `NAME.setter`.
- closure: a `def` or `lambda` nested in a function that reads a variable of an enclosing function.
- decorator: a function or class decorated with a user-defined function (or a call of one: a factory).
- nonlocal: a `nonlocal` statement.
- generator: a function that contains `yield` or `yield from`.
- generator_pipeline: a generator function fed another generator: a generator function called with a
  generator call or generator expression as an argument (directly or through a name), or a generator
  function that loops over (or delegates to) a call of another generator function.
- custom_exception_caught: an `except` clause that names a user-defined exception class which the
  program raises (or a base of one it raises).
- custom_exception_uncaught: a `raise` of a user-defined exception class in a function, outside the
  body of every `try` with `except` clauses in that function (the exception leaves the function).
- try_except_finally: a `try` statement with both `except` and `finally` clauses.
- recursion: a cycle in the call graph of user functions and methods (a function that calls itself,
  directly or through others); `super().name()` in a method `name` is not one.
- collections_counter, collections_deque, collections_defaultdict, collections_ordereddict: a use of
  `collections.Counter`, `deque`, `defaultdict`, `OrderedDict` (imported under any name).
- itertools, re, json, math: a use of a name from the module (`math.sqrt` or `from math import sqrt`).
- fstring: an f-string with at least one replacement field.
- while_break_continue_else: a `while` loop with an `else` clause, or a `break` or `continue` of its own.
- module_constant: a module-level assignment to an UPPER_CASE name.
- call_depth_3: a chain of at least 3 calls of user functions from the entry function (entry -> a -> b
  -> c: 4 frames, the trace's depth 3), in the call graph by name without repeating a function; a
  class call reaches its `__init__` and `__post_init__`. The entry is the function named in the
  `# entry: NAME(...)` comment; without one, every module-level function is tried.
- state_machine, parser, interpreter, simulation: declared, not syntactic: a comment line
  `# kind: parser, interpreter` (comma separated) anywhere in the source.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterator

from model_backend import safe_ast

CONSTRUCTS: tuple[str, ...] = (
    "class_with_repr",
    "class_without_repr",
    "dataclass",
    "namedtuple",
    "inheritance_super",
    "property_setter",
    "closure",
    "decorator",
    "nonlocal",
    "generator",
    "generator_pipeline",
    "custom_exception_caught",
    "custom_exception_uncaught",
    "try_except_finally",
    "recursion",
    "collections_counter",
    "collections_deque",
    "collections_defaultdict",
    "collections_ordereddict",
    "itertools",
    "re",
    "json",
    "math",
    "fstring",
    "while_break_continue_else",
    "module_constant",
    "call_depth_3",
    "state_machine",
    "parser",
    "interpreter",
    "simulation",
)

KINDS: tuple[str, ...] = ("state_machine", "parser", "interpreter", "simulation")

_ENTRY_RE = re.compile(r"^\s*#\s*entry:\s*(.+?)\s*$", re.MULTILINE)
_KIND_RE = re.compile(r"^\s*#\s*kind:\s*(.+?)\s*$", re.MULTILINE)
_CONSTANT_RE = re.compile(r"^_?[A-Z][A-Z0-9_]*$")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_BUILTIN_EXCEPTIONS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}
_SPECIAL_BASES = {"NamedTuple", "Enum", "IntEnum", "Flag", "IntFlag", "StrEnum", "TypedDict", "Protocol"}
_CONTAINER_CALLS = {
    "list",
    "dict",
    "set",
    "tuple",
    "str",
    "frozenset",
    "bytearray",
    "sorted",
    "reversed",
    "deque",
    "Counter",
    "defaultdict",
    "OrderedDict",
    "enumerate",
    "zip",
    "range",
}
_MODULES = ("collections", "itertools", "re", "json", "math")


def entry_call(source: str) -> str | None:
    """The call expression of the `# entry: NAME(ARGS)` comment, or None."""
    match = _ENTRY_RE.search(source)
    return match.group(1) if match else None


def kinds(source: str) -> set[str]:
    """The kinds declared by `# kind:` comments that are among KINDS."""
    found: set[str] = set()
    for match in _KIND_RE.finditer(source):
        found.update(part.strip() for part in match.group(1).split(","))
    return found & set(KINDS)


def constructs(source: str) -> set[str]:
    """The names in CONSTRUCTS that `source` uses (see the module docstring for each rule)."""
    tree = safe_ast.parse(source)
    return _Analysis(tree, source).run()


def _walk_scope(node: ast.AST) -> Iterator[ast.AST]:
    """The nodes under node's children, not entering nested functions, lambdas or classes."""
    for child in ast.iter_child_nodes(node):
        yield child
        if not isinstance(child, _SCOPES):
            yield from _walk_scope(child)


def _name_of(expr: ast.expr) -> str | None:
    """`name` for `name` or `anything.name`, else None."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    return None


def _is_super_call(func: ast.expr) -> bool:
    """Whether func is `super().name` (or `super(C, self).name`)."""
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and isinstance(func.value.func, ast.Name)
        and func.value.func.id == "super"
    )


def _bound_names(function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> set[str]:
    """Names local to a function: its parameters and what its own body binds."""
    arguments = function.args
    names = {a.arg for a in arguments.posonlyargs + arguments.args + arguments.kwonlyargs}
    names.update(a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None)
    if isinstance(function, ast.Lambda):
        return names
    declared: set[str] = set()
    for node in _walk_scope(function):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.Nonlocal | ast.Global):
            declared.update(node.names)
    return names - declared


class _Analysis:
    def __init__(self, tree: ast.Module, source: str) -> None:
        self.tree = tree
        self.source = source
        self.nodes = list(ast.walk(tree))
        self.classes = {n.name: n for n in self.nodes if isinstance(n, ast.ClassDef)}
        self.functions = [n for n in self.nodes if isinstance(n, _FUNCTIONS)]
        self.module_functions = {n.name for n in tree.body if isinstance(n, _FUNCTIONS)}
        self.imported = self._imports()
        self.generators = {f.name for f in self.functions if self._is_generator(f)}
        self.exceptions = self._exception_classes()

    def run(self) -> set[str]:
        found = kinds(self.source)
        checks = {
            "class_with_repr": self._class_with_repr,
            "class_without_repr": self._class_without_repr,
            "dataclass": lambda: any(self._is_dataclass(c) for c in self.classes.values()),
            "namedtuple": self._namedtuple,
            "inheritance_super": self._super,
            "property_setter": self._property_setter,
            "closure": self._closure,
            "decorator": self._decorator,
            "nonlocal": lambda: any(isinstance(n, ast.Nonlocal) for n in self.nodes),
            "generator": lambda: bool(self.generators),
            "generator_pipeline": self._generator_pipeline,
            "custom_exception_caught": self._exception_caught,
            "custom_exception_uncaught": self._exception_uncaught,
            "try_except_finally": lambda: any(
                isinstance(n, ast.Try | ast.TryStar) and n.handlers and n.finalbody for n in self.nodes
            ),
            "recursion": self._recursion,
            "fstring": lambda: any(
                isinstance(n, ast.JoinedStr) and any(isinstance(v, ast.FormattedValue) for v in n.values)
                for n in self.nodes
            ),
            "while_break_continue_else": self._while,
            "module_constant": self._module_constant,
            "call_depth_3": lambda: self._call_depth() >= 3,
        }
        for name, check in checks.items():
            if check():
                found.add(name)
        used = self._used_module_names()
        for qualified in ("Counter", "deque", "defaultdict", "OrderedDict"):
            if f"collections.{qualified}" in used:
                found.add("collections_" + qualified.lower())
        found.update(module for module in ("itertools", "re", "json", "math") if module in used)
        return found

    # imports and module uses

    def _imports(self) -> dict[str, str]:
        """Local name -> qualified name, for imports of the modules of interest."""
        imported: dict[str, str] = {}
        for node in self.nodes:
            if isinstance(node, ast.Import):
                for alias in node.names:
                    imported[alias.asname or alias.name.split(".")[0]] = (
                        alias.name if alias.asname else alias.name.split(".")[0]
                    )
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                for alias in node.names:
                    imported[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        return imported

    def _used_module_names(self) -> set[str]:
        """Qualified names used (loaded), plus the bare module name for each module used."""
        used: set[str] = set()
        for node in self.nodes:
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                module = self.imported.get(node.value.id)
                if module in _MODULES:
                    used.update({module, f"{module}.{node.attr}"})
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                qualified = self.imported.get(node.id)
                if qualified and "." in qualified:
                    module = qualified.split(".")[0]
                    if module in _MODULES:
                        used.update({module, qualified})
        return used

    def _qualified(self, expr: ast.expr) -> str | None:
        """The qualified name of `name` or `module.name` when it comes from an import."""
        if isinstance(expr, ast.Name):
            return self.imported.get(expr.id)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            module = self.imported.get(expr.value.id)
            return f"{module}.{expr.attr}" if module else None
        return None

    # classes

    def _is_dataclass(self, cls: ast.ClassDef) -> bool:
        for decorator in cls.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if self._qualified(target) == "dataclasses.dataclass":
                return True
        return False

    def _base_names(self, cls: ast.ClassDef) -> list[str]:
        return [name for name in (_name_of(base) for base in cls.bases) if name]

    def _ancestors(self, cls: ast.ClassDef) -> list[ast.ClassDef]:
        """cls and its user-defined ancestors."""
        seen: list[ast.ClassDef] = []
        todo = [cls]
        while todo:
            current = todo.pop()
            if current in seen:
                continue
            seen.append(current)
            todo.extend(self.classes[b] for b in self._base_names(current) if b in self.classes)
        return seen

    def _defines(self, cls: ast.ClassDef, method: str) -> bool:
        return any(isinstance(n, _FUNCTIONS) and n.name == method for n in cls.body)

    def _class_with_repr(self) -> bool:
        return any(self._defines(c, "__repr__") for c in self.classes.values())

    def _class_without_repr(self) -> bool:
        for cls in self.classes.values():
            lineage = self._ancestors(cls)
            if cls.name in self.exceptions or self._is_dataclass(cls):
                continue
            bases = {b for c in lineage for b in self._base_names(c)}
            if bases & _SPECIAL_BASES or any(self._is_dataclass(c) for c in lineage):
                continue
            if not any(self._defines(c, "__repr__") for c in lineage):
                return True
        return False

    def _namedtuple(self) -> bool:
        for node in self.nodes:
            if isinstance(node, ast.Call) and self._qualified(node.func) == "collections.namedtuple":
                return True
            if isinstance(node, ast.ClassDef) and any(
                self._qualified(base) == "typing.NamedTuple" for base in node.bases
            ):
                return True
        return False

    def _super(self) -> bool:
        return any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "super"
            for n in self.nodes
        )

    def _property_setter(self) -> bool:
        return any(
            isinstance(d, ast.Attribute) and d.attr == "setter"
            for f in self.functions
            for d in f.decorator_list
        )

    def _decorator(self) -> bool:
        user = {f.name for f in self.functions} | set(self.classes)
        for node in self.nodes:
            if isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
                for decorator in node.decorator_list:
                    target = decorator.func if isinstance(decorator, ast.Call) else decorator
                    if isinstance(target, ast.Name) and target.id in user:
                        return True
        return False

    # functions

    def _closure(self) -> bool:
        def visit(node: ast.AST, enclosing: list[set[str]]) -> bool:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (*_FUNCTIONS, ast.Lambda)):
                    if enclosing and self._reads_enclosing(child, enclosing):
                        return True
                    if visit(child, [*enclosing, _bound_names(child)]):
                        return True
                elif isinstance(child, ast.ClassDef):
                    if visit(child, enclosing):
                        return True
                elif visit(child, enclosing):
                    return True
            return False

        return visit(self.tree, [])

    @staticmethod
    def _reads_enclosing(
        function: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda, enclosing: list[set[str]]
    ) -> bool:
        local = _bound_names(function)
        outer = set().union(*enclosing)
        body: list[ast.AST] = [function.body] if isinstance(function, ast.Lambda) else list(function.body)
        for statement in body:
            for node in [statement, *ast.walk(statement)]:
                if isinstance(node, ast.Nonlocal) and set(node.names) & outer:
                    return True
                if (
                    isinstance(node, ast.Name)
                    and isinstance(node.ctx, ast.Load)
                    and node.id not in local
                    and node.id in outer
                ):
                    return True
        return False

    @staticmethod
    def _is_generator(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
        return any(isinstance(n, ast.Yield | ast.YieldFrom) for n in _walk_scope(function))

    def _generator_call(self, expr: ast.expr) -> bool:
        return (
            isinstance(expr, ast.Call)
            and _name_of(expr.func) in self.generators
            and not (isinstance(expr.func, ast.Attribute) and self._foreign_receiver(expr.func.value))
        )

    def _generator_pipeline(self) -> bool:
        scopes: list[ast.AST] = [self.tree, *self.functions]
        for scope in scopes:
            fed: set[str] = set()
            for node in _walk_scope(scope):
                if isinstance(node, ast.Assign) and (
                    self._generator_call(node.value) or isinstance(node.value, ast.GeneratorExp)
                ):
                    fed.update(t.id for t in node.targets if isinstance(t, ast.Name))
            for node in _walk_scope(scope):
                if isinstance(node, ast.Call) and self._generator_call(node):
                    for arg in [*node.args, *(k.value for k in node.keywords)]:
                        if self._generator_call(arg) or isinstance(arg, ast.GeneratorExp):
                            return True
                        if isinstance(arg, ast.Name) and arg.id in fed:
                            return True
            if isinstance(scope, _FUNCTIONS) and scope.name in self.generators:
                for node in _walk_scope(scope):
                    source = (
                        node.iter
                        if isinstance(node, ast.For)
                        else node.value
                        if isinstance(node, ast.YieldFrom)
                        else None
                    )
                    if source is not None and (
                        self._generator_call(source) or (isinstance(source, ast.Name) and source.id in fed)
                    ):
                        return True
        return False

    # exceptions

    def _exception_classes(self) -> set[str]:
        found: set[str] = set()
        changed = True
        while changed:
            changed = False
            for cls in self.classes.values():
                if cls.name in found:
                    continue
                if any(b in found or b in _BUILTIN_EXCEPTIONS for b in self._base_names(cls)):
                    found.add(cls.name)
                    changed = True
        return found

    def _raised_class(self, node: ast.Raise) -> str | None:
        if node.exc is None:
            return None
        target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        name = _name_of(target)
        return name if name in self.exceptions else None

    def _exception_caught(self) -> bool:
        raised = {name for n in self.nodes if isinstance(n, ast.Raise) and (name := self._raised_class(n))}
        catchable = {a.name for r in raised for a in self._ancestors(self.classes[r])}
        for node in self.nodes:
            if isinstance(node, ast.ExceptHandler) and node.type is not None:
                types = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
                if any(_name_of(t) in catchable for t in types):
                    return True
        return False

    def _exception_uncaught(self) -> bool:
        def visit(node: ast.AST, guarded: bool) -> bool:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, _SCOPES):
                    continue
                if isinstance(child, ast.Raise) and not guarded and self._raised_class(child):
                    return True
                if isinstance(child, ast.Try | ast.TryStar) and child.handlers:
                    inside = ast.Module(body=child.body, type_ignores=[])
                    if visit(inside, True):
                        return True
                    rest = [*child.handlers, *child.orelse, *child.finalbody]
                    if any(visit(part, guarded) for part in rest):
                        return True
                    continue
                if visit(child, guarded):
                    return True
            return False

        return any(visit(function, False) for function in self.functions)

    # control flow and module level

    def _while(self) -> bool:
        def own_jump(node: ast.AST) -> bool:
            """A break or continue under node that belongs to the loop around node."""
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.Break | ast.Continue):
                    return True
                if isinstance(child, _SCOPES):
                    continue
                if isinstance(child, ast.For | ast.AsyncFor | ast.While):
                    if any(own_jump(part) for part in child.orelse):
                        return True
                    continue
                if own_jump(child):
                    return True
            return False

        return any(
            isinstance(n, ast.While)
            and (bool(n.orelse) or own_jump(ast.Module(body=n.body, type_ignores=[])))
            for n in self.nodes
        )

    def _module_constant(self) -> bool:
        for statement in self.tree.body:
            targets: list[ast.expr] = []
            if isinstance(statement, ast.Assign):
                targets = statement.targets
            elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
                targets = [statement.target]
            for target in targets:
                names = target.elts if isinstance(target, ast.Tuple) else [target]
                if any(isinstance(n, ast.Name) and _CONSTANT_RE.match(n.id) for n in names):
                    return True
        return False

    # the call graph

    def _container_names(self, scope: ast.AST) -> set[str]:
        """Names (and `self.x` attributes, as "self.x") bound in scope to builtin values."""
        names: set[str] = set()
        for node in _walk_scope(scope):
            value: ast.expr | None = None
            targets: list[ast.expr] = []
            if isinstance(node, ast.Assign):
                value, targets = node.value, node.targets
            elif isinstance(node, ast.AnnAssign):
                value, targets = node.value, [node.target]
            if value is None or not self._builtin_value(value):
                continue
            for target in targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
                elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
                    names.add(f"{target.value.id}.{target.attr}")
        return names

    def _builtin_value(self, value: ast.expr) -> bool:
        if isinstance(
            value,
            ast.List
            | ast.Dict
            | ast.Set
            | ast.Tuple
            | ast.ListComp
            | ast.DictComp
            | ast.SetComp
            | ast.Constant
            | ast.JoinedStr,
        ):
            return True
        if isinstance(value, ast.Call):
            name = _name_of(value.func)
            if name == "field":
                return any(k.arg == "default_factory" for k in value.keywords)
            return name in _CONTAINER_CALLS
        return False

    def _foreign_receiver(self, receiver: ast.expr, containers: frozenset[str] = frozenset()) -> bool:
        """Whether a method call on receiver surely is not a user method."""
        if isinstance(receiver, ast.Constant | ast.JoinedStr | ast.List | ast.Dict | ast.Set | ast.Tuple):
            return True
        if isinstance(receiver, ast.Name):
            return receiver.id in self.imported or receiver.id in containers
        if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name):
            return f"self.{receiver.attr}" in containers and receiver.value.id == "self"
        return False

    def _call_graph(self) -> dict[str, set[str]]:
        """Function name -> names of the user functions it may call (methods under their own name)."""
        defined = {f.name for f in self.functions}
        class_containers: dict[str, set[str]] = {}
        for cls in self.classes.values():
            attributes: set[str] = set()
            for member in cls.body:
                if isinstance(member, _FUNCTIONS):
                    attributes |= {n for n in self._container_names(member) if n.startswith("self.")}
                elif isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                    annotation = ast.unparse(member.annotation)
                    if (
                        self._builtin_value(member.value)
                        if member.value
                        else annotation.split("[")[0]
                        in (_CONTAINER_CALLS | {"List", "Dict", "Set", "Tuple", "int", "float", "bool"})
                    ):
                        attributes.add(f"self.{member.target.id}")
            class_containers[cls.name] = attributes
        owner: dict[ast.AST, str] = {}
        for cls in self.classes.values():
            for member in cls.body:
                owner[member] = cls.name
        graph: dict[str, set[str]] = {}
        for function in self.functions:
            containers = frozenset(
                self._container_names(function) | class_containers.get(owner.get(function, ""), set())
            )
            callees = graph.setdefault(function.name, set())
            for node in _walk_scope(function):
                if not isinstance(node, ast.Call):
                    continue
                found = self._callees(node, defined, containers)
                if _is_super_call(node.func):
                    found.discard(function.name)  # the base class's method of the same name, not a recursion
                callees |= found
        return graph

    def _callees(self, call: ast.Call, defined: set[str], containers: frozenset[str]) -> set[str]:
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in self.classes:
                return {m for m in ("__init__", "__post_init__") if self._any_defines(func.id, m)}
            return {func.id} & defined
        if isinstance(func, ast.Attribute) and not self._foreign_receiver(func.value, containers):
            return {func.attr} & defined
        return set()

    def _any_defines(self, class_name: str, method: str) -> bool:
        return any(self._defines(c, method) for c in self._ancestors(self.classes[class_name]))

    def _recursion(self) -> bool:
        graph = self._call_graph()
        state: dict[str, int] = {}

        def cyclic(name: str) -> bool:
            state[name] = 1
            for callee in graph.get(name, ()):
                if state.get(callee) == 1 or (callee not in state and cyclic(callee)):
                    return True
            state[name] = 2
            return False

        return any(name not in state and cyclic(name) for name in graph)

    def _call_depth(self, goal: int = 3) -> int:
        """The longest chain of calls from the entry (without repeats), counted up to goal."""
        graph = self._call_graph()
        entry = entry_call(self.source)
        match = re.match(r"\s*([A-Za-z_]\w*)\s*\(", entry or "")
        roots = [match.group(1)] if match else sorted(self.module_functions)

        def longest(name: str, path: set[str]) -> int:
            best = 0
            for callee in sorted(graph.get(name, ())):
                if callee in path:
                    continue
                best = max(best, 1 + longest(callee, path | {callee}))
                if best >= goal:
                    break
            return best

        return max((longest(root, {root}) for root in roots if root in graph), default=0)
