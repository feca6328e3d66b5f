"""Inferring arguments from a return value (engine/infer.py): proposals from inverse jumps, confirmed by
forward runs; the forward runs of one inference share forward passes (neural.run_together)."""

from __future__ import annotations

import ast
import io
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from dap_server.core import DebugCore, inference_lines, inference_verdict
from dap_server.terminal import TerminalDebugger, run_terminal
from model_backend.engine import EngineError
from model_backend.engine.infer import (
    Inference,
    Proposal,
    _Checker,
    _search,
    as_argument,
    call_arguments,
    check,
    closeness,
    edits,
    infer_arguments,
    known_return,
    literal_arguments,
    propose,
    return_lines,
    returned_as_argument,
    same_value,
    signature,
    value_edits,
    walk_back,
)
from model_backend.engine.neural import LoadedModel, NeuralEngine, Together, run_together
from model_backend.engine.oracle import OracleEngine
from model_backend.program import Program
from model_backend.sandbox import Limits, run_check
from model_backend.state import Action, State
from tests.support.dap_client import stdio_session

DOUBLE = "def f(x):\n    y = x * 2\n    return y\n"
TAKE = "def f(text, n):\n    head = text[:n]\n    return head\n"


@pytest.fixture(scope="module")
def tiny(tiny_checkpoint: Path) -> LoadedModel:
    return LoadedModel.load(tiny_checkpoint)


def test_values_compare_as_python_literals() -> None:
    assert same_value("'a'", '"a"') and same_value("[1,2]", "[1, 2]") and same_value("{'a': 1}", "{'a':1}")
    assert same_value("1", "1.0") and same_value("True", "1")  # `assert out == f(x)` compares with ==
    assert not same_value("[1, 2]", "[2, 1]") and not same_value("'1'", "1")
    assert same_value("<object>", " <object> ") and not same_value("<a>", "<b>")  # not literals: the text


def test_return_lines_of_a_named_function() -> None:
    code = "def g():\n    return 1\n\ndef f(x):\n    def h(y):\n        return y\n    if x:\n        return h(x)\n    x += 1\n"
    assert return_lines(code, "f") == [8] and return_lines(code, "g") == [2]
    assert return_lines("def f():\n    pass\n", "f") == [2]  # no return: its last line
    with pytest.raises(EngineError, match="no top-level function 'k'"):
        return_lines(code, "k")


def test_a_call_state_becomes_the_argument_list_that_binds_it() -> None:
    code = "def f(a, /, b, *rest, key, **more):\n    return a\n"
    params = signature(code, "f")
    bound = {"a": "1", "b": "'x'", "rest": "(2, 3)", "key": "[4]", "more": "{'z': 5}"}
    text = call_arguments(bound, params)
    assert text == "1, 'x', *(2, 3), key=[4], z=5"
    scope: dict[str, object] = {}
    exec(code + f"\ncaught = (lambda *a, **k: (a, k))({text})", scope)  # the text binds the same values
    assert scope["caught"] == ((1, "x", 2, 3), {"key": [4], "z": 5})
    assert call_arguments({"b": "'x'", "a": "1", "rest": "()", "key": "0", "more": "{}"}, params) is None  # order
    assert call_arguments({"a": "1", "b": "2"}, params) is None  # parameters missing
    assert call_arguments({**bound, "more": "{'not an identifier': 1}"}, params) is None
    assert call_arguments({"x": "[1, 2]"}, signature("def f(x):\n    return x\n", "f")) == "[1, 2]"
    one = signature("def f(x):\n    return x\n", "f")
    for split in ("'a', ''", "1, k=2", "*[1]", ""):  # a value that would pass other than one argument
        assert call_arguments({"x": split}, one) is None, split
    assert call_arguments({"x": "('a', '')"}, one) == "('a', '')"
    assert call_arguments({**bound, "rest": "2, 3"}, params) is None


