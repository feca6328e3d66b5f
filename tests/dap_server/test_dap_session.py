"""End-to-end DAP sessions against the adapter (spawned over stdio, or reached over TCP), oracle engine."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from model_backend.engine.follow import DEFAULT_FOLLOW_STEPS
from tests.support import TESTS
from tests.support.calls import CALLS
from tests.support.dap_client import DapClient, Session, TcpServer, stdio_session, tcp_session

pytestmark = pytest.mark.timeout(120)

RAISES = """\
def check(x):
    if x < 0:
        raise ValueError("negative: " + str(x))
    return x


def run():
    try:
        check(-1)
    except ValueError:
        pass
    return check(-2)


print("begin")
run()
"""

RECURSION = """\
def fact(n):
    if n <= 1:
        return 1
    return n * fact(n - 1)


print(fact(4))
"""


@pytest.fixture
def calls(tmp_path: Path) -> Path:
    path = tmp_path / "calls.py"
    path.write_text(CALLS)
    return path


@pytest.fixture
def raises(tmp_path: Path) -> Path:
    path = tmp_path / "raises.py"
    path.write_text(RAISES)
    return path


def where(stop) -> list[tuple[str, int]]:
    return [(f["name"], f["line"]) for f in stop.frames]


def test_launch_sequence_follows_the_spec(calls: Path) -> None:
    with stdio_session() as s:
        caps = s.capabilities
        for cap in ("supportsConfigurationDoneRequest", "supportsStepBack", "supportsSetVariable", "supportsGotoTargetsRequest",
                    "supportsConditionalBreakpoints", "supportsHitConditionalBreakpoints", "supportsLogPoints",
                    "supportsExceptionInfoRequest", "supportsTerminateRequest", "supportsRestartRequest",
                    "supportsEvaluateForHovers"):
            assert caps.get(cap) is True, cap
        assert {f["filter"] for f in caps["exceptionBreakpointFilters"]} == {"raised", "uncaught"}
        with s.launch(calls, stopOnEntry=True):
            s.set_breakpoints([9])
            s.set_exception_breakpoints(["uncaught"])
        stop = s.wait_for_stop("entry")
        assert where(stop) == [("<module>", 1)]
        # The order on the wire: launch request, initialized event, configurationDone (request, response),
        # launch response, stopped event.
        timeline = [(e.direction, e.message) for e in s.client.timeline]

        def index(pred) -> int:
            return next(i for i, (d, m) in enumerate(timeline) if pred(d, m))

        launch_req = index(lambda d, m: d == "->" and m.get("command") == "launch")
        initialized = index(lambda d, m: d == "<-" and m.get("event") == "initialized")
        config_req = index(lambda d, m: d == "->" and m.get("command") == "configurationDone")
        config_resp = index(lambda d, m: d == "<-" and m.get("type") == "response"
                            and m.get("command") == "configurationDone")
        launch_resp = index(lambda d, m: d == "<-" and m.get("type") == "response" and m.get("command") == "launch")
        stopped = index(lambda d, m: d == "<-" and m.get("event") == "stopped")
        assert launch_req < initialized < config_req < config_resp < launch_resp < stopped
        # The launch banner says where values come from.
        assert "exact" in s.output("console")
        assert s.get_variables() == {}


def test_breakpoints_are_verified_moved_or_refused(calls: Path) -> None:
    with stdio_session() as s:
        with s.launch(calls):
            bps = s.set_breakpoints([2, 4, 11, 100])
            other = s.set_breakpoints([3], path=str(calls.parent / "other.py"))
        assert [b["verified"] for b in bps] == [True, True, True, False]
        assert [b["line"] for b in bps[:3]] == [2, 6, 13]  # 4 and 11 are blank: moved to the next statement
        assert "moved" in bps[1]["message"] and "past the end" in bps[3]["message"]
        assert other[0]["verified"] is False
        stop = s.wait_for_stop("breakpoint")
        assert where(stop) == [("<module>", 6)]
        assert stop.body["hitBreakpointIds"] == [bps[1]["id"]]
        stop = s.step("continue", "breakpoint")
        assert where(stop) == [("<module>", 13)]
        stop = s.step("continue", "breakpoint")
        assert where(stop) == [("square", 2), ("total", 9), ("<module>", 15)]
        assert s.get_variables() == {"n": "1"}
        s.set_breakpoints([])  # clear them all: run to the end
        s.command("continue")
        assert s.wait_for_exit() == 0
        assert s.output("stdout") == "answer 14\n"


def test_step_in_over_out_and_stack(calls: Path) -> None:
    with stdio_session() as s:
        with s.launch(calls):
            s.set_breakpoints([9])
        stop = s.wait_for_stop("breakpoint")
        assert where(stop) == [("total", 9), ("<module>", 15)]
        assert s.get_variables() == {"values": "[1, 2, 3]", "acc": "0", "v": "1"}
        stop = s.step("stepIn", "step")
        assert where(stop) == [("square", 1), ("total", 9), ("<module>", 15)]  # the call event (pdb's --Call--)
        stop = s.step("next", "step")
        assert where(stop) == [("square", 2), ("total", 9), ("<module>", 15)]
        stop = s.step("next", "step")
        assert where(stop)[0] == ("square", 3)
        assert s.get_variables()["result"] == "1"
        stop = s.step("stepOut", "step")  # stops at the return event, showing the value
        assert where(stop)[0][1] == 3 and where(stop)[0][0].startswith("square")
        assert s.get_variables()["(return) square"] == "1"
        stop = s.step("next", "step")
        assert where(stop) == [("total", 8), ("<module>", 15)]
        stop = s.step("next", "breakpoint")  # line 9 again, and it is a breakpoint line
        assert s.get_variables()["v"] == "2"
        # stackTrace paging: startFrame / levels / totalFrames.
        resp = s.client.request("stackTrace", {"threadId": 1, "startFrame": 1, "levels": 1})["body"]
        assert resp["totalFrames"] == 2 and [f["name"] for f in resp["stackFrames"]] == ["<module>"]
        assert resp["stackFrames"][0]["source"]["path"] == str(calls.resolve())
        # Outer frames: the oracle knows a caller's variables as of its call site (line 15).
        assert s.get_variables(frame_id=2) == {"square": "<function square>", "total": "<function total>",
                                               "data": "[1, 2, 3]", "info": "{'name': 'demo', 'sizes': (1, 2)}"}
        resp = s.client.request("evaluate", {"expression": "info['sizes'][1] + len(data)", "frameId": 2,
                                             "context": "watch"})
        assert resp["body"]["result"] == "5"
        stop = s.step("stepOut", "breakpoint")  # like pdb's `return`, stepOut stops at breakpoints on the way
        assert s.get_variables()["v"] == "3"
        s.set_breakpoints([])
        stop = s.step("stepOut", "step")
        assert where(stop)[0][0].startswith("total") and s.get_variables()["(return) total"] == "14"


def test_step_back_and_reverse_continue(calls: Path) -> None:
    with stdio_session() as s:
        with s.launch(calls):
            s.set_breakpoints([9])
        s.wait_for_stop("breakpoint")
        s.step("continue", "breakpoint")
        assert s.get_variables()["v"] == "2"
        # stepBack: each line once (the inv_line_call copy of line 9 is skipped).
        seen = []
        for _ in range(4):
            stop = s.step("stepBack", "step")
            variables = s.get_variables()
            seen.append((stop.line, variables.get("acc"), variables.get("v")))
        assert seen == [(8, "1", "1"), (9, "0", "1"), (8, "0", None), (7, None, None)]
        stop = s.step("stepBack", "step")  # from the first line of total: its call event (pdb's --Call--)
        assert where(stop) == [("total", 6), ("<module>", 15)]
        stop = s.step("stepBack", "step")  # and from there back out to the caller's line
        assert where(stop) == [("<module>", 15)]
        # Forward again to the second hit, then reverse-continue to the first one.
        s.step("continue", "breakpoint")
        stop = s.step("continue", "breakpoint")
        assert s.get_variables()["v"] == "2"
        stop = s.step("reverseContinue", "breakpoint")
        assert stop.line == 9 and s.get_variables()["v"] == "1"
        # No breakpoint before: reverse-continue stops at the start.
        stop = s.step("reverseContinue", "step")
        assert where(stop) == [("<module>", 1)]
        stop = s.step("stepBack", "step")  # nothing before the start: stays
        assert where(stop) == [("<module>", 1)]
        # Breakpoints inside calls made earlier are found going backwards too.
        s.set_breakpoints([2])
        s.step("continue", "breakpoint")
        stop = s.step("continue", "breakpoint")
        assert s.get_variables() == {"n": "2"}
        s.set_breakpoints([2, 16])
        s.step("continue", "breakpoint")
        stop = s.step("continue", "breakpoint")
        assert stop.line == 16
        stop = s.step("reverseContinue", "breakpoint")
        assert where(stop)[0] == ("square", 2) and s.get_variables() == {"n": "3"}


def test_variables_expand_and_evaluate(calls: Path) -> None:
    with stdio_session() as s:
        with s.launch(calls):
            s.set_breakpoints([15])
        s.wait_for_stop("breakpoint")
        scopes = s.scopes()
        assert [sc["name"] for sc in scopes] == ["Locals", "Globals"]  # module frame: the locals are the globals
        variables = {v["name"]: v for v in s.variables(scopes[0]["variablesReference"])}
        data = variables["data"]
        assert data["type"] == "list" and data["variablesReference"] > 0 and data["indexedVariables"] == 3
        children = s.variables(data["variablesReference"])
        assert [(c["name"], c["value"], c["evaluateName"]) for c in children] == [
            ("0", "1", "data[0]"), ("1", "2", "data[1]"), ("2", "3", "data[2]")]
        info = variables["info"]
        info_children = {c["name"]: c for c in s.variables(info["variablesReference"])}
        assert info_children["'name'"]["value"] == "'demo'"
        sizes = info_children["'sizes'"]
        assert sizes["evaluateName"] == "info['sizes']"
        assert [c["value"] for c in s.variables(sizes["variablesReference"])] == ["1", "2"]
        # References are stable while stopped.
        again = {v["name"]: v for v in s.variables(scopes[0]["variablesReference"])}
        assert again["data"]["variablesReference"] == data["variablesReference"]
        assert variables["square"]["variablesReference"] == 0 and variables["square"]["value"] == "<function square>"
        # evaluate: watch, hover, repl.
        assert s.evaluate("len(data) + info['sizes'][1]")["body"]["result"] == "5"
        assert s.evaluate("data", context="hover")["body"]["variablesReference"] > 0
        assert s.evaluate("[x * 2 for x in data if x > 1]", context="repl")["body"]["result"] == "[4, 6]"
        assert s.evaluate("info['name'].upper()")["body"]["result"] == "'DEMO'"
        assert s.evaluate("sorted(info)")["body"]["result"] == "['name', 'sizes']"
        bad = s.evaluate("nope + 1", expect_success=False)
        assert "not defined" in bad["message"]
        unsafe = s.evaluate("__import__('os').system('true')", expect_success=False)
        assert "not supported" in unsafe["message"]
        call = s.evaluate("square(3)", expect_success=False)
        assert "run the program" in call["message"]
        # A stale reference after the program moves on is an error, not a crash.
        s.step("next", "step")
        stale = s.client.request("variables", {"variablesReference": data["variablesReference"]},
                                 expect_success=False)
        assert "valid only while stopped" in stale["message"]


def test_set_variable_changes_later_states(calls: Path) -> None:
    with stdio_session() as s:
        with s.launch(calls):
            s.set_breakpoints([9])
        s.wait_for_stop("breakpoint")
        scope = s.scopes()[0]
        resp = s.client.request("setVariable", {"variablesReference": scope["variablesReference"],
                                                "name": "acc", "value": "100"})
        assert resp["body"]["value"] == "100"
        assert s.get_variables()["acc"] == "100"
        assert s.evaluate("acc + v")["body"]["result"] == "101"
        s.set_breakpoints([])
        s.command("continue")
        assert s.wait_for_exit() == 0
        assert s.output("stdout") == "answer 114\n"  # 100 + 1 + 4 + 9


def test_set_variable_element_and_expression(calls: Path) -> None:
    with stdio_session() as s:
        with s.launch(calls):
            s.set_breakpoints([15])
        s.wait_for_stop("breakpoint")
        data = s.get_variable("data")
        resp = s.client.request("setVariable", {"variablesReference": data["variablesReference"],
                                                "name": "0", "value": "10"})
        assert resp["body"]["value"] == "10"
        assert s.get_variables()["data"] == "[10, 2, 3]"
        scope = s.scopes()[0]
        bad = s.client.request("setVariable", {"variablesReference": scope["variablesReference"],
                                               "name": "missing", "value": "1"}, expect_success=False)
        assert "missing" in bad["message"]
        s.set_breakpoints([])
        s.command("continue")
        assert s.wait_for_exit() == 0
        assert s.output("stdout") == "answer 113\n"  # 100 + 4 + 9


def test_conditional_hit_count_and_log_points(calls: Path) -> None:
    with stdio_session() as s:
        with s.launch(calls):
            s.set_breakpoints([{"line": 9, "condition": "v == 3"}])
        s.wait_for_stop("breakpoint")
        assert s.get_variables()["v"] == "3"
        s.command("continue")
        assert s.wait_for_exit() == 0
    with stdio_session() as s:
        with s.launch(calls):
            s.set_breakpoints([{"line": 2, "hitCondition": "2"}])
        s.wait_for_stop("breakpoint")
        assert s.get_variables() == {"n": "2"}
        s.command("continue")
        assert s.wait_for_exit() == 0
    with stdio_session() as s:
        with s.launch(calls):
            bps = s.set_breakpoints([{"line": 9, "logMessage": "v={v} acc={acc}"}, {"line": 16}])
            assert all(b["verified"] for b in bps)
        s.wait_for_stop("breakpoint")
        assert "v=1 acc=0\nv=2 acc=1\nv=3 acc=5\n" in s.output("console")
    with stdio_session() as s, s.launch(calls):
        bad = s.set_breakpoints([{"line": 9, "hitCondition": "sometimes"}, {"line": 9, "condition": "v ==" }])
        assert [b["verified"] for b in bad] == [False, False]


def test_exceptions_uncaught_raised_and_exit_code(raises: Path) -> None:
    with stdio_session() as s:
        with s.launch(raises):
            s.set_exception_breakpoints(["uncaught"])
        stop = s.wait_for_stop("exception")
        assert where(stop) == [("check", 3), ("run", 12), ("<module>", 16)]
        info = s.client.request("exceptionInfo", {"threadId": 1})["body"]
        assert info["exceptionId"] == "ValueError" and info["description"] == "negative: -2"
        assert info["breakMode"] == "unhandled"
        assert s.get_variables()["(exception)"].startswith("ValueError")
        s.command("continue")
        assert s.wait_for_exit() == 1
        assert "ValueError" in s.output("stderr") and s.output("stdout") == "begin\n"
    with stdio_session() as s:
        with s.launch(raises):
            s.set_exception_breakpoints(["raised"])
        stop = s.wait_for_stop("exception")
        assert stop.line == 3 and s.get_variables()["x"] == "-1"
        assert "ValueError" in stop.body["text"]
        stop = s.step("continue", "exception")  # the caught one is done; the same raise is not re-reported
        assert where(stop)[0] == ("check", 3) and s.get_variables()["x"] == "-2"
        s.command("continue")
        assert s.wait_for_exit() == 1
    with stdio_session() as s:
        with s.launch(raises):
            s.set_exception_breakpoints([])
        assert s.wait_for_exit() == 1
        not_stopped = s.client.request("exceptionInfo", {"threadId": 1}, expect_success=False)
        assert not not_stopped["success"]


def test_entry_expression_restart_and_terminate(tmp_path: Path) -> None:
    program = tmp_path / "fact.py"
    program.write_text(RECURSION)
    with stdio_session() as s:
        with s.launch(program, entry="fact(3)", stopOnEntry=True):
            pass
        stop = s.wait_for_stop("entry")
        assert where(stop)[0] == ("fact", 1)
        assert s.get_variables() == {"n": "3"}
        assert s.step("stepIn").line == 2
        stop = s.step("next")
        assert stop.line == 4
        stop = s.step("stepIn")  # recursion: one frame deeper
        assert [f["name"] for f in stop.frames][:2] == ["fact", "fact"] and s.get_variables() == {"n": "2"}
        s.command("stepOut")
        s.wait_for_stop()
        assert s.get_variables()["(return) fact"] == "2"
        mark = s.client.mark()
        s.client.request("restart")
        s._stop_mark = mark
        stop = s.wait_for_stop("entry")
        assert where(stop) == [("fact", 1)] and s.get_variables() == {"n": "3"}
        mark = s.client.mark()
        s.client.request("terminate")
        s.client.event("terminated", since=mark)
        after = s.client.request("next", {"threadId": 1}, expect_success=False)
        assert "ended" in after["message"]


def test_launch_args_reach_the_oracle_run(tmp_path: Path) -> None:
    program = tmp_path / "cli.py"
    program.write_text("import sys\nwords = sys.argv[1:]\ncount = len(words)\n")
    with stdio_session() as s:
        with s.launch(program, args=["alpha", "beta"]):
            s.set_breakpoints([3])
        s.wait_for_stop("breakpoint")
        assert s.get_variables()["words"] == "['alpha', 'beta']"


def test_goto_jumps_like_pdb(tmp_path: Path) -> None:
    program = tmp_path / "jumpy.py"
    program.write_text("def f(n):\n    a = 1\n    a += 10\n    a += 100\n    for i in range(2):\n"
                       "        a += i\n    return a\n\n\nprint(f(0))\n")
    with stdio_session() as s:
        with s.launch(program):
            s.set_breakpoints([3])
        s.wait_for_stop("breakpoint")
        source = {"path": str(program)}
        targets = s.client.request("gotoTargets", {"source": source, "line": 4})["body"]["targets"]
        assert [t["line"] for t in targets] == [4]
        mark = s._stop_mark = s.client.mark()
        s.client.request("goto", {"threadId": 1, "targetId": targets[0]["id"]})
        stop = s.wait_for_stop("goto")
        assert stop.line == 4 and s.get_variables()["a"] == "1"  # line 3 was skipped
        assert s.step("next", "step").line == 5 and s.get_variables()["a"] == "101"
        refused = s.client.request("goto", {"threadId": 1, "targetId": 6}, expect_success=False)
        assert not refused["success"] and "can't jump into the body of a for loop" in refused["message"]
        assert s.client.request("gotoTargets", {"source": source, "line": 99}, expect_success=False)["success"] is False
        assert s.step("stepBack", "step").line == 4  # back through the jump
        s.set_breakpoints([])
        s.command("continue")
        output = s.client.wait_for(lambda m: m.get("event") == "output" and "102" in m["body"]["output"],
                                   since=mark, what="the program's output")
        assert output["body"]["category"] == "stdout"


def test_launch_errors_are_reported(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("def f(:\n")
    with stdio_session() as s:
        seq = s.client.send("launch", {"program": str(broken), "engine": "oracle"})
        resp = s.client.response(seq)
        assert not resp["success"] and "syntax error" in resp["message"]
        seq = s.client.send("launch", {"program": str(tmp_path / "missing.py"), "engine": "oracle"})
        assert "no such file" in s.client.response(seq)["message"]
        seq = s.client.send("launch", {"program": str(broken), "engine": "quantum"})
        assert "engine" in s.client.response(seq)["message"]
        seq = s.client.send("launch", {"engine": "oracle"})
        assert "program" in s.client.response(seq)["message"]
        # still alive
        assert s.client.request("threads")["body"]["threads"][0]["id"] == 1


def test_tcp_sessions_run_concurrently(calls: Path, raises: Path) -> None:
    server = TcpServer()
    results: dict[str, object] = {}

    def run(name: str, program: Path, expected_exit: int) -> None:
        try:
            with tcp_session(server) as s:
                with s.launch(program):
                    s.set_breakpoints([3])
                stop = s.wait_for_stop("breakpoint")
                results[name + ":line"] = stop.line
                s.step("stepBack", "step")
                s.set_breakpoints([])
                s.command("continue")
                results[name + ":exit"] = s.wait_for_exit()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            results[name + ":error"] = repr(exc)

    try:
        threads = [threading.Thread(target=run, args=("calls", calls, 0)),
                   threading.Thread(target=run, args=("raises", raises, 1))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=90)
        assert results == {"calls:line": 3, "calls:exit": 0, "raises:line": 3, "raises:exit": 1}
        # One after another on the same server, too.
        with tcp_session(server) as s:
            with s.launch(calls, stopOnEntry=True):
                pass
            assert s.wait_for_stop("entry").line == 1
    finally:
        server.close()


def test_client_with_zero_based_lines(calls: Path) -> None:
    client = DapClient.stdio()
    s = Session(client)
    try:
        s.capabilities = client.request("initialize", {"adapterID": "x", "linesStartAt1": False})["body"]
        with s.launch(calls):
            bps = s.set_breakpoints([8])  # 0-based 8 is line 9
            assert bps[0]["line"] == 8
        stop = s.wait_for_stop("breakpoint")
        assert stop.line == 8 and s.get_variables()["v"] == "1"
    finally:
        s.disconnect()
        client.close()


def test_debugpy_stepping_style_stops_on_lines_only() -> None:
    """With "stepping": "debugpy", call and return events are passed as debugpy does, and a return into a
    caller still on its call line stops there (this program's stops are checked against debugpy 1.8 in
    tests/dap_server/test_debugpy_parity.py)."""
    program = TESTS / "parity_programs" / "two_calls.py"  # f at 4-6, g at 9-10, calls at 13-15
    with stdio_session() as s:
        with s.launch(program, stepping="debugpy"):
            s.set_breakpoints([13])
        assert where(s.wait_for_stop("breakpoint")) == [("<module>", 13)]
        assert where(s.step("stepIn")) == [("f", 5), ("<module>", 13)]  # no stop on the call event
        assert where(s.step("next")) == [("f", 6), ("<module>", 13)]
        assert where(s.step("next")) == [("f", 5), ("<module>", 13)]  # past the return, into f(2)
        assert s.get_variables() == {"a": "2"}  # f(1)'s value is shown in the module's frame, not f(2)'s
        assert where(s.step("stepIn")) == [("f", 6), ("<module>", 13)]
        assert where(s.step("stepOut")) == [("<module>", 13)]  # on the call line, x not bound yet
        shown = s.get_variables()
        assert (shown["(return) f"], "x" in shown) == ("5", False)
        assert where(s.step("stepIn")) == [("<module>", 14)]
        assert where(s.step("stepIn")) == [("g", 10), ("<module>", 14)]
        assert where(s.step("stepIn")) == [("f", 5), ("g", 10), ("<module>", 14)]
        assert where(s.step("next")) == [("f", 6), ("g", 10), ("<module>", 14)]
        assert where(s.step("next")) == [("f", 5), ("g", 10), ("<module>", 14)]  # past the return, into f(a + 1)
        assert where(s.step("next")) == [("f", 6), ("g", 10), ("<module>", 14)]
        assert where(s.step("next")) == [("<module>", 14)]  # through g's return: y not bound yet
        assert "y" not in s.get_variables() and s.get_variables()["(return) g"] == "36"
        assert where(s.step("next")) == [("<module>", 15)]
        assert s.get_variables()["y"] == "36"
        s.command("continue")
        assert s.wait_for_exit() == 0  # no stop on the module's return event


def test_step_out_stops_on_the_call_line_and_steps_back(calls: Path) -> None:
    """debugpy's stepOut: the caller's frame on its call line, its locals as they are then (the target
    not bound), the value as `(return) square`; step back goes to the callee's last line."""
    with stdio_session() as s:
        with s.launch(calls, stepping="debugpy"):
            s.set_breakpoints([2])
        assert where(s.wait_for_stop("breakpoint")) == [("square", 2), ("total", 9), ("<module>", 15)]
        stop = s.step("stepOut", "step")
        assert where(stop) == [("total", 9), ("<module>", 15)]
        assert s.get_variables() == {"values": "[1, 2, 3]", "acc": "0", "v": "1", "(return) square": "1"}
        assert where(s.step("stepBack", "step")) == [("square", 3), ("total", 9), ("<module>", 15)]
        assert s.get_variables() == {"n": "1", "result": "1"}
        assert where(s.step("stepOut", "step")) == [("total", 9), ("<module>", 15)]
        assert where(s.step("next", "step")) == [("total", 8), ("<module>", 15)]
        assert s.get_variables()["acc"] == "1"


