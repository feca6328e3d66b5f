"""The first state of a program, derived from its text alone (the neural engine never runs code).

Module mode: the first statement's line, no locals. Entry mode: the entry function's call event,
with the entry's arguments bound to its parameters. Arguments must be literals (parsed with
ast.literal_eval), or expressions of literals and builtins the grammar computes (evaluation.constant_value);
defaults come from the function's signature, the same way.
"""

from __future__ import annotations

import ast

from model_backend import safe_ast
from model_backend.engine.errors import EngineError
from model_backend.grammar.evaluation import constant_value
from model_backend.program import Program
from model_backend.state import StackFrame, State


def _literal(node: ast.expr, what: str, rebound: frozenset[str]) -> object:
    """A literal, or an expression of literals and builtins whose value the grammar computes without
    running anything of the program (evaluation.constant_value: `'$78'.upper()`, `list(range(3))`), or
    `dict(a=1)` of such values; not where the program binds the builtin's name (`rebound`)."""
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    try:
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict"
                and "dict" not in rebound and not node.args and all(k.arg is not None for k in node.keywords)):
            return {k.arg: constant_value(k.value, rebound) for k in node.keywords}
        return constant_value(node, rebound)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise EngineError(
            f"{what} must be a literal, or an expression of literals and builtins, in neural mode (no code is "
            f"run): {ast.unparse(node)!r}"
        ) from None


def _first_line(node: ast.stmt) -> int:
    decorators = getattr(node, "decorator_list", None)
    return min([node.lineno] + [d.lineno for d in decorators or []])


def initial_state(program: Program) -> State:
    try:
        tree = safe_ast.parse(program.source)
    except SyntaxError as exc:
        raise EngineError(f"syntax error line {exc.lineno}: {exc.msg}") from None
    lines = program.lines
    if program.entry is None:
        if not tree.body:
            return State.exit_state("normal")
        line = _first_line(tree.body[0])
        return State(
            event="line", line=line, function="<module>", source=lines[line - 1], locals={},
            stack=[StackFrame(function="<module>", line=line)], depth=0,
        )
    return entry_call_state(program, tree)


def entry_call_state(program: Program, tree: ast.Module) -> State:
    assert program.entry is not None
    try:
        call = safe_ast.parse(program.entry, mode="eval").body
    except SyntaxError:
        raise EngineError(f"the entry {program.entry!r} is not an expression") from None
    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Name):
        raise EngineError(f"the entry must call a function of the program by name, e.g. f(1, 2): {program.entry!r}")
    name = call.func.id
    func = next(
        (n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == name), None
    )
    if func is None:
        raise EngineError(f"the program defines no top-level function {name!r}")
    bound = bind_arguments(func, call, rebound_names(tree))
    line = _first_line(func)
    return State(
        event="call", line=line, function=name, source=program.lines[line - 1],
        locals={k: repr(v) for k, v in bound.items()},
        stack=[StackFrame(function=name, line=line)], depth=0,
    )


def rebound_names(tree: ast.Module) -> frozenset[str]:
    """Every name the program binds anywhere (a def, a class, an assignment, an import, ...): a builtin
    of that name may not be the builtin in its arguments' expressions."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.Global | ast.Nonlocal):
            names.update(node.names)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return frozenset(names)


def bind_arguments(func: ast.FunctionDef | ast.AsyncFunctionDef, call: ast.Call,
                   rebound: frozenset[str] = frozenset()) -> dict[str, object]:
    """Python's argument binding, on literals: positional, keyword, defaults, *args, **kwargs. The
    values may be expressions of literals and builtins (_literal) not named in `rebound`."""
    args = func.args
    positional = [a.arg for a in args.posonlyargs + args.args]
    values: list[object] = []
    for node in call.args:
        if isinstance(node, ast.Starred):
            star = _literal(node.value, "a *argument", rebound)
            if not isinstance(star, list | tuple):
                raise EngineError("a *argument must be a literal list or tuple")
            values.extend(star)
        else:
            values.append(_literal(node, "each argument", rebound))
    bound: dict[str, object] = {}
    for param, value in zip(positional, values, strict=False):
        bound[param] = value
    extra = values[len(positional) :]
    if extra and args.vararg is None:
        raise EngineError(f"{func.name}() takes {len(positional)} positional arguments but {len(values)} were given")
    kwargs: dict[str, object] = {}
    keyword_names = positional[len(args.posonlyargs) :] + [a.arg for a in args.kwonlyargs]
    for kw in call.keywords:
        if kw.arg is None:
            raise EngineError("**arguments are not supported in neural mode")
        value = _literal(kw.value, f"argument {kw.arg}", rebound)
        if kw.arg in bound:
            raise EngineError(f"{func.name}() got multiple values for argument {kw.arg!r}")
        if kw.arg in keyword_names:
            bound[kw.arg] = value
        elif args.kwarg is not None:
            kwargs[kw.arg] = value
        else:
            raise EngineError(f"{func.name}() got an unexpected keyword argument {kw.arg!r}")
    defaults = dict(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    ordered: dict[str, object] = {}
    for param in positional:
        if param in bound:
            ordered[param] = bound[param]
        elif param in defaults:
            ordered[param] = _literal(defaults[param], f"the default of {param}", rebound)
        else:
            raise EngineError(f"{func.name}() missing required argument {param!r}")
    if args.vararg is not None:
        ordered[args.vararg.arg] = tuple(extra)
    for a in args.kwonlyargs:
        if a.arg in bound:
            ordered[a.arg] = bound[a.arg]
        elif a.arg in defaults:
            ordered[a.arg] = _literal(defaults[a.arg], f"the default of {a.arg}", rebound)
        else:
            raise EngineError(f"{func.name}() missing required keyword-only argument {a.arg!r}")
    if args.kwarg is not None:
        ordered[args.kwarg.arg] = kwargs
    return ordered
