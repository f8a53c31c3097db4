"""Bugs the differential fuzzer found (`python -m tests.fuzz`), each as its minimal program."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import runs_everywhere

pytestmark = pytest.mark.slow  # generated code runs

# Seeds 13 and 16: isl's scheduler gives up ("unable to carry dependences") on the dependence
# S1[i] -> S1[n - 1 - 2i] next to a loop starting at n - i, though the source order satisfies it;
# every back end raised islpy's error. `transform/schedule.py` now falls back to the source order.
UNCARRIED = """void f(int n, double B[2 * n + 3])
{
  for (int i = 0; i <= n; i++) {
    for (int l = n - i; l <= i; l++)
      B[2 * i + 1] += B[i];
    B[n - i] = B[2 * i + 1];
  }
}
"""


def test_a_schedule_isl_cannot_find_runs_in_source_order(tmp_path: Path) -> None:
    path = tmp_path / "uncarried.c"
    path.write_text(UNCARRIED)
    runs_everywhere(str(path), "f", [{"n": 13}, {"n": 1}, {"n": 0}])


# Seed 59: a local array declared in a loop that does not run at these sizes (`N / 2 + 1` with
# N = 1 starts at 1): its buffer's box was the empty union set, and `array_layouts` raised isl's
# "union map needs to contain elements in exactly one space" (C target and OpenCL).
EMPTY_LOCAL = """#ifndef N
#define N 40
#endif
void f(double A[N + 1])
{
  for (int i = 1; i < N / 2 + 1; i++) {
    double t[2];
    for (int q = 0; q < 2; q++)
      t[q] = A[i] + q;
    A[i] = t[0] + t[1];
  }
}
"""


def test_a_local_array_in_a_loop_that_never_runs(tmp_path: Path) -> None:
    from core_compiler.runtime.differential import check_c, check_opencl

    path = str(tmp_path / "empty_local.c")
    Path(path).write_text(EMPTY_LOCAL)
    for n in (1, 0, 7):
        assert check_c(path, "f", {"N": n}, size_limits={"N": "N"}).ok
        assert check_opencl(path, "f", {"N": n}, size_limits={"N": "N"}).ok
