"""MIN and MAX as C programmers write them, macros that expand to `?:`: in loop bounds (a loop
blocked by hand), in a loop's start, and in subscripts (clamping at the edges). Each is modeled
exactly, piece by piece, and runs match the original."""

from __future__ import annotations

import islpy as isl
import pytest

from core_compiler.runtime.differential import check_opencl
from tests.helpers import check_cpu, only_scop

SOURCE = """
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
void blocked(int n, double a[n][n], double b[n][n]) {
  for (int ii = 0; ii < n; ii += 32)
    for (int i = ii; i < MIN(ii + 32, n); i++)
      for (int j = 0; j < n; j++)
        b[j][i] = a[i][j];
}
void band(int n, double a[n], double s[n]) {
  for (int i = 0; i < n; i++)
    for (int j = MAX(0, i - 2); j <= MIN(n - 1, i + 2); j++)
      s[i] += a[j];
}
void hand_tiled(int n, double A[n][n], double B[n][n], double C[n][n]) {
  for (int ii = 0; ii < n; ii += 16)
    for (int kk = 0; kk < n; kk += 16)
      for (int jj = 0; jj < n; jj += 16)
        for (int i = ii; i < MIN(ii + 16, n); i++)
          for (int k = kk; k < MIN(kk + 16, n); k++)
            for (int j = jj; j < MIN(jj + 16, n); j++)
              C[i][j] += A[i][k] * B[k][j];
}
void clamp(int n, double a[n], double b[n]) {
  for (int i = 0; i < n; i++)
    b[i] = a[MIN(i + 1, n - 1)] - a[MAX(i - 1, 0)];
}
void down(int n, double a[n]) {
  for (int i = n - 1; i >= MAX(1, n / 2); i--)
    a[i] = a[i - 1] + 1;
}
"""


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> str:
    p = tmp_path_factory.mktemp("minmax") / "minmax.c"
    p.write_text(SOURCE)
    return str(p)


def test_a_min_in_a_bound_is_the_smaller_of_two_bounds(path: str) -> None:
    scop = only_scop(path, "blocked").scop
    expected = "[n] -> { S0[ii, i, j] : ii mod 32 = 0 and 0 <= ii <= i < ii + 32 and i < n and 0 <= j < n }"
    assert scop.domains().is_equal(isl.UnionSet.read_from_str(scop.ctx, expected))
    band = only_scop(path, "band").scop
    expected = "[n] -> { S0[i, j] : 0 <= i < n and 0 <= j < n and i - 2 <= j <= i + 2 }"
    assert band.domains().is_equal(isl.UnionSet.read_from_str(band.ctx, expected))


def test_a_hand_tiled_nest_is_modeled_within_the_budget(path: str) -> None:
    """Each `MIN` bound is two pieces; as written, 6 loops' pieces made the dependence analysis
    exceed isl's budget. The domain is one piece: `ii <= i < ii + 16 and i < n`."""
    scop = only_scop(path, "hand_tiled").scop
    (stmt,) = scop.statements
    assert stmt.domain.n_basic_set() == 1


def test_a_clamped_subscript_reads_each_element_on_its_side(path: str) -> None:
    scop = only_scop(path, "clamp").scop
    expected = (
        "[n] -> { S0[i] -> a[i + 1] : 0 <= i < n - 1; S0[i] -> a[n - 1] : i = n - 1 and n >= 1;"
        " S0[i] -> a[i - 1] : 1 <= i < n; S0[i] -> a[0] : i = 0 and n >= 1 }"
    )
    assert scop.reads("a").is_equal(isl.UnionMap.read_from_str(scop.ctx, expected))


# `make test` runs one in two (blocked, band, down); `make test-long` all
@pytest.mark.parametrize("function", ["blocked", "hand_tiled", "band", "clamp", "down"])
def test_min_and_max_code_matches_the_original(path: str, function: str) -> None:
    for n in (70, 33, 1, 0):
        cpu = check_cpu(path, function, {"n": n}, threads=2)
        assert cpu.ok, cpu.report()
    device = check_opencl(path, function, {"n": 37})
    assert device.ok, device.comparison.report()
