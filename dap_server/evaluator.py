"""A small, safe expression evaluator over the values a paused state shows.

Hover, watch, repl, breakpoint conditions and log-point messages are evaluated here, never by running
the user's program (in neural mode there is no program to run: the values are predictions). The
evaluator walks the AST of one expression and supports:

- names (the current frame's variables, parsed from their reprs) and constants;
- attribute access on constructor-style values (`p.x` for `Point(x=1, y=2)`), and the pure methods of
  str, list, tuple, dict and set listed in `_METHODS` (`s.upper()`, `d.get('k')`, `d.items()`);
- subscripts and slices, arithmetic, comparisons, boolean operators, `x if c else y`, literals of
  lists/tuples/dicts/sets, comprehensions, f-strings without format specs;
- the builtins in `_FUNCTIONS` (len, min, max, sum, sorted, abs, str, int, ...).

Every operation is bounded (expression size, operation budget, sizes of produced strings, lists and
integers), so no expression can hang or exhaust the adapter. Anything else raises `EvalError` with a
message saying what is not supported.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from dap_server.values import Opaque, Record, container_children, show, with_attributes
from model_backend import safe_ast

MAX_EXPRESSION_CHARS = 4_000
MAX_OPERATIONS = 200_000
MAX_SEQUENCE = 1_000_000
MAX_INT_BITS = 100_000


class EvalError(Exception):
    """The expression cannot be evaluated here; the message says why."""


def _check_size(value: Any) -> Any:
    if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)) and len(value) > MAX_SEQUENCE:
        raise EvalError(f"result too large ({len(value)} items)")
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise EvalError("integer result too large")
    return value


def _safe_pow(a: Any, b: Any) -> Any:
    if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1 and a.bit_length() * b > MAX_INT_BITS:
        raise EvalError("power too large")
    return a**b


def _safe_mul(a: Any, b: Any) -> Any:
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, (str, bytes, list, tuple)) and isinstance(n, int) and len(seq) * max(n, 0) > MAX_SEQUENCE:
            raise EvalError("repeated sequence too large")
    if isinstance(a, int) and isinstance(b, int) and a.bit_length() + b.bit_length() > MAX_INT_BITS:
        raise EvalError("integer result too large")
    return a * b


def _safe_lshift(a: Any, b: Any) -> Any:
    if isinstance(b, int) and b > MAX_INT_BITS:
        raise EvalError("shift too large")
    return a << b


def _safe_mod(a: Any, b: Any) -> Any:
    if isinstance(a, (str, bytes)):
        raise EvalError("%-formatting is not supported")
    return a % b


_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: _safe_mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: _safe_mod,
    ast.Pow: _safe_pow,
    ast.LShift: _safe_lshift,
    ast.RShift: operator.rshift,
    ast.BitAnd: operator.and_,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
}
_UNARY: dict[type, Callable[[Any], Any]] = {
    ast.USub: operator.neg,
    ast.UAdd: operator.pos,
    ast.Not: operator.not_,
    ast.Invert: operator.invert,
}
_COMPARE: dict[type, Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: operator.contains(b, a),
    ast.NotIn: lambda a, b: not operator.contains(b, a),
}


def _bounded_range(*args: Any) -> list[int]:
    r = range(*args)
    if len(r) > MAX_SEQUENCE:
        raise EvalError("range too large")
    return list(r)


def _to_str(value: Any = "") -> str:
    return value if isinstance(value, str) else show(value)


def _vars(value: Any) -> dict[str, Any]:
    if isinstance(value, Record) and value.fields:
        return dict(value.fields)
    raise EvalError("vars() needs an object whose attributes the engine shows")


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "len": len,
    "min": min,
    "max": max,
    "sum": sum,
    "sorted": sorted,
    "abs": abs,
    "str": _to_str,
    "repr": show,
    "int": int,
    "float": float,
    "bool": bool,
    "complex": complex,
    "list": list,
    "tuple": tuple,
    "set": set,
    "frozenset": frozenset,
    "dict": dict,
    "round": round,
    "any": any,
    "all": all,
    "reversed": lambda x: list(reversed(x)),
    "enumerate": lambda *a, **k: list(enumerate(*a, **k)),
    "zip": lambda *a: list(zip(*a, strict=False)),
    "range": _bounded_range,
    "divmod": divmod,
    "pow": lambda a, b, *m: pow(a, b, *m) if m else _safe_pow(a, b),
    "chr": chr,
    "ord": ord,
    "hex": hex,
    "oct": oct,
    "bin": bin,
    "isnan": math.isnan,
    "type": lambda x: _TypeName(type(x).__name__ if not isinstance(x, Record) else x.name),
    "vars": _vars,
}

_METHODS: dict[type, frozenset[str]] = {
    str: frozenset(
        ["upper", "lower", "strip", "lstrip", "rstrip", "split", "rsplit", "startswith", "endswith", "count", "find", "rfind", "index", "rindex", "replace", "join", "isdigit", "isalpha", "isalnum", "isspace", "isupper", "islower", "isnumeric", "isdecimal", "istitle", "title", "capitalize", "casefold", "swapcase", "splitlines", "partition", "rpartition", "removeprefix", "removesuffix"]
    ),
    bytes: frozenset(["decode", "startswith", "endswith", "count", "find", "index", "hex"]),
    list: frozenset(["count", "index", "copy"]),
    tuple: frozenset(["count", "index"]),
    dict: frozenset(["keys", "values", "items", "get", "copy"]),
    set: frozenset(["union", "intersection", "difference", "symmetric_difference", "issubset", "issuperset", "isdisjoint", "copy"]),
    frozenset: frozenset(["union", "intersection", "difference", "symmetric_difference", "issubset", "issuperset", "isdisjoint"]),
    int: frozenset(["bit_length", "bit_count"]),
    float: frozenset(["is_integer"]),
}
_VIEW_METHODS = frozenset({"keys", "values", "items"})


class _TypeName(str):
    """What `type(x)` gives here: the type's name, written like Python writes a class."""

    def __repr__(self) -> str:
        return f"<class '{self}'>"


