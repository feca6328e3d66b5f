"""Computing an expression of the source on the values a state shows (model_backend/grammar/values.py
says which expressions qualify).

`evaluate(node, shown)` computes an expression on rebuilt values, calling only the builtins, methods
and operators allowed; `value_of(node, shown)` does it for an expression once checked, counting the
steps of the comprehensions it runs (a bound on the work done here), and `constant_value(node)` gives
the value of an expression of constants alone. Each raises `Unknown` where the shown values do not
tell.
"""

from __future__ import annotations

import ast
import contextvars
import re
import string
from collections.abc import Callable, Mapping
from typing import Any

from model_backend.grammar.values import (
    ARITHMETIC,
    BITWISE,
    COMPARISONS,
    MAX_ELEMENTS,
    MAX_TEXT,
    METHOD_KEYWORDS,
    METHODS,
    ORDERLESS,
    READ_IN_ANY_ORDER,
    SET_OPERATORS,
    TAKES_A_FUNCTION,
    TYPES,
    WIDTH_METHODS,
    BuiltIterator,
    Rebuilt,
    Unknown,
    as_int,
    as_number,
    checked_power,
    checked_types,
    constant_spec,
    expression_reads,
    holds_a_set,
    is_class_method,
    plain_value,
    shown_value,
    type_check,
)


def evaluate(node: ast.expr, shown: Mapping[str, object]) -> object:
    """The value of an expression expression_reads accepted, on the shown values (reprs, or objects
    already rebuilt from them: a name read twice is one object); raises Unknown."""
    try:
        return plain_value(_evaluate_unchecked(node, shown))
    except (TypeError, ValueError, KeyError, IndexError, ZeroDivisionError, OverflowError, AttributeError) as error:
        raise Unknown from error  # the program raises here: the model says how