LOOPS = """\
total = 0
i = 0
while True:
    total += i
    i += 1
"""


def test_a_program_stopped_at_the_event_limit_pauses_at_its_last_state(tmp_path: Path) -> None:
    """A loop that never ends: the oracle records `maxEvents` events; the session pauses at the last one
    (as after pressing pause) instead of ending, steps back from there, and only a second continue from
    that state ends it."""
    program = tmp_path / "loops.py"
    program.write_text(LOOPS)
    with stdio_session() as s:
        with s.launch(program, maxEvents=300):
            pass
        stop = s.wait_for_stop("pause")
        assert "event limit 300 reached" in stop.body["description"]
        assert "event limit 300 reached" in s.output("console")
        assert where(stop)[0][1] in (3, 4, 5)
        late = int(s.get_variables()["i"])
        assert late > 50
        stop = s.step("stepBack", "step")
        assert s.get_variables()["i"] in (str(late), str(late - 1))
        s.step("continue", "pause")
        s.command("continue")
        assert s.wait_for_exit() == 2
    with stdio_session() as s:
        seq = s.client.send("launch", {"program": str(program), "engine": "oracle", "maxEvents": 0})
        response = s.client.response(seq)
        assert not response["success"] and "maxEvents" in response["message"]


def test_breakpoints_set_before_launch_keep_their_ids(calls: Path) -> None:
    """A client that sets breakpoints before `launch` is told their ids at once; the `breakpoint` events
    that verify them once the program is known carry the same ids."""
    with stdio_session() as s:
        early = s.set_breakpoints([2, 11], path=str(calls))
        assert [b["verified"] for b in early] == [False, False] and all(b.get("id") for b in early)
        mark = s.client.mark()
        with s.launch(calls):
            pass
        changed = [m["body"]["breakpoint"] for m in s.client.received()[mark:]
                   if m.get("event") == "breakpoint"]
        assert sorted(b["id"] for b in changed) == sorted(b["id"] for b in early)
        assert {b["id"]: b["line"] for b in changed} == {early[0]["id"]: 2, early[1]["id"]: 13}
        stop = s.wait_for_stop("breakpoint")
        assert stop.body["hitBreakpointIds"] == [early[1]["id"]]  # line 13 runs before square is called


