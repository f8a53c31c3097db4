"""Compare the arrays of a reference run with those of a generated-code run.

- Integer and boolean arrays must be equal, element for element.
- Floating arrays pass where ``|actual - expected| <= atol + rtol * |expected|`` elementwise, with
  ``rtol`` from `RTOL` by dtype (1e-9 for double, 1e-4 for float, 1e-12 for long double) and
  ``atol = rtol * max(1, max |expected|)``: the absolute slack scales with the array's magnitude,
  so elements that cancel to near zero (a mean subtracted, ``x - x``) do not fail on rounding
  noise relative to the values they came from. NaN matches NaN at the same index; infinities must
  match exactly.
- Names, shapes and dtypes must agree.

Both tolerances can be overridden per call.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

RTOL = {"float16": 1e-2, "float32": 1e-4, "float64": 1e-9, "longdouble": 1e-12}


@dataclass(frozen=True)
class ArrayComparison:
    name: str
    ok: bool
    message: str  # "ok", or what went wrong, for a C programmer
    mismatches: int = 0  # elements outside the tolerance
    max_abs_error: float = 0.0
    first_mismatch: tuple[int, ...] | None = None  # the index, in C order
    expected_value: object = None  # at `first_mismatch`
    actual_value: object = None
    rtol: float = 0.0
    atol: float = 0.0


@dataclass(frozen=True)
class Comparison:
    arrays: tuple[ArrayComparison, ...]

    @property
    def ok(self) -> bool:
        return all(a.ok for a in self.arrays)

    @property
    def failures(self) -> tuple[ArrayComparison, ...]:
        return tuple(a for a in self.arrays if not a.ok)

    def report(self) -> str:
        return "\n".join(f"{a.name}: {a.message}" for a in self.arrays)


def compare_arrays(
    expected: Mapping[str, np.ndarray],
    actual: Mapping[str, np.ndarray],
    *,
    rtol: float | None = None,
    atol: float | None = None,
) -> Comparison:
    """Compare every array of `expected` with the array of the same name in `actual`."""
    names = list(expected) + [n for n in actual if n not in expected]
    return Comparison(tuple(_compare_named(n, expected, actual, rtol, atol) for n in names))


def _compare_named(
    name: str,
    expected: Mapping[str, np.ndarray],
    actual: Mapping[str, np.ndarray],
    rtol: float | None,
    atol: float | None,
) -> ArrayComparison:
    if name not in actual:
        return ArrayComparison(name, False, "missing from the actual results")
    if name not in expected:
        return ArrayComparison(name, False, "not in the expected results")
    return compare_array(name, np.asarray(expected[name]), np.asarray(actual[name]), rtol, atol)


def compare_array(
    name: str,
    expected: np.ndarray,
    actual: np.ndarray,
    rtol: float | None = None,
    atol: float | None = None,
) -> ArrayComparison:
    if expected.shape != actual.shape:
        return ArrayComparison(name, False, f"shape {actual.shape}, expected {expected.shape}")
    if expected.dtype != actual.dtype:
        return ArrayComparison(name, False, f"dtype {actual.dtype}, expected {expected.dtype}")
    if expected.dtype.kind == "f":
        return _compare_float(name, expected, actual, rtol, atol)
    bad = expected != actual
    return _result(name, expected, actual, bad, _int_error(expected, actual), 0.0, 0.0)


def _compare_float(
    name: str, expected: np.ndarray, actual: np.ndarray, rtol: float | None, atol: float | None
) -> ArrayComparison:
    r = RTOL.get(expected.dtype.name, RTOL["longdouble"]) if rtol is None else rtol
    finite = np.isfinite(expected)
    scale = float(np.max(np.abs(expected[finite]), initial=1.0))
    a = r * scale if atol is None else atol
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(actual.astype(np.longdouble) - expected)
        close = err <= a + r * np.abs(expected)
    same_special = (np.isnan(expected) & np.isnan(actual)) | (~finite & (expected == actual))
    bad = ~(np.where(finite, close, same_special))
    errs = np.where(bad, np.nan_to_num(err, nan=np.inf), np.where(finite, err, 0.0))
    max_err = float(np.max(errs, initial=0.0))
    return _result(name, expected, actual, bad, max_err, r, a)


def _int_error(expected: np.ndarray, actual: np.ndarray) -> float:
    if expected.size == 0:
        return 0.0
    diff = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    return float(diff.max())


def _result(
    name: str,
    expected: np.ndarray,
    actual: np.ndarray,
    bad: np.ndarray,
    max_err: float,
    rtol: float,
    atol: float,
) -> ArrayComparison:
    count = int(np.count_nonzero(bad))
    if count == 0:
        return ArrayComparison(name, True, "ok", 0, max_err, rtol=rtol, atol=atol)
    index = tuple(int(i) for i in np.unravel_index(int(np.argmax(bad)), bad.shape))
    exp, act = expected[index].item(), actual[index].item()
    message = (
        f"{count} of {bad.size} elements differ; first at {name}{''.join(f'[{i}]' for i in index)}: "
        f"expected {exp!r}, got {act!r}; max abs error {max_err:.3g}"
    )
    return ArrayComparison(name, False, message, count, max_err, index, exp, act, rtol, atol)