class Evaluator:
    """Evaluates expressions against a mapping of names to repr strings (or already parsed values), and
    the attributes recorded for the names that hold the program's objects (`values.with_attributes`)."""

    def __init__(self, names: Mapping[str, Any], parsed: bool = False,
                 attributes: Mapping[str, Mapping[str, str]] | None = None) -> None:
        self._raw = names
        self._attributes = attributes or {}
        self._parsed: dict[str, Any] = dict(names) if parsed else {}
        self._is_parsed = parsed
        self._ops = 0

    def lookup(self, name: str) -> Any:
        if name in self._parsed:
            return self._parsed[name]
        if not self._is_parsed and name in self._raw:
            value = with_attributes(self._raw[name], self._attributes.get(name))
            self._parsed[name] = value
            return value
        raise KeyError(name)

    def evaluate(self, expression: str) -> Any:
        if not isinstance(expression, str) or not expression.strip():
            raise EvalError("empty expression")
        if len(expression) > MAX_EXPRESSION_CHARS:
            raise EvalError(f"expression longer than {MAX_EXPRESSION_CHARS} characters")
        try:
            tree = safe_ast.parse(expression.strip(), mode="eval")
        except SyntaxError as exc:
            raise EvalError(f"syntax error: {exc.msg}") from None
        except (ValueError, MemoryError, RecursionError) as exc:
            raise EvalError(f"cannot parse expression: {exc}") from None
        self._ops = 0
        try:
            return _check_size(self._eval(tree.body, {}))
        except EvalError:
            raise
        except RecursionError:
            raise EvalError("expression nested too deeply") from None
        except (ArithmeticError, TypeError, ValueError, KeyError, IndexError, AttributeError, MemoryError) as exc:
            raise EvalError(f"{type(exc).__name__}: {exc}") from None

    # ---- the walk ----------------------------------------------------------------------------------
    def _tick(self, n: int = 1) -> None:
        self._ops += n
        if self._ops > MAX_OPERATIONS:
            raise EvalError("expression too expensive to evaluate here")

    def _eval(self, node: ast.AST, scope: dict[str, Any]) -> Any:  # noqa: C901 - a dispatcher
        self._tick()
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            return self._name(node.id, scope)
        if isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
            if op is None:
                raise EvalError(f"operator {type(node.op).__name__} is not supported")
            left, right = self._eval(node.left, scope), self._eval(node.right, scope)
            self._computable(left), self._computable(right)
            return _check_size(op(left, right))
        if isinstance(node, ast.UnaryOp):
            operand = self._eval(node.operand, scope)
            if not isinstance(node.op, ast.Not):
                self._computable(operand)
            return _UNARY[type(node.op)](operand)
        if isinstance(node, ast.BoolOp):
            result: Any = None
            for value_node in node.values:
                result = self._eval(value_node, scope)
                if isinstance(node.op, ast.And) and not result:
                    return result
                if isinstance(node.op, ast.Or) and result:
                    return result
            return result
        if isinstance(node, ast.Compare):
            left = self._eval(node.left, scope)
            for op_node, comparator in zip(node.ops, node.comparators, strict=True):
                right = self._eval(comparator, scope)
                if not isinstance(op_node, (ast.Is, ast.IsNot, ast.Eq, ast.NotEq)):
                    self._computable(left), self._computable(right)
                if not _COMPARE[type(op_node)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self._eval(node.body if self._eval(node.test, scope) else node.orelse, scope)
        if isinstance(node, ast.Subscript):
            return self._subscript(self._eval(node.value, scope), node.slice, scope)
        if isinstance(node, ast.Attribute):
            return self._attribute(self._eval(node.value, scope), node.attr)
        if isinstance(node, ast.Call):
            return self._call(node, scope)
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
            items = []
            for elt in node.elts:
                if isinstance(elt, ast.Starred):
                    items.extend(self._iterate(self._eval(elt.value, scope)))
                else:
                    items.append(self._eval(elt, scope))
            if isinstance(node, ast.List):
                return _check_size(items)
            return _check_size(tuple(items) if isinstance(node, ast.Tuple) else set(items))
        if isinstance(node, ast.Dict):
            out: dict[Any, Any] = {}
            for key, value in zip(node.keys, node.values, strict=True):
                if key is None:
                    out.update(self._eval(value, scope))
                else:
                    out[self._eval(key, scope)] = self._eval(value, scope)
            return out
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self._comprehension(node, scope)
        if isinstance(node, ast.JoinedStr):
            return self._fstring(node, scope)
        if isinstance(node, ast.Slice):
            raise EvalError("a slice is only allowed inside []")
        kind = {
            ast.Lambda: "lambda",
            ast.NamedExpr: "assignment (:=)",
            ast.Await: "await",
            ast.Yield: "yield",
            ast.YieldFrom: "yield",
        }.get(type(node), type(node).__name__)
        raise EvalError(f"{kind} is not supported by the debugger's evaluator")

    def _name(self, name: str, scope: dict[str, Any]) -> Any:
        if name in scope:
            return scope[name]
        try:
            return self.lookup(name)
        except KeyError:
            pass
        if name in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[name]
        if name in ("inf", "nan"):
            return math.inf if name == "inf" else math.nan
        if name in _FUNCTIONS:
            raise EvalError(f"{name} can only be called here, e.g. {name}(x)")
        raise EvalError(f"name '{name}' is not defined in the current frame")

    @staticmethod
    def _computable(value: Any) -> None:
        if isinstance(value, Opaque):
            raise EvalError(f"{value.text} is known only by its repr; the debugger cannot compute with it")

    def _iterate(self, value: Any) -> list[Any]:
        self._computable(value)
        if isinstance(value, Record):
            kids = container_children(value)
            if len(value.args) == 1 and not value.fields:
                return list(value.args[0])
            raise EvalError(f"cannot iterate over {value.name}(...) ({len(kids)} fields)")
        if isinstance(value, (str, bytes, list, tuple, dict, set, frozenset, range)) or _is_view(value):
            items = list(value)
            self._tick(len(items))
            return items
        raise EvalError(f"'{type(value).__name__}' object is not iterable")

    def _subscript(self, value: Any, index_node: ast.AST, scope: dict[str, Any]) -> Any:
        self._computable(value)
        if isinstance(value, Record):
            if len(value.args) == 1 and not value.fields:
                value = value.args[0]
            else:
                raise EvalError(f"{value.name}(...) is not subscriptable here; use its fields (.name)")
        if isinstance(index_node, ast.Slice):
            parts = [
                None if part is None else self._eval(part, scope)
                for part in (index_node.lower, index_node.upper, index_node.step)
            ]
            index: Any = slice(*parts)
        else:
            index = self._eval(index_node, scope)
        if isinstance(value, (set, frozenset)):
            raise EvalError("'set' object is not subscriptable")
        return value[index]

    def _attribute(self, value: Any, attr: str) -> Any:
        if isinstance(value, Record):
            if attr in value.fields:
                return value.fields[attr]
            raise EvalError(f"{value.name}(...) shows no field '{attr}'")
        if isinstance(value, Opaque):
            raise EvalError(f"cannot read .{attr} of {value.text}: the engine shows only its repr")
        if isinstance(value, complex) and attr in ("real", "imag"):
            return getattr(value, attr)
        methods = _METHODS.get(type(value), frozenset())
        if attr in methods:
            return _BoundMethod(value, attr)
        raise EvalError(f"'{type(value).__name__}' attribute '{attr}' is not supported by the evaluator")

    def _call(self, node: ast.Call, scope: dict[str, Any]) -> Any:
        args: list[Any] = []
        for arg in node.args:
            if isinstance(arg, ast.Starred):
                args.extend(self._iterate(self._eval(arg.value, scope)))
            else:
                args.append(self._eval(arg, scope))
        kwargs: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                raise EvalError("** arguments are not supported")
            if kw.arg == "key":
                raise EvalError("key= functions are not supported by the evaluator")
            kwargs[kw.arg] = self._eval(kw.value, scope)
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, Opaque):
                self._computable(a)
        if isinstance(node.func, ast.Name) and node.func.id not in scope:
            name = node.func.id
            try:
                self.lookup(name)
                raise EvalError(f"'{name}' is a variable of the program; calling it would run the program")
            except KeyError:
                pass
            fn = _FUNCTIONS.get(name)
            if fn is None:
                raise EvalError(f"calling '{name}' is not supported (the debugger never runs the program's code)")
            for a in args:
                if isinstance(a, (list, tuple, dict, set, frozenset, str)):
                    self._tick(len(a))
            return _check_size(fn(*[_unwrap(a) for a in args], **kwargs))
        target = self._eval(node.func, scope)
        if isinstance(target, _BoundMethod):
            for a in args:
                if isinstance(a, (list, tuple, dict, set, frozenset, str)):
                    self._tick(len(a))
            if (target.name == "replace" and len(args) >= 2 and isinstance(args[1], str)
                    and (len(target.obj) + 1) * max(1, len(args[1])) > MAX_SEQUENCE):
                raise EvalError("replacement result too large")
            result = getattr(target.obj, target.name)(*args, **kwargs)
            if target.name in _VIEW_METHODS:
                result = list(result)
            return _check_size(result)
        raise EvalError("only the listed builtins and pure methods can be called")

    def _comprehension(self, node: ast.AST, scope: dict[str, Any]) -> Any:
        assert isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp))
        results: list[Any] = []

        def run(generators: list[ast.comprehension], inner: dict[str, Any]) -> None:
            if not generators:
                if isinstance(node, ast.DictComp):
                    results.append((self._eval(node.key, inner), self._eval(node.value, inner)))
                else:
                    results.append(self._eval(node.elt, inner))
                if len(results) > MAX_SEQUENCE:
                    raise EvalError("comprehension result too large")
                return
            gen, rest = generators[0], generators[1:]
            if gen.is_async:
                raise EvalError("async comprehensions are not supported")
            for item in self._iterate(self._eval(gen.iter, inner)):
                self._tick()
                local = dict(inner)
                _bind(gen.target, item, local)
                if all(self._eval(cond, local) for cond in gen.ifs):
                    run(rest, local)

        run(list(node.generators), dict(scope))
        if isinstance(node, ast.DictComp):
            return dict(results)
        if isinstance(node, ast.SetComp):
            return set(results)
        return results  # a generator expression is shown as the list it would produce

    def _fstring(self, node: ast.JoinedStr, scope: dict[str, Any]) -> str:
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value))
            elif isinstance(part, ast.FormattedValue):
                if part.format_spec is not None:
                    raise EvalError("format specs in f-strings are not supported")
                value = self._eval(part.value, scope)
                out.append(show(value) if part.conversion == ord("r") or not isinstance(value, str) else value)
        text = "".join(out)
        return _check_size(text)


