"""The grammar of constrained decoding: what a frame of the trace format may hold, for one program.

The family modules encode Python's behaviour: lines.py (lines and branches), bindings.py, containers.py,
loops.py, comprehensions.py, calls.py (calls and returns), printing.py and back.py (steps back), over the
shared readings of the source in syntax.py and of shown values in values.py and evaluation.py.
"""

from __future__ import annotations

from model_backend.grammar.evaluation import constant_value

__all__ = ["constant_value"]
