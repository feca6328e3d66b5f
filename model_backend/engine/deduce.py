"""What an expression of the source gives on the values a state shows, with Python's builtins only.

Some expressions of a program are made of nothing but variables, constants, operators and builtins:
a loop's iterable (`for word in sentence.split():`, `for key in sorted(counts):`) or a branch's test
(`if i.isdigit():`, `while left < right and s[left] not in vowels:`). Where each variable they read
shows the whole repr of a literal (a number, a string, a bool, None, or a list, tuple or dict of them),
their value is what the same builtins give here on the same values: `ast.literal_eval` rebuilds the
values, and the operators, builtins and methods allowed below are a fixed list that, on such values,
call no code of the program and change no object. Nothing of the program runs (the neural engine never
runs user code); this reads the source the way a person checking a debugger's state would.

`expression_reads` checks an expression once, from the source; `iterable_elements` and `truth` compute
from the shown values of one state, and say nothing (None) where those values do not tell: a variable
not shown or cut, a set (its order here need not be the traced program's), a builtin that would raise
(then the program raises, which the model predicts).
"""

from __future__ import annotations

import ast
import contextvars
import operator
import re
import string
from collections.abc import Callable, Mapping
from typing import Any

from model_backend import safe_ast

# Builtin functions an expression may call, and the keywords each accepts (`key`: a function, as the
# first argument of map and filter, see _FUNCTION_VALUES).
_FUNCTIONS: dict[str, frozenset[str]] = {
    name: frozenset() for name in ("len", "reversed", "list", "tuple", "enumerate", "range", "zip", "abs", "sum",
                                   "ord", "chr", "str", "int", "bool", "any", "all", "divmod",
                                   "float", "round", "bin", "hex", "oct", "pow", "dict", "map", "filter", "set",
                                   "frozenset")
} | {"sorted": frozenset({"reverse", "key"}), "min": frozenset({"key"}), "max": frozenset({"key"}),
       "enumerate": frozenset({"start"})}
# Builtins that may be passed as a function (`map(int, digits)`, `key=len`); `str.lower` and the other
# str methods of _METHODS, and a lambda of such expressions, may be passed too.
_FUNCTION_VALUES = frozenset({"len", "str", "int", "float", "abs", "ord", "chr", "bool", "round", "sorted", "list",
                              "tuple", "sum", "min", "max", "bin", "hex", "oct"})
_TAKES_A_FUNCTION = frozenset({"map", "filter"})  # as their first argument
_SET_METHODS = frozenset({"union", "intersection", "difference", "symmetric_difference", "issubset", "issuperset",
                          "isdisjoint", "copy"})
# Methods an expression may call, by the type of the object they are called on: none changes it.
_METHODS: dict[type, frozenset[str]] = {
    str: frozenset({"split", "rsplit", "splitlines", "strip", "lstrip", "rstrip", "lower", "upper", "isdigit",
                    "isalpha", "isalnum", "isspace", "islower", "isupper", "isdecimal", "isnumeric",
                    "isidentifier", "startswith", "endswith", "count", "find", "rfind", "index", "replace", "join",
                    "title", "capitalize", "swapcase", "casefold", "istitle", "isascii", "isprintable", "rindex",
                    "partition", "rpartition", "removeprefix", "removesuffix", "zfill", "center", "ljust", "rjust",
                    "expandtabs", "format",
                    "translate"}),  # its table from str.maketrans, or a dict
    list: frozenset({"count", "index", "copy"}),
    tuple: frozenset({"count", "index"}),
    dict: frozenset({"items", "keys", "values", "get", "copy"}),
    # what they give is a set, whose order nothing here reads (_ORDERLESS)
    set: _SET_METHODS,
    frozenset: _SET_METHODS,
}
# str methods whose result is as long as their first argument (expandtabs grows with its tab size too)
_WIDTH_METHODS = frozenset({"zfill", "center", "ljust", "rjust"})
# The keywords a method call may pass (any other keyword is left to the model)
_METHOD_KEYWORDS: dict[str, frozenset[str]] = {
    "split": frozenset({"sep", "maxsplit"}), "rsplit": frozenset({"sep", "maxsplit"}),
    "splitlines": frozenset({"keepends"}), "expandtabs": frozenset({"tabsize"}),
}
_METHOD_NAMES = frozenset().union(*_METHODS.values())
READING_FUNCTIONS = frozenset(_FUNCTIONS)  # for flow.pure_functions: builtins that read their arguments
READING_METHODS = _METHOD_NAMES


def _power(base: Any, exponent: Any) -> object:
    """`base ** exponent` where the result stays a number of _MAX_NUMBER's size (`10 ** 10 ** 9` would
    take the time first): else _Unknown, as for a complex result."""
    if type(base) is int and type(exponent) is int and exponent > 0 and abs(base) > 1 \
            and abs(base).bit_length() * exponent > 2 * _MAX_NUMBER.bit_length():
        raise _Unknown
    result = base ** exponent
    if type(result) not in (int, float):
        raise _Unknown
    return result


def _shifted(number: int, places: int) -> int:
    if places > _MAX_NUMBER.bit_length():
        raise _Unknown
    return number << places


_ARITHMETIC: dict[type, Callable[[Any, Any], object]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: _power,
}
# on ints only (not bools, nor sets or dicts, whose `|` and `&` are the model's)
_BITWISE: dict[type, Callable[[int, int], int]] = {
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: _shifted,
    ast.RShift: operator.rshift,
}
_COMPARISONS: dict[type, Callable[[Any, Any], object]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: operator.contains(b, a), ast.NotIn: lambda a, b: not operator.contains(b, a),
}
MAX_ELEMENTS = 10_000  # a longer iterable is left to the model
_MAX_NUMBER = 10**12  # arithmetic beyond this is left to the model (and never grows without bound here)
_MAX_TEXT = 10_000  # nor does a string or a list built here


class _Unknown(Exception):
    """The shown values do not tell the expression's value."""


class _Rebuilt:
    """A shown value rebuilt once, so that every read of its name is the same object."""

    def __init__(self, value: object) -> None:
        self.value = value


