"""dap_server/core.py: how a session starts (the shipped model; the oracle where a test needs a failure)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from dap_server.core import CoreError, DebugCore, default_engine_factory
from model_backend.engine.base import Engine, EngineError

PROGRAM = "def double(x):\n    y = x * 2\n    return y\n"


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "double.py"
    path.write_text(PROGRAM)
    return path


def test_a_model_engine_shows_the_first_state_before_the_model_has_loaded(program: Path) -> None:
    """The first stop of a model engine comes from the program's text: launch answers while the engine
    is still being made, and the first step waits for it, then goes on as the engine says."""
    release = threading.Event()
    made: list[Engine] = []

    def slow_factory(name: str, model: str | None, worker: str | None) -> Engine:
        assert release.wait(60)
        made.append(default_engine_factory(name, model, worker))
        return made[-1]

    core = DebugCore(slow_factory)
    stop = core.launch(str(program), entry="double(4)", engine="neural")
    assert not made  # the factory has not finished
    assert (stop.reason, stop.state.event, stop.state.locals) == ("entry", "call", {"x": "4"})
    assert core.launched
    release.set()
    after = core.step("next")
    assert made and core.engine is made[0]
    assert after.state.line == 2 and after.state.locals == {"x": "4"}
    core.close()


def test_a_model_engine_that_cannot_load_is_reported_by_the_next_command(program: Path) -> None:
    def failing_factory(name: str, model: str | None, worker: str | None) -> Engine:
        if name == "oracle":
            return default_engine_factory(name, model, worker)
        raise EngineError("no model checkpoint at /nowhere")

    core = DebugCore(failing_factory)
    stop = core.launch(str(program), entry="double(4)", engine="neural")
    assert stop.state.event == "call"
    with pytest.raises(CoreError, match="cannot start the neural engine: no model checkpoint"):
        core.step("next")
    assert not core.launched  # the session survives: a new launch works
    assert core.launch(str(program), entry="double(4)", engine="oracle").state.locals == {"x": "4"}
    core.close()


def test_an_entry_the_text_cannot_give_fails_the_launch_at_once(program: Path) -> None:
    core = DebugCore()
    with pytest.raises(CoreError, match="could not start the program"):
        core.launch(str(program), entry="double(double(2))", engine="neural")  # a call of a function: not computed from the text
