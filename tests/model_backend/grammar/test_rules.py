"""Each registered rule of the frame grammar (model_backend/grammar/registry.py), on a program traced here:
from every state of the trace, each action's true frame is accepted, and the rule wins its slot for some
of them. A rule that fixed a value other than the one Python traced would refuse a true frame."""

from __future__ import annotations

from collections.abc import Callable

from model_backend import trace_format as fmt
from model_backend.grammar import Choice, FrameConstraint, ProgramFacts, registry
from model_backend.mdp import TraceMDP
from model_backend.program import Program
from model_backend.sandbox import Limits, run_trace
from model_backend.state import Action, State

ACTIONS = ("step_into", "step_over", "step_return", "continue", "inv_step_into", "inv_step_over")


def rules_won(source: str, entry: str | None, objects: bool = True) -> set[str]:
    """Trace the program, take every action from every state along its step_into walk (forward ones told
    the states before, as a trajectory would), and check that the grammar accepts each true frame: the
    names of the rules that won a slot on the way. `objects`: trace format 3 (else 2)."""
    program = Program(source=source, entry=entry)
    result = run_trace(program, Limits(objects=objects))
    assert result.exit == "normal"
    facts, mdp = ProgramFacts.of(program, objects=objects), TraceMDP(result)
    walk = [mdp.start_position()]
    while walk[-1] != mdp.exit_position and len(walk) < 500:
        walk.append(mdp.step(walk[-1], Action(kind="step_into"))[0])
    states: list[State] = [mdp.state(position) for position in walk]
    won: set[str] = set()
    for index, position in enumerate(walk):
        prev = states[index]
        if prev.exit is not None:
            continue
        for kind in ACTIONS:
            following, stdout = mdp.step(position, Action(kind=kind))  # type: ignore[arg-type]
            inverse = kind.startswith("inv_")
            trail = () if inverse else tuple((before, "step_into") for before in states[:index])
            with registry.recording() as names:
                constraint = FrameConstraint(facts, prev, inverse, kind, trail)
                constraint.push_frame_text(fmt.frame_target(mdp.state(following, stdout=stdout), prev, inverse)[len(fmt.FRAME):])
            assert constraint.done, (prev.line, kind)
            won |= names
    return won


CALLS = """\
def g(a, b):
    c = a * b
    return c

def f(x):
    y = g(x, 2)
    return y
"""


BRANCH = "def f(x):\n    y = x + 1\n    if y > 2:\n        y = 0\n    return y\n"


def constraint_after(source: str, entry: str, action: str, at: Callable[[State], bool]) -> FrameConstraint:
    """The grammar's constraint on the frame after `action` from the first state of the trace that `at`
    holds for."""
    program = Program(source=source, entry=entry)
    mdp = TraceMDP(run_trace(program))
    states = (mdp.state(position) for position in range(mdp.exit_position))
    prev = next(state for state in states if at(state))
    return FrameConstraint(ProgramFacts.of(program, objects=True), prev, action.startswith("inv_"), action)


def line_options(constraint: FrameConstraint) -> frozenset[int]:
    """The lines `constraint` lets a line event be on."""
    constraint.push_special(fmt.EVENT_TOKENS[(constraint.inverse, "line")])
    constraint.push_special(fmt.LINENO)
    assert isinstance(constraint.slot, Choice)
    return frozenset(int(option) for option in constraint.slot.options)


def lines_offered(source: str, entry: str, line: int, action: str) -> frozenset[int]:
    """The lines the grammar lets a line event be on after `action` from the first line event on `line`."""
    constraint = constraint_after(source, entry, action,
                                  lambda state: state.event == "line" and state.line == line)
    return line_options(constraint)


DECORATED = """\
def deco(f):
    return f


@deco
def g(a):
    \"\"\"Doc.\"\"\"
    # a comment
    b = a + 1
    return b


def f(x, key=lambda v: v):
    y = key(g(x))
    return y
"""


def lines_after_call(source: str, entry: str, function: str, action: str) -> frozenset[int]:
    """The lines the grammar lets a line event be on after `action` from `function`'s call event."""
    constraint = constraint_after(source, entry, action,
                                  lambda state: state.event == "call" and state.function == function)
    events = [token for token in constraint.allowed_specials() if token in fmt.EVENT_TOKENS.values()]
    assert events == [fmt.EVENT_TOKENS[(False, "line")]]  # no call, return or exception (an exit stays free)
    return line_options(constraint)


