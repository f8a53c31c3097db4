"""The explorer workspace: documents, the per-function cache, relocation, traces, cancellation."""

from __future__ import annotations

import functools
import random
import threading
from pathlib import Path

import pytest

from core_compiler.analysis import analyze_file
from core_compiler.frontend import ParseOptions, ir
from core_compiler.source import SourceRange
from explorer.errors import Cancelled, UnknownDocument, UnknownFunction, UnknownPass
from explorer.parsing import DocumentParser, FunctionSource, ParsedFile
from explorer.relocate import Remap, TextAt
from explorer.settings import Settings
from explorer.workspace import DocumentAnalysis, TextChange, Workspace, apply_changes, path_for_uri

FIXTURES = Path(__file__).parents[1] / "lsp" / "fixtures"
URI = "file:///tmp/hexplore-ws/matmul.c"
PATH = "/tmp/hexplore-ws/matmul.c"
MATMUL = (FIXTURES / "matmul.c").read_text()


def origins(result: DocumentAnalysis) -> dict[str, str]:
    return {f.name: f.origin for f in result.functions}


def assert_same_as_core(result: DocumentAnalysis, options: ParseOptions | None = None) -> None:
    """The incremental result is exactly what the core computes from scratch for this text."""
    fresh = analyze_file(result.document.path, result.document.text, options)
    assert result.all_remarks() == fresh.all_remarks()
    assert [f.analysis.function for f in result.functions] == [f.function for f in fresh.functions]


@pytest.fixture
def ws() -> Workspace:
    w = Workspace()
    w.open(URI, MATMUL, version=1)
    return w


def test_first_analysis_analyses_every_function(ws: Workspace) -> None:
    result = ws.analyze(URI)
    assert result.version == 1
    assert origins(result) == {"matmul": "analysed", "dot": "analysed", "prefix_sum": "analysed"}
    assert_same_as_core(result)


def test_an_edit_in_one_function_reanalyses_only_that_function(ws: Workspace) -> None:
    ws.analyze(URI)
    ws.edit(URI, [TextChange("2.0 * a[i]", (23, 11), (23, 26))], version=2)  # in prefix_sum
    result = ws.analyze(URI)
    assert origins(result) == {"matmul": "cached", "dot": "cached", "prefix_sum": "analysed"}
    assert result.stats.analysed == 1 and result.stats.reused == 2
    assert "ParallelLoop" in [r.name for r in result.function("prefix_sum").remarks]  # type: ignore[union-attr]
    assert_same_as_core(result)


def test_functions_below_a_new_line_are_relocated_not_reanalysed(ws: Workspace) -> None:
    ws.analyze(URI)
    ws.edit(URI, [TextChange("    int unused = 0;\n", (4, 0), (4, 0))])  # a line inside matmul
    result = ws.analyze(URI)
    assert origins(result) == {"matmul": "analysed", "dot": "relocated", "prefix_sum": "relocated"}
    assert_same_as_core(result)  # every range (remarks, IR, args) moved by exactly one line
    carried = next(r for r in result.all_remarks() if r.name == "LoopCarriedDependence")
    assert carried.range.line == 24 and carried.args["source_range"]["line"] == 25  # type: ignore[index]


def test_a_relocated_function_gets_a_fresh_trace_on_request(ws: Workspace) -> None:
    ws.analyze(URI)
    ws.edit(URI, [TextChange("\n\n", (0, 0), (0, 0))])
    result = ws.analyze(URI)
    assert not result.function("dot").trace_current  # type: ignore[union-attr]
    frontend = ws.artifact(URI, "dot", "frontend").text
    assert "   @18\n" in frontend  # `double s = 0.0;` is now on line 18 (was 16)
    assert ws.function(URI, "dot").trace_current
    core = analyze_file(PATH, ws.document(URI).text, only="dot").functions[0].trace
    trace = ws.trace(URI, "dot")
    assert [p.text for p in trace[: len(core)]] == [p.text for p in core]
    assert [p.label for p in trace[len(core) :]] == [
        "ad", "schedule[0]", "gpu-mapping[0]", "codegen-cuda[0]", "codegen-opencl[0]", "llvm-ir[0]", "ptx[0]",
    ]


