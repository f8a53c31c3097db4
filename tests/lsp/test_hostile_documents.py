"""The language server stays up on hostile documents (issue 31.1): a subscript of 14,000 terms
segfaulted it on open (libclang ran in its process), and ``#include "/dev/stdin"`` made libclang
read the server's own JSON-RPC pipe, wedging it for good. Each is a diagnostic now, and a normal
document opened after them is analysed as always."""

from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.lsp_helpers import CONFIG, open_fixture, published, start

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEEP = (
    "void f(int n, double *A) {\n  for (int i = 0; i < n; i++)\n    A["
    + " + ".join(["i"] * 14_000)
    + "] = 0;\n}\n"
)
STDIN = '#include "/dev/stdin"\nvoid g(int n, double *A) {\n  for (int i = 0; i < n; i++)\n    A[i] = 0;\n}\n'


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


def codes(diags: list[types.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diags)


async def test_hostile_documents_then_a_normal_one(client: LanguageClient) -> None:
    for name, text in (("deep.c", DEEP), ("stdin.c", STDIN)):
        uri = f"file:///tmp/hexplore-hostile/{name}"
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "c", 1, text)))
        got = codes(await published(client, uri, 1, timeout=60))
        assert got == (["FrontendCrashed"] if name == "deep.c" else ["IncludeRefused", "ParallelLoop", "ScopDetected"])
    uri = open_fixture(client, "matmul.c")
    assert "ScopDetected" in codes(await published(client, uri, 1, timeout=60))
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 0))
    )
    assert hover is None or hover.contents is not None  # it still answers requests
