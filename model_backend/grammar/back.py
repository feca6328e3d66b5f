"""Steps back: what a variable or a container held before a statement, from what it holds after.

`value_before(name, expression, later, max_repr)` and `values_before(names, expression, later,
max_repr)` give the earlier value of the names a statement assigns, `container_before(statement,
container, result, later, max_repr)` the earlier repr of a container a statement changes; None where
the shown values do not tell.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping

from model_backend.grammar.bindings import value_repr
from model_backend.grammar.containers import mutation_reprs
from model_backend.grammar.evaluation import value_of
from model_backend.grammar.loops import iterable_elements
from model_backend.grammar.values import Unknown, shown_container, shown_literal

# ---- backwards: what a variable held before a statement, from what it holds after ----------------
# A step back shows the later state; for a few statements the earlier value of what they change follows
# from it: `x += c`, `s = s + t`, `s = t + s`, `xs.append(v)`, `x = xs.pop(i)`, `counts[k] += 1`. Each
# such statement is one-to-one on its target's value (the other names it reads keep their values), so a
# candidate that the forward functions (evaluation.py, containers.py) turn back into the shown value is
# the only one.
_MAX_CANDIDATES = 200  # a list longer than this is left to the model (one candidate per position)


def value_before(name: str, expression: ast.expr, later: Mapping[str, str], max_repr: int) -> str | None:
    """For a line `NAME = EXPR` (bindings.computed_values; `NAME op= EXPR` as `NAME op EXPR`) whose
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
    except Unknown:
        return None
    if isinstance(after, list) and any(later[name] in later.get(n.id, "")
                                       for n in ast.walk(other) if isinstance(n, ast.Name)):
        return None  # `xs += ys` extends xs in place: ys may be the same list, changed too
    operand = value_of(other, later)
    if operand is Unknown:
        return None
    candidates = _scalar_before(type(expression.op), after, operand, left_is_name)
    return _verified(candidates, max_repr, lambda text: value_repr(expression, {**later, name: text}, max_repr)
                     == later[name])


def values_before(names: tuple[str, ...], expression: ast.expr, later: Mapping[str, str],
                  max_repr: int) -> tuple[tuple[str, str], ...]:
    """For a line `A, B = EXPR` (bindings.computed_values) whose expression is a tuple of those names in
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
    """For a line that changes one list or dict (containers.mutations): the container's repr before it, from
    the values `later` shows after it, where the statement is one-to-one on it: `C.append(V)`,
    `C.extend(V)`, `C.insert(I, V)`, `C.reverse()`, `X = C.pop(...)` (X tells what left),
    `C[K] op= V` and `C[K] = C[K] op V` or `C.get(K, D) op V` (with op one of + - * ^). None elsewhere."""
    parsed = shown_container(later, container)
    if parsed is None:
        return None
    text, after = parsed
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
            added = value_of(statement.value.args[0], later)
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
            except Unknown:
                return []
            return [after[:i] + [popped] + after[i:] for i in range(len(after) + 1)]
        return []
    target = statement.targets[0] if isinstance(statement, ast.Assign) else getattr(statement, "target", None)
    if not isinstance(target, ast.Subscript) or isinstance(target.slice, ast.Slice) \
            or not isinstance(after, list | dict) or isinstance(statement, ast.Delete):
        return []
    key = value_of(target.slice, later)
    if key is Unknown or isinstance(key, list | dict) or (isinstance(after, list) and type(key) is not int):
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
    operand = value_of(operand_node, later)
    if operand is Unknown:
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