def test_a_proposal_is_written_as_python_writes_its_values_or_dropped() -> None:
    """Values no call could pass are dropped before they take a check; the others are written as repr
    writes them, so that draws of the same values vote together."""
    assert literal_arguments("{'e': 3, 'e': 2}, [1,2], ( 1, )") == "{'e': 2}, [1, 2], (1,)"
    assert literal_arguments("*(1,2), key='x', **{'a': 1}") == "*(1, 2), key='x', **{'a': 1}"
    assert literal_arguments("") == ""  # a function without parameters
    for unusable in ("{'a': 'b': 1}", "'cut", "1, x", "f(1)", "[1e400]", "1); print(2"):
        assert literal_arguments(unusable) is None, unusable


def test_the_oracle_confirms_exactly_the_arguments_that_return_the_value() -> None:
    proposals = [Proposal(arguments=a, votes=1) for a in ("3", "4", "'ab'", "1, 2", "3.0")]
    check(OracleEngine, DOUBLE, "f", "6", proposals)
    assert [p.confirmed for p in proposals] == [True, False, False, False, True]
    assert [p.predicted_return for p in proposals] == ["6", "8", "'abab'", None, "6.0"]
    assert proposals[3].problem  # f(1, 2) is a TypeError: no return value, and a reason


def test_an_inverse_walk_ends_at_the_call_with_its_arguments(tiny: LoadedModel) -> None:
    """walk_back steps back (inv_step_over) from the return to the call at depth 0. On the oracle, whose
    steps back are the real trace, that is the real call, through a loop and a helper's calls."""
    code = "def g(v):\n    return v + 1\n\ndef f(xs, k):\n    out = []\n    for x in xs:\n        out.append(g(x) * k)\n    return out\n"
    program = Program(source=code, path="<t>", entry="f([1, 2, 3], 2)")
    known = known_return(program, "f", "[4, 6, 8]")
    assert walk_back(OracleEngine(), program, known, "f", signature(code, "f")) == "[1, 2, 3], 2"
    assert walk_back(OracleEngine(), program, known, "f", signature(code, "f"), stop=lambda: True) is None
    # On a model the walk is predicted; the proposal, when there is one, comes right after the greedy jump.
    proposals = propose(NeuralEngine(tiny), DOUBLE, "f", "6", samples=2, walks=1)
    walked = [rank for rank, p in enumerate(proposals) if p.walked]
    assert walked in ([], [0], [1]) and (walked != [1] or proposals[0].greedy)
    assert not any(p.walked for p in propose(NeuralEngine(tiny), DOUBLE, "f", "6", samples=2, walks=0))


def test_checks_run_side_by_side_as_they_run_alone(tiny: LoadedModel) -> None:
    """run_together feeds all sessions in one pass a round: the states are those of one session at a time."""
    programs = [Program(source=DOUBLE, path="<t>", entry=f"f({n})") for n in (1, 25, -7)]
    programs.append(Program(source=TAKE, path="<t>", entry="f('abcdef', 3)"))

    def forward(engine: NeuralEngine, program: Program):  # type: ignore[no-untyped-def]
        yield from engine.start_steps(program)
        first = yield from engine.step_steps(Action(kind="step_into"))
        end = yield from engine.step_steps(Action(kind="step_return"))
        return first, end

    alone = []
    for program in programs:
        engine = NeuralEngine(tiny)
        alone.append(engine.run(forward(engine, program)))
    engines = [NeuralEngine(tiny) for _ in programs]
    together = run_together([(e, forward(e, p)) for e, p in zip(engines, programs, strict=True)])
    assert together == alone
    assert len({tuple(e.context_ids) for e in engines}) == len(programs)


def test_runs_join_and_leave_the_pass_as_they_start_and_end(tiny: LoadedModel) -> None:
    """Together keeps the forward pass full: runs added while others are under way, or abandoned midway,
    leave the others' states as they are when each runs alone."""
    programs = [Program(source=DOUBLE, path="<t>", entry=f"f({n})") for n in (1, 25, -7, 3)]

    def forward(engine: NeuralEngine, program: Program):  # type: ignore[no-untyped-def]
        yield from engine.start_steps(program)
        return (yield from engine.step_steps(Action(kind="step_return")))

    alone = []
    for program in programs:
        engine = NeuralEngine(tiny)
        alone.append(engine.run(forward(engine, program)))
    together: Together[int, State] = Together()
    engines = [NeuralEngine(tiny) for _ in programs]
    together.add(0, engines[0], forward(engines[0], programs[0]))
    together.add(1, engines[1], forward(engines[1], programs[1]))
    with pytest.raises(ValueError, match="one operation at a time"):
        together.add(9, engines[0], forward(engines[0], programs[0]))
    got = dict(together.finished())  # at least one ended
    assert got and len(together) == 2 - len(got)
    together.add(2, engines[2], forward(engines[2], programs[2]))
    doomed = engines[3].start_steps(programs[3])
    together.add(3, engines[3], doomed)
    together.abandon([3])
    assert doomed.gi_frame is None and 3 not in together.running()
    while together:
        got.update(together.finished())
    assert got == {0: alone[0], 1: alone[1], 2: alone[2]}


