"""`ndb mcp`: the command that serves the MCP server (registered by dap_server/cli.py)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from mcp_server.sessions import Limits
from model_backend import cli as backend_cli


def register(app: typer.Typer) -> None:
    defaults = Limits()

    @app.command()
    def mcp(
        http: Annotated[bool, typer.Option("--http", help="Serve streamable HTTP at http://HOST:PORT/mcp instead of stdio.")] = False,
        host: Annotated[str, typer.Option("--host", help="Address to bind with --http. Anything but loopback needs --token.")] = "127.0.0.1",
        port: Annotated[int, typer.Option("--port", help="Port with --http (0: any free port, printed at start).")] = 8766,
        token: Annotated[str | None, typer.Option(
            "--token", show_default=False,
            help="With --http: every request must carry `Authorization: Bearer TOKEN` (default: $NDB_MCP_TOKEN).")] = None,
        model: Annotated[str | None, typer.Option("--model", help="Checkpoint directory (default: the shipped model).")] = None,
        worker: Annotated[str | None, typer.Option("--worker", help="ws:// URL of a model worker for neural sessions.")] = None,
        max_sessions: Annotated[int, typer.Option("--max-sessions", min=1, help="Sessions open at once.")] = defaults.max_sessions,
        idle_timeout: Annotated[float, typer.Option("--idle-timeout", help="Seconds before an unused session is closed.")] = defaults.idle_seconds,
        call_timeout: Annotated[float, typer.Option("--call-timeout", help="Seconds one call may run (a long continue stops where it got to).")] = defaults.call_seconds,
        max_program_chars: Annotated[int, typer.Option("--max-program-chars", help="Largest program accepted.")] = defaults.max_program_chars,
        log_level: Annotated[str, typer.Option("--log-level", help="debug, info, warning, error")] = "warning",
        no_sandbox: backend_cli.NoSandboxOpt = False,
    ) -> None:
        """Serve the debugger to coding agents over the Model Context Protocol (stdio by default)."""
        from mcp_server.sessions import EngineConfig
        from mcp_server.tools import build_server
        from mcp_server.transport import check_exposure, serve_http, serve_stdio

        backend_cli.sandbox_choice(no_sandbox)
        token = token or os.environ.get("NDB_MCP_TOKEN") or None
        if http:
            try:
                check_exposure(host, token)
            except ValueError as exc:
                backend_cli.fail(str(exc))
        limits = Limits(max_sessions=max_sessions, idle_seconds=idle_timeout, call_seconds=call_timeout,
                        max_program_chars=max_program_chars)
        server, sessions = build_server(limits, EngineConfig(model=model, worker=worker), log_level=log_level.upper())
        try:
            if http:
                serve_http(server, host, port, token, log_level)
            else:
                serve_stdio(server)
        finally:
            sessions.close_all()

