"""The editor's offload actions (`explorer/directive_actions.py`): the `#pragma hexplore` line
written above a modeled nest with its indentation, refused where the GPU could not follow it,
swapped for the other kind, removed; made on the text as an editor makes them, and read back."""

from __future__ import annotations

from core_compiler.frontend import ParseOptions
from explorer.directive_actions import (
    CPU_TITLE,
    GPU_TITLE,
    REMOVE_TITLE,
    directive_preview,
    offload_actions_at,
    remove_directive_at,
)
from explorer.fixes import apply_edits
from explorer.workspace import Workspace

NEST = """\
void scale(int n, int m, double A[n][m], double B[n][m]) {
  if (n > 0) {
    for (int i = 0; i < n; i++)
      for (int j = 0; j < m; j++)
        B[i][j] = 2.0 * A[i][j] + 1.0;
  }
}
"""

PREFIX = """\
void prefix(int n, double a[n]) {
  for (int i = 1; i < n; i++)
    for (int k = 0; k < 8; k++)
      a[i] = a[i] + a[i - 1] * 0.5;
}
"""


def _analysis(text: str):  # type: ignore[no-untyped-def]
    ws = Workspace(use_compile_commands=False)
    ws.open("file:///tmp/hexplore-directives/f.c", text)
    return ws.analyze("file:///tmp/hexplore-directives/f.c")


def _directives(text: str) -> list[tuple[str, tuple[int, ...], int]]:
    (fr,) = _analysis(text).functions
    return [(d.kind, d.block, d.loop_line) for d in fr.analysis.function.directives]


def test_offload_and_keep_insert_the_pragma_above_the_outer_loop_with_its_indentation() -> None:
    analysis = _analysis(NEST)
    found = {a.title: a for a in offload_actions_at(analysis, 3, 5)}
    assert list(found) == [GPU_TITLE, CPU_TITLE] and all(a.legal for a in found.values())
    offloaded = apply_edits(NEST, found[GPU_TITLE].edits)
    assert offloaded.split("\n")[2:4] == ["    #pragma hexplore gpu block(32, 8)", "    for (int i = 0; i < n; i++)"]
    assert _directives(offloaded) == [("gpu", (32, 8), 4)]  # the front end reads it back, for that loop
    kept = apply_edits(NEST, found[CPU_TITLE].edits)
    assert kept.split("\n")[2] == "    #pragma hexplore cpu" and _directives(kept) == [("cpu", (), 4)]
    assert offload_actions_at(analysis, 4, 7) == []  # the inner loop: a directive is for a whole nest
    assert offload_actions_at(analysis, 5, 9) == []  # not on a header


def test_an_action_is_offered_only_where_it_changes_the_decision_and_swaps_the_other_kind() -> None:
    offloaded = NEST.replace("    for (int i", "    #pragma hexplore gpu block(32, 8)\n    for (int i", 1)
    (only,) = offload_actions_at(_analysis(offloaded), 4, 5)  # already on the GPU
    assert only.title == CPU_TITLE
    assert apply_edits(offloaded, only.edits).split("\n")[2:4] == ["    #pragma hexplore cpu", "    for (int i = 0; i < n; i++)"]
    kept = NEST.replace("    for (int i", "    #pragma hexplore cpu\n    for (int i", 1)
    (back,) = offload_actions_at(_analysis(kept), 4, 5)
    assert back.title == GPU_TITLE and apply_edits(kept, back.edits) == offloaded


def test_offloading_a_nest_without_a_parallel_loop_is_refused_with_the_reason() -> None:
    actions = {a.title: a for a in offload_actions_at(_analysis(PREFIX), 2, 3)}
    gpu = actions[GPU_TITLE]
    assert not gpu.legal and gpu.edits == ()
    assert gpu.reason.startswith("cannot offload: no loop of this nest can run its iterations in parallel")


def test_a_single_short_loop_is_already_on_the_cpu() -> None:
    text = "void inc(int n, double *a) {\n  for (int i = 0; i < n; i++)\n    a[i] += 1.0;\n}\n"
    assert [a.title for a in offload_actions_at(_analysis(text), 2, 3)] == [GPU_TITLE]  # TooLittleWork


def test_remove_deletes_a_hexplore_pragma_line_valid_or_not() -> None:
    text = NEST.replace("    for (int i", "    #pragma hexplore gpu blok(32)\n    for (int i", 1)
    analysis = _analysis(text)
    removal = remove_directive_at(analysis, 3)
    assert removal is not None and removal.title == REMOVE_TITLE
    assert apply_edits(text, removal.edits) == NEST
    assert remove_directive_at(analysis, 4) is None  # a loop, not a pragma
    other = NEST.replace("    for (int i", "    #pragma omp parallel for\n    for (int i", 1)
    assert remove_directive_at(_analysis(other), 3) is None  # other pragmas are the user's


def test_a_function_moved_by_an_edit_above_keeps_its_directive_on_its_nest() -> None:
    from core_compiler.transform.directives import nest_directive

    ws = Workspace(use_compile_commands=False)
    uri = "file:///tmp/hexplore-directives/moved.c"
    offloaded = NEST.replace("    for (int i", "    #pragma hexplore gpu\n    for (int i", 1)
    ws.open(uri, offloaded)
    ws.analyze(uri)
    ws.update(uri, "/* two lines\n   above */\n" + offloaded)
    (fr,) = ws.analyze(uri).functions
    assert fr.origin == "relocated"
    (d,) = fr.analysis.function.directives
    assert (d.range.line, d.loop_line) == (5, 6)
    assert nest_directive(fr.analysis.function, fr.scops[0].scop.loops) is d


def test_a_preview_is_the_diff_of_the_source_and_of_the_generated_cuda() -> None:
    analysis = _analysis(NEST)
    preview = directive_preview(analysis, 3, 5, GPU_TITLE, ParseOptions())
    assert preview is not None
    assert "+++ f.c (Offload to the GPU (block 32x8))" in preview and "+    #pragma hexplore gpu block(32, 8)" in preview
    assert "--- f.c: CUDA of scale" in preview
    assert "-    dim3 k0_block(32, 16);" in preview and "+    dim3 k0_block(32, 8);" in preview  # the directive's block
    assert "-  if (!(" in preview  # the run-time offload check goes
    kept = directive_preview(analysis, 3, 5, CPU_TITLE, ParseOptions())
    assert kept is not None and "+// no GPU code: the function's loop nests stay on the CPU" in kept
    assert directive_preview(analysis, 3, 5, "Offload to the GPU (block 64x64)", ParseOptions()) is None  # not offered
