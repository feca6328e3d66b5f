"""Reading the values a state shows: which reprs are whole literals of the builtin types, what
iterating one gives, what a store of one item makes of a list or a dict, whether a value is true. The
rules of the frame grammar (model_backend/grammar/frame.py) compute from these what a step leaves.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from functools import lru_cache

from model_backend import safe_ast
from model_backend.grammar.bindings import value_repr
from model_backend.grammar.containers import ItemStore
from model_backend.grammar.loops import LoopArgument, iterable_elements
from model_backend.grammar.syntax import ArgumentSource
from model_backend.sandbox import Limits
from model_backend.state import State

# The repr of an int, a float, a str, a bool or None: a value that changes only when its name is rebound.
IMMUTABLE_REPR = re.compile(r"-?\d+(\.\d+)?(e[-+]?\d+)?|'([^'\\\n]|\\.)*'|\"([^\"\\\n]|\\.)*\"|True|False|None")
# How the repr of a list, a tuple, a dict or a set begins (a program without classes has no other
# objects printed so).
CONTAINER_REPR_START = ("[", "(", "{")


def builtin_value(text: str | None) -> bool:
    """Whether a shown value is a number, a string, a bool, None, a list, a tuple, a dict or a set."""
    return text is not None and (text.startswith(CONTAINER_REPR_START) or IMMUTABLE_REPR.fullmatch(text) is not None)


def iterator_type(text: str | None) -> str | None:
    """The type of `iter(value)` for a value shown as `text`, where its repr tells: a list, a tuple, a
    range, or a string without escapes (an escape may hide a character beyond ASCII)."""
    if text is None:
        return None
    if text.startswith("["):
        return "list_iterator"
    if text.startswith("("):
        return "tuple_iterator"
    if text.startswith("range("):
        return "range_iterator"
    if text[:1] in ("'", '"') and "\\" not in text:
        return "str_ascii_iterator" if text.isascii() else "str_iterator"
    return None


MAX_REPR = Limits().max_repr  # the tracer cuts a longer repr


def shown_elements(text: str) -> tuple[list[str], bool] | None:
    """The reprs of what iterating the value shown as `text` gives, in order, and whether that value is
    mutable (a list, a dict or a set); None unless `text` is the whole repr of a str, or of a list, a
    tuple, a dict or a set of literals (a value cut with `...` is not). The elements are read off the
    text, in its order: a set iterates in the order its repr lists."""
    try:
        node = safe_ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return ([repr(ch) for ch in node.value], False) if repr(node.value) == text else None
    if text == "set()":
        return [], True
    if isinstance(node, ast.Dict):
        entries = dict_entries(text, node)
        return ([key for key, _ in entries], True) if entries is not None else None
    if not isinstance(node, ast.List | ast.Tuple | ast.Set):
        return None
    elements = [literal_text(text, e) for e in node.elts]
    if None in elements:
        return None
    opener, closer = {ast.List: ("[", "]"), ast.Tuple: ("(", ")"), ast.Set: ("{", "}")}[type(node)]
    if isinstance(node, ast.Tuple) and len(elements) == 1:
        closer = ",)"
    if text != opener + ", ".join(elements) + closer:  # type: ignore[arg-type]
        return None
    return elements, not isinstance(node, ast.Tuple)  # type: ignore[return-value]


def object_fields(text: str) -> tuple[str, dict[str, str]] | None:
    """The class name and the fields, each field's value as written, of an object shown in trace format
    version 3's form `Name(field=value, ...)`, whole (not cut, no `...` past the fields' bound); None for
    any other text."""
    if len(text) > MAX_REPR:
        return None
    try:
        node = safe_ast.parse(text, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Name) or node.args:
        return None
    fields: dict[str, str] = {}
    for keyword in node.keywords:
        value = ast.get_source_segment(text, keyword.value)
        if keyword.arg is None or value is None or keyword.arg in fields:
            return None
        fields[keyword.arg] = value
    if text != node.func.id + "(" + ", ".join(f"{k}={v}" for k, v in fields.items()) + ")":
        return None
    return node.func.id, fields


def dict_entries(text: str, node: ast.Dict) -> list[tuple[str, str]] | None:
    """The (key, value) texts of the dict `text` shows (parsed as `node`), where it is the whole repr of
    a dict of literals; None otherwise."""
    if None in node.keys:
        return None
    keys = [literal_text(text, k) for k in node.keys]  # type: ignore[arg-type]
    values = [literal_text(text, v) for v in node.values]
    if None in keys or None in values:
        return None
    entries = list(zip(keys, values, strict=True))
    return entries if text == "{" + ", ".join(f"{k}: {v}" for k, v in entries) + "}" else None  # type: ignore[return-value]


def store_parts(store: ItemStore, shown: dict[str, str]) -> tuple[str | None, ...] | None:
    """The repr of `store.container` after the store, as fixed texts around one gap (None) for the
    item's new value: from its shown repr (a whole list, or a whole dict of literal keys) and the key's.
    None where the values do not tell: a value cut or not of the right type, an index out of range, a
    key not there for an augmented store; for `NAME[OUTER][KEY]`, an inner value whose repr shows
    elsewhere in NAME's (it may be the same object)."""
    before = shown[store.container]
    key = key_value(store.key, shown) if store.key is not None else None
    if store.key is not None and key is None:
        return None
    if store.outer is None:
        return item_parts(before, store.kind, key, store.augmented)
    outer = key_value(store.outer, shown)
    around = item_parts(before, "item", outer, True) if outer is not None else None
    if around is None or store.kind != "item":
        return None
    head, _, tail = around
    inner = before[len(head):len(before) - len(tail or "")]  # type: ignore[arg-type]
    if before.count(inner) != 1:
        return None
    parts = item_parts(inner, store.kind, key, store.augmented)
    if parts is None:
        return None
    return (f"{head}{parts[0]}", None, f"{parts[2]}{tail}")


