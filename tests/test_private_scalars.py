"""Local scalars that each iteration of a loop sets before it reads them are one value per
iteration (`core_compiler/scop/private_scalars.py`): symm's `temp2` and deriche's `ym1` no longer
serialize their loops (the GPU code of both ran on one thread). Where the value may be read later
(after the loops, through a pointer, in the next call) or an iteration reads the previous one's,
the scalar stays one variable. Every case runs and matches the original."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.compile import compile_file
from core_compiler.runtime.differential import check_opencl
from tests.helpers import analyze, nvcc_compiles, runs_everywhere

SOURCE = """
void symm(int m, int n, double alpha, double C[m][n], double A[m][m], double B[m][n]) {
  double temp2;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++) {
      temp2 = 0;
      for (int k = 0; k < i; k++) {
        C[k][j] += alpha * B[i][j] * A[i][k];
        temp2 += B[k][j] * A[i][k];
      }
      C[i][j] = C[i][j] + alpha * B[i][j] * A[i][i] + alpha * temp2;
    }
}
void sweeps(int w, int h, double x[w][h], double y[w][h]) {
  double ym1, xm1;
  for (int i = 0; i < w; i++) {
    ym1 = 0.0;
    xm1 = 0.0;
    for (int j = 0; j < h; j++) {
      y[i][j] = 0.5 * x[i][j] + 0.25 * xm1 + 0.125 * ym1;
      xm1 = x[i][j];
      ym1 = y[i][j];
    }
  }
  for (int j = 0; j < h; j++) {
    ym1 = 0.0;
    for (int i = 0; i < w; i++) {
      y[i][j] = y[i][j] + 0.5 * ym1;
      ym1 = y[i][j];
    }
  }
}
double read_after(int n, double a[n], double b[n]) {
  double t;
  for (int i = 0; i < n; i++) {
    t = a[i] * 2;
    b[i] = t;
  }
  return t;
}
void carried(int n, double a[n], double b[n]) {
  double t = 1;
  for (int i = 0; i < n; i++) {
    b[i] = t;
    t = a[i];
  }
}
void through_pointer(int n, double a[n], double b[n], double *out) {
  double t;
  double *p = &t;
  for (int i = 0; i < n; i++) {
    t = a[i] + 1;
    b[i] = t * t;
  }
  *out = *p;
}
void remembered(int n, double a[n], double b[n]) {
  static double t;
  for (int i = 0; i < n; i++) {
    t = a[i] + 1;
    b[i] = t * t;
  }
}
"""


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> str:
    p = tmp_path_factory.mktemp("private") / "private.c"
    p.write_text(SOURCE)
    return str(p)


def _dims(function: str, scalar: str) -> int | None:
    f = analyze(SOURCE).function(function)
    assert f is not None
    decls = [a for sa in f.scops for a in sa.scop.arrays if a.name == scalar]
    return len(decls[0].extents) if decls else None


def _parallel(function: str, var: str) -> bool:
    f = analyze(SOURCE).function(function)
    assert f is not None
    return all(lp.parallel for sa in f.scops for lp in sa.deps.loops if lp.loop.var == var)


def test_a_scalar_set_first_in_each_iteration_is_one_per_iteration() -> None:
    assert _dims("symm", "temp2") == 2  # temp2[i][j]
    assert _dims("sweeps", "ym1") == 1  # ym1[i] in the first nest, ym1[j] in the second
    assert _parallel("sweeps", "i") is False or _parallel("sweeps", "j") is False  # each sweep's own loop carries
    f = analyze(SOURCE).function("sweeps")
    assert f is not None
    outer = [lp for sa in f.scops for lp in sa.deps.loops if lp.loop.depth == 0]
    assert outer and all(lp.parallel for lp in outer), [lp.carried for lp in outer]


@pytest.mark.parametrize("function", ["read_after", "carried", "through_pointer", "remembered"])
def test_a_scalar_whose_value_may_be_read_later_stays_one_variable(function: str) -> None:
    assert _dims(function, "t") in (0, None)
    assert not _parallel(function, "i")


@pytest.mark.parametrize("function,sizes", [  # symm (40 s: register tiles) in the long tier; its GPU code below
    pytest.param("symm", [{"m": 33, "n": 35}, {"m": 0, "n": 3}, {"m": 1, "n": 1}], marks=pytest.mark.long),
    ("sweeps", [{"w": 6, "h": 5}, {"w": 1, "h": 0}, {"w": 33, "h": 2}]),
    ("read_after", [{"n": 5}, {"n": 0}]),
    ("carried", [{"n": 5}, {"n": 1}]),
])  # fmt: skip
@pytest.mark.slow  # about a minute: three back ends per size
def test_private_scalars_run_and_match(path: str, function: str, sizes: list[dict[str, int]]) -> None:
    runs_everywhere(path, function, sizes)  # OpenCL at the first size
    gpu = check_opencl(path, function, sizes[-1])
    assert gpu.ok, gpu.comparison.report()


@pytest.mark.slow  # nvcc
def test_on_the_gpu_the_private_scalar_is_a_register(path: str, tmp_path: Path) -> None:
    result = compile_file(analyze(SOURCE, path), "cuda", always_offload=True)
    kernels = "".join(text for name, text in result.files.items() if name.endswith("symm_kernel.cu"))
    assert "private_temp2" in kernels and "temp2[" not in kernels.replace("private_temp2[", ""), kernels[:3000]
    nvcc_compiles({name: text for name, text in result.files.items() if "_symm_" in name}, tmp_path)


def test_a_scalar_read_in_a_while_condition_after_the_loops_stays_one_variable() -> None:
    src = """
void f(int n, double a[n], double b[n]) {
  double t;
  for (int i = 0; i < n; i++) {
    t = a[i] * 2;
    b[i] = t;
  }
  while (t > 1) b[0] = b[0] / 2;
}
"""
    fa = analyze(src)
    f = fa.function("f")
    assert f is not None
    assert all(len(a.extents) == 0 for sa in f.scops for a in sa.scop.arrays if a.name == "t")
