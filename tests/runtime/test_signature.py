"""Argument layouts and deterministic inputs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core_compiler.analysis import analyze_file
from core_compiler.errors import NotCheckable
from core_compiler.runtime import LayoutError, layout_for_source, macro_defines, make_inputs
from core_compiler.runtime.footprint import check_footprint, default_sizes, fit_layout
from core_compiler.runtime.signature import ArraySlot, ScalarSlot
from tests.helpers import check_cpu

KERNELS = Path(__file__).resolve().parents[1] / "kernels"

SHAPES_C = """
#define M 7
double f(unsigned long n, int m, float alpha, double beta, const double *x, double (*A)[m],
         double y[], double B[][M], double C[n + 1][2 * m - 1], int D[(n + 1) / 2][m % 4],
         double z[M])
{ return 0.0; }
"""


def _layout(tmp_path: Path, values: dict[str, int | float], **kw):  # type: ignore[no-untyped-def]
    path = tmp_path / "shapes.c"
    path.write_text(SHAPES_C)
    return layout_for_source(str(path), "f", values, **kw)


def test_scalars_and_expression_dims(tmp_path: Path) -> None:
    lay = _layout(tmp_path, {"n": 4, "m": 3})
    assert lay.slot("n") == ScalarSlot("n", "unsigned long", np.dtype("uint64"), 4)
    assert lay.slot("alpha").value == 1.5 and lay.slot("alpha").dtype == np.float32
    assert lay.slot("beta").value == 1.2
    assert lay.slot("C") == ArraySlot("C", "double", np.dtype("float64"), (5, 5))
    assert lay.slot("D") == ArraySlot("D", "int", np.dtype("int32"), (2, 3))
    assert lay.slot("z").shape == (7,)
    assert lay.returns == "double" and lay.return_dtype == np.float64


def test_unknown_extents_default_and_override(tmp_path: Path) -> None:
    lay = _layout(tmp_path, {"n": 4, "m": 3})
    # prod(v + 1) = 20 elements, raised to the minimum of 64
    assert lay.slot("x").shape == (64,)
    assert lay.slot("A").shape == (22, 3)  # ceil(64 / 3) rows of m
    assert lay.slot("B").shape == (10, 7)
    big = _layout(tmp_path, {"n": 20, "m": 9})
    assert big.slot("x").shape == (21 * 10,)
    lay = _layout(tmp_path, {"n": 4, "m": 3}, shapes={"x": ("n",), "A": ("n + 1", "m"), "y": (9,)})
    assert lay.slot("x").shape == (4,)
    assert lay.slot("A").shape == (5, 3)
    assert lay.slot("y").shape == (9,)


def test_float_scalar_override_and_missing_int(tmp_path: Path) -> None:
    assert _layout(tmp_path, {"n": 1, "m": 1, "beta": 3.0}).slot("beta").value == 3.0
    with pytest.raises(LayoutError, match="'m'"):
        _layout(tmp_path, {"n": 4})
    with pytest.raises(LayoutError, match="negative"):
        _layout(tmp_path, {"n": 4, "m": 0})  # C[n + 1][2 * m - 1]


def test_macro_sized_kernel_is_parsed_with_the_sizes() -> None:
    limits = {"ni": "NI", "nj": "NJ", "nk": "NK"}
    lay = layout_for_source(str(KERNELS / "gemm.c"), "kernel_gemm",
                            {"ni": 13, "nj": 0, "nk": 2}, size_limits=limits)  # fmt: skip
    assert lay.defines == ("NI=13", "NJ=0", "NK=2")
    assert [(a.name, a.shape) for a in lay.arrays] == [
        ("C", (13, 0)),
        ("A", (13, 2)),
        ("B", (2, 0)),
    ]
    assert [s.value for s in lay.scalars] == [13, 0, 2, 1.5, 1.2]


def test_macro_defines_takes_the_largest_value_per_macro() -> None:
    limits = {"n": "N", "m": "N", "t": None}
    assert macro_defines({"n": 3, "m": 8, "t": 100}, limits) == ("N=8",)


def test_vla_kernel_layout() -> None:
    lay = layout_for_source(str(KERNELS / "2mm.c"), "kernel_2mm",
                            {"ni": 3, "nj": 5, "nk": 7, "nl": 1})  # fmt: skip
    assert lay.defines == ()
    assert {a.name: a.shape for a in lay.arrays} == {
        "tmp": (3, 5), "A": (3, 7), "B": (7, 5), "C": (5, 1), "D": (3, 1)
    }  # fmt: skip


def test_inputs_are_deterministic_and_in_range(tmp_path: Path) -> None:
    lay = _layout(tmp_path, {"n": 6, "m": 2})
    a, b = make_inputs(lay, seed=3), make_inputs(lay, seed=3)
    assert all(np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in a)
    assert not np.array_equal(make_inputs(lay, seed=4)["x"], a["x"])
    assert a["x"].dtype == np.float64 and (a["x"] >= 0.5).all() and (a["x"] < 1.5).all()
    assert a["D"].dtype == np.int32 and (a["D"] >= 1).all() and (a["D"] < 10).all()
    assert all(v.flags.c_contiguous for v in a.values())


def test_square_matrices_are_diagonally_dominant(tmp_path: Path) -> None:
    lay = _layout(tmp_path, {"n": 4, "m": 3})  # C is 5 x 5
    c = make_inputs(lay)["C"]
    off = np.abs(c).sum(axis=1) - np.abs(np.diag(c))
    assert (np.diag(c) > off).all()
    assert np.linalg.eigvalsh(np.tril(c) + np.tril(c, -1).T).min() > 0


FLAT_C = """
#include <stddef.h>
void matmul_flat(size_t n, const double *restrict a, const double *restrict b, double *restrict c)
{
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j < n; j++) {
      double s = 0.0;
      for (size_t k = 0; k < n; k++)
        s += a[i * n + k] * b[k * n + j];
      c[i * n + j] = s;
    }
}
"""


def test_pointers_get_room_for_what_the_loops_touch(tmp_path: Path) -> None:
    """A flat n x n matrix behind ``double *``: the signature alone gives ``a`` max(64, n + 1)
    elements, which the loops overrun at n >= 9 (the run crashed with a corrupted heap); the
    loop nest says n * n. Such an array is checked in its flat buffer, and both builds match."""
    path = tmp_path / "flat.c"
    path.write_text(FLAT_C)
    fa = analyze_file(str(path))
    (fn,) = fa.functions
    bare = layout_for_source(str(path), "matmul_flat", {"n": 37})
    assert bare.slot("a").shape == (64,)
    with pytest.raises(NotCheckable, match="reach index 1368 of the flat buffer of `a`, which has 64 elements"):
        check_footprint(fn.scops[0].scop, bare)
    fitted = fit_layout(fn.function, fn.scops, bare)
    assert [fitted.slot(x).shape for x in "abc"] == [(37 * 37,)] * 3
    check_footprint(fn.scops[0].scop, fitted)
    for n in (37, 1, 0):
        result = check_cpu(str(path), "matmul_flat", {"n": n}, threads=2)
        assert result.ok, result.report()


SCALED_C = """
void scaled(int n, int k0, int k1, int k2, int k3, int k4, const double *a, double *b) {
  for (int i = 0; i < n; i++)
    b[i] = a[i] * k0 + k1 - k2 + k3 * k4;
}
"""


def test_integers_that_are_values_do_not_size_the_pointers(tmp_path: Path) -> None:
    """Six integers at 64 each: the signature's guess, 65**6 elements, would be 575 GiB; the
    loop touches n. A guess is only made to allocate when nothing better is known."""
    path = tmp_path / "scaled.c"
    path.write_text(SCALED_C)
    (fn,) = analyze_file(str(path)).functions
    values = dict.fromkeys(["n", "k0", "k1", "k2", "k3", "k4"], 64) | {"n": 100}
    guess = layout_for_source(str(path), "scaled", values)
    with pytest.raises(LayoutError, match=r"array 'a' would take .* GiB at these sizes"):
        make_inputs(guess)
    fitted = fit_layout(fn.function, fn.scops, guess)
    assert [fitted.slot(x).shape for x in "ab"] == [(100,), (100,)]
    result = check_cpu(str(path), "scaled", values, threads=2)
    assert result.ok, result.report()


def test_default_sizes_halve_until_the_loops_fit_the_declared_arrays() -> None:
    src = """#define N 20
void f(int n, int m, int k, double A[N][30], double x[m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      A[i][j] = x[j] * k;
}
"""
    fa = analyze_file("f.c", src).functions[0]
    assert default_sizes(fa.function, fa.scops, {}, 64) == {"n": 16, "m": 16, "k": 16}
    assert default_sizes(fa.function, fa.scops, {"k": 100}, 64) == {"n": 16, "m": 16, "k": 100}
    assert default_sizes(fa.function, fa.scops, {"m": 40}, 8) == {"n": 8, "m": 40, "k": 8}  # past A: the run says so
    assert default_sizes(fa.function, (), {}, 64) == {"n": 64, "m": 64, "k": 64}
