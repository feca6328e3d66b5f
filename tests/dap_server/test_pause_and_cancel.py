"""Stopping what runs: DAP `pause` during a long predicted continue, DAP `cancel` of an inference (by its
progress report or its request), Ctrl-C in `ndb debug`, and the engine's interrupt under them.

The adapter reads requests while a command runs (dap_server/server.py), so these reach the command.
The long runs use the shipped model on a loop it cannot finish soon: a conditional breakpoint that never
fires makes `continue` walk the loop one predicted step at a time, as it would for a user.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from model_backend.engine.neural import LoadedModel, NeuralEngine
from model_backend.program import Program
from model_backend.state import Action, State
from tests.support.corpus import SPIN
from tests.support.dap_client import REPO, DapClient, stdio_session

LOOP_HEADER, LOOP_BODY = 3, 4


@pytest.fixture()
def spin(tmp_path: Path) -> Path:
    path = tmp_path / "spin.py"
    path.write_text(SPIN)
    return path


def test_an_interrupt_stops_a_followed_action_at_the_next_state(shipped_model: LoadedModel) -> None:
    program = Program(source=SPIN, path="<spin>", entry="spin(1000)")
    free = NeuralEngine(shipped_model)
    free.follow(6)
    free.start(program)
    free.step(Action(kind="continue"))
    assert free.followed_steps == 6  # the loop goes on: the whole budget of single steps is taken
    interrupted = NeuralEngine(shipped_model)
    interrupted.follow(6)
    interrupted.interrupt = threading.Event()
    interrupted.start(program)
    interrupted.interrupt.set()
    state = interrupted.step(Action(kind="continue"))
    assert interrupted.followed_steps == 1 and state == interrupted.state and state.function == "spin"


def test_breakpoints_set_during_a_followed_action_stop_it(shipped_model: LoadedModel) -> None:
    program = Program(source=SPIN, path="<spin>", entry="spin(1000)")
    engine = NeuralEngine(shipped_model)
    engine.follow(40)
    engine.start(program)
    reads: list[int] = []

    def lines_now() -> frozenset[int]:  # the IDE's breakpoints: one on the loop's body from the third step
        reads.append(1)
        return frozenset({LOOP_BODY}) if len(reads) >= 3 else frozenset()

    engine.live_breakpoints = lines_now
    state = engine.step(Action(kind="continue"))  # started with no breakpoint at all
    assert state.event == "line" and state.line == LOOP_BODY and state.function == "spin"
    assert 3 <= engine.followed_steps < 40 and len(reads) == engine.followed_steps


def test_a_breakpoint_removed_while_a_continue_runs_does_not_stop_it(tmp_path: Path) -> None:
    """The engine can stop on a breakpoint's line just as the breakpoint is removed (the adapter sets
    breakpoints from its reading thread while a continue runs): the continue goes on, as it would have
    without that breakpoint, instead of stopping there. Deterministic: the oracle engine, with the
    removal made at the end of its step."""
    from dap_server.core import DebugCore
    from model_backend.engine.oracle import OracleEngine

    program = tmp_path / "count.py"
    program.write_text("total = 0\nfor i in range(5):\n    total += i\nprint(total)\n")

    class RemovedDuringTheStep(OracleEngine):
        def step(self, action: Action, breakpoints: frozenset[int] = frozenset()) -> State:
            state = super().step(action, breakpoints)
            core.set_breakpoints([])  # as a setBreakpoints handled while this step ran
            return state

    core = DebugCore(lambda name, model, worker: RemovedDuringTheStep())
    core.launch(str(program), engine="oracle")
    core.set_breakpoints([{"line": 3}])
    stop = core.step("continue")  # the engine stops at line 3, for a breakpoint gone by then
    assert stop.exited, (stop.reason, stop.state.line)
    core.close()


def test_a_pause_stops_a_long_predicted_continue_where_it_got_to(spin: Path) -> None:
    with stdio_session() as s:
        with s.launch(spin, engine="neural", entry="spin(1000)", stopOnEntry=True, followSteps=5000):
            s.set_breakpoints([{"line": LOOP_BODY, "condition": "i < 0"}])  # never fires
        s.wait_for_stop("entry")
        s.step("next")  # the model has loaded once this is answered (the entry stop comes from the text)
        s.command("continue")  # answered before it runs; the run itself takes many minutes
        time.sleep(5)  # past `i = 0` and into the loop even on a loaded machine (2 s was not, once)
        assert not any(m.get("event") in ("stopped", "exited") for m in s.client.received()[s._stop_mark:])
        began = time.monotonic()
        s.client.request("pause", {"threadId": 1}, timeout=5)  # answered at once, while the run goes on
        stop = s.wait_for_stop("pause", timeout=30)
        assert time.monotonic() - began < 30
        assert stop.frames[0]["name"] == "spin" and stop.line in (LOOP_HEADER, LOOP_BODY)
        assert "i" in s.get_variables() and "Paused." in s.output("console")
        s.command("next")  # the session goes on from there (where to is the model's prediction)
        moved = s.client.wait_for(lambda m: m.get("event") in ("stopped", "exited"), 60, s._stop_mark)
        assert moved["event"] == "exited" or moved["body"]["reason"] == "step", moved  # not a pause left pending


def test_a_breakpoint_set_during_a_long_continue_is_answered_at_once_and_stops_it(spin: Path) -> None:
    with stdio_session() as s:
        with s.launch(spin, engine="neural", entry="spin(1000)", stopOnEntry=True, followSteps=5000):
            s.set_breakpoints([])
        s.wait_for_stop("entry")
        s.step("next")  # the model has loaded once this is answered
        s.command("continue")  # with no breakpoint, the loop's 1,000 passes are many minutes of steps
        time.sleep(2)
        assert not any(m.get("event") in ("stopped", "exited") for m in s.client.received()[s._stop_mark:])
        threads = s.client.request("threads", timeout=5)  # VS Code asks while the program runs
        assert threads["body"]["threads"][0]["id"] == 1
        began = time.monotonic()
        bound = s.set_breakpoints([{"line": LOOP_BODY}])  # answered while the run goes on, not after it
        assert time.monotonic() - began < 10
        assert bound[0]["verified"] and bound[0]["line"] == LOOP_BODY
        stop = s.wait_for_stop("breakpoint", timeout=30)  # the run under way stops there
        assert time.monotonic() - began < 30
        assert stop.frames[0]["name"] == "spin" and stop.line == LOOP_BODY
        assert stop.body["hitBreakpointIds"] == [bound[0]["id"]]
        s.set_breakpoints([])  # while paused: handled in its turn, as before
        s.command("continue")
        time.sleep(1)
        s.client.request("terminate", timeout=30)
        s.client.event("terminated", since=s._stop_mark, timeout=30)


def _stopped(client: DapClient, reason: str, since: int) -> dict[str, Any]:
    """The first stopped event with `reason` at or after index `since` (two stops may come back to back)."""
    return client.wait_for(lambda message: message.get("event") == "stopped" and message["body"]["reason"] == reason,
                           30, since, what=f"a stop ({reason})")


def test_restart_and_terminate_stop_a_long_continue(spin: Path) -> None:
    with stdio_session() as s:
        with s.launch(spin, engine="neural", entry="spin(1000)", stopOnEntry=True, followSteps=5000):
            s.set_breakpoints([{"line": LOOP_BODY, "condition": "i < 0"}])
        s.wait_for_stop("entry")
        for _ in range(2):  # the restarted session's continue must run too, not stop at once
            s.command("continue")
            time.sleep(2)
            assert not any(m.get("event") == "stopped" for m in s.client.received()[s._stop_mark:])
            mark = s.client.mark()
            s.client.request("restart", timeout=30)  # not left waiting for the continue's minutes
            paused = _stopped(s.client, "pause", mark)  # where the continue got to
            entry = _stopped(s.client, "entry", mark)  # then the new run
            assert s.client.received().index(paused) < s.client.received().index(entry)
            s._stop_mark = s.client.mark()
        s.command("continue")
        time.sleep(1)
        s.client.request("terminate", timeout=30)
        s.client.event("terminated", since=s._stop_mark, timeout=30)


def test_a_pause_while_paused_changes_nothing(tmp_path: Path) -> None:
    program = tmp_path / "count.py"
    program.write_text("total = 0\nfor i in range(50):\n    total += i\nprint(total)\n")
    with stdio_session() as s:
        with s.launch(program, stopOnEntry=True):
            s.set_breakpoints([4])
        s.wait_for_stop("entry")
        s.client.request("pause", {"threadId": 1})
        stop = s.step("continue", "breakpoint")  # not cut short by the earlier pause
        assert stop.line == 4 and s.get_variables()["total"] == "1225"


def test_an_inference_is_cancelled_from_its_progress_report(spin: Path) -> None:
    with stdio_session() as s:
        with s.launch(spin, engine="neural", entry="spin(3)", stopOnEntry=True, inferSeconds=600):
            pass
        s.wait_for_stop("entry")
        mark = s.client.mark()
        inferring = s.client.send("evaluate", {"expression": "infer spin 5", "frameId": 1, "context": "repl"})
        start = s.client.event("progressStart", since=mark, timeout=30)["body"]
        assert start["requestId"] == inferring and start["cancellable"] is True
        assert start["title"] == "Inferring the arguments of spin"
        queued = s.client.send("evaluate", {"expression": "i", "frameId": 1, "context": "watch"})
        s.client.request("cancel", {"requestId": queued}, timeout=5)  # waits its turn: cancelled when it comes
        s.client.request("cancel", {"progressId": start["progressId"]}, timeout=5)
        answer = s.client.response(inferring, timeout=60)
        assert answer["success"] is False and answer["message"] == "cancelled"
        assert s.client.response(queued, timeout=10)["message"] == "cancelled"
        end = s.client.event("progressEnd", since=mark, timeout=10)["body"]
        assert end["progressId"] == start["progressId"]
        assert "Inference cancelled." in s.output("console")
        assert s.client.request("stackTrace", {"threadId": 1})["body"]["stackFrames"][0]["name"] == "spin"
        assert s.evaluate("limit")["body"]["result"] == "3"  # the paused state is as it was


def _default_sigint() -> None:
    """In the child: Ctrl-C as at a terminal. A shell's background job (e.g. a `make test &`) starts with
    SIGINT ignored, and a child inherits that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT to a child process")
