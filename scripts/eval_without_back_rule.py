"""`ndb eval next-state` with the grammar's rule for steps back between lines switched off
(`FrameConstraint._changeable_back`, session 32): the baseline that rule was measured against.

    python scripts/eval_without_back_rule.py --data data_out/s99b_inv --json F

Takes the same options as `ndb eval next-state`.
"""

import sys

from model_backend.grammar import FrameConstraint

FrameConstraint._changeable_back = lambda self: None  # type: ignore[method-assign]
from dap_server.cli import main  # noqa: E402

sys.argv = ["ndb", "eval", "next-state", *sys.argv[1:]]
main()