def test_run_together_refuses_a_session_twice_and_hands_back_engine_errors(tiny: LoadedModel) -> None:
    engine = NeuralEngine(tiny)
    ops = [(engine, engine.start_steps(Program(source=DOUBLE, path="<t>", entry="f(1)"))) for _ in range(2)]
    with pytest.raises(ValueError, match="distinct sessions"):
        run_together(ops)
    good, bad = NeuralEngine(tiny), NeuralEngine(tiny)
    results = run_together([
        (good, good.start_steps(Program(source=DOUBLE, path="<t>", entry="f(1)"))),
        (bad, bad.start_steps(Program(source=DOUBLE, path="<t>", entry="f(g(1))"))),  # not a literal or builtin
    ])
    assert results[0].event == "call" and results[0].locals == {"x": "1"}
    assert isinstance(results[1], EngineError) and "literal" in str(results[1])


def test_runs_past_the_deadline_are_abandoned(tiny: LoadedModel) -> None:
    import time

    def forward(engine: NeuralEngine, program: Program):  # type: ignore[no-untyped-def]
        yield from engine.start_steps(program)  # from the text: no forward pass
        return (yield from engine.step_steps(Action(kind="step_into")))

    engines = [NeuralEngine(tiny) for _ in range(2)]
    ops = [(e, forward(e, Program(source=DOUBLE, path="<t>", entry=f"f({n})"))) for n, e in enumerate(engines)]
    results = run_together(ops, deadline=time.monotonic() - 1)
    assert all(isinstance(r, EngineError) and "time limit" in str(r) for r in results)
    assert all(op.gi_frame is None for _, op in ops)  # closed, not left suspended
    proposals = [Proposal(arguments="3", votes=1), Proposal(arguments="4", votes=1)]
    check(lambda: NeuralEngine(tiny), DOUBLE, "f", "6", proposals, deadline=time.monotonic() - 1)
    assert all(p.problem and "time limit" in p.problem and p.predicted_return is None for p in proposals)
    check(OracleEngine, DOUBLE, "f", "6", proposals[:1], deadline=time.monotonic() - 1)
    assert "time limit" in (proposals[0].problem or "")


def test_inference_ranks_proposals_and_picks_a_confirmed_one(tiny: LoadedModel) -> None:
    """With a small model the proposals are poor; what must hold is the procedure: distinct proposals,
    the greedy one first, the first `checks` checked by the real run (the oracle as checker here),
    the pick the first confirmed one or else the greedy one."""
    result = infer_arguments(NeuralEngine(tiny), DOUBLE, "f", "6", samples=8, checks=4, edits=0,
                             engine_factory=OracleEngine)
    arguments = [p.arguments for p in result.proposals]
    assert arguments and len(set(arguments)) == len(arguments)
    assert not any(p.greedy for p in result.proposals[1:])  # the greedy one (if it is a call of f) comes first
    assert sum(p.votes for p in result.proposals) <= 9
    for p in result.proposals[:4]:
        returns_it = run_check(f"{DOUBLE}\nassert 6 == f({p.arguments})\n", Limits(wall_time=5.0)).exit == "normal"
        assert p.confirmed == returns_it
        assert (p.predicted_return is None) == (p.problem is not None)
    assert all(p.predicted_return is None and p.problem is None for p in result.proposals[4:])
    confirmed = [p for p in result.proposals if p.confirmed]
    assert result.arguments == (confirmed[0] if confirmed else result.proposals[0]).arguments
    assert result.confirmed == bool(confirmed)


