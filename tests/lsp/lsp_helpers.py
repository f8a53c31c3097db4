"""Shared helpers for the end-to-end LSP tests: a real `hexplore-lsp` subprocess over stdio, driven
by pytest-lsp's client, which also records every publishDiagnostics with its version."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from pygls.protocol import default_converter
from pytest_lsp import ClientServerConfig, LanguageClient
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from core_compiler.remark_names import REMARK_NAMES
from explorer.offload import DECISION_PASSES

FIXTURES = Path(__file__).parent / "fixtures"
# The remarks of the back end's offload decisions, which the server publishes a moment after the
# analysis' diagnostics of the same version (lsp/server.py `_decide_soon`).
DECISION_CODES = frozenset(n for n, e in REMARK_NAMES.items() if set(e.passes) & set(DECISION_PASSES))
SERVER = [sys.executable, "-m", "lsp.server"]


def make_client() -> LanguageClient:
    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # type: ignore[attr-defined]

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)  # type: ignore[attr-defined]

    register_lsp_features(
        client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish}
    )
    return client


CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client)


def capabilities() -> types.ClientCapabilities:
    return pytest_lsp.client_capabilities("visual-studio-code")


async def start(client: LanguageClient, **init: Any) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(), root_uri=FIXTURES.as_uri(), **init
        )
    )


def fixture_uri(name: str) -> str:
    return (FIXTURES / name).as_uri()


def open_fixture(client: LanguageClient, name: str, uri: str | None = None, version: int = 1) -> str:
    """Open `fixtures/name` (under `uri` if given: tests that edit use their own URI)."""
    uri = uri or fixture_uri(name)
    text = (FIXTURES / name).read_text()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "c", version, text))
    )
    return uri


async def published(
    client: LanguageClient, uri: str, version: int, timeout: float = 30.0
) -> list[types.Diagnostic]:
    """The diagnostics published for `uri` at `version` (waiting for them)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        for p in reversed(client.published):  # type: ignore[attr-defined]
            if p.uri == uri and p.version == version:
                return list(p.diagnostics)
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"no diagnostics for {uri} version {version}")
        await asyncio.sleep(0.01)


def change(
    client: LanguageClient, uri: str, version: int, text: str, start: tuple[int, int], end: tuple[int, int]
) -> None:
    rng = types.Range(types.Position(*start), types.Position(*end))
    event = types.TextDocumentContentChangePartial(range=rng, text=text)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version), [event]
        )
    )


async def decided(
    client: LanguageClient, uri: str, version: int, timeout: float = 60.0
) -> list[types.Diagnostic]:
    """The diagnostics published for `uri` at `version` once they carry offload decisions."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        for p in reversed(client.published):  # type: ignore[attr-defined]
            if p.uri == uri and p.version == version and any(str(d.code) in DECISION_CODES for d in p.diagnostics):
                return list(p.diagnostics)
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError(f"no offload decisions for {uri} version {version}")
        await asyncio.sleep(0.02)


def summary(
    diags: list[types.Diagnostic], decisions: bool = False
) -> list[tuple[str, int, int, int, int, int, str]]:
    """(code, start line, start char, end line, end char, severity, message), sorted; without
    the offload decisions unless `decisions` (whether a publish has them yet is timing)."""
    return sorted(
        (
            str(d.code),
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            int(d.severity or 0),
            d.message,
        )
        for d in diags
        if decisions or str(d.code) not in DECISION_CODES
    )
