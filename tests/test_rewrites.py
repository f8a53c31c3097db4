"""Loop transformations as source rewrites (`core_compiler/transform/rewrites.py`): tile,
unroll-and-jam, skew, fuse, distribute. Each is refused in C terms where a dependence forbids it,
and where it is offered the rewritten C computes what the original does: both built by the system C
compiler and run on the same inputs at sizes that are not multiples of the tile size, 1 and 0."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from core_compiler.analysis import analyze_file
from core_compiler.runtime.inputs import make_inputs
from core_compiler.runtime.reference import run_reference
from core_compiler.runtime.signature import layout_for_source
from core_compiler.transform import rewrites
from core_compiler.transform.rewrites import Rewrite
from explorer.fixes import Edit, apply_edits

SOURCE = """\
void sum2d(int n, int m, double C[n][m], const double A[n][m])
{
  for (int i = 0; i < n; i++)
    for (int j = 1; j <= m - 1; j++) {
      C[i][j] += A[i][j] * A[i][j - 1];
    }
}

void matmul(int n, double C[n][n], const double A[n][n], const double B[n][n])
{
  int i, j, k;
  for (i = 0; i < n; ++i)
    for (j = 0; j < n; j += 1)
      for (k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
}

void stencil(int n, double a[n][n])
{
  for (int i = 1; i < n; i++)
    for (int j = 1; j < n; j++)
      a[i][j] = a[i - 1][j] + a[i][j - 1];
}

void wave(int n, double a[n][n])
{
  for (int i = 1; i < n; i++)
    for (int j = 0; j < n - 1; j++)
      a[i][j] = a[i - 1][j + 1] + 0.5 * a[i][j];
}

void steep(int n, double a[n][n])
{
  for (int i = 1; i < n; i++)
    for (int j = 0; j < n - 3; j++)
      a[i][j] = a[i - 1][j + 3] + 1.0;
}

void chain(int n, double a[n], double b[n], double c[n])
{
  for (int i = 0; i < n; i++)
    a[i] = b[i] * 2.0;
  for (int k = 0; k < n; k++)
    c[k] = a[k] + 1.0;
}

void shifted(int n, double a[n], double c[n])
{
  for (int i = 0; i < n - 1; i++)
    a[i] = c[i] * 2.0;
  for (int i = 0; i < n - 1; i++)
    c[i] = a[i + 1] + 1.0;
}

void apart(int n, double a[n], double b[n], double c[n])
{
  for (int i = 1; i < n; i++) {
    b[i] = c[i] + 1.0;
    c[i] = a[i - 1] * b[i];
    a[i] = 3.0 * c[i];
  }
}

void backwards(int n, double a[n], double b[n], double c[n])
{
  for (int i = 1; i < n; i++) {
    a[i] = b[i - 1] + c[i];
    b[i] = c[i] * 2.0;
  }
}

void cycle(int n, double a[n], double b[n])
{
  for (int i = 1; i < n; i++) {
    a[i] = b[i - 1] + 1.0;
    b[i] = a[i] * 2.0;
  }
}

void lu(int n, double A[n][n])
{
  for (int k = 0; k < n; k++) {
    for (int i = k + 1; i < n; i++)
      A[i][k] /= A[k][k];
    for (int i = k + 1; i < n; i++)
      for (int j = k + 1; j < n; j++)
        A[i][j] -= A[i][k] * A[k][j];
  }
}

void init_then_sum(int n, double tmp[n][n], const double A[n][n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      tmp[i][j] = 0.0;
      for (int k = 0; k < n; k++)
        tmp[i][j] += A[i][k] * A[k][j];
    }
}
"""

Make = Callable[..., Rewrite | None]
TILE16: Make = partial(rewrites.tile, size=16)
TILE32: Make = partial(rewrites.tile, size=32)
JAM2: Make = partial(rewrites.unroll_and_jam, factor=2)
JAM4: Make = partial(rewrites.unroll_and_jam, factor=4)


def _rewrite(function: str, make: Make, loop: str = "L0", text: str = SOURCE) -> Rewrite | None:
    fa = analyze_file("/rewrites.c", text, only=function)
    fn = fa.functions[0]
    (sa,) = fn.scops
    lp = next(lp for lp in sa.scop.loops if lp.id == loop)
    return make(sa.scop, sa.deps, fn.function, lp, text)


def _applied(found: Rewrite | None, text: str = SOURCE) -> str:
    assert found is not None and found.legal, found
    return apply_edits(text, tuple(Edit(r, t) for r, t in found.edits))


def test_tile_rewrites_the_band_with_min_bounds_as_c() -> None:
    found = _rewrite("sum2d", TILE32)
    assert found is not None and found.title == "tile loops `i`, `j` by 32x32"
    assert _applied(found).split("\n")[2:8] == [
        "  for (int i_t = 0; i_t < n; i_t += 32)",
        "    for (int j_t = 1; j_t < m; j_t += 32)",  # j <= m - 1
        "      for (int i = i_t; i < (i_t + 32 < n ? i_t + 32 : n); i++)",
        "        for (int j = j_t; j < (j_t + 32 < m ? j_t + 32 : m); j++) {",
        "          C[i][j] += A[i][j] * A[i][j - 1];",
        "        }",
    ]


def test_tile_takes_the_whole_permutable_band() -> None:
    found = _rewrite("matmul", TILE16)
    assert found is not None and found.legal and found.title == "tile loops `i`, `j`, `k` by 16x16x16"
    assert "for (i = i_t; i < (i_t + 16 < n ? i_t + 16 : n); i++)" in _applied(found)
    stencil = _rewrite("stencil", TILE32)  # distances (1, 0) and (0, 1): forward in both
    assert stencil is not None and stencil.legal


def test_tile_is_refused_where_a_dependence_goes_back_in_a_loop_of_the_band() -> None:
    found = _rewrite("wave", TILE32)
    assert found is not None and not found.legal and not found.edits
    assert found.title == "tile loops `i`, `j`"
    assert found.reason == (
        "`a[i][j]` is written in iteration (i, j) and read as `a[i - 1][j + 1]` in iteration (i+1, j-1), "
        "a step back in `j`: tiling `i`, `j` could run the read first"
    )
    assert _rewrite("sum2d", TILE32, "L1") is None  # one loop is no band


def test_unroll_and_jam_is_refused_where_interchange_is() -> None:
    found = _rewrite("wave", JAM2)
    assert found is not None and not found.legal and found.title == "unroll `i` and jam into `j`"
    assert found.reason.startswith("`a[i][j]` is written in iteration (i, j) and read as `a[i - 1][j + 1]`")
    assert found.reason.endswith("(unroll-and-jam reorders `i` and `j` as swapping them does)")
    legal = _rewrite("sum2d", JAM4)
    assert legal is not None and legal.legal and legal.title == "unroll `i` by 4 and jam into `j`"
    text = _applied(legal)
    assert "C[(i + 3)][j] += A[(i + 3)][j] * A[(i + 3)][j - 1];" in text
    assert "for (int i = 0 + (n - 0) / 4 * 4; i < n; i++)" in text  # the remainder


def test_skew_is_offered_where_the_nest_is_not_permutable_and_makes_it_so() -> None:
    assert _rewrite("stencil", rewrites.skew) is None  # already permutable
    found = _rewrite("wave", rewrites.skew)
    assert found is not None and found.title == "skew `j` by 1*`i`"
    skewed = _applied(found)
    assert "for (int j_s = 0 + (1); j_s < (n - 1) + (n - 1); j_s++) {" in skewed
    then = _rewrite("wave", TILE32, text=skewed)  # the skewed nest tiles
    assert then is not None and then.legal and then.title == "tile loops `i`, `j_s` by 32x32"
    steep = _rewrite("steep", rewrites.skew)  # distance (1, -3): 2*i is not enough
    assert steep is not None and not steep.legal
    assert steep.reason.startswith("`a[i][j]` is written in iteration (i, j) and read as `a[i - 1][j + 3]` in iteration (i+1, j-3)")
    assert steep.reason.endswith("skewing `j` by 2*`i` could run the read first")


def test_fuse_needs_every_dependence_to_stay_forward() -> None:
    found = _rewrite("chain", rewrites.fuse)
    assert found is not None and found.legal and found.title == "fuse loop `i` with the next loop `k`"
    fused = "  for (int i = 0; i < n; i++) {\n    a[i] = b[i] * 2.0;\n    c[i] = a[i] + 1.0;\n  }\n}\n\nvoid shifted"
    assert fused in _applied(found)
    assert _rewrite("chain", rewrites.fuse, "L1") is None  # nothing follows
    refused = _rewrite("shifted", rewrites.fuse)
    assert refused is not None and not refused.legal
    assert refused.reason == (
        "`a[i]` is written by the first loop in iteration i+1 and read as `a[i + 1]` by the second in "
        "iteration i: fused, the loop would run the read first"
    )


def test_fuse_is_refused_for_loops_of_other_bounds() -> None:
    text = SOURCE.replace("for (int k = 0; k < n; k++)", "for (int k = 1; k < n; k++)")
    found = _rewrite("chain", rewrites.fuse, text=text)
    assert found is not None and not found.legal
    assert found.reason == "the two loops run different iterations: `i` from 0 to below n, `k` from 1 to below n"


def test_distribute_splits_at_the_strongly_connected_groups() -> None:
    found = _rewrite("apart", rewrites.distribute)  # c[i] and a[i] feed each other: one loop
    assert found is not None and found.legal and found.title == "distribute loop `i` over its statements (2 loops)"
    assert found.edits[0][1] == (
        "for (int i = 1; i < n; i++) {\n    b[i] = c[i] + 1.0;\n  }\n"
        "  for (int i = 1; i < n; i++) {\n    c[i] = a[i - 1] * b[i];\n    a[i] = 3.0 * c[i];\n  }"
    )
    back = _rewrite("backwards", rewrites.distribute)  # b[i] feeds a[i + 1]: b's loop goes first
    text = _applied(back)
    assert text.index("b[i] = c[i] * 2.0;") < text.index("a[i] = b[i - 1] + c[i];")
    refused = _rewrite("cycle", rewrites.distribute)
    assert refused is not None and not refused.legal
    assert refused.reason == (
        "`a[i] = b[i - 1] + 1.0` and `b[i] = a[i] * 2.0` depend on each other across iterations of `i` "
        "(`b[i] = a[i] * 2.0` feeds `a[i] = b[i - 1] + 1.0` in a later iteration): they must stay in one loop"
    )


def test_rewrites_into_several_loops_keep_a_braceless_parent_one_statement() -> None:
    found = _rewrite("init_then_sum", rewrites.distribute, "L1")
    assert found is not None and found.legal
    assert found.edits[0][1] == (
        "{\n      for (int j = 0; j < n; j++) {\n        tmp[i][j] = 0.0;\n      }\n"
        "      for (int j = 0; j < n; j++) {\n        for (int k = 0; k < n; k++)\n"
        "          tmp[i][j] += A[i][k] * A[k][j];\n      }\n    }"
    )
    jam = _rewrite("matmul", JAM2, "L1")  # `j` by 2 into `k`, in the body of `for (i ...)`
    assert jam is not None and jam.legal and jam.edits[0][1].startswith("{\n      for (j = 0; j < 0 + (n - 0) / 2 * 2; j += 2)")


def test_unroll_and_jam_of_a_loop_starting_at_a_sum_counts_its_iterations_from_there() -> None:
    found = _rewrite("lu", JAM2, "L2")  # `i` from k + 1: (n - (k + 1)) iterations, not n - k + 1
    assert found is not None and "i < k + 1 + (n - (k + 1)) / 2 * 2; i += 2)" in found.edits[0][1]


def test_a_loop_written_otherwise_is_refused_with_the_form_to_write() -> None:
    text = SOURCE.replace("for (int j = 1; j <= m - 1; j++)", "for (int j = 1; m - 1 >= j; j++)")
    found = _rewrite("sum2d", TILE32, text=text)
    assert found is not None and not found.legal
    assert found.reason == (
        "the condition of `j` is not `j < hi` or `j <= hi`: write it `for (j = lo; j < hi; j++)` to transform it"
    )


# ------------------------------------------------------------------------- run against the original

CASES = [
    ("sum2d", "tile16", TILE16), ("sum2d", "tile32", TILE32), ("sum2d", "jam2", JAM2), ("sum2d", "jam4", JAM4),
    ("matmul", "tile16", TILE16), ("matmul", "jam4", JAM4), ("stencil", "tile32", TILE32),
    ("wave", "skew", rewrites.skew), ("chain", "fuse", rewrites.fuse),
    ("apart", "distribute", rewrites.distribute), ("backwards", "distribute", rewrites.distribute),
]  # fmt: skip


def _differential(tmp: Path, function: str, text: str, rewritten: str) -> None:
    before, after = tmp / "before.c", tmp / "after.c"
    before.write_text(text)
    after.write_text(rewritten)
    for n in (37, 33, 1, 0):
        values = {"n": n, "m": n + 4}
        layout = layout_for_source(str(before), function, values)
        inputs = make_inputs(layout)
        want = run_reference(str(before), layout, inputs)
        got = run_reference(str(after), layout, inputs)
        for name, array in want.arrays.items():
            np.testing.assert_array_equal(got.arrays[name], array, err_msg=f"{function}, n={n}: {name}")


@pytest.mark.slow
@pytest.mark.parametrize(("function", "what", "make"), CASES, ids=[f"{f}-{w}" for f, w, _ in CASES])
def test_the_rewritten_code_computes_the_same(tmp_path: Path, function: str, what: str, make: Make) -> None:
    _differential(tmp_path, function, SOURCE, _applied(_rewrite(function, make)))


INNER = [("init_then_sum", "L1", rewrites.distribute), ("matmul", "L1", JAM2), ("lu", "L2", JAM2), ("lu", "L1", rewrites.fuse)]


@pytest.mark.slow
@pytest.mark.parametrize(("function", "loop", "make"), INNER, ids=[f"{f}-{lp}" for f, lp, _ in INNER])
def test_an_inner_loop_rewritten_computes_the_same(tmp_path: Path, function: str, loop: str, make: Make) -> None:
    _differential(tmp_path, function, SOURCE, _applied(_rewrite(function, make, loop)))


@pytest.mark.slow
def test_a_skewed_then_tiled_nest_computes_the_same(tmp_path: Path) -> None:
    skewed = _applied(_rewrite("wave", rewrites.skew))
    _differential(tmp_path, "wave", SOURCE, _applied(_rewrite("wave", TILE16, text=skewed), skewed))


@pytest.mark.slow
def test_a_refused_tile_made_anyway_computes_otherwise(tmp_path: Path) -> None:
    # The check that the refusal is right, and that the comparison can fail: wave's band tiled
    # against its (1, -1) dependence reads values not yet written.
    fa = analyze_file("/rewrites.c", SOURCE, only="wave")
    fn = fa.functions[0]
    (sa,) = fn.scops
    headers = [rewrites._header(fn.function, lp, SOURCE) for lp in sa.scop.loops]
    hs = [h for h in headers if isinstance(h, rewrites.Header)]
    forced = rewrites._tiled(hs, 16, fn.function, SOURCE)
    rewritten = apply_edits(SOURCE, (Edit(*rewrites._replace(SOURCE, hs[0], forced)),))
    with pytest.raises(AssertionError, match="wave, n=37: a"):
        _differential(tmp_path, "wave", SOURCE, rewritten)
