# mypy: disable-error-code="misc"
# (the rules are methods of FrameConstraint, which inherits them: their `self` is a FrameConstraint)
"""Bindings: the names a step can change, and the values a line that binds literals, copies, imports or computed
expressions gives them."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import model_backend.grammar.registry as registry
from model_backend import trace_format as fmt
from model_backend.grammar.bindings import (
    computed_values,
    imported_values,
    line_bindings,
    simple_assignments,
    value_repr,
)
from model_backend.grammar.objects import (
    constructed_objects,
    entry_function,
    stable_forms,
    unchanging_parameters,
)
from model_backend.grammar.sealed import sealed_parameters
from model_backend.grammar.shown import MAX_REPR, bound_texts, builtin_value
from model_backend.grammar.source import Source
from model_backend.grammar.syntax import bound_names, shared_names
from model_backend.state import State

if TYPE_CHECKING:
    from model_backend.grammar.frame import FrameConstraint

_Entry = TypeVar("_Entry")


class BindingRules:
    """The frame grammar's rules of this family: bindings."""

    @cached_property
    def _computes_here(self: FrameConstraint) -> bool:
        """After a step from a line that only binds names to, or returns, an expression of variables,
        operators and builtins (bindings.computed_values): whether the shown values give that expression a value (and, for
        `A, B = EXPR`, as many elements as names) in grammar/evaluation.py, which computes only what Python would
        compute without raising."""
        prev = self.prev
        if not self._step_from_line() or prev is None or prev.stack[-1].function in self.facts.suspending:
            return False  # (a generator's step may stop in another frame: pdb's next passes over its yields)
        if prev.line in self.facts.computed_returns:  # `return EXPR`
            return value_repr(self.facts.computed_returns[prev.line], prev.locals, MAX_REPR) is not None
        entry = self.facts.computed.get(prev.line) if prev.line is not None else None
        return entry is not None and bound_texts(*entry, prev.locals) is not None

    def _changeable(self: FrameConstraint) -> frozenset[str] | None:
        """The variables a diff may name after a step within the frame: those the previous line's
        statement can bind, those any call can rebind, and those whose value may be a mutable object
        (a value whose repr is a number, a string, a bool, None or names only its type can only change by a
        new binding: objects.StableForms),
        unless the line is inert (containers.inert_lines) and every name it reads holds a builtin value; where
        the line changes objects only through some names (containers.mutating_lines), only the mutable values
        whose reprs hold theirs or are held in them.
        Dunder names (a class body's own) are always allowed. The frame's return event right after such
        a step is bound the same way (only the line's statement ran). None where the rule does not apply."""
        if self.inverse:
            return self._changeable_back()
        if self.event == "line" and not self.stack_written and self._first_lines_after_call() is not None:
            return frozenset()  # from a call event to the body's first line nothing runs
        if self.event not in ("line", "return") or not self._step_from_line() or self.stack_written:
            return None
        prev = self.prev
        assert prev is not None and prev.line is not None
        bound = self.facts.binds.get(prev.line)
        if bound is None:
            return None
        reads = self.facts.inert.get(prev.line)
        if reads is not None and all(builtin_value(prev.locals.get(name)) for name in reads):
            return bound | self.facts.shared  # nothing ran that could change an object
        mutable = {name for name, value in prev.locals.items() if not self.facts.stable.stable(value)}
        mutable -= self.facts.sealed_in(prev)  # objects of the entry's literals that no code changes
        mutating = self.facts.mutating.get(prev.line)
        if (mutating is not None and all(builtin_value(prev.locals.get(name)) for name in mutating[0])
                and all(len(prev.locals[name]) <= MAX_REPR for name in mutable)):  # no repr cut
            # Only the objects of the names it changes through could change, and any object that holds
            # one of them or is held in one (its repr holds theirs, or theirs holds its), or a view of
            # one (`dict_keys([...])`: any value not of the builtin types stays free)
            changed = [prev.locals[name] for name in mutating[1]]
            mutable = {name for name in mutable if not builtin_value(prev.locals[name])
                       or any(prev.locals[name] in c or c in prev.locals[name] for c in changed)}
        return bound | self.facts.shared | mutable

    def _forced_value(self: FrameConstraint, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes] | None, bool]:
        """After a step within the frame from a line that is only `name = <literal>` or `name = other`:
        name's value (as JSON), and whether it had that value already. Nothing where the rule does not
        apply, or where `other` is not among the frame's shown variables (a global, a builtin)."""
        if not self._step_within_frame():
            return None, False
        prev = self.prev
        assert prev is not None
        bound = registry.first("locals.forced", self)
        if bound is None:
            return None, False
        name, text = bound
        if name.encode() not in keys:
            return None, False
        return (name.encode(), fmt._json(text).encode()), prev.locals.get(name) == text

    def _literal_bound(self: FrameConstraint) -> tuple[str, str] | None:
        """`name = <literal>` (facts.literals): the name and the literal's repr."""
        assert self.prev is not None and self.prev.line is not None
        return self.facts.literals.get(self.prev.line)

    def _copy_bound(self: FrameConstraint) -> tuple[str, str] | None:
        """`name = other` (facts.copies), `other` among the frame's shown variables: the name and other's value."""
        prev = self.prev
        assert prev is not None and prev.line is not None
        copy = self.facts.copies.get(prev.line)
        if copy is None or copy[1] not in prev.locals:
            return None
        return copy[0], prev.locals[copy[1]]

    def _constructed_bound(self: FrameConstraint) -> tuple[str, str] | None:
        """`name = C(...)` (facts.constructed): the name and the new instance's text, `<__main__.C object>`."""
        assert self.prev is not None and self.prev.line is not None
        return self.facts.constructed.get(self.prev.line)

    def _kept_in_frame(self: FrameConstraint, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a forward action that lands in the frame instance it started from: step_return to that
        frame's return event, or step_return, continue or a breakpoint from the entry call's frame back
        into it (the entry call is the only frame of its depth): the parameters that no statement of the
        function binds again (facts.unchanging) with the values they showed, where only a new binding can
        change those (facts.stable), or, in the entry frame, where no code changes their objects
        (facts.sealed). As (key, JSON) pairs; empty where the rule does not apply. Single
        steps are bound by _changeable instead."""
        prev = self.prev
        if (self.inverse or prev is None or prev.exit is not None or not prev.stack or self.stack_written
                or prev.event not in fmt.LOCALS_EVENTS or self.action in ("step_into", "step_over")):
            return ()
        sealed = self.facts.sealed_in(prev)
        if not self.facts.in_entry_frame(prev) and not (self.action == "step_return" and self.event == "return"):
            return ()
        function = prev.stack[-1].function
        pairs = []
        for name in sorted(self.facts.unchanging.get(function, ())):
            value = prev.locals.get(name)
            if value is not None and name.encode() in keys and (
                    self.facts.stable.stable(value) or name in sealed):
                pairs.append((name.encode(), fmt._json(value).encode()))
        return tuple(pairs)

    def _append_bound(self: FrameConstraint) -> tuple[str, str] | None:
        """`name.append(arg)` (facts.appends): the list's name and its repr with the argument added (_appended)."""
        assert self.prev is not None and self.prev.line is not None
        append = self.facts.appends.get(self.prev.line)
        return self._appended(*append) if append is not None else None

    def _computed(self: FrameConstraint, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a step within the frame from a line that only binds names to an expression of variables,
        operators and builtins (bindings.computed_values): those names with the values the expression gives
        on the shown values (model_backend/grammar/evaluation.py), as (key, JSON) pairs; empty where the
        shown values do not tell, or `A, B = EXPR` gives no pair of whole reprs."""
        entry = self._stepped_from(self.facts.computed)
        if entry is None:
            return ()
        prev, (names, expression) = entry
        texts = bound_texts(names, expression, prev.locals)
        if texts is None or any(name.encode() not in keys for name in names):
            return ()
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in zip(names, texts, strict=True))

    def _imported(self: FrameConstraint, keys: frozenset[bytes]) -> tuple[tuple[bytes, bytes], ...]:
        """After a step within the frame from a line that only imports names of a known module
        (bindings.imported_values): those names with their values, as (key, JSON) pairs; empty elsewhere."""
        if not self._step_within_frame():
            return ()
        assert self.prev is not None and self.prev.line is not None
        pairs = self.facts.imports.get(self.prev.line, ())
        return tuple((name.encode(), fmt._json(text).encode()) for name, text in pairs if name.encode() in keys)

    def _held(self: FrameConstraint, pairs: tuple[tuple[bytes, bytes], ...]) -> frozenset[bytes]:
        """The keys of these (key, JSON) pairs whose variable showed that value already (a diff may leave them out)."""
        shown = self.prev.locals if self.prev is not None else {}
        return frozenset(key for key, value in pairs
                         if key.decode() in shown and fmt._json(shown[key.decode()]).encode() == value)

    def _stepped_from(self: FrameConstraint, table: Mapping[int, _Entry]) -> tuple[State, _Entry] | None:
        """After a step within the frame from a line event: the previous state and the table's entry for
        its line; None elsewhere."""
        prev = self.prev
        if not self._step_within_frame() or prev is None or prev.line not in table:
            return None
        return prev, table[prev.line]  # type: ignore[index]


def facts(source: Source) -> dict[str, Any]:
    """Bindings: the names each line can bind, literal and copied values, imports, computed values."""
    tree, dynamic = source.tree, source.dynamic
    literals, copies = simple_assignments(tree, source.max_repr)
    computed, computed_returns = ({}, {}) if dynamic else computed_values(tree)
    forms, entry = stable_forms(tree, dynamic), entry_function(source.program.entry)
    return {"stable": forms, "unchanging": unchanging_parameters(tree, dynamic),
            "constructed": {} if source.objects else constructed_objects(tree, forms),
            "entry_function": entry,
            "sealed": sealed_parameters(tree, source.program.entry, entry, bound_names(tree), dynamic),
            "binds": {} if dynamic else line_bindings(tree), "shared": shared_names(tree),
            "literals": literals, "copies": copies, "imports": imported_values(tree, source.max_repr),
            "computed": computed, "computed_returns": computed_returns}
