"""``if`` statements whose condition reads array elements (thresholds, clamps, counts, running
maxima): their assignments become unconditional ones that keep the old value where the
condition fails (`core_compiler.scop.if_conversion`), so the loops around them are modeled,
parallelized (as reductions where they are: a count is a ``+``, a running maximum a ``max``)
and run; a branch whose condition reads what it assigns before its last assignment stays refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import analyze, named, range_of, runs_everywhere

IFS = """
#include <math.h>
double largest(int n, const double *a) {
  double m = a[0];
  for (int i = 1; i < n; i++)
    if (a[i] > m)
      m = a[i];
  return m;
}
int count(int n, const double *a, double *rest) {
  int c = 0;
  for (int i = 0; i < n; i++)
    if (a[i] > 0.5) c++;
    else *rest += a[i];
  return c;
}
void clamp(int n, int m, double A[n][m], double lo) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      if (A[i][j] < lo) A[i][j] = lo;
      if (A[i][j] > 1.0 - lo) { A[i][j] = 1.0 - lo; }
    }
}
void divide(int n, const int *d, int *q) {
  for (int i = 0; i < n; i++)
    if (d[i] % 4 != 0)
      q[i] = 1000 / (d[i] % 4);  /* never divides by zero: only where the condition holds */
}
void nested(int n, const double *a, const double *b, double *c) {
  for (int i = 0; i < n; i++)
    if (a[i] > 0.3) {
      if (b[i] > 0.6) c[i] = 1.0;
      else c[i] = 2.0;
    } else if (i > 2) {
      c[i] = a[i] + c[i - 3];
    }
}
void roots(int n, const double *a, double *b) {
  for (int i = 0; i < n; i++)
    if (a[i] > 0.25) {
      double t = sqrt(a[i]);
      b[i] = t * 2.0 + t;
    }
}
"""

ARGMAX = """
int argmax(int n, const double *a) {
  double m = a[0];
  int k = 0;
  for (int i = 1; i < n; i++)
    if (a[i] > m) { m = a[i]; k = i; }
  return k;
}
"""


def test_assignments_under_a_data_dependent_if_are_modeled_with_a_remark() -> None:
    fa = analyze(IFS)
    for f in fa.functions:
        assert len(f.scops) == 1, (f.function.name, [r.message for r in f.remarks])
        assert not named(list(f.remarks), "NonAffineCondition")
    (note,) = named(list(fa.function("largest").remarks), "GuardedAssignment")  # type: ignore[union-attr]
    assert note.range == range_of(IFS, "a[i] > m")
    assert "`a[i] > m` is known only at run time" in note.message


@pytest.mark.parametrize(("function", "op"), [("largest", "max"), ("count", "+")])
def test_counts_and_running_maxima_are_reductions(function: str, op: str) -> None:
    f = analyze(IFS).function(function)
    assert f is not None
    reductions = [r.message for r in named(list(f.remarks), "Reduction")]
    assert any(f"a `{op}` reduction over loop(s) `i`" in m for m in reductions), reductions


def test_clamps_stay_parallel() -> None:
    f = analyze(IFS).function("clamp")
    assert f is not None
    assert len(named(list(f.remarks), "ParallelLoop")) == 2


@pytest.mark.parametrize("function", ["largest", "count", "clamp", "divide", "nested", "roots"])
def test_data_dependent_ifs_run_and_match(tmp_path: Path, function: str) -> None:
    path = tmp_path / "ifs.c"
    path.write_text(IFS)
    runs_everywhere(str(path), function, [{"n": 37, "m": 5}, {"n": 1, "m": 1}, {"n": 2, "m": 33}])


def test_a_branch_that_changes_its_own_condition_before_its_end_stays_refused() -> None:
    f = analyze(ARGMAX).function("argmax")
    assert f is not None and not f.scops
    (why,) = named(list(f.remarks), "NonAffineCondition")
    assert why.range == range_of(ARGMAX, "a[i]")
