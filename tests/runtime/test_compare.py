"""Comparing result arrays: exact for integers, a documented tolerance for floating point."""

from __future__ import annotations

import numpy as np

from core_compiler.runtime import compare_arrays
from core_compiler.runtime.compare import compare_array


def test_integer_mismatch_is_exact_and_located() -> None:
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = a.copy()
    b[1, 2] += 1
    b[2, 3] -= 5
    result = compare_arrays({"S": a}, {"S": b})
    assert not result.ok
    s = result.arrays[0]
    assert (s.mismatches, s.first_mismatch, s.max_abs_error) == (2, (1, 2), 5.0)
    assert (s.expected_value, s.actual_value) == (6, 7)
    assert "S[1][2]: expected 6, got 7" in result.report()
    assert compare_arrays({"S": a}, {"S": a.copy()}).ok


def test_double_tolerance() -> None:
    x = np.linspace(1.0, 100.0, 50)
    assert compare_arrays({"x": x}, {"x": x * (1 + 5e-10)}).ok
    bad = x.copy()
    bad[7] *= 1 + 1e-7
    result = compare_arrays({"x": x}, {"x": bad})
    assert not result.ok and result.arrays[0].first_mismatch == (7,)
    assert result.arrays[0].max_abs_error == abs(bad[7] - x[7])


def test_absolute_slack_scales_with_the_array() -> None:
    x = np.array([1000.0, 1e-13, -3.0])  # a value cancelled to ~0 next to large ones
    y = np.array([1000.0, 5e-8, -3.0])  # off by 5e-8 <= 1e-9 * 1000
    assert compare_arrays({"x": x}, {"x": y}).ok
    assert not compare_arrays({"x": x}, {"x": y}, atol=0.0).ok


def test_float32_tolerance_and_specials() -> None:
    x = np.array([1.0, 2.0, np.nan, np.inf], dtype=np.float32)
    near = np.array([1.00005, 2.0, np.nan, np.inf], dtype=np.float32)
    assert compare_arrays({"x": x}, {"x": near}).ok
    far = np.array([1.001, 2.0, np.nan, np.inf], dtype=np.float32)
    assert not compare_arrays({"x": x}, {"x": far}).ok
    assert not compare_array("x", x, np.array([1, 2, 0, np.inf], dtype=np.float32)).ok
    assert not compare_array("x", x, np.array([1, 2, np.nan, -np.inf], dtype=np.float32)).ok
    infinite = compare_array("x", x, np.array([1, np.inf, np.nan, np.inf], dtype=np.float32))
    assert infinite.first_mismatch == (1,) and infinite.max_abs_error == np.inf


def test_names_shapes_and_dtypes_must_agree() -> None:
    a = np.zeros((2, 3))
    result = compare_arrays({"A": a, "B": a}, {"A": a.T, "C": a})
    assert [(c.name, c.ok) for c in result.arrays] == [("A", False), ("B", False), ("C", False)]
    assert "shape" in result.arrays[0].message and "missing" in result.arrays[1].message
    assert "dtype" in compare_array("A", a, a.astype(np.float32)).message


def test_empty_arrays_compare_equal() -> None:
    assert compare_arrays({"A": np.zeros((0, 4))}, {"A": np.zeros((0, 4))}).ok
    assert compare_arrays({"S": np.zeros(0, np.int64)}, {"S": np.zeros(0, np.int64)}).ok
