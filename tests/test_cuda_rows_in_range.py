"""Races in a kernel that indexes a flat pointer as rows of a constant length while a size bounds
its columns (`races.sizes_leaving_rows`, issue 28): hexplore's CUDA for PolyBench's 2mm at MINI
indexes `D` as rows of 24 (``D[(T0 + t0) * 24 + (T1 + t1 + 48)]``) with columns up to `nl`. Where
a column leaves its row (``nl > 24``) the threads' elements run into each other's rows, and the
access whose constant folds into the row (``D[r + 2][c]``) showed that race, though at the sizes
the kernel is made for nothing leaves its row. Races are judged where every column stays within
its row; a launch elsewhere is refused, so no racy run passes for a right one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from core_compiler.cuda.cpu import NotTranslatable, compile_kernel, footprint
from core_compiler.frontend import ir, run_frontend

# rows of 8; 16 threads per row, so at m > 8 the columns 8.. are the next row's elements, and the
# second store's `c + 8` folds into the row (`D[r + 1][c]`), another thread's element there
TILES = """
__global__ void tiles_of_rows(double *D, int n, int m) {
  int r = blockIdx.x * 4 + threadIdx.y;
  int c = threadIdx.x;
  if (r < n && c < m) {
    D[r * 8 + c] = 2.0 * D[r * 8 + c] + 1.0;
    if (c + 8 < m)
      D[r * 8 + c + 8] = 3.0 * D[r * 8 + c + 8];
  }
}
void run(double *D, int n, int m) { tiles_of_rows<<<(n + 3) / 4, dim3(16, 4)>>>(D, n, m); }
"""


def _kernel(tmp_path: Path, text: str) -> ir.Function:
    path = tmp_path / "rows.cu"
    path.write_text(text)
    (fn,) = [f for f in run_frontend(str(path)).functions if f.is_cuda_kernel]
    return fn


@pytest.mark.parametrize(("n", "m"), [(37, 8), (37, 5), (1, 1), (0, 8), (5, 0)])
def test_a_kernel_whose_columns_stay_in_their_rows_runs(tmp_path: Path, n: int, m: int) -> None:
    kernel = compile_kernel(_kernel(tmp_path, TILES))
    rng = np.random.default_rng(n + m)
    D = rng.random(8 * n + 1)
    want = D.copy()
    rows = want[: 8 * n].reshape(n, 8)
    rows[:, :m] = 2.0 * rows[:, :m] + 1.0
    kernel({"D": D, "n": n, "m": m}, {"x": max((n + 3) // 4, 1)})
    np.testing.assert_array_equal(D, want)


def test_a_launch_whose_columns_leave_their_rows_is_refused(tmp_path: Path) -> None:
    """At m = 12 thread (r, 9) and thread (r + 1, 1) write the same element: a real race, which the
    judgement at m <= 8 did not see; the launch says so instead of running it."""
    kernel = compile_kernel(_kernel(tmp_path, TILES))
    D = np.zeros(8 * 37 + 1)
    with pytest.raises(NotTranslatable, match=r"launched at .*m = 12.*runs past its row"):
        kernel({"D": D, "n": 37, "m": 12}, {"x": 10})


def test_a_race_within_rows_still_fires(tmp_path: Path) -> None:
    """Columns in their rows, two threads of a row on one element: refused as before."""
    racy = TILES.replace("D[r * 8 + c] = 2.0 * D[r * 8 + c] + 1.0;", "D[r * 8 + c / 2] = 2.0 * D[r * 8 + c / 2] + 1.0;")
    assert racy != TILES
    with pytest.raises(NotTranslatable, match="data race"):
        compile_kernel(_kernel(tmp_path, racy))


BUDGET = 8_000  # isl's operations: one launch's checks (under 3,000), not a hundred


def test_each_launch_is_checked_within_its_own_budget(tmp_path: Path) -> None:
    """isl's count is reset per launch: a time loop's launches each have the whole budget (before,
    the count of every launch's footprint added up: seidel_2d ran out at its n-th launch). One
    launch's checks of this kernel cost 2,000 to 3,000 of isl's operations, each at its own sizes."""
    kernel = compile_kernel(_kernel(tmp_path, TILES))
    kernel.model.scop.ctx.set_max_operations(BUDGET)
    need = [footprint(kernel.model, {"n": n, "m": 8}, {"x": (n + 3) // 4}) for n in range(1, 101)]
    assert need == [{"D": 8 * n} for n in range(1, 101)]
    D = np.zeros(8 * 37 + 1)
    for n in range(33, 38):  # rows 0..32 five times, row 36 once
        kernel({"D": D, "n": n, "m": 8}, {"x": (n + 3) // 4})
    np.testing.assert_array_equal(D[: 8 * 33], 2.0**5 - 1.0)
    np.testing.assert_array_equal(D[8 * 36 :], [1.0] * 8 + [0.0])


def test_a_launch_past_isl_budget_is_refused_with_its_reason(tmp_path: Path) -> None:
    """Run out of isl's budget, a launch's checks say so as a refusal, not isl's own error."""
    kernel = compile_kernel(_kernel(tmp_path, TILES))
    kernel.model.scop.ctx.set_max_operations(10)
    with pytest.raises(NotTranslatable, match="not checked within isl's budget"):
        footprint(kernel.model, {"n": 37, "m": 8}, {"x": 10})
    with pytest.raises(NotTranslatable, match="not checked within isl's budget"):
        kernel({"D": np.zeros(8 * 37 + 1), "n": 37, "m": 8}, {"x": 10})
