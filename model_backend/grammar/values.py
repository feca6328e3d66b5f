"""Shown values and the expressions the grammar may compute on them, with Python's builtins only.

Some expressions of a program are made of nothing but variables, constants, operators and builtins:
a loop's iterable (`for word in sentence.split():`, `for key in sorted(counts):`) or a branch's test
(`if i.isdigit():`, `while left < right and s[left] not in vowels:`). Where each variable they read
shows the whole repr of a literal (a number, a string, a bool, None, or a list, tuple or dict of them),
their value is what the same builtins give here on the same values: `ast.literal_eval` rebuilds the
values, and the operators, builtins and methods allowed below are a fixed list that, on such values,
call no code of the program and change no object. Nothing of the program runs (the neural engine never
runs user code); this reads the source the way a person checking a debugger's state would.

`expression_reads(node, bound)` checks an expression once, from the source (the builtins it may call:
`READING_FUNCTIONS`, the methods: `READING_METHODS`); `shown_literal(text)`, `shown_set(text)` and
`shown_container(shown, name)` rebuild the value a state shows, and `holds_a_set(value)` tells a
value whose order need not be the traced program's. What cannot be told raises `Unknown`: a variable not shown or cut, a set, a builtin
that would raise (then the program raises, which the model predicts). model_backend/grammar/
evaluation.py computes the expressions.
"""

from __future__ import annotations

import ast
import operator
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
# str methods of METHODS, and a lambda of such expressions, may be passed too.
_FUNCTION_VALUES = frozenset({"len", "str", "int", "float", "abs", "ord", "chr", "bool", "round", "sorted", "list",
                              "tuple", "sum", "min", "max", "bin", "hex", "oct"})
TAKES_A_FUNCTION = frozenset({"map", "filter"})  # as their first argument
_SET_METHODS = frozenset({"union", "intersection", "difference", "symmetric_difference", "issubset", "issuperset",
                          "isdisjoint", "copy"})
# Methods an expression may call, by the type of the object they are called on: none changes it.
METHODS: dict[type, frozenset[str]] = {
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
    # what they give is a set, whose order nothing here reads (ORDERLESS)
    set: _SET_METHODS,
    frozenset: _SET_METHODS,
}
# str methods whose result is as long as their first argument (expandtabs grows with its tab size too)
WIDTH_METHODS = frozenset({"zfill", "center", "ljust", "rjust"})
# The keywords a method call may pass (any other keyword is left to the model)
METHOD_KEYWORDS: dict[str, frozenset[str]] = {
    "split": frozenset({"sep", "maxsplit"}), "rsplit": frozenset({"sep", "maxsplit"}),
    "splitlines": frozenset({"keepends"}), "expandtabs": frozenset({"tabsize"}),
}
_METHOD_NAMES = frozenset().union(*METHODS.values())
READING_FUNCTIONS = frozenset(_FUNCTIONS)  # for calls.pure_functions: builtins that read their arguments
READING_METHODS = _METHOD_NAMES


def checked_power(base: Any, exponent: Any) -> object:
    """`base ** exponent` where the result stays a number of _MAX_NUMBER's size (`10 ** 10 ** 9` would
    take the time first): else Unknown, as for a complex result."""
    if type(base) is int and type(exponent) is int and exponent > 0 and abs(base) > 1 \
            and abs(base).bit_length() * exponent > 2 * _MAX_NUMBER.bit_length():
        raise Unknown
    result = base ** exponent
    if type(result) not in (int, float):
        raise Unknown
    return result


def _shifted(number: int, places: int) -> int:
    if places > _MAX_NUMBER.bit_length():
        raise Unknown
    return number << places


ARITHMETIC: dict[type, Callable[[Any, Any], object]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: checked_power,
}
# on ints only (not bools, nor sets or dicts, whose `|` and `&` are the model's)
BITWISE: dict[type, Callable[[int, int], int]] = {
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor, ast.LShift: _shifted,
    ast.RShift: operator.rshift,
}
COMPARISONS: dict[type, Callable[[Any, Any], object]] = {
    ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt,
    ast.GtE: operator.ge, ast.In: lambda a, b: operator.contains(b, a), ast.NotIn: lambda a, b: not operator.contains(b, a),
}
MAX_ELEMENTS = 10_000  # a longer iterable is left to the model
_MAX_NUMBER = 10**12  # arithmetic beyond this is left to the model (and never grows without bound here)
MAX_TEXT = 10_000  # nor does a string or a list built here


