"""The grammar of constrained decoding: what a frame of the trace format may hold, for one program.

automata.py holds the token automata, facts.py the program's facts (from the `Source` of source.py),
registry.py the declared rules (docs/grammar.md lists them), frame.py the per-frame state machine that
asks them. The family modules encode Python's behaviour: lines.py (lines and branches), bindings.py,
containers.py, loops.py, comprehensions.py, calls.py (calls and returns), printing.py and back.py (steps
back), over the shared readings of the source in syntax.py and of shown values in values.py,
evaluation.py and shown.py. `ndb grammar check` (check.py, commands.py) runs the rules over traced data.
"""

from __future__ import annotations

from model_backend.grammar.automata import (
           CUT_REPR,
           MAX_RUN,
           Choice,
           JsonString,
           Locals,
           Spliced,
           Stack,
           Value,
)
from model_backend.grammar.evaluation import constant_value
from model_backend.grammar.facts import ProgramFacts
from model_backend.grammar.frame import FrameConstraint
from model_backend.grammar.source import EXPRESSION_FRAMES

__all__ = ["CUT_REPR", "EXPRESSION_FRAMES", "MAX_RUN", "Choice", "FrameConstraint", "JsonString", "Locals",
           "ProgramFacts", "Spliced", "Stack", "Value", "constant_value"]
