"""DAP wire format: Content-Length framing of UTF-8 JSON, and typed request validation.

The framing reader is deliberately forgiving: garbage before a header, a header without a usable
`Content-Length`, a body that is not JSON, or a body that was cut short (so that it swallowed the start
of the next frame) each become a `FramingError` item in the stream of decoded messages, and reading
goes on from the next `Content-Length:` header. The adapter answers every such item with an error
response and keeps serving.

Message types come from the pinned `dap-types` package (pydantic v2 models generated from the official
DAP JSON schema); nothing here hand-writes a message class.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import dap_types as dap
from pydantic import BaseModel, TypeAdapter, ValidationError

HEADER = b"Content-Length:"
MAX_HEADER_BYTES = 8 * 1024  # a header block longer than this is garbage
MAX_BODY_BYTES = 16 * 1024 * 1024  # a declared body larger than this is refused (and skipped)

REQUEST_ADAPTER: TypeAdapter[Any] = TypeAdapter(dap.DiscriminatedRequest)


def _known_commands() -> frozenset[str]:
    names: set[str] = set()
    for cls in vars(dap).values():
        if isinstance(cls, type) and issubclass(cls, dap.Request) and cls is not dap.Request:
            literal = cls.model_fields["command"].annotation  # type: ignore[attr-defined]
            names.update(getattr(literal, "__args__", ()))
    return frozenset(names)


KNOWN_COMMANDS = _known_commands()


@dataclass
class FramingError:
    """One unreadable piece of the input stream; `message` says what was wrong."""

    message: str


Decoded = dict[str, Any] | FramingError


def encode(message: dict[str, Any] | BaseModel) -> bytes:
    """One framed message: header + UTF-8 JSON body."""
    if isinstance(message, BaseModel):
        message = message.model_dump(mode="json", exclude_none=True, by_alias=True)
    body = json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return b"Content-Length: " + str(len(body)).encode("ascii") + b"\r\n\r\n" + body


class FrameReader:
    """Incremental decoder: feed bytes, iterate decoded messages (dicts) and FramingErrors.

    Linear in the input: a frame's header is parsed once, and while its body arrives each new byte is
    looked at once (for the header of a next frame inside it, which means this one was cut short); a
    header is searched for only within its first MAX_HEADER_BYTES. A body over MAX_BODY_BYTES is answered
    with one error and its bytes are skipped as they arrive, never held."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._frame: tuple[int, int] | None = None  # (body start, body length) of the header parsed
        self._scan = 0  # where the search for a header inside the unfinished body goes on
        self._skip = 0  # bytes of a refused (oversized) body still to discard
        self._skip_tail = b""  # the last bytes discarded, where the start of a header may have begun

    def feed(self, data: bytes) -> None:
        if self._skip:
            # Discard the refused body as it arrives, unless a header shows in it: then that body was
            # cut short, and reading goes on from the header.
            n = min(self._skip, len(data))
            seen = self._skip_tail + data[:n]
            at = seen.find(HEADER)
            if at >= 0:
                self._skip, self._skip_tail = 0, b""
                data = seen[at:] + data[n:]
            else:
                self._skip -= n
                self._skip_tail = seen[-(len(HEADER) - 1):] if self._skip else b""
                data = data[n:]
        self._buf += data

    @property
    def pending(self) -> int:
        """Bytes received but not yet decoded (not counting whitespace)."""
        return len(bytes(self._buf).strip())

    def messages(self) -> Iterator[Decoded]:
        while True:
            item = self._next()
            if item is None:
                return
            yield item

    def _next(self) -> Decoded | None:
        if self._frame is None:
            header = self._header()
            if header is not None:
                return header
            if self._frame is None:
                return None
        return self._body()

    def _header(self) -> FramingError | None:
        """Parse the next header into self._frame, or say what was wrong with the bytes before it."""
        buf = self._buf
        if not buf:
            return None
        start = buf.find(HEADER)
        if start < 0:
            # No header yet: keep the longest tail that could be the start of one, drop the rest.
            keep = 0
            for n in range(min(len(HEADER) - 1, len(buf)), 0, -1):
                if HEADER.startswith(bytes(buf[-n:])):
                    keep = n
                    break
            garbage = bytes(buf[: len(buf) - keep])
            del buf[: len(buf) - keep]
            if garbage.strip():
                return FramingError(f"discarded {len(garbage)} bytes that are not a DAP frame (no Content-Length header)")
            return None
        if start > 0:
            garbage = bytes(buf[:start])
            del buf[:start]
            if garbage.strip():
                return FramingError(f"discarded {len(garbage)} bytes before a Content-Length header")
        end, sep = self._header_end()
        second = buf.find(HEADER, len(HEADER), end if end >= 0 else MAX_HEADER_BYTES + len(HEADER))
        if second >= 0:
            # A header that never ended before the next one began.
            del buf[:second]
            return FramingError("header not terminated by an empty line before the next header")
        if end < 0:
            if len(buf) > MAX_HEADER_BYTES:
                del buf[: len(HEADER)]
                return FramingError("header block too long or not terminated by an empty line")
            return None
        header = bytes(buf[:end])
        length: int | None = None
        problem = ""
        for raw_line in header.splitlines():
            name, colon, value = raw_line.partition(b":")
            if not colon:
                problem = f"malformed header line {raw_line[:60]!r}"
                length = None
                break
            if name.strip().lower() == b"content-length":
                try:
                    length = int(value.strip())
                except ValueError:
                    problem = f"Content-Length is not a number: {value.strip()[:40]!r}"
                    length = None
                    break
        if length is None or length < 0:
            del buf[: end + sep]
            return FramingError(problem or "header without a valid Content-Length")
        if length > MAX_BODY_BYTES:
            rest = bytes(buf[end + sep :])
            buf.clear()
            self._skip, self._skip_tail = length, b""
            self.feed(rest)
            return FramingError(f"frame too large: Content-Length {length} exceeds the adapter's limit of "
                                f"{MAX_BODY_BYTES} bytes (the body is skipped)")
        self._frame = (end + sep, length)
        self._scan = end + sep
        return None

    def _body(self) -> Decoded | None:
        assert self._frame is not None
        buf = self._buf
        body_start, length = self._frame
        if len(buf) < body_start + length:
            # A complete header inside the unfinished body means this frame was cut short: raw CR/LF
            # cannot occur inside a JSON string, so no valid body contains one. Resync right away
            # instead of waiting for bytes that belong to later frames.
            inner = buf.find(HEADER, self._scan)
            if inner < 0:
                self._scan = max(body_start, len(buf) - len(HEADER) + 1)
                return None
            window = inner + MAX_HEADER_BYTES + 4
            if buf.find(b"\r\n\r\n", inner, window) >= 0 or buf.find(b"\n\n", inner, window) >= 0:
                del buf[:inner]
                self._frame = None
                return FramingError(f"frame cut short: a new frame began {inner - body_start} bytes into "
                                    f"a body of {length} bytes")
            if len(buf) >= window:
                self._scan = inner + 1  # not a header after all: look past it
            else:
                self._scan = inner  # that header may still end: look again when more comes
            return None
        body = bytes(buf[body_start : body_start + length])
        del buf[: body_start + length]
        self._frame = None
        try:
            message = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
            # A truncated frame swallows the beginning of the next one: re-read from its header.
            resync = body.find(HEADER)
            if resync >= 0:
                buf[:0] = body[resync:]
            return FramingError(f"body is not valid UTF-8 JSON: {exc}")
        if not isinstance(message, dict):
            return FramingError(f"a DAP message must be a JSON object, got {type(message).__name__}")
        return message

    def _header_end(self) -> tuple[int, int]:
        """Index and length of the blank line ending the header (CRLF CRLF, or a lenient LF LF), looked
        for within the first MAX_HEADER_BYTES only."""
        limit = MAX_HEADER_BYTES + 4
        crlf = self._buf.find(b"\r\n\r\n", 0, limit)
        lf = self._buf.find(b"\n\n", 0, limit)
        if lf >= 0 and (crlf < 0 or lf < crlf):
            return lf, 2
        return crlf, 4 if crlf >= 0 else 0