class Unknown(Exception):
    """The shown values do not tell the expression's value."""


class Rebuilt:
    """A shown value rebuilt once, so that every read of its name is the same object."""

    def __init__(self, value: object) -> None:
        self.value = value


def expression_reads(node: ast.expr, bound: set[str]) -> frozenset[str] | None:
    """The variables an expression reads, where it is made only of variables, constants, arithmetic,
    comparisons (`is` only against None), `and`/`or`/`not`, conditional expressions, slices and
    indexes, calls of the builtins in _FUNCTIONS (not rebound by the program, `bound`) and of the methods
    in METHODS; None for anything else (the program's own functions, an attribute, a lambda...)."""
    reads: set[str] = set()
    hidden: list[str] = []  # the variables of the comprehensions around the part looked at

    def allowed_function(part: ast.expr) -> bool:
        """A function passed to map, filter or `key=`: a builtin of _FUNCTION_VALUES, `str.METHOD`, or
        a lambda (positional parameters only) whose body is allowed."""
        if isinstance(part, ast.Name):
            return part.id in _FUNCTION_VALUES and part.id not in bound
        if isinstance(part, ast.Attribute) and is_class_method(part, "str", part.attr):
            return part.attr in METHODS[str] and "str" not in bound  # (the program's own `str`: refused)
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
            return (type(part.op) in ARITHMETIC or type(part.op) in BITWISE) and allowed(part.left) and allowed(part.right)
        if isinstance(part, ast.BoolOp):
            return all(allowed(v) for v in part.values)
        if isinstance(part, ast.IfExp):
            return allowed(part.test) and allowed(part.body) and allowed(part.orelse)
        if isinstance(part, ast.Compare):
            checked = type_check(part, bound)
            if checked is not None:
                return allowed(checked)
            for op, right in zip(part.ops, part.comparators, strict=True):
                if isinstance(op, ast.Is | ast.IsNot):
                    if not (isinstance(right, ast.Constant) and right.value is None):
                        return False
                elif type(op) not in COMPARISONS:
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
                isinstance(v, ast.FormattedValue) and allowed(v.value) and constant_spec(v) is not None)
                for v in part.values)
        if isinstance(part, ast.Call):
            if any(isinstance(a, ast.Starred) for a in part.args):
                return False
            func = part.func
            if isinstance(func, ast.Name) and func.id == "isinstance" and "isinstance" not in bound:
                return (len(part.args) == 2 and not part.keywords and checked_types(part.args[1], bound) is not None
                        and allowed(part.args[0]))
            if isinstance(func, ast.Name):
                keywords = _FUNCTIONS.get(func.id)
                if keywords is None or func.id in bound:
                    return False
                if not all(k.arg in keywords and (allowed_function(k.value) if k.arg == "key" else allowed(k.value))
                           for k in part.keywords):
                    return False
                if func.id in TAKES_A_FUNCTION:
                    if len(part.args) < 2:
                        return False
                    function, *iterables = part.args
                    passes_none = func.id == "filter" and isinstance(function, ast.Constant) and function.value is None
                    return (passes_none or allowed_function(function)) and all(allowed(a) for a in iterables)
            elif is_class_method(func, "dict", "fromkeys") or is_class_method(func, "str", "maketrans"):
                if part.keywords or func.value.id in bound:  # type: ignore[attr-defined]  # a Name: checked
                    return False
            elif isinstance(func, ast.Attribute) and func.attr in _METHOD_NAMES:
                if not all(k.arg in METHOD_KEYWORDS.get(func.attr, ()) and allowed(k.value) for k in part.keywords):
                    return False
                if not allowed(func.value):
                    return False
            else:
                return False
            return all(allowed(a) for a in part.args)
        return False

    return frozenset(reads) if allowed(node) else None


TYPES = {"int": int, "float": float, "str": str, "bool": bool, "list": list, "tuple": tuple, "dict": dict}


def checked_types(node: ast.expr, bound: set[str]) -> tuple[type, ...] | None:
    """The builtin types `isinstance`'s second argument names (`int`, `(list, tuple)`), where the
    program does not bind those names; None for anything else."""
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    if not names or not all(isinstance(n, ast.Name) and n.id in TYPES and n.id not in bound for n in names):
        return None
    return tuple(TYPES[n.id] for n in names)  # type: ignore[attr-defined]