def expression_reads(node: ast.expr, bound: set[str]) -> frozenset[str] | None:
    """The variables an expression reads, where it is made only of variables, constants, arithmetic,
    comparisons (`is` only against None), `and`/`or`/`not`, conditional expressions, slices and
    indexes, calls of the builtins in _FUNCTIONS (not rebound by the program, `bound`) and of the methods
    in _METHODS; None for anything else (the program's own functions, an attribute, a lambda...)."""
    reads: set[str] = set()
    hidden: list[str] = []  # the variables of the comprehensions around the part looked at

    def allowed_function(part: ast.expr) -> bool:
        """A function passed to map, filter or `key=`: a builtin of _FUNCTION_VALUES, `str.METHOD`, or
        a lambda (positional parameters only) whose body is allowed."""
        if isinstance(part, ast.Name):
            return part.id in _FUNCTION_VALUES and part.id not in bound
        if isinstance(part, ast.Attribute) and _is_class_method(part, "str", part.attr):
            return part.attr in _METHODS[str] and "str" not in bound  # (the program's own `str`: refused)
        if isinstance(part, ast.Attribute):  # a method of a value, bound: `counts.get`
            return part.attr in _METHOD_NAMES and allowed(part.value)
        if not isinstance(part, ast.Lambda):
            return False
        parameters = part.args
        if (parameters.posonlyargs or parameters.vararg or parameters.kwonlyargs or parameters.kwarg
                or parameters.defaults):
            return False
        depth = len(hidden)
        hidden.extend(a.arg for a in parameters.args)
        try:
            return allowed(part.body)
        finally:
            del hidden[depth:]

    def allowed(part: ast.expr) -> bool:
        if isinstance(part, ast.Name):
            if part.id in _FUNCTIONS and part.id not in bound:
                return False  # a builtin passed as a value
            if part.id not in hidden:
                reads.add(part.id)
            return True
        if isinstance(part, ast.ListComp | ast.GeneratorExp | ast.DictComp):
            depth = len(hidden)
            try:
                for generator in part.generators:
                    if generator.is_async or not allowed(generator.iter):
                        return False
                    names = _target_names(generator.target)
                    if names is None:
                        return False
                    hidden.extend(names)
                    if not all(allowed(condition) for condition in generator.ifs):
                        return False
                results = [part.key, part.value] if isinstance(part, ast.DictComp) else [part.elt]
                return all(allowed(result) for result in results)
            finally:
                del hidden[depth:]
        if isinstance(part, ast.Constant):
            return type(part.value) in (int, float, str, bool) or part.value is None
        if isinstance(part, ast.UnaryOp):
            return allowed(part.operand)  # -, +, not, ~
        if isinstance(part, ast.BinOp):
            return (type(part.op) in _ARITHMETIC or type(part.op) in _BITWISE) and allowed(part.left) and allowed(part.right)
        if isinstance(part, ast.BoolOp):
            return all(allowed(v) for v in part.values)
        if isinstance(part, ast.IfExp):
            return allowed(part.test) and allowed(part.body) and allowed(part.orelse)
        if isinstance(part, ast.Compare):
            checked = _type_check(part, bound)
            if checked is not None:
                return allowed(checked)
            for op, right in zip(part.ops, part.comparators, strict=True):
                if isinstance(op, ast.Is | ast.IsNot):
                    if not (isinstance(right, ast.Constant) and right.value is None):
                        return False
                elif type(op) not in _COMPARISONS:
                    return False
            return allowed(part.left) and all(allowed(c) for c in part.comparators)
        if isinstance(part, ast.Subscript):
            index = part.slice
            if isinstance(index, ast.Slice):
                bounds = [b for b in (index.lower, index.upper, index.step) if b is not None]
                return allowed(part.value) and all(allowed(b) for b in bounds)
            return allowed(part.value) and allowed(index)
        if isinstance(part, ast.Tuple | ast.List):
            return isinstance(part.ctx, ast.Load) and all(allowed(e) for e in part.elts)
        if isinstance(part, ast.Set):
            return all(allowed(e) for e in part.elts)
        if isinstance(part, ast.Dict):
            return None not in part.keys and all(allowed(k) for k in part.keys if k is not None) and all(
                allowed(v) for v in part.values)
        if isinstance(part, ast.JoinedStr):  # an f-string whose format specs are constant
            return all(isinstance(v, ast.Constant) or (
                isinstance(v, ast.FormattedValue) and allowed(v.value) and _constant_spec(v) is not None)
                for v in part.values)
        if isinstance(part, ast.Call):
            if any(isinstance(a, ast.Starred) for a in part.args):
                return False
            func = part.func
            if isinstance(func, ast.Name) and func.id == "isinstance" and "isinstance" not in bound:
                return (len(part.args) == 2 and not part.keywords and _types(part.args[1], bound) is not None
                        and allowed(part.args[0]))
            if isinstance(func, ast.Name):
                keywords = _FUNCTIONS.get(func.id)
                if keywords is None or func.id in bound:
                    return False
                if not all(k.arg in keywords and (allowed_function(k.value) if k.arg == "key" else allowed(k.value))
                           for k in part.keywords):
                    return False
                if func.id in _TAKES_A_FUNCTION:
                    if len(part.args) < 2:
                        return False
                    function, *iterables = part.args
                    passes_none = func.id == "filter" and isinstance(function, ast.Constant) and function.value is None
                    return (passes_none or allowed_function(function)) and all(allowed(a) for a in iterables)
            elif _is_class_method(func, "dict", "fromkeys") or _is_class_method(func, "str", "maketrans"):
                if part.keywords or func.value.id in bound:  # type: ignore[attr-defined]  # a Name: checked
                    return False
            elif isinstance(func, ast.Attribute) and func.attr in _METHOD_NAMES:
                if not all(k.arg in _METHOD_KEYWORDS.get(func.attr, ()) and allowed(k.value) for k in part.keywords):
                    return False
                if not allowed(func.value):
                    return False
            else:
                return False
            return all(allowed(a) for a in part.args)
        return False

    return frozenset(reads) if allowed(node) else None


_TYPES = {"int": int, "float": float, "str": str, "bool": bool, "list": list, "tuple": tuple, "dict": dict}


def _types(node: ast.expr, bound: set[str]) -> tuple[type, ...] | None:
    """The builtin types `isinstance`'s second argument names (`int`, `(list, tuple)`), where the
    program does not bind those names; None for anything else."""
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    if not names or not all(isinstance(n, ast.Name) and n.id in _TYPES and n.id not in bound for n in names):
        return None
    return tuple(_TYPES[n.id] for n in names)  # type: ignore[attr-defined]


def _type_check(node: ast.Compare, bound: set[str]) -> ast.expr | None:
    """For `type(X) == T` (or `!=`, `is`, `is not`) with T a builtin type named in the source (not
    bound by the program): X; None for any other comparison."""
    left = node.left
    if not (len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.NotEq | ast.Is | ast.IsNot)
            and isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "type"
            and "type" not in bound and len(left.args) == 1 and not left.keywords):
        return None
    right = node.comparators[0]
    if not (isinstance(right, ast.Name) and right.id in _TYPES and right.id not in bound):
        return None
    return left.args[0]


def _is_class_method(func: ast.expr, type_name: str, method: str) -> bool:
    """`dict.fromkeys` or `str.maketrans`, the class methods of builtin types taken."""
    return (isinstance(func, ast.Attribute) and func.attr == method and isinstance(func.value, ast.Name)
            and func.value.id == type_name)


def _constant_spec(part: ast.FormattedValue) -> str | None:
    """The format spec of an f-string's field, where it is constant text ("" without one); None otherwise."""
    if part.format_spec is None:
        return ""
    values = part.format_spec.values if isinstance(part.format_spec, ast.JoinedStr) else [part.format_spec]
    if not all(isinstance(v, ast.Constant) and isinstance(v.value, str) for v in values):
        return None
    return "".join(v.value for v in values)  # type: ignore[attr-defined]