def read_messages(read_chunk: Callable[[], bytes]) -> Iterator[Decoded]:
    """Decode messages from a blocking `read_chunk` (returns b"" at end of input)."""
    reader = FrameReader()
    while True:
        chunk = read_chunk()
        if not chunk:
            # End of input: anything left is an unfinished frame.
            if reader.pending:
                yield FramingError(f"input ended inside a frame ({reader.pending} bytes unread)")
            return
        reader.feed(chunk)
        yield from reader.messages()


class RequestError(Exception):
    """A message that is not a valid request. Carries what is needed to answer it."""

    def __init__(self, message: str, request_seq: int = 0, command: str = "") -> None:
        super().__init__(message)
        self.request_seq = request_seq
        self.command = command


def describe_validation_error(exc: ValidationError, command: str) -> str:
    parts = []
    for err in exc.errors(include_url=False)[:5]:
        loc = [str(p) for p in err.get("loc", ())]
        if loc and loc[0] == command:
            loc = loc[1:]
        where = ".".join(loc) or "message"
        parts.append(f"{where}: {err.get('msg', 'invalid')}")
    more = len(exc.errors()) - 5
    if more > 0:
        parts.append(f"... and {more} more")
    return "; ".join(parts)


def parse_request(message: dict[str, Any]) -> dap.Request:
    """Validate a decoded message as a typed DAP request, or raise RequestError with a readable reason."""
    seq = message.get("seq")
    request_seq = seq if isinstance(seq, int) and not isinstance(seq, bool) else 0
    command = message.get("command")
    command_text = command if isinstance(command, str) else ""
    kind = message.get("type")
    if kind != "request":
        raise RequestError(
            f"expected a message of type 'request', got type {kind!r}", request_seq, command_text
        )
    if not isinstance(command, str):
        raise RequestError("request has no 'command' string", request_seq, "")
    if command not in KNOWN_COMMANDS:
        raise RequestError(f"unknown command {command!r}", request_seq, command)
    if not isinstance(seq, int) or isinstance(seq, bool):
        raise RequestError("request has no integer 'seq'", request_seq, command)
    try:
        request: dap.Request = REQUEST_ADAPTER.validate_python(message)
    except ValidationError as exc:
        raise RequestError(
            f"invalid arguments for {command!r}: {describe_validation_error(exc, command)}", request_seq, command
        ) from None
    return request
