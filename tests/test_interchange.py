"""Loop interchange (`core_compiler/transform/interchange.py`): legal exactly where no dependence
of the nest would be reversed; the rewrite swaps the `for` headers, and the rewritten C computes
what the original does (both built by the system C compiler and run on the same inputs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core_compiler.analysis import analyze_file
from core_compiler.runtime.inputs import make_inputs
from core_compiler.runtime.reference import run_reference
from core_compiler.runtime.signature import layout_for_source
from core_compiler.transform.interchange import Interchange, header_edits, interchange, source_text

SOURCE = """\
void matmul(int n, double C[n][n], const double A[n][n], const double B[n][n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
}

void skew(int n, double a[n][n])
{
  for (int i = 1; i < n; i++)
    for (int j = 0; j < n - 1; j++)
      a[i][j] = a[i - 1][j + 1];
}

void backwards(int n, double a[n][n])
{
  for (int i = n - 1; i >= 1; i--)
    for (int j = 0; j < n - 1; j++)
      a[i][j] = a[i - 1][j + 1];
}

void anti(int n, double a[n][n])
{
  for (int i = 0; i < n - 1; i++)
    for (int j = 1; j < n; j++)
      a[i][j] = a[i + 1][j - 1] + a[i][j - 1];
}

void triangle(int n, double a[n][n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      a[i][j] = a[j][i];
}
"""


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("interchange") / "nests.c"
    path.write_text(SOURCE)
    return path


def _swap(path: Path, function: str, outer: str = "L0") -> Interchange | None:
    fa = analyze_file(str(path), SOURCE, only=function)
    (sa,) = fa.functions[0].scops
    return interchange(sa.scop, sa.deps, outer, SOURCE)


def test_matmul_i_and_j_may_swap(source: Path) -> None:
    found = _swap(source, "matmul")
    assert found is not None and found.legal and found.reason == ""
    assert (found.outer.var, found.inner.var) == ("i", "j")
    j_and_k = _swap(source, "matmul", "L1")  # k carries only the reduction: it keeps its order
    assert j_and_k is not None and j_and_k.legal
    assert _swap(source, "matmul", "L2") is None  # nothing is nested in k


def test_a_reversed_flow_dependence_is_refused_in_c_terms(source: Path) -> None:
    found = _swap(source, "skew")
    assert found is not None and not found.legal
    assert found.reason == (
        "`a[i][j]` is written in iteration (i, j) and read as `a[i - 1][j + 1]` in iteration (i+1, j-1): "
        "swapping `i` and `j` would run the read first"
    )


def test_the_order_of_execution_decides_not_the_subscripts(source: Path) -> None:
    # The same statement with `i` counting down: the read of a[i-1][j+1] comes before its write
    # (an anti dependence of distance (1, 1) in execution order), which the swap keeps.
    found = _swap(source, "backwards")
    assert found is not None and found.legal


def test_the_witness_names_the_access_at_fault(source: Path) -> None:
    found = _swap(source, "anti")  # two reads of `a`; only a[i + 1][j - 1] is overwritten later
    assert found is not None and not found.legal
    assert found.reason.startswith("`a[i + 1][j - 1]` is read in iteration (i, j) and overwritten as `a[i][j]`")


def test_a_triangular_nest_is_refused(source: Path) -> None:
    found = _swap(source, "triangle")
    assert found is not None and not found.legal
    assert found.reason.startswith("the bounds of `j` depend on `i`")


def _rewritten(function: str) -> str:
    path = "/nests.c"
    fa = analyze_file(path, SOURCE, only=function)
    (sa,) = fa.functions[0].scops
    found = interchange(sa.scop, sa.deps, "L0", SOURCE)
    assert found is not None and found.legal
    edits = header_edits(found.outer, found.inner, SOURCE)
    assert [source_text(SOURCE, r) for r, _ in edits] == [t for _, t in reversed(edits)]
    lines = SOURCE.split("\n")
    for r, text in edits:  # each header is one whole line's text after its indentation
        assert r.line == r.end_line
        lines[r.line - 1] = lines[r.line - 1][: r.col - 1] + text + lines[r.line - 1][r.end_col - 1 :]
    return "\n".join(lines)


@pytest.mark.slow
@pytest.mark.parametrize("function", ["matmul", "backwards"])
def test_the_interchanged_code_computes_the_same(source: Path, function: str) -> None:
    swapped = source.with_name(f"swapped_{function}.c")
    swapped.write_text(_rewritten(function))
    assert swapped.read_text() != SOURCE
    for n in (1, 7):
        layout = layout_for_source(str(source), function, {"n": n})
        inputs = make_inputs(layout)
        before = run_reference(str(source), layout, inputs)
        after = run_reference(str(swapped), layout, inputs)
        for name, array in before.arrays.items():
            np.testing.assert_array_equal(after.arrays[name], array, err_msg=f"{function}, n={n}: {name}")
