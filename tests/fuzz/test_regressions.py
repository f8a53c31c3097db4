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
