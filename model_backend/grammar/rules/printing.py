# mypy: disable-error-code="misc"
# (the rules are methods of FrameConstraint, which inherits them: their `self` is a FrameConstraint)
"""Printing: the text a step from a line prints, where the shown values tell it."""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from model_backend.grammar.bindings import value_repr
from model_backend.grammar.containers import mutation_reprs
from model_backend.grammar.loops import iterable_elements
from model_backend.grammar.printing import printed_lines, printed_text
from model_backend.grammar.shown import MAX_REPR
from model_backend.grammar.source import Source

if TYPE_CHECKING:
    from model_backend.grammar.frame import FrameConstraint


class PrintingRules:
    """The frame grammar's rules of this family: printing."""

    @cached_property
    def _printed(self: FrameConstraint) -> str | None:
        """What a step within the frame from a line (to its next line or its return) prints, where the
        shown values tell: the text of a line that only prints expressions of variables, operators and
        builtins (printing.printed_lines, printing.printed_text), and nothing after a line whose value, branch
        or changed container the grammar computes (no code of the program ran); None elsewhere."""
        prev = self.prev
        if self.event not in ("line", "return") or not self._step_from_line():
            return None
        assert prev is not None and prev.line is not None
        call = self.facts.printed.get(prev.line)
        if call is not None:
            return printed_text(call, prev.locals)
        computed = self.facts.computed.get(prev.line)
        if computed is not None:
            names, expression = computed
            known = (value_repr(expression, prev.locals, MAX_REPR) if len(names) == 1
                     else iterable_elements(expression, prev.locals, MAX_REPR))
            return "" if known is not None else None
        returned = self.facts.computed_returns.get(prev.line)
        if returned is not None:
            return "" if value_repr(returned, prev.locals, MAX_REPR) is not None else None
        mutation = self.facts.mutations.get(prev.line)
        if mutation is not None:
            return "" if mutation_reprs(mutation[1], mutation[0], prev.locals, MAX_REPR) is not None else None
        return "" if prev.line in self.facts.truths and self._truth_step is not None else None


def facts(source: Source) -> dict[str, Any]:
    """Printing: the lines that only print expressions of variables, operators and builtins."""
    return {"printed": {} if source.dynamic else printed_lines(source.tree)}
