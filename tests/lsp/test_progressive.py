"""A document's first analysis publishes as it goes (`lsp/server.py` `_partial_publisher`), in
process: its first publish holds the first function's diagnostics, the last one every
function's, exactly those of the finished analysis; later analyses publish once, complete."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types

from lsp import diagnostics
from lsp import server as lsp_server
from lsp.positions import LineIndex
from lsp.server import HexploreServer
from lsp.staleness import EditLog

pytestmark = pytest.mark.asyncio

URI = "file:///tmp/hexplore-progressive/six.c"
FUNCTION = """void f{k}(int n, double *restrict a)
{{
  for (int i = 0; i < n; i++)
    a[i] = {k}.0 * a[i];
}}
"""
FUNCTIONS = 6
TEXT = "".join(FUNCTION.format(k=k) for k in range(FUNCTIONS))


def _server(published: list[types.PublishDiagnosticsParams]) -> HexploreServer:
    server = HexploreServer()
    server.text_document_publish_diagnostics = published.append  # type: ignore[method-assign]
    server._index = lambda text: LineIndex(text, "utf-16")  # type: ignore[method-assign]
    server._decide_soon = lambda uri: None  # type: ignore[method-assign]  # no back end here
    server.protocol.client_capabilities = types.ClientCapabilities()  # as initialize would set
    return server


def _lines(p: types.PublishDiagnosticsParams) -> set[int]:
    return {d.range.start.line for d in p.diagnostics}


def _final(server: HexploreServer) -> list[Any]:
    analysis = server.explorer.latest(URI)
    assert analysis is not None
    return diagnostics.diagnostics(analysis, LineIndex(analysis.document.text, "utf-16"))


async def test_a_first_analysis_publishes_each_function_as_it_is_done(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lsp_server, "PARTIAL_PERIOD_S", 0.0)  # every function's, not every 0.25 s
    published: list[types.PublishDiagnosticsParams] = []
    server = _server(published)
    server.explorer.open(URI, TEXT, version=1)
    server.edits[URI] = EditLog()
    server._schedule(URI)
    await server.tasks[URI]
    lines = len(FUNCTION.splitlines())
    assert [p.version for p in published] == [1] * FUNCTIONS
    for k, p in enumerate(published[:-1]):  # the partial ones: the functions done so far
        assert p.diagnostics and max(_lines(p)) < (k + 1) * lines, k
        assert _lines(published[k + 1]) > _lines(p)
    assert published[-1].diagnostics == _final(server)

    published.clear()  # an edit: one publish, complete
    server.explorer.update(URI, TEXT.replace("a[i] = 1.0", "a[i] = 7.0"), version=2)
    server._schedule(URI)
    await server.tasks[URI]
    assert [p.version for p in published] == [2] and published[0].diagnostics == _final(server)
    server.on_shutdown(None)


async def test_a_small_file_publishes_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lsp_server, "PARTIAL_PERIOD_S", 0.0)
    published: list[types.PublishDiagnosticsParams] = []
    server = _server(published)
    server.explorer.open(URI, "".join(FUNCTION.format(k=k) for k in range(lsp_server.PARTIAL_MIN_FUNCTIONS - 1)), 1)
    server._schedule(URI)
    await server.tasks[URI]
    assert len(published) == 1 and published[0].diagnostics == _final(server)
    server.on_shutdown(None)


class _Stop(Exception):
    """Stops an analysis after its first published function."""


async def test_a_hover_on_a_function_done_answers_before_the_file_is(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first analysis stopped after its first function (as if still running): a hover there
    answers from what was published; one on a later function waits for an analysis of it."""
    published: list[types.PublishDiagnosticsParams] = []
    server = _server(published)
    server.explorer.open(URI, TEXT, version=1)

    def first(partial: Any, left: int) -> None:
        server._publish_partial(partial)
        raise _Stop

    with pytest.raises(_Stop):
        server.explorer.analyze(URI, progress=first)
    assert len(published) == 1 and server.explorer.latest(URI) is None
    doc = types.TextDocumentIdentifier(URI)
    found = await server.on_hover(types.HoverParams(doc, types.Position(2, 2)))  # f0's loop
    assert found is not None and "loop `i`" in str(found.contents) and server.analyses == 0
    later = types.Position(2 + 3 * len(FUNCTION.splitlines()), 2)  # f3's loop: not analysed yet
    found = await server.on_hover(types.HoverParams(doc, later))
    assert found is not None and "loop `i`" in str(found.contents) and server.analyses == 1
    assert server.partial == {}  # the complete analysis replaced it
    server.on_shutdown(None)
