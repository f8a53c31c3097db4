"""End to end: a real `hexplore-lsp` process over stdio, driven by pytest-lsp's client."""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pytest_lsp import LanguageClient

from tests.lsp.lsp_helpers import (
    CONFIG,
    FIXTURES,
    change,
    decided,
    fixture_uri,
    open_fixture,
    published,
    start,
    summary,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

HINT, INFO, WARN, ERROR = 4, 3, 2, 1


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    await start(lsp_client)
    for name in ("matmul.c", "indirect.c", "broken.c"):
        open_fixture(lsp_client, name)
    yield
    await lsp_client.shutdown_session()


def _doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri)


def _json(value: Any) -> Any:
    """The result as plain JSON values (pygls' client turns objects into namedtuples)."""
    if hasattr(value, "_asdict"):
        return {k: _json(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json(v) for v in value]
    return value


async def _request(client: LanguageClient, method: str, params: Any) -> Any:
    return _json(await client.protocol.send_request_async(method, params))


async def _raw_request(client: LanguageClient, msg_id: str, method: str, params: Any) -> Any:
    """Send a request exactly as given (the client's typed API would refuse malformed params)."""
    fut: Future[Any] = Future()
    client.protocol._request_futures[msg_id] = fut
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return await asyncio.wait_for(asyncio.wrap_future(fut), 20)


# ----------------------------------------------------------------------------- diagnostics


async def test_diagnostics_of_matmul(client: LanguageClient) -> None:
    diags = summary(await published(client, fixture_uri("matmul.c"), 1))
    assert (
        "LoopCarriedDependence", 22, 2, 22, 29, HINT,
        "loop `i` is not parallel: it carries the flow dependence S0 -> S0 on `a` (distance (1))",
    ) in diags  # fmt: skip
    assert ("ParallelLoop", 4, 2, 4, 29, HINT, "loop `i` is parallel: no iteration depends on another") in diags
    assert (
        "ReductionLoop", 7, 6, 7, 33, HINT,
        "loop `k` carries only the reduction into `C`: it can run in parallel as a reduction",
    ) in diags  # fmt: skip
    assert [d[0] for d in diags].count("ScopDetected") == 3
    assert len(diags) == 11


async def test_diagnostics_of_indirect_access(client: LanguageClient) -> None:
    diags = summary(await published(client, fixture_uri("indirect.c"), 1))
    assert diags == [
        (
            "ImpureCall", 12, 4, 12, 33, WARN,
            "`fprintf` takes a `FILE *` (parameter 1), so hexplore cannot tell what the call reads or "
            "writes; it models a call of a function whose prototype takes and returns only numbers and "
            "pointers to numbers",
        ),
        (
            "IndirectAccess", 6, 9, 6, 15, WARN,
            "`hist[idx[i]]` takes its subscript from the array `idx`, so which element it "
            "touches is only known at run time",
        ),
    ]  # fmt: skip


async def test_syntax_error_in_one_function_leaves_the_other_analysed(client: LanguageClient) -> None:
    diags = summary(await published(client, fixture_uri("broken.c"), 1))
    assert diags == [
        ("FunctionHasErrors", 2, 5, 2, 11, INFO,
         "`broken` was not analysed: it has 1 syntax error(s); fix them first"),
        ("ParallelLoop", 10, 2, 10, 29, HINT, "loop `i` is parallel: no iteration depends on another"),
        ("ScopDetected", 10, 2, 11, 23, HINT,
         "modeled loop nest: 1 statement(s), 1 loop(s); sizes (parameters): `n`"),
        ("SyntaxError", 5, 21, 5, 21, ERROR, "expected ';' after expression"),
    ]  # fmt: skip


async def test_diagnostic_fields(client: LanguageClient) -> None:
    diags = await published(client, fixture_uri("matmul.c"), 1)
    carried = next(d for d in diags if d.code == "LoopCarriedDependence")
    assert carried.source == "hexplore"
    href = carried.code_description.href  # type: ignore[union-attr]
    path, anchor = href.split("#")
    assert anchor == "LoopCarriedDependence" and path.endswith("lsp/REMARKS.md")
    doc = Path(path.removeprefix("file://")).read_text()
    assert f'<a id="{anchor}"></a>' in doc
    related = carried.related_information or []
    assert [(r.location.uri, r.location.range.start.line, r.message) for r in related] == [
        (fixture_uri("matmul.c"), 23, "source of the flow dependence: statement S0"),
        (fixture_uri("matmul.c"), 23, "sink of the flow dependence: statement S0"),
    ]


async def test_every_remark_name_is_documented(client: LanguageClient) -> None:
    doc = (FIXTURES.parent.parent.parent / "lsp" / "REMARKS.md").read_text()
    for uri in (fixture_uri(n) for n in ("matmul.c", "indirect.c", "broken.c")):
        for d in await published(client, uri, 1):
            assert f'<a id="{d.code}"></a>' in doc


async def test_open_edit_close(client: LanguageClient) -> None:
    uri = "file:///tmp/hexplore-test/edited.c"
    open_fixture(client, "matmul.c", uri=uri)
    first = summary(await published(client, uri, 1))
    change(client, uri, 2, "// a new first line\n", (0, 0), (0, 0))  # everything moves down
    moved = summary(await published(client, uri, 2))
    assert moved == sorted((c, l1 + 1, c1, l2 + 1, c2, s, m) for c, l1, c1, l2, c2, s, m in first)
    # prefix_sum (now lines 22-26) stops carrying a dependence: a[i] = a[i - 1] + a[i] -> 2 * a[i]
    change(client, uri, 3, "2.0 * a[i]", (24, 11), (24, 26))
    diags = summary(await published(client, uri, 3))
    assert "LoopCarriedDependence" not in [d[0] for d in diags]
    assert ("ParallelLoop", 23, 2, 23, 29, HINT, "loop `i` is parallel: no iteration depends on another") in diags
    client.text_document_did_close(types.DidCloseTextDocumentParams(_doc(uri)))
    for _ in range(200):
        if not client.diagnostics.get(uri, True):
            break
        await asyncio.sleep(0.01)
    assert list(client.diagnostics[uri]) == []


# ----------------------------------------------------------------------------- hover


async def _hover(client: LanguageClient, line: int, char: int) -> types.Hover | None:
    params = types.HoverParams(_doc(fixture_uri("matmul.c")), types.Position(line, char))
    return await client.text_document_hover_async(params)


async def test_hover_on_a_loop_header(client: LanguageClient) -> None:
    hover = await _hover(client, 7, 8)  # for (int k = 0; ...) in matmul
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.contents.kind == types.MarkupKind.Markdown
    assert hover.range == types.Range(types.Position(7, 6), types.Position(7, 33))
    text = hover.contents.value
    assert "### loop `k`" in text
    assert "**reduction**" in text
    assert "[n] -> { [i, j, k] : 0 <= i < n and 0 <= j < n and 0 <= k < n }" in text
    assert "- flow S1→S1 (0,0,1) on `C`" in text


async def test_hover_on_a_sequential_loop(client: LanguageClient) -> None:
    hover = await _hover(client, 22, 5)
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "**not parallel**" in hover.contents.value
    assert "- flow S0→S0 (1) on `a`" in hover.contents.value


async def test_hover_on_an_array_access(client: LanguageClient) -> None:
    await decided(client, fixture_uri("matmul.c"), 1)  # placements come with the offload decisions
    hover = await _hover(client, 8, 22)  # A[i][k]
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert hover.range == types.Range(types.Position(8, 19), types.Position(8, 26))
    text = hover.contents.value
    assert "### read of `A[i][k]` in S1" in text
    assert "[n] -> { S1[i, j, k] -> A[i, k] : 0 <= i < n and 0 <= j < n and 0 <= k < n }" in text
    assert "memory placement: shared memory in kernel0: a 32x16 tile per block (reused within a tile)" in text


async def test_hover_on_a_compound_assignment_shows_read_and_write(client: LanguageClient) -> None:
    await decided(client, fixture_uri("matmul.c"), 1)
    hover = await _hover(client, 8, 9)  # C[i][j] += ...
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "### read and write of `C[i][j]` in S1" in hover.contents.value
    assert "memory placement: registers in kernel0: 4x4 per thread" in hover.contents.value


@pytest.mark.parametrize("line,char", [(0, 3), (2, 1), (10, 0), (18, 5)])
async def test_hover_on_nothing_is_null(client: LanguageClient, line: int, char: int) -> None:
    assert await _hover(client, line, char) is None


# ----------------------------------------------------------------------------- hints, lenses


async def test_inlay_hints(client: LanguageClient) -> None:
    """The loops' facts, and where each nest runs once the back end has decided."""
    await decided(client, fixture_uri("matmul.c"), 1)
    whole = types.Range(types.Position(0, 0), types.Position(100, 0))
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(_doc(fixture_uri("matmul.c")), whole)
    )
    got = [(h.position.line, h.position.character, h.label) for h in hints or []]
    facts = [g for g in got if not str(g[2]).startswith(("GPU", "CPU"))]
    assert facts == [
        (4, 29, "parallel"),
        (5, 31, "parallel"),
        (7, 33, "reduction"),
        (15, 29, "reduction"),
        (22, 29, "carries flow S0→S0 (1)"),
    ]
    where = {(line, col): str(label) for line, col, label in got if (line, col, label) not in facts}
    assert where.keys() == {(4, 29), (15, 29), (22, 29)}, where
    assert re.fullmatch(r"GPU or CPU, decided at run time|GPU kernel0(: ~.* on the GPU vs .* on the CPU)?", where[4, 29])
    assert where[15, 29] == "CPU: the code around it needs its results", where  # `return s` reads it
    assert where[22, 29] == "CPU: too little work", where
    assert all(h.padding_left for h in hints or [])
    tips = {h.position.line: h.tooltip for h in hints or [] if str(h.label) == where.get((h.position.line, 29))}
    assert "offload" in str(tips[4]), tips
    part = types.Range(types.Position(20, 0), types.Position(30, 0))
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(_doc(fixture_uri("matmul.c")), part)
    )
    assert [h.label for h in hints or []] == ["carries flow S0→S0 (1)", "CPU: too little work"]