def test_editing_a_comment_between_functions_reuses_them_all(ws: Workspace) -> None:
    ws.analyze(URI)
    ws.edit(URI, [TextChange(" /* a note about dot */", (11, 0), (11, 0))])
    result = ws.analyze(URI)
    assert set(origins(result).values()) == {"cached"}
    ws.edit(URI, [TextChange("// why this is sequential\n", (19, 0), (19, 0))])
    assert origins(ws.analyze(URI)) == {"matmul": "cached", "dot": "cached", "prefix_sum": "relocated"}


def test_a_macro_change_outside_functions_invalidates_them(ws: Workspace) -> None:
    text = "#define STEP 1\n" + MATMUL.replace("a[i - 1]", "a[i - STEP]")
    ws.update(URI, text)
    assert ws.analyze(URI).stats.analysed == 3
    ws.update(URI, text.replace("#define STEP 1", "#define STEP 2"))
    result = ws.analyze(URI)
    assert origins(result)["prefix_sum"] == "analysed"
    assert_same_as_core(result)


HELPER = """static inline int idx(int i, int j, int n) { return i * n + j; }

void flat(int n, int m, double *a) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      a[idx(i, j, m)] = 1.0;
}
"""


def test_editing_an_inlined_helper_reanalyses_its_callers() -> None:
    """`flat` inlines `idx`: its own text is unchanged, yet it now writes `a` column by column."""
    ws, uri = Workspace(), "file:///tmp/hexplore-ws/helper.c"

    def write_of_flat(result: DocumentAnalysis) -> str:
        flat = result.function("flat")
        assert flat is not None and len(flat.scops) == 1, flat
        (write,) = flat.scops[0].scop.statements[0].writes
        return str(write.relation)

    ws.open(uri, HELPER, version=1)
    assert "a[i, j]" in write_of_flat(ws.analyze(uri))
    col = HELPER.index("i * n + j")
    ws.edit(uri, [TextChange("j * n + i", (0, col), (0, col + len("i * n + j")))], version=2)
    result = ws.analyze(uri)
    assert origins(result) == {"idx": "analysed", "flat": "analysed"}
    assert "a[j, i]" in write_of_flat(result)
    assert_same_as_core(result)


def test_a_syntax_error_is_confined_to_its_function(ws: Workspace) -> None:
    ws.analyze(URI)
    ws.edit(URI, [TextChange("", (16, 20), (16, 21))])  # drop the ';' in dot
    result = ws.analyze(URI)
    assert [r.name for r in result.remarks] == ["SyntaxError"]
    assert [r.name for r in result.function("dot").remarks] == ["FunctionHasErrors"]  # type: ignore[union-attr]
    assert origins(result)["matmul"] == "cached"
    assert_same_as_core(result)


def test_settings_are_part_of_the_key(ws: Workspace) -> None:
    ws.analyze(URI)
    ws.set_settings(Settings(defines=("UNUSED=1",)))
    assert ws.analyze(URI).stats.analysed == 3


def test_a_stale_version_is_cancelled(ws: Workspace) -> None:
    ws.update(URI, MATMUL + "\n", version=2)
    with pytest.raises(Cancelled):
        ws.analyze(URI, version=1)
    assert ws.analyze(URI, version=2).version == 2


def test_an_analysis_stops_when_a_newer_version_arrives(ws: Workspace) -> None:
    """The cancel check runs between functions: a newer version stops the analysis there."""
    calls = []

    def cancel() -> bool:
        calls.append(1)
        if len(calls) == 2:  # after the parse, before the second function
            ws.update(URI, MATMUL.replace("dot", "dot2"), version=2)
        return False

    with pytest.raises(Cancelled):
        ws.analyze(URI, cancel=cancel)
    assert ws.latest(URI) is None
    assert ws.analyze(URI).function("dot2") is not None


def test_explicit_cancellation(ws: Workspace) -> None:
    with pytest.raises(Cancelled):
        ws.analyze(URI, cancel=lambda: True)


def test_concurrent_edits_and_analyses_end_on_the_last_version(ws: Workspace) -> None:
    errors: list[BaseException] = []

    def analyse_repeatedly() -> None:
        for _ in range(20):
            try:
                ws.analyze(URI)
            except Cancelled:
                continue  # superseded by a newer version: expected while edits race
            except BaseException as e:  # pragma: no cover - the assertion below reports it
                errors.append(e)

    worker = threading.Thread(target=analyse_repeatedly)
    worker.start()
    for v in range(2, 40):
        ws.update(URI, MATMUL.replace("0.0", f"{v}.0"), version=v)
    worker.join()
    assert not errors
    final = ws.analyze(URI)
    assert final.version == 39
    assert_same_as_core(final)


