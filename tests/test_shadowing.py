"""A declaration that shadows an outer name is a variable of its own (`frontend/shadowing.py`):
``for (int c2 ...) { ... for (int c2 = T2; ...) }``, as hexplore's double-buffered CUDA writes
its copy loops (trmm), was read as the outer counter changed in its own body. C and CUDA input
alike; the C is run against the original, the CUDA kernel against numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core_compiler.cuda.cpu import compile_kernel
from core_compiler.frontend import ir, run_frontend
from core_compiler.runtime.differential import check_c
from tests.helpers import analyze

SOURCE = """
void blocks(int n, double A[n], double B[n])
{
  for (int i = 0; i < n; i += 8) {
    int lo = i;
    for (int i = lo; i < lo + 8 && i < n; i++)
      B[i] = 2.0 * A[i] + B[i];
    A[i] = B[i] + 1.0;
  }
}
void local_n(int n, double a[n])
{
  for (int k = 0; k < n; k++) {
    double n = a[k] * 3.0;
    a[k] = n + 1.0;
  }
}
void siblings(int n, double a[n])
{
  for (int i = 0; i < n; i++)
    a[i] = 1.0;
  for (int i = 0; i < n; i++)
    a[i] += i;
}
"""


def _loops(stmts: tuple[ir.Stmt, ...]) -> list[str]:
    out: list[str] = []
    for s in stmts:
        if isinstance(s, ir.For):
            out += [s.var, *_loops(s.body)]
        elif isinstance(s, ir.If):
            out += _loops(s.then) + _loops(s.other)
    return out


def test_a_shadowing_declaration_gets_a_name_of_its_own(tmp_path: Path) -> None:
    path = tmp_path / "shadow.c"
    path.write_text(SOURCE)
    fns = {f.name: f for f in run_frontend(str(path)).functions}
    assert _loops(fns["blocks"].body) == ["i", "i_1"]
    assert _loops(fns["siblings"].body) == ["i", "i"]  # sibling scopes: no shadowing
    (loop,) = fns["local_n"].body
    assert isinstance(loop, ir.For)
    decl = next(s for s in loop.body if isinstance(s, ir.Decl))
    assert decl.name == "n_1" and decl.range.line == 14  # the source's range


@pytest.mark.parametrize(("function", "statements"), [("blocks", 3), ("local_n", 2)])
def test_a_shadowing_declaration_is_modeled_and_runs_as_the_original(tmp_path: Path, function: str, statements: int) -> None:
    fa = analyze(SOURCE)
    f = fa.function(function)
    assert f is not None and len(f.scops) == 1, [r.message for r in fa.all_remarks()]
    assert len(f.scops[0].scop.statements) == statements  # the whole nest, the outer loop too
    path = tmp_path / "shadow.c"
    path.write_text(SOURCE)
    for n in (37, 1, 0):
        c = check_c(str(path), function, {"n": n})
        assert c.ok and c.kernels == 1, f"n = {n}\n{c.comparison.report()}"


KERNEL = """
__global__ void pairs(double *B, const double *A, int n) {
  int i = blockIdx.x * 32 + threadIdx.x;
  if (i < n) {
    for (int c = 0; c < 4; c += 2) {
      int T = c;
      for (int c = T; c < T + 2; c++)
        B[i * 4 + c] = A[i * 4 + c] * (c + 1);
      B[i * 4 + c] += 1.0;
    }
  }
}
void run(double *B, const double *A, int n) { pairs<<<(n + 31) / 32, 32>>>(B, A, n); }
"""


def test_a_shadowing_loop_in_a_cuda_kernel_runs(tmp_path: Path) -> None:
    path = tmp_path / "pairs.cu"
    path.write_text(KERNEL)
    (fn,) = [f for f in run_frontend(str(path)).functions if f.is_cuda_kernel]
    kernel = compile_kernel(fn)
    for n in (37, 1, 0):
        rng = np.random.default_rng(n)
        A, B = rng.random(4 * n + 1), np.zeros(4 * n + 1)
        want = B.copy()
        want[: 4 * n] = A[: 4 * n] * np.tile([1.0, 2.0, 3.0, 4.0], n) + np.tile([1.0, 0.0, 1.0, 0.0], n)
        kernel({"B": B, "A": A, "n": n}, {"x": max((n + 31) // 32, 1)})
        np.testing.assert_array_equal(B, want)
