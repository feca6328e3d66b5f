"""The DAP port is no open door: loopback by default, a token for any other host, checked before anything
runs; frames read in linear time with a maximum size; a program that attacks its parent leaves the
server serving (docs/threat-model.md)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from dap_server.protocol import MAX_BODY_BYTES, FramingError, encode, read_messages
from dap_server.server import check_exposure, serve_tcp
from tests.support import REPO, TESTS
from tests.support.dap_client import DapClient, Session

HOSTILE = TESTS / "hostile"
TOKEN = "s3cret-token-for-tests"


@contextmanager
def server(token: str | None = None) -> Iterator[int]:
    ports: list[int] = []
    ready, stop = threading.Event(), threading.Event()

    def announce(port: int) -> None:
        ports.append(port)
        ready.set()

    thread = threading.Thread(target=serve_tcp, kwargs={"port": 0, "ready": announce, "stop": stop, "token": token},
                              daemon=True)
    thread.start()
    try:
        assert ready.wait(30)
        yield ports[0]
    finally:
        stop.set()
        thread.join(timeout=10)


def test_another_host_needs_a_token() -> None:
    for host in ("0.0.0.0", "192.0.2.1", "::"):
        with pytest.raises(ValueError, match="NDB_DAP_TOKEN"):
            check_exposure(host, None)
        check_exposure(host, TOKEN)
    check_exposure("127.0.0.1", None)
    check_exposure("localhost", None)
    with pytest.raises(ValueError, match="--token"):
        serve_tcp(host="0.0.0.0", port=0, ready=lambda port: None)


def test_ndb_dap_refuses_to_listen_beyond_loopback_without_a_token() -> None:
    done = subprocess.run([sys.executable, "-m", "dap_server.server", "--host", "0.0.0.0", "--port", "0"],
                          capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"},
                          cwd=REPO)
    assert done.returncode == 2
    assert "--token" in done.stderr and "NDB_DAP_TOKEN" in done.stderr


def test_a_wrong_or_missing_token_runs_nothing(tmp_path: Path) -> None:
    program = tmp_path / "p.py"
    marker = tmp_path / "ran"
    program.write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    with server(TOKEN) as port:
        for arguments in ({}, {"adapterToken": "wrong"}, {"adapterToken": 12}):
            client = DapClient.tcp(port)
            try:
                assert client.request("initialize", {"adapterID": "neural-debug"})["success"]
                refused = client.send("threads")
                assert not client.response(refused)["success"]
                seq = client.send("launch", {"program": str(program), "engine": "oracle", **arguments})
                answer = client.response(seq)
                assert not answer["success"] and "requires a token" in answer["message"]
            finally:
                client.close()
        assert not marker.exists()
        # the right token: the session runs as any other
        client = DapClient.tcp(port)
        session = Session(client)
        try:
            session.initialize()
            with session.launch(program, adapterToken=TOKEN, stopOnEntry=True):
                pass
            assert session.wait_for_stop("entry").line == 1
        finally:
            session.disconnect()
            client.close()


def test_a_program_that_kills_its_parent_leaves_the_server_serving(tmp_path: Path) -> None:
    with server() as port:
        for _ in range(2):
            client = DapClient.tcp(port)
            session = Session(client)
            try:
                session.initialize()
                with session.launch(HOSTILE / "pidfd_kill_parent.py", stopOnEntry=True):
                    pass
                assert session.wait_for_stop("entry").line == 1
            finally:
                session.disconnect()
                client.close()


def _decode_time(body_bytes: int) -> tuple[float, list[object]]:
    data = encode({"seq": 1, "type": "request", "command": "evaluate", "arguments": {"expression": "x" * body_bytes}})
    data += encode({"seq": 2, "type": "request", "command": "threads"})
    chunks = iter([data[i:i + 65536] for i in range(0, len(data), 65536)])
    started = time.perf_counter()
    decoded = list(read_messages(lambda: next(chunks, b"")))
    return time.perf_counter() - started, decoded


def test_reading_a_frame_is_linear_in_its_size() -> None:
    # The best of three runs of each size, so that another process on the machine does not decide it.
    small = min(_decode_time(1 << 20)[0] for _ in range(3))
    runs = [_decode_time(15 << 20) for _ in range(3)]
    large = min(elapsed for elapsed, _ in runs)
    assert [d["seq"] for d in runs[0][1] if isinstance(d, dict)] == [1, 2]
    assert large < 40 * max(small, 0.005)  # 15 times the bytes; quadratic would be 225 times the time


def test_a_frame_over_the_limit_is_refused_with_a_clear_error() -> None:
    elapsed, decoded = _decode_time(MAX_BODY_BYTES + 1)
    errors = [d for d in decoded if isinstance(d, FramingError)]
    assert len(errors) == 1 and "frame too large" in errors[0].message and str(MAX_BODY_BYTES) in errors[0].message
    assert [d["command"] for d in decoded if isinstance(d, dict)] == ["threads"]
    assert elapsed < 2.0
