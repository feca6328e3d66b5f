"""Turning the engine's value strings (Python reprs) back into values the debugger can show and compute with.

An engine only ever gives `repr()` strings. `parse_value` reads them with a restricted literal reader
(ast, never eval): numbers, strings, bytes, None/True/False, lists, tuples, dicts, sets, frozensets,
`inf`/`nan`, and "constructor" reprs such as `Point(x=1, y=2)` or `deque([1, 2])`, which become
`Record`s whose fields can be expanded and read as attributes. Anything else (`<object at 0x..>`, a
truncated repr ending in `...`) becomes `Opaque`: shown as its text, not expandable, not computable.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from model_backend import safe_ast

MAX_PARSE_CHARS = 100_000
MAX_NODES = 50_000


@dataclass(frozen=True)
class Opaque:
    """A value known only by its repr text."""

    text: str

    def __repr__(self) -> str:
        return self.text


@dataclass(eq=False)
class Record:
    """A constructor-style repr `Name(arg, ..., key=value, ...)` with literal arguments."""

    name: str
    args: tuple[Any, ...] = ()
    fields: dict[str, Any] = field(default_factory=dict)
    text: str = ""

    def __repr__(self) -> str:
        if self.text:
            return self.text
        parts = [repr(a) for a in self.args] + [f"{k}={v!r}" for k, v in self.fields.items()]
        return f"{self.name}({', '.join(parts)})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Record):
            return (self.name, self.args, self.fields) == (other.name, other.args, other.fields)
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.name, self.args))

    def __len__(self) -> int:
        if len(self.args) == 1 and not self.fields and hasattr(self.args[0], "__len__"):
            return len(self.args[0])
        raise TypeError(f"object of type '{self.name}' has no len() the debugger can know")

    def children(self) -> list[tuple[str, Any, str]]:
        """(display name, value, accessor suffix) for expansion."""
        out: list[tuple[str, Any, str]] = []
        if len(self.args) == 1 and not self.fields and is_container(self.args[0]):
            # deque([1, 2]), Counter({...}): show the wrapped container's items directly.
            return container_children(self.args[0])
        for i, a in enumerate(self.args):
            out.append((f"[{i}]", a, ""))
        for k, v in self.fields.items():
            out.append((k, v, f".{k}"))
        return out


class _NotLiteral(Exception):
    pass


_NAMED = {"inf": math.inf, "nan": math.nan, "None": None, "True": True, "False": False, "Ellipsis": ...}


def _convert(node: ast.AST, budget: list[int]) -> Any:
    budget[0] -= 1
    if budget[0] < 0:
        raise _NotLiteral("too large")
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.List):
        return [_convert(e, budget) for e in node.elts]
    if isinstance(node, ast.Tuple):
        return tuple(_convert(e, budget) for e in node.elts)
    if isinstance(node, ast.Set):
        return {_hashable(_convert(e, budget)) for e in node.elts}
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise _NotLiteral("dict unpacking")
        return {
            _hashable(_convert(k, budget)): _convert(v, budget)
            for k, v in zip(node.keys, node.values, strict=True)
            if k is not None
        }
    if isinstance(node, ast.Name):
        if node.id in _NAMED:
            return _NAMED[node.id]
        raise _NotLiteral(node.id)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        operand = _convert(node.operand, budget)
        if isinstance(operand, (int, float, complex)) and not isinstance(operand, bool):
            return -operand if isinstance(node.op, ast.USub) else operand
        raise _NotLiteral("unary")
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        left, right = _convert(node.left, budget), _convert(node.right, budget)
        if isinstance(left, (int, float)) and isinstance(right, complex):
            return left + right if isinstance(node.op, ast.Add) else left - right
        raise _NotLiteral("binop")
    if isinstance(node, ast.Call):
        name = _dotted(node.func)
        if name is None or any(isinstance(a, ast.Starred) for a in node.args):
            raise _NotLiteral("call")
        if any(k.arg is None for k in node.keywords):
            raise _NotLiteral("call **")
        args = tuple(_convert(a, budget) for a in node.args)
        kwargs = {k.arg: _convert(k.value, budget) for k in node.keywords if k.arg is not None}
        if name == "set" and not args and not kwargs:
            return set()
        if name == "frozenset" and not kwargs and len(args) <= 1:
            return frozenset(args[0]) if args else frozenset()
        return Record(name, args, kwargs)
    raise _NotLiteral(type(node).__name__)


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else None
    return None


def _hashable(value: Any) -> Any:
    try:
        hash(value)
    except TypeError:
        raise _NotLiteral("unhashable") from None
    return value


def parse_value(text: str) -> Any:
    """The value a repr string stands for, or `Opaque(text)` when it cannot be read as a literal."""
    if not isinstance(text, str):
        return Opaque(str(text))
    if len(text) > MAX_PARSE_CHARS:
        return Opaque(text)
    try:
        tree = safe_ast.parse(text.strip(), mode="eval")
        value = _convert(tree.body, [MAX_NODES])
    except (SyntaxError, ValueError, _NotLiteral, RecursionError, MemoryError, TypeError):
        return Opaque(text)
    if isinstance(value, Record):
        value.text = text
    return value


_SEGMENT = re.compile(r"\.?([A-Za-z_]\w*)|(\[[^\[\]]*\])")


def _split_path(path: str) -> tuple[str, str]:
    """`next.val` -> (`next`, `val`); `[0].name` -> (`[0]`, `name`); `children[1]` -> (`children`, `[1]`)."""
    m = _SEGMENT.match(path)
    if m is None:
        return path, ""
    rest = path[m.end() :]
    return m.group(1) or m.group(2), rest[1:] if rest.startswith(".") else rest


def with_attributes(text: str, attributes: Mapping[str, str] | None) -> Any:
    """A value the engine shows by its repr `text`, with what the oracle recorded inside it (reprs by
    path: {"val": "1", "next": "<__main__.Node object>", "next.val": "2", "kids[0].val": "3"}). An
    object becomes a Record whose fields are its attributes; a list, tuple or dict gets those of its
    elements that are objects rebuilt the same way; so they expand and `node.kids[0].val` computes.
    Without attributes, `parse_value(text)`."""
    value = parse_value(text)
    if not attributes:
        return value
    texts: dict[str, str] = {}
    inside: dict[str, dict[str, str]] = {}
    for path, path_text in attributes.items():
        segment, rest = _split_path(path)
        if rest:
            inside.setdefault(segment, {})[rest] = path_text
        else:
            texts[segment] = path_text
    if isinstance(value, Opaque):  # a container of objects (`[<__main__.D object>]`): from its elements
        value = _container_from(text, texts)
    fields: dict[str, Any] = {}
    for segment, segment_text in texts.items():
        child = with_attributes(segment_text, inside.get(segment))
        if not segment.startswith("["):
            fields[segment] = child
        elif isinstance(value, (list, dict)) or (isinstance(value, tuple) and not isinstance(value, Record)):
            key = parse_value(segment[1:-1])
            if isinstance(value, dict) and not isinstance(key, Opaque) and key in value:
                value[key] = child
            elif isinstance(value, tuple) and type(key) is int and 0 <= key < len(value):
                value = (*value[:key], child, *value[key + 1 :])
            elif isinstance(value, list) and type(key) is int and 0 <= key < len(value):
                value[key] = child
    if not fields:
        return value
    if isinstance(value, Record):  # a repr of its own (a dataclass): the recorded attributes complete it
        return Record(value.name, value.args, {**value.fields, **fields}, text)
    return Record(type_name(value) or "object", (), fields, text)


def _container_from(text: str, elements: Mapping[str, str]) -> Any:
    """The list, tuple or dict `text` shows, from the reprs the tracer recorded for every element
    (`[0]`, `['k']`); Opaque(text) when they do not make it whole."""
    keys = [parse_value(segment[1:-1]) for segment in elements if segment.startswith("[")]
    items = [parse_value(t) for segment, t in elements.items() if segment.startswith("[")]
    opener = text[:1]
    if opener in "[(" and keys == list(range(len(keys))):
        return items if opener == "[" else tuple(items)
    if opener == "{" and keys and all(type(k) in (int, str) for k in keys):
        return dict(zip(keys, items, strict=True))
    return Opaque(text)


def is_container(value: Any) -> bool:
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        return len(value) > 0
    if isinstance(value, Record):
        return bool(value.children())
    return False


def _sorted_if_possible(items: Any) -> list[Any]:
    try:
        return sorted(items)
    except TypeError:
        return list(items)


def container_children(value: Any) -> list[tuple[str, Any, str]]:
    """(display name, child value, accessor suffix for evaluateName) of an expandable value."""
    if isinstance(value, (list, tuple)):
        return [(str(i), v, f"[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        return [(repr(k), v, f"[{k!r}]") for k, v in value.items()]
    if isinstance(value, (set, frozenset)):
        return [(str(i), v, "") for i, v in enumerate(_sorted_if_possible(value))]
    if isinstance(value, Record):
        return value.children()
    return []


# How the repr of a function, a class and a generator begins -> the name of its type.
OPAQUE_TYPE_PREFIXES = (("<function ", "function"), ("<class ", "type"), ("<generator object", "generator"))


def type_name(value: Any) -> str:
    """The name of a value's type: a Record's name, an object's class as its repr tells it, Python's
    type name for a literal; "" for an Opaque whose text does not tell."""
    if isinstance(value, Record):
        return value.name
    if isinstance(value, Opaque):
        text = value.text
        if text.startswith("<") and (" object at " in text or text.endswith(" object>")):
            return text[1:].split(" object")[0].rsplit(".", 1)[-1]  # the tracer drops "at 0x..."
        return next((name for prefix, name in OPAQUE_TYPE_PREFIXES if text.startswith(prefix)), "")
    return type(value).__name__


def show(value: Any) -> str:
    """How the debugger writes a value: Python's repr (an Opaque's text as the engine gave it; `...`
    where the tracer marks an object met again inside itself)."""
    if value is Ellipsis:
        return "..."
    try:
        return repr(value)
    except (ValueError, RecursionError):  # e.g. ints beyond the str-conversion limit
        return f"<{type_name(value)} too large to show>"