class _BoundMethod:
    def __init__(self, obj: Any, name: str) -> None:
        self.obj, self.name = obj, name

    def __repr__(self) -> str:
        return f"<method {self.name} of {type(self.obj).__name__}>"


def _is_view(value: Any) -> bool:
    return type(value).__name__ in ("dict_keys", "dict_values", "dict_items")


def _unwrap(value: Any) -> Any:
    if isinstance(value, Record) and len(value.args) == 1 and not value.fields:
        return value.args[0]
    return value


def _bind(target: ast.AST, value: Any, scope: dict[str, Any]) -> None:
    if isinstance(target, ast.Name):
        scope[target.id] = value
        return
    if isinstance(target, (ast.Tuple, ast.List)):
        items = list(value) if isinstance(value, Iterable) else None
        if items is None or len(items) != len(target.elts):
            raise EvalError("cannot unpack value in comprehension")
        for sub, item in zip(target.elts, items, strict=True):
            _bind(sub, item, scope)
        return
    raise EvalError("unsupported comprehension target")


def evaluate(expression: str, names: Mapping[str, str]) -> Any:
    """Evaluate `expression` over `names` (name -> repr string). Raises EvalError."""
    return Evaluator(names).evaluate(expression)


def interpolate(message: str, names: Mapping[str, str],
                attributes: Mapping[str, Mapping[str, str]] | None = None) -> str:
    """A log-point message: `{expr}` parts are evaluated and written as str() would; `{{`/`}}` escape."""
    evaluator = Evaluator(names, attributes=attributes)
    out: list[str] = []
    i = 0
    while i < len(message):
        ch = message[i]
        if ch == "{" and message.startswith("{{", i):
            out.append("{")
            i += 2
            continue
        if ch == "}" and message.startswith("}}", i):
            out.append("}")
            i += 2
            continue
        if ch == "{":
            depth, j = 1, i + 1
            while j < len(message) and depth:
                depth += {"{": 1, "}": -1}.get(message[j], 0)
                j += 1
            if depth:
                out.append(message[i:])
                break
            expr = message[i + 1 : j - 1]
            try:
                value = evaluator.evaluate(expr)
                out.append(value if isinstance(value, str) else show(value))
            except EvalError as exc:
                out.append(f"<error: {exc}>")
            i = j
            continue
        out.append(ch)
        i += 1
    return "".join(out)