def test_a_function_frame_shows_the_module_globals_it_uses(tmp_path: Path) -> None:
    program = tmp_path / "glob.py"
    program.write_text("LIMIT = 10\nSEEN = []\n\ndef f(x):\n    SEEN.append(x)\n    return x < LIMIT\n\nf(3)\n")
    with stdio_session() as s:
        with s.launch(program):
            s.set_breakpoints([6])
        s.wait_for_stop("breakpoint")
        assert s.get_variables(scope="Globals") == {"SEEN": "[3]", "LIMIT": "10"}
        assert s.evaluate("LIMIT - x")["body"]["result"] == "7"


LINKED = """\
class Node:
    def __init__(self, val, nxt=None):
        self.val = val
        self.next = nxt

    def total(self):
        n, s = self, 0
        while n is not None:
            s += n.val
            n = n.next
        return s


def build(xs):
    head = None
    for x in reversed(xs):
        head = Node(x, head)
    return head.total()


print(build([1, 2, 3]))
"""


def test_the_oracle_expands_the_programs_objects(tmp_path: Path) -> None:
    """`self` expands in the Variables pane as debugpy's does (attributes, nested objects, evaluateName),
    and expressions, breakpoint conditions and a caller's frame read attributes."""
    program = tmp_path / "linked.py"
    program.write_text(LINKED)
    with stdio_session() as s:
        with s.launch(program):
            s.set_breakpoints([{"line": 9, "condition": "n.val == 2 and self.next.next.val == 3"}])
        stop = s.wait_for_stop("breakpoint")
        assert stop.frames[0]["line"] == 9 and s.evaluate("s")["body"]["result"] == "1"
        this = s.get_variable("self")
        assert this["type"] == "Node" and this["variablesReference"]
        assert this["value"] == "Node(val=1, next=Node(val=2, next=Node(val=3, next=None)))"
        children = {v["name"]: v for v in s.variables(this["variablesReference"])}
        assert {k: v["value"] for k, v in children.items()} == {
            "val": "1", "next": "Node(val=2, next=Node(val=3, next=None))"}
        assert children["next"]["evaluateName"] == "self.next"
        nested = {v["name"]: v["value"] for v in s.variables(children["next"]["variablesReference"])}
        assert nested == {"val": "2", "next": "Node(val=3, next=None)"}
        assert s.evaluate("self.next.next.val + n.val")["body"]["result"] == "5"
        scopes = s.scopes(2)  # build's frame, at its call site: `head` is the same list
        head = next(v for v in s.variables(scopes[0]["variablesReference"]) if v["name"] == "head")
        assert {v["name"]: v["value"] for v in s.variables(head["variablesReference"])}["val"] == "1"