def _evaluate_unchecked(node: ast.expr, shown: Mapping[str, object]) -> object:
    if isinstance(node, ast.Name):
        value = shown.get(node.id)
        return value.value if isinstance(value, Rebuilt) else shown_value(value)  # type: ignore[arg-type]
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.UnaryOp):
        operand = evaluate(node.operand, shown)
        if isinstance(node.op, ast.Not):
            return not operand
        if isinstance(node.op, ast.Invert):
            return ~as_int(operand)
        return -as_number(operand) if isinstance(node.op, ast.USub) else +as_number(operand)
    if isinstance(node, ast.BoolOp):
        value = evaluate(node.values[0], shown)
        for later in node.values[1:]:
            if bool(value) == isinstance(node.op, ast.Or):
                return value  # `and` stops at a false value, `or` at a true one
            value = evaluate(later, shown)
        return value
    if isinstance(node, ast.IfExp):
        return evaluate(node.body if evaluate(node.test, shown) else node.orelse, shown)
    if isinstance(node, ast.Compare) and (checked := type_check(node, set())) is not None:
        named = TYPES[node.comparators[0].id]  # type: ignore[attr-defined]  # type_check: a type's name
        return (type(evaluate(checked, shown)) is named) == isinstance(node.ops[0], ast.Eq | ast.Is)
    if isinstance(node, ast.Compare):
        left = evaluate(node.left, shown)
        for op, comparator in zip(node.ops, node.comparators, strict=True):
            right = evaluate(comparator, shown)
            if isinstance(op, ast.Is | ast.IsNot):
                result = (left is None) == isinstance(op, ast.Is)
            else:
                if isinstance(op, ast.In | ast.NotIn) and not isinstance(right, str | list | tuple | dict | set | frozenset):
                    raise Unknown
                result = bool(COMPARISONS[type(op)](left, right))
            if not result:
                return False
            left = right
        return True
    if isinstance(node, ast.BinOp):
        left, right = evaluate(node.left, shown), evaluate(node.right, shown)
        if isinstance(node.op, ast.Add) and type(left) is type(right) and type(left) in (str, list, tuple):
            return left + right  # type: ignore[operator]
        if isinstance(node.op, ast.Mult) and (isinstance(left, str | list | tuple) or isinstance(right, str | list | tuple)):
            return _repeated(left, right)
        if isinstance(node.op, ast.Mod) and isinstance(left, str):  # printf-style formatting
            _check_format(left, right if isinstance(right, tuple | dict) else [right], printf=True)
            return left % right  # type: ignore[operator]
        if isinstance(left, ORDERLESS) and isinstance(right, ORDERLESS) and type(node.op) in SET_OPERATORS:
            return SET_OPERATORS[type(node.op)](left, right)
        if type(node.op) in BITWISE:
            return BITWISE[type(node.op)](as_int(left), as_int(right))
        return ARITHMETIC[type(node.op)](as_number(left), as_number(right))
    if isinstance(node, ast.ListComp | ast.GeneratorExp | ast.DictComp):
        return _comprehension(node, shown)
    if isinstance(node, ast.Dict):
        return {evaluate(k, shown): evaluate(v, shown) for k, v in zip(node.keys, node.values, strict=True)
                if k is not None}
    if isinstance(node, ast.JoinedStr):
        return "".join(_formatted(v, shown) for v in node.values)
    if isinstance(node, ast.Tuple | ast.List):
        elements = [evaluate(e, shown) for e in node.elts]
        return tuple(elements) if isinstance(node, ast.Tuple) else elements
    if isinstance(node, ast.Set):
        return {evaluate(e, shown) for e in node.elts}  # an unhashable element raises TypeError: Unknown
    if isinstance(node, ast.Subscript):
        value = evaluate(node.value, shown)
        index = node.slice
        if isinstance(index, ast.Slice):
            if not isinstance(value, str | list | tuple):
                raise Unknown
            bounds = [None if b is None else as_int(evaluate(b, shown)) for b in (index.lower, index.upper, index.step)]
            return value[slice(*bounds)]
        key = evaluate(index, shown)
        if isinstance(value, dict):
            return value[key]
        if not isinstance(value, str | list | tuple):
            raise Unknown
        return value[as_int(key)]
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "isinstance":
            types = checked_types(node.args[1], set()) if len(node.args) == 2 else None
            if types is None:
                raise Unknown
            return isinstance(evaluate(node.args[0], shown), types)
        if isinstance(node.func, ast.Name) and node.func.id in TAKES_A_FUNCTION:
            function, *rest = node.args
            passes_none = isinstance(function, ast.Constant) and function.value is None
            return _map_or_filter(node.func.id, None if passes_none else _function(function, shown),
                                  [evaluate(a, shown) for a in rest])
        arguments = [evaluate(a, shown) for a in node.args]
        if isinstance(node.func, ast.Name):
            keywords = {k.arg: _function(k.value, shown) if k.arg == "key" else evaluate(k.value, shown)
                        for k in node.keywords}
            return _call(node.func.id, arguments, keywords)
        if is_class_method(node.func, "dict", "fromkeys"):
            if not 1 <= len(arguments) <= 2 or not isinstance(arguments[0], ITERABLES):
                raise Unknown
            keys = list(arguments[0])  # type: ignore[call-overload]
            if len(keys) > MAX_ELEMENTS:
                raise Unknown
            return dict.fromkeys(keys, *arguments[1:])
        if is_class_method(node.func, "str", "maketrans"):
            if not all(isinstance(a, str | dict) for a in arguments):
                raise Unknown
            return str.maketrans(*arguments)  # type: ignore[call-overload]  # a wrong mix raises: Unknown
        assert isinstance(node.func, ast.Attribute)
        receiver = evaluate(node.func.value, shown)
        return _method(receiver, node.func.attr, arguments, {k.arg: evaluate(k.value, shown) for k in node.keywords})
    raise Unknown


