"""Functions that return what their loop nest computed (``return s;`` after a dot product), as
BLAS-style C does: `hexplore run` checks the return value too, on the CPU and on OpenCL, where
the float versions of the math functions (``fabsf``) get OpenCL's overloaded names."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.errors import NotCheckable
from core_compiler.runtime.compare import compare_arrays
from core_compiler.runtime.cpu_variants import compile_variant, prepare, run_jit
from core_compiler.runtime.differential import check_device, reference_outputs
from core_compiler.runtime.gpu_opencl import OpenCLRuntime
from core_compiler.runtime.reference import run_reference
from tests.helpers import check_cpu

BLAS = """
#include <math.h>
double ddot(int n, const double *x, const double *y) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] * y[i];
  return s;
}
double dnrm2(int n, const double *x) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] * x[i];
  return sqrt(s);
}
float sasum(int n, const float *x) {
  float s = 0.0f;
  for (int i = 0; i < n; i++)
    s += fabsf(x[i]);
  return s;
}
void ddot_out(int n, const double *x, const double *y, double *out) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += x[i] * y[i];
  *out = s;
}
double last(int n, double a[n]) {
  for (int i = 1; i < n; i++)
    a[i] += a[i - 1];
  return a[n - 1];
}
int counter(void) { static int calls; return ++calls; }
int opaque(int n, double a[n]) {
  for (int i = 0; i < n; i++)
    a[i] = 2 * a[i];
  return counter();
}
"""


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> str:
    p = tmp_path_factory.mktemp("ret") / "blas.c"
    p.write_text(BLAS)
    return str(p)


@pytest.mark.parametrize("function", ["ddot", "dnrm2", "sasum", "last", "ddot_out"])
def test_the_return_value_is_checked_on_the_cpu_and_on_opencl(path: str, function: str) -> None:
    for n in (37, 1) if function == "last" else (37, 1, 0):
        cpu = check_cpu(path, function, {"n": n}, threads=2)
        checked = "out" if function == "ddot_out" else "return"  # `*out = s` is `out[0] = s`, in the SCoP
        assert cpu.ok and all(checked in {a.name for a in c.arrays} for c in cpu.variants.values()), cpu.report()
        runtime = OpenCLRuntime()
        try:
            device = check_device(path, function, {"n": n}, runtime)
        finally:
            runtime.close()
        assert device.ok and checked in {a.name for a in device.comparison.arrays}, device.comparison.report()


def test_a_wrong_return_value_is_a_mismatch(path: str) -> None:
    """The value comes from the scalar the JIT code left: off by one there, off in the check."""
    case = prepare(path, "dnrm2", {"n": 5})
    expected = reference_outputs(run_reference(path, case.layout, case.inputs))
    arrays, _ = run_jit(compile_variant(case, "untiled", parallel=False), case)
    assert float(arrays["s"][0]) == pytest.approx(float(expected["return"]) ** 2)
    assert compare_arrays(expected, case.outputs(arrays)).ok
    arrays["s"] += 1.0
    assert [a.name for a in compare_arrays(expected, case.outputs(arrays)).arrays if not a.ok] == ["return"]


def test_a_return_value_it_cannot_compute_is_said_so(path: str) -> None:
    with pytest.raises(NotCheckable, match=r"cannot compute what `opaque` returns \(line 36\)"):
        prepare(path, "opaque", {"n": 5})


def test_a_size_computed_before_the_loops_is_given_its_value(tmp_path: Path) -> None:
    """``const int h = n / 2;`` bounds the loops: it gets C's value (18 at n = 37, not 18.5)."""
    path = tmp_path / "half.c"
    path.write_text("void half(int n, double *a) {\n  const int h = n / 2;\n  for (int i = 0; i < h; i++)\n    a[i] = a[i + h] - a[i];\n}\n")
    assert prepare(str(path), "half", {"n": 37}).ints["h"] == 18
    for n in (37, 1, 0):
        assert check_cpu(str(path), "half", {"n": n}).ok
