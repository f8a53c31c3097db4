"""``hexplore-lsp --tcp HOST:PORT``: the language server on a loopback socket, for one user.

A client can make the server compile and run C (``hexplore/run``) and read the documents it
sent, so a socket is guarded like the user's own shell (lsp/PROTOCOL.md, "TCP mode"; SECURITY.md):

- **loopback only**: `main` refuses a host that is not ``127.0.0.0/8``, ``::1`` or ``localhost``;
- **a session token**: 32 random bytes (``secrets``), written to a file only the user can read
  (0600: ``--token-file PATH``, else ``$XDG_RUNTIME_DIR/hexplore-lsp-<port>.token``, else the
  per-user cache directory); stderr says where. The first message of a connection must be an
  ``initialize`` request whose ``initializationOptions.token`` is the token (compared in constant
  time). Anything else is refused before the server sees it: a JSON-RPC message gets an error
  answer (-32600), a header other than ``Content-Length``/``Content-Type`` (``POST / HTTP/1.1``:
  a web page posting to the port) or a first message that does not arrive within
  `AUTH_TIMEOUT_S` closes the connection without an answer. The token is taken out of the
  ``initialize`` before the server reads it;
- **one server per connection**: each authenticated connection gets its own `HexploreServer`
  (its own documents and settings: a client sees only what it sent); they share one bounded
  analysis pool (`lsp.server.analysis_pool`). Messages are read by `lsp/framing.py`, as on stdio. ``exit`` or a disconnect ends that connection only; the
  process runs until it is stopped (SIGINT, SIGTERM), and then removes its token file.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import os
import re
import secrets
import signal
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from explorer.api import UnsafeDirectory, cache_root, check_private, private_dir
from lsp import framing

if TYPE_CHECKING:
    from lsp.server import HexploreServer

log = logging.getLogger("hexplore-lsp")

TOKEN_OPTION = "token"  # initializationOptions.token
AUTH_TIMEOUT_S = 10.0  # for the first message, headers and body
MAX_FIRST_MESSAGE = 1 << 20  # bytes of the initialize request's body
NOT_AUTHENTICATED = -32600  # JSON-RPC InvalidRequest
_HEADER = re.compile(rb"(?i)(content-length|content-type): *([^\r\n]*)\r\n")


def default_token_path(port: int) -> Path:
    """``$XDG_RUNTIME_DIR/hexplore-lsp-<port>.token`` where that directory is private, else the
    same name in the per-user cache directory (`UnsafeDirectory` where neither is)."""
    name = f"hexplore-lsp-{port}.token"
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        with contextlib.suppress(UnsafeDirectory):
            check_private(Path(runtime))
            return Path(runtime) / name
    return private_dir(cache_root()) / name


def write_token(path: Path, token: str) -> None:
    """`token` in a new file `path` that only the user can read or write (0600)."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # a stale file of an earlier session: replaced, never reused
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as f:
        f.write(token + "\n")


class _Replay:
    """The stream after authentication: the (rewritten) first message, then the socket."""

    def __init__(self, first: bytes, reader: asyncio.StreamReader) -> None:
        self._buffer = first
        self._reader = reader

    async def readline(self) -> bytes:
        if self._buffer:
            line, sep, rest = self._buffer.partition(b"\n")
            self._buffer = rest
            return line + sep
        return await self._reader.readline()

    async def read(self) -> bytes:
        """What arrived next (b"" at the end of the stream): `lsp/framing.py`'s chunks."""
        if self._buffer:
            chunk, self._buffer = self._buffer, b""
            return chunk
        return await self._reader.read(1 << 16)

    async def readexactly(self, n: int) -> bytes:
        if self._buffer:
            head, self._buffer = self._buffer[:n], self._buffer[n:]
            return head + (await self._reader.readexactly(n - len(head)) if len(head) < n else b"")
        return await self._reader.readexactly(n)


