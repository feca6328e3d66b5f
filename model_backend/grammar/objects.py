"""Values that only a new binding can change, and the variables no statement of their function rebinds.

A value shown as a number, a string, a bool or None (shown.IMMUTABLE_REPR) changes only when its variable is
bound again. So does a value whose text names only its type: the tracer writes a builtin iterator as
`<list_iterator object>`, a generator as `<generator object gen>`, a function as `<function f>`, a class as
`<class '__main__.C'>`, and, in trace format 2, an instance of a class without a `__repr__` as
`<__main__.C object>`. Changing such an object (advancing the iterator, setting a field) leaves its text as it
was, as long as no code can give its class a `__repr__` or give it another class. `stable_forms` reads from the
source where that holds; `unchanging_parameters` gives the parameters each function never binds again, which
keep their values for as long as their frame lives.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from model_backend import safe_ast
from model_backend.grammar.calls import _sole_definitions
from model_backend.grammar.shown import IMMUTABLE_REPR
from model_backend.grammar.syntax import statements_per_line

# Texts that name only an object's type (and a function's or a generator's name); group 1: a program class
_TYPE_ONLY_REPR = re.compile(r"<__main__\.(\w+) object>|<[a-z_]+ object>|<generator object [\w.<>]+>"
                             r"|<function [\w.<>]+>|<class '[\w.]+'>")
_ROOT_BASES = frozenset({"object", "ABC"})
# Dunder methods through which a class or its subclasses can change how an instance is written
_REPR_HOOKS = frozenset({"__repr__", "__init_subclass__", "__new__"})


@dataclass(frozen=True)
class StableForms:
    """Which type-only texts of a program can only change by a new binding: `classes` names the program's
    classes whose instances are written `<__main__.C object>` for good; `builtin_forms` whether the texts of
    builtin iterators, generators, functions and classes are (no `__repr__` of the program writes such a
    text)."""

    classes: frozenset[str] = frozenset()
    builtin_forms: bool = False

    def stable(self, text: str | None) -> bool:
        """Whether a shown value can only change by a new binding of its variable."""
        if text is None:
            return False
        if IMMUTABLE_REPR.fullmatch(text):
            return True
        match = _TYPE_ONLY_REPR.fullmatch(text)
        if match is None:
            return False
        return match.group(1) in self.classes if match.group(1) else self.builtin_forms


def _rewrites_objects(tree: ast.Module) -> bool:
    """Whether the program can give an object another class or a class another `__repr__` from outside its
    class statement: a store or `del` of a dunder attribute (`obj.__class__ = ...`), `setattr`/`delattr`
    of a name that is not a plain literal one, or a class made by `type(name, bases, namespace)`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Load) and node.attr.startswith("__"):
            return True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in ("setattr", "delattr") and not (
                    len(node.args) >= 2 and isinstance(node.args[1], ast.Constant)
                    and isinstance(node.args[1].value, str) and not node.args[1].value.startswith("__")):
                return True
            if node.func.id == "type" and len(node.args) == 3:
                return True
    return False


