"""A subscript ``e % n`` by a size (``a[(i + 1) % n]``, a periodic boundary) is modeled in pieces,
``e - q*n`` where ``q*n <= e < (q+1)*n``, when ``e`` provably stays in ``0 .. 4n - 1``; one that may
not (``(i - 1) % n``, which C makes negative at ``i = 0``) is refused with a remark on it."""

from __future__ import annotations

from pathlib import Path

import islpy as isl
import pytest

from tests.helpers import analyze, named, range_of, runs_everywhere

MODELED = """
void ring(int n, double a[n], double b[n]) {
  for (int i = 0; i < n; i++)
    b[i] = 0.5 * (a[(i + 1) % n] + a[(i + n - 1) % n]);
}
void torus(int n, int m, double u[n][m], double v[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      v[i][j] = u[(i + 1) % n][j] + u[(i + n - 1) % n][j] + u[i][(j + 1) % m] + u[i][(j + m - 1) % m]
                - 4.0 * u[i][j];
}
void shift(int n, double a[n], double b[n]) {
  for (int i = 0; i < n; i++)
    b[i] = a[(i + 3) % n];
}
void folds(int n, double a[n], double b[n]) {
  for (int i = 0; i < 3 * n; i++)
    b[i % n] += a[i % n] * i;
}
void sweep(int tsteps, int n, double a[n]) {
  for (int t = 0; t < tsteps; t++)
    for (int i = 0; i < n; i++)
      a[i] = a[i] + 0.25 * a[(i + 1) % n];
}
"""

REFUSED = """
void back(int n, double a[n], double b[n]) {
  for (int i = 0; i < n; i++)
    b[i] = a[(i - 1) % n];
}
void many(int n, double a[n], double b[n]) {
  for (int i = 0; i < 5 * n; i++)
    b[i % n] += a[i % n];
}
void cond(int n, double a[n]) {
  for (int i = 0; i < n; i++)
    if ((i + 1) % n == 0)
      a[i] = 0.0;
}
"""


def test_periodic_subscripts_are_modeled() -> None:
    fa = analyze(MODELED)
    for f in fa.functions:
        assert len(f.scops) == 1, (f.function.name, [r.message for r in f.remarks])


def test_the_model_wraps_around_where_c_does() -> None:
    (sa,) = analyze(MODELED).function("ring").scops  # type: ignore[union-attr]
    (stmt,) = sa.scop.statements
    reads = [a.relation for a in stmt.reads if a.array == "a"]
    ctx = sa.scop.ctx
    after = isl.Map.read_from_str(ctx, "[n] -> { S0[i] -> a[i + 1] : 0 <= i < n - 1; S0[i] -> a[0] : 0 <= i = n - 1 }")
    before = isl.Map.read_from_str(ctx, "[n] -> { S0[i] -> a[n - 1] : i = 0 < n; S0[i] -> a[i - 1] : 0 < i < n }")
    assert len(reads) == 2, reads
    assert any(r.is_equal(after) for r in reads), reads
    assert any(r.is_equal(before) for r in reads), reads


@pytest.mark.parametrize(("function", "subscript"), [("back", "a[(i - 1) % n]"), ("many", "a[i % n]")])
def test_a_modulo_that_may_wrap_otherwise_is_refused(function: str, subscript: str) -> None:
    f = analyze(REFUSED).function(function)
    assert f is not None and not f.scops
    (remark,) = named(list(f.remarks), "ModuloOutOfRange")
    assert remark.range == range_of(REFUSED, subscript)
    assert "between 0 and 4n - 1" in remark.message


def test_a_modulo_by_a_size_in_a_condition_guards_its_assignment(tmp_path: Path) -> None:
    """Not a condition on the iterations (isl's `mod` takes constants), but one evaluated in each."""
    f = analyze(REFUSED).function("cond")
    assert f is not None and len(f.scops) == 1
    assert named(list(f.remarks), "GuardedAssignment") and not named(list(f.remarks), "NonAffineCondition")
    path = tmp_path / "cond.c"
    path.write_text(REFUSED)
    runs_everywhere(str(path), "cond", [{"n": 37}, {"n": 1}, {"n": 0}])


@pytest.mark.slow  # runs generated code (the fast tier leaves it out)
@pytest.mark.parametrize("function", ["ring", "torus", "shift", "folds", "sweep"])
def test_periodic_nests_run_and_match(tmp_path: Path, function: str) -> None:
    path = tmp_path / "periodic.c"
    path.write_text(MODELED)
    sizes = [{"n": 37, "m": 5, "tsteps": 3}, {"n": 2, "m": 3, "tsteps": 2}, {"n": 1, "m": 1, "tsteps": 1},
             {"n": 0, "m": 0, "tsteps": 1}]  # fmt: skip
    runs_everywhere(str(path), function, sizes)
