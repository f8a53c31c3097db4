"""`hexplore-lsp --tcp HOST:PORT`: the same server over a socket; `exit` ends the process."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from tests.lsp.lsp_helpers import FIXTURES

pytestmark = pytest.mark.asyncio


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _connect(client: LanguageClient, port: int) -> None:
    for _ in range(200):
        try:
            await client.start_tcp("127.0.0.1", port)
            return
        except OSError:
            await asyncio.sleep(0.05)
    raise TimeoutError("hexplore-lsp did not listen")


async def test_tcp_session() -> None:
    port = _free_port()
    root = Path(__file__).parents[2]
    proc = subprocess.Popen([sys.executable, "-m", "lsp.server", "--tcp", f"127.0.0.1:{port}"], cwd=root)
    try:
        client = LanguageClient("tcp-test", "0")
        published: list[types.PublishDiagnosticsParams] = []

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_publish(params: types.PublishDiagnosticsParams) -> None:
            published.append(params)

        await _connect(client, port)
        await client.initialize_async(types.InitializeParams(capabilities=types.ClientCapabilities()))
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
        deadline = time.monotonic() + 10
        while proc.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert proc.poll() is not None, "the server kept running after exit"
        await client.stop()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