def test_unknown_document_function_and_pass(ws: Workspace) -> None:
    with pytest.raises(UnknownDocument):
        ws.analyze("file:///nowhere.c")
    with pytest.raises(UnknownFunction, match="functions: matmul, dot, prefix_sum"):
        ws.function(URI, "nope")
    with pytest.raises(UnknownPass, match="passes: frontend, scop-detect"):
        ws.artifact(URI, "dot", "nope")


def test_close_forgets_the_document(ws: Workspace) -> None:
    ws.analyze(URI)
    ws.close(URI)
    with pytest.raises(UnknownDocument):
        ws.document(URI)
    assert ws.latest(URI) is None


def test_apply_changes_clamps_like_lsp_clients_expect() -> None:
    text = "ab\ncd\n"
    assert apply_changes(text, [TextChange("X", (1, 1), (1, 1))]) == "ab\ncXd\n"
    assert apply_changes(text, [TextChange("X", (0, 99), (1, 0))]) == "abXcd\n"
    assert apply_changes(text, [TextChange("X", (9, 0), (9, 0))]) == text + "X"
    assert apply_changes(text, [TextChange("new")]) == "new"


def test_uris_become_paths() -> None:
    assert path_for_uri("file:///a/b%20c.c") == "/a/b c.c"
    assert path_for_uri("untitled:Untitled-1", "cuda").endswith("untitled_Untitled-1.cu")
    assert path_for_uri("untitled:Untitled-1").endswith(".c")