def key_value(source: ArgumentSource, shown: dict[str, str]) -> object | None:
    """The key or index a store names (a variable's shown value, or a literal), where it is an immutable value."""
    assert source is not None
    text = shown.get(source[1]) if source[0] == "name" else source[1]
    try:
        return ast.literal_eval(text) if text is not None and IMMUTABLE_REPR.fullmatch(text) else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def item_parts(before: str, kind: str, key: object | None, augmented: bool) -> tuple[str | None, ...] | None:
    """The repr `before` (a whole list or dict) after a store of one item under `key` (see store_parts)."""
    try:
        node = safe_ast.parse(before, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if isinstance(node, ast.List):
        elements = shown_elements(before)
        if elements is None:
            return None
        items, count = elements[0], len(elements[0])
        if kind == "append":
            return ("[" + "".join(f"{item}, " for item in items), None, "]")
        if not isinstance(key, int):
            return None
        position = int(key)
        if kind == "insert":  # list.insert's clamping
            position = min(max(position + count if position < 0 else position, 0), count)
            rest = items[position:]
        elif -count <= position < count:
            position %= count
            rest = items[position + 1:]
        else:
            return None  # an IndexError
        return ("[" + "".join(f"{item}, " for item in items[:position]), None, "".join(f", {item}" for item in rest) + "]")
    entries = dict_entries(before, node) if isinstance(node, ast.Dict) and kind == "item" else None
    if entries is None:
        return None
    written = [f"{k}: {v}" for k, v in entries]
    try:
        index = next((i for i, (k, _) in enumerate(entries) if ast.literal_eval(k) == key), None)
    except (TypeError, ValueError):
        return None
    if index is None:
        if augmented:
            return None  # a KeyError
        return ("{" + "".join(f"{entry}, " for entry in written) + repr(key) + ": ", None, "}")
    return ("{" + "".join(f"{entry}, " for entry in written[:index]) + f"{entries[index][0]}: ", None,
            "".join(f", {entry}" for entry in written[index + 1:]) + "}")


def literal_text(text: str, node: ast.expr) -> str | None:
    """The part of `text` that `node` spans, where it is a literal written exactly as its repr."""
    part = ast.get_source_segment(text, node)
    if part is None or isinstance(node, ast.Starred):
        return None
    try:
        return part if repr(ast.literal_eval(node)) == part else None
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


INT_REPR = re.compile(r"-?\d+")
MAX_LISTED = 10_000  # a longer range is left to the model
FALSE_REPRS = frozenset({"None", "False", "0", "0.0", "-0.0", "''", '""', "[]", "{}", "()", "set()", "frozenset()",
                          "0j", "b''", 'b""'})


def range_span(arguments: tuple[LoopArgument, ...], shown: dict[str, str],
                length: Callable[[str], int | None]) -> range | None:
    """The range `range(ARGS)` gives, each argument an int literal, a variable showing an int, or
    `len(VARIABLE)` (`length` says how many elements that variable's shown value holds, where it tells);
    None where the values do not tell, or where range() would raise (a step of 0)."""
    values: list[int] = []
    for kind, text in arguments:
        if kind == "int":
            values.append(int(text))
        elif kind == "name" and INT_REPR.fullmatch(shown.get(text, "")):
            values.append(int(shown[text]))
        elif kind == "len" and (count := length(text)) is not None:
            values.append(count)
        else:
            return None
    return range(*values) if not (len(values) == 3 and values[2] == 0) else None


def element_reprs(elements: list[object] | None, names: int) -> list[tuple[str, ...]] | None:
    """The reprs a loop's `names` variables (one, or two it unpacks each element into) take for each
    element; None where the elements are not known or one does not unpack into two (Python raises)."""
    if elements is None:
        return None
    if names == 1:
        return [(repr(element),) for element in elements]
    if not all(isinstance(e, tuple | list | str) and len(e) == 2 for e in elements):
        return None
    return [(repr(e[0]), repr(e[1])) for e in elements]  # type: ignore[index]


@lru_cache(maxsize=1024)
def argument_expression(text: str) -> ast.expr:
    """A call argument's expression, kept by calls.call_bindings as its source text, parsed once."""
    return ast.parse(text, mode="eval").body


def truth_of(text: str | None) -> bool | None:
    """Whether the value shown as `text` is true, where it is the whole repr of a number, a string, a
    bool, None or a container of literals; None where the repr does not tell."""
    if text is None:
        return None
    if text in FALSE_REPRS:
        return False
    try:
        value = ast.literal_eval(safe_ast.parse(text, mode="eval"))
    except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
        return None
    return bool(value) if repr(value) == text else None


def bound_texts(names: tuple[str, ...], expression: ast.expr, shown: dict[str, str]) -> list[str] | None:
    """The reprs `NAME = EXPR` or `A, B = EXPR` binds, computed on the shown values (grammar/evaluation.py); None where
    they do not tell (or EXPR would not unpack into as many values as names)."""
    if len(names) == 1:
        text = value_repr(expression, shown, MAX_REPR)
        return [text] if text is not None else None
    elements = iterable_elements(expression, shown, MAX_REPR)
    return [repr(e) for e in elements] if elements is not None and len(elements) == len(names) else None


def calls_deep(state: State, frame: State) -> int | None:
    """How many calls deep `state` is inside the frame `frame` is on (0: on that frame itself), read off
    their stacks; None where it is not inside that frame's call."""
    depth, stack = len(frame.stack), state.stack
    if (not frame.stack or len(stack) < depth or stack[:depth - 1] != frame.stack[:-1]
            or stack[depth - 1].function != frame.stack[-1].function):
        return None
    return len(stack) - depth