def _target_names(target: ast.expr) -> list[str] | None:
    """The names a comprehension's `for` binds: a name, or a tuple of names (nested); None otherwise."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, ast.Tuple):
        names = [_target_names(e) for e in target.elts]
        return None if None in names else [n for part in names for n in part]  # type: ignore[union-attr]
    return None


def shown_literal(text: str | None) -> object:
    """The value whose whole repr `text` is: a number, a string, a bool, None, or a list, tuple or dict
    of them (not a set). Raises _Unknown otherwise."""
    if text is None:
        raise _Unknown
    try:
        value = ast.literal_eval(safe_ast.parse(text, mode="eval"))
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as error:
        raise _Unknown from error
    if repr(value) != text or holds_a_set(value):
        raise _Unknown
    return value


# Sets: their iteration order here need not be the traced program's (a string's hash differs from one
# process to the next). So a set, shown or built here, is only taken where its order does not matter:
# `in`, len, sorted, min and max (its elements are distinct), sum of ints, any, all, comparisons, the
# set operators and the _SET_METHODS; never iterated in order (a loop, a comprehension, list(), join...:
# none of them takes _ORDERLESS values) and never written (holds_a_set).
_ORDERLESS = (set, frozenset)
_READ_IN_ANY_ORDER = frozenset({"len", "sorted", "min", "max", "sum", "any", "all"})  # set() itself: _call
_SET_OPERATORS: dict[type, Callable[[Any, Any], object]] = {
    ast.BitOr: operator.or_, ast.BitAnd: operator.and_, ast.Sub: operator.sub, ast.BitXor: operator.xor,
}


def shown_set(text: str | None) -> set[object]:
    """The set a variable shows (`{3, 'a'}`, `set()`), where each element is written as its repr and none
    twice, the repr of a set in some order; raises _Unknown otherwise."""
    if text == "set()":
        return set()
    try:
        node = safe_ast.parse(text or "", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise _Unknown from error
    if not isinstance(node, ast.Set):
        raise _Unknown
    elements = [shown_literal(ast.get_source_segment(text, element)) for element in node.elts]  # type: ignore[arg-type]
    try:
        value = set(elements)
    except TypeError as error:  # an unhashable element: no set holds it
        raise _Unknown from error
    if len(value) != len(elements) or "{" + ", ".join(repr(e) for e in elements) + "}" != text:
        raise _Unknown
    return value


def _shown_value(text: str | None) -> object:
    """shown_literal, or a shown set (only a text that can be one is parsed again: this runs for every
    name an expression reads)."""
    try:
        return shown_literal(text)
    except _Unknown:
        if text is None or not (text == "set()" or text.startswith("{")):
            raise
        return shown_set(text)


class _Iterator:
    """What reversed, enumerate and zip give: an iterator over these elements. Iterating it is all it
    allows (len, indexes and `+` refuse it, as Python does), and its repr is not the program's
    (`<list_reverseiterator object>`), so no value that holds one is written (holds_a_set)."""

    def __init__(self, elements: list[object]) -> None:
        self.elements = elements

    def __iter__(self) -> Any:
        return iter(self.elements)


def holds_a_set(value: object, _within: frozenset[int] = frozenset()) -> bool:
    """Whether a value is or holds a set (whose iteration order here need not be the traced program's)
    or an iterator built here (whose repr is not the program's); a list that holds itself is followed
    once."""
    if isinstance(value, set | frozenset | _Iterator):
        return True
    if id(value) in _within:
        return False
    inside = value if isinstance(value, list | tuple) else [*value, *value.values()] if isinstance(value, dict) else ()
    return any(holds_a_set(v, _within | {id(value)}) for v in inside)  # a dict's keys too: `{frozenset(s): 1}`


def _plain(value: object) -> object:
    """A value built here stays within bounds, or the expression is left to the model."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        if not abs(value) <= _MAX_NUMBER:  # also NaN
            raise _Unknown
        return value
    if isinstance(value, str | list | tuple | dict | range | set | frozenset) and len(value) > _MAX_TEXT:
        raise _Unknown
    return value


def _int(value: object) -> int:
    if type(value) is not int:
        raise _Unknown
    return value


def _number(value: object) -> int | float:
    if type(value) not in (int, float):
        raise _Unknown
    return value  # type: ignore[return-value]


def _evaluate(node: ast.expr, shown: Mapping[str, object]) -> object:
    """The value of an expression expression_reads accepted, on the shown values (reprs, or objects
    already rebuilt from them: a name read twice is one object); raises _Unknown."""
    try:
        return _plain(_evaluate_unchecked(node, shown))
    except (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError, AttributeError) as error:
        raise _Unknown from error  # the program raises here: the model says how


def _evaluate_unchecked(node: ast.expr, shown: Mapping[str, object]) -> object:
    if isinstance(node, ast.Name):
        value = shown.get(node.id)
        return value.value if isinstance(value, _Rebuilt) else _shown_value(value)  # type: ignore[arg-type]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        operand = _evaluate(node.operand, shown)
        if isinstance(node.op, ast.Not):
            return not operand
        if isinstance(node.op, ast.Invert):
            return ~_int(operand)
        return -_number(operand) if isinstance(node.op, ast.USub) else +_number(operand)
    if isinstance(node, ast.BoolOp):
        value = _evaluate(node.values[0], shown)
        for later in node.values[1:]:
            if bool(value) == isinstance(node.op, ast.Or):
                return value  # `and` stops at a false value, `or` at a true one
            value = _evaluate(later, shown)
        return value
    if isinstance(node, ast.IfExp):
        return _evaluate(node.body if _evaluate(node.test, shown) else node.orelse, shown)
    if isinstance(node, ast.Compare) and (checked := _type_check(node, set())) is not None:
        named = _TYPES[node.comparators[0].id]  # type: ignore[attr-defined]  # _type_check: a type's name
        return (type(_evaluate(checked, shown)) is named) == isinstance(node.ops[0], ast.Eq | ast.Is)
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, shown)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(comparator, shown)
            if isinstance(op, ast.Is | ast.IsNot):
                result = (left is None) == isinstance(op, ast.Is)
            else:
                if isinstance(op, ast.In | ast.NotIn) and not isinstance(right, str | list | tuple | dict | set | frozenset):
                    raise _Unknown
                result = bool(_COMPARISONS[type(op)](left, right))
            if not result:
                return False
            left = right
        return True
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, shown), _evaluate(node.right, shown)
        if isinstance(node.op, ast.Add) and type(left) is type(right) and type(left) in (str, list, tuple):
            return left + right  # type: ignore[operator]
        if isinstance(node.op, ast.Mult) and (isinstance(left, str | list | tuple) or isinstance(right, str | list | tuple)):
            return _repeated(left, right)
        if isinstance(node.op, ast.Mod) and isinstance(left, str):  # printf-style formatting
            _check_format(left, right if isinstance(right, tuple | dict) else [right], printf=True)
            return left % right  # type: ignore[operator]
        if isinstance(left, _ORDERLESS) and isinstance(right, _ORDERLESS) and type(node.op) in _SET_OPERATORS:
            return _SET_OPERATORS[type(node.op)](left, right)
        if type(node.op) in _BITWISE:
            return _BITWISE[type(node.op)](_int(left), _int(right))
        return _ARITHMETIC[type(node.op)](_number(left), _number(right))
    if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.DictComp):
        return _comprehension(node, shown)
    if isinstance(node, ast.Dict):
        return {_evaluate(k, shown): _evaluate(v, shown) for k, v in zip(node.keys, node.values, strict=True)
                if k is not None}
    if isinstance(node, ast.JoinedStr):
        return "".join(_formatted(v, shown) for v in node.values)
    if isinstance(node, ast.Tuple | ast.List):
        elements = [_evaluate(e, shown) for e in node.elts]
        return tuple(elements) if isinstance(node, ast.Tuple) else elements
    if isinstance(node, ast.Set):
        return {_evaluate(e, shown) for e in node.elts}  # an unhashable element raises TypeError: _Unknown
    if isinstance(node, ast.Subscript):
        value = _evaluate(node.value, shown)
        index = node.slice
        if isinstance(index, ast.Slice):
            if not isinstance(value, str | list | tuple):
                raise _Unknown
            bounds = [None if b is None else _int(_evaluate(b, shown)) for b in (index.lower, index.upper, index.step)]
            return value[slice(*bounds)]
        key = _evaluate(index, shown)
        if isinstance(value, dict):
            return value[key]
        if not isinstance(value, str | list | tuple):
            raise _Unknown
        return value[_int(key)]
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            types = _types(node.args[1], set()) if len(node.args) == 2 else None
            if types is None:
                raise _Unknown
            return isinstance(_evaluate(node.args[0], shown), types)
        if isinstance(node.func, ast.Name) and node.func.id in _TAKES_A_FUNCTION:
            function, *rest = node.args
            passes_none = isinstance(function, ast.Constant) and function.value is None
            return _map_or_filter(node.func.id, None if passes_none else _function(function, shown),
                                  [_evaluate(a, shown) for a in rest])
        arguments = [_evaluate(a, shown) for a in node.args]
        if isinstance(node.func, ast.Name):
            keywords = {k.arg: _function(k.value, shown) if k.arg == "key" else _evaluate(k.value, shown)
                        for k in node.keywords}
            return _call(node.func.id, arguments, keywords)
        if _is_class_method(node.func, "dict", "fromkeys"):
            if not 1 <= len(arguments) <= 2 or not isinstance(arguments[0], _ITERABLES):
                raise _Unknown
            keys = list(arguments[0])  # type: ignore[call-overload]
            if len(keys) > MAX_ELEMENTS:
                raise _Unknown
            return dict.fromkeys(keys, *arguments[1:])
        if _is_class_method(node.func, "str", "maketrans"):
            if not all(isinstance(a, str | dict) for a in arguments):
                raise _Unknown
            return str.maketrans(*arguments)  # type: ignore[call-overload]  # a wrong mix raises: _Unknown
        assert isinstance(node.func, ast.Attribute)
        receiver = _evaluate(node.func.value, shown)
        return _method(receiver, node.func.attr, arguments, {k.arg: _evaluate(k.value, shown) for k in node.keywords})
    raise _Unknown


