"""Reading JSON-RPC messages off a byte stream without ever going deaf (stdio and TCP alike).

pygls' reader (`pygls.io_.run_async`) drops what it cannot read without an answer, and a wrong
``Content-Length`` leaves it waiting for bytes that never come. This one:

- answers a body that is not JSON with -32700 (ParseError, ``id: null``), a batch (an array: LSP
  has none) or a body that is not a request, notification or response with -32600
  (InvalidRequest; with the message's ``id`` when it has a usable one);
- resynchronises after a broken header: a header block without a usable ``Content-Length`` is
  skipped up to the next ``Content-Length:``; a body that does not parse and contains a
  ``Content-Length:`` header line (the length was too large and swallowed the next message, or
  its header) is cut there and the rest read again; while a body waits for bytes that do not come (`RESYNC_S`)
  and a ``Content-Length:`` header has already arrived inside it, it is cut there too. A length
  that was too small leaves the rest of the body ahead of the next header: it is skipped;
- gives a message that pygls fails on an InternalError answer without Python details (the log
  has them; `lsp.server._Protocol`).

`serve` runs the loop over any `chunks` coroutine (b"" at the end of the stream): `stdin_chunks`
for stdio, `lsp/tcp.py` for a socket.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import threading
from collections.abc import Awaitable, Callable
from typing import Any

log = logging.getLogger("hexplore-lsp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
RESYNC_S = 0.5  # a body still incomplete after this long, with a header inside it, is cut there
MAX_HEADER = 1 << 16  # bytes of header lines kept while looking for the end of a header block
_CONTENT_LENGTH = re.compile(rb"(?i)content-length[ \t]*:[ \t]*(\d{1,12})[ \t]*\r?\n")
_ANY_CONTENT_LENGTH = re.compile(rb"(?i)content-length[ \t]*:")
_HEADER_END = re.compile(rb"\r?\n\r?\n")

Chunks = Callable[[], Awaitable[bytes]]


class Framer:
    """Splits a byte stream into message bodies; `messages` yields each body (bytes)."""

    def __init__(self, chunks: Chunks) -> None:
        self._chunks = chunks
        self._buffer = bytearray()
        self._eof = False
        self._pending: asyncio.Future[bytes] | None = None

    async def _more(self, timeout: float | None = None) -> bool:
        """Read one more chunk into the buffer (False at the end of the stream or on timeout)."""
        if self._eof:
            return False
        if self._pending is None:
            self._pending = asyncio.ensure_future(self._chunks())
        done, _ = await asyncio.wait({self._pending}, timeout=timeout)
        if not done:
            return False
        chunk = self._pending.result()
        self._pending = None
        if not chunk:
            self._eof = True
            return False
        self._buffer += chunk
        return True

    async def next_body(self) -> bytes | None:
        """The next message's body (None at the end of the stream)."""
        while True:
            header = await self._header()
            if header is None:
                return None
            length = header
            while len(self._buffer) < length:
                cut = _CONTENT_LENGTH.search(self._buffer)  # (a raw newline is never inside JSON strings)
                arrived = await self._more(RESYNC_S if cut is not None else None)
                if arrived:
                    continue
                if cut is not None:  # the length was too large: the next message is in it
                    body = bytes(self._buffer[: cut.start()])
                    del self._buffer[: cut.start()]
                    log.warning("a Content-Length of %d was wrong (%d bytes came before the next header)", length, len(body))
                    return body
                if self._eof:
                    if self._buffer.strip():
                        log.warning("the stream ended inside a message (%d of %d bytes)", len(self._buffer), length)
                    return None
            body = bytes(self._buffer[:length])
            del self._buffer[:length]
            if not _is_json(body):  # did it swallow (the start of) the next message? Read that again
                while b"\n" not in self._buffer and await self._more(RESYNC_S):
                    pass  # a header begun in the body ends on a later line
                joined = body + bytes(self._buffer)
                cut = next((m for m in _CONTENT_LENGTH.finditer(joined) if m.start() < len(body)), None)
                if cut is not None:
                    self._buffer = bytearray(joined[cut.start() :])
                    body = joined[: cut.start()]
                    log.warning("a Content-Length of %d was wrong: the body ran into the next header", length)
            return body

    async def _header(self) -> int | None:
        """Consume one header block; the Content-Length it gives (None at the end of the stream)."""
        while True:
            end = _HEADER_END.search(self._buffer)
            if end is None:
                if len(self._buffer) > MAX_HEADER:  # junk: keep only what may start a header
                    keep = self._buffer.rfind(b"\n")
                    del self._buffer[: max(keep, len(self._buffer) - 256)]
                if not await self._more():
                    if self._buffer.strip():
                        log.warning("the stream ended with %d unread bytes", len(self._buffer))
                    return None
                continue
            block = bytes(self._buffer[: end.end()])
            found = list(_CONTENT_LENGTH.finditer(block))
            if not found:
                # No usable length (junk, a truncated body's rest, `Content-Length: x`): skip up to
                # the next `Content-Length:` if one is in it, else the whole block.
                later = list(_ANY_CONTENT_LENGTH.finditer(block))
                skip = later[-1].start() if later and later[-1].start() > 0 else end.end()
                log.warning("skipped %d bytes that are not a message header: %r", skip, block[:80])
                del self._buffer[:skip]
                continue
            last = found[-1]
            if last.start() > 0 and block[: last.start()].strip():
                log.warning("skipped %d bytes before a message header: %r", last.start(), block[:80])
            del self._buffer[: end.end()]
            return int(last[1])