def _frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def _first_message(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The first JSON-RPC message, or None for anything that is not one (HTTP, junk)."""
    length = None
    while True:
        line = await reader.readline()
        if line == b"\r\n":
            break
        header = _HEADER.fullmatch(line)
        if header is None:  # `POST / HTTP/1.1`, a bare newline, EOF, junk
            return None
        if header[1].lower() == b"content-length":
            if not header[2].isdigit() or length is not None:
                return None
            length = int(header[2])
    if length is None or length > MAX_FIRST_MESSAGE:
        return None
    try:
        message = json.loads(await reader.readexactly(length))
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


def authenticate(message: dict[str, Any], token: str) -> dict[str, Any] | str:
    """`message` without its token when it is an ``initialize`` carrying `token`; else why not."""
    params = message.get("params")
    options = params.get("initializationOptions") if isinstance(params, dict) else None
    given = options.get(TOKEN_OPTION) if isinstance(options, dict) else None
    if message.get("method") != "initialize" or "id" not in message:
        return "the first message must be an initialize request"
    if not isinstance(given, str) or not hmac.compare_digest(given.encode(), token.encode()):
        return "initializationOptions.token is missing or wrong"
    assert isinstance(params, dict) and isinstance(options, dict)
    rest = {k: v for k, v in options.items() if k != TOKEN_OPTION}
    return {**message, "params": {**params, "initializationOptions": rest or None}}


class TcpServer:
    """Accepts connections, authenticates them, and runs one `HexploreServer` for each."""

    def __init__(self, token: str, make_server: Callable[[ThreadPoolExecutor], HexploreServer]) -> None:
        self.token = token
        self.make_server = make_server
        from lsp.server import analysis_pool  # (lsp.server imports this module)

        self.executor = analysis_pool()
        self.connections = 0  # served so far (authenticated)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        peer = writer.get_extra_info("peername")
        try:
            first = await asyncio.wait_for(_first_message(reader), AUTH_TIMEOUT_S)
        except (TimeoutError, asyncio.IncompleteReadError, ValueError, ConnectionError):
            first = None  # ValueError: a header line past the reader's limit
        checked = authenticate(first, self.token) if first is not None else "not an LSP message"
        if isinstance(checked, str):
            log.warning("refused a connection from %s: %s", peer, checked)
            if first is not None and "id" in first:
                message = f"hexplore-lsp: {checked}; see lsp/PROTOCOL.md, TCP mode"
                error = {"code": NOT_AUTHENTICATED, "message": message}
                writer.write(_frame({"jsonrpc": "2.0", "id": first["id"], "error": error}))
            await _close(writer)
            return
        self.connections += 1
        log.info("client %s authenticated", peer)
        await self._serve(_Replay(_frame(checked), reader), writer)

    async def _serve(self, reader: _Replay, writer: asyncio.StreamWriter) -> None:
        server = self.make_server(self.executor)
        server._stop_event = stop = threading.Event()  # `exit` sets it (JsonRPCServer.shutdown)
        server.protocol.set_writer(writer)  # type: ignore[arg-type]
        try:
            await framing.serve(stop, reader.read, server.protocol)
        except SystemExit:
            pass  # pygls ends `exit` with sys.exit: here it ends this connection, not the process
        except (ConnectionError, asyncio.IncompleteReadError):
            log.info("a client went away")
        finally:
            stop.set()
            for task in server.tasks.values():
                task.cancel()
            await _close(writer)

    async def serve(self, host: str, port: int, ready: Callable[[int], None]) -> None:
        server = await asyncio.start_server(self.handle, host, port)
        stopped = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stopped.set)
        async with server:
            ready(int(server.sockets[0].getsockname()[1]))
            await stopped.wait()
        self.executor.shutdown(wait=False, cancel_futures=True)


async def _close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(Exception):
        await writer.wait_closed()


def main(host: str, port: int, token_file: str | None, make_server: Callable[[ThreadPoolExecutor], HexploreServer]) -> int:
    """Serve on `host`:`port` (0: any free port) until SIGINT or SIGTERM."""
    token = secrets.token_urlsafe(32)
    written: list[Path] = []

    def ready(actual_port: int) -> None:
        path = Path(token_file) if token_file else default_token_path(actual_port)
        write_token(path, token)
        written.append(path)
        print(f"hexplore-lsp: listening on {host}:{actual_port}; the session token is in {path} "
              f"(send it as initializationOptions.token; lsp/PROTOCOL.md)", file=sys.stderr, flush=True)  # fmt: skip

    try:
        asyncio.run(TcpServer(token, make_server).serve(host, port, ready))
    except (OSError, UnsafeDirectory) as e:
        print(f"hexplore-lsp: {e}", file=sys.stderr)
        return 1
    finally:
        for path in written:
            with contextlib.suppress(OSError):
                path.unlink()
    return 0