def test_an_edit_changes_one_argument_a_little() -> None:
    rng = random.Random(0)
    before = "[45, 3, 61], 'ab', key=2"
    found = edits(before, [45, 3, 61, 47], rng)
    assert found and len(set(found)) == len(found) and before not in found
    old = ast.parse(f"f({before})", mode="eval").body
    for text in found:
        new = ast.parse(f"f({text})", mode="eval").body
        assert isinstance(old, ast.Call) and isinstance(new, ast.Call)
        old_values = [ast.literal_eval(n) for n in [*old.args, *(k.value for k in old.keywords)]]
        new_values = [ast.literal_eval(n) for n in [*new.args, *(k.value for k in new.keywords)]]
        assert [k.arg for k in new.keywords] == ["key"]
        assert sum(a != b for a, b in zip(old_values, new_values, strict=True)) == 1, text
    assert "[45, 3, 61, 47], 'ab', key=2" in found  # the wanted value, where it has the argument's type
    assert {"[45, 3, 61], 'ab', key=3", "[45, 3, 61], 'ab', key=1", "[45, 3, 61], 'ab', key=0"} <= set(found)
    assert value_edits(True, 0, rng) == [False] and value_edits({"a": 1}, None, rng) == [{}]
    assert edits("*[1, 2]", 3, rng) == [] and edits("f(", 3, rng) == []
    assert closeness("'abc'", '"abc"') == 1.0 and closeness(None, "1") == 0.0
    assert closeness("[1, 2, 3]", "[1, 2, 4]") > closeness("'x'", "[1, 2, 4]")


def test_edits_search_best_first_from_the_closest_runs(tiny: LoadedModel) -> None:
    """With nothing confirmed among the model's proposals, edits are checked: each of an argument list
    checked before it, none twice, at most `edits`; the first of the proposal whose run came closest.
    The search ends at the first confirmed one (the oracle checks one at a time, in order, so it is the
    last checked)."""
    for returned in ("10", "-3", "'x'"):
        result = infer_arguments(NeuralEngine(tiny), DOUBLE, "f", returned, samples=4, checks=3, edits=5, width=2,
                                 engine_factory=OracleEngine)
        model = [p for p in result.proposals if p.edit_of is None]
        edited = [p for p in result.proposals if p.edit_of is not None]
        assert len({p.arguments for p in result.proposals}) == len(result.proposals)
        assert len(edited) <= 5 and all(p.votes == 0 for p in edited)
        assert all(p.predicted_return is not None or p.problem for p in edited)  # every edit listed was checked
        checked = [p for p in model[:3] if p.predicted_return is not None or p.problem]
        confirmed = [p for p in result.proposals if p.confirmed]
        if edited:
            assert len(checked) == min(3, len(model)) and not any(p.confirmed for p in checked)
            closest = max(checked, key=lambda p: closeness(p.predicted_return, returned))  # the first of the best
            given = {a for p in checked for a in returned_as_argument(p.arguments, ast.literal_eval(returned))}
            given -= {p.arguments for p in model}
            if given:  # the known value in place of the argument goes first
                assert edited[0].arguments in given
            else:
                assert edited[0].edit_of == closest.arguments
            before = [p.arguments for p in checked]
            for p in edited:
                assert p.edit_of in before
                before.append(p.arguments)
        if confirmed:
            assert len(confirmed) == 1 and result.arguments == confirmed[0].arguments
            assert (edited or checked)[-1] is confirmed[0]


def test_the_known_value_in_place_of_an_argument_is_the_first_edit() -> None:
    """A function that returns an argument (here a prefix of it) is found by the first edit, whatever
    the closeness of the other edits, and the known value is also tried in an argument's type."""
    checker = _Checker(OracleEngine, TAKE, "f", "'abc'", deadline=None)
    found = _search(checker, [Proposal(arguments="'xyz', 5", votes=1)], "'abc'", "abc", 1, 2, random.Random(0))
    assert [p.arguments for p in found] == ["'abc', 5"] and found[0].confirmed
    assert returned_as_argument("'xyz', 5", "abc") == ["'abc', 5"]
    assert returned_as_argument("7, [1]", "800") == ["800, [1]", "7, ['8', '0', '0']"] and returned_as_argument("'a', 2", 12) == ["'12', 2", "'a', 12"]
    assert as_argument((1, 2), [3]) == [[1, 2]] and as_argument(["a", "b"], "x") == ["ab"]
    assert as_argument("ab", ["x"]) == [["a", "b"]] and as_argument([1], (2,)) == [(1,)]
    assert as_argument("5", 5) == [] and as_argument("x5", 3) == [] and as_argument(None, 3) == []