def test_ctrl_c_pauses_a_long_continue_and_is_harmless_at_the_prompt(spin: Path) -> None:
    ndb = Path(sys.executable).with_name("ndb")
    command = [str(ndb)] if ndb.exists() else [sys.executable, "-m", "dap_server"]
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([*command, "debug", str(spin), "--entry", "spin(1000)", "--follow-steps", "5000"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            cwd=str(REPO), env=env, preexec_fn=_default_sigint)
    assert proc.stdin is not None and proc.stdout is not None
    seen: list[str] = []
    reader = threading.Thread(target=lambda: seen.extend(iter(proc.stdout.readline, "")), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        proc.stdin.write(f"b {LOOP_BODY}, i < 0\nn\nc\n")  # `n` waits for the model, which loads behind the entry stop
        proc.stdin.flush()

        def wait_for(text: str, seconds: float, after: str = "") -> None:
            deadline = time.monotonic() + seconds
            while text not in ("".join(seen).partition(after)[2] if after else "".join(seen)):
                assert time.monotonic() < deadline and proc.poll() is None, f"no {text!r} in:\n{''.join(seen)}"
                time.sleep(0.2)

        wait_for("(ndb) c\n", 300)  # the model has loaded and the `c` has begun
        time.sleep(2)
        proc.send_signal(signal.SIGINT)  # during the `c`: it pauses
        wait_for("Paused.", 120)
        wait_for("\n-> ", 60, after="Paused.")  # the stop is shown: the command is over
        time.sleep(1)
        proc.send_signal(signal.SIGINT)  # at the prompt: as pdb, no reason to quit
        wait_for("--KeyboardInterrupt--", 60)
        proc.stdin.write("p i\nq\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
    reader.join(timeout=10)
    text = "".join(seen)
    assert "Paused." in text and "Traceback" not in text, text
    after = text.split("Paused.", 1)[1]
    assert "spin()" in after and "--KeyboardInterrupt--" in after, text
    assert after.split("--KeyboardInterrupt--", 1)[1].count("(ndb) p i") == 1, text
