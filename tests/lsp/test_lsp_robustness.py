"""150 random edits over the real LSP, some waited for and some in bursts: the server never
crashes, answers requests in between, and the diagnostics it publishes last are those of the last
version, equal to what the core computes for that text."""

from __future__ import annotations

import asyncio
import random

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from core_compiler.analysis import analyze_file
from explorer.workspace import path_for_uri
from lsp.diagnostics import to_diagnostic
from lsp.positions import LineIndex
from tests.explorer.random_edits import random_edit
from tests.lsp.lsp_helpers import CONFIG, FIXTURES, published, start, summary

pytestmark = pytest.mark.asyncio(loop_scope="module")
URI = "file:///tmp/hexplore-random/lsp-edits.c"
EDITS = 150


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


def utf16_position(text: str, index: int) -> types.Position:
    line = text.count("\n", 0, index)
    start = text.rfind("\n", 0, index) + 1
    return types.Position(line, len(text[start:index].encode("utf-16-le")) // 2)


def expected(text: str) -> list[tuple[str, int, int, int, int, int, str]]:
    path = path_for_uri(URI)
    fa = analyze_file(path, text)
    index = LineIndex(text)
    return summary([to_diagnostic(r, URI, path, index) for r in fa.all_remarks()])


async def test_random_edits_over_lsp(client: LanguageClient) -> None:
    rng = random.Random(7)
    text = (FIXTURES / "matmul.c").read_text() + (FIXTURES / "broken.c").read_text()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(URI, "c", 0, text))
    )
    await published(client, URI, 0)
    for version in range(1, EDITS + 1):
        start_i, end_i, new = random_edit(rng, text)
        rng_ = types.Range(utf16_position(text, start_i), utf16_position(text, end_i))
        text = text[:start_i] + new + text[end_i:]
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=URI, version=version),
                [types.TextDocumentContentChangePartial(range=rng_, text=new)],
            )
        )
        if rng.random() < 0.1:
            hover = types.HoverParams(types.TextDocumentIdentifier(URI), types.Position(rng.randint(0, 30), 4))
            await client.text_document_hover_async(hover)  # answers for this version, or null
        if rng.random() < 0.3:  # otherwise the next edit follows at once (a burst)
            got = summary(await published(client, URI, version))
            if version % 5 == 0:
                assert got == expected(text), f"version {version}"
    final = summary(await published(client, URI, EDITS))
    await asyncio.sleep(0.3)  # nothing older may be published after the last version's
    mine = [p for p in client.published if p.uri == URI]  # type: ignore[attr-defined]
    assert mine[-1].version == EDITS
    assert final == expected(text)
    versions = [p.version for p in mine]
    assert versions == sorted(versions)  # never an older version after a newer one
    assert len(versions) < EDITS  # bursts were coalesced: stale analyses were cancelled
