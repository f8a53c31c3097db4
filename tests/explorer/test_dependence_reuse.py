"""A code edit that leaves a loop nest's model as it was (``1 * `` inserted) takes the dependences of
the nest's last analysis (`reuse_dependences`, issue 29.3); every result equals a fresh analysis."""

from __future__ import annotations

import islpy as isl
import pytest

from core_compiler import analysis
from core_compiler.analysis import analyze_file
from core_compiler.scop.dependences import Dependences
from core_compiler.scop.model import Scop
from core_compiler.scop.region import RegionInfo
from explorer.workspace import DocumentAnalysis, Workspace

URI = "file:///tmp/hexplore-ws/reuse.c"

SOURCE = """\
void kern(int n, double alpha, double C[n][n], double A[n][n], double B[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      C[i][j] = C[i][j] * 0.5;
      for (int k = 0; k < n; k++)
        C[i][j] = C[i][j] + alpha * A[i][k] * B[k][j];
    }
}

void smooth(int n, double a[n]) {
  for (int t = 1; t < n - 1; t++)
    a[t] = (a[t - 1] + a[t] + a[t + 1]) / 3.0;
}
"""

# (old, new, {function: whether its nest's dependences are reused}); each edit applies to the text
# the previous ones left
EDITS = (
    ("alpha * A", "1 * alpha * A", {"kern": True}),  # a value: same accesses
    ("C[i][j] + 1", "1 * C[i][j] + 1", {"kern": True}),  # no longer a reduction; same accesses
    ("A[i][k]", "A[k][i]", {"kern": False}),  # an access changed
    ("k < n;", "k < n - 1;", {"kern": False}),  # a domain changed
    ("+ a[t] +", "+ 1 * a[t] +", {"smooth": True}),
    ("a[t + 1]", "a[t + 1] + a[t - 1]", {"smooth": False}),  # one more read
)


def dependence_summary(deps: Dependences) -> tuple[object, ...]:
    """What the remarks are made of, without isl's text (the fresh analysis is in another context)."""
    return (
        [(d.kind, d.array, d.source, d.sink) for d in deps.deps],
        [(lp.loop.id, lp.loop.range, lp.carried, lp.reduction) for lp in deps.loops],
        deps.reductions,
    )


def assert_fresh(result: DocumentAnalysis) -> None:
    fresh = analyze_file(result.document.path, result.document.text)
    assert result.all_remarks() == fresh.all_remarks()
    for fr, ff in zip(result.functions, fresh.functions, strict=True):
        got = [dependence_summary(sa.deps) for sa in fr.analysis.scops]
        assert got == [dependence_summary(sa.deps) for sa in ff.scops]


def test_code_edits_reuse_dependences_exactly_where_the_model_is_unchanged() -> None:
    ws = Workspace()
    text = SOURCE
    ws.open(URI, text, version=1)
    last = ws.analyze(URI)
    assert_fresh(last)
    for version, (old, new, reuse) in enumerate(EDITS, start=2):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
        ws.update(URI, text, version=version)
        result = ws.analyze(URI)
        assert_fresh(result)
        for name, reused in reuse.items():
            before, after = last.function(name), result.function(name)
            assert before is not None and after is not None and after.origin == "analysed"
            (was,), (now,) = before.analysis.scops, after.analysis.scops
            assert was.deps.deps and now.deps.deps  # a tuple of dependences, not the empty one
            assert (now.deps.deps is was.deps.deps) == reused, (new, name)
            assert now.scop.ctx is was.scop.ctx  # the model is built where it compares
        last = result


def test_reused_dependences_recompute_the_reductions() -> None:
    """`1 * C[i][j] + e` is no reduction of C: the k loop then carries a plain dependence."""
    ws = Workspace()
    text = SOURCE.replace("alpha * A", "1 * alpha * A")
    ws.open(URI, text, version=1)
    first = ws.analyze(URI).function("kern")
    ws.update(URI, text.replace("C[i][j] + 1", "1 * C[i][j] + 1"), version=2)
    second = ws.analyze(URI).function("kern")
    assert first is not None and second is not None
    was, now = first.analysis.scops[0].deps, second.analysis.scops[0].deps
    assert now.deps is was.deps
    assert [lp.reduction for lp in was.loops] == [False, False, True]
    assert [lp.reduction for lp in now.loops] == [False, False, False]


def test_a_budget_run_out_in_the_shared_context_is_tried_again_in_a_fresh_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The previous analysis' context is shared with the editor's request thread, whose GPU
    mappings set its budget: running out there is no verdict on the nest."""
    first = analyze_file("reuse.c", SOURCE).function("smooth")
    assert first is not None
    shared = first.scops[0].scop.ctx
    build = analysis.build_model

    def out_of_budget_in_shared(function: str, index: int, region: RegionInfo, ctx: isl.Context) -> Scop:
        if ctx is shared:  # as though a hover's mapping had spent the budget meanwhile
            raise isl.Error("maximal number of operations exceeded")
        return build(function, index, region, ctx)

    monkeypatch.setattr(analysis, "build_model", out_of_budget_in_shared)
    again = analysis.analyze_function(first.function, analysis.AnalysisOptions(), (), first)
    assert again.remarks == first.remarks
    assert "AnalysisBudgetExceeded" not in [r.name for r in again.remarks]
    (sa,) = again.scops
    assert sa.scop.ctx is not shared and sa.deps.deps is not first.scops[0].deps.deps
    assert [p.label for p in again.trace] == [p.label for p in first.trace]  # the failed try not kept