def _method(receiver: object, method: str, arguments: list[object], keywords: Mapping[str | None, object]) -> object:
    """A method of METHODS called on a literal value, with the keywords METHOD_KEYWORDS allows."""
    if method not in METHODS.get(type(receiver), frozenset()):
        raise Unknown
    if None in keywords or not set(keywords) <= METHOD_KEYWORDS.get(method, frozenset()):
        raise Unknown
    if not isinstance(receiver, ORDERLESS) and any(isinstance(a, ORDERLESS) for a in arguments):
        raise Unknown  # `''.join(s)` would take the set in its order here
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
    if isinstance(node, ast.Attribute) and not is_class_method(node, "str", node.attr):
        receiver, method = evaluate(node.value, shown), node.attr
        return lambda *arguments: _method(receiver, method, list(arguments), {})
    if isinstance(node, ast.Attribute):
        method = node.attr

        def method_of_str(receiver: object = None, *arguments: object) -> object:
            if type(receiver) is not str:
                raise Unknown  # `str.upper(5)` raises a TypeError: the model says how
            return _method(receiver, method, list(arguments), {})

        return method_of_str
    assert isinstance(node, ast.Lambda)
    body, parameters = node.body, [a.arg for a in node.args.args]
    steps = STEPS.get()

    def called(*arguments: object) -> object:
        steps[0] += 1
        if steps[0] > MAX_ELEMENTS or len(arguments) != len(parameters):
            raise Unknown
        return evaluate(body, {**shown, **{name: Rebuilt(a) for name, a in zip(parameters, arguments, strict=True)}})

    return called


def _map_or_filter(name: str, function: Callable[..., object] | None, iterables: list[object]) -> BuiltIterator:
    """`map(function, *iterables)` or `filter(function, iterable)` (None: the true elements), done at
    once: an BuiltIterator of what they give (the same elements, when none raises)."""
    if not iterables or not all(isinstance(i, ITERABLES) for i in iterables):
        raise Unknown
    if name == "map":
        assert function is not None  # expression_reads: only filter takes None
        return BuiltIterator([function(*items) for items in zip(*iterables, strict=False)])  # type: ignore[call-overload]  # stops at the shortest
    if len(iterables) != 1:
        raise Unknown
    return BuiltIterator([e for e in iterables[0] if (function(e) if function else e)])  # type: ignore[attr-defined]


def _check_size(receiver: object, method: str, arguments: list[object],
                keywords: Mapping[str | None, object] | None = None) -> None:
    """Raise Unknown before a str method builds a text longer than MAX_TEXT (a width of 10**9 would
    take the memory first): the width and tab size methods, replace and translate."""
    if not isinstance(receiver, str):
        return
    if method == "format":
        _check_format(receiver, arguments)
    elif method == "translate":
        table = arguments[0] if len(arguments) == 1 else None
        if not isinstance(table, dict):
            raise Unknown  # a table of another kind: its lookups could run the program's code
        longest = max((len(v) if isinstance(v, str) else 1 for v in table.values()), default=1)
        if len(receiver) * longest > MAX_TEXT:
            raise Unknown
    elif method in WIDTH_METHODS or method == "expandtabs":
        size = arguments[0] if arguments else (keywords or {}).get("tabsize", 8)  # expandtabs' default tab size
        if type(size) is not int:
            raise Unknown
        length = size if method in WIDTH_METHODS else size * (receiver.count("\t") + 1) + len(receiver)
        if length > MAX_TEXT:
            raise Unknown
    elif method == "replace" and len(arguments) >= 2 and isinstance(arguments[0], str) and isinstance(arguments[1], str):
        places = receiver.count(arguments[0]) if arguments[0] else len(receiver) + 1
        if len(receiver) + places * len(arguments[1]) > MAX_TEXT:
            raise Unknown


