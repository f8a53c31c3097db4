"""`hexplore-lsp --tcp` is for its user only (issue 31.4; lsp/PROTOCOL.md, "TCP mode"): loopback,
a session token in a 0600 file that the first message (`initialize`) must carry, no HTTP, one
server per connection (a client sees only its own documents, and leaving ends only its own
connection)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

from tests.lsp.lsp_helpers import FIXTURES
from tests.lsp.tcp_helpers import ROOT, TcpServer, exchange, frame, initialize, start_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TcpServer]:
    srv = start_server(tmp_path_factory.mktemp("tcp"))
    yield srv
    srv.stop()


def _error(reply: bytes) -> dict:
    head, _, body = reply.partition(b"\r\n\r\n")
    assert head.startswith(b"Content-Length:"), reply
    return json.loads(body)["error"]


def test_the_token_file_is_the_users_alone(server: TcpServer) -> None:
    assert os.stat(server.token_file).st_mode & 0o777 == 0o600
    assert len(server.token) >= 32
    assert str(server.token_file) in server.log()


def test_a_client_without_the_token_is_refused(server: TcpServer) -> None:
    for token in (None, "", "not-the-token", server.token[:-1]):
        reply = exchange(server.port, frame(initialize(token)))  # returns once the server closes
        error = _error(reply)
        assert error["code"] == -32600 and "token" in error["message"], error
        assert b'"result"' not in reply


def test_a_first_message_other_than_initialize_is_refused(server: TcpServer) -> None:
    hover = {"jsonrpc": "2.0", "id": 7, "method": "hexplore/functions", "params": {"uri": "file:///x.c"}}
    assert _error(exchange(server.port, frame(hover)))["code"] == -32600
    # a notification first (didOpen of another user's file): no answer, connection closed
    note = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {}}
    assert exchange(server.port, frame(note) + frame(initialize(server.token, 2))) == b""


def test_an_http_request_is_refused(server: TcpServer) -> None:
    """What a web page can send to a local port (a form or fetch POST): closed, unanswered, even
    with the right token in the body."""
    body = json.dumps(initialize(server.token)).encode()
    post = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n" % len(body)
    assert exchange(server.port, post + body) == b""
    assert exchange(server.port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") == b""
    assert exchange(server.port, b"Content-Length: 10\r\nX-Other: 1\r\n\r\n0123456789") == b""


def test_non_loopback_addresses_are_refused(tmp_path: Path) -> None:
    for host in ("0.0.0.0", "192.0.2.1", "example.com"):
        proc = subprocess.run(
            [sys.executable, "-m", "lsp.server", "--tcp", f"{host}:0", "--token-file", str(tmp_path / "t")],
            cwd=ROOT, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert proc.returncode == 2 and "loopback" in proc.stderr, proc.stderr
        assert not (tmp_path / "t").exists()


async def _client(port: int, token: str, published: list[types.PublishDiagnosticsParams]) -> LanguageClient:
    client = LanguageClient("tcp-security-test", "0")

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_publish(params: types.PublishDiagnosticsParams) -> None:
        published.append(params)

    await client.start_tcp("127.0.0.1", port)
    params = types.InitializeParams(capabilities=types.ClientCapabilities(), initialization_options={"token": token})
    result = await asyncio.wait_for(client.initialize_async(params), 60)
    assert result.server_info is not None and result.server_info.name == "hexplore-lsp"
    client.initialized(types.InitializedParams())
    return client


@pytest.mark.asyncio
async def test_authenticated_clients_work_each_on_its_own(server: TcpServer) -> None:
    published_a: list[types.PublishDiagnosticsParams] = []
    a = await _client(server.port, server.token, published_a)
    uri = (FIXTURES / "indirect.c").as_uri()
    text = (FIXTURES / "indirect.c").read_text()
    a.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "c", 1, text)))
    functions = await asyncio.wait_for(a.protocol.send_request_async("hexplore/functions", {"uri": uri}), 120)
    assert functions and all("name" in f for f in functions)
    for _ in range(600):
        if published_a:
            break
        await asyncio.sleep(0.05)
    assert sorted(str(d.code) for d in published_a[0].diagnostics) == ["ImpureCall", "IndirectAccess"]

    b = await _client(server.port, server.token, [])  # another client does not see a's document
    with pytest.raises(JsonRpcException, match="didOpen"):
        await asyncio.wait_for(b.protocol.send_request_async("hexplore/functions", {"uri": uri}), 60)

    await a.shutdown_async(None)  # a leaves; the server goes on for b and for new clients
    a.exit(None)
    await a.stop()
    await asyncio.sleep(0.5)
    assert server.proc.poll() is None, "one client's exit stopped the server:\n" + server.log()
    b.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "c", 1, text)))
    again = await asyncio.wait_for(b.protocol.send_request_async("hexplore/functions", {"uri": uri}), 120)
    assert [f["name"] for f in again] == [f["name"] for f in functions]
    b.protocol.writer.close()  # b drops the connection without exit
    await b.stop()
    c = await _client(server.port, server.token, [])
    await c.shutdown_async(None)
    c.exit(None)
    await c.stop()
    assert server.proc.poll() is None


def test_stopping_the_server_removes_its_token_file(tmp_path: Path) -> None:
    srv = start_server(tmp_path)
    assert srv.token_file.exists()
    assert srv.stop() == 0
    assert not srv.token_file.exists()
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", srv.port), timeout=2):
        pass
