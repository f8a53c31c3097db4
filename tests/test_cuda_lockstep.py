"""The lockstep translation's AST (`core_compiler.cuda.cpu.lockstep_ast`) on a kernel whose domain
is many pieces: the suite's seidel_2d as ``compile --target cuda`` writes it (a skewed wavefront,
its partial tiles a statement of 33 pieces). Its block loops alone exceeded isl's budget of 4e7
operations; with the block and thread ids as sizes of the inner AST it is built in seconds, and
runs as the original does. Each launch's checks (`cpu.footprint`, `races.rows_left_at`) are per
statement at the launch's sizes, each launch within its own budget: over the free sizes they ran
out of it (over 5 minutes at the first launch)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core_compiler.cuda.cpu import compile_kernel
from core_compiler.cuda.host import run_host
from core_compiler.frontend import ir, run_frontend

KERNEL = r"""
#include <cuda_runtime.h>
#define floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))
#define hx_min(x, y) ((x) < (y) ? (x) : (y))
#define hx_max(x, y) ((x) > (y) ? (x) : (y))

__global__ void __launch_bounds__(512) kernel0(double *__restrict__ A, int n, int tsteps, int h0, int o0, int o1)
{
  int b0 = blockIdx.y + o0;
  int b1 = blockIdx.x + o1;
  int t0 = threadIdx.y;
  int t1 = threadIdx.x;
  if (n >= 3 && b0 >= 0 && tsteps >= 32 * b0 + 1 && b1 >= 0 && n >= 32 * b1 + 2 && 3 * n + 4 * tsteps >= h0 + 10 && h0 >= 128 * b0 + 3 && h0 >= 128 * b0 + 64 * b1 + 1 && n + 4 * tsteps + 64 * b1 + 56 >= h0 && 3 * n + 128 * b0 + 118 >= h0 && n + 128 * b0 + 64 * b1 + 184 >= h0) {
    {
      int T0 = (32 * b0);
      int T1 = (32 * b1);
      if (tsteps >= T0 + 32 && T0 >= 0 && h0 >= 4 * T0 + 127 && 3 * n + 4 * T0 >= h0 + 6 && n >= T1 + 33 && T1 >= 1 && h0 >= 2 * T1 + 63 && n + 4 * tsteps + 2 * T1 >= h0 + 6) {
        for (int c0 = hx_max(T0 + t0, t0 + 16 * floord(-2 * T1 - n - 4 * t0 - 2 * t1 + h0 + 1, 64) + 16); c0 <= hx_min(T0 + 31, -T1 - t1 + (2 * T1 + 2 * t1 + h0 - 1) / 4); c0 += 16) {
          A[((T1 + t1)) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0)] = (((((((((A[((T1 + t1) - 1) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) - 1] + A[((T1 + t1) - 1) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0)]) + A[((T1 + t1) - 1) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) + 1]) + A[((T1 + t1)) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) - 1]) + A[((T1 + t1)) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0)]) + A[((T1 + t1)) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) + 1]) + A[((T1 + t1) + 1) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) - 1]) + A[((T1 + t1) + 1) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0)]) + A[((T1 + t1) + 1) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) + 1]) / 9.0);
        }
      } else {
        if (n >= T1 + t1 + 2 && T1 + t1 >= 1) {
          for (int c0 = hx_max(T0 + t0, t0 + 16 * floord(-2 * T1 - n - 4 * t0 - 2 * t1 + h0 + 1, 64) + 16); c0 <= hx_min(hx_min(T0 + 31, tsteps - 1), -T1 - t1 + (2 * T1 + 2 * t1 + h0 - 1) / 4); c0 += 16) {
            A[((T1 + t1)) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0)] = (((((((((A[((T1 + t1) - 1) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) - 1] + A[((T1 + t1) - 1) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0)]) + A[((T1 + t1) - 1) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) + 1]) + A[((T1 + t1)) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) - 1]) + A[((T1 + t1)) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0)]) + A[((T1 + t1)) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) + 1]) + A[((T1 + t1) + 1) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) - 1]) + A[((T1 + t1) + 1) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0)]) + A[((T1 + t1) + 1) * (37) + (-2 * T1 - 2 * t1 + h0 - 4 * c0) + 1]) / 9.0);
          }
        }
      }
    }
  }
}
extern "C" void kernel_seidel_2d(int tsteps, int n, double *A)
{
  double *dev_A;
  cudaMalloc((void **)&dev_A, (37) * (37) * sizeof(double));
  cudaMemcpy(dev_A, A, (37) * (37) * sizeof(double), cudaMemcpyHostToDevice);
  if (n >= 3 && tsteps >= 1) {
    for (int c0 = 3; c0 < 3 * n + 4 * tsteps - 9; c0++) {
      if (n >= c0 || 3 * n >= c0 + 6 || ((n + c0 + 1) % 4) + 2 * n >= 9 || (n == 4 && (c0 + 1) % 4 == 0)) {
        {
          int h0 = c0;
          int o0 = 3 * n >= h0 + 6 ? 0 : h0 - (127 * h0 + 3 * n + 118) / 128;
          int o1 = h0 + 3 >= n + 4 * tsteps ? h0 - (63 * h0 + n + 4 * tsteps + 56) / 64 : 0;
          dim3 k0_block(32, 16);
          dim3 k0_grid(hx_max(((2 * n >= h0 + 4 ? (h0 + 63) / 64 - 1 : (n + 30) / 32 - 1) - (h0 + 3 >= n + 4 * tsteps ? h0 - (63 * h0 + n + 4 * tsteps + 56) / 64 : 0) + 1), 1), hx_max((((n >= h0 && h0 + 1 >= 4 * tsteps) || (h0 + 5 >= 3 * n && h0 + 1 >= 4 * tsteps) || (h0 >= n + 1 && 3 * n >= h0 + 6 && h0 + 1 >= 4 * tsteps) ? (tsteps + 31) / 32 - 1 : (h0 + 125) / 128 - 1) - (3 * n >= h0 + 6 ? 0 : h0 - (127 * h0 + 3 * n + 118) / 128) + 1), 1));
          kernel0<<<k0_grid, k0_block>>>(dev_A, n, tsteps, h0, o0, o1);
        }
      }
    }
  }
  cudaDeviceSynchronize();
  cudaMemcpy(A, dev_A, (37) * (37) * sizeof(double), cudaMemcpyDeviceToHost);
  cudaFree(dev_A);
}
"""


@pytest.fixture(scope="module")
def seidel(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ir.Function]:
    path = Path(tmp_path_factory.mktemp("lockstep")) / "seidel_2d.cu"
    path.write_text(KERNEL)
    return {f.name: f for f in run_frontend(str(path)).functions}


def _seidel(A: np.ndarray, n: int, tsteps: int) -> None:
    """PolyBench's seidel-2d on the top-left n x n of `A`, in place."""
    for _ in range(tsteps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = A[i - 1 : i + 2, j - 1 : j + 2].sum() / 9.0


@pytest.mark.slow  # about 10 s (before: over the budget after 95-140 s)
def test_a_wavefront_of_many_pieces_is_scheduled_within_the_budget(seidel: dict[str, ir.Function]) -> None:
    kernel = compile_kernel(seidel["kernel0"])
    assert kernel.model.n_grid == 4  # blocks and threads are the outer loops, the ids sizes inside


@pytest.mark.long  # 43 s for the six at load ~3 (35.5 s of them at (37, 33): 231 launches)
@pytest.mark.parametrize(("n", "tsteps"), [(37, 33), (20, 5), (5, 3), (3, 1), (1, 2), (0, 0)])
def test_the_wavefront_runs_as_the_original(seidel: dict[str, ir.Function], n: int, tsteps: int) -> None:
    rng = np.random.default_rng(n)
    A = rng.random((37, 37))
    expected = A.copy()
    _seidel(expected, n, tsteps)
    flat = A.reshape(-1).copy()
    run_host(seidel, "kernel_seidel_2d", {"A": flat}, {"tsteps": tsteps, "n": n})
    np.testing.assert_allclose(flat.reshape(37, 37), expected, rtol=1e-12, atol=0)