def _check_format(template: str, arguments: object, printf: bool = False) -> None:
    """Raise Unknown before `template.format(...)` or `template % ...` builds a huge text (a width of
    10**9, written in the template or taken from an argument: `%*d`, `{:{}}`), or prints a value whose
    text here is not the program's (a set, an iterator)."""
    if any(int(width) > MAX_TEXT for width in re.findall(r"\d+", template)):
        raise Unknown
    if printf and "*" in template:
        raise Unknown
    if not printf:
        try:
            fields = list(string.Formatter().parse(template))
        except ValueError as error:
            raise Unknown from error
        if any(spec and "{" in spec for _, _, spec, _ in fields):
            raise Unknown
    if holds_a_set(arguments) or (isinstance(arguments, dict) and any(holds_a_set(v) for v in arguments.values())):
        raise Unknown


def _repeated(left: object, right: object) -> object:
    """`sequence * n` or `n * sequence` (a string, list or tuple), within MAX_TEXT; else Unknown."""
    sequence, times = (left, right) if isinstance(left, str | list | tuple) else (right, left)
    if not isinstance(sequence, str | list | tuple) or type(times) is not int:
        raise Unknown
    if len(sequence) * max(times, 0) > MAX_TEXT:
        raise Unknown
    return sequence * times


def _formatted(part: ast.expr, shown: Mapping[str, object]) -> str:
    """One part of an f-string: its text, or its field's value converted and formatted as Python does
    (format() of a number, string, bool or None runs no code of the program; a spec it refuses raises)."""
    if isinstance(part, ast.Constant):
        return str(part.value)
    assert isinstance(part, ast.FormattedValue)
    value = evaluate(part.value, shown)
    if holds_a_set(value):
        raise Unknown  # printed as here, in an order or with an address that need not be the program's
    converters: dict[int, Callable[[object], str]] = {ord("s"): str, ord("r"): repr, ord("a"): ascii}
    if part.conversion in converters:
        value = converters[part.conversion](value)
    spec = constant_spec(part)
    if spec is None or (spec and not isinstance(value, int | float | str)):
        raise Unknown
    if any(int(width) > MAX_TEXT for width in re.findall(r"\d+", spec)):
        raise Unknown  # a width or precision that would build a huge text before it is checked
    text = format(value, spec)
    if len(text) > MAX_TEXT:
        raise Unknown
    return text


ITERABLES = (str, list, tuple, dict, range, BuiltIterator)
# The comprehension steps one evaluation has taken, against MAX_ELEMENTS for all its comprehensions
# together (nested ones would otherwise multiply their bounds)
STEPS: contextvars.ContextVar[list[int]] = contextvars.ContextVar("evaluation_steps")  # set by value_of, mutation_reprs


def _comprehension(node: ast.ListComp | ast.GeneratorExp | ast.DictComp, shown: Mapping[str, object]) -> object:
    """A list or dict comprehension's value, or a generator expression's elements as a list (what
    `sum`, `any` or `''.join` then take: the same result, when no element raises), within MAX_ELEMENTS
    steps for the whole evaluation (STEPS)."""
    results: list[object] = []
    steps = STEPS.get()

    def run(index: int, scope: Mapping[str, object]) -> None:
        if index == len(node.generators):
            if isinstance(node, ast.DictComp):
                results.append((evaluate(node.key, scope), evaluate(node.value, scope)))
            else:
                results.append(evaluate(node.elt, scope))
            return
        generator = node.generators[index]
        iterable = evaluate(generator.iter, scope)
        if not isinstance(iterable, ITERABLES):
            raise Unknown
        for element in iterable:
            steps[0] += 1
            if steps[0] > MAX_ELEMENTS:
                raise Unknown
            inner = dict(scope)
            _bind_target(generator.target, element, inner)
            if all(evaluate(condition, inner) for condition in generator.ifs):
                run(index + 1, inner)

    run(0, shown)
    return dict(results) if isinstance(node, ast.DictComp) else results  # type: ignore[arg-type]