def _method(receiver: object, method: str, arguments: list[object], keywords: Mapping[str | None, object]) -> object:
    """A method of _METHODS called on a literal value, with the keywords _METHOD_KEYWORDS allows."""
    if method not in _METHODS.get(type(receiver), frozenset()):
        raise _Unknown
    if None in keywords or not set(keywords) <= _METHOD_KEYWORDS.get(method, frozenset()):
        raise _Unknown
    if not isinstance(receiver, _ORDERLESS) and any(isinstance(a, _ORDERLESS) for a in arguments):
        raise _Unknown  # `''.join(s)` would take the set in its order here
    _check_size(receiver, method, arguments, keywords)
    result = getattr(receiver, method)(*arguments, **{str(k): v for k, v in keywords.items()})
    return list(result) if isinstance(receiver, dict) and method in ("items", "keys", "values") else result  # a view: listed


def _function(node: ast.expr, shown: Mapping[str, object]) -> Callable[..., object]:
    """What a function that expression_reads allowed to be passed does, as a callable: a builtin of
    _FUNCTION_VALUES (as _call computes it), `str.METHOD` or a value's method (as _method does), or a lambda, whose body is
    evaluated on the shown values with its parameters bound (each call one of the MAX_ELEMENTS steps)."""
    if isinstance(node, ast.Name):
        name = node.id
        return lambda *arguments: _call(name, list(arguments), {})
    if isinstance(node, ast.Attribute) and not _is_class_method(node, "str", node.attr):
        receiver, method = _evaluate(node.value, shown), node.attr
        return lambda *arguments: _method(receiver, method, list(arguments), {})
    if isinstance(node, ast.Attribute):
        method = node.attr

        def method_of_str(receiver: object = None, *arguments: object) -> object:
            if type(receiver) is not str:
                raise _Unknown  # `str.upper(5)` raises a TypeError: the model says how
            return _method(receiver, method, list(arguments), {})

        return method_of_str
    assert isinstance(node, ast.Lambda)
    body, parameters = node.body, [a.arg for a in node.args.args]
    steps = _STEPS.get()

    def called(*arguments: object) -> object:
        steps[0] += 1
        if steps[0] > MAX_ELEMENTS or len(arguments) != len(parameters):
            raise _Unknown
        return _evaluate(body, {**shown, **{name: _Rebuilt(a) for name, a in zip(parameters, arguments, strict=True)}})

    return called


def _map_or_filter(name: str, function: Callable[..., object] | None, iterables: list[object]) -> _Iterator:
    """`map(function, *iterables)` or `filter(function, iterable)` (None: the true elements), done at
    once: an _Iterator of what they give (the same elements, when none raises)."""
    if not iterables or not all(isinstance(i, _ITERABLES) for i in iterables):
        raise _Unknown
    if name == "map":
        assert function is not None  # expression_reads: only filter takes None
        return _Iterator([function(*items) for items in zip(*iterables, strict=False)])  # type: ignore[call-overload]  # stops at the shortest
    if len(iterables) != 1:
        raise _Unknown
    return _Iterator([e for e in iterables[0] if (function(e) if function else e)])  # type: ignore[attr-defined]


def _check_size(receiver: object, method: str, arguments: list[object],
                keywords: Mapping[str | None, object] | None = None) -> None:
    """Raise _Unknown before a str method builds a text longer than _MAX_TEXT (a width of 10**9 would
    take the memory first): the width and tab size methods, replace and translate."""
    if not isinstance(receiver, str):
        return
    if method == "format":
        _check_format(receiver, arguments)
    elif method == "translate":
        table = arguments[0] if len(arguments) == 1 else None
        if not isinstance(table, dict):
            raise _Unknown  # a table of another kind: its lookups could run the program's code
        longest = max((len(v) if isinstance(v, str) else 1 for v in table.values()), default=1)
        if len(receiver) * longest > _MAX_TEXT:
            raise _Unknown
    elif method in _WIDTH_METHODS or method == "expandtabs":
        size = arguments[0] if arguments else (keywords or {}).get("tabsize", 8)  # expandtabs' default tab size
        if type(size) is not int:
            raise _Unknown
        length = size if method in _WIDTH_METHODS else size * (receiver.count("\t") + 1) + len(receiver)
        if length > _MAX_TEXT:
            raise _Unknown
    elif method == "replace" and len(arguments) >= 2 and isinstance(arguments[0], str) and isinstance(arguments[1], str):
        places = receiver.count(arguments[0]) if arguments[0] else len(receiver) + 1
        if len(receiver) + places * len(arguments[1]) > _MAX_TEXT:
            raise _Unknown


