"""Transports: the DAP session over stdio (how VS Code starts an adapter) and over TCP.

`serve_stdio` keeps the protocol stream clean: the real stdout is duplicated for DAP frames only, and
file descriptor 1 is pointed at stderr for as long as the adapter runs, so a stray print (or a child
process that inherits the descriptor) cannot corrupt the stream.

Each session has two threads: the transport's reads messages, the session's own handles them in order.
Reading on while a command runs is what lets a `pause` stop a long predicted continue and a `cancel` stop
an inference (DAPSession.triage handles those two on the reading thread at once).

`serve_tcp` binds 127.0.0.1 by default, announces the bound port, and serves any number of clients
concurrently, each in its own thread with its own session and engine. Another host requires a token
(`--token` or `NDB_DAP_TOKEN`), since a client can launch the oracle, which runs programs: each client
sends it as `adapterToken` in its `launch` or `attach` arguments, and until one does, a connection may send
only `initialize` (answered) and `disconnect`; a wrong or missing token is answered with an error and
the connection is closed (docs/dap.md, docs/threat-model.md).

Run directly: `python -m dap_server.server [--port N] [--host H] [--log-file F]`.
"""

from __future__ import annotations

import argparse
import contextlib
import hmac
import logging
import os
import queue
import socket
import sys
import threading
from collections.abc import Callable
from functools import partial
from typing import Any

from dap_server.core import EngineFactory
from dap_server.protocol import FramingError, encode, read_messages
from dap_server.session import DAPSession
from model_backend.worker.protocol import is_loopback

log = logging.getLogger("dap_server")
READ_CHUNK = 65536


