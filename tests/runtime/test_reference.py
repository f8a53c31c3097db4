"""The reference runner: the original C function, built with the system compiler, via ctypes."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from core_compiler.frontend import ParseOptions
from core_compiler.runtime import (
    BuildError,
    BuildOptions,
    LayoutError,
    build_reference,
    call_reference,
    layout_for_source,
    make_inputs,
    reference,
    run_reference,
)

KERNELS = Path(__file__).resolve().parents[1] / "kernels"
# VLA and macro-sized styles; double, float and int arrays; 1-D to 3-D; sqrt and divisions.
CHOSEN = ("kernel_gemm", "kernel_2mm", "kernel_cholesky", "kernel_sgemv", "kernel_floyd_warshall",
          "kernel_heat_3d", "kernel_covariance", "kernel_nussinov", "kernel_fdtd_2d")  # fmt: skip


def _suite() -> dict[str, dict]:
    path = KERNELS / "suite.json"
    entries = json.loads(path.read_text()) if path.exists() else []
    return {e["function"]: e for e in entries}


def _entry(function: str) -> dict:
    entry = _suite().get(function)
    if entry is None or not (KERNELS / entry["file"]).exists():
        pytest.skip(reason=f"{function} is not in the kernel suite")
    return entry


@pytest.mark.parametrize("size", [0, 1, 13])
@pytest.mark.parametrize("function", CHOSEN)
def test_suite_kernel_runs_finite_and_deterministic(function: str, size: int) -> None:
    entry = _entry(function)
    source = str(KERNELS / entry["file"])
    values = dict.fromkeys(entry["sizes"], size)
    layout = layout_for_source(source, function, values, size_limits=entry["size_limits"])
    inputs = make_inputs(layout, seed=0)
    first = run_reference(source, layout, inputs)
    second = run_reference(source, layout, make_inputs(layout, seed=0))
    assert set(first.arrays) == {a.name for a in layout.arrays}
    for slot in layout.arrays:
        out = first.arrays[slot.name]
        assert out.shape == slot.shape and out.dtype == slot.dtype
        assert np.isfinite(out).all() if out.dtype.kind == "f" else True
        assert out.tobytes() == second.arrays[slot.name].tobytes()
    if size == 13:  # the kernel did something, and the inputs were not written
        assert any(not np.array_equal(first.arrays[k], inputs[k]) for k in inputs)
        assert all(np.array_equal(inputs[k], make_inputs(layout)[k]) for k in inputs)


STATIC_DOT = """
#include <stdio.h>
static double dot(int n, const double x[n], const double y[n])
{
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] * y[i];
  return s;
}
static void axpy(int n, float a, float *x, float y[static 1])
{
  for (int i = 0; i < n; i++)
    y[i] += a * x[i];
}
static void rowsum(int n, int m, long A[n][m], long s[n])
{
  for (int i = 0; i < n; i++) {
    s[i] = 0;
    for (int j = 0; j < m; j++)
      s[i] += A[i][j] * (j + 1);
  }
}
int main(void) { double x[3] = {1, 2, 3}; printf("%f\\n", dot(3, x, x)); return 0; }
"""


@pytest.fixture
def static_c(tmp_path: Path) -> str:
    path = tmp_path / "static.c"
    path.write_text(STATIC_DOT)
    return str(path)


def test_static_functions_match_numpy(static_c: str) -> None:
    layout = layout_for_source(static_c, "dot", {"n": 13})
    inputs = make_inputs(layout, seed=7)
    result = run_reference(static_c, layout, inputs)
    assert result.returned == pytest.approx(float(inputs["x"] @ inputs["y"]), rel=1e-12)

    layout = layout_for_source(static_c, "axpy", {"n": 5}, shapes={"x": ("n",), "y": ("n",)})
    inputs = make_inputs(layout)
    out = run_reference(static_c, layout, inputs).arrays["y"]
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, inputs["y"] + np.float32(1.5) * inputs["x"])

    layout = layout_for_source(static_c, "rowsum", {"n": 4, "m": 3})
    inputs = make_inputs(layout)
    out = run_reference(static_c, layout, inputs).arrays["s"]
    np.testing.assert_array_equal(out, inputs["A"] @ np.arange(1, 4))


def test_the_reference_time_is_its_best_call_within_a_budget(static_c: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first call binds symbols and pages the code in: at small sizes that, not the loops,
    was most of the reference's time, and `hexplore run` reported an 18x speedup at n=64."""
    layout = layout_for_source(static_c, "dot", {"n": 13})
    times = iter([5e-5, 3e-6, 2e-6, 4e-6, 1.0])
    calls: list[float] = []
    call = reference.call_reference

    def timed(*args: object) -> reference.ReferenceResult:
        calls.append(next(times))
        return replace(call(*args), elapsed_s=calls[-1])

    monkeypatch.setattr(reference, "call_reference", timed)
    assert run_reference(static_c, layout, rounds=4).elapsed_s == 2e-6 and len(calls) == 4
    monkeypatch.setattr(reference, "TIMING_BUDGET_S", 1e-5)  # a slow first call is not repeated
    assert run_reference(static_c, layout, rounds=4).elapsed_s == 1.0 and len(calls) == 5