def _check_format(template: str, arguments: object, printf: bool = False) -> None:
    """Raise _Unknown before `template.format(...)` or `template % ...` builds a huge text (a width of
    10**9, written in the template or taken from an argument: `%*d`, `{:{}}`), or prints a value whose
    text here is not the program's (a set, an iterator)."""
    if any(int(width) > _MAX_TEXT for width in re.findall(r"\d+", template)):
        raise _Unknown
    if printf and "*" in template:
        raise _Unknown
    if not printf:
        try:
            fields = list(string.Formatter().parse(template))
        except ValueError as error:
            raise _Unknown from error
        if any(spec and "{" in spec for _, _, spec, _ in fields):
            raise _Unknown
    if holds_a_set(arguments) or (isinstance(arguments, dict) and any(holds_a_set(v) for v in arguments.values())):
        raise _Unknown


def _repeated(left: object, right: object) -> object:
    """`sequence * n` or `n * sequence` (a string, list or tuple), within _MAX_TEXT; else _Unknown."""
    sequence, times = (left, right) if isinstance(left, str | list | tuple) else (right, left)
    if not isinstance(sequence, str | list | tuple) or type(times) is not int:
        raise _Unknown
    if len(sequence) * max(times, 0) > _MAX_TEXT:
        raise _Unknown
    return sequence * times


def _formatted(part: ast.expr, shown: Mapping[str, object]) -> str:
    """One part of an f-string: its text, or its field's value converted and formatted as Python does
    (format() of a number, string, bool or None runs no code of the program; a spec it refuses raises)."""
    if isinstance(part, ast.Constant):
        return str(part.value)
    assert isinstance(part, ast.FormattedValue)
    value = _evaluate(part.value, shown)
    if holds_a_set(value):
        raise _Unknown  # printed as here, in an order or with an address that need not be the program's
    converters: dict[int, Callable[[object], str]] = {ord("s"): str, ord("r"): repr, ord("a"): ascii}
    if part.conversion in converters:
        value = converters[part.conversion](value)
    spec = _constant_spec(part)
    if spec is None or (spec and not isinstance(value, int | float | str)):
        raise _Unknown
    if any(int(width) > _MAX_TEXT for width in re.findall(r"\d+", spec)):
        raise _Unknown  # a width or precision that would build a huge text before it is checked
    text = format(value, spec)
    if len(text) > _MAX_TEXT:
        raise _Unknown
    return text


_ITERABLES = (str, list, tuple, dict, range, _Iterator)
# The comprehension steps one evaluation has taken, against MAX_ELEMENTS for all its comprehensions
# together (nested ones would otherwise multiply their bounds)
_STEPS: contextvars.ContextVar[list[int]] = contextvars.ContextVar("deduce_steps")  # set by _value, mutation_reprs


def _comprehension(node: ast.ListComp | ast.GeneratorExp | ast.DictComp, shown: Mapping[str, object]) -> object:
    """A list or dict comprehension's value, or a generator expression's elements as a list (what
    `sum`, `any` or `''.join` then take: the same result, when no element raises), within MAX_ELEMENTS
    steps for the whole evaluation (_STEPS)."""
    results: list[object] = []
    steps = _STEPS.get()

    def run(index: int, scope: Mapping[str, object]) -> None:
        if index == len(node.generators):
            if isinstance(node, ast.DictComp):
                results.append((_evaluate(node.key, scope), _evaluate(node.value, scope)))
            else:
                results.append(_evaluate(node.elt, scope))
            return
        generator = node.generators[index]
        iterable = _evaluate(generator.iter, scope)
        if not isinstance(iterable, _ITERABLES):
            raise _Unknown
        for element in iterable:
            steps[0] += 1
            if steps[0] > MAX_ELEMENTS:
                raise _Unknown
            inner = dict(scope)
            _bind_target(generator.target, element, inner)
            if all(_evaluate(condition, inner) for condition in generator.ifs):
                run(index + 1, inner)

    run(0, shown)
    return dict(results) if isinstance(node, ast.DictComp) else results  # type: ignore[arg-type]


def _bind_target(target: ast.expr, value: object, scope: dict[str, object]) -> None:
    """Bind a comprehension's `for` target as Python unpacks it."""
    if isinstance(target, ast.Name):
        scope[target.id] = _Rebuilt(value)
        return
    assert isinstance(target, ast.Tuple)
    if not isinstance(value, _ITERABLES):
        raise _Unknown
    parts = list(value)
    if len(parts) != len(target.elts):
        raise _Unknown  # the program raises a ValueError
    for part, element in zip(target.elts, parts, strict=True):
        _bind_target(part, element, scope)