def _bind_target(target: ast.expr, value: object, scope: dict[str, object]) -> None:
    """Bind a comprehension's `for` target as Python unpacks it."""
    if isinstance(target, ast.Name):
        scope[target.id] = Rebuilt(value)
        return
    assert isinstance(target, ast.Tuple)
    if not isinstance(value, ITERABLES):
        raise Unknown
    parts = list(value)
    if len(parts) != len(target.elts):
        raise Unknown  # the program raises a ValueError
    for part, element in zip(target.elts, parts, strict=True):
        _bind_target(part, element, scope)


def _call(name: str, arguments: list[object], keywords: Mapping[str | None, object]) -> object:
    """A builtin of _FUNCTIONS called on literal values; the lazy results of reversed, enumerate and zip are _Iterators."""
    if name == "range":
        span = range(*(as_int(a) for a in arguments))
        if len(span) > MAX_ELEMENTS:
            raise Unknown
        return span
    if name == "divmod" and len(arguments) == 2:
        return divmod(as_number(arguments[0]), as_number(arguments[1]))
    if name in _NUMERIC_FUNCTIONS:
        return _NUMERIC_FUNCTIONS[name](*arguments)
    if name in ("set", "frozenset") and len(arguments) <= 1:
        made = set if name == "set" else frozenset
        if arguments and not isinstance(arguments[0], ITERABLES + ORDERLESS):
            raise Unknown
        return made(arguments[0]) if arguments else made()  # type: ignore[call-overload]
    if name == "dict" and len(arguments) <= 1:
        if not arguments:
            return {}
        if not isinstance(arguments[0], ITERABLES):
            raise Unknown
        pairs = arguments[0] if isinstance(arguments[0], dict) else list(arguments[0])  # type: ignore[call-overload]
        return dict(pairs)  # pairs of other shapes raise, as they do in the program
    orderless = False  # the values of a set, in this process's order
    if name in ("min", "max") and len(arguments) > 1:
        values: list[Any] = list(arguments)
    elif name == "zip":
        if not all(isinstance(a, ITERABLES) for a in arguments):
            raise Unknown
        return BuiltIterator(list(zip(*arguments, strict=False)))  # type: ignore[call-overload]  # it stops at the shortest
    elif name == "str" and len(arguments) == 1:
        (value,) = arguments
        if holds_a_set(value):
            raise Unknown  # its text would show an order, or a repr, that need not be the program's
        return str(value)  # of a builtin value, its repr (but for a str itself): what the program prints
    elif name in ("int", "bool", "chr", "ord", "abs") and len(arguments) == 1:
        (value,) = arguments
        if isinstance(value, list | tuple | dict):
            raise Unknown  # a container: left to the model
        return {"int": int, "bool": bool, "chr": chr, "ord": ord, "abs": abs}[name](value)  # type: ignore[operator]
    else:
        if len(arguments) not in ((1, 2) if name == "enumerate" else (1,)):
            raise Unknown  # enumerate's start is the only second argument taken
        orderless = isinstance(arguments[0], ORDERLESS) and name in READ_IN_ANY_ORDER
        if not isinstance(arguments[0], ITERABLES) and not orderless:
            raise Unknown
        values = list(arguments[0])  # type: ignore[call-overload]
        if orderless and name == "sum" and not all(type(v) is int for v in values):
            raise Unknown  # a sum of floats depends on their order
    if name in ("len", "reversed") and isinstance(arguments[0], BuiltIterator):
        raise Unknown  # Python refuses: an iterator has no length and cannot be reversed
    if name == "len":
        return len(values)
    if name in ("min", "max", "sorted") and "key" not in keywords:
        if not (all(type(v) in (int, float) for v in values) or all(type(v) is str for v in values)
                or all(type(v) is tuple for v in values)):
            raise Unknown  # a mix that raises, or ties between equal values of other types
        if name == "sorted":
            if set(keywords) - {"reverse"} or type(keywords.get("reverse", False)) is not bool:
                raise Unknown
            return sorted(values, reverse=bool(keywords.get("reverse", False)))
        return min(values) if name == "min" else max(values)
    if name in ("min", "max", "sorted") and set(keywords) <= {"key", "reverse"}:
        return _by_key(name, values, keywords, distinct=orderless)
    if name == "sum":
        return sum(as_number(v) for v in values)
    if name in ("any", "all"):
        return any(values) if name == "any" else all(values)
    if name == "enumerate":
        if "start" in keywords and len(arguments) == 2:
            raise Unknown  # given twice: the program raises
        start = arguments[1] if len(arguments) == 2 else keywords.get("start", 0)
        return BuiltIterator(list(enumerate(values, as_int(start))))
    if name == "reversed":
        return BuiltIterator(values[::-1])
    if name == "list":
        return values
    if name == "tuple":
        return tuple(values)
    raise Unknown