def test_an_internal_error_lowering_one_function_is_a_remark_on_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A front-end bug in one function (issue 31: `int *p = &g; *p = i;` raised IndexError while
    lowering) once ended the whole document's analysis: no diagnostics for any function. It is an
    `InternalError` remark on that function; the others are analysed as always."""
    real = ParsedFile.lower

    def lower(self: ParsedFile, fn: FunctionSource) -> ir.Function:
        if fn.name == "dot":
            raise IndexError("tuple index out of range")
        return real(self, fn)

    monkeypatch.setattr(ParsedFile, "lower", lower)
    w = Workspace()
    w.open(URI, MATMUL, version=1)
    result = w.analyze(URI)
    assert origins(result) == {"matmul": "analysed", "dot": "analysed", "prefix_sum": "analysed"}
    dot = result.function("dot")
    assert dot is not None
    (note,) = dot.remarks
    assert note.name == "InternalError" and "IndexError" in note.message and "`dot`" in note.message
    assert note.range.line == dot.analysis.function.range.line  # the name, on the definition's line
    fresh = analyze_file(PATH, MATMUL)
    for name in ("matmul", "prefix_sum"):
        assert result.function(name).remarks == fresh.function(name).remarks  # type: ignore[union-attr]
    again = w.analyze(URI)  # not cached: read again, and the same remark
    assert again.function("dot").remarks == dot.remarks  # type: ignore[union-attr]


@pytest.mark.slow  # a process of its own, and matmul's GPU mapping twice
def test_offload_decisions_from_the_back_end_worker_equal_those_made_here(ws: Workspace) -> None:
    """The editor's offload decisions are made in the back-end worker, from the function's IR
    analysed again there (`explorer/offload.py`): the same remarks and memory placements as the
    back end gives in this process, kept per function."""
    result = ws.analyze(URI)
    here = Workspace()
    here.open(URI, MATMUL, version=1)
    local = here.analyze(URI)
    for fr, same in zip(result.functions, local.functions, strict=True):
        assert ws.known_decisions(fr) is None and ws.known_placements(fr) is None
        assert ws.decide_in_worker(fr, MATMUL) == here.decisions(same, MATMUL)
        assert ws.known_placements(fr) == here.known_placements(same)
    matmul = result.function("matmul")
    assert matmul is not None
    assert [r.name for r in ws.known_decisions(matmul) or ()] == ["RuntimeOffloadCheck", "Offloaded"]
    placements = ws.known_placements(matmul) or {}
    assert placements[(0, "S1", "A")] == "shared memory in kernel0: a 32x16 tile per block (reused within a tile)"


def test_a_space_or_comment_in_a_function_moves_its_analysis_instead_of_redoing_it(ws: Workspace) -> None:
    """Early cutoff: the edited function is lowered again, and where its IR is the old one's with
    the positions moved, the old analysis is moved too (every range after the edit shifted)."""
    ws.analyze(URI)
    at = MATMUL.split("\n")[8].index("A[i][k]")  # `C[i][j] += A[i][k] * B[k][j];` in matmul
    ws.edit(URI, [TextChange("  ", (8, at), (8, at))], version=2)
    result = ws.analyze(URI)
    assert origins(result) == {"matmul": "relocated", "dot": "cached", "prefix_sum": "cached"}
    assert_same_as_core(result)
    ws.edit(URI, [TextChange("/* k innermost */\n", (7, 0), (7, 0))], version=3)  # a line: dot moves too
    result = ws.analyze(URI)
    assert origins(result) == {"matmul": "relocated", "dot": "relocated", "prefix_sum": "relocated"}
    assert_same_as_core(result)


def test_an_edit_that_changes_the_code_is_analysed_after_a_moved_one(ws: Workspace) -> None:
    """A stale analysis must not survive: after a space moved dot's analysis, an edit of its
    loop bound (same length, same positions) is analysed, and so is B after an edit of A."""
    ws.analyze(URI)
    ws.edit(URI, [TextChange(" ", (16, 4), (16, 4))], version=2)  # `s +=` -> ` s +=` in dot
    assert origins(ws.analyze(URI))["dot"] == "relocated"
    ws.edit(URI, [TextChange("1", (15, 15), (15, 16))], version=3)  # `i = 0` -> `i = 1`
    result = ws.analyze(URI)
    assert origins(result)["dot"] == "analysed"
    assert_same_as_core(result)
    ws.edit(URI, [TextChange("a[i] - a[i - 1]", (23, 11), (23, 26))], version=5)  # prefix_sum's code
    result = ws.analyze(URI)
    assert origins(result)["prefix_sum"] == "analysed"
    assert_same_as_core(result)


def test_a_macro_used_by_a_function_is_not_moved_over(ws: Workspace) -> None:
    """A space inside a function whose macro changed too: analysed, not moved (the surroundings
    are part of what must be equal)."""
    text = "#define STEP 1\n" + MATMUL.replace("a[i - 1]", "a[i - STEP]")
    ws.update(URI, text)
    ws.analyze(URI)
    edited = text.replace("#define STEP 1", "#define STEP 2").replace("a[i] = ", "a[i]  = ")
    ws.update(URI, edited)
    result = ws.analyze(URI)
    assert origins(result)["prefix_sum"] == "analysed"
    assert_same_as_core(result)


def test_progress_reports_each_function_in_order(ws: Workspace) -> None:
    seen: list[tuple[list[str], int]] = []
    result = ws.analyze(URI, progress=lambda partial, left: seen.append(([f.name for f in partial.functions], left)))
    assert seen == [(["matmul"], 2), (["matmul", "dot"], 1), (["matmul", "dot", "prefix_sum"], 0)]
    assert ws.latest(URI) is result


@pytest.mark.parametrize(
    ("old", "new", "unseen"),
    [
        ("x = a;", "x =  a;", True),
        ("x = a;", "x = 1 * a;", False),
        ("x = a; /* hi */", "x = a; /* hio */", True),
        ("x = a;\n", "x = a;\n/* k */\n", True),
        ("x = a; // c\n", "x = a; // cd\n", True),
        ("x = a; /* c */", "x = a; /* c */ b", False),
        ("x = a;", "x = a; /*", False),
    ],
)
def test_which_edits_are_worth_moving_an_analysis_through(old: str, new: str, unseen: bool) -> None:
    assert Remap(PATH, TextAt(old, 3, 5), TextAt(new, 3, 5)).unseen() is unseen


def test_ranges_move_through_an_edit_by_their_ends() -> None:
    """`b` in `x = b;` starts where a space is inserted before it: it moves; `x =` ends there: it
    stays; a range that contains the insertion grows; one of the edited text cannot move."""
    remap = Remap(PATH, TextAt("x = b;\ny;", 3, 5), TextAt("x =  b;\ny;", 3, 5))
    at = functools.partial(SourceRange, PATH)
    assert remap.move(at(3, 9, 3, 10)) == at(3, 10, 3, 11)
    assert remap.move(at(3, 5, 3, 8)) == at(3, 5, 3, 8)
    assert remap.move(at(3, 5, 4, 3)) == at(3, 5, 4, 3)
    assert remap.move(at(3, 5, 3, 11)) == at(3, 5, 3, 12)
    assert Remap(PATH, TextAt("x = b;", 3, 5), TextAt("x = c;", 3, 5)).move(at(3, 9, 3, 10)) is None
    assert remap.move(at(2, 1, 2, 4)) is None  # outside the function: not moved with it


def test_blanks_and_comments_typed_in_functions_give_what_a_fresh_analysis_gives(ws: Workspace) -> None:
    """Differential: spaces, line breaks and comments inserted at blanks inside function bodies
    (the analysis is moved through them), and now and then anywhere (inside a token or a header:
    analysed again), each result equal to the core's from scratch."""
    rng = random.Random(29)
    before = {f.name: f.analysis.function.text for f in ws.analyze(URI).functions}
    moved = 0
    for version in range(2, 14):
        text = ws.document(URI).text
        at = rng.choice(_blanks_in_bodies(text)) if rng.random() < 0.8 else rng.randrange(len(text))
        line, col = text.count("\n", 0, at), at - (text.rfind("\n", 0, at) + 1)
        ws.edit(URI, [TextChange(rng.choice((" ", "\n", "  /* x */ ", "\n// y\n")), (line, col), (line, col))], version)
        result = ws.analyze(URI)
        now = {f.name: f.analysis.function.text for f in result.functions}
        moved += sum(f.origin == "relocated" and now[f.name] != before.get(f.name) for f in result.functions)
        before = now
        assert_same_as_core(result)
    assert moved >= 6, "most insertions leave a function's code as it was"