def test_neural_inference_runs_no_code(tiny: LoadedModel, tmp_path: Path) -> None:
    """Both directions are predictions: a function that would write a file writes nothing."""
    marker = tmp_path / "ran"
    source = f"def f(x):\n    open({str(marker)!r}, 'w').write('ran')\n    return x\n"
    infer_arguments(NeuralEngine(tiny), source, "f", "5", samples=3, checks=4)
    proposals = [Proposal(arguments=a, votes=1) for a in ("5", "'five'", "[5]")]
    check(lambda: NeuralEngine(tiny), source, "f", "5", proposals)  # forward runs of the model, side by side
    assert all(p.predicted_return is not None or p.problem for p in proposals)
    assert not marker.exists()


def test_a_return_value_that_is_not_a_literal_is_refused(tiny: LoadedModel) -> None:
    with pytest.raises(EngineError, match="must be a Python literal"):
        infer_arguments(NeuralEngine(tiny), DOUBLE, "f", "len([1])")


def test_the_infer_command(tiny: LoadedModel, tmp_path: Path) -> None:
    program = tmp_path / "double.py"
    program.write_text(DOUBLE)
    ndb = [sys.executable, "-m", "dap_server", "infer", str(program), "--model", str(Path(tiny.path))]
    out = subprocess.run([*ndb, "-f", "f", "--returns", "6", "--samples", "2", "--checks", "2", "--edits", "0", "--json"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["function"] == "f" and result["returned"] == "6" and len(result["proposals"]) <= 3
    assert result["arguments"] == (result["proposals"][0]["arguments"] if result["proposals"] else None) or result["confirmed"]
    table = subprocess.run([*ndb, "-f", "f", "--returns", "6", "--samples", "2", "--checks", "2", "--edits", "0"],
                           capture_output=True, text=True, timeout=120)
    assert table.returncode == 0 and "arguments the model proposes" in table.stdout
    last = table.stdout.splitlines()[-1]
    assert last.startswith(f"f({result['arguments']})  # ") if result["arguments"] else "proposed no" in last
    for bad, message in ((["-f", "g", "--returns", "1"], "no top-level function 'g'"),
                         (["-f", "f", "--returns", "foo(1)"], "must be a Python literal")):
        refused = subprocess.run([*ndb, *bad], capture_output=True, text=True, timeout=120)
        assert refused.returncode == 2 and message in refused.stderr and "Traceback" not in refused.stderr


def test_the_terminal_debugger_infers_arguments_and_stays_where_it_was(tiny: LoadedModel, tmp_path: Path) -> None:
    """`infer FUNCTION VALUE` in `ndb debug` runs an inference on new sessions of the model being
    debugged: the paused state is the same after it, and bad requests are one-line errors."""
    program = tmp_path / "double.py"
    program.write_text(DOUBLE)
    out = io.StringIO()
    commands = "s\nw\na\ninfer f 6\nw\na\ninfer\ninfer f foo(1)\ninfer g 1\ns\nq\n"
    core = DebugCore()
    stop = core.launch(str(program), "f(3)", "neural", str(Path(tiny.path)), follow_steps=2)
    debugger = TerminalDebugger(core, io.StringIO(commands), out)
    debugger.infer_seconds = 5  # a random model's runs never return: the time limit ends them
    debugger.show_stop(stop)
    debugger.cmdloop()
    core.close()
    text = out.getvalue()
    before, _, after = text.partition("infer f 6\n")
    assert before.split("w\n")[-1] in after  # `where` and `args` show the same state after the inference
    assert "Inferring the arguments of f" in after
    assert "  # a predicted run returns it" in after or "  # not confirmed" in after or "proposed no argument list" in after
    assert "*** Usage: infer FUNCTION VALUE" in after
    assert "*** the return value must be a Python literal: 'foo(1)'" in after
    assert "*** the program defines no top-level function 'g'" in after and "Traceback" not in text
    oracle = io.StringIO()
    run_terminal(str(program), "f(3)", "oracle", None, None, stdin=io.StringIO("infer f 6\nq\n"), stdout=oracle)
    assert "*** inference needs the neural engine with a local model (this session uses the oracle engine)" in oracle.getvalue()


def test_the_debug_console_infers_arguments(tiny: LoadedModel, tmp_path: Path) -> None:
    """In VS Code's Debug Console (an evaluate request in the "repl" context), `infer FUNCTION VALUE`
    answers with the pick and writes the checked proposals to the console; the paused state is kept.
    Anywhere else, and for text that is a Python expression, it is an expression as before."""
    program = tmp_path / "double.py"
    program.write_text(DOUBLE)
    with stdio_session() as s:
        with s.launch(program, engine="neural", model=str(Path(tiny.path)), entry="f(3)", stopOnEntry=True,
                      followSteps=2, inferSeconds=5):
            pass
        stop = s.wait_for_stop("entry")
        mark = s.client.mark()
        answer = s.client.request("evaluate", {"expression": "infer f 6", "frameId": 1, "context": "repl"},
                                  timeout=120)
        body = answer["body"]
        assert body["variablesReference"] == 0
        # A progress report (the client says it shows them): started, one update per checked proposal, ended.
        progress = [m for m in s.client.received()[mark:] if m.get("event", "").startswith("progress")]
        assert [m["event"] for m in progress[:1] + progress[-1:]] == ["progressStart", "progressEnd"]
        assert progress[0]["body"]["requestId"] == answer["request_seq"]
        assert {m["body"]["progressId"] for m in progress} == {progress[0]["body"]["progressId"]}
        assert all(m["event"] == "progressUpdate" for m in progress[1:-1])
        assert body["result"].startswith("f(") or body["result"] == "The model proposed no argument list."
        assert "Inferring the arguments of f (up to 5 s)..." in s.output("console")
        assert s.client.request("stackTrace", {"threadId": 1})["body"]["stackFrames"][0]["line"] == stop.line
        refused = s.evaluate("infer g 1", context="repl", expect_success=False)
        assert "no top-level function 'g'" in refused["message"]
        assert "syntax error" in s.evaluate("infer f 6", context="watch", expect_success=False)["message"]
        assert "not defined" in s.evaluate("infer if x else 1", context="repl", expect_success=False)["message"]
    with stdio_session() as s:
        with s.launch(program, entry="f(3)", stopOnEntry=True):
            pass
        s.wait_for_stop("entry")
        refused = s.evaluate("infer f 6", context="repl", expect_success=False)
        assert "inference needs the neural engine with a local model" in refused["message"]


def test_a_terminal_shows_how_far_an_inference_has_got_on_one_line() -> None:
    from dap_server.terminal import _StatusLine

    out = io.StringIO()
    status = _StatusLine(out)
    status.checked(Proposal(arguments="3", votes=1, predicted_return="7"))
    status.checked(Proposal(arguments="'" + "x" * 500 + "'", votes=1, predicted_return="6", confirmed=True))
    status.clear()
    lines = out.getvalue().split("\r\033[K")
    assert lines[1] == "  1 checked; last: (3) -> 7" and lines[2].startswith("  2 checked; last: ('xxx")
    assert lines[2].endswith("...") and len(lines[2]) < 500 and lines[3] == ""  # cut to the width; then cleared


def test_an_inference_reads_as_calls_with_what_their_runs_returned() -> None:
    proposals = [Proposal(arguments=str(i), votes=1, predicted_return=str(2 * i), confirmed=i == 9) for i in range(10)]
    proposals.append(Proposal(arguments="'x'", votes=1))  # not checked: not listed
    result = Inference(function="f", returned="18", arguments="9", confirmed=True, proposals=proposals)
    assert inference_lines(result) == [f"f({i}) -> {2 * i}" for i in range(8)] + ["... and 2 more checked"]
    assert inference_verdict(result) == "f(9)  # a predicted run returns it"
    unsure = result.model_copy(update={"arguments": "'x'", "confirmed": False})
    assert inference_verdict(unsure) == "f('x')  # not confirmed: no predicted run returns it"
    assert inference_verdict(result.model_copy(update={"arguments": None})) == "The model proposed no argument list."


def test_a_proposer_model_proposes_and_the_model_checks(tiny: LoadedModel, untrained_checkpoint: Path,
                                                        tmp_path: Path) -> None:
    """`--proposer`: one checkpoint makes the inverse predictions, the other the forward runs that check
    them (ndb eval cruxeval and ndb infer)."""
    from model_backend.eval.cruxeval import evaluate

    checker = untrained_checkpoint
    proposed = propose(NeuralEngine(tiny), DOUBLE, "f", "6", samples=0, walks=1)
    checked = [p.model_copy() for p in proposed]
    check(lambda: NeuralEngine(LoadedModel.load(checker)), DOUBLE, "f", "6", checked)
    data = tmp_path / "p.jsonl"
    data.write_text(json.dumps({"id": "t", "code": DOUBLE, "input": "3", "output": "6"}) + "\n")
    result = evaluate(str(data), task="input", model=str(checker), proposer_model=str(Path(tiny.path)),
                      samples=0, checks=4, edits=0, progress=False)
    assert result["proposer"] == str(Path(tiny.path))
    got = [p for p in result["results"][0]["proposals"] if "edit_of" not in p]
    assert [(p["arguments"], p.get("predicted_return")) for p in got] == [
        (p.arguments, p.predicted_return) for p in checked]
    with pytest.raises(ValueError, match="input task"):
        evaluate(str(data), task="output", proposer_model=str(checker), progress=False)
    program = tmp_path / "double.py"
    program.write_text(DOUBLE)
    out = subprocess.run([sys.executable, "-m", "dap_server", "infer", str(program), "--model", str(checker),
                          "--proposer", str(Path(tiny.path)), "-f", "f", "--returns", "6", "--samples", "0",
                          "--checks", "4", "--edits", "0", "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert [(p["arguments"], p.get("predicted_return")) for p in json.loads(out.stdout)["proposals"]] == [
        (p.arguments, p.predicted_return) for p in checked]


def test_which_model_proposes(tiny: LoadedModel, tmp_path: Path) -> None:
    """The shipped proposer proposes only for the shipped model; another model proposes for itself unless
    a proposer is named, and "model" always means the model's own."""
    from model_backend.engine.neural import DEFAULT_PROPOSER, create_neural_engine, proposer_engine

    own = NeuralEngine(tiny)
    assert proposer_engine(own) is None and proposer_engine(own, "model") is None
    named = proposer_engine(own, str(Path(tiny.path)))
    assert isinstance(named, NeuralEngine) and named is not own
    assert Path(named.m.path).resolve() == Path(tiny.path).resolve()
    shipped = proposer_engine(create_neural_engine())
    if (DEFAULT_PROPOSER / "config.json").is_file():
        assert isinstance(shipped, NeuralEngine) and Path(shipped.m.path).resolve() == DEFAULT_PROPOSER.resolve()
    else:
        assert shipped is None
    assert proposer_engine(create_neural_engine(), "model") is None


def test_inference_starts_on_a_return_line_that_can_return_the_value() -> None:
    """Which return ran is not known: a `return LITERAL` line whose literal is the value is the likeliest,
    one whose literal is another value cannot be it, and otherwise the last line stands (as before)."""
    from model_backend.sampler import hidden_entry

    code = ("def f(seen, x):\n    if seen:\n        return 'pp'\n    if x:\n        return True\n"
            "    return str(x) * 2\n")
    program = Program(source=code, path="<t>", entry=hidden_entry("f()"))
    assert known_return(program, "f", "'pp'").line == 3
    assert known_return(program, "f", "True").line == 5
    assert known_return(program, "f", "'00'").line == 6
    assert known_return(program, "f", "1").line == 6  # 1 is not True: its repr differs
    assert known_return(program, "f", "not a literal").line == 6
    only = "def f(x):\n    if x:\n        return 1\n    return 2\n"
    assert known_return(Program(source=only, path="<t>", entry=hidden_entry("f()")), "f", "3").line == 4
