"""DAP variable references: scopes and expandable values, valid while the program stays stopped.

References are handed out lazily and memoized per (parent, child name), so asking twice for the same
variables gives the same references. `reset()` is called on every stop (DAP: references are only valid
while stopped).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import dap_types as dap

from dap_server.values import container_children, is_container, parse_value, show, type_name, with_attributes


@dataclass
class Container:
    """What a reference stands for: a scope (name -> repr text) or a parsed value."""

    kind: str  # "scope" | "value" | "note"
    names: dict[str, str] = field(default_factory=dict)  # scope: name -> repr text
    value: Any = None  # value: the parsed value
    evaluate_name: str | None = None  # how to write this value in an expression
    root: str | None = None  # the local this value lives in (for setVariable on children)
    path: tuple[Any, ...] = ()  # keys / indexes from the local down to this value
    confidence: dict[str, float] | None = None
    note: str = ""
    attributes: dict[str, dict[str, str]] = field(default_factory=dict)  # scope: the objects' attributes


class VariableStore:
    def __init__(self) -> None:
        self._items: dict[int, Container] = {}
        self._memo: dict[tuple[int, str], int] = {}
        self._next = 1

    def reset(self) -> None:
        self._items.clear()
        self._memo.clear()
        # Keep counting up, so a stale reference from an earlier stop never aliases a new one.

    def add(self, container: Container, memo: tuple[int, str] | None = None) -> int:
        if memo is not None and memo in self._memo:
            return self._memo[memo]
        ref = self._next
        self._next += 1
        self._items[ref] = container
        if memo is not None:
            self._memo[memo] = ref
        return ref

    def forget_children(self) -> None:
        """After a value changed: children are listed afresh (old references stay readable)."""
        self._memo = {k: v for k, v in self._memo.items() if k[0] == 0}

    def get(self, ref: int) -> Container | None:
        return self._items.get(ref)

    def add_value(self, value: Any, evaluate_name: str | None, memo: tuple[int, str] | None = None,
                  root: str | None = None, path: tuple[Any, ...] = ()) -> int:
        if not is_container(value):
            return 0
        return self.add(Container("value", value=value, evaluate_name=evaluate_name, root=root, path=path), memo)

    def variables(self, ref: int, start: int | None = None, count: int | None = None,
                  filter_: str | None = None) -> list[dap.Variable]:
        container = self._items.get(ref)
        if container is None:
            raise KeyError(ref)
        out: list[dap.Variable] = []
        if container.kind == "note":
            out.append(dap.Variable(name="(not available)", value=container.note, variablesReference=0,
                                    presentationHint=dap.VariablePresentationHint(kind="virtual",
                                                                                  attributes=["readOnly"])))
        elif container.kind == "scope":
            if filter_ == "indexed":
                return []
            for name, text in container.names.items():
                out.append(self._scope_variable(ref, name, text, container.confidence,
                                                container.attributes.get(name)))
        else:
            children = container_children(container.value)
            if filter_ == "named" and isinstance(container.value, (list, tuple, set, frozenset)):
                children = []
            for child_name, child, suffix in children:
                evaluate_name = None
                if container.evaluate_name is not None and suffix:
                    evaluate_name = container.evaluate_name + suffix
                settable = container.root is not None and isinstance(container.value, (list, tuple, dict))
                path = (*container.path, key_of(container.value, child_name)) if settable else ()
                child_ref = self.add_value(child, evaluate_name, memo=(ref, child_name),
                                           root=container.root if settable else None, path=path)
                out.append(dap.Variable(name=child_name, value=show(child), type=type_name(child),
                                        evaluateName=evaluate_name, variablesReference=child_ref,
                                        **_counts(child)))
        if start is not None or count is not None:
            begin = max(start or 0, 0)
            out = out[begin:] if not count else out[begin : begin + count]
        return out

    def _scope_variable(self, ref: int, name: str, text: str, confidence: dict[str, float] | None,
                        attributes: dict[str, str] | None = None) -> dap.Variable:
        value = with_attributes(text, attributes)
        is_pseudo = name.startswith("(")
        evaluate_name = None if is_pseudo else name
        if name.startswith("(return)"):
            evaluate_name = "__return__"
        elif name == "(exception)":
            evaluate_name = "__exception__"
        child_ref = self.add_value(value, evaluate_name, memo=(ref, name), root=None if is_pseudo else name)
        kind_type = type_name(value)
        if confidence is not None and name in confidence:
            kind_type = f"{kind_type} (p={confidence[name]:.2f})" if kind_type else f"p={confidence[name]:.2f}"
        hint = None
        if is_pseudo:
            hint = dap.VariablePresentationHint(kind="virtual", attributes=["readOnly"])
        return dap.Variable(name=name, value=text, type=kind_type or None, evaluateName=evaluate_name,
                            variablesReference=child_ref, presentationHint=hint, **_counts(value))


def key_of(container: Any, child_name: str) -> Any:
    if isinstance(container, (list, tuple)):
        return int(child_name)
    if isinstance(container, dict):
        key = parse_value(child_name)
        return key
    return child_name


def _counts(value: Any) -> dict[str, int]:
    if isinstance(value, (list, tuple)) and len(value) > 0:
        return {"indexedVariables": len(value)}
    if isinstance(value, dict) and len(value) > 0:
        return {"namedVariables": len(value)}
    return {}
