"""End to end (a real `hexplore-lsp` over stdio, pytest-lsp's client): the code lenses' commands
executed by the server, code actions (add `restrict`, loop interchange applied where legal and
refused where not), the back end's offload decisions as diagnostics, and hovers on what hexplore
does not model. One server for the module; its cache directory is the module's own."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.lsp.lsp_helpers import (
    DECISION_CODES,
    SERVER,
    decided,
    fixture_uri,
    make_client,
    open_fixture,
    published,
    start,
    summary,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

URI = fixture_uri("actions.c")
HINT, INFO = 4, 3
CACHE = Path(os.environ.get("TMPDIR", "/tmp")) / f"hexplore-lsp-actions-{os.getpid()}"
CONFIG = ClientServerConfig(
    server_command=SERVER, client_factory=make_client, server_env={**os.environ, "HEXPLORE_CACHE_DIR": str(CACHE)}
)


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    lsp_client.initialized_with = await start(lsp_client)  # type: ignore[attr-defined]
    open_fixture(lsp_client, "actions.c")
    await published(lsp_client, URI, 1)
    yield
    await lsp_client.shutdown_session()


def _doc() -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(URI)


def _at(line: int, char: int) -> types.Range:
    return types.Range(types.Position(line, char), types.Position(line, char))


async def _actions(client: LanguageClient, line: int, char: int, only: list[str] | None = None) -> list[types.CodeAction]:
    context = types.CodeActionContext(diagnostics=[], only=only)
    got = await client.text_document_code_action_async(types.CodeActionParams(_doc(), _at(line, char), context))
    return [a for a in got or [] if isinstance(a, types.CodeAction)]


def _apply(text: str, edit: types.WorkspaceEdit | None) -> str:
    """`text` with the edit's changes made (what the editor does)."""
    assert edit is not None and edit.document_changes
    (change,) = edit.document_changes
    assert isinstance(change, types.TextDocumentEdit) and change.text_document.version == 1
    lines = text.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    for e in sorted(change.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        start = offsets[e.range.start.line] + e.range.start.character
        end = offsets[e.range.end.line] + e.range.end.character
        text = text[:start] + e.new_text + text[end:]
    return text


def _json(value: Any) -> Any:
    if hasattr(value, "_asdict"):
        return {k: _json(v) for k, v in value._asdict().items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


# ----------------------------------------------------------------------------- executeCommand


async def test_the_server_executes_every_code_lens_command(client: LanguageClient) -> None:
    caps = client.initialized_with.capabilities  # type: ignore[attr-defined]
    provided = set(caps.execute_command_provider.commands)
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(_doc()))
    emitted = {lens.command.command for lens in lenses or [] if lens.command is not None}
    assert emitted == {"hexplore.showScheduleTree", "hexplore.showPasses", "hexplore.showCuda", "hexplore.run"}
    assert emitted <= provided and "hexplore.showOpenCL" in provided
    arg = {"uri": URI, "function": "mm"}
    cuda = _json(await client.workspace_execute_command_async(types.ExecuteCommandParams("hexplore.showCuda", [arg])))
    assert cuda["title"] == "hexplore: CUDA of mm" and cuda["language"] == "cuda-cpp"
    assert "__global__" in cuda["text"] and "kernel0" in cuda["text"]
    shown = client.shown_documents[-1]  # the client supports window/showDocument
    path = Path(shown.uri.removeprefix("file://"))
    assert path.suffix == ".cu" and path.read_text() == cuda["text"] and str(path).startswith(str(CACHE))
    tree = _json(await client.workspace_execute_command_async(types.ExecuteCommandParams("hexplore.showScheduleTree", [arg])))
    assert "band i (parallel)" in tree["text"] and "leaf S0: C[i][j] += A[i][k] * B[k][j]" in tree["text"]
    run = _json(await client.workspace_execute_command_async(
        types.ExecuteCommandParams("hexplore.run", [{**arg, "sizes": {"n": 9}}])
    ))  # fmt: skip
    assert (run["status"], run["device"], run["sizes"]) == ("ok", "cpu", {"n": 9})
    assert run["message"].startswith("hexplore: run mm on cpu (n=9): ok: the generated code matches the original")
    assert run["message"] in [m.message for m in client.messages]


async def test_a_command_with_bad_arguments_is_invalid_params(client: LanguageClient) -> None:
    with pytest.raises(Exception, match="expected one argument"):
        await client.workspace_execute_command_async(types.ExecuteCommandParams("hexplore.showPasses", []))
    with pytest.raises(Exception, match="defines no function `nope`"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams("hexplore.showPasses", [{"uri": URI, "function": "nope"}])
        )


# ----------------------------------------------------------------------------- code actions


async def test_add_restrict_quick_fix(client: LanguageClient) -> None:
    (fix,) = await _actions(client, 7, 8, only=[types.CodeActionKind.QuickFix])  # in mm's nest
    assert fix.title == "add `restrict` to `A`, `B`, `C`" and fix.kind == types.CodeActionKind.QuickFix
    assert fix.is_preferred and [d.code for d in fix.diagnostics or []] == ["NoAliasAssumption"]
    text = (Path(__file__).parent / "fixtures" / "actions.c").read_text()
    fixed = _apply(text, fix.edit).split("\n")[2]
    assert fixed == "void mm(int n, double C[restrict n][n], const double A[restrict n][n], const double B[restrict n][n])"


async def test_interchange_where_legal(client: LanguageClient) -> None:
    actions = await _actions(client, 4, 4)  # on mm's `for (int i ...)`
    (swap,) = [a for a in actions if a.kind == types.CodeActionKind.RefactorRewrite and a.title.startswith("interchange")]
    assert swap.title == "interchange loops `i` and `j`" and swap.disabled is None
    text = (Path(__file__).parent / "fixtures" / "actions.c").read_text()
    assert _apply(text, swap.edit).split("\n")[4:6] == ["  for (int j = 0; j < n; j++)", "    for (int i = 0; i < n; i++)"]


async def test_an_applied_interchange_is_analysed_as_the_swapped_nest(client: LanguageClient) -> None:
    uri = "file:///tmp/hexplore-actions/swapped.c"
    open_fixture(client, "actions.c", uri=uri)
    await published(client, uri, 1)
    context = types.CodeActionContext(diagnostics=[], only=[types.CodeActionKind.RefactorRewrite])
    got = await client.text_document_code_action_async(types.CodeActionParams(types.TextDocumentIdentifier(uri), _at(4, 4), context))
    (swap,) = [a for a in got or [] if isinstance(a, types.CodeAction) and a.title.startswith("interchange")]
    assert swap.edit is not None and swap.edit.document_changes
    (edit,) = swap.edit.document_changes
    assert isinstance(edit, types.TextDocumentEdit)
    changes = [types.TextDocumentContentChangePartial(range=e.range, text=e.new_text)
               for e in sorted(edit.edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True)]  # fmt: skip
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=2), changes)
    )
    after = summary(await published(client, uri, 2))
    assert ("ParallelLoop", 4, 2, 4, 29, HINT, "loop `j` is parallel: no iteration depends on another") in after
    assert ("ParallelLoop", 5, 4, 5, 31, HINT, "loop `i` is parallel: no iteration depends on another") in after


