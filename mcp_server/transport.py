"""The transports: stdio (what an MCP host starts), and streamable HTTP.

HTTP binds loopback unless told otherwise, and refuses to bind another address without a token: a
client can make the oracle run programs (in its sandbox) and spend the machine's time. With a token,
every HTTP request must carry `Authorization: Bearer TOKEN` (compared in constant time); others get 401
before the MCP layer sees them. The SDK's DNS-rebinding protection stays on for loopback hosts.
"""

from __future__ import annotations

import hmac
import json
from typing import Any

import anyio
from mcp.server.mcpserver import MCPServer

from model_backend.worker.protocol import is_loopback

Scope = dict[str, Any]


def check_exposure(host: str, token: str | None) -> None:
    """ValueError (saying what to do) for a non-loopback host without a token."""
    if not is_loopback(host) and not token:
        raise ValueError(f"--host {host} exposes the server beyond this machine, and a client can make it run "
                         "programs: give a token with --token or NDB_MCP_TOKEN, or bind 127.0.0.1")


class BearerGate:
    """ASGI middleware: an HTTP request without `Authorization: Bearer <token>` gets 401."""

    def __init__(self, app: Any, token: str) -> None:
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, self.expected):
                body = json.dumps({"error": "unauthorized: send Authorization: Bearer <token>"}).encode()
                await send({"type": "http.response.start", "status": 401,
                            "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def serve_stdio(mcp: MCPServer) -> None:
    anyio.run(mcp.run_stdio_async)


def serve_http(mcp: MCPServer, host: str, port: int, token: str | None, log_level: str = "warning") -> None:
    """Serve MCP at http://HOST:PORT/mcp until interrupted; prints one line once listening."""
    import uvicorn

    check_exposure(host, token)
    app: Any = mcp.streamable_http_app(host=host)
    if token:
        app = BearerGate(app, token)
    config = uvicorn.Config(app, host=host, port=port, log_level=log_level)
    server = uvicorn.Server(config)

    async def run() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(server.serve)
            while not server.started:
                await anyio.sleep(0.05)
            bound = server.servers[0].sockets[0].getsockname()[1] if server.servers else port
            print(f"ndb mcp: serving http://{host}:{bound}/mcp", flush=True)

    anyio.run(run)
