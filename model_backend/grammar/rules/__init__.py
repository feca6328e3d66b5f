"""The rules of the frame grammar, one module per family: what `FrameConstraint` asks about a step.

Each family's rules are methods of a class that `FrameConstraint` (model_backend/grammar/frame.py)
inherits; registry.py declares the ones that compete for a slot."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from model_backend.grammar.rules import bindings, calls, comprehensions, containers, lines, loops, printing

if TYPE_CHECKING:
    from model_backend.grammar.source import Source

# Each family contributes the facts its rules read (its `facts` builder); with the program's names and lines
# (source.program_facts) they fill every field of ProgramFacts
FACT_BUILDERS: tuple[Callable[[Source], dict[str, Any]], ...] = (
    lines.facts, bindings.facts, containers.facts, loops.facts, comprehensions.facts, calls.facts, printing.facts)