def _blanks_in_bodies(text: str) -> list[int]:
    depth, out = 0, []
    for k, c in enumerate(text):
        depth += (c == "{") - (c == "}")
        if depth > 0 and c in " \n":
            out.append(k)
    return out


def _counting_parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts libclang is asked to parse from now on."""
    parsed: list[str] = []
    real = DocumentParser.parse

    def parse(self: DocumentParser, text: str, options: ParseOptions) -> ParsedFile:
        parsed.append(text)
        return real(self, text, options)

    monkeypatch.setattr(DocumentParser, "parse", parse)
    return parsed


def test_an_edit_that_changes_no_token_is_not_parsed_again(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """A space or a comment inside a function changes none of its tokens nor its lines: the last
    parse is moved through it and so is the function's analysis, libclang is not asked (issue
    29.3: a 400-line file's reparse and lowering were 50 of a space edit's 77 ms). A line break
    and an edit of the code are parsed, and every result is the core's from scratch."""
    ws.analyze(URI)
    parses = _counting_parses(monkeypatch)
    at = MATMUL.split("\n")[8].index("A[i][k]")  # `C[i][j] += A[i][k] * B[k][j];` in matmul
    ws.edit(URI, [TextChange("  ", (8, at), (8, at))], version=2)
    result = ws.analyze(URI)
    assert (parses, origins(result)) == ([], {"matmul": "relocated", "dot": "cached", "prefix_sum": "cached"})
    assert_same_as_core(result)
    ws.edit(URI, [TextChange("/* k innermost */ ", (7, 0), (7, 0))], version=3)
    result = ws.analyze(URI)
    assert (parses, origins(result)) == ([], {"matmul": "relocated", "dot": "cached", "prefix_sum": "cached"})
    assert_same_as_core(result)
    ws.edit(URI, [TextChange("\n", (7, 0), (7, 0))], version=4)  # a line: parsed (`__LINE__` may be in it)
    result = ws.analyze(URI)
    assert (len(parses), origins(result)) == (1, {"matmul": "relocated", "dot": "relocated", "prefix_sum": "relocated"})
    assert_same_as_core(result)
    ws.edit(URI, [TextChange("1", (17, 15), (17, 16))], version=5)  # dot's `i = 0` -> `i = 1`
    result = ws.analyze(URI)
    assert (len(parses), origins(result)["dot"]) == (2, "analysed")
    assert_same_as_core(result)


OPAQUE = """
void scale(int n, double *a, const double *p, int *count)
{
  for (int i = 0; i < n; i++)
    a[i] = a[i] * *p + (*count)++;
}
"""