def test_builds_are_cached_and_text_overrides_the_file(static_c: str) -> None:
    layout = layout_for_source(static_c, "dot", {"n": 2})
    build_reference(static_c, layout)
    assert build_reference(static_c, layout).cached
    edited = STATIC_DOT.replace("s += x[i] * y[i];", "s += 2.0 * x[i] * y[i];")
    lib = build_reference(static_c, layout, text=edited)
    inputs = make_inputs(layout)
    assert call_reference(lib, layout, inputs).returned == pytest.approx(
        2 * float(inputs["x"] @ inputs["y"]), rel=1e-12
    )


def test_extra_defines_reach_the_compiler(tmp_path: Path) -> None:
    path = tmp_path / "scale.c"
    path.write_text("void scale(int n, double x[n]) { for (int i = 0; i < n; i++) x[i] *= K; }\n")
    layout = layout_for_source(str(path), "scale", {"n": 3})
    result = run_reference(str(path), layout, options=BuildOptions(defines=("K=4.0",)))
    np.testing.assert_array_equal(result.arrays["x"], 4.0 * make_inputs(layout)["x"])


def test_compiler_errors_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "bad.c"
    path.write_text("void f(int n, double x[n]) { x[0] = undeclared; }\n")
    layout = layout_for_source(str(path), "f", {"n": 1})
    with pytest.raises(BuildError, match="undeclared"):
        run_reference(str(path), layout)


def test_inputs_must_fit_the_layout(static_c: str) -> None:
    layout = layout_for_source(static_c, "dot", {"n": 3})
    good = make_inputs(layout)
    with pytest.raises(LayoutError, match="shape"):
        run_reference(static_c, layout, {**good, "x": np.zeros(4)})
    with pytest.raises(LayoutError, match="dtype"):
        run_reference(static_c, layout, {**good, "x": np.zeros(3, np.complex128)})
    with pytest.raises(LayoutError, match="missing input array 'y'"):
        run_reference(static_c, layout, {"x": good["x"]})


PROGRAM = """#include "sizes.h"
extern void *alloc_elsewhere(unsigned long n);  /* defined in another file of the program */
extern double tuned_elsewhere(double);
static void scale(int n, double x[n]) { for (int i = 0; i < n; i++) x[i] *= K; }
static void tune(int n, double x[n]) { for (int i = 0; i < n; i++) x[i] = tuned_elsewhere(x[i]); }
int main(void) { double *x = alloc_elsewhere(8); scale(8, x); return 0; }
"""


@pytest.fixture
def program(tmp_path: Path) -> Path:
    (tmp_path / "inc").mkdir()
    (tmp_path / "inc" / "sizes.h").write_text("#define K 3.0\n")
    path = tmp_path / "program.c"
    path.write_text(PROGRAM)
    return path


def test_a_file_of_a_larger_program_builds_with_its_include_dirs(program: Path) -> None:
    """PolyBench's style: `main` calls functions of another file, headers come from -I."""
    layout = layout_for_source(str(program), "scale", {"n": 5}, options=ParseOptions((str(program.parent / "inc"),)))
    result = run_reference(str(program), layout)
    np.testing.assert_array_equal(result.arrays["x"], 3.0 * make_inputs(layout)["x"])


def test_a_function_that_needs_another_file_is_a_clear_error(program: Path) -> None:
    layout = layout_for_source(str(program), "tune", {"n": 5}, options=ParseOptions((str(program.parent / "inc"),)))
    with pytest.raises(BuildError, match="`tune` uses `tuned_elsewhere`, which its file does not define"):
        run_reference(str(program), layout)