async def test_interchange_refused_where_a_dependence_would_be_reversed(client: LanguageClient) -> None:
    actions = await _actions(client, 12, 4, only=[types.CodeActionKind.RefactorRewrite])  # skew's `for (int i ...)`
    (swap,) = [a for a in actions if a.title.startswith("interchange")]
    assert swap.title == "interchange loops `i` and `j`" and swap.edit is None
    assert swap.disabled is not None and swap.disabled.reason == (
        "`a[i][j]` is written in iteration (i, j) and read as `a[i - 1][j + 1]` in iteration (i+1, j-1): "
        "swapping `i` and `j` would run the read first"
    )
    assert await _actions(client, 13, 6, only=[types.CodeActionKind.RefactorRewrite]) == []  # `j`: nothing nested


async def test_schedule_rewrites_on_a_loop_header(client: LanguageClient) -> None:
    mm = await _actions(client, 4, 4, only=[types.CodeActionKind.RefactorRewrite])
    loops = ("interchange", "tile", "unroll", "skew", "fuse", "distribute")  # the loop rewrites, not the offload ones
    assert [a.title for a in mm if a.disabled is None and a.edit is not None and a.title.startswith(loops)] == [
        "interchange loops `i` and `j`",
        "tile loops `i`, `j`, `k` by 16x16x16", "tile loops `i`, `j`, `k` by 32x32x32", "tile loops `i`, `j`, `k` by 64x64x64",
        "unroll `i` by 2 and jam into `j`", "unroll `i` by 4 and jam into `j`",
    ]  # fmt: skip
    text = (Path(__file__).parent / "fixtures" / "actions.c").read_text()
    tiled = _apply(text, next(a for a in mm if a.title.endswith("32x32x32")).edit).split("\n")
    assert tiled[6:9] == [
        "      for (int k_t = 0; k_t < n; k_t += 32)",
        "        for (int i = i_t; i < (i_t + 32 < n ? i_t + 32 : n); i++)",
        "          for (int j = j_t; j < (j_t + 32 < n ? j_t + 32 : n); j++)",
    ]
    wave = await _actions(client, 12, 4, only=[types.CodeActionKind.RefactorRewrite])
    by_title = {a.title: a for a in wave}
    tile = by_title["tile loops `i`, `j`"]
    assert tile.edit is None and tile.disabled is not None and tile.disabled.reason == (
        "`a[i][j]` is written in iteration (i, j) and read as `a[i - 1][j + 1]` in iteration (i+1, j-1), "
        "a step back in `j`: tiling `i`, `j` could run the read first"
    )
    assert by_title["unroll `i` and jam into `j`"].disabled is not None
    skewed = _apply(text, by_title["skew `j` by 1*`i`"].edit).split("\n")
    assert skewed[12:18] == [
        "  for (int i = 1; i < n; i++)",
        "    for (int j_s = 0 + (1); j_s < (n - 1) + (n - 1); j_s++) {",
        "      int j = j_s - i;",
        "      if (j >= 0 && j < (n - 1))",
        "        a[i][j] = a[i - 1][j + 1];",
        "    }",
    ]


