"""`hexplore-lsp --tcp HOST:PORT`: the same server over a socket, for a client that sends the
session token (`tests/lsp/test_tcp_security.py` checks who is refused); `exit` ends the client's
connection, SIGTERM the process."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from tests.lsp.lsp_helpers import FIXTURES
from tests.lsp.tcp_helpers import start_server

pytestmark = pytest.mark.asyncio


async def test_tcp_session(tmp_path: Path) -> None:
    server = start_server(tmp_path)
    try:
        client = LanguageClient("tcp-test", "0")
        published: list[types.PublishDiagnosticsParams] = []

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams) -> None:
            published.append(params)

        await client.start_tcp("127.0.0.1", server.port)
        options = {"token": server.token}
        await client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities(), initialization_options=options)
        )
        client.initialized(types.InitializedParams())
        uri = (FIXTURES / "indirect.c").as_uri()
        text = (FIXTURES / "indirect.c").read_text()
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "c", 1, text)))
        for _ in range(600):
            if published:
                break
            await asyncio.sleep(0.05)
        assert sorted(str(d.code) for d in published[0].diagnostics) == ["ImpureCall", "IndirectAccess"]
        await client.shutdown_async(None)
        client.exit(None)
        await asyncio.wait_for(client.stop(), 10)  # the server closed the connection
        assert server.proc.poll() is None, "one client's exit stopped the server"
    finally:
        assert server.stop() == 0
    assert not server.token_file.exists()
