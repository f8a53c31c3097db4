"""`hexplore run --device cpu` on a function of several modeled loop nests, or code between them
(`core_compiler/runtime/whole_c.py`): the C target's code for the whole function against the
original at 37, 1, 0 and 70 (not a multiple of the tile, 32), every array and the return value
compared; on a device the refusal says where such a function runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.codegen.c import COptions, generate_c
from core_compiler.runtime.inputs import make_inputs
from core_compiler.runtime.reference import run_reference
from core_compiler.runtime.whole_c import check_whole_c, compare_build, whole_layout
from explorer.running import WHOLE_FUNCTION, run_function
from lsp.custom_requests import run_result
from tui.run_text import summary

SIZES = (37, 1, 0, 70)

# Two nests split by calls hexplore cannot see into: `printf`, and `bump`, defined here but kept
# opaque (`noinline`), which writes A between the nests.
OPAQUE = """\
#include <stdio.h>
__attribute__((noinline)) void bump(int n, double *a) { if (n > 0) a[n - 1] += 3.0; }
void twice(int n, double A[n][n], double B[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = 2.0 * B[j][i] + i;
  printf("between %d\\n", n);
  bump(n * n, &A[0][0]);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      B[i][j] = A[i][j] - B[i][j] * 0.5;
}
"""
PRAGMAS = """\
void scale(int n, double A[n][n], double B[n][n]) {
  #pragma hexplore gpu block(32, 8)
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = 2.0 * B[i][j];
  #pragma hexplore cpu
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      B[i][j] += A[j][i];
}
"""
# `t` is read from A after the first nest by a loop hexplore does not model (its exit depends on
# the data), and the second nest and the return value use it.
SCALAR = """\
double spread(int n, double A[n][n], double B[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = B[i][j] * 0.5 + i;
  double t = 1.0;
  int k = 0;
  while (k < n && A[k][0] < 4.0) { t += A[k][0]; k++; }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      B[i][j] = A[j][i] * t;
  return t;
}
"""


def _file(tmp_path: Path, text: str, name: str = "w.c") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("source", "function", "nests"),
    [(OPAQUE, "twice", 2), (PRAGMAS, "scale", 2), (SCALAR, "spread", 2)],
    ids=["opaque-calls", "gpu-and-cpu-pragmas", "scalar-between"],
)
def test_the_c_targets_whole_function_matches_the_original(tmp_path: Path, source: str, function: str, nests: int) -> None:
    path = _file(tmp_path, source)
    for n in SIZES:
        w = check_whole_c(path, function, {"n": n})
        assert w.ok, (n, w.comparison.report())
        assert [c.how.startswith("scheduled and tiled") for c in w.nests] == [True] * nests  # generated, not the original again
        names = {a.name for a in w.comparison.arrays}
        assert {"A", "B"} <= names and ("return" in names) == (function == "spread")


def test_the_comparison_fails_on_a_wrong_generated_function(tmp_path: Path) -> None:
    """The generated text of `twice` with its second nest's factor changed (0.5 -> 0.25) differs
    in B, at every size with an element; the right text matches."""
    path = _file(tmp_path, OPAQUE)
    for n in (37, 1, 70):
        layout, fa = whole_layout(path, "twice", {"n": n}, None)
        right = generate_c(fa, OPAQUE, COptions()).source
        assert right.count("* 0.5)") == 1
        inputs = make_inputs(layout)
        expected = run_reference(path, layout, inputs)
        ok, _ = compare_build(path, layout, inputs, expected, right, openmp=False)
        wrong, _ = compare_build(path, layout, inputs, expected, right.replace("* 0.5)", "* 0.25)"), openmp=False)
        assert ok.ok and not wrong.ok
        assert [a.name for a in wrong.failures] == ["B"]


def test_a_run_of_several_nests_on_the_cpu_says_which_code_ran(tmp_path: Path) -> None:
    """Through the run every face uses (`explorer.running`): the whole function, in the worker."""
    path = _file(tmp_path, PRAGMAS)
    report = run_function(path, "scale", "cpu", {"n": 37})
    assert (report.status, report.match, report.variant) == ("ok", True, WHOLE_FUNCTION), report.message
    assert report.reference_s > 0 and report.optimized_s > 0 and {a.name for a in report.arrays} == {"A", "B"}
    assert "nest 0 (line 3) scheduled and tiled (`#pragma hexplore gpu block(32, 8)` (line 2) applies to" in report.note
    assert "nest 1 (line 7) scheduled and tiled" in report.note
    assert "on the CPU as `#pragma hexplore cpu` (line 6) asks" in report.note
    shown = summary(report)  # the TUI's Run tab
    assert shown.startswith("verdict: match  (CPU (C target, cc); n=37)") and "hexplore (C target)" in shown
    assert f"ran the {WHOLE_FUNCTION} code: built with" in shown
    editor = run_result(report)  # the editor's `hexplore/run`
    assert editor["message"] == f"the generated code matches the original (the {WHOLE_FUNCTION} code)"
    assert editor["note"] == report.note and editor["status"] == "ok"
    one = _file(tmp_path, PRAGMAS.split("  #pragma hexplore cpu")[0] + "}\n", "one.c")  # the first nest alone
    single = run_function(one, "scale", "cpu", {"n": 37})
    assert single.status == "ok" and single.variant not in ("", WHOLE_FUNCTION), single.message  # still the LLVM race


def test_a_device_run_of_several_nests_is_refused_and_says_where_it_runs(tmp_path: Path) -> None:
    path = _file(tmp_path, PRAGMAS)
    report = run_function(path, "scale", "opencl", {"n": 37})
    assert report.status == "not-checkable"
    assert report.message.endswith("; `--device cpu` runs such a function whole, as `compile --target c` writes it")


def test_a_crash_between_the_nests_is_a_report(tmp_path: Path) -> None:
    """The code between the nests traps at n = 1 (the original too): the worker dies, the caller
    gets a report."""
    source = OPAQUE.replace('printf("between %d\\n", n);', "if (n == 1) __builtin_trap();")
    path = _file(tmp_path, source)
    report = run_function(path, "twice", "cpu", {"n": 1})
    assert report.status == "crashed" and not report.match, report.message