async def test_a_rewrite_is_previewed_as_diffs_of_the_source_and_the_generated_c(client: LanguageClient) -> None:
    mm = await _actions(client, 4, 4, only=[types.CodeActionKind.RefactorRewrite])
    jam = next(a for a in mm if a.title == "unroll `i` by 2 and jam into `j`")
    assert jam.data == {"uri": URI, "function": "mm", "line": 5, "column": 3, "title": jam.title}
    preview = _json(await client.workspace_execute_command_async(
        types.ExecuteCommandParams("hexplore.previewRewrite", [jam.data])
    ))  # fmt: skip
    assert preview["title"] == "hexplore: preview of unroll `i` by 2 and jam into `j`" and preview["language"] == "diff"
    text = preview["text"]
    assert "+++ actions.c (unroll `i` by 2 and jam into `j`)" in text
    assert "-  for (int i = 0; i < n; i++)" in text and "+  for (int i = 0; i < 0 + (n - 0) / 2 * 2; i += 2)" in text
    assert "--- actions.c: C of mm" in text  # hexplore's C of the function, before and after
    assert Path(client.shown_documents[-1].uri.removeprefix("file://")).suffix == ".diff"
    with pytest.raises(Exception, match="no `tile loops `i`, `j`` is offered there in mm any more"):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams("hexplore.previewRewrite", [{**jam.data, "title": "tile loops `i`, `j`"}])
        )


# ----------------------------------------------------------------------------- offload decisions


async def test_offload_decisions_are_published_on_each_nests_outer_loop(client: LanguageClient) -> None:
    diags = summary(await decided(client, URI, 1), decisions=True)
    mine = [d for d in diags if d[0] in DECISION_CODES]
    got = {(code, line, char, end_line, end_char, severity) for code, line, char, end_line, end_char, severity, _ in mine}
    assert got == {
        ("RuntimeOffloadCheck", 4, 2, 4, 29, HINT), ("Offloaded", 4, 2, 4, 29, INFO),  # mm
        ("RuntimeOffloadCheck", 12, 2, 12, 29, HINT), ("Offloaded", 12, 2, 12, 29, INFO),  # skew
        ("KeptOnCpu", 19, 2, 19, 30, INFO),  # small: 16x16
    }  # fmt: skip
    message = {code: m for code, line, *_, m in mine if line == 4}
    assert message["Offloaded"].startswith("offloaded to the GPU as kernel0: statements S0")
    kept = next(m for code, *_, m in mine if code == "KeptOnCpu")
    assert kept == "kept on CPU: about 1.3e3 dynamic instructions, below the offload threshold of 2.6e6"
    functions = _json(await client.protocol.send_request_async("hexplore/functions", {"uri": URI}))
    passed = {f["name"]: f["remarks"]["passed"] for f in functions}
    assert passed == {"mm": 1, "skew": 1, "small": 0, "histogram": 0}


# ----------------------------------------------------------------------------- hovers


async def _hover_text(client: LanguageClient, line: int, char: int) -> tuple[str, types.Range | None]:
    found = await client.text_document_hover_async(types.HoverParams(_doc(), types.Position(line, char)))
    assert found is not None and isinstance(found.contents, types.MarkupContent)
    return found.contents.value, found.range


async def test_hover_on_an_access_hexplore_does_not_model(client: LanguageClient) -> None:
    text, rng = await _hover_text(client, 27, 11)  # pix[i] in hist[pix[i]] += 1
    assert rng == types.Range(types.Position(27, 9), types.Position(27, 15))
    assert text.startswith("### `pix[i]`: not modeled\n")
    assert "- `hist[pix[i]]` takes its subscript from the array `pix`, so which element it touches is only known at run time (`IndirectAccess`)" in text
    text, rng = await _hover_text(client, 27, 5)  # hist
    assert text.startswith("### `hist[pix[i]] += 1`: not modeled\n") and "`IndirectAccess`" in text
    text, rng = await _hover_text(client, 26, 3)  # the loop's header
    assert text.startswith("### loop `i`: not modeled\n") and rng == types.Range(types.Position(26, 2), types.Position(26, 29))