def setup_logging(log_file: str | None) -> None:
    """Log every message to `log_file` (debug level); without one, log nothing."""
    if log_file:
        handler: logging.Handler = logging.FileHandler(log_file, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(threadName)s %(message)s"))
        log.addHandler(handler)
        log.setLevel(logging.DEBUG)
    elif not log.handlers:
        log.addHandler(logging.NullHandler())
    log.propagate = False


def check_exposure(host: str, token: str | None) -> None:
    """Refuse to serve beyond this machine without a token (ValueError with what to do)."""
    if not is_loopback(host) and not token:
        raise ValueError(
            f"--host {host} exposes the adapter beyond this machine, and a client can make it run programs: "
            "give a token with --token or NDB_DAP_TOKEN (clients send it as `adapterToken` in their launch "
            "configuration), or bind 127.0.0.1"
        )


_BEFORE_TOKEN = ("initialize", "disconnect")  # what a connection may send before it presents the token


class _TokenGate:
    """A connection's authentication: it holds once a `launch` or `attach` carries the server's token."""

    def __init__(self, token: str | None) -> None:
        self.token = token
        self.open = not token

    def refusal(self, item: dict[str, Any] | FramingError) -> tuple[str, bool] | None:
        """None to pass `item` on; else (the error message, whether to close the connection)."""
        if self.open or not isinstance(item, dict) or item.get("type") != "request":
            return None
        command = item.get("command")
        if command in _BEFORE_TOKEN:
            return None
        if command in ("launch", "attach"):
            arguments = item.get("arguments")
            given = arguments.get("adapterToken") if isinstance(arguments, dict) else None
            if isinstance(given, str) and self.token and hmac.compare_digest(given.encode(), self.token.encode()):
                self.open = True
                return None
            what = "a wrong token" if isinstance(given, str) else "no token"
            return (f"this adapter requires a token: the {command} request carried {what} (set `adapterToken` in the "
                    "launch configuration to the adapter's --token / NDB_DAP_TOKEN)", True)
        return (f"{command!r} refused: send `launch` or `attach` with the adapter's token first", False)


def serve_stream(read_chunk: Callable[[], bytes], write: Callable[[bytes], Any],
                 engine_factory: EngineFactory | None = None, name: str = "session",
                 token: str | None = None) -> DAPSession:
    """Run one session until the input ends or the client disconnects. Returns the session. With a
    token, requests other than `initialize` and `disconnect` wait for a `launch` or `attach` carrying it.
    Writes are made one at a time (the session sends from more than one thread); an OSError from
    `read_chunk` ends the input."""
    write_lock = threading.Lock()

    def send(message: dict[str, Any]) -> None:
        try:
            with write_lock:
                write(encode(message))
        except (OSError, ValueError):
            log.warning("%s: could not write to the client", name)

    def read_or_end() -> bytes:
        try:
            return read_chunk()
        except OSError:
            return b""

    session = DAPSession(send, engine_factory=engine_factory, name=name)
    inbox: queue.Queue[dict[str, Any] | FramingError | None] = queue.Queue()

    def handle_in_order() -> None:
        while (item := inbox.get()) is not None:
            try:
                session.handle_raw(item)
            finally:
                session.handled(item)
                inbox.task_done()

    commands = threading.Thread(target=handle_in_order, name=f"{name} commands", daemon=True)
    commands.start()
    log.info("%s: started", name)
    gate = _TokenGate(token)
    try:
        for item in read_messages(read_or_end):
            refused = gate.refusal(item)
            if refused is not None and isinstance(item, dict):
                message, close = refused
                seq = item.get("seq")
                log.warning("%s: %s", name, message)
                session.respond(seq if isinstance(seq, int) else 0, str(item.get("command", "")), success=False,
                                message=message)
                if close:
                    break
                continue
            if session.triage(item):
                continue
            inbox.put(item)
            if isinstance(item, dict) and item.get("command") == "disconnect":
                inbox.join()  # answered: stop reading
                if session.done:
                    break
    except OSError as exc:
        log.warning("%s: connection error: %s", name, exc)
    finally:
        # The input ended: what the client sent before it is still answered, in order.
        inbox.put(None)
        commands.join()
        session.close()
        log.info("%s: ended", name)
    return session


def serve_stdio(log_file: str | None = None, engine_factory: EngineFactory | None = None) -> None:
    """Serve one DAP session on stdin/stdout (what `ndb dap` does)."""
    setup_logging(log_file)
    sys.stdout.flush()
    protocol_fd = os.dup(1)
    saved_stdout = sys.stdout
    os.dup2(2, 1)  # stray writes to fd 1 now land on stderr
    sys.stdout = sys.stderr
    out = os.fdopen(protocol_fd, "wb", buffering=0)
    try:
        serve_stream(partial(os.read, 0, READ_CHUNK), out.write, engine_factory, name="stdio")
    finally:
        try:
            out.flush()
            os.dup2(protocol_fd, 1)
        finally:
            sys.stdout = saved_stdout
            out.close()


def _serve_connection(conn: socket.socket, address: Any, engine_factory: EngineFactory | None,
                      token: str | None = None) -> None:
    name = f"tcp {address[0]}:{address[1]}" if isinstance(address, tuple) else "tcp"
    with conn:
        serve_stream(partial(conn.recv, READ_CHUNK), conn.sendall, engine_factory, name=name, token=token)
        with contextlib.suppress(OSError):
            conn.shutdown(socket.SHUT_RDWR)


def serve_tcp(host: str = "127.0.0.1", port: int = 0, log_file: str | None = None,
              ready: Callable[[int], None] | None = None, engine_factory: EngineFactory | None = None,
              stop: threading.Event | None = None, token: str | None = None) -> None:
    """Listen on host:port (0 = any free port) and serve each client in its own session.

    `ready(port)` is called with the bound port once listening; without it the port is printed on
    stdout as `ndb dap: listening on HOST:PORT`. Runs until `stop` is set (or forever). A host other
    than loopback requires `token` (ValueError otherwise; clients send it as `adapterToken`); with one, every client must present it.
    """
    check_exposure(host, token)
    setup_logging(log_file)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind((host, port))
        server.listen(16)
        server.settimeout(0.5)
        bound = server.getsockname()[1]
        log.info("listening on %s:%s", host, bound)
        if ready is not None:
            ready(bound)
        else:
            print(f"ndb dap: listening on {host}:{bound}", flush=True)
        while stop is None or not stop.is_set():
            try:
                conn, address = server.accept()
            except TimeoutError:
                continue
            except OSError as exc:
                log.warning("accept failed: %s", exc)
                continue
            conn.settimeout(None)
            thread = threading.Thread(target=_serve_connection, args=(conn, address, engine_factory, token),
                                      name=f"dap-{address[1] if isinstance(address, tuple) else 'client'}",
                                      daemon=True)
            thread.start()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m dap_server.server", description="Neural Debug DAP adapter")
    parser.add_argument("--port", type=int, default=None, help="serve over TCP on this port (0 = any free)")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host to bind (default 127.0.0.1)")
    parser.add_argument("--log-file", default=None, help="log every message to this file")
    parser.add_argument("--token", default=os.environ.get("NDB_DAP_TOKEN") or None,
                        help="secret clients send as `adapterToken` in launch/attach (required for a non-loopback host)")
    ns = parser.parse_args(argv)
    try:
        if ns.port is None:
            serve_stdio(ns.log_file)
        else:
            try:
                check_exposure(ns.host, ns.token)
            except ValueError as exc:
                parser.error(str(exc))
            serve_tcp(ns.host, ns.port, ns.log_file, token=ns.token)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
