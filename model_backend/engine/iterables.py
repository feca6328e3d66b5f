"""What a loop's iterable gives, computed from the values a state shows, with Python's builtins only.

A loop header such as `for word in sentence.split():` or `for key in sorted(counts):` iterates a value
that builtins build from variables. Where each of those variables shows the whole repr of a literal (a
number, a string, a bool, None, or a list, tuple or dict of them), the elements are what the same
builtins give here on the same values: `ast.literal_eval` rebuilds the values, and the builtins and
methods allowed below are a fixed list that, on such values, call no code of the program and change no
object. Nothing of the program runs (the neural engine never runs user code); this reads the iterable
off the predicted state the way a person reading the source would.

`iterable_reads` checks an expression once, from the source; `iterable_elements` computes the elements
from the shown values of one state.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from model_backend import safe_ast

# Builtin functions an iterable may call, and the keywords each accepts (with a constant value).
_FUNCTIONS: dict[str, frozenset[str]] = {
    "len": frozenset(), "sorted": frozenset({"reverse"}), "reversed": frozenset(), "list": frozenset(),
    "tuple": frozenset(), "enumerate": frozenset(), "range": frozenset(), "zip": frozenset(),
    "min": frozenset(), "max": frozenset(), "abs": frozenset(),
}
# Methods an iterable may call, by the type of the object they are called on.
_METHODS: dict[type, frozenset[str]] = {
    str: frozenset({"split", "rsplit", "splitlines", "strip", "lstrip", "rstrip", "lower", "upper"}),
    dict: frozenset({"items", "keys", "values"}),
}
_METHOD_NAMES = frozenset().union(*_METHODS.values())
_OPERATORS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)
MAX_ELEMENTS = 10_000  # a longer iterable is left to the model
_MAX_INT = 10**12  # arithmetic beyond this is left to the model (and never grows without bound here)


class _Unknown(Exception):
    """The shown values do not tell the iterable (a cut repr, a set, a type the builtin refuses)."""


def iterable_reads(node: ast.expr, bound: set[str]) -> frozenset[str] | None:
    """The variables an iterable expression reads, where it is made only of variables, int and str
    constants, `+ - * // %`, slices and indexes, calls of the builtins in _FUNCTIONS (not rebound by the
    program, `bound`) and of the methods in _METHODS; None for anything else. A bare variable is None:
    the loop rules read such an iterable off its repr themselves."""
    if isinstance(node, ast.Name):
        return None
    reads: set[str] = set()

    def allowed(part: ast.expr) -> bool:
        if isinstance(part, ast.Name):
            if part.id in _FUNCTIONS and part.id not in bound:
                return False  # a builtin passed as a value
            reads.add(part.id)
            return True
        if isinstance(part, ast.Constant):
            return type(part.value) in (int, str, bool) or part.value is None
        if isinstance(part, ast.UnaryOp):
            return isinstance(part.op, ast.USub) and allowed(part.operand)
        if isinstance(part, ast.BinOp):
            return isinstance(part.op, _OPERATORS) and allowed(part.left) and allowed(part.right)
        if isinstance(part, ast.Subscript):
            index = part.slice
            if isinstance(index, ast.Slice):
                bounds = [b for b in (index.lower, index.upper, index.step) if b is not None]
                return allowed(part.value) and all(allowed(b) for b in bounds)
            return allowed(part.value) and allowed(index)
        if isinstance(part, ast.Call):
            if any(isinstance(a, ast.Starred) for a in part.args):
                return False
            func = part.func
            if isinstance(func, ast.Name):
                keywords = _FUNCTIONS.get(func.id)
                if keywords is None or func.id in bound:
                    return False
                if not all(k.arg in keywords and isinstance(k.value, ast.Constant) for k in part.keywords):
                    return False
            elif isinstance(func, ast.Attribute) and func.attr in _METHOD_NAMES:
                if part.keywords or not allowed(func.value):
                    return False
            else:
                return False
            return all(allowed(a) for a in part.args)
        return False

    return frozenset(reads) if allowed(node) else None


def shown_literal(text: str | None) -> object:
    """The value whose whole repr `text` is: a number, a string, a bool, None, or a list, tuple or dict
    of them (not a set: its order here need not be the traced program's). Raises _Unknown otherwise."""
    if text is None:
        raise _Unknown
    try:
        value = ast.literal_eval(safe_ast.parse(text, mode="eval"))
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as error:
        raise _Unknown from error
    if repr(value) != text or holds_a_set(value):
        raise _Unknown
    return value


def holds_a_set(value: object) -> bool:
    """Whether a value is or holds a set (whose iteration order here need not be the traced program's)."""
    if isinstance(value, set | frozenset):
        return True
    if isinstance(value, list | tuple):
        return any(holds_a_set(v) for v in value)
    if isinstance(value, dict):
        return any(holds_a_set(v) for v in value.values())
    return False


def _int(value: object) -> int:
    if type(value) is not int or abs(value) > _MAX_INT:
        raise _Unknown
    return value


def _evaluate(node: ast.expr, shown: Mapping[str, str]) -> object:
    """The value of an expression iterable_reads accepted, on the shown values; raises _Unknown."""
    if isinstance(node, ast.Name):
        return shown_literal(shown.get(node.id))
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        return -_int(_evaluate(node.operand, shown))
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, shown), _evaluate(node.right, shown)
        if isinstance(node.op, ast.Add) and type(left) is type(right) and type(left) in (str, list, tuple):
            return left + right  # type: ignore[operator]
        a, b = _int(left), _int(right)
        if isinstance(node.op, ast.FloorDiv | ast.Mod) and b == 0:
            raise _Unknown
        if isinstance(node.op, ast.Add):
            return _int(a + b)
        if isinstance(node.op, ast.Sub):
            return _int(a - b)
        if isinstance(node.op, ast.Mult):
            return _int(a * b)
        return a // b if isinstance(node.op, ast.FloorDiv) else a % b
    if isinstance(node, ast.Subscript):
        value = _evaluate(node.value, shown)
        if not isinstance(value, str | list | tuple):
            raise _Unknown  # a dict's item: its key may be anything
        index = node.slice
        if isinstance(index, ast.Slice):
            bounds = [None if b is None else _int(_evaluate(b, shown)) for b in (index.lower, index.upper, index.step)]
            if bounds[2] == 0:
                raise _Unknown
            return value[slice(*bounds)]
        position = _int(_evaluate(index, shown))
        if not -len(value) <= position < len(value):
            raise _Unknown
        return value[position]
    if isinstance(node, ast.Call):
        arguments = [_evaluate(a, shown) for a in node.args]
        keywords = {k.arg: k.value.value for k in node.keywords if isinstance(k.value, ast.Constant)}
        if isinstance(node.func, ast.Name):
            return _call(node.func.id, arguments, keywords)
        assert isinstance(node.func, ast.Attribute)
        receiver = _evaluate(node.func.value, shown)
        if node.func.attr not in _METHODS.get(type(receiver), frozenset()):
            raise _Unknown
        if not all(isinstance(a, str | int) and type(a) is not bool or a is None for a in arguments):
            raise _Unknown
        try:
            result = getattr(receiver, node.func.attr)(*arguments)
        except (TypeError, ValueError) as error:
            raise _Unknown from error
        return list(result) if isinstance(receiver, dict) else result  # a view: its elements, in order
    raise _Unknown


