"""The adapter never dies on input: random and truncated frames, wrong argument types, unknown commands,
requests out of order, and a flood of 10,000 requests. Every request is answered."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dap_server.protocol import KNOWN_COMMANDS, FrameReader, FramingError, encode
from dap_server.session import DAPSession
from tests.support.dap_client import DapClient, frame, stdio_session

pytestmark = pytest.mark.timeout(240)

PROGRAM = """\
def add(a, b):
    total = a + b
    return total


items = [1, 2, 3]
result = 0
for item in items:
    result = add(result, item)
print(result)
"""


def decode_all(data: bytes, chunk: int) -> list[dict[str, Any] | FramingError]:
    reader = FrameReader()
    out: list[dict[str, Any] | FramingError] = []
    for i in range(0, len(data), chunk):
        reader.feed(data[i : i + chunk])
        out.extend(reader.messages())
    return out


# ---- framing, in process ------------------------------------------------------------------------
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.dictionaries(st.text(max_size=8), json_values, max_size=5), max_size=6), st.integers(1, 64))
def test_valid_frames_decode_under_any_chunking(messages: list[dict[str, Any]], chunk: int) -> None:
    data = b"".join(encode(m) for m in messages)
    assert decode_all(data, chunk) == [json.loads(json.dumps(m)) for m in messages]


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=400), st.integers(1, 50))
def test_random_bytes_never_raise_and_resync(garbage: bytes, chunk: int) -> None:
    good = {"seq": 7, "type": "request", "command": "threads"}
    # Garbage, then a blank line, then a valid frame: the valid frame is always recovered unless the garbage
    # itself declared a body that swallows it (then it is recovered from inside that body).
    data = garbage + b"\r\n\r\n" + encode(good) + encode(good)
    decoded = decode_all(data, chunk)
    assert all(isinstance(d, (dict, FramingError)) for d in decoded)
    assert decoded.count(good) >= 1


@settings(max_examples=200, deadline=None)
@given(st.integers(0, 60), st.integers(1, 30))
def test_truncated_frame_is_reported_and_the_next_one_survives(cut: int, chunk: int) -> None:
    first = encode({"seq": 1, "type": "request", "command": "initialize", "arguments": {"adapterID": "x"}})
    second = {"seq": 2, "type": "request", "command": "threads"}
    truncated = first[: min(cut + 20, len(first) - 1)]  # header intact, body cut short
    decoded = decode_all(truncated + encode(second), chunk)
    assert second in decoded
    assert any(isinstance(d, FramingError) for d in decoded)


def test_framing_error_cases() -> None:
    cases = [
        b"Content-Length: abc\r\n\r\n{}",
        b"Content-Length: -5\r\n\r\n",
        b"Content-Length: 99999999999\r\n\r\n",
        b"Content-Type: json\r\n\r\n{}",
        b"Content-Length: 2\r\n\r\n[]",
        b"Content-Length: 4\r\n\r\n\xff\xfe\x00\x01",
        b"Content-Length: 3\r\n\r\n{{{",
        b"not a header at all\r\n\r\n",
    ]
    ok = encode({"seq": 1, "type": "request", "command": "threads"})
    for case in cases:
        decoded = decode_all(case + ok, 7)
        assert isinstance(decoded[0], FramingError), case
        assert decoded[-1] == {"seq": 1, "type": "request", "command": "threads"}, (case, decoded)


# ---- the session, in process ---------------------------------------------------------------------
class Recorder:
    def __init__(self) -> None:
        self.sent: list[dict[str, Any]] = []

    def __call__(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def responses_to(self, seq: int) -> list[dict[str, Any]]:
        return [m for m in self.sent if m.get("type") == "response" and m.get("request_seq") == seq]


commands = st.sampled_from(sorted(KNOWN_COMMANDS) + ["bogus", "", "Next", "launch "])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(commands, json_values, st.booleans()), max_size=8))
def test_any_request_sequence_is_answered_once(requests: list[tuple[str, Any, bool]]) -> None:
    """Wrong argument types, unknown commands, requests before initialize: one response each, no raise."""
    recorder = Recorder()
    session = DAPSession(recorder)
    for i, (command, arguments, initialize_first) in enumerate(requests):
        seq = 2 * i + 1
        if initialize_first and not session.initialized:
            session.handle_raw({"seq": seq, "type": "request", "command": "initialize",
                                "arguments": {"adapterID": "fuzz"}})
            assert len(recorder.responses_to(seq)) == 1
        seq += 1
        if command == "launch":
            arguments = {"program": "/nonexistent/fuzz.py", "engine": "oracle"} if initialize_first else arguments
        session.handle_raw({"seq": seq, "type": "request", "command": command, "arguments": arguments})
        answers = recorder.responses_to(seq)
        assert len(answers) == 1, (command, arguments, answers)
        if not answers[0]["success"]:
            assert answers[0]["message"]
    session.close()


@settings(max_examples=200, deadline=None)
@given(json_values)
def test_non_request_messages_are_answered_or_ignored(message: Any) -> None:
    recorder = Recorder()
    session = DAPSession(recorder)
    item = message if isinstance(message, dict) else {"payload": message}
    session.handle_raw(item)
    assert len(recorder.sent) <= 1
    session.close()


def test_requests_before_initialize_get_readable_errors() -> None:
    recorder = Recorder()
    session = DAPSession(recorder)
    early = [("launch", {"program": "x.py"}), ("threads", None), ("next", {"threadId": 1}),
             ("setBreakpoints", {"source": {"path": "x.py"}, "breakpoints": [{"line": 1}]}),
             ("configurationDone", None)]
    for seq, (command, arguments) in enumerate(early, 1):
        session.handle_raw({"seq": seq, "type": "request", "command": command, "arguments": arguments})
        (answer,) = recorder.responses_to(seq)
        assert answer["success"] is False and "initialize" in answer["message"]
    session.handle_raw({"seq": 10, "type": "request", "command": "initialize", "arguments": {"adapterID": "x"}})
    assert recorder.responses_to(10)[0]["success"] is True
    session.handle_raw({"seq": 11, "type": "request", "command": "initialize", "arguments": {"adapterID": "x"}})
    assert "already" in recorder.responses_to(11)[0]["message"]
    session.handle_raw({"seq": 12, "type": "request", "command": "next", "arguments": {"threadId": "one"}})
    assert "threadId" in recorder.responses_to(12)[0]["message"]
    session.handle_raw({"seq": 13, "type": "request", "command": "stackTrace", "arguments": {"threadId": 1}})
    assert "launch" in recorder.responses_to(13)[0]["message"]
    session.handle_raw({"seq": 14, "type": "request", "command": "attach", "arguments": {}})
    assert "not supported" in recorder.responses_to(14)[0]["message"]
    session.close()


def test_engine_failures_become_error_responses(program: Path) -> None:
    class Exploding(Exception):
        pass

    def factory(name: str, model: str | None, worker: str | None) -> Any:
        from model_backend.engine.oracle import OracleEngine

        engine = OracleEngine()
        real_step = engine.step
        calls = {"n": 0}

        def step(action: Any, breakpoints: frozenset[int] = frozenset()) -> Any:
            calls["n"] += 1
            if calls["n"] % 2 == 0:
                raise Exploding("engine fell over")
            return real_step(action, breakpoints)

        engine.step = step  # type: ignore[method-assign]
        return engine

    recorder = Recorder()
    session = DAPSession(recorder, engine_factory=factory)
    seq = 0

    def send(command: str, arguments: Any = None) -> list[dict[str, Any]]:
        nonlocal seq
        seq += 1
        start = len(recorder.sent)
        session.handle_raw({"seq": seq, "type": "request", "command": command, "arguments": arguments or {}})
        return recorder.sent[start:]

    send("initialize", {"adapterID": "x"})
    send("launch", {"program": str(program), "engine": "oracle", "stopOnEntry": True})
    send("configurationDone")
    for _ in range(6):
        out = send("next", {"threadId": 1})
        assert out[0]["type"] == "response" and out[0]["success"] is True
        assert any(m.get("event") == "stopped" for m in out)  # either moved, or re-shown with the error
    assert any("engine" in m.get("body", {}).get("output", "") for m in recorder.sent if m.get("event") == "output")
    session.close()


# ---- the adapter process ---------------------------------------------------------------------------
def test_adapter_process_survives_garbage_and_truncation(program: Path) -> None:
    with stdio_session() as s:
        client = s.client
        rng = random.Random(1234)
        for _ in range(30):
            client.send_bytes(bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))))
        client.send_bytes(b"Content-Length: 10\r\n\r\n{\"seq\": 1")  # truncated body: swallows what follows
        client.send_bytes(frame(b"{not json}"))
        client.send_bytes(frame(b"[1, 2, 3]"))
        client.send_bytes(b"Content-Length: nope\r\n\r\n")
        client.send_bytes(b"\r\n\r\n")
        # After all that, real requests are answered.
        assert client.request("threads")["body"]["threads"][0]["id"] == 1
        with s.launch(program, stopOnEntry=True):
            client.send_bytes(b"\x00\x01garbage in the configuration phase")
            s.set_breakpoints([9])
        s.wait_for_stop("entry")
        wrong = client.request("setBreakpoints", {"source": "not an object", "breakpoints": 5},
                               expect_success=False)
        assert "invalid arguments" in wrong["message"]
        assert client.request("evaluate", {"expression": 42}, expect_success=False)["message"]
        assert client.request("frobnicate", {}, expect_success=False)["message"] == "unknown command 'frobnicate'"
        stop = s.step("continue", "breakpoint")
        assert stop.line == 9
        errors = [m for m in client.received() if m.get("type") == "response" and not m["success"]
                  and "malformed" in m.get("message", "")]
        assert errors  # the garbage was answered with error responses


def _flood(client: DapClient, requests: list[tuple[str, Any]], timeout: float) -> list[dict[str, Any]]:
    first = client._seq + 1
    payload = bytearray()
    for command, arguments in requests:
        client._seq += 1
        message = {"seq": client._seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        payload += frame(message)
    last = client._seq
    start = time.monotonic()
    client.send_bytes(bytes(payload))
    # Not "until the last one is answered": while a step runs, `threads` and `setBreakpoints` are answered
    # at once, ahead of requests queued before them (DAP lets answers come in any order).
    pending = set(range(first, last + 1))

    def all_answered(message: dict[str, Any]) -> bool:
        if message.get("type") == "response":
            pending.discard(message.get("request_seq", -1))
        return not pending

    client.wait_for(all_answered, timeout=timeout, what="every flood response")
    elapsed = time.monotonic() - start
    answered = [m for m in client.received() if m.get("type") == "response" and first <= m["request_seq"] <= last]
    assert sorted(m["request_seq"] for m in answered) == list(range(first, last + 1))
    print(f"flood of {len(requests)} requests answered in {elapsed:.2f}s")
    return answered


def test_flood_of_10000_requests_before_and_after_launch(program: Path) -> None:
    with stdio_session() as s:
        rng = random.Random(7)
        mixed: list[tuple[str, Any]] = []
        for _ in range(10_000):
            kind = rng.randrange(6)
            if kind == 0:
                mixed.append(("threads", None))
            elif kind == 1:
                mixed.append(("stackTrace", {"threadId": 1}))
            elif kind == 2:
                mixed.append(("nonsense", {"x": rng.random()}))
            elif kind == 3:
                mixed.append(("evaluate", {"expression": "1 + 1"}))
            elif kind == 4:
                mixed.append(("variables", {"variablesReference": "wrong type"}))
            else:
                mixed.append(("setBreakpoints", {"source": {"path": str(program)}, "breakpoints": [{"line": 3}]}))
        _flood(s.client, mixed, timeout=180)
        with s.launch(program, stopOnEntry=True):
            s.set_breakpoints([2])
        s.wait_for_stop("entry")
        # A flood while stopped: stepping forward and back, and inspecting, 10,000 requests.
        stepping: list[tuple[str, Any]] = []
        for i in range(10_000):
            choice = i % 8
            if choice in (0, 1):
                stepping.append(("next", {"threadId": 1}))
            elif choice in (2, 3):
                stepping.append(("stepBack", {"threadId": 1}))
            elif choice == 4:
                stepping.append(("stackTrace", {"threadId": 1}))
            elif choice == 5:
                stepping.append(("scopes", {"frameId": 1}))
            elif choice == 6:
                stepping.append(("evaluate", {"expression": "len(str(items))" if i % 3 else "missing"}))
            else:
                stepping.append(("threads", None))
        answered = _flood(s.client, stepping, timeout=200)
        assert any(m["success"] for m in answered if m["command"] == "next")
        # Still alive and coherent.
        assert s.client.request("threads")["body"]["threads"][0]["id"] == 1
        assert s.client.request("stackTrace", {"threadId": 1})["body"]["totalFrames"] >= 1
