"""Statements under a modulo guard (`if ((i + j) % 5 == 0)`, floyd_warshall's init_array): the GPU
mapping builds its per-block AST over the tiles where a phase *may* run (the exact tile sets of
such statements cost isl minutes: the editor's back-end views hung), and the per-tile code is
exact, so the results still match everywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

from core_compiler.runtime.differential import check_opencl
from tests.helpers import runs_everywhere

GUARDS = """
#define N 64
#define INF (1 << 20)
void init(int n, int path[N][N]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      if (i == j)
        path[i][j] = 0;
      else if ((i + j) % 5 == 0)
        path[i][j] = INF;
      else
        path[i][j] = (i * 7 + j * 3) % 23 + 1;
    }
}
void stripes(int n, int m, double a[n][m]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      if ((2 * i + j) % 3 == 1)
        a[i][j] = a[i][j] * 0.5 + i;
}
"""


@pytest.fixture(scope="module")
def path(tmp_path_factory: pytest.TempPathFactory) -> str:
    p = Path(tmp_path_factory.mktemp("guards")) / "guards.c"
    p.write_text(GUARDS)
    return str(p)


@pytest.mark.timeout(120)
def test_a_modulo_guarded_init_maps_and_matches(path: str) -> None:
    for n in (37, 64, 1, 0):
        result = check_opencl(path, "init", {"n": n}, {"n": "N"})
        assert result.ok, f"n={n}\n{result.comparison.report()}"


@pytest.mark.timeout(120)
def test_stripes_under_a_modulo_guard_run_everywhere(path: str) -> None:
    runs_everywhere(path, "stripes", [{"n": 37, "m": 45}, {"n": 33, "m": 1}, {"n": 1, "m": 1}, {"n": 0, "m": 5}])
    for n, m in ((70, 33), (2, 65)):
        assert check_opencl(path, "stripes", {"n": n, "m": m}).ok