async def test_code_lenses(client: LanguageClient) -> None:
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(_doc(fixture_uri("broken.c")))
    )
    got = [
        (lens.range.start.line, lens.command.title, lens.command.command, _json(lens.command.arguments))
        for lens in lenses or []
        if lens.command is not None
    ]
    args = [{"uri": fixture_uri("broken.c"), "function": "scale"}]
    assert got == [
        (8, "show schedule tree", "hexplore.showScheduleTree", args),
        (8, "show passes", "hexplore.showPasses", args),
        (8, "show CUDA", "hexplore.showCuda", args),  # the default `target` setting
        (8, "run", "hexplore.run", args),
    ]
    none = await client.text_document_code_lens_async(
        types.CodeLensParams(_doc(fixture_uri("indirect.c")))
    )
    assert not none  # no function there has a modeled loop nest


# ----------------------------------------------------------------------------- custom requests


async def test_functions_request(client: LanguageClient) -> None:
    result = await _request(client, "hexplore/functions", {"uri": fixture_uri("broken.c")})
    got = [
        (f["name"], f["scops"], f["loops"], f["analysed"], f["range"]["start"]["line"], f["selectionRange"]["start"]["character"])
        for f in result
    ]
    assert got == [("broken", 0, 0, False, 2, 5), ("scale", 1, 1, True, 8, 5)]


