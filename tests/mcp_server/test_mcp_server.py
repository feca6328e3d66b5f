"""`ndb mcp` end to end: the real server process, driven by the MCP SDK's own client over stdio and
streamable HTTP. The oracle engine serves most tests (fast); one test uses the shipped model."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CallToolResult, TextContent

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, "-m", "dap_server", "mcp"]
TOOLS = {"start", "step", "continue", "breakpoints", "state", "evaluate", "set_variable", "predict_return",
         "infer_inputs", "compare", "end"}
# line 4 divides by each element: a 0 in the list fails
SOURCE = """def f(xs):
    total = 0
    for x in xs:
        total += 10 // x
    return total


def double(n):
    return n * 2
"""
PRINTS = "def p(n):\n    for i in range(n):\n        print(i)\n    return n\n"


@asynccontextmanager
async def over_stdio(*options: str) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=SERVER[0], args=[*SERVER[1:], *options], cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@asynccontextmanager
async def over_http(url: str, token: str | None) -> AsyncIterator[ClientSession]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300)) as client, \
            streamable_http_client(url, http_client=client) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def run(test: Callable[[], Awaitable[None]]) -> None:
    anyio.run(test)


def text(result: CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], TextContent)
    return result.content[0].text


async def call(client: ClientSession, tool: str, /, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, text(result)
    return text(result)


async def refused(client: ClientSession, tool: str, /, **arguments: Any) -> str:
    result = await client.call_tool(tool, arguments)
    assert result.is_error, text(result)
    return text(result)


async def start(client: ClientSession, /, **arguments: Any) -> tuple[str, str]:
    """(session id, the first state's text)."""
    answer = await call(client, "start", **arguments)
    head, _, rest = answer.partition("\n")
    assert head.startswith("session ")
    return head.split()[1], rest


def test_every_session_tool_over_stdio_on_the_oracle() -> None:
    async def body() -> None:
        async with over_stdio() as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            assert set(tools) == TOOLS
            assert tools["step"].input_schema["properties"]["action"]["enum"] == [
                "step_into", "step_over", "step_return", "inv_step_into", "inv_step_over", "inv_step_call"]
            assert tools["start"].input_schema["properties"]["engine"]["enum"] == ["neural", "oracle"]

            sid, first = await start(client, source=SOURCE, entry="f([1, 0])", engine="oracle", breakpoints=[4])
            assert first.startswith("call of f at line 1") and "xs = [1, 0]" in first
            stop = await call(client, "continue", session=sid)
            assert "line 4 in f: total += 10 // x" in stop and "x = 1" in stop
            assert "total = 0" in await call(client, "state", session=sid)
            assert await call(client, "evaluate", session=sid, expression="total + x * 10") == "10"
            ahead = await call(client, "step", session=sid, action="step_over", count=2)
            assert ahead.startswith("step_over x2") and "line 4 in f" in ahead and "x = 0" in ahead
            back = await call(client, "step", session=sid, action="inv_step_over", count=2)
            assert back.startswith("inv_step_over x2") and "x = 1" in back and "total = 0" in back
            assert "x = 5" in await call(client, "set_variable", session=sid, name="x", value="x + 4")
            assert await call(client, "breakpoints", session=sid, lines=[5]) == "breakpoints: 5"
            end = await call(client, "continue", session=sid)  # 10 // 5, then 10 // 0
            assert "exited with an error: ZeroDivisionError" in end

            program = (await client.read_resource(f"ndb://session/{sid}/program")).contents[0]
            assert " * 5 |     return total" in getattr(program, "text", "")
            trajectory = getattr((await client.read_resource(f"ndb://session/{sid}/trajectory")).contents[0], "text", "")
            assert trajectory.startswith("#0 start -> call of f") and "set x = 5" in trajectory
            assert trajectory.splitlines()[-1].startswith("#7 continue -> exited with an error")

            assert "oracle: its states are the real ones" in await refused(client, "compare", session=sid)
            assert (await call(client, "end", session=sid)).startswith(f"ended session {sid} after 7 steps")
            assert "no session" in await refused(client, "state", session=sid)

            printing, _ = await start(client, source=PRINTS, entry="p(3)", engine="oracle")
            await call(client, "step", session=printing, count=5)
            assert (await call(client, "state", session=printing)).endswith("output so far: '0\\n1\\n'")
            await call(client, "step", session=printing, action="inv_step_over", count=2)
            assert (await call(client, "state", session=printing)).endswith("output so far: '0\\n'")

            raised = await call(client, "predict_return", source=SOURCE, call="f([1, 0])", engine="oracle")
            assert raised.startswith("f([1, 0]) raises ZeroDivisionError")
            assert (await call(client, "predict_return", source=SOURCE, call="f([1, 2])", engine="oracle")
                    ).startswith("f([1, 2]) returns 15")

    run(body)


def test_bad_input_unknown_sessions_and_limits_are_refused_cleanly(tmp_path: Path) -> None:
    async def body() -> None:
        async with over_stdio("--max-program-chars", "400", "--max-sessions", "2") as client:
            sid, _ = await start(client, source=SOURCE, entry="f([2])", engine="oracle")
            assert "step_into" in await refused(client, "step", session=sid, action="jump")
            assert "count" in await refused(client, "step", session=sid, count=0)
            assert "session" in await refused(client, "step")
            assert "no session 'nope'" in await refused(client, "step", session="nope")
            assert "no session" in await refused(client, "end", session="nope")
            assert "exactly one" in await refused(client, "start", source=SOURCE, path=str(tmp_path / "a.py"))
            assert "exactly one" in await refused(client, "start", entry="f([1])")
            assert "syntax error" in await refused(client, "start", source="def f(:\n", entry="f()")
            assert "not a call" in await refused(client, "start", source=SOURCE, entry="f")
            assert "no such file" in await refused(client, "start", path=str(tmp_path / "missing.py"))
            assert "at most 400" in await refused(client, "start", source="x = 1\n" * 100, engine="oracle")
            assert "no code on line(s) [6]" in await refused(client, "breakpoints", session=sid, lines=[4, 6])
            assert "syntax error" in await refused(client, "evaluate", session=sid, expression="xs[")
            assert "nowhere" in await refused(client, "evaluate", session=sid, expression="nowhere + 1")
            assert "no variable named 'y'" in await refused(client, "set_variable", session=sid, name="y", value="1")
            assert "no top-level function 'g'" in await refused(client, "infer_inputs", source=SOURCE, function="g",
                                                                  returned="1")
            assert "literal" in await refused(client, "infer_inputs", source=SOURCE, function="f", returned="[1,")
            assert "Unknown tool" in await refused(client, "jump", session=sid)
            with pytest.raises(MCPError, match="no session 'nope'"):
                await client.read_resource("ndb://session/nope/program")

            other, _ = await start(client, source=SOURCE, entry="f([3])", engine="oracle")
            assert "2 sessions are open" in await refused(client, "start", source=SOURCE, entry="f([4])", engine="oracle")
            await call(client, "end", session=other)
            await start(client, source=SOURCE, entry="f([4])", engine="oracle")

    run(body)


def test_an_idle_session_expires() -> None:
    async def body() -> None:
        async with over_stdio("--idle-timeout", "1") as client:
            sid, _ = await start(client, source=SOURCE, entry="f([2])", engine="oracle")
            assert "line 2 in f" in await call(client, "step", session=sid)
            await anyio.sleep(1.5)
            assert f"no session '{sid}' (ended, expired after 1 s idle" in await refused(client, "state", session=sid)

    run(body)


@pytest.fixture
def http_server() -> Any:
    process = subprocess.Popen([*SERVER, "--http", "--port", "0", "--token", "s3cret"], cwd=str(ROOT),
                               stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("ndb mcp: serving http://127.0.0.1:"), line
        yield line.split()[-1]
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_http_refuses_a_request_without_the_token(http_server: str) -> None:
    async def body() -> None:
        async with httpx2.AsyncClient() as raw:
            hello = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            assert (await raw.post(http_server, json=hello)).status_code == 401
            wrong = {"Authorization": "Bearer s3cre"}
            assert (await raw.post(http_server, json=hello, headers=wrong)).status_code == 401
        with pytest.raises(BaseExceptionGroup) as caught:  # the SDK's client: initialize fails
            async with over_http(http_server, token="wrong"):
                pass
        assert "Server returned an error response" in repr(caught.value)

    run(body)


def test_two_sessions_interleaved_over_http(http_server: str) -> None:
    async def body() -> None:
        async with over_http(http_server, "s3cret") as one, over_http(http_server, "s3cret") as two:
            a, _ = await start(one, source=SOURCE, entry="f([1, 2])", engine="oracle")
            b, _ = await start(two, source=SOURCE, entry="double(7)", engine="oracle")
            assert a != b
            assert "line 2 in f" in await call(one, "step", session=a)
            assert "line 9 in double" in await call(two, "step", session=b)
            results: dict[str, str] = {}

            async def walk(client: ClientSession, sid: str, count: int) -> None:
                results[sid] = await call(client, "step", session=sid, action="step_into", count=count)

            async with anyio.create_task_group() as group:  # both under way at once
                group.start_soon(walk, one, a, 4)
                group.start_soon(walk, two, b, 1)
            assert "line 4 in f" in results[a] and "total = 10" in results[a] and "x = 2" in results[a]
            assert "return from double at line 9, value 14" in results[b]
            assert "n = 7" in await call(one, "state", session=b)  # ids name sessions server-wide
            back = await call(one, "step", session=a, action="inv_step_into", count=2)
            assert "x = 1" in back and "total = 0" in back
            assert "value 14" in await call(two, "state", session=b)

    run(body)


def test_http_beyond_loopback_needs_a_token() -> None:
    done = subprocess.run([*SERVER, "--http", "--host", "0.0.0.0", "--port", "0"], cwd=str(ROOT),
                          capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 2
    assert "--token" in done.stderr and "NDB_MCP_TOKEN" in done.stderr


def test_neural_session_predicts_runs_nothing_and_compares(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    writes = f"def touch(n):\n    open({str(marker)!r}, 'w').write('x')\n    return n + 1\n"

    async def body() -> None:
        async with over_stdio() as client:
            sid, first = await start(client, source=SOURCE, entry="f([1, 2])")
            assert first.startswith("call of f at line 1")
            ahead = await call(client, "step", session=sid, count=3)
            assert "line 4 in f" in ahead and "confidence (lowest):" in ahead
            assert "runs no code" in await refused(client, "set_variable", session=sid, name="x", value="abs(-1) + g()")
            compared = await call(client, "compare", session=sid, steps=1)
            assert compared.splitlines()[1].startswith("now: agree: line 4 in f")
            assert (await call(client, "predict_return", source=SOURCE, call="double(21)")).startswith(
                "double(21) returns 42\n(the model's prediction: nothing ran)")
            inferred = await call(client, "infer_inputs", source=SOURCE, function="double", returned="10", k=1)
            assert inferred.splitlines()[:2] == ["1 confirmed (the model's forward run returns 10; nothing ran):",
                                                 "  double(5)"]
            await call(client, "predict_return", source=writes, call="touch(1)")
            assert not marker.exists()

    run(body)


def test_neural_sessions_over_a_model_worker() -> None:
    from tests.model_backend.worker.test_worker import Worker, health

    worker = Worker(ROOT / "model_backend" / "checkpoints" / "default")
    try:
        async def body() -> None:
            async with over_stdio("--worker", worker.url) as client:
                sid, first = await start(client, source=SOURCE, entry="f([1, 2])")
                assert first.startswith("call of f at line 1")
                assert health(worker.url).sessions >= 1  # the session lives on the worker
                ahead = await call(client, "step", session=sid, count=3)
                assert "line 4 in f" in ahead and "confidence (lowest):" in ahead
                assert (await call(client, "predict_return", source=SOURCE, call="double(21)")).startswith(
                    "double(21) returns 42")

        run(body)
        assert health(worker.url).requests >= 6  # open, 3 steps, and predict_return's open and steps
    finally:
        worker.stop()