def _call(name: str, arguments: list[object], keywords: Mapping[str | None, object]) -> object:
    """A builtin of _FUNCTIONS called on literal values; the lazy results of reversed, enumerate and zip are _Iterators."""
    if name == "range":
        span = range(*(_int(a) for a in arguments))
        if len(span) > MAX_ELEMENTS:
            raise _Unknown
        return span
    if name == "divmod" and len(arguments) == 2:
        return divmod(_number(arguments[0]), _number(arguments[1]))
    if name in _NUMERIC_FUNCTIONS:
        return _NUMERIC_FUNCTIONS[name](*arguments)
    if name in ("set", "frozenset") and len(arguments) <= 1:
        made = set if name == "set" else frozenset
        if arguments and not isinstance(arguments[0], _ITERABLES + _ORDERLESS):
            raise _Unknown
        return made(arguments[0]) if arguments else made()  # type: ignore[call-overload]
    if name == "dict" and len(arguments) <= 1:
        if not arguments:
            return {}
        if not isinstance(arguments[0], _ITERABLES):
            raise _Unknown
        pairs = arguments[0] if isinstance(arguments[0], dict) else list(arguments[0])  # type: ignore[call-overload]
        return dict(pairs)  # pairs of other shapes raise, as they do in the program
    orderless = False  # the values of a set, in this process's order
    if name in ("min", "max") and len(arguments) > 1:
        values: list[Any] = list(arguments)
    elif name == "zip":
        if not all(isinstance(a, _ITERABLES) for a in arguments):
            raise _Unknown
        return _Iterator(list(zip(*arguments, strict=False)))  # type: ignore[call-overload]  # it stops at the shortest
    elif name == "str" and len(arguments) == 1:
        (value,) = arguments
        if holds_a_set(value):
            raise _Unknown  # its text would show an order, or a repr, that need not be the program's
        return str(value)  # of a builtin value, its repr (but for a str itself): what the program prints
    elif name in ("int", "bool", "chr", "ord", "abs") and len(arguments) == 1:
        (value,) = arguments
        if isinstance(value, list | tuple | dict):
            raise _Unknown  # a container: left to the model
        return {"int": int, "bool": bool, "chr": chr, "ord": ord, "abs": abs}[name](value)  # type: ignore[operator]
    else:
        if len(arguments) not in ((1, 2) if name == "enumerate" else (1,)):
            raise _Unknown  # enumerate's start is the only second argument taken
        orderless = isinstance(arguments[0], _ORDERLESS) and name in _READ_IN_ANY_ORDER
        if not isinstance(arguments[0], _ITERABLES) and not orderless:
            raise _Unknown
        values = list(arguments[0])  # type: ignore[call-overload]
        if orderless and name == "sum" and not all(type(v) is int for v in values):
            raise _Unknown  # a sum of floats depends on their order
    if name in ("len", "reversed") and isinstance(arguments[0], _Iterator):
        raise _Unknown  # Python refuses: an iterator has no length and cannot be reversed
    if name == "len":
        return len(values)
    if name in ("min", "max", "sorted") and "key" not in keywords:
        if not (all(type(v) in (int, float) for v in values) or all(type(v) is str for v in values)
                or all(type(v) is tuple for v in values)):
            raise _Unknown  # a mix that raises, or ties between equal values of other types
        if name == "sorted":
            if set(keywords) - {"reverse"} or type(keywords.get("reverse", False)) is not bool:
                raise _Unknown
            return sorted(values, reverse=bool(keywords.get("reverse", False)))
        return min(values) if name == "min" else max(values)
    if name in ("min", "max", "sorted") and set(keywords) <= {"key", "reverse"}:
        return _by_key(name, values, keywords, distinct=orderless)
    if name == "sum":
        return sum(_number(v) for v in values)
    if name in ("any", "all"):
        return any(values) if name == "any" else all(values)
    if name == "enumerate":
        if "start" in keywords and len(arguments) == 2:
            raise _Unknown  # given twice: the program raises
        start = arguments[1] if len(arguments) == 2 else keywords.get("start", 0)
        return _Iterator(list(enumerate(values, _int(start))))
    if name == "reversed":
        return _Iterator(values[::-1])
    if name == "list":
        return values
    if name == "tuple":
        return tuple(values)
    raise _Unknown


def _by_key(name: str, values: list[Any], keywords: Mapping[str | None, object], distinct: bool) -> object:
    """min, max or sorted with `key=`: the key of each value computed once, in order, as Python does;
    keys of the types plain min, max and sorted take, or bools (`key=str.isupper`; else _Unknown), and, for the values of a set
    (`distinct`), no two keys equal. Python's min and max give the first
    of equal keys and sorted keeps their order (also with reverse=True): so do these."""
    key, reverse = keywords.get("key"), keywords.get("reverse", False)
    if not callable(key) or type(reverse) is not bool:
        raise _Unknown
    keys = [key(v) for v in values]
    if distinct and len(set(keys)) != len(keys):
        raise _Unknown  # values of a set with equal keys: which comes first is their order here
    if not (all(type(k) in (int, float, bool) for k in keys) or all(type(k) is str for k in keys)
            or all(type(k) is tuple for k in keys)):
        raise _Unknown
    if name == "sorted":
        return [values[i] for i in sorted(range(len(values)), key=keys.__getitem__, reverse=reverse)]
    if reverse or not values:
        raise _Unknown  # min and max take no `reverse`; of nothing, they raise
    chosen = min if name == "min" else max
    return values[chosen(range(len(values)), key=keys.__getitem__)]


def _round(number: object, digits: object = None) -> object:
    if digits is not None:
        return round(_number(number), _int(digits))
    return round(_number(number))


def _float(value: object = 0.0) -> float:
    if not isinstance(value, int | float | str):
        raise _Unknown
    return float(value)


def _pow(base: object, exponent: object, modulus: object = None) -> object:
    if modulus is None:
        return _power(_number(base), _number(exponent))
    return pow(_int(base), _int(exponent), _int(modulus))  # modular: as fast for any exponent


# Builtins of numbers, each called with the arguments as given (a wrong count raises TypeError: _Unknown)
_NUMERIC_FUNCTIONS: dict[str, Callable[..., object]] = {
    "float": _float, "round": _round, "pow": _pow,
    "bin": lambda n: bin(_int(n)), "hex": lambda n: hex(_int(n)), "oct": lambda n: oct(_int(n)),
}


def _value(node: ast.expr, shown: Mapping[str, object]) -> object:
    token = _STEPS.set([0])
    try:
        return _evaluate(node, shown)
    except Exception:  # _Unknown, or anything a builtin raises on a value it refuses: the values do not tell
        return _Unknown
    finally:
        _STEPS.reset(token)


def constant_value(node: ast.expr, rebound: frozenset[str] = frozenset()) -> object:
    """The value of an expression that reads no variable, made of literals and the builtins here not
    named in `rebound` (`'$78'.upper()`, `list(range(5))`, `''.join(['A'] * 20)`); ValueError for any
    other, or for a value that is or holds a set or an iterator (their repr is not one to write)."""
    if expression_reads(node, set(rebound)) != frozenset():
        raise ValueError("not an expression of literals and builtins")
    value = _value(node, {})
    if value is _Unknown or holds_a_set(value):
        raise ValueError("its value is not known here")
    return value


def iterable_elements(node: ast.expr, shown: Mapping[str, str], max_repr: int) -> list[object] | None:
    """The elements iterating `node` gives, on the values `shown` (name -> repr) holds, in order; None
    where those values do not tell, or an element's repr would be cut by the tracer at `max_repr`."""
    value = _value(node, shown)
    if not isinstance(value, _ITERABLES):
        return None
    elements = list(value)
    if len(elements) > MAX_ELEMENTS:
        return None
    if any(len(repr(e)) > max_repr or holds_a_set(e) for e in elements):
        return None
    return elements


def value_repr(node: ast.expr, shown: Mapping[str, str], max_repr: int) -> str | None:
    """The repr of `node`'s value on the values `shown` holds, cut as the tracer cuts it (at `max_repr`
    characters, then "..."); None where they do not tell, or for a value that is or holds a set."""
    value = _value(node, shown)
    if value is _Unknown or holds_a_set(value) or isinstance(value, range):
        return None  # a range's repr is fine too, but the tracer writes `range(0, 3)`: keep it simple
    text = repr(value)
    return text if len(text) <= max_repr else text[:max_repr] + "..."


def truth(node: ast.expr, shown: Mapping[str, str]) -> bool | None:
    """Whether `node` is true on the values `shown` holds; None where they do not tell."""
    value = _value(node, shown)
    return None if value is _Unknown else bool(value)


PRINT_KEYWORDS = frozenset({"sep", "end", "flush"})