async def test_passes_and_artifact_requests(client: LanguageClient) -> None:
    uri = fixture_uri("matmul.c")
    passes = await _request(client, "hexplore/passes", {"uri": uri, "function": "matmul"})
    names = [p["name"] for p in passes]
    assert names == [
        "frontend", "scop-detect", "polyhedral-model[0]", "dependences[0]", "ad",
        "schedule[0]", "gpu-mapping[0]", "codegen-cuda[0]", "codegen-opencl[0]", "llvm-ir[0]", "ptx[0]",
    ]
    assert all(p["elapsed_ms"] >= 0 and p["remark_count"] >= 0 for p in passes)
    art = await _request(client, "hexplore/artifact", {"uri": uri, "function": "matmul", "pass": "dependences[0]"})
    assert art["language"] == "plaintext"
    assert art["text"].startswith("dependences of matmul#scop0\n")
    assert "loop k (line 8, depth 2): reduction (parallel as a reduction)" in art["text"]
    cuda = await _request(client, "hexplore/artifact", {"uri": uri, "function": "matmul", "pass": "codegen-cuda[0]"})
    assert cuda["language"] == "cuda-cpp" and re.search(r"__global__ void (__launch_bounds__\(\d+\) )?kernel0\(", cuda["text"])
    mapping = await _request(client, "hexplore/artifact", {"uri": uri, "function": "matmul", "pass": "gpu-mapping[0]"})
    assert "A: shared 32x16" in mapping["text"] and "C: register" in mapping["text"]
    ad = await _request(client, "hexplore/artifact", {"uri": uri, "function": "matmul", "pass": "ad"})
    assert "void matmul_grad(" in ad["text"] and "d_A" in ad["text"]


