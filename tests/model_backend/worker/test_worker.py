"""The model worker: protocol, batching, a real `ndb worker` on loopback, the WorkerEngine and the adapter.

A tiny model is trained for a few steps in a temporary directory (tests/support/worker_model.py). Workers run as
subprocesses (`python -m model_backend.worker worker --port 0`), with one torch thread, on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from websockets.exceptions import ConnectionClosed  # noqa: E402
from websockets.sync.client import connect  # noqa: E402

from model_backend.engine.base import EngineError  # noqa: E402
from model_backend.engine.decoding import SEARCH_ENV  # noqa: E402
from model_backend.engine.forward import ragged_forward  # noqa: E402
from model_backend.engine.neural import LoadedModel, NeuralEngine  # noqa: E402
from model_backend.program import Program  # noqa: E402
from model_backend.state import Action, State  # noqa: E402
from model_backend.worker import protocol as proto  # noqa: E402
from model_backend.worker.batching import BatchRunner  # noqa: E402
from model_backend.worker.client import WorkerEngine, WorkerError, WorkerUnavailable  # noqa: E402
from tests.support.corpus import COUNT, SPIN, corpus  # noqa: E402

pytestmark = [pytest.mark.timeout(300), pytest.mark.usefixtures("one_torch_thread")]
REPO = Path(__file__).resolve().parents[3]
READY_TIMEOUT = 120.0

FACT = "def fact(n):\n    if n <= 1:\n        return 1\n    return n * fact(n - 1)\n"
ACTIONS = ["step_into", "step_over", "step_into", "inv_step_over", "step_return", "continue", "inv_step_into"]


@pytest.fixture(scope="module")
def checkpoint(tiny_checkpoint: Path) -> Path:
    return tiny_checkpoint


@pytest.fixture(scope="module")
def loaded(checkpoint: Path) -> LoadedModel:
    return LoadedModel.load(checkpoint)


def programs() -> list[Program]:
    picked = [c.load() for c in corpus() if c.name in ("binary_search", "while_loop", "early_return", "nested_calls")]
    return [Program(source=FACT, path="fact.py", entry="fact(4)"), Program(source=COUNT, path="count.py",
            entry="count('berry', 'r')"), *picked]


def actions(seed: int, n: int) -> list[Action]:
    rng = random.Random(seed)
    return [Action(kind=rng.choice(ACTIONS)) for _ in range(n)]  # type: ignore[arg-type]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Worker:
    """`python -m model_backend.worker worker` on loopback; `.url` once it listens."""

    def __init__(self, checkpoint: Path, *args: str, port: int = 0, env: dict[str, str] | None = None) -> None:
        self.args = [sys.executable, "-m", "model_backend.worker", "worker", "--model", str(checkpoint),
                     "--port", str(port), "--threads", "1", *args]
        env = dict(os.environ, PYTHONPATH=str(REPO), PYTHONUNBUFFERED="1", **(env or {}))
        self.process = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        cwd=str(REPO), env=env)
        assert self.process.stdout is not None
        self.lines: list[str] = []
        ready = threading.Event()

        def read() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                self.lines.append(line)
                if "serving ws://" in line:
                    ready.set()

        threading.Thread(target=read, daemon=True).start()
        if not ready.wait(READY_TIMEOUT):
            self.kill()
            raise AssertionError("worker did not start:\n" + "".join(self.lines))
        line = next(x for x in self.lines if "serving ws://" in x)
        self.url = line.split("serving ", 1)[1].split(" ", 1)[0]
        self.port = int(self.url.rsplit(":", 1)[1])

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(scope="module")
def worker(checkpoint: Path) -> Iterator[Worker]:
    w = Worker(checkpoint, "--idle-timeout", "600")
    yield w
    w.stop()


def raw(ws: Any, message: dict[str, Any] | str | bytes) -> dict[str, Any]:
    ws.send(message if isinstance(message, str | bytes) else json.dumps(message))
    return json.loads(ws.recv(timeout=60))


def health(url: str, token: str | None = None) -> proto.Health:
    engine = WorkerEngine(url, token=token)
    try:
        return engine.health()
    finally:
        engine.close()


def assert_same_states(got: list[State], want: list[State]) -> None:
    """Greedy states exactly equal; confidences equal up to float rounding (a batch adds the same numbers
    in another order: differences of about 1e-9 were seen)."""
    assert [x.model_copy(update={"confidence": None}) for x in got] == \
        [y.model_copy(update={"confidence": None}) for y in want]
    for x, y in zip(got, want, strict=True):
        assert (x.confidence is None) == (y.confidence is None)
        if x.confidence and y.confidence:
            assert x.confidence.keys() == y.confidence.keys()
            assert all(abs(x.confidence[k] - y.confidence[k]) <= 1e-6 for k in x.confidence), (x.confidence, y.confidence)


def solo_run(loaded: LoadedModel, program: Program, acts: list[Action]) -> list[State]:
    engine = NeuralEngine(loaded)
    states = [engine.start(program)]
    states += [engine.step(a) for a in acts]
    return states


# ---- protocol ------------------------------------------------------------------------------------


def test_protocol_round_trip_and_token_urls() -> None:
    request = proto.StepRequest(id=3, op="step", session="abc", action=Action.parse("breakpoint:4+7"), breakpoints=[2])
    parsed = proto.REQUEST_ADAPTER.validate_json(request.model_dump_json())
    assert parsed == request
    with pytest.raises(ValueError):
        proto.REQUEST_ADAPTER.validate_python({"id": 1, "op": "sample", "session": "s", "action": {"kind": "inv_step_over"},
                                               "k": proto.MAX_SAMPLES + 1})
    assert proto.split_token("ws://:s3cr%2Ft@127.0.0.1:9/") == ("ws://127.0.0.1:9/", "s3cr/t")
    assert proto.split_token("ws://127.0.0.1:9") == ("ws://127.0.0.1:9", None)
    assert proto.with_token("ws://127.0.0.1:9", "a/b") == "ws://:a%2Fb@127.0.0.1:9"
    assert proto.split_token(proto.with_token("ws://[::1]:9", "t") or "") == ("ws://[::1]:9", "t")
    assert proto.is_loopback("127.0.0.1") and proto.is_loopback("::1") and proto.is_loopback("localhost")
    assert not proto.is_loopback("0.0.0.0") and not proto.is_loopback("example.org")


# ---- batching (in process) -------------------------------------------------------------------------


def test_batched_and_unbatched_greedy_states_are_identical(loaded: LoadedModel) -> None:
    progs = programs()[:4]
    plans = [actions(seed, 6) for seed in range(len(progs))]
    alone = [solo_run(loaded, p, a) for p, a in zip(progs, plans, strict=True)]

    runner: BatchRunner[Any, Any] = BatchRunner(
        lambda items: ragged_forward(loaded.model, [(e.cache, ids) for e, ids in items]), max_batch=8,
        window_s=0.05, lock=loaded.lock)
    try:
        engines = [NeuralEngine(loaded) for _ in progs]
        jobs = [runner.submit(e, e.start_steps(p)) for e, p in zip(engines, progs, strict=True)]
        together = [[j.future.result(60)] for j in jobs]
        for k in range(6):
            jobs = [runner.submit(e, e.step_steps(plan[k])) for e, plan in zip(engines, plans, strict=True)]
            for out, job in zip(together, jobs, strict=True):
                out.append(job.future.result(60))
        # set_variable and sampling run through the runner too
        state = together[0][-1]
        if state.event in ("call", "line") and state.locals:
            name = next(iter(state.locals))
            changed = runner.run(engines[0], engines[0].set_variable_steps(name, "7"), timeout=60)
            assert changed.locals[name] == "7"
    finally:
        runner.stop()
    assert runner.max_seen_batch > 1, "the runner never batched two sessions"
    for solo, batched in zip(alone, together, strict=True):
        assert_same_states(batched, solo)


def test_a_failed_batched_round_fails_its_jobs_and_their_sessions_go_on(loaded: LoadedModel) -> None:
    """A round whose model call raises (out of memory, say) fails the jobs in it with that error, and
    each session is put back on its current state: its next step is that of a session resumed there."""
    program = programs()[0]
    failing = {"rounds": 0}

    def answer_all(items: list[tuple[Any, list[int]]]) -> list[Any]:
        if failing["rounds"]:
            failing["rounds"] -= 1
            raise RuntimeError("out of memory")
        return ragged_forward(loaded.model, [(e.cache, ids) for e, ids in items])

    runner: BatchRunner[Any, Any] = BatchRunner(answer_all, max_batch=8, window_s=0.0, lock=loaded.lock)
    try:
        engine = NeuralEngine(loaded)
        runner.run(engine, engine.start_steps(program), timeout=60)
        runner.run(engine, engine.step_steps(Action(kind="step_into")), timeout=60)
        history = list(engine.history)
        failing["rounds"] = 1
        with pytest.raises(RuntimeError, match="out of memory"):
            runner.run(engine, engine.step_steps(Action(kind="step_over")), timeout=60)
        assert engine.history == history
        context = list(engine.context_ids)
        after = runner.run(engine, engine.step_steps(Action(kind="step_over")), timeout=60)
    finally:
        runner.stop()
    fresh = NeuralEngine(loaded)
    fresh.resume(program, history, False)
    assert context == fresh.context_ids
    assert_same_states([after], [fresh.step(Action(kind="step_over"))])


def test_ragged_forward_matches_the_model_logits(loaded: LoadedModel) -> None:
    from transformers import DynamicCache

    a, b = [5, 9, 11, 40, 41], [7, 8]
    with torch.inference_mode():
        ref = [loaded.model(input_ids=torch.tensor([ids])).logits[0, -1] for ids in (a, b)]
        caches = [DynamicCache(), DynamicCache()]
        ragged_forward(loaded.model, [(caches[0], a[:3]), (caches[1], b[:1])])
        out = ragged_forward(loaded.model, [(caches[0], a[3:]), (caches[1], b[1:])])
    for got, want in zip(out, ref, strict=True):
        assert torch.allclose(got, want, atol=1e-5)


def test_engine_sample_does_not_move_the_session(loaded: LoadedModel) -> None:
    engine = NeuralEngine(loaded)
    engine.search_branches = 0  # greedy: the test model's searched step_into exits the program
    engine.start(programs()[0])
    engine.step(Action(kind="step_into"))
    before = engine.state
    samples = engine.sample(Action(kind="inv_step_into"), 3)
    assert len(samples) == 3 and all(isinstance(s, State) for s in samples)
    assert engine.state == before
    with pytest.raises(EngineError):
        engine.resume(programs()[0], [], inverse=False)


# ---- a real worker -------------------------------------------------------------------------------


def test_two_sessions_interleaved_get_their_own_states(worker: Worker, loaded: LoadedModel) -> None:
    progs = programs()[:2]
    plans = [actions(10 + i, 5) for i in range(2)]
    expected = [solo_run(loaded, p, a) for p, a in zip(progs, plans, strict=True)]
    engines = [WorkerEngine(worker.url), WorkerEngine(worker.url)]
    try:
        got: list[list[State]] = [[e.start(p)] for e, p in zip(engines, progs, strict=True)]
        for k in range(5):
            for i in (0, 1) if k % 2 == 0 else (1, 0):
                got[i].append(engines[i].step(plans[i][k]))
        assert got == expected
        assert health(worker.url).sessions >= 2
    finally:
        for e in engines:
            e.close()


def test_concurrent_sessions_are_batched_and_isolated(worker: Worker, loaded: LoadedModel) -> None:
    progs = programs()
    plans = [actions(20 + i, 4) for i in range(len(progs))]
    expected = [solo_run(loaded, p, a) for p, a in zip(progs, plans, strict=True)]
    results: dict[int, list[State]] = {}

    def user(i: int) -> None:
        engine = WorkerEngine(worker.url)
        try:
            states = [engine.start(progs[i])]
            states += [engine.step(a) for a in plans[i]]
            results[i] = states
        finally:
            engine.close()

    threads = [threading.Thread(target=user, args=(i,)) for i in range(len(progs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert sorted(results) == list(range(len(progs)))
    for i, want in enumerate(expected):
        assert_same_states(results[i], want)
    h = health(worker.url)
    assert h.engine == "transformers" and h.device == "cpu" and h.model.endswith("ckpt")
    assert h.queue_depth == 0 and h.max_seen_batch >= 1


def test_health_set_variable_and_sample_over_the_wire(worker: Worker) -> None:
    engine = WorkerEngine(worker.url)
    try:
        h = engine.health()
        assert h.protocol == proto.PROTOCOL_VERSION and h.max_message_bytes == proto.DEFAULT_MAX_MESSAGE_BYTES
        state = engine.start(Program(source=FACT, entry="fact(3)"))
        assert state.event == "call" and state.locals == {"n": "3"}
        changed = engine.set_variable("n", "5")
        assert changed.locals == {"n": "5"} and engine.state == changed
        with pytest.raises(WorkerError) as info:
            engine.set_variable("nope", "1")
        assert info.value.code == "engine_error" and "nope" in str(info.value)
        samples = engine.sample(Action(kind="step_into"), 2)
        assert len(samples) == 2 and engine.state == changed
        with pytest.raises(WorkerError) as info:
            engine.sample(Action(kind="inv_step_over"), proto.MAX_SAMPLES + 1)
        assert info.value.code == "bad_request"
    finally:
        engine.close()


def test_goto_over_the_wire_equals_the_engine_in_process(checkpoint: Path, loaded: LoadedModel) -> None:
    program = Program(source=FACT, entry="fact(3)")
    greedy = Worker(checkpoint, env={SEARCH_ENV: "0"})  # the test model's searched step_into exits the program
    remote, local = WorkerEngine(greedy.url), NeuralEngine(loaded)
    local.search_branches = 0
    try:
        for engine in (remote, local):
            engine.start(program)
            engine.step(Action(kind="step_into"))
        if local.state.event != "line":
            pytest.skip("the test model did not predict a line event here")
        target = 4
        assert remote.goto(target) == local.goto(target) and remote.state.line == target
        assert remote.step(Action(kind="step_into")) == local.step(Action(kind="step_into"))
        with pytest.raises(WorkerError) as info:
            remote.goto(10_000)
        assert info.value.code in ("engine_error", "bad_request")
    finally:
        remote.close()
        greedy.stop()


def test_malformed_messages_get_typed_errors_and_the_connection_stays(worker: Worker) -> None:
    with connect(worker.url, proxy=None) as ws:
        bad = raw(ws, "{not json")
        assert bad == {"id": None, "ok": False, "error": {"code": "bad_request", "message": bad["error"]["message"]}}
        assert "malformed JSON" in bad["error"]["message"]
        assert raw(ws, {"id": 5, "op": "launch_missiles"})["error"]["code"] == "bad_request"
        assert raw(ws, {"id": 6, "op": "step", "session": 3})["id"] == 6
        assert raw(ws, {"id": 7, "op": "health", "extra": 1})["error"]["code"] == "bad_request"
        assert raw(ws, b"\x00\x01")["error"]["code"] == "bad_request"
        assert raw(ws, "[1, 2]")["error"]["code"] == "bad_request"
        assert raw(ws, {"id": 8, "op": "open", "program": {"source": "def f(:\n"}})["error"]["code"] == "bad_request"
        assert raw(ws, {"id": 9, "op": "open", "program": {"source": "x = 1\n"}, "at": "exit"})["error"]["code"] == "engine_error"
        bad_state = {"event": "line", "line": 1}  # no source, no stack: the trace format cannot carry it
        answer = raw(ws, {"id": 10, "op": "open", "program": {"source": "x = 1\n"}, "at": "state", "history": [bad_state]})
        assert answer["error"]["code"] == "engine_error"
        ok = raw(ws, {"id": 11, "op": "health"})
        assert ok["ok"] and ok["id"] == 11 and ok["health"]["engine"] == "transformers"


def test_unknown_and_foreign_session_ids(worker: Worker) -> None:
    step = {"op": "step", "action": {"kind": "step_into"}}
    with connect(worker.url, proxy=None) as a, connect(worker.url, proxy=None) as b:
        answer = raw(a, {"id": 1, **step, "session": "0" * 32})
        assert answer["error"]["code"] == "unknown_session"
        opened = raw(a, {"id": 2, "op": "open", "program": {"source": FACT, "entry": "fact(2)"}})
        assert opened["ok"] and opened["state"]["locals"] == {"n": "2"}
        stolen = raw(b, {"id": 1, **step, "session": opened["session"]})
        assert stolen["error"]["code"] == "unknown_session"  # sessions belong to their connection
        mine = raw(a, {"id": 3, **step, "session": opened["session"]})
        assert mine["ok"] and mine["session"] == opened["session"]
        assert raw(a, {"id": 4, "op": "close", "session": opened["session"]})["ok"]
        assert raw(a, {"id": 5, **step, "session": opened["session"]})["error"]["code"] == "unknown_session"


def test_client_disconnecting_mid_request(worker: Worker) -> None:
    before = health(worker.url).sessions
    ws = connect(worker.url, proxy=None, legacy=True)
    opened = raw(ws, {"id": 1, "op": "open", "program": {"source": COUNT, "entry": "count('aaaa', 'a')"}})
    for i in range(3):  # requests in flight when the connection goes
        ws.send(json.dumps({"id": 2 + i, "op": "step", "session": opened["session"], "action": {"kind": "step_into"}}))
    ws.close()
    deadline = time.monotonic() + 30
    while health(worker.url).sessions > before and time.monotonic() < deadline:
        time.sleep(0.1)
    assert health(worker.url).sessions == before
    engine = WorkerEngine(worker.url)
    try:
        assert engine.start(Program(source=COUNT, entry="count('ab', 'b')")).locals == {"s": "'ab'", "t": "'b'"}
        engine.step(Action(kind="step_into"))
    finally:
        engine.close()


def test_token_size_limit_and_idle_eviction(checkpoint: Path) -> None:
    w = Worker(checkpoint, "--token", "s3cret", "--max-message-bytes", "65536", "--idle-timeout", "1")
    try:
        for token in (None, "wrong"):
            with pytest.raises(WorkerError) as info:
                WorkerEngine(w.url, token=token).start(Program(source=FACT, entry="fact(2)"))
            assert info.value.code == "unauthorized" and "s3cret" not in str(info.value)
        assert health(w.url, token="s3cret").sessions == 0
        assert health(f"ws://:s3cret@127.0.0.1:{w.port}").engine == "transformers"

        # An oversized message: the client refuses to send it; a raw one makes the worker close (1009).
        engine = WorkerEngine(w.url, token="s3cret", max_message_bytes=1 << 20)
        huge = Program(source="x = 1\n" + "# " + "a" * 100_000 + "\n", entry=None)
        with pytest.raises(WorkerError) as info:
            engine.start(huge)
        assert info.value.code == "too_large"
        with pytest.raises(WorkerError) as info:
            WorkerEngine(w.url, token="s3cret").start(huge)
        assert info.value.code == "too_large"
        with connect(w.url, additional_headers={"Authorization": "Bearer s3cret"}, proxy=None) as ws:
            ws.send("x" * 70_000)
            with pytest.raises(ConnectionClosed) as closed:
                ws.recv(timeout=30)
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009

        # Idle eviction: a typed error on the raw protocol; the WorkerEngine re-opens by itself.
        with connect(w.url, additional_headers={"Authorization": "Bearer s3cret"}, proxy=None) as ws:
            opened = raw(ws, {"id": 1, "op": "open", "program": {"source": FACT, "entry": "fact(2)"}})
            time.sleep(2.5)
            late = raw(ws, {"id": 2, "op": "step", "session": opened["session"], "action": {"kind": "step_into"}})
            assert late["error"]["code"] == "session_expired" and "without requests" in late["error"]["message"]
        engine = WorkerEngine(w.url, token="s3cret")
        start = engine.start(Program(source=FACT, entry="fact(2)"))
        time.sleep(2.5)
        after = engine.step(Action(kind="step_into"))
        assert after.error is None and after != start
        assert any("closed the session" in n for n in engine.drain_notices())
        engine.close()
        assert health(w.url, token="s3cret").engine == "transformers"  # still serving
    finally:
        w.stop()


def test_non_loopback_bind_needs_a_token(checkpoint: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    env.pop("NDB_WORKER_TOKEN", None)
    result = subprocess.run([sys.executable, "-m", "model_backend.worker", "worker", "--host", "0.0.0.0",
                             "--port", "0", "--model", str(checkpoint)], capture_output=True, text=True,
                            timeout=120, cwd=str(REPO), env=env)
    assert result.returncode == 2 and "token" in result.stderr


def test_killed_worker_then_restarted(checkpoint: Path, loaded: LoadedModel) -> None:
    port = free_port()
    w = Worker(checkpoint, port=port)
    program = programs()[1]
    engine = WorkerEngine(w.url, timeout=60)
    try:
        engine.start(program)
        engine.step(Action(kind="step_into"))
        shown = engine.state
        w.kill()
        with pytest.raises(WorkerUnavailable) as info:
            engine.step(Action(kind="step_into"))
        assert "next action reconnects" in str(info.value)
        assert engine.state == shown  # still inspectable
        with pytest.raises(WorkerUnavailable):
            engine.step(Action(kind="step_over"))  # still down: same answer, same state
        assert engine.state == shown
        w = Worker(checkpoint, port=port)
        after = engine.step(Action(kind="step_into"))
        # the restarted worker re-opened the session at the state shown, then stepped from it
        reference = NeuralEngine(loaded)
        reference.resume(program, list(engine.history[:-1]) or [shown], engine.inverse)
        expected = reference.step(Action(kind="step_into"))
        # the worker's batched pass and the in-process lean pass round apart in the last bits
        assert after.model_copy(update={"confidence": None}) == expected.model_copy(update={"confidence": None})
        assert after.confidence is not None and expected.confidence is not None
        assert all(abs(after.confidence[k] - expected.confidence[k]) < 1e-4 for k in expected.confidence)
        assert any("reconnected" in n for n in engine.drain_notices())
        # A worker restarted while the user was idle: the next action just works (one notice).
        w.kill()
        w = Worker(checkpoint, port=port)
        again = engine.step(Action(kind="step_over"))
        assert again.error is None or again.event == after.event
        assert any("reconnected" in n for n in engine.drain_notices())
    finally:
        engine.close()
        w.stop()


@contextlib.contextmanager
def in_process_worker(model: str | None, request_timeout_s: float = 300.0) -> Iterator[Any]:
    """A WorkerServer on loopback in this process (its event loop on a thread); yields the server."""
    from model_backend.worker.server import TransformersBackend, WorkerConfig, WorkerServer

    backend = TransformersBackend(model)
    server = WorkerServer(backend, WorkerConfig(port=0, request_timeout_s=request_timeout_s))
    loop = asyncio.new_event_loop()
    stop = loop.create_future()
    ready = threading.Event()
    thread = threading.Thread(target=lambda: loop.run_until_complete(server.serve(lambda _: ready.set(), stop)))
    thread.start()
    try:
        assert ready.wait(60)
        yield server
    finally:
        loop.call_soon_threadsafe(stop.set_result, None)
        thread.join(30)
        backend.close()


def test_request_timeout_is_typed_and_the_session_reopens(checkpoint: Path, loaded: LoadedModel) -> None:
    """In process (a timeout this short would fail every request of a subprocess worker too)."""
    with in_process_worker(str(checkpoint), request_timeout_s=30) as server:
        engine = WorkerEngine(f"ws://127.0.0.1:{server.port}")
        engine.start(programs()[0])
        server.config.request_timeout_s = 1e-6
        with pytest.raises(WorkerError) as info:
            engine.step(Action(kind="step_into"))
        assert info.value.code == "timeout"
        server.config.request_timeout_s = 30
        assert engine.step(Action(kind="step_into")).error is None  # re-opened at the current state
        assert server.health().sessions == 1
        engine.close()


def test_the_follow_steps_reach_the_workers_session(checkpoint: Path) -> None:
    """The launch's followSteps (Engine.follow) travels with each step to the worker's session."""
    with in_process_worker(str(checkpoint)) as server:
        engine = WorkerEngine(f"ws://127.0.0.1:{server.port}")
        engine.start(programs()[0])
        (session,) = server.sessions.values()
        engine.follow(7)
        engine.step(Action(kind="step_into"))
        assert session.engine.follow_steps == 7
        engine.follow(0)
        engine.step(Action(kind="step_into"))
        assert session.engine.follow_steps == 0
        engine.close()


def test_an_interrupt_stops_a_followed_continue_on_the_worker() -> None:
    """A pause in the adapter sets the engine's interrupt; over a worker it is sent as an `interrupt` while
    the step's answer is awaited, and the worker's session stops at the next state. The shipped model, in
    process, walking a loop it cannot finish soon (followed continue, 128 single steps, then a jump)."""
    with in_process_worker(None) as server:
        engine = WorkerEngine(f"ws://127.0.0.1:{server.port}")
        engine.interrupt = threading.Event()
        engine.start(Program(source=SPIN, path="spin.py", entry="spin(1000)"))
        pause = threading.Timer(1.0, engine.interrupt.set)
        pause.start()
        began = time.monotonic()
        state = engine.step(Action(kind="continue"))
        took = time.monotonic() - began
        pause.join()
        assert state.exit is None and state.function == "spin" and state.error is None, state
        assert took < 10, took  # 128 single steps take about 20 s on this CPU; the pause came after 1 s
        engine.interrupt.clear()  # as the adapter does before the next command
        after = engine.step(Action(kind="step_into"))  # the session goes on from where it stopped
        assert after.error is None and after.exit is None
        engine.close()


def test_a_breakpoint_set_during_a_followed_continue_reaches_the_worker() -> None:
    """The adapter sets `live_breakpoints` for the length of a step; over a worker, lines that change
    while the step's answer is awaited are sent as `breakpoints`, and the worker's step stops on them."""
    with in_process_worker(None) as server:
        engine = WorkerEngine(f"ws://127.0.0.1:{server.port}")
        engine.start(Program(source=SPIN, path="spin.py", entry="spin(1000)"))
        lines: frozenset[int] = frozenset()
        engine.live_breakpoints = lambda: lines

        def set_one() -> None:
            nonlocal lines
            lines = frozenset({4})  # the loop's body

        setter = threading.Timer(1.0, set_one)
        setter.start()
        began = time.monotonic()
        state = engine.step(Action(kind="continue"))  # started with no breakpoint
        took = time.monotonic() - began
        setter.join()
        assert state.event == "line" and state.line == 4 and state.function == "spin", state
        assert took < 10, took  # without it: 128 single steps (about 20 s), then a jump to the end
        engine.close()


# ---- the debug adapter over a worker ----------------------------------------------------------------


def test_adapter_keeps_the_session_when_the_worker_dies(checkpoint: Path, tmp_path: Path) -> None:
    from tests.support.dap_client import stdio_session

    port = free_port()
    greedy = {SEARCH_ENV: "0"}  # the test model's searched stepIn would end the program
    w = Worker(checkpoint, "--token", "tok", port=port, env=greedy)
    path = tmp_path / "fact.py"
    path.write_text(FACT + "\nprint(fact(3))\n")
    try:
        with stdio_session() as session:
            with session.launch(path, engine="neural", worker=w.url, token="tok", stopOnEntry=True):
                pass
            first = session.wait_for_stop("entry")
            assert first.frames[0]["line"] == 1
            w.kill()
            session.command("stepIn")
            stop = session.wait_for_stop()
            assert stop.frames[0]["line"] == first.frames[0]["line"]  # the state shown stays
            assert "model worker" in session.output("stderr")
            assert session.get_variables() is not None  # inspectable
            w = Worker(checkpoint, "--token", "tok", port=port, env=greedy)
            session.command("stepIn")
            session.wait_for_stop()
            assert "reconnected" in session.output("console")
    finally:
        w.stop()


def test_bench_names_the_slowest_session_and_step(worker: Worker) -> None:
    """`ndb bench worker` against a running worker: every step answered, and the report says which
    session held the run and which step took longest."""
    from model_backend.worker.bench import format_report, run_bench

    figures = run_bench(url=worker.url, sessions=3, steps=4, seed=2)
    assert figures["answered"] == 12 and figures["errors"] == 0, figures["error_samples"]
    slow, step = figures["slowest_session"], figures["longest_step"]
    assert slow["session"] in (0, 1, 2) and slow["steps"] == 4
    assert step["ms"] == pytest.approx(figures["p99_ms"])  # of 12 steps, the 99th percentile is the longest
    assert slow["step_s"] >= figures["mean_ms"] * 4 / 1000 - 1e-9  # the slowest has at least the mean
    assert f"slowest session: #{slow['session']}" in format_report(figures)