def test_the_oracle_expands_objects_inside_lists(tmp_path: Path) -> None:
    program = tmp_path / "tree.py"
    program.write_text("class Node:\n    def __init__(self, value, children=()):\n        self.value = value\n"
                       "        self.children = list(children)\n\n\n"
                       "tree = Node(1, [Node(2), Node(3, [Node(4)])])\nleaves = [tree.children[0], 5]\nprint(tree.value)\n")
    with stdio_session() as s:
        with s.launch(program):
            s.set_breakpoints([9])
        s.wait_for_stop("breakpoint")
        leaves = s.get_variable("leaves")
        assert leaves["value"] == "[Node(value=2, children=[]), 5]" and leaves["variablesReference"]
        first = s.variables(leaves["variablesReference"])[0]
        assert (first["evaluateName"], first["type"]) == ("leaves[0]", "Node")
        assert {v["name"]: v["value"] for v in s.variables(first["variablesReference"])} == {
            "value": "2", "children": "[]"}
        assert s.evaluate("[c.value for c in tree.children] + [tree.children[1].children[0].value]")[
            "body"]["result"] == "[2, 3, 4]"


def test_stop_at_exit_pauses_at_the_last_state_to_step_back_from(calls: Path) -> None:
    """With `stopAtExit` the end of the program is a pause at its last state (the module's return, its
    final values), from which Step Back and Reverse Continue work; the next forward command ends it.
    noDebug still runs to the end."""
    with stdio_session() as s:
        with s.launch(calls, stopAtExit=True):
            s.set_breakpoints([10])
        s.wait_for_stop("breakpoint")
        stop = s.step("continue", "pause")
        assert stop.body["description"] == "Paused at the end: The program exited: normal"
        assert where(stop)[0] == ("<module>", 16) and s.get_variables()["answer"] == "14"
        assert "answer 14\n" in s.output("stdout") and "stopAtExit" in s.output("console")
        s.step("stepBack", "step")
        assert s.step("reverseContinue", "breakpoint").frames[0]["line"] == 10
        s.step("continue", "pause")
        s.command("next")
        assert s.wait_for_exit() == 0
    with stdio_session() as s:
        with s.launch(calls, stopAtExit=True, noDebug=True):
            s.set_breakpoints([10])
        assert s.wait_for_exit() == 0