def test_a_space_inside_a_text_the_ir_quotes_is_lowered_again(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """The IR keeps what it does not model as written (`*p`, `(*count)++`): a space inside such
    an expression changes no token but changes that text, so the function is lowered again."""
    ws.update(URI, MATMUL + OPAQUE)
    ws.analyze(URI)
    parses = _counting_parses(monkeypatch)
    text = ws.document(URI).text
    for version, (old, new) in enumerate((("(*count)++", "( *count)++"), ("( *count)++", "( *count) ++")), 2):
        ws.update(URI, text := text.replace(old, new), version)
        assert_same_as_core(ws.analyze(URI))
        assert len(parses) == version - 1


def test_blanks_and_comments_anywhere_in_functions_give_what_a_fresh_analysis_gives(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Differential, after each of a sequence of edits: blanks, line breaks and comments inserted
    at blanks of function bodies and now and then between any two of their characters (inside
    tokens and quoted expressions too), with an edit of the code every fifth; each result equal
    to the core's from scratch."""
    rng = random.Random(3)
    ws.update(URI, MATMUL + OPAQUE)
    ws.analyze(URI)
    parses = _counting_parses(monkeypatch)
    codes = (("k < n", "k < n - 1"), ("k < n - 1", "k < n"), ("s += x[i]", "s -= x[i]"), ("s -= x[i]", "s += x[i]"))
    for version in range(2, 16):
        text = ws.document(URI).text
        if version % 5 == 0:
            old, new = next(c for c in codes if c[0] in text)
            ws.update(URI, text.replace(old, new, 1), version)
        else:
            anywhere = [k for k in range(1, len(text)) if _inside_body(text, k)]
            at = rng.choice(_blanks_in_bodies(text) if rng.random() < 0.7 else anywhere)
            ws.update(URI, text[:at] + rng.choice((" ", "/* x */", "  ", "\n", " /* y */ ")) + text[at:], version)
        assert_same_as_core(ws.analyze(URI))
    assert len(parses) <= 10, "of 14 edits, insertions that change no token and no line are not parsed"


def _inside_body(text: str, at: int) -> bool:
    return text.count("{", 0, at) > text.count("}", 0, at)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("void matmul(", "void  matmul("),  # before the name: it moves
        ("C[i][j] = 0.0;", "C[i][j] =  0.0;  /* zero */"),  # the end of its line moves
        ("s += x[i] * y[i];", "s += x[i] * y[i]; // sum"),
        ("C[i][j] = 0.0;", "C[i][j] =\n 0.0;"),  # a line break: not moved here
        ("C[i][j] = 0.0;", "C[i][j] =\r 0.0;"),  # a line break to clang too
    ],
)
def test_an_edit_that_changes_no_token_moves_the_parse_as_libclang_would(old: str, new: str) -> None:
    """The functions of a parse moved through such an edit (`_shifted_parse`) are where a new
    parse finds them: text, start, end and name."""
    from explorer.workspace import _shifted_parse

    parser = DocumentParser(PATH)
    with parser.lock:
        parsed = parser.parse(MATMUL, ParseOptions())
        text = MATMUL.replace(old, new, 1)
        shifted = _shifted_parse(parsed, text)
        fresh = parser.parse(text, ParseOptions())
        parser.dispose()
    if "\r" in new or "\n" in new:
        assert shifted is None
        return
    assert shifted is not None
    where = [(f.name, f.text, f.line, f.col, f.end_line, f.end_col, f.name_line, f.name_col) for f in fresh.functions]
    assert [(f.name, f.text, f.line, f.col, f.end_line, f.end_col, f.name_line, f.name_col) for f in shifted[0].functions] == where
    assert shifted[1] in shifted[0].functions


LINE = """#define CHECK(x) check_line(x, __LINE__)
void check_line(int c, int line);

void f(int n, double *a)
{
  for (int i = 0; i < n; i++)
    a[i] = a[i] + 1.0;
  CHECK(n);
}
"""


def test_a_line_break_above_a_line_number_macro_is_parsed(ws: Workspace) -> None:
    """`__LINE__` expands to where it is written (in `assert` too): a line break above it changes
    the IR, though no token changed; such an edit is parsed and the IR is libclang's."""
    ws.update(URI, LINE)
    ws.analyze(URI)
    ws.update(URI, LINE.replace("a[i] + 1.0;", "a[i] + 1.0;\n"))
    assert_same_as_core(ws.analyze(URI))