def _by_key(name: str, values: list[Any], keywords: Mapping[str | None, object], distinct: bool) -> object:
    """min, max or sorted with `key=`: the key of each value computed once, in order, as Python does;
    keys of the types plain min, max and sorted take, or bools (`key=str.isupper`; else Unknown), and, for the values of a set
    (`distinct`), no two keys equal. Python's min and max give the first
    of equal keys and sorted keeps their order (also with reverse=True): so do these."""
    key, reverse = keywords.get("key"), keywords.get("reverse", False)
    if not callable(key) or type(reverse) is not bool:
        raise Unknown
    keys = [key(v) for v in values]
    if distinct and len(set(keys)) != len(keys):
        raise Unknown  # values of a set with equal keys: which comes first is their order here
    if not (all(type(k) in (int, float, bool) for k in keys) or all(type(k) is str for k in keys)
            or all(type(k) is tuple for k in keys)):
        raise Unknown
    if name == "sorted":
        return [values[i] for i in sorted(range(len(values)), key=keys.__getitem__, reverse=reverse)]
    if reverse or not values:
        raise Unknown  # min and max take no `reverse`; of nothing, they raise
    chosen = min if name == "min" else max
    return values[chosen(range(len(values)), key=keys.__getitem__)]


def _round(number: object, digits: object = None) -> object:
    if digits is not None:
        return round(as_number(number), as_int(digits))
    return round(as_number(number))


def _float(value: object = 0.0) -> float:
    if not isinstance(value, int | float | str):
        raise Unknown
    return float(value)


def _pow(base: object, exponent: object, modulus: object = None) -> object:
    if modulus is None:
        return checked_power(as_number(base), as_number(exponent))
    return pow(as_int(base), as_int(exponent), as_int(modulus))  # modular: as fast for any exponent


# Builtins of numbers, each called with the arguments as given (a wrong count raises TypeError: Unknown)
_NUMERIC_FUNCTIONS: dict[str, Callable[..., object]] = {
    "float": _float, "round": _round, "pow": _pow,
    "bin": lambda n: bin(as_int(n)), "hex": lambda n: hex(as_int(n)), "oct": lambda n: oct(as_int(n)),
}


def value_of(node: ast.expr, shown: Mapping[str, object]) -> object:
    token = STEPS.set([0])
    try:
        return evaluate(node, shown)
    except Exception:  # Unknown, or anything a builtin raises on a value it refuses: the values do not tell
        return Unknown
    finally:
        STEPS.reset(token)


def constant_value(node: ast.expr, rebound: frozenset[str] = frozenset()) -> object:
    """The value of an expression that reads no variable, made of literals and the builtins here not
    named in `rebound` (`'$78'.upper()`, `list(range(5))`, `''.join(['A'] * 20)`); ValueError for any
    other, or for a value that is or holds a set or an iterator (their repr is not one to write)."""
    if expression_reads(node, set(rebound)) != frozenset():
        raise ValueError("not an expression of literals and builtins")
    value = value_of(node, {})
    if value is Unknown or holds_a_set(value):
        raise ValueError("its value is not known here")
    return value