def test_the_follow_steps_reach_the_model_engine(calls: Path) -> None:
    """`followSteps` (launch) and `--follow-steps` (ndb debug) set how many single predictions a model
    engine takes for one next, stepOut or continue; a negative count is refused before anything starts."""
    from dap_server.core import DebugCore

    core = DebugCore()
    core.launch(str(calls), engine="neural", follow_steps=7)
    assert core.engine is not None and getattr(core.engine, "follow_steps", None) == 7
    core.launch(str(calls), engine="neural")
    assert getattr(core.engine, "follow_steps", 0) is None  # the engine's default: the whole program shown
    assert core.engine is not None and core.engine.follow_budget() == DEFAULT_FOLLOW_STEPS  # type: ignore[attr-defined]
    core.close()
    with stdio_session() as s:
        seq = s.client.send("launch", {"program": str(calls), "engine": "neural", "followSteps": -1})
        response = s.client.response(seq)
        assert not response["success"] and "followSteps" in response["message"]


def test_a_model_engine_builds_the_call_line_stop_from_its_trajectory(calls: Path) -> None:
    """A model engine's state holds only the innermost frame: the stop on the call line comes from the
    predicted return plus the caller's last state in the engine's trajectory (StepwiseEngine.call_site),
    with no new prediction. Here an engine that answers like the neural one (no caller frames) replays
    the oracle's states."""
    from dap_server.core import DebugCore
    from model_backend.engine.base import StepwiseEngine
    from model_backend.engine.oracle import OracleEngine
    from model_backend.state import Action, State

    class Trajectory(OracleEngine):
        def __init__(self) -> None:
            super().__init__()
            self.history: list[State] = []
            self.steps = 0

        def start(self, program, at="entry", known_exit=None):  # type: ignore[no-untyped-def]
            self.history = [super().start(program, at, known_exit)]
            return self.history[-1]

        def step(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> State:
            self.steps += 1
            self.history.append(super().step(action, breakpoints))
            return self.history[-1]

        def caller_frame(self, level: int) -> None:  # a predicted state holds only the innermost frame
            return None

        call_site = StepwiseEngine.call_site

    engine = Trajectory()
    core = DebugCore(lambda name, model, worker: engine, stepping="debugpy")
    core.launch(str(calls), engine="neural")
    core.set_breakpoints([{"line": 9}])
    assert core.step("continue").state.line == 9
    assert core.step("stepIn").state.line == 2
    steps = engine.steps
    stop = core.step("stepOut")
    assert (stop.state.function, stop.state.line, stop.state.depth) == ("total", 9, 1)
    assert [(f.function, f.line) for f in stop.state.stack] == [("<module>", 15), ("total", 9)]
    assert core.display_locals() == {"values": "[1, 2, 3]", "acc": "0", "v": "1", "(return) square": "1"}
    assert engine.steps - steps == 1  # the step to the return event; the stop itself asks nothing more
    assert core.step("stepBack").state.line == 3
    assert core.step("stepOut").state.line == 9
    after = core.step("next").state
    assert (after.line, after.locals["acc"]) == (8, "1")