def _is_json(body: bytes) -> bool:
    try:
        json.loads(body)
    except ValueError:
        return False
    return True


def error_response(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def _usable_id(message: dict[str, Any]) -> Any:
    msg_id = message.get("id")
    return msg_id if isinstance(msg_id, int | str) and not isinstance(msg_id, bool) else None


def check(message: Any) -> tuple[int, str, Any] | None:
    """Why a parsed body is not a JSON-RPC message (code, words, id to answer), or None if it is one."""
    if isinstance(message, list):
        return INVALID_REQUEST, "batches are not supported: send one message per Content-Length header (LSP has no batches)", None
    if not isinstance(message, dict):
        return INVALID_REQUEST, f"expected a JSON object, got {type(message).__name__}", None
    msg_id = _usable_id(message)
    if message.get("jsonrpc") != "2.0":
        return INVALID_REQUEST, 'expected "jsonrpc": "2.0"', msg_id
    if "id" in message and msg_id is None and message.get("id") is not None:
        return INVALID_REQUEST, "expected the id to be an integer or a string", None
    if "method" in message:
        if not isinstance(message["method"], str) or not message["method"]:
            return INVALID_REQUEST, "expected the method to be a non-empty string", msg_id
        params = message.get("params")
        if params is not None and not isinstance(params, dict | list):
            return INVALID_REQUEST, "expected params to be an object or an array", msg_id
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None  # a response to one of the server's requests
    return INVALID_REQUEST, "expected a request (method and id), a notification (method) or a response", msg_id


async def serve(
    stop: threading.Event,
    chunks: Chunks,
    protocol: Any,
    send: Callable[[dict[str, Any]], None] | None = None,
) -> None:
    """Read messages until the stream ends or `stop` is set, handing well-formed ones to the
    pygls `protocol` and answering the others (module docstring)."""
    reply = send or protocol._send_data
    framer = Framer(chunks)
    while not stop.is_set():
        body = await framer.next_body()
        if body is None:
            break
        try:
            message = json.loads(body)
        except ValueError as e:  # UnicodeDecodeError too
            log.warning("a message body is not JSON (%s): %r", e, body[:80])
            reply(error_response(None, PARSE_ERROR, f"the message body is not JSON ({type(e).__name__})"))
            continue
        problem = check(message)
        if problem is not None:
            code, words, msg_id = problem
            log.warning("an invalid JSON-RPC message: %s", words)
            reply(error_response(msg_id, code, f"invalid JSON-RPC message: {words}"))
            continue
        try:
            structured = protocol.structure_message(message)
            protocol.handle_message(structured)
        except SystemExit:
            raise
        except Exception:
            log.exception("failed to handle a %s message", message.get("method", "response"))
            msg_id = _usable_id(message)
            if msg_id is not None and "method" in message:
                reply(error_response(msg_id, INTERNAL_ERROR, "hexplore-lsp: internal error; see the server's log"))


def stdin_chunks(fd: int | None = None) -> Chunks:
    """Chunks of the standard input, read by a daemon thread (a blocking read never holds the
    event loop, and a short read returns at once: no wait for a length that may be wrong)."""
    fd = os.dup(0) if fd is None else fd
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[bytes] = asyncio.Queue()

    def pump() -> None:
        while True:
            try:
                data = os.read(fd, 1 << 16)
            except OSError:
                data = b""
            with contextlib.suppress(RuntimeError):  # the loop closed
                loop.call_soon_threadsafe(queue.put_nowait, data)
            if not data:
                return

    threading.Thread(target=pump, name="hexplore-stdin", daemon=True).start()
    return queue.get