def type_check(node: ast.Compare, bound: set[str]) -> ast.expr | None:
    """For `type(X) == T` (or `!=`, `is`, `is not`) with T a builtin type named in the source (not
    bound by the program): X; None for any other comparison."""
    left = node.left
    if not (len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq | ast.NotEq | ast.Is | ast.IsNot)
            and isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "type"
            and "type" not in bound and len(left.args) == 1 and not left.keywords):
        return None
    right = node.comparators[0]
    if not (isinstance(right, ast.Name) and right.id in TYPES and right.id not in bound):
        return None
    return left.args[0]


def is_class_method(func: ast.expr, type_name: str, method: str) -> bool:
    """`dict.fromkeys` or `str.maketrans`, the class methods of builtin types taken."""
    return (isinstance(func, ast.Attribute) and func.attr == method and isinstance(func.value, ast.Name)
            and func.value.id == type_name)


def constant_spec(part: ast.FormattedValue) -> str | None:
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
    of them (not a set). Raises Unknown otherwise."""
    if text is None:
        raise Unknown
    try:
        value = ast.literal_eval(safe_ast.parse(text, mode="eval"))
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError) as error:
        raise Unknown from error
    if repr(value) != text or holds_a_set(value):
        raise Unknown
    return value


def shown_container(shown: Mapping[str, str], name: str) -> tuple[str, object] | None:
    """The text `name` shows and the value it is the whole repr of (shown_literal); None where it shows
    none."""
    text = shown.get(name)
    if text is None:
        return None
    try:
        return text, shown_literal(text)
    except Unknown:
        return None


# Sets: their iteration order here need not be the traced program's (a string's hash differs from one
# process to the next). So a set, shown or built here, is only taken where its order does not matter:
# `in`, len, sorted, min and max (its elements are distinct), sum of ints, any, all, comparisons, the
# set operators and the _SET_METHODS; never iterated in order (a loop, a comprehension, list(), join...:
# none of them takes ORDERLESS values) and never written (holds_a_set).
ORDERLESS = (set, frozenset)
READ_IN_ANY_ORDER = frozenset({"len", "sorted", "min", "max", "sum", "any", "all"})  # set() itself: _call
SET_OPERATORS: dict[type, Callable[[Any, Any], object]] = {
    ast.BitOr: operator.or_, ast.BitAnd: operator.and_, ast.Sub: operator.sub, ast.BitXor: operator.xor,
}


def shown_set(text: str | None) -> set[object]:
    """The set a variable shows (`{3, 'a'}`, `set()`), where each element is written as its repr and none
    twice, the repr of a set in some order; raises Unknown otherwise."""
    if text == "set()":
        return set()
    try:
        node = safe_ast.parse(text or "", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        raise Unknown from error
    if not isinstance(node, ast.Set):
        raise Unknown
    elements = [shown_literal(ast.get_source_segment(text, element)) for element in node.elts]  # type: ignore[arg-type]
    try:
        value = set(elements)
    except TypeError as error:  # an unhashable element: no set holds it
        raise Unknown from error
    if len(value) != len(elements) or "{" + ", ".join(repr(e) for e in elements) + "}" != text:
        raise Unknown
    return value


def shown_value(text: str | None) -> object:
    """shown_literal, or a shown set (only a text that can be one is parsed again: this runs for every
    name an expression reads)."""
    try:
        return shown_literal(text)
    except Unknown:
        if text is None or not (text == "set()" or text.startswith("{")):
            raise
        return shown_set(text)


class BuiltIterator:
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
    if isinstance(value, set | frozenset | BuiltIterator):
        return True
    if id(value) in _within:
        return False
    inside = value if isinstance(value, list | tuple) else [*value, *value.values()] if isinstance(value, dict) else ()
    return any(holds_a_set(v, _within | {id(value)}) for v in inside)  # a dict's keys too: `{frozenset(s): 1}`


def plain_value(value: object) -> object:
    """A value built here stays within bounds, or the expression is left to the model."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int | float):
        if not abs(value) <= _MAX_NUMBER:  # also NaN
            raise Unknown
        return value
    if isinstance(value, str | list | tuple | dict | range | set | frozenset) and len(value) > MAX_TEXT:
        raise Unknown
    return value


def as_int(value: object) -> int:
    if type(value) is not int:
        raise Unknown
    return value


def as_number(value: object) -> int | float:
    if type(value) not in (int, float):
        raise Unknown
    return value  # type: ignore[return-value]