def _call(name: str, arguments: list[object], keywords: Mapping[str | None, object]) -> object:
    """A builtin of _FUNCTIONS called on literal values; lazy results (reversed, enumerate, zip, range)
    are listed, within MAX_ELEMENTS."""
    iterables = (str, list, tuple, dict, range)
    try:
        if name == "range":
            span = range(*(_int(a) for a in arguments))
            if len(span) > MAX_ELEMENTS:
                raise _Unknown
            return span
        if name == "len":
            (value,) = arguments
            if not isinstance(value, iterables):
                raise _Unknown
            return len(value)
        if name == "abs":
            (value,) = arguments
            return abs(_int(value))
        if name in ("min", "max"):
            if len(arguments) == 1 and isinstance(arguments[0], iterables):
                values = list(arguments[0])  # type: ignore[call-overload]
            else:
                values = list(arguments)
            if not values or not all(type(v) is int for v in values) and not all(type(v) is str for v in values):
                raise _Unknown  # mixed or empty: it raises, or compares what a repr cannot tell
            return min(values) if name == "min" else max(values)  # type: ignore[type-var]
        if name == "zip":
            if not arguments or not all(isinstance(a, iterables) for a in arguments):
                raise _Unknown
            return list(zip(*arguments, strict=False))  # type: ignore[call-overload]  # stops at the shortest
        (value, *rest) = arguments
        if not isinstance(value, iterables):
            raise _Unknown
        if name == "enumerate":
            start = _int(rest[0]) if rest else 0
            if len(rest) > 1:
                raise _Unknown
            return list(enumerate(value, start))  # type: ignore[call-overload]
        if rest:
            raise _Unknown
        if name == "sorted":
            if set(keywords) - {"reverse"} or type(keywords.get("reverse", False)) is not bool:
                raise _Unknown
            elements = list(value)  # type: ignore[call-overload]
            if not (all(type(v) in (int, float) for v in elements) or all(type(v) is str for v in elements)
                    or all(type(v) is tuple for v in elements)):
                raise _Unknown  # a mix that raises, or ties that equal values of other types would break
            return sorted(elements, reverse=bool(keywords.get("reverse", False)))
        if name == "reversed":
            return list(reversed(value))  # type: ignore[call-overload]
        if name == "list":
            return list(value)  # type: ignore[call-overload]
        if name == "tuple":
            return tuple(value)  # type: ignore[call-overload]
    except (TypeError, ValueError) as error:
        raise _Unknown from error
    raise _Unknown


def iterable_elements(node: ast.expr, shown: Mapping[str, str], max_repr: int) -> list[object] | None:
    """The elements iterating `node` gives, on the values `shown` (name -> repr) holds, in order; None
    where those values do not tell (a variable not shown or cut, a set, a builtin that would raise, an
    element whose repr the tracer would cut at `max_repr` characters, more than MAX_ELEMENTS)."""
    try:
        value = _evaluate(node, shown)
    except (_Unknown, RecursionError, MemoryError):
        return None
    if not isinstance(value, str | list | tuple | dict | range):
        return None
    if len(value) > MAX_ELEMENTS:
        return None
    elements = list(value)
    if any(len(repr(e)) > max_repr or holds_a_set(e) for e in elements):
        return None
    return elements