async def test_schedule_tree_request(client: LanguageClient) -> None:
    tree = await _request(client, "hexplore/scheduleTree", {"uri": fixture_uri("matmul.c"), "function": "matmul"})

    def shape(node: Any) -> Any:
        return (node["kind"], node["detail"], [shape(c) for c in node["children"]])

    assert shape(tree) == (
        "function", "matmul", [("domain", "matmul#scop0", [("band", "i (parallel)", [
            ("band", "j (parallel)", [("band", "k (reduction)", [("sequence", "", [
                ("filter", "S0", [("leaf", "S0: C[i][j] = 0.0", [])]),
                ("filter", "S1", [("leaf", "S1: C[i][j] += A[i][k] * B[k][j]", [])]),
            ])])])])])],
    )  # fmt: skip  the scheduler's tree (schedule[0]), as the TUI shows it: i, j, k one permutable band
    band = tree["children"][0]["children"][0]
    assert band["arcana"] == "[n] -> { S0[i, j] -> [(i)]; S1[i, j, k] -> [(i)] }"
    assert (band["loop"], band["status"], band["carried"], band["permutable"]) == ("i", "parallel", [], True)
    assert band["range"]["start"]["line"] == 4
    k = band["children"][0]["children"][0]
    assert k["arcana"] == "[n] -> { S0[i, j] -> [(0)]; S1[i, j, k] -> [(k)] }" and k["carried"]


