"""Configuration over LSP: initializationOptions, didChangeConfiguration (push and pull), bad
values, and flags from compile_commands.json."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.lsp_helpers import CONFIG, DECISION_CODES, FIXTURES, capabilities

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await lsp_client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(),
            root_uri=FIXTURES.as_uri(),
            initialization_options={"hexplore": {"defines": ["N=64"], "target": "opencl"}},
        )
    )
    yield
    await lsp_client.shutdown_session()


def _open(client: LanguageClient, uri: str, text: str) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "c", 1, text))
    )


async def _next_publish(client: LanguageClient, uri: str, after: int) -> list[str]:
    """The codes of the first diagnostics published for `uri` after the `after`-th publish, but
    for the offload decisions; a publish that only adds those to the one before is skipped."""
    for _ in range(2000):
        mine = [_codes(p) for p in client.published if p.uri == uri]  # type: ignore[attr-defined]
        for k in range(after, len(mine)):
            analysis, decisions = mine[k]
            if not (decisions and k > 0 and mine[k - 1][0] == analysis):
                return analysis
        await asyncio.sleep(0.01)
    raise TimeoutError(uri)


def _codes(p: types.PublishDiagnosticsParams) -> tuple[list[str], bool]:
    codes = sorted(str(d.code) for d in p.diagnostics)
    return [c for c in codes if c not in DECISION_CODES], any(c in DECISION_CODES for c in codes)


def _count(client: LanguageClient, uri: str) -> int:
    return sum(p.uri == uri for p in client.published)  # type: ignore[attr-defined]


async def test_settings_from_initialization_options_then_push_then_pull(client: LanguageClient) -> None:
    uri = (FIXTURES / "sizes.c").as_uri()
    _open(client, uri, (FIXTURES / "sizes.c").read_text())
    assert await _next_publish(client, uri, 0) == ["ParallelLoop", "ParallelLoop", "ScopDetected"]

    n = _count(client, uri)
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"hexplore": {"defines": []}})
    )
    codes = await _next_publish(client, uri, n)
    assert codes.count("SyntaxError") == 5 and "FunctionHasErrors" in codes

    n = _count(client, uri)
    client.set_configuration({"defines": ["N=32"]}, section="hexplore")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert await _next_publish(client, uri, n) == ["ParallelLoop", "ParallelLoop", "ScopDetected"]


async def test_a_bad_setting_is_reported_and_ignored(client: LanguageClient) -> None:
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"hexplore": {"tileSizes": [32, 0]}})
    )
    for _ in range(500):
        if client.messages:
            break
        await asyncio.sleep(0.01)
    (msg,) = [m for m in client.messages if m.message.startswith("hexplore: ignoring")]
    assert msg.type == types.MessageType.Warning
    assert msg.message == (
        "hexplore: ignoring tileSizes: expected a list of positive integers, got [32, 0]"
    )


async def test_flags_from_compile_commands(client: LanguageClient, tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "include").mkdir()
    (tmp_path / "build").mkdir()
    (tmp_path / "include" / "size.h").write_text("#define M 8\n")
    source = tmp_path / "src" / "kernel.c"
    source.write_text(
        '#include "size.h"\n'
        "void k(double A[M][K]) {\n"
        "  for (int i = 0; i < M; i++)\n"
        "    A[i][0] = 1.0;\n"
        "}\n"
    )
    entry = {"directory": str(tmp_path / "build"), "file": "../src/kernel.c",
             "command": "cc -I../include -DK=4 -O2 -c ../src/kernel.c -o kernel.o"}  # fmt: skip
    (tmp_path / "build" / "compile_commands.json").write_text(json.dumps([entry]))
    uri = source.as_uri()
    _open(client, uri, source.read_text())
    assert await _next_publish(client, uri, 0) == ["ParallelLoop", "ScopDetected"]
