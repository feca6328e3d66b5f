"""model_backend/grammar/sealed.py: which of the entry call's parameters keep their objects unchanged. Each
sealed case is traced here, and the parameter must show one value at every stop of the entry frame."""

from __future__ import annotations

import ast

import pytest

from model_backend import trace_format as fmt
from model_backend.grammar import FrameConstraint, ProgramFacts
from model_backend.grammar.objects import entry_function
from model_backend.grammar.sealed import sealed_parameters
from model_backend.grammar.syntax import bound_names
from model_backend.mdp import TraceMDP
from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace
from model_backend.state import Action


def sealed(source: str, entry: str) -> frozenset[str]:
    tree = ast.parse(source)
    return sealed_parameters(tree, entry, entry_function(entry), bound_names(tree), dynamic=False)


def entry_values(source: str, entry: str, name: str) -> set[str]:
    """The values `name` shows at every stop of the entry frame, stepping into everything."""
    mdp = TraceMDP(run_trace(Program(source=source, entry=entry)))
    position, seen = mdp.start_position(), set()
    while position != mdp.exit_position:
        state = mdp.state(position)
        if len(state.stack) == 1 and name in state.locals:
            seen.add(state.locals[name])
        position = mdp.step(position, Action(kind="step_into"))[0]
    return seen


DESK = """\
class Desk:
    def __init__(self):
        self.log = []

    def book(self, guest, nights):
        self.log.append((guest, nights))
        return len(self.log)


def front_desk(actions, limits):
    desk = Desk()
    ledger = []
    for action, *args in actions:
        if action == "book":
            ledger.append(desk.book(*args))
    for key, value in limits.items():
        ledger.append(len(key) + value)
    return ledger
"""


def test_a_parameter_whose_strings_reach_other_code_is_sealed() -> None:
    entry = "front_desk([['book', 'ann', 2], ['skip'], ['book', 'bo', 1]], {'a': 1})"
    assert sealed(DESK, entry) == {"actions", "limits"}
    assert len(entry_values(DESK, entry, "actions")) == 1


@pytest.mark.parametrize("body", [
    "    rows[0].append(1)\n",  # changes an object of the parameter
    "    for row in rows:\n        row.sort()\n",
    "    keep(rows[0])\n",  # hands a list over
    "    first = rows[0]\n    first += [1]\n",
    "    box = []\n    box.append(rows[0])\n    keep(box)\n",
    "    pick = rows.pop\n    pick()\n",  # a bound method called later
    "    KEPT.append(rows)\n",
    "    f = lambda: rows\n    keep(f)\n",
    "    match rows:\n        case [first, *_]:\n            first.clear()\n",
    "    for i, row in enumerate(rows):\n        keep(row)\n",
    "    return sorted(rows, key=keep)\n",
])
def test_a_parameter_that_may_change_is_not_sealed(body: str) -> None:
    source = f"KEPT = []\n\ndef keep(x):\n    KEPT.append(x)\n    return 0\n\ndef run(rows):\n{body}"
    assert sealed(source, "run([[3, 1], [2]])") == frozenset()


def test_a_list_of_numbers_handed_on_element_by_element_is_sealed() -> None:
    source = ("def keep(x):\n    return x\n\n"
              "def run(rows):\n    total = 0\n    for i, row in enumerate(rows):\n        total += keep(row[0])\n"
              "    return total\n")
    assert sealed(source, "run([[3, 1], [2]])") == {"rows"}
    assert entry_values(source, "run([[3, 1], [2]])", "rows") == {"[[3, 1], [2]]"}


@pytest.mark.parametrize("source, entry", [
    ("def run(rows):\n    return len(rows)\n", "run(make())"),  # not a literal
    ("class C:\n    def __eq__(self, other):\n        other.append(1)\n\n"
     "def run(rows):\n    return C() in rows\n", "run([[1]])"),  # an operator of the program's
    ("def run(rows):\n    return len(rows)\n\nrun = print\n", "run([1])"),  # the name means something else
    ("def len(x):\n    x.append(1)\n\ndef run(rows):\n    return len(rows)\n", "run([1])"),  # a builtin bound again
])
def test_nothing_is_sealed_where_code_of_the_program_may_run_unseen(source: str, entry: str) -> None:
    assert sealed(source, entry) == frozenset()


def test_a_step_in_the_entry_frame_cannot_change_a_sealed_parameter() -> None:
    entry = "front_desk([['book', 'ann', 2], ['skip'], ['book', 'bo', 1]], {'a': 1})"
    program = Program(source=DESK, entry=entry)
    mdp = TraceMDP(run_trace(program, Limits(objects=False)))
    facts = ProgramFacts.of(program, objects=False)
    line = DESK.splitlines().index("            ledger.append(desk.book(*args))") + 1
    position = next(p for p in range(mdp.exit_position) if mdp.state(p).line == line)
    prev = mdp.state(position)
    after = mdp.state(mdp.step(position, Action(kind="step_over"))[0])
    constraint = FrameConstraint(facts, prev, False, "step_over")
    constraint.push_frame_text(fmt.frame_target(after, prev, False)[len(fmt.FRAME):])
    changeable = constraint._changeable()
    assert changeable is not None and "actions" not in changeable and "ledger" in changeable
    garbled = after.model_copy(update={"locals": {**after.locals, "actions": "[['book']]"}})
    with pytest.raises(ValueError):
        FrameConstraint(facts, prev, False, "step_over").push_frame_text(
            fmt.frame_target(garbled, prev, False)[len(fmt.FRAME):])
