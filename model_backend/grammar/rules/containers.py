# mypy: disable-error-code="misc"
# (the rules are methods of FrameConstraint, which inherits them: their `self` is a FrameConstraint)
"""Containers: a list or dict a method call, an append or a store of one item changes, and an object's field an
attribute update sets."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from model_backend import trace_format as fmt
from model_backend.grammar.automata import Spliced
from model_backend.grammar.bindings import value_repr
from model_backend.grammar.containers import (
    appended_values,
    attribute_updates,
    item_stores,
    mutating_lines,
    mutation_reprs,
    mutations,
    plain_classes,
)
from model_backend.grammar.shown import (
    IMMUTABLE_REPR,
    MAX_REPR,
    builtin_value,
    object_fields,
    shown_elements,
    store_parts,
)
from model_backend.grammar.source import Source
from model_backend.grammar.syntax import ArgumentSource
from model_backend.sandbox import Limits
from model_backend.tracer import MAX_ELEMENTS

if TYPE_CHECKING:
    from model_backend.grammar.frame import FrameConstraint


class ContainerRules:
    """The frame grammar's rules of this family: containers."""

    def _mutated(self: FrameConstraint, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a step within the frame from a line that changes one list or dict through its name
        (containers.mutations): the container with the value the statement leaves it (and the name bound to
        what its method returns), computed from the shown values (containers.mutation_reprs), as (key, JSON)
        pairs; empty where the shown values do not tell."""
        entry = self._stepped_from(self.facts.mutations)
        if entry is None:
            return ()
        prev, (container, statement, result) = entry
        reprs = mutation_reprs(statement, container, prev.locals, MAX_REPR)
        if reprs is None or container.encode() not in keys or (result is not None and result.encode() not in keys):
            return ()
        pairs = [(container, reprs[0])] + ([(result, reprs[1])] if result is not None and reprs[1] is not None else [])
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in pairs)

    def _attribute_updated(self: FrameConstraint, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a step within the frame (to a line or its return) from a line that only sets one attribute
        of an object or appends to the list one attribute holds (containers.attribute_updates; facts of trace
        format version 3 only): the object's variable with its text after the line, as a (key, JSON) pair.
        Only where the variable shows the whole text of an object of one of the program's plain classes
        (`object_fields`) that does not define the attribute, no other variable shows the same text (it
        may be the same object), and the new value is known: for a set, what the expression gives on the
        shown values and fields (grammar/evaluation.py), a number, string, bool or None field for `op=`; for an
        append, a number, string, bool or None added to a field that shows a list of literals whose text
        appears nowhere else in the object's (another field may hold the same list) and in no other
        variable. The field keeps its place, or a new one comes last (`__dict__`'s order). Empty elsewhere."""
        if self.event not in ("line", "return") or not self._step_from_line() or self.stack_written:
            return ()
        prev = self.prev
        assert prev is not None and prev.line is not None
        update = self.facts.attribute_updates.get(prev.line)
        if update is None or update.owner.encode() not in keys or prev.stack[-1].function in self.facts.suspending:
            return ()
        text = prev.locals.get(update.owner)
        parsed = object_fields(text) if text is not None else None
        if (text is None or parsed is None or parsed[0] not in self.facts.classes
                or update.attribute in self.facts.classes[parsed[0]]
                or any(other == text for name, other in prev.locals.items() if name != update.owner)):
            return ()
        name, fields = parsed
        old = fields.get(update.attribute)
        if update.kind == "append":
            if (old is None or not old.startswith("[") or shown_elements(old) is None or text.count(old) != 1
                    or any(other == old for other in prev.locals.values())):
                return ()
        elif update.augmented and (old is None or not IMMUTABLE_REPR.fullmatch(old)):
            return ()  # `op=` on a list changes it in place (another field may hold it)
        shown = dict(prev.locals) | {f"{update.owner}.{field}": value for field, value in fields.items()}
        value = value_repr(update.expression, shown, MAX_REPR)
        if value is None or len(value) > MAX_REPR:
            return ()
        if update.kind == "append":
            if not IMMUTABLE_REPR.fullmatch(value):
                return ()
            assert old is not None
            value = f"{old[:-1]}{', ' if old != '[]' else ''}{value}]"
        if update.attribute not in fields and len(fields) >= MAX_ELEMENTS:
            return ()  # the tracer writes `...` after that many fields
        after = name + "(" + ", ".join(f"{field}={v}" for field, v in (fields | {update.attribute: value}).items()) + ")"
        if len(after) > MAX_REPR:
            return ()
        return ((update.owner.encode(), fmt._json(after).encode()),)

    def _appended(self: FrameConstraint, name: str, source: ArgumentSource) -> tuple[str, str] | None:
        """After `name.append(arg)` (containers.appended_values): the list's repr with the argument's added,
        where the list shows its whole repr, the argument a builtin value, and the result fits the cut."""
        assert self.prev is not None and source is not None
        shown = self.prev.locals
        before = shown.get(name)
        if before is None or not before.startswith("[") or shown_elements(before) is None:
            return None
        kind, text = source
        if kind == "name":
            if not builtin_value(shown.get(text)):
                return None  # not shown (a global), or an object whose repr is the program's
            text = shown[text]
        after = f"{before[:-1]}{', ' if before != '[]' else ''}{text}]"
        return (name, after) if len(after) <= Limits().max_repr else None

    def _item_store(self: FrameConstraint, keys: frozenset[bytes]) -> tuple[bytes, Spliced] | None:
        """After a step within the frame (to a line or its return) from a line that only stores one item
        of a list or a dict (containers.item_stores), with every variable the line reads holding a builtin
        value: the shape of that list or dict, the same but for the one item (`store_parts`)."""
        if self.event not in ("line", "return") or not self._step_from_line() or self.stack_written:
            return None
        prev = self.prev
        assert prev is not None and prev.line is not None
        store = self.facts.stores.get(prev.line)
        if (store is None or store.container.encode() not in keys or prev.stack[-1].function in self.facts.suspending
                or not all(builtin_value(prev.locals.get(name)) for name in store.reads)):
            return None
        parts = store_parts(store, prev.locals)
        return (store.container.encode(), Spliced.of(parts)) if parts is not None else None

    def _fits_before(self: FrameConstraint, key: bytes, shape: Spliced) -> bool:
        """Whether the variable's value before the step fits the shape: if not (a key added, an item
        inserted), the step changed it, and a diff must name it."""
        assert self.prev is not None
        fed = shape.feed(fmt._json(self.prev.locals[key.decode()]).encode())
        return fed is not None and fed.complete


def facts(source: Source) -> dict[str, Any]:
    """Containers: list and dict mutations, appends, item stores, and (format 3) attribute updates of
    plain objects; whether a `{...}` repr has distinct keys."""
    tree, dynamic, objects = source.tree, source.dynamic, source.objects
    return {"unique_keys": "__repr__" not in source.program.source,
            "mutating": {} if dynamic else mutating_lines(tree), "mutations": {} if dynamic else mutations(tree),
            "appends": appended_values(tree, source.max_repr),
            "stores": {} if dynamic else item_stores(tree, source.max_repr),
            "classes": plain_classes(tree) if objects and not dynamic else {},
            "attribute_updates": attribute_updates(tree) if objects and not dynamic else {}}