def print_reads(call: ast.Call, bound: set[str]) -> frozenset[str] | None:
    """The variables a call of the builtin `print` reads, where its arguments are expressions
    expression_reads accepts and its keywords are constant `sep`, `end` (text or None) and `flush`;
    None for anything else (a `file=`, a starred argument, a program that rebinds `print`)."""
    if not (isinstance(call.func, ast.Name) and call.func.id == "print") or "print" in bound:
        return None
    for keyword in call.keywords:
        if keyword.arg not in PRINT_KEYWORDS or not isinstance(keyword.value, ast.Constant):
            return None
        if keyword.arg != "flush" and not (keyword.value.value is None or isinstance(keyword.value.value, str)):
            return None
    reads: set[str] = set()
    for argument in call.args:
        found = None if isinstance(argument, ast.Starred) else expression_reads(argument, bound)
        if found is None:
            return None
        reads |= found
    return frozenset(reads)


def printed_text(call: ast.Call, shown: Mapping[str, str]) -> str | None:
    """What a call print_reads accepted writes, on the values `shown` holds: the str() of each argument
    (for the values built here, a string's own text, and otherwise its repr), joined by `sep`, then
    `end`; None where the values do not tell."""
    values = [_value(argument, shown) for argument in call.args]
    if any(v is _Unknown or holds_a_set(v) for v in values):
        return None
    options = {k.arg: k.value.value for k in call.keywords if isinstance(k.value, ast.Constant)}
    sep, end = options.get("sep"), options.get("end")
    text = (" " if sep is None else str(sep)).join(str(v) for v in values) + ("\n" if end is None else str(end))
    return text if len(text) <= _MAX_TEXT else None


# Methods that change a list or a dict in place, by type: on literal values none runs the program's code.
_MUTATORS: dict[type, frozenset[str]] = {
    list: frozenset({"append", "extend", "insert", "pop", "remove", "sort", "reverse", "clear"}),
    dict: frozenset({"update", "pop", "setdefault", "clear", "popitem"}),
}
MUTATOR_NAMES = frozenset().union(*_MUTATORS.values())


def mutation_reprs(statement: ast.stmt, container: str, shown: Mapping[str, str],
                   max_repr: int) -> tuple[str, str | None] | None:
    """For a statement that changes the list or dict `container` shows (flow.mutations:
    `C.method(...)`, `X = C.method(...)`, `C[KEY] = VALUE`, `C[KEY] op= VALUE`, `del C[KEY]`): the
    container's repr after it and, for `X = C.method(...)`, the repr of what the method returns (else
    None), each cut as the tracer cuts it. None where the shown values do not tell: the container cut,
    a set, a builtin that raises, or a name it reads whose repr holds the container's (it may be the
    same object, or hold it, which would make the container hold itself)."""
    text = shown.get(container)
    try:
        obj = shown_literal(text)
    except _Unknown:
        return None
    assert text is not None
    if type(obj) not in _MUTATORS:
        return None
    read = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id != container}
    if any(text in shown.get(name, "") for name in read):
        return None
    namespace: dict[str, object] = {**shown, container: _Rebuilt(obj)}
    token = _STEPS.set([0])
    try:
        result = _mutate(statement, obj, namespace)
    except Exception:  # as in _value
        return None
    finally:
        _STEPS.reset(token)
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
            raise _Unknown
        arguments = [_evaluate(a, namespace) for a in call.args]
        keywords = {k.arg: _evaluate(k.value, namespace) for k in call.keywords}
        if None in keywords or (keywords and call.func.attr not in ("sort", "update")):
            raise _Unknown
        if call.func.attr == "sort" and (set(keywords) - {"reverse"} or arguments):
            raise _Unknown  # a key function: the program's code
        return _plain(getattr(obj, call.func.attr)(*arguments, **keywords))  # type: ignore[arg-type]
    if isinstance(statement, ast.Delete):
        (target,) = statement.targets
        assert isinstance(target, ast.Subscript)
        del obj[_key(target.slice, namespace)]  # type: ignore[attr-defined]
        return None
    assert isinstance(statement, ast.Assign | ast.AugAssign)
    target = statement.targets[0] if isinstance(statement, ast.Assign) else statement.target
    assert isinstance(target, ast.Subscript)
    key = _key(target.slice, namespace)
    value = _evaluate(statement.value, namespace)
    if isinstance(statement, ast.AugAssign):
        value = _plain(_ARITHMETIC[type(statement.op)](obj[key], value))  # type: ignore[index]
    obj[key] = value  # type: ignore[index]
    _plain(obj)
    return None


def _key(index: ast.expr, namespace: Mapping[str, object]) -> object:
    if isinstance(index, ast.Slice):
        return slice(*(None if b is None else _int(_evaluate(b, namespace)) for b in (index.lower, index.upper, index.step)))
    return _evaluate(index, namespace)


# ---- backwards: what a variable held before a statement, from what it holds after ----------------
# A step back shows the later state; for a few statements the earlier value of what they change follows
# from it: `x += c`, `s = s + t`, `s = t + s`, `xs.append(v)`, `x = xs.pop(i)`, `counts[k] += 1`. Each
# such statement is one-to-one on its target's value (the other names it reads keep their values), so a
# candidate that the forward functions above turn back into the shown value is the only one.
_MAX_CANDIDATES = 200  # a list longer than this is left to the model (one candidate per position)


def value_before(name: str, expression: ast.expr, later: Mapping[str, str], max_repr: int) -> str | None:
    """For a line `NAME = EXPR` (flow.computed_values; `NAME op= EXPR` as `NAME op EXPR`) whose
    expression is NAME and another operand that does not read NAME, joined by +, -, *, ^: NAME's repr
    before the line, from the values `later` (name -> repr) shows after it. None where that does not
    tell: another shape, a float (rounding loses the earlier value), a value cut or not a literal."""
    if not isinstance(expression, ast.BinOp):
        return None
    left_is_name = isinstance(expression.left, ast.Name) and expression.left.id == name
    other = expression.right if left_is_name else expression.left
    if not (left_is_name or isinstance(expression.right, ast.Name) and expression.right.id == name):
        return None
    if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(other)):
        return None
    try:
        after = shown_literal(later.get(name))
    except _Unknown:
        return None
    if isinstance(after, list) and any(later[name] in later.get(n.id, "")
                                       for n in ast.walk(other) if isinstance(n, ast.Name)):
        return None  # `xs += ys` extends xs in place: ys may be the same list, changed too
    operand = _value(other, later)
    if operand is _Unknown:
        return None
    candidates = _scalar_before(type(expression.op), after, operand, left_is_name)
    return _verified(candidates, max_repr, lambda text: value_repr(expression, {**later, name: text}, max_repr)
                     == later[name])