def test_step_from_a_call_goes_to_the_first_statement() -> None:
    assert "first_body_line" in rules_won(DECORATED, "f(3)")
    for action in ("step_into", "step_over"):
        # g's call event is on its decorator's line; its docstring and the comment run nothing
        assert lines_after_call(DECORATED, "f(3)", "g", action) == {9}
        assert lines_after_call(DECORATED, "f(3)", "f", action) == {14}
    # the lambda called from f's body has its call event on f's `def` line: the rule leaves it alone
    program = Program(source=DECORATED, entry="f(3)")
    mdp = TraceMDP(run_trace(program))
    call = next(mdp.state(p) for p in range(mdp.exit_position) if mdp.state(p).function == "<lambda>")
    assert call.line == 13
    assert FrameConstraint(ProgramFacts.of(program, objects=True), call, False, "step_over")._first_lines_after_call() is None


def test_step_goes_to_a_following_line() -> None:
    assert "following_lines" in rules_won(BRANCH, "f(5)")
    assert lines_offered(BRANCH, "f(5)", 2, "step_over") == {3}  # after `y = x + 1`, only the `if`


def test_step_back_lands_on_a_preceding_line() -> None:
    assert "preceding_lines" in rules_won(BRANCH, "f(5)")
    assert lines_offered(BRANCH, "f(5)", 5, "inv_step_over") == {3, 4}  # `return y` follows the `if` or its body


def test_line_is_a_line_of_the_program() -> None:
    assert "frame_lines" in rules_won("def f(x):\n    return x\n", "f(1)")


def test_call_binds_the_arguments() -> None:
    assert "call_arguments" in rules_won(CALLS, "f(3)")


def test_comprehension_starts_with_its_iterator() -> None:
    assert "comprehension_start" in rules_won("def f(xs):\n    ys = [x * 2 for x in xs]\n    return ys\n", "f([1, 2])")


def test_caller_keeps_its_values_after_a_return() -> None:
    assert "caller_after_return" in rules_won(CALLS, "f(3)")


def test_import_binds_the_module() -> None:
    assert "imported" in rules_won("from math import pi\nx = 1\n", None)


def test_assignment_binds_the_computed_value() -> None:
    assert "computed" in rules_won("def f(x):\n    y = x * 2 + 1\n    z = max(y, 4)\n    return z\n", "f(3)")


def test_method_call_changes_the_container() -> None:
    assert "mutated" in rules_won("def f(xs):\n    xs.sort()\n    last = xs.pop()\n    return last\n", "f([3, 1, 2])")


def test_step_back_restores_the_earlier_value() -> None:
    assert "computed_back" in rules_won("def f(x):\n    x += 3\n    x *= 2\n    return x\n", "f(1)")


def test_attribute_update_changes_one_field() -> None:
    source = ("class Cart:\n    def __init__(self):\n        self.count = 0\n\n"
              "def main():\n    cart = Cart()\n    cart.count = 5\n    n = 1\n    return n\n")
    assert "attribute_updated" in rules_won(source, "main()")


def test_return_shows_the_returned_value() -> None:
    assert "returned_value" in rules_won("def f(x):\n    y = x + 1\n    return y\n", "f(1)")


def test_comprehension_returns_its_result() -> None:
    assert "comprehension_result" in rules_won("def f(xs):\n    ys = [x * 2 for x in xs]\n    return ys\n", "f([1, 2])")


def test_return_of_a_call_shows_its_value() -> None:
    assert "value_after_call" in rules_won("def g(a):\n    return a + 1\n\ndef f(x):\n    return g(x) * 2\n", "f(3)")


def test_literal_assignment_binds_its_value() -> None:
    assert "literal_bound" in rules_won("def f():\n    x = 5\n    y = 'a'\n    return x\n", "f()")


def test_copy_binds_the_other_value() -> None:
    assert "copy_bound" in rules_won("def f(a):\n    b = a\n    return b\n", "f([1])")


def test_append_adds_the_item_at_the_end() -> None:
    assert "append_bound" in rules_won("def f(xs, v):\n    xs.append(v)\n    return xs\n", "f([1, 2], 3)")


def test_construction_binds_a_new_instance() -> None:
    source = ("class Tally:\n    def __init__(self, start):\n        self.total = start\n\n"
              "def main(n):\n    tally = Tally(n)\n    tally.total += 1\n    return tally.total\n")
    assert "constructed_bound" in rules_won(source, "main(2)", objects=False)


def test_parameters_keep_their_values_in_their_frame() -> None:
    source = ("class Shelf:\n    def __init__(self):\n        self.books = []\n\n"
              "def shelve(shelf, title, count):\n    for _ in range(count):\n        shelf.books.append(title)\n"
              "    return len(shelf.books)\n\n"
              "def main(title):\n    shelf = Shelf()\n    n = shelve(shelf, title, 2)\n    return n\n")
    assert "kept_in_frame" in rules_won(source, "main('dune')", objects=False)