async def test_run_request_checks_generated_code_against_the_original(client: LanguageClient) -> None:
    uri = fixture_uri("matmul.c")
    params = {"uri": uri, "function": "matmul", "sizes": {"n": 12}}
    result = await _request(client, "hexplore/run", {**params, "device": "opencl"})
    assert (result["status"], result["device"], result["sizes"], result["kernels"]) == ("ok", "opencl", {"n": 12}, 1)
    assert [(a["name"], a["ok"]) for a in result["arrays"]] == [("C", True), ("A", True), ("B", True)]
    assert result["message"] == "the generated code matches the original (1 kernel(s))"
    cpu = await _request(client, "hexplore/run", params)  # the default device is hexplore run's: cpu
    assert (cpu["status"], cpu["device"], cpu["kernels"]) == ("ok", "cpu", 0) and cpu["variant"]
    assert cpu["reference_ms"] > 0 and cpu["optimized_ms"] > 0 and cpu["bytesTransferred"] == 0
    dot = await _request(client, "hexplore/run", {"uri": uri, "function": "dot"})  # `return s;` after the nest
    assert dot["status"] == "ok" and ("return", True) in [(a["name"], a["ok"]) for a in dot["arrays"]]
    other = await _request(client, "hexplore/run", {"uri": fixture_uri("indirect.c"), "function": "histogram"})
    assert other["status"] == "not-checkable" and other["sizes"] == {"n": 64}
    assert other["message"] == "`histogram` has 0 loop nests hexplore models; a run checks a function that is one such nest (plus scalar set-up and a return)"
    titles = [
        r.title
        for reports in client.progress_reports.values()
        for r in reports
        if isinstance(r, types.WorkDoneProgressBegin)
    ]
    assert "hexplore: running matmul on opencl" in titles
    assert "hexplore: analysing matmul.c" in titles


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "method,params,message",
    [
        ("hexplore/functions", {"uri": "file:///nowhere/x.c"}, "no open document file:///nowhere/x.c"),
        ("hexplore/passes", {"uri": fixture_uri("matmul.c")}, "expected `function` to be a non-empty string"),
        ("hexplore/passes", {"uri": fixture_uri("matmul.c"), "function": "nope"}, "defines no function `nope`"),
        ("hexplore/artifact", {"uri": fixture_uri("matmul.c"), "function": "dot", "pass": "x"}, "has no pass `x`"),
        ("hexplore/scheduleTree", [1, 2], "expected an object of parameters"),
        ("hexplore/run", {"uri": 3, "function": "dot"}, "expected `uri` to be a non-empty string, got 3"),
        ("hexplore/run", {"uri": fixture_uri("matmul.c"), "function": "dot", "sizes": {"n": -1}}, "expected `sizes` to map"),
        ("hexplore/run", {"uri": fixture_uri("matmul.c"), "function": "dot", "device": "tpu"}, "expected `device` to be one of cpu, opencl, cuda"),
        ("textDocument/hover", {"textDocument": {"uri": fixture_uri("matmul.c")}}, "malformed params"),
        ("textDocument/hover", {"textDocument": {"uri": "file:///nowhere/x.c"}, "position": {"line": 0, "character": 0}}, "no open document"),
        ("textDocument/inlayHint", {"textDocument": {"uri": "file:///nowhere/x.c"}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 0}}}, "no open document"),
    ],
)  # fmt: skip
async def test_bad_requests_get_errors_and_the_server_keeps_answering(
    client: LanguageClient, method: str, params: Any, message: str
) -> None:
    with pytest.raises(JsonRpcInvalidParams, match=message.replace("(", r"\(").replace("[", r"\[")):
        await _raw_request(client, f"bad-{method}-{message}", method, params)
    result = await _request(client, "hexplore/functions", {"uri": fixture_uri("indirect.c")})
    assert [f["name"] for f in result] == ["histogram", "report"]


async def test_a_race_in_a_cuda_kernel_is_a_warning(client: LanguageClient) -> None:
    """A `.cu` file: the kernel's model finds the race; the diagnostic is a warning on the write,
    with the other access's range and the witness in its data."""
    uri = open_fixture(client, "races.cu")
    diags = await published(client, uri, 1)
    races = [d for d in diags if d.code == "DataRace"]  # with `a[i - 1]` and with `a[i + 1]`
    assert len(races) == 2 and {d.severity for d in races} == {WARN}
    assert {(d.range.start.line, d.range.start.character, d.range.end.character) for d in races} == {(4, 4, 8)}
    assert sorted(re.search(r"reads `(a\[i [-+] 1\])`", d.message)[1] for d in races) == ["a[i + 1]", "a[i - 1]"]  # type: ignore[index]
    assert any(d.code == "CudaKernelModeled" for d in diags)