def values_before(names: tuple[str, ...], expression: ast.expr, later: Mapping[str, str],
                  max_repr: int) -> tuple[tuple[str, str], ...]:
    """For a line `A, B = EXPR` (flow.computed_values) whose expression is a tuple of those names in
    another order (`a, b = b, a`), or of one of them and an operation that value_before can undo on
    another (`a, b = b, a + b`): (name, repr) pairs of their values before the line, from the values
    `later` shows after it, checked by computing the line forward again; a single name goes to
    value_before. Empty where that does not tell."""
    if len(names) == 1:
        text = value_before(names[0], expression, later, max_repr)
        return ((names[0], text),) if text is not None else ()
    if not isinstance(expression, ast.Tuple) or len(expression.elts) != len(names):
        return ()
    before: dict[str, str] = {}
    for name, element in zip(names, expression.elts, strict=True):
        if isinstance(element, ast.Name) and element.id in names:
            if element.id in before or name not in later:
                return ()
            before[element.id] = later[name]  # `name` got what `element` held
    for name, element in zip(names, expression.elts, strict=True):
        if isinstance(element, ast.BinOp) and name in later:
            unknown = [n.id for n in ast.walk(element) if isinstance(n, ast.Name) and n.id in names and n.id not in before]
            if len(unknown) == 1:
                earlier = {**later, **before}
                text = value_before(unknown[0], element, {**earlier, unknown[0]: later[name]}, max_repr)
                if text is not None:
                    before[unknown[0]] = text
    if set(before) != set(names):
        return ()
    elements = iterable_elements(expression, {**later, **before}, max_repr)
    if elements is None or [repr(e) for e in elements] != [later.get(name) for name in names]:
        return ()
    return tuple((name, before[name]) for name in names)


def _scalar_before(op: type, after: object, operand: object, name_on_left: bool) -> list[object]:
    """The values v with `v op operand` (or `operand op v`) == after, for the one-to-one cases."""
    if type(after) is int and type(operand) is int:
        if op is ast.Add:
            return [after - operand]
        if op is ast.Sub:
            return [after + operand if name_on_left else operand - after]
        if op is ast.BitXor:
            return [after ^ operand]
        if op is ast.Mult and operand != 0 and after % operand == 0:
            return [after // operand]
        return []
    if op is ast.Add and type(after) is type(operand) and isinstance(after, str | list | tuple):
        size = len(operand)  # type: ignore[arg-type]
        if size > len(after):
            return []
        return [after[:len(after) - size] if name_on_left else after[size:]]
    return []


def _verified(candidates: list[object], max_repr: int, gives_later: Callable[[str], bool]) -> str | None:
    """The one candidate whose repr, put back in the earlier state, gives the later state."""
    found = {text for text in (repr(c) for c in candidates) if len(text) <= max_repr and gives_later(text)}
    return found.pop() if len(found) == 1 else None


def container_before(statement: ast.stmt, container: str, result: str | None, later: Mapping[str, str],
                     max_repr: int) -> str | None:
    """For a line that changes one list or dict (flow.mutations): the container's repr before it, from
    the values `later` shows after it, where the statement is one-to-one on it: `C.append(V)`,
    `C.extend(V)`, `C.insert(I, V)`, `C.reverse()`, `X = C.pop(...)` (X tells what left),
    `C[K] op= V` and `C[K] = C[K] op V` or `C.get(K, D) op V` (with op one of + - * ^). None elsewhere."""
    text = later.get(container)
    try:
        after = shown_literal(text)
    except _Unknown:
        return None
    assert text is not None
    read = {n.id for n in ast.walk(statement) if isinstance(n, ast.Name) and n.id not in (container, result)}
    if any(text in later.get(name, "") for name in read):
        return None  # another name may be the same object, or hold it: it changed too
    uses = sum(isinstance(n, ast.Name) and n.id == container for n in ast.walk(statement))
    if uses != (2 if isinstance(statement, ast.Assign) and result is None else 1):
        return None  # only as what changes (and `C[K] = C[K] op V`): else two earlier values may give one later
    candidates = _containers_before(statement, container, result, after, later)
    if not candidates:
        return None

    def gives_later(before: str) -> bool:
        reprs = mutation_reprs(statement, container, {**later, container: before}, max_repr)
        return reprs is not None and reprs[0] == text and (result is None or reprs[1] == later.get(result))

    return _verified(candidates, max_repr, gives_later)


def _containers_before(statement: ast.stmt, container: str, result: str | None, after: object,
                       later: Mapping[str, str]) -> list[object]:
    if isinstance(statement, ast.Expr | ast.Assign) and isinstance(statement.value, ast.Call):
        if (not isinstance(after, list) or len(after) > _MAX_CANDIDATES
                or not isinstance(statement.value.func, ast.Attribute)):  # `C[::3] = sorted(...)`: not a method
            return []
        method = statement.value.func.attr
        if method == "append" and result is None:
            return [after[:-1]] if after else []
        if method == "extend" and result is None and len(statement.value.args) == 1:
            added = _value(statement.value.args[0], later)
            if not isinstance(added, str | list | tuple | dict) or len(added) > len(after):
                return []
            return [after[:len(after) - len(added)]]
        if method == "insert" and result is None:
            return [after[:i] + after[i + 1:] for i in range(len(after))]
        if method == "reverse" and result is None:
            return [after[::-1]]
        if method == "pop" and result is not None and not statement.value.keywords:
            try:
                popped = shown_literal(later.get(result))
            except _Unknown:
                return []
            return [after[:i] + [popped] + after[i:] for i in range(len(after) + 1)]
        return []
    target = statement.targets[0] if isinstance(statement, ast.Assign) else getattr(statement, "target", None)
    if not isinstance(target, ast.Subscript) or isinstance(target.slice, ast.Slice) \
            or not isinstance(after, list | dict) or isinstance(statement, ast.Delete):
        return []
    key = _value(target.slice, later)
    if key is _Unknown or isinstance(key, list | dict) or (isinstance(after, list) and type(key) is not int):
        return []
    try:
        now = after[key]  # type: ignore[index,call-overload]
    except (KeyError, IndexError, TypeError):
        return []
    if isinstance(statement, ast.AugAssign):
        op, operand_node = type(statement.op), statement.value
    else:
        value = getattr(statement, "value", None)
        if not isinstance(value, ast.BinOp) or not _reads_item(value.left, container, target.slice):
            return []
        op, operand_node = type(value.op), value.right
    operand = _value(operand_node, later)
    if operand is _Unknown:
        return []
    candidates: list[object] = []
    for item in _scalar_before(op, now, operand, name_on_left=True):
        before = after.copy()
        before[key] = item  # type: ignore[index,call-overload]
        candidates.append(before)
    if isinstance(after, dict) and list(after)[-1] == key:
        candidates.append({k: v for k, v in after.items() if k != key})  # the key may be new (`get` gave D)
    return candidates


def _reads_item(node: ast.expr, container: str, key: ast.expr) -> bool:
    """`C[K]` or `C.get(K, D)` with D a constant: the item the statement stores to."""
    if isinstance(node, ast.Subscript):
        return isinstance(node.value, ast.Name) and node.value.id == container and ast.dump(node.slice) == ast.dump(key)
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name) and node.func.value.id == container and len(node.args) == 2
            and ast.dump(node.args[0]) == ast.dump(key) and isinstance(node.args[1], ast.Constant) and not node.keywords)