def _class_hooks(node: ast.ClassDef) -> bool:
    """Whether a class statement defines or assigns one of _REPR_HOOKS, or has a decorator or a keyword
    (a metaclass, a dataclass's generated `__repr__`)."""
    if node.decorator_list or node.keywords:
        return True
    for statement in node.body:
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef) and statement.name in _REPR_HOOKS:
            return True
        if isinstance(statement, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            if any(isinstance(t, ast.Name) and t.id in _REPR_HOOKS for t in targets):
                return True
    return False


def _writes_a_type_only_text(tree: ast.Module) -> bool:
    """Whether some `__repr__` of the program could return text that looks like a type-only one: it holds
    a string that has a `<`, or `__repr__` is bound other than by a def."""
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == "__repr__":
            if any(isinstance(part, ast.Constant) and isinstance(part.value, str) and "<" in part.value
                   for part in ast.walk(node)):
                return True
        elif isinstance(node, ast.Name) and node.id == "__repr__" and not isinstance(node.ctx, ast.Load):
            return True
    return False


def stable_forms(tree: ast.Module, dynamic: bool) -> StableForms:
    """The type-only texts of this program that only a new binding can change (StableForms). A program
    class counts when `C` can only mean its class statement (calls._sole_definitions) at module level, it
    has no decorator, keyword, `__repr__`, `__new__` or `__init_subclass__`, and its bases are `object`,
    `ABC` or such classes; none counts where the program can rewrite an object's class or a class's
    `__repr__` elsewhere (_rewrites_objects), or looks names up dynamically."""
    if dynamic or _rewrites_objects(tree):
        return StableForms()
    sole = _sole_definitions(tree)
    candidates = {node.name: node for node in tree.body
                  if isinstance(node, ast.ClassDef) and sole.get(node.name) is node and not _class_hooks(node)}
    classes: set[str] = set()
    changed = True
    while changed:  # a class counts once all its bases do
        changed = False
        for name, node in candidates.items():
            if name not in classes and all(
                    isinstance(base, ast.Name) and (base.id in _ROOT_BASES or base.id in classes) for base in node.bases):
                classes.add(name)
                changed = True
    return StableForms(frozenset(classes), not _writes_a_type_only_text(tree))


def _own_scope(node: ast.AST) -> list[ast.AST]:
    """The nodes of a def's own scope: its body, without nested defs, lambdas and classes (but with their
    decorators, defaults and bases, which run in it)."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = list(node.body) if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) else []
    while stack:
        part = stack.pop()
        found.append(part)
        if isinstance(part, ast.FunctionDef | ast.AsyncFunctionDef):
            stack.extend([*part.decorator_list, *part.args.defaults, *(d for d in part.args.kw_defaults if d)])
        elif isinstance(part, ast.Lambda):
            stack.extend([*part.args.defaults, *(d for d in part.args.kw_defaults if d)])
        elif isinstance(part, ast.ClassDef):
            stack.extend([*part.decorator_list, *part.bases, *part.keywords])
        else:
            stack.extend(ast.iter_child_nodes(part))
    return found


def _rebound(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """Names a def's own statements bind or delete (comprehension variables and `as` targets included), and
    names that a def nested in it declares `nonlocal`."""
    bound: set[str] = set()
    for part in _own_scope(function):
        if isinstance(part, ast.Name) and not isinstance(part.ctx, ast.Load):
            bound.add(part.id)
        elif isinstance(part, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and part.name:
            bound.add(part.name)
        elif isinstance(part, ast.MatchMapping) and part.rest:
            bound.add(part.rest)
        elif isinstance(part, ast.alias):
            bound.add((part.asname or part.name).split(".")[0])
        elif isinstance(part, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(part.name)
        elif isinstance(part, ast.Global | ast.Nonlocal):
            bound.update(part.names)
    for inner in ast.walk(function):
        if isinstance(inner, ast.Nonlocal):
            bound.update(inner.names)
    return bound


def unchanging_parameters(tree: ast.Module, dynamic: bool) -> dict[str, frozenset[str]]:
    """Code name -> the parameters that no def of that name binds again or deletes: for as long as a frame
    of it lives, such a variable holds the object it was called with. Nothing where the program looks
    names up dynamically (`locals()` and the like); no entry for a name that a class also has."""
    if dynamic:
        return {}
    found: dict[str, frozenset[str]] = {}
    classes: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            classes.add(node.name)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            parameters = {a.arg for a in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]}
            parameters |= {a.arg for a in (arguments.vararg, arguments.kwarg) if a is not None}
            kept = frozenset(parameters - _rebound(node))
            found[node.name] = found[node.name] & kept if node.name in found else kept
    return {name: kept for name, kept in found.items() if kept and name not in classes}


def _guarded_lines(tree: ast.Module) -> set[int]:
    """Lines of statements inside a `try` or `with` block, where an exception may be caught (or suppressed)
    without leaving the frame."""
    guarded: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try | ast.TryStar | ast.With | ast.AsyncWith):
            for statement in node.body:
                guarded.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return guarded


def constructed_objects(tree: ast.Module, forms: StableForms) -> dict[int, tuple[str, str]]:
    """Line -> (name, `<__main__.C object>`) where the line is only `name = C(...)` for a class of
    `forms.classes` (no `__new__` anywhere up its bases), outside any `try` or `with`, alone on its line: after a step that
    stays in the frame, the call returned, and the name holds the new instance, written so in trace
    format 2."""
    guarded = _guarded_lines(tree)
    statements = statements_per_line(tree)
    found: dict[int, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
                and node.value.func.id in forms.classes and node.lineno not in guarded
                and node.lineno == node.end_lineno and statements.get(node.lineno) == 1):
            found[node.lineno] = (node.targets[0].id, f"<__main__.{node.value.func.id} object>")
    return found


def entry_function(entry: str | None) -> str | None:
    """The function an entry call `f(args)` runs at the outermost depth, where nothing else runs there: its
    arguments call nothing (no call, lambda or comprehension in them). Then every outermost frame of the
    trace is that one call's. None for a script, or another entry."""
    if entry is None:
        return None
    try:
        tree = safe_ast.parse(entry, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    call = tree.body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    inner = [node for argument in [*call.args, *call.keywords] for node in ast.walk(argument)]
    if any(isinstance(node, ast.Call | ast.Lambda | ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp)
           for node in inner):
        return None
    return call.func.id
