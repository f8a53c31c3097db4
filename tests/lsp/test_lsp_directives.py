"""End to end (a real `hexplore-lsp` over stdio, pytest-lsp's client): the offload code actions on
a nest's outer loop ("Offload to the GPU (block 32x8)", "Keep on the CPU"), previewable
WorkspaceEdits that insert a `#pragma hexplore` line with the loop's indentation; the GPU one
disabled with the reason where no loop is parallel; the applied pragma analysed again and its
decision published ("offloaded to the GPU as kernel0 because of ..."); a malformed pragma's
diagnostic on the word at fault, and "Remove hexplore directive" on its line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.lsp_helpers import (
    SERVER,
    decided,
    fixture_uri,
    make_client,
    open_fixture,
    published,
    start,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

URI = fixture_uri("directives.c")
TEXT = (Path(__file__).parent / "fixtures" / "directives.c").read_text()
CACHE = Path(os.environ.get("TMPDIR", "/tmp")) / f"hexplore-lsp-directives-{os.getpid()}"
CONFIG = ClientServerConfig(
    server_command=SERVER, client_factory=make_client, server_env={**os.environ, "HEXPLORE_CACHE_DIR": str(CACHE)}
)
REWRITE = [types.CodeActionKind.RefactorRewrite]


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client)
    open_fixture(lsp_client, "directives.c")
    await published(lsp_client, URI, 1)
    yield
    await lsp_client.shutdown_session()


async def _actions(client: LanguageClient, uri: str, line: int, char: int) -> dict[str, types.CodeAction]:
    at = types.Range(types.Position(line, char), types.Position(line, char))
    context = types.CodeActionContext(diagnostics=[], only=REWRITE)
    got = await client.text_document_code_action_async(types.CodeActionParams(types.TextDocumentIdentifier(uri), at, context))
    return {a.title: a for a in got or [] if isinstance(a, types.CodeAction)}


def _edits(action: types.CodeAction) -> list[types.TextEdit]:
    assert action.edit is not None and action.edit.document_changes
    (change,) = action.edit.document_changes
    assert isinstance(change, types.TextDocumentEdit)
    return [e for e in change.edits if isinstance(e, types.TextEdit)]


async def test_offload_and_keep_on_a_nests_outer_loop_insert_the_pragma_with_its_indentation(client: LanguageClient) -> None:
    actions = await _actions(client, URI, 4, 4)  # scale's `for (int i ...)`
    gpu, cpu = actions["Offload to the GPU (block 32x8)"], actions["Keep on the CPU"]
    assert gpu.disabled is None and cpu.disabled is None
    (insert,) = _edits(gpu)
    assert insert.range == types.Range(types.Position(4, 0), types.Position(4, 0))
    assert insert.new_text == "  #pragma hexplore gpu block(32, 8)\n"
    assert [e.new_text for e in _edits(cpu)] == ["  #pragma hexplore cpu\n"]
    assert "Offload to the GPU (block 32x8)" not in await _actions(client, URI, 5, 6)  # the inner loop


async def test_an_offload_action_is_previewed_as_diffs_of_the_source_and_the_cuda(client: LanguageClient) -> None:
    gpu = (await _actions(client, URI, 4, 4))["Offload to the GPU (block 32x8)"]
    assert gpu.data == {"uri": URI, "function": "scale", "line": 5, "column": 3, "title": gpu.title}
    preview = await client.workspace_execute_command_async(types.ExecuteCommandParams("hexplore.previewRewrite", [gpu.data]))
    assert preview is not None and preview["language"] == "diff"
    assert "+  #pragma hexplore gpu block(32, 8)" in preview["text"]
    assert "-    dim3 k0_block(32, 16);" in preview["text"] and "+    dim3 k0_block(32, 8);" in preview["text"]


async def test_offloading_a_nest_without_a_parallel_loop_is_disabled_with_the_reason(client: LanguageClient) -> None:
    gpu = (await _actions(client, URI, 12, 4))["Offload to the GPU (block 32x8)"]  # prefix's `for (int i ...)`
    assert gpu.edit is None and gpu.disabled is not None
    assert gpu.disabled.reason.startswith("cannot offload: no loop of this nest can run its iterations in parallel")


async def test_a_malformed_pragma_is_a_diagnostic_and_its_line_can_be_removed(client: LanguageClient) -> None:
    diags = await published(client, URI, 1)
    (bad,) = [d for d in diags if d.code == "MalformedDirective"]
    assert bad.range == types.Range(types.Position(11, 23), types.Position(11, 27))  # `blok`
    assert bad.message.startswith("`#pragma hexplore gpu` takes `block(...)` and `tile(...)`, not `blok`")
    remove = (await _actions(client, URI, 11, 5))["Remove hexplore directive"]
    (delete,) = _edits(remove)
    assert delete.range == types.Range(types.Position(11, 0), types.Position(12, 0)) and delete.new_text == ""


async def test_an_applied_offload_action_is_the_nests_decision(client: LanguageClient) -> None:
    uri = "file:///tmp/hexplore-directives/applied.c"
    open_fixture(client, "directives.c", uri=uri)
    await published(client, uri, 1)
    (insert,) = _edits((await _actions(client, uri, 4, 4))["Offload to the GPU (block 32x8)"])
    change = types.TextDocumentContentChangePartial(range=insert.range, text=insert.new_text)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=2), [change])
    )
    diags = await decided(client, uri, 2)
    (offloaded,) = [d for d in diags if d.code == "OffloadedByDirective"]
    assert offloaded.range.start.line == 5  # the nest's outer loop, now a line further down
    assert offloaded.message.startswith("offloaded to the GPU as kernel0 because of `#pragma hexplore gpu block(32, 8)` at line 5")
    (mapped,) = [d for d in diags if d.code == "Offloaded" and d.range.start.line == 5]
    assert mapped.message.endswith("block 32x8 threads")
    offload = {"Offload to the GPU (block 32x8)", "Keep on the CPU"}
    again = await _actions(client, uri, 5, 4)
    assert [t for t in again if t in offload] == ["Keep on the CPU"]  # offloading again changes nothing
    assert [e.new_text for e in _edits(again["Keep on the CPU"])] == ["#pragma hexplore cpu"]  # in place of the gpu one
